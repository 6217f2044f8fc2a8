// RUN: tilec %s --emit=metadata --out-idx=1 | FileCheck %s
// RUN: tilec %s --emit=metadata --out-idx=-2 | FileCheck %s
// RUN: not tilec %s --emit=metadata --out-idx=-4 2>&1 | FileCheck %s --check-prefix=RANGE

// Parameter names, symbols bound across tensors, a static dim, a scalar in the
// grid, an output marked from the command line (-2: the second to last), what the kernel does to each
// tensor (X is only read, Y only written).
func.func @scale(%x: memref<?x64xf32> {tile.name = "X", tile.dims = ["M", "D"]},
                 %y: memref<?x64xbf16> {tile.name = "Y", tile.dims = ["M", "D"]},
                 %rows: i32 {tile.name = "rows_per_block"})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %m = memref.dim %x, %c0 : memref<?x64xf32>
  %r = arith.index_cast %rows : i32 to index
  %g = arith.ceildivui %m, %r : index
  tile.launch blocks(%b) in (%g) threads(64) {
    %s = tile.alloc : memref<8x64xf32, #tile.scope<shared>>
    tile.copy %x[%b, %c0] to %s : memref<?x64xf32> to memref<8x64xf32, #tile.scope<shared>>
    tile.copy %s to %y[%b, %c0] : memref<8x64xf32, #tile.scope<shared>> to memref<?x64xbf16>
  }
  return
}

// CHECK-LABEL: "block": [
// CHECK-NEXT:    64,
// CHECK:       "grid": [
// CHECK:           "args": [
// CHECK:               "sym": "M"
// CHECK:               "scalar": 2
// CHECK:           "op": "ceildivu"
// CHECK:       "name": "scale",
// CHECK:       "out_idx": [
// CHECK-NEXT:    1
// CHECK-NEXT:  ],
// CHECK:       "access": "read",
// CHECK-NEXT:  "dims": [
// CHECK-NEXT:    "M",
// CHECK-NEXT:    "D"
// CHECK:       "dtype": "float32",
// CHECK-NEXT:  "inplace": false,
// CHECK:       "name": "X",
// CHECK:       "output": false,
// CHECK:       "shape": [
// CHECK-NEXT:    -1,
// CHECK-NEXT:    64
// CHECK:       "access": "write",
// CHECK:       "dtype": "bfloat16",
// CHECK:       "name": "Y",
// CHECK:       "output": true,
// CHECK:       "dtype": "int32",
// CHECK-NEXT:  "kind": "scalar",
// CHECK-NEXT:  "name": "rows_per_block"
// CHECK:       "shared_bytes": 2048,
// CHECK:       "symbols": [
// CHECK-NEXT:    "M",
// CHECK-NEXT:    "D"
// CHECK-NEXT:  ],
// CHECK:       "kind": "cpu"

// RANGE: error: --out-idx -4 is out of range: the kernel has 3 parameters
