// RUN: tile-opt %s --convert-gpu-to-emitc -split-input-file -verify-diagnostics | FileCheck %s

// The kernel: hoisted out of its gpu.module, CUDA kernel specifiers with the
// known block size as launch bounds, memref parameters expanded to the
// kernel ABI (allocated, aligned, offset, sizes, strides) and rebuilt.
// CHECK-LABEL: emitc.func @k_kernel
// CHECK-SAME: (%[[ALLOC:.*]]: !emitc.ptr<!emitc.opaque<"float">>, %[[ALIGNED:.*]]: !emitc.ptr<!emitc.opaque<"float">>, %[[OFF:.*]]: i64, %[[SIZE:.*]]: i64, %[[STRIDE:.*]]: i64, %[[S:.*]]: f32)
// CHECK-SAME: specifiers = ["extern \22C\22 __global__", "__launch_bounds__(64)"]
// CHECK-NOT: gpu.module
// What the type says is a constant (offset 0, unit stride), as on the LLVM
// path: the parameters for them stay in the ABI, unread.
// CHECK: %[[ZERO:.*]] = "emitc.constant"() <{value = 0 : i64}> : () -> i64
// CHECK: %[[ONE:.*]] = "emitc.constant"() <{value = 1 : i64}> : () -> i64
// CHECK: %[[M:.*]] = call_opaque "tile::make_memref<1>"(%[[ALLOC]], %[[ALIGNED]], %[[ZERO]], %[[SIZE]], %[[ONE]])
// CHECK: %[[T:.*]] = call_opaque "tile::thread_id_x<64>"() : () -> !emitc.size_t
// CHECK: %[[V:.*]] = call_opaque "tile::load"(%[[M]], %[[T]])
// CHECK: %[[SUM:.*]] = add %[[V]], %[[S]] : (f32, f32) -> f32
// CHECK: call_opaque "tile::barrier"()
// CHECK: call_opaque "tile::store"(%[[M]], %[[SUM]], %[[T]])
// CHECK: return
module attributes {gpu.container_module} {
  gpu.module @k_module {
    gpu.func @k_kernel(%a: memref<?xf32>, %s: f32) kernel
        attributes {known_block_size = array<i32: 64, 1, 1>} {
      %t = gpu.thread_id x
      %v = memref.load %a[%t] : memref<?xf32>
      %w = arith.addf %v, %s : f32
      gpu.barrier
      memref.store %w, %a[%t] : memref<?xf32>
      gpu.return
    }
  }
}

// -----

