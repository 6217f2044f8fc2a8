//===- tile-run.cpp - Load and run a kernel bundle from the command line --===//
//
//   tile-run bundle.tileb [--backend=auto|ffi|native|nvrtc] [--dims M=1000,N=64]
//            [--scalar alpha=0.5] [--input A=a.npy] [--seed S] [-n N]
//            [--warmup W] [--save-outputs DIR] [--compare-backends ffi,native]
//            [--atol X] [--device=cpu|cuda[:N]|hip[:N]] [--info]
//
// CUDA and HIP bundles run on a GPU (--device, default: the bundle's target): the
// inputs are copied to device memory before every run, launches go to the
// legacy default stream and are timed with CUDA events, results are copied
// back, all through the runtime's public device API (tile_device_*,
// tile_timer_*: the runtime's own driver layer, no CUDA headers here).
//
// --info describes the kernel (tile_kernel_describe). With the default
// backend, a bundle that cannot be loaded here (a CUDA bundle on a machine
// without a driver) is described without loading its device code.
//
// Inputs not given with --input are filled with seeded random values (floats
// in [-1, 1), ints in [-8, 8), unsigned in [0, 16)); their shapes come from
// static dims and --dims. Outputs in out_idx are left to the runtime to
// allocate. Exit status: 0 ok, 1 backends differ, 2 usage or runtime error.
//
//===----------------------------------------------------------------------===//
#include "Elements.h"
#include "Npy.h"
#include "tile/Runtime/tile_runtime.h"

#include <algorithm>
#include <stdexcept>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <new>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace tilerun;

namespace {

[[noreturn]] void die(const std::string &message) {
  std::fprintf(stderr, "tile-run: %s\n", message.c_str());
  std::exit(2);
}

const char *kUsage =
    "usage: tile-run BUNDLE [options]\n"
    "  --backend=B            auto (default), ffi, native or nvrtc (cuda)\n"
    "  --dims S=V,...         values of shape symbols (also scalars named S)\n"
    "  --scalar P=V,...       values of scalar params (default 1)\n"
    "  --input P=FILE.npy     take param P (name or index) from a .npy file\n"
    "  --seed S               seed for random inputs (default 0)\n"
    "  -n N                   timed runs (default 10)\n"
    "  --warmup W             untimed runs first (default 2)\n"
    "  --save-outputs DIR     write outputs as DIR/<param>.npy\n"
    "  --save-all             with --save-outputs: every tensor param after\n"
    "                         the run (in-place results), not only outputs\n"
    "  --compare-backends A,B run with both backends, compare outputs\n"
    "  --atol X               tolerance for --compare-backends (default 0)\n"
    "  --device=D             cpu, cuda[:N] or hip[:N] (default: the bundle's\n"
    "                         target, device 0)\n"
    "  --info                 print the kernel's interface and exit\n";

struct Options {
  std::string bundle;
  std::string backend = "auto";
  std::map<std::string, std::string> dims, scalars, inputs;
  uint64_t seed = 0;
  int runs = 10, warmup = 2;
  std::string saveDir;
  bool saveAll = false; // save every tensor param, not only outputs
  std::vector<std::string> compare;
  double atol = 0;
  bool info = false;
  std::string device; // "" = from the bundle's target
};

/// Where tensors live: host memory, or GPU `id` (CUDA or HIP: `name`).
struct Device {
  bool cuda = false; // a GPU, through tile_device_* (CUDA or HIP)
  std::string name = "cpu";
  int id = 0;
  DLDevice dl{kDLCPU, 0};
  tile_timer_t timer = nullptr; // device-clock timing (CUDA)
};
Device gDevice;

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string::npos)
      end = s.size();
    if (end > start)
      out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

void parseAssignments(const std::string &text, const char *opt,
                      std::map<std::string, std::string> &into) {
  for (const std::string &item : split(text, ',')) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      die(std::string(opt) + " expects NAME=VALUE, got '" + item + "'");
    into[item.substr(0, eq)] = item.substr(eq + 1);
  }
}

long long toInt(const std::string &s, const std::string &what) {
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 0);
  if (s.empty() || *end)
    die(what + ": '" + s + "' is not an integer");
  if (errno == ERANGE)
    die(what + ": '" + s + "' is out of range");
  return v;
}

