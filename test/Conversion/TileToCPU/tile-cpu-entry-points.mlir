// RUN: tile-opt %s -tile-to-cpu | FileCheck %s
// RUN: tile-opt %s -tile-to-cpu=native-wrapper=false | FileCheck %s --check-prefix=NO-NATIVE

// The CPU kernel ABI's block-range entry calls the block function's C
// interface for each linear block id, unpacking (bx, by, bz) from it.
// CHECK-LABEL: llvm.func @copy__tile_blocks(
// CHECK-SAME:    %[[ARGS:.+]]: !llvm.ptr, %[[BEGIN:.+]]: i64, %[[END:.+]]: i64, %[[GX:.+]]: i64, %[[GY:.+]]: i64, %[[GZ:.+]]: i64)
// CHECK:         %[[SCALE:.+]] = llvm.load %{{.+}} : !llvm.ptr -> f32
// CHECK:         llvm.br ^[[HEADER:.+]](%[[BEGIN]] : i64)
// CHECK:       ^[[HEADER]](%[[ID:.+]]: i64):
// CHECK:         llvm.icmp "slt" %[[ID]], %[[END]]
// CHECK:         %[[BX:.+]] = llvm.urem %[[ID]], %[[GX]]
// CHECK:         llvm.call @_mlir_ciface_copy__tile_block(%{{.+}}, %{{.+}}, %[[SCALE]], %[[BX]],

// The native wrapper checks arguments in line, then calls the runtime's run.
// CHECK-LABEL: llvm.func @copy__tile_native(
// CHECK-SAME:    %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr) -> i32
// Device type (kDLCPU = 1) of the first tensor.
// CHECK:         %[[DEV:.+]] = llvm.load %{{.+}} : !llvm.ptr -> i32
// CHECK:         %[[CPU:.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK:         llvm.icmp "eq" %[[DEV]], %[[CPU]] : i32
// float32 packed as code 2 << 16 | 32 << 8 | 1 lane.
// CHECK:         llvm.mlir.constant(139265 : i64) : i64
// CHECK:         llvm.call %{{.+}}(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, i64, i64, i64) -> i32

// NO-NATIVE:     llvm.func @copy__tile_blocks(
// NO-NATIVE-NOT: llvm.func @copy__tile_native(

func.func @copy(%x: memref<?xf32> {tile.dims = ["N"]}, %y: memref<?xf32> {tile.dims = ["N"]}, %scale: f32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %g = arith.ceildivui %n, %c64 : index
  tile.launch blocks(%b) in (%g) threads(64) {
    %f = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    %start = arith.muli %b, %c64 : index
    tile.copy %x[%start] to %f : memref<?xf32> to memref<64xf32, #tile.scope<fragment>>
    tile.parallel (%i) in [64] {
      %v = memref.load %f[%i] : memref<64xf32, #tile.scope<fragment>>
      %w = arith.mulf %v, %scale : f32
      memref.store %w, %f[%i] : memref<64xf32, #tile.scope<fragment>>
    }
    tile.copy %f to %y[%start] : memref<64xf32, #tile.scope<fragment>> to memref<?xf32>
  }
  return
}
