//===- CudaVariants.h - Hardware-specific kernel variants (sm_90a TMA) ----===//
//
// The runtime side of the metadata's `variants` (docs/bundle.md, "Kernel
// variants"). Today one kind: "sm90_tma_wgmma", a second kernel in the same
// cubin that needs, per launch, one CUtensorMap per "tma" entry in device
// memory, passed as trailing `CUtensorMap *` kernel parameters.
//
//   * makeVariantSpecs (load time, no GPU): the plan's variants (parsed and
//     validated with the rest of the metadata; unknown kinds were dropped:
//     entry.kernel always implements the launch) in the driver's values.
//   * VariantLauncher (one per kernel and device, created when the module is
//     loaded): used only on compute capability 9.0 with the cubin loaded
//     (not the PTX JIT), a driver exporting cuTensorMapEncodeTiled and
//     TILE_DISABLE_VARIANTS unset; holds the variant's CUfunction (dynamic
//     shared memory limit raised) and a bounded, thread-safe cache of
//     device copies of the encoded maps keyed by (entry, data pointer,
//     shape, strides): repeated launches with the same tensors encode and
//     copy nothing. prepare() answers false (-> launch entry.kernel) when
//     a tensor cannot be described by a map (a dim of 0, data not 16-byte
//     aligned, a row pitch not a multiple of 16 bytes, ...).
//
// A variant with "grid": "sms" (persistent kernel) is launched with
// min(#multiprocessors, tiles) CTAs, tiles = the product of the launch's
// grid (VariantLauncher::grid).
//
// Several variants: the runtime takes, per launch, the first whose rule
// accepts the grid ("max_tiles") and whose tensor maps can be made, else
// entry.kernel.
//
// A split-K variant ("split_k", docs/pipelines.md "Split-K") accepts a
// launch when splitKSlices gives S >= 2 K-slices; it is launched with grid
// (tiles, S, 1) and a trailing pointer to its workspace (workspace_bytes +
// tiles x S x slice_bytes, zeroed when allocated; the first
// workspace_bytes are the kernel's arrival counters, one u32 per tile and
// slice, which it leaves zeroed again, so tiles x S <= workspace_bytes /
// 4), one per (variant, stream), grown as launches need: launches on one
// stream are ordered, and two streams never share one
// (VariantLauncher::workspace).
//
// Repacking ("pack", CudaRepack.h): when a read-only operand's map fails
// only for its alignment (base or row pitch), prepare() copies it with the
// bundle's pack kernel into the variant's per-stream workspace with rows
// padded to 16 bytes and maps the copy, if the cost rule (repackPays) or
// TILE_REPACK says so.
//
// A narrow variant ("max_rows" with "split_k", docs/pipelines.md "Narrow
// rows") accepts a launch only when dim 0 of each of its row params is at
// most max_rows; it is launched like split-K with the S of narrowSlices (1
// included: grid (tiles, 1, 1)).
//
// A variant with "coarsen" (docs/pipelines.md "Tile shape") runs tiles of
// several launch blocks (e.g. 128x256 for a 128x128 launch tile): it
// accepts a launch when useCoarseTiles prefers its own tile count
// (coarseTiles) to the launch's, and is launched over its own tiles.
//
// Split variants ("split" P with "coarsen", launch tiles of more than 128
// rows: each launch block is P CTA tiles of 128 rows, grouped by
// "coarsen" along the column axis) are the program's tile as it runs on
// sm_90a, so one of them runs every launch: each accepts a launch unless
// another split variant of the kernel is estimated strictly faster
// (coarseFaster with blocks per CTA tile cx * cy * cz / P; ties: the first
// in metadata order), and is launched over its own P * coarseTiles tiles.
// TILE_GEMM_TILE=user or large: the first split variant.
//
// Environment: TILE_DISABLE_VARIANTS=1 always launches entry.kernel;
// TILE_SPLIT_K (read per launch, so autotuning can change it between
// runs): unset, empty or "auto": the cost model; "0", "1" or "off": never
// split-K; N >= 2: N slices for every launch of at most max_tiles tiles
// (capped at the K tiles); TILE_REPACK (read per launch): unset, empty or
// "auto": the repack cost rule; "0"/"off": never repack; "1"/"on": repack
// whenever it is possible (CudaRepack.h); TILE_GEMM_TILE (read per
// launch): unset, empty, "auto" or anything else: the tile-shape cost
// model; "user": never a coarsened or narrow variant (the program's tile
// shape); "large": a coarsened variant for every launch it can run, and
// never split-K or narrow. TILE_SPLIT_K applies to narrow variants too,
// with "0", "1" or "off" meaning one slice.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_LIB_RUNTIME_CUDAVARIANTS_H
#define TILE_LIB_RUNTIME_CUDAVARIANTS_H

