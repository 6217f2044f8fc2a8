//===- CudaVariants.cpp - sm_90a TMA/wgmma kernel variants ----------------===//
#include "CudaVariants.h"
#include "Common.h"
#include "CudaDevice.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tile::rt::cuda {
namespace {

/// The driver's values for one "tma" entry; "" or what is wrong.
std::string makeTmaSpec(const TmaPlan &t, const KernelPlan &plan,
                        TmaSpec &spec) {
  const ParamPlan &pp = plan.params[size_t(t.param)];
  spec.param = t.param;
  spec.dataType = tensorMapDataType(t.dtype, &spec.elementBytes);
  if (spec.dataType < 0 || spec.elementBytes != pp.elemBytes)
    return ".dtype '" + t.dtype +
           "' is not a tensor map type of the param's dtype '" + pp.dtypeName +
           "'";
  spec.rank = uint32_t(t.rank);
  spec.optional = t.optional;
  for (uint32_t i = 0; i < spec.rank; ++i) {
    spec.box[i] = uint32_t(t.box[i]);
    spec.elementStrides[i] = uint32_t(t.elementStrides[i]);
  }
  struct Named {
    const char *key;
    const std::string &name;
    int (*parse)(const std::string &);
    int *out;
  } named[] = {{"interleave", t.interleave, tensorMapInterleave,
                &spec.interleave},
               {"swizzle", t.swizzle, tensorMapSwizzle, &spec.swizzle},
               {"l2_promotion", t.l2Promotion, tensorMapL2Promotion,
                &spec.l2Promotion},
               {"oob_fill", t.oobFill, tensorMapOobFill, &spec.oobFill}};
  for (const Named &n : named) {
    int e = n.parse(n.name);
    if (e < 0)
      return std::string(".") + n.key + " is not a known value";
    *n.out = e;
  }
  return "";
}

} // namespace

// The cost of one level of the split-K reduction tree (a partial tile
// stored and its sibling's loaded by one CTA, an arrival counter), in K
// tiles of the same output tile: both scale with the tile's area (8 bytes
// through L2 per element at ~64 B/clock/SM against 128 flop per element
// and K tile at ~1/132 of the tensor cores: ~4 K tiles), plus the
// counter's round trip and each slice's own pipeline fill. Calibrated on
// the H200 with the tree (TILE_SPLIT_K = 0..24 on 13 shapes, f16,
// docs/performance.md "Split-K calibrated"): 333x777x1111 (21 tiles, 18 K
// tiles) ran 17.8 us unsplit against 22.4 us with 2 slices, so a level
// costs more than 9 K tiles; the skinny K = 4096 shapes (32 tiles, 64 K
// tiles) ran 2 and 4 slices within 1.5 us of each other, so about 16 or
// less. 12 keeps 4 slices for those and no split for the former.
static constexpr int64_t kReductionLevelKTiles = 12;

int64_t splitKSlices(int64_t tiles, int64_t k, int64_t blockK, int sms,
                     int64_t maxTiles, const char *override,
                     int64_t counters) {
  if (tiles < 1 || tiles > maxTiles || k < 1 || blockK < 1)
    return 0;
  const int64_t kTiles = (k + blockK - 1) / blockK;
  // One arrival counter per tile and slice in the workspace's fixed part.
  const int64_t maxByCounters = counters / tiles;
  if (override && *override && std::strcmp(override, "auto") != 0) {
    char *end = nullptr;
    long long n = std::strtoll(override, &end, 10);
    if (end == override || *end != '\0' || n < 2)
      return 0; // "0", "1", "off" or not a number: never split-K
    int64_t s = std::min<int64_t>({int64_t(n), kTiles, 65535, maxByCounters});
    return s >= 2 ? s : 0;
  }
  if (sms <= 0)
    return 0;
  // The estimated time of S slices, in K tiles: a slice's share of the K
  // tiles, then ceil(log2 S) tree levels. S = 1 costs kTiles. Only S with
  // tiles * S <= sms (one wave: more CTAs than SMs would queue whole
  // slices); ties go to the smaller S (less workspace traffic).
  const int64_t maxS = std::min<int64_t>({sms / tiles, kTiles, maxByCounters});
  int64_t best = 0, bestCost = kTiles;
  for (int64_t s = 2, levels = 1; s <= maxS; ++s) {
    if ((int64_t(1) << levels) < s)
      ++levels;
    const int64_t cost =
        (kTiles + s - 1) / s + levels * kReductionLevelKTiles;
    if (cost < bestCost)
      best = s, bestCost = cost;
  }
  return best;
}

