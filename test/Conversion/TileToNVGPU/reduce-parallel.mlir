// RUN: tile-opt %tile_src_root/examples/softmax.mlir --tile-attach-metadata=target=cuda --tile-infer-layouts --convert-tile-to-nvgpu --canonicalize --cse | FileCheck %s

// softmax: the 2x1024 tile is 32 registers per thread, a warp per row
// (tile-infer-layouts); the row max and sum are reduced thread-locally,
// then by a 5-step xor butterfly in the row's warp, where they stay (no
// shared memory); the parallel bodies run on each thread's own registers.
// CHECK: tile.kernel_info = #tile.kernel_info<{{.*}}shared_bytes = 0>
// CHECK: gpu.func @softmax_kernel(%{{.*}}: memref<?x1024xf32>, %{{.*}}: memref<?x1024xf32>) kernel
// CHECK-DAG: memref.alloca() : memref<32xf32>
// CHECK-DAG: memref.alloca() : memref<1xf32>
// CHECK: arith.maximumf
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32 : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32, %c32_i32 : f32
// CHECK-NOT: gpu.barrier
// CHECK: math.exp
// CHECK: gpu.shuffle  xor
// CHECK: arith.divf
// CHECK: gpu.return
