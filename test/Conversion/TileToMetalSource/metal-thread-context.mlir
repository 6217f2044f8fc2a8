// RUN: tile-opt %s -tile-metal-thread-context | FileCheck %s

// The kernel becomes NAME_body with a trailing tile::thread_context, passed
// to the library calls that read the thread's position, the threadgroup
// memory or the SIMD lane; the others are unchanged.
// CHECK-LABEL: emitc.func @k_kernel_body(
// CHECK-SAME: %{{.*}}: i32, %[[CTX:.*]]: !emitc.opaque<"tile::thread_context">)
// CHECK: call_opaque "tile::thread_id_x<128>"(%[[CTX]])
// CHECK: call_opaque "tile::dynamic_shared_memory"(%[[CTX]])
// CHECK: call_opaque "tile::shuffle_xor"(%{{.*}}, %{{.*}}, %{{.*}}, %[[CTX]])
// CHECK: call_opaque "tile::barrier"() :
// CHECK: call_opaque "tile::shuffle<2, 0, 1>"(%{{.*}}, %{{.*}}) :
emitc.func @k_kernel(%arg0: i32) attributes {specifiers = ["static inline"]} {
  %0 = emitc.call_opaque "tile::thread_id_x<128>"() : () -> !emitc.size_t
  %1 = emitc.call_opaque "tile::dynamic_shared_memory"() : () -> !emitc.opaque<"tile::memref<threadgroup int8_t, 1>">
  %w = "emitc.constant"() <{value = 32 : i32}> : () -> i32
  %2 = emitc.call_opaque "tile::shuffle_xor"(%arg0, %arg0, %w) : (i32, i32, i32) -> i32
  emitc.call_opaque "tile::barrier"() : () -> ()
  %v = emitc.call_opaque "tile::make_vec"(%arg0, %arg0) : (i32, i32) -> !emitc.opaque<"tile::vec<int32_t, 2>">
  %3 = emitc.call_opaque "tile::shuffle<2, 0, 1>"(%v, %v) : (!emitc.opaque<"tile::vec<int32_t, 2>">, !emitc.opaque<"tile::vec<int32_t, 2>">) -> !emitc.opaque<"tile::vec<int32_t, 4>">
  emitc.return
}
