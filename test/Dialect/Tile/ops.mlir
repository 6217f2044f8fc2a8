// RUN: tile-opt %s -split-input-file | FileCheck %s
// RUN: tile-opt %s -split-input-file -mlir-print-op-generic | tile-opt -split-input-file | FileCheck %s

// Custom assembly of every tile op and attribute; the second RUN line
// round-trips through the generic form.

// CHECK-LABEL: func.func @launch_1d
// CHECK-SAME: attributes {tile.kernel}
// CHECK: tile.launch blocks(%[[BX:.+]]) in (%{{.+}}) threads(128) {
// CHECK-NEXT: tile.alloc : memref<4xf32, #tile.scope<local>>
// CHECK-NEXT: }
func.func @launch_1d(%n: index) attributes {tile.kernel} {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %l = tile.alloc : memref<4xf32, #tile.scope<local>>
  }
  return
}

// -----

// CHECK-LABEL: func.func @launch_2d_raster
// CHECK: tile.launch blocks(%[[BX:.+]], %[[BY:.+]]) in (%{{.+}}, %{{.+}}) threads(256) attributes {raster = #tile.raster<panel = 8>}
// CHECK: arith.addi %[[BX]], %[[BY]] : index
// CHECK: tile.launch blocks(%{{.+}}, %{{.+}}) in (%{{.+}}, %{{.+}}) threads(64) attributes {raster = #tile.raster<panel = 4, order = column>}
func.func @launch_2d_raster(%gx: index, %gy: index) {
  tile.launch blocks(%bx, %by) in (%gx, %gy) threads(256) attributes {raster = #tile.raster<panel = 8>} {
    %s = arith.addi %bx, %by : index
  }
  tile.launch blocks(%bx, %by) in (%gx, %gy) threads(64) attributes {raster = #tile.raster<panel = 4, order = column>} {
  }
  return
}

// -----

// CHECK-LABEL: func.func @launch_3d
// CHECK: tile.launch blocks(%[[BX:.+]], %[[BY:.+]], %[[BZ:.+]]) in (%[[GX:.+]], %[[GY:.+]], %[[GZ:.+]]) threads(1024)
// CHECK-NEXT: arith.muli %[[BX]], %[[BZ]] : index
func.func @launch_3d(%gx: index, %gy: index, %gz: index) {
  tile.launch blocks(%bx, %by, %bz) in (%gx, %gy, %gz) threads(1024) {
    %p = arith.muli %bx, %bz : index
  }
  return
}

// -----

