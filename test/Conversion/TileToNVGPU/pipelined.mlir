// RUN: tile-opt %s --tile-attach-metadata=target=cuda --tile-infer-layouts --convert-tile-to-nvgpu=chip=sm_80 --canonicalize --cse | FileCheck %s
// RUN: tile-opt %s --tile-to-nvvm="chip=sm_80 format=isa" | FileCheck %s --check-prefix=PTX

// A 3-stage pipelined K loop: the copies' targets get 3 copies in shared
// memory (3 x (8 KiB + 8 KiB) in shared_bytes), the prologue issues 2
// iterations of cp.async (one commit group each), every iteration waits
// until at most 1 group is pending, synchronizes, issues iteration k + 2
// into the copy that iteration k - 1 read, commits, and computes from copy
// k mod 3; the epilogue drains all groups.
// CHECK: tile.kernel_info = #tile.kernel_info<{{.*}}shared_bytes = 49152>
// CHECK-LABEL: gpu.func @gemm3_kernel
// Versioned: one alignment check for the whole loop (scf.if) selects the
// branch-free pipeline, the fallback clone is in the else region.
// CHECK: scf.if
// CHECK-NOT: scf.if
// Prologue: iteration 0 into copy 0 (A at byte 0, B at byte 24576), no
// branch (the range check is in the copies' src-size).
// CHECK: memref.view %{{.*}}[%c0{{.*}}][] {{.*}} to memref<4096xf16
// CHECK: nvgpu.device_async_copy {{.*}} {bypassL1}
// CHECK: memref.view %{{.*}}[%c24576{{.*}}][]
// CHECK: nvgpu.device_async_copy {{.*}} {bypassL1}
// CHECK: %[[G0:.*]] = nvgpu.device_async_create_group
// Iteration 1 into copy 1.
// CHECK-NOT: scf.if
// CHECK: memref.view %{{.*}}[%c8192{{.*}}][]
// CHECK: nvgpu.device_async_copy
// CHECK: memref.view %{{.*}}[%c32768{{.*}}][]
// CHECK: nvgpu.device_async_copy
// CHECK: %[[G1:.*]] = nvgpu.device_async_create_group
// Steady state: wait, barrier, issue k + 2 (no branch), MMAs (the k-steps
// unrolled).
// CHECK: scf.for {{.*}} iter_args(%[[SLOT:.*]] = %c0)
// CHECK: nvgpu.device_async_wait %[[G1]] {numGroups = 1 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: scf.if
// CHECK: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_create_group
// CHECK-NOT: gpu.barrier
// CHECK-NOT: scf.for
// CHECK: nvgpu.ldmatrix
// CHECK: nvgpu.mma.sync
// CHECK: scf.yield
// Epilogue: drain, then the stores of C.
// CHECK: nvgpu.device_async_wait %[[G1]] {numGroups = 0 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK: vector.store {{.*}} {alignment = 4 : i64} : memref<?x?xf16>, vector<2xf16>
// CHECK: gpu.return

// The PTX (one escaped string): 16-byte cp.async with a src-size, the
// groups, the wait before the barrier, ldmatrix and mma.sync.
// PTX: gpu.binary @gemm3_module
// PTX-DAG: cp.async.cg.shared.global [{{[^]]*}}], [{{[^]]*}}], 16, %r
// PTX-DAG: cp.async.commit_group;
// PTX-DAG: cp.async.wait_group \091;\0A\09bar.sync \090;
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX-DAG: cp.async.wait_group \090;\0A\09bar.sync \090;
// PTX-DAG: st.global.v2.b16
func.func @gemm3(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf16> {tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %nk = arith.ceildivui %K, %c32 : index
  tile.launch blocks(%bx, %by) in (%c1, %c1) threads(128) {
    %As = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    tile.clear %Cf : memref<128x128xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(3) {
      %k0 = arith.muli %k, %c32 : index
      tile.copy %A[%c0, %k0] to %As : memref<?x?xf16> to memref<128x32xf16, #tile.scope<shared>>
      tile.copy %B[%k0, %c0] to %Bs : memref<?x?xf16> to memref<32x128xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<128x32xf16, #tile.scope<shared>>, memref<32x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%c0, %c0] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}
