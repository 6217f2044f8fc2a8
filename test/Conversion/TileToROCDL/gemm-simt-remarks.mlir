// RUN: tile-opt %s --tile-attach-metadata=target=hip --tile-infer-layouts=matrix-core=mfma --convert-tile-to-amdgpu="remarks=true" -verify-diagnostics -o /dev/null

// A tile.gemm that runs as SIMT FMAs instead of MFMA says so, and why.
func.func @simt(%A: memref<?x?xf32>, %H: memref<?x?xf16>, %C: memref<?x?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(64) {
    %As = tile.alloc : memref<16x16xf32, #tile.scope<shared>>
    %Cf = tile.alloc : memref<16x16xf32, #tile.scope<fragment>>
    %Hs = tile.alloc : memref<16x8xf16, #tile.scope<shared>>
    %Hf = tile.alloc : memref<16x16xf32, #tile.scope<fragment>>
    tile.copy %A[%c0, %c0] to %As : memref<?x?xf32> to memref<16x16xf32, #tile.scope<shared>>
    tile.copy %H[%c0, %c0] to %Hs : memref<?x?xf16> to memref<16x8xf16, #tile.scope<shared>>
    // expected-remark @below {{tile.gemm lowered to SIMT FMAs (no tensor cores): no MFMA for these element types (f16 x f16 -> f32, bf16 x bf16 -> f32)}}
    tile.gemm %As, %As, %Cf {clear} : memref<16x16xf32, #tile.scope<shared>>, memref<16x16xf32, #tile.scope<shared>>, memref<16x16xf32, #tile.scope<fragment>>
    // expected-remark @below {{tile.gemm lowered to SIMT FMAs (no tensor cores): K (8) is not a multiple of 16}}
    tile.gemm %Hs, %Hs, %Hf {clear, transpose_b} : memref<16x8xf16, #tile.scope<shared>>, memref<16x8xf16, #tile.scope<shared>>, memref<16x16xf32, #tile.scope<fragment>>
    tile.copy %Cf to %C[%c0, %c0] : memref<16x16xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}