int64_t narrowSlices(int64_t tiles, int64_t k, int64_t blockK, int sms,
                     const char *override, int64_t counters) {
  if (tiles < 1 || blockK < 1 || counters / tiles < 1)
    return 0;
  // split-K's choice, where "no split" (0) is one slice of the narrow
  // kernel. Measured on the H200 (docs/performance.md, "Narrow rows"):
  // with one CTA per SM the tiles already saturate HBM (1 x 14336 x 4096:
  // 39.3 us unsplit, 42.4 with 2 slices), and a level costs as split-K's
  // does (1 x 1024 x 8192, 8 tiles: 15.9 us with 8 slices, 17.8 with 16).
  return std::max<int64_t>(
      1, splitKSlices(tiles, std::max<int64_t>(k, 1), blockK, sms, tiles,
                      override, counters));
}

int64_t coarseTiles(const int64_t c[3], int64_t gx, int64_t gy, int64_t gz) {
  return ((gx + c[0] - 1) / c[0]) * ((gy + c[1] - 1) / c[1]) *
         ((gz + c[2] - 1) / c[2]);
}

TileShape tileShapeOverride(const char *value) {
  if (value && std::strcmp(value, "user") == 0)
    return TileShape::User;
  if (value && std::strcmp(value, "large") == 0)
    return TileShape::Large;
  return TileShape::Auto;
}

bool useCoarseTiles(int64_t tiles, int64_t coarse, int64_t coarsening,
                    int sms, const char *override, int64_t speedupPct) {
  switch (tileShapeOverride(override)) {
  case TileShape::User:
    return false;
  case TileShape::Large:
    return true;
  case TileShape::Auto:
    break;
  }
  if (sms <= 0 || tiles < 1 || coarse < 1 || coarsening < 1)
    return false;
  const int64_t perSm = (tiles + sms - 1) / sms;
  const int64_t coarsePerSm = (coarse + sms - 1) / sms;
  return 100 * coarsening * coarsePerSm <= speedupPct * perSm;
}

bool coarseFaster(const CoarseChoice &a, const CoarseChoice &b, int sms) {
  if (sms <= 0 || a.coarse < 1 || b.coarse < 1 || a.speedupPct < 1 ||
      b.speedupPct < 1)
    return false;
  // a.coarsening * ceil(a.coarse / sms) / a.speedup < the same of b, cross
  // multiplied (in double: coarsen factors reach 65535 per axis).
  // Split variants: a.coarsening / a.split blocks per CTA tile.
  auto waves = [&](int64_t n) { return double((n + sms - 1) / sms); };
  const double splitA = double(std::max<int64_t>(a.split, 1));
  const double splitB = double(std::max<int64_t>(b.split, 1));
  return double(a.coarsening) * waves(a.coarse) * double(b.speedupPct) *
             splitB <
         double(b.coarsening) * waves(b.coarse) * double(a.speedupPct) *
             splitA;
}

int64_t variantTiles(const int64_t c[3], int64_t split, int64_t gx,
                     int64_t gy, int64_t gz) {
  return std::max<int64_t>(split, 1) * coarseTiles(c, gx, gy, gz);
}

int64_t VariantSpec::variantTiles(int64_t gx, int64_t gy, int64_t gz) const {
  return cuda::variantTiles(coarsen, split, gx, gy, gz);
}

bool variantsDisabled() {
  const char *v = std::getenv("TILE_DISABLE_VARIANTS");
  return v && *v && std::strcmp(v, "0") != 0;
}

