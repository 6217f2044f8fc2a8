// Y = alpha * X + Y + bias over a 3-D tensor (B x M x N, dynamic), blocks of
// 2 x 8 x 32 on a 3-D grid; exercises scalars (f32 and an i32 used in the
// grid), fill of a local buffer, copies with a local staging buffer and
// element conversion (X is f16, Y is f32).
func.func @axpy3d(%X: memref<?x?x?xf16> {tile.name = "X", tile.dims = ["B", "M", "N"]},
                  %Y: memref<?x?x?xf32> {tile.name = "Y", tile.dims = ["B", "M", "N"]},
                  %alpha: f32 {tile.name = "alpha"},
                  %bias: f32 {tile.name = "bias"},
                  %bstep: i32 {tile.name = "batch_step"})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %B = memref.dim %X, %c0 : memref<?x?x?xf16>
  %M = memref.dim %X, %c1 : memref<?x?x?xf16>
  %N = memref.dim %X, %c2 : memref<?x?x?xf16>
  %bs = arith.index_cast %bstep : i32 to index
  %gz = arith.ceildivui %B, %bs : index
  %gy = arith.ceildivui %M, %c8 : index
  %gx = arith.ceildivui %N, %c32 : index
  tile.launch blocks(%bx, %by, %bz) in (%gx, %gy, %gz) threads(64) {
    %x = tile.alloc : memref<2x8x32xf32, #tile.scope<fragment>>
    %y = tile.alloc : memref<2x8x32xf32, #tile.scope<local>>
    %b = tile.alloc : memref<2x8x32xf32, #tile.scope<shared>>
    %z0 = arith.muli %bz, %c2 : index
    %y0 = arith.muli %by, %c8 : index
    %x0 = arith.muli %bx, %c32 : index
    tile.copy %X[%z0, %y0, %x0] to %x : memref<?x?x?xf16> to memref<2x8x32xf32, #tile.scope<fragment>>
    tile.copy %Y[%z0, %y0, %x0] to %y : memref<?x?x?xf32> to memref<2x8x32xf32, #tile.scope<local>>
    tile.fill %b, %bias : memref<2x8x32xf32, #tile.scope<shared>>, f32
    tile.parallel (%i, %j, %k) in [2, 8, 32] {
      %xv = memref.load %x[%i, %j, %k] : memref<2x8x32xf32, #tile.scope<fragment>>
      %yv = memref.load %y[%i, %j, %k] : memref<2x8x32xf32, #tile.scope<local>>
      %bv = memref.load %b[%i, %j, %k] : memref<2x8x32xf32, #tile.scope<shared>>
      %ax = arith.mulf %alpha, %xv : f32
      %s = arith.addf %ax, %yv : f32
      %r = arith.addf %s, %bv : f32
      memref.store %r, %y[%i, %j, %k] : memref<2x8x32xf32, #tile.scope<local>>
    }
    tile.copy %y to %Y[%z0, %y0, %x0] : memref<2x8x32xf32, #tile.scope<local>> to memref<?x?x?xf32>
  }
  return
}
