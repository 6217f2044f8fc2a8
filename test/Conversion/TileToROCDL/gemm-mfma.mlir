// RUN: tile-opt %s -split-input-file --tile-attach-metadata=target=hip --tile-infer-layouts=matrix-core=mfma --convert-tile-to-amdgpu --canonicalize --cse | FileCheck %s

// f16 x f16 -> f32, A row-major (k contiguous: one 8-byte LDS read per lane
// and tile), B row-major (4 scalar LDS reads), one amdgpu.mfma 16x16x16 per
// (A tile, B tile) pair: 2 waves of 64, each 64x32 of C = 4x2 tiles.
// CHECK-LABEL: gpu.func @gemm_f16_kernel
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK: memref.alloca() : memref<32xf32>
// CHECK: scf.for
// CHECK: vector.load %{{.*}} {alignment = 8 : i64} : memref<2048xf16, #gpu.address_space<workgroup>>, vector<4xf16>
// CHECK: memref.load %{{.*}} : memref<2048xf16, #gpu.address_space<workgroup>>
// CHECK: vector.from_elements %{{.*}} : vector<4xf16>
// CHECK: amdgpu.mfma 16x16x16 %{{.*}} * %{{.*}} + %{{.*}} blgp =  none : vector<4xf16>, vector<4xf16>, vector<4xf32>
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.return
func.func @gemm_f16(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %As = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x64xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    tile.copy %A[%c0, %c0] to %As : memref<?x?xf16> to memref<64x32xf16, #tile.scope<shared>>
    tile.copy %B[%c0, %c0] to %Bs : memref<?x?xf16> to memref<32x64xf16, #tile.scope<shared>>
    tile.gemm %As, %Bs, %Cf {clear} : memref<64x32xf16, #tile.scope<shared>>, memref<32x64xf16, #tile.scope<shared>>, memref<64x64xf32, #tile.scope<fragment>>
    tile.copy %Cf to %C[%c0, %c0] : memref<64x64xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}

// -----

// bf16 with B transposed (N x K): both operands are 8-byte LDS reads.
// CHECK-LABEL: gpu.func @gemm_bf16_kernel
// CHECK: scf.for
// CHECK-COUNT-2: vector.load %{{.*}} {alignment = 8 : i64} : memref<1024xbf16, #gpu.address_space<workgroup>>, vector<4xbf16>
// CHECK: amdgpu.mfma 16x16x16 %{{.*}} * %{{.*}} + %{{.*}} blgp =  none : vector<4xbf16>, vector<4xbf16>, vector<4xf32>
// CHECK: gpu.return
func.func @gemm_bf16(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(64) {
    %As = tile.alloc : memref<32x32xbf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x32xbf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<32x32xf32, #tile.scope<fragment>>
    tile.copy %A[%c0, %c0] to %As : memref<?x?xbf16> to memref<32x32xbf16, #tile.scope<shared>>
    tile.copy %B[%c0, %c0] to %Bs : memref<?x?xbf16> to memref<32x32xbf16, #tile.scope<shared>>
    tile.gemm %As, %Bs, %Cf {clear, transpose_b} : memref<32x32xbf16, #tile.scope<shared>>, memref<32x32xbf16, #tile.scope<shared>>, memref<32x32xf32, #tile.scope<fragment>>
    tile.copy %Cf to %C[%c0, %c0] : memref<32x32xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}

// -----

// What MFMA does not cover is SIMT (gemm-simt-remarks.mlir: the remark).
// CHECK-LABEL: gpu.func @gemm_simt_kernel
// CHECK-NOT: amdgpu.mfma
// CHECK: arith.mulf
// CHECK: gpu.return
func.func @gemm_simt(%A: memref<?x?xf32>, %C: memref<?x?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(64) {
    %As = tile.alloc : memref<16x16xf32, #tile.scope<shared>>
    %Cf = tile.alloc : memref<16x16xf32, #tile.scope<fragment>>
    tile.copy %A[%c0, %c0] to %As : memref<?x?xf32> to memref<16x16xf32, #tile.scope<shared>>
    tile.gemm %As, %As, %Cf {clear} : memref<16x16xf32, #tile.scope<shared>>, memref<16x16xf32, #tile.scope<shared>>, memref<16x16xf32, #tile.scope<fragment>>
    tile.copy %Cf to %C[%c0, %c0] : memref<16x16xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}
