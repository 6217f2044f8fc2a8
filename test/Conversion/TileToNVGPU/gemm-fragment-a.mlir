// RUN: tile-opt %s -split-input-file --tile-attach-metadata=target=cuda --tile-infer-layouts --convert-tile-to-nvgpu=chip=sm_80 --canonicalize --cse | FileCheck %s
// RUN: tile-opt %tile_src_root/examples/flash_attention.mlir --tile-attach-metadata=target=cuda --tile-infer-layouts --convert-tile-to-nvgpu="chip=sm_80 remarks=true" --canonicalize --cse 2>&1 | FileCheck %s --check-prefix=FA

// examples/flash_attention.mlir: no SIMT gemm (no remark), no shared
// scratch (shared memory is Q's tile plus two stages of K and V tiles), the
// row max (or min, for a negative scale) and sum as quad shuffles (2 row
// registers x 2 shuffles x 3 reduces in each of the two versions of the
// pipelined loop).
// FA-NOT: remark
// FA: shared_bytes = 40960
// FA-COUNT-24: gpu.shuffle  xor
// FA-NOT: gpu.shuffle

// The FlashAttention pattern: S = Q K^T (mma.sync, ldmatrix), the row max
// of S by two quad shuffles (xor 1, 2) per row register, P = S - m as f16 in
// registers, O = P V with P read straight from its registers (the A
// operand of k-step 0 is registers 0-7 of P) and V through transposed
// ldmatrix. No shared scratch: the only views are the two buffers.
// CHECK-LABEL: gpu.func @attention_tile_kernel
// CHECK-COUNT-2: memref.view
// CHECK-NOT: memref.view
// CHECK: nvgpu.mma.sync
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32 : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32 : f32
// CHECK: %[[P0:.*]] = memref.load %[[PREGS:.*]][%c0] : memref<8xf16>
// CHECK: vector.from_elements %[[P0]], {{.*}} : vector<4x2xf16>
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK: nvgpu.mma.sync
// CHECK-NOT: scf.for
// CHECK: gpu.return
func.func @attention_tile(%X: memref<?x?xf16>, %Y: memref<?x?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(64) {
    %Qs = tile.alloc : memref<32x16xf16, #tile.scope<shared>>
    %Vs = tile.alloc : memref<16x16xf16, #tile.scope<shared>>
    %S = tile.alloc : memref<32x16xf32, #tile.scope<fragment>>
    %P = tile.alloc : memref<32x16xf16, #tile.scope<fragment>>
    %O = tile.alloc : memref<32x16xf32, #tile.scope<fragment>>
    %m = tile.alloc : memref<32xf32, #tile.scope<fragment>>
    %a = tile.alloc : memref<32xf32, #tile.scope<fragment>>
    tile.copy %X[%c0, %c0] to %Qs : memref<?x?xf16> to memref<32x16xf16, #tile.scope<shared>>
    tile.copy %X[%c0, %c0] to %Vs : memref<?x?xf16> to memref<16x16xf16, #tile.scope<shared>>
    tile.gemm %Qs, %Vs, %S {transpose_b, clear} : memref<32x16xf16, #tile.scope<shared>>, memref<16x16xf16, #tile.scope<shared>>, memref<32x16xf32, #tile.scope<fragment>>
    tile.reduce max %S into %m {dim = 1 : i64, clear} : memref<32x16xf32, #tile.scope<fragment>> into memref<32xf32, #tile.scope<fragment>>
    tile.parallel (%i) in [32] {
      %v = memref.load %m[%i] : memref<32xf32, #tile.scope<fragment>>
      memref.store %v, %a[%i] : memref<32xf32, #tile.scope<fragment>>
    }
    tile.parallel (%i, %j) in [32, 16] {
      %s = memref.load %S[%i, %j] : memref<32x16xf32, #tile.scope<fragment>>
      %mi = memref.load %a[%i] : memref<32xf32, #tile.scope<fragment>>
      %d = arith.subf %s, %mi : f32
      %p = arith.truncf %d : f32 to f16
      memref.store %p, %P[%i, %j] : memref<32x16xf16, #tile.scope<fragment>>
    }
    tile.gemm %P, %Vs, %O {clear} : memref<32x16xf16, #tile.scope<fragment>>, memref<16x16xf16, #tile.scope<shared>>, memref<32x16xf32, #tile.scope<fragment>>
    tile.copy %O to %Y[%c0, %c0] : memref<32x16xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}

// -----

// bf16: the A fragment's registers are packed in pairs into the b32
// operands of nvvm.mma.sync.
// CHECK-LABEL: gpu.func @bf16_kernel
// CHECK: vector.from_elements {{.*}} : vector<2xbf16>
// CHECK: llvm.bitcast {{.*}} : vector<2xbf16> to i32
// CHECK: nvvm.mma.sync
func.func @bf16(%X: memref<?x?xbf16>, %Y: memref<?x?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(32) {
    %Vs = tile.alloc : memref<16x8xbf16, #tile.scope<shared>>
    %P = tile.alloc : memref<16x16xbf16, #tile.scope<fragment>>
    %O = tile.alloc : memref<16x8xf32, #tile.scope<fragment>>
    tile.copy %X[%c0, %c0] to %Vs : memref<?x?xbf16> to memref<16x8xbf16, #tile.scope<shared>>
    tile.copy %X[%c0, %c0] to %P : memref<?x?xbf16> to memref<16x16xbf16, #tile.scope<fragment>>
    tile.gemm %P, %Vs, %O {clear} : memref<16x16xbf16, #tile.scope<fragment>>, memref<16x8xbf16, #tile.scope<shared>>, memref<16x8xf32, #tile.scope<fragment>>
    tile.copy %O to %Y[%c0, %c0] : memref<16x8xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}

