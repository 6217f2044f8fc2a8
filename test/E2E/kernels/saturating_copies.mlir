// tile.copy from float to integer saturates: NaN -> 0, values past the
// integer's range (infinities included) -> its min / max, on every target
// (plain fptosi is poison there). X (f32) goes to A (i8), B (i32) and,
// through an f16 fragment, to C (i32: only the f16 infinities are past
// an f16's reach of an i32).
func.func @saturating_copies(%X: memref<?xf32> {tile.name = "X", tile.dims = ["N"]},
                             %A: memref<?xi8> {tile.name = "A", tile.dims = ["N"], tile.output},
                             %B: memref<?xi32> {tile.name = "B", tile.dims = ["N"], tile.output},
                             %C: memref<?xi32> {tile.name = "C", tile.dims = ["N"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %N = memref.dim %X, %c0 : memref<?xf32>
  %g = arith.ceildivui %N, %c128 : index
  tile.launch blocks(%b) in (%g) threads(64) {
    %f = tile.alloc : memref<128xf32, #tile.scope<fragment>>
    %h = tile.alloc : memref<128xf16, #tile.scope<fragment>>
    %n0 = arith.muli %b, %c128 : index
    tile.copy %X[%n0] to %f : memref<?xf32> to memref<128xf32, #tile.scope<fragment>>
    tile.copy %f to %A[%n0] : memref<128xf32, #tile.scope<fragment>> to memref<?xi8>
    tile.copy %f to %B[%n0] : memref<128xf32, #tile.scope<fragment>> to memref<?xi32>
    tile.copy %f to %h : memref<128xf32, #tile.scope<fragment>> to memref<128xf16, #tile.scope<fragment>>
    tile.copy %h to %C[%n0] : memref<128xf16, #tile.scope<fragment>> to memref<?xi32>
  }
  return
}
