// f32 divisions in CUDA kernels are div.full.f32 (at most 2 ulp) unless
// --precise-div keeps them IEEE; the CPU target is unchanged either way.
// RUN: tilec %s --target=cuda --emit=ptx | FileCheck %s --check-prefix=FAST
// RUN: tilec %s --target=cuda --precise-div --emit=ptx | FileCheck %s --check-prefix=PRECISE
// FAST: div.full.f32
// FAST-NOT: div.rn.f32
// PRECISE-NOT: div.full.f32
// PRECISE: div.rn.f32

func.func @scale(%x: memref<?xf32>, %s: f32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %c128 = arith.constant 128 : index
  %blocks = arith.ceildivui %n, %c128 : index
  tile.launch blocks(%b) in (%blocks) threads(128) {
    %f = tile.alloc : memref<128xf32, #tile.scope<fragment>>
    %o = arith.muli %b, %c128 : index
    tile.copy %x[%o] to %f : memref<?xf32> to memref<128xf32, #tile.scope<fragment>>
    tile.parallel (%i) in [128] {
      %v = memref.load %f[%i] : memref<128xf32, #tile.scope<fragment>>
      %q = arith.divf %v, %s : f32
      memref.store %q, %f[%i] : memref<128xf32, #tile.scope<fragment>>
    }
    tile.copy %f to %x[%o] : memref<128xf32, #tile.scope<fragment>> to memref<?xf32>
  }
  return
}
