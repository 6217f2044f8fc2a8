// The code carries the hash of the metadata it was compiled with
// (docs/bundle.md, "Trust model"): an exported i64 constant in the host
// code, a .visible .global in the device code (cuModuleGetGlobal).
// RUN: tilec %s --emit=llvm | FileCheck %s --check-prefix=CPU
// RUN: tilec %s --target=cuda --chip=sm_80 --emit=ptx | FileCheck %s --check-prefix=PTX
// RUN: tilec %s -o %t.tileb && tile-run %t.tileb --dims N=100 -n 1 | FileCheck %s --check-prefix=EXEC

// CPU: @hashed__tile_metadata_hash = {{.*}}constant i64 {{-?[0-9]+}}, align 8
// PTX: .visible .global .align 8 .u64 hashed__tile_metadata_hash = {{-?[0-9]+}};
// EXEC: hashed [native]

func.func @hashed(%x: memref<?xf32> {tile.name = "X", tile.dims = ["N"]},
                  %y: memref<?xf32> {tile.name = "Y", tile.dims = ["N"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %g = arith.ceildivui %n, %c64 : index
  tile.launch blocks(%b) in (%g) threads(64) {
    %f = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    %start = arith.muli %b, %c64 : index
    tile.copy %x[%start] to %f : memref<?xf32> to memref<64xf32, #tile.scope<fragment>>
    tile.copy %f to %y[%start] : memref<64xf32, #tile.scope<fragment>> to memref<?xf32>
  }
  return
}
