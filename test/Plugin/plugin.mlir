// The stock mlir-opt (mlir-opt-22) loads tile as a dialect and pass plugin and
// parses, verifies and round-trips tile IR.
// REQUIRES: tile-plugin
// RUN: mlir-opt --load-dialect-plugin=%tile_plugin --load-pass-plugin=%tile_plugin %s \
// RUN:   | mlir-opt --load-dialect-plugin=%tile_plugin | FileCheck %s
// RUN: mlir-opt --load-dialect-plugin=%tile_plugin --mlir-print-op-generic %s \
// RUN:   | mlir-opt --load-dialect-plugin=%tile_plugin | FileCheck %s
// The pass plugin registers tile's passes; they run as in tile-opt (a
// plugin's passes are not command-line flags: use --pass-pipeline).
// RUN: mlir-opt --load-pass-plugin=%tile_plugin --help | FileCheck %s --check-prefix=PASSES
// RUN: mlir-opt --load-dialect-plugin=%tile_plugin --load-pass-plugin=%tile_plugin \
// RUN:   --pass-pipeline="builtin.module(convert-tile-to-scf)" %s -o %t.plugin.mlir
// RUN: tile-opt --convert-tile-to-scf %s -o %t.tile-opt.mlir
// RUN: diff %t.plugin.mlir %t.tile-opt.mlir
// Without the plugin mlir-opt does not know the dialect.
// RUN: not mlir-opt %s 2>&1 | FileCheck %s --check-prefix=NOPLUGIN
// A verifier error comes from the plugin's dialect.
// RUN: not mlir-opt --load-dialect-plugin=%tile_plugin %S/Inputs/invalid.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=INVALID

// PASSES: --convert-tile-to-scf
// NOPLUGIN: error: Dialect `tile' not found for custom op 'tile.launch'
// INVALID: invalid.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'tile.alloc' op result must be in a tile memory scope

// CHECK-LABEL: func.func @scale
// CHECK-SAME: attributes {tile.kernel}
// CHECK: tile.launch blocks(%{{.*}}, %{{.*}}) in (%{{.*}}, %{{.*}}) threads(128)
// CHECK: tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
// CHECK: tile.clear
func.func @scale(%C: memref<?x?xf32> {tile.dims = ["M", "N"], tile.output})
    attributes {tile.kernel} {
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx, %by) in (%c1, %c1) threads(128) {
    %F = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    tile.clear %F : memref<64x64xf32, #tile.scope<fragment>>
  }
  return
}
