//===- HIPToolkit.h - where the HIP target finds the device libs -*- C++ -*-===//
//
// The HIP target needs ROCm's device libraries (ocml.bc, ockl.bc and the
// oclc_* control bitcode, in <root>/amdgcn/bitcode) only when a kernel
// calls an ocml/ockl function (math LLVM has no instruction for, e.g. tanh,
// erf, pow). Found at run time (docs/building.md, "Toolchain discovery"),
// first hit wins:
//     1. tilec --toolkit=DIR          DIR/amdgcn/bitcode/ocml.bc (must exist)
//     2. $TILE_ROCM_PATH              <dir>/amdgcn/bitcode/ocml.bc (must exist)
//     3. $ROCM_PATH                   <dir>/amdgcn/bitcode/ocml.bc
//     4. the device libs CMake found  <TILE_ROCM_DEVICE_LIBS_ROOT>/amdgcn/...
//                                     (Debian's rocm-device-libs:
//                                     /usr/lib/<multiarch>)
// The hsaco is linked by ld.lld (findLinker, as for host shared objects).
//
//===----------------------------------------------------------------------===//

#ifndef TILE_TARGET_HIP_HIPTOOLKIT_H
#define TILE_TARGET_HIP_HIPTOOLKIT_H

#include "tile/Target/Toolchain.h"

namespace mlir::tile::hip {

/// The search for ocml.bc; `toolkitOption` is tilec's --toolkit (may be "").
ToolSearch findDeviceLibs(StringRef toolkitOption);

/// The root of a found ocml.bc (the directory holding amdgcn/).
std::string getDeviceLibsRoot(StringRef ocmlPath);

/// What to install or set when the device libraries are missing.
StringRef getDeviceLibsHint();

} // namespace mlir::tile::hip

#endif // TILE_TARGET_HIP_HIPTOOLKIT_H
