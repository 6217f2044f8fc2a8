//===- Nvrtc.cpp - dlopen(libnvrtc), compile, the cubin cache -------------===//
#include "Nvrtc.h"
#include "Common.h"

#include "tile/Runtime/Bundle.h"

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <sys/stat.h>
#include <type_traits>
#include <unistd.h>
#include <vector>

namespace tile::rt::cuda {
namespace {

std::atomic<const Nvrtc *> gNvrtc{nullptr};
std::mutex gNvrtcMu;

std::string env(const char *name) {
  const char *v = std::getenv(name);
  return v && *v ? v : "";
}

bool isDirectory(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

/// The candidates, in order (Nvrtc.h). `explicitOnly`: TILE_NVRTC_PATH set.
std::vector<std::string> candidates(bool &explicitOnly) {
  static const char *names[] = {"libnvrtc.so.13", "libnvrtc.so.12",
                                "libnvrtc.so"};
  std::vector<std::string> out;
  std::string given = env("TILE_NVRTC_PATH");
  explicitOnly = !given.empty();
  if (explicitOnly) {
    if (isDirectory(given))
      for (const char *n : names)
        out.push_back(given + "/" + n);
    else
      out.push_back(given);
    return out;
  }
  for (const char *n : names)
    out.push_back(n);
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
    if (std::string root = env(var); !root.empty())
      for (const char *n : names)
        out.push_back(root + "/lib64/" + n);
  for (const char *n : names)
    out.push_back(std::string("/usr/local/cuda/lib64/") + n);
  return out;
}

std::string resultText(const Nvrtc &n, nvrtcResult r) {
  const char *s = n.api.nvrtcGetErrorString ? n.api.nvrtcGetErrorString(r)
                                            : nullptr;
  return s ? s : "nvrtcResult " + str(r);
}

std::string cacheDir() {
  if (env("TILE_NVRTC_CACHE") == "0")
    return "";
  std::string root = env("TILE_CACHE_DIR");
  if (root.empty()) {
    std::string home = env("HOME");
    if (home.empty())
      return "";
    root = home + "/.cache/tile";
  }
  return root + "/nvrtc";
}

/// mkdir -p (best effort: a cache that cannot be written is skipped).
bool makeDirs(const std::string &dir) {
  std::string partial;
  for (size_t i = 0; i <= dir.size(); ++i) {
    if (i == dir.size() || dir[i] == '/') {
      if (!partial.empty() && ::mkdir(partial.c_str(), 0755) != 0 &&
          errno != EEXIST)
        return false;
    }
    if (i < dir.size())
      partial += dir[i];
  }
  return isDirectory(dir);
}

bool readFile(const std::string &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return !out.empty();
}

/// Writes through a temporary file and rename(): concurrent processes see
/// either no cubin or a whole one.
void writeFileAtomically(const std::string &path, const std::string &bytes) {
  std::string tmp = path + ".tmp." + str(int64_t(::getpid()));
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out)
      return;
    out.write(bytes.data(), std::streamsize(bytes.size()));
    if (!out) {
      ::unlink(tmp.c_str());
      return;
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    ::unlink(tmp.c_str());
}

} // namespace

tile_status loadNvrtc(const Nvrtc *&out) {
  out = gNvrtc.load(std::memory_order_acquire);
  if (out)
    return TILE_STATUS_OK;
  std::lock_guard<std::mutex> lock(gNvrtcMu);
  out = gNvrtc.load(std::memory_order_acquire);
  if (out)
    return TILE_STATUS_OK;

  bool explicitOnly = false;
  std::vector<std::string> tried = candidates(explicitOnly);
  void *h = nullptr;
  std::string where, errors;
  for (const std::string &c : tried) {
    h = ::dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h) {
      where = c;
      break;
    }
    const char *e = ::dlerror();
    errors += "\n  " + c + (e ? std::string(": ") + e : std::string());
  }
  if (!h)
    return fail(TILE_STATUS_BACKEND_UNAVAILABLE,
                std::string("backend 'nvrtc' needs NVRTC, which was not "
                            "found") +
                    (explicitOnly ? " at $TILE_NVRTC_PATH" : "") +
                    "; tried:" + errors +
                    "\n(install the CUDA toolkit or `pip install "
                    "nvidia-cuda-nvrtc`, or set TILE_NVRTC_PATH to "
                    "libnvrtc.so)");
  auto n = std::make_unique<Nvrtc>();
  n->path = where;
  NvrtcApi &a = n->api;
  std::string missing;
  auto sym = [&](auto &fn, const char *name) {
    void *p = ::dlsym(h, name);
    if (!p && missing.empty())
      missing = name;
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
  };
  sym(a.nvrtcGetErrorString, "nvrtcGetErrorString");
  sym(a.nvrtcVersion, "nvrtcVersion");
  sym(a.nvrtcCreateProgram, "nvrtcCreateProgram");
  sym(a.nvrtcDestroyProgram, "nvrtcDestroyProgram");
  sym(a.nvrtcCompileProgram, "nvrtcCompileProgram");
  sym(a.nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize");
  sym(a.nvrtcGetProgramLog, "nvrtcGetProgramLog");
  sym(a.nvrtcGetCUBINSize, "nvrtcGetCUBINSize");
  sym(a.nvrtcGetCUBIN, "nvrtcGetCUBIN");
  if (missing.empty()) {
    a.nvrtcGetPTXSize = reinterpret_cast<decltype(a.nvrtcGetPTXSize)>(
        ::dlsym(h, "nvrtcGetPTXSize"));
    a.nvrtcGetPTX =
        reinterpret_cast<decltype(a.nvrtcGetPTX)>(::dlsym(h, "nvrtcGetPTX"));
  }
  if (!missing.empty()) {
    ::dlclose(h);
    return fail(TILE_STATUS_BACKEND_UNAVAILABLE,
                "NVRTC at " + where + " lacks " + missing +
                    " (backend 'nvrtc' needs NVRTC 11.1 or newer)");
  }
  if (a.nvrtcVersion(&n->major, &n->minor) != 0) {
    ::dlclose(h);
    return fail(TILE_STATUS_BACKEND_UNAVAILABLE,
                "nvrtcVersion failed for " + where);
  }
  out = n.release(); // kept for the process's lifetime, like the driver
  gNvrtc.store(out, std::memory_order_release);
  return TILE_STATUS_OK;
}

tile_status Nvrtc::compile(std::string_view source, const std::string &name,
                           int cc, std::string &cubin) const {
  return run(source, name, "sm_" + str(cc), false, cubin);
}

tile_status Nvrtc::compilePTX(std::string_view source, const std::string &name,
                              const std::string &computeArch,
                              std::string &ptx) const {
  if (!api.nvrtcGetPTXSize || !api.nvrtcGetPTX)
    return fail(TILE_STATUS_BACKEND_UNAVAILABLE,
                "NVRTC at " + path + " cannot return PTX");
  return run(source, name, computeArch, true, ptx);
}

tile_status Nvrtc::run(std::string_view source, const std::string &name,
                       const std::string &arch, bool wantPTX,
                       std::string &out) const {
  std::string text(source);
  nvrtcProgram prog = nullptr;
  nvrtcResult r = api.nvrtcCreateProgram(&prog, text.c_str(),
                                         (name + ".cu").c_str(), 0, nullptr,
                                         nullptr);
  if (r != 0)
    return fail(TILE_STATUS_LAUNCH_FAILED,
                "kernel '" + name + "': nvrtcCreateProgram failed: " +
                    resultText(*this, r));
  // --fmad=false: no FMA contraction, the same arithmetic as the LLVM
  // path's cubin (MLIR's arith ops carry no `contract` flag), so nvrtc and
  // ffi agree bit for bit. The generated code converts index values freely
  // (68), leaves values unused (177) and sets some it never reads (550):
  // not worth a warning.
  std::string archOption = "--gpu-architecture=" + arch;
  const char *opts[] = {archOption.c_str(), "--std=c++17", "-default-device",
                        "--fmad=false", "--diag-suppress=68,177,550"};
  r = api.nvrtcCompileProgram(prog, int(sizeof(opts) / sizeof(opts[0])),
                              opts);
  std::string log;
  size_t logSize = 0;
  if (api.nvrtcGetProgramLogSize(prog, &logSize) == 0 && logSize > 1) {
    log.resize(logSize);
    if (api.nvrtcGetProgramLog(prog, &log[0]) != 0)
      log.clear();
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
      log.pop_back();
  }
  if (r != 0) {
    api.nvrtcDestroyProgram(&prog);
    return fail(TILE_STATUS_LAUNCH_FAILED,
                "kernel '" + name + "': NVRTC " + str(major) + "." +
                    str(minor) + " failed to compile its CUDA C++ for " +
                    arch + " (" + resultText(*this, r) + ")" +
                    (log.empty() ? std::string() : ":\n" + log));
  }
  size_t size = 0;
  r = wantPTX ? api.nvrtcGetPTXSize(prog, &size)
              : api.nvrtcGetCUBINSize(prog, &size);
  if (r == 0 && size > 0) {
    out.resize(size);
    r = wantPTX ? api.nvrtcGetPTX(prog, &out[0])
                : api.nvrtcGetCUBIN(prog, &out[0]);
    if (wantPTX && !out.empty() && out.back() == '\0')
      out.pop_back();
  }
  api.nvrtcDestroyProgram(&prog);
  if (r != 0 || size == 0)
    return fail(TILE_STATUS_LAUNCH_FAILED,
                "kernel '" + name + "': NVRTC produced no " +
                    (wantPTX ? "PTX" : "cubin") + " for " + arch +
                    (r != 0 ? " (" + resultText(*this, r) + ")"
                            : std::string()));
  return TILE_STATUS_OK;
}

tile_status nvrtcCubin(const Nvrtc &nvrtc, std::string_view source,
                       const std::string &name, int cc, std::string &cubin,
                       bool &fromCache) {
  fromCache = false;
  std::string dir = cacheDir();
  std::string path;
  if (!dir.empty()) {
    char key[17];
    std::snprintf(key, sizeof key, "%016llx",
                  static_cast<unsigned long long>(bundle::metadataHash(source)));
    std::string safeName;
    for (char c : name)
      safeName += (std::isalnum(static_cast<unsigned char>(c)) || c == '_')
                      ? c
                      : '_';
    path = dir + "/" + safeName.substr(0, 64) + "-" + key + "-sm_" + str(cc) + "-nvrtc" +
           str(nvrtc.major) + "." + str(nvrtc.minor) + ".cubin";
    if (readFile(path, cubin)) {
      fromCache = true;
      return TILE_STATUS_OK;
    }
  }
  if (tile_status st = nvrtc.compile(source, name, cc, cubin))
    return st;
  if (!path.empty() && makeDirs(dir))
    writeFileAtomically(path, cubin);
  return TILE_STATUS_OK;
}

} // namespace tile::rt::cuda
