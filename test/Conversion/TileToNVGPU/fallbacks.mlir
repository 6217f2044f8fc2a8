// RUN: tile-opt %s --tile-infer-layouts --convert-tile-to-nvgpu --canonicalize --cse | FileCheck %s

// General paths: an i8 gemm (no tensor-core path yet) runs as SIMT loops
// over shared memory; a parallel body that reads a fragment transposed is
// not register-local, so the fragments go through shared scratch (after the
// two 1 KiB buffers) and the iterations are distributed over the threads.
// CHECK-LABEL: gpu.func @k_kernel
// CHECK-NOT: nvgpu.mma.sync
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c1
// CHECK: arith.extsi {{.*}} : i8 to i32
// CHECK: arith.muli {{.*}} : i32
// CHECK: gpu.barrier
// CHECK: memref.view %{{.*}}[%c2048][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<256xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} = %{{.*}} to %c256 step %c64
// CHECK: gpu.barrier
func.func @k(%A: memref<?x?xi8>, %B: memref<?x?xi8>, %C: memref<?x?xi32>, %X: memref<?x?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(64) {
    %As = tile.alloc : memref<32x32xi8, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x32xi8, #tile.scope<shared>>
    %Cf = tile.alloc : memref<32x32xi32, #tile.scope<fragment>>
    tile.copy %A[%c0, %c0] to %As : memref<?x?xi8> to memref<32x32xi8, #tile.scope<shared>>
    tile.copy %B[%c0, %c0] to %Bs : memref<?x?xi8> to memref<32x32xi8, #tile.scope<shared>>
    tile.gemm %As, %Bs, %Cf {clear} : memref<32x32xi8, #tile.scope<shared>>, memref<32x32xi8, #tile.scope<shared>>, memref<32x32xi32, #tile.scope<fragment>>
    tile.copy %Cf to %C[%c0, %c0] : memref<32x32xi32, #tile.scope<fragment>> to memref<?x?xi32>
    %F = tile.alloc : memref<16x16xf32, #tile.scope<fragment>>
    %G = tile.alloc : memref<16x16xf32, #tile.scope<fragment>>
    tile.copy %X[%c0, %c0] to %F : memref<?x?xf32> to memref<16x16xf32, #tile.scope<fragment>>
    tile.parallel (%i, %j) in [16, 16] {
      %v = memref.load %F[%j, %i] : memref<16x16xf32, #tile.scope<fragment>>
      memref.store %v, %G[%i, %j] : memref<16x16xf32, #tile.scope<fragment>>
    }
    tile.copy %G to %X[%c0, %c0] : memref<16x16xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}
