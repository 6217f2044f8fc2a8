// RUN: tile-opt %tile_src_root/examples/gemm.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize --convert-tile-gemm-to-sm90 | FileCheck %s
// RUN: tile-opt %tile_src_root/examples/gemm_epilogue.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize --convert-tile-gemm-to-sm90 | FileCheck %s --check-prefix=EPI
// RUN: tilec %tile_src_root/examples/gemm.mlir --target=cuda --chip=sm_90a -o %t.tileb
// RUN: tilec --info %t.tileb --section=metadata | FileCheck %s --check-prefix=META
// RUN: tilec %tile_src_root/examples/gemm.mlir --target=cuda --chip=sm_90a --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx

// The split-K variant (SplitK.cpp), after the narrow one (gemm-sm90-narrow.mlir): for launches of at
// most 66 tiles; the runtime picks S K-slices per launch (split_k = [A's
// param, its K dim, 64 per K tile, workspace bytes per tile and slice: a
// 128x128 f32 partial], after workspace_bytes = 16384 of arrival
// counters).
// CHECK: variants = [<"sm90_tma_wgmma", {{.*}}kernel = "gemm_kernel_sm90_nr16", {{.*}}>, <"sm90_tma_wgmma", chip = "sm_90a", kernel = "gemm_kernel_sm90_sk", block = [384, 1, 1], shared_bytes = 164864, max_tiles = 66, schedule = "splitk", tma = [{{.*}}], split_k = [0, 1, 64, 65536], workspace_bytes = 16384, pack = "gemm_pack2_b2", pack_elem_bytes = 2, pack_operands = 2>, <"sm90_tma_wgmma", {{.*}}kernel = "gemm_kernel_sm90_wide", {{.*}}coarsen = [2, 1, 1], coarse_speedup = 125>, <"sm90_tma_wgmma", chip = "sm_90a", kernel = "gemm_kernel_sm90",
// The params: the kernel's, A's and B's tensor maps, the workspace.
// CHECK-LABEL: gpu.func @gemm_kernel_sm90_sk(
// CHECK-SAME: %{{.*}}: memref<?x?xf16>, %{{.*}}: memref<?x?xf16>, %{{.*}}: memref<?x?xf16>, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[WS:.*]]: !llvm.ptr) kernel
// Tile = block x, slice = block y of grid y.
// CHECK: %[[T:.*]] = gpu.block_id  x
// CHECK: %[[S:.*]] = gpu.block_id  y
// CHECK: %[[NS:.*]] = gpu.grid_dim  y
// The slice's K tiles: [s*n/S, (s+1)*n/S).
// CHECK: %[[N:.*]] = arith.divui %{{.*}}, %c2
// CHECK: %[[LO:.*]] = arith.divui %{{.*}}, %[[NS]]
// CHECK: %[[S1:.*]] = arith.addi %[[S]], %c1
// CHECK: %[[HIN:.*]] = arith.muli %[[S1]], %[[N]]
// CHECK: %[[HI:.*]] = arith.divui %[[HIN]], %[[NS]]
// CHECK: %[[CNT:.*]] = arith.subi %[[HI]], %[[LO]]
// Producer: K tile LO + i.
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[CNT]] step
// CHECK: %[[KI:.*]] = arith.addi %[[LO]], %[[I]]
// CHECK: arith.muli %[[KI]], %c64
// CHECK: nvgpu.tma.async.load
// Consumers: the main loop over the slice, then the tree.
// CHECK: nvvm.setmaxregister  increase 232
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[CNT]] step
// CHECK: nvgpu.warpgroup.mma
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// Only values of rows < M and columns < N (per 8-column vector) move.
// CHECK: %[[M:.*]] = memref.dim %{{.*}}, %{{.*}} : memref<?x?xf16>
// CHECK: %[[ROWS:.*]] = arith.cmpi ult, %{{.*}}, %[[M]] : index
// CHECK: %[[N:.*]] = memref.dim %{{.*}}, %{{.*}} : memref<?x?xf16>
// Counters (t, m) at t*S + m from the workspace's start (4096 of them, a
// fixed place whatever tiles x S); slots (t, r) at t*S + r, 16384 floats
// each, after the counters' 16384 bytes.
// CHECK: %[[TB:.*]] = arith.muli %[[T]], %[[NS]]
// CHECK: %[[SLOTS:.*]] = llvm.getelementptr %[[WS]][16384] : (!llvm.ptr) -> !llvm.ptr, i8
// The tree: while (go && h < S), h from 1, carrying the 64 values.
// CHECK: %[[TREE:.*]]:66 = scf.while (%[[H:.*]] = %c1{{.*}}, %[[GO:.*]] = %true,
// CHECK: %[[MORE:.*]] = arith.cmpi ult, %[[H]], %[[NS]]
// CHECK: arith.andi %[[GO]], %[[MORE]]
// CHECK: } do {
// r = s & ~(h-1), p = s & ~(2h-1), m = p + h; a sibling iff m < S.
// CHECK: arith.addi %[[H]], %[[H]]
// CHECK: %[[R:.*]] = arith.andi %[[S]], %{{.*}} : index
// CHECK: %[[P:.*]] = arith.andi %[[S]], %{{.*}} : index
// CHECK: %[[MID:.*]] = arith.addi %[[P]], %{{.*}} : index
// CHECK: %[[SIB:.*]] = arith.cmpi ult, %[[MID]], %[[NS]]
// CHECK: scf.if %[[SIB]] -> (i1, f32,
// store: this range's sum into slot (t, r), 16-byte vectors.
// CHECK: arith.addi %[[TB]], %[[R]]
// CHECK: %[[COL:.*]] = arith.cmpi ult, %{{.*}}, %[[N]] : index
// CHECK: %[[LIVE:.*]] = arith.andi %[[ROWS]], %[[COL]] : i1
// CHECK: scf.if %[[LIVE]] {
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
// arrive: barrier, thread 0: fence, atomic add, fence; the second resets
// the counter and everybody learns the outcome through shared memory.
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c256_i32
// CHECK: %[[CTR:.*]] = llvm.getelementptr %[[WS]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i32
// CHECK: %[[FLAG:.*]] = memref.view
// CHECK: llvm.fence syncscope("device") acq_rel
// CHECK: %[[OLD:.*]] = llvm.atomicrmw add %[[CTR]], %{{.*}} syncscope("device") acq_rel
// CHECK: llvm.fence syncscope("device") acq_rel
// CHECK: llvm.store %{{.*}}, %[[CTR]] {alignment = 4 : i64} : i32, !llvm.ptr
// CHECK: memref.store %[[OLD]], %[[FLAG]]
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c256_i32
// CHECK: %[[SEEN:.*]] = memref.load %[[FLAG]]
// CHECK: %[[SECOND:.*]] = arith.cmpi eq, %[[SEEN]], %c1_i32
// combine: own + the sibling's slot (r ^ h) (= left + right: IEEE
// addition commutes).
// CHECK: scf.if %[[SECOND]] -> (i1, f32,
// CHECK: arith.xori %[[R]], %[[H]]
// CHECK: %[[LLIVE:.*]] = arith.andi %[[ROWS]], %{{.*}} : i1
// CHECK: scf.if %[[LLIVE]] -> (f32, f32, f32, f32)
// CHECK: %[[V:.*]] = llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK: %[[O:.*]] = llvm.extractelement %[[V]]
// CHECK: arith.addf %{{.*}}, %[[O]] : f32
// The root: the epilogue from the summed registers.
// CHECK: scf.if %[[TREE]]#1 {
// CHECK: vector.store
// CHECK: gpu.return

