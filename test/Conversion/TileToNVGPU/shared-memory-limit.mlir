// RUN: tile-opt %s -split-input-file -verify-diagnostics --tile-infer-layouts --convert-tile-to-nvgpu=chip=sm_80
// RUN: not tile-opt %s -split-input-file --tile-infer-layouts --convert-tile-to-nvgpu=chip=sm_200 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// Shared memory over the chip's limit is a compile-time error naming the
// bytes and the limit (issue 10: it used to fail only at launch). sm_80:
// 163 KiB per block, less the 16 bytes of the NVPTX backend's static
// dynamic-memory symbol.

// expected-error @+1 {{kernel 'big_kernel' needs 262144 bytes of shared memory (262144 for its shared buffers), but sm_80 allows 166896 bytes of dynamic shared memory per block (163 KiB less 16 bytes of static shared memory)}}
func.func @big(%X: memref<?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%b) in (%c1) threads(128) {
    %s = tile.alloc : memref<65536xf32, #tile.scope<shared>>
    tile.copy %X[%c0] to %s : memref<?xf32> to memref<65536xf32, #tile.scope<shared>>
    tile.copy %s to %X[%c0] : memref<65536xf32, #tile.scope<shared>> to memref<?xf32>
  }
  return
}

// -----

// A software pipeline keeps `stages` copies of the shared buffers its copies
// write: 12 x (8 KiB + 8 KiB) does not fit on sm_80 (it does on sm_90a,
// pipelined-many-stages.mlir). Checked before the loop is lowered.
func.func @gemm12(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf16>)
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %nk = arith.ceildivui %K, %c32 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %As = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    tile.clear %Cf : memref<128x128xf32, #tile.scope<fragment>>
    // expected-error @+1 {{tile.pipelined with stages(12) needs 196608 bytes of shared memory (196608 of them for 12 copies of the shared buffers its copies write), but sm_80 allows 166896 bytes}}
    tile.pipelined %k = %c0 to %nk step %c1 stages(12) {
      %k0 = arith.muli %k, %c32 : index
      tile.copy %A[%c0, %k0] to %As : memref<?x?xf16> to memref<128x32xf16, #tile.scope<shared>>
      tile.copy %B[%k0, %c0] to %Bs : memref<?x?xf16> to memref<32x128xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<128x32xf16, #tile.scope<shared>>, memref<32x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%c0, %c0] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}

// A chip the compiler does not know gets the 48 KiB every CUDA GPU has.
// UNKNOWN: sm_200 allows 49136 bytes of dynamic shared memory per block (48 KiB less 16 bytes of static shared memory; sm_200 is not in the compiler's table, so only the 48 KiB every CUDA GPU has are assumed)
