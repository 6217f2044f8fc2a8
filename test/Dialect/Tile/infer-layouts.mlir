// RUN: tile-opt %s --tile-infer-layouts | tile-opt | FileCheck %s

// gemm: the accumulator gets the mma.sync m16n8 layout (4 warps as 2x2 over
// 128x128, 64x64 per warp), the operands the ldmatrix swizzle of their row
// pitch (64-byte rows: 2 bits; 256-byte rows: two 128-byte panels, each in
// the 128-byte swizzle).
// CHECK-LABEL: func.func @gemm
// CHECK: tile.alloc {layout = #tile.swizzle<bits = 2, base = 4, shift = 3>} : memref<128x32xf16
// CHECK: tile.alloc {layout = #tile.swizzle<bits = 3, base = 4, shift = 3, panel = 128>} : memref<32x128xf16
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

// Element-wise and reductions: a fragment copied from global memory gets
// 16-byte row chunks (4 f32); reduced along its rows, a warp per row (row r
// in warp r mod 4, chunk k of the row in lane k mod 32, registers
// ((r floordiv 4) * 2 + k floordiv 32) * 4 + {0..3}), propagated through the
// parallel body; the row statistic lives in the 32 lanes of its row's warp
// (no shared memory in the reduction); a fragment no global copy touches
// the plain linear layout (element l in thread l mod 128, register
// l floordiv 128).
// CHECK-LABEL: func.func @rows
// CHECK: tile.alloc {layout = #tile.fragment<thread = (d0, d1) -> ((d0 mod 4) * 32 + (d1 floordiv 4) mod 32), index = (d0, d1) -> (((d0 floordiv 4) * 2 + (d1 floordiv 4) floordiv 32) * 4 + d1 mod 4), threads = 128, inverse = (d0, d1) -> ((d1 floordiv 8) * 4 + d0 floordiv 32, (((d1 floordiv 4) mod 2) * 32 + d0 mod 32) * 4 + d1 mod 4)>} : memref<4x256xf32
// CHECK: tile.alloc {layout = #tile.fragment<thread = (d0, d1) -> ((d0 mod 4) * 32 + (d1 floordiv 4) mod 32), {{.*}}>} : memref<4x256xf32
// CHECK: tile.alloc {layout = #tile.fragment<thread = (d0) -> ((d0 mod 4) * 32), index = (d0) -> (d0 floordiv 4), threads = 128, replicate = 32, inverse = (d0, d1) -> (d1 * 4 + d0 floordiv 32)>} : memref<4xf32
// CHECK: tile.alloc {layout = #tile.fragment<thread = (d0, d1) -> (d1 mod 128), index = (d0, d1) -> (d1 floordiv 128 + d0 * 2), threads = 128, inverse = (d0, d1) -> ((d1 * 128 + d0) floordiv 256, (d1 * 128 + d0) mod 256)>} : memref<2x256xf32
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
    %lin = tile.alloc : memref<2x256xf32, #tile.scope<fragment>>
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
    tile.clear %lin : memref<2x256xf32, #tile.scope<fragment>>
    tile.clear %odd : memref<3x5xf32, #tile.scope<fragment>>
    tile.clear %pinned : memref<128xf32, #tile.scope<fragment>>
  }
  return
}

// A fragment A operand (P of P.V): P, the accumulator S it is converted from
// and the accumulator O get the mma accumulator layout with whole rows per
// warp (2 warps x 16 rows), which is the mma A-operand register layout; the
// row max of S (and what it propagates to) lives in each row's quad
// (replicate = 4, two registers: rows g and g + 8 of the warp).
// CHECK-LABEL: func.func @attention_tile
// CHECK-COUNT-3: tile.alloc {layout = #tile.fragment<thread = (d0, d1) -> ((d0 floordiv 16 + d1 floordiv 16) * 32 + (d0 mod 8) * 4 + (d1 mod 8) floordiv 2), {{.*}}threads = 64, inverse = (d0, d1) -> ((d0 floordiv 32) * 16 + {{.*}}>} : memref<32x16x
// CHECK-COUNT-2: tile.alloc {layout = #tile.fragment<thread = (d0) -> ((d0 floordiv 16) * 32 + (d0 mod 8) * 4), index = (d0) -> ((d0 mod 16) floordiv 8), threads = 64, replicate = 4, inverse = (d0, d1) -> ((d0 floordiv 32) * 16 + d1 * 8 + (d0 mod 32) floordiv 4)>} : memref<32xf32
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