// The launch's epilogue (bias + ReLU) runs once, at the root of the tree,
// on the sum: after the tree, before the C stores.
// EPI-LABEL: gpu.func @gemm_epilogue_kernel_sm90_sk(
// EPI: scf.while
// EPI-NOT: arith.maximumf
// EPI: llvm.atomicrmw add
// EPI-NOT: arith.maximumf
// EPI: scf.if %{{.*}}#1 {
// EPI: memref.load %{{.*}} : memref<?xf16>
// EPI: arith.maximumf
// EPI: gpu.return

// META: "kernel": "gemm_kernel_sm90_sk",
// META: "max_tiles": 66,
// META: "split_k": {
// META-NEXT: "block_k": 64,
// META-NEXT: "k_dim": 1,
// META-NEXT: "k_param": 0,
// META-NEXT: "slice_bytes": 65536
// META: "workspace_bytes": 16384
// META: "kernel": "gemm_kernel_sm90"

// PTX-LABEL: .entry gemm_kernel_sm90_sk(
// PTX: st.global.v4.b32
// PTX: bar.sync 1, 256;
// PTX: fence.acq_rel.gpu;
// PTX-NEXT: atom.global.add.u32
// PTX-NEXT: fence.acq_rel.gpu;
// PTX: ld.global.v4.b32
