// Atomics across blocks. Every block b of a 1-D grid over the rows of X
// (N x 64, 4 rows per block):
//   - adds its 4x64 tile of X into Acc (64 x 64) at rows (b mod 16) * 4
//     with tile.atomic_tile add, so that N/64 blocks hit each Acc tile;
//   - atomically maxes / mins each of its rows' first element into Mx[0] /
//     Mn[0] and adds the count 1 into Count[0] (scalar atomics, f32 & i32).
// numpy: Acc += X reshaped; Mx = max(Mx, X[:, 0].max()); Mn likewise;
//        Count += number of blocks.
func.func @atomics(%X: memref<?x64xf32> {tile.name = "X", tile.dims = ["N", "W"]},
                   %Acc: memref<64x64xf32> {tile.name = "Acc"},
                   %Mx: memref<1xf32> {tile.name = "Mx"},
                   %Mn: memref<1xf32> {tile.name = "Mn"},
                   %Count: memref<1xi32> {tile.name = "Count"})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %N = memref.dim %X, %c0 : memref<?x64xf32>
  %g = arith.ceildivui %N, %c4 : index
  tile.launch blocks(%b) in (%g) threads(32) {
    %x = tile.alloc : memref<4x64xf32, #tile.scope<fragment>>
    %row = arith.muli %b, %c4 : index
    tile.copy %X[%row, %c0] to %x : memref<?x64xf32> to memref<4x64xf32, #tile.scope<fragment>>
    %slot = arith.remui %b, %c16 : index
    %arow = arith.muli %slot, %c4 : index
    tile.atomic_tile add %x to %Acc[%arow, %c0] : memref<4x64xf32, #tile.scope<fragment>> to memref<64x64xf32>
    tile.parallel (%i) in [4] {
      %gi = arith.addi %row, %i : index
      %inside = arith.cmpi ult, %gi, %N : index
      scf.if %inside {
        %v = memref.load %x[%i, %c0] : memref<4x64xf32, #tile.scope<fragment>>
        tile.atomic max %v, %Mx[%c0] : f32, memref<1xf32>
        tile.atomic min %v, %Mn[%c0] : f32, memref<1xf32>
      }
    }
    %one = arith.constant 1 : i32
    tile.atomic add %one, %Count[%c0] : i32, memref<1xi32>
  }
  return
}
