// Y = X W^T + bias: a linear layer, its weight W stored N x K as torch's
// nn.Linear keeps it (out_features x in_features). 128x128 output tiles, a
// 3-stage pipelined K loop of 32. X is MxK, W is NxK, bias has N elements,
// Y is MxN (f16 in, f32 accumulate, f16 out); any M, N, K.
//
// The gemm reads its B operand transposed (`transpose_b`): the copy brings
// a 128x32 tile of W (128 rows of N, 32 of K) into shared memory, and the
// gemm multiplies X's tile by its transpose. On sm_90a this is the same
// TMA + wgmma kernel family as examples/gemm.mlir, with W's tiles read
// K-major. The epilogue adds bias[n] to each accumulator element (the
// column index clamped to N - 1, so that the tail tile's columns past N read
// a valid element; their results are dropped by the bounds-checked copy
// out).
//
// numpy: Y = X @ W.T + bias
func.func @linear(%X: memref<?x?xf16> {tile.name = "X", tile.dims = ["M", "K"]},
                  %W: memref<?x?xf16> {tile.name = "W", tile.dims = ["N", "K"]},
                  %bias: memref<?xf16> {tile.name = "bias", tile.dims = ["N"]},
                  %Y: memref<?x?xf16> {tile.name = "Y", tile.dims = ["M", "N"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %M = memref.dim %X, %c0 : memref<?x?xf16>
  %K = memref.dim %X, %c1 : memref<?x?xf16>
  %N = memref.dim %W, %c0 : memref<?x?xf16>
  %Nm1 = arith.subi %N, %c1 : index
  %gy = arith.ceildivui %M, %c128 : index
  %gx = arith.ceildivui %N, %c128 : index
  %nk = arith.ceildivui %K, %c32 : index
  tile.launch blocks(%bx, %by) in (%gx, %gy) threads(128) attributes {raster = #tile.raster<panel = 8>} {
    %Xs = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
    %Ws = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
    %Yf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    %m0 = arith.muli %by, %c128 : index
    %n0 = arith.muli %bx, %c128 : index
    tile.clear %Yf : memref<128x128xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(3) {
      %k0 = arith.muli %k, %c32 : index
      tile.copy %X[%m0, %k0] to %Xs : memref<?x?xf16> to memref<128x32xf16, #tile.scope<shared>>
      tile.copy %W[%n0, %k0] to %Ws : memref<?x?xf16> to memref<128x32xf16, #tile.scope<shared>>
      tile.gemm %Xs, %Ws, %Yf {transpose_b} : memref<128x32xf16, #tile.scope<shared>>, memref<128x32xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.parallel (%i, %j) in [128, 128] {
      %acc = memref.load %Yf[%i, %j] : memref<128x128xf32, #tile.scope<fragment>>
      %n = arith.addi %n0, %j : index
      %nc = arith.minui %n, %Nm1 : index
      %b = memref.load %bias[%nc] : memref<?xf16>
      %bf = arith.extf %b : f16 to f32
      %s = arith.addf %acc, %bf : f32
      memref.store %s, %Yf[%i, %j] : memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Yf to %Y[%m0, %n0] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}
