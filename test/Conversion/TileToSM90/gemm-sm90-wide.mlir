// RUN: tile-opt %tile_src_root/examples/gemm.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize --convert-tile-gemm-to-sm90 | FileCheck %s
// RUN: tile-opt %tile_src_root/examples/gemm_epilogue.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize --convert-tile-gemm-to-sm90 | FileCheck %s --check-prefix=EPI
// RUN: tile-opt %tile_src_root/utils/bench/kernels/gemm_128x256.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize --convert-tile-gemm-to-sm90=remarks=1 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: tilec %tile_src_root/examples/gemm.mlir --target=cuda --chip=sm_90a -o %t.tileb
// RUN: tilec --info %t.tileb --section=metadata | FileCheck %s --check-prefix=META

// The wide-tile variant (WideTile.cpp) of a 128x128 launch tile: CTA tiles
// of 128x256, launch blocks (2x, y) and (2x + 1, y) (coarsen = [2, 1, 1]:
// the launch's x moves B's column, not A's row), persistent, 4 stages of
// (128 + 256) x 64 f16 and the launch tile's TMA-store epilogue (2 x 2 x 8
// KiB of staging, C's optional map); after split-K, before the launch-tile
// kernel.
// CHECK: kernel = "gemm_kernel_sm90_sk"{{.*}}<"sm90_tma_wgmma", chip = "sm_90a", kernel = "gemm_kernel_sm90_wide", block = [384, 1, 1], shared_bytes = 230400, grid = sms, schedule = "wide", tma = [{{.*}}, <param = 2, {{.*}}optional = true>], pack = "gemm_pack2_b2", pack_elem_bytes = 2, pack_operands = 2, coarsen = [2, 1, 1], coarse_speedup = 125>, <"sm90_tma_wgmma", chip = "sm_90a", kernel = "gemm_kernel_sm90",
// CHECK-LABEL: gpu.func @gemm_kernel_sm90_wide(
// The wide tiles: ceildiv(gx, 2) * gy.
// CHECK: %[[GX:.*]] = arith.divui %{{.*}}, %c128
// CHECK: %[[GY:.*]] = arith.divui %{{.*}}, %c128
// CHECK: %[[GX1:.*]] = arith.addi %[[GX]], %c1
// CHECK: %[[GW:.*]] = arith.divui %[[GX1]], %c2
// CHECK: %[[TILES:.*]] = arith.muli %[[GW]], %[[GY]]
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 4>
// Producer: per wide tile, the blocks 2x and 2x + 1 (the second one only
// stored inside the launch grid); A once, B as four 64-column boxes, the
// last two from the second block's column.
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[TILES]] step
// CHECK: %[[X0:.*]] = arith.muli %{{.*}}, %c2
// CHECK: %[[N0:.*]] = arith.muli %[[X0]], %c128
// CHECK: %[[X1:.*]] = arith.addi %{{.*}}, %c1{{(_[0-9]+)?}} : index
// CHECK: arith.cmpi ult, %[[X1]], %[[GX]]
// CHECK: %[[N1:.*]] = arith.muli %[[X1]], %c128
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}, %c49152
// CHECK: nvgpu.tma.async.load
// CHECK: arith.addi %[[N0]], %c0
// CHECK: nvgpu.tma.async.load
// CHECK: arith.addi %[[N0]], %c64
// CHECK: nvgpu.tma.async.load
// CHECK: arith.addi %[[N1]], %c0
// CHECK: nvgpu.tma.async.load
// CHECK: arith.addi %[[N1]], %c64
// CHECK: nvgpu.tma.async.load
// Consumers: one 64x256 wgmma chain per warpgroup; the first block's
// stores, then the second block's under its grid check: TMA stores of two
// 64-column chunks each (staging buffers 0, 1, then 0, 1 again), or the
// warpgroup's own copy-out of the staged chunks when C's map is null.
// CHECK: nvvm.setmaxregister  increase 232
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[TILES]] step
// CHECK: nvgpu.warpgroup.mma {{.*}} -> <fragmented = vector<64x256xf32>>
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvgpu.tma.async.store
// CHECK: nvgpu.tma.async.store
// CHECK: } else {
// CHECK: nvvm.inline_ptx "st.b16 [$0], $1;"
// CHECK: %[[CX1:.*]] = arith.addi %{{.*}}, %c1{{(_[0-9]+)?}} : index
// CHECK: %[[HI:.*]] = arith.cmpi ult, %[[CX1]], %[[GX]]
// CHECK: scf.if %[[HI]] {
// CHECK: nvgpu.tma.async.store
// CHECK: nvgpu.tma.async.store
// CHECK: } else {
// CHECK: nvvm.inline_ptx "st.b16 [$0], $1;"
// CHECK: nvvm.cp.async.bulk.wait_group 0
// CHECK: gpu.return

// The launch's epilogue (bias + ReLU) runs on both halves, each with its
// own block's values.
// EPI-LABEL: gpu.func @gemm_epilogue_kernel_sm90_wide(
// EPI: nvgpu.warpgroup.mma
// EPI: memref.load %{{.*}} : memref<?xf16>
// EPI: arith.maximumf
// EPI: scf.if
// EPI: memref.load %{{.*}} : memref<?xf16>
// EPI: arith.maximumf
// EPI: gpu.return

// A 128x256 launch tile is wide already: no variant, and a remark says why.
// REMARK: remark: sm90: no wide-tile variant for this GEMM: the launch tile is already 128x256

// META: "coarsen": [
// META-NEXT: 2,
// META-NEXT: 1,
// META-NEXT: 1
// META-NEXT: ],
// META-NEXT: "grid": "sms",
// META-NEXT: "kernel": "gemm_kernel_sm90_wide",

// C's map (the TMA-store epilogue) is optional in the bundle's metadata:
// the runtime passes null where it cannot encode it.
// META: "optional": true,
// META-NEXT: "param": 2,
