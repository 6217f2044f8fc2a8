// RUN: tile-opt %s -split-input-file --tile-attach-metadata=target=cuda --tile-infer-layouts --convert-tile-to-nvgpu=chip=sm_80 --canonicalize --cse | FileCheck %s
// RUN: tile-opt %tile_src_root/examples/batched_gemm.mlir --tile-attach-metadata=target=cuda --tile-infer-layouts --convert-tile-to-nvgpu=chip=sm_80 --canonicalize --cse | FileCheck %s --check-prefix=BATCHED

// Batched GEMM: the rank-reducing copies of A and B stay 16-byte cp.async
// chunks indexed [batch, row, col], and the accumulator leaves as paired
// vector stores into the 3-D C.
// BATCHED-LABEL: gpu.func @batched_gemm_kernel
// BATCHED: nvgpu.device_async_copy %arg0[%block_id_z, %{{.+}}, %{{.+}}], %{{.+}}, 8, %{{.+}} {bypassL1} : memref<?x?x?xf16>
// BATCHED: nvgpu.device_async_copy %arg1[%block_id_z, %{{.+}}, %{{.+}}], %{{.+}}, 8, %{{.+}} {bypassL1} : memref<?x?x?xf16>
// BATCHED: nvgpu.mma.sync
// BATCHED: vector.store %{{.+}}, %arg2[%block_id_z, %{{.+}}, %{{.+}}] {alignment = 4 : i64} : memref<?x?x?xf16>, vector<2xf16>

// A copy that drops the tensor's last dim reads a column of it: no 16-byte
// chunks (element-wise loads, bounds-checked in every dim).
// CHECK-LABEL: gpu.func @drop_last_dim_kernel
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: memref.load %arg0[%{{.+}}, %{{.+}}, %{{.+}}] : memref<?x?x?xf16>
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: gpu.return
func.func @drop_last_dim(%A: memref<?x?x?xf16>, %i: index) attributes {tile.kernel} {
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %s = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    tile.copy %A[%i, %i, %i] to %s drop_dims [2] : memref<?x?x?xf16> to memref<64x32xf16, #tile.scope<shared>>
  }
  return
}

// -----

// A strided view of a kernel parameter (memref.subview) is cloned into the
// kernel and copied element-wise (cp.async needs a row-major tensor).
// CHECK-LABEL: gpu.func @strided_view_kernel
// CHECK: memref.subview %arg0
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: gpu.return
func.func @strided_view(%A: memref<?x?x?xf16>, %i: index) attributes {tile.kernel} {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %s = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    %v = memref.subview %A[%i, 0, 0] [1, %c64, %c64] [1, 1, 1] : memref<?x?x?xf16> to memref<?x?xf16, strided<[?, 1], offset: ?>>
    tile.copy %v[%i, %i] to %s : memref<?x?xf16, strided<[?, 1], offset: ?>> to memref<64x32xf16, #tile.scope<shared>>
  }
  return
}
