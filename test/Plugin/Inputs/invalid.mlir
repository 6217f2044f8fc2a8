func.func @f() {
  %F = tile.alloc : memref<64x64xf32>
  return
}
