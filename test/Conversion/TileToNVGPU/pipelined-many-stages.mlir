// RUN: tile-opt %s --tile-infer-layouts --convert-tile-to-nvgpu=chip=sm_90a --canonicalize --cse | FileCheck %s

// Many stages (12 x 16 KiB fits in sm_90a's 227 KiB): the prologue that
// issues the first 11 iterations is a loop, not 11 unrolled copies, so the
// lowering's size does not grow with the stage count. An empty group is
// committed first; the waits name its token.
// CHECK-LABEL: gpu.func @gemm12_kernel
// CHECK: %[[T:.*]] = nvgpu.device_async_create_group
// CHECK-NEXT: scf.for %[[S:.*]] = %c0 to %c11 step %c1 {
// CHECK: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_create_group
// CHECK-NEXT: }
// CHECK: scf.for {{.*}} iter_args
// CHECK: nvgpu.device_async_wait %[[T]] {numGroups = 10 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK: nvgpu.device_async_wait %[[T]] {numGroups = 0 : i32}
func.func @gemm12(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf16>)
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %nk = arith.ceildivui %K, %c32 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %As = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    tile.clear %Cf : memref<128x128xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(12) {
      %k0 = arith.muli %k, %c32 : index
      tile.copy %A[%c0, %k0] to %As : memref<?x?xf16> to memref<128x32xf16, #tile.scope<shared>>
      tile.copy %B[%k0, %c0] to %Bs : memref<?x?xf16> to memref<32x128xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<128x32xf16, #tile.scope<shared>>, memref<32x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%c0, %c0] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}
