// FlashAttention forward (online softmax) over [B, H, S, D] tensors:
// O[b, h] = softmax(scale * Q[b, h] x K[b, h]^T (+ causal mask)) x V[b, h].
// A Python format template (examples/flash_attention.mlir is its f16, D = 64
// instance; test_cpu_kernels.py checks that they agree): element type bf16
// (f16 or bf16), head dim 128, query tile 64 rows, key tile 64 rows,
// 128 threads. `causal` (i32, 0 or 1) masks keys after the query.
func.func @flash_attention(%Q: memref<?x?x?x128xbf16> {tile.name = "Q", tile.dims = ["B", "H", "S", "D"]},
                           %K: memref<?x?x?x128xbf16> {tile.name = "K", tile.dims = ["B", "H", "S", "D"]},
                           %V: memref<?x?x?x128xbf16> {tile.name = "V", tile.dims = ["B", "H", "S", "D"]},
                           %O: memref<?x?x?x128xbf16> {tile.name = "O", tile.dims = ["B", "H", "S", "D"], tile.output},
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
  %one = arith.constant 1.0 : f32
  // exp(x) = exp2(x * log2(e)): the scores are kept in the log2 domain.
  %log2e = arith.constant 1.44269504088896340736 : f32
  %B = memref.dim %Q, %c0 : memref<?x?x?x128xbf16>
  %H = memref.dim %Q, %c1 : memref<?x?x?x128xbf16>
  %L = memref.dim %Q, %c2 : memref<?x?x?x128xbf16>
  %bh = arith.muli %B, %H : index
  %gq = arith.ceildivui %L, %cBM : index
  %nk = arith.ceildivui %L, %cBN : index
  %is_causal = arith.cmpi ne, %causal, %zero : i32
  %qk_scale = arith.mulf %scale, %log2e : f32
  tile.launch blocks(%bx, %by) in (%gq, %bh) threads(128) {
    %Qs = tile.alloc : memref<64x128xbf16, #tile.scope<shared>>
    %Ks = tile.alloc : memref<64x128xbf16, #tile.scope<shared>>
    %Vs = tile.alloc : memref<64x128xbf16, #tile.scope<shared>>
    %S = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    %P = tile.alloc : memref<64x64xbf16, #tile.scope<fragment>>
    %Of = tile.alloc : memref<64x128xf32, #tile.scope<fragment>>
    %m = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    %l = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    %mb = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    %lb = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    %alpha = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    %b = arith.divui %by, %H : index
    %h = arith.remui %by, %H : index
    %q0 = arith.muli %bx, %cBM : index
    // Causal: only the key tiles up to the last query row of this tile.
    %qend = arith.addi %q0, %cBM : index
    %nkc = arith.ceildivui %qend, %cBN : index
    %nkm = arith.minui %nkc, %nk : index
    %nkv = arith.select %is_causal, %nkm, %nk : index
    tile.copy %Q[%b, %h, %q0, %c0] to %Qs drop_dims [0, 1] : memref<?x?x?x128xbf16> to memref<64x128xbf16, #tile.scope<shared>>
    tile.clear %Of : memref<64x128xf32, #tile.scope<fragment>>
    tile.clear %l : memref<64xf32, #tile.scope<fragment>>
    tile.fill %m, %ninf : memref<64xf32, #tile.scope<fragment>>, f32
    tile.pipelined %t = %c0 to %nkv step %c1 stages(2) {
      %k0 = arith.muli %t, %cBN : index
      tile.copy %K[%b, %h, %k0, %c0] to %Ks drop_dims [0, 1] : memref<?x?x?x128xbf16> to memref<64x128xbf16, #tile.scope<shared>>
      tile.copy %V[%b, %h, %k0, %c0] to %Vs drop_dims [0, 1] : memref<?x?x?x128xbf16> to memref<64x128xbf16, #tile.scope<shared>>
      tile.gemm %Qs, %Ks, %S {transpose_b, clear} : memref<64x128xbf16, #tile.scope<shared>>, memref<64x128xbf16, #tile.scope<shared>>, memref<64x64xf32, #tile.scope<fragment>>
      // Only the key tile past S, or (causal) one reaching past the first
      // query of the tile, needs the mask (a block-uniform branch).
      %kend = arith.addi %k0, %cBN : index
      %tail = arith.cmpi ugt, %kend, %L : index
      %klast = arith.subi %kend, %c1 : index
      %late = arith.cmpi ugt, %klast, %q0 : index
      %diag = arith.andi %is_causal, %late : i1
      %masked = arith.ori %tail, %diag : i1
      // Scale into the log2 domain; keys past S (the copy's zero fill) and,
      // when causal, keys after the query are -inf.
      tile.parallel (%i, %j) in [64, 64] {
        %s = memref.load %S[%i, %j] : memref<64x64xf32, #tile.scope<fragment>>
        %x = arith.mulf %s, %qk_scale : f32
        %y = scf.if %masked -> (f32) {
          %qi = arith.addi %q0, %i : index
          %kj = arith.addi %k0, %j : index
          %inside = arith.cmpi ult, %kj, %L : index
          %future = arith.cmpi ugt, %kj, %qi : index
          %hidden = arith.andi %is_causal, %future : i1
          %shown = arith.xori %hidden, %true : i1
          %keep = arith.andi %shown, %inside : i1
          %v = arith.select %keep, %x, %ninf : f32
          scf.yield %v : f32
        } else {
          scf.yield %x : f32
        }
        memref.store %y, %S[%i, %j] : memref<64x64xf32, #tile.scope<fragment>>
      }
      tile.reduce max %S into %mb {dim = 1 : i64, clear} : memref<64x64xf32, #tile.scope<fragment>> into memref<64xf32, #tile.scope<fragment>>
      // New running max; alpha rescales what was accumulated so far (0 in
      // the first tile, where m is -inf; key 0 is never masked, so m is
      // finite from then on).
      tile.parallel (%i) in [64] {
        %mo = memref.load %m[%i] : memref<64xf32, #tile.scope<fragment>>
        %mt = memref.load %mb[%i] : memref<64xf32, #tile.scope<fragment>>
        %mn = arith.maximumf %mo, %mt : f32
        %d = arith.subf %mo, %mn : f32
        %a = math.exp2 %d : f32
        memref.store %a, %alpha[%i] : memref<64xf32, #tile.scope<fragment>>
        memref.store %mn, %m[%i] : memref<64xf32, #tile.scope<fragment>>
      }
      tile.parallel (%i, %j) in [64, 64] {
        %s = memref.load %S[%i, %j] : memref<64x64xf32, #tile.scope<fragment>>
        %mi = memref.load %m[%i] : memref<64xf32, #tile.scope<fragment>>
        %d = arith.subf %s, %mi : f32
        %p = math.exp2 %d : f32
        %pt = arith.truncf %p : f32 to bf16
        memref.store %p, %S[%i, %j] : memref<64x64xf32, #tile.scope<fragment>>
        memref.store %pt, %P[%i, %j] : memref<64x64xbf16, #tile.scope<fragment>>
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
      tile.parallel (%i, %d) in [64, 128] {
        %o = memref.load %Of[%i, %d] : memref<64x128xf32, #tile.scope<fragment>>
        %a = memref.load %alpha[%i] : memref<64xf32, #tile.scope<fragment>>
        %r = arith.mulf %o, %a : f32
        memref.store %r, %Of[%i, %d] : memref<64x128xf32, #tile.scope<fragment>>
      }
      tile.gemm %P, %Vs, %Of : memref<64x64xbf16, #tile.scope<fragment>>, memref<64x128xbf16, #tile.scope<shared>>, memref<64x128xf32, #tile.scope<fragment>>
    }
    // O /= l: one reciprocal per row, then multiplies.
    tile.parallel (%i) in [64] {
      %li = memref.load %l[%i] : memref<64xf32, #tile.scope<fragment>>
      %inv = arith.divf %one, %li : f32
      memref.store %inv, %l[%i] : memref<64xf32, #tile.scope<fragment>>
    }
    tile.parallel (%i, %d) in [64, 128] {
      %o = memref.load %Of[%i, %d] : memref<64x128xf32, #tile.scope<fragment>>
      %inv = memref.load %l[%i] : memref<64xf32, #tile.scope<fragment>>
      %r = arith.mulf %o, %inv : f32
      memref.store %r, %Of[%i, %d] : memref<64x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Of to %O[%b, %h, %q0, %c0] drop_dims [0, 1] : memref<64x128xf32, #tile.scope<fragment>> to memref<?x?x?x128xbf16>
  }
  return
}
