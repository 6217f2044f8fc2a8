// The HIP target's emit kinds, each what its --help says, its bundle
// sections, and its chip, feature and toolchain errors.
// RUN: tilec %s --target=hip --emit=asm | FileCheck %s --check-prefix=ASM
// RUN: tilec %s --target=hip --chip=gfx90a --emit=asm | FileCheck %s --check-prefix=ASM90A
// RUN: tilec %s --target=hip --emit=llvm | FileCheck %s --check-prefix=LLVM
// RUN: tilec %s --target=hip --emit=mlir | FileCheck %s --check-prefix=MLIR
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/k.mlir
// RUN: tilec %t/k.mlir --target=hip --emit=obj
// RUN: llvm-readelf -h %t/k.hsaco | FileCheck %s --check-prefix=ELF
// RUN: tilec %t/k.mlir --target=hip -o %t/k.tileb
// RUN: tilec --info %t/k.tileb | FileCheck %s --check-prefix=INFO
// RUN: tilec --info %t/k.tileb --section=hsaco -o %t/section.hsaco
// RUN: cmp %t/k.hsaco %t/section.hsaco
// RUN: tilec --info %t/k.tileb --section=hsaco.resources | FileCheck %s --check-prefix=RES
// RUN: tilec %t/k.mlir --target=hip --backend=ffi -o %t/ffi.tileb
// RUN: tilec --info %t/ffi.tileb | FileCheck %s --check-prefix=FFI
// RUN: env TILE_ROCM_PATH=%t/no-rocm not tilec %s --target=hip -o /dev/null 2>&1 | FileCheck %s --check-prefix=NO-LIBS
// RUN: not tilec %s --target=hip --chip=gfx1100 -o /dev/null 2>&1 | FileCheck %s --check-prefix=RDNA
// RUN: not tilec %s --target=hip --chip=sm_90a -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADCHIP
// RUN: not tilec %s --target=hip --features=+nosuchfeature -o /dev/null 2>&1 | FileCheck %s --check-prefix=FEATURE
// RUN: not tilec %s --target=hip --features=+wavefrontsize32 -o /dev/null 2>&1 | FileCheck %s --check-prefix=WAVE32
// RUN: not tilec %s --target=hip --emit=ptx 2>&1 | FileCheck %s --check-prefix=PTX
// RUN: not tilec %s --target=hip --backend=nvrtc -o /dev/null 2>&1 | FileCheck %s --check-prefix=NVRTC

// ASM: .amdgcn_target "amdgcn-amd-amdhsa--gfx942"
// ASM: scale_kernel:
// ASM: .amdhsa_kernel scale_kernel
// ASM: .wavefront_size: 64

// ASM90A: .amdgcn_target "amdgcn-amd-amdhsa--gfx90a"

// LLVM: target triple = "amdgcn-amd-amdhsa"
// LLVM: @scale__tile_metadata_hash = {{.*}}addrspace(1) constant i64
// LLVM: define amdgpu_kernel void @scale_kernel(
// math.exp is an LLVM intrinsic on AMDGPU (no ocml call).
// LLVM: call float @llvm.exp.f32(
// LLVM-NOT: __ocml

// MLIR: gpu.module @scale_module [#rocdl.target<{{.*}}chip = "gfx942"
// MLIR: llvm.func @scale_kernel(
// MLIR-SAME: rocdl.kernel

// ELF: Class: ELF64
// ELF: Type: DYN
// ELF: Machine: EM_AMDGPU

// INFO: target   hip (gfx942)
// INFO: hsaco
// INFO: hsaco.resources
// INFO: native.so
// INFO: mlir

// RES: "kernels": [
// RES: "lds_bytes": 0,
// RES: "name": "scale_kernel",
// RES: "scratch_bytes": 0,
// RES: "sgprs": {{[0-9]+}},
// RES: "vgpr_spills": 0,
// RES: "vgprs": {{[0-9]+}},
// RES: "wavefront_size": 64

// FFI: sections
// FFI-NOT: native.so
// FFI: mlir

// NO-LIBS: error: $TILE_ROCM_PATH is set, but {{.*}}no-rocm/amdgcn/bitcode/ocml.bc is not a file.
// NO-LIBS-SAME: Install Debian's rocm-device-libs package

// RDNA: error: chip 'gfx1100' is not supported by the hip target: tile's AMD lowering needs a wave64 CDNA GPU with MFMA 16x16x16 f16/bf16; supported: gfx90a, gfx942

// BADCHIP: error: chip 'sm_90a' is not supported by the hip target

// FEATURE: error: unknown AMDGPU feature '+nosuchfeature' (e.g. +sramecc, -xnack)

// WAVE32: error: target feature '+wavefrontsize32': the hip target's lowering is wave64

// PTX: error: target 'hip' cannot emit 'ptx' (it emits: bundle, metadata, mlir, llvm, asm, hsaco, obj)

// NVRTC: error: {{.*}}nvrtc

func.func @scale(%x: memref<?xf32> {tile.name = "X", tile.dims = ["N"]},
                 %y: memref<?xf32> {tile.name = "Y", tile.dims = ["N"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c256 = arith.constant 256 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %g = arith.ceildivui %n, %c256 : index
  tile.launch blocks(%b) in (%g) threads(256) {
    %f = tile.alloc : memref<256xf32, #tile.scope<fragment>>
    %start = arith.muli %b, %c256 : index
    tile.copy %x[%start] to %f : memref<?xf32> to memref<256xf32, #tile.scope<fragment>>
    tile.parallel (%i) in [256] {
      %v = memref.load %f[%i] : memref<256xf32, #tile.scope<fragment>>
      %w = math.exp %v : f32
      memref.store %w, %f[%i] : memref<256xf32, #tile.scope<fragment>>
    }
    tile.copy %f to %y[%start] : memref<256xf32, #tile.scope<fragment>> to memref<?xf32>
  }
  return
}
