// RUN: tile-opt %s -split-input-file -tile-nvvm-ftz-exp2 | FileCheck %s

// f32 exp2 in a gpu.module becomes the flush-to-zero approximation; other
// element types keep math.exp2 (libdevice then lowers them).
// CHECK-LABEL: gpu.func @kernel
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz"(%{{.*}}) : (f32) -> f32
// CHECK: math.exp2 %{{.*}} : f64
// CHECK: math.exp2 %{{.*}} : vector<4xf32>
gpu.module @m {
  gpu.func @kernel(%a: f32, %b: f64, %v: vector<4xf32>) kernel {
    %x = math.exp2 %a : f32
    %y = math.exp2 %b : f64
    %z = math.exp2 %v : vector<4xf32>
    gpu.return
  }
}

// -----

// Host code outside gpu.modules is left alone.
// CHECK-LABEL: func.func @host
// CHECK: math.exp2 %{{.*}} : f32
func.func @host(%a: f32) -> f32 {
  %x = math.exp2 %a : f32
  return %x : f32
}
