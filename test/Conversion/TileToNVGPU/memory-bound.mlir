// RUN: tile-opt %s -split-input-file --tile-infer-layouts --convert-tile-to-nvgpu="chip=sm_80" --canonicalize --cse | FileCheck %s
// RUN: tile-opt %s -split-input-file --tile-infer-layouts --convert-tile-to-nvgpu="chip=sm_80 remarks=true" -verify-diagnostics -o /dev/null

// Global <-> fragment copies of a fragment in 16-byte runs per thread
// (tile-infer-layouts' chunked linear layout): one vector<4xf32> load or
// store per run when the base, the row pitch and the start column allow
// it (checked once) and the run is in bounds, else predicated scalar
// accesses.
// CHECK-LABEL: gpu.func @copy_vector_kernel
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: scf.if %{{.*}} -> (f32, f32, f32, f32)
// CHECK: vector.load %{{.*}} : memref<?x?xf32>, vector<4xf32>
// CHECK: } else {
// CHECK: memref.load %{{.*}} : memref<?x?xf32>
// CHECK: vector.store %{{.*}} : memref<?x?xf32>, vector<4xf32>
func.func @copy_vector(%X: memref<?x?xf32>, %Y: memref<?x?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %x = tile.alloc : memref<4x256xf32, #tile.scope<fragment>>
    tile.copy %X[%bx, %c0] to %x : memref<?x?xf32> to memref<4x256xf32, #tile.scope<fragment>>
    tile.copy %x to %Y[%bx, %c0] : memref<4x256xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}

// -----

// A row reduction of such a fragment onto a target replicated in every
// thread: the thread's partials stay in registers (no per-thread array),
// then a butterfly over the warp's 32 lanes per row (5 xor shuffles), then
// across the 4 warps through shared memory.
// CHECK-LABEL: gpu.func @row_sums_kernel
// CHECK-COUNT-2: memref.alloca() : memref<{{4|32}}xf32>
// CHECK-NOT: memref.alloca
// CHECK-COUNT-20: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.barrier
func.func @row_sums(%X: memref<?x?xf32>, %Y: memref<?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %x = tile.alloc : memref<4x1024xf32, #tile.scope<fragment>>
    %s = tile.alloc : memref<4xf32, #tile.scope<fragment>>
    tile.copy %X[%bx, %c0] to %x : memref<?x?xf32> to memref<4x1024xf32, #tile.scope<fragment>>
    tile.reduce sum %x into %s {dim = 1 : i64, clear} : memref<4x1024xf32, #tile.scope<fragment>> into memref<4xf32, #tile.scope<fragment>>
    tile.copy %s to %Y[%bx] : memref<4xf32, #tile.scope<fragment>> to memref<?xf32>
  }
  return
}

// -----

// A row split over the lanes of a warp in a way no thread has a fixed row
// per register (8 lanes per row): the partials are selected by the
// thread's row, still in registers.
// CHECK-LABEL: gpu.func @split_rows_kernel
// CHECK-COUNT-2: memref.alloca() : memref<4xf32>
// CHECK-NOT: memref.alloca
// CHECK: arith.select
// CHECK: gpu.shuffle  xor
func.func @split_rows(%X: memref<?x?xf32>, %Y: memref<?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(32) {
    %x = tile.alloc : memref<4x32xf32, #tile.scope<fragment>>
    %s = tile.alloc : memref<4xf32, #tile.scope<fragment>>
    tile.copy %X[%bx, %c0] to %x : memref<?x?xf32> to memref<4x32xf32, #tile.scope<fragment>>
    tile.reduce max %x into %s {dim = 1 : i64, clear} : memref<4x32xf32, #tile.scope<fragment>> into memref<4xf32, #tile.scope<fragment>>
    tile.copy %s to %Y[%bx] : memref<4xf32, #tile.scope<fragment>> to memref<?xf32>
  }
  return
}

// -----

// Slow paths say so (remarks=true): a fragment whose layout gives no thread
// two contiguous elements of a row is copied with scalar accesses; a
// reduction into a shared target is reduced serially per target element; a
// parallel body reading another thread's register goes through shared
// memory.
// CHECK-LABEL: gpu.func @slow_kernel
func.func @slow(%X: memref<?x?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(32) {
    %f = tile.alloc {layout = #tile.fragment<thread = (i, j) -> (j), index = (i, j) -> (i), threads = 32, inverse = (t, r) -> (r, t)>} : memref<4x32xf32, #tile.scope<fragment>>
    %s = tile.alloc : memref<4xf32, #tile.scope<shared>>
    %g = tile.alloc : memref<32x4xf32, #tile.scope<fragment>>
    tile.clear %g : memref<32x4xf32, #tile.scope<fragment>>
    // expected-remark @below {{tile.copy between global memory and a fragment uses scalar accesses: the fragment layout gives no thread two contiguous elements of a row}}
    tile.copy %X[%c0, %c0] to %f : memref<?x?xf32> to memref<4x32xf32, #tile.scope<fragment>>
    // expected-remark @below {{tile.reduce staged through shared memory and reduced serially per target element: the target is not a fragment}}
    tile.reduce sum %f into %s {dim = 1 : i64, clear} : memref<4x32xf32, #tile.scope<fragment>> into memref<4xf32, #tile.scope<shared>>
    // expected-remark @below {{tile.parallel staged through shared memory, iterations distributed over the threads: a fragment access is not held by the thread running the iteration, or a store does not hit the driving fragment's register}}
    tile.parallel (%i, %j) in [4, 32] {
      %v = memref.load %f[%i, %j] : memref<4x32xf32, #tile.scope<fragment>>
      %w = memref.load %g[%j, %i] : memref<32x4xf32, #tile.scope<fragment>>
      %d = arith.subf %v, %w : f32
      memref.store %d, %f[%i, %j] : memref<4x32xf32, #tile.scope<fragment>>
    }
  }
  return
}
