// RUN: tile-opt %s -split-input-file --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize --convert-tile-gemm-to-sm90=remarks=1 2>%t.remarks | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.remarks

// Coarse tiles (WideTile.cpp, GemmMatch.h coarseTile) of launch tiles other
// than 128x128: CTA tiles of 128x256, and of 128x128 for 64x64.

// 64x64 launch tiles: 2 block rows (y moves A's row) x 4 block columns (x
// moves B's column); the cost model's estimate 0.95 / 0.35.
// CHECK: kernel = "g64_kernel_sm90_wide", block = [384, 1, 1], shared_bytes = 230400, grid = sms, schedule = "wide", tma = [<param = 0, type = f16, box = [64, 64], {{.*}}coarsen = [4, 2, 1], coarse_speedup = 271>
// 64x64 launch tiles also get 128x128 CTA tiles of 2 x 2 blocks (the
// estimate 0.76 / 0.35): one stage = two A boxes and two B boxes, a 64x128
// accumulator per warpgroup.
// CHECK-SAME: kernel = "g64_kernel_sm90_wide128", block = [384, 1, 1], {{.*}}grid = sms, schedule = "wide", {{.*}}coarsen = [2, 2, 1], coarse_speedup = 217>
// CHECK-LABEL: gpu.func @g64_kernel_sm90_wide128(
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}, %c32768
// CHECK-COUNT-4: nvgpu.tma.async.load %{{.*}} -> memref<64x64xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.warpgroup.mma {{.*}} -> <fragmented = vector<64x128xf32>>
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @g64_kernel_sm90_wide(
// The warpgroup index from lane 0 (warp-uniform for ptxas, so that the
// consumers' branch on it keeps the tile loop's counters uniform).
// CHECK: %[[WGS:.*]] = nvvm.shfl.sync  idx %{{.*}}, %{{.*}}, %c0_i32, %c31_i32 : i32 -> i32
// CHECK-NEXT: %[[WG:.*]] = arith.index_castui %[[WGS]] : i32 to index
// The producer: one stage = two 64-row A boxes (block rows 0 and 1) and
// four 64-column B boxes (block columns 0..3).
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}, %c49152
// CHECK-COUNT-2: nvgpu.tma.async.load %{{.*}} -> memref<64x64xf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-4: nvgpu.tma.async.load %{{.*}} -> memref<64x64xf16, #gpu.address_space<workgroup>>
// The consumers: a 64x256 accumulator per warpgroup, whose rows are one
// block row (warpgroup 0: row 0, else row 1); each block's chunk under its
// grid check but the first; a tile's first chunk waits for every earlier
// TMA store (a tile may commit an odd number of chunks).
// CHECK: nvgpu.warpgroup.mma {{.*}} -> <fragmented = vector<64x256xf32>>
// CHECK: %[[WG0:.*]] = arith.cmpi eq, %[[WG]], %c0
// CHECK-NEXT: scf.if %[[WG0]] {
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: nvgpu.tma.async.store
// CHECK: nvvm.cp.async.bulk.wait_group 1 {read}
// CHECK: } else {
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: gpu.return
func.func @g64(%A: memref<?x?xf16> {tile.name = "A", tile.dims = ["M", "K"]},
               %B: memref<?x?xf16> {tile.name = "B", tile.dims = ["K", "N"]},
               %C: memref<?x?xf16> {tile.name = "C", tile.dims = ["M", "N"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %M = memref.dim %A, %c0 : memref<?x?xf16>
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %N = memref.dim %B, %c1 : memref<?x?xf16>
  %gy = arith.ceildivui %M, %c64 : index
  %gx = arith.ceildivui %N, %c64 : index
  %nk = arith.ceildivui %K, %c32 : index
  tile.launch blocks(%bx, %by) in (%gx, %gy) threads(128) {
    %As = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x64xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    %m0 = arith.muli %by, %c64 : index
    %n0 = arith.muli %bx, %c64 : index
    tile.clear %Cf : memref<64x64xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(3) {
      %k0 = arith.muli %k, %c32 : index
      tile.copy %A[%m0, %k0] to %As : memref<?x?xf16> to memref<64x32xf16, #tile.scope<shared>>
      tile.copy %B[%k0, %n0] to %Bs : memref<?x?xf16> to memref<32x64xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<64x32xf16, #tile.scope<shared>>, memref<32x64xf16, #tile.scope<shared>>, memref<64x64xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%m0, %n0] : memref<64x64xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}

// -----

// 128x64 launch tiles: 4 block columns, one A box of 128 rows (and no
// 128x128 variant: 128 rows already).
// CHECK: kernel = "g128x64_kernel_sm90_wide", {{.*}}coarsen = [4, 1, 1], coarse_speedup = 197>
// CHECK-NOT: g128x64_kernel_sm90_wide128
// CHECK-LABEL: gpu.func @g128x64_kernel_sm90_wide(
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}, %c49152
// CHECK: nvgpu.tma.async.load %{{.*}} -> memref<128x64xf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-4: nvgpu.tma.async.load %{{.*}} -> memref<64x64xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.warpgroup.mma {{.*}} -> <fragmented = vector<64x256xf32>>
// CHECK: gpu.return
func.func @g128x64(%A: memref<?x?xf16> {tile.name = "A", tile.dims = ["M", "K"]},
                   %B: memref<?x?xf16> {tile.name = "B", tile.dims = ["K", "N"]},
                   %C: memref<?x?xf16> {tile.name = "C", tile.dims = ["M", "N"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %M = memref.dim %A, %c0 : memref<?x?xf16>
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %N = memref.dim %B, %c1 : memref<?x?xf16>
  %gy = arith.ceildivui %M, %c128 : index
  %gx = arith.ceildivui %N, %c64 : index
  %nk = arith.ceildivui %K, %c32 : index
  tile.launch blocks(%bx, %by) in (%gx, %gy) threads(128) {
    %As = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x64xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x64xf32, #tile.scope<fragment>>
    %m0 = arith.muli %by, %c128 : index
    %n0 = arith.muli %bx, %c64 : index
    tile.clear %Cf : memref<128x64xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(3) {
      %k0 = arith.muli %k, %c32 : index
      tile.copy %A[%m0, %k0] to %As : memref<?x?xf16> to memref<128x32xf16, #tile.scope<shared>>
      tile.copy %B[%k0, %n0] to %Bs : memref<?x?xf16> to memref<32x64xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<128x32xf16, #tile.scope<shared>>, memref<32x64xf16, #tile.scope<shared>>, memref<128x64xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%m0, %n0] : memref<128x64xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}

// -----

// A 1-D grid whose block index moves both A's row and B's column: no
// coarse tiles, and a remark says why.
// REMARK: remark: sm90: no wide-tile variant for this GEMM: no launch grid axis moves only A's tile row or only B's tile column (and no batch index)
// CHECK-LABEL: gpu.func @g1d_kernel_sm90(
// CHECK-NOT: g1d_kernel_sm90_wide
func.func @g1d(%A: memref<?x?xf16> {tile.name = "A", tile.dims = ["M", "K"]},
               %B: memref<?x?xf16> {tile.name = "B", tile.dims = ["K", "N"]},
               %C: memref<?x?xf16> {tile.name = "C", tile.dims = ["M", "N"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %M = memref.dim %A, %c0 : memref<?x?xf16>
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %N = memref.dim %B, %c1 : memref<?x?xf16>
  %gy = arith.ceildivui %M, %c64 : index
  %gx = arith.ceildivui %N, %c64 : index
  %g = arith.muli %gx, %gy : index
  %nk = arith.ceildivui %K, %c32 : index
  tile.launch blocks(%b) in (%g) threads(128) {
    %As = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x64xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    %by = arith.divui %b, %gx : index
    %bx = arith.remui %b, %gx : index
    %m0 = arith.muli %by, %c64 : index
    %n0 = arith.muli %bx, %c64 : index
    tile.clear %Cf : memref<64x64xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(3) {
      %k0 = arith.muli %k, %c32 : index
      tile.copy %A[%m0, %k0] to %As : memref<?x?xf16> to memref<64x32xf16, #tile.scope<shared>>
      tile.copy %B[%k0, %n0] to %Bs : memref<?x?xf16> to memref<32x64xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<64x32xf16, #tile.scope<shared>>, memref<32x64xf16, #tile.scope<shared>>, memref<64x64xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%m0, %n0] : memref<64x64xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}
