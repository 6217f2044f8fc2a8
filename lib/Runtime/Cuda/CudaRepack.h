//===- CudaRepack.h - Operands repacked for TMA into an aligned workspace -===//
//
// A TMA variant's tensor map needs 16-byte aligned data and row pitches
// that are multiples of 16 bytes (CudaTensorMap.h). An f16/bf16 GEMM with
// an odd K or N has neither; without help the runtime falls back to the
// variant that loads through the threads (NAME_kernel_sm90_ldg), several
// times slower on large shapes. When a variant's metadata names a pack
// kernel ("pack" or "pack2": {"kernel", "elem_bytes"}, docs/bundle.md),
// the runtime instead copies each such *read-only* operand into a device
// workspace whose rows are padded to a multiple of 16 bytes, encodes the
// map on the copy (dims = the tensor's logical dims, so TMA never reads
// the padding: the box beyond globalDim is zero-filled) and launches the
// TMA variant.
// A written operand (the TMA-store epilogue's C) is never repacked: its
// map is optional (passed as null; the kernel stores C through its
// threads), or else the variant is skipped as before.
//
// The pack kernel comes from the bundle (tilec adds it to the sm_90a GPU
// module, lib/Conversion/TileToSM90/PackKernel.cpp; the runtime compiles
// nothing). Its contract:
//
//   K(const void *src, void *dst, int64 rows, int64 cols,
//     int64 srcPitch, int64 dstPitch)   // pitches in elements
//
// copies rows x cols elements of E bytes from src (row r at src + r *
// srcPitch * E, any E-aligned address) to dst (row r at dst + r * dstPitch
// * E; dst 16-byte aligned, dstPitch * E a multiple of 16), writing whole
// 16-byte chunks of the destination rows (the padding gets zeros), any
// grid x and block x (grid-stride loop). Named under "pack2" (what tilec
// emits, NAME_pack2_b<E>), K takes two such argument groups, and the CTAs
// with blockIdx.y = g copy group g: A and B of a GEMM in one launch.
//
// Stream ordering: the pack kernels are launched on the launch's stream
// right before the GEMM, into a workspace owned by (variant, stream)
// (RepackWorkspaces), so a later launch on the same stream only
// overwrites it after the GEMM that read it.
//
// The cost rule (repackPays) and TILE_REPACK (read per launch):
//   unset, "" or "auto": the rule; "0"/"off": never repack (the next
//   variant, then NAME_kernel_sm90_ldg, runs odd pitches); "1"/"on":
//   always repack when it is possible.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_LIB_RUNTIME_CUDAREPACK_H
#define TILE_LIB_RUNTIME_CUDAREPACK_H

#include "CudaDriver.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>