// CHECK-LABEL: func.func @alloc
// CHECK: tile.alloc : memref<128x32xf16, #tile.scope<shared>>
// CHECK: tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
// CHECK: tile.alloc : memref<8xi32, #tile.scope<local>>
// CHECK: tile.alloc {layout = #tile.swizzle<bits = 3, base = 4, shift = 3>} : memref<64x64xf16, #tile.scope<shared>>
// CHECK: tile.alloc {layout = #tile.fragment<thread = (d0, d1) -> ((d0 mod 8) * 4 + (d1 mod 8) floordiv 2), index = (d0, d1) -> ((d0 floordiv 8) * 4 + (d1 floordiv 8) * 2 + d1 mod 2), threads = 32>} : memref<16x16xf32, #tile.scope<fragment>>
// CHECK: tile.alloc {layout = #tile.fragment<thread = (d0) -> (d0), index = (d0) -> (0), threads = 32, replicate = 2>} : memref<32xf32, #tile.scope<fragment>>
func.func @alloc(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(32) {
    %a = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
    %b = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    %c = tile.alloc : memref<8xi32, #tile.scope<local>>
    %d = tile.alloc {layout = #tile.swizzle<bits = 3, base = 4, shift = 3>} : memref<64x64xf16, #tile.scope<shared>>
    %e = tile.alloc {layout = #tile.fragment<thread = (i, j) -> ((i mod 8) * 4 + (j mod 8) floordiv 2),
                                             index = (i, j) -> ((i floordiv 8) * 4 + (j floordiv 8) * 2 + j mod 2),
                                             threads = 32>} : memref<16x16xf32, #tile.scope<fragment>>
    %f = tile.alloc {layout = #tile.fragment<thread = (i) -> (i), index = (i) -> (0), threads = 32, replicate = 2>} : memref<32xf32, #tile.scope<fragment>>
  }
  return
}

// -----

// CHECK-LABEL: func.func @copy
// CHECK-SAME: (%[[A:[^:]+]]: memref<?x?xf16>, %[[C:[^:]+]]: memref<?x?xf16>, %[[M:[^:]+]]: index, %[[K:[^:]+]]: index)
// CHECK: %[[AS:.+]] = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
// CHECK: %[[AF:.+]] = tile.alloc : memref<64x32xf32, #tile.scope<fragment>>
// CHECK: %[[AL:.+]] = tile.alloc : memref<64x32xf16, #tile.scope<local>>
// CHECK: tile.copy %[[A]][%[[M]], %[[K]]] to %[[AS]] : memref<?x?xf16> to memref<64x32xf16, #tile.scope<shared>>
// CHECK: tile.copy %[[AS]] to %[[AF]] : memref<64x32xf16, #tile.scope<shared>> to memref<64x32xf32, #tile.scope<fragment>>
// CHECK: tile.copy %[[A]][%[[M]], %[[K]]] to %[[AL]] : memref<?x?xf16> to memref<64x32xf16, #tile.scope<local>>
// CHECK: tile.copy %[[AF]] to %[[C]][%[[M]], %[[K]]] : memref<64x32xf32, #tile.scope<fragment>> to memref<?x?xf16>
func.func @copy(%A: memref<?x?xf16>, %C: memref<?x?xf16>, %m: index, %k: index) {
  tile.launch blocks(%bx) in (%m) threads(128) {
    %As = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    %Af = tile.alloc : memref<64x32xf32, #tile.scope<fragment>>
    %Al = tile.alloc : memref<64x32xf16, #tile.scope<local>>
    tile.copy %A[%m, %k] to %As : memref<?x?xf16> to memref<64x32xf16, #tile.scope<shared>>
    tile.copy %As to %Af : memref<64x32xf16, #tile.scope<shared>> to memref<64x32xf32, #tile.scope<fragment>>
    tile.copy %A[%m, %k] to %Al : memref<?x?xf16> to memref<64x32xf16, #tile.scope<local>>
    tile.copy %Af to %C[%m, %k] : memref<64x32xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}

// -----

// A rank-reducing copy: Q[b, h, m:m+64, 0:128] of a [B, H, S, D] tensor and
// back; a strided view of a kernel parameter as a global side.
// CHECK-LABEL: func.func @copy_drop_dims
// CHECK: tile.copy %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] to %{{.+}} drop_dims [0, 1] : memref<?x?x?x?xf16> to memref<64x128xf16, #tile.scope<shared>>
// CHECK: tile.copy %{{.+}} to %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] drop_dims [0, 2] : memref<64x128xf32, #tile.scope<fragment>> to memref<?x?x?x?xf16>
// CHECK: tile.copy %{{.+}}[%{{.+}}, %{{.+}}] to %{{.+}} : memref<?x?xf16, strided<[?, 1], offset: ?>> to memref<64x128xf16, #tile.scope<shared>>
func.func @copy_drop_dims(%Q: memref<?x?x?x?xf16>, %b: index, %h: index, %m: index) {
  %c0 = arith.constant 0 : index
  tile.launch blocks(%bx) in (%m) threads(128) {
    %Qs = tile.alloc : memref<64x128xf16, #tile.scope<shared>>
    %Qf = tile.alloc : memref<64x128xf32, #tile.scope<fragment>>
    tile.copy %Q[%b, %h, %m, %c0] to %Qs drop_dims [0, 1] : memref<?x?x?x?xf16> to memref<64x128xf16, #tile.scope<shared>>
    tile.copy %Qf to %Q[%b, %m, %h, %c0] drop_dims [0, 2] : memref<64x128xf32, #tile.scope<fragment>> to memref<?x?x?x?xf16>
    %V = memref.subview %Q[%b, %h, 0, 0] [1, 1, %m, %m] [1, 1, 1, 1] : memref<?x?x?x?xf16> to memref<?x?xf16, strided<[?, 1], offset: ?>>
    tile.copy %V[%m, %c0] to %Qs : memref<?x?xf16, strided<[?, 1], offset: ?>> to memref<64x128xf16, #tile.scope<shared>>
  }
  return
}

// -----

// CHECK-LABEL: func.func @copy_int_convert
// CHECK: tile.copy %{{.+}}[%{{.+}}] to %{{.+}} : memref<?xi8> to memref<256xi32, #tile.scope<fragment>>
func.func @copy_int_convert(%X: memref<?xi8>, %i: index) {
  tile.launch blocks(%bx) in (%i) threads(128) {
    %f = tile.alloc : memref<256xi32, #tile.scope<fragment>>
    tile.copy %X[%i] to %f : memref<?xi8> to memref<256xi32, #tile.scope<fragment>>
  }
  return
}

// -----

// CHECK-LABEL: func.func @gemm
// CHECK: %[[AS:.+]] = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
// CHECK: %[[BS:.+]] = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
// CHECK: %[[BT:.+]] = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
// CHECK: %[[AT:.+]] = tile.alloc : memref<32x128xf16, #tile.scope<fragment>>
// CHECK: %[[CF:.+]] = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
// CHECK: tile.gemm %[[AS]], %[[BS]], %[[CF]] : memref<128x32xf16, #tile.scope<shared>>, memref<32x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
// CHECK: tile.gemm %[[AS]], %[[BT]], %[[CF]] {clear, transpose_b} : memref<128x32xf16, #tile.scope<shared>>, memref<128x32xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
// CHECK: tile.gemm %[[AT]], %[[BS]], %[[CF]] {transpose_a} : memref<32x128xf16, #tile.scope<fragment>>, memref<32x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
func.func @gemm(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %As = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %Bt = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
    %At = tile.alloc : memref<32x128xf16, #tile.scope<fragment>>
    %C = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    tile.gemm %As, %Bs, %C : memref<128x32xf16, #tile.scope<shared>>, memref<32x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    tile.gemm %As, %Bt, %C {transpose_b, clear} : memref<128x32xf16, #tile.scope<shared>>, memref<128x32xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    tile.gemm %At, %Bs, %C {transpose_a} : memref<32x128xf16, #tile.scope<fragment>>, memref<32x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
  }
  return
}

// -----

// Every supported gemm typing.
// CHECK-LABEL: func.func @gemm_types
// CHECK: tile.gemm {{.*}} : memref<64x32xf16, #tile.scope<shared>>, memref<32x64xf16, #tile.scope<shared>>, memref<64x64xf16, #tile.scope<fragment>>
// CHECK: tile.gemm {{.*}} : memref<64x32xbf16, #tile.scope<shared>>, memref<32x64xbf16, #tile.scope<shared>>, memref<64x64xf32, #tile.scope<fragment>>
// CHECK: tile.gemm {{.*}} : memref<64x32xf32, #tile.scope<shared>>, memref<32x64xf32, #tile.scope<shared>>, memref<64x64xf32, #tile.scope<fragment>>
// CHECK: tile.gemm {{.*}} : memref<64x32xf8E4M3FN, #tile.scope<shared>>, memref<32x64xf8E5M2, #tile.scope<shared>>, memref<64x64xf32, #tile.scope<fragment>>
// CHECK: tile.gemm {{.*}} : memref<64x32xi8, #tile.scope<shared>>, memref<32x64xi8, #tile.scope<shared>>, memref<64x64xi32, #tile.scope<fragment>>
func.func @gemm_types(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %a16 = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    %b16 = tile.alloc : memref<32x64xf16, #tile.scope<shared>>
    %c16 = tile.alloc : memref<64x64xf16, #tile.scope<fragment>>
    tile.gemm %a16, %b16, %c16 : memref<64x32xf16, #tile.scope<shared>>, memref<32x64xf16, #tile.scope<shared>>, memref<64x64xf16, #tile.scope<fragment>>
    %abf = tile.alloc : memref<64x32xbf16, #tile.scope<shared>>
    %bbf = tile.alloc : memref<32x64xbf16, #tile.scope<shared>>
    %c32 = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    tile.gemm %abf, %bbf, %c32 : memref<64x32xbf16, #tile.scope<shared>>, memref<32x64xbf16, #tile.scope<shared>>, memref<64x64xf32, #tile.scope<fragment>>
    %a32 = tile.alloc : memref<64x32xf32, #tile.scope<shared>>
    %b32 = tile.alloc : memref<32x64xf32, #tile.scope<shared>>
    tile.gemm %a32, %b32, %c32 : memref<64x32xf32, #tile.scope<shared>>, memref<32x64xf32, #tile.scope<shared>>, memref<64x64xf32, #tile.scope<fragment>>
    %a8 = tile.alloc : memref<64x32xf8E4M3FN, #tile.scope<shared>>
    %b8 = tile.alloc : memref<32x64xf8E5M2, #tile.scope<shared>>
    tile.gemm %a8, %b8, %c32 : memref<64x32xf8E4M3FN, #tile.scope<shared>>, memref<32x64xf8E5M2, #tile.scope<shared>>, memref<64x64xf32, #tile.scope<fragment>>
    %ai = tile.alloc : memref<64x32xi8, #tile.scope<shared>>
    %bi = tile.alloc : memref<32x64xi8, #tile.scope<shared>>
    %ci = tile.alloc : memref<64x64xi32, #tile.scope<fragment>>
    tile.gemm %ai, %bi, %ci : memref<64x32xi8, #tile.scope<shared>>, memref<32x64xi8, #tile.scope<shared>>, memref<64x64xi32, #tile.scope<fragment>>
  }
  return
}

// -----

// CHECK-LABEL: func.func @fill_clear
// CHECK: %[[CST:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[F:.+]] = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
// CHECK: %[[S:.+]] = tile.alloc : memref<64xi32, #tile.scope<shared>>
// CHECK: tile.fill %[[F]], %[[CST]] : memref<64x64xf32, #tile.scope<fragment>>, f32
// CHECK: tile.clear %[[F]] : memref<64x64xf32, #tile.scope<fragment>>
// CHECK: tile.clear %[[S]] : memref<64xi32, #tile.scope<shared>>
func.func @fill_clear(%n: index) {
  %one = arith.constant 1.0 : f32
  tile.launch blocks(%bx) in (%n) threads(128) {
    %F = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    %S = tile.alloc : memref<64xi32, #tile.scope<shared>>
    tile.fill %F, %one : memref<64x64xf32, #tile.scope<fragment>>, f32
    tile.clear %F : memref<64x64xf32, #tile.scope<fragment>>
    tile.clear %S : memref<64xi32, #tile.scope<shared>>
  }
  return
}

// -----

// CHECK-LABEL: func.func @reduce
// CHECK: %[[S:.+]] = tile.alloc : memref<64x128xf32, #tile.scope<fragment>>
// CHECK: %[[R:.+]] = tile.alloc : memref<64xf32, #tile.scope<fragment>>
// CHECK: %[[C:.+]] = tile.alloc : memref<128xf32, #tile.scope<fragment>>
// CHECK: %[[V:.+]] = tile.alloc : memref<128xf32, #tile.scope<shared>>
// CHECK: %[[Z:.+]] = tile.alloc : memref<f32, #tile.scope<fragment>>
// CHECK: tile.reduce max %[[S]] into %[[R]] {clear, dim = 1 : i64} : memref<64x128xf32, #tile.scope<fragment>> into memref<64xf32, #tile.scope<fragment>>
// CHECK: tile.reduce sum %[[S]] into %[[R]] {dim = 1 : i64} : memref<64x128xf32, #tile.scope<fragment>> into memref<64xf32, #tile.scope<fragment>>
// CHECK: tile.reduce min %[[S]] into %[[C]] {clear, dim = 0 : i64}
// CHECK: tile.reduce abssum %[[S]] into %[[C]] {dim = 0 : i64}
// CHECK: tile.reduce absmax %[[V]] into %[[Z]] {clear, dim = 0 : i64} : memref<128xf32, #tile.scope<shared>> into memref<f32, #tile.scope<fragment>>
func.func @reduce(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %S = tile.alloc : memref<64x128xf32, #tile.scope<fragment>>
    %R = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    %C = tile.alloc : memref<128xf32, #tile.scope<fragment>>
    %V = tile.alloc : memref<128xf32, #tile.scope<shared>>
    %Z = tile.alloc : memref<f32, #tile.scope<fragment>>
    tile.reduce max %S into %R {dim = 1 : i64, clear} : memref<64x128xf32, #tile.scope<fragment>> into memref<64xf32, #tile.scope<fragment>>
    tile.reduce sum %S into %R {dim = 1 : i64} : memref<64x128xf32, #tile.scope<fragment>> into memref<64xf32, #tile.scope<fragment>>
    tile.reduce min %S into %C {dim = 0 : i64, clear} : memref<64x128xf32, #tile.scope<fragment>> into memref<128xf32, #tile.scope<fragment>>
    tile.reduce abssum %S into %C {dim = 0 : i64} : memref<64x128xf32, #tile.scope<fragment>> into memref<128xf32, #tile.scope<fragment>>
    tile.reduce absmax %V into %Z {dim = 0 : i64, clear} : memref<128xf32, #tile.scope<shared>> into memref<f32, #tile.scope<fragment>>
  }
  return
}