bool makeVariantSpecs(const KernelPlan &plan, std::vector<VariantSpec> &out,
                      std::string &error) {
  out.clear();
  for (size_t i = 0; i < plan.variants.size(); ++i) {
    const VariantPlan &v = plan.variants[i];
    if (v.kind != "sm90_tma_wgmma")
      continue; // a kind for another device layer
    VariantSpec s;
    s.kind = v.kind;
    s.chip = v.chip;
    s.kernel = v.kernel;
    for (int d = 0; d < 3; ++d)
      s.block[d] = unsigned(v.block[d]);
    s.sharedBytes = unsigned(v.sharedBytes);
    s.gridSms = v.gridSms;
    s.maxTiles = v.maxTiles;
    s.kParam = v.kParam;
    s.kDim = v.kDim;
    s.blockK = v.blockK;
    s.workspaceBytes = size_t(v.workspaceBytes);
    s.packKernel = v.packKernel;
    s.packElemBytes = v.packElemBytes;
    s.packOperands = v.packOperands;
    for (size_t j = 0; j < v.tma.size() && j < 32; ++j) {
      const ParamPlan &pp = plan.params[size_t(v.tma[j].param)];
      if (!s.packKernel.empty() && !pp.written() &&
          pp.elemBytes == s.packElemBytes)
        s.repackMask |= uint32_t(1) << j;
    }
    for (int d = 0; d < 3; ++d)
      s.coarsen[d] = v.coarsen[d];
    s.coarseSpeedupPct = v.coarseSpeedup > 0 ? v.coarseSpeedup
                                             : kDefaultCoarseSpeedupPct;
    s.maxRows = v.maxRows;
    s.rowParams = v.rowParams;
    s.split = v.split;
    s.sliceBytes = size_t(v.sliceBytes);
    for (size_t j = 0; j < v.tma.size(); ++j) {
      TmaSpec t;
      std::string why = makeTmaSpec(v.tma[j], plan, t);
      if (!why.empty()) {
        error = "bundle metadata: variants[" + str(int64_t(i)) + "].tma[" +
                str(int64_t(j)) + "]" + why;
        return false;
      }
      s.tma.push_back(t);
    }
    out.push_back(std::move(s));
  }
  return true;
}

bool VariantLauncher::Key::operator==(const Key &o) const {
  if (entry != o.entry || rank != o.rank || base != o.base)
    return false;
  for (uint32_t d = 0; d < rank; ++d)
    if (shape[d] != o.shape[d] || strides[d] != o.strides[d])
      return false;
  return true;
}

std::unique_ptr<VariantLauncher>
VariantLauncher::create(Driver *drv, const std::vector<VariantSpec> &variants,
                        size_t numParams, CUmodule module, CUcontext ctx,
                        int device, int cc, bool fromCubin, std::string &why) {
  auto all = createAll(drv, variants, numParams, module, ctx, device, cc,
                       fromCubin, why);
  if (all.empty())
    return nullptr;
  return std::move(all.front());
}

