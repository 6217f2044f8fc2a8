// RUN: not tilec %s --out-idx=5 -o /dev/null 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not tilec %s --out-idx=1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=SCALAR
// RUN: not tilec %s --backend=ctypes -o /dev/null 2>&1 | FileCheck %s --check-prefix=BACKEND
// RUN: not tilec %s --target=vulkan -o /dev/null 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not tilec %s.missing -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not tilec %s --pass-pipeline='builtin.module(no-such-pass)' -o /dev/null 2>&1 | FileCheck %s --check-prefix=PIPELINE
// RUN: not tilec %S/Inputs/two-launches.mlir -o /dev/null 2>&1 | FileCheck %s --check-prefix=LAUNCHES
// RUN: not tilec %S/Inputs/two-launches.mlir --mlir-print-op-on-diagnostic -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPDUMP

// RANGE: --out-idx 5 is out of range: the kernel has 2 parameters
// SCALAR: --out-idx 1 names a scalar parameter; outputs must be tensors
// BACKEND: error: unknown backend 'ctypes' for target 'cpu' (tilec generates code for: ffi, native)
// TARGET: for the --target option: unknown value 'vulkan' (expected one of: cpu, cuda
// TARGET-SAME: hip
// TARGET-SAME: metal
// MISSING: cannot read
// PIPELINE: no-such-pass
// An error on the kernel names the source line, without MLIR's op dump
// (the whole function in generic form) unless asked for.
// LAUNCHES: two-launches.mlir:2:1: error: a tile kernel must contain exactly one tile.launch, found 2
// LAUNCHES-NOT: see current operation
// OPDUMP: note: see current operation

func.func @k(%x: memref<?xf32>, %s: f32) attributes {tile.kernel} {
  %c1 = arith.constant 1 : index
  tile.launch blocks(%b) in (%c1) threads(32) {
  }
  return
}
