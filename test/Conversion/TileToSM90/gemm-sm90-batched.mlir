// RUN: tile-opt %tile_src_root/examples/batched_gemm.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize | FileCheck %s --check-prefix=WS
// RUN: tile-opt %tile_src_root/examples/batched_gemm.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize --convert-tile-gemm-to-sm90 | FileCheck %s
// RUN: tile-opt %tile_src_root/examples/batched_gemm.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize --convert-tile-gemm-to-sm90=remarks=1 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: tilec %tile_src_root/examples/batched_gemm.mlir --target=cuda --chip=sm_90a -o %t.tileb
// RUN: tilec --info %t.tileb --section=metadata | FileCheck %s --check-prefix=META

// A batched GEMM (examples/batched_gemm.mlir: BxMxK times BxKxN, the copies
// drop the batch dim) takes the Hopper kernels: the TMA maps have the
// tensors' rank (boxes of one batch element, coordinates (k, m, b)
// innermost first), the loads without TMA and the epilogues read and
// write the batch's matrix through rank-reduced views.

// WS: tile.pipelined {{.*}} attributes {sm90.warp_specialize =

// The views have no rows when the batch index is outside the tensor (a
// grid larger than the batch), as tile.copy's out-of-bounds elements.
// CHECK-LABEL: gpu.func @batched_gemm_kernel_sm90_ldg(
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[BATCH:[a-z0-9_]+]], %{{.*}} : index
// CHECK: %[[ROWS:.*]] = arith.select %[[IN]], %{{.*}}, %{{.*}} : index
// CHECK: memref.subview %arg{{[0-2]}}[%[[BATCH]], 0, 0] [1, %[[ROWS]], %{{.*}}] [1, 1, 1] : memref<?x?x?xf16> to memref<?x?xf16, strided<[?, 1], offset: ?>>
// CHECK: memref.subview %arg1[%{{.*}}, 0, 0] [1, %{{.*}}, %{{.*}}] [1, 1, 1]
// CHECK: memref.subview %arg2[%{{.*}}, 0, 0] [1, %{{.*}}, %{{.*}}] [1, 1, 1]
// The persistent kernel: A's 128x64 box at (k, m, b), B's two 64x64 boxes
// at (n, k, b); C's TMA stores at (n, m, b).
// CHECK-LABEL: gpu.func @batched_gemm_kernel_sm90(
// CHECK: nvgpu.tma.async.load %{{.*}}[%[[K:.*]], %{{.*}}, %[[B:.*]]], {{.*}} : <tensor = memref<1x128x64xf16
// CHECK: nvgpu.tma.async.load %{{.*}}[%{{.*}}, %[[K]], %[[B]]], {{.*}} : <tensor = memref<1x64x64xf16
// CHECK: nvgpu.tma.async.load %{{.*}}[%{{.*}}, %[[K]], %[[B]]], {{.*}} : <tensor = memref<1x64x64xf16
// CHECK: nvgpu.warpgroup.mma
// CHECK: nvgpu.tma.async.store %{{.*}} to %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : memref<1x64x64xf16
// CHECK-LABEL: gpu.func @batched_gemm_kernel_sm90_wide(
// CHECK-COUNT-5: nvgpu.tma.async.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}]
// CHECK-LABEL: gpu.func @batched_gemm_kernel_sm90_sk(
// CHECK: nvgpu.tma.async.load %{{.*}}[%{{.*}}, %{{.*}}, %[[SB:.*]]], {{.*}} : <tensor = memref<1x128x64xf16
// CHECK: nvgpu.tma.async.load %{{.*}}[%{{.*}}, %{{.*}}, %[[SB]]], {{.*}} : <tensor = memref<1x64x64xf16
// CHECK-NOT: gpu.func @batched_gemm_kernel_sm90_nr

// The narrow kernels' runtime rule reads the rows from dim 0 (the batch).
// REMARK: remark: sm90: no narrow-row variant of 16 rows for this GEMM: the operands are batched (the runtime's max_rows rule reads the rows from dim 0)

// META-LABEL: "kernel": "batched_gemm_kernel_sm90_sk"
// META: "k_dim": 2,
// META: "box": [
// META-NEXT: 64,
// META-NEXT: 128,
// META-NEXT: 1
// META-NEXT: ],
