// RUN: tile-opt %s -split-input-file -tile-attach-metadata="target=cuda chip=sm_80 features=+ptx80" | FileCheck %s

// The description tile-attach-metadata builds: names, dims, outputs, grid
// expressions, block, shared bytes, and what the kernel does to each tensor
// parameter (read / write / readwrite), seen through views and casts.

// CHECK-LABEL: module attributes
// CHECK-SAME: #tile.kernel_info<"copy", target = "cuda", chip = "sm_80", features = "+ptx80",
// CHECK-SAME: params = [<"A" : memref<?x64xf32>, dims = ["M", "D"]>, <"C" : memref<?x64xf32>, dims = ["M", "D"], access = write, output>, <"unused" : memref<8xi8>, dims = [""]>, <"rows" : i32>],
// CHECK-SAME: grid = [ceildivu("M", scalar(3)), 1, 1], block = [64, 1, 1], shared_bytes = 2048>
func.func @copy(%a: memref<?x64xf32> {tile.name = "A", tile.dims = ["M", "D"]},
                %c: memref<?x64xf32> {tile.name = "C", tile.dims = ["M", "D"], tile.output},
                %u: memref<8xi8> {tile.name = "unused"},
                %rows: i32 {tile.name = "rows"}) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %m = memref.dim %a, %c0 : memref<?x64xf32>
  %r = arith.index_cast %rows : i32 to index
  %g = arith.ceildivui %m, %r : index
  tile.launch blocks(%b) in (%g) threads(64) {
    %s = tile.alloc : memref<8x64xf32, #tile.scope<shared>>
    tile.copy %a[%b, %c0] to %s : memref<?x64xf32> to memref<8x64xf32, #tile.scope<shared>>
    tile.copy %s to %c[%b, %c0] : memref<8x64xf32, #tile.scope<shared>> to memref<?x64xf32>
  }
  return
}

// -----

// Atomics read and write their target; unnamed dynamic dims get generated
// symbols.
// CHECK-LABEL: module attributes
// CHECK-SAME: params = [<"arg0" : memref<?xf32>, dims = ["arg0.0"], access = readwrite>, <"arg1" : memref<?x?xf32>, dims = ["arg1.0", "arg1.1"], access = readwrite>]
func.func @atomics(%out: memref<?xf32>, %hist: memref<?x?xf32>) attributes {tile.kernel} {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %v = arith.constant 1.0 : f32
  tile.launch blocks(%b) in (%c1) threads(32) {
    tile.atomic add %v, %out[%b] : f32, memref<?xf32>
    %acc = tile.alloc : memref<16x16xf32, #tile.scope<shared>>
    tile.atomic_tile add %acc to %hist[%c0, %c0] : memref<16x16xf32, #tile.scope<shared>> to memref<?x?xf32>
  }
  return
}

// -----

// Stores through a subview and a cast are writes of the parameter; a load
// through another subview is a read. The in-place declaration is recorded.
// CHECK-LABEL: module attributes
// CHECK-SAME: params = [<"X" : memref<16xf32>, dims = [""], access = readwrite, inplace>, <"Y" : memref<16xf32>, dims = [""], access = write>, <"Z" : memref<16xf32>, dims = [""]>]
func.func @views(%x: memref<16xf32> {tile.name = "X", tile.inplace},
                 %y: memref<16xf32> {tile.name = "Y"},
                 %z: memref<16xf32> {tile.name = "Z"}) attributes {tile.kernel} {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  tile.launch blocks(%b) in (%c1) threads(32) {
    %xs = memref.subview %x[4] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1], offset: 4>>
    %v = memref.load %xs[%c0] : memref<8xf32, strided<[1], offset: 4>>
    memref.store %v, %x[%b] : memref<16xf32>
    %yc = memref.cast %y : memref<16xf32> to memref<?xf32>
    memref.store %v, %yc[%c0] : memref<?xf32>
    %w = memref.load %z[%c0] : memref<16xf32>
  }
  return
}

// -----

// A call may do anything with the memref, and so may whoever reads it back
// from a buffer it was stored into: read and write.
// CHECK-LABEL: module attributes
// CHECK-SAME: params = [<"arg0" : memref<4xf32>, dims = [""], access = readwrite>, <"arg1" : memref<4xf32>, dims = [""], access = readwrite>]
func.func private @opaque(memref<4xf32>)
func.func @escapes(%x: memref<4xf32>, %y: memref<4xf32>) attributes {tile.kernel} {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  tile.launch blocks(%b) in (%c1) threads(32) {
    func.call @opaque(%x) : (memref<4xf32>) -> ()
    %box = memref.alloca() : memref<1xmemref<4xf32>>
    memref.store %y, %box[%c0] : memref<1xmemref<4xf32>>
  }
  return
}
