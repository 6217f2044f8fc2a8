// RUN: tile-opt %s --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize --convert-tile-gemm-to-sm90 | FileCheck %s
// RUN: tile-opt %s --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize="remarks=1" --convert-tile-gemm-to-sm90="remarks=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// A GEMM whose A is stored K x M (`transpose_a`: C = A^T B, a weight
// gradient's X^T dY) takes the Hopper kernels: A's TMA boxes are 64 K rows
// by 64 columns of M (coordinates (m, k), innermost first), laid out like
// a K x N B's, and every wgmma reads A MN-major (layout col) and B MN-major
// (row); both descriptors move 16 rows (2048 bytes, 128 units) per 16 K.
// The narrow kernels (which read A's rows as K-major boxes) are not built.

// CHECK-LABEL: gpu.func @transpose_a_kernel_sm90_ldg(
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <col>], B[<f16>, <one>, <row>]
// CHECK-LABEL: gpu.func @transpose_a_kernel_sm90(
// The producer: A's two 64x64 boxes at (m, k) and (m + 64, k), then B's.
// CHECK: nvgpu.tma.async.load %[[MAPA:.*]][%[[M:.*]], %[[K:.*]]], {{.*}} : <tensor = memref<64x64xf16
// CHECK: nvgpu.tma.async.load %[[MAPA]][%{{.*}}, %[[K]]], {{.*}} : <tensor = memref<64x64xf16
// CHECK: nvgpu.tma.async.load %[[MAPB:.*]][%{{.*}}, %[[K]]], {{.*}} : <tensor = memref<64x64xf16
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <col>], B[<f16>, <one>, <row>]
// CHECK-NEXT: llvm.mlir.constant(128 : i64)
// CHECK: llvm.mlir.constant(128 : i64)
// CHECK: nvvm.wgmma.mma_async
// CHECK-LABEL: gpu.func @transpose_a_kernel_sm90_wide(
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 256, k = 16>, {{.*}} A[<f16>, <one>, <col>], B[<f16>, <one>, <row>]
// CHECK-LABEL: gpu.func @transpose_a_kernel_sm90_sk(
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, {{.*}} A[<f16>, <one>, <col>], B[<f16>, <one>, <row>]
// CHECK-NOT: gpu.func @transpose_a_kernel_sm90_nr

// REMARK: remark: sm90: no narrow-row variant of 16 rows for this GEMM: A is stored K x M (transpose_a: the narrow kernel reads A's rows as K-major boxes)

func.func @transpose_a(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf16>)
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %M = memref.dim %A, %c1 : memref<?x?xf16>
  %K = memref.dim %A, %c0 : memref<?x?xf16>
  %N = memref.dim %B, %c1 : memref<?x?xf16>
  %gy = arith.ceildivui %M, %c128 : index
  %gx = arith.ceildivui %N, %c128 : index
  %nk = arith.ceildivui %K, %c32 : index
  tile.launch blocks(%bx, %by) in (%gx, %gy) threads(128) {
    %As = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    %m0 = arith.muli %by, %c128 : index
    %n0 = arith.muli %bx, %c128 : index
    tile.clear %Cf : memref<128x128xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(3) {
      %k0 = arith.muli %k, %c32 : index
      tile.copy %A[%k0, %m0] to %As : memref<?x?xf16> to memref<32x128xf16, #tile.scope<shared>>
      tile.copy %B[%k0, %n0] to %Bs : memref<?x?xf16> to memref<32x128xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf {transpose_a} : memref<32x128xf16, #tile.scope<shared>>, memref<32x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%m0, %n0] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}