// -----

// CHECK-LABEL: func.func @parallel
// CHECK: %[[F:.+]] = tile.alloc : memref<128x64xf32, #tile.scope<fragment>>
// CHECK: tile.parallel (%[[I:.+]], %[[J:.+]]) in [128, 64] {
// CHECK-NEXT: %[[X:.+]] = memref.load %[[F]][%[[I]], %[[J]]]
// CHECK-NEXT: %[[Y:.+]] = math.exp %[[X]] : f32
// CHECK-NEXT: memref.store %[[Y]], %[[F]][%[[I]], %[[J]]]
// CHECK-NEXT: }
// CHECK: tile.parallel (%{{.+}}) in [64] attributes {foo} {
func.func @parallel(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %F = tile.alloc : memref<128x64xf32, #tile.scope<fragment>>
    tile.parallel (%i, %j) in [128, 64] {
      %x = memref.load %F[%i, %j] : memref<128x64xf32, #tile.scope<fragment>>
      %y = math.exp %x : f32
      memref.store %y, %F[%i, %j] : memref<128x64xf32, #tile.scope<fragment>>
    }
    tile.parallel (%i) in [64] attributes {foo} {
    }
  }
  return
}

// -----

// CHECK-LABEL: func.func @pipelined
// CHECK: tile.pipelined %[[K:.+]] = %[[LB:.+]] to %[[UB:.+]] step %[[ST:.+]] stages(3) {
// CHECK-NEXT: arith.muli %[[K]], %[[ST]] : index
// CHECK-NEXT: }
// CHECK: tile.pipelined %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} stages(2) attributes {order = array<i64: 1, 0>, stage = array<i64: 0, 1>} {
func.func @pipelined(%lb: index, %ub: index, %st: index) {
  tile.launch blocks(%bx) in (%ub) threads(128) {
    tile.pipelined %k = %lb to %ub step %st stages(3) {
      %x = arith.muli %k, %st : index
    }
    tile.pipelined %k = %lb to %ub step %st stages(2) attributes {stage = array<i64: 0, 1>, order = array<i64: 1, 0>} {
      %x = arith.muli %k, %st : index
      %y = arith.addi %x, %k : index
    }
  }
  return
}

