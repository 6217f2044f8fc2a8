// C = A x B: 128x128 output tiles, 128 threads, a 3-stage
// pipelined K loop of 64 (f16 in, f32 accumulate, f16 out); any M, N, K.
func.func @gemm(%A: memref<?x?xf16> {tile.name = "A", tile.dims = ["M", "K"]},
                %B: memref<?x?xf16> {tile.name = "B", tile.dims = ["K", "N"]},
                %C: memref<?x?xf16> {tile.name = "C", tile.dims = ["M", "N"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cbk = arith.constant 64 : index
  %cbm = arith.constant 128 : index
  %cbn = arith.constant 128 : index
  %cbm1 = arith.constant 127 : index
  %cbn1 = arith.constant 127 : index
  %cbk1 = arith.constant 63 : index
  %M = memref.dim %A, %c0 : memref<?x?xf16>
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %N = memref.dim %B, %c1 : memref<?x?xf16>
  %mp = arith.addi %M, %cbm1 : index
  %gy = arith.divui %mp, %cbm : index
  %np = arith.addi %N, %cbn1 : index
  %gx = arith.divui %np, %cbn : index
  %kp = arith.addi %K, %cbk1 : index
  %nk = arith.divui %kp, %cbk : index
  tile.launch blocks(%bx, %by) in (%gx, %gy) threads(128) attributes {raster = #tile.raster<panel = 8>} {
    %As = tile.alloc : memref<128x64xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<64x128xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    %m0 = arith.muli %by, %cbm : index
    %n0 = arith.muli %bx, %cbn : index
    tile.clear %Cf : memref<128x128xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(3) {
      %k0 = arith.muli %k, %cbk : index
      tile.copy %A[%m0, %k0] to %As : memref<?x?xf16> to memref<128x64xf16, #tile.scope<shared>>
      tile.copy %B[%k0, %n0] to %Bs : memref<?x?xf16> to memref<64x128xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<128x64xf16, #tile.scope<shared>>, memref<64x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%m0, %n0] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}
