// Regression (fuzzer, 2026-12-01): a pipelined loop over the shared-memory
// limit on sm_80; its diagnostic was emitted on the loop after the loop had
// been lowered and erased (heap use after free).

func.func @transposed_epilogue(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf16>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c31 = arith.constant 31 : index
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %kp = arith.addi %K, %c31 : index
  %nk = arith.divui %kp, %c32 : index
  tile.launch blocks(%bx) in (%c1) threads(128) {
    %As = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<32x128xf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<128x128xf32, #tile.scope<fragment>>
    tile.clear %Cf : memref<128x128xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(7) {
      %k0 = arith.muli %k, %c32 : index
      tile.copy %A[%c0, %k0] to %As : memref<?x?xf16> to memref<128x32xf16, #tile.scope<shared>>
      tile.copy %B[%k0, %c0] to %Bs : memref<?x?xf16> to memref<32x128xf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<128x32xf16, #tile.scope<shared>>, memref<32x128xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.parallel (%i, %j) in [128, 128] {
      %v = memref.load %Cf[%j, %i] : memref<128x128xf32, #tile.scope<fragment>>
      memref.store %v, %Cf[%i, %j] : memref<128x128xf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%c0, %c0] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}
