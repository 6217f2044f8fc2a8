//===- Metadata.h - Kernel metadata parsed into a launch plan -------------===//
//
// The bundle's metadata JSON is parsed and validated once, at load time, into
// a KernelPlan: everything a launch needs (per-parameter checks and access,
// symbol indices, compiled grid, the layout of the per-call frame, the
// hardware-specific variants) in flat arrays. Nothing else in the runtime
// reads the JSON; the C API and the Python package read the plan.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_LIB_RUNTIME_METADATA_H
#define TILE_LIB_RUNTIME_METADATA_H

#include "Common.h"
#include "GridExpr.h"

#include <string>
#include <vector>

namespace tile::rt {

enum class ScalarType : uint8_t { None, I32, I64, F32, F64 };
/// The target kinds of TILE_TARGETS (tile_targets.h), same values.
enum class TargetKind : uint8_t {
  Cpu = TILE_TARGET_CPU,
  Cuda = TILE_TARGET_CUDA,
  Hip = TILE_TARGET_HIP,
  Metal = TILE_TARGET_METAL
};

struct ParamPlan {
  std::string name;
  bool isTensor = false;
  bool output = false;  // metadata "output"
  /// metadata "access" (TILE_ACCESS_*; absent: READWRITE, the safe guess);
  /// READ for scalars.
  int32_t access = TILE_ACCESS_READ;
  bool inplace = false; // metadata "inplace": may alias another param
  int32_t outSlot = -1; // position in out_idx, -1 if not listed
  std::string dtypeName;
  DLDataType dtype{};
  int64_t elemBytes = 0;
  ScalarType scalar = ScalarType::None;
  int32_t rank = 0;
  std::vector<int64_t> shape;       // -1 = dynamic
  std::vector<std::string> dims;    // symbol names
  std::vector<const char *> dimPtrs; // c_str of dims, for the C API
  std::vector<int32_t> dimSym;      // symbol index per dim
  size_t slotOffset = 0; // frame offset of the memref / scalar slot

