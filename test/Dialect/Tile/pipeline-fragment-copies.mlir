// RUN: tile-opt %s -split-input-file --tile-pipeline-fragment-copies="remarks=true" -verify-diagnostics | FileCheck %s

// stages(2): a second fragment, the copy of iteration 0 ahead of the loop,
// then pairs of iterations: the first half copies iteration
// min(2g + 1, n - 1) into %x1 before adding %x; the second half runs only
// when 2g + 1 < n (odd trip counts) and copies iteration min(2g + 2, n - 1)
// into %x before adding %x1. The look-ahead copies are not under an scf.if
// (past the end they copy the last iteration again, into a fragment nothing
// reads).
// CHECK-LABEL: func.func @reduce_two_stages
// CHECK: %[[X0:.*]] = tile.alloc : memref<4x256xf32, #tile.scope<fragment>>
// CHECK: %[[X1:.*]] = tile.alloc : memref<4x256xf32, #tile.scope<fragment>>
// CHECK: %[[N:.*]] = arith.ceildivui
// CHECK: scf.if
// CHECK: tile.copy %{{.*}} to %[[X0]] :
// CHECK: %[[LAST:.*]] = arith.subi %[[N]], %c1
// CHECK: %[[G:.*]] = arith.ceildivui %[[N]], %c2
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[G]]
// CHECK-NOT: scf.if
// CHECK: arith.minui %{{.*}}, %[[LAST]]
// CHECK-NOT: scf.if
// CHECK: tile.copy %{{.*}} to %[[X1]] :
// CHECK: tile.parallel
// CHECK: memref.load %[[X0]][
// CHECK: %[[ODD:.*]] = arith.cmpi ult, %{{.*}}, %[[N]]
// CHECK-NEXT: scf.if %[[ODD]] {
// CHECK-NOT: scf.if
// CHECK: arith.minui %{{.*}}, %[[LAST]]
// CHECK-NOT: scf.if
// CHECK: tile.copy %{{.*}} to %[[X0]] :
// CHECK: tile.parallel
// CHECK: memref.load %[[X1]][
// CHECK-NOT: tile.pipelined
func.func @reduce_two_stages(%X: memref<?x?xf32>, %Y: memref<?xf32>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %x = tile.alloc : memref<4x256xf32, #tile.scope<fragment>>
    %acc = tile.alloc : memref<4x256xf32, #tile.scope<fragment>>
    %sums = tile.alloc : memref<4xf32, #tile.scope<fragment>>
    tile.clear %acc : memref<4x256xf32, #tile.scope<fragment>>
    tile.pipelined %t = %c0 to %n step %c1 stages(2) {
      %col = arith.muli %t, %c256 : index
      tile.copy %X[%c0, %col] to %x : memref<?x?xf32> to memref<4x256xf32, #tile.scope<fragment>>
      tile.parallel (%i, %j) in [4, 256] {
        %a = memref.load %acc[%i, %j] : memref<4x256xf32, #tile.scope<fragment>>
        %v = memref.load %x[%i, %j] : memref<4x256xf32, #tile.scope<fragment>>
        %s = arith.addf %a, %v : f32
        memref.store %s, %acc[%i, %j] : memref<4x256xf32, #tile.scope<fragment>>
      }
    }
    tile.reduce sum %acc into %sums {dim = 1 : i64, clear} : memref<4x256xf32, #tile.scope<fragment>> into memref<4xf32, #tile.scope<fragment>>
    tile.copy %sums to %Y[%c0] : memref<4xf32, #tile.scope<fragment>> to memref<?xf32>
  }
  return
}

// -----

