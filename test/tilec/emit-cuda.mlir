// The CUDA target's emit kinds, each what its --help says; --emit=ptx and
// --emit=llvm need no ptxas, everything else does.
// RUN: tilec %s --target=cuda --emit=ptx | FileCheck %s --check-prefix=PTX
// RUN: tilec %s --target=cuda --emit=llvm | FileCheck %s --check-prefix=LLVM
// RUN: env TILE_PTXAS=%t.no-ptxas tilec %s --target=cuda --chip=sm_90a --emit=ptx | FileCheck %s --check-prefix=PTX90
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/k.mlir
// RUN: tilec %t/k.mlir --target=cuda --emit=cubin
// RUN: test -s %t/k.cubin
// RUN: tilec %t/k.mlir --target=cuda -o %t/k.tileb
// RUN: tilec --info %t/k.tileb --section=cubin -o %t/section.cubin
// RUN: cmp %t/k.cubin %t/section.cubin
// RUN: env TILE_PTXAS=%t.no-ptxas tilec %s --target=cuda --emit=cuda | FileCheck %s --check-prefix=CUDA
// RUN: tilec --info %t/k.tileb --section=cuda | FileCheck %s --check-prefix=CUDA
// RUN: tilec %t/k.mlir --target=cuda --backend=ffi -o %t/ffi.tileb
// RUN: tilec --info %t/ffi.tileb | FileCheck %s --check-prefix=NO-CUDA
// RUN: env TILE_PTXAS=%t.no-ptxas not tilec %s --target=cuda -o /dev/null 2>&1 | FileCheck %s --check-prefix=NO-PTXAS
// RUN: not tilec %s --target=cuda --chip=sm_75 -o /dev/null 2>&1 | FileCheck %s --check-prefix=SM75
// RUN: not tilec %s --target=cuda --chip=gfx942 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADCHIP
// RUN: not tilec %s --target=cuda --features=+ptx99 -o /dev/null 2>&1 | FileCheck %s --check-prefix=FEATURE
// RUN: not tilec %s --target=cpu --emit=ptx 2>&1 | FileCheck %s --check-prefix=CPU-PTX
// RUN: not tilec %s --emit=spirv 2>&1 | FileCheck %s --check-prefix=EMIT

// PTX: .target sm_80
// PTX: .entry scale_kernel(
// PTX: ex2.approx

// LLVM: target triple = "nvptx64-nvidia-cuda"
// LLVM: define {{.*}}void @scale_kernel(

// PTX90: .target sm_90a

// --emit=cuda (no ptxas needed) prints the bundle's `cuda` section.
// CUDA: extern "C" __global__ __launch_bounds__(128) void scale_kernel(float*
// CUDA: tile::exp(
// CUDA: extern "C" __device__ const uint64_t scale__tile_metadata_hash =

// NO-CUDA: sections
// NO-CUDA-NOT: cuda
// NO-CUDA: mlir

// NO-PTXAS: error: $TILE_PTXAS is set, but {{.*}}no-ptxas is not an executable. ptxas assembles the cubin (--emit=ptx needs none)

// SM75: error: chip 'sm_75' is not supported by the cuda target: tile's NVIDIA lowering needs sm_80 or newer
// SM75-SAME: supported: sm_80, sm_86,
// SM75-NOT: LLVM ERROR

// BADCHIP: error: unknown CUDA chip 'gfx942' (expected sm_XY, one of: sm_80,

// FEATURE: error: unknown NVPTX feature '+ptx99'

// CPU-PTX: error: target 'cpu' cannot emit 'ptx' (it emits: bundle, metadata, mlir, llvm, obj)

// EMIT: for the --emit option: unknown value 'spirv' (expected one of: bundle, metadata, mlir, llvm, obj, ptx, cubin, cuda
// EMIT-SAME: msl

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
