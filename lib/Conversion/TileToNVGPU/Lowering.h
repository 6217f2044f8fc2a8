//===- Lowering.h - shared state of convert-tile-to-nvgpu -------*- C++ -*-===//
//
// Internal to lib/Conversion/TileToNVGPU. One `KernelLowering` lowers the
// body of one gpu.func (the outlined tile.launch): it owns the on-chip
// buffers' representations and emits per-thread code for every tile op.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_LIB_CONVERSION_TILETONVGPU_LOWERING_H
#define TILE_LIB_CONVERSION_TILETONVGPU_LOWERING_H

#include "tile/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tile::nvgpu_lowering {

inline int64_t numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// A global tensor (a memref in the default memory space).
inline bool isGlobalType(Type t) {
  auto m = dyn_cast<MemRefType>(t);
  return m && !m.getMemorySpace();
}

/// The SM version of a chip name ("sm_90a" -> 90; 0 when not "sm_<N>...").
inline int64_t smVersion(StringRef chip) {
  int64_t v = 0;
  if (!chip.consume_front("sm_"))
    return 0;
  chip = chip.take_while([](char c) { return c >= '0' && c <= '9'; });
  if (chip.getAsInteger(10, v))
    return 0;
  return v;
}

inline Attribute workgroupSpace(MLIRContext *ctx) {
  return gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
}

/// How an on-chip buffer is represented on the GPU.
struct Buffer {
  MemoryScope scope;
  MemRefType type;                 // the tile type (logical shape)
  Value storage;                   // shared: 1-D workgroup view; fragment:
                                   // 1-D per-thread alloca (registers);
                                   // local: per-thread alloca of the shape
  FragmentLayoutAttr layout;       // fragments
  SwizzleAttr swizzle;             // shared (may be null)
  int64_t registers = 0;           // fragments: registers per thread
  int64_t sharedOffset = 0;        // shared: byte offset in dynamic smem
  int64_t stages = 1;              // shared: copies (multi-buffering of a
                                   // tile.pipelined producer), each
  int64_t stageBytes = 0;          // stageBytes apart; `storage` is stage 0
};

/// How a tile.pipelined loop is software-pipelined (planPipelines).
struct PipelinePlan {
  int64_t distance = 0;              // iterations producers run ahead (D);
                                     // producer targets get D + 1 copies
  SmallVector<Operation *> producers; // global->shared copies, issue order
  bool issueFirst = true;            // producers issued before the compute
  // The loop's own facts, for diagnostics after the loop has been lowered
  // (and erased): the map's keys must not be dereferenced then.
  LocationAttr loc;
  int64_t stages = 0;
  /// A stages(1) loop given two stages by a warp-specialized form
  /// (planPipelines): its shared memory is the variant's choice, declined
  /// rather than an error when it does not fit.
  bool promoted = false;
};


class KernelLowering;

/// The shared memory a block may use on a chip (SharedMemory.cpp).
struct SharedMemoryLimit {
  int64_t perBlock = 0; // the chip's opt-in maximum per block
  int64_t dynamic = 0;  // what the kernel's dynamic shared memory may take
  bool known = false;   // the chip is in the table (else 48 KiB assumed)
};
/// NVIDIA's table (GPUTargetInfo's default sharedMemoryLimit).
SharedMemoryLimit getSharedMemoryLimit(StringRef chip);

/// A tile.gemm lowered to wgmma (GemmWgmma.cpp): the static facts
/// planWgmma checked.
struct WgmmaPlan {
  int64_t m = 0, n = 0, k = 0;
  bool bf16 = false;      // else f16 operands
  bool fragmentA = false; // A from registers
  bool aKMajor = true;    // shared A: not transposed
  bool bKMajor = true;    // B transposed ([N x K])
};

/// A target's matrix-core gemm (mma.sync on NVIDIA, MFMA on AMD): emits the
/// gemm and returns success(), or returns failure() with `whyNot` set and
/// nothing emitted (the SIMT gemm is used then).
using MatrixGemmFn = LogicalResult (*)(KernelLowering &, GemmOp,
                                       std::string &whyNot);
