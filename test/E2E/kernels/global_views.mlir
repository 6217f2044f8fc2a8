// Views of kernel parameters as copy operands: Y[b] = X[b] + 1 over a
// [B, M, N] tensor read through memref.collapse_shape (as [B*M, N] rows) and
// written through a memref.subview of batch b (a strided 2-D view), plus a
// rank-reducing copy of a [M, N] local staging tile back out of a
// memref.expand_shape ([B, M, N] as [B, M, 1, N]). 32x32 tiles, any sizes.
func.func @global_views(%X: memref<?x?x?xf32> {tile.name = "X", tile.dims = ["B", "M", "N"]},
                        %Y: memref<?x?x?xf32> {tile.name = "Y", tile.dims = ["B", "M", "N"], tile.output},
                        %Z: memref<?x?x?xf32> {tile.name = "Z", tile.dims = ["B", "M", "N"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %one = arith.constant 1.0 : f32
  %B = memref.dim %X, %c0 : memref<?x?x?xf32>
  %M = memref.dim %X, %c1 : memref<?x?x?xf32>
  %N = memref.dim %X, %c2 : memref<?x?x?xf32>
  %gy = arith.ceildivui %M, %c32 : index
  %gx = arith.ceildivui %N, %c32 : index
  %rows = memref.collapse_shape %X [[0, 1], [2]] : memref<?x?x?xf32> into memref<?x?xf32>
  %Z4 = memref.expand_shape %Z [[0], [1, 2], [3]] output_shape [%B, %M, 1, %N] : memref<?x?x?xf32> into memref<?x?x1x?xf32>
  tile.launch blocks(%bx, %by, %bz) in (%gx, %gy, %B) threads(64) {
    %t = tile.alloc : memref<32x32xf32, #tile.scope<fragment>>
    %l = tile.alloc : memref<32x32xf32, #tile.scope<local>>
    %m0 = arith.muli %by, %c32 : index
    %n0 = arith.muli %bx, %c32 : index
    %bm = arith.muli %bz, %M : index
    %r0 = arith.addi %bm, %m0 : index
    // Rows past M belong to the next batch in the collapsed view: the
    // subview below drops them on the way out.
    tile.copy %rows[%r0, %n0] to %t : memref<?x?xf32> to memref<32x32xf32, #tile.scope<fragment>>
    tile.parallel (%i, %j) in [32, 32] {
      %v = memref.load %t[%i, %j] : memref<32x32xf32, #tile.scope<fragment>>
      %w = arith.addf %v, %one : f32
      memref.store %w, %t[%i, %j] : memref<32x32xf32, #tile.scope<fragment>>
    }
    %Yb = memref.subview %Y[%bz, 0, 0] [1, %M, %N] [1, 1, 1] : memref<?x?x?xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
    tile.copy %t to %Yb[%m0, %n0] : memref<32x32xf32, #tile.scope<fragment>> to memref<?x?xf32, strided<[?, 1], offset: ?>>
    tile.copy %t to %l : memref<32x32xf32, #tile.scope<fragment>> to memref<32x32xf32, #tile.scope<local>>
    tile.copy %l to %Z4[%bz, %m0, %c0, %n0] drop_dims [0, 2] : memref<32x32xf32, #tile.scope<local>> to memref<?x?x1x?xf32>
  }
  return
}
