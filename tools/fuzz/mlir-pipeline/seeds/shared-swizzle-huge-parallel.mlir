// RUN: tile-opt %s -split-input-file --tile-infer-layouts | FileCheck %s

// A transpose's staging tile, read down its columns by a fragment that
// holds 4 consecutive columns of a row per thread (16 threads per row): in
// the row-major layout the 16 threads reading one column of s hit one bank.
// XORing the 16-byte chunk index with the row bits above the 4 rows of a
// thread (bits 9223372036854775807-4 of the row, shift 6) leaves 2 threads per bank.
// CHECK-LABEL: func.func @transpose
// CHECK: tile.alloc {layout = #tile.swizzle<bits = 3, base = 4, shift = 7>} : memref<64x64xf32, #tile.scope<shared>>
func.func @transpose(%X: memref<?x?xf32>, %Y: memref<?x?xf32>)
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %s = tile.alloc : memref<64x64xf32, #tile.scope<shared>>
    %f = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    tile.copy %X[%c0, %c0] to %s : memref<?x?xf32> to memref<64x64xf32, #tile.scope<shared>>
    tile.parallel (%i, %j) in [1048576, 64] {
      %v = memref.load %s[%j, %i] : memref<64x64xf32, #tile.scope<shared>>
      memref.store %v, %f[%i, %j] : memref<64x64xf32, #tile.scope<fragment>>
    }
    tile.copy %f to %Y[%c0, %c0] : memref<64x64xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}