LogicalResult lowerGemmMma(KernelLowering &kl, GemmOp op,
                           std::string &whyNot);

/// What differs between the GPUs this per-thread lowering serves; the
/// defaults are NVIDIA's (convert-tile-to-nvgpu). AMD's (wave64, MFMA) are
/// set by convert-tile-to-amdgpu (lib/Conversion/TileToROCDL).
struct GPUTargetInfo {
  std::string chip;
  /// The chip whose shared memory limit the kernels are checked against
  /// (empty: `chip`): the CUDA C++ of an sm_90a bundle is the sm_80
  /// lowering, compiled by NVRTC for the device's own arch.
  std::string sharedMemoryChip;
  /// Lanes of a warp (NVIDIA: 32) or wavefront (AMD CDNA: 64).
  int64_t waveSize = 32;
  MatrixGemmFn matrixGemm = lowerGemmMma;
  /// The chip's shared memory (LDS) limit, checked at compile time.
  SharedMemoryLimit (*sharedMemoryLimit)(StringRef chip) = getSharedMemoryLimit;
  /// cp.async global->shared copies (sm_80+), which multi-stage
  /// tile.pipelined software pipelines are built on.
  bool asyncCopy = true;
  /// A target's own global -> shared tile.copy (AMD: 16-byte loads through
  /// registers), tried first when set; failure(): nothing emitted.
  LogicalResult (*copyToShared)(KernelLowering &, CopyOp) = nullptr;
  /// Also build a warp-specialized variant of kernels with software
  /// pipelines (sm_90a: mbarriers, setmaxnreg; WarpSpecialize.cpp).
  bool warpSpecialize = false;
  /// In that variant, two consumer warpgroups take turns at issuing a
  /// rotated loop's wgmma gemms (named barriers 2 and 3; WarpSpecialize.cpp).
  bool warpSpecializePingPong = true;
  /// Also build the variant whose producer issues TMA loads (TmaCopy.cpp),
  /// launched before the cp.async one when the runtime can encode its maps.
  bool warpSpecializeTma = true;
  /// Make those variants persistent when they hold a multiprocessor alone
  /// (PersistentTiles.cpp): one CTA per SM loops over the launch's blocks.
  bool warpSpecializePersistent = true;
  /// In the persistent form, two stages per head copy (when they fit), so
  /// that the next block's head tiles load during this block's loop.
  bool warpSpecializeDoubleHeads = true;
};

/// A software pipeline's global -> shared copy issued as TMA loads by the
/// warp-specialized variant's producer (TmaCopy.cpp): per stage, one
/// mbarrier.arrive.expect_tx of `bytes` and `boxes` loads of one box each.
struct TmaCopyPlan {
  unsigned param = 0;         // the global tensor's kernel parameter
  Type elementType;
  SmallVector<int64_t> box;   // innermost first, one per tensor dim
  int64_t swizzleBytes = 0;   // 0 (none), 32, 64 or 128
  int64_t boxes = 1;          // boxes side by side along the innermost dim
  int64_t boxElements = 0;    // innermost elements of one box
  int64_t boxBytes = 0;       // shared bytes of one box
  int64_t bytes = 0;          // the tile's bytes (the expected tx count)
  Value map;                  // the kernel parameter holding the map
};

/// The TMA plan of `op` (a producer copy of a software pipeline in `func`),
/// or nullopt with `whyNot` set: its global side must be a kernel parameter
/// (row-major, rank <= 5, the tile's element type), the tile's innermost
/// dim the tensor's, and its shared layout one TMA writes (TmaCopy.cpp).
std::optional<TmaCopyPlan> planTmaCopy(CopyOp op, gpu::GPUFuncOp func,
                                       std::string &whyNot);
/// Emits `plan`'s loads into the stage at byte `stageAddress` (an index:
/// the shared address), completing on the mbarrier at `mbar` (a shared
/// pointer), from the tensor's element `start` (one index per dim).
void emitTmaLoads(OpBuilder &b, Location loc, const TmaCopyPlan &plan,
                  ValueRange start, Value stageAddress, Value mbar);

