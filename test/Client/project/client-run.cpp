//===- client-run.cpp - load and run a bundle with the installed runtime --===//
//
//   client-run ADD.tileb
//
// Links Tile::Runtime only (no LLVM/MLIR). Describes the bundle, then runs
// examples/elementwise_add.mlir compiled for the CPU on 3000 elements,
// letting the runtime allocate the output, and checks C = A + B.
//
//===----------------------------------------------------------------------===//

#include "tile/Runtime/Runtime.hpp"

#include <cstdio>
#include <vector>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: client-run ADD.tileb\n");
    return 2;
  }
  try {
    std::fputs(tile::Kernel::inspect(argv[1]).describe().c_str(), stdout);

    tile::Kernel kernel = tile::Kernel::load(argv[1]);
    const int64_t n = 3000;
    std::vector<float> a(n), b(n);
    for (int64_t i = 0; i < n; ++i)
      a[i] = float(i), b[i] = 0.25f * float(i);
    int64_t shape[1] = {n};
    DLTensor ta{a.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape,
                nullptr, 0};
    DLTensor tb = ta;
    tb.data = b.data();
    std::vector<tile::Tensor> outs = kernel.launch({&ta, &tb});
    const float *c = static_cast<const float *>(outs.at(0)->dl_tensor.data);
    for (int64_t i = 0; i < n; ++i)
      if (c[i] != a[i] + b[i]) {
        std::printf("wrong: C[%lld] = %g\n", (long long)i, c[i]);
        return 1;
      }
    std::printf("client-run: %s [%s] ok on %lld elements\n",
                kernel.name().c_str(), kernel.backend().c_str(),
                (long long)n);
  } catch (const tile::Error &e) {
    std::fprintf(stderr, "client-run: %s\n", e.what());
    return 1;
  }
  return 0;
}
