// RUN: tile-opt %s --tile-attach-metadata=target=cuda --tile-infer-layouts=wgmma=true --convert-tile-to-nvgpu="chip=sm_90a remarks=true" -verify-diagnostics -o /dev/null

// The persistent TMA form double-buffers head copies (Q) when two stages
// fit; here they do not (two 128 KiB stages of Q), so it keeps one and
// says so (remarks=true). The kernel itself is
// warp-specialize-persistent.mlir's `big`.
func.func @big(%Q: memref<?x?xf16>, %K: memref<?x?xf16>, %O: memref<?x?xf32> {tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %M = memref.dim %Q, %c0 : memref<?x?xf16>
  %N = memref.dim %K, %c0 : memref<?x?xf16>
  %gq = arith.ceildivui %M, %c256 : index
  %nk = arith.ceildivui %N, %c64 : index
  // expected-remark @below {{TMA-producer variant with one stage of head copies: two stages of its head copies need 327784 bytes of shared memory, more than the 232432 sm_90a allows}}
  tile.launch blocks(%bx) in (%gq) threads(256) {
    %Qs = tile.alloc : memref<256x256xf16, #tile.scope<shared>>
    %Ks = tile.alloc : memref<64x256xf16, #tile.scope<shared>>
    %S = tile.alloc : memref<256x64xf32, #tile.scope<fragment>>
    %q0 = arith.muli %bx, %c256 : index
    tile.copy %Q[%q0, %c0] to %Qs : memref<?x?xf16> to memref<256x256xf16, #tile.scope<shared>>
    tile.clear %S : memref<256x64xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(2) {
      %k0 = arith.muli %k, %c64 : index
      tile.copy %K[%k0, %c0] to %Ks : memref<?x?xf16> to memref<64x256xf16, #tile.scope<shared>>
      // The 256-row accumulator over 8 warps has no 16-row strip per warp.
      // expected-remark @below {{tile.gemm not lowered to wgmma: C's layout does not give each warp one 16-row strip}}
      tile.gemm %Qs, %Ks, %S {transpose_b} : memref<256x256xf16, #tile.scope<shared>>, memref<64x256xf16, #tile.scope<shared>>, memref<256x64xf32, #tile.scope<fragment>>
    }
    tile.copy %S to %O[%q0, %c0] : memref<256x64xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}