/// The byte size of a tensor of `shape` with `esize`-byte elements, checked
/// against overflow and against this machine's memory (tile-run keeps two
/// host copies of every tensor: a zero-filled buffer bigger than RAM would
/// only end in the OOM killer).
size_t tensorBytes(const std::vector<int64_t> &shape, int64_t esize,
                   const std::string &what) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  text += "]";
  uint64_t bytes = uint64_t(esize);
  for (int64_t d : shape) {
    if (d < 0)
      die(what + ": shape " + text + " has a negative dim");
    if (__builtin_mul_overflow(bytes, uint64_t(d), &bytes))
      die(what + ": shape " + text + " is too large (its byte size "
                 "overflows 64 bits)");
  }
  long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  uint64_t memory = pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page)
                                          : UINT64_MAX;
  if (bytes > memory / 2)
    die(what + ": shape " + text + " needs " + std::to_string(bytes) +
        " bytes per copy; tile-run keeps two copies and this machine has " +
        std::to_string(memory) + " bytes of memory");
  return size_t(bytes);
}

double toDouble(const std::string &s, const std::string &what) {
  char *end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end)
    die(what + ": '" + s + "' is not a number");
  return v;
}

Options parseOptions(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i], value;
    auto takeValue = [&](const char *name) -> bool {
      size_t n = std::strlen(name);
      if (a.compare(0, n, name) != 0)
        return false;
      if (a.size() == n) {
        if (i + 1 >= argc)
          die(std::string(name) + " needs a value");
        value = argv[++i];
        return true;
      }
      if (a[n] != '=')
        return false;
      value = a.substr(n + 1);
      return true;
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (a == "--info") {
      o.info = true;
    } else if (a == "--save-all") {
      o.saveAll = true;
    } else if (takeValue("--backend")) {
      o.backend = value;
    } else if (takeValue("--dims")) {
      parseAssignments(value, "--dims", o.dims);
    } else if (takeValue("--scalar")) {
      parseAssignments(value, "--scalar", o.scalars);
    } else if (takeValue("--input")) {
      parseAssignments(value, "--input", o.inputs);
    } else if (takeValue("--seed")) {
      o.seed = uint64_t(toInt(value, "--seed"));
    } else if (takeValue("-n")) {
      o.runs = int(toInt(value, "-n"));
    } else if (takeValue("--warmup")) {
      o.warmup = int(toInt(value, "--warmup"));
    } else if (takeValue("--save-outputs")) {
      o.saveDir = value;
    } else if (takeValue("--compare-backends")) {
      o.compare = split(value, ',');
      if (o.compare.size() != 2)
        die("--compare-backends expects two backends, e.g. ffi,native");
    } else if (takeValue("--device")) {
      o.device = value;
    } else if (takeValue("--atol")) {
      o.atol = toDouble(value, "--atol");
    } else if (!a.empty() && a[0] == '-') {
      die("unknown option '" + a + "'\n" + kUsage);
    } else if (o.bundle.empty()) {
      o.bundle = a;
    } else {
      die("more than one bundle given ('" + o.bundle + "', '" + a + "')");
    }
  }
  if (o.bundle.empty())
    die(std::string("no bundle given\n") + kUsage);
  if (o.runs < 1 || o.warmup < 0)
    die("-n must be >= 1 and --warmup >= 0");
  return o;
}

void check(tile_status st, const std::string &what) {
  if (st != TILE_STATUS_OK)
    die(what + ": " + tile_status_name(st) + ": " + tile_last_error());
}

