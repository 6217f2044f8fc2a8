// Row softmax: Y[i, j] = exp(X[i, j] - max_k X[i, k]) / sum_k exp(X[i, k] - max_k X[i, k])
// for an f32 matrix X of M x 1024 (M dynamic, the row length N = 1024 static).
//
//   X : memref<?x1024xf32>, M x N (tile.dims = ["M", "N"])
//   Y : memref<?x1024xf32>, M x N (tile.dims = ["M", "N"], tile.output)
//
// The grid has ceil(M / 2) blocks of 64 threads; block b owns rows
// [b*2, b*2 + 2), held whole in one 2x1024 fragment (32 elements per
// thread, as 16-byte loads). Per block:
//   1. copy the 2 rows of X into the fragment x;
//   2. mx[i] = max_j x[i, j]            (tile.reduce max, clear);
//   3. x[i, j] = exp(x[i, j] - mx[i])   (tile.parallel, math.exp);
//   4. sum[i] = sum_j x[i, j]           (tile.reduce sum, clear);
//   5. x[i, j] = x[i, j] / sum[i]       (tile.parallel);
//   6. copy x to the same 2 rows of Y.
// Subtracting the row max first keeps exp() in (0, 1], so no overflow.
//
// Why small blocks: each block is one chain (load, two block-wide
// reductions, store) with nothing to overlap inside it, so the memory
// system is kept busy by many blocks per multiprocessor. 32 elements per
// thread keep the registers (and so the resident blocks) in budget: on an
// H200, 2 rows x 64 threads reach 91% of the device-to-device copy
// bandwidth at M = 32768, where 8 rows x 128 threads (64 elements per
// thread, 124 registers) reach 84% (docs/performance.md).
//
// Tails need no masking: in the last block, rows >= M read as zeros (their
// softmax is computed and is harmless) and their writes to Y are dropped.
// Every row is whole (N = 1024 exactly), so no padding enters a max or a sum.
//
// numpy: e = np.exp(X - X.max(axis=1, keepdims=True)); Y = e / e.sum(axis=1, keepdims=True)
func.func @softmax(%X: memref<?x1024xf32> {tile.name = "X", tile.dims = ["M", "N"]},
                   %Y: memref<?x1024xf32> {tile.name = "Y", tile.dims = ["M", "N"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %M = memref.dim %X, %c0 : memref<?x1024xf32>
  // blocks = ceil(M / 2)
  %Mp = arith.addi %M, %c1 : index
  %blocks = arith.divui %Mp, %c2 : index
  tile.launch blocks(%bx) in (%blocks) threads(64) {
    %x = tile.alloc : memref<2x1024xf32, #tile.scope<fragment>>
    %mx = tile.alloc : memref<2xf32, #tile.scope<fragment>>
    %sum = tile.alloc : memref<2xf32, #tile.scope<fragment>>
    %row = arith.muli %bx, %c2 : index
    tile.copy %X[%row, %c0] to %x : memref<?x1024xf32> to memref<2x1024xf32, #tile.scope<fragment>>
    tile.reduce max %x into %mx {dim = 1 : i64, clear} : memref<2x1024xf32, #tile.scope<fragment>> into memref<2xf32, #tile.scope<fragment>>
    tile.parallel (%i, %j) in [2, 1024] {
      %v = memref.load %x[%i, %j] : memref<2x1024xf32, #tile.scope<fragment>>
      %m = memref.load %mx[%i] : memref<2xf32, #tile.scope<fragment>>
      %d = arith.subf %v, %m : f32
      %e = math.exp %d : f32
      memref.store %e, %x[%i, %j] : memref<2x1024xf32, #tile.scope<fragment>>
    }
    tile.reduce sum %x into %sum {dim = 1 : i64, clear} : memref<2x1024xf32, #tile.scope<fragment>> into memref<2xf32, #tile.scope<fragment>>
    tile.parallel (%i, %j) in [2, 1024] {
      %e = memref.load %x[%i, %j] : memref<2x1024xf32, #tile.scope<fragment>>
      %s = memref.load %sum[%i] : memref<2xf32, #tile.scope<fragment>>
      %y = arith.divf %e, %s : f32
      memref.store %y, %x[%i, %j] : memref<2x1024xf32, #tile.scope<fragment>>
    }
    tile.copy %x to %Y[%row, %c0] : memref<2x1024xf32, #tile.scope<fragment>> to memref<?x1024xf32>
  }
  return
}