// A row scale and a column bias copied from global memory into fragments
// and read by row / column in an elementwise op on the mma accumulator
// (TileLang's T.alloc_fragment((block_M,)) habit) take the accumulator's
// row / column slice (each thread holds its own rows' and columns'
// entries), not the copy's 16-byte layout.
// CHECK-LABEL: func.func @epilogue_vectors
// CHECK: tile.alloc {layout = #tile.fragment<thread = {{.*}}, threads = 128, replicate = {{[0-9]+}}, inverse = {{.*}}>} : memref<128xf32, #tile.scope<fragment>>
// CHECK: tile.alloc {layout = #tile.fragment<thread = {{.*}}, threads = 128, replicate = {{[0-9]+}}, inverse = {{.*}}>} : memref<128xf16, #tile.scope<fragment>>
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

// A column statistic (reduce over dim 0) of a fragment copied from global
// memory lives in the threads holding its column: 16x256 f32 in 16-byte
// chunks over 128 threads is 64 chunks per row, so thread t holds column
// chunk t % 64 and each column has 2 holders; over 32 threads (2 chunks
// per thread per row) each column has one holder, the 1-D chunk layout.
// CHECK-LABEL: func.func @column_statistics
// CHECK: tile.alloc {layout = #tile.fragment<thread = (d0) -> (d0 floordiv 4), index = (d0) -> (d0 mod 4), threads = 128, replicate = 2, inverse = (d0, d1) -> ((d0 mod 64) * 4 + d1)>} : memref<256xf32, #tile.scope<fragment>>
// CHECK-LABEL: func.func @column_statistics_one_holder
// CHECK: tile.alloc {layout = #tile.fragment<thread = (d0) -> ((d0 floordiv 4) mod 32), index = (d0) -> (((d0 floordiv 4) floordiv 32) * 4 + d0 mod 4), threads = 32, inverse = {{.*}}>} : memref<256xf32, #tile.scope<fragment>>
func.func @column_statistics(%X: memref<?x?xf32>, %Y: memref<?xf32>)
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %x = tile.alloc : memref<16x256xf32, #tile.scope<fragment>>
    %s = tile.alloc : memref<256xf32, #tile.scope<fragment>>
    tile.copy %X[%c0, %c0] to %x : memref<?x?xf32> to memref<16x256xf32, #tile.scope<fragment>>
    tile.reduce sum %x into %s {dim = 0 : i64, clear} : memref<16x256xf32, #tile.scope<fragment>> into memref<256xf32, #tile.scope<fragment>>
    tile.copy %s to %Y[%c0] : memref<256xf32, #tile.scope<fragment>> to memref<?xf32>
  }
  return
}

func.func @column_statistics_one_holder(%X: memref<?x?xf32>, %Y: memref<?xf32>)
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(32) {
    %x = tile.alloc : memref<16x256xf32, #tile.scope<fragment>>
    %s = tile.alloc : memref<256xf32, #tile.scope<fragment>>
    tile.copy %X[%c0, %c0] to %x : memref<?x?xf32> to memref<16x256xf32, #tile.scope<fragment>>
    tile.reduce max %x into %s {dim = 0 : i64, clear} : memref<16x256xf32, #tile.scope<fragment>> into memref<256xf32, #tile.scope<fragment>>
    tile.copy %s to %Y[%c0] : memref<256xf32, #tile.scope<fragment>> to memref<?xf32>
  }
  return
}

// -----

// A bf16 tensor copied into an f32 fragment: runs of 8 registers (one
// 16-byte load of the global side); a weight vector read along the columns
// takes the tile's column slice (chunk t mod 64 of every row in thread t:
// two holders per column), not a layout of its own.
// CHECK-LABEL: func.func @bf16_runs
// CHECK: tile.alloc {layout = #tile.fragment<thread = (d0, d1) -> ((d1 floordiv 8 + d0 * 64) mod 128), {{.*}}>} : memref<4x512xf32
// CHECK: tile.alloc {layout = #tile.fragment<thread = (d0) -> (d0 floordiv 8), index = (d0) -> (d0 mod 8), threads = 128, replicate = 2, inverse = (d0, d1) -> ((d0 mod 64) * 8 + d1)>} : memref<512xf32
func.func @bf16_runs(%X: memref<?x512xbf16>, %W: memref<512xbf16>, %Y: memref<?x512xbf16>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %x = tile.alloc : memref<4x512xf32, #tile.scope<fragment>>
    %w = tile.alloc : memref<512xf32, #tile.scope<fragment>>
    tile.copy %X[%c0, %c0] to %x : memref<?x512xbf16> to memref<4x512xf32, #tile.scope<fragment>>
    tile.copy %W[%c0] to %w : memref<512xbf16> to memref<512xf32, #tile.scope<fragment>>
    tile.parallel (%i, %j) in [4, 512] {
      %v = memref.load %x[%i, %j] : memref<4x512xf32, #tile.scope<fragment>>
      %s = memref.load %w[%j] : memref<512xf32, #tile.scope<fragment>>
      %p = arith.mulf %v, %s : f32
      memref.store %p, %x[%i, %j] : memref<4x512xf32, #tile.scope<fragment>>
    }
    tile.copy %x to %Y[%c0, %c0] : memref<4x512xf32, #tile.scope<fragment>> to memref<?x512xbf16>
  }
  return
}

