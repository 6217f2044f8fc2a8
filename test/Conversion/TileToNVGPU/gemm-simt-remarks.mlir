// RUN: tile-opt %s --tile-attach-metadata=target=cuda --tile-infer-layouts --convert-tile-to-nvgpu="chip=sm_80 remarks=true" -verify-diagnostics -o /dev/null

// A tile.gemm that still runs as SIMT FMAs says so, and why (remarks=true).
func.func @simt(%X: memref<?x?xf16>, %Y: memref<?x?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(32) {
    %Vs = tile.alloc : memref<16x8xf16, #tile.scope<shared>>
    %P = tile.alloc : memref<16x16xf16, #tile.scope<fragment>>
    %O = tile.alloc : memref<16x8xf32, #tile.scope<fragment>>
    %I = tile.alloc : memref<16x16xi8, #tile.scope<shared>>
    %J = tile.alloc : memref<16x16xi32, #tile.scope<fragment>>
    tile.copy %X[%c0, %c0] to %Vs : memref<?x?xf16> to memref<16x8xf16, #tile.scope<shared>>
    // P is the (transposed) A operand of a SIMT gemm: the default linear
    // layout, one column per thread and register.
    // expected-remark @below {{tile.copy between global memory and a fragment uses scalar accesses: the fragment layout gives no thread two contiguous elements of a row}}
    tile.copy %X[%c0, %c0] to %P : memref<?x?xf16> to memref<16x16xf16, #tile.scope<fragment>>
    // expected-remark @below {{tile.gemm lowered to SIMT FMAs (no tensor cores): a fragment A operand cannot be transposed}}
    tile.gemm %P, %Vs, %O {clear, transpose_a} : memref<16x16xf16, #tile.scope<fragment>>, memref<16x8xf16, #tile.scope<shared>>, memref<16x8xf32, #tile.scope<fragment>>
    // expected-remark @below {{tile.gemm lowered to SIMT FMAs (no tensor cores): no mma.sync for these element types}}
    tile.gemm %I, %I, %J {clear} : memref<16x16xi8, #tile.scope<shared>>, memref<16x16xi8, #tile.scope<shared>>, memref<16x16xi32, #tile.scope<fragment>>
    tile.copy %O to %Y[%c0, %c0] : memref<16x8xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}
