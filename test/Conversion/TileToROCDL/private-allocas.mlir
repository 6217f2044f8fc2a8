// RUN: tile-opt %s -split-input-file --pass-pipeline="builtin.module(gpu.module(gpu.func(tile-rocdl-private-allocas)))" -verify-diagnostics | FileCheck %s

// Per-thread arrays, also those created in a loop, become entry-block
// allocas in private memory, cast back to the type their users expect.
// CHECK-LABEL: gpu.func @arrays
// CHECK-NEXT: %[[A:.*]] = memref.alloca() : memref<8xf32, #gpu.address_space<private>>
// CHECK-NEXT: %[[FA:.*]] = memref.memory_space_cast %[[A]] : memref<8xf32, #gpu.address_space<private>> to memref<8xf32>
// CHECK-NEXT: %[[B:.*]] = memref.alloca() {alignment = 16 : i64} : memref<4xf16, #gpu.address_space<private>>
// CHECK-NEXT: %[[FB:.*]] = memref.memory_space_cast %[[B]]
// CHECK: scf.for
// CHECK-NOT: memref.alloca
// CHECK: memref.store %{{.*}}, %[[FA]]
// CHECK: memref.store %{{.*}}, %[[FB]]
gpu.module @m {
  gpu.func @arrays(%n: index) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %f = arith.constant 1.0 : f32
    %h = arith.constant 1.0 : f16
    scf.for %i = %c0 to %n step %c1 {
      %a = memref.alloca() : memref<8xf32>
      memref.store %f, %a[%c0] : memref<8xf32>
      %b = memref.alloca() {alignment = 16 : i64} : memref<4xf16>
      memref.store %h, %b[%c0] : memref<4xf16>
    }
    gpu.return
  }
}

// -----

// The AMDGPU backend has no dynamic stack allocation.
gpu.module @m {
  gpu.func @dynamic(%n: index) kernel {
    // expected-error @below {{per-thread array of dynamic size 'memref<?xf32>': the AMDGPU backend has no dynamic stack allocation}}
    %a = memref.alloca(%n) : memref<?xf32>
    gpu.return
  }
}
