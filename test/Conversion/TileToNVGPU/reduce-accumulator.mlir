// RUN: tile-opt %tile_src_root/test/E2E/kernels/gemm_row_col_stats.mlir --tile-attach-metadata=target=cuda --tile-infer-layouts --convert-tile-to-nvgpu=chip=sm_80 --canonicalize --cse | FileCheck %s

// Row sums and column maxima of a 64x64 mma accumulator tiled 2x2 over 4
// warps: the targets get the slice layouts (a row lives in its quad of each
// warp of its warp row: 4 registers of rows g + 8r; a column in the 8
// lanes with its l % 4 in each warp of its warp column). The row sum is
// quad shuffles (xor 1, 2), the column max 8-lane shuffles (xor 4, 8, 16);
// both then combine the 2 warps that share a row / column through 4 x 64
// floats of shared scratch (a slot per warp and element, identity where a
// warp holds none) after the two 4 KiB operand buffers x 2 stages.
// CHECK-LABEL: gpu.func @gemm_row_col_stats_kernel
// CHECK-COUNT-4: gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32 : f32
// CHECK: memref.view %{{.*}}[%c16384][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<256xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK-COUNT-8: gpu.shuffle  xor %{{.*}}, %c16_i32, %c32_i32 : f32
// CHECK: arith.maximumf
// CHECK: gpu.return