// -----

// CHECK-LABEL: func.func @atomics
// CHECK-SAME: (%[[OUT:[^:]+]]: memref<?x?xf32>, %[[CNT:[^:]+]]: memref<?xi32>
// CHECK: tile.atomic add %{{.+}}, %[[OUT]][%{{.+}}, %{{.+}}] : f32, memref<?x?xf32>
// CHECK: tile.atomic max %{{.+}}, %[[CNT]][%{{.+}}] : i32, memref<?xi32>
// CHECK: tile.atomic min %{{.+}}, %{{.+}}[%{{.+}}] : f32, memref<64xf32, #tile.scope<shared>>
// CHECK: tile.atomic_tile add %[[ACC:.+]] to %[[OUT]][%{{.+}}, %{{.+}}] : memref<64x64xf32, #tile.scope<fragment>> to memref<?x?xf32>
// CHECK: tile.atomic_tile max %[[ACC]] to %[[OUT]]
func.func @atomics(%out: memref<?x?xf32>, %cnt: memref<?xi32>, %i: index, %v: f32, %w: i32) {
  tile.launch blocks(%bx) in (%i) threads(128) {
    %S = tile.alloc : memref<64xf32, #tile.scope<shared>>
    %acc = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    tile.atomic add %v, %out[%i, %bx] : f32, memref<?x?xf32>
    tile.atomic max %w, %cnt[%bx] : i32, memref<?xi32>
    tile.atomic min %v, %S[%i] : f32, memref<64xf32, #tile.scope<shared>>
    tile.atomic_tile add %acc to %out[%i, %bx] : memref<64x64xf32, #tile.scope<fragment>> to memref<?x?xf32>
    tile.atomic_tile max %acc to %out[%i, %bx] : memref<64x64xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}

// -----

// Kernel-level attributes: tile.kernel, tile.dims (static dims may be named),
// tile.output, tile.name, scalar arguments.
// CHECK-LABEL: func.func @kernel_attrs
// CHECK-SAME: memref<?x64xf32> {tile.dims = ["M", "N"]}
// CHECK-SAME: memref<?xf32> {tile.dims = ["M"], tile.output}
// CHECK-SAME: f32 {tile.name = "alpha"}
// CHECK-SAME: attributes {tile.kernel}
func.func @kernel_attrs(%X: memref<?x64xf32> {tile.dims = ["M", "N"]},
                        %Y: memref<?xf32> {tile.dims = ["M"], tile.output},
                        %alpha: f32 {tile.name = "alpha"}, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %m = memref.dim %X, %c0 : memref<?x64xf32>
  tile.launch blocks(%bx) in (%m) threads(32) {
  }
  return
}
