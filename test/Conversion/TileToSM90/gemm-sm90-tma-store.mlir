// RUN: tile-opt %tile_src_root/utils/bench/kernels/gemm_128x256.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize="epilogue=tma" | FileCheck %s --check-prefix=WS
// RUN: tile-opt %tile_src_root/utils/bench/kernels/gemm_128x256.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize="epilogue=tma" --convert-tile-gemm-to-sm90 | FileCheck %s
// RUN: tile-opt %tile_src_root/utils/bench/kernels/gemm_128x256.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize="epilogue=tma persistent=false" | FileCheck %s --check-prefix=OFF
// RUN: tile-opt %tile_src_root/utils/bench/kernels/gemm_128x256.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize="epilogue=tma schedule=pingpong" | FileCheck %s --check-prefix=PP
// RUN: not tile-opt %tile_src_root/utils/bench/kernels/gemm_128x256.mlir --tile-warp-specialize="epilogue=bogus" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: tilec %tile_src_root/utils/bench/kernels/gemm_128x256.mlir --target=cuda --chip=sm_90a --emit=ptx -o %t.ptx "--pass-pipeline=tile-to-nvvm{chip=sm_90a features=+ptx80 format=none sm90-epilogue=tma}"
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: tile-opt %tile_src_root/utils/bench/kernels/gemm_128x256.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize | FileCheck %s --check-prefix=DEFWS
// RUN: tilec %tile_src_root/utils/bench/kernels/gemm_128x256.mlir --target=cuda --chip=sm_90a --emit=ptx -o %t.def.ptx
// RUN: FileCheck %s --check-prefix=DEFPTX < %t.def.ptx
// RUN: tile-opt %tile_src_root/examples/gemm_epilogue.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize="remarks=1" 2>&1 | FileCheck %s --check-prefix=EPI

// An elementwise epilogue (bias + ReLU) runs on the registers before the
// staging: the TMA-store epilogue, no remark (warp-specialize.mlir has the
// remark of a kernel that keeps the register epilogue).
// EPI-NOT: stored from registers
// EPI: sm90.warp_specialize = {{{.*}}epilogue = "tma", persistent = true

// The default compile of 128x256 tiles (16-bit C): the persistent
// cooperative kernel with the TMA-store epilogue (no separate variant).
// DEFWS: sm90.warp_specialize = {{{.*}}epilogue = "tma", persistent = true
// DEFPTX-DAG: .entry gemm_kernel(
// DEFPTX-DAG: .entry gemm_kernel_sm90(
// DEFPTX-NOT: .entry gemm_kernel_sm90_t(
// DEFPTX-DAG: cp.async.bulk.tensor.2d.global.shared::cta

// The TMA-store epilogue (the default, also asked for by
// tile-warp-specialize epilogue=tma or the pipeline option
// sm90-epilogue=tma; docs/performance.md): persistent cooperative kernel; each consumer
// warpgroup converts its accumulators 64 columns at a time into one of two
// 128B-swizzled 64x64 staging buffers after the stages (4 stages of 48 KiB
// + 2 x 2 x 8 KiB = 230400 bytes with the 1 KiB alignment slack), then one
// thread per warpgroup stores the chunk with cp.async.bulk.tensor through
// a third tensor map (of C, box 64x64, optional: the runtime passes null
// when no map describes the launch's C, and the warpgroup then copies the
// staged chunk out itself) and commits a bulk group; before a
// buffer is rewritten its store must have read it (wait_group.read 1), and
// the CTA waits for all its stores (wait_group 0) before exiting.

// WS: sm90.warp_specialize = {{{.*}}epilogue = "tma", persistent = true{{.*}}stages = 4
// Not persistent: the option does not apply.
// OFF-NOT: epilogue = "tma"
// OFF: sm90.warp_specialize
// OFF-NOT: epilogue = "tma"
// Ping-pong keeps its register epilogue.
// PP-NOT: epilogue = "tma"
// PP: schedule = "pingpong"
// BAD: epilogue must be auto, tma or registers, not 'bogus'

