// RUN: tile-opt %s -split-input-file --tile-warp-specialize="chip=sm_90a remarks=1" -verify-diagnostics | FileCheck %s
// RUN: tile-opt %s -split-input-file --tile-warp-specialize="chip=sm_80" | FileCheck %s --check-prefix=SM80
// RUN: tile-opt %s -split-input-file --tile-warp-specialize="chip=sm_90a persistent=false" | FileCheck %s --check-prefix=OFF
// RUN: tile-opt %s -split-input-file --tile-warp-specialize="chip=sm_90a persistent=true" | FileCheck %s --check-prefix=ON
// RUN: not tile-opt %s -split-input-file --tile-warp-specialize="chip=sm_90a persistent=maybe" 2>&1 | FileCheck %s --check-prefix=BAD

// persistent=auto (the default) makes the 128x128 tile persistent (measured
// faster on the H200), not the others; true/false force it. A persistent
// kernel with a 16-bit C gets the TMA-store epilogue (epilogue = "tma").
// BAD: persistent must be auto, true or false, not 'maybe'

// tile-warp-specialize tags the pipelined GEMM loop with the producer /
// consumer split: 128 accumulator rows -> 2 consumer warpgroups (wgmma
// m64) + 1 TMA producer warpgroup = 384 threads; setmaxnreg 40 / 232;
// the K tile becomes 64 (one 128-byte swizzle row of f16) and the pipeline
// as deep as shared memory allows (5 x 32 KiB).

