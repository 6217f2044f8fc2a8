// Row sums: Y[i] = sum_j X[i, j] for an f32 matrix X of any shape M x N.
//
//   X : memref<?x?xf32>, M x N (tile.dims = ["M", "N"])
//   Y : memref<?xf32>,   M     (tile.dims = ["M"], tile.output)
//
// A memory-bound kernel: every element of X is read once, so what matters
// is that every SM has work and many loads in flight. The grid has
// ceil(M / 4) blocks of 128 threads (250 blocks for M = 1000, 256 for
// M = 1024 whatever N is); block b owns rows [4b, 4b + 4). It walks the
// columns in ceil(N / 1024) chunks of 4x1024, copying each chunk from X
// straight into a fragment (32 elements per thread, as 16-byte loads where
// X's rows are 16-byte aligned) and adding it elementwise into an
// accumulator fragment of the same shape. The loop is `stages(2)`: the
// copy of chunk t + 1 is issued into a second fragment before the adds of
// chunk t (tile-pipeline-fragment-copies: register double buffering, the
// loop unrolled by 2), so two chunks of loads per block are in flight
// instead of one. Only after the loop does it reduce the accumulator's rows
// (tile-infer-layouts gives each row one warp: per-thread sums, then warp
// shuffles, no shared memory) and write Y[4b : 4b + 4].
//
// Tails need no masking: columns >= N and rows >= M of a chunk read as
// zero, which adds nothing to a sum, and the writes of rows >= M to Y are
// dropped. N = 0 gives Y = 0; M = 0 launches no block.
//
// numpy: Y = X.sum(axis=1)
func.func @reduce_rows(%X: memref<?x?xf32> {tile.name = "X", tile.dims = ["M", "N"]},
                       %Y: memref<?xf32> {tile.name = "Y", tile.dims = ["M"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c1023 = arith.constant 1023 : index
  %c1024 = arith.constant 1024 : index
  %M = memref.dim %X, %c0 : memref<?x?xf32>
  %N = memref.dim %X, %c1 : memref<?x?xf32>
  // blocks = ceil(M / 4), column chunks = ceil(N / 1024)
  %Mp = arith.addi %M, %c3 : index
  %blocks = arith.divui %Mp, %c4 : index
  %Np = arith.addi %N, %c1023 : index
  %nchunks = arith.divui %Np, %c1024 : index
  tile.launch blocks(%bx) in (%blocks) threads(128) {
    %x = tile.alloc : memref<4x1024xf32, #tile.scope<fragment>>
    %acc = tile.alloc : memref<4x1024xf32, #tile.scope<fragment>>
    %sums = tile.alloc : memref<4xf32, #tile.scope<fragment>>
    %row = arith.muli %bx, %c4 : index
    tile.clear %acc : memref<4x1024xf32, #tile.scope<fragment>>
    tile.pipelined %t = %c0 to %nchunks step %c1 stages(2) {
      %col = arith.muli %t, %c1024 : index
      tile.copy %X[%row, %col] to %x : memref<?x?xf32> to memref<4x1024xf32, #tile.scope<fragment>>
      tile.parallel (%i, %j) in [4, 1024] {
        %a = memref.load %acc[%i, %j] : memref<4x1024xf32, #tile.scope<fragment>>
        %v = memref.load %x[%i, %j] : memref<4x1024xf32, #tile.scope<fragment>>
        %s = arith.addf %a, %v : f32
        memref.store %s, %acc[%i, %j] : memref<4x1024xf32, #tile.scope<fragment>>
      }
    }
    tile.reduce sum %acc into %sums {dim = 1 : i64, clear} : memref<4x1024xf32, #tile.scope<fragment>> into memref<4xf32, #tile.scope<fragment>>
    tile.copy %sums to %Y[%row] : memref<4xf32, #tile.scope<fragment>> to memref<?xf32>
  }
  return
}
