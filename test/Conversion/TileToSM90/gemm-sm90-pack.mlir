// RUN: tile-opt %tile_src_root/examples/gemm.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize --convert-tile-gemm-to-sm90 | FileCheck %s
// RUN: tilec %tile_src_root/examples/gemm.mlir --target=cuda --chip=sm_90a -o %t.tileb
// RUN: tilec --info %t.tileb --section=metadata | FileCheck %s --check-prefix=META

// convert-tile-gemm-to-sm90 adds the runtime's operand repack kernel for
// the f16 operands (2-byte elements) to the sm90 module and names it in
// the TMA variants (not in _ldg, which maps nothing): two argument groups
// (A and B in one launch), blockIdx.y selects one; a grid-stride loop over
// the destination's 16-byte chunks, 8 clamped loads (zero past `cols`),
// one 16-byte aligned vector store.

// CHECK: kernel = "gemm_kernel_sm90", {{.*}}pack = "gemm_pack2_b2", pack_elem_bytes = 2, pack_operands = 2>, <"sm90_tma_wgmma", {{.*}}kernel = "gemm_kernel_sm90_ldg", block = [384, 1, 1], shared_bytes = {{[0-9]+}}, grid = sms>]
// CHECK-LABEL: gpu.func @gemm_pack2_b2(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[ROWS0:.*]]: i64, %{{.*}}: i64, %{{.*}}: i64, %[[DP0:.*]]: i64, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[ROWS1:.*]]: i64, %{{.*}}: i64, %{{.*}}: i64, %[[DP1:.*]]: i64) kernel
// CHECK: %[[Y:.*]] = gpu.block_id  y
// CHECK: %[[IS1:.*]] = arith.cmpi eq, %{{.*}}, %c1_i64
// CHECK: %[[ROWS:.*]] = arith.select %[[IS1]], %[[ROWS1]], %[[ROWS0]] : i64
// CHECK: %[[DP:.*]] = arith.select %[[IS1]], %[[DP1]], %[[DP0]] : i64
// CHECK: %[[CPR:.*]] = arith.divsi %[[DP]], %c8_i64
// CHECK: %[[TOTAL:.*]] = arith.muli %[[ROWS]], %[[CPR]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[TOTAL]] step %{{.*}} : i64 {
// CHECK-COUNT-8: llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr -> i16
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<8xi16>, !llvm.ptr
// CHECK: gpu.return

// In the metadata the two-operand kernel is named under "pack2", a key of
// its own (a runtime that knows only "pack" ignores it).
// META: "pack2": {
// META-NEXT: "elem_bytes": 2,
// META-NEXT: "kernel": "gemm_pack2_b2"
// META-NOT: "pack": {