// Shared memory views, per-thread arrays, ops without a C++ operator and
// warp shuffles become library calls.
// CHECK-LABEL: emitc.func @r_kernel
// CHECK: %[[SMEM:.*]] = call_opaque "tile::dynamic_shared_memory"() : () -> !emitc.opaque<"tile::memref<int8_t, 1>">
// CHECK: call_opaque "tile::view<float, 1>"(%[[SMEM]], %{{.*}}, %{{.*}})
// CHECK: %[[REGS:.*]] = "emitc.variable"() <{value = #emitc.opaque<"">}> : () -> !emitc.array<4xf32>
// CHECK: call_opaque "tile::contiguous<1>"(%[[REGS]], %{{.*}})
// CHECK: call_opaque "tile::maximumf"
// CHECK: call_opaque "tile::divui<size_t>"
// CHECK: call_opaque "tile::shuffle_xor"(%{{.*}}, %{{.*}}, %{{.*}}) : (f32, i32, i32) -> f32
// CHECK: call_opaque "tile::exp"
// CHECK: call_opaque "tile::atomic_addf"
module attributes {gpu.container_module} {
  gpu.module @r_module {
    gpu.func @r_kernel(%x: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %m = arith.constant 16 : i32
      %w = arith.constant 32 : i32
      %smem = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %view = memref.view %smem[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<128xf32, #gpu.address_space<workgroup>>
      %regs = memref.alloca() : memref<4xf32>
      %t = gpu.thread_id x
      %a = memref.load %x[%t] : memref<?xf32>
      %b = memref.load %view[%t] : memref<128xf32, #gpu.address_space<workgroup>>
      %mx = arith.maximumf %a, %b : f32
      %i = arith.divui %t, %c4 : index
      %sh, %valid = gpu.shuffle xor %mx, %m, %w : f32
      %e = math.exp %sh : f32
      memref.store %e, %regs[%c0] : memref<4xf32>
      %old = memref.atomic_rmw addf %e, %x[%i] : (f32, memref<?xf32>) -> f32
      gpu.return
    }
  }
}

// -----

// sm_80 tensor-core and async-copy building blocks.
// CHECK-LABEL: emitc.func @mma_kernel
// CHECK: %[[D:.*]] = call_opaque "tile::element"
// CHECK: %[[S:.*]] = call_opaque "tile::element"
// CHECK: call_opaque "tile::cp_async<16, true>"(%[[D]], %[[S]], %{{.*}}) : (!emitc.ptr<!emitc.opaque<"tile::half">>, !emitc.ptr<!emitc.opaque<"tile::half">>, i32) -> i32
// CHECK: call_opaque "tile::cp_async_commit"() : () -> i32
// CHECK: call_opaque "tile::cp_async_wait<0>"()
// CHECK: call_opaque "tile::ldmatrix<4, true>"(%{{.*}}) : (!emitc.ptr<!emitc.opaque<"tile::half">>) -> !emitc.opaque<"tile::vec<tile::half, 8>">
// CHECK: call_opaque "tile::shuffle<2, 0, 1>"
// CHECK: call_opaque "tile::mma_sync_m16n8k16"(%{{.*}}, %{{.*}}, %{{.*}}) : (!emitc.opaque<"tile::vec<tile::half, 8>">, !emitc.opaque<"tile::vec<tile::half, 4>">, !emitc.opaque<"tile::vec<float, 4>">) -> !emitc.opaque<"tile::vec<float, 4>">
// CHECK: call_opaque "tile::extract"(%{{.*}}, %{{.*}}) : (!emitc.opaque<"tile::vec<float, 4>">, i32) -> f32
module attributes {gpu.container_module} {
  gpu.module @mma_module {
    gpu.func @mma_kernel(%g: memref<?xf16>, %c: vector<2x2xf32>) kernel {
      %c0 = arith.constant 0 : index
      %smem = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %s = memref.view %smem[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4096xf16, #gpu.address_space<workgroup>>
      %tok = nvgpu.device_async_copy %g[%c0], %s[%c0], 8 {bypassL1} : memref<?xf16> to memref<4096xf16, #gpu.address_space<workgroup>>
      %grp = nvgpu.device_async_create_group %tok
      nvgpu.device_async_wait %grp {numGroups = 0 : i32}
      %a = nvgpu.ldmatrix %s[%c0] {numTiles = 4 : i32, transpose = true} : memref<4096xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
      %b = vector.shuffle %a, %a [0, 1] : vector<4x2xf16>, vector<4x2xf16>
      %d = nvgpu.mma.sync(%a, %b, %c) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
      %e = vector.extract %d[1, 0] : f32 from vector<2x2xf32>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @bad_module {
    gpu.func @bad_kernel(%x: f32, %i: i32) kernel {
      // expected-error @below {{gpu.shuffle's `valid` result (only the value is available) has no C++ source lowering}}
      %sh, %valid = gpu.shuffle idx %x, %i, %i : f32
      %f = arith.select %valid, %sh, %x : f32
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @bad_module {
    gpu.func @bad_kernel(%x: memref<?xi32>, %v: i32) kernel {
      %c0 = arith.constant 0 : index
      // expected-error @below {{memref.atomic_rmw ori has no C++ source lowering}}
      %old = memref.atomic_rmw ori %v, %x[%c0] : (i32, memref<?xi32>) -> i32
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @bad_module {
    gpu.func @bad_kernel(%n: index) kernel {
      // expected-error @below {{memref.alloca of a dynamic shape or a strided layout has no C++ source lowering}}
      %a = memref.alloca(%n) : memref<?xf32>
      gpu.return
    }
  }
}

// -----

// An op nothing lowers: the conversion names it.
module attributes {gpu.container_module} {
  gpu.module @bad_module {
    gpu.func @bad_kernel(%x: f32) kernel {
      // expected-error @below {{failed to legalize operation 'math.atan2'}}
      %y = math.atan2 %x, %x : f32
      gpu.return
    }
  }
}

// -----

// max(x, 0 - x) is the integer absolute value: tile::absi (abs.s32), not a
// max and a negation (ptxas 13.0 folds those with a following max into a
// three-input max that drops the negation).
// CHECK-LABEL: emitc.func @abs_kernel
// CHECK: call_opaque "tile::absi<int32_t>"
module attributes {gpu.container_module} {
  gpu.module @abs_module {
    gpu.func @abs_kernel(%a: memref<?xi32>) kernel
        attributes {known_block_size = array<i32: 32, 1, 1>} {
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : i32
      %v = memref.load %a[%t] : memref<?xi32>
      %n = arith.subi %c0, %v : i32
      %m = arith.maxsi %v, %n : i32
      memref.store %m, %a[%t] : memref<?xi32>
      gpu.return
    }
  }
}
