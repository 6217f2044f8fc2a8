// RUN: tile-opt %tile_src_root/examples/gemm.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize="epilogue=registers" --convert-tile-gemm-to-sm90 | FileCheck %s
// RUN: tile-opt %tile_src_root/utils/bench/kernels/gemm_128x256.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize --convert-tile-gemm-to-sm90 | FileCheck %s --check-prefix=AUTO256
// RUN: tile-opt %tile_src_root/utils/bench/kernels/gemm_128x256.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize="persistent=true epilogue=registers" --convert-tile-gemm-to-sm90 | FileCheck %s --check-prefix=ON256
// RUN: tilec %tile_src_root/examples/gemm.mlir --target=cuda --chip=sm_90a --emit=ptx -o %t.ptx "--pass-pipeline=tile-to-nvvm{chip=sm_90a features=+ptx80 format=none sm90-epilogue=registers}"
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx

// The persistent sm90 variant (tile-warp-specialize persistent=auto picks it
// for 128x128 tiles; persistent=true forces it): the metadata asks for one
// CTA per SM ("grid": "sms"); producer and consumers each loop over the
// launch's tiles (linear CTA id, step = number of CTAs, tile count = the
// launch grid computed from the memref sizes, tile -> block indices with the
// launch's panel rasterization), carrying the global pipeline iteration so
// the stage index and the mbarrier parities continue across tiles; the
// consumers release the tile's last stage after wait_group 0 and store the
// accumulators straight from registers (no shared-memory staging, so the
// producer refills the stages for the next tile meanwhile). These checks
// ask for that register epilogue (epilogue=registers); by default a 16-bit
// C goes through TMA stores instead (gemm-sm90-tma-store.mlir), and the
// register epilogue runs only launches whose C has no tensor map.

