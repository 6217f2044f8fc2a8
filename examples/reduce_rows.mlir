// Row sums: Y[i] = sum_j X[i, j] for an f32 matrix X of any shape M x N.
//
//   X : memref<?x?xf32>, M x N (tile.dims = ["M", "N"])
//   Y : memref<?xf32>,   M     (tile.dims = ["M"], tile.output)
//
// The grid has ceil(M / 64) blocks of 128 threads; block b owns rows
// [b*64, b*64 + 64). It zeroes a 64-element accumulator fragment, then walks
// the columns in ceil(N / 128) tiles of 64x128 with a 2-stage pipelined loop:
// each iteration copies the tile of X into shared memory, from there into a
// fragment, and adds its row sums into the accumulator (tile.reduce sum
// without `clear` accumulates into the target). Finally the accumulator is
// copied to Y[b*64 : b*64 + 64].
//
// Tails need no masking: columns >= N and rows >= M of a tile read as zero,
// which adds nothing to a sum, and the writes of rows >= M to Y are dropped.
// N = 0 gives Y = 0; M = 0 launches no block.
//
// numpy: Y = X.sum(axis=1)
func.func @reduce_rows(%X: memref<?x?xf32> {tile.name = "X", tile.dims = ["M", "N"]},
                       %Y: memref<?xf32> {tile.name = "Y", tile.dims = ["M"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  %c127 = arith.constant 127 : index
  %c128 = arith.constant 128 : index
  %M = memref.dim %X, %c0 : memref<?x?xf32>
  %N = memref.dim %X, %c1 : memref<?x?xf32>
  // blocks = ceil(M / 64), column tiles = ceil(N / 128)
  %Mp = arith.addi %M, %c63 : index
  %blocks = arith.divui %Mp, %c64 : index
  %Np = arith.addi %N, %c127 : index
  %ntiles = arith.divui %Np, %c128 : index
  tile.launch blocks(%bx) in (%blocks) threads(128) {
    %Xs = tile.alloc : memref<64x128xf32, #tile.scope<shared>>
    %Xf = tile.alloc : memref<64x128xf32, #tile.scope<fragment>>
    %acc = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    %row = arith.muli %bx, %c64 : index
    tile.clear %acc : memref<64xf32, #tile.scope<fragment>>
    tile.pipelined %t = %c0 to %ntiles step %c1 stages(2) {
      %col = arith.muli %t, %c128 : index
      tile.copy %X[%row, %col] to %Xs : memref<?x?xf32> to memref<64x128xf32, #tile.scope<shared>>
      tile.copy %Xs to %Xf : memref<64x128xf32, #tile.scope<shared>> to memref<64x128xf32, #tile.scope<fragment>>
      // No `clear`: acc[i] += sum_j Xf[i, j].
      tile.reduce sum %Xf into %acc {dim = 1 : i64} : memref<64x128xf32, #tile.scope<fragment>> into memref<64xf32, #tile.scope<fragment>>
    }
    tile.copy %acc to %Y[%row] : memref<64xf32, #tile.scope<fragment>> to memref<?xf32>
  }
  return
}
