// RUN: tile-opt %s -split-input-file -tile-nvvm-expand-arith | FileCheck %s

// Float minimum/maximum stay: NVPTX has max.NaN / min.NaN for them.
// CHECK-LABEL: func.func @keeps_min_max
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK-NOT: arith.cmpf
func.func @keeps_min_max(%a: f32, %b: f32) -> (f32, f32) {
  %x = arith.maximumf %a, %b : f32
  %y = arith.minimumf %a, %b : f32
  return %x, %y : f32, f32
}

// -----

// The integer ceil/floor divisions, which arith-to-llvm cannot convert,
// are expanded.
// CHECK-LABEL: func.func @expands_divisions
// CHECK-NOT: arith.ceildivui
// CHECK-NOT: arith.floordivsi
// CHECK: arith.divui
// CHECK: arith.divsi
func.func @expands_divisions(%a: index, %b: i32) -> (index, i32) {
  %c64 = arith.constant 64 : index
  %c7 = arith.constant 7 : i32
  %x = arith.ceildivui %a, %c64 : index
  %y = arith.floordivsi %b, %c7 : i32
  return %x, %y : index, i32
}

// -----

// math.trunc, which no upstream lowering takes to NVVM, becomes the LLVM
// intrinsic (cvt.rzi).
// CHECK-LABEL: func.func @trunc
// CHECK: llvm.intr.trunc(%{{.*}}) : (f32) -> f32
// CHECK-NOT: math.trunc
func.func @trunc(%a: f32) -> f32 {
  %t = math.trunc %a : f32
  return %t : f32
}