// CHECK-LABEL: func.func @gemm
// CHECK: tile.pipelined
// CHECK-SAME: sm90.warp_specialize = {block_k = 64 : i64, consumer_regs = 232 : i64, consumers = 2 : i64, epilogue = "tma", persistent = true, producer_regs = 40 : i64, producers = 1 : i64, stages = 5 : i64, threads = 384 : i64}
// OFF-LABEL: func.func @gemm
// OFF: sm90.warp_specialize = {block_k = 64 : i64, consumer_regs = 232 : i64, consumers = 2 : i64, producer_regs = 40 : i64, producers = 1 : i64, stages = 5 : i64, threads = 384 : i64}
// ON-LABEL: func.func @gemm
// ON: sm90.warp_specialize = {{{.*}}persistent = true
// SM80-LABEL: func.func @gemm
// SM80-NOT: sm90.warp_specialize
func.func @gemm(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf16>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c31 = arith.constant 31 : index
  %c128 = arith.constant 128 : index
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %kp = arith.addi %K, %c31 : index
  %nk = arith.divui %kp, %c32 : index
  tile.launch blocks(%bx, %by) in (%c1, %c1) threads(128) {
    %As = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    %m0 = arith.muli %by, %c128 : index
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

// -----

// An f32 C: persistent, but its epilogue stores from the registers (the
// TMA-store epilogue stages 16-bit C chunks); the remark says why.

// CHECK-LABEL: func.func @gemm_f32_out
// CHECK: sm90.warp_specialize = {{{.*}}consumers = 2 : i64, persistent = true
// CHECK-NOT: epilogue = "tma"
func.func @gemm_f32_out(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c31 = arith.constant 31 : index
  %c128 = arith.constant 128 : index
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %kp = arith.addi %K, %c31 : index
  %nk = arith.divui %kp, %c32 : index
  tile.launch blocks(%bx, %by) in (%c1, %c1) threads(128) {
    %As = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    %m0 = arith.muli %by, %c128 : index
    %n0 = arith.muli %bx, %c128 : index
    tile.clear %Cf : memref<128x128xf32, #tile.scope<fragment>>
    // expected-remark @+1 {{sm90: C is stored from registers, not by TMA: C is not a 16-bit type}}
    tile.pipelined %k = %c0 to %nk step %c1 stages(3) {
      %k0 = arith.muli %k, %c32 : index
      tile.copy %A[%m0, %k0] to %As : memref<?x?xf16> to memref<128x32xf16, #tile.scope<shared>>
      tile.copy %B[%k0, %n0] to %Bs : memref<?x?xf16> to memref<32x128xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<128x32xf16, #tile.scope<shared>>, memref<32x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%m0, %n0] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}

// -----

// 64 rows, bf16, K tile 64, ceildivui trip count over B's K, 256 columns:
// one consumer warpgroup; 40 + 232 registers; (64+256)*128 B = 40 KiB
// stages -> 5.

// CHECK-LABEL: func.func @gemm_64x256
// CHECK: sm90.warp_specialize = {block_k = 64 : i64, consumer_regs = 232 : i64, consumers = 1 : i64, producer_regs = 40 : i64, producers = 1 : i64, stages = 5 : i64, threads = 256 : i64}
// OFF-LABEL: func.func @gemm_64x256
// OFF-NOT: persistent
// ON-LABEL: func.func @gemm_64x256
// ON: sm90.warp_specialize = {block_k = 64 : i64, consumer_regs = 232 : i64, consumers = 1 : i64, persistent = true, producer_regs = 40 : i64, producers = 1 : i64, stages = 5 : i64, threads = 256 : i64}
func.func @gemm_64x256(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %K = memref.dim %B, %c0 : memref<?x?xbf16>
  %nk = arith.ceildivui %K, %c64 : index
  tile.launch blocks(%bx, %by) in (%c1, %c1) threads(128) {
    %As = tile.alloc : memref<64x64xbf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<64x256xbf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<64x256xf32, #tile.scope<fragment>>
    %m0 = arith.muli %by, %c64 : index
    %n0 = arith.muli %bx, %c256 : index
    tile.clear %Cf : memref<64x256xf32, #tile.scope<fragment>>
    // expected-remark @+1 {{sm90: the 64-row tile runs one consumer warpgroup (m64 wgmmas); launches of enough blocks run the wide-tile variant (128-row CTA tiles of several blocks), smaller ones the 64-row tiles}}
    tile.pipelined %k = %c0 to %nk step %c1 stages(2) {
      %k0 = arith.muli %c64, %k : index
      tile.copy %B[%k0, %n0] to %Bs : memref<?x?xbf16> to memref<64x256xbf16, #tile.scope<shared>>
      tile.copy %A[%m0, %k0] to %As : memref<?x?xbf16> to memref<64x64xbf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<64x64xbf16, #tile.scope<shared>>, memref<64x256xbf16, #tile.scope<shared>>, memref<64x256xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%m0, %n0] : memref<64x256xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}

// -----

// Not specialized (the sm_80 lowering keeps it): the trip count is not
// ceildiv(K, 32), so the 64-wide hardware K tile could read past it.

// CHECK-LABEL: func.func @partial_k
// CHECK-NOT: sm90.warp_specialize
func.func @partial_k(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf16>, %nk: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %As = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    tile.clear %Cf : memref<128x128xf32, #tile.scope<fragment>>
    // expected-remark @+1 {{no sm90 GEMM kernels: the trip count must be ceildiv(K, KT) of A's or B's K}}
    tile.pipelined %k = %c0 to %nk step %c1 stages(3) {
      %k0 = arith.muli %k, %c32 : index
      tile.copy %A[%c0, %k0] to %As : memref<?x?xf16> to memref<128x32xf16, #tile.scope<shared>>
      tile.copy %B[%k0, %c0] to %Bs : memref<?x?xf16> to memref<32x128xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<128x32xf16, #tile.scope<shared>>, memref<32x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%c0, %c0] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}

// -----

// Not specialized: a rank-reducing copy that drops a dim other than the
// leading (batch) ones (A is M x batch x K here); the remark names the copy
// and why. Batched operands are test/Conversion/TileToSM90/gemm-sm90-batched.mlir.

// CHECK-LABEL: func.func @batch_in_the_middle
// CHECK-NOT: sm90.warp_specialize
func.func @batch_in_the_middle(%A: memref<?x?x?xf16>, %B: memref<?x?x?xf16>, %C: memref<?x?x?xf16>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c31 = arith.constant 31 : index
  %c2 = arith.constant 2 : index
  %K = memref.dim %A, %c2 : memref<?x?x?xf16>
  %kp = arith.addi %K, %c31 : index
  %nk = arith.divui %kp, %c32 : index
  tile.launch blocks(%bx, %bz) in (%c1, %c1) threads(128) {
    %As = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    tile.clear %Cf : memref<128x128xf32, #tile.scope<fragment>>
    // expected-remark @+1 {{no sm90 GEMM kernels: the 'tile.copy' of A does not take a tile of the last two dims (a batched operand's copy drops exactly its leading dims)}}
    tile.pipelined %k = %c0 to %nk step %c1 stages(3) {
      %k0 = arith.muli %k, %c32 : index
      tile.copy %A[%c0, %bz, %k0] to %As drop_dims [1] : memref<?x?x?xf16> to memref<128x32xf16, #tile.scope<shared>>
      tile.copy %B[%bz, %k0, %c0] to %Bs drop_dims [0] : memref<?x?x?xf16> to memref<32x128xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<128x32xf16, #tile.scope<shared>>, memref<32x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%bz, %c0, %c0] drop_dims [0] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?x?xf16>
  }
  return
}

// -----

// Not specialized: the loop body does more than copy and multiply.

// CHECK-LABEL: func.func @extra_work
// CHECK-NOT: sm90.warp_specialize
func.func @extra_work(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf16>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c31 = arith.constant 31 : index
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %kp = arith.addi %K, %c31 : index
  %nk = arith.divui %kp, %c32 : index
  %h = arith.constant 0.5 : f16
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %As = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    tile.clear %Cf : memref<128x128xf32, #tile.scope<fragment>>
    // expected-remark @+1 {{no sm90 GEMM kernels: the loop body has an op other than index arithmetic, two copies and a gemm: 'tile.fill'}}
    tile.pipelined %k = %c0 to %nk step %c1 stages(3) {
      %k0 = arith.muli %k, %c32 : index
      tile.copy %A[%c0, %k0] to %As : memref<?x?xf16> to memref<128x32xf16, #tile.scope<shared>>
      tile.fill %Bs, %h : memref<32x128xf16, #tile.scope<shared>>, f16
      tile.gemm %As, %Bs, %Cf : memref<128x32xf16, #tile.scope<shared>>, memref<32x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%c0, %c0] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}

// -----

// Not specialized: the epilogue reads the accumulator transposed (not
// elementwise).

// CHECK-LABEL: func.func @transposed_epilogue
// CHECK-NOT: sm90.warp_specialize
func.func @transposed_epilogue(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf16>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c31 = arith.constant 31 : index
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %kp = arith.addi %K, %c31 : index
  %nk = arith.divui %kp, %c32 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %As = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    tile.clear %Cf : memref<128x128xf32, #tile.scope<fragment>>
    // expected-remark @+1 {{no sm90 GEMM kernels: the 'tile.parallel' after the loop is not an elementwise epilogue on the accumulator: it reads the accumulator at another element than the iteration's}}
    tile.pipelined %k = %c0 to %nk step %c1 stages(3) {
      %k0 = arith.muli %k, %c32 : index
      tile.copy %A[%c0, %k0] to %As : memref<?x?xf16> to memref<128x32xf16, #tile.scope<shared>>
      tile.copy %B[%k0, %c0] to %Bs : memref<?x?xf16> to memref<32x128xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<128x32xf16, #tile.scope<shared>>, memref<32x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.parallel (%i, %j) in [128, 128] {
      %v = memref.load %Cf[%j, %i] : memref<128x128xf32, #tile.scope<fragment>>
      memref.store %v, %Cf[%i, %j] : memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%c0, %c0] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}

// -----

// Not specialized: no pipelined loop at all. No remark without a gemm
// (nothing to miss); one for a gemm outside a pipelined loop.

// CHECK-LABEL: func.func @no_loop
// CHECK-NOT: sm90.warp_specialize
func.func @no_loop(%X: memref<?xf32>) attributes {tile.kernel} {
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %f = tile.alloc : memref<128xf32, #tile.scope<fragment>>
    tile.clear %f : memref<128xf32, #tile.scope<fragment>>
  }
  return
}

// -----

// CHECK-LABEL: func.func @gemm_without_loop
// CHECK-NOT: sm90.warp_specialize
func.func @gemm_without_loop(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf16>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-remark @+1 {{no sm90 GEMM kernels: the launch has no tile.pipelined loop (the sm_90a path is a pipelined GEMM K loop)}}
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %As = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    tile.copy %A[%c0, %c0] to %As : memref<?x?xf16> to memref<128x32xf16, #tile.scope<shared>>
    tile.copy %B[%c0, %c0] to %Bs : memref<?x?xf16> to memref<32x128xf16, #tile.scope<shared>>
    tile.gemm %As, %Bs, %Cf {clear} : memref<128x32xf16, #tile.scope<shared>>, memref<32x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    tile.copy %Cf to %C[%c0, %c0] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}

// -----

// No remark either for a pipelined loop without a gemm (a row reduction's
// register double buffering).

// CHECK-LABEL: func.func @reduction_loop
// CHECK-NOT: sm90.warp_specialize
func.func @reduction_loop(%X: memref<?x?xf32>, %Y: memref<?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %x = tile.alloc : memref<4x1024xf32, #tile.scope<fragment>>
    %acc = tile.alloc : memref<4x1024xf32, #tile.scope<fragment>>
    %s = tile.alloc : memref<4xf32, #tile.scope<fragment>>
    tile.clear %acc : memref<4x1024xf32, #tile.scope<fragment>>
    tile.pipelined %t = %c0 to %c4 step %c1 stages(2) {
      %col = arith.muli %t, %c4 : index
      tile.copy %X[%c0, %col] to %x : memref<?x?xf32> to memref<4x1024xf32, #tile.scope<fragment>>
      tile.parallel (%i, %j) in [4, 1024] {
        %a = memref.load %acc[%i, %j] : memref<4x1024xf32, #tile.scope<fragment>>
        %v = memref.load %x[%i, %j] : memref<4x1024xf32, #tile.scope<fragment>>
        %r = arith.addf %a, %v : f32
        memref.store %r, %acc[%i, %j] : memref<4x1024xf32, #tile.scope<fragment>>
      }
    }
    tile.reduce sum %acc into %s {dim = 1 : i64, clear} : memref<4x1024xf32, #tile.scope<fragment>> into memref<4xf32, #tile.scope<fragment>>
    tile.copy %s to %Y[%c0] : memref<4xf32, #tile.scope<fragment>> to memref<?xf32>
  }
  return
}

// -----

// Staged epilogue operands (GemmMatch.h): a bias tile copied into shared
// memory before the loop and a row tile into shared f32 after it (a
// converting copy), read by the epilogue.

// CHECK-LABEL: func.func @staged_bias
// CHECK: sm90.warp_specialize
func.func @staged_bias(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %rowb: memref<?xf16>, %colb: memref<?xf16>, %C: memref<?x?xf16>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %nk = arith.ceildivui %K, %c32 : index
  tile.launch blocks(%bx, %by) in (%c1, %c1) threads(128) {
    %As = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %cs = tile.alloc : memref<128xf16, #tile.scope<shared>>
    %rs = tile.alloc : memref<128xf32, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    %m0 = arith.muli %by, %c128 : index
    %n0 = arith.muli %bx, %c128 : index
    tile.copy %colb[%n0] to %cs : memref<?xf16> to memref<128xf16, #tile.scope<shared>>
    tile.clear %Cf : memref<128x128xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(3) {
      %k0 = arith.muli %k, %c32 : index
      tile.copy %A[%m0, %k0] to %As : memref<?x?xf16> to memref<128x32xf16, #tile.scope<shared>>
      tile.copy %B[%k0, %n0] to %Bs : memref<?x?xf16> to memref<32x128xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<128x32xf16, #tile.scope<shared>>, memref<32x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.copy %rowb[%m0] to %rs : memref<?xf16> to memref<128xf32, #tile.scope<shared>>
    tile.parallel (%i, %j) in [128, 128] {
      %acc = memref.load %Cf[%i, %j] : memref<128x128xf32, #tile.scope<fragment>>
      %rb = memref.load %rs[%i] : memref<128xf32, #tile.scope<shared>>
      %cb = memref.load %cs[%j] : memref<128xf16, #tile.scope<shared>>
      %cbf = arith.extf %cb : f16 to f32
      %s0 = arith.addf %acc, %rb : f32
      %s = arith.addf %s0, %cbf : f32
      memref.store %s, %Cf[%i, %j] : memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%m0, %n0] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}

// -----

// Not specialized: the staged tile comes from C, which the kernel writes
// (the global element is no longer the value the copy read).

// CHECK-LABEL: func.func @staged_from_c
// CHECK-NOT: sm90.warp_specialize
func.func @staged_from_c(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf16>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %nk = arith.ceildivui %K, %c32 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %As = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %Rs = tile.alloc : memref<128x128xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    tile.copy %C[%c0, %c0] to %Rs : memref<?x?xf16> to memref<128x128xf16, #tile.scope<shared>>
    tile.clear %Cf : memref<128x128xf32, #tile.scope<fragment>>
    // expected-remark @+1 {{no sm90 GEMM kernels: the launch allocates other buffers than A, B and C, and one is filled from C, which the kernel writes}}
    tile.pipelined %k = %c0 to %nk step %c1 stages(3) {
      %k0 = arith.muli %k, %c32 : index
      tile.copy %A[%c0, %k0] to %As : memref<?x?xf16> to memref<128x32xf16, #tile.scope<shared>>
      tile.copy %B[%k0, %c0] to %Bs : memref<?x?xf16> to memref<32x128xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<128x32xf16, #tile.scope<shared>>, memref<32x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.parallel (%i, %j) in [128, 128] {
      %acc = memref.load %Cf[%i, %j] : memref<128x128xf32, #tile.scope<fragment>>
      %r = memref.load %Rs[%i, %j] : memref<128x128xf16, #tile.scope<shared>>
      %rf = arith.extf %r : f16 to f32
      %s = arith.addf %acc, %rf : f32
      memref.store %s, %Cf[%i, %j] : memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%c0, %c0] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}

// -----

// Not specialized: a staged tile is filled twice (which copy's elements the
// epilogue reads would depend on the order).

// CHECK-LABEL: func.func @staged_written
// CHECK-NOT: sm90.warp_specialize
func.func @staged_written(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %bias: memref<?xf32>, %C: memref<?x?xf16>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %nk = arith.ceildivui %K, %c32 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %As = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %bs = tile.alloc : memref<128xf32, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    tile.copy %bias[%c0] to %bs : memref<?xf32> to memref<128xf32, #tile.scope<shared>>
    tile.copy %bias[%c1] to %bs : memref<?xf32> to memref<128xf32, #tile.scope<shared>>
    tile.clear %Cf : memref<128x128xf32, #tile.scope<fragment>>
    // expected-remark @+1 {{no sm90 GEMM kernels: the launch allocates other buffers than A, B and C, and one is filled more than once or before its alloc}}
    tile.pipelined %k = %c0 to %nk step %c1 stages(3) {
      %k0 = arith.muli %k, %c32 : index
      tile.copy %A[%c0, %k0] to %As : memref<?x?xf16> to memref<128x32xf16, #tile.scope<shared>>
      tile.copy %B[%k0, %c0] to %Bs : memref<?x?xf16> to memref<32x128xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<128x32xf16, #tile.scope<shared>>, memref<32x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.parallel (%i, %j) in [128, 128] {
      %acc = memref.load %Cf[%i, %j] : memref<128x128xf32, #tile.scope<fragment>>
      %b = memref.load %bs[%j] : memref<128xf32, #tile.scope<shared>>
      %s = arith.addf %acc, %b : f32
      memref.store %s, %Cf[%i, %j] : memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%c0, %c0] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}

// -----

// A stored K x M (transpose_a) is specialized like an N x K B
// (gemm-sm90-transpose-a.mlir, gemm-sm90-transpose-b.mlir).

// CHECK-LABEL: func.func @transpose_a
// CHECK: sm90.warp_specialize
func.func @transpose_a(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf16>)
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %M = memref.dim %A, %c1 : memref<?x?xf16>
  %K = memref.dim %A, %c0 : memref<?x?xf16>
  %N = memref.dim %B, %c1 : memref<?x?xf16>
  %gy = arith.ceildivui %M, %c128 : index
  %gx = arith.ceildivui %N, %c128 : index
  %nk = arith.ceildivui %K, %c32 : index
  tile.launch blocks(%bx, %by) in (%gx, %gy) threads(128) {
    %As = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    %m0 = arith.muli %by, %c128 : index
    %n0 = arith.muli %bx, %c128 : index
    tile.clear %Cf : memref<128x128xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(3) {
      %k0 = arith.muli %k, %c32 : index
      tile.copy %A[%k0, %m0] to %As : memref<?x?xf16> to memref<32x128xf16, #tile.scope<shared>>
      tile.copy %B[%k0, %n0] to %Bs : memref<?x?xf16> to memref<32x128xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf {transpose_a} : memref<32x128xf16, #tile.scope<shared>>, memref<32x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%m0, %n0] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}
