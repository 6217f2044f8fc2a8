// RUN: tile-opt %s -split-input-file --tile-attach-metadata=target=cuda --tile-infer-layouts=wgmma=true --convert-tile-to-nvgpu="chip=sm_90a ws-pingpong=true" --canonicalize --cse | FileCheck %s
// RUN: tile-opt %s -split-input-file --tile-attach-metadata=target=cuda --tile-infer-layouts=wgmma=true --convert-tile-to-nvgpu="chip=sm_90a" | FileCheck %s --check-prefix=OFF

// Two consumer warpgroups (256 threads) whose pipelined loop has a wgmma
// gemm: in NAME_kernel_ws, warpgroup g waits on named barrier 2 + g before
// the gemm and arrives on 3 - g after it; warpgroup 1 hands warpgroup 0
// the first turn before the loop, warpgroup 0 takes the last hand-over
// after it.
// CHECK-LABEL: gpu.func @gemm_kernel_ws(
// CHECK: %[[WG:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[MINE:.*]] = arith.addi %[[WG]], %c2_i32
// CHECK: %[[OTHER:.*]] = arith.subi %c3_i32, %[[WG]]
// CHECK: scf.if
// CHECK-NEXT: nvvm.barrier.arrive id = %c2_i32 number_of_threads = %c256_i32
// CHECK: scf.for
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: nvvm.barrier id = %[[MINE]] number_of_threads = %c256_i32
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.barrier.arrive id = %[[OTHER]] number_of_threads = %c256_i32
// CHECK: nvgpu.mbarrier.arrive
// CHECK: scf.if
// CHECK-NEXT: nvvm.barrier id = %c2_i32 number_of_threads = %c256_i32
// OFF-LABEL: gpu.func @gemm_kernel_ws(
// OFF-NOT: nvvm.barrier.arrive
func.func @gemm(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf16> {tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %nk = arith.ceildivui %K, %c64 : index
  tile.launch blocks(%bx, %by) in (%c1, %c1) threads(256) {
    %As = tile.alloc : memref<128x64xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<64x128xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    tile.clear %Cf : memref<128x128xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(2) {
      %k0 = arith.muli %k, %c64 : index
      tile.copy %A[%c0, %k0] to %As : memref<?x?xf16> to memref<128x64xf16, #tile.scope<shared>>
      tile.copy %B[%k0, %c0] to %Bs : memref<?x?xf16> to memref<64x128xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<128x64xf16, #tile.scope<shared>>, memref<64x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%c0, %c0] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}
