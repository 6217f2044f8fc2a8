// RUN: tile-opt %s --tile-infer-layouts | tile-opt | FileCheck %s

// gemm: the accumulator gets the mma.sync m16n8 layout (4 warps as 2x2 over
// 128x128, 64x64 per warp), the operands the ldmatrix swizzle of their row
// pitch (64-byte rows: 2 bits; 256-byte rows: 3 bits, shift 4).
// CHECK-LABEL: func.func @gemm
// CHECK: tile.alloc {layout = #tile.swizzle<bits = 2, base = 4, shift = 3>} : memref<128x32xf16
// CHECK: tile.alloc {layout = #tile.swizzle<bits = 3, base = 4, shift = 4>} : memref<32x128xf16
// CHECK: tile.alloc {layout = #tile.fragment<thread = (d0, d1) -> (((d0 floordiv 64) * 2 + d1 floordiv 64) * 32 + (d0 mod 8) * 4 + (d1 mod 8) floordiv 2), index = (d0, d1) -> ((((d0 mod 64) floordiv 16) * 8 + (d1 mod 64) floordiv 8) * 4 + ((d0 mod 16) floordiv 8) * 2 + d1 mod 2), threads = 128, inverse = {{.*}}>} : memref<128x128xf32
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

// Element-wise and reductions: the linear layout (element l in thread
// l mod 128, register l floordiv 128), propagated through the parallel body;
// reduction targets replicated in every thread.
// CHECK-LABEL: func.func @rows
// CHECK: tile.alloc {layout = #tile.fragment<thread = (d0, d1) -> (d1 mod 128), index = (d0, d1) -> (d1 floordiv 128 + d0 * 2), threads = 128, inverse = (d0, d1) -> ((d1 * 128 + d0) floordiv 256, (d1 * 128 + d0) mod 256)>} : memref<4x256xf32
// CHECK: tile.alloc {layout = #tile.fragment<thread = (d0, d1) -> (d1 mod 128), index = (d0, d1) -> (d1 floordiv 128 + d0 * 2), threads = 128, inverse = {{.*}}>} : memref<4x256xf32
// CHECK: tile.alloc {layout = #tile.fragment<thread = (d0) -> (d0 mod 128), index = (d0) -> (d0), threads = 128, replicate = 128, inverse = (d0, d1) -> (d1)>} : memref<4xf32
// A tile that is not a multiple of the thread count is replicated.
// CHECK: tile.alloc {layout = #tile.fragment<{{.*}}replicate = 128{{.*}}>} : memref<3x5xf32
// An annotated layout is kept.
// CHECK: tile.alloc {layout = #tile.fragment<thread = (d0) -> (d0), index = (d0) -> (0), threads = 128>} : memref<128xf32
func.func @rows(%X: memref<?x256xf32>, %Y: memref<?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %x = tile.alloc : memref<4x256xf32, #tile.scope<fragment>>
    %e = tile.alloc : memref<4x256xf32, #tile.scope<fragment>>
    %s = tile.alloc : memref<4xf32, #tile.scope<fragment>>
    %odd = tile.alloc : memref<3x5xf32, #tile.scope<fragment>>
    %pinned = tile.alloc {layout = #tile.fragment<thread = (i) -> (i), index = (i) -> (0), threads = 128>} : memref<128xf32, #tile.scope<fragment>>
    tile.copy %X[%c0, %c0] to %x : memref<?x256xf32> to memref<4x256xf32, #tile.scope<fragment>>
    tile.parallel (%i, %j) in [4, 256] {
      %v = memref.load %x[%i, %j] : memref<4x256xf32, #tile.scope<fragment>>
      %w = math.exp %v : f32
      memref.store %w, %e[%i, %j] : memref<4x256xf32, #tile.scope<fragment>>
    }
    tile.reduce sum %e into %s {dim = 1 : i64, clear} : memref<4x256xf32, #tile.scope<fragment>> into memref<4xf32, #tile.scope<fragment>>
    tile.copy %s to %Y[%c0] : memref<4xf32, #tile.scope<fragment>> to memref<?xf32>
    tile.clear %odd : memref<3x5xf32, #tile.scope<fragment>>
    tile.clear %pinned : memref<128xf32, #tile.scope<fragment>>
  }
  return
}
