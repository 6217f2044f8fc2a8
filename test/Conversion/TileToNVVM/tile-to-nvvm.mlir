// RUN: tile-opt %tile_src_root/examples/gemm.mlir --tile-to-nvvm="chip=sm_80 format=none" | FileCheck %s --check-prefix=NVVM
// RUN: tile-opt %tile_src_root/examples/gemm.mlir --tile-to-nvvm="chip=sm_90a format=isa" -o %t.isa.mlir
// RUN: FileCheck %s --check-prefix=PTX < %t.isa.mlir
// RUN: FileCheck %s --check-prefix=PTX-CPASYNC < %t.isa.mlir
// RUN: FileCheck %s --check-prefix=PTX-LDMATRIX < %t.isa.mlir
// RUN: tilec %tile_src_root/examples/gemm.mlir --target=cuda --chip=sm_80 --emit=ptx -o - | FileCheck %s --check-prefix=PTX80

// Before serialization: the kernel in the NVVM dialect, with the default
// (expanded memref descriptor) calling convention, 3 x (ptr, ptr, i64 offset,
// 2 x i64 sizes, 2 x i64 strides). Then the PTX (format=isa, and tilec's
// --emit=ptx for CUDA) has cp.async, ldmatrix and mma.sync.
// NVVM: gpu.module @gemm_module [#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">]
// NVVM: llvm.func @gemm_kernel(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, nvvm.kernel
// NVVM: nvvm.cp.async.shared.global
// NVVM: nvvm.ldmatrix
// NVVM: nvvm.mma.sync

// PTX: gpu.binary @gemm_module
// PTX-SAME: .target sm_90a
// PTX-SAME: .entry gemm_kernel(
// PTX-SAME: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX-CPASYNC: cp.async.cg.shared.global
// PTX-LDMATRIX: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-LDMATRIX-SAME: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16

// PTX80: .target sm_80
// PTX80: .visible .entry gemm_kernel(
// PTX80-DAG: cp.async.cg.shared.global
// PTX80-DAG: cp.async.wait_group 1
// PTX80-DAG: cp.async.wait_group 0
// PTX80-DAG: bar.sync 0
// PTX80-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX80-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX80-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