/// Picks the device from --device or the bundle's target; for CUDA, creates
/// the device timer (which loads the driver: no driver is an error here).
void setupDevice(tile_kernel_t k, const Options &o) {
  std::string target = tile_kernel_target_kind(k);
  std::string d = o.device.empty() ? target : o.device;
  if (d == "cpu") {
    if (target != "cpu")
      die("kernel '" + std::string(tile_kernel_name(k)) + "' targets '" +
          target + "'; it cannot run with --device=cpu");
    return;
  }
  // A GPU: cuda[:N] or hip[:N] (ROCm tensors), matching the target.
  std::string kind = d.substr(0, d.find(':'));
  size_t n = kind.size();
  if ((kind != "cuda" && kind != "hip") ||
      (d.size() > n && (d[n] != ':' || d.size() == n + 1)))
    die("--device expects cpu, cuda[:N] or hip[:N], got '" + d + "'");
  if (target != kind)
    die("kernel '" + std::string(tile_kernel_name(k)) + "' targets '" +
        target + "'; it cannot run with --device=" + d);
  gDevice.cuda = true;
  gDevice.name = kind;
  gDevice.id = d.size() > n ? int(toInt(d.substr(n + 1), "--device")) : 0;
  gDevice.dl = {kind == "hip" ? kDLROCM : kDLCUDA, gDevice.id};
  if (tile_status st = tile_timer_create(gDevice.dl, &gDevice.timer))
    die(std::string(tile_status_name(st)) + ": " + tile_last_error());
}

/// Copies `bytes` of device memory at `p` to the host.
std::string fromDevice(const void *p, size_t bytes) {
  std::string host(bytes, '\0');
  if (bytes)
    check(tile_device_copy_to_host(gDevice.dl, &host[0], p, bytes),
          "copying to the host");
  return host;
}