// CHECK: variants = [<"sm90_tma_wgmma", {{.*}}kernel = "gemm_kernel_sm90_sk", {{.*}}split_k = [0, 1, 64, {{[0-9]+}}], workspace_bytes = 16384, pack = "gemm_pack2_b2", pack_elem_bytes = 2, pack_operands = 2>, <"sm90_tma_wgmma", {{.*}}kernel = "gemm_kernel_sm90_wide", {{.*}}coarsen = [2, 1, 1], coarse_speedup = 125>, <"sm90_tma_wgmma", chip = "sm_90a", kernel = "gemm_kernel_sm90", block = [384, 1, 1], shared_bytes = 164864, grid = sms, tma = [
// CHECK: gpu.func @gemm_kernel_sm90(%[[A:.*]]: memref<?x?xf16>, %[[B:.*]]: memref<?x?xf16>, %[[C:.*]]: memref<?x?xf16>, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) kernel
// The tile count: ceildiv(N, 128) * ceildiv(M, 128).
// CHECK: %[[N:.*]] = memref.dim %[[B]], %c1
// CHECK: %[[GX:.*]] = arith.divui %{{.*}}, %c128
// CHECK: %[[M:.*]] = memref.dim %[[A]], %c0
// CHECK: %[[GY:.*]] = arith.divui %{{.*}}, %c128
// CHECK: %[[TILES:.*]] = arith.muli %[[GX]], %[[GY]]
// CHECK: %[[FULL:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 5>
// CHECK: %[[EMPTY:.*]] = nvgpu.mbarrier.create
// CHECK: gpu.barrier
// CHECK: %[[NITER:.*]] = arith.divui %{{.*}}, %c2
// Producer: one thread loops over the tiles.
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: scf.if
// CHECK: %[[BID:.*]] = gpu.block_id  x
// CHECK: %[[GDX:.*]] = gpu.grid_dim  x
// CHECK: %[[LIN:.*]] = arith.addi %[[BID]], %{{.*}}
// CHECK: %[[CTAS:.*]] = arith.muli %[[GDX]], %{{.*}}
// CHECK: scf.for %[[T:.*]] = %[[LIN]] to %[[TILES]] step %[[CTAS]] iter_args(%[[G0:.*]] = %c0{{.*}}) -> (index) {
// CHECK: arith.remui %[[T]], %[[GX]]
// CHECK: arith.divui %[[T]], %[[GX]]
// Panel rasterization (panel 8), as in the non-persistent kernel.
// CHECK: arith.muli %c8, %[[GY]]
// CHECK: arith.minui %c8
// CHECK: scf.for %[[I:.*]] = %c0{{.*}} to %[[NITER]] step %c1
// CHECK: %[[G:.*]] = arith.addi %[[G0]], %[[I]]
// CHECK: %[[S:.*]] = arith.remui %[[G]], %c5
// CHECK: %[[R:.*]] = arith.divui %[[G]], %c5
// CHECK: %[[RP:.*]] = arith.remui %[[R]], %c2
// CHECK: %[[EP:.*]] = arith.cmpi eq, %[[RP]], %c0
// CHECK: nvgpu.mbarrier.try_wait.parity %[[EMPTY]][%[[S]]], %[[EP]]
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[FULL]][%[[S]]], %c32768
// The K coordinate comes from the tile-local iteration.
// CHECK: %[[K0:.*]] = arith.muli %[[I]], %c64
// CHECK: nvgpu.tma.async.load %{{.*}}[%[[K0]], %{{.*}}], %[[FULL]][%[[S]]]
// CHECK: %[[NEXT:.*]] = arith.addi %[[G0]], %[[NITER]]
// CHECK: scf.yield %[[NEXT]] : index
// Consumers: the same tile loop around the main loop and the epilogue.
// CHECK: } else {
// CHECK: nvvm.setmaxregister  increase 232
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[TILES]] step %{{.*}} iter_args(%[[CG0:.*]] = %c0{{.*}}) -> (index) {
// CHECK: nvgpu.warpgroup.mma.init.accumulator
// CHECK: %[[ACC:.*]] = scf.for %[[CI:.*]] = %c0{{.*}} to %[[NITER]] step %c1{{.*}} iter_args
// CHECK: %[[CG:.*]] = arith.addi %[[CG0]], %[[CI]]
// CHECK: %[[CS:.*]] = arith.remui %[[CG]], %c5
// CHECK: %[[CR:.*]] = arith.divui %[[CG]], %c5
// CHECK: %[[CRP:.*]] = arith.remui %[[CR]], %c2
// CHECK: %[[FP:.*]] = arith.cmpi eq, %[[CRP]], %c1
// CHECK: nvgpu.mbarrier.try_wait.parity %[[FULL]][%[[CS]]], %[[FP]]
// CHECK: nvgpu.warpgroup.mma
// CHECK: arith.cmpi ugt, %[[CI]], %c0
// CHECK: nvgpu.mbarrier.arrive %[[EMPTY]]
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// The tile's last stage: (g0 + iterations - 1) % stages.
// CHECK: scf.if
// CHECK: %[[END:.*]] = arith.addi %[[CG0]], %[[NITER]]
// CHECK: %[[LAST:.*]] = arith.subi %[[END]], %c1
// CHECK: %[[LS:.*]] = arith.remui %[[LAST]], %c5
// CHECK: nvgpu.mbarrier.arrive %[[EMPTY]][%[[LS]]]
// Epilogue from registers: no warpgroup.mma.store, no staging tile.
// CHECK-NOT: nvgpu.warpgroup.mma.store
// CHECK: builtin.unrealized_conversion_cast %[[ACC]] : !nvgpu.warpgroup.accumulator<fragmented = vector<64x128xf32>> to !llvm.struct<(struct<(f32,
// CHECK: llvm.extractvalue
// CHECK: scf.if
// CHECK: vector.store %{{.*}}, %[[C]][%{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<?x?xf16>, vector<2xf16>
// CHECK: } else {
// Slow path: element by element, predicated stores.
// CHECK: nvvm.inline_ptx "st.b16 [$0], $1;"
// CHECK-NOT: nvgpu.warpgroup.mma.store
// CHECK: scf.yield %{{.*}} : index

// 128x256 tiles, 16-bit C, by default: persistent, with the TMA-store
// epilogue (gemm-sm90-tma-store.mlir has the details); no other tile-size
// variant.
// AUTO256: variants = [<"sm90_tma_wgmma", {{.*}}kernel = "gemm_kernel_sm90_sk", {{.*}}split_k = [0, 1, 64, {{[0-9]+}}], workspace_bytes = 16384, pack = "gemm_pack2_b2", pack_elem_bytes = 2, pack_operands = 2>, <"sm90_tma_wgmma", chip = "sm_90a", kernel = "gemm_kernel_sm90", block = [384, 1, 1], shared_bytes = 230400, grid = sms, tma = [{{.*}}, <param = 2, {{.*}}optional = true>]
// AUTO256: gpu.module @gemm_sm90_module
// AUTO256-NOT: gpu.module
// AUTO256: gpu.func @gemm_kernel_sm90(
// AUTO256-NOT: gpu.func @gemm_kernel_sm90_t(
// AUTO256-NOT: nvgpu.warpgroup.mma.store
// ON256: kernel = "gemm_kernel_sm90", block = [384, 1, 1], shared_bytes = 197632, grid = sms,
// ON256: builtin.unrealized_conversion_cast %{{.*}} : !nvgpu.warpgroup.accumulator<fragmented = vector<64x256xf32>> to !llvm.struct<(struct<(f32,
// ON256-NOT: nvgpu.warpgroup.mma.store

// PTX: .entry gemm_kernel_sm90(
// PTX: mbarrier.try_wait.parity.shared.b64
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// PTX: wgmma.wait_group.sync.aligned 0
// PTX: st.global.b32
