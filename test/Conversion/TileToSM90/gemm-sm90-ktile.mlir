// RUN: tile-opt %s --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize --convert-tile-gemm-to-sm90 | FileCheck %s

// K tiles of 128 (GemmMatch: KT in {16, 32, 64, 128}): the Hopper kernels
// step K by 64, so their iterations are twice the loop's trip count (the
// last one may lie past K: TMA fills zeros, the loads without TMA check).

// CHECK-LABEL: gpu.func @gemm_k128_kernel_sm90(
// CHECK: gpu.barrier
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT: arith.muli %{{.*}}, %[[TWO]] : index
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}, %c32768
func.func @gemm_k128(%A: memref<?x?xf16> {tile.name = "A", tile.dims = ["M", "K"]},
                %B: memref<?x?xf16> {tile.name = "B", tile.dims = ["K", "N"]},
                %C: memref<?x?xf16> {tile.name = "C", tile.dims = ["M", "N"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cKT = arith.constant 128 : index
  %cTM = arith.constant 128 : index
  %cTN = arith.constant 128 : index
  %M = memref.dim %A, %c0 : memref<?x?xf16>
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %N = memref.dim %B, %c1 : memref<?x?xf16>
  %gy = arith.ceildivui %M, %cTM : index
  %gx = arith.ceildivui %N, %cTN : index
  %nk = arith.ceildivui %K, %cKT : index
  tile.launch blocks(%bx, %by) in (%gx, %gy) threads(128) {
    %As = tile.alloc : memref<128x128xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<128x128xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    %m0 = arith.muli %by, %cTM : index
    %n0 = arith.muli %bx, %cTN : index
    tile.clear %Cf : memref<128x128xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(2) {
      %k0 = arith.muli %k, %cKT : index
      tile.copy %A[%m0, %k0] to %As : memref<?x?xf16> to memref<128x128xf16, #tile.scope<shared>>
      tile.copy %B[%k0, %n0] to %Bs : memref<?x?xf16> to memref<128x128xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<128x128xf16, #tile.scope<shared>>, memref<128x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%m0, %n0] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}

