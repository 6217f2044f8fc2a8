// RUN: tilec %s --emit=metadata | FileCheck %s
// RUN: sed 's/%%q: si32/%%q: memref<4xi264>/' %s \
// RUN:   | not tilec - --emit=metadata 2>&1 | FileCheck %s --check-prefix=WIDE

// Every element type the metadata can name, in TILE_DTYPES order: the
// compiler's MLIR type -> dtype mapping reads tile_abi.h's table, so a name
// here is the name the runtime and Python accept. Index scalars are int64.
func.func @dtypes(%a: memref<4xi1>, %b: memref<4xi8>, %c: memref<4xi16>,
                  %d: memref<4xi32>, %e: memref<4xi64>, %f: memref<4xui8>,
                  %g: memref<4xui16>, %h: memref<4xui32>, %i: memref<4xui64>,
                  %j: memref<4xf16>, %k: memref<4xbf16>, %l: memref<4xf32>,
                  %m: memref<4xf64>, %n: memref<4xf8E4M3FN>,
                  %o: memref<4xf8E5M2>, %p: index, %q: si32)
    attributes {tile.kernel} {
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(32) {
  }
  return
}

// CHECK-LABEL: "params": [
// CHECK: "dtype": "bool",
// CHECK: "dtype": "int8",
// CHECK: "dtype": "int16",
// CHECK: "dtype": "int32",
// CHECK: "dtype": "int64",
// CHECK: "dtype": "uint8",
// CHECK: "dtype": "uint16",
// CHECK: "dtype": "uint32",
// CHECK: "dtype": "uint64",
// CHECK: "dtype": "float16",
// CHECK: "dtype": "bfloat16",
// CHECK: "dtype": "float32",
// CHECK: "dtype": "float64",
// CHECK: "dtype": "float8_e4m3fn",
// CHECK: "dtype": "float8_e5m2",
// CHECK: "dtype": "int64",
// CHECK: "dtype": "int32",

// WIDE: error: argument #16 has unsupported element type 'i264'
