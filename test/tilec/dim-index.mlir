// A negative dimension index crashed tilec (an upstream folder that tilec's
// extra dialects bring in) while tile-opt --tile-to-cpu accepted it: both
// now report it (the kernel verifier, test/Dialect/Tile/kernel-attrs-invalid.mlir).
// RUN: not tilec %s -o /dev/null 2>&1 | FileCheck %s
// RUN: not tilec %s --target=cuda -o /dev/null 2>&1 | FileCheck %s
// RUN: not tile-opt %s --tile-to-cpu -o /dev/null 2>&1 | FileCheck %s
// CHECK: error: 'memref.dim' op in a tile kernel needs a constant dimension index in [0, 1), got -1
func.func @k(%X: memref<?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cm1 = arith.constant -1 : index
  tile.launch blocks(%b) in (%c1) threads(32) {
    %n = memref.dim %X, %cm1 : memref<?xf32>
    %f = tile.alloc : memref<32xf32, #tile.scope<fragment>>
    tile.copy %X[%n] to %f : memref<?xf32> to memref<32xf32, #tile.scope<fragment>>
    tile.copy %f to %X[%c0] : memref<32xf32, #tile.scope<fragment>> to memref<?xf32>
  }
  return
}
