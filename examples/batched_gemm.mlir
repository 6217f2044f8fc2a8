// C[b] = A[b] x B[b] over a batch: A is BxMxK, B is BxKxN, C is BxMxN (f16
// in, f32 accumulate, f16 out); any B, M, N, K. A 3-D grid (N tiles, M
// tiles, batch); the copies take 2-D tiles out of the 3-D tensors directly
// (`drop_dims [0]` drops the unit batch dim), so no staging tile is needed.
func.func @batched_gemm(%A: memref<?x?x?xf16> {tile.name = "A", tile.dims = ["B", "M", "K"]},
                        %B: memref<?x?x?xf16> {tile.name = "B", tile.dims = ["B", "K", "N"]},
                        %C: memref<?x?x?xf16> {tile.name = "C", tile.dims = ["B", "M", "N"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c63 = arith.constant 63 : index
  %c31 = arith.constant 31 : index
  %batch = memref.dim %A, %c0 : memref<?x?x?xf16>
  %M = memref.dim %A, %c1 : memref<?x?x?xf16>
  %K = memref.dim %A, %c2 : memref<?x?x?xf16>
  %N = memref.dim %B, %c2 : memref<?x?x?xf16>
  %mp = arith.addi %M, %c63 : index
  %gy = arith.divui %mp, %c64 : index
  %np = arith.addi %N, %c63 : index
  %gx = arith.divui %np, %c64 : index
  %kp = arith.addi %K, %c31 : index
  %nk = arith.divui %kp, %c32 : index
  tile.launch blocks(%bx, %by, %bz) in (%gx, %gy, %batch) threads(128) {
    %As = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x64xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    %m0 = arith.muli %by, %c64 : index
    %n0 = arith.muli %bx, %c64 : index
    tile.clear %Cf : memref<64x64xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(3) {
      %k0 = arith.muli %k, %c32 : index
      tile.copy %A[%bz, %m0, %k0] to %As drop_dims [0] : memref<?x?x?xf16> to memref<64x32xf16, #tile.scope<shared>>
      tile.copy %B[%bz, %k0, %n0] to %Bs drop_dims [0] : memref<?x?x?xf16> to memref<32x64xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<64x32xf16, #tile.scope<shared>>, memref<32x64xf16, #tile.scope<shared>>, memref<64x64xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%bz, %m0, %n0] drop_dims [0] : memref<64x64xf32, #tile.scope<fragment>> to memref<?x?x?xf16>
  }
  return
}