#include "CudaDriver.h"
#include "CudaRepack.h"
#include "CudaTensorMap.h"
#include "Metadata.h"

#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tile::rt::cuda {

/// The speedup of a launch block in a coarse tile that a variant without
/// "coarse_speedup" gets (128x128 -> 128x256 on the H200: 0.92-0.99 of
/// cuBLAS against 0.65-0.86, docs/performance.md).
constexpr int64_t kDefaultCoarseSpeedupPct = 125;

struct VariantSpec {
  std::string kind, chip, kernel;
  unsigned block[3] = {1, 1, 1};
  unsigned sharedBytes = 0;
  /// "grid": "launch" (default: the launch's own grid) or "sms" (a
  /// persistent kernel: one CTA per multiprocessor, at most one per tile of
  /// the launch's grid, as a 1-D grid; the kernel loops over the tiles).
  bool gridSms = false;
  /// "max_tiles": N (N >= 1): used only for launches whose grid has at most
  /// N tiles (gx*gy*gz); larger launches go to the next variant (then
  /// entry.kernel). 0 (absent): any launch.
  int64_t maxTiles = 0;
  std::vector<TmaSpec> tma;
  /// Split-K ("split_k"): K = dim kDim of param kParam, in blockK units;
  /// kParam < 0: not a split-K variant.
  int32_t kParam = -1, kDim = 0;
  int64_t blockK = 0;
  /// "workspace_bytes" and split-K's "slice_bytes": a launch of T tiles
  /// and S slices takes a workspace of workspaceBytes + T * S * sliceBytes
  /// (no workspace param when both are 0).
  size_t workspaceBytes = 0, sliceBytes = 0;
  bool takesWorkspace() const { return workspaceBytes || sliceBytes; }
  /// "pack" (CudaRepack.h): the bundle's pack kernel for packElemBytes-byte
  /// elements; empty: operands TMA cannot describe are never repacked.
  std::string packKernel;
  int packElemBytes = 0;
  int packOperands = 1; // operands one launch of packKernel copies
  /// Bit i: "tma" entry i may be repacked (its param is only read and has
  /// packElemBytes-byte elements).
  uint32_t repackMask = 0;
  /// "coarsen": launch blocks per variant tile along x, y, z.
  int64_t coarsen[3] = {1, 1, 1};
  /// "coarse_speedup" (percent), for useCoarseTiles.
  int64_t coarseSpeedupPct = kDefaultCoarseSpeedupPct;
  /// "max_rows": launched only when dim 0 of every rowParams tensor is at
  /// most maxRows (0: any launch).
  int64_t maxRows = 0;
  std::vector<int32_t> rowParams;
  /// "split": CTA tiles per launch block (1: not a split variant).
  int64_t split = 1;
  bool coarsened() const {
    return coarsen[0] * coarsen[1] * coarsen[2] > 1;
  }
  bool splitTiles() const { return split > 1; }
  /// The variant's own tiles for a launch of grid (gx, gy, gz): split *
  /// coarseTiles(coarsen, ...).
  int64_t variantTiles(int64_t gx, int64_t gy, int64_t gz) const;
};

/// The variant tiles of a variant with "coarsen" `c` for a launch of grid
/// (gx, gy, gz): ceildiv(gx, cx) * ceildiv(gy, cy) * ceildiv(gz, cz).
int64_t coarseTiles(const int64_t c[3], int64_t gx, int64_t gy, int64_t gz);
/// The tiles of a variant with "coarsen" `c` and "split" `split` (split *
/// coarseTiles): what it launches CTAs over.
int64_t variantTiles(const int64_t c[3], int64_t split, int64_t gx,
                     int64_t gy, int64_t gz);

