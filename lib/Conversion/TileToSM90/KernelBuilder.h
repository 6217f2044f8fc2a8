//===- KernelBuilder.h - the Hopper GEMM kernel skeleton ------*- C++ -*-===//
//
// Internal to lib/Conversion/TileToSM90 (convert-tile-gemm-to-sm90). A
// KernelBuilder emits the body of one sm90 kernel variant for a matched
// GEMM (Analysis/GemmMatch.h) following its plan (Analysis/
// WarpSpecialization.h). The skeleton (KernelBuilder.cpp) is the same for
// every schedule:
//
//   mapLaunch                        block indices -> the tile origins
//   dynamic shared memory, base rounded up to 1024 bytes (128B swizzle)
//   tensor maps; full[s] / empty[s] mbarriers; TMA prefetch; barrier
//   nIter = ceildiv(loop trip count, 64 / KT)     (hardware K tiles)
//   if (warpgroup >= consumers) {    the producer warpgroup
//     setmaxnreg.dec; if (its first thread) producer()
//                     (without TMA, ws.ldgLoads: all its threads)
//   } else {                         the consumer warpgroups
//     setmaxnreg.inc; consumer()
//   }
//
// Shared memory (sharedBytes): `stages` stage buffers, each A (TMx64, one
// TMA box) then B (64 x loadN(), boxes of 64x64; transpose_b: loadN() x 64,
// K-major like A, boxes of 64 rows), and the epilogue's
// staging buffers, over the stage buffers or after them. Stage s of pipeline iteration g is
// s = g % stages: the producer waits empty[s] (parity !(round & 1); a fresh
// barrier passes parity 1), arrives on full[s] expecting the stage's
// transaction bytes and issues the loads (emitLoad); a consumer waits
// full[s] (parity round & 1), runs warpgroup.mma and, once wait_group 1
// says the previous stage is no longer read, arrives on that stage's
// empty barrier (mainLoop).
//
// The K tile is 64 (one 128-byte swizzle row) whatever the loop's KT: the
// loop runs ceildiv(K, KT) iterations of KT, i.e. ceildiv(that, 64/KT)
// hardware iterations; the columns past K are zero-filled by TMA (the
// matcher checks that the trip count is ceildiv(K, KT), so nothing past
// the last KT tile is inside K).
//
// The schedules, one builder each (createKernelBuilder picks from the
// plan):
//   CooperativeKernel (Cooperative.cpp)  one output tile per CTA; the
//       consumer warpgroups split its rows; epilogue through an f32
//       staging tile in the (then idle) stage buffers.
//   PersistentKernel (Persistent.cpp)    one CTA per SM looping over the
//       tiles; epilogue straight from the accumulator registers.
//       With ws.tmaStore (TmaStore.cpp), the epilogue goes through
//       swizzled staging buffers and asynchronous TMA stores instead.
//   PingPongKernel (PingPong.cpp)        persistent; two consumer
//       warpgroups alternate whole units of the tiles.
//   SplitKKernel (SplitK.cpp)            grid (tiles, S): CTA (t, s) runs
//       K-slice s of tile t; the slices' f32 partials are summed by a
//       binary tree through the workspace (no waiting), the root applies
//       the epilogue.
//   WideTileKernel (WideTile.cpp)        persistent; each CTA tile is R x C
//       launch blocks (128x256, coarseTile; A tiles shared along a row).
//
//===----------------------------------------------------------------------===//

#ifndef TILE_LIB_CONVERSION_TILETOSM90_KERNELBUILDER_H
#define TILE_LIB_CONVERSION_TILETOSM90_KERNELBUILDER_H

#include "tile/Conversion/TileToSM90/Analysis/WarpSpecialization.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <algorithm>
#include <memory>

