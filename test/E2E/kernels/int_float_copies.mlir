// tile.copy between integer and float tensors converts: X (i32) is copied
// into an f32 fragment (a signed value), divided by 4, written to Y (f32)
// and copied into Z (i32, toward zero) and into an i8 fragment and back
// out as the i32 N (wrap-free in -128..127 here).
func.func @int_float_copies(%X: memref<?xi32> {tile.name = "X", tile.dims = ["N"]},
                            %Y: memref<?xf32> {tile.name = "Y", tile.dims = ["N"], tile.output},
                            %Z: memref<?xi32> {tile.name = "Z", tile.dims = ["N"], tile.output},
                            %W: memref<?xf16> {tile.name = "W", tile.dims = ["N"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %quarter = arith.constant 0.25 : f32
  %N = memref.dim %X, %c0 : memref<?xi32>
  %g = arith.ceildivui %N, %c128 : index
  tile.launch blocks(%b) in (%g) threads(32) {
    %f = tile.alloc : memref<128xf32, #tile.scope<fragment>>
    %s = tile.alloc : memref<128xi16, #tile.scope<shared>>
    %n0 = arith.muli %b, %c128 : index
    tile.copy %X[%n0] to %f : memref<?xi32> to memref<128xf32, #tile.scope<fragment>>
    tile.parallel (%i) in [128] {
      %v = memref.load %f[%i] : memref<128xf32, #tile.scope<fragment>>
      %q = arith.mulf %v, %quarter : f32
      memref.store %q, %f[%i] : memref<128xf32, #tile.scope<fragment>>
    }
    tile.copy %f to %Y[%n0] : memref<128xf32, #tile.scope<fragment>> to memref<?xf32>
    tile.copy %f to %Z[%n0] : memref<128xf32, #tile.scope<fragment>> to memref<?xi32>
    tile.copy %f to %s : memref<128xf32, #tile.scope<fragment>> to memref<128xi16, #tile.scope<shared>>
    tile.copy %s to %W[%n0] : memref<128xi16, #tile.scope<shared>> to memref<?xf16>
  }
  return
}