  /// Whether the kernel may write the tensor's memory.
  bool written() const { return (access & TILE_ACCESS_WRITE) != 0; }
};

/// One "tma" entry of a variant (names as in the metadata; the device layer
/// maps them to its driver's values).
struct TmaPlan {
  int32_t param = -1; // a tensor param of the same rank, 1..5
  std::string dtype;  // same element size as the param's dtype
  int32_t rank = 0;
  std::vector<int64_t> box;            // rank entries in 1..256
  std::vector<int64_t> elementStrides; // rank entries in 1..8 (default 1)
  std::string interleave = "none", swizzle = "128B", l2Promotion = "256B",
              oobFill = "zero";
  /// The kernel also runs without this map: a launch the map cannot
  /// describe gets a null pointer instead of another variant.
  bool optional = false;
};

/// A hardware-specific alternative kernel (docs/bundle.md, "Kernel
/// variants") of a kind this runtime knows; variants of other kinds are
/// dropped at load (entry.kernel always implements the launch).
struct VariantPlan {
  std::string kind, chip, kernel;
  int64_t block[3] = {1, 1, 1};
  int64_t sharedBytes = 0;
  bool gridSms = false;  // "grid": "sms" (persistent) instead of "launch"
  int64_t maxTiles = 0;  // "max_tiles", 0 = any launch
  std::string schedule; // informational
  /// "split_k": a split-K kernel launched with grid (tiles, S, 1); the
  /// reduction extent is dim `kDim` of tensor param `kParam`, counted in
  /// units of `blockK` (kParam < 0: not split-K).
  int32_t kParam = -1, kDim = 0;
  int64_t blockK = 0;
  /// "split_k"."slice_bytes": the split-K workspace's bytes per tile and
  /// slice (required with "split_k").
  int64_t sliceBytes = 0;
  /// "workspace_bytes": zero-initialised device scratch passed as the last
  /// kernel param (after the tensor maps): this plus, for a split-K launch
  /// of T tiles and S slices, T * S * sliceBytes; no param when both are 0.
  int64_t workspaceBytes = 0;
  /// "pack" or "pack2": {"kernel", "elem_bytes"}: the bundle's strided-copy
  /// kernel the runtime may use to repack a read-only operand whose row
  /// pitch or base TMA cannot describe into an aligned workspace
  /// (CudaRepack.h); empty: none. packOperands: the operands one launch of
  /// it copies (1 for "pack", 2 for "pack2").
  std::string packKernel;
  int32_t packElemBytes = 0;
  int32_t packOperands = 1;
  /// "coarsen": launch blocks per variant tile along x, y, z (each in
  /// 1..65535; not with split_k): the variant runs ceildiv(gx, cx) *
  /// ceildiv(gy, cy) * ceildiv(gz, cz) tiles, chosen per launch by the
  /// tile-shape cost model (CudaVariants.h, useCoarseTiles).
  int64_t coarsen[3] = {1, 1, 1};
  /// "coarse_speedup": with "coarsen", the compiler's estimate in percent
  /// (100..10000) of how much faster a launch block runs in a coarse tile;
  /// 0 (absent): the cost model's default (useCoarseTiles).
  int64_t coarseSpeedup = 0;
  /// "split": with "coarsen" and "grid": "sms", CTA tiles per launch block
  /// (2..64; launch tiles of more than 128 rows in 128-row parts): the
  /// variant runs split times the tiles "coarsen" gives, and is one of the
  /// kernel's split variants, one of which runs every launch
  /// (CudaVariants.h). 1 (absent): none.
  int64_t split = 1;
  /// "max_rows": {"rows": R, "params": [p, ...]}: used only for launches
  /// in which dim 0 of each tensor param p is at most R (the narrow kernel
  /// of skinny GEMMs); maxRows 0: any launch. With split_k it needs no
  /// max_tiles: its own cost model picks the slices (CudaVariants.h).
  int64_t maxRows = 0;
  std::vector<int32_t> rowParams;
  std::vector<TmaPlan> tma;
  std::vector<tile_tma_info> tmaInfo; // views of `tma` for the C API
};

/// Layout of the per-launch scratch frame (see Launch.cpp). Offsets in bytes.
struct FrameLayout {
  size_t args = 0;      // void *[nparams]: block-function args
  size_t tensors = 0;   // DLTensor *[nparams]
  size_t scalarPtrs = 0; // void *[nparams]: native scalars
  size_t allocated = 0; // DLManagedTensor *[nparams]
  size_t syms = 0;      // int64_t[nsyms]
  size_t scalarInts = 0; // int64_t[nparams]: int scalars for the grid
  size_t slots = 0;     // memref descriptors and scalar slots
  size_t total = 0;
};

struct KernelPlan {
  // The C-API views (dimPtrs, tmaInfo) point into the plan's vectors: a
  // move keeps them valid, a copy would not.
  KernelPlan() = default;
  KernelPlan(KernelPlan &&) = default;
  KernelPlan &operator=(KernelPlan &&) = default;
  KernelPlan(const KernelPlan &) = delete;
  KernelPlan &operator=(const KernelPlan &) = delete;

  std::string metadataText; // NUL-terminated copy for the C API
  std::string name, compiler;
  std::string targetKindName, targetChip, targetFeatures;
  TargetKind target = TargetKind::Cpu;
  int32_t deviceType = kDLCPU;
  std::vector<ParamPlan> params;
  std::vector<int32_t> outIdx;
  std::vector<int32_t> inputParams; // params not in out_idx, in order
  std::vector<std::string> symbols;
  GridExpr grid[3];
  std::string gridText[3]; // GridExpr::format, for the C API
  int64_t block[3] = {1, 1, 1};
  int64_t sharedBytes = 0;
  std::string entryBlocks, entryNative, entryKernel;
  std::vector<VariantPlan> variants;
  bool anyWritten = false; // some tensor param is written: check overlaps
  FrameLayout frame;
};

/// Parses and validates metadata, variants included: the one place that
/// reads the metadata JSON. On failure returns false with a message naming
/// the offending field ("metadata: params[1].rank must be ...").
bool parseMetadata(std::string_view text, KernelPlan &plan,
                   std::string &error);

} // namespace tile::rt

#endif // TILE_LIB_RUNTIME_METADATA_H
