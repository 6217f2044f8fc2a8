// RUN: tile-opt %tile_src_root/examples/gemm_epilogue.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize --convert-tile-gemm-to-sm90 | FileCheck %s
// RUN: tile-opt %tile_src_root/examples/gemm_epilogue.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize="persistent=false" --convert-tile-gemm-to-sm90 | FileCheck %s --check-prefix=COOP

// examples/gemm_epilogue.mlir (bias + ReLU after the K loop) gets the
// warp-specialized TMA + wgmma variant. Persistent (the default for 128x128
// tiles): the epilogue runs on each of the accumulator registers (64 per
// consumer thread), once, before the TMA-store epilogue's staging (and
// its copy-out when C's map is null): the bias element of the register's
// column (clamped to N - 1 as in the tile program), add, ReLU.
// CHECK-LABEL: gpu.func @gemm_epilogue_kernel_sm90(
// CHECK: nvgpu.warpgroup.mma
// CHECK-COUNT-64: arith.maximumf
// CHECK-NOT: arith.maximumf
// CHECK: vector.store %{{.*}} : memref<64x64xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK: nvgpu.tma.async.store
// Cooperative: on the values read back from the f32 staging tile.
// COOP-LABEL: gpu.func @gemm_epilogue_kernel_sm90
// COOP: nvgpu.warpgroup.mma.store
// COOP: vector.load
// COOP: arith.minui
// COOP: memref.load %arg2
// COOP: arith.extf
// COOP: arith.addf
// COOP: arith.maximumf
// COOP: vector.store
