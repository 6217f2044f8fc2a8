// RUN: tile-opt %s -split-input-file -tile-prepare-metal-kernel -verify-diagnostics | FileCheck %s

// Per-thread arrays and what is derived from them are private (MSL
// `thread`); kernel parameters keep no memory space (MSL `device`).
// CHECK-LABEL: gpu.func @private_arrays
// CHECK-SAME: (%{{.*}}: memref<?xf32>)
// CHECK: memref.alloca() : memref<8xf32, #gpu.address_space<private>>
// CHECK: memref.extract_strided_metadata {{.*}} -> memref<f32, #gpu.address_space<private>>
// CHECK: memref.reinterpret_cast {{.*}} to memref<4xf32, #gpu.address_space<private>>
gpu.module @m {
  gpu.func @private_arrays(%x: memref<?xf32>) kernel {
    %c0 = arith.constant 0 : index
    %a = memref.alloca() : memref<8xf32>
    %b, %o, %s, %st = memref.extract_strided_metadata %a : memref<8xf32> -> memref<f32>, index, index, index
    %r = memref.reinterpret_cast %b to offset: [0], sizes: [4], strides: [1] : memref<f32> to memref<4xf32>
    %v = memref.load %r[%c0] : memref<4xf32>
    memref.store %v, %x[%c0] : memref<?xf32>
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @f64(%x: memref<?xf64>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @below {{the metal target cannot run 'memref.load': 64-bit floats (MSL has no double)}}
    %v = memref.load %x[%c0] : memref<?xf64>
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @f16_atomic(%x: memref<?xf16>, %v: f16) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @below {{the metal target cannot run 'memref.atomic_rmw': atomics on 16-bit floats (Metal has 32-bit int and f32 atomics)}}
    %old = memref.atomic_rmw addf %v, %x[%c0] : (f16, memref<?xf16>) -> f16
    gpu.return
  }
}