// CHECK: shared_bytes = 230400, {{.*}}tma = [<param = 0, {{.*}}>, <param = 1, {{.*}}>, <param = 2, type = f16, box = [64, 64], element_strides = [1, 1], interleave = 0, swizzle = 128, l2_promotion = 256, oob_fill = zero, optional = true>], pack = "gemm_pack2_b2", pack_elem_bytes = 2, pack_operands = 2>
// CHECK: gpu.func @gemm_kernel_sm90(%{{.*}}: memref<?x?xf16>, %{{.*}}: memref<?x?xf16>, %{{.*}}: memref<?x?xf16>, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[CMAP:.*]]: !llvm.ptr) kernel
// C's map may be null: prefetched only when present, and the epilogue
// branches on it.
// CHECK: %[[CBITS:.*]] = llvm.ptrtoint %[[CMAP]] : !llvm.ptr to i64
// CHECK: %[[PRESENT:.*]] = arith.cmpi ne, %[[CBITS]], %c0_i64
// CHECK: %[[TMAC:.*]] = builtin.unrealized_conversion_cast %[[CMAP]] : !llvm.ptr to !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b
// CHECK: %[[PF:.*]] = arith.andi %{{.*}}, %[[PRESENT]]
// CHECK: nvgpu.tma.prefetch.descriptor %[[TMAC]], predicate = %[[PF]]
// CHECK: nvvm.setmaxregister  increase 232
// CHECK-NOT: nvgpu.warpgroup.mma.store
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: scf.if %[[PRESENT]] {
// Chunk 0: buffer 0 of this warpgroup at 4 * 49152 + wg * 16384.
// CHECK: %[[BARID:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK: %[[BUF0:.*]] = arith.addi %c196608, %{{.*}} : index
// CHECK: nvvm.cp.async.bulk.wait_group 1 {read}
// CHECK: nvvm.barrier id = %[[BARID]] number_of_threads = %c128_i32
// CHECK: %[[V0:.*]] = memref.view %{{.*}} : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
// The swizzle: 16-byte unit j of row r at j ^ (r % 8) (r % 8 = lane / 4).
// CHECK: arith.xori
// CHECK: vector.store %{{.*}}, %[[V0]][%{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<64x64xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.barrier id = %[[BARID]]
// CHECK: nvgpu.tma.async.store %[[V0]] to %[[TMAC]][%{{.*}}, %{{.*}}] : memref<64x64xf16
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// Chunk 1: buffer 1, 64 columns on.
// CHECK: nvvm.cp.async.bulk.wait_group 1 {read}
// CHECK: %[[OFF1:.*]] = arith.addi %[[BUF0]], %c8192
// CHECK: nvgpu.tma.async.store
// CHECK: nvgpu.tma.async.store
// CHECK: %[[COL3:.*]] = arith.addi %{{.*}}, %c192 : index
// CHECK-NEXT: nvgpu.tma.async.store %{{.*}} to %[[TMAC]][%[[COL3]], %{{.*}}]
// No map: the same staging, then the warpgroup's own stores: thread p
// reads column p % 64 of rows p / 64, + 2, ... (swizzled) and stores it
// bounds-checked, 32 per chunk: 4 iterations of 8 shared loads, then
// their 8 stores, predicated (no branches, which made ptxas pair each
// load with its store again).
// CHECK: } else {
// CHECK-NOT: nvgpu.tma.async.store
// CHECK: vector.store %{{.*}} : memref<64x64xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK: nvvm.barrier id = %[[BARID]]
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c4{{.*}} step %c1{{.*}} {
// CHECK: %[[SV:.*]] = memref.load %{{.*}} : memref<64x64xf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-7: memref.load %{{.*}} : memref<64x64xf16, #gpu.address_space<workgroup>>
// CHECK-NOT: memref.load
// CHECK: %[[OK:.*]] = arith.andi
// CHECK: %[[BITS:.*]] = arith.bitcast %[[SV]] : f16 to i16
// CHECK-NEXT: nvvm.inline_ptx "st.b16 [$0], $1;" ro(%{{.*}}, %[[BITS]] : !llvm.ptr, i16), predicate = %[[OK]]
// CHECK-NOT: nvgpu.tma.async.store
// After the tile loop: every store complete before the CTA exits.
// CHECK: nvvm.cp.async.bulk.wait_group 0
// CHECK-NOT: {read}
// CHECK: gpu.return

// PTX-DAG: .entry gemm_kernel_sm90(
// PTX-DAG: cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
// PTX-DAG: cp.async.bulk.commit_group;
// PTX-DAG: cp.async.bulk.wait_group.read 1;
// PTX-DAG: cp.async.bulk.wait_group 0;
// PTX-DAG: fence.proxy.async.shared::cta;
// PTX-DAG: st.shared.b32
