// C = relu(A x B + bias), the GEMM of examples/gemm.mlir with an epilogue on
// the accumulator: 128x128 output tiles, a 3-stage pipelined K loop of 32.
// A is MxK, B is KxN, bias has N elements, C is MxN (f16 in, f32
// accumulate, f16 out); any M, N, K.
//
// The epilogue is a tile.parallel over the accumulator tile: each element
// adds bias[n] (read from global memory; the column index is clamped to
// N - 1 so that the tail tile's columns past N read a valid element -- their
// results are dropped by the bounds-checked copy out) and applies ReLU, in
// registers (the parallel body runs on each thread's own accumulator
// elements).
//
// numpy: C = np.maximum(A @ B + bias, 0)
func.func @gemm_epilogue(%A: memref<?x?xf16> {tile.name = "A", tile.dims = ["M", "K"]},
                         %B: memref<?x?xf16> {tile.name = "B", tile.dims = ["K", "N"]},
                         %bias: memref<?xf16> {tile.name = "bias", tile.dims = ["N"]},
                         %C: memref<?x?xf16> {tile.name = "C", tile.dims = ["M", "N"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  %M = memref.dim %A, %c0 : memref<?x?xf16>
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %N = memref.dim %B, %c1 : memref<?x?xf16>
  %Nm1 = arith.subi %N, %c1 : index
  %gy = arith.ceildivui %M, %c128 : index
  %gx = arith.ceildivui %N, %c128 : index
  %nk = arith.ceildivui %K, %c32 : index
  tile.launch blocks(%bx, %by) in (%gx, %gy) threads(128) attributes {raster = #tile.raster<panel = 8>} {
    %As = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    %m0 = arith.muli %by, %c128 : index
    %n0 = arith.muli %bx, %c128 : index
    tile.clear %Cf : memref<128x128xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(3) {
      %k0 = arith.muli %k, %c32 : index
      tile.copy %A[%m0, %k0] to %As : memref<?x?xf16> to memref<128x32xf16, #tile.scope<shared>>
      tile.copy %B[%k0, %n0] to %Bs : memref<?x?xf16> to memref<32x128xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<128x32xf16, #tile.scope<shared>>, memref<32x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.parallel (%i, %j) in [128, 128] {
      %acc = memref.load %Cf[%i, %j] : memref<128x128xf32, #tile.scope<fragment>>
      %n = arith.addi %n0, %j : index
      %nc = arith.minui %n, %Nm1 : index
      %b = memref.load %bias[%nc] : memref<?xf16>
      %bf = arith.extf %b : f16 to f32
      %s = arith.addf %acc, %bf : f32
      %r = arith.maximumf %s, %zero : f32
      memref.store %r, %Cf[%i, %j] : memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%m0, %n0] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}
