//===- Runtime.hpp - Header-only C++ wrapper over tile_runtime.h -*- C++ -*-===//
//
// RAII and exceptions over the C API. Failures throw tile::Error (status +
// the runtime's message); success paths add no cost beyond the C call, so
// hot loops can use Kernel::launch directly. Code that must not throw can
// use the C API through Kernel::get().
//
//   tile::Kernel k = tile::Kernel::load("add.tileb");
//   std::vector<tile::Tensor> outs = k.launch({tile::Arg(&a), tile::Arg(&b)});
//   // outs[0] owns the allocated C; freed when it goes out of scope.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_RUNTIME_RUNTIME_HPP
#define TILE_RUNTIME_RUNTIME_HPP

#include "tile/Runtime/tile_runtime.h"

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tile {

class Error : public std::runtime_error {
public:
  Error(tile_status status, const std::string &message)
      : std::runtime_error(message), status_(status) {}
  tile_status status() const { return status_; }

private:
  tile_status status_;
};

/// Throws tile::Error with tile_last_error() if `s` is not OK.
inline void check(tile_status s) {
  if (s != TILE_STATUS_OK)
    throw Error(s, tile_last_error());
}

/// One launch argument; implicit from tensors and numbers.
struct Arg {
  tile_arg raw;
  Arg(DLTensor *t) : raw(tile_arg_tensor(t)) {}
  Arg(int v) : raw(tile_arg_int(v)) {}
  Arg(long v) : raw(tile_arg_int(v)) {}
  Arg(long long v) : raw(tile_arg_int(v)) {}
  Arg(unsigned v) : raw(tile_arg_int(v)) {}
  Arg(unsigned long v) : raw(tile_arg_int(static_cast<int64_t>(v))) {}
  Arg(unsigned long long v) : raw(tile_arg_int(static_cast<int64_t>(v))) {}
  Arg(float v) : raw(tile_arg_float(v)) {}
  Arg(double v) : raw(tile_arg_float(v)) {}
  static Arg none() { return Arg(tile_arg_none()); }

private:
  explicit Arg(tile_arg a) : raw(a) {}
};

/// Owns a DLManagedTensor returned by a launch (calls its deleter).
struct ManagedTensorDeleter {
  void operator()(DLManagedTensor *t) const {
    if (t && t->deleter)
      t->deleter(t);
  }
};
using Tensor = std::unique_ptr<DLManagedTensor, ManagedTensorDeleter>;

struct ParamInfo {
  std::string name;
  bool isTensor;
  bool isOutput;
  bool inOutIdx;
  std::string dtype;
  DLDataType dlDtype;
  std::vector<int64_t> shape;     // -1 = dynamic
  std::vector<std::string> dims;  // symbol names
  int access = TILE_ACCESS_READ;  // tile_access: what the kernel does to it
  bool inplace = false;           // may be the same memory as another param
};

class Kernel {
public:
  Kernel() = default;
  explicit Kernel(tile_kernel_t k) : k_(k) {}
  Kernel(Kernel &&o) noexcept : k_(std::exchange(o.k_, nullptr)) {}
  Kernel &operator=(Kernel &&o) noexcept {
    if (this != &o) {
      tile_kernel_release(k_);
      k_ = std::exchange(o.k_, nullptr);
    }
    return *this;
  }
  Kernel(const Kernel &) = delete;
  Kernel &operator=(const Kernel &) = delete;
  ~Kernel() { tile_kernel_release(k_); }

  static Kernel load(const std::string &path,
                     const std::string &backend = "auto") {
    tile_kernel_t k = nullptr;
    check(tile_kernel_load_file(path.c_str(), backend.c_str(), &k));
    return Kernel(k);
  }
  static Kernel fromMemory(const void *data, size_t size,
                           const std::string &backend = "auto") {
    tile_kernel_t k = nullptr;
    check(tile_kernel_load_memory(data, size, backend.c_str(), &k));
    return Kernel(k);
  }

  /// Opens a bundle without loading its device code (any target, any
  /// machine): information and sections only; launch() throws.
  static Kernel inspect(const std::string &path) {
    tile_kernel_t k = nullptr;
    check(tile_kernel_inspect_file(path.c_str(), &k));
    return Kernel(k);
  }

  tile_kernel_t get() const { return k_; }
  explicit operator bool() const { return k_ != nullptr; }

  std::string name() const { return tile_kernel_name(k_); }
  std::string targetKind() const { return tile_kernel_target_kind(k_); }
  std::string targetChip() const { return tile_kernel_target_chip(k_); }
  std::string backend() const { return tile_kernel_backend(k_); }
  std::string metadata() const { return tile_kernel_metadata(k_); }
  int numParams() const { return tile_kernel_num_params(k_); }
  std::vector<int> outIdx() const {
    std::vector<int> r;
    for (int j = 0, n = tile_kernel_num_outputs(k_); j < n; ++j)
      r.push_back(tile_kernel_output_param(k_, j));
    return r;
  }

  ParamInfo param(int i) const {
    tile_param_info p;
    check(tile_kernel_param(k_, i, &p));
    ParamInfo r{p.name, p.kind == TILE_PARAM_TENSOR, p.is_output != 0,
                p.in_out_idx != 0, p.dtype, p.dl_dtype, {}, {}};
    for (int d = 0; d < p.rank; ++d) {
      r.shape.push_back(p.shape[d]);
      r.dims.push_back(p.dims[d]);
    }
    int32_t inplace = 0;
    r.access = tile_kernel_param_access(k_, i, &inplace);
    r.inplace = inplace != 0;
    return r;
  }

  /// The kernel as text (what `tilec --info` prints).
  std::string describe() const {
    std::string text(tile_kernel_describe(k_, nullptr, 0), '\0');
    tile_kernel_describe(k_, &text[0], text.size() + 1);
    return text;
  }

  /// Section bytes (e.g. "mlir" for the source); throws if absent.
  std::string section(const std::string &name) const {
    const void *data = nullptr;
    size_t size = 0;
    check(tile_kernel_section(k_, name.c_str(), &data, &size));
    return std::string(static_cast<const char *>(data), size);
  }

  void setAllocator(const tile_allocator *a) {
    check(tile_set_allocator(k_, a));
  }

  /// Launches; returns the omitted outputs in out_idx order (empty
  /// Tensors for outputs the caller passed).
  std::vector<Tensor> launch(const std::vector<Arg> &args,
                             void *stream = nullptr) const {
    std::vector<tile_arg> raw;
    raw.reserve(args.size());
    for (const Arg &a : args)
      raw.push_back(a.raw);
    return launch(raw.data(), static_cast<int32_t>(raw.size()), stream);
  }
  std::vector<Tensor> launch(std::initializer_list<Arg> args,
                             void *stream = nullptr) const {
    return launch(std::vector<Arg>(args), stream);
  }
  std::vector<Tensor> launch(const tile_arg *args, int32_t nargs,
                             void *stream = nullptr) const {
    int32_t n = tile_kernel_num_outputs(k_);
    std::vector<DLManagedTensor *> raw(n > 0 ? size_t(n) : 0, nullptr);
    tile_outputs outs{raw.data(), n, 0};
    check(tile_kernel_launch(k_, args, nargs, stream, &outs));
    std::vector<Tensor> result;
    result.reserve(raw.size());
    for (DLManagedTensor *t : raw)
      result.emplace_back(t);
    return result;
  }

private:
  tile_kernel_t k_ = nullptr;
};

} // namespace tile

#endif // TILE_RUNTIME_RUNTIME_HPP
