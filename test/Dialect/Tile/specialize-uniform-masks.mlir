// RUN: tile-opt %s -split-input-file -tile-specialize-uniform-masks | FileCheck %s

// The padding and causal mask of an attention score tile, filled before
// every key tile's gemm: interior tiles (the last column index below S and
// at or before the first row) run an unmasked copy.
// CHECK-LABEL: func.func @causal_mask
// CHECK: tile.pipelined
// CHECK: %[[LASTCOL:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: %[[PAD:.*]] = arith.cmpi slt, %[[LASTCOL]], %{{.*}} : index
// CHECK: %[[CAUSAL:.*]] = arith.cmpi sle, %{{.*}}, %{{.*}} : index
// CHECK: %[[ALL:.*]] = arith.andi %[[PAD]], %[[CAUSAL]] : i1
// CHECK: scf.if %[[ALL]] {
// CHECK-NEXT: tile.parallel (%{{.*}}, %{{.*}}) in [64, 32] {
// CHECK-NEXT: memref.store %cst, %{{.*}}
// CHECK-NEXT: }
// CHECK: } else {
// CHECK: arith.select
func.func @causal_mask(%S: index, %q0: index, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  tile.launch blocks(%b) in (%c1) threads(128) {
    %acc = tile.alloc : memref<64x32xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %n step %c1 stages(2) {
      %k0 = arith.muli %k, %c32 : index
      tile.parallel (%i, %j) in [64, 32] {
        %kj = arith.addi %k0, %j : index
        %in = arith.cmpi slt, %kj, %S : index
        %qi = arith.addi %q0, %i : index
        %past = arith.cmpi sle, %kj, %qi : index
        %vis = arith.andi %in, %past : i1
        %v = arith.select %vis, %zero, %ninf : f32
        memref.store %v, %acc[%i, %j] : memref<64x32xf32, #tile.scope<fragment>>
      }
    }
  }
  return
}

// -----

// A causal flag from outside and a negated comparison (xori with true):
// "not (kj > qi)" holds everywhere when the last column is at or before
// the first row; the flag's "false" makes the mask vanish as well.
// CHECK-LABEL: func.func @flag_and_negation
// CHECK: scf.if
// CHECK: tile.parallel
// CHECK-NOT: arith.select
// CHECK: } else {
// CHECK: arith.select
func.func @flag_and_negation(%q0: index, %n: index, %causal: i1) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %true = arith.constant true
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  tile.launch blocks(%b) in (%c1) threads(128) {
    %acc = tile.alloc : memref<64x32xf32, #tile.scope<fragment>>
    scf.for %k = %c0 to %n step %c1 {
      %k0 = arith.muli %k, %c32 : index
      tile.parallel (%i, %j) in [64, 32] {
        %kj = arith.addi %k0, %j : index
        %qi = arith.addi %q0, %i : index
        %future = arith.cmpi ugt, %kj, %qi : index
        %hidden = arith.andi %causal, %future : i1
        %shown = arith.xori %hidden, %true : i1
        %v = arith.select %shown, %zero, %ninf : f32
        memref.store %v, %acc[%i, %j] : memref<64x32xf32, #tile.scope<fragment>>
      }
    }
  }
  return
}

// -----

// Left alone: an unsigned comparison of a difference (it could wrap), a
// parallel outside any loop, and one already under an scf.if.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: scf.if
// CHECK: tile.pipelined
// CHECK: tile.parallel
// CHECK: arith.subi
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: tile.parallel
// CHECK-NOT: } else {
func.func @left_alone(%S: index, %n: index, %guard: i1) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  tile.launch blocks(%b) in (%c1) threads(128) {
    %acc = tile.alloc : memref<64x32xf32, #tile.scope<fragment>>
    tile.parallel (%i, %j) in [64, 32] {
      %in = arith.cmpi ult, %j, %S : index
      %v = arith.select %in, %zero, %ninf : f32
      memref.store %v, %acc[%i, %j] : memref<64x32xf32, #tile.scope<fragment>>
    }
    tile.pipelined %k = %c0 to %n step %c1 stages(2) {
      %k0 = arith.muli %k, %c32 : index
      tile.parallel (%i, %j) in [64, 32] {
        %kj = arith.addi %k0, %j : index
        %d = arith.subi %kj, %c5 : index
        %in = arith.cmpi ult, %d, %S : index
        %v = arith.select %in, %zero, %ninf : f32
        memref.store %v, %acc[%i, %j] : memref<64x32xf32, #tile.scope<fragment>>
      }
      scf.if %guard {
        tile.parallel (%i, %j) in [64, 32] {
          %kj = arith.addi %k0, %j : index
          %in = arith.cmpi slt, %kj, %S : index
          %v = arith.select %in, %zero, %ninf : f32
          memref.store %v, %acc[%i, %j] : memref<64x32xf32, #tile.scope<fragment>>
        }
      }
    }
  }
  return
}