/// TILE_GEMM_TILE's value, parsed: "user", "large", else the cost model.
enum class TileShape { Auto, User, Large };
TileShape tileShapeOverride(const char *value);

/// The tile-shape cost model: whether a launch of `tiles` blocks runs on a
/// variant whose tiles each cover `coarsening` blocks (`coarse` such
/// tiles) on a device of `sms` multiprocessors, rather than on the
/// launch's own tiles. `override`: TILE_GEMM_TILE's value.
///   "user": false; "large": true;
///   the model (unset, "", "auto", other values; false when sms <= 0):
///     the persistent kernels' critical path is the tiles of the busiest
///     SM, ceil(tiles / sms) launch tiles against ceil(coarse / sms)
///     coarse tiles of `coarsening` blocks each; a block runs
///     `speedupPct` / 100 times faster in a coarse tile (the variant's
///     "coarse_speedup", the compiler's estimate from the two tile shapes'
///     throughput: 125 for 128x128 -> 128x256, 271 for 64x64 -> 128x256),
///     so: coarse when
///       100 * coarsening * ceil(coarse / sms) <= speedupPct * ceil(tiles / sms).
///     With 128x128 -> 128x256 on 132 SMs: from 133 launch tiles on (at
///     least one full wave of 128x256 tiles after rounding), except where
///     the coarse tiles need a whole extra wave (e.g. 265-300 tiles).
bool useCoarseTiles(int64_t tiles, int64_t coarse, int64_t coarsening,
                    int sms, const char *override,
                    int64_t speedupPct = kDefaultCoarseSpeedupPct);

/// One coarse tile shape of a launch for coarseFaster: `coarse` tiles of
/// `coarsening` launch blocks each, a block `speedupPct` / 100 times
/// faster than in its own CTA.
struct CoarseChoice {
  int64_t coarse = 0, coarsening = 1, speedupPct = kDefaultCoarseSpeedupPct;
  /// Split variants: CTA tiles per `coarsening` blocks (a CTA tile covers
  /// coarsening / split blocks).
  int64_t split = 1;
};
/// Whether coarse tiles `a` are estimated to run a launch strictly faster
/// than `b` on `sms` multiprocessors, by useCoarseTiles' model (the
/// busiest SM's time, coarsening * ceil(coarse / sms) / speedup). With
/// several coarse variants (128x256 and 128x128 tiles of 64x64 blocks)
/// one accepts a launch only when no other is faster (ties: the first in
/// metadata order), so the runtime takes the fastest estimate.
bool coarseFaster(const CoarseChoice &a, const CoarseChoice &b, int sms);

/// The split-K cost model: the K-slices S for a launch of `tiles` output
/// tiles and a reduction extent `k` (blockK units per K tile) on a device
/// with `sms` multiprocessors; 0 = do not use split-K. `override` is
/// TILE_SPLIT_K's value (nullptr/""/"auto": the model).
///   tiles > maxTiles (the variant's rule) or k < 1: 0;
///   the model: with kTiles = ceil(k / blockK), the S in [2, min(sms /
///     tiles, kTiles)] (one wave) that minimises ceil(kTiles / S) +
///     12 * ceil(log2 S) (the slice's K tiles, then the reduction tree's
///     levels, each priced at 12 K tiles), if that is below kTiles (S = 1);
///     ties to the smaller S; else 0 (the other variants);
///   override N >= 2: min(N, kTiles, 65535) (if >= 2); "0"/"1"/"off": 0;
///   either way S is then lowered to counters / tiles (the kernel's
///   arrival counters, one per tile and slice: workspace_bytes / 4), and
///   0 when that is below 2.
int64_t splitKSlices(int64_t tiles, int64_t k, int64_t blockK, int sms,
                     int64_t maxTiles, const char *override,
                     int64_t counters);

