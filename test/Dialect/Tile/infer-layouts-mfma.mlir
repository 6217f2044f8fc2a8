// RUN: tile-opt %s -split-input-file --tile-infer-layouts=matrix-core=mfma | tile-opt | FileCheck %s
// RUN: not tile-opt %s -split-input-file --tile-infer-layouts=matrix-core=wmma 2>&1 | FileCheck %s --check-prefix=BAD

// matrix-core=mfma (AMD): the accumulator gets the MFMA 16x16 layout (2
// waves of 64 as 1x2 over 128x128: 128x64 per wave, lane l of a 16x16 tile
// holding column l % 16 and rows 4 * (l / 16) + {0..3}), the LDS operands
// the 8-byte-chunk swizzle of their row pitch (64-byte rows: 3 bits of the
// row above the 128-byte window, shift 4; 256-byte rows: 4 bits, shift 5).
// CHECK-LABEL: func.func @gemm
// CHECK: tile.alloc {layout = #tile.swizzle<bits = 3, base = 3, shift = 4>} : memref<128x32xf16
// CHECK: tile.alloc {layout = #tile.swizzle<bits = 4, base = 3, shift = 5>} : memref<32x128xf16
// CHECK: tile.alloc {layout = #tile.fragment<thread = (d0, d1) -> (((d0 floordiv 128) * 2 + d1 floordiv 64) * 64 + ((d0 mod 16) floordiv 4) * 16 + d1 mod 16), index = (d0, d1) -> ((((d0 mod 128) floordiv 16) * 4 + (d1 mod 64) floordiv 16) * 4 + d0 mod 4), threads = 128, inverse = {{.*}}>} : memref<128x128xf32
func.func @gemm(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf16>)
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %As = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    tile.gemm %As, %Bs, %Cf {clear} : memref<128x32xf16, #tile.scope<shared>>, memref<32x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    tile.copy %Cf to %C[%c0, %c0] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}

// -----

// A thread count that is not whole waves of 64: no MFMA layout (the
// default linear one), so the gemm will be SIMT.
// CHECK-LABEL: func.func @half_wave
// CHECK: tile.alloc {layout = #tile.fragment<thread = (d0, d1) -> ((d1 + d0 * 16) mod 32), index = (d0, d1) -> ((d1 + d0 * 16) floordiv 32), threads = 32
func.func @half_wave(%A: memref<?x?xf16>, %C: memref<?x?xf32>)
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(32) {
    %As = tile.alloc : memref<16x16xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<16x16xf32, #tile.scope<fragment>>
    tile.gemm %As, %As, %Cf {clear} : memref<16x16xf16, #tile.scope<shared>>, memref<16x16xf16, #tile.scope<shared>>, memref<16x16xf32, #tile.scope<fragment>>
    tile.copy %Cf to %C[%c0, %c0] : memref<16x16xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}

// BAD: tile-infer-layouts: unknown matrix-core 'wmma' (expected mma.sync or mfma)

// -----

// Epilogue vectors read by row / column next to an MFMA accumulator take
// its row / column slice (the 16 lanes of a 16-row group, the 4 lanes of a
// column; per wave row / column).
// CHECK-LABEL: func.func @epilogue_vectors
// CHECK: tile.alloc {layout = #tile.fragment<thread = (d0) -> ((d0 floordiv 128) * 128 + ((d0 mod 16) floordiv 4) * 16), index = (d0) -> (((d0 mod 128) floordiv 16) * 4 + d0 mod 4), threads = 128, replicate = 32, {{.*}}} : memref<128xf32, #tile.scope<fragment>>
// CHECK: tile.alloc {layout = #tile.fragment<thread = (d0) -> ((d0 floordiv 64) * 64 + d0 mod 16), index = (d0) -> ((d0 mod 64) floordiv 16), threads = 128, replicate = 4, {{.*}}} : memref<128xf16, #tile.scope<fragment>>
func.func @epilogue_vectors(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %s: memref<?xf32>, %bias: memref<?xf16>, %C: memref<?x?xf16>)
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %As = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    %sf = tile.alloc : memref<128xf32, #tile.scope<fragment>>
    %bf = tile.alloc : memref<128xf16, #tile.scope<fragment>>
    tile.copy %A[%c0, %c0] to %As : memref<?x?xf16> to memref<128x32xf16, #tile.scope<shared>>
    tile.copy %B[%c0, %c0] to %Bs : memref<?x?xf16> to memref<32x128xf16, #tile.scope<shared>>
    tile.gemm %As, %Bs, %Cf {clear} : memref<128x32xf16, #tile.scope<shared>>, memref<32x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    tile.copy %s[%c0] to %sf : memref<?xf32> to memref<128xf32, #tile.scope<fragment>>
    tile.copy %bias[%c0] to %bf : memref<?xf16> to memref<128xf16, #tile.scope<fragment>>
    tile.parallel (%i, %j) in [128, 128] {
      %acc = memref.load %Cf[%i, %j] : memref<128x128xf32, #tile.scope<fragment>>
      %si = memref.load %sf[%i] : memref<128xf32, #tile.scope<fragment>>
      %bj = memref.load %bf[%j] : memref<128xf16, #tile.scope<fragment>>
      %bjf = arith.extf %bj : f16 to f32
      %x = arith.mulf %acc, %si : f32
      %y = arith.addf %x, %bjf : f32
      memref.store %y, %Cf[%i, %j] : memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%c0, %c0] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}
