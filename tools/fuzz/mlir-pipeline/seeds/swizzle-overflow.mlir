// Regression (fuzzer, 2026-12-01): swizzle parameters whose sum and shift
// overflowed int64 in the attribute verifier (UBSan: signed overflow).
func.func @f(%A: memref<?xf32>) attributes {tile.kernel} {
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(32) {
    %a = tile.alloc {layout = #tile.swizzle<bits = 3, base = 9223372036854775807, shift = 9223372036854775807>} : memref<32xf32, #tile.scope<fragment>>
  }
  return
}