/// The warp-specialized form of a kernel (WarpSpecialize.cpp): the launch's
/// `threads` are the consumers (whole warpgroups); one producer warpgroup
/// after them issues the copies of every software-pipelined loop, handing
/// each stage over through a pair of mbarriers per copy and stage.
struct WarpSpecializedKernel {
  static constexpr int64_t kProducerThreads = 128;
  /// setmaxnreg of the producer warpgroup: its cp.async address and bounds
  /// arithmetic for 16 chunks per thread of a 128x128 16-bit tile spills
  /// below 96 (ptxas -v, FlashAttention 128x128: 40 -> 184 bytes, 56 -> 108,
  /// 96 -> none); the consumers of a 256-thread launch keep 200.
  static constexpr int64_t kProducerRegisters = 96;
  /// With TMA (`tma`), one producer thread issues the loads and keeps only
  /// its loop counters and coordinates: 24 registers (setmaxnreg's
  /// minimum) leave the consumers of a 256-thread launch 240.
  static constexpr int64_t kTmaProducerRegisters = 24;
  int64_t consumers = 0;      // consumer threads (the launch's threads)
  /// The producer copies are TMA loads (TmaCopy.cpp, one plan per copy):
  /// full barriers take one arrival (expect_tx) instead of 2 x 128.
  bool tma = false;
  llvm::DenseMap<Operation *, TmaCopyPlan> tmaCopies;
  Block *consumerBlock = nullptr; // then-block of the role split
  Block *producerBlock = nullptr; // else-block (the copies are appended)
  Value producerTid;              // tid - consumers, in the producer block
  llvm::DenseSet<Operation *> producerCopies; // lowered by the producer
  /// One full/empty mbarrier group per (loop, producer copy): stages each.
  llvm::DenseMap<Operation *, std::pair<Value, Value>> barriers;
  int64_t barrierBytes = 0; // the mbarriers and slots (barrierStorage)
  /// The TMA form's head copies (collectHeadCopies): global -> shared
  /// copies before the first pipelined loop into buffers nothing else
  /// writes, which the producer also issues (one stage each), in order.
  SmallVector<Operation *> headCopies;
  /// The persistent form (PersistentTiles.cpp; the TMA form of a block
  /// that holds a multiprocessor alone): each pipelined loop keeps its next
  /// (slot, phase) in a per-thread memref<2xindex>, so that stages and
  /// parities continue from one block to the next, and the producer thread
  /// hands the consumers each block's index through `tileSlots` (two
  /// slots, full/empty mbarrier pairs).
  bool persistent = false;
  Value tileFull, tileEmpty, tileSlots;
  /// In the persistent form, each head copy's buffer has two stages, so
  /// that the producer loads the next block's tile (FlashAttention's Q)
  /// while the consumers still read this block's, and the next block's
  /// first pipeline stages follow at once instead of after this block's
  /// loop. A head copy's per-thread counter n (0..2 * stages - 1) then
  /// gives its stage n % stages and parity n / stages. Declined
  /// (KernelLowering::declinedDoubleHeads) when the second stage does not
  /// fit in shared memory.
  bool doubleHeads = false;
  int64_t headStages() const { return doubleHeads ? 2 : 1; }

  /// Blocks per multiprocessor the kernel is compiled for (nvvm.minctasm,
  /// KernelLowering::chooseBlocksPerSm): 2 or 3 for one consumer warpgroup
  /// of the TMA form when that many fit, else 1.
  int64_t ctasPerSm = 1;

  /// Registers per thread at launch (65536 / ctasPerSm / threads, rounded
  /// down to 8) and the consumers' after setmaxnreg (the producer giving
  /// most of its share to them); setmaxnreg is used when the second is
  /// larger, and `ctasPerSm` blocks then share a multiprocessor's registers.
  std::pair<int64_t, int64_t> registerBudget() const {
    return registerBudget(ctasPerSm);
  }
  std::pair<int64_t, int64_t> registerBudget(int64_t blocksPerSm) const {
    int64_t total = consumers + kProducerThreads;
    int64_t perThread =
        std::min<int64_t>(256, 65536 / blocksPerSm / total / 8 * 8);
    int64_t producerRegs = tma ? kTmaProducerRegisters : kProducerRegisters;
    int64_t budget = std::min<int64_t>(
        240, (perThread * total - kProducerThreads * producerRegs) /
                 consumers / 8 * 8);
    return {perThread, budget};
  }
};