namespace mlir::tile::sm90 {

/// The skeleton every schedule shares (see the file comment).
class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, const GemmMatch &m,
                const WarpSpecialization &ws)
      : b(b), loc(loc), m(m), ws(ws), ctx(b.getContext()) {}
  virtual ~KernelBuilder() = default;

  /// Emits the kernel body at the builder's insertion point. `mapping`
  /// maps the tile kernel's arguments to the gpu.func's; `tensorMaps` are
  /// the trailing CUtensorMap pointer params (numTensorMaps() of them);
  /// `workspaceParam` the last param when takesWorkspace().
  LogicalResult build(IRMapping &mapping, ArrayRef<Value> tensorMaps,
                      Value workspaceParam = {});

  /// Tensor-map params the kernel takes: A's and B's (and C's for the
  /// TMA-store epilogue, ws.tmaStore); none for loads without TMA
  /// (ws.ldgLoads).
  unsigned numTensorMaps() const {
    return ws.ldgLoads ? 0 : ws.tmaStore ? 3 : 2;
  }
  /// The zero-initialised device workspace the kernel takes as its last
  /// param (an !llvm.ptr after the tensor maps): workspaceBytes() plus, for
  /// a split-K launch of T tiles and S slices, T * S *
  /// workspaceSliceBytes() (the runtime sizes it per launch); none when
  /// both are 0.
  virtual int64_t workspaceBytes() const { return 0; }
  virtual int64_t workspaceSliceBytes() const { return 0; }
  bool takesWorkspace() const {
    return workspaceBytes() > 0 || workspaceSliceBytes() > 0;
  }
  /// Dynamic shared memory the kernel uses: 1 KiB of alignment slack, the
  /// stage buffers and the epilogue's staging buffers.
  int64_t sharedBytes() const {
    return 1024 + std::max(ws.stages * stageBytes(), stagingOverStages()) +
           stagingAfterStages();
  }

