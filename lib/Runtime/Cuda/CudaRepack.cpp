//===- CudaRepack.cpp - Operands repacked for TMA -------------------------===//
#include "CudaRepack.h"
#include "Common.h"

#include <algorithm>
#include <cstring>

namespace tile::rt::cuda {

RepackMode repackMode(const char *v) {
  if (!v || !*v || std::strcmp(v, "auto") == 0)
    return RepackMode::Auto;
  if (std::strcmp(v, "0") == 0 || std::strcmp(v, "off") == 0)
    return RepackMode::Off;
  if (std::strcmp(v, "1") == 0 || std::strcmp(v, "on") == 0)
    return RepackMode::On;
  return RepackMode::Auto;
}

bool repackPays(int64_t m, int64_t n, int64_t k, uint64_t copyBytes) {
  if (m < 1 || n < 1 || k < 1)
    return false;
  if (k > kRepackKStep && copyBytes <= kRepackSmallBytes)
    return true; // the latency regime (CudaRepack.h)
  const double flops = 2.0 * double(m) * double(n) * double(k);
  return flops >= kRepackMinFlops &&
         flops >= kRepackFlopsPerByte * double(copyBytes);
}

CUresult launchPacks(const Api &a, CUfunction fn, int operands,
                     const PackCopy *copies, size_t n, int elemBytes, int sms,
                     CUstream stream) {
  // One thread per 16-byte chunk of the destination; a grid-stride loop
  // covers the rest (16 CTAs of 256 threads per SM keep the copy at
  // memory bandwidth).
  constexpr unsigned kThreads = 256;
  const int64_t maxCtas = int64_t(sms > 0 ? sms : 132) * 16;
  const size_t per = operands == 2 ? 2 : 1;
  for (size_t first = 0; first < n; first += per) {
    const size_t count = std::min(per, n - first);
    PackCopy group[2];
    int64_t chunks = 0;
    for (size_t g = 0; g < per; ++g) {
      // An unused group repeats the first (never read: grid y = count).
      group[g] = copies[first + (g < count ? g : 0)];
      chunks = std::max(chunks,
                        group[g].rows * (group[g].dstPitch * elemBytes / 16));
    }
    const unsigned ctas = unsigned(std::clamp<int64_t>(
        (chunks + kThreads - 1) / kThreads, 1, maxCtas));
    void *params[12];
    for (size_t g = 0; g < per; ++g) {
      PackCopy &p = group[g];
      void *one[] = {&p.src,  &p.dst,      &p.rows,
                     &p.cols, &p.srcPitch, &p.dstPitch};
      std::copy(one, one + 6, params + 6 * g);
    }
    if (CUresult r = a.cuLaunchKernel(fn, ctas, unsigned(count), 1, kThreads,
                                      1, 1, 0, stream, params, nullptr);
        r != kSuccess)
      return r;
  }
  return kSuccess;
}

CUdeviceptr RepackWorkspaces::get(const Api &a, CUstream stream,
                                  uint64_t bytes, std::string &why) {
  if (bytes > kMaxBytes) {
    why = "the repacked operands need " + str(int64_t(bytes)) +
          " bytes, more than the " + str(int64_t(kMaxBytes)) +
          "-byte workspace limit";
    return 0;
  }
  // As VariantLauncher::workspace: the legacy default stream has two
  // handles (0 and CU_STREAM_LEGACY); CU_STREAM_PER_THREAD is a different
  // stream per thread.
  uintptr_t key = reinterpret_cast<uintptr_t>(stream);
  if (key == 0x1)
    key = 0;
  std::thread::id thread =
      key == 0x2 ? std::this_thread::get_id() : std::thread::id();
  const uint64_t now = ++clock_;
  size_t pick = kSlots, victim = 0;
  for (size_t i = 0; i < kSlots; ++i) {
    const Slot &s = slots_[i];
    if (s.ptr && s.stream == key && s.thread == thread) {
      pick = i;
      break;
    }
    if (!s.ptr || (slots_[victim].ptr && s.lastUse < slots_[victim].lastUse))
      victim = i;
  }
  const bool own = pick != kSlots;
  Slot &s = slots_[own ? pick : victim];
  if (s.bytes < bytes) {
    // Grow (or first allocate): at least double, so that a sequence of
    // growing shapes reallocates O(log) times.
    const uint64_t old = s.bytes;
    if (s.ptr) {
      // A launch in flight (this stream's, or the previous owner's) may
      // still read the old buffer.
      if (a.cuCtxSynchronize() != kSuccess) {
        why = "cuCtxSynchronize failed";
        return 0;
      }
      a.cuMemFree(s.ptr);
      s = Slot();
    }
    uint64_t want = std::min(kMaxBytes, std::max(bytes, 2 * old));
    CUdeviceptr p = 0;
    CUresult r = a.cuMemAlloc(&p, size_t(want));
    if (r != kSuccess && want > bytes)
      r = a.cuMemAlloc(&p, size_t(want = bytes));
    if (r != kSuccess) {
      why = "cannot allocate the " + str(int64_t(bytes)) +
            "-byte repack workspace: " + errorText(r);
      return 0;
    }
    s.ptr = p;
    s.bytes = want;
  } else if (!own && s.ptr) {
    // Taking over another stream's buffer: its launches may be in flight.
    if (a.cuCtxSynchronize() != kSuccess) {
      why = "cuCtxSynchronize failed";
      return 0;
    }
  }
  s.stream = key;
  s.thread = thread;
  s.lastUse = now;
  return s.ptr;
}

uint64_t RepackWorkspaces::capacity(CUstream stream) const {
  uintptr_t key = reinterpret_cast<uintptr_t>(stream);
  if (key == 0x1)
    key = 0;
  std::thread::id thread =
      key == 0x2 ? std::this_thread::get_id() : std::thread::id();
  for (const Slot &s : slots_)
    if (s.ptr && s.stream == key && s.thread == thread)
      return s.bytes;
  return 0;
}

void RepackWorkspaces::release(const Api &a) {
  for (Slot &s : slots_) {
    if (s.ptr)
      a.cuMemFree(s.ptr);
    s = Slot();
  }
}

} // namespace tile::rt::cuda