// -----

// A norm: the tile is reduced along its rows, so a warp per row; the row
// statistic in its warp's lanes, the weight in the column slice of the
// row-warp layout (lane l holds chunks l and l + 32, in every warp).
// CHECK-LABEL: func.func @row_warp_weight
// CHECK: tile.alloc {layout = #tile.fragment<thread = (d0, d1) -> ((d0 mod 4) * 32 + (d1 floordiv 8) mod 32), {{.*}}>} : memref<4x512xf32
// CHECK: tile.alloc {layout = #tile.fragment<thread = (d0) -> ((d0 floordiv 8) mod 32), index = (d0) -> (((d0 floordiv 8) floordiv 32) * 8 + d0 mod 8), threads = 128, replicate = 4, inverse = (d0, d1) -> (((d1 floordiv 8) * 32 + d0 mod 32) * 8 + d1 mod 8)>} : memref<512xf32
// CHECK: tile.alloc {layout = #tile.fragment<thread = (d0) -> ((d0 mod 4) * 32), index = (d0) -> (d0 floordiv 4), threads = 128, replicate = 32, {{.*}}>} : memref<4xf32
func.func @row_warp_weight(%X: memref<?x512xbf16>, %W: memref<512xbf16>, %Y: memref<?x512xbf16>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %x = tile.alloc : memref<4x512xf32, #tile.scope<fragment>>
    %w = tile.alloc : memref<512xf32, #tile.scope<fragment>>
    %ss = tile.alloc : memref<4xf32, #tile.scope<fragment>>
    tile.copy %X[%c0, %c0] to %x : memref<?x512xbf16> to memref<4x512xf32, #tile.scope<fragment>>
    tile.copy %W[%c0] to %w : memref<512xbf16> to memref<512xf32, #tile.scope<fragment>>
    tile.reduce sum %x into %ss {dim = 1 : i64, clear} : memref<4x512xf32, #tile.scope<fragment>> into memref<4xf32, #tile.scope<fragment>>
    tile.parallel (%i, %j) in [4, 512] {
      %v = memref.load %x[%i, %j] : memref<4x512xf32, #tile.scope<fragment>>
      %s = memref.load %w[%j] : memref<512xf32, #tile.scope<fragment>>
      %r = memref.load %ss[%i] : memref<4xf32, #tile.scope<fragment>>
      %p = arith.mulf %v, %s : f32
      %q = arith.mulf %p, %r : f32
      memref.store %q, %x[%i, %j] : memref<4x512xf32, #tile.scope<fragment>>
    }
    tile.copy %x to %Y[%c0, %c0] : memref<4x512xf32, #tile.scope<fragment>> to memref<?x512xbf16>
  }
  return
}

// -----

