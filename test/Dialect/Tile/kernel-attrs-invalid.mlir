// RUN: tile-opt %s -split-input-file -verify-diagnostics

// Kernel-level attributes: tile.kernel on the function, tile.dims /
// tile.output / tile.inplace / tile.name on its arguments, and unknown tile.* attributes.

// expected-error @+1 {{'tile.kernel' must be a unit attribute}}
func.func @k(%n: index) attributes {tile.kernel = 1 : i32} {
  tile.launch blocks(%bx) in (%n) threads(32) {
  }
  return
}

// -----

// expected-error @+1 {{'tile.kernel' may only mark a func.func}}
%c = arith.constant {tile.kernel} 0 : index

// -----

// expected-error @+1 {{a tile kernel must have a body}}
func.func private @k(%n: index) attributes {tile.kernel}

// -----

// expected-error @+1 {{a tile kernel returns nothing; write outputs to arguments}}
func.func @k(%n: index) -> index attributes {tile.kernel} {
  tile.launch blocks(%bx) in (%n) threads(32) {
  }
  return %n : index
}

// -----

// expected-error @+1 {{kernel argument #0 must be a global memref (no memory space), got 'memref<64xf32, #tile.scope<shared>>'}}
func.func @k(%S: memref<64xf32, #tile.scope<shared>>, %n: index) attributes {tile.kernel} {
  tile.launch blocks(%bx) in (%n) threads(32) {
  }
  return
}

// -----

// expected-error @+1 {{kernel argument #1 must be a global memref (no memory space), got 'memref<?xf32, 1>'}}
func.func @k(%n: index, %X: memref<?xf32, 1>) attributes {tile.kernel} {
  tile.launch blocks(%bx) in (%n) threads(32) {
  }
  return
}

// -----

// expected-error @+1 {{kernel argument #0 must have the identity layout (strides are checked by the runtime)}}
func.func @k(%X: memref<?x?xf32, strided<[?, 1]>>, %n: index) attributes {tile.kernel} {
  tile.launch blocks(%bx) in (%n) threads(32) {
  }
  return
}

// -----

// expected-error @+1 {{kernel argument #0 must be a memref or a scalar, got 'vector<4xf32>'}}
func.func @k(%v: vector<4xf32>, %n: index) attributes {tile.kernel} {
  tile.launch blocks(%bx) in (%n) threads(32) {
  }
  return
}

// -----

// expected-error @+1 {{a tile kernel must contain a tile.launch}}
func.func @k(%X: memref<?xf32>) attributes {tile.kernel} {
  return
}

// -----

// expected-error @+1 {{unknown tile attribute 'tile.kernal' on an operation}}
func.func @k(%n: index) attributes {tile.kernal} {
  return
}

// -----

// expected-error @+1 {{unknown tile attribute 'tile.dims' on an operation}}
func.func @k(%n: index) attributes {tile.dims = ["N"]} {
  return
}

// -----

// expected-error @+1 {{'tile.dims' of argument #0 names 1 dims but the memref has rank 2}}
func.func @k(%X: memref<?x?xf32> {tile.dims = ["M"]}, %n: index) attributes {tile.kernel} {
  tile.launch blocks(%bx) in (%n) threads(32) {
  }
  return
}

// -----

// expected-error @+1 {{'tile.dims' must be an array of strings on a memref argument (argument #1)}}
func.func @k(%X: memref<?xf32>, %n: index {tile.dims = ["N"]}) attributes {tile.kernel} {
  tile.launch blocks(%bx) in (%n) threads(32) {
  }
  return
}

// -----

// expected-error @+1 {{'tile.dims' must be an array of strings on a memref argument (argument #0)}}
func.func @k(%X: memref<?xf32> {tile.dims = "N"}, %n: index) attributes {tile.kernel} {
  tile.launch blocks(%bx) in (%n) threads(32) {
  }
  return
}

// -----

