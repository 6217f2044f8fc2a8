//===- CUDAToolkit.cpp - where the CUDA target finds ptxas, libdevice -----===//

#include "tile/Target/CUDA/CUDAToolkit.h"

#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

using namespace mlir;
using namespace mlir::tile;

// The toolkit CMake's find_package(CUDAToolkit) found when tile was built
// (lib/Target/CUDA/CMakeLists.txt), or "" (none, or -DTILE_CUDA_TOOLKIT_DIR=
// to bake in none, e.g. for a relocatable wheel).
#ifndef TILE_CUDA_TOOLKIT_DIR
#define TILE_CUDA_TOOLKIT_DIR ""
#endif

static constexpr StringLiteral kLibdevice = "nvvm/libdevice/libdevice.10.bc";

/// <ptxas>/../.. : the toolkit a ptxas binary belongs to.
static std::string toolkitOfBinary(StringRef binary) {
  if (binary.empty())
    return "";
  return llvm::sys::path::parent_path(llvm::sys::path::parent_path(binary))
      .str();
}

ToolSearch cuda::findPtxas(StringRef toolkitOption) {
  ToolSearch search("ptxas");
  if (!toolkitOption.empty()) {
    search.tryPath("--toolkit", toolkitOption, "bin/ptxas", /*required=*/true);
    return search;
  }
  if (search.tryPath("$TILE_PTXAS", getEnv("TILE_PTXAS"), "",
                     /*required=*/true) ||
      search.failedRequired())
    return search;
  if (search.tryPath("$TILE_CUDA_PATH", getEnv("TILE_CUDA_PATH"), "bin/ptxas",
                     /*required=*/true) ||
      search.failedRequired())
    return search;
  if (search.tryPath("$CUDA_HOME", getEnv("CUDA_HOME"), "bin/ptxas") ||
      search.tryPath("$CUDA_PATH", getEnv("CUDA_PATH"), "bin/ptxas") ||
      search.tryPath("the CUDA toolkit CMake found", TILE_CUDA_TOOLKIT_DIR,
                     "bin/ptxas"))
    return search;
  search.tryPATH({"ptxas"});
  return search;
}

ToolSearch cuda::findLibdevice(StringRef toolkitOption) {
  ToolSearch search("libdevice", /*executable=*/false);
  if (!toolkitOption.empty()) {
    search.tryPath("--toolkit", toolkitOption, kLibdevice, /*required=*/true);
    return search;
  }
  if (search.tryPath("$TILE_CUDA_PATH", getEnv("TILE_CUDA_PATH"), kLibdevice,
                     /*required=*/true) ||
      search.failedRequired())
    return search;
  if (search.tryPath("the toolkit of $TILE_PTXAS",
                     toolkitOfBinary(getEnv("TILE_PTXAS")), kLibdevice) ||
      search.tryPath("$CUDA_HOME", getEnv("CUDA_HOME"), kLibdevice) ||
      search.tryPath("$CUDA_PATH", getEnv("CUDA_PATH"), kLibdevice) ||
      search.tryPath("the CUDA toolkit CMake found", TILE_CUDA_TOOLKIT_DIR,
                     kLibdevice))
    return search;
  std::string ptxasOnPath;
  if (auto p = llvm::sys::findProgramByName("ptxas"))
    ptxasOnPath = *p;
  search.tryPath("the toolkit of the ptxas on PATH",
                 toolkitOfBinary(ptxasOnPath), kLibdevice);
  return search;
}

std::string cuda::getToolkitRoot(StringRef libdevicePath) {
  // <root>/nvvm/libdevice/libdevice.10.bc
  StringRef p = libdevicePath;
  for (int i = 0; i < 3; ++i)
    p = llvm::sys::path::parent_path(p);
  return p.str();
}

StringRef cuda::getToolkitHint() {
  return "Set TILE_CUDA_PATH to a CUDA toolkit (or TILE_PTXAS to a ptxas "
         "binary), pass --toolkit=DIR, or install the pip package "
         "nvidia-cuda-nvcc (the tile Python package finds it)";
}