/// The narrow variant's K-slices for a launch of `tiles` tiles, reduction
/// extent `k` (blockK units per K tile) on `sms` multiprocessors with
/// `counters` arrival counters; 0 = the launch cannot run it (more tiles
/// than counters). `override`: TILE_SPLIT_K's value.
///   override N >= 2: min(N, kTiles, 65535, counters / tiles); "0", "1",
///     "off": 1;
///   the model: splitKSlices' (S in [2, min(sms / tiles, kTiles, counters
///     / tiles)] minimising ceil(kTiles / S) + 12 ceil(log2 S)), but S = 1
///     (kTiles) is a candidate too, not a refusal: the narrow kernel runs
///     the launch either way.
int64_t narrowSlices(int64_t tiles, int64_t k, int64_t blockK, int sms,
                     const char *override, int64_t counters);

/// The driver's view of the plan's "sm90_tma_wgmma" variants (parsed and
/// checked against the params by parseMetadata). False with `error`
/// ("bundle metadata: variants[0].tma[1].swizzle ...") for a name the
/// driver has no value for.
bool makeVariantSpecs(const KernelPlan &plan, std::vector<VariantSpec> &out,
                      std::string &error);

/// Whether TILE_DISABLE_VARIANTS is set to a non-empty value other than 0.
bool variantsDisabled();

class VariantLauncher {
public:
  /// At most this many cached maps per (kernel, device); the least recently
  /// used one is replaced (after cuCtxSynchronize: a launch in flight may
  /// still read it).
  static constexpr size_t kCacheSlots = 64;

  /// The launcher of the first usable variant for a module loaded on a
  /// device of compute capability `cc` from `image` ("cubin" or JIT), or
  /// nullptr with the reason in `why` (empty when there is no variant at
  /// all). Call with `ctx` current.
  static std::unique_ptr<VariantLauncher>
  create(Driver *drv, const std::vector<VariantSpec> &variants,
         size_t numParams, CUmodule module, CUcontext ctx, int device, int cc,
         bool fromCubin, std::string &why);
  /// All usable variants, in metadata order (each with its own tensor map
  /// cache); empty with the reason for the last unusable one in `why`.
  static std::vector<std::unique_ptr<VariantLauncher>>
  createAll(Driver *drv, const std::vector<VariantSpec> &variants,
            size_t numParams, CUmodule module, CUcontext ctx, int device,
            int cc, bool fromCubin, std::string &why);
  ~VariantLauncher(); // frees the device copies (pushes ctx)

  /// Whether the variant's selection rules ("max_tiles"; "coarsen":
  /// useCoarseTiles with TILE_GEMM_TILE, and with the cost model no other
  /// coarse variant of the kernel coarseFaster; "split": no other split
  /// variant coarseFaster, or with TILE_GEMM_TILE none before it) take a
  /// launch of grid (gx, gy, gz) (a split-K variant: see slices()).
  bool accepts(int64_t gx, int64_t gy, int64_t gz) const;
  /// A split-K variant's K-slices for this launch (splitKSlices, or
  /// narrowSlices for a narrow one, with K read from the args' memref
  /// descriptors and TILE_SPLIT_K); 0: not this variant (always with
  /// TILE_GEMM_TILE=large; a narrow one also with "user" or when a row
  /// param has more than max_rows rows). 1 for other variants.
  int64_t slices(void *const *args, int64_t gx, int64_t gy, int64_t gz) const;
  /// The workspace bytes of a launch of `tiles` tiles and `slices` slices.
  size_t workspaceBytes(int64_t tiles, int64_t slices) const;
  /// A workspace of at least `bytes` for a launch on `stream` (call under
  /// prepare()'s lock): one zeroed buffer per stream, at most
  /// kWorkspaceSlots streams (the least recently used one is taken over
  /// after cuCtxSynchronize); grown when a launch needs more (after
  /// cuCtxSynchronize, to at least twice its size, zeroed again). 0 with
  /// `why` on failure.
  CUdeviceptr workspace(CUstream stream, size_t bytes, std::string &why);
  static constexpr size_t kWorkspaceSlots = 4;

