// An output that cannot be written (a full device) is a one-line error and
// exit code 1 in both tools, not LLVM's fatal "IO failure on output stream".
// RUN: not tilec %s -o /dev/full 2>&1 | FileCheck %s --check-prefix=TILEC
// RUN: not tilec %s --emit=metadata > /dev/full 2> %t.err; FileCheck %s --check-prefix=STDOUT < %t.err
// RUN: not tile-opt %s -o /dev/full 2>&1 | FileCheck %s --check-prefix=OPT
// TILEC: tilec: cannot write '/dev/full': No space left on device
// TILEC-NOT: LLVM ERROR
// STDOUT: tilec: cannot write the standard output: No space left on device
// OPT: tile-opt: cannot write '/dev/full': No space left on device
// OPT-NOT: LLVM ERROR
func.func @k(%X: memref<?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%b) in (%c1) threads(32) {
    %f = tile.alloc : memref<32xf32, #tile.scope<fragment>>
    tile.copy %X[%c0] to %f : memref<?xf32> to memref<32xf32, #tile.scope<fragment>>
    tile.copy %f to %X[%c0] : memref<32xf32, #tile.scope<fragment>> to memref<?xf32>
  }
  return
}
