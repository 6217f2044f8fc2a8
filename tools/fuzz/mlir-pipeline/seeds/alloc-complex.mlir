// issue 10: a complex (vector, index) buffer crashed the metadata and the
// GPU lowering; now the alloc verifier rejects it.
func.func @k(%X: memref<?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%b) in (%c1) threads(32) {
    %s = tile.alloc : memref<64xcomplex<f32>, #tile.scope<shared>>
    %f = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    tile.copy %X[%c0] to %f : memref<?xf32> to memref<64xf32, #tile.scope<fragment>>
    tile.copy %f to %X[%c0] : memref<64xf32, #tile.scope<fragment>> to memref<?xf32>
  }
  return
}