std::vector<std::unique_ptr<VariantLauncher>> VariantLauncher::createAll(
    Driver *drv, const std::vector<VariantSpec> &variants, size_t numParams,
    CUmodule module, CUcontext ctx, int device, int cc, bool fromCubin,
    std::string &why) {
  why.clear();
  std::vector<std::unique_ptr<VariantLauncher>> out;
  if (variants.empty())
    return out;
  if (variantsDisabled()) {
    why = "TILE_DISABLE_VARIANTS is set";
    return out;
  }
  const Api &a = drv->api;
  for (const VariantSpec &v : variants) {
    int vcc;
    bool specific;
    if (v.kind != "sm90_tma_wgmma" || !parseChip(v.chip, vcc, specific))
      continue;
    if (cc != 90 || vcc != 90) {
      why = "variant " + v.kernel + " needs compute capability 9.0";
      continue;
    }
    if (!fromCubin) {
      why =
          "variant " + v.kernel + " needs the cubin (the PTX was JIT-compiled)";
      continue;
    }
    if (!a.cuTensorMapEncodeTiled) {
      why = "the driver has no cuTensorMapEncodeTiled (older than CUDA 12.0)";
      continue;
    }
    if (numParams + v.tma.size() + (v.takesWorkspace() ? 1 : 0) >
        kMaxKernelParams) {
      why = "variant " + v.kernel + " has too many kernel parameters";
      continue;
    }
    CUfunction fn = nullptr;
    CUresult r = a.cuModuleGetFunction(&fn, module, v.kernel.c_str());
    if (r != kSuccess) {
      why = "the cubin has no kernel '" + v.kernel + "' (" + errorText(r) + ")";
      continue;
    }
    // Always opt in above the default: the NVPTX backend turns the dynamic
    // shared memory symbol into a small static .shared variable, and the
    // variant has static mbarriers too.
    if (v.sharedBytes >= 48 * 1024) {
      int optin = drv->maxSharedOptin(device);
      if (optin > 0 && v.sharedBytes > unsigned(optin)) {
        why = "variant " + v.kernel + " needs " + str(v.sharedBytes) +
              " bytes of shared memory, the device allows " + str(optin);
        continue;
      }
      r = a.cuFuncSetAttribute(fn, kFuncAttrMaxDynamicSharedBytes,
                               int(v.sharedBytes));
      if (r != kSuccess) {
        why = "cannot raise the dynamic shared memory limit of " + v.kernel +
              ": " + errorText(r);
        continue;
      }
    }
    CUdeviceptr slab = 0;
    r = a.cuMemAlloc(&slab, kCacheSlots * sizeof(TensorMap));
    if (r != kSuccess) {
      why = "cannot allocate the tensor map cache: " + errorText(r);
      continue;
    }
    std::unique_ptr<VariantLauncher> l(new VariantLauncher());
    l->drv_ = drv;
    l->ctx_ = ctx;
    l->fn_ = fn;
    l->encode_ = reinterpret_cast<EncodeTiledFn>(a.cuTensorMapEncodeTiled);
    l->spec_ = v;
    l->sms_ = drv->multiprocessorCount(device);
    l->slab_ = slab;
    // Without its pack kernel the variant still runs aligned operands.
    if (!v.packKernel.empty() &&
        a.cuModuleGetFunction(&l->packFn_, module, v.packKernel.c_str()) !=
            kSuccess)
      l->packFn_ = nullptr;
    out.push_back(std::move(l));
  }
  // Each coarse variant knows the others, and each split variant the other
  // split ones, so that only the fastest estimate accepts a launch
  // (accepts()).
  auto coarseOnly = [](const VariantSpec &s) {
    return s.coarsened() && !s.splitTiles();
  };
  for (size_t i = 0; i < out.size(); ++i)
    for (size_t j = 0; j < out.size(); ++j) {
      const VariantSpec &mine = out[i]->spec_, &theirs = out[j]->spec_;
      if (i == j || !((coarseOnly(mine) && coarseOnly(theirs)) ||
                      (mine.splitTiles() && theirs.splitTiles())))
        continue;
      Rival r;
      std::copy(theirs.coarsen, theirs.coarsen + 3, r.coarsen);
      r.speedupPct = theirs.coarseSpeedupPct;
      r.split = theirs.split;
      r.earlier = j < i;
      out[i]->rivals_.push_back(r);
    }
  if (!out.empty())
    why.clear();
  return out;
}

VariantLauncher::~VariantLauncher() {
  if (slab_) {
    ScopedContext scope(drv_->api, ctx_);
    drv_->api.cuMemFree(slab_);
    repack_.release(drv_->api);
    for (const Workspace &w : workspaces_)
      if (w.ptr)
        drv_->api.cuMemFree(w.ptr);
  }
}

bool VariantLauncher::accepts(int64_t gx, int64_t gy, int64_t gz) const {
  const int64_t tiles = gx * gy * gz;
  if (spec_.maxTiles > 0 && tiles > spec_.maxTiles)
    return false;
  if (!spec_.coarsened() && !spec_.splitTiles())
    return true;
  const int64_t c = spec_.coarsen[0] * spec_.coarsen[1] * spec_.coarsen[2];
  const char *shape = std::getenv("TILE_GEMM_TILE");
  const CoarseChoice mine{spec_.variantTiles(gx, gy, gz), c,
                          spec_.coarseSpeedupPct, spec_.split};
  auto faster = [&](const Rival &r) {
    const CoarseChoice other{variantTiles(r.coarsen, r.split, gx, gy, gz),
                             r.coarsen[0] * r.coarsen[1] * r.coarsen[2],
                             r.speedupPct, r.split};
    return coarseFaster(other, mine, sms_);
  };
  if (spec_.splitTiles()) {
    // One of the split variants runs every launch: with TILE_GEMM_TILE
    // the first, else the fastest estimate.
    if (tileShapeOverride(shape) != TileShape::Auto)
      return std::none_of(rivals_.begin(), rivals_.end(),
                          [](const Rival &r) { return r.earlier; });
    return std::none_of(rivals_.begin(), rivals_.end(), faster);
  }
  if (!useCoarseTiles(tiles, mine.coarse, c, sms_, shape, mine.speedupPct))
    return false;
  if (tileShapeOverride(shape) != TileShape::Auto)
    return true; // "large": the first coarse variant
  return std::none_of(rivals_.begin(), rivals_.end(), faster);
}

