// RUN: tile-opt %s -split-input-file --tile-attach-metadata=target=cuda --tile-infer-layouts=wgmma=true --convert-tile-to-nvgpu="chip=sm_90a" --canonicalize --cse | FileCheck %s
// RUN: tile-opt %s -split-input-file --tile-attach-metadata=target=cuda --tile-infer-layouts=wgmma=true --convert-tile-to-nvgpu="chip=sm_90a ws-persistent=false" | FileCheck %s --check-prefix=OFF
// RUN: tile-opt %s -split-input-file --tile-attach-metadata=target=cuda --tile-infer-layouts=wgmma=true --convert-tile-to-nvgpu="chip=sm_90a ws-double-heads=false" --canonicalize --cse | FileCheck %s --check-prefix=SINGLE

// The persistent TMA-producer form (PersistentTiles.cpp): a 256-thread
// launch's block holds a multiprocessor alone (setmaxnreg 240 / 24), so
// NAME_kernel_ws_tma is launched on min(#SMs, blocks) CTAs ("grid": "sms")
// with an 8-byte workspace after the maps. The producer thread claims the
// blocks (atomics on the workspace, the last CTA zeroing it) and hands each
// block's index to the consumers through two shared slots (after the
// mbarriers, at the end of the dynamic shared memory); both roles loop
// (scf.while) over the blocks they get. Q's copy before the loop is a head
// copy: the producer issues it through TMA too (its own map, 16384 bytes),
// into one of two stages (the next block's Q loads while this block's loop
// reads its own), the consumers wait for it where the copy was and read
// that stage. The cp.async form stays a plain launch.
// CHECK: variants = [<"sm90_tma_wgmma", chip = "sm_90a", kernel = "attn_kernel_ws_tma", block = [384, 1, 1]
// CHECK-SAME: grid = sms, max_tiles = 2146435072
// CHECK-SAME: tma = [<param = 1, type = f16, box = [64, 64]{{.*}}>, <param = 0, type = f16, box = [64, 128]{{.*}}>], workspace_bytes = 8>
// CHECK-SAME: <"sm90_tma_wgmma", chip = "sm_90a", kernel = "attn_kernel_ws", block = [384, 1, 1], shared_bytes = {{[0-9]+}}, schedule = "warp_specialized">]
// CHECK-LABEL: gpu.func @attn_kernel_ws_tma(
// CHECK-SAME: %[[MAPK:[a-z0-9]+]]: !llvm.ptr, %[[MAPQ:[a-z0-9]+]]: !llvm.ptr, %[[WS:[a-z0-9]+]]: !llvm.ptr)
// CHECK-NOT: workgroup(
// CHECK: %[[SLOTS:.*]] = memref.view %{{.*}} to memref<2xi32, #gpu.address_space<workgroup>>
// CHECK: nvvm.setmaxregister increase 240
// CHECK: nvgpu.mbarrier.try_wait.parity %[[FULLT:.*]][%c0], %false
// CHECK: memref.load %[[SLOTS]][%c0]
// CHECK: scf.while
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: nvvm.barrier id = %c1_i32 number_of_threads = %c256_i32
// CHECK: nvvm.setmaxregister decrease 24
// CHECK: scf.while
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}[%[[QSLOT:.*]]], %c16384
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[MAPQ]]
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}, %c8192
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[MAPK]]
// CHECK: llvm.atomicrmw add %[[WS]], %c1_i32 monotonic
// CHECK: memref.store %{{.*}}, %[[SLOTS]]
// CHECK: llvm.fence syncscope("device") acq_rel
// CHECK: llvm.atomicrmw add %{{.*}}, %c1_i32 monotonic
// CHECK: scf.if
// CHECK-NEXT: llvm.fence syncscope("device") acq_rel
// CHECK: llvm.store %c0_i32, %[[WS]]
// CHECK-LABEL: gpu.func @attn_kernel_ws(
// CHECK-NOT: scf.while
// CHECK: gpu.return
// OFF-NOT: grid = sms
// OFF-NOT: scf.while
// With ws-double-heads=false, Q has one stage.
// SINGLE-LABEL: gpu.func @attn_kernel_ws_tma(
// SINGLE: nvgpu.mbarrier.arrive.expect_tx %{{.*}}[%c0], %c16384
func.func @attn(%Q: memref<?x?xf16>, %K: memref<?x?xf16>, %O: memref<?x?xf32> {tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %M = memref.dim %Q, %c0 : memref<?x?xf16>
  %N = memref.dim %K, %c0 : memref<?x?xf16>
  %gq = arith.ceildivui %M, %c128 : index
  %nk = arith.ceildivui %N, %c64 : index
  tile.launch blocks(%bx, %by) in (%gq, %c1) threads(256) {
    %Qs = tile.alloc : memref<128x64xf16, #tile.scope<shared>>
    %Ks = tile.alloc : memref<64x64xf16, #tile.scope<shared>>
    %S = tile.alloc : memref<128x64xf32, #tile.scope<fragment>>
    %q0 = arith.muli %bx, %c128 : index
    tile.copy %Q[%q0, %c0] to %Qs : memref<?x?xf16> to memref<128x64xf16, #tile.scope<shared>>
    tile.clear %S : memref<128x64xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(2) {
      %k0 = arith.muli %k, %c64 : index
      tile.copy %K[%k0, %c0] to %Ks : memref<?x?xf16> to memref<64x64xf16, #tile.scope<shared>>
      tile.gemm %Qs, %Ks, %S {transpose_b} : memref<128x64xf16, #tile.scope<shared>>, memref<64x64xf16, #tile.scope<shared>>, memref<128x64xf32, #tile.scope<fragment>>
    }
    tile.copy %S to %O[%q0, %c0] : memref<128x64xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}

// -----

// 128 consumers keep 256 registers each without setmaxnreg: two blocks
// may share a multiprocessor, so the TMA form stays a plain launch. A copy
// before the loop into a buffer the program also writes stays with the
// consumers (no head copy): one map only.
// CHECK: kernel = "small_kernel_ws_tma", block = [256, 1, 1]
// CHECK-NOT: grid = sms
// CHECK-SAME: tma = [<param = 1, type = f16, box = [64, 64]{{[^>]*}}>]>
// CHECK-LABEL: gpu.func @small_kernel_ws_tma(
// CHECK-NOT: scf.while
// CHECK: gpu.return
func.func @small(%Q: memref<?x?xf16>, %K: memref<?x?xf16>, %O: memref<?x?xf32> {tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f16
  %M = memref.dim %Q, %c0 : memref<?x?xf16>
  %N = memref.dim %K, %c0 : memref<?x?xf16>
  %gq = arith.ceildivui %M, %c64 : index
  %nk = arith.ceildivui %N, %c64 : index
  tile.launch blocks(%bx) in (%gq) threads(128) {
    %Qs = tile.alloc : memref<64x64xf16, #tile.scope<shared>>
    %Ks = tile.alloc : memref<64x64xf16, #tile.scope<shared>>
    %S = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    %q0 = arith.muli %bx, %c64 : index
    tile.copy %Q[%q0, %c0] to %Qs : memref<?x?xf16> to memref<64x64xf16, #tile.scope<shared>>
    memref.store %zero, %Qs[%c0, %c0] : memref<64x64xf16, #tile.scope<shared>>
    tile.clear %S : memref<64x64xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(2) {
      %k0 = arith.muli %k, %c64 : index
      tile.copy %K[%k0, %c0] to %Ks : memref<?x?xf16> to memref<64x64xf16, #tile.scope<shared>>
      tile.gemm %Qs, %Ks, %S {transpose_b} : memref<64x64xf16, #tile.scope<shared>>, memref<64x64xf16, #tile.scope<shared>>, memref<64x64xf32, #tile.scope<fragment>>
    }
    tile.copy %S to %O[%q0, %c0] : memref<64x64xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}

// -----

// Two stages of this Q (128 KiB) and K's two (64 KiB) exceed the 227 KiB
// of shared memory: the persistent form keeps one stage of Q.
// CHECK: kernel = "big_kernel_ws_tma", block = [384, 1, 1], shared_bytes = 196696, grid = sms
// CHECK-LABEL: gpu.func @big_kernel_ws_tma(
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}[%c0], %c131072
func.func @big(%Q: memref<?x?xf16>, %K: memref<?x?xf16>, %O: memref<?x?xf32> {tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %M = memref.dim %Q, %c0 : memref<?x?xf16>
  %N = memref.dim %K, %c0 : memref<?x?xf16>
  %gq = arith.ceildivui %M, %c256 : index
  %nk = arith.ceildivui %N, %c64 : index
  tile.launch blocks(%bx) in (%gq) threads(256) {
    %Qs = tile.alloc : memref<256x256xf16, #tile.scope<shared>>
    %Ks = tile.alloc : memref<64x256xf16, #tile.scope<shared>>
    %S = tile.alloc : memref<256x64xf32, #tile.scope<fragment>>
    %q0 = arith.muli %bx, %c256 : index
    tile.copy %Q[%q0, %c0] to %Qs : memref<?x?xf16> to memref<256x256xf16, #tile.scope<shared>>
    tile.clear %S : memref<256x64xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(2) {
      %k0 = arith.muli %k, %c64 : index
      tile.copy %K[%k0, %c0] to %Ks : memref<?x?xf16> to memref<64x256xf16, #tile.scope<shared>>
      tile.gemm %Qs, %Ks, %S {transpose_b} : memref<256x256xf16, #tile.scope<shared>>, memref<64x256xf16, #tile.scope<shared>>, memref<256x64xf32, #tile.scope<fragment>>
    }
    tile.copy %S to %O[%q0, %c0] : memref<256x64xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}
