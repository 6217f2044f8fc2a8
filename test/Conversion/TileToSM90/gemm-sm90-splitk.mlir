// RUN: tile-opt %tile_src_root/examples/gemm.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize --convert-tile-gemm-to-sm90 | FileCheck %s
// RUN: tile-opt %tile_src_root/examples/gemm_epilogue.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize --convert-tile-gemm-to-sm90 | FileCheck %s --check-prefix=EPI
// RUN: tilec %tile_src_root/examples/gemm.mlir --target=cuda --chip=sm_90a -o %t.tileb
// RUN: tilec --info %t.tileb --section=metadata | FileCheck %s --check-prefix=META
// RUN: tilec %tile_src_root/examples/gemm.mlir --target=cuda --chip=sm_90a --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx

// The split-K variant (SplitK.cpp), first in the list: for launches of at
// most 66 tiles; the runtime picks S K-slices per launch (split_k = [A's
// param, its K dim, 64 per K tile]) and passes the workspace (66
// semaphores padded to 256 bytes + 66 f32 128x128 partial tiles).
// CHECK: variants = [<"sm90_tma_wgmma", chip = "sm_90a", kernel = "gemm_kernel_sm90_sk", block = [384, 1, 1], shared_bytes = 164864, max_tiles = 66, schedule = "splitk", tma = [{{.*}}], split_k = [0, 1, 64], workspace_bytes = 4325888, pack = "gemm_pack_b2", pack_elem_bytes = 2>, <"sm90_tma_wgmma", {{.*}}kernel = "gemm_kernel_sm90_wide", {{.*}}coarsen = [2, 1, 1]>, <"sm90_tma_wgmma", chip = "sm_90a", kernel = "gemm_kernel_sm90",
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
// Consumers: the main loop over the slice, then the in-order reduction.
// CHECK: nvvm.setmaxregister  increase 232
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[CNT]] step
// CHECK: nvgpu.warpgroup.mma
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: %[[SEM:.*]] = llvm.getelementptr %[[WS]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i32
// Partials after the semaphores (66 x 4 bytes padded to 512): 16384 floats
// per tile.
// CHECK: arith.muli %[[T]], %c16384
// CHECK: %[[P:.*]] = llvm.getelementptr %[[WS]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// Slice s > 0 waits for sem == s (thread 0, acquire at GPU scope), then
// every consumer thread adds its stored values.
// CHECK: %[[SI32:.*]] = arith.index_cast %[[S]] : index to i32
// CHECK: %[[PREV:.*]] = arith.cmpi ugt, %[[S]], %c0
// CHECK: scf.if %[[PREV]] -> (f32,
// CHECK: scf.while
// CHECK: %[[SEEN:.*]] = llvm.load %[[SEM]] atomic syncscope("device") acquire
// CHECK: arith.cmpi ne, %[[SEEN]], %[[SI32]] : i32
// CHECK: nvvm.barrier id = %c1_i32 number_of_threads = %c256_i32
// CHECK: llvm.getelementptr %[[P]][0]
// CHECK: llvm.load
// CHECK: arith.addf
// CHECK: llvm.getelementptr %[[P]][256]
// Last slice: epilogue from the summed registers, then sem = 0.
// CHECK: %[[LAST:.*]] = arith.cmpi eq, %{{.*}}, %[[NS]]
// CHECK: scf.if %[[LAST]] {
// CHECK: vector.store
// CHECK: llvm.store %{{.*}}, %[[SEM]] {alignment = 4 : i64} : i32, !llvm.ptr
// CHECK: } else {
// Other slices: store the sum, barrier, release sem = s + 1.
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr
// CHECK: nvvm.barrier id = %c1_i32 number_of_threads = %c256_i32
// CHECK: llvm.fence syncscope("device") release
// CHECK: llvm.store %{{.*}}, %[[SEM]] atomic syncscope("device") monotonic {alignment = 4 : i64} : i32, !llvm.ptr
// CHECK: gpu.return

// The launch's epilogue (bias + ReLU) runs once, in the last slice, on the
// sum: after the wait, before the C stores.
// EPI-LABEL: gpu.func @gemm_epilogue_kernel_sm90_sk(
// EPI: llvm.load %{{.*}} atomic syncscope("device") acquire
// EPI: scf.if %{{.*}} {
// EPI: memref.load %{{.*}} : memref<?xf16>
// EPI: arith.maximumf
// EPI: } else {
// EPI-NOT: arith.maximumf
// EPI: llvm.fence syncscope("device") release
// EPI: gpu.return

// META: "kernel": "gemm_kernel_sm90_sk",
// META: "max_tiles": 66,
// META: "split_k": {
// META-NEXT: "block_k": 64,
// META-NEXT: "k_dim": 1,
// META-NEXT: "k_param": 0
// META: "workspace_bytes": 4325888

// PTX-LABEL: .entry gemm_kernel_sm90_sk(
// PTX: ld.acquire.gpu.global.b32
// PTX: fence.acq_rel.gpu;
// PTX: st.relaxed.gpu.global.b32
