// 192 KiB of shared buffers: more than sm_80's 163 KiB, within sm_90a's
// 227 KiB. The sm_90a bundle builds with its CUDA C++ too (the sm_80 code
// NVRTC compiles for the device's own arch is checked against the bundle
// chip's limit); the sm_80 bundle is refused, naming sm_80.
// RUN: tilec %s --target=cuda --chip=sm_90a --emit=cuda | FileCheck %s --check-prefix=SM90
// RUN: not tilec %s --target=cuda --chip=sm_80 --emit=cuda 2>&1 | FileCheck %s --check-prefix=SM80
// SM90: extern "C" __global__
// SM80: but sm_80 allows {{[0-9]+}} bytes of dynamic shared memory per block

func.func @big(%X: memref<?x256xf16>, %Y: memref<?x256xf16>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %c384 = arith.constant 384 : index
  tile.launch blocks(%b) in (%c1) threads(128) {
    %s0 = tile.alloc : memref<128x256xf16, #tile.scope<shared>>
    %s1 = tile.alloc : memref<128x256xf16, #tile.scope<shared>>
    %s2 = tile.alloc : memref<128x256xf16, #tile.scope<shared>>
    tile.copy %X[%c0, %c0] to %s0 : memref<?x256xf16> to memref<128x256xf16, #tile.scope<shared>>
    tile.copy %X[%c128, %c0] to %s1 : memref<?x256xf16> to memref<128x256xf16, #tile.scope<shared>>
    tile.copy %X[%c256, %c0] to %s2 : memref<?x256xf16> to memref<128x256xf16, #tile.scope<shared>>
    tile.copy %s2 to %Y[%c0, %c0] : memref<128x256xf16, #tile.scope<shared>> to memref<?x256xf16>
    tile.copy %s1 to %Y[%c128, %c0] : memref<128x256xf16, #tile.scope<shared>> to memref<?x256xf16>
    tile.copy %s0 to %Y[%c256, %c0] : memref<128x256xf16, #tile.scope<shared>> to memref<?x256xf16>
  }
  return
}
