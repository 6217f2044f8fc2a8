// B[f, i] = f(A[i]) for every float math op the Python front end emits
// (T.exp ... T.round): each target lowers all of them (the CUDA C++ and
// Metal sources through their headers, HIP without the device libraries:
// tan and tanh expanded, NVVM's trunc as llvm.intr.trunc).
func.func @math_functions(%A: memref<?xf32> {tile.name = "A", tile.dims = ["N"]},
                          %B: memref<18x?xf32> {tile.name = "B", tile.dims = ["F", "N"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %N = memref.dim %A, %c0 : memref<?xf32>
  %g = arith.ceildivui %N, %c64 : index
  tile.launch blocks(%b) in (%g) threads(64) {
    %a = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    %y = tile.alloc : memref<18x64xf32, #tile.scope<fragment>>
    %n0 = arith.muli %b, %c64 : index
    tile.copy %A[%n0] to %a : memref<?xf32> to memref<64xf32, #tile.scope<fragment>>
    tile.parallel (%i) in [64] {
      %x = memref.load %a[%i] : memref<64xf32, #tile.scope<fragment>>
      %v0 = math.exp %x : f32
      %v1 = math.exp2 %x : f32
      %v2 = math.log %x : f32
      %v3 = math.log2 %x : f32
      %v4 = math.log10 %x : f32
      %v5 = math.log1p %x : f32
      %v6 = math.sqrt %x : f32
      %v7 = math.rsqrt %x : f32
      %v8 = math.sin %x : f32
      %v9 = math.cos %x : f32
      %v10 = math.tan %x : f32
      %v11 = math.tanh %x : f32
      %v12 = math.erf %x : f32
      %v13 = math.floor %x : f32
      %v14 = math.ceil %x : f32
      %v15 = math.trunc %x : f32
      %v16 = math.roundeven %x : f32
      %v17 = math.absf %x : f32
      %c0_ = arith.constant 0 : index
      memref.store %v0, %y[%c0_, %i] : memref<18x64xf32, #tile.scope<fragment>>
      %c1_ = arith.constant 1 : index
      memref.store %v1, %y[%c1_, %i] : memref<18x64xf32, #tile.scope<fragment>>
      %c2_ = arith.constant 2 : index
      memref.store %v2, %y[%c2_, %i] : memref<18x64xf32, #tile.scope<fragment>>
      %c3_ = arith.constant 3 : index
      memref.store %v3, %y[%c3_, %i] : memref<18x64xf32, #tile.scope<fragment>>
      %c4_ = arith.constant 4 : index
      memref.store %v4, %y[%c4_, %i] : memref<18x64xf32, #tile.scope<fragment>>
      %c5_ = arith.constant 5 : index
      memref.store %v5, %y[%c5_, %i] : memref<18x64xf32, #tile.scope<fragment>>
      %c6_ = arith.constant 6 : index
      memref.store %v6, %y[%c6_, %i] : memref<18x64xf32, #tile.scope<fragment>>
      %c7_ = arith.constant 7 : index
      memref.store %v7, %y[%c7_, %i] : memref<18x64xf32, #tile.scope<fragment>>
      %c8_ = arith.constant 8 : index
      memref.store %v8, %y[%c8_, %i] : memref<18x64xf32, #tile.scope<fragment>>
      %c9_ = arith.constant 9 : index
      memref.store %v9, %y[%c9_, %i] : memref<18x64xf32, #tile.scope<fragment>>
      %c10_ = arith.constant 10 : index
      memref.store %v10, %y[%c10_, %i] : memref<18x64xf32, #tile.scope<fragment>>
      %c11_ = arith.constant 11 : index
      memref.store %v11, %y[%c11_, %i] : memref<18x64xf32, #tile.scope<fragment>>
      %c12_ = arith.constant 12 : index
      memref.store %v12, %y[%c12_, %i] : memref<18x64xf32, #tile.scope<fragment>>
      %c13_ = arith.constant 13 : index
      memref.store %v13, %y[%c13_, %i] : memref<18x64xf32, #tile.scope<fragment>>
      %c14_ = arith.constant 14 : index
      memref.store %v14, %y[%c14_, %i] : memref<18x64xf32, #tile.scope<fragment>>
      %c15_ = arith.constant 15 : index
      memref.store %v15, %y[%c15_, %i] : memref<18x64xf32, #tile.scope<fragment>>
      %c16_ = arith.constant 16 : index
      memref.store %v16, %y[%c16_, %i] : memref<18x64xf32, #tile.scope<fragment>>
      %c17_ = arith.constant 17 : index
      memref.store %v17, %y[%c17_, %i] : memref<18x64xf32, #tile.scope<fragment>>
    }
    tile.copy %y to %B[%c0, %n0] : memref<18x64xf32, #tile.scope<fragment>> to memref<18x?xf32>
  }
  return
}
