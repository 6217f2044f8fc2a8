// RUN: tile-opt %s --tile-attach-metadata=target=cuda --tile-infer-layouts --convert-tile-to-nvgpu="chip=sm_80 remarks=true" -verify-diagnostics | FileCheck %s

// A tile.parallel that reads a fragment at a constant column (each row's
// first element, held by another thread): the register fast path does not
// apply (the element is not the running thread's), so the body goes
// through shared memory. The constant index once read as induction
// variable 4294967295 and crashed the lowering.
// CHECK-LABEL: gpu.func @broadcast_column_kernel
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: gpu.return
func.func @broadcast_column(%X: memref<?x?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(32) {
    %f = tile.alloc : memref<4x32xf32, #tile.scope<fragment>>
    %g = tile.alloc : memref<4x32xf32, #tile.scope<fragment>>
    tile.copy %X[%c0, %c0] to %f : memref<?x?xf32> to memref<4x32xf32, #tile.scope<fragment>>
    // expected-remark @below {{tile.parallel staged through shared memory, iterations distributed over the threads: a fragment access is not held by the thread running the iteration}}
    tile.parallel (%i, %j) in [4, 32] {
      %w = memref.load %f[%i, %c0] : memref<4x32xf32, #tile.scope<fragment>>
      memref.store %w, %g[%i, %j] : memref<4x32xf32, #tile.scope<fragment>>
    }
    tile.copy %g to %X[%c0, %c0] : memref<4x32xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}
