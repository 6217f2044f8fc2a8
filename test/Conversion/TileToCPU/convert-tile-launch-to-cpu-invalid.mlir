// RUN: tile-opt %s -split-input-file -convert-tile-to-scf -convert-tile-launch-to-cpu -verify-diagnostics

func.func @side_effect_in_prelude(%a: memref<?xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{launch body uses a value computed by 'memref.load' outside the launch}}
  %x = memref.load %a[%c0] : memref<?xf32>
  tile.launch blocks(%bx) in (%c1) threads(32) {
    %f = tile.alloc : memref<1xf32, #tile.scope<fragment>>
    tile.fill %f, %x : memref<1xf32, #tile.scope<fragment>>, f32
  }
  return
}
