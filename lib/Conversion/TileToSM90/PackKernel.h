//===- PackKernel.h - the runtime's operand repack kernel -------*- C++ -*-===//
//
// Internal to lib/Conversion/TileToSM90: the strided-copy kernel the
// runtime uses to repack a GEMM operand whose base or row pitch a tensor
// map cannot describe (an odd K or N in f16) into an aligned workspace,
// so the TMA variants still run (lib/Runtime/Cuda/CudaRepack.h has the
// runtime side and the kernel's contract; docs/bundle.md, "pack").
//
//===----------------------------------------------------------------------===//

#ifndef TILE_LIB_CONVERSION_TILETOSM90_PACKKERNEL_H
#define TILE_LIB_CONVERSION_TILETOSM90_PACKKERNEL_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include <string>

namespace mlir::tile::sm90 {

/// The pack kernel's name for `elemBytes`-byte elements of kernel `name`.
std::string packKernelName(StringRef name, int64_t elemBytes);

/// Adds (once) to `gpuModule`
///
///   gpu.func @<packKernelName>(%src: !llvm.ptr, %dst: !llvm.ptr,
///       %rows: i64, %cols: i64, %srcPitch: i64, %dstPitch: i64) kernel
///
/// which copies rows x cols elements of `elemBytes` (1, 2, 4 or 8) bytes
/// from rows srcPitch elements apart to rows dstPitch elements apart
/// (dst 16-byte aligned, dstPitch * elemBytes a multiple of 16, dstPitch -
/// cols < 16 / elemBytes). Each thread of a grid-stride loop over the
/// destination's 16-byte chunks loads its 16 / elemBytes elements (from
/// clamped, always valid addresses: zero past `cols`) and stores them as
/// one 16-byte vector, so stores are full-width and loads of a warp are
/// contiguous. Returns the kernel's name.
std::string buildPackKernel(OpBuilder &b, Location loc,
                            gpu::GPUModuleOp gpuModule, StringRef name,
                            int64_t elemBytes);

} // namespace mlir::tile::sm90

#endif // TILE_LIB_CONVERSION_TILETOSM90_PACKKERNEL_H