/// A rotation of a warp-specialized loop's last wgmma gemm G2 into the next
/// iteration, after the first gemm G1 (WarpSpecialize.cpp): FlashAttention's
/// P.V of key tile i - 1 overlaps the softmax of tile i.
struct GemmRotation {
  GemmOp first, last;           // G1, G2
  Value stage;                  // G2's B: a stage of the loop
  Operation *producer = nullptr; // the copy filling `stage`
  /// The first op after G1 that touches G2's C or A (null: none before
  /// G2): G2 must be complete there.
  Operation *waitAt = nullptr;
};

/// Outlines every tile.kernel of `module` into a gpu.module/gpu.func and
/// lowers its body for `target`; sets the metadata's shared_bytes.
LogicalResult outlineAndLowerKernels(ModuleOp module,
                                     const GPUTargetInfo &target,
                                     bool remarks);

class KernelLowering {
public:
  KernelLowering(gpu::GPUFuncOp func, int64_t threads,
                 const GPUTargetInfo &target);

  /// Asks run() to build the warp-specialized form. run() then either
  /// builds it (`specialized` set) or fails with `declinedSpecialization`
  /// set and nothing lowered (the caller drops the function);
  /// `whyNotSpecialized` is the remark (empty: the kernel has no
  /// tile.pipelined loop, nothing to say).
  /// wgmma gemms issued without waiting for them (a rotated loop's G1 and
  /// G2): their accumulators are stored as the asm defines them and become
  /// valid at a wgmma.wait_group listed in wgmmaWaitFences, which fences
  /// the registers of the buffers it names.
  llvm::DenseSet<Operation *> asyncWgmma;
  llvm::DenseMap<Operation *, SmallVector<Value>> wgmmaWaitFences;
  /// The warp-specialized form's consumer warpgroups take turns at issuing
  /// a rotated loop's gemms (GPUTargetInfo::warpSpecializePingPong).
  bool pingPong = true;
  bool requestWarpSpecialization = false;
  /// With requestWarpSpecialization: the producer issues TMA loads (the
  /// variant then takes one tensor map per producer copy, `tmaMaps`, as
  /// parameters after the kernel's); declined when a copy cannot be one.
  bool requestTma = false;
  bool declinedTma = false; // a copy cannot be TMA loads (whyNotSpecialized)
  SmallVector<TmaDescAttr> tmaMaps;
  std::optional<WarpSpecializedKernel> specialized;
  bool declinedSpecialization = false;
  std::string whyNotSpecialized;
  /// With requestWarpSpecialization: prepare the form for makePersistent.
  bool requestPersistent = false;
  /// In the persistent form, give head copies two stages
  /// (WarpSpecializedKernel::doubleHeads); `declinedDoubleHeads`: they do
  /// not fit, run() failed without a diagnostic and the caller lowers the
  /// kernel again without them.
  bool requestDoubleHeads = false;
  bool declinedDoubleHeads = false;

  /// After run(), when `specialized->persistent`: turns the kernel into a
  /// persistent one (PersistentTiles.cpp) whose CTAs loop over `launch`'s
  /// blocks (`args` maps the host kernel's arguments to the gpu.func's),
  /// taking a workspace parameter after the maps. Fails (diagnosed) only
  /// when the launch's grid cannot be recomputed in the kernel.
  LogicalResult makePersistent(LaunchOp launch, IRMapping &args);

  /// Lowers every tile op of the function body. Returns the dynamic shared
  /// memory bytes the kernel uses.
  FailureOr<int64_t> run();

