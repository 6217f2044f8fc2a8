// RUN: tile-opt %tile_src_root/examples/gemm.mlir --tile-attach-metadata=target=cuda --tile-infer-layouts --convert-tile-to-nvgpu --canonicalize --cse | FileCheck %s

// The launch becomes a gpu.func with the kernel's parameters; shared buffers
// are views of dynamic shared memory; the metadata's shared_bytes is what
// the kernel uses (3 stages x 2 x 8 KiB, no scratch).
// CHECK: module attributes {gpu.container_module, tile.kernel_info = #tile.kernel_info<{{.*}}shared_bytes = 49152>
// CHECK: gpu.module @gemm_module
// CHECK: gpu.func @gemm_kernel(%{{.*}}: memref<?x?xf16>, %{{.*}}: memref<?x?xf16>, %{{.*}}: memref<?x?xf16>) kernel attributes {known_block_size = array<i32: 128, 1, 1>}
// CHECK: gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// The accumulator: 128 f32 registers per thread.
// CHECK: memref.alloca() : memref<128xf32>
// Rasterization (panel = 8) of the block indices.
// CHECK: gpu.block_id  x
// CHECK: arith.minui
// The pipelined loop (3 stages, see pipelined.mlir): cp.async with zero
// fill under a runtime alignment check with a scalar fallback, issued two
// iterations ahead; the loop waits for all but the newest group.
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: scf.if
// CHECK: nvgpu.device_async_copy {{.*}} {bypassL1} : memref<?x?xf16> to memref<4096xf16, #gpu.address_space<workgroup>>
// CHECK: } else {
// CHECK: nvgpu.device_async_create_group
// CHECK: scf.for
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// CHECK-NEXT: gpu.barrier
// Tensor cores: ldmatrix (A x4; B x4 transposed, two 8-column tiles) and mma.sync m16n8k16.
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false} : memref<4096xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true} : memref<4096xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK: vector.shuffle
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// The epilogue: each thread stores its own register pairs (adjacent
// columns), converted to f16, as one 4-byte store, or masked scalar stores
// at the tails / when unaligned.
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// CHECK: arith.truncf {{.*}} : f32 to f16
// CHECK: vector.store {{.*}} {alignment = 4 : i64} : memref<?x?xf16>, vector<2xf16>
// CHECK: } else {
// CHECK: memref.store {{.*}} : memref<?x?xf16>
// CHECK: gpu.return