namespace tile::rt::cuda {

enum class RepackMode { Off, On, Auto };

/// TILE_REPACK's value (nullptr: unset): Auto for nullptr, "" and "auto";
/// Off for "0" and "off"; On for "1" and "on"; Auto for anything else.
RepackMode repackMode(const char *value);

/// The cost rule: whether repacking `copyBytes` bytes (the operands'
/// padded copies) pays for a GEMM of m x n x k. Two regimes:
///
/// Throughput: the TMA kernels run large odd shapes about 6x faster than
/// the LDG kernel (~600 vs ~90 TFLOP/s on the H200), so the time saved is
/// about 2mnk / 90e12 * (1 - 90/600) s (~9.4e-15 s per FLOP), while a copy
/// costs a read and a write of copyBytes at ~3 TB/s (~6.7e-13 s per byte)
/// plus a launch per pack kernel: it pays from ~71 FLOPs per copied byte.
/// Repack when
///   2mnk >= kRepackFlopsPerByte * copyBytes   (128: the copy costs at most
///                                              about half the time saved)
///   and 2mnk >= kRepackMinFlops               (2^28).
///
/// Latency: below that, the LDG kernel is bound by its k-steps, not its
/// FLOPs: measured on the H200 (f16, 2026-12-01) it takes about 8 us plus
/// 1.9 us per 64-deep k-step, against about 1.3 us per pack kernel (copies
/// up to 1 MiB) and a TMA kernel of 5-10 us. Every small odd shape measured
/// ran faster repacked (do_bench, LDG -> repacked): 127x131x137 18.1 ->
/// 16.4 us, 128x128x137 15.9 -> 11.3, 255x257x263 25.1 -> 17.8, 77x1000x999
/// 55.2 -> 16.9, 200x300x1001 (1 MB copied) 54.2 -> 19.8. So a copy of at
/// most kRepackSmallBytes also repacks when K spans more than one k-step
/// (k > 64; one k-step was not measured).
///
/// E.g. 4097x4095x4100, 1001x999x1003 and 127x131x137 repack; M = 8 with a
/// 134 MB odd B (8x8191x8191) keeps the LDG kernel.
bool repackPays(int64_t m, int64_t n, int64_t k, uint64_t copyBytes);
constexpr double kRepackFlopsPerByte = 128;
constexpr double kRepackMinFlops = double(int64_t(1) << 28);
constexpr uint64_t kRepackSmallBytes = uint64_t(2) << 20;
/// The sm90 kernels' k-step (their K tile; TileToSM90's kBlockK).
constexpr int64_t kRepackKStep = 64;

/// Elements per padded row: cols rounded up so that a row is a multiple
/// of 16 bytes (elemBytes divides 16).
inline int64_t paddedRowElems(int64_t cols, int elemBytes) {
  const int64_t per = 16 / elemBytes;
  return (cols + per - 1) / per * per;
}

/// The repacked copy of one operand: `rows` rows of `rowElems` elements.
/// Bytes rounded up to 256 so that the next copy in the workspace stays
/// aligned.
inline uint64_t repackBytes(int64_t rows, int64_t rowElems, int elemBytes) {
  uint64_t b = uint64_t(rows) * uint64_t(rowElems) * uint64_t(elemBytes);
  return (b + 255) / 256 * 256;
}

/// One operand's copy by the pack kernel (pitches in elements).
struct PackCopy {
  CUdeviceptr src = 0, dst = 0;
  int64_t rows = 0, cols = 0, srcPitch = 0, dstPitch = 0;
};

/// Launches the pack kernel `fn`, which copies `operands` (1 or 2) argument
/// groups per launch, on `stream` for copies[0..n): one launch per
/// `operands` copies, grid y = the copies in that launch (block 256, grid x
/// at most 16 CTAs per multiprocessor; `sms` 0: unknown, 132 assumed).
CUresult launchPacks(const Api &a, CUfunction fn, int operands,
                     const PackCopy *copies, size_t n, int elemBytes, int sms,
                     CUstream stream);

/// The repack workspaces of one variant: one device buffer per stream (at
/// most kSlots streams; the least recently used one is taken over after
/// cuCtxSynchronize), grown on demand (the old buffer is freed after
/// cuCtxSynchronize: a launch in flight may still read it), at most
/// kMaxBytes. Not thread-safe: the owner's mutex guards it, held until
/// the GEMM that reads the workspace is enqueued.
class RepackWorkspaces {
public:
  static constexpr size_t kSlots = 4;
  static constexpr uint64_t kMaxBytes = uint64_t(4) << 30;

  RepackWorkspaces() = default;
  RepackWorkspaces(const RepackWorkspaces &) = delete;
  RepackWorkspaces &operator=(const RepackWorkspaces &) = delete;

  /// A buffer of at least `bytes` for a launch on `stream`; 0 with `why`
  /// (over kMaxBytes, allocation or synchronization failure: the caller
  /// tries the next variant).
  CUdeviceptr get(const Api &a, CUstream stream, uint64_t bytes,
                  std::string &why);
  /// Frees every buffer (call with the context current).
  void release(const Api &a);
  /// Bytes held for `stream` (0: none; for tests and TILE_CUDA_VERBOSE).
  uint64_t capacity(CUstream stream) const;

private:
  struct Slot {
    uintptr_t stream = 0;
    std::thread::id thread; // for CU_STREAM_PER_THREAD only
    CUdeviceptr ptr = 0;
    uint64_t bytes = 0, lastUse = 0;
  };
  Slot slots_[kSlots];
  uint64_t clock_ = 0;
};

} // namespace tile::rt::cuda

#endif // TILE_LIB_RUNTIME_CUDAREPACK_H
