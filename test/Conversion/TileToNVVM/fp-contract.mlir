// RUN: tile-opt %s -split-input-file -tile-fp-contract | FileCheck %s

// Float arith ops inside a gpu.module get `contract`, keeping their other
// flags; integer ops have no fast-math flags.
// CHECK-LABEL: gpu.func @kernel
// CHECK: arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<nnan,contract> : f32
// CHECK: arith.addi %{{.*}}, %{{.*}} : i32
gpu.module @m {
  gpu.func @kernel(%a: f32, %b: f32, %i: i32) kernel {
    %x = arith.mulf %a, %b : f32
    %y = arith.addf %x, %b fastmath<nnan> : f32
    %j = arith.addi %i, %i : i32
    gpu.return
  }
}

// -----

// Host code outside gpu.modules is left alone.
// CHECK-LABEL: func.func @host
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
func.func @host(%a: f32) -> f32 {
  %x = arith.mulf %a, %a : f32
  return %x : f32
}
