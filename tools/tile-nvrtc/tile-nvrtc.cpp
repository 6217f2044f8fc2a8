//===- tile-nvrtc.cpp - compile a bundle's CUDA C++ with NVRTC, no GPU ----===//
//
//   tile-nvrtc BUNDLE --arch=sm_90 [-o OUT.cubin]        the cubin the nvrtc
//       backend builds on a device of that arch (and, with --cache, stored
//       in its disk cache so the first launch there finds it)
//   tile-nvrtc BUNDLE --ptx=compute_80 [-o OUT.ptx]      PTX for a virtual
//       arch (utils/check.sh: every E2E kernel's source through NVRTC, then
//       ptxas for sm_80 and sm_90a)
//
// NVRTC is found as the runtime finds it (lib/Runtime/Cuda/Nvrtc.h:
// TILE_NVRTC_PATH, libnvrtc.so.13/.12, $CUDA_HOME, /usr/local/cuda). Its log
// is printed on failure (exit 1); exit 2 for usage or bundle errors.
//
//===----------------------------------------------------------------------===//
#include "Cuda/Nvrtc.h"
#include "tile/Runtime/tile_runtime.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

using namespace tile::rt::cuda;

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: tile-nvrtc BUNDLE (--arch=sm_XY [--cache] | "
               "--ptx=compute_XY[a]) [-o OUT]\n");
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  std::string bundle, arch, ptxArch, out;
  bool cache = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--arch=", 0) == 0)
      arch = a.substr(7);
    else if (a.rfind("--ptx=", 0) == 0)
      ptxArch = a.substr(6);
    else if (a == "--cache")
      cache = true;
    else if (a == "-o" && i + 1 < argc)
      out = argv[++i];
    else if (!a.empty() && a[0] != '-' && bundle.empty())
      bundle = a;
    else
      return usage();
  }
  int cc = 0;
  if (bundle.empty() || arch.empty() == ptxArch.empty() ||
      (!arch.empty() && std::sscanf(arch.c_str(), "sm_%d", &cc) != 1))
    return usage();

  tile_kernel_t k = nullptr;
  if (tile_kernel_inspect_file(bundle.c_str(), &k) != TILE_STATUS_OK) {
    std::fprintf(stderr, "tile-nvrtc: %s\n", tile_last_error());
    return 2;
  }
  const void *data = nullptr;
  size_t size = 0;
  if (tile_kernel_section(k, "cuda", &data, &size) != TILE_STATUS_OK) {
    std::fprintf(stderr,
                 "tile-nvrtc: %s has no 'cuda' section (compile it with "
                 "tilec --target=cuda, backend nvrtc)\n",
                 bundle.c_str());
    tile_kernel_release(k);
    return 2;
  }
  std::string source(static_cast<const char *>(data), size);
  std::string name = tile_kernel_name(k);
  tile_kernel_release(k);

  const Nvrtc *nvrtc = nullptr;
  if (loadNvrtc(nvrtc) != TILE_STATUS_OK) {
    std::fprintf(stderr, "tile-nvrtc: %s\n", tile_last_error());
    return 2;
  }
  std::string result;
  tile_status st;
  if (!ptxArch.empty()) {
    st = nvrtc->compilePTX(source, name, ptxArch, result);
  } else if (cache) {
    bool fromCache = false;
    st = nvrtcCubin(*nvrtc, source, name, cc, result, fromCache);
  } else {
    st = nvrtc->compile(source, name, cc, result);
  }
  if (st != TILE_STATUS_OK) {
    std::fprintf(stderr, "tile-nvrtc: %s\n", tile_last_error());
    return 1;
  }
  if (!out.empty()) {
    std::ofstream f(out, std::ios::binary);
    f.write(result.data(), std::streamsize(result.size()));
    if (!f) {
      std::fprintf(stderr, "tile-nvrtc: cannot write %s\n", out.c_str());
      return 2;
    }
  }
  return 0;
}
