// RUN: tile-opt %s -split-input-file -convert-tile-to-scf | FileCheck %s

// A global->shared copy reads in bounds only and pads with zero.
// CHECK-LABEL: func.func @copy_global_to_shared
func.func @copy_global_to_shared(%A: memref<?x?xf16>, %i: index, %j: index) {
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %s = tile.alloc : memref<16x8xf16, #tile.scope<shared>>
    tile.copy %A[%i, %j] to %s : memref<?x?xf16> to memref<16x8xf16, #tile.scope<shared>>
  }
  return
}
// CHECK:      %[[S:.+]] = tile.alloc
// CHECK:      scf.for %[[I:.+]] =
// CHECK:        scf.for %[[J:.+]] =
// CHECK:          %[[ROW:.+]] = arith.andi
// CHECK:          %[[COL:.+]] = arith.andi
// CHECK:          %[[OK:.+]] = arith.andi %[[ROW]], %[[COL]] : i1
// CHECK:          %[[V:.+]] = scf.if %[[OK]] -> (f16) {
// CHECK:            memref.load %{{.+}}[%{{.+}}, %{{.+}}] : memref<?x?xf16>
// CHECK:          } else {
// CHECK:            %[[Z:.+]] = arith.constant 0.000000e+00 : f16
// CHECK:            scf.yield %[[Z]]
// CHECK:          memref.store %[[V]], %[[S]][%[[I]], %[[J]]]
// CHECK-NOT:  tile.copy

// -----

// A rank-reducing copy indexes the dropped (unit) dims at their start and
// bounds-checks them like the others.
// CHECK-LABEL: func.func @copy_drop_dims
// CHECK-SAME: (%[[Q:[^:]+]]: memref<?x?x?x?xf16>, %[[B:[^:]+]]: index, %[[H:[^:]+]]: index, %[[M:[^:]+]]: index)
// CHECK:      %[[S:.+]] = tile.alloc
// CHECK:      scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step
// CHECK:        scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step
// CHECK:          %[[G0:.+]] = arith.addi %[[B]], %{{.+}}
// CHECK:          %[[G1:.+]] = arith.addi %[[H]], %{{.+}}
// CHECK:          %[[G2:.+]] = arith.addi %[[M]], %[[I]]
// CHECK:          %[[G3:.+]] = arith.addi %{{.+}}, %[[J]]
// CHECK:          memref.load %[[Q]][%[[G0]], %[[G1]], %[[G2]], %[[G3]]] : memref<?x?x?x?xf16>
// CHECK:          memref.store %{{.+}}, %[[S]][%[[I]], %[[J]]]
// CHECK:      scf.for %[[I2:.+]] = %{{.+}} to %{{.+}} step
// CHECK:        scf.for %[[J2:.+]] = %{{.+}} to %{{.+}} step
// CHECK:          %[[G4:.+]] = arith.addi %[[B]], %{{.+}}
// CHECK:          %[[G5:.+]] = arith.addi %[[M]], %[[I2]]
// CHECK:          %[[G6:.+]] = arith.addi %[[H]], %{{.+}}
// CHECK:          memref.store %{{.+}}, %[[Q]][%[[G4]], %[[G5]], %[[G6]], %{{.+}}] : memref<?x?x?x?xf16>
// CHECK-NOT:  tile.copy
func.func @copy_drop_dims(%Q: memref<?x?x?x?xf16>, %b: index, %h: index, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %s = tile.alloc : memref<16x8xf16, #tile.scope<shared>>
    tile.copy %Q[%b, %h, %m, %c0] to %s drop_dims [0, 1] : memref<?x?x?x?xf16> to memref<16x8xf16, #tile.scope<shared>>
    tile.copy %s to %Q[%b, %m, %h, %c0] drop_dims [0, 2] : memref<16x8xf16, #tile.scope<shared>> to memref<?x?x?x?xf16>
  }
  return
}

// -----

// A fragment->global copy converts and drops out-of-bounds writes.
// CHECK-LABEL: func.func @copy_fragment_to_global
func.func @copy_fragment_to_global(%C: memref<?xf16>, %i: index) {
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(32) {
    %f = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    tile.copy %f to %C[%i] : memref<64xf32, #tile.scope<fragment>> to memref<?xf16>
  }
  return
}
// CHECK:      scf.for
// CHECK:        %[[V:.+]] = memref.load
// CHECK:        %[[T:.+]] = arith.truncf %[[V]] : f32 to f16
// CHECK:        scf.if %{{.+}} {
// CHECK:          memref.store %[[T]], %{{.+}}[%{{.+}}] : memref<?xf16>

// -----

