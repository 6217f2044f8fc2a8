// RUN: tile-opt %s -split-input-file -tile-nvvm-fast-div | FileCheck %s

// f32 divisions in a gpu.module become div.full.f32, 1-D f32 vectors element
// by element; other element types keep arith.divf.
// CHECK-LABEL: gpu.func @kernel
// CHECK: llvm.call_intrinsic "llvm.nvvm.div.full"(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// CHECK: arith.divf %{{.*}}, %{{.*}} : f64
// CHECK: arith.divf %{{.*}}, %{{.*}} : f16
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.nvvm.div.full"
// CHECK: vector.insert
// CHECK-NOT: arith.divf
gpu.module @m {
  gpu.func @kernel(%a: f32, %b: f32, %c: f64, %h: f16, %v: vector<2xf32>) kernel {
    %q = arith.divf %a, %b : f32
    %r = arith.divf %c, %c : f64
    %s = arith.divf %h, %h : f16
    %t = arith.divf %v, %v : vector<2xf32>
    gpu.return
  }
}

// -----

// Host code outside gpu.modules is left alone.
// CHECK-LABEL: func.func @host
// CHECK: arith.divf %{{.*}}, %{{.*}} : f32
func.func @host(%a: f32) -> f32 {
  %x = arith.divf %a, %a : f32
  return %x : f32
}
