// RUN: tile-opt %s -split-input-file --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize=remarks=1 --convert-tile-gemm-to-sm90=remarks=1 2>%t.remarks | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.remarks

// Launch tiles of more than 128 rows (GemmMatch.h splitTile, WideTile.cpp):
// each block's 128-row parts are CTA tiles of their own, the kernel
// NAME_kernel_sm90_split, launched for every launch.

// 256x128 launch tiles: the narrow kernels (16 and 64 rows) for GEMV-like
// launches, split-K over the first 128-row part for launches of at most 128
// rows, then 2 parts along y (which moves A's row) and 2 block columns
// along x: 128x256 CTA tiles, and 128x128 ones (one part each, twice the
// CTAs for small grids); the runtime counts their tiles (coarsen, split)
// and takes the faster. No other Hopper variant but the pack kernel.
// REMARK: remark: sm90: the 256-row launch tile runs as 2 CTA tiles of 128 rows
// CHECK: kernel = "g256_kernel_sm90_nr16"
// CHECK-SAME: kernel = "g256_kernel_sm90_nr64"
// CHECK-SAME: kernel = "g256_kernel_sm90_sk128", block = [384, 1, 1], shared_bytes = {{[0-9]+}}, schedule = "splitk", tma = [<param = 0, type = f16, box = [64, 128]
// CHECK-SAME: split_k = [0, 1, 64, 65536], workspace_bytes = 16384, pack = "g256_pack2_b2", pack_elem_bytes = 2, pack_operands = 2, max_rows = [128, 0, 2]>
// CHECK-SAME: kernel = "g256_kernel_sm90_split", block = [384, 1, 1], shared_bytes = {{[0-9]+}}, grid = sms, schedule = "split", tma = [<param = 0, type = f16, box = [64, 128]
// CHECK-SAME: pack = "g256_pack2_b2", pack_elem_bytes = 2, pack_operands = 2, coarsen = [2, 1, 1], coarse_speedup = 125, split = 2>
// CHECK-SAME: kernel = "g256_kernel_sm90_split128", block = [384, 1, 1], shared_bytes = {{[0-9]+}}, grid = sms, schedule = "split", tma = [<param = 0, type = f16, box = [64, 128]
// CHECK-SAME: coarsen = [1, 1, 1], coarse_speedup = 100, split = 2>
// CHECK-NOT: g256_kernel_sm90_wide
// CHECK-LABEL: gpu.func @g256_kernel_sm90_split(
// The coarse grid: y times 2 parts, x divided by 2 blocks; a tile's block
// and part along y.
// CHECK: %[[GX:.*]] = arith.ceildivui %{{.*}}, %c2{{.*}} : index
// CHECK: arith.divui %{{.*}}, %c2
// CHECK: arith.remui %{{.*}}, %c2
// One stage: a 128-row A box (this part's rows) and four 64-column B boxes.
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}, %c49152
// CHECK-COUNT-1: nvgpu.tma.async.load %{{.*}} -> memref<128x64xf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-4: nvgpu.tma.async.load %{{.*}} -> memref<64x64xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.warpgroup.mma {{.*}} -> <fragmented = vector<64x256xf32>>
// CHECK: gpu.return
func.func @g256(%A: memref<?x?xf16> {tile.name = "A", tile.dims = ["M", "K"]},
                %B: memref<?x?xf16> {tile.name = "B", tile.dims = ["K", "N"]},
                %C: memref<?x?xf16> {tile.name = "C", tile.dims = ["M", "N"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cKT = arith.constant 32 : index
  %cTM = arith.constant 256 : index
  %cTN = arith.constant 128 : index
  %M = memref.dim %A, %c0 : memref<?x?xf16>
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %N = memref.dim %B, %c1 : memref<?x?xf16>
  %gy = arith.ceildivui %M, %cTM : index
  %gx = arith.ceildivui %N, %cTN : index
  %nk = arith.ceildivui %K, %cKT : index
  tile.launch blocks(%bx, %by) in (%gx, %gy) threads(128) {
    %As = tile.alloc : memref<256x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<256x128xf32, #tile.scope<fragment>>
    %m0 = arith.muli %by, %cTM : index
    %n0 = arith.muli %bx, %cTN : index
    tile.clear %Cf : memref<256x128xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(3) {
      %k0 = arith.muli %k, %cKT : index
      tile.copy %A[%m0, %k0] to %As : memref<?x?xf16> to memref<256x32xf16, #tile.scope<shared>>
      tile.copy %B[%k0, %n0] to %Bs : memref<?x?xf16> to memref<32x128xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<256x32xf16, #tile.scope<shared>>, memref<32x128xf16, #tile.scope<shared>>, memref<256x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%m0, %n0] : memref<256x128xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}

// -----

// 192 rows: neither 64 nor a multiple of 128; the sm_80 lowering.
// REMARK: remark: no sm90 GEMM kernels: tile M must be 64 or a multiple of 128 up to 512
// CHECK-LABEL: func.func @g192(
// CHECK-NOT: g192_kernel_sm90
func.func @g192(%A: memref<?x?xf16> {tile.name = "A", tile.dims = ["M", "K"]},
                %B: memref<?x?xf16> {tile.name = "B", tile.dims = ["K", "N"]},
                %C: memref<?x?xf16> {tile.name = "C", tile.dims = ["M", "N"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cKT = arith.constant 32 : index
  %cTM = arith.constant 192 : index
  %cTN = arith.constant 128 : index
  %M = memref.dim %A, %c0 : memref<?x?xf16>
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %N = memref.dim %B, %c1 : memref<?x?xf16>
  %gy = arith.ceildivui %M, %cTM : index
  %gx = arith.ceildivui %N, %cTN : index
  %nk = arith.ceildivui %K, %cKT : index
  tile.launch blocks(%bx, %by) in (%gx, %gy) threads(128) {
    %As = tile.alloc : memref<192x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<192x128xf32, #tile.scope<fragment>>
    %m0 = arith.muli %by, %cTM : index
    %n0 = arith.muli %bx, %cTN : index
    tile.clear %Cf : memref<192x128xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(3) {
      %k0 = arith.muli %k, %cKT : index
      tile.copy %A[%m0, %k0] to %As : memref<?x?xf16> to memref<192x32xf16, #tile.scope<shared>>
      tile.copy %B[%k0, %n0] to %Bs : memref<?x?xf16> to memref<32x128xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<192x32xf16, #tile.scope<shared>>, memref<32x128xf16, #tile.scope<shared>>, memref<192x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%m0, %n0] : memref<192x128xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}

// -----

// A 1-D grid whose block index moves both A's row and B's column: no
// split tiles, so the sm_80 lowering, and a remark says why.
// REMARK: remark: no sm90 GEMM kernels: the 256-row launch tile would run as CTA tiles of 128 rows, but no launch grid axis moves only A's tile row (and no batch index)
// CHECK-LABEL: func.func @g1d(
// CHECK-NOT: g1d_kernel_sm90
func.func @g1d(%A: memref<?x?xf16> {tile.name = "A", tile.dims = ["M", "K"]},
                %B: memref<?x?xf16> {tile.name = "B", tile.dims = ["K", "N"]},
                %C: memref<?x?xf16> {tile.name = "C", tile.dims = ["M", "N"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cKT = arith.constant 32 : index
  %cTM = arith.constant 256 : index
  %cTN = arith.constant 128 : index
  %M = memref.dim %A, %c0 : memref<?x?xf16>
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %N = memref.dim %B, %c1 : memref<?x?xf16>
  %gy = arith.ceildivui %M, %cTM : index
  %gx = arith.ceildivui %N, %cTN : index
  %nk = arith.ceildivui %K, %cKT : index
  %gxy = arith.muli %gx, %gy : index
  tile.launch blocks(%b) in (%gxy) threads(128) {
    %As = tile.alloc : memref<256x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<256x128xf32, #tile.scope<fragment>>
    %by = arith.divui %b, %gx : index
    %bx = arith.remui %b, %gx : index
    %m0 = arith.muli %by, %cTM : index
    %n0 = arith.muli %bx, %cTN : index
    tile.clear %Cf : memref<256x128xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(3) {
      %k0 = arith.muli %k, %cKT : index
      tile.copy %A[%m0, %k0] to %As : memref<?x?xf16> to memref<256x32xf16, #tile.scope<shared>>
      tile.copy %B[%k0, %n0] to %Bs : memref<?x?xf16> to memref<32x128xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<256x32xf16, #tile.scope<shared>>, memref<32x128xf16, #tile.scope<shared>>, memref<256x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%m0, %n0] : memref<256x128xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}
