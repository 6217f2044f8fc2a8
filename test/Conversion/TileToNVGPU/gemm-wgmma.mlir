// RUN: tile-opt %s -split-input-file --tile-attach-metadata=target=cuda --tile-infer-layouts --convert-tile-to-nvgpu="chip=sm_90a remarks=true" --canonicalize --cse -verify-diagnostics | FileCheck %s
// RUN: tile-opt %tile_src_root/examples/flash_attention.mlir --tile-attach-metadata=target=cuda --tile-infer-layouts --convert-tile-to-nvgpu="chip=sm_90a remarks=true" --canonicalize --cse 2>&1 | FileCheck %s --check-prefix=FA

// examples/flash_attention.mlir on sm_90a: both gemms are wgmma chains
// (S = Q K^T from two descriptors, K-major B; O += P V with P from
// registers, N-major V), no remark; shared memory is Q's tile and two
// stages of K and V, 1024-byte aligned; no slack: the kernel has no static
// shared memory, so its dynamic base is aligned (checked: it traps if not).
// FA-NOT: remark
// FA: shared_bytes = 40960
// FA: %[[MOD:.*]] = arith.remui %{{.*}}, %c1024
// FA-NEXT: %[[BAD:.*]] = arith.cmpi ne, %[[MOD]], %c0
// FA-NEXT: scf.if %[[BAD]] {
// FA-NEXT: llvm.intr.trap
// FA: fence.proxy
// FA-NEXT: gpu.barrier
// FA: wgmma.fence.aligned
// FA: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}, $64, $65, p, 1, 1, 0, 0;
// FA: wgmma.commit.group.sync.aligned
// FA: wgmma.wait.group.sync.aligned 0
// FA: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}, {$64, $65, $66, $67}, $68, p, 1, 1, 1;

// A 128-row tile over two warpgroups, d = 128: Q and K rows of 256 bytes
// are stored as two 128-byte panels (the second panel of Q starts 128 rows
// x 128 bytes = 16384 bytes further), the accumulator chain is m64n128,
// K/16 = 8 deep. Descriptors are built in 32 bits, one add per k-step
// onto the address field, the upper word (stride 1024 bytes, 128-byte
// swizzle) a constant.
// CHECK-LABEL: gpu.func @qk_d128_kernel
// CHECK: %[[HI:.*]] = llvm.mlir.constant(4611686293305294848 : i64) : i64
// CHECK: wgmma.fence.aligned
// CHECK: llvm.add
// CHECK-NEXT: %[[LO:.*]] = llvm.add {{.*}} : i32
// CHECK-NEXT: %[[WIDE:.*]] = llvm.zext %[[LO]] : i32 to i64
// CHECK-NEXT: llvm.or %[[WIDE]], %[[HI]] : i64
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK-NOT: wgmma.mma_async
// CHECK: wgmma.commit.group.sync.aligned
// CHECK: wgmma.wait.group.sync.aligned 0
// CHECK: gpu.return
func.func @qk_d128(%Q: memref<?x128xbf16>, %K: memref<?x128xbf16>, %S: memref<?x?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(256) {
    %Qs = tile.alloc : memref<128x128xbf16, #tile.scope<shared>>
    %Ks = tile.alloc : memref<128x128xbf16, #tile.scope<shared>>
    %Sf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    %P = tile.alloc : memref<128x128xbf16, #tile.scope<fragment>>
    %O = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    tile.copy %Q[%c0, %c0] to %Qs : memref<?x128xbf16> to memref<128x128xbf16, #tile.scope<shared>>
    tile.copy %K[%c0, %c0] to %Ks : memref<?x128xbf16> to memref<128x128xbf16, #tile.scope<shared>>
    tile.gemm %Qs, %Ks, %Sf {transpose_b, clear} : memref<128x128xbf16, #tile.scope<shared>>, memref<128x128xbf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    tile.copy %Sf to %P : memref<128x128xf32, #tile.scope<fragment>> to memref<128x128xbf16, #tile.scope<fragment>>
    tile.gemm %P, %Ks, %O {clear} : memref<128x128xbf16, #tile.scope<fragment>>, memref<128x128xbf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    tile.copy %O to %S[%c0, %c0] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}

// -----

// A square warp tiling (2 x 2 warps of 32x32) is not wgmma's accumulator
// layout: mma.sync, and a remark saying why.
// CHECK-LABEL: gpu.func @square_kernel
// CHECK-NOT: wgmma
// CHECK: nvgpu.mma.sync
func.func @square(%A: memref<?x?xf16>, %C: memref<?x?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %As = tile.alloc : memref<64x64xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    tile.copy %A[%c0, %c0] to %As : memref<?x?xf16> to memref<64x64xf16, #tile.scope<shared>>
    // expected-remark @below {{tile.gemm not lowered to wgmma: C's layout does not give each warp one 16-row strip}}
    tile.gemm %As, %As, %Cf {clear} : memref<64x64xf16, #tile.scope<shared>>, memref<64x64xf16, #tile.scope<shared>>, memref<64x64xf32, #tile.scope<fragment>>
    tile.copy %Cf to %C[%c0, %c0] : memref<64x64xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}
