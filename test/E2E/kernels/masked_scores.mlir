// M[i] = max over keys j <= i (j < S) of Q[i] . K[j]: the score tile is
// filled with the padding and causal mask (0 or -inf) before each key
// tile's gemm accumulates onto it, TileLang's attention idiom. Interior
// key tiles run the unmasked copy tile-specialize-uniform-masks makes;
// the diagonal and last tiles the masked one.
func.func @masked_scores(%Q: memref<?x64xf16> {tile.name = "Q", tile.dims = ["S", "64"]},
                         %K: memref<?x64xf16> {tile.name = "K", tile.dims = ["S", "64"]},
                         %M: memref<?xf32> {tile.name = "M", tile.dims = ["S"]})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %S = memref.dim %Q, %c0 : memref<?x64xf16>
  %g = arith.ceildivui %S, %c64 : index
  tile.launch blocks(%b) in (%g) threads(128) {
    %Qs = tile.alloc : memref<64x64xf16, #tile.scope<shared>>
    %Ks = tile.alloc : memref<32x64xf16, #tile.scope<shared>>
    %acc = tile.alloc : memref<64x32xf32, #tile.scope<fragment>>
    %m = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    %q0 = arith.muli %b, %c64 : index
    tile.copy %Q[%q0, %c0] to %Qs : memref<?x64xf16> to memref<64x64xf16, #tile.scope<shared>>
    tile.fill %m, %ninf : memref<64xf32, #tile.scope<fragment>>, f32
    %qend = arith.addi %q0, %c64 : index
    %last = arith.minui %qend, %S : index
    %nk = arith.ceildivui %last, %c32 : index
    tile.pipelined %k = %c0 to %nk step %c1 stages(2) {
      %k0 = arith.muli %k, %c32 : index
      tile.copy %K[%k0, %c0] to %Ks : memref<?x64xf16> to memref<32x64xf16, #tile.scope<shared>>
      tile.parallel (%i, %j) in [64, 32] {
        %kj = arith.addi %k0, %j : index
        %in = arith.cmpi slt, %kj, %S : index
        %qi = arith.addi %q0, %i : index
        %past = arith.cmpi sle, %kj, %qi : index
        %vis = arith.andi %in, %past : i1
        %v = arith.select %vis, %zero, %ninf : f32
        memref.store %v, %acc[%i, %j] : memref<64x32xf32, #tile.scope<fragment>>
      }
      tile.gemm %Qs, %Ks, %acc {transpose_b} : memref<64x64xf16, #tile.scope<shared>>, memref<32x64xf16, #tile.scope<shared>>, memref<64x32xf32, #tile.scope<fragment>>
      tile.reduce max %acc into %m {dim = 1 : i64} : memref<64x32xf32, #tile.scope<fragment>> into memref<64xf32, #tile.scope<fragment>>
    }
    tile.copy %m to %M[%q0] : memref<64xf32, #tile.scope<fragment>> to memref<?xf32>
  }
  return
}