  /// The trailing kernel params for this launch: mapPtrs[i] = device copy
  /// of "tma" entry i (args: the CPU-ABI memref descriptors). An operand
  /// that needs a repack (above) is copied on `stream` first and its map
  /// describes the copy. A cache miss
  /// encodes the map, copies it on `stream` and waits for that stream
  /// (so the copy is visible to later launches on any stream). False when
  /// the variant cannot run these tensors (then launch entry.kernel);
  /// `why` says why. Call with the context current.
  /// On success `lock` holds the cache: keep it until cuLaunchKernel has
  /// returned (a cached map is only replaced after cuCtxSynchronize, which
  /// covers launches already enqueued).
  /// `capturing`: `stream` is capturing a CUDA graph, which keeps the map
  /// pointers for every replay and allows no synchronization: only cached
  /// maps are used (a miss or a repack: false, nothing copied or
  /// synchronized; the launch goes to the next variant), and their slots
  /// are pinned for the launcher's lifetime (never replaced: the graph may
  /// be replayed at any time), at most kCacheSlots - kUnpinnedSlots of
  /// them. A launch outside the capture with the same tensors (torch's
  /// warm-up before torch.cuda.graph) caches the maps.
  bool prepare(void *const *args, CUstream stream, bool capturing,
               CUdeviceptr *mapPtrs, std::string &why,
               std::unique_lock<std::mutex> &lock);
  /// Cache slots that graph captures never pin, so that launches outside
  /// captures always find a slot to replace.
  static constexpr size_t kUnpinnedSlots = 16;

  const VariantSpec &spec() const { return spec_; }
  /// The variant's grid for a launch of grid (gx, gy, gz): the same, for
  /// "grid": "sms" min(#SMs, gx*gy*gz) CTAs along x, for split-K with
  /// `slices` S: (gx*gy*gz, S, 1). With "coarsen", over the variant's own
  /// tiles: (ceildiv(gx, cx), ...), or min(#SMs, variantTiles) for "sms"
  /// (the only grid "split" comes with).
  void grid(int64_t gx, int64_t gy, int64_t gz, unsigned out[3],
            int64_t slices = 1) const;
  CUfunction function() const { return fn_; }
  size_t numMaps() const { return spec_.tma.size(); }

private:
  struct Key {
    uint32_t entry = 0, rank = 0;
    uintptr_t base = 0;
    int64_t shape[5] = {}, strides[5] = {};
    bool operator==(const Key &o) const;
  };
  struct Slot {
    Key key;
    uint64_t lastUse = 0;
    bool used = false;
    bool pinned = false; // read by a captured graph: never replaced
  };
  VariantLauncher() = default;
  CUdeviceptr slotPtr(size_t i) const { return slab_ + i * sizeof(TensorMap); }
  /// Repacks the entries with rowElems[i] > 0 into the stream's workspace
  /// (under mu_) and points keys[i] at the copies; false with `why`.
  bool repack(Key *keys, const int64_t *rowElems, uint64_t bytes,
              CUstream stream, std::string &why);

  Driver *drv_ = nullptr;
  CUcontext ctx_ = nullptr;
  CUfunction fn_ = nullptr;
  EncodeTiledFn encode_ = nullptr;
  VariantSpec spec_;
  int sms_ = 0; // multiprocessors of the device (0: unknown)
  /// The "coarsen", "coarse_speedup" and "split" of the kernel's other
  /// usable coarse variants, or of its other split variants for a split
  /// one (set by createAll; empty for others).
  struct Rival {
    int64_t coarsen[3] = {1, 1, 1};
    int64_t speedupPct = kDefaultCoarseSpeedupPct;
    int64_t split = 1;
    bool earlier = false; // before this variant in metadata order
  };
  std::vector<Rival> rivals_;
  struct Workspace {
    uintptr_t stream = 0;
    std::thread::id thread; // for CU_STREAM_PER_THREAD only
    CUdeviceptr ptr = 0;
    size_t bytes = 0;
    uint64_t lastUse = 0;
  };
  Workspace workspaces_[kWorkspaceSlots];
  CUdeviceptr slab_ = 0; // kCacheSlots maps, 128 bytes each (256-aligned base)
  CUfunction packFn_ = nullptr; // spec_.packKernel, if the module has it
  RepackWorkspaces repack_;     // guarded by mu_
  std::mutex mu_;
  Slot slots_[kCacheSlots];
  size_t pinned_ = 0; // slots with `pinned`
  uint64_t clock_ = 0;
};

} // namespace tile::rt::cuda

#endif // TILE_LIB_RUNTIME_CUDAVARIANTS_H
