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

/// Operands one launch of the pack kernel copies (metadata key "pack2"
/// for 2): A and B of an odd-pitch GEMM in one launch, not two (each
/// launch costs ~1.2 us plus its gap on the H200 for small operands).
constexpr int64_t kPackOperands = 2;

/// Adds (once) to `gpuModule`
///
///   gpu.func @<packKernelName>(
///       %src0: !llvm.ptr, %dst0: !llvm.ptr, %rows0: i64, %cols0: i64,
///       %srcPitch0: i64, %dstPitch0: i64,
///       %src1: !llvm.ptr, %dst1: !llvm.ptr, %rows1: i64, %cols1: i64,
///       %srcPitch1: i64, %dstPitch1: i64) kernel
///
/// (kPackOperands groups) whose CTAs with blockIdx.y = g copy group g:
/// rows x cols elements of `elemBytes` (1, 2, 4 or 8) bytes from rows
/// srcPitch elements apart to rows dstPitch elements apart (dst 16-byte
/// aligned, dstPitch * elemBytes a multiple of 16, dstPitch - cols < 16 /
/// elemBytes); a grid of y = 1 copies group 0 only. Each thread of a
/// grid-stride loop (over x) over the destination's 16-byte chunks loads
/// its 16 / elemBytes elements (from clamped, always valid addresses: zero
/// past `cols`) and stores them as one 16-byte vector, so stores are
/// full-width and loads of a warp are contiguous. Returns the kernel's
/// name.
std::string buildPackKernel(OpBuilder &b, Location loc,
                            gpu::GPUModuleOp gpuModule, StringRef name,
                            int64_t elemBytes);

} // namespace mlir::tile::sm90

#endif // TILE_LIB_CONVERSION_TILETOSM90_PACKKERNEL_H