tile_kernel_t loadKernel(const Options &o, const std::string &backend) {
  tile_kernel_t k = nullptr;
  if (tile_status st =
          tile_kernel_load_file(o.bundle.c_str(), backend.c_str(), &k))
    die(std::string(tile_status_name(st)) + ": " + tile_last_error());
  return k;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// --info: the runtime's description of the kernel. With the default
/// backend a bundle this machine cannot load (no driver for its target) is
/// opened for inspection instead, and the reason is printed.
int printInfo(const Options &o) {
  tile_kernel_t k = nullptr;
  std::string note;
  if (tile_status st =
          tile_kernel_load_file(o.bundle.c_str(), o.backend.c_str(), &k)) {
    bool fallback = o.backend == "auto" &&
                    (st == TILE_STATUS_BACKEND_UNAVAILABLE ||
                     st == TILE_STATUS_NO_DEVICE);
    if (!fallback)
      die(std::string(tile_status_name(st)) + ": " + tile_last_error());
    note = std::string("not loadable here (") + tile_status_name(st) + ": " +
           tile_last_error() + "); described without its device code\n";
    if (tile_status st2 = tile_kernel_inspect_file(o.bundle.c_str(), &k))
      die(std::string(tile_status_name(st2)) + ": " + tile_last_error());
  }
  std::string text(tile_kernel_describe(k, nullptr, 0), '\0');
  tile_kernel_describe(k, &text[0], text.size() + 1);
  std::fputs(text.c_str(), stdout);
  std::fputs(note.c_str(), stdout);
  tile_kernel_release(k);
  return 0;
}

uint64_t splitmix(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// A tensor argument owned by the tool: pristine contents (restored before
/// every run, so in-place outputs start equal for every run and backend)
/// and the buffer the kernel sees.
struct HostArg {
  int param;
  std::string name;
  bool output;
  DLDataType dtype;
  std::vector<int64_t> shape;
  std::string pristine, work;
  void *dptr = nullptr; // device copy (CUDA)
  DLTensor t{};

  int64_t elems() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  void bind() {
    if (gDevice.cuda) {
      t.data = dptr;
      t.device = gDevice.dl;
    } else {
      t.data = work.empty() ? nullptr : &work[0];
      t.device = {kDLCPU, 0};
    }
    t.ndim = int32_t(shape.size());
    t.dtype = dtype;
    t.shape = shape.data();
    t.strides = nullptr;
    t.byte_offset = 0;
  }
};

struct Output {
  std::string name;
  DLDataType dtype;
  std::vector<int64_t> shape;
  std::vector<double> values;
};

struct Setup {
  std::vector<std::unique_ptr<HostArg>> tensors; // by param order
  std::vector<tile_arg> args;
};

Setup prepare(tile_kernel_t k, const Options &o) {
  const int np = tile_kernel_num_params(k);
  std::map<std::string, int64_t> syms;
  for (auto &[name, value] : o.dims) {
    syms[name] = toInt(value, "--dims " + name);
    if (syms[name] < 0)
      die("--dims " + name + ": '" + value + "' is negative");
  }
  auto paramIndex = [&](const std::string &key) {
    for (int i = 0; i < np; ++i) {
      tile_param_info p;
      tile_kernel_param(k, i, &p);
      if (key == p.name || key == std::to_string(i))
        return i;
    }
    die("--input: kernel '" + std::string(tile_kernel_name(k)) +
        "' has no parameter '" + key + "'");
  };
  std::map<int, NpyArray> files;
  for (auto &[key, path] : o.inputs) {
    int i = paramIndex(key);
    NpyArray a;
    std::string error;
    if (!readNpy(path, a, error))
      die(error);
    tile_param_info p;
    tile_kernel_param(k, i, &p);
    if (p.kind != TILE_PARAM_TENSOR || int(a.shape.size()) != p.rank)
      die("--input " + key + ": expected a rank-" + std::to_string(p.rank) +
          " tensor, '" + path + "' has shape " + shapeText(a.shape));
    for (int d = 0; d < p.rank; ++d) // files bind symbols for the others
      syms.emplace(p.dims[d], a.shape[d]);
    files[i] = std::move(a);
  }

  Setup s;
  s.args.resize(size_t(np));
  uint64_t rng = o.seed;
  for (int i = 0; i < np; ++i) {
    tile_param_info p;
    tile_kernel_param(k, i, &p);
    if (p.kind == TILE_PARAM_SCALAR) {
      std::string text = "1";
      if (o.scalars.count(p.name))
        text = o.scalars.at(p.name);
      else if (o.dims.count(p.name))
        text = o.dims.at(p.name);
      bool isFloat = p.dtype[0] == 'f';
      s.args[i] = isFloat ? tile_arg_float(toDouble(text, p.name))
                          : tile_arg_int(toInt(text, p.name));
      continue;
    }
    if (p.in_out_idx && !files.count(i)) {
      s.args[i] = tile_arg_none();
      continue;
    }
    auto h = std::make_unique<HostArg>();
    h->param = i;
    h->name = p.name;
    h->output = p.is_output;
    h->dtype = p.dl_dtype;
    int64_t esize = (p.dl_dtype.bits + 7) / 8;
    if (files.count(i)) {
      NpyArray &a = files[i];
      h->shape = a.shape;
      h->pristine.resize(tensorBytes(h->shape, esize, std::string("--input ") + p.name));
      for (int64_t e = 0; e < h->elems(); ++e)
        storeElement(h->dtype, &h->pristine[0], e,
                     loadElement(a.dtype, a.data.data(), e));
    } else {
      for (int d = 0; d < p.rank; ++d) {
        if (p.shape[d] >= 0) {
          h->shape.push_back(p.shape[d]);
          continue;
        }
        auto it = syms.find(p.dims[d]);
        if (it == syms.end())
          die(std::string("parameter '") + p.name + "' dim " +
              std::to_string(d) + " is symbol '" + p.dims[d] +
              "': pass --dims " + p.dims[d] + "=<size>");
        h->shape.push_back(it->second);
      }
      h->pristine.resize(
          tensorBytes(h->shape, esize, std::string("parameter '") + p.name + "'"));
      uint64_t state = rng ^ (0x1000193ull * uint64_t(i + 1));
      for (int64_t e = 0; e < h->elems(); ++e) {
        double u = double(splitmix(state) >> 11) * 0x1.0p-53; // [0, 1)
        double v = isFloatType(h->dtype)        ? 2.0 * u - 1.0
                   : h->dtype.code == kDLInt     ? std::floor(u * 16) - 8
                   : h->dtype.code == TILE_DL_BOOL ? std::floor(u * 2)
                                                   : std::floor(u * 16);
        storeElement(h->dtype, &h->pristine[0], e, v);
      }
    }
    h->work = h->pristine;
    if (gDevice.cuda && !h->pristine.empty())
      check(tile_device_alloc(gDevice.dl, h->pristine.size(), &h->dptr),
            "allocating '" + h->name + "' on the device");
    h->bind();
    s.args[i] = tile_arg_tensor(&h->t);
    s.tensors.push_back(std::move(h));
  }
  return s;
}

std::vector<double> toDoubles(DLDataType t, const void *data, int64_t n) {
  std::vector<double> v(size_t(std::max<int64_t>(n, 0)));
  for (int64_t i = 0; i < n; ++i)
    v[size_t(i)] = loadElement(t, data, i);
  return v;
}

/// Runs warmup + timed launches; returns the last run's outputs.
std::vector<Output> runBackend(tile_kernel_t k, Setup &s, const Options &o) {
  const int nout = tile_kernel_num_outputs(k);
  std::vector<DLManagedTensor *> outPtrs(size_t(std::max(nout, 1)));
  std::vector<double> times, hostTimes;
  const bool api = gDevice.cuda;
  for (int r = 0; r < o.warmup + o.runs; ++r) {
    for (auto &h : s.tensors) {
      if (api) {
        if (h->dptr)
          check(tile_device_copy_to_device(gDevice.dl, h->dptr,
                                           h->pristine.data(),
                                           h->pristine.size()),
                "copying '" + h->name + "' to the device");
      } else {
        h->work = h->pristine;
      }
      h->bind();
    }
    std::fill(outPtrs.begin(), outPtrs.end(), nullptr);
    tile_outputs outs{outPtrs.data(), nout, 0};
    if (api)
      check(tile_timer_start(gDevice.timer, nullptr), "starting the timer");
    auto t0 = std::chrono::steady_clock::now();
    tile_status st = tile_kernel_launch(k, s.args.data(), int32_t(s.args.size()),
                                        nullptr, &outs);
    auto t1 = std::chrono::steady_clock::now();
    if (st != TILE_STATUS_OK)
      die(std::string(tile_status_name(st)) + ": " + tile_last_error());
    double us = std::chrono::duration<double, std::micro>(t1 - t0).count();
    if (api) {
      // Device-side faults surface here, at the first synchronization.
      double deviceUs = 0;
      if (tile_timer_stop(gDevice.timer, nullptr, &deviceUs) != TILE_STATUS_OK)
        die(std::string("kernel '") + tile_kernel_name(k) +
            "' failed on the device: " + tile_last_error());
      if (r >= o.warmup)
        hostTimes.push_back(us);
      us = deviceUs;
    }
    if (r >= o.warmup)
      times.push_back(us);
    bool last = r + 1 == o.warmup + o.runs;
    if (!last) {
      for (DLManagedTensor *m : outPtrs)
        if (m && m->deleter)
          m->deleter(m);
      continue;
    }
    std::vector<Output> result;
    for (auto &h : s.tensors) {
      if (!h->output && !o.saveAll)
        continue;
      if (api)
        h->work = fromDevice(h->dptr, h->pristine.size());
      result.push_back({h->name, h->dtype, h->shape,
                        toDoubles(h->dtype, h->work.data(), h->elems())});
    }
    for (int j = 0; j < nout; ++j) {
      DLManagedTensor *m = outPtrs[size_t(j)];
      if (!m)
        continue;
      tile_param_info p;
      tile_kernel_param(k, tile_kernel_output_param(k, j), &p);
      const DLTensor &t = m->dl_tensor;
      std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
      int64_t n = 1;
      for (int64_t d : shape)
        n *= d;
      const char *data = static_cast<char *>(t.data) + t.byte_offset;
      std::string copy;
      if (api) {
        copy = fromDevice(data, size_t(n * ((t.dtype.bits + 7) / 8)));
        data = copy.data();
      }
      result.push_back({p.name, t.dtype, shape, toDoubles(t.dtype, data, n)});
      if (m->deleter)
        m->deleter(m);
    }
    std::sort(times.begin(), times.end());
    if (api) {
      std::sort(hostTimes.begin(), hostTimes.end());
      std::printf("%s [%s, %s:%d]: %d runs, median %.2f us, min %.2f us "
                  "(%s events); launch call median %.2f us\n",
                  tile_kernel_name(k), tile_kernel_backend(k),
                  gDevice.name.c_str(), gDevice.id,
                  o.runs, times[times.size() / 2], times.front(),
                  gDevice.name == "hip" ? "HIP" : "CUDA",
                  hostTimes[hostTimes.size() / 2]);
    } else {
      std::printf("%s [%s]: %d runs, median %.2f us, min %.2f us\n",
                  tile_kernel_name(k), tile_kernel_backend(k), o.runs,
                  times[times.size() / 2], times.front());
    }
    return result;
  }
  return {};
}

void saveOutputs(const std::vector<Output> &outs, const std::string &dir) {
  ::mkdir(dir.c_str(), 0777);
  for (const Output &out : outs) {
    NpyArray a;
    a.shape = out.shape;
    // numpy has no bfloat16/float8: those are saved (losslessly) as float32.
    bool direct = out.dtype.code == kDLFloat || out.dtype.code == kDLInt ||
                  out.dtype.code == kDLUInt || out.dtype.code == TILE_DL_BOOL;
    a.dtype = direct ? out.dtype : DLDataType{kDLFloat, 32, 1};
    int64_t esize = a.dtype.bits / 8;
    a.data.resize(out.values.size() * size_t(esize));
    for (size_t i = 0; i < out.values.size(); ++i)
      storeElement(a.dtype, &a.data[0], int64_t(i), out.values[i]);
    std::string path = dir + "/" + out.name + ".npy", error;
    if (!writeNpy(path, a, error))
      die(error);
    std::printf("wrote %s %s\n", path.c_str(), shapeText(out.shape).c_str());
  }
}

void summarize(const std::vector<Output> &outs) {
  for (const Output &out : outs) {
    double sum = 0;
    for (double v : out.values)
      sum += v;
    std::printf("  %s %s sum=%.6g\n", out.name.c_str(),
                shapeText(out.shape).c_str(), sum);
  }
}

} // namespace

int run(int argc, char **argv);

int main(int argc, char **argv) {
  // Size checks come first (tensorBytes); this is the backstop for an
  // allocation that still fails, e.g. under a ulimit.
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc &) {
    die("out of memory");
  } catch (const std::length_error &e) {
    die(std::string("out of memory (") + e.what() + ")");
  }
}

