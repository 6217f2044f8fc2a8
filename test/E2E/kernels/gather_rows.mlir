// Indices read from a tensor (an embedding lookup): row Ids[t] of Table is
// copied into a fragment and out to Out[t] (a tile start loaded from
// memory; ids outside the table read as zeros, the copy's bounds rule);
// Out2[t, j] = Table2[Jds[t], j] * 2 gathers element-wise in a parallel
// (ids in range). 768 bf16 over 128 threads: 4-byte runs.
func.func @gather_rows(%Ids: memref<?xi32> {tile.name = "Ids", tile.dims = ["T"]},
                       %Jds: memref<?xi32> {tile.name = "Jds", tile.dims = ["T"]},
                       %Table: memref<?x768xbf16> {tile.name = "Table", tile.dims = ["V", "E"]},
                       %Table2: memref<?x100xf32> {tile.name = "Table2", tile.dims = ["V2", "E2"]},
                       %Out: memref<?x768xbf16> {tile.name = "Out", tile.dims = ["T", "E"], tile.output},
                       %Out2: memref<?x100xf32> {tile.name = "Out2", tile.dims = ["T", "E2"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %two = arith.constant 2.0 : f32
  %T = memref.dim %Ids, %c0 : memref<?xi32>
  tile.launch blocks(%t) in (%T) threads(128) {
    %row = tile.alloc : memref<1x768xbf16, #tile.scope<fragment>>
    %id = memref.load %Ids[%t] : memref<?xi32>
    %r = arith.index_cast %id : i32 to index
    tile.copy %Table[%r, %c0] to %row : memref<?x768xbf16> to memref<1x768xbf16, #tile.scope<fragment>>
    tile.copy %row to %Out[%t, %c0] : memref<1x768xbf16, #tile.scope<fragment>> to memref<?x768xbf16>
    %jd = memref.load %Jds[%t] : memref<?xi32>
    %q = arith.index_cast %jd : i32 to index
    tile.parallel (%j) in [100] {
      %v = memref.load %Table2[%q, %j] : memref<?x100xf32>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %Out2[%t, %j] : memref<?x100xf32>
    }
  }
  return
}
