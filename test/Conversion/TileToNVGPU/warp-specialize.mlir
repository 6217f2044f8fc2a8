// RUN: tile-opt %s -split-input-file --tile-attach-metadata=target=cuda --tile-infer-layouts --convert-tile-to-nvgpu="chip=sm_90a remarks=true ws-tma=false ws-persistent=false" --canonicalize --cse -verify-diagnostics | FileCheck %s
// RUN: tile-opt %s -split-input-file --tile-attach-metadata=target=cuda --tile-infer-layouts --convert-tile-to-nvgpu="chip=sm_90a warp-specialize=false" | FileCheck %s --check-prefix=OFF
// RUN: tile-opt %s -split-input-file --tile-attach-metadata=target=cuda --tile-infer-layouts --convert-tile-to-nvgpu="chip=sm_80" | FileCheck %s --check-prefix=OFF

// The cp.async producer (ws-tma=false; warp-specialize-tma.mlir has the TMA
// one). A pipelined K loop on sm_90a: besides the plain kernel, NAME_kernel_ws
// with one producer warpgroup (threads 128..255) is recorded as a variant
// of 256 threads. Per copy and stage a full barrier (2 x 128 arrivals: the
// producer threads' cp.async completion and their release) and an empty
// barrier (the 128 consumers). The barriers are dynamic shared memory
// after the buffers (48 KiB): 4 groups of 3 mbarriers, 96 bytes.
// CHECK: variants = [<"sm90_tma_wgmma", chip = "sm_90a", kernel = "gemm3_kernel_ws", block = [256, 1, 1], shared_bytes = 49248, schedule = "warp_specialized">]
// CHECK-LABEL: gpu.func @gemm3_kernel(
// CHECK-NOT: mbarrier
// CHECK-LABEL: gpu.func @gemm3_kernel_ws(
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK-NOT: workgroup(
// CHECK: %[[FULLW:.*]] = memref.view %{{.*}}[%c49152][] : {{.*}} to memref<3xi64, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[FULL:.*]] = builtin.unrealized_conversion_cast %[[FULLW]] : {{.*}} to !nvgpu.mbarrier.group<{{.*}}num_barriers = 3>
// CHECK-NEXT: %[[EMPTYW:.*]] = memref.view %{{.*}}[%c49176][]
// CHECK-NEXT: %[[EMPTY:.*]] = builtin.unrealized_conversion_cast %[[EMPTYW]]
// CHECK: nvgpu.mbarrier.init %[[FULL]][%c0], %c256
// CHECK: nvgpu.mbarrier.init %[[EMPTY]][%c0], %c128
// CHECK: gpu.barrier
// CHECK: %[[CONSUMER:.*]] = arith.cmpi ult, %{{.*}}, %c128
// CHECK: scf.if %[[CONSUMER]] {
// Consumers: wait for the stage, compute, release it; no block barrier.
// CHECK: scf.for {{.*}} iter_args(%[[SLOT32:.*]] = %c0_i32, %[[PHASE:.*]] = %false) -> (i32, i1)
// CHECK: %[[SLOT:.*]] = arith.index_castui %[[SLOT32]] : i32 to index
// CHECK: nvgpu.mbarrier.try_wait.parity %[[FULL]][%[[SLOT]]], %[[PHASE]]
// CHECK-NOT: gpu.barrier
// CHECK: nvgpu.mma.sync
// CHECK: nvgpu.mbarrier.arrive %[[EMPTY]][%[[SLOT]]]
// CHECK: } else {
// Producer: wait for the release, cp.async by its 128 threads, arrive.
// CHECK: scf.for {{.*}} iter_args(%[[PSLOT32:.*]] = %c0_i32, %[[PPHASE:.*]] = %false)
// CHECK-DAG: %[[PSLOT:.*]] = arith.index_castui %[[PSLOT32]] : i32 to index
// CHECK-DAG: %[[FREE:.*]] = arith.xori %[[PPHASE]], %true
// CHECK: nvgpu.mbarrier.try_wait.parity %[[EMPTY]][%[[PSLOT]]], %[[FREE]]
// CHECK: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.mbarrier.arrive %{{.*}} {noinc = true}
// CHECK: nvgpu.mbarrier.arrive %[[FULL]][%[[PSLOT]]]
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// OFF-NOT: _kernel_ws
// OFF-NOT: mbarrier
func.func @gemm3(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf16> {tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %nk = arith.ceildivui %K, %c32 : index
  tile.launch blocks(%bx, %by) in (%c1, %c1) threads(128) {
    %As = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    tile.clear %Cf : memref<128x128xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(3) {
      %k0 = arith.muli %k, %c32 : index
      tile.copy %A[%c0, %k0] to %As : memref<?x?xf16> to memref<128x32xf16, #tile.scope<shared>>
      tile.copy %B[%k0, %c0] to %Bs : memref<?x?xf16> to memref<32x128xf16, #tile.scope<shared>>
      // expected-remark @+1 {{tile.gemm not lowered to wgmma}}
      tile.gemm %As, %Bs, %Cf : memref<128x32xf16, #tile.scope<shared>>, memref<32x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%c0, %c0] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}

// -----

// Two consumer warpgroups: the producer warpgroup gives registers to them
// (384 threads: 168 each at launch; setmaxnreg 96 / 200). The block
// barriers of the program (around the shared write of the row sums) are
// named barrier 1 over the 256 consumers.
// CHECK-LABEL: gpu.func @rowsum_kernel_ws(
// CHECK-SAME: known_block_size = array<i32: 384, 1, 1>
// CHECK-SAME: nvvm.minctasm = 1
// CHECK: scf.if
// CHECK: nvvm.setmaxregister increase 200
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK: } else {
// CHECK: nvvm.setmaxregister decrease 96
func.func @rowsum(%X: memref<?x?xf32>, %Y: memref<?xf32> {tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %N = memref.dim %X, %c1 : memref<?x?xf32>
  %nk = arith.ceildivui %N, %c64 : index
  tile.launch blocks(%bx) in (%c1) threads(256) {
    %Xs = tile.alloc : memref<64x64xf32, #tile.scope<shared>>
    %Xf = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    %acc = tile.alloc : memref<64xf32, #tile.scope<shared>>
    %part = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    tile.clear %acc : memref<64xf32, #tile.scope<shared>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(2) {
      %k0 = arith.muli %k, %c64 : index
      tile.copy %X[%c0, %k0] to %Xs : memref<?x?xf32> to memref<64x64xf32, #tile.scope<shared>>
      tile.copy %Xs to %Xf : memref<64x64xf32, #tile.scope<shared>> to memref<64x64xf32, #tile.scope<fragment>>
      tile.reduce sum %Xf into %part {dim = 1 : i64, clear} : memref<64x64xf32, #tile.scope<fragment>> into memref<64xf32, #tile.scope<fragment>>
      tile.parallel (%i) in [64] {
        %a = memref.load %acc[%i] : memref<64xf32, #tile.scope<shared>>
        %p = memref.load %part[%i] : memref<64xf32, #tile.scope<fragment>>
        %s = arith.addf %a, %p : f32
        memref.store %s, %acc[%i] : memref<64xf32, #tile.scope<shared>>
      }
    }
    tile.copy %acc to %Y[%c0] : memref<64xf32, #tile.scope<shared>> to memref<?xf32>
  }
  return
}

// -----

// Not whole warpgroups: no variant, and a remark says why.
// CHECK-LABEL: gpu.func @odd_threads_kernel(
// CHECK-NOT: _kernel_ws
func.func @odd_threads(%A: memref<?x?xf16>, %C: memref<?x?xf16> {tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %nk = arith.ceildivui %K, %c32 : index
  // expected-remark @below {{no warp-specialized variant: the launch's threads (96) are not whole warpgroups with room for a producer one}}
  tile.launch blocks(%bx) in (%c1) threads(96) {
    %As = tile.alloc : memref<32x32xf16, #tile.scope<shared>>
    %Cs = tile.alloc : memref<32x32xf16, #tile.scope<shared>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(2) {
      %k0 = arith.muli %k, %c32 : index
      tile.copy %A[%c0, %k0] to %As : memref<?x?xf16> to memref<32x32xf16, #tile.scope<shared>>
      tile.copy %As to %Cs : memref<32x32xf16, #tile.scope<shared>> to memref<32x32xf16, #tile.scope<shared>>
    }
    tile.copy %Cs to %C[%c0, %c0] : memref<32x32xf16, #tile.scope<shared>> to memref<?x?xf16>
  }
  return
}

// -----

// A pipelined loop inside other control flow: the producer could not follow
// it. No variant, with a remark.
// CHECK-LABEL: gpu.func @nested_kernel(
// CHECK-NOT: _kernel_ws
func.func @nested(%A: memref<?x?xf16>, %C: memref<?x?xf16> {tile.output}, %n: index)
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %nk = arith.ceildivui %K, %c32 : index
  // expected-remark @below {{no warp-specialized variant: a pipelined loop is nested in other control flow}}
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %As = tile.alloc : memref<32x32xf16, #tile.scope<shared>>
    %Cs = tile.alloc : memref<32x32xf16, #tile.scope<shared>>
    scf.for %r = %c0 to %n step %c1 {
      tile.pipelined %k = %c0 to %nk step %c1 stages(2) {
        %k0 = arith.muli %k, %c32 : index
        tile.copy %A[%r, %k0] to %As : memref<?x?xf16> to memref<32x32xf16, #tile.scope<shared>>
        tile.copy %As to %Cs : memref<32x32xf16, #tile.scope<shared>> to memref<32x32xf16, #tile.scope<shared>>
      }
    }
    tile.copy %Cs to %C[%c0, %c0] : memref<32x32xf16, #tile.scope<shared>> to memref<?x?xf16>
  }
  return
}

// -----

// The loop's copies read a tensor the kernel writes before the loop: the
// producer, which starts at once, could read it before it is written. No
// variant, with a remark.
// CHECK-LABEL: gpu.func @raw_kernel(
// CHECK-NOT: _kernel_ws
func.func @raw(%X: memref<?x?xf32>, %T: memref<?x?xf32> {tile.output}, %Y: memref<?xf32> {tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %N = memref.dim %X, %c1 : memref<?x?xf32>
  %nk = arith.ceildivui %N, %c64 : index
  // expected-remark @below {{no warp-specialized variant: a pipelined copy reads a tensor that the kernel writes before the loop}}
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %Xs = tile.alloc : memref<64x64xf32, #tile.scope<shared>>
    %Ts = tile.alloc : memref<64x64xf32, #tile.scope<shared>>
    %Xf = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    %part = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    tile.copy %X[%c0, %c0] to %Xf : memref<?x?xf32> to memref<64x64xf32, #tile.scope<fragment>>
    tile.copy %Xf to %T[%c0, %c0] : memref<64x64xf32, #tile.scope<fragment>> to memref<?x?xf32>
    tile.clear %part : memref<64xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(2) {
      %k0 = arith.muli %k, %c64 : index
      tile.copy %T[%c0, %k0] to %Ts : memref<?x?xf32> to memref<64x64xf32, #tile.scope<shared>>
      tile.copy %Ts to %Xf : memref<64x64xf32, #tile.scope<shared>> to memref<64x64xf32, #tile.scope<fragment>>
      tile.reduce sum %Xf into %part {dim = 1 : i64} : memref<64x64xf32, #tile.scope<fragment>> into memref<64xf32, #tile.scope<fragment>>
    }
    tile.copy %part to %Y[%c0] : memref<64xf32, #tile.scope<fragment>> to memref<?xf32>
  }
  return
}

// -----

// stages(1): the plain kernel runs the loop serially; the warp-specialized
// variant gives it two stages (one full and one empty barrier per stage).
// CHECK-LABEL: #tile.kernel_info<"one_stage"
// CHECK-SAME: kernel = "one_stage_kernel_ws"
// CHECK-LABEL: gpu.func @one_stage_kernel(
// CHECK-NOT: mbarrier
// CHECK-LABEL: gpu.func @one_stage_kernel_ws(
// CHECK: builtin.unrealized_conversion_cast {{.*}} to !nvgpu.mbarrier.group<{{.*}}num_barriers = 2>
func.func @one_stage(%A: memref<?x?xf32>, %C: memref<?x?xf32> {tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %K = memref.dim %A, %c1 : memref<?x?xf32>
  %nk = arith.ceildivui %K, %c64 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %As = tile.alloc : memref<64x64xf32, #tile.scope<shared>>
    %Af = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    %Cf = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    tile.clear %Cf : memref<64x64xf32, #tile.scope<fragment>>
    // expected-remark @+1 {{warp-specialized variants run this stages(1) loop with two stages}}
    tile.pipelined %k = %c0 to %nk step %c1 stages(1) {
      %k0 = arith.muli %k, %c64 : index
      tile.copy %A[%c0, %k0] to %As : memref<?x?xf32> to memref<64x64xf32, #tile.scope<shared>>
      tile.copy %As to %Af : memref<64x64xf32, #tile.scope<shared>> to memref<64x64xf32, #tile.scope<fragment>>
      tile.parallel (%i, %j) in [64, 64] {
        %a = memref.load %Af[%i, %j] : memref<64x64xf32, #tile.scope<fragment>>
        %c = memref.load %Cf[%i, %j] : memref<64x64xf32, #tile.scope<fragment>>
        %s = arith.addf %a, %c : f32
        memref.store %s, %Cf[%i, %j] : memref<64x64xf32, #tile.scope<fragment>>
      }
    }
    tile.copy %Cf to %C[%c0, %c0] : memref<64x64xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}

// -----

// A stages(1) loop whose two stages do not fit sm_90a's shared memory: no
// warp-specialized variant (a remark says why), the plain kernel only.
// CHECK-LABEL: #tile.kernel_info<"big_stage"
// CHECK-NOT: variants
// CHECK-LABEL: gpu.func @big_stage_kernel(
// CHECK-NOT: @big_stage_kernel_ws
func.func @big_stage(%A: memref<?x?xf32>, %C: memref<?x?xf32> {tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %K = memref.dim %A, %c1 : memref<?x?xf32>
  %nk = arith.ceildivui %K, %c128 : index
  // expected-remark @+1 {{no warp-specialized variant: it needs 245792 bytes of shared memory with two stages of its stages(1) loop, more than the 232432 sm_90a allows}}
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %As = tile.alloc : memref<160x128xf32, #tile.scope<shared>>
    %Cs = tile.alloc : memref<160x128xf32, #tile.scope<shared>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(1) {
      %k0 = arith.muli %k, %c128 : index
      tile.copy %A[%c0, %k0] to %As : memref<?x?xf32> to memref<160x128xf32, #tile.scope<shared>>
      tile.copy %As to %Cs : memref<160x128xf32, #tile.scope<shared>> to memref<160x128xf32, #tile.scope<shared>>
    }
    tile.copy %Cs to %C[%c0, %c0] : memref<160x128xf32, #tile.scope<shared>> to memref<?x?xf32>
  }
  return
}
