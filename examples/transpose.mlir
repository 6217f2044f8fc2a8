// Transpose: Y[j, i] = X[i, j] for an f32 matrix X of any shape M x N.
//
//   X : memref<?x?xf32>, M x N (tile.dims = ["M", "N"])
//   Y : memref<?x?xf32>, N x M (tile.dims = ["N", "M"], tile.output)
//
// A memory-bound kernel: each element is read once and written once, so
// both the reads of X and the writes of Y must be whole rows (coalesced).
// The grid has ceil(N / 64) x ceil(M / 64) blocks of 128 threads; block
// (bx, by) owns the 64x64 tile X[64 by : +64, 64 bx : +64]. Per block:
//   1. copy the tile of X, row by row, into shared memory s (16-byte
//      cp.async chunks where X's rows are 16-byte aligned);
//   2. f[i, j] = s[j, i]: each thread reads a column of s into the
//      fragment f, which holds 4 consecutive columns of a row per thread;
//   3. copy f, row by row, to Y[64 bx : +64, 64 by : +64] (16-byte stores).
// Step 2 reads s down its columns. tile-infer-layouts gives s an XOR
// swizzle of its 16-byte chunks (#tile.swizzle<bits = 3, base = 4, shift
// = 6>, docs/pipelines.md) that spreads a column over the banks; in the
// row-major layout every thread of a half-warp would hit one bank.
//
// Tails need no masking: elements beyond M or N read as zero into s, and
// their writes to Y are dropped. M = 0 or N = 0 launches no block.
//
// numpy: Y = X.T.copy()
func.func @transpose(%X: memref<?x?xf32> {tile.name = "X", tile.dims = ["M", "N"]},
                     %Y: memref<?x?xf32> {tile.name = "Y", tile.dims = ["N", "M"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  %M = memref.dim %X, %c0 : memref<?x?xf32>
  %N = memref.dim %X, %c1 : memref<?x?xf32>
  // blocks = ceil(N / 64) x ceil(M / 64)
  %Mp = arith.addi %M, %c63 : index
  %gy = arith.divui %Mp, %c64 : index
  %Np = arith.addi %N, %c63 : index
  %gx = arith.divui %Np, %c64 : index
  tile.launch blocks(%bx, %by) in (%gx, %gy) threads(128) {
    %s = tile.alloc : memref<64x64xf32, #tile.scope<shared>>
    %f = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    %m0 = arith.muli %by, %c64 : index
    %n0 = arith.muli %bx, %c64 : index
    tile.copy %X[%m0, %n0] to %s : memref<?x?xf32> to memref<64x64xf32, #tile.scope<shared>>
    tile.parallel (%i, %j) in [64, 64] {
      %v = memref.load %s[%j, %i] : memref<64x64xf32, #tile.scope<shared>>
      memref.store %v, %f[%i, %j] : memref<64x64xf32, #tile.scope<fragment>>
    }
    tile.copy %f to %Y[%n0, %m0] : memref<64x64xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}
