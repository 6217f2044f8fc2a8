// RUN: tile-opt %s -split-input-file --tile-attach-metadata=target=cuda --tile-infer-layouts=wgmma=true --convert-tile-to-nvgpu="chip=sm_90a ws-tma=false" --canonicalize --cse | FileCheck %s
// RUN: tile-opt %s -split-input-file --tile-attach-metadata=target=cuda --tile-infer-layouts=wgmma=true --convert-tile-to-nvgpu="chip=sm_90a ws-pingpong=false ws-tma=false" --canonicalize --cse | FileCheck %s --check-prefix=NOPP

// S = Q K^T, P = S, O += P V per key tile: in NAME_kernel_ws, O += P V of
// tile i - 1 is issued right after S of tile i (both without waiting), the
// consumers wait for S alone (wait_group 1), then for P V (wait_group 0)
// before P is written again, and release V's stage of tile i - 1 then; P is
// cleared before the loop and the last P V runs after it. The two
// consumer warpgroups take turns (named barriers 2 + g, 3 - g) at issuing
// the pair.
// CHECK-LABEL: gpu.func @attention_kernel_ws(
// CHECK: %[[WG0:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[WG:.*]], %{{.*}} = gpu.shuffle idx %[[WG0]], %c0_i32, %c32_i32 : i32
// CHECK: %[[MINE:.*]] = arith.addi %[[WG]], %c2_i32
// CHECK: %[[OTHER:.*]] = arith.subi %c3_i32, %[[WG]]
// CHECK: nvvm.barrier.arrive id = %c2_i32 number_of_threads = %c256_i32
// CHECK: scf.for
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: nvvm.barrier id = %[[MINE]] number_of_threads = %c256_i32
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.wait.group
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.barrier.arrive id = %[[OTHER]] number_of_threads = %c256_i32
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvgpu.mbarrier.arrive
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: scf.if
// CHECK-NEXT: nvgpu.mbarrier.arrive
// CHECK: scf.if
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvgpu.mbarrier.arrive
// CHECK: nvvm.barrier id = %c2_i32 number_of_threads = %c256_i32
// NOPP-LABEL: gpu.func @attention_kernel_ws(
// NOPP-NOT: nvvm.barrier.arrive
// NOPP: nvvm.wgmma.wait.group.sync.aligned 1
func.func @attention(%Q: memref<?x?xf16>, %K: memref<?x?xf16>, %V: memref<?x?xf16>, %O: memref<?x?xf16> {tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %L = memref.dim %K, %c0 : memref<?x?xf16>
  %nk = arith.ceildivui %L, %c64 : index
  tile.launch blocks(%bx, %by) in (%c1, %c1) threads(256) {
    %Qs = tile.alloc : memref<128x64xf16, #tile.scope<shared>>
    %Ks = tile.alloc : memref<64x64xf16, #tile.scope<shared>>
    %Vs = tile.alloc : memref<64x64xf16, #tile.scope<shared>>
    %S = tile.alloc : memref<128x64xf32, #tile.scope<fragment>>
    %P = tile.alloc : memref<128x64xf16, #tile.scope<fragment>>
    %Of = tile.alloc : memref<128x64xf32, #tile.scope<fragment>>
    tile.copy %Q[%c0, %c0] to %Qs : memref<?x?xf16> to memref<128x64xf16, #tile.scope<shared>>
    tile.clear %Of : memref<128x64xf32, #tile.scope<fragment>>
    tile.pipelined %t = %c0 to %nk step %c1 stages(2) {
      %k0 = arith.muli %t, %c64 : index
      tile.copy %K[%k0, %c0] to %Ks : memref<?x?xf16> to memref<64x64xf16, #tile.scope<shared>>
      tile.copy %V[%k0, %c0] to %Vs : memref<?x?xf16> to memref<64x64xf16, #tile.scope<shared>>
      tile.gemm %Qs, %Ks, %S {transpose_b, clear} : memref<128x64xf16, #tile.scope<shared>>, memref<64x64xf16, #tile.scope<shared>>, memref<128x64xf32, #tile.scope<fragment>>
      tile.parallel (%i, %j) in [128, 64] {
        %s = memref.load %S[%i, %j] : memref<128x64xf32, #tile.scope<fragment>>
        %p = arith.truncf %s : f32 to f16
        memref.store %p, %P[%i, %j] : memref<128x64xf16, #tile.scope<fragment>>
      }
      tile.gemm %P, %Vs, %Of : memref<128x64xf16, #tile.scope<fragment>>, memref<64x64xf16, #tile.scope<shared>>, memref<128x64xf32, #tile.scope<fragment>>
    }
    tile.copy %Of to %O[%c0, %c0] : memref<128x64xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}