  //===--- helpers (also used by the fast paths in other files) ---------===//
  Value cst(int64_t v);
  Value i32(int64_t v);
  Value zeroOf(Type t);
  Value convert(Value v, Type to);
  Value expand(AffineExpr e, ValueRange dims);
  SmallVector<Value> applyMap(AffineMap map, ValueRange dims);
  /// `map` with dim `pos` replaced by the constant `value`, simplified.
  AffineMap fixDim(AffineMap map, unsigned pos, int64_t value);
  Value linearize(ArrayRef<int64_t> shape, ValueRange idx);
  SmallVector<Value> delinearize(ArrayRef<int64_t> shape, Value linear);
  void barrier();

  /// Register-slot iteration of a fragment (unrolled when small).
  void forEachRegister(int64_t regs, function_ref<void(Value, int64_t)> fn);
  /// The registers of fragment `buf` with their tile index, each element
  /// once in the block: in a replicated layout only its canonical owner
  /// thread (the thread map's) runs `fn` for it.
  void forEachOwnedRegister(const Buffer &buf,
                            function_ref<void(Value, ArrayRef<Value>)> fn);
  /// The trip count of a loop from `lb` to `ub` by `step` (0 when
  /// ub <= lb).
  Value tripCount(Value lb, Value ub, Value step);
  /// Elements [0, n) distributed over threads (l = tid + k * threads).
  void forEachLinear(int64_t n, function_ref<void(Value)> fn);
  /// Serial loop nest over a whole tile in the current thread.
  void forEachSerial(ArrayRef<int64_t> shape,
                     function_ref<void(ValueRange)> fn);

  /// Tile index held by register `r` of thread `tid` (fragment).
  SmallVector<Value> fragmentIndex(const Buffer &buf, Value r, int64_t rConst);
  /// Shared element index (1-D, swizzled) of a tile index.
  Value sharedIndex(const Buffer &buf, ValueRange idx);
  Value loadOnChip(const Buffer &buf, ValueRange idx);
  void storeOnChip(const Buffer &buf, ValueRange idx, Value v);
  Value loadRegister(const Buffer &buf, Value slot);
  void storeRegister(const Buffer &buf, Value slot, Value v);
  /// Global element `start + idx` or zero when out of bounds.
  Value loadGlobal(Value mem, ValueRange start, ValueRange idx, Type eltType);
  /// Stores `v` at `start + idx` unless out of bounds.
  void storeGlobal(Value mem, ValueRange start, ValueRange idx, Value v);
  Value inBounds(Value mem, ValueRange gidx);
  void ifThen(Value cond, function_ref<void()> fn);

  /// A scratch view in dynamic shared memory (reused between ops; callers
  /// put barriers around its use).
  Value scratch(Type eltType, int64_t elements, int64_t byteOffset = 0);
  /// Whether thread t holds element idx (by enumeration) for all (t, r) of
  /// the iteration `driver`. Used for the register fast paths.
  bool holdsAll(const Buffer &driver, const Buffer &other);

  Buffer *lookup(Value v) {
    auto it = buffers.find(v);
    return it == buffers.end() ? nullptr : &it->second;
  }

  OpBuilder b;
  Location loc;
  gpu::GPUFuncOp func;
  int64_t threads;
  std::string chip;
  /// GPUTargetInfo::sharedMemoryChip, or `chip`.
  std::string sharedMemoryChip;
  int64_t waveSize;       // GPUTargetInfo::waveSize
  MatrixGemmFn matrixGemm; // GPUTargetInfo::matrixGemm
  SharedMemoryLimit (*sharedMemoryLimit)(StringRef); // GPUTargetInfo's
  bool asyncCopy;                                     // GPUTargetInfo's
  LogicalResult (*copyToShared)(KernelLowering &, CopyOp); // GPUTargetInfo's
  bool remarks = false; // remarks on slow general paths (pass option)
  bool hopperVariants = false; // the kernel has sm_90a variants
  Value tid, laneId, warpId; // lane/warp of waveSize lanes
  Value smem; // memref<?xi8, workgroup>
  int64_t sharedBytes = 0;
  int64_t scratchBytes = 0;
  llvm::DenseMap<Value, Buffer> buffers;