int64_t VariantLauncher::slices(void *const *args, int64_t gx, int64_t gy,
                                int64_t gz) const {
  // The memref descriptor {allocated, aligned, offset, sizes[rank], ...}.
  auto size = [&](int32_t param, int64_t dim) {
    int64_t v;
    std::memcpy(&v, static_cast<const char *>(args[param]) + 24 + 8 * dim, 8);
    return v;
  };
  const TileShape shape = tileShapeOverride(std::getenv("TILE_GEMM_TILE"));
  if (spec_.maxRows > 0) {
    // The narrow kernel computes the first maxRows rows of each tile only.
    if (shape != TileShape::Auto)
      return 0;
    for (int32_t p : spec_.rowParams)
      if (size(p, 0) > spec_.maxRows)
        return 0;
    if (spec_.kParam < 0)
      return 1;
    return narrowSlices(gx * gy * gz, size(spec_.kParam, spec_.kDim),
                        spec_.blockK, sms_, std::getenv("TILE_SPLIT_K"),
                        int64_t(spec_.workspaceBytes / 4));
  }
  if (spec_.kParam < 0)
    return 1;
  // TILE_GEMM_TILE=large: the coarse tiles for every launch, so no split-K.
  if (shape == TileShape::Large)
    return 0;
  const int64_t k = size(spec_.kParam, spec_.kDim);
  return splitKSlices(gx * gy * gz, k, spec_.blockK, sms_, spec_.maxTiles,
                      std::getenv("TILE_SPLIT_K"),
                      int64_t(spec_.workspaceBytes / 4));
}

size_t VariantLauncher::workspaceBytes(int64_t tiles, int64_t slices) const {
  return spec_.workspaceBytes + size_t(tiles) * size_t(slices) *
                                    spec_.sliceBytes;
}

CUdeviceptr VariantLauncher::workspace(CUstream stream, size_t bytes,
                                       std::string &why) {
  // The legacy default stream has two handles (0 and CU_STREAM_LEGACY);
  // CU_STREAM_PER_THREAD is one handle for a different stream per thread.
  uintptr_t key = reinterpret_cast<uintptr_t>(stream);
  if (key == 0x1)
    key = 0;
  std::thread::id thread =
      key == 0x2 ? std::this_thread::get_id() : std::thread::id();
  const uint64_t now = ++clock_;
  size_t victim = 0;
  for (size_t i = 0; i < kWorkspaceSlots; ++i) {
    Workspace &w = workspaces_[i];
    if (w.ptr && w.stream == key && w.thread == thread) {
      victim = i;
      break;
    }
    if (!w.ptr || (workspaces_[victim].ptr && w.lastUse < workspaces_[victim].lastUse))
      victim = i;
  }
  const Api &a = drv_->api;
  Workspace &w = workspaces_[victim];
  const bool mine = w.ptr && w.stream == key && w.thread == thread;
  const size_t replaced = w.bytes;
  if (w.ptr && (!mine || w.bytes < bytes)) {
    // Another stream's launch (or, when it grows, an earlier launch on
    // this stream) may still use it; once complete, the kernel has left
    // its counters at 0, so it is reused as it is.
    if (a.cuCtxSynchronize() != kSuccess) {
      why = "cuCtxSynchronize failed";
      return 0;
    }
    if (w.bytes < bytes) {
      a.cuMemFree(w.ptr);
      w = Workspace();
    }
  }
  if (!w.ptr) {
    // Grown to at least twice the size it replaces (if the device has
    // room): a sweep of growing launches allocates O(log) times.
    size_t size = std::max({bytes, 2 * replaced, size_t(256)});
    CUdeviceptr p = 0;
    CUresult r = a.cuMemAlloc(&p, size);
    if (r != kSuccess && size > bytes) {
      size = std::max(bytes, size_t(256));
      r = a.cuMemAlloc(&p, size);
    }
    if (r != kSuccess) {
      why = "cannot allocate the " + str(int64_t(size)) +
            "-byte workspace: " + errorText(r);
      return 0;
    }
    // Zeroed before any launch on any stream can read it (cuMemsetD8 is
    // ordered on the legacy stream only; a non-blocking stream is not).
    r = a.cuMemsetD8(p, 0, size);
    if (r == kSuccess)
      r = a.cuCtxSynchronize();
    if (r != kSuccess) {
      a.cuMemFree(p);
      why = "cannot zero the workspace: " + errorText(r);
      return 0;
    }
    w.ptr = p;
    w.bytes = size;
  }
  w.stream = key;
  w.thread = thread;
  w.lastUse = now;
  return w.ptr;
}