// gemm with clear and transposed B: zero C, then i-k-j loops in f32.
// CHECK-LABEL: func.func @gemm_transpose_b
func.func @gemm_transpose_b() {
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %a = tile.alloc : memref<16x32xbf16, #tile.scope<shared>>
    %b = tile.alloc : memref<8x32xbf16, #tile.scope<shared>>
    %c = tile.alloc : memref<16x8xf32, #tile.scope<fragment>>
    tile.gemm %a, %b, %c {transpose_b, clear} : memref<16x32xbf16, #tile.scope<shared>>, memref<8x32xbf16, #tile.scope<shared>>, memref<16x8xf32, #tile.scope<fragment>>
  }
  return
}
// CHECK:      %[[A:.+]] = tile.alloc : memref<16x32xbf16
// CHECK:      %[[B:.+]] = tile.alloc : memref<8x32xbf16
// CHECK:      %[[C:.+]] = tile.alloc : memref<16x8xf32
// CHECK:      memref.store %{{.+}}, %[[C]]
// CHECK:      scf.for %[[I:.+]] =
// CHECK:        scf.for %[[K:.+]] =
// CHECK:          %[[AV:.+]] = memref.load %[[A]][%[[I]], %[[K]]]
// CHECK:          %[[AF:.+]] = arith.extf %[[AV]] : bf16 to f32
// CHECK:          scf.for %[[J:.+]] =
// CHECK:            %[[BV:.+]] = memref.load %[[B]][%[[J]], %[[K]]]
// CHECK:            %[[BF:.+]] = arith.extf %[[BV]] : bf16 to f32
// CHECK:            %[[P:.+]] = arith.mulf %[[AF]], %[[BF]]
// CHECK:            arith.addf %{{.+}}, %[[P]]

// -----

// reduce absmax without clear combines with the target's values.
// CHECK-LABEL: func.func @reduce_absmax_accumulate
func.func @reduce_absmax_accumulate() {
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(32) {
    %s = tile.alloc : memref<4x8xf32, #tile.scope<fragment>>
    %d = tile.alloc : memref<4xf32, #tile.scope<fragment>>
    tile.reduce absmax %s into %d {dim = 1 : i64} : memref<4x8xf32, #tile.scope<fragment>> into memref<4xf32, #tile.scope<fragment>>
  }
  return
}
// CHECK:      scf.for %[[I:.+]] =
// CHECK:        %[[INIT:.+]] = memref.load %{{.+}}[%[[I]]] : memref<4xf32
// CHECK:        %[[R:.+]] = scf.for %{{.+}} = {{.+}} iter_args(%[[ACC:.+]] = %[[INIT]])
// CHECK:          %[[ABS:.+]] = math.absf
// CHECK:          %[[M:.+]] = arith.maximumf %[[ACC]], %[[ABS]]
// CHECK:          scf.yield %[[M]]
// CHECK:        memref.store %[[R]]

// -----

// parallel and pipelined become scf.for nests with their bodies inlined.
// CHECK-LABEL: func.func @parallel_in_pipelined
func.func @parallel_in_pipelined(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(32) {
    %f = tile.alloc : memref<4x8xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %n step %c1 stages(2) {
      tile.parallel (%i, %j) in [4, 8] {
        %v = memref.load %f[%i, %j] : memref<4x8xf32, #tile.scope<fragment>>
        %w = arith.addf %v, %v : f32
        memref.store %w, %f[%i, %j] : memref<4x8xf32, #tile.scope<fragment>>
      }
    }
  }
  return
}
// CHECK:      scf.for %{{.+}} = %{{.+}} to %{{.+}} step
// CHECK:        scf.for %[[I:.+]] =
// CHECK:          scf.for %[[J:.+]] =
// CHECK:            %[[V:.+]] = memref.load %{{.+}}[%[[I]], %[[J]]]
// CHECK:            arith.addf %[[V]], %[[V]]
// CHECK-NOT:  tile.parallel
// CHECK-NOT:  tile.pipelined

// -----

// Atomics become memref.atomic_rmw; the tile form guards its bounds.
// CHECK-LABEL: func.func @atomics
func.func @atomics(%out: memref<?x?xf32>, %v: f32, %i: index) {
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(32) {
    %f = tile.alloc : memref<2x2xf32, #tile.scope<fragment>>
    tile.atomic max %v, %out[%i, %i] : f32, memref<?x?xf32>
    tile.atomic_tile add %f to %out[%i, %i] : memref<2x2xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}
// CHECK:      memref.atomic_rmw maximumf %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}] : (f32, memref<?x?xf32>) -> f32
// CHECK:      scf.for
// CHECK:        scf.for
// CHECK:          scf.if
// CHECK:            memref.atomic_rmw addf
