// RUN: tilec %s --emit=mlir | FileCheck %s --check-prefix=MLIR
// RUN: tilec %s --emit=llvm | FileCheck %s --check-prefix=LLVM
// --pass-pipeline runs on the module itself, anchored or not (a plain
// parsePassPipeline would nest the anchored one and silently run nothing).
// RUN: tilec %s --emit=mlir --pass-pipeline='builtin.module(tile-to-cpu)' | FileCheck %s --check-prefix=MLIR
// RUN: tilec %s --emit=mlir --pass-pipeline='tile-to-cpu' | FileCheck %s --check-prefix=MLIR
// RUN: not tilec %s --emit=mlir --pass-pipeline='func.func(cse)' 2>&1 | FileCheck %s --check-prefix=ANCHOR
// RUN: tilec %s --emit=obj -o %t.o && test -s %t.o
// RUN: tilec %s -o %t.tileb && tile-run %t.tileb --info | FileCheck %s --check-prefix=INFO
// RUN: tilec %s --backend=ffi -o %t.ffi.tileb && not tile-run %t.ffi.tileb --backend=native --info 2>&1 | FileCheck %s --check-prefix=NO-NATIVE
// RUN: tile-run %t.tileb --dims N=3000 -n 2 --compare-backends ffi,native | FileCheck %s --check-prefix=EXEC

// MLIR: llvm.func @_mlir_ciface_double__tile_block
// MLIR: llvm.func @double__tile_blocks
// MLIR: llvm.func @double__tile_native

// ANCHOR: invalid --pass-pipeline: the pipeline is anchored on 'func.func' but the pass manager runs on 'builtin.module': nest it, e.g. builtin.module(func.func(cse))

// LLVM: define void @double__tile_blocks(
// LLVM: define {{.*}}i32 @double__tile_native(

// INFO: kernel   double
// INFO: target   cpu
// INFO: backend  native
// INFO: #0 X {{.*}}tensor float32 [N]
// INFO: #1 Y {{.*}}tensor float32 [N] output
// INFO: host.so

// NO-NATIVE: native

// EXEC: backends agree

func.func @double(%x: memref<?xf32> {tile.name = "X", tile.dims = ["N"]},
                  %y: memref<?xf32> {tile.name = "Y", tile.dims = ["N"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c256 = arith.constant 256 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %g = arith.ceildivui %n, %c256 : index
  tile.launch blocks(%b) in (%g) threads(64) {
    %f = tile.alloc : memref<256xf32, #tile.scope<fragment>>
    %start = arith.muli %b, %c256 : index
    tile.copy %x[%start] to %f : memref<?xf32> to memref<256xf32, #tile.scope<fragment>>
    tile.parallel (%i) in [256] {
      %v = memref.load %f[%i] : memref<256xf32, #tile.scope<fragment>>
      %w = arith.addf %v, %v : f32
      memref.store %w, %f[%i] : memref<256xf32, #tile.scope<fragment>>
    }
    tile.copy %f to %y[%start] : memref<256xf32, #tile.scope<fragment>> to memref<?xf32>
  }
  return
}