// stages(3): three fragments, two iterations copied ahead of the loop, the
// loop unrolled three times (the second and third iterations guarded).
// CHECK-LABEL: func.func @three_stages
// CHECK: %[[A0:.*]] = tile.alloc : memref<128xf32, #tile.scope<fragment>>
// CHECK: %[[A1:.*]] = tile.alloc : memref<128xf32, #tile.scope<fragment>>
// CHECK: %[[A2:.*]] = tile.alloc : memref<128xf32, #tile.scope<fragment>>
// CHECK: tile.copy %{{.*}} to %[[A0]] :
// CHECK: tile.copy %{{.*}} to %[[A1]] :
// CHECK: scf.for
// CHECK: tile.copy %{{.*}} to %[[A2]] :
// CHECK: memref.load %[[A0]][
// CHECK: scf.if
// CHECK: tile.copy %{{.*}} to %[[A0]] :
// CHECK: memref.load %[[A1]][
// CHECK: scf.if
// CHECK: tile.copy %{{.*}} to %[[A1]] :
// CHECK: memref.load %[[A2]][
func.func @three_stages(%X: memref<?xf32>, %lb: index, %ub: index) attributes {tile.kernel} {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %x = tile.alloc : memref<128xf32, #tile.scope<fragment>>
    %acc = tile.alloc : memref<128xf32, #tile.scope<fragment>>
    tile.pipelined %t = %lb to %ub step %c128 stages(3) {
      tile.copy %X[%t] to %x : memref<?xf32> to memref<128xf32, #tile.scope<fragment>>
      tile.parallel (%i) in [128] {
        %a = memref.load %acc[%i] : memref<128xf32, #tile.scope<fragment>>
        %v = memref.load %x[%i] : memref<128xf32, #tile.scope<fragment>>
        %s = arith.maximumf %a, %v : f32
        memref.store %s, %acc[%i] : memref<128xf32, #tile.scope<fragment>>
      }
    }
  }
  return
}

// -----

// stages(1): nothing to pipeline, no remark.
// CHECK-LABEL: func.func @one_stage
// CHECK: tile.pipelined
func.func @one_stage(%X: memref<?xf32>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %x = tile.alloc : memref<128xf32, #tile.scope<fragment>>
    tile.pipelined %t = %c0 to %n step %c1 stages(1) {
      tile.copy %X[%t] to %x : memref<?xf32> to memref<128xf32, #tile.scope<fragment>>
    }
  }
  return
}

// -----

// A loop that writes another kernel argument than the one it reads (a
// normalization's second pass): the runtime refuses overlapping arguments
// unless the written one is tile.inplace, so the copies run ahead.
// CHECK-LABEL: func.func @writes_global
// CHECK: scf.for
// CHECK-NOT: tile.pipelined
func.func @writes_global(%X: memref<?xf32>, %Y: memref<?xf32>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %x = tile.alloc : memref<128xf32, #tile.scope<fragment>>
    tile.pipelined %t = %c0 to %n step %c1 stages(2) {
      tile.copy %X[%t] to %x : memref<?xf32> to memref<128xf32, #tile.scope<fragment>>
      tile.copy %x to %Y[%t] : memref<128xf32, #tile.scope<fragment>> to memref<?xf32>
    }
  }
  return
}

// -----

// Not when the written argument is tile.inplace (it may be the very memory
// the copies read).
// CHECK-LABEL: func.func @stores_global
// CHECK: tile.pipelined
func.func @stores_global(%X: memref<?xf32>, %Y: memref<?xf32> {tile.inplace}, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %x = tile.alloc : memref<128xf32, #tile.scope<fragment>>
    // expected-remark @below {{the loop may write global memory that its copies read (memref.store writes no kernel argument, or a tile.inplace one)}}
    tile.pipelined %t = %c0 to %n step %c1 stages(2) {
      tile.copy %X[%t] to %x : memref<?xf32> to memref<128xf32, #tile.scope<fragment>>
      tile.parallel (%i) in [128] {
        %v = memref.load %x[%i] : memref<128xf32, #tile.scope<fragment>>
        memref.store %v, %Y[%i] : memref<?xf32>
      }
    }
  }
  return
}

// -----

