// RUN: tile-opt %s -split-input-file --tile-infer-layouts | FileCheck %s

// A transpose's staging tile, read down its columns by a fragment that
// holds 4 consecutive columns of a row per thread (16 threads per row): in
// the row-major layout the 16 threads reading one column of s hit one bank.
// XORing the 16-byte chunk index with the row bits above the 4 rows of a
// thread (bits 2-4 of the row, shift 6) leaves 2 threads per bank.
// CHECK-LABEL: func.func @transpose
// CHECK: tile.alloc {layout = #tile.swizzle<bits = 3, base = 4, shift = 6>} : memref<64x64xf32, #tile.scope<shared>>
func.func @transpose(%X: memref<?x?xf32>, %Y: memref<?x?xf32>)
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %s = tile.alloc : memref<64x64xf32, #tile.scope<shared>>
    %f = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    tile.copy %X[%c0, %c0] to %s : memref<?x?xf32> to memref<64x64xf32, #tile.scope<shared>>
    tile.parallel (%i, %j) in [64, 64] {
      %v = memref.load %s[%j, %i] : memref<64x64xf32, #tile.scope<shared>>
      memref.store %v, %f[%i, %j] : memref<64x64xf32, #tile.scope<fragment>>
    }
    tile.copy %f to %Y[%c0, %c0] : memref<64x64xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}

// -----

// Read along its rows, the same tile has no conflict to avoid: it stays
// row-major.
// CHECK-LABEL: func.func @rows
// CHECK: tile.alloc : memref<64x64xf32, #tile.scope<shared>>
func.func @rows(%X: memref<?x?xf32>, %Y: memref<?x?xf32>)
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %s = tile.alloc : memref<64x64xf32, #tile.scope<shared>>
    %f = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    tile.copy %X[%c0, %c0] to %s : memref<?x?xf32> to memref<64x64xf32, #tile.scope<shared>>
    tile.parallel (%i, %j) in [64, 64] {
      %v = memref.load %s[%i, %j] : memref<64x64xf32, #tile.scope<shared>>
      memref.store %v, %f[%i, %j] : memref<64x64xf32, #tile.scope<fragment>>
    }
    tile.copy %f to %Y[%c0, %c0] : memref<64x64xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}

// -----

// A column read of an f16 tile with 128-byte rows, iterations spread
// linearly (no fragment drives the loop): some swizzle of the 16-byte
// chunks beats the row-major layout: 32 lanes read one column of 32 rows,
// the row XORed into the chunk index leaves 4 per bank instead of 32.
// CHECK-LABEL: func.func @columns_f16
// CHECK: tile.alloc {layout = #tile.swizzle<bits = 3, base = 4, shift = 3>} : memref<64x64xf16, #tile.scope<shared>>
func.func @columns_f16(%X: memref<?x?xf16>, %Y: memref<?xf32>)
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(64) {
    %s = tile.alloc : memref<64x64xf16, #tile.scope<shared>>
    tile.copy %X[%c0, %c0] to %s : memref<?x?xf16> to memref<64x64xf16, #tile.scope<shared>>
    tile.parallel (%i, %j) in [64, 64] {
      %v = memref.load %s[%j, %i] : memref<64x64xf16, #tile.scope<shared>>
      %w = arith.extf %v : f16 to f32
      memref.store %w, %Y[%c0] : memref<?xf32>
    }
  }
  return
}

// -----

// A use the bank model does not cover (here a reduction reading the tile)
// keeps the row-major layout, column reads or not.
// CHECK-LABEL: func.func @unmodeled_use
// CHECK: tile.alloc : memref<64x64xf32, #tile.scope<shared>>
func.func @unmodeled_use(%X: memref<?x?xf32>, %Y: memref<?x?xf32>)
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %s = tile.alloc : memref<64x64xf32, #tile.scope<shared>>
    %f = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    %r = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    tile.copy %X[%c0, %c0] to %s : memref<?x?xf32> to memref<64x64xf32, #tile.scope<shared>>
    tile.parallel (%i, %j) in [64, 64] {
      %v = memref.load %s[%j, %i] : memref<64x64xf32, #tile.scope<shared>>
      memref.store %v, %f[%i, %j] : memref<64x64xf32, #tile.scope<fragment>>
    }
    tile.reduce sum %s into %r {dim = 1 : i64, clear} : memref<64x64xf32, #tile.scope<shared>> into memref<64xf32, #tile.scope<fragment>>
    tile.copy %f to %Y[%c0, %c0] : memref<64x64xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}

// -----

// Too many accesses to enumerate (a 2^26-iteration parallel): the search
// gives up before enumerating them, and the tile stays row-major.
// CHECK-LABEL: func.func @too_many_accesses
// CHECK: tile.alloc : memref<64x64xf32, #tile.scope<shared>>
func.func @too_many_accesses(%X: memref<?x?xf32>, %Y: memref<?xf32>)
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %s = tile.alloc : memref<64x64xf32, #tile.scope<shared>>
    tile.copy %X[%c0, %c0] to %s : memref<?x?xf32> to memref<64x64xf32, #tile.scope<shared>>
    tile.parallel (%i, %j) in [1048576, 64] {
      %v = memref.load %s[%j, %i] : memref<64x64xf32, #tile.scope<shared>>
      memref.store %v, %Y[%c0] : memref<?xf32>
    }
  }
  return
}
