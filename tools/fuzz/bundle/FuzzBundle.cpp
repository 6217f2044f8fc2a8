//===- FuzzBundle.cpp - libFuzzer target: a bundle's way to a launch ------===//
//
// Everything the runtime does with an untrusted bundle before code of the
// bundle runs, in load order: the container (bundle::read), the metadata
// parser (parseMetadata), the code checks (checkBundleCode: ElfImage, entry
// roles, metadata hash), the CUDA launch plan (buildParamPlan,
// parseVariants); then, with tensors shaped from the input, the ffi
// backend's argument checks, their messages and the grid evaluation. No
// dlopen and no driver: what the checks let through is the trusted part
// (docs/bundle.md, "Trust model").
//
// An input starting with "\x7fELF" is a bare shared object for ElfImage
// (seeds: the host.so / native.so of compiled bundles).
//
// A mutated bundle almost never keeps valid CRCs, which would stop nearly
// every input at the container. So after the container sees the raw bytes,
// the harness recomputes the declared size and the CRCs of a copy (when the
// header and table are in bounds) and runs the whole chain on that.
//
//===----------------------------------------------------------------------===//
#include "CodeCheck.h"
#include "Cuda/CudaDevice.h"
#include "Cuda/CudaVariants.h"
#include "Device.h"
#include "ElfImage.h"
#include "Kernel.h"
#include "Metadata.h"
#include "tile/Runtime/Bundle.h"

#include <cstring>
#include <string>
#include <vector>

using namespace tile;
using namespace tile::rt;

namespace {

uint32_t getU32(const std::string &b, size_t at) {
  uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}
uint64_t getU64(const std::string &b, size_t at) {
  uint64_t v;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}
void putU32(std::string &b, size_t at, uint32_t v) { std::memcpy(&b[at], &v, 4); }
void putU64(std::string &b, size_t at, uint64_t v) { std::memcpy(&b[at], &v, 8); }

/// Makes the size field and every CRC of `b` agree with its bytes.
bool repairChecksums(std::string &b) {
  if (b.size() < bundle::kHeaderSize ||
      std::memcmp(b.data(), bundle::kMagic, sizeof(bundle::kMagic)) != 0)
    return false;
  uint32_t n = getU32(b, 12);
  if (n > bundle::kMaxSections)
    return false;
  size_t tableEnd = bundle::kHeaderSize + bundle::kEntrySize * n;
  if (b.size() < tableEnd + 4)
    return false;
  putU64(b, 16, b.size());
  for (uint32_t i = 0; i < n; ++i) {
    size_t e = bundle::kHeaderSize + bundle::kEntrySize * i;
    uint64_t off = getU64(b, e + 24), len = getU64(b, e + 32);
    if (off <= b.size() && len <= b.size() - off)
      putU32(b, e + 40, bundle::crc32(b.data() + off, len));
  }
  putU32(b, tableEnd, bundle::crc32(b.data(), tableEnd));
  return true;
}

/// The ffi backend's per-launch work that needs no code: argument checks
/// (and their messages) on tensors shaped by `seed`, then the grid.
void exerciseLaunchChecks(const KernelPlan &plan, const uint8_t *seed,
                          size_t seedSize) {
  size_t at = 0;
  auto next = [&]() -> uint8_t { return seedSize ? seed[at++ % seedSize] : 0; };
  const size_t np = plan.params.size();
  std::vector<DLTensor> tensors(np);
  std::vector<std::vector<int64_t>> shapes(np);
  std::vector<DLTensor *> ptrs(np, nullptr);
  std::vector<int64_t> scalars(np, 0);
  // Never dereferenced: the checks only look at the address.
  alignas(64) static char dummy[64];
  for (size_t i = 0; i < np; ++i) {
    const ParamPlan &p = plan.params[i];
    if (!p.isTensor) {
      scalars[i] = int64_t(int8_t(next()));
      continue;
    }
    if (p.outSlot >= 0 && (next() & 1))
      continue; // an omitted output
    for (int32_t d = 0; d < p.rank; ++d)
      shapes[i].push_back(p.shape[d] >= 0 && (next() & 3) ? p.shape[d]
                                                          : int64_t(next() % 9) - 1);
    DLTensor &t = tensors[i];
    t.data = dummy;
    t.device = {static_cast<DLDeviceType>(plan.deviceType), 0};
    t.ndim = p.rank;
    t.dtype = (next() & 7) ? p.dtype : DLDataType{kDLInt, 8, 1};
    t.shape = shapes[i].data();
    t.strides = nullptr;
    t.byte_offset = (next() & 7) ? 0 : 1;
    ptrs[i] = &t;
  }
  std::vector<int64_t> syms(plan.symbols.size(), -1);
  tile_check_error e{};
  if (checkTensorArgs(plan, ptrs.data(), syms.data(), e))
    (void)formatCheckError(plan, e);
  for (int d = 0; d < 3; ++d) {
    int64_t g = 0, unbound = 0;
    (void)plan.grid[d].eval(syms.data(), scalars.data(), g, unbound);
  }
  tile_check_error any{int32_t(next() % 16), int32_t(next()) - 8,
                       int32_t(next()) - 8, 0, 1, 2};
  (void)formatCheckError(plan, any);
}

void loadChain(const std::string &bytes, const uint8_t *data, size_t size) {
  bundle::Reader reader;
  std::string error;
  if (!bundle::read(bytes.data(), bytes.size(), reader, error))
    return;
  const bundle::SectionView *meta = reader.find("metadata");
  if (!meta)
    return;
  KernelPlan plan;
  if (!parseMetadata(meta->bytes(), plan, error))
    return;
  (void)checkBundleCode(plan, reader);
  if (plan.target == TargetKind::Cuda) {
    std::vector<cuda::ParamRef> params;
    (void)cuda::buildParamPlan(plan, params, error);
    std::vector<cuda::VariantSpec> variants;
    (void)cuda::makeVariantSpecs(plan, variants, error);
  }
  exerciseLaunchChecks(plan, data, size);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  if (size >= 4 && std::memcmp(data, "\x7f" "ELF", 4) == 0) {
    elf::Image image;
    std::string error;
    if (image.parse(bytes, error))
      for (const elf::Symbol &s : image.symbols()) {
        (void)image.isCode(s);
        (void)image.contents(s);
        (void)image.find(s.name);
      }
    return 0;
  }
  loadChain(bytes, data, size);
  if (repairChecksums(bytes))
    loadChain(bytes, data, size);
  return 0;
}
