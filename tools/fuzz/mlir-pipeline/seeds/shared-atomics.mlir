// A weighted histogram through shared-memory atomics, as written from the
// docs (issue 10): every block of CHUNK elements clears BINS shared bins,
// adds W[i] into bin X[i] with tile.atomic in a tile.parallel, then adds
// its bins into the global H with tile.atomic_tile. Each block also counts
// itself with a block-level tile.atomic into a shared counter that goes to
// Blocks the same way. On the GPU every step depends on the barriers of the
// block-synchronization rule (docs/dialect.md): without the one after the
// parallel, atomic_tile reads bins that other threads are still counting.
// numpy: H += bincount(X, W); Blocks += number of blocks.
func.func @histogram(%X: memref<?xi32> {tile.name = "X", tile.dims = ["N"]},
                     %W: memref<?xf32> {tile.name = "W", tile.dims = ["N"]},
                     %H: memref<37xf32> {tile.name = "H"},
                     %Blocks: memref<1xi32> {tile.name = "Blocks"})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %chunk = arith.constant 250 : index
  %N = memref.dim %X, %c0 : memref<?xi32>
  %g = arith.ceildivui %N, %chunk : index
  tile.launch blocks(%b) in (%g) threads(64) {
    %bins = tile.alloc : memref<37xf32, #tile.scope<shared>>
    %count = tile.alloc : memref<1xi32, #tile.scope<shared>>
    %x = tile.alloc : memref<250xi32, #tile.scope<fragment>>
    %w = tile.alloc : memref<250xf32, #tile.scope<fragment>>
    tile.clear %bins : memref<37xf32, #tile.scope<shared>>
    tile.clear %count : memref<1xi32, #tile.scope<shared>>
    %start = arith.muli %b, %chunk : index
    tile.copy %X[%start] to %x : memref<?xi32> to memref<250xi32, #tile.scope<fragment>>
    tile.copy %W[%start] to %w : memref<?xf32> to memref<250xf32, #tile.scope<fragment>>
    tile.parallel (%i) in [250] {
      %gi = arith.addi %start, %i : index
      %inside = arith.cmpi ult, %gi, %N : index
      scf.if %inside {
        %v = memref.load %x[%i] : memref<250xi32, #tile.scope<fragment>>
        %bin = arith.index_cast %v : i32 to index
        %wt = memref.load %w[%i] : memref<250xf32, #tile.scope<fragment>>
        tile.atomic add %wt, %bins[%bin] : f32, memref<37xf32, #tile.scope<shared>>
      }
    }
    %one = arith.constant 1 : i32
    tile.atomic add %one, %count[%c0] : i32, memref<1xi32, #tile.scope<shared>>
    tile.atomic_tile add %bins to %H[%c0] : memref<37xf32, #tile.scope<shared>> to memref<37xf32>
    tile.atomic_tile add %count to %Blocks[%c0] : memref<1xi32, #tile.scope<shared>> to memref<1xi32>
  }
  return
}
