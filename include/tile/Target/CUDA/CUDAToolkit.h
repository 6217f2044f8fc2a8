//===- CUDAToolkit.h - where the CUDA target finds ptxas, libdevice -*- C++ -*-===//
//
// The CUDA target needs two things from a CUDA toolkit, found at run time
// (docs/building.md, "Toolchain discovery"), first hit wins:
//
//   ptxas (PTX -> cubin; --emit=ptx and --emit=llvm need none):
//     1. tilec --toolkit=DIR          DIR/bin/ptxas          (must exist)
//     2. $TILE_PTXAS                  the ptxas binary       (must exist)
//     3. $TILE_CUDA_PATH              $TILE_CUDA_PATH/bin/ptxas (must exist);
//                                     the Python package sets it to the pip
//                                     `nvidia-cuda-nvcc` package when found
//     4. $CUDA_HOME, $CUDA_PATH       <dir>/bin/ptxas
//     5. the toolkit CMake found      <TILE_CUDA_TOOLKIT_DIR>/bin/ptxas
//     6. PATH                         ptxas
//   libdevice (nvvm/libdevice/libdevice.10.bc; needed when the kernel calls
//   math functions, which lower to __nv_* calls):
//     the same toolkit roots in the same order (--toolkit, $TILE_CUDA_PATH,
//     the toolkit of $TILE_PTXAS, $CUDA_HOME, $CUDA_PATH, CMake's), then the
//     toolkit of the ptxas on PATH.
//
// A place that is set explicitly (1-3) but wrong is an error, never skipped.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_TARGET_CUDA_CUDATOOLKIT_H
#define TILE_TARGET_CUDA_CUDATOOLKIT_H

#include "tile/Target/Toolchain.h"

namespace mlir::tile::cuda {

/// The search for ptxas; `toolkitOption` is tilec's --toolkit (may be "").
ToolSearch findPtxas(StringRef toolkitOption);

/// The search for libdevice.10.bc.
ToolSearch findLibdevice(StringRef toolkitOption);

/// The toolkit root of a found libdevice (the directory holding nvvm/).
std::string getToolkitRoot(StringRef libdevicePath);

/// The hint appended to "not found" errors: what to set or install.
StringRef getToolkitHint();

} // namespace mlir::tile::cuda

#endif // TILE_TARGET_CUDA_CUDATOOLKIT_H
