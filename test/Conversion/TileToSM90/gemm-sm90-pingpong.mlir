// RUN: tile-opt %tile_src_root/utils/bench/kernels/gemm_128x256.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize="schedule=pingpong" | FileCheck %s --check-prefix=WS
// RUN: tile-opt %tile_src_root/utils/bench/kernels/gemm_128x256.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize="schedule=pingpong" --convert-tile-gemm-to-sm90 | FileCheck %s
// RUN: tile-opt %tile_src_root/examples/gemm.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize="schedule=pingpong" --convert-tile-gemm-to-sm90 | FileCheck %s --check-prefix=T128
// RUN: tile-opt %tile_src_root/utils/bench/kernels/gemm_128x256.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize="schedule=pingpong persistent=false" | FileCheck %s --check-prefix=OFF
// RUN: not tile-opt %tile_src_root/utils/bench/kernels/gemm_128x256.mlir --tile-warp-specialize="schedule=bogus" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: tilec %tile_src_root/utils/bench/kernels/gemm_128x256.mlir --target=cuda --chip=sm_90a --emit=ptx -o %t.ptx "--pass-pipeline=tile-to-nvvm{chip=sm_90a features=+ptx80 format=none sm90-schedule=pingpong}"
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx

// The ping-pong schedule (tile-warp-specialize schedule=pingpong; off by
// default, docs/performance.md): persistent, two consumer warpgroups, each
// owning whole 128x128 units (the 128x256 tile = 2 units; accumulator
// 128 f32 per thread); the producer loads every unit of the CTA in order
// (one stage = A 128x64 + B 64x128 = 32 KiB, 7 stages); consumer c takes
// units c, c+2, ... and the mainloops alternate through named barriers
// 2/3 so one warpgroup's epilogue overlaps the other's mainloop.

// WS: sm90.warp_specialize = {block_k = 64 : i64, consumer_regs = 232 : i64, consumers = 2 : i64, persistent = true, producer_regs = 40 : i64, producers = 1 : i64, schedule = "pingpong", stages = 7 : i64, threads = 384 : i64, unit_n = 128 : i64}

// CHECK: <"sm90_tma_wgmma", chip = "sm_90a", kernel = "gemm_kernel_sm90", block = [384, 1, 1], shared_bytes = 230400, grid = sms, schedule = "pingpong", tma = [
// The warp-uniform warpgroup index: shfl from lane 0, before the roles.
// CHECK-LABEL: gpu.func @gemm_kernel_sm90(
// CHECK: %[[WG:.*]] = nvvm.shfl.sync  idx %{{.*}}, %{{.*}}, %c0_i32, %c31_i32 : i32 -> i32
// CHECK: %[[WGI:.*]] = arith.index_castui %[[WG]] : i32 to index
// CHECK: %[[FULL:.*]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 7>
// CHECK: %[[EMPTY:.*]] = nvgpu.mbarrier.create
// One consumer arrival releases a stage.
// CHECK: nvgpu.mbarrier.init %[[EMPTY]][%{{.*}}], %c1
// Producer: all of the CTA's units (2 per tile), 32 KiB per stage, the
// unit's B columns at the tile's column + (j % 2) * 128.
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: %[[UNITS:.*]] = arith.muli %{{.*}}, %c2{{.*}} : index
// CHECK: scf.for %[[J:.*]] = %c0{{.*}} to %[[UNITS]] step %c1
// CHECK: %[[H:.*]] = arith.remui %[[J]], %c2
// CHECK: %[[COFF:.*]] = arith.muli %[[H]], %c128
// CHECK: %[[G0:.*]] = arith.muli %[[J]], %[[NITER:.*]] : index
// CHECK: scf.for %[[I:.*]] = %c0{{.*}} to %[[NITER]] step %c1
// CHECK: arith.addi %[[G0]], %[[I]]
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[FULL]][%{{.*}}], %c32768
// A (128x64) and the unit's two 64x64 boxes of B.
// CHECK: nvgpu.tma.async.load
// CHECK: nvgpu.tma.async.load
// CHECK: nvgpu.tma.async.load
// CHECK-NOT: nvgpu.tma.async.load
// CHECK: } else {
// Consumers: units wg, wg + 2, ...; wait on barrier 2 + wg, signal 3 - wg
// (256 threads).
// CHECK: nvvm.setmaxregister  increase 232
// CHECK: %[[CUNITS:.*]] = arith.muli %{{.*}}, %c2{{.*}} : index
// CHECK: %[[WAIT:.*]] = arith.addi %[[WGI]], %c2
// CHECK: arith.subi %c3{{.*}}, %[[WGI]]
// CHECK: scf.for %[[CJ:.*]] = %[[WGI]] to %[[CUNITS]] step %c2
// CHECK: arith.cmpi ugt, %[[CJ]], %c0
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c256_i32
// CHECK: nvgpu.warpgroup.mma.init.accumulator -> <fragmented = vector<128x128xf32>>
// CHECK: nvgpu.mbarrier.try_wait.parity %[[FULL]]
// CHECK: nvgpu.warpgroup.mma %{{.*}}, %{{.*}}, %{{.*}} {transposeB} : <tensor = memref<128x64xf16, #gpu.address_space<workgroup>>>, <tensor = memref<64x128xf16, #gpu.address_space<workgroup>>>, <fragmented = vector<128x128xf32>>
// CHECK: nvgpu.mbarrier.arrive %[[EMPTY]]
// The next unit exists: let the other warpgroup's mainloop start.
// CHECK: %[[NEXTJ:.*]] = arith.addi %[[CJ]], %c1
// CHECK: arith.cmpi ult, %[[NEXTJ]], %[[CUNITS]]
// CHECK: nvvm.barrier.arrive id = %{{.*}} number_of_threads = %c256_i32
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvgpu.mbarrier.arrive %[[EMPTY]]
// Epilogue from registers, both 64-row blocks of the accumulator.
// CHECK-NOT: nvgpu.warpgroup.mma.store
// CHECK: builtin.unrealized_conversion_cast %{{.*}} : !nvgpu.warpgroup.accumulator<fragmented = vector<128x128xf32>> to !llvm.struct<(struct<(f32,{{.*}})>, struct<(f32,
// CHECK: vector.store %{{.*}} {alignment = 4 : i64} : memref<?x?xf16>, vector<2xf16>

// 128x128 tiles: one unit per tile (consumers alternate whole tiles).
// T128: kernel = "gemm_kernel_sm90", block = [384, 1, 1], shared_bytes = 230400, grid = sms, schedule = "pingpong",
// T128: nvgpu.mbarrier.arrive.expect_tx %{{.*}}, %c32768
// T128: <fragmented = vector<128x128xf32>>

// persistent=false wins over schedule=pingpong (cooperative).
// OFF-NOT: pingpong
// OFF: consumers = 2 : i64
// OFF-NOT: pingpong

// BAD: tile-warp-specialize: schedule must be auto, cooperative or pingpong, not 'bogus'

// PTX: .entry gemm_kernel_sm90(
// PTX: shfl.sync.idx.b32
// PTX: bar.sync {{.*}}, 256;
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// PTX: bar.arrive {{.*}}, 256;
// PTX: wgmma.wait_group.sync.aligned 0
