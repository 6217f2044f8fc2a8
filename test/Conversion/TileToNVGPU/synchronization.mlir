// RUN: tile-opt %s -split-input-file --tile-infer-layouts --convert-tile-to-nvgpu --canonicalize --cse | FileCheck %s

// The block-synchronization rule (docs/dialect.md, "Synchronization"): an
// op that writes shared memory is bracketed by barriers; ops that only read
// it are not. A histogram: clear the shared bins, count with shared atomics
// in a parallel body, add the bins into the global histogram. The atomics
// are bracketed, so atomic_tile reads the bins only once every thread's
// atomics are done.
// CHECK-LABEL: gpu.func @histogram_kernel
// CHECK: gpu.barrier
// CHECK-NEXT: scf.for
// CHECK: memref.store %{{.*}}, %{{.*}} : memref<256xi32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK-COUNT-8: memref.atomic_rmw addi %{{.*}} : (i32, memref<256xi32, #gpu.address_space<workgroup>>) -> i32
// CHECK-NOT: memref.atomic_rmw
// CHECK: gpu.barrier
// CHECK-NEXT: scf.for
// CHECK: memref.load %{{.*}} : memref<256xi32, #gpu.address_space<workgroup>>
// CHECK: memref.atomic_rmw addi %{{.*}} : (i32, memref<256xi32>) -> i32
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @histogram(%X: memref<?xi32>, %H: memref<256xi32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1024 = arith.constant 1024 : index
  %N = memref.dim %X, %c0 : memref<?xi32>
  %g = arith.ceildivui %N, %c1024 : index
  tile.launch blocks(%b) in (%g) threads(128) {
    %bins = tile.alloc : memref<256xi32, #tile.scope<shared>>
    %x = tile.alloc : memref<1024xi32, #tile.scope<fragment>>
    tile.clear %bins : memref<256xi32, #tile.scope<shared>>
    %start = arith.muli %b, %c1024 : index
    tile.copy %X[%start] to %x : memref<?xi32> to memref<1024xi32, #tile.scope<fragment>>
    tile.parallel (%i) in [1024] {
      %v = memref.load %x[%i] : memref<1024xi32, #tile.scope<fragment>>
      %bin = arith.index_cast %v : i32 to index
      %one = arith.constant 1 : i32
      tile.atomic add %one, %bins[%bin] : i32, memref<256xi32, #tile.scope<shared>>
    }
    tile.atomic_tile add %bins to %H[%c0] : memref<256xi32, #tile.scope<shared>> to memref<256xi32>
  }
  return
}

// -----

// Block-level writes of shared memory (a tile.atomic by thread 0, a scalar
// store by every thread) are bracketed too; two writers in a row share the
// barrier between them. Reading the shared buffer (a copy into a fragment)
// adds none.
// CHECK-LABEL: gpu.func @block_level_kernel
// CHECK: gpu.barrier
// CHECK-NEXT: memref.store %{{.*}} : memref<4xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: gpu.barrier
// CHECK: scf.if
// CHECK-NEXT: memref.atomic_rmw addf %{{.*}} : (f32, memref<4xf32, #gpu.address_space<workgroup>>) -> f32
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: memref.load %{{.*}} : memref<4xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @block_level(%Y: memref<4xf32>, %v: f32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%b) in (%c1) threads(32) {
    %s = tile.alloc : memref<4xf32, #tile.scope<shared>>
    %f = tile.alloc : memref<4xf32, #tile.scope<fragment>>
    memref.store %v, %s[%c0] : memref<4xf32, #tile.scope<shared>>
    tile.atomic add %v, %s[%c0] : f32, memref<4xf32, #tile.scope<shared>>
    tile.copy %s to %f : memref<4xf32, #tile.scope<shared>> to memref<4xf32, #tile.scope<fragment>>
    tile.copy %f to %Y[%c0] : memref<4xf32, #tile.scope<fragment>> to memref<4xf32>
  }
  return
}

// -----

// A parallel body that only reads shared memory and writes registers needs
// no barrier.
// CHECK-LABEL: gpu.func @read_only_kernel
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @read_only(%X: memref<64xf32>, %Y: memref<64xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%b) in (%c1) threads(64) {
    %f = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    tile.copy %X[%c0] to %f : memref<64xf32> to memref<64xf32, #tile.scope<fragment>>
    tile.parallel (%i) in [64] {
      %v = memref.load %f[%i] : memref<64xf32, #tile.scope<fragment>>
      %w = arith.addf %v, %v : f32
      memref.store %w, %f[%i] : memref<64xf32, #tile.scope<fragment>>
    }
    tile.copy %f to %Y[%c0] : memref<64xf32, #tile.scope<fragment>> to memref<64xf32>
  }
  return
}
