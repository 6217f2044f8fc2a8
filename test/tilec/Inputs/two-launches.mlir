// A kernel with two launches (tilec rejects it: test/tilec/errors.mlir).
func.func @k(%X: memref<?xf32>) attributes {tile.kernel} {
  %c1 = arith.constant 1 : index
  tile.launch blocks(%b) in (%c1) threads(32) {
  }
  tile.launch blocks(%b) in (%c1) threads(32) {
  }
  return
}
