// Attention scores over [B, H, S, D] tensors: S[b, h] = scale * Q[b, h] x
// K[b, h]^T, with Q in the [B, H, S, D] layout and K in [B, S, H, D] (the
// layout of a fused QKV projection), S out as [B, H, S, S] f32. Every copy
// is rank-reducing: 64x32 tiles of the 4-D tensors with the batch and head
// dims dropped (drop_dims [0, 1] for Q and S, [0, 2] for K). The grid is
// (key tiles, query tiles, B * H); any S and D.
func.func @attention_scores(%Q: memref<?x?x?x?xf16> {tile.name = "Q", tile.dims = ["B", "H", "S", "D"]},
                            %K: memref<?x?x?x?xf16> {tile.name = "K", tile.dims = ["B", "S", "H", "D"]},
                            %S: memref<?x?x?x?xf32> {tile.name = "S", tile.dims = ["B", "H", "S", "S"], tile.output},
                            %scale: f32 {tile.name = "scale"})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %B = memref.dim %Q, %c0 : memref<?x?x?x?xf16>
  %H = memref.dim %Q, %c1 : memref<?x?x?x?xf16>
  %L = memref.dim %Q, %c2 : memref<?x?x?x?xf16>
  %D = memref.dim %Q, %c3 : memref<?x?x?x?xf16>
  %bh = arith.muli %B, %H : index
  %gl = arith.ceildivui %L, %c64 : index
  %nk = arith.ceildivui %D, %c32 : index
  tile.launch blocks(%bx, %by, %bz) in (%gl, %gl, %bh) threads(128) {
    %Qs = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    %Ks = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    %Sf = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    %b = arith.divui %bz, %H : index
    %h = arith.remui %bz, %H : index
    %q0 = arith.muli %by, %c64 : index
    %k0 = arith.muli %bx, %c64 : index
    tile.clear %Sf : memref<64x64xf32, #tile.scope<fragment>>
    tile.pipelined %kd = %c0 to %nk step %c1 stages(2) {
      %d0 = arith.muli %kd, %c32 : index
      tile.copy %Q[%b, %h, %q0, %d0] to %Qs drop_dims [0, 1] : memref<?x?x?x?xf16> to memref<64x32xf16, #tile.scope<shared>>
      tile.copy %K[%b, %k0, %h, %d0] to %Ks drop_dims [0, 2] : memref<?x?x?x?xf16> to memref<64x32xf16, #tile.scope<shared>>
      tile.gemm %Qs, %Ks, %Sf {transpose_b} : memref<64x32xf16, #tile.scope<shared>>, memref<64x32xf16, #tile.scope<shared>>, memref<64x64xf32, #tile.scope<fragment>>
    }
    tile.parallel (%i, %j) in [64, 64] {
      %v = memref.load %Sf[%i, %j] : memref<64x64xf32, #tile.scope<fragment>>
      %s = arith.mulf %v, %scale : f32
      memref.store %s, %Sf[%i, %j] : memref<64x64xf32, #tile.scope<fragment>>
    }
    tile.copy %Sf to %S[%b, %h, %q0, %k0] drop_dims [0, 1] : memref<64x64xf32, #tile.scope<fragment>> to memref<?x?x?x?xf32>
  }
  return
}
