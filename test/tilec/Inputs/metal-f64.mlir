func.func @scale(%x: memref<?xf64> {tile.name = "X", tile.dims = ["N"]},
                 %y: memref<?xf64> {tile.name = "Y", tile.dims = ["N"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %g = arith.ceildivui %n, %c128 : index
  tile.launch blocks(%b) in (%g) threads(128) {
    %f = tile.alloc : memref<128xf64, #tile.scope<fragment>>
    %start = arith.muli %b, %c128 : index
    tile.copy %x[%start] to %f : memref<?xf64> to memref<128xf64, #tile.scope<fragment>>
    tile.parallel (%i) in [128] {
      %v = memref.load %f[%i] : memref<128xf64, #tile.scope<fragment>>
      %w = math.exp %v : f64
      memref.store %w, %f[%i] : memref<128xf64, #tile.scope<fragment>>
    }
    tile.copy %f to %y[%start] : memref<128xf64, #tile.scope<fragment>> to memref<?xf64>
  }
  return
}
