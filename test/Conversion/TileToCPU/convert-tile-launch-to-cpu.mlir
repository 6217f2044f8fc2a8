// RUN: tile-opt %s -split-input-file -convert-tile-to-scf -convert-tile-launch-to-cpu | FileCheck %s

// The kernel becomes a per-block function taking the block and grid indices;
// on-chip buffers become stack allocations in the default memory space; the
// prelude values the body uses are recomputed in the block function.
// CHECK-LABEL: func.func @add__tile_block(
// CHECK-SAME:    %[[A:.+]]: memref<?xf32>, %[[B:.+]]: memref<?xf32>,
// CHECK-SAME:    %[[BX:[^:]+]]: index, %{{.+}}: index, %{{.+}}: index, %{{.+}}: index, %{{.+}}: index, %{{.+}}: index)
// CHECK-SAME:    attributes {llvm.emit_c_interface}
// CHECK:         %[[BUF:.+]] = memref.alloca() {alignment = 64 : i64} : memref<256xf32>
// CHECK:         %[[C256:.+]] = arith.constant 256 : index
// CHECK:         %[[START:.+]] = arith.muli %[[BX]], %[[C256]]
// CHECK:         memref.store %{{.+}}, %[[BUF]]
// CHECK-NOT:     tile.
// CHECK-NOT:     func.func @add(
func.func @add(%a: memref<?xf32>, %b: memref<?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c256 = arith.constant 256 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %g = arith.ceildivui %n, %c256 : index
  tile.launch blocks(%bx) in (%g) threads(128) {
    %s = tile.alloc : memref<256xf32, #tile.scope<fragment>>
    %start = arith.muli %bx, %c256 : index
    tile.copy %a[%start] to %s : memref<?xf32> to memref<256xf32, #tile.scope<fragment>>
    tile.copy %s to %b[%start] : memref<256xf32, #tile.scope<fragment>> to memref<?xf32>
  }
  return
}

// -----

// Rasterization remaps (bx, by) through panels of 4 grid columns.
// CHECK-LABEL: func.func @raster__tile_block(
// CHECK-SAME:    %{{.+}}: memref<?x?xf32>, %[[BX:[^:]+]]: index, %[[BY:[^:]+]]: index, %{{.+}}: index, %[[GX:[^:]+]]: index, %[[GY:[^:]+]]: index, %{{.+}}: index)
// CHECK:         %[[ROW:.+]] = arith.muli %[[BY]], %[[GX]]
// CHECK:         %[[ID:.+]] = arith.addi %[[ROW]], %[[BX]]
// CHECK:         %[[C4:.+]] = arith.constant 4 : index
// CHECK:         %[[PER:.+]] = arith.muli %[[C4]], %[[GY]]
// CHECK:         arith.divui %[[ID]], %[[PER]]
func.func @raster(%a: memref<?x?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  tile.launch blocks(%bx, %by) in (%n, %m) threads(32) attributes {raster = #tile.raster<panel = 4>} {
    %f = tile.alloc : memref<1x1xf32, #tile.scope<fragment>>
    tile.copy %f to %a[%by, %bx] : memref<1x1xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}

