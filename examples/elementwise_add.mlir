// Element-wise vector add: C[i] = A[i] + B[i] for f32 vectors of any length N.
//
//   A, B, C : memref<?xf32>, all of length N (tile.dims = ["N"]); C is the
//             output (tile.output: the runtime allocates it when omitted).
//
// The grid has ceil(N / 1024) blocks of 128 threads. Block b owns elements
// [b*1024, b*1024 + 1024): it copies that slice of A and of B into two
// 1024-element fragments (8 elements per thread), adds them in a
// tile.parallel, and copies the sum to the same slice of C.
//
// Tails need no masking: in the last block, tile.copy reads zeros for the
// indices >= N of A and B, and drops the writes to indices >= N of C, so C
// holds exactly A + B. N = 0 launches no block.
//
// numpy: C = A + B
func.func @elementwise_add(%A: memref<?xf32> {tile.name = "A", tile.dims = ["N"]},
                           %B: memref<?xf32> {tile.name = "B", tile.dims = ["N"]},
                           %C: memref<?xf32> {tile.name = "C", tile.dims = ["N"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1023 = arith.constant 1023 : index
  %c1024 = arith.constant 1024 : index
  %N = memref.dim %A, %c0 : memref<?xf32>
  // blocks = ceil(N / 1024)
  %Np = arith.addi %N, %c1023 : index
  %blocks = arith.divui %Np, %c1024 : index
  tile.launch blocks(%bx) in (%blocks) threads(128) {
    %a = tile.alloc : memref<1024xf32, #tile.scope<fragment>>
    %b = tile.alloc : memref<1024xf32, #tile.scope<fragment>>
    %c = tile.alloc : memref<1024xf32, #tile.scope<fragment>>
    %start = arith.muli %bx, %c1024 : index
    tile.copy %A[%start] to %a : memref<?xf32> to memref<1024xf32, #tile.scope<fragment>>
    tile.copy %B[%start] to %b : memref<?xf32> to memref<1024xf32, #tile.scope<fragment>>
    tile.parallel (%i) in [1024] {
      %x = memref.load %a[%i] : memref<1024xf32, #tile.scope<fragment>>
      %y = memref.load %b[%i] : memref<1024xf32, #tile.scope<fragment>>
      %s = arith.addf %x, %y : f32
      memref.store %s, %c[%i] : memref<1024xf32, #tile.scope<fragment>>
    }
    tile.copy %c to %C[%start] : memref<1024xf32, #tile.scope<fragment>> to memref<?xf32>
  }
  return
}
