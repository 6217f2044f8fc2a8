// Row sums and column maxima of a GEMM accumulator: for 64x64 tiles of
// C = A x B (f16 in, f32 accumulate, 128 threads: the mma accumulator is
// tiled 2x2 over the warps), R[m] += sum_n C[m, n] over the tile's columns
// (atomically across the column tiles) and X[tile column, n] = max_m C[m, n]
// over the tile's rows. On the GPU the statistics live in the threads that
// hold their accumulator row / column (tile-infer-layouts' slice layouts):
// quad (rows) and 8-lane (columns) shuffles, then across the warps that
// share a row or a column through shared memory. A is MxK, B is KxN; R has
// M elements (zero on entry), X is ceil(M/64) x N.
func.func @gemm_row_col_stats(%A: memref<?x?xf16> {tile.name = "A", tile.dims = ["M", "K"]},
                              %B: memref<?x?xf16> {tile.name = "B", tile.dims = ["K", "N"]},
                              %R: memref<?xf32> {tile.name = "R", tile.dims = ["M"]},
                              %X: memref<?x?xf32> {tile.name = "X", tile.dims = ["T", "N"]})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %M = memref.dim %A, %c0 : memref<?x?xf16>
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %N = memref.dim %B, %c1 : memref<?x?xf16>
  %gy = arith.ceildivui %M, %c64 : index
  %gx = arith.ceildivui %N, %c64 : index
  %nk = arith.ceildivui %K, %c32 : index
  tile.launch blocks(%bx, %by) in (%gx, %gy) threads(128) {
    %As = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x64xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    %rows = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    %cols = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    %m0 = arith.muli %by, %c64 : index
    %n0 = arith.muli %bx, %c64 : index
    tile.clear %Cf : memref<64x64xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(2) {
      %k0 = arith.muli %k, %c32 : index
      tile.copy %A[%m0, %k0] to %As : memref<?x?xf16> to memref<64x32xf16, #tile.scope<shared>>
      tile.copy %B[%k0, %n0] to %Bs : memref<?x?xf16> to memref<32x64xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<64x32xf16, #tile.scope<shared>>, memref<32x64xf16, #tile.scope<shared>>, memref<64x64xf32, #tile.scope<fragment>>
    }
    // Out-of-range rows and columns of the accumulator are zeros (the
    // copies' zero fill): they add nothing to a sum and, the maxima being
    // compared against zeros, the reference does the same (see the test).
    tile.reduce sum %Cf into %rows {dim = 1 : i64, clear} : memref<64x64xf32, #tile.scope<fragment>> into memref<64xf32, #tile.scope<fragment>>
    tile.reduce max %Cf into %cols {dim = 0 : i64, clear} : memref<64x64xf32, #tile.scope<fragment>> into memref<64xf32, #tile.scope<fragment>>
    tile.atomic_tile add %rows to %R[%m0] : memref<64xf32, #tile.scope<fragment>> to memref<?xf32>
    tile.copy %cols to %X[%by, %n0] drop_dims [0] : memref<64xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}
