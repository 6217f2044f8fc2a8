// RUN: tile-opt %tile_src_root/examples/softmax.mlir --tile-attach-metadata=target=hip --tile-infer-layouts=matrix-core=mfma --convert-tile-to-amdgpu --canonicalize --cse | FileCheck %s

// softmax on wave64: the row max and sum are reduced thread-locally, then
// by a 6-step xor butterfly over the 64 lanes of each wave (widths 64),
// then across the 2 waves through LDS scratch.
// CHECK: tile.kernel_info = #tile.kernel_info<{{.*}}shared_bytes = 64>
// CHECK-LABEL: gpu.func @softmax_kernel
// CHECK: arith.maximumf
// CHECK: gpu.shuffle  xor %{{.*}}, %c32_i32, %c64_i32 : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c64_i32 : f32
// CHECK: gpu.barrier
// CHECK: math.exp
// CHECK: gpu.shuffle  xor
// CHECK: arith.divf
// CHECK: gpu.return
