// RUN: tile-opt %s --tile-attach-metadata=target=hip --tile-infer-layouts=matrix-core=mfma --convert-tile-to-amdgpu --canonicalize --cse | FileCheck %s

// A row softmax of 4 rows over 128 threads on wave64: a wave per row
// (rows 0 and 2 in wave 0), the row max and sum reduced thread-locally,
// then by a 6-step xor butterfly over the 64 lanes of the row's wave
// (widths 64), where they stay: no LDS scratch, no barrier.
// CHECK: tile.kernel_info = #tile.kernel_info<{{.*}}shared_bytes = 0>
// CHECK-LABEL: gpu.func @softmax4_kernel
// CHECK: arith.maximumf
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c64_i32 : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c32_i32, %c64_i32 : f32
// CHECK-NOT: gpu.barrier
// CHECK: math.exp
// CHECK: gpu.shuffle  xor
// CHECK: arith.divf
// CHECK: gpu.return
func.func @softmax4(%X: memref<?x1024xf32> {tile.name = "X", tile.dims = ["M", "N"]},
                    %Y: memref<?x1024xf32> {tile.name = "Y", tile.dims = ["M", "N"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %M = memref.dim %X, %c0 : memref<?x1024xf32>
  %Mp = arith.addi %M, %c3 : index
  %blocks = arith.divui %Mp, %c4 : index
  tile.launch blocks(%bx) in (%blocks) threads(128) {
    %x = tile.alloc : memref<4x1024xf32, #tile.scope<fragment>>
    %mx = tile.alloc : memref<4xf32, #tile.scope<fragment>>
    %sum = tile.alloc : memref<4xf32, #tile.scope<fragment>>
    %row = arith.muli %bx, %c4 : index
    tile.copy %X[%row, %c0] to %x : memref<?x1024xf32> to memref<4x1024xf32, #tile.scope<fragment>>
    tile.reduce max %x into %mx {dim = 1 : i64, clear} : memref<4x1024xf32, #tile.scope<fragment>> into memref<4xf32, #tile.scope<fragment>>
    tile.parallel (%i, %j) in [4, 1024] {
      %v = memref.load %x[%i, %j] : memref<4x1024xf32, #tile.scope<fragment>>
      %m = memref.load %mx[%i] : memref<4xf32, #tile.scope<fragment>>
      %d = arith.subf %v, %m : f32
      %e = math.exp %d : f32
      memref.store %e, %x[%i, %j] : memref<4x1024xf32, #tile.scope<fragment>>
    }
    tile.reduce sum %x into %sum {dim = 1 : i64, clear} : memref<4x1024xf32, #tile.scope<fragment>> into memref<4xf32, #tile.scope<fragment>>
    tile.parallel (%i, %j) in [4, 1024] {
      %e = memref.load %x[%i, %j] : memref<4x1024xf32, #tile.scope<fragment>>
      %s = memref.load %sum[%i] : memref<4xf32, #tile.scope<fragment>>
      %y = arith.divf %e, %s : f32
      memref.store %y, %x[%i, %j] : memref<4x1024xf32, #tile.scope<fragment>>
    }
    tile.copy %x to %Y[%row, %c0] : memref<4x1024xf32, #tile.scope<fragment>> to memref<?x1024xf32>
  }
  return
}