  /// tile.pipelined software pipelining (lowerPipelined): multi-buffered
  /// shared buffers (alloc -> copies), the per-op storage of those buffers
  /// (a view of the stage being written/read), and the producer copies that
  /// only issue cp.async (the pipeline commits and waits).
  llvm::DenseMap<Value, int64_t> multiBuffered;
  llvm::DenseMap<Operation *, SmallVector<std::pair<Value, Value>>>
      storageOverrides;
  llvm::DenseSet<Operation *> asyncCopies;
  llvm::DenseMap<Operation *, PipelinePlan> pipelines;
  /// Versioned pipelines (lowerPipelined): the fast version's cp.async
  /// producers, and the fallback versions.
  llvm::DenseMap<Operation *, SmallVector<Operation *>> fastPipelines;
  llvm::DenseSet<Operation *> fallbackPipelines;
  /// cp.async copies known to be aligned (no runtime check) and their
  /// predicate (false: a zero-byte copy).
  llvm::DenseSet<Operation *> alignedCopies;
  llvm::DenseMap<Operation *, Value> copyGuards;
  /// Gemms lowered to wgmma (planned before the buffers are created: their
  /// shared operands start on 1024-byte boundaries).
  llvm::DenseMap<Operation *, WgmmaPlan> wgmmaPlans;
  llvm::DenseSet<Value> wgmmaOperands; // their shared operands (aligned)
  /// The view of copy `slot` (index value) of a multi-buffered buffer.
  Value stageView(const Buffer &buf, Value slot);
  /// The thread's warpgroup (tid / 128, i32), computed once at the kernel's
  /// entry and broadcast from lane 0 (shfl.sync.idx), so that ptxas knows it
  /// is uniform in the warp: values derived from it (wgmma descriptors,
  /// the ping-pong turn) stay in uniform registers.
  Value uniformWarpgroup();
  Value uniformWarpgroupValue;

  /// Whether `op` (a block-level op) writes a shared buffer: a tile op with
  /// a shared target, a block-level tile.atomic / memref.store into one, or
  /// a tile.parallel whose body stores or atomically updates one. Such ops
  /// are bracketed by barriers (run()).
  bool writesSharedMemory(Operation *op);

private:
  static void removeRedundantBarriers(gpu::GPUFuncOp func);
  /// Fails with a diagnostic naming the bytes and the chip's limit when
  /// `bytes` (of which `scratch` is the lowering's scratch) do not fit.
  LogicalResult checkSharedMemory(int64_t bytes, int64_t scratch);
  LogicalResult createBuffers();
  void planPipelines();
  LogicalResult lowerPipelined(PipelinedOp op);
  /// Warp specialization (WarpSpecialize.cpp): the static conditions, the
  /// role split (after createBuffers), a pipelined loop's two halves, and
  /// the consumer-only barriers and register budgets at the end.
  bool canWarpSpecialize(std::string &whyNot);
  /// The TMA plans of every producer copy (requestTma), with their map
  /// parameters appended to the function; false with `whyNot` set.
  bool planTmaProducer(std::string &whyNot);
  void splitRoles(Operation *firstBodyOp);
  /// A view of `type` in the barrier area at the end of the dynamic shared
  /// memory (WarpSpecialize.cpp); `createMBarriers`: `count` mbarriers
  /// there, as an nvgpu mbarrier group.
  Value barrierStorage(MemRefType type);
  /// The barrier area's bytes (0 without warp specialization).
  int64_t barrierBytes() const {
    return specialized ? specialized->barrierBytes : 0;
  }
  Value createMBarriers(int64_t count);
  /// Marks barrierStorage's views until their offsets are final.
  static constexpr llvm::StringLiteral kBarrierViewAttr = "tile.barriers";
  /// The copies the TMA producer may take from the consumers (see
  /// WarpSpecializedKernel::headCopies), in program order.
  SmallVector<Operation *> collectHeadCopies();
  /// Replaces each head copy by the consumers' wait for it (and their
  /// release after the buffer's last top-level reader), and appends its
  /// TMA issue to the producer (after splitRoles, before the pipelines).
  void lowerHeadCopies();
  LogicalResult lowerPipelinedSpecialized(PipelinedOp op);
  std::optional<GemmRotation> planGemmRotation(PipelinedOp op,
                                               const PipelinePlan &plan);
  void finishWarpSpecialization();
  /// Sets specialized->ctasPerSm (1 to 3) for a block of `sharedBytes`.
  void chooseBlocksPerSm(int64_t sharedBytes);
  LogicalResult lowerCopy(CopyOp op);
  LogicalResult lowerFill(Operation *op, Value buffer, Value value);
  LogicalResult lowerGemm(GemmOp op);
  LogicalResult lowerReduce(ReduceOp op);
  LogicalResult lowerParallel(ParallelOp op);
  LogicalResult lowerAtomic(AtomicOp op, bool guard);
  LogicalResult lowerAtomicTile(AtomicTileOp op);
  LogicalResult rewriteAccesses(Operation *root, bool fragmentsInRegisters,
                                llvm::DenseMap<Value, Value> *scratchViews);
  void fragmentToScratch(const Buffer &buf, Value view);
  void scratchToFragment(const Buffer &buf, Value view);
};

