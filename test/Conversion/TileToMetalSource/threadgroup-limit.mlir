// RUN: not tilec %s --target=metal --emit=msl 2>&1 | FileCheck %s

// Apple GPUs have 32 KiB of threadgroup memory: a kernel needing more is an
// error naming the bytes (here a 96x96 f32 shared tile, 36 KiB).
// CHECK: error: kernel 'big_tile' needs {{[0-9]+}} bytes of threadgroup memory; Apple GPUs have 32768
func.func @big_tile(%X: memref<?x?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %s = tile.alloc : memref<96x96xf32, #tile.scope<shared>>
    tile.copy %X[%c0, %c0] to %s : memref<?x?xf32> to memref<96x96xf32, #tile.scope<shared>>
    tile.copy %s to %X[%c0, %c0] : memref<96x96xf32, #tile.scope<shared>> to memref<?x?xf32>
  }
  return
}