// expected-error @+1 {{'tile.dims' of argument #0 must hold non-empty strings}}
func.func @k(%X: memref<?x?xf32> {tile.dims = ["M", ""]}, %n: index) attributes {tile.kernel} {
  tile.launch blocks(%bx) in (%n) threads(32) {
  }
  return
}

// -----

// expected-error @+1 {{'tile.dims' of argument #0 must hold non-empty strings}}
func.func @k(%X: memref<?x?xf32> {tile.dims = ["M", 3]}, %n: index) attributes {tile.kernel} {
  tile.launch blocks(%bx) in (%n) threads(32) {
  }
  return
}

// -----

// expected-error @+1 {{'tile.output' must be a unit attribute on a memref argument (argument #1)}}
func.func @k(%X: memref<?xf32>, %n: index {tile.output}) attributes {tile.kernel} {
  tile.launch blocks(%bx) in (%n) threads(32) {
  }
  return
}

// -----

// expected-error @+1 {{'tile.output' must be a unit attribute on a memref argument (argument #0)}}
func.func @k(%X: memref<?xf32> {tile.output = true}, %n: index) attributes {tile.kernel} {
  tile.launch blocks(%bx) in (%n) threads(32) {
  }
  return
}

// -----

// expected-error @+1 {{'tile.inplace' must be a unit attribute on a memref argument (argument #1)}}
func.func @k(%X: memref<?xf32>, %n: index {tile.inplace}) attributes {tile.kernel} {
  tile.launch blocks(%bx) in (%n) threads(32) {
  }
  return
}

// -----

// expected-error @+1 {{'tile.name' must be a non-empty string (argument #0)}}
func.func @k(%X: memref<?xf32> {tile.name = ""}, %n: index) attributes {tile.kernel} {
  tile.launch blocks(%bx) in (%n) threads(32) {
  }
  return
}

// -----

// expected-error @+1 {{unknown tile argument attribute 'tile.input'}}
func.func @k(%X: memref<?xf32> {tile.input}, %n: index) attributes {tile.kernel} {
  tile.launch blocks(%bx) in (%n) threads(32) {
  }
  return
}

// -----

// expected-error @+1 {{'tile.output' may only annotate func.func arguments}}
llvm.func @f(%p: !llvm.ptr {tile.output})

// -----

// expected-error @+1 {{symbol 'N' is 128 in argument #1 but 64 in argument #0}}
func.func @symbol_two_static_extents(%a: memref<64xf32> {tile.dims = ["N"]},
                                     %b: memref<128xf32> {tile.dims = ["N"]})
    attributes {tile.kernel} {
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(32) {
  }
  return
}

// -----

// Shape queries take a constant dimension index in range (issue 10: a
// negative one crashed an upstream folder in tilec).
func.func @dim_negative(%X: memref<?xf32>) attributes {tile.kernel} {
  %c1 = arith.constant 1 : index
  %cm1 = arith.constant -1 : index
  tile.launch blocks(%bx) in (%c1) threads(32) {
    // expected-error @+1 {{'memref.dim' op in a tile kernel needs a constant dimension index in [0, 1), got -1}}
    %n = memref.dim %X, %cm1 : memref<?xf32>
  }
  return
}

// -----

func.func @dim_out_of_range(%X: memref<?x?xf32>) attributes {tile.kernel} {
  %c2 = arith.constant 2 : index
  // expected-error @+1 {{'memref.dim' op in a tile kernel needs a constant dimension index in [0, 2), got 2}}
  %n = memref.dim %X, %c2 : memref<?x?xf32>
  tile.launch blocks(%bx) in (%n) threads(32) {
  }
  return
}

// -----

func.func @dim_computed(%X: memref<?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d = arith.subi %c0, %c1 : index
  // expected-error @+1 {{'memref.dim' op in a tile kernel needs a constant dimension index in [0, 1)}}
  %n = memref.dim %X, %d : memref<?xf32>
  tile.launch blocks(%bx) in (%n) threads(32) {
  }
  return
}
