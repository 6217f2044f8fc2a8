// RUN: tile-opt %s --tile-attach-metadata=target=cuda --tile-infer-layouts --convert-tile-to-nvgpu=chip=sm_80 --canonicalize --cse | FileCheck %s
// RUN: tile-opt %tile_src_root/test/E2E/kernels/axpy3d.mlir --tile-attach-metadata=target=cuda --tile-infer-layouts --convert-tile-to-nvgpu=chip=sm_80 --canonicalize --cse | FileCheck %s --check-prefix=PAR

// `local` buffers hold the whole tile in every thread (docs/dialect.md).
// reduce fragment -> local: the source is staged in shared scratch, then
// every thread reduces all 16 rows into its own copy of the target.
// CHECK-LABEL: gpu.func @rowsum_kernel
// CHECK: %[[ACC:.*]] = memref.alloca() : memref<16xf32>
// CHECK: gpu.barrier
// CHECK: %[[S:.*]] = memref.view {{.*}} to memref<1024xf32, #gpu.address_space<workgroup>>
// CHECK: memref.store {{.*}}, %[[S]]
// CHECK: gpu.barrier
// CHECK: scf.for %[[I:.*]] = %c0 to %c16 step %c1
// CHECK: memref.load %[[ACC]][%[[I]]]
// CHECK: scf.for {{.*}} = %c0 to %c64 step %c1 iter_args
// CHECK: memref.load %[[S]]
// CHECK: arith.addf
// CHECK: memref.store {{.*}}, %[[ACC]][%[[I]]]
// CHECK: gpu.barrier
func.func @rowsum(%X: memref<?x64xf32>, %Y: memref<?xf32> {tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %M = memref.dim %X, %c0 : memref<?x64xf32>
  %g = arith.ceildivui %M, %c16 : index
  tile.launch blocks(%b) in (%g) threads(64) {
    %x = tile.alloc : memref<16x64xf32, #tile.scope<fragment>>
    %acc = tile.alloc : memref<16xf32, #tile.scope<local>>
    %row = arith.muli %b, %c16 : index
    tile.copy %Y[%row] to %acc : memref<?xf32> to memref<16xf32, #tile.scope<local>>
    tile.copy %X[%row, %c0] to %x : memref<?x64xf32> to memref<16x64xf32, #tile.scope<fragment>>
    tile.reduce sum %x into %acc {dim = 1 : i64} : memref<16x64xf32, #tile.scope<fragment>> into memref<16xf32, #tile.scope<local>>
    tile.copy %acc to %Y[%row] : memref<16xf32, #tile.scope<local>> to memref<?xf32>
  }
  return
}

// tile.parallel writing a local buffer: the local tile goes to shared
// scratch (each thread stores a share of its identical copy), the
// iterations run distributed on the scratch copy, then every thread copies
// the whole tile back; only thread 0 writes Y.
// PAR-LABEL: gpu.func @axpy3d_kernel
// PAR: %[[Y:.*]] = memref.alloca() : memref<2x8x32xf32>
// PAR: %[[V:.*]] = memref.view %{{.*}}[%c4096][] {{.*}} to memref<512xf32
// PAR: scf.for %[[L:.*]] = %thread_id_x to %c512 step %c64
// PAR: memref.load %[[Y]]
// PAR: memref.store {{.*}}, %[[V]][%[[L]]]
// PAR: gpu.barrier
// PAR: scf.for {{.*}} = %thread_id_x to %c512 step %c64
// PAR: arith.mulf
// PAR: memref.store {{.*}}, %[[V]]
// PAR: gpu.barrier
// PAR: scf.for {{.*}} = %c0 to %c2 step %c1
// PAR: memref.load %[[V]]
// PAR: memref.store {{.*}}, %[[Y]]
// PAR: gpu.barrier
// PAR: arith.cmpi eq, %thread_id_x, %c0
