// RUN: tile-opt %tile_src_root/examples/linear.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize | FileCheck %s --check-prefix=WS
// RUN: tile-opt %tile_src_root/examples/linear.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize --convert-tile-gemm-to-sm90 | FileCheck %s
// RUN: tile-opt %tile_src_root/examples/linear.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize="schedule=pingpong" --convert-tile-gemm-to-sm90 | FileCheck %s --check-prefix=PP
// RUN: tilec %tile_src_root/examples/linear.mlir --target=cuda --chip=sm_90a -o %t.tileb
// RUN: tilec --info %t.tileb --section=metadata | FileCheck %s --check-prefix=META

// A GEMM whose B is stored N x K (`transpose_b`, examples/linear.mlir: a
// linear layer's weight) takes the Hopper kernels too: W's TMA boxes are
// 64 rows of N by 64 K (coordinates (k, n), innermost first), K-major in
// the 128B swizzle like X's, and every wgmma reads B K-major (layout col)
// with A K-major (row).

// WS: tile.pipelined {{.*}} attributes {sm90.warp_specialize =

// CHECK-LABEL: gpu.func @linear_kernel_sm90_ldg(
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// CHECK-LABEL: gpu.func @linear_kernel_sm90(
// The producer: X's 128x64 box at (k, m), then W's two 64x64 boxes at
// (k, n) and (k, n + 64).
// CHECK: nvgpu.tma.async.load %[[MAPX:.*]][%[[K:.*]], %{{.*}}], {{.*}} : <tensor = memref<128x64xf16
// CHECK: nvgpu.tma.async.load %[[MAPW:.*]][%[[K]], %{{.*}}], {{.*}} : <tensor = memref<64x64xf16
// CHECK: nvgpu.tma.async.load %[[MAPW]][%[[K]], %{{.*}}], {{.*}} : <tensor = memref<64x64xf16
// The consumers: four m64n128k16 per 64 K, both descriptors 32 bytes (2
// units) further per 16 K; then commit and wait_group 1.
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// CHECK: llvm.mlir.constant(2 : i64)
// CHECK: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK-LABEL: gpu.func @linear_kernel_sm90_wide(
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 256, k = 16>, {{.*}} A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// CHECK-LABEL: gpu.func @linear_kernel_sm90_sk(
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, {{.*}} A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// The narrow kernels: W's box is wgmma's A operand, K-major as stored.
// CHECK-LABEL: gpu.func @linear_kernel_sm90_nr64(
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, {{.*}} A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// CHECK-LABEL: gpu.func @linear_kernel_sm90_nr16(
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 16, k = 16>, {{.*}} A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]

// Ping-pong: one consumer warpgroup holds the unit's 128 rows, two 64-row
// blocks of X 8192 bytes (512 units) apart against the same W descriptor.
// PP-LABEL: gpu.func @linear_kernel_sm90(
// PP: nvvm.wgmma.mma_async %[[A0:.*]], %[[B0:.*]], %{{.*}}, <m = 64, n = 128, k = 16>
// PP: nvvm.wgmma.mma_async %{{.*}}, %[[B0]], %{{.*}}, <m = 64, n = 128, k = 16>

// META: "kernel": "linear_kernel_sm90",
// META: "box": [
// META-NEXT: 64,
// META-NEXT: 128
// META-NEXT: ],
// META: "param": 0,
// META: "box": [
// META-NEXT: 64,
// META-NEXT: 64
// META-NEXT: ],
// META: "param": 1,
