//===- Describe.cpp - tile_kernel_describe: a kernel as text --------------===//
//
// The one text form of a loaded or inspected kernel, printed by both
// `tilec --info` and `tile-run --info`: interface (parameters, outputs,
// symbols, launch shape), the hardware-specific variants and the bundle's
// sections.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>

using namespace tile::rt;

namespace {

/// Text sections (sources: mlir, llvm, ptx, ...) hold no NUL byte.
bool isText(const tile::bundle::SectionView &s) {
  return s.size && !std::memchr(s.data, 0, s.size);
}

void appendf(std::string &out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void appendf(std::string &out, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n > 0)
    out.append(buf, std::min(size_t(n), sizeof buf - 1));
}

std::string describe(const tile_kernel &k) {
  const KernelPlan &plan = k.plan;
  std::string out;
  appendf(out, "kernel   %s\n", plan.name.c_str());
  appendf(out, "target   %s (%s%s%s)\n", plan.targetKindName.c_str(),
          plan.targetChip.empty() ? "host" : plan.targetChip.c_str(),
          plan.targetFeatures.empty() ? "" : ", ",
          plan.targetFeatures.c_str());
  appendf(out, "backend  %s\n", tile_kernel_backend(const_cast<tile_kernel *>(&k)));
  appendf(out, "block    %lld x %lld x %lld threads, %lld bytes shared\n",
          (long long)plan.block[0], (long long)plan.block[1],
          (long long)plan.block[2], (long long)plan.sharedBytes);
  if (!plan.symbols.empty()) {
    out += "symbols ";
    for (const std::string &s : plan.symbols)
      out += " " + s;
    out += "\n";
  }
  out += "params\n";
  for (size_t i = 0; i < plan.params.size(); ++i) {
    const ParamPlan &p = plan.params[i];
    if (!p.isTensor) {
      appendf(out, "  #%zu %-10s scalar %s\n", i, p.name.c_str(),
              p.dtypeName.c_str());
      continue;
    }
    std::string dims;
    for (int32_t d = 0; d < p.rank; ++d)
      dims += std::string(d ? ", " : "") +
              (p.shape[d] >= 0 ? str(p.shape[d]) : p.dims[d]);
    appendf(out, "  #%zu %-10s tensor %s [%s]%s%s\n", i, p.name.c_str(),
            p.dtypeName.c_str(), dims.c_str(), p.output ? " output" : "",
            p.outSlot >= 0 ? " (allocated when omitted)" : "");
  }
  // The hardware-specific variants, in the order the runtime tries them
  // (docs/bundle.md "Kernel variants"; entry.kernel runs any launch none
  // takes): what a launch may run, and its rule.
  if (!plan.variants.empty()) {
    out += "variants\n";
    for (const VariantPlan &v : plan.variants) {
      std::string rules;
      auto rule = [&](const std::string &r) {
        rules += (rules.empty() ? "" : ", ") + r;
      };
      if (!v.schedule.empty())
        rule(v.schedule);
      if (v.gridSms)
        rule("persistent");
      if (v.maxTiles)
        rule("max_tiles " + str(v.maxTiles));
      if (v.maxRows)
        rule("max_rows " + str(v.maxRows));
      if (v.kParam >= 0)
        rule("split-K over param #" + str(v.kParam) + " dim " + str(v.kDim));
      if (v.coarsen[0] * v.coarsen[1] * v.coarsen[2] > 1)
        rule("coarsen " + str(v.coarsen[0]) + "x" + str(v.coarsen[1]) + "x" +
             str(v.coarsen[2]));
      if (v.split > 1)
        rule("split " + str(v.split));
      if (v.tma.empty())
        rule("no tensor maps");
      else
        rule(str(int64_t(v.tma.size())) + " tensor maps");
      appendf(out, "  %s (%s, %s): %lld threads, %lld bytes shared; %s\n",
              v.kernel.c_str(), v.kind.c_str(), v.chip.c_str(),
              (long long)v.block[0], (long long)v.sharedBytes, rules.c_str());
    }
  }
  out += "sections\n";
  for (const tile::bundle::SectionView &s : k.bundle.sections)
    appendf(out, "  %-10.*s %zu bytes%s\n", int(s.name.size()), s.name.data(),
            s.size, isText(s) ? ", text" : "");
  return out;
}

} // namespace

extern "C" size_t tile_kernel_describe(tile_kernel_t k, char *buffer,
                                       size_t capacity) {
  std::string text;
  try {
    text = k ? describe(*k) : std::string();
  } catch (...) {
    text.clear(); // out of memory: describe nothing rather than throw
  }
  if (buffer && capacity) {
    size_t n = std::min(text.size(), capacity - 1);
    std::memcpy(buffer, text.data(), n);
    buffer[n] = '\0';
  }
  return text.size();
}
