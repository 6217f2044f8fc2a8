// RUN: tile-opt %tile_src_root/examples/gemm.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize --convert-tile-gemm-to-sm90 | FileCheck %s
// RUN: tile-opt %tile_src_root/examples/gemm_epilogue.mlir --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize --convert-tile-gemm-to-sm90 | FileCheck %s --check-prefix=EPI
// RUN: tile-opt %s --tile-attach-metadata="target=cuda chip=sm_90a" --tile-warp-specialize --convert-tile-gemm-to-sm90=remarks=1 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: tilec %tile_src_root/examples/gemm.mlir --target=cuda --chip=sm_90a -o %t.tileb
// RUN: tilec --info %t.tileb --section=metadata | FileCheck %s --check-prefix=META
// RUN: tilec %tile_src_root/examples/gemm.mlir --target=cuda --chip=sm_90a --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx

// The narrow variants (Narrow.cpp), first in the list: launched only when A
// (param 0) and C (param 2) have at most 16 rows; split-K's grid and
// workspace (8 KiB of 16x128 f32 partials per tile and slice), no
// max_tiles; A's map boxes 16 rows. Two CTAs per SM: 6 stages of
// (16 + 128) x 64 f16.
// CHECK: variants = [<"sm90_tma_wgmma", chip = "sm_90a", kernel = "gemm_kernel_sm90_nr16", block = [384, 1, 1], shared_bytes = 111616, schedule = "narrow", tma = [<param = 0, type = f16, box = [64, 16], {{.*}}>, <param = 1, type = f16, box = [64, 64], {{.*}}>], split_k = [0, 1, 64, 8192], workspace_bytes = 16384, pack = "gemm_pack2_b2", pack_elem_bytes = 2, pack_operands = 2, max_rows = [16, 0, 2]>, <"sm90_tma_wgmma", chip = "sm_90a", kernel = "gemm_kernel_sm90_nr64", block = [384, 1, 1], shared_bytes = 99328, schedule = "narrow", tma = [<param = 0, type = f16, box = [64, 64], {{.*}}>, <param = 1, type = f16, box = [64, 64], {{.*}}>], split_k = [0, 1, 64, 32768], workspace_bytes = 16384, pack = "gemm_pack2_b2", pack_elem_bytes = 2, pack_operands = 2, max_rows = [64, 0, 2]>, <"sm90_tma_wgmma", chip = "sm_90a", kernel = "gemm_kernel_sm90_sk",
// The 64-row variant (launches of 17..64 rows: the runtime takes the first
// that accepts): m64n64k16, 32 values per thread (4 stages of 24 KiB).
// CHECK-LABEL: gpu.func @gemm_kernel_sm90_nr64(
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>
// CHECK: scf.while {{.*}} -> (index, i1, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK-LABEL: gpu.func @gemm_kernel_sm90_nr16(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) kernel attributes {{{.*}}nvvm.minctasm = 2 : i32
// No setmaxnreg: the registers are the launch bounds'.
// CHECK-NOT: nvvm.setmaxregister
// The producer: A's 16-row box, then B's two 64x64 boxes.
// CHECK: nvgpu.tma.async.load {{.*}} -> memref<16x64xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.tma.async.load {{.*}} -> memref<64x64xf16, #gpu.address_space<workgroup>>
// The consumers: this warpgroup's B box (transposed, wgmma's A) against
// A's box (K-major, wgmma's B), four m64n16k16 per 64 K, each 16 K 2048
// bytes further in B's box (+128 in 16-byte units) and 32 bytes in A's
// (+2).
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 16, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <col>], B[<f16>, <one>, <col>]
// CHECK: llvm.add %{{.*}}, %{{.*}} : i64
// CHECK: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// Then the split-K tree over the 8 values per thread, and the root's
// stores of C's elements.
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: scf.while {{.*}} -> (index, i1, f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK: llvm.atomicrmw add
// CHECK: nvvm.inline_ptx "st.b16 [$0], $1;"

// The bias + ReLU epilogue runs on the root's summed values.
// EPI-LABEL: gpu.func @gemm_epilogue_kernel_sm90_nr16(
// EPI: nvvm.wgmma.mma_async
// EPI: scf.while
// EPI: arith.maximumf
// EPI: nvvm.inline_ptx "st.b16 [$0], $1;"

// META: "kernel": "gemm_kernel_sm90_nr16",
// META: "max_rows": {
// META-NEXT: "params": [
// META-NEXT: 0,
// META-NEXT: 2
// META-NEXT: ],
// META-NEXT: "rows": 16
// META: "schedule": "narrow",
// META: "split_k": {

// PTX-LABEL: .entry gemm_kernel_sm90_nr16(
// PTX: .minnctapersm 2
// PTX: wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16

// A row origin the pass cannot prove non-negative (a subtraction): no
// narrow variant (its rows might not be the tile's first 16).
// REMARK: remark: sm90: no narrow-row variant of 16 rows for this GEMM: the tile row origins of A and C are not provably non-negative
func.func @gemm(%A: memref<?x?xf16> {tile.name = "A", tile.dims = ["M", "K"]},
                %B: memref<?x?xf16> {tile.name = "B", tile.dims = ["K", "N"]},
                %C: memref<?x?xf16> {tile.name = "C", tile.dims = ["M", "N"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %c127 = arith.constant 127 : index
  %c31 = arith.constant 31 : index
  %M = memref.dim %A, %c0 : memref<?x?xf16>
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %N = memref.dim %B, %c1 : memref<?x?xf16>
  %mp = arith.addi %M, %c127 : index
  %gy = arith.divui %mp, %c128 : index
  %np = arith.addi %N, %c127 : index
  %gx = arith.divui %np, %c128 : index
  %kp = arith.addi %K, %c31 : index
  %nk = arith.divui %kp, %c32 : index
  tile.launch blocks(%bx, %by) in (%gx, %gy) threads(128) {
    %As = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    %m1 = arith.muli %by, %c128 : index
    %m0 = arith.subi %m1, %c0 : index
    %n0 = arith.muli %bx, %c128 : index
    tile.clear %Cf : memref<128x128xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(3) {
      %k0 = arith.muli %k, %c32 : index
      tile.copy %A[%m0, %k0] to %As : memref<?x?xf16> to memref<128x32xf16, #tile.scope<shared>>
      tile.copy %B[%k0, %n0] to %Bs : memref<?x?xf16> to memref<32x128xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<128x32xf16, #tile.scope<shared>>, memref<32x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%m0, %n0] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}
