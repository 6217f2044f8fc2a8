//===- HIPToolkit.cpp - where the HIP target finds the device libs --------===//

#include "tile/Target/HIP/HIPToolkit.h"

#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::tile;

// The root of the ROCm device libraries CMake found when tile was built
// (lib/Target/HIP/CMakeLists.txt), or "" (none, or
// -DTILE_ROCM_DEVICE_LIBS_ROOT= to bake in none).
#ifndef TILE_ROCM_DEVICE_LIBS_ROOT
#define TILE_ROCM_DEVICE_LIBS_ROOT ""
#endif

static constexpr StringLiteral kOcml = "amdgcn/bitcode/ocml.bc";

ToolSearch hip::findDeviceLibs(StringRef toolkitOption) {
  ToolSearch search("the ROCm device libraries (ocml.bc)",
                    /*executable=*/false);
  if (!toolkitOption.empty()) {
    search.tryPath("--toolkit", toolkitOption, kOcml, /*required=*/true);
    return search;
  }
  if (search.tryPath("$TILE_ROCM_PATH", getEnv("TILE_ROCM_PATH"), kOcml,
                     /*required=*/true) ||
      search.failedRequired())
    return search;
  if (search.tryPath("$ROCM_PATH", getEnv("ROCM_PATH"), kOcml))
    return search;
  search.tryPath("the device libraries CMake found",
                 TILE_ROCM_DEVICE_LIBS_ROOT, kOcml);
  return search;
}

std::string hip::getDeviceLibsRoot(StringRef ocmlPath) {
  // <root>/amdgcn/bitcode/ocml.bc
  StringRef p = ocmlPath;
  for (int i = 0; i < 3; ++i)
    p = llvm::sys::path::parent_path(p);
  return p.str();
}

StringRef hip::getDeviceLibsHint() {
  return "Install Debian's rocm-device-libs package (apt-get install "
         "rocm-device-libs), or set TILE_ROCM_PATH (or ROCM_PATH) to a ROCm "
         "installation holding amdgcn/bitcode/ocml.bc, or pass --toolkit=DIR";
}
