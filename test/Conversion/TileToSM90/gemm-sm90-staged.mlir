// RUN: tile-opt %s --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize="persistent=false" --convert-tile-gemm-to-sm90 | FileCheck %s

// Staged epilogue operands (GemmMatch.h): the bias tiles the program copies
// into shared memory (colb before the K loop, rowb after it, converted to
// f32) are read from global memory by the Hopper kernels' epilogue: the
// element the copy would have put there, zero out of bounds, converted to
// the staged buffer's type. No shared memory is set aside for them.

// CHECK-LABEL: gpu.func @staged_bias_kernel_sm90(
// CHECK-SAME: %[[ROWB:[a-z0-9]+]]: memref<?xf16>, %[[COLB:[a-z0-9]+]]: memref<?xf16>
// CHECK: nvgpu.warpgroup.mma
// Each element: one predicated load (zero unless the index is below the
// tensor's dim), no branch; rowb's converted to f32 like its copy.
// CHECK: %[[RDIM:.*]] = memref.dim %[[ROWB]]
// CHECK: %[[RIN:.*]] = arith.cmpi ult, %{{.*}}, %[[RDIM]] : index
// CHECK: memref.extract_strided_metadata %[[ROWB]]
// CHECK: %[[R:.*]] = llvm.inline_asm asm_dialect = att "{ mov.b16 $0, 0; @$2 ld.global.b16 $0, [$1]; }", "=h,l,b" %{{.*}}, %[[RIN]] : (!llvm.ptr, i1) -> i16
// CHECK: %[[RF:.*]] = arith.bitcast %[[R]] : i16 to f16
// CHECK: arith.extf %[[RF]] : f16 to f32
// CHECK: memref.dim %[[COLB]]
// CHECK: memref.extract_strided_metadata %[[COLB]]
// CHECK: llvm.inline_asm
// CHECK-NOT: scf.if %{{.*}} -> (f16)

func.func @staged_bias(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %rowb: memref<?xf16>, %colb: memref<?xf16>, %C: memref<?x?xf16>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %nk = arith.ceildivui %K, %c32 : index
  tile.launch blocks(%bx, %by) in (%c1, %c1) threads(128) {
    %As = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %cs = tile.alloc : memref<128xf16, #tile.scope<shared>>
    %rs = tile.alloc : memref<128xf32, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    %m0 = arith.muli %by, %c128 : index
    %n0 = arith.muli %bx, %c128 : index
    tile.copy %colb[%n0] to %cs : memref<?xf16> to memref<128xf16, #tile.scope<shared>>
    tile.clear %Cf : memref<128x128xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(3) {
      %k0 = arith.muli %k, %c32 : index
      tile.copy %A[%m0, %k0] to %As : memref<?x?xf16> to memref<128x32xf16, #tile.scope<shared>>
      tile.copy %B[%k0, %n0] to %Bs : memref<?x?xf16> to memref<32x128xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<128x32xf16, #tile.scope<shared>>, memref<32x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.copy %rowb[%m0] to %rs : memref<?xf16> to memref<128xf32, #tile.scope<shared>>
    tile.parallel (%i, %j) in [128, 128] {
      %acc = memref.load %Cf[%i, %j] : memref<128x128xf32, #tile.scope<fragment>>
      %rb = memref.load %rs[%i] : memref<128xf32, #tile.scope<shared>>
      %cb = memref.load %cs[%j] : memref<128xf16, #tile.scope<shared>>
      %cbf = arith.extf %cb : f16 to f32
      %s0 = arith.addf %acc, %rb : f32
      %s = arith.addf %s0, %cbf : f32
      memref.store %s, %Cf[%i, %j] : memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%m0, %n0] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}
