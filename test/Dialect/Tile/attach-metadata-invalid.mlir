// RUN: tile-opt %s -split-input-file -tile-attach-metadata -verify-diagnostics

// The host computes the grid from the metadata, so a grid extent may only
// depend on argument shapes, integer scalars and integer arithmetic.
func.func @grid_from_memory(%a: memref<?xf32>, %n: memref<1xindex>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{grid extent cannot be computed on the host: 'memref.load'}}
  %g = memref.load %n[%c0] : memref<1xindex>
  tile.launch blocks(%b) in (%g) threads(32) {
  }
  return
}

// -----

func.func @grid_from_float(%a: memref<?xf32>, %x: f32) attributes {tile.kernel} {
  // expected-error @+1 {{grid extent cannot be computed on the host: 'arith.fptoui'}}
  %i = arith.fptoui %x : f32 to i32
  %g = arith.index_cast %i : i32 to index
  tile.launch blocks(%b) in (%g) threads(32) {
  }
  return
}

// -----

// expected-error @+1 {{expected exactly one tile.kernel function in the module, found 0}}
module {
  func.func @not_a_kernel() {
    return
  }
}

// -----

// expected-error @+1 {{scalars must be i32, i64, index, f32 or f64}}
func.func @f16_scalar(%a: memref<?xf32>, %x: f16) attributes {tile.kernel} {
  %c1 = arith.constant 1 : index
  tile.launch blocks(%b) in (%c1) threads(32) {
  }
  return
}

// -----

// tile.inplace promises correctness under aliasing of a written parameter;
// on a parameter the kernel only reads it is a mistake.
// expected-error @+1 {{parameter 'X' is declared inplace, but the kernel never writes it}}
func.func @inplace_read_only(%x: memref<?xf32> {tile.name = "X", tile.inplace}) attributes {tile.kernel} {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  tile.launch blocks(%b) in (%c1) threads(32) {
    %v = memref.load %x[%c0] : memref<?xf32>
  }
  return
}

// -----

// The runtime names parameters in its messages: they must be distinct.
// expected-error @+1 {{two kernel parameters are named 'x' (set distinct tile.name attributes)}}
func.func @same_names(%a: memref<?xf32> {tile.name = "x"}, %b: memref<?xf32> {tile.name = "x"}) attributes {tile.kernel} {
  %c1 = arith.constant 1 : index
  tile.launch blocks(%i) in (%c1) threads(32) {
  }
  return
}

// -----

// An output the runtime may allocate uninitialized cannot be accumulated
// into (the sum would start from garbage, silently).
// expected-note @+1 {{the output}}
func.func @accumulated_output(%x: memref<?xf32>, %y: memref<?xf32> {tile.name = "Y", tile.output}) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%b) in (%c1) threads(32) {
    %f = tile.alloc : memref<32xf32, #tile.scope<fragment>>
    tile.copy %x[%c0] to %f : memref<?xf32> to memref<32xf32, #tile.scope<fragment>>
    // expected-error @+1 {{'Y' is a tile.output (allocated uninitialized when the caller omits it) but this atomic accumulates into it: drop tile.output and have the caller pass the tensor}}
    tile.atomic_tile add %f to %y[%c0] : memref<32xf32, #tile.scope<fragment>> to memref<?xf32>
  }
  return
}
