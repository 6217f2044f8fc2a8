// Shared memory over the chip limit (a compile-time error on the GPU).
func.func @big(%X: memref<?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%b) in (%c1) threads(128) {
    %s = tile.alloc : memref<60000xf32, #tile.scope<shared>>
    tile.copy %X[%c0] to %s : memref<?xf32> to memref<60000xf32, #tile.scope<shared>>
    tile.copy %s to %X[%c0] : memref<60000xf32, #tile.scope<shared>> to memref<?xf32>
  }
  return
}
