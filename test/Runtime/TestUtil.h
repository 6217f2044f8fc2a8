//===- TestUtil.h - Shared helpers for the runtime tests ------------------===//
#ifndef TILE_TEST_RUNTIME_TESTUTIL_H
#define TILE_TEST_RUNTIME_TESTUTIL_H

#include "tile/Runtime/Bundle.h"
#include "tile/Runtime/tile_runtime.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace tiletest {

using json = nlohmann::json;

/// Blocks executed by fixture kernels (via tile_test_note_blocks).
int64_t blocksRun();

std::string readFile(const std::string &path);

json addMeta();  // add: A, B -> C (out_idx [2]), native entry
json mmMeta();   // mm: A[M,K] @ B[K,N] -> C[M,N] (out_idx [2]), native entry
json axpyMeta(); // axpy: alpha, X[N,4], Y[N,4] (in place), rows, bias

/// `so` with the fixtures' hash placeholder (FX_HASH_PLACEHOLDER) replaced
/// by the metadata hash of `metadata`, as tilec bakes it in; unchanged when
/// `so` has no placeholder.
std::string withMetadataHash(std::string so, const std::string &metadata);

/// A bundle with `meta` and the host.so at `soPath` (+ extra sections);
/// a hash placeholder in the .so is patched (withMetadataHash).
std::string makeBundle(const json &meta, const std::string &soPath,
                       std::vector<tile::bundle::Section> extra = {});
std::string addBundle();
std::string mmBundle();
std::string axpyBundle();

/// Loads from memory; fails the test (ADD_FAILURE) on error.
tile_kernel_t load(const std::string &bundle, const char *backend = "auto");

/// A float32 host tensor owning its data and shape.
struct HostTensor {
  std::vector<float> data;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  DLTensor t{};

  explicit HostTensor(std::vector<int64_t> shape, float fill = 0.0f);
  HostTensor(const HostTensor &) = delete;
  DLTensor *dl() { return &t; }
  float &operator[](size_t i) { return data[i]; }
};

/// RAII release of a kernel handle.
struct KernelGuard {
  tile_kernel_t k;
  explicit KernelGuard(tile_kernel_t k) : k(k) {}
  ~KernelGuard() { tile_kernel_release(k); }
  operator tile_kernel_t() const { return k; }
};

} // namespace tiletest

#endif // TILE_TEST_RUNTIME_TESTUTIL_H