// A row statistic also read along the rows of a tile laid out otherwise
// (%z, reduced along its columns, keeps the linear chunks): it
// stays replicated, which every thread reads from its own registers.
// CHECK-LABEL: func.func @row_stat_other_tile
// CHECK: tile.alloc {layout = #tile.fragment<thread = (d0, d1) -> ((d0 mod 4) * 32 + {{.*}}>} : memref<4x512xf32
// CHECK: tile.alloc {layout = #tile.fragment<thread = (d0, d1) -> ((d1 floordiv 4 + d0 * 64) mod 128), {{.*}}>} : memref<4x256xf32
// CHECK: tile.alloc {layout = #tile.fragment<{{.*}}replicate = 128{{.*}}>} : memref<4xf32
func.func @row_stat_other_tile(%X: memref<?x512xf32>, %Z: memref<?x256xf32>, %Y: memref<?x256xf32>, %C: memref<256xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %x = tile.alloc : memref<4x512xf32, #tile.scope<fragment>>
    %z = tile.alloc : memref<4x256xf32, #tile.scope<fragment>>
    %ss = tile.alloc : memref<4xf32, #tile.scope<fragment>>
    %cs = tile.alloc : memref<256xf32, #tile.scope<fragment>>
    tile.copy %X[%c0, %c0] to %x : memref<?x512xf32> to memref<4x512xf32, #tile.scope<fragment>>
    tile.copy %Z[%c0, %c0] to %z : memref<?x256xf32> to memref<4x256xf32, #tile.scope<fragment>>
    tile.reduce sum %x into %ss {dim = 1 : i64, clear} : memref<4x512xf32, #tile.scope<fragment>> into memref<4xf32, #tile.scope<fragment>>
    tile.reduce sum %z into %cs {dim = 0 : i64, clear} : memref<4x256xf32, #tile.scope<fragment>> into memref<256xf32, #tile.scope<fragment>>
    tile.parallel (%i, %j) in [4, 256] {
      %v = memref.load %z[%i, %j] : memref<4x256xf32, #tile.scope<fragment>>
      %r = memref.load %ss[%i] : memref<4xf32, #tile.scope<fragment>>
      %q = arith.mulf %v, %r : f32
      memref.store %q, %z[%i, %j] : memref<4x256xf32, #tile.scope<fragment>>
    }
    tile.copy %z to %Y[%c0, %c0] : memref<4x256xf32, #tile.scope<fragment>> to memref<?x256xf32>
    tile.copy %cs to %C[%c0] : memref<256xf32, #tile.scope<fragment>> to memref<256xf32>
  }
  return
}

// -----

// A tile quantized from another in an elementwise parallel takes that
// tile's layout before its own copy is visited: 8 int8 per run like the
// bf16 source (16 bytes of bf16), not 16, so the parallel between them
// runs on registers.
// CHECK-LABEL: func.func @quantized_partner
// CHECK: tile.alloc {layout = #tile.fragment<thread = (d0, d1) -> ((d1 floordiv 8 + d0 * 128) mod 256), {{.*}}>} : memref<2x1024xf32
// CHECK: tile.alloc {layout = #tile.fragment<thread = (d0, d1) -> ((d1 floordiv 8 + d0 * 128) mod 256), {{.*}}>} : memref<2x1024xi8
func.func @quantized_partner(%X: memref<?x1024xbf16>, %Q: memref<?x1024xi8>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(256) {
    %x = tile.alloc : memref<2x1024xf32, #tile.scope<fragment>>
    %q = tile.alloc : memref<2x1024xi8, #tile.scope<fragment>>
    tile.copy %X[%c0, %c0] to %x : memref<?x1024xbf16> to memref<2x1024xf32, #tile.scope<fragment>>
    tile.parallel (%i, %j) in [2, 1024] {
      %v = memref.load %x[%i, %j] : memref<2x1024xf32, #tile.scope<fragment>>
      %r = math.roundeven %v : f32
      %t = arith.fptosi %r : f32 to i8
      memref.store %t, %q[%i, %j] : memref<2x1024xi8, #tile.scope<fragment>>
    }
    tile.copy %q to %Q[%c0, %c0] : memref<2x1024xi8, #tile.scope<fragment>> to memref<?x1024xi8>
  }
  return
}

// -----

// A 768-element bf16 row over 128 threads has 96 runs of 16 bytes (and 48
// of 8): it gets runs of 2 elements (one 4-byte access each, three per
// thread), not the element-wise fallback.
// CHECK-LABEL: func.func @short_row_runs
// CHECK: tile.alloc {layout = #tile.fragment<thread = (d0, d1) -> ((d1 floordiv 2) mod 128), index = (d0, d1) -> (((d1 floordiv 2) floordiv 128 + d0 * 3) * 2 + d1 mod 2), {{.*}}>} : memref<1x768xbf16
func.func @short_row_runs(%Ids: memref<?xi32>, %T: memref<?x768xbf16>, %O: memref<?x768xbf16>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %n = memref.dim %Ids, %c0 : memref<?xi32>
  tile.launch blocks(%bx) in (%n) threads(128) {
    %row = tile.alloc : memref<1x768xbf16, #tile.scope<fragment>>
    %id = memref.load %Ids[%bx] : memref<?xi32>
    %r = arith.index_cast %id : i32 to index
    tile.copy %T[%r, %c0] to %row : memref<?x768xbf16> to memref<1x768xbf16, #tile.scope<fragment>>
    tile.copy %row to %O[%bx, %c0] : memref<1x768xbf16, #tile.scope<fragment>> to memref<?x768xbf16>
  }
  return
}
