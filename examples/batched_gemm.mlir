// C[b] = A[b] x B[b] over a batch: A is BxMxK, B is BxKxN, C is BxMxN (f16
// in, f32 accumulate, f16 out); any B, M, N, K. A 3-D grid (N tiles, M
// tiles, batch); the copies take 2-D tiles out of the 3-D tensors directly
// (`drop_dims [0]` drops the unit batch dim), so no staging tile is needed.
// 128x128 output tiles (on sm_90a the TMA + wgmma kernels, as for
// examples/gemm.mlir); K steps of 16 keep the 3 stages at 24 KiB of shared
// memory, within every target's limit (Metal's 32 KiB included).
func.func @batched_gemm(%A: memref<?x?x?xf16> {tile.name = "A", tile.dims = ["B", "M", "K"]},
                        %B: memref<?x?x?xf16> {tile.name = "B", tile.dims = ["B", "K", "N"]},
                        %C: memref<?x?x?xf16> {tile.name = "C", tile.dims = ["B", "M", "N"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %batch = memref.dim %A, %c0 : memref<?x?x?xf16>
  %M = memref.dim %A, %c1 : memref<?x?x?xf16>
  %K = memref.dim %A, %c2 : memref<?x?x?xf16>
  %N = memref.dim %B, %c2 : memref<?x?x?xf16>
  %gy = arith.ceildivui %M, %c128 : index
  %gx = arith.ceildivui %N, %c128 : index
  %nk = arith.ceildivui %K, %c16 : index
  tile.launch blocks(%bx, %by, %bz) in (%gx, %gy, %batch) threads(128) {
    %As = tile.alloc : memref<128x16xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<16x128xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    %m0 = arith.muli %by, %c128 : index
    %n0 = arith.muli %bx, %c128 : index
    tile.clear %Cf : memref<128x128xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(3) {
      %k0 = arith.muli %k, %c16 : index
      tile.copy %A[%bz, %m0, %k0] to %As drop_dims [0] : memref<?x?x?xf16> to memref<128x16xf16, #tile.scope<shared>>
      tile.copy %B[%bz, %k0, %n0] to %Bs drop_dims [0] : memref<?x?x?xf16> to memref<16x128xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<128x16xf16, #tile.scope<shared>>, memref<16x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%bz, %m0, %n0] drop_dims [0] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?x?xf16>
  }
  return
}