void VariantLauncher::grid(int64_t gx, int64_t gy, int64_t gz,
                           unsigned out[3], int64_t slices) const {
  if (spec_.kParam >= 0) {
    out[0] = unsigned(gx * gy * gz), out[1] = unsigned(slices), out[2] = 1;
    return;
  }
  if (!spec_.gridSms) {
    // The variant's own tiles (the kernel derives them from the launch's
    // grid, which it computes itself); "split" needs "grid": "sms".
    const int64_t *c = spec_.coarsen;
    out[0] = unsigned((gx + c[0] - 1) / c[0]);
    out[1] = unsigned((gy + c[1] - 1) / c[1]);
    out[2] = unsigned((gz + c[2] - 1) / c[2]);
    return;
  }
  // The kernel strides over its tiles by the number of CTAs: any count is
  // correct; one per SM keeps each SM busy for the whole launch.
  int64_t tiles = spec_.variantTiles(gx, gy, gz);
  int64_t n = sms_ > 0 ? std::min<int64_t>(tiles, sms_) : tiles;
  out[0] = unsigned(std::max<int64_t>(n, 1)), out[1] = 1, out[2] = 1;
}

bool VariantLauncher::prepare(void *const *args, CUstream stream,
                              bool capturing, CUdeviceptr *mapPtrs,
                              std::string &why,
                              std::unique_lock<std::mutex> &lock) {
  // Keys first, without the lock: the checks and the descriptor reads.
  Key keys[8];
  int64_t rowElems[8] = {}; // > 0: repack entry i with rows this long
  uint64_t repackTotal = 0;
  std::string repackWhy; // the check the repacked entries failed
  bool absent[8] = {}; // optional entries the launch has no map for
  const size_t n = spec_.tma.size();
  if (n > 8) {
    why = "more than 8 tensor maps";
    return false;
  }
  for (size_t i = 0; i < n; ++i) {
    const TmaSpec &t = spec_.tma[i];
    // The memref descriptor {allocated, aligned, offset, sizes, strides}.
    const char *desc = static_cast<const char *>(args[t.param]);
    char *aligned;
    int64_t offset;
    std::memcpy(&aligned, desc + 8, 8);
    std::memcpy(&offset, desc + 16, 8);
    Key &k = keys[i];
    k.entry = uint32_t(i);
    k.rank = t.rank;
    k.base = reinterpret_cast<uintptr_t>(aligned + offset * t.elementBytes);
    std::memcpy(k.shape, desc + 24, 8 * t.rank);
    std::memcpy(k.strides, desc + 24 + 8 * t.rank, 8 * t.rank);
    // Row-major contiguous (the argument checks guarantee it; a map of
    // anything else would read the wrong elements).
    bool contiguous = true;
    int64_t expect = 1;
    for (int d = int(t.rank) - 1; d >= 0; --d) {
      if (k.shape[d] != 1 && k.strides[d] != expect) {
        contiguous = false;
        break;
      }
      expect *= k.shape[d];
    }
    why = contiguous ? checkTensorMap(t, reinterpret_cast<const void *>(
                                             k.base),
                                      k.shape)
                     : "is not row-major contiguous";
    if (!why.empty() && t.optional) {
      // The kernel runs without it (e.g. C of the TMA-store epilogue,
      // which the kernel then stores through its threads): a null map.
      if (const char *verbose = std::getenv("TILE_CUDA_VERBOSE");
          verbose && *verbose)
        std::fprintf(stderr,
                     "tile: %s: tensor param %d: %s (optional map: "
                     "passed as null)\n",
                     spec_.kernel.c_str(), t.param, why.c_str());
      absent[i] = true;
      why.clear();
      continue;
    }
    if (!contiguous) { // never repacked: the pack kernel copies rows
      why = "tensor param " + str(t.param) + " " + why;
      return false;
    }
    if (!why.empty()) {
      why = "tensor param " + str(t.param) + ": " + why;
      // Repackable when only the alignment failed: the padded copy (256-
      // byte aligned workspace) must pass every check.
      if (!packFn_ || !(spec_.repackMask >> i & 1))
        return false;
      const int64_t padded =
          paddedRowElems(k.shape[t.rank - 1], t.elementBytes);
      if (!checkTensorMap(t, reinterpret_cast<const void *>(uintptr_t(256)),
                          k.shape, padded)
               .empty())
        return false;
      int64_t rows = 1;
      for (uint32_t d = 0; d + 1 < t.rank; ++d)
        rows *= k.shape[d];
      rowElems[i] = padded;
      repackTotal += repackBytes(rows, padded, t.elementBytes);
      if (repackWhy.empty())
        repackWhy = why;
      why.clear();
    }
  }
  if (repackTotal) {
    RepackMode mode = repackMode(std::getenv("TILE_REPACK"));
    if (mode == RepackMode::Off) {
      why = repackWhy + " (TILE_REPACK=0: not repacked)";
      return false;
    }
    if (mode == RepackMode::Auto) {
      // The GEMM's m x n x k from A (tma[0], M x K) and B (tma[1], K x N
      // or N x K: n = the elements of B's matrix / k either way). Batched
      // operands (leading dims): m counts A's rows over the batch, n one
      // matrix of B, so 2mnk is the launch's FLOPs (a batch of A times one
      // B counts once per A matrix).
      const Key &a = keys[0], &bk = keys[1];
      const bool gemm = n >= 2 && a.rank >= 2 && bk.rank >= 2 &&
                        a.shape[a.rank - 1] > 0;
      const int64_t k = gemm ? a.shape[a.rank - 1] : 0;
      int64_t m = 1;
      for (uint32_t d = 0; gemm && d + 1 < a.rank; ++d)
        m *= a.shape[d];
      if (!gemm ||
          !repackPays(m, bk.shape[bk.rank - 2] * bk.shape[bk.rank - 1] / k,
                      k, repackTotal)) {
        why = repackWhy + " (repacking " + str(int64_t(repackTotal)) +
              " bytes does not pay for this launch; TILE_REPACK=1 forces it)";
        return false;
      }
    }
  }
  // Held by the caller until the launch is enqueued: a slot handed out
  // here must not be replaced before the launch that reads it is queued
  // (a replacement synchronizes the context first).
  if (repackTotal && capturing) {
    // The repack workspace is the stream's: a graph would keep it for
    // every replay, on any stream.
    why = "the stream is capturing a CUDA graph and an operand would be "
          "repacked into a per-stream workspace";
    return false;
  }
  lock = std::unique_lock<std::mutex>(mu_);
  if (repackTotal &&
      !repack(keys, rowElems, repackTotal, stream, why))
    return false;
  const uint64_t now = ++clock_;
  size_t hits[8];
  for (size_t i = 0; i < n; ++i) {
    hits[i] = kCacheSlots;
    if (absent[i]) {
      mapPtrs[i] = 0;
      continue;
    }
    // The slot holding this key, else the slot to replace: a free one,
    // else the least recently used that is not pinned.
    size_t hit = kCacheSlots, victim = kCacheSlots;
    for (size_t s = 0; s < kCacheSlots; ++s) {
      if (slots_[s].used && slots_[s].key == keys[i]) {
        hit = s;
        break;
      }
      if (slots_[s].pinned)
        continue;
      if (victim == kCacheSlots || !slots_[s].used ||
          (slots_[victim].used && slots_[s].lastUse < slots_[victim].lastUse))
        victim = s;
    }
    if (hit == kCacheSlots && capturing) {
      why = "the stream is capturing a CUDA graph and the tensor map of "
            "param " + str(int64_t(spec_.tma[i].param)) +
            " is not cached (copying one needs a synchronization; launch "
            "once with these tensors before capturing)";
      return false;
    }
    if (hit == kCacheSlots) {
      // Never overwrite a map of this launch's other entries.
      if (victim == kCacheSlots ||
          (slots_[victim].used && slots_[victim].lastUse == now)) {
        why = "tensor map cache too small";
        return false;
      }
      TensorMap map;
      why = encodeTensorMap(encode_, spec_.tma[i],
                            reinterpret_cast<void *>(keys[i].base),
                            keys[i].shape, &map, rowElems[i]);
      if (!why.empty())
        return false;
      const Api &a = drv_->api;
      // A launch in flight may still read the slot being replaced.
      if (slots_[victim].used && a.cuCtxSynchronize() != kSuccess) {
        why = "cuCtxSynchronize failed";
        return false;
      }
      slots_[victim].used = false;
      // Ordered before this launch on its stream, and complete before we
      // return (launches on other streams may reuse the cached copy; a
      // plain cuMemcpyHtoD from pageable memory may still be in flight on
      // the legacy stream when it returns). Only on a cache miss.
      CUresult r =
          a.cuMemcpyHtoDAsync(slotPtr(victim), &map, sizeof(map), stream);
      if (r == kSuccess)
        r = a.cuStreamSynchronize(stream);
      if (r != kSuccess) {
        why = "copying a tensor map to the device failed: " + errorText(r);
        return false;
      }
      slots_[victim].key = keys[i];
      slots_[victim].used = true;
      hit = victim;
    }
    slots_[hit].lastUse = now;
    mapPtrs[i] = slotPtr(hit);
    hits[i] = hit;
  }
  if (capturing) {
    size_t more = 0;
    for (size_t i = 0; i < n; ++i)
      if (hits[i] != kCacheSlots && !slots_[hits[i]].pinned &&
          std::find(hits, hits + i, hits[i]) == hits + i)
        ++more;
    if (pinned_ + more > kCacheSlots - kUnpinnedSlots) {
      why = "the stream is capturing a CUDA graph and earlier captures "
            "hold " + str(int64_t(pinned_)) + " of the " +
            str(int64_t(kCacheSlots)) + " tensor map cache slots";
      return false;
    }
    for (size_t i = 0; i < n; ++i)
      if (hits[i] != kCacheSlots && !slots_[hits[i]].pinned) {
        slots_[hits[i]].pinned = true;
        ++pinned_;
      }
  }
  return true;
}