// Nor when it writes the tensor it reads.
// CHECK-LABEL: func.func @writes_its_source
// CHECK: tile.pipelined
func.func @writes_its_source(%X: memref<?xf32>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %x = tile.alloc : memref<128xf32, #tile.scope<fragment>>
    // expected-remark @below {{tile.pipelined: global -> fragment copies not multi-buffered in registers: the copy into a fragment cannot run ahead: the loop writes the tensor it reads (or one it may alias)}}
    tile.pipelined %t = %c0 to %n step %c1 stages(2) {
      tile.copy %X[%t] to %x : memref<?xf32> to memref<128xf32, #tile.scope<fragment>>
      tile.copy %x to %X[%t] : memref<128xf32, #tile.scope<fragment>> to memref<?xf32>
    }
  }
  return
}

// -----

// CHECK-LABEL: func.func @read_after_loop
// CHECK: tile.pipelined
func.func @read_after_loop(%X: memref<?xf32>, %Y: memref<?xf32>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %x = tile.alloc : memref<128xf32, #tile.scope<fragment>>
    // expected-remark @below {{the copy into a fragment cannot run ahead: its target is used outside the loop}}
    tile.pipelined %t = %c0 to %n step %c1 stages(2) {
      tile.copy %X[%t] to %x : memref<?xf32> to memref<128xf32, #tile.scope<fragment>>
    }
    tile.copy %x to %Y[%c0] : memref<128xf32, #tile.scope<fragment>> to memref<?xf32>
  }
  return
}

// -----

// The target written in place after the copy (a sum of squares: x = x * x,
// then reduced) stays the iteration's own: pipelined, each fragment
// squared where it was loaded.
// CHECK-LABEL: func.func @target_also_written
// CHECK: %[[X0:.*]] = tile.alloc : memref<4x128xf32, #tile.scope<fragment>>
// CHECK: %[[X1:.*]] = tile.alloc : memref<4x128xf32, #tile.scope<fragment>>
// CHECK: scf.for
// CHECK: tile.copy %{{.*}} to %[[X1]] :
// CHECK: memref.store %{{.*}}, %[[X0]][
// CHECK: tile.reduce sum %[[X0]]
// CHECK: tile.copy %{{.*}} to %[[X0]] :
// CHECK: memref.store %{{.*}}, %[[X1]][
// CHECK: tile.reduce sum %[[X1]]
// CHECK-NOT: tile.pipelined
func.func @target_also_written(%X: memref<?x?xf32>, %Y: memref<?xf32>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %x = tile.alloc : memref<4x128xf32, #tile.scope<fragment>>
    %s = tile.alloc : memref<4xf32, #tile.scope<fragment>>
    tile.clear %s : memref<4xf32, #tile.scope<fragment>>
    tile.pipelined %t = %c0 to %n step %c1 stages(2) {
      %col = arith.muli %t, %c128 : index
      tile.copy %X[%c0, %col] to %x : memref<?x?xf32> to memref<4x128xf32, #tile.scope<fragment>>
      tile.parallel (%i, %j) in [4, 128] {
        %v = memref.load %x[%i, %j] : memref<4x128xf32, #tile.scope<fragment>>
        %w = arith.mulf %v, %v : f32
        memref.store %w, %x[%i, %j] : memref<4x128xf32, #tile.scope<fragment>>
      }
      tile.reduce sum %x into %s {dim = 1 : i64} : memref<4x128xf32, #tile.scope<fragment>> into memref<4xf32, #tile.scope<fragment>>
    }
    tile.copy %s to %Y[%c0] : memref<4xf32, #tile.scope<fragment>> to memref<?xf32>
  }
  return
}

// -----

// CHECK-LABEL: func.func @read_before_copy
// CHECK: tile.pipelined
func.func @read_before_copy(%X: memref<?xf32>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %x = tile.alloc : memref<128xf32, #tile.scope<fragment>>
    %acc = tile.alloc : memref<128xf32, #tile.scope<fragment>>
    // expected-remark @below {{its target is used before the copy in the iteration}}
    tile.pipelined %t = %c0 to %n step %c1 stages(2) {
      tile.copy %x to %acc : memref<128xf32, #tile.scope<fragment>> to memref<128xf32, #tile.scope<fragment>>
      tile.copy %X[%t] to %x : memref<?xf32> to memref<128xf32, #tile.scope<fragment>>
    }
  }
  return
}

// -----

