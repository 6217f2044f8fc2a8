// RUN: tile-opt %s -split-input-file --tile-infer-layouts --convert-tile-to-nvgpu="chip=sm_80" --canonicalize --cse | FileCheck %s
// RUN: tile-opt %s -split-input-file --tile-infer-layouts --convert-tile-to-nvgpu="chip=sm_80 remarks=true" -verify-diagnostics -o /dev/null

// Global <-> fragment copies of a fragment in 16-byte runs per thread
// (tile-infer-layouts' chunked linear layout): one vector<4xf32> load or
// store per run when the base, the row pitch and the start column allow
// it (checked once) and the run is in bounds, else predicated scalar
// accesses. Every run is loaded before any is stored into the fragment.
// CHECK-LABEL: gpu.func @copy_vector_kernel
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: scf.if %{{.*}} -> (vector<4xf32>)
// CHECK: vector.load %{{.*}} : memref<?x?xf32>, vector<4xf32>
// CHECK: } else {
// CHECK: memref.load %{{.*}} : memref<?x?xf32>
// CHECK: scf.if %{{.*}} -> (vector<4xf32>)
// CHECK: vector.load %{{.*}} : memref<?x?xf32>, vector<4xf32>
// CHECK: memref.store
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

// A row reduction of such a fragment: a warp per row (tile-infer-layouts),
// the statistic in its warp's lanes, so the thread's partials stay in
// registers, then a butterfly over the warp's 32 lanes (5 xor shuffles),
// and no shared memory.
// CHECK-LABEL: gpu.func @row_sums_kernel
// CHECK: memref.alloca() : memref<1xf32>
// CHECK: memref.alloca() : memref<32xf32>
// CHECK-NOT: memref.alloca
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
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

// A row split over 8 lanes of a warp (4 rows of 8 chunks on 32 threads):
// the statistic lives in those 8 lanes, one register each: 3 xor
// shuffles, no select on the thread's row.
// CHECK-LABEL: gpu.func @split_rows_kernel
// CHECK: memref.alloca() : memref<1xf32>
// CHECK: memref.alloca() : memref<4xf32>
// CHECK-NOT: memref.alloca
// CHECK-COUNT-3: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.return
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
