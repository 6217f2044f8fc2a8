// RUN: tile-opt %s -split-input-file -verify-diagnostics --tile-infer-layouts --convert-tile-to-nvgpu=chip=sm_80 | FileCheck %s

// A fragment layout pinned without its `inverse` map is an error naming
// what to add (the GPU code walks each thread's registers with it); with
// the inverse it lowers.

func.func @no_inverse(%X: memref<?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%b) in (%c1) threads(128) {
    // expected-error @+1 {{fragment layout has no `inverse` map: a layout pinned with tile.alloc {layout = ...} needs `inverse = (t, r) -> (...)`}}
    %f = tile.alloc {layout = #tile.fragment<thread = (j) -> (j floordiv 4), index = (j) -> (j mod 4), threads = 128>} : memref<512xf32, #tile.scope<fragment>>
    tile.copy %X[%c0] to %f : memref<?xf32> to memref<512xf32, #tile.scope<fragment>>
    tile.copy %f to %X[%c0] : memref<512xf32, #tile.scope<fragment>> to memref<?xf32>
  }
  return
}

// -----

// CHECK-LABEL: gpu.func @with_inverse_kernel
func.func @with_inverse(%X: memref<?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%b) in (%c1) threads(128) {
    %f = tile.alloc {layout = #tile.fragment<thread = (j) -> (j floordiv 4), index = (j) -> (j mod 4), threads = 128, inverse = (t, r) -> (t * 4 + r)>} : memref<512xf32, #tile.scope<fragment>>
    tile.copy %X[%c0] to %f : memref<?xf32> to memref<512xf32, #tile.scope<fragment>>
    tile.copy %f to %X[%c0] : memref<512xf32, #tile.scope<fragment>> to memref<?xf32>
  }
  return
}