bool VariantLauncher::repack(Key *keys, const int64_t *rowElems,
                             uint64_t bytes, CUstream stream,
                             std::string &why) {
  const Api &a = drv_->api;
  CUdeviceptr ws = repack_.get(a, stream, bytes, why);
  if (!ws)
    return false;
  const char *verbose = std::getenv("TILE_CUDA_VERBOSE");
  uint64_t offset = 0;
  PackCopy copies[8];
  size_t nCopies = 0;
  for (size_t i = 0; i < spec_.tma.size(); ++i) {
    if (rowElems[i] <= 0)
      continue;
    const TmaSpec &t = spec_.tma[i];
    Key &k = keys[i];
    int64_t rows = 1;
    for (uint32_t d = 0; d + 1 < t.rank; ++d)
      rows *= k.shape[d];
    const int64_t cols = k.shape[t.rank - 1];
    const CUdeviceptr dst = ws + offset;
    copies[nCopies++] = {CUdeviceptr(k.base), dst, rows, cols, cols,
                         rowElems[i]};
    if (verbose && *verbose)
      std::fprintf(stderr,
                   "tile: %s: repacked tensor param %d (%lld x %lld, rows "
                   "padded to %lld elements) with %s\n",
                   spec_.kernel.c_str(), t.param, (long long)rows,
                   (long long)cols, (long long)rowElems[i],
                   spec_.packKernel.c_str());
    // The copy's key: its own address and the padded strides.
    k.base = uintptr_t(dst);
    int64_t stride = 1;
    for (int d = int(t.rank) - 1; d >= 0; --d) {
      k.strides[d] = stride;
      stride *= d == int(t.rank) - 1 ? rowElems[i] : k.shape[d];
    }
    offset += repackBytes(rows, rowElems[i], t.elementBytes);
  }
  // Every copy has the variant's packElemBytes-byte elements (repackMask).
  if (CUresult r = launchPacks(a, packFn_, spec_.packOperands, copies,
                               nCopies, spec_.packElemBytes, sms_, stream);
      r != kSuccess) {
    why = "launching the pack kernel " + spec_.packKernel +
          " failed: " + errorText(r);
    return false;
  }
  return true;
}

} // namespace tile::rt::cuda