protected:
  //===--- the schedule -------------------------------------------------===//
  /// Maps the launch's block indices and the launch body's index
  /// computations (tile origins) into `mapping`; the first code emitted.
  virtual LogicalResult mapLaunch(IRMapping &mapping) = 0;
  /// The producer warpgroup's first thread: the TMA loads (emitLoad).
  virtual void producer(IRMapping &mapping) = 0;
  /// Every consumer warpgroup: the main loops (mainLoop) and epilogues.
  virtual void consumer(IRMapping &mapping) = 0;
  /// B columns one stage holds: the tile's (ping-pong: a unit's).
  virtual int64_t loadN() const { return m.tileN; }
  /// A rows one stage holds: the tile's (narrow: its narrowRows; coarse
  /// tiles: several launch tiles').
  virtual int64_t aRows() const { return m.tileM; }
  /// Rows of A's TMA box (its map's, the metadata's): aRows() unless a
  /// stage holds several boxes (coarse tiles), loaded from loadRow.
  virtual int64_t aBoxRows() const { return aRows(); }
  /// Accumulator rows per consumer warpgroup: 64 (ping-pong: the tile's).
  virtual int64_t accRows() const { return 64; }
  /// Arrivals that release a stage: one per consumer warpgroup (ping-pong:
  /// the one warpgroup that read it).
  virtual int64_t stageReaders() const { return ws.consumers; }
  /// The first row of this consumer warpgroup's accumulator relative to
  /// the tile origin of the launch block it stores (64 per warpgroup; 0
  /// when each warpgroup's rows are a launch block of their own).
  virtual Value rowInTile() { return mul(wg, cst(64)); }
  /// Byte offset of this consumer warpgroup's A rows in a stage.
  virtual Value aRowOffset() { return mul(wg, cst(64 * kBlockK * 2)); }
  /// Epilogue staging bytes that reuse the stage buffers (at offset 0,
  /// once the main loop is done with them) ...
  virtual int64_t stagingOverStages() const { return 0; }
  /// ... and those after the stage buffers (used while the producer
  /// refills the stages): the TMA-store epilogue's.
  virtual int64_t stagingAfterStages() const { return ws.stagingBytes(); }
  /// The hardware K iterations this CTA runs, given the tile's `total`
  /// (emitted at the kernel's top level, before the warpgroup roles).
  virtual Value ctaIterations(Value total) { return total; }

  //===--- pieces the schedules share -----------------------------------===//
  /// One pipeline iteration of the producer: `it` is the pipeline iteration
  /// (stage, phase), `kIt` the K tile; A rows from `aRow`, B columns from
  /// `bCol`, of the matrices at batch indices `aBatch` / `bBatch` (mapped
  /// values, batchValues; empty for rank-2 operands).
  void emitLoad(Value it, Value kIt, Value aRow, Value bCol,
                ValueRange aBatch, ValueRange bBatch);
  /// The global column of B box `box` (64 columns each) of a stage whose
  /// first column is `bCol` (default: bCol + 64 * box).
  virtual Value loadColumn(int64_t box, Value bCol) {
    return add(bCol, cst(box * 64));
  }
  /// The global row of A box `box` (aBoxRows() rows each) of a stage whose
  /// first row is `aRow` (default: consecutive boxes).
  virtual Value loadRow(int64_t box, Value aRow) {
    return box == 0 ? aRow : add(aRow, cst(box * aBoxRows()));
  }
  /// emitLoad's stage fill without TMA (ws.ldgLoads), by every producer
  /// thread: element loads of 16-byte chunks of the matrices `a` and `b`
  /// (matrixView) into the swizzled layout.
  void emitLoadWithoutTma(Value stageOff, Value k0, Value aRow, Value bCol,
                          Value a, Value b);
  //===--- batched operands (GemmMatch::aBatch, ...) ---------------------===//
  /// `indices` as mapped by `tm`.
  static SmallVector<Value> batchValues(ArrayRef<Value> indices,
                                        const IRMapping &tm) {
    SmallVector<Value> out;
    for (Value v : indices)
      out.push_back(tm.lookup(v));
    return out;
  }
  /// The matrix at `batch` of the kernel param `global` (its last two dims,
  /// a rank-reduced strided view; no rows when a batch index is outside the
  /// tensor); `global` itself when `batch` is empty.
  Value matrixView(Value global, ValueRange batch);
  /// Maps C in `tm` to the matrix of the tile's batch (matrixView), so
  /// that the epilogues store to a 2-D C whatever its rank. Called by
  /// every mapLaunch / mapTile after the tile's index computations.
  void mapBatchOfC(IRMapping &tm) {
    if (!m.cBatch.empty())
      tm.map(m.C, matrixView(globalC, batchValues(m.cBatch, tm)));
  }
  /// A TMA box of the 2-D `box` in the tensor `global`: one element along
  /// each of its batch dims first.
  static SmallVector<int64_t> batchBox(Value global, ArrayRef<int64_t> box) {
    SmallVector<int64_t> out(cast<MemRefType>(global.getType()).getRank() - 2,
                             1);
    out.append(box.begin(), box.end());
    return out;
  }
  /// TMA coordinates, innermost first: `inner`, then the batch indices
  /// innermost first.
  static SmallVector<Value> tmaCoords(ArrayRef<Value> inner,
                                      ValueRange batch) {
    SmallVector<Value> out(inner.begin(), inner.end());
    for (Value v : llvm::reverse(batch))
      out.push_back(v);
    return out;
  }
  /// A consumer's wait for pipeline iteration `it`'s stage to be full;
  /// returns the stage.
  Value waitFull(Value it);
  /// In a consumer's K loop at local iteration `i` of pipeline iteration
  /// `it` (after wait_group 1): the signalling thread releases the previous
  /// iteration's stage (none at i = 0).
  void releasePrevious(Value it, Value i);
  /// The consumer's wgmma loop over the nIter K tiles, pipeline iterations
  /// g0, g0 + 1, ...; returns the accumulator. Releases every stage but the
  /// last it reads (the schedule releases that one after wait_group 0).
  Value mainLoop(Value g0);
  /// mainLoop for a K-major B (transpose_b) or an MN-major A (transpose_a):
  /// the wgmmas built directly (nvgpu.warpgroup.mma steps only a K-major A
  /// and an MN-major B); the same accumulator.
  Value mainLoopOwnWgmmas(Value g0);
  /// A wgmma matrix descriptor (nvgpu.warpgroup.generate.descriptor's
  /// result) as the i64 nvvm.wgmma.mma_async takes.
  Value descriptorBits(Value desc);
  /// Those bits `bytes` (a multiple of 16) further in shared memory.
  Value descriptorPlus(Value desc, int64_t bytes);
  void namedBarrier(int64_t id, int64_t threads);
  /// The launch's elementwise epilogue (GemmMatch::epilogue) applied to
  /// the accumulator value `acc` of tile element (`row`, `col`) (indices
  /// relative to the tile origin): the parallel bodies cloned in order with
  /// their ivs = (row, col), accumulator loads = the current value; returns
  /// the value the last store left. `mapping` maps the kernel's values.
  Value applyEpilogue(IRMapping &mapping, Value acc, Value row, Value col);
  /// A staged epilogue operand's element (GemmMatch.h): `load` reads the
  /// on-chip buffer; this reads the global element its fill copied there
  /// (zero out of bounds, converted to the buffer's element type).
  Value stagedLoad(StagedOperand s, memref::LoadOp load,
                   IRMapping &mapping);
  /// Stores `v` (C's element type) to C[row, col] (the address memref.store
  /// would use: C's offset and strides) when `pred` holds: one predicated
  /// PTX store, not a branch, so that ptxas keeps the loads around it
  /// batched (a branch per store made it pair each load with its store).
  void predicatedStore(Value C, Value row, Value col, Value v, Value pred);
  /// The generic address of element `indices` of `mem` (elements of
  /// `bytes` bytes), as memref.load/store would compute it: for the
  /// predicated PTX accesses above and stagedLoad.
  Value elementPointer(Value mem, ValueRange indices, int64_t bytes);

  int64_t aBytes() const { return aRows() * kBlockK * 2; }
  /// One TMA box of A in shared memory: aBoxRows() rows x 64 K, or, for a
  /// K x M A (transpose_a), 64 K rows x 64 columns of M like a K x N B's
  /// (aBoxRows() / 64 of them per loadRow group). A 64-row block of A takes
  /// 8192 bytes of a stage either way, so a warpgroup's rows start at the
  /// same offset (aRowOffset) in both layouts.
  SmallVector<int64_t, 2> aBoxShape() const {
    return m.transA ? SmallVector<int64_t, 2>{kBlockK, 64}
                    : SmallVector<int64_t, 2>{aBoxRows(), kBlockK};
  }
  /// Rows of A (of M) one TMA box holds.
  int64_t aBoxM() const { return m.transA ? 64 : aBoxRows(); }
  int64_t bBoxBytes() const { return kBlockK * 64 * 2; }
  /// One TMA box of B in shared memory: 64 K rows x 64 columns, or 64 rows
  /// of an N x K B (transpose_b) x 64 K.
  SmallVector<int64_t, 2> bBoxShape() const {
    return m.transB ? SmallVector<int64_t, 2>{64, kBlockK}
                    : SmallVector<int64_t, 2>{kBlockK, 64};
  }
  int64_t stageBytes() const { return (aRows() + loadN()) * kBlockK * 2; }

  Value cst(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value i32(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value divu(Value x, Value y) { return arith::DivUIOp::create(b, loc, x, y); }
  Value remu(Value x, Value y) { return arith::RemUIOp::create(b, loc, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value toI32(Value v) {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), v);
  }
  Attribute smemSpace() {
    return gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  }
  MemRefType smemType(ArrayRef<int64_t> shape, Type elt) {
    return MemRefType::get(shape, elt, MemRefLayoutAttrInterface{},
                           smemSpace());
  }
  /// A view of the dynamic shared memory at `pad + byteOffset`.
  Value view(MemRefType type, Value byteOffset) {
    return memref::ViewOp::create(b, loc, type, smem, add(pad, byteOffset),
                                  ValueRange{});
  }
  nvgpu::TensorMapDescriptorType tmaType(ArrayRef<int64_t> box,
                                         Type elt = {});

  OpBuilder &b;
  Location loc;
  GemmMatch m;
  WarpSpecialization ws;
  MLIRContext *ctx;
  Value smem, pad, tid, wg; // set by build()
  Value globalA, globalB, globalC; // the kernel's A, B, C params (build())
  /// The wgmma descriptors take the swizzle from tmaA's / tmaB's type (2-D
  /// boxes); the TMA loads and stores use the maps as the tensors' rank
  /// needs them (batchBox), the same pointers.
  Value tmaA, tmaB, tmaC;   // tmaC: ws.tmaStore only
  Value tmaALoad, tmaBLoad;
  Value cMapPresent;        // ws.tmaStore: whether C's map is not null
  Value full, empty;        // the mbarrier groups
  Value nIter;              // hardware K iterations per tile (per CTA)
  Value workspace;          // the workspace param (takesWorkspace())
  Value signaller;          // consumers: thread 0 of the warpgroup
};

/// One tile per CTA, the launch's grid (Cooperative.cpp).
class CooperativeKernel : public KernelBuilder {
public:
  using KernelBuilder::KernelBuilder;

protected:
  int64_t stagingOverStages() const override { return m.tileM * m.tileN * 4; }
  LogicalResult mapLaunch(IRMapping &mapping) override;
  void producer(IRMapping &mapping) override;
  void consumer(IRMapping &mapping) override;
  /// Accumulators -> shared f32 tile -> bounds-checked (vectorized when
  /// aligned) stores of C.
  void epilogue(Value acc, IRMapping &mapping);
};

/// One CTA per SM looping over the output tiles (Persistent.cpp; the
/// TMA-store epilogue in TmaStore.cpp): tile t =
/// linear CTA id, step = number of CTAs, t -> block indices with the
/// launch's rasterization; the global pipeline iteration carries over
/// tiles so that stages and mbarrier parities continue; each tile's
/// epilogue stores from registers while the producer already refills the
/// stages for the next tile.
class PersistentKernel : public KernelBuilder {
public:
  using KernelBuilder::KernelBuilder;

protected:
  LogicalResult mapLaunch(IRMapping &mapping) override;
  void producer(IRMapping &mapping) override;
  void consumer(IRMapping &mapping) override;
  /// One tile's epilogue (storeValues of the warpgroup's accumulator).
  virtual void tileEpilogue(Value acc, IRMapping &tileMapping);
  /// After the consumer's last tile: with ws.tmaStore, the TMA stores
  /// have completed before the CTA exits.
  void afterLastTile();

  /// Maps linear tile `t`'s block indices and index computations into
  /// `tileMapping` (a copy of the kernel's mapping).
  void mapTile(Value t, IRMapping &tileMapping);
  /// The linear CTA id and the number of CTAs over the whole launch grid
  /// (correct, and without duplicated work, whatever grid is launched).
  std::pair<Value, Value> linearCta();
  /// The loop over this CTA's tiles; carries the global pipeline iteration
  /// g0 of the tile's first K tile. `body(tileMapping, g0)` emits a tile.
  void forEachTile(IRMapping &mapping,
                   function_ref<void(IRMapping &, Value)> body);
  /// After a tile's main loop: wait_group 0, then release the last stage
  /// the tile read (mainLoop's releases stop one short).
  void finishTile(Value g0);
  /// The values of the accumulator: `blocks` inner structs (64 rows each)
  /// of `perBlock` f32 each.
  SmallVector<SmallVector<Value>> accumulatorValues(Value acc, int64_t blocks,
                                                    int64_t perBlock);
  /// Where this consumer thread's values sit in wgmma's f32 accumulator
  /// layout (m64nNk16): {rowBase + 16 * warp + lane / 4, colBase + 2 *
  /// (lane % 4)}, the row and column of its first value in a 64-row block
  /// at (rowBase, colBase). Value 4j + e of a block (accumulatorValues) is
  /// at row + 8 * (e / 2), column + 8j + e % 2.
  std::pair<Value, Value> accumulatorOrigin(Value rowBase, Value colBase);
  /// Bounds-checked stores of the accumulator registers to C at the tile
  /// origin plus (`rowOff`, `colOff`); pairs of C's element type when C's
  /// base, N and the column are even and the columns inside N.
  void epilogueFromRegisters(Value acc, IRMapping &mapping, Value colOff,
                             Value rowOff);
  /// The same from the accumulator's values (accumulatorValues' layout;
  /// the stored columns: 2 x the values per block).
  void epilogueFromValues(SmallVector<SmallVector<Value>> blockVals,
                          IRMapping &mapping, Value colOff, Value rowOff);
  /// The launch's elementwise epilogue (m.epilogue) on one 64-row block's
  /// values (accumulatorValues' layout), in place; `rowOff` / `colOff`:
  /// the block's origin relative to the tile origin of `mapping`.
  void applyEpilogueToBlock(MutableArrayRef<Value> vals, IRMapping &mapping,
                            Value rowOff, Value colOff);
  /// Stores one 64-row accumulator block's values (accumulatorValues'
  /// layout) at the tile origin of `mapping` (this warpgroup's rows): with
  /// ws.tmaStore through the staging buffers (stagedStoreValues), by TMA
  /// when C's map is present, else by the warpgroup's coalesced stores;
  /// without ws.tmaStore, epilogueFromValues. `firstChunk`: the index of
  /// the first 64-column chunk within the CTA tile (staging buffers
  /// alternate by chunk).
  void storeValues(ArrayRef<Value> vals, IRMapping &mapping,
                   int64_t firstChunk);
  /// The staged epilogue of those values (TmaStore.cpp): each 64-column
  /// chunk into a swizzled staging buffer, then a TMA store (`viaTma`) or
  /// copyOutChunk.
  void stagedStoreValues(ArrayRef<Value> vals, IRMapping &mapping,
                         int64_t firstChunk, bool viaTma);
  /// Whether a tile's warpgroup may commit an odd number of TMA-store
  /// chunks (staging buffers alternate by chunk index within a tile, so
  /// the tile's first chunk then waits for every earlier store).
  virtual bool oddChunkCounts() const { return false; }
  /// Bounds-checked stores of a 64x64 staging buffer to C at (`row0`,
  /// `col0`) by the warpgroup's 128 threads, 32 consecutive columns of a
  /// row per warp instruction.
  void copyOutChunk(Value buf, IRMapping &mapping, Value row0, Value col0);

  Value numTiles;         // the launch's grid size (set by mapLaunch)
  SmallVector<Value> grid; // the launch's grid sizes
};

/// The ping-pong schedule (PingPong.cpp).
class PingPongKernel : public PersistentKernel {
public:
  using PersistentKernel::PersistentKernel;

protected:
  // A stage holds a unit; one consumer warpgroup reads all of it.
  int64_t loadN() const override { return ws.unitN; }
  int64_t accRows() const override { return m.tileM; }
  int64_t stageReaders() const override { return 1; }
  Value aRowOffset() override { return cst(0); }
  void producer(IRMapping &mapping) override;
  void consumer(IRMapping &mapping) override;

  /// The number of units this CTA owns (sets ctaId and ctaCount).
  Value localUnits();
  /// For the CTA's unit `j`: its tile's mapping into `tileMapping` (a copy
  /// of `mapping`); returns the unit's column offset in the tile.
  Value mapUnit(Value j, IRMapping &mapping, IRMapping &tileMapping);

  Value ctaId, ctaCount;
};

/// Split-K (SplitK.cpp): the cooperative tile (TM = 64 x consumers) with
/// the K loop cut into S slices. Launched with grid (tiles, S, 1): CTA
/// (t, s) maps linear tile t like the persistent kernel and runs hardware
/// K iterations [s*n/S, (s+1)*n/S) of the tile's n (an empty range gives a
/// zero partial). The S partials are summed by a binary tree over the
/// slices (fixed association: deterministic) whose nodes are joined by
/// arrival counters; whoever arrives second at a node adds its sibling's
/// partial, nobody waits (see SplitK.cpp). The workspace param holds, for
/// a launch of T tiles and S slices (T*S <= kSplitKCounters):
///   workspaceBytes() = kSplitKCounters u32 arrival counters, counter
///     (t, m) at t*S + m, 0 between launches (self-resetting: the
///     workspace is zeroed once, when allocated). At a fixed place, before
///     the slots: launches of other T*S on the same workspace must never
///     find a partial sum where they expect a counter (a layout with the
///     counters after the T*S slots did: wrong sums after a launch with a
///     smaller T*S, found on the H200);
///   then T*S f32 TMxTN partial slots (workspaceSliceBytes() each), slot
///     (t, r) at t*S + r, each consumer thread's values as vectors at
///     [(j * consumer threads + thread) * vec], so every thread reads
///     exactly what the same thread of the sibling CTA wrote.
class SplitKKernel : public PersistentKernel {
public:
  using PersistentKernel::PersistentKernel;
  /// The arrival counters' capacity: launches need tiles x S <= this (the
  /// runtime reads it as workspace_bytes / 4, docs/bundle.md).
  static constexpr int64_t kSplitKCounters = 4096;
  int64_t workspaceBytes() const override { return 4 * kSplitKCounters; }
  int64_t workspaceSliceBytes() const override;
  /// Bytes of one f32 partial tile (the rows the kernel computes).
  int64_t partialBytes() const { return aRows() * m.tileN * 4; }

protected:
  LogicalResult mapLaunch(IRMapping &mapping) override;
  Value ctaIterations(Value total) override;
  void producer(IRMapping &mapping) override;
  void consumer(IRMapping &mapping) override;

  /// The tree over the K-slices (SplitK.cpp) of this consumer thread's
  /// partial sums `vals`, which go through the slots as vectors of `vec`
  /// (vals.size() a multiple of it); `vectorLive(j)`: whether vector j
  /// holds an element of C (else it is neither stored nor read). Returns
  /// whether this CTA is the root (holds the whole sum) and the values,
  /// the whole sum in the root.
  std::pair<Value, SmallVector<Value>>
  reduceSlices(ArrayRef<Value> vals, int64_t vec,
               function_ref<Value(int64_t)> vectorLive);

  Value tileId, slice, slices, kBegin;
};

/// Narrow rows (Narrow.cpp): the split-K kernel (same grid, workspace and
/// tree) for launches of at most ws.narrowRows rows of A and C. It
/// computes only the first narrowRows rows of each launch tile, as the
/// swapped product C^T = B^T A^T: stage = A's narrowRows x 64 box (wgmma's
/// K-major B operand) then B's boxes (wgmma's transposed A operand, one
/// 64-column box per consumer warpgroup), m64nRk16 wgmmas, an accumulator
/// of 8 f32 per thread for R = 16. The CTA is small (stages sized for
/// ws.ctasPerSm CTAs per multiprocessor, no setmaxnreg), so a skinny GEMM
/// gets several CTAs per multiprocessor, each with its stages of B in
/// flight, instead of 128-row tiles whose rows are nearly all past M.
class NarrowKernel : public SplitKKernel {
public:
  using SplitKKernel::SplitKKernel;

protected:
  int64_t aRows() const override { return ws.narrowRows; }
  void consumer(IRMapping &mapping) override;
  /// The swapped wgmma loop over the slice's K tiles: this thread's
  /// accumulator (an LLVM struct of wgmma's m64nR f32 layout, B^T rows =
  /// C columns); read it after wait_group 0.
  Value swappedMainLoop();
};

/// Coarse tiles (WideTile.cpp): the persistent cooperative kernel whose
/// CTA tile is several launch blocks, ws.coarse (GemmMatch.h, coarseTile):
/// R = coarse.rows blocks along the grid axis moving A's tile row times C =
/// coarse.cols blocks along the axis moving B's tile column, a CTA tile of
/// (R * TM) x (C * TN) (128 x 256 for 128x128 or 64x64 launch tiles).
/// Coarse tile t -> its indices over the launch grid with those axes
/// divided (rounded up, rasterized like the launch); block (r, c) of it
/// gets the launch body's index computations for its own block indices
/// (A's rows from block (r, 0), B's columns from block (0, c), the
/// epilogue and C's stores from (r, c)), so the result is the launch's
/// whatever its origins compute; blocks past the launch's grid (odd
/// extents) load harmlessly and store nothing. A stage holds R A boxes of
/// TM rows and C * TN / 64 B boxes; with R = 2 (64-row launch tiles) each
/// consumer warpgroup's 64 rows are one block row of its own.
class WideTileKernel : public PersistentKernel {
public:
  using PersistentKernel::PersistentKernel;

protected:
  int64_t loadN() const override { return ws.coarse.cols * m.tileN; }
  int64_t aRows() const override {
    return ws.coarse.rows * m.tileM / ws.coarse.parts;
  }
  int64_t aBoxRows() const override { return m.tileM / ws.coarse.parts; }
  Value rowInTile() override {
    if (ws.coarse.rows > 1)
      return cst(0);
    Value row = mul(wg, cst(64));
    return ws.coarse.parts > 1 ? add(mul(part_, cst(aRows())), row) : row;
  }
  LogicalResult mapLaunch(IRMapping &mapping) override;
  void producer(IRMapping &mapping) override;
  void consumer(IRMapping &mapping) override;
  Value loadColumn(int64_t box, Value bCol) override;
  Value loadRow(int64_t box, Value aRow) override;
  /// Blocks past the grid store no chunks: with an odd number of chunks
  /// per block, a tile may commit an odd number.
  bool oddChunkCounts() const override {
    return (m.tileN / 64) % 2 == 1 && ws.coarse.cols > 1;
  }

  /// Block (r, c) of the coarse tile at indices `idx` (over coarseGrid):
  /// its mapping (a copy of `mapping`) into `block`; returns whether the
  /// block is inside the launch's grid (null for block (0, 0), which
  /// always is).
  Value mapBlock(ArrayRef<Value> idx, int64_t r, int64_t c,
                 IRMapping &mapping, IRMapping &block);
  /// The loop over this CTA's coarse tiles (forEachTile's): `body(idx,
  /// g0)` with the tile's indices over coarseGrid.
  void forEachCoarseTile(function_ref<void(ArrayRef<Value>, Value)> body);

  SmallVector<Value> coarseGrid; // the launch grid, the axes divided
  SmallVector<Value> aRows_, bCols_; // the producer's, per block row / column
  /// With parts > 1: the current CTA tile's part of its launch blocks
  /// (mapBlock), 0 .. parts - 1 along rowAxis.
  Value part_;
};

/// The builder of the schedule `ws` asks for.
/// (ws.coarse.any(): WideTileKernel.)
std::unique_ptr<KernelBuilder>
createKernelBuilder(OpBuilder &b, Location loc, const GemmMatch &m,
                    const WarpSpecialization &ws);

} // namespace mlir::tile::sm90

#endif // TILE_LIB_CONVERSION_TILETOSM90_KERNELBUILDER_H
