// RUN: tile-opt %tile_src_root/examples/gemm.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize="persistent=false" --convert-tile-gemm-to-sm90 | FileCheck %s
// RUN: tile-opt %tile_src_root/examples/gemm.mlir --tile-to-nvvm="chip=sm_90a format=none sm90-persistent=false" | FileCheck %s --check-prefix=MERGED
// RUN: tile-opt %tile_src_root/examples/gemm.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize="persistent=false" --convert-tile-gemm-to-sm90 | FileCheck %s --check-prefix=LDG

// convert-tile-gemm-to-sm90 builds the Hopper variant (here the
// non-persistent one; gemm-sm90-persistent.mlir: the persistent one) next to the tile
// kernel (which stays for the generic lowering): tensor maps as trailing
// pointer params, mbarrier pipeline, TMA producer, wgmma consumers.

// CHECK: tile.kernel_info = #tile.kernel_info<{{.*}}variants = [<"sm90_tma_wgmma", {{.*}}kernel = "gemm_kernel_sm90_sk", {{.*}}split_k = [0, 1, 64, {{[0-9]+}}], workspace_bytes = 16384, pack = "gemm_pack2_b2", pack_elem_bytes = 2, pack_operands = 2>, <"sm90_tma_wgmma", {{.*}}kernel = "gemm_kernel_sm90_wide", {{.*}}coarsen = [2, 1, 1], coarse_speedup = 125>, <"sm90_tma_wgmma", chip = "sm_90a", kernel = "gemm_kernel_sm90", block = [384, 1, 1], shared_bytes = 164864, tma = [<param = 0, type = f16, box = [64, 128], element_strides = [1, 1], interleave = 0, swizzle = 128, l2_promotion = 256, oob_fill = zero>, <param = 1, type = f16, box = [64, 64], {{.*}}>], pack = "gemm_pack2_b2", pack_elem_bytes = 2, pack_operands = 2>, <"sm90_tma_wgmma", chip = "sm_90a", kernel = "gemm_kernel_sm90_ldg", block = [384, 1, 1], shared_bytes = 164864>]>
// CHECK: gpu.module @gemm_sm90_module
// CHECK: gpu.func @gemm_kernel_sm90(%{{.*}}: memref<?x?xf16>, %{{.*}}: memref<?x?xf16>, %{{.*}}: memref<?x?xf16>, %[[TA:.*]]: !llvm.ptr, %[[TB:.*]]: !llvm.ptr) kernel attributes {known_block_size = array<i32: 384, 1, 1>, nvvm.minctasm = 1 : i32}
// CHECK: gpu.dynamic_shared_memory
// CHECK: %[[MA:.*]] = builtin.unrealized_conversion_cast %[[TA]] : !llvm.ptr to !nvgpu.tensormap.descriptor<tensor = memref<128x64xf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = zero, interleave = none>
// CHECK: %[[MB:.*]] = builtin.unrealized_conversion_cast %[[TB]] : !llvm.ptr to !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16
// CHECK: %[[FULL:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 5>
// CHECK: %[[EMPTY:.*]] = nvgpu.mbarrier.create
// CHECK: nvgpu.mbarrier.init %[[FULL]][%{{.*}}], %c1
// CHECK: nvgpu.mbarrier.init %[[EMPTY]][%{{.*}}], %c2
// CHECK: nvgpu.tma.prefetch.descriptor %[[MA]]
// CHECK: gpu.barrier
// Producer warpgroup (the last one): one thread issues.
// CHECK: scf.if
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: scf.for
// CHECK: nvgpu.mbarrier.try_wait.parity %[[EMPTY]]
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[FULL]][%{{.*}}], %c32768
// CHECK: nvgpu.tma.async.load %[[MA]][%{{.*}}, %{{.*}}], %[[FULL]][%{{.*}}] to %{{.*}} : {{.*}} -> memref<128x64xf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-2: nvgpu.tma.async.load %[[MB]]
// Consumer warpgroups.
// CHECK: } else {
// CHECK: nvvm.setmaxregister  increase 232
// CHECK: nvgpu.warpgroup.mma.init.accumulator -> <fragmented = vector<64x128xf32>>
// CHECK: scf.for {{.*}} iter_args
// CHECK: nvgpu.mbarrier.try_wait.parity %[[FULL]]
// CHECK: nvgpu.warpgroup.generate.descriptor %{{.*}}, %[[MA]] : memref<64x64xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.warpgroup.generate.descriptor %{{.*}}, %[[MB]] : memref<64x128xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.warpgroup.mma {{.*}} {transposeB} : <tensor = memref<64x64xf16, #gpu.address_space<workgroup>>>, <tensor = memref<64x128xf16, #gpu.address_space<workgroup>>>, <fragmented = vector<64x128xf32>>
// CHECK: nvgpu.mbarrier.arrive %[[EMPTY]]
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK: nvgpu.warpgroup.mma.store
// CHECK: vector.store
// The tile kernel itself is unchanged.
// CHECK: func.func @gemm
// CHECK: tile.pipelined
// CHECK-NOT: sm90.warp_specialize

// After the whole pipeline both kernels are in one gpu.module.
// MERGED: gpu.module @gemm_module
// MERGED-NOT: gpu.module
// MERGED-DAG: llvm.func @gemm_kernel(
// MERGED-DAG: llvm.func @gemm_kernel_sm90(
// MERGED-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// MERGED-DAG: nvvm.cp.async.bulk.tensor.shared.cluster.global
// MERGED-DAG: nvvm.setmaxregister

// The variant without TMA (last in the metadata, no tensor-map params):
// every producer thread loads element-wise into the swizzled stage, fences
// the async proxy and arrives on the full barrier (128 arrivals).
// LDG-LABEL: gpu.func @gemm_kernel_sm90_ldg(%{{.*}}: memref<?x?xf16>, %{{.*}}: memref<?x?xf16>, %{{.*}}: memref<?x?xf16>) kernel
// LDG: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// LDG: builtin.unrealized_conversion_cast %[[NULL]] : !llvm.ptr to !nvgpu.tensormap.descriptor<tensor = memref<128x64xf16
// LDG: %[[FULL:.*]] = nvgpu.mbarrier.create
// LDG: nvgpu.mbarrier.init %[[FULL]][%{{.*}}], %c128
// LDG-NOT: nvgpu.tma.prefetch.descriptor
// LDG: nvvm.setmaxregister  decrease 96
// LDG-NOT: nvgpu.tma.async.load
// LDG: vector.store %{{.*}} : memref<{{.*}}xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// LDG: nvvm.fence.proxy
// LDG: nvgpu.mbarrier.arrive %[[FULL]]
// LDG: nvvm.setmaxregister  increase 200
// LDG-LABEL: gpu.func @gemm_kernel_sm90(
