// A no-op kernel with 4 tensor arguments: one block that does nothing.
func.func @noop(%A: memref<?xf32> {tile.name = "A", tile.dims = ["N"]},
                %B: memref<?xf32> {tile.name = "B", tile.dims = ["N"]},
                %C: memref<?xf32> {tile.name = "C", tile.dims = ["N"]},
                %D: memref<?xf32> {tile.name = "D", tile.dims = ["N"]})
    attributes {tile.kernel} {
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
  }
  return
}
