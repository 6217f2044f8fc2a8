// issue 10: 65536 stages ran the sm_80 lowering for minutes at 6 GB.
// C = A x B with 128x128 output tiles and a 3-stage pipelined K loop of 32.
// A is MxK, B is KxN, C is MxN (f16 in, f32 accumulate, f16 out); any M, N, K.
func.func @gemm(%A: memref<?x?xf16> {tile.name = "A", tile.dims = ["M", "K"]},
                %B: memref<?x?xf16> {tile.name = "B", tile.dims = ["K", "N"]},
                %C: memref<?x?xf16> {tile.name = "C", tile.dims = ["M", "N"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %c127 = arith.constant 127 : index
  %c31 = arith.constant 31 : index
  %M = memref.dim %A, %c0 : memref<?x?xf16>
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %N = memref.dim %B, %c1 : memref<?x?xf16>
  %mp = arith.addi %M, %c127 : index
  %gy = arith.divui %mp, %c128 : index
  %np = arith.addi %N, %c127 : index
  %gx = arith.divui %np, %c128 : index
  %kp = arith.addi %K, %c31 : index
  %nk = arith.divui %kp, %c32 : index
  tile.launch blocks(%bx, %by) in (%gx, %gy) threads(128) attributes {raster = #tile.raster<panel = 8>} {
    %As = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    %m0 = arith.muli %by, %c128 : index
    %n0 = arith.muli %bx, %c128 : index
    tile.clear %Cf : memref<128x128xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(65536) {
      %k0 = arith.muli %k, %c32 : index
      tile.copy %A[%m0, %k0] to %As : memref<?x?xf16> to memref<128x32xf16, #tile.scope<shared>>
      tile.copy %B[%k0, %n0] to %Bs : memref<?x?xf16> to memref<32x128xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<128x32xf16, #tile.scope<shared>>, memref<32x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%m0, %n0] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}
