// A row reduction of a 128x128 gemm accumulator on 256 threads: the sm_90a
// cubin's kernel (wgmma layouts) needs no cross-warp reduction scratch, the
// CUDA C++ for NVRTC (the sm_80 lowering) does. The bundle builds, and the
// source says how much dynamic shared memory its kernel needs (the nvrtc
// backend launches with that); on sm_80 both agree and it says nothing.
// RUN: tilec %s --target=cuda --chip=sm_90a --emit=metadata | FileCheck %s --check-prefix=META
// RUN: tilec %s --target=cuda --chip=sm_90a --emit=cuda | FileCheck %s --check-prefix=SM90
// RUN: tilec %s --target=cuda --chip=sm_80 --emit=cuda | FileCheck %s --check-prefix=SM80
// RUN: tilec %s --target=cuda --chip=sm_90a -o %t.tileb
// META: "shared_bytes": 65536
// SM90: rowmax__tile_nvrtc_shared_bytes = 0x0000000000011000ull;
// SM80-NOT: __tile_nvrtc_shared_bytes

func.func @rowmax(%Q: memref<?x128xbf16>, %K: memref<?x128xbf16>, %O: memref<?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %S = memref.dim %Q, %c0 : memref<?x128xbf16>
  %nb = arith.ceildivui %S, %c128 : index
  tile.launch blocks(%bx) in (%nb) threads(256) {
    %qs = tile.alloc : memref<128x128xbf16, #tile.scope<shared>>
    %ks = tile.alloc : memref<128x128xbf16, #tile.scope<shared>>
    %acc = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    %m = tile.alloc : memref<128xf32, #tile.scope<fragment>>
    %r = arith.muli %bx, %c128 : index
    tile.copy %Q[%r, %c0] to %qs : memref<?x128xbf16> to memref<128x128xbf16, #tile.scope<shared>>
    tile.copy %K[%c0, %c0] to %ks : memref<?x128xbf16> to memref<128x128xbf16, #tile.scope<shared>>
    tile.gemm %qs, %ks, %acc {transpose_b, clear} : memref<128x128xbf16, #tile.scope<shared>>, memref<128x128xbf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    tile.reduce max %acc into %m {dim = 1 : i64} : memref<128x128xf32, #tile.scope<fragment>> into memref<128xf32, #tile.scope<fragment>>
    tile.copy %m to %O[%r] : memref<128xf32, #tile.scope<fragment>> to memref<?xf32>
  }
  return
}
