// FlashAttention forward: O[b, h] = softmax(scale * Q[b, h] K[b, h]^T) V[b, h]
// over [B, H, S, D] tensors (the torch SDPA layout), f16, head dim 64, with an
// optional causal mask (the i32 scalar `causal`: key j hidden from query i
// when j > i). Any S: the copies' zero fill covers the tails, and keys past S
// are masked to -inf.
//
//   Q, K, V : memref<?x?x?x64xf16>, B x H x S x 64
//   O       : memref<?x?x?x64xf16>, B x H x S x 64 (tile.output)
//   scale   : f32, the softmax scale (usually 1 / sqrt(64))
//   causal  : i32, 0 or 1
//
// The grid is (ceil(S / 64), B * H); block (x, y) owns query rows
// [64q, 64q + 64) of head y with q = ceil(S / 64) - 1 - x (the last query
// tiles first: under `causal` they have the most key tiles), 128 threads
// (4 warps of 16 rows each). The online softmax (FlashAttention-2), per
// 64-key tile t (a 2-stage pipeline over K and V tiles: cp.async, or on
// sm_90a TMA loads by a producer thread where the runtime can describe the
// tensors; causal: only the tiles up to the diagonal):
//   1. S = Q K^T (tensor cores, K^T read transposed from shared memory);
//   2. S masked (tile.parallel; only in the tiles that cross S or, causal,
//      the diagonal);
//   3. mb[i] = max_j S[i, j] (min if scale < 0); with c = scale * log2(e),
//      m' = max(m, c mb); alpha = exp2(m - m') (m is in the log2 domain);
//   4. S = exp2(c S - m') (one FFMA and one EX2 per score),
//      lb[i] = sum_j S[i, j];
//   5. l = alpha * l + lb; O = alpha * O; P = S as f16 (a fragment);
//      O += P V.
// Finally O *= 1 / l, copied out as f16.
//
// How it maps to the GPU (tile-infer-layouts, convert-tile-to-nvgpu): S and
// O are mma accumulators whose warps hold 16-row strips (on sm_90a the
// wgmma accumulator layout: both gemms are wgmma chains); P inherits S's
// layout, which is the m16n8k16 A-operand register layout, so P V reads P
// from registers (no shared memory); the row statistics (m, l, alpha, mb,
// lb) live in the four threads of each row's quad, so the row max and sum
// are quad shuffles and every elementwise step stays in registers. P is
// converted last, so S's registers die as P's are written.
//
// test/E2E/kernels/flash_attention.mlir.in is the template of this kernel
// (bf16, d = 128, other tiles); test_fused_kernels.py checks they agree.
//
// numpy: p = softmax(scale * q @ k.swapaxes(-1, -2) (+ mask), axis=-1); o = p @ v
func.func @flash_attention(%Q: memref<?x?x?x64xf16> {tile.name = "Q", tile.dims = ["B", "H", "S", "D"]},
                           %K: memref<?x?x?x64xf16> {tile.name = "K", tile.dims = ["B", "H", "S", "D"]},
                           %V: memref<?x?x?x64xf16> {tile.name = "V", tile.dims = ["B", "H", "S", "D"]},
                           %O: memref<?x?x?x64xf16> {tile.name = "O", tile.dims = ["B", "H", "S", "D"], tile.output},
                           %scale: f32 {tile.name = "scale"},
                           %causal: i32 {tile.name = "causal"})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %cBM = arith.constant 64 : index
  %cBN = arith.constant 64 : index
  %zero = arith.constant 0 : i32
  %true = arith.constant true
  %ninf = arith.constant 0xFF800000 : f32
  %pinf = arith.constant 0x7F800000 : f32
  %fzero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  // exp(x) = exp2(x * log2(e)): the scores are kept in the log2 domain.
  %log2e = arith.constant 1.44269504088896340736 : f32
  %B = memref.dim %Q, %c0 : memref<?x?x?x64xf16>
  %H = memref.dim %Q, %c1 : memref<?x?x?x64xf16>
  %L = memref.dim %Q, %c2 : memref<?x?x?x64xf16>
  %bh = arith.muli %B, %H : index
  %gq = arith.ceildivui %L, %cBM : index
  %nk = arith.ceildivui %L, %cBN : index
  %is_causal = arith.cmpi ne, %causal, %zero : i32
  %tiny = arith.constant 1.17549435E-38 : f32
  %qk_exact = arith.mulf %scale, %log2e : f32
  // A zero scale becomes the smallest normal float: hidden keys stay -inf
  // once scaled (not NaN), and exp2 of any other score times it is exactly 1.
  %unscaled = arith.cmpf oeq, %qk_exact, %fzero : f32
  %qk_scale = arith.select %unscaled, %tiny, %qk_exact : f32
  // The row maximum is taken over the unscaled scores, so that scaling,
  // subtracting the maximum and exp2 are one FFMA and one EX2 per score.
  // A negative scale turns the scaled maximum into the unscaled minimum
  // and a hidden key into +inf before scaling (-inf after).
  %flip = arith.cmpf olt, %qk_scale, %fzero : f32
  %hide = arith.select %flip, %pinf, %ninf : f32
  tile.launch blocks(%bx, %by) in (%gq, %bh) threads(128) {
    %Qs = tile.alloc : memref<64x64xf16, #tile.scope<shared>>
    %Ks = tile.alloc : memref<64x64xf16, #tile.scope<shared>>
    %Vs = tile.alloc : memref<64x64xf16, #tile.scope<shared>>
    %S = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    %P = tile.alloc : memref<64x64xf16, #tile.scope<fragment>>
    %Of = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    %m = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    %l = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    %mb = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    %lb = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    %alpha = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    %b = arith.divui %by, %H : index
    %h = arith.remui %by, %H : index
    // Query tiles from the last: with `causal` the last ones have the most
    // key tiles, and starting them first leaves the short ones for the
    // end of the launch.
    %gq1 = arith.subi %gq, %c1 : index
    %qt = arith.subi %gq1, %bx : index
    %q0 = arith.muli %qt, %cBM : index
    // Causal: only the key tiles up to the last query row of this tile.
    %qend = arith.addi %q0, %cBM : index
    %nkc = arith.ceildivui %qend, %cBN : index
    %nkm = arith.minui %nkc, %nk : index
    %nkv = arith.select %is_causal, %nkm, %nk : index
    tile.copy %Q[%b, %h, %q0, %c0] to %Qs drop_dims [0, 1] : memref<?x?x?x64xf16> to memref<64x64xf16, #tile.scope<shared>>
    tile.clear %Of : memref<64x64xf32, #tile.scope<fragment>>
    tile.clear %l : memref<64xf32, #tile.scope<fragment>>
    tile.fill %m, %ninf : memref<64xf32, #tile.scope<fragment>>, f32
    tile.pipelined %t = %c0 to %nkv step %c1 stages(2) {
      %k0 = arith.muli %t, %cBN : index
      tile.copy %K[%b, %h, %k0, %c0] to %Ks drop_dims [0, 1] : memref<?x?x?x64xf16> to memref<64x64xf16, #tile.scope<shared>>
      tile.copy %V[%b, %h, %k0, %c0] to %Vs drop_dims [0, 1] : memref<?x?x?x64xf16> to memref<64x64xf16, #tile.scope<shared>>
      tile.gemm %Qs, %Ks, %S {transpose_b, clear} : memref<64x64xf16, #tile.scope<shared>>, memref<64x64xf16, #tile.scope<shared>>, memref<64x64xf32, #tile.scope<fragment>>
      // Only the key tile past S, or (causal) one reaching past the first
      // query of the tile, needs the mask (a block-uniform branch).
      %kend = arith.addi %k0, %cBN : index
      %tail = arith.cmpi ugt, %kend, %L : index
      %klast = arith.subi %kend, %c1 : index
      %late = arith.cmpi ugt, %klast, %q0 : index
      %diag = arith.andi %is_causal, %late : i1
      %masked = arith.ori %tail, %diag : i1
      // Keys past S (the copy's zero fill) and, when causal, keys after the
      // query are hidden: -inf once scaled.
      scf.if %masked {
        tile.parallel (%i, %j) in [64, 64] {
          %s = memref.load %S[%i, %j] : memref<64x64xf32, #tile.scope<fragment>>
          %qi = arith.addi %q0, %i : index
          %kj = arith.addi %k0, %j : index
          %inside = arith.cmpi ult, %kj, %L : index
          %future = arith.cmpi ugt, %kj, %qi : index
          %hidden = arith.andi %is_causal, %future : i1
          %shown = arith.xori %hidden, %true : i1
          %keep = arith.andi %shown, %inside : i1
          %y = arith.select %keep, %s, %hide : f32
          memref.store %y, %S[%i, %j] : memref<64x64xf32, #tile.scope<fragment>>
        }
      }
      scf.if %flip {
        tile.reduce min %S into %mb {dim = 1 : i64, clear} : memref<64x64xf32, #tile.scope<fragment>> into memref<64xf32, #tile.scope<fragment>>
      } else {
        tile.reduce max %S into %mb {dim = 1 : i64, clear} : memref<64x64xf32, #tile.scope<fragment>> into memref<64xf32, #tile.scope<fragment>>
      }
      // New running max (log2 domain); alpha rescales what was accumulated so far (0 in
      // the first tile, where m is -inf; key 0 is never masked, so m is
      // finite from then on).
      tile.parallel (%i) in [64] {
        %mo = memref.load %m[%i] : memref<64xf32, #tile.scope<fragment>>
        %mr = memref.load %mb[%i] : memref<64xf32, #tile.scope<fragment>>
        %mt = arith.mulf %mr, %qk_scale : f32
        %mn = arith.maximumf %mo, %mt : f32
        %d = arith.subf %mo, %mn : f32
        %a = math.exp2 %d : f32
        memref.store %a, %alpha[%i] : memref<64xf32, #tile.scope<fragment>>
        memref.store %mn, %m[%i] : memref<64xf32, #tile.scope<fragment>>
      }
      tile.parallel (%i, %j) in [64, 64] {
        %s = memref.load %S[%i, %j] : memref<64x64xf32, #tile.scope<fragment>>
        %mi = memref.load %m[%i] : memref<64xf32, #tile.scope<fragment>>
        %x = arith.mulf %s, %qk_scale : f32
        %d = arith.subf %x, %mi : f32
        %p = math.exp2 %d : f32
        memref.store %p, %S[%i, %j] : memref<64x64xf32, #tile.scope<fragment>>
      }
      tile.reduce sum %S into %lb {dim = 1 : i64, clear} : memref<64x64xf32, #tile.scope<fragment>> into memref<64xf32, #tile.scope<fragment>>
      tile.parallel (%i) in [64] {
        %lo = memref.load %l[%i] : memref<64xf32, #tile.scope<fragment>>
        %a = memref.load %alpha[%i] : memref<64xf32, #tile.scope<fragment>>
        %lt = memref.load %lb[%i] : memref<64xf32, #tile.scope<fragment>>
        %ls = arith.mulf %lo, %a : f32
        %ln = arith.addf %ls, %lt : f32
        memref.store %ln, %l[%i] : memref<64xf32, #tile.scope<fragment>>
      }
      tile.parallel (%i, %d) in [64, 64] {
        %o = memref.load %Of[%i, %d] : memref<64x64xf32, #tile.scope<fragment>>
        %a = memref.load %alpha[%i] : memref<64xf32, #tile.scope<fragment>>
        %r = arith.mulf %o, %a : f32
        memref.store %r, %Of[%i, %d] : memref<64x64xf32, #tile.scope<fragment>>
      }
      // P as f16 for the second gemm, converted last: S's registers die as
      // P's are written.
      tile.parallel (%i, %j) in [64, 64] {
        %p = memref.load %S[%i, %j] : memref<64x64xf32, #tile.scope<fragment>>
        %pt = arith.truncf %p : f32 to f16
        memref.store %pt, %P[%i, %j] : memref<64x64xf16, #tile.scope<fragment>>
      }
      tile.gemm %P, %Vs, %Of : memref<64x64xf16, #tile.scope<fragment>>, memref<64x64xf16, #tile.scope<shared>>, memref<64x64xf32, #tile.scope<fragment>>
    }
    // O /= l: one reciprocal per row, then multiplies.
    tile.parallel (%i) in [64] {
      %li = memref.load %l[%i] : memref<64xf32, #tile.scope<fragment>>
      %inv = arith.divf %one, %li : f32
      memref.store %inv, %l[%i] : memref<64xf32, #tile.scope<fragment>>
    }
    tile.parallel (%i, %d) in [64, 64] {
      %o = memref.load %Of[%i, %d] : memref<64x64xf32, #tile.scope<fragment>>
      %inv = memref.load %l[%i] : memref<64xf32, #tile.scope<fragment>>
      %r = arith.mulf %o, %inv : f32
      memref.store %r, %Of[%i, %d] : memref<64x64xf32, #tile.scope<fragment>>
    }
    tile.copy %Of to %O[%b, %h, %q0, %c0] drop_dims [0, 1] : memref<64x64xf32, #tile.scope<fragment>> to memref<?x?x?x64xf16>
  }
  return
}
