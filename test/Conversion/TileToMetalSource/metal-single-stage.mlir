// RUN: tile-opt %tile_src_root/examples/gemm.mlir -tile-metal-single-stage | FileCheck %s
// RUN: tile-opt %tile_src_root/examples/gemm.mlir -tile-metal-single-stage=remarks -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// Metal copies into threadgroup memory at once: one stage, not three.
// CHECK-LABEL: func.func @gemm
// CHECK: tile.pipelined {{.*}} stages(1)

// REMARK: remark: metal: tile.pipelined runs with 1 stage instead of 3 (Metal has no asynchronous copy to threadgroup memory)
