// RUN: tile-opt %tile_src_root/examples/gemm.mlir --tile-to-rocdl | FileCheck %s --check-prefix=GEMM
// RUN: tile-opt %tile_src_root/examples/softmax.mlir --tile-to-rocdl="chip=gfx90a" | FileCheck %s --check-prefix=SOFTMAX
// RUN: tile-opt %tile_src_root/examples/rmsnorm.mlir --tile-to-rocdl | FileCheck %s --check-prefix=OCML
// RUN: tile-opt %tile_src_root/test/E2E/kernels/math_functions.mlir --tile-to-rocdl | FileCheck %s --check-prefix=MATH

// The whole pipeline: a gpu.module of LLVM/ROCDL ops with its #rocdl.target,
// stopping before serialization (tilec --target=hip serializes it).
// GEMM: gpu.module @gemm_module [#rocdl.target<O = 3, chip = "gfx942", abi = "500">]
// GEMM: llvm.func @gemm_kernel(
// GEMM-SAME: rocdl.kernel
// Per-thread arrays in private memory (address space 5), in the entry block.
// GEMM: llvm.alloca %{{.*}} x f32 : (i64) -> !llvm.ptr<5>
// GEMM: rocdl.workgroup.id.x
// 16-byte global loads into LDS (8-byte stores: the swizzle's unit), the
// barrier, 8-byte LDS reads of A, MFMA.
// GEMM: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<8xf16>
// GEMM: llvm.store %{{.*}} {alignment = 8 : i64} : vector<4xf16>, !llvm.ptr<3>
// GEMM: rocdl.barrier
// GEMM: llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<3> -> vector<4xf16>
// GEMM: rocdl.mfma.f32.16x16x16f16 %{{.*}} : (vector<4xf16>, vector<4xf16>, vector<4xf32>, i32, i32, i32) -> vector<4xf32>

// Wave64 shuffles become DPP / ds_swizzle / ds_bpermute.
// SOFTMAX: gpu.module @softmax_module [#rocdl.target<O = 3, chip = "gfx90a", abi = "500">]
// SOFTMAX: rocdl.ds_swizzle
// SOFTMAX: rocdl.ds_bpermute

// Math without an instruction calls ocml (linked by tilec from the ROCm
// device libraries only then).
// OCML: llvm.func @__ocml_rsqrt_f32(f32) -> f32

// math.tan and math.tanh would reach the AMDGPU backend as llvm.tan /
// llvm.tanh, which it cannot select: math-expand-ops rewrites them with
// sin / cos and exp; the other functions are OCML calls.
// MATH-DAG: llvm.func @__ocml_sin_f32
// MATH-DAG: llvm.func @__ocml_cos_f32
// MATH-DAG: llvm.func @__ocml_log1p_f32
// MATH-NOT: llvm.intr.tan
// MATH-NOT: math.
