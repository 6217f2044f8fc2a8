// C = A x B: 128x256 output tiles, 256 threads, a 3-stage
// pipelined K loop of 64 (bf16 in, f32 accumulate, bf16 out); any M, N, K.
func.func @gemm(%A: memref<?x?xbf16> {tile.name = "A", tile.dims = ["M", "K"]},
                %B: memref<?x?xbf16> {tile.name = "B", tile.dims = ["K", "N"]},
                %C: memref<?x?xbf16> {tile.name = "C", tile.dims = ["M", "N"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cbk = arith.constant 64 : index
  %cbm = arith.constant 128 : index
  %cbn = arith.constant 256 : index
  %cbm1 = arith.constant 127 : index
  %cbn1 = arith.constant 255 : index
  %cbk1 = arith.constant 63 : index
  %M = memref.dim %A, %c0 : memref<?x?xbf16>
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %N = memref.dim %B, %c1 : memref<?x?xbf16>
  %mp = arith.addi %M, %cbm1 : index
  %gy = arith.divui %mp, %cbm : index
  %np = arith.addi %N, %cbn1 : index
  %gx = arith.divui %np, %cbn : index
  %kp = arith.addi %K, %cbk1 : index
  %nk = arith.divui %kp, %cbk : index
  tile.launch blocks(%bx, %by) in (%gx, %gy) threads(256) attributes {raster = #tile.raster<panel = 8>} {
    %As = tile.alloc : memref<128x64xbf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<64x256xbf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x256xf32, #tile.scope<fragment>>
    %m0 = arith.muli %by, %cbm : index
    %n0 = arith.muli %bx, %cbn : index
    tile.clear %Cf : memref<128x256xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(3) {
      %k0 = arith.muli %k, %cbk : index
      tile.copy %A[%m0, %k0] to %As : memref<?x?xbf16> to memref<128x64xbf16, #tile.scope<shared>>
      tile.copy %B[%k0, %n0] to %Bs : memref<?x?xbf16> to memref<64x256xbf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<128x64xbf16, #tile.scope<shared>>, memref<64x256xbf16, #tile.scope<shared>>, memref<128x256xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%m0, %n0] : memref<128x256xf32, #tile.scope<fragment>> to memref<?x?xbf16>
  }
  return
}
