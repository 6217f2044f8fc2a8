// The Metal target: --emit=msl prints the bundle's `msl` section (no tool
// is needed: the MSL is compiled on the Mac by torch.mps); chips and
// features are checked; what Metal cannot run is an error naming the op.
// RUN: tilec %s --target=metal --emit=msl | FileCheck %s --check-prefix=MSL
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/k.mlir
// RUN: tilec %t/k.mlir --target=metal -o %t/k.tileb
// RUN: tilec --info %t/k.tileb | FileCheck %s --check-prefix=INFO
// RUN: tilec --info %t/k.tileb --section=msl | FileCheck %s --check-prefix=MSL
// RUN: tilec %t/k.mlir --target=metal --chip=apple-m3 --backend=metal-torch --emit=metadata | FileCheck %s --check-prefix=META
// RUN: tilec %t/k.mlir --target=metal --emit=mlir | FileCheck %s --check-prefix=MLIR
// RUN: not tilec %s --target=metal --chip=sm_80 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADCHIP
// RUN: not tilec %s --target=metal --features=+simd -o /dev/null 2>&1 | FileCheck %s --check-prefix=FEATURE
// RUN: not tilec %s --target=metal --backend=ffi -o /dev/null 2>&1 | FileCheck %s --check-prefix=BACKEND
// RUN: not tilec %s --target=metal --emit=ptx 2>&1 | FileCheck %s --check-prefix=PTX
// RUN: not tilec %S/Inputs/metal-f64.mlir --target=metal --emit=msl 2>&1 | FileCheck %s --check-prefix=F64

// MSL: #include <metal_stdlib>
// MSL: static inline void scale_kernel_body(device float*
// MSL: tile::exp(
// MSL: kernel void scale_kernel(

// INFO: target metal
// INFO: msl

// META-DAG: "kind": "metal"
// META-DAG: "chip": "apple-m3"

// MLIR: emitc.func @scale_kernel_body(
// MLIR-SAME: !emitc.opaque<"tile::thread_context">

// BADCHIP: error: unknown Metal chip 'sm_80' (supported: apple-m1, apple-m2, apple-m3, apple-m4)

// FEATURE: error: the metal target has no target features (got '+simd')

// BACKEND: error: {{.*}}ffi

// PTX: error: target 'metal' cannot emit 'ptx' (it emits: bundle, metadata, mlir, msl)

// F64: error: the metal target cannot run '{{.*}}': 64-bit floats (MSL has no double)

func.func @scale(%x: memref<?xf32> {tile.name = "X", tile.dims = ["N"]},
                 %y: memref<?xf32> {tile.name = "Y", tile.dims = ["N"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %g = arith.ceildivui %n, %c128 : index
  tile.launch blocks(%b) in (%g) threads(128) {
    %f = tile.alloc : memref<128xf32, #tile.scope<fragment>>
    %start = arith.muli %b, %c128 : index
    tile.copy %x[%start] to %f : memref<?xf32> to memref<128xf32, #tile.scope<fragment>>
    tile.parallel (%i) in [128] {
      %v = memref.load %f[%i] : memref<128xf32, #tile.scope<fragment>>
      %w = math.exp %v : f32
      memref.store %w, %f[%i] : memref<128xf32, #tile.scope<fragment>>
    }
    tile.copy %f to %y[%start] : memref<128xf32, #tile.scope<fragment>> to memref<?xf32>
  }
  return
}