/// The pure ops of `loop`'s body that the operands of `producer` need, in
/// body order (cloned ahead of the iteration that uses them).
SmallVector<Operation *> producerSlice(PipelinedOp loop, Operation *producer);

/// Fast paths. Return failure() when they do not apply (nothing was emitted
/// then).
/// mma.sync (Gemm.cpp, GPUTargetInfo's default matrixGemm): A from shared
/// (ldmatrix) or from a fragment in the mma A-operand register layout.
/// wgmma (GemmWgmma.cpp, sm_90a): the plan when `op` can be one warpgroup
/// MMA chain per warpgroup (static conditions on chip, types and layouts),
/// else nullopt with `whyNot` saying why.
std::optional<WgmmaPlan> planWgmma(GemmOp op, StringRef chip,
                                   std::string &whyNot);
/// Emits the planned gemm (C's clear included).
void lowerGemmWgmma(KernelLowering &kl, GemmOp op, const WgmmaPlan &plan);
/// After a wgmma.wait_group: the registers of `buffer` (an accumulator of
/// an asynchronous wgmma gemm) pass through an empty asm, so nothing that
/// reads them is scheduled before the wait.
void fenceWgmmaRegisters(KernelLowering &kl, Buffer &buffer);
/// cp.async (CopyAsync.cpp): 16-, 8- or 4-byte copies of a global tile into
/// a shared buffer, the widest the launch's alignment allows (a runtime
/// check); emits `scalarPath` for what no width fits.
/// With `commitAndWait` false (producers of a software pipeline) only the
/// cp.async are issued; the caller commits the group and waits.
LogicalResult lowerCopyAsync(KernelLowering &kl, CopyOp op,
                             function_ref<void()> scalarPath,
                             bool commitAndWait = true);
/// Global -> shared through registers for a source no cp.async width fits
/// (e.g. f16 rows of an odd length): 16-byte chunks of predicated element
/// loads, each stored as one vector; failure() when the tile does not split
/// into whole chunks per thread (nothing emitted then).
LogicalResult lowerCopyStaged(KernelLowering &kl, CopyOp op);
/// The chunk size in elements of `chunkBytes`-byte cp.async copies when
/// `op` (global -> shared) can be one at all (static conditions), else
/// nullopt.
std::optional<int64_t> copyAsyncVector(KernelLowering &kl, CopyOp op,
                                       int64_t chunkBytes = 16);
/// The runtime condition of the cp.async path except the start column's
/// alignment: the source's rows are whole chunks, its base is chunk-aligned.
Value copyAsyncAligned(KernelLowering &kl, CopyOp op, int64_t chunkBytes = 16);

} // namespace mlir::tile::nvgpu_lowering

#endif // TILE_LIB_CONVERSION_TILETONVGPU_LOWERING_H
