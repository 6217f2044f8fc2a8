// RMSNorm: Y[i, j] = X[i, j] / sqrt(mean_k X[i, k]^2 + eps) * W[j] for an f16
// matrix X of M x 1024 (M dynamic, the row length N = 1024 static), f32
// arithmetic, f16 out.
//
//   X   : memref<?x1024xf16>, M x N (tile.dims = ["M", "N"])
//   W   : memref<1024xf16>, the per-column weight
//   Y   : memref<?x1024xf16>, M x N (tile.output)
//   eps : f32
//
// The grid has ceil(M / 8) blocks of 256 threads; block b owns rows
// [b*8, b*8 + 8), held whole in one 8x1024 fragment (32 elements per
// thread). Per block:
//   1. copy the 8 rows of X into the fragment x;
//   2. sq = x^2 in f32 (tile.parallel);
//   3. ss[i] = sum_j sq[i, j] (tile.reduce sum: in-thread partials, a warp
//      butterfly, then across the 8 warps);
//   4. y[i, j] = x[i, j] * rsqrt(ss[i] / 1024 + eps) * W[j] (tile.parallel;
//      W read from global memory);
//   5. copy y to the same 8 rows of Y.
// Tails: in the last block, rows >= M read as zeros (their result, 0, is
// harmless: eps > 0) and their writes to Y are dropped.
//
// numpy: Y = X / np.sqrt((X**2).mean(axis=1, keepdims=True) + eps) * W
func.func @rmsnorm(%X: memref<?x1024xf16> {tile.name = "X", tile.dims = ["M", "N"]},
                   %W: memref<1024xf16> {tile.name = "W", tile.dims = ["N"]},
                   %Y: memref<?x1024xf16> {tile.name = "Y", tile.dims = ["M", "N"], tile.output},
                   %eps: f32 {tile.name = "eps"})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %inv_n = arith.constant 9.765625e-04 : f32
  %M = memref.dim %X, %c0 : memref<?x1024xf16>
  %blocks = arith.ceildivui %M, %c8 : index
  tile.launch blocks(%bx) in (%blocks) threads(256) {
    %x = tile.alloc : memref<8x1024xf16, #tile.scope<fragment>>
    %sq = tile.alloc : memref<8x1024xf32, #tile.scope<fragment>>
    %ss = tile.alloc : memref<8xf32, #tile.scope<fragment>>
    %y = tile.alloc : memref<8x1024xf16, #tile.scope<fragment>>
    %row = arith.muli %bx, %c8 : index
    tile.copy %X[%row, %c0] to %x : memref<?x1024xf16> to memref<8x1024xf16, #tile.scope<fragment>>
    tile.parallel (%i, %j) in [8, 1024] {
      %v = memref.load %x[%i, %j] : memref<8x1024xf16, #tile.scope<fragment>>
      %f = arith.extf %v : f16 to f32
      %s = arith.mulf %f, %f : f32
      memref.store %s, %sq[%i, %j] : memref<8x1024xf32, #tile.scope<fragment>>
    }
    tile.reduce sum %sq into %ss {dim = 1 : i64, clear} : memref<8x1024xf32, #tile.scope<fragment>> into memref<8xf32, #tile.scope<fragment>>
    tile.parallel (%i, %j) in [8, 1024] {
      %v = memref.load %x[%i, %j] : memref<8x1024xf16, #tile.scope<fragment>>
      %s = memref.load %ss[%i] : memref<8xf32, #tile.scope<fragment>>
      %w = memref.load %W[%j] : memref<1024xf16>
      %mean = arith.mulf %s, %inv_n : f32
      %me = arith.addf %mean, %eps : f32
      %r = math.rsqrt %me : f32
      %f = arith.extf %v : f16 to f32
      %wf = arith.extf %w : f16 to f32
      %n = arith.mulf %f, %r : f32
      %o = arith.mulf %n, %wf : f32
      %t = arith.truncf %o : f32 to f16
      memref.store %t, %y[%i, %j] : memref<8x1024xf16, #tile.scope<fragment>>
    }
    tile.copy %y to %Y[%row, %c0] : memref<8x1024xf16, #tile.scope<fragment>> to memref<?x1024xf16>
  }
  return
}