// The copy's column comes from a value loaded in the iteration.
// CHECK-LABEL: func.func @index_from_memory
// CHECK: tile.pipelined
func.func @index_from_memory(%X: memref<?xf32>, %I: memref<?xindex>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %x = tile.alloc : memref<128xf32, #tile.scope<fragment>>
    %acc = tile.alloc : memref<128xf32, #tile.scope<fragment>>
    // expected-remark @below {{its indices are computed in the loop by an op with side effects}}
    tile.pipelined %t = %c0 to %n step %c1 stages(2) {
      %col = memref.load %I[%t] : memref<?xindex>
      tile.copy %X[%col] to %x : memref<?xf32> to memref<128xf32, #tile.scope<fragment>>
      tile.copy %x to %acc : memref<128xf32, #tile.scope<fragment>> to memref<128xf32, #tile.scope<fragment>>
    }
  }
  return
}

// -----

// Global -> shared producers are the cp.async pipeline's.
// CHECK-LABEL: func.func @shared_producer
// CHECK: tile.pipelined
func.func @shared_producer(%X: memref<?xf32>, %Z: memref<?xf32>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %s = tile.alloc : memref<128xf32, #tile.scope<shared>>
    %x = tile.alloc : memref<128xf32, #tile.scope<fragment>>
    %acc = tile.alloc : memref<128xf32, #tile.scope<fragment>>
    // expected-remark @below {{the loop has global -> shared copies (the cp.async software pipeline's producers)}}
    tile.pipelined %t = %c0 to %n step %c1 stages(2) {
      tile.copy %X[%t] to %s : memref<?xf32> to memref<128xf32, #tile.scope<shared>>
      tile.copy %Z[%t] to %x : memref<?xf32> to memref<128xf32, #tile.scope<fragment>>
      tile.copy %s to %acc : memref<128xf32, #tile.scope<shared>> to memref<128xf32, #tile.scope<fragment>>
    }
  }
  return
}

// -----

// Nothing to multi-buffer in registers (the loop's stages are the cp.async
// pipeline's business): unchanged, no remark.
// CHECK-LABEL: func.func @no_fragment_copy
// CHECK: tile.pipelined
func.func @no_fragment_copy(%X: memref<?xf32>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %s = tile.alloc : memref<128xf32, #tile.scope<shared>>
    %acc = tile.alloc : memref<128xf32, #tile.scope<fragment>>
    tile.pipelined %t = %c0 to %n step %c1 stages(2) {
      tile.copy %X[%t] to %s : memref<?xf32> to memref<128xf32, #tile.scope<shared>>
      tile.copy %s to %acc : memref<128xf32, #tile.scope<shared>> to memref<128xf32, #tile.scope<fragment>>
    }
  }
  return
}

// -----

// CHECK-LABEL: func.func @nested_copy
// CHECK: tile.pipelined
func.func @nested_copy(%X: memref<?xf32>, %n: index, %c: i1) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %x = tile.alloc : memref<128xf32, #tile.scope<fragment>>
    // expected-remark @below {{the copy into a fragment cannot run ahead: it is nested in scf.if}}
    tile.pipelined %t = %c0 to %n step %c1 stages(2) {
      scf.if %c {
        tile.copy %X[%t] to %x : memref<?xf32> to memref<128xf32, #tile.scope<fragment>>
      }
    }
  }
  return
}

// -----

// CHECK-LABEL: func.func @explicit_stages
// CHECK: tile.pipelined
func.func @explicit_stages(%X: memref<?xf32>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %x = tile.alloc : memref<128xf32, #tile.scope<fragment>>
    %acc = tile.alloc : memref<128xf32, #tile.scope<fragment>>
    // expected-remark @below {{the loop has explicit 'stage' / 'order' attributes}}
    tile.pipelined %t = %c0 to %n step %c1 stages(2) attributes {stage = array<i64: 0, 1>} {
      tile.copy %X[%t] to %x : memref<?xf32> to memref<128xf32, #tile.scope<fragment>>
      tile.copy %x to %acc : memref<128xf32, #tile.scope<fragment>> to memref<128xf32, #tile.scope<fragment>>
    }
  }
  return
}