int run(int argc, char **argv) {
  Options o = parseOptions(argc, argv);
  std::string first = o.compare.empty() ? o.backend : o.compare[0];
  if (o.info) {
    o.backend = first;
    return printInfo(o);
  }
  tile_kernel_t k = loadKernel(o, first);
  setupDevice(k, o);
  Setup s = prepare(k, o);
  std::vector<Output> a = runBackend(k, s, o);
  tile_kernel_release(k);
  summarize(a);
  if (!o.saveDir.empty())
    saveOutputs(a, o.saveDir);
  if (o.compare.empty())
    return 0;

  tile_kernel_t k2 = loadKernel(o, o.compare[1]);
  std::vector<Output> b = runBackend(k2, s, o);
  tile_kernel_release(k2);
  bool same = a.size() == b.size();
  for (size_t i = 0; same && i < a.size(); ++i) {
    if (a[i].shape != b[i].shape) {
      std::printf("  %s: shapes differ %s vs %s\n", a[i].name.c_str(),
                  shapeText(a[i].shape).c_str(), shapeText(b[i].shape).c_str());
      same = false;
      continue;
    }
    double maxDiff = 0;
    size_t nanMismatch = 0;
    for (size_t e = 0; e < a[i].values.size(); ++e) {
      double x = a[i].values[e], y = b[i].values[e];
      if (std::isnan(x) || std::isnan(y)) {
        nanMismatch += std::isnan(x) != std::isnan(y);
        continue;
      }
      maxDiff = std::max(maxDiff, x == y ? 0.0 : std::fabs(x - y));
    }
    std::printf("  %s: max abs diff %s vs %s = %g%s\n", a[i].name.c_str(),
                o.compare[0].c_str(), o.compare[1].c_str(), maxDiff,
                nanMismatch ? " (NaN mismatches)" : "");
    same &= maxDiff <= o.atol && nanMismatch == 0;
  }
  std::printf(same ? "backends agree\n" : "BACKENDS DIFFER\n");
  return same ? 0 : 1;
}
