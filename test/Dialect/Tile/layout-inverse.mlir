// RUN: tile-opt %s --split-input-file --verify-diagnostics | FileCheck %s

// A fragment layout may carry its inverse (thread, register) -> index.
// CHECK: inverse = (d0, d1) -> (d1 * 32 + d0)
func.func @ok(%A: memref<?xf32>) attributes {tile.kernel} {
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(32) {
    %a = tile.alloc {layout = #tile.fragment<thread = (i) -> (i mod 32), index = (i) -> (i floordiv 32), threads = 32, inverse = (t, r) -> (r * 32 + t)>} : memref<64xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @wrong_inverse(%A: memref<?xf32>) attributes {tile.kernel} {
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(32) {
    // expected-error @+1 {{fragment layout inverse maps thread 0 register 1 to an element whose index map gives 0}}
    %a = tile.alloc {layout = #tile.fragment<thread = (i) -> (i mod 32), index = (i) -> (i floordiv 32), threads = 32, inverse = (t, r) -> (r + t)>} : memref<64xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @inverse_out_of_tile(%A: memref<?xf32>) attributes {tile.kernel} {
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(32) {
    // expected-error @+1 {{fragment layout inverse maps thread 0 register 1 outside the tile (dim 0 = 64)}}
    %a = tile.alloc {layout = #tile.fragment<thread = (i) -> (i mod 32), index = (i) -> (i floordiv 32), threads = 32, inverse = (t, r) -> (r * 64 + t)>} : memref<64xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @inverse_arity(%A: memref<?xf32>) attributes {tile.kernel} {
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(32) {
    // expected-error @+1 {{fragment layout inverse map has 2 results but the layout has 1 dims}}
    %a = tile.alloc {layout = #tile.fragment<thread = (i) -> (i mod 32), index = (i) -> (i floordiv 32), threads = 32, inverse = (t, r) -> (r, t)>} : memref<64xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @replicate_mismatch(%A: memref<?xf32>) attributes {tile.kernel} {
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(32) {
    // expected-error @+1 {{fragment layout with an inverse map must give every thread the same 64 registers: 32 x 64 slots != 64 elements x replicate 1}}
    %a = tile.alloc {layout = #tile.fragment<thread = (i) -> (i mod 32), index = (i) -> (i), threads = 32, inverse = (t, r) -> (r)>} : memref<64xf32, #tile.scope<fragment>>
  }
  return
}
