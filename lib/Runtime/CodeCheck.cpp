//===- CodeCheck.cpp - Cross-checks of a bundle's code and its metadata ---===//
#include "CodeCheck.h"
#include "ElfImage.h"

#include <cstdio>
#include <cstring>
#include <elf.h>

namespace tile::rt {
namespace {

constexpr std::string_view kBlocksSuffix = "__tile_blocks";
constexpr std::string_view kNativeSuffix = "__tile_native";
constexpr std::string_view kHashSuffix = bundle::kMetadataHashSuffix;

bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.substr(s.size() - suffix.size()) == suffix;
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

tile_status bundleError(std::string message) {
  return fail(TILE_STATUS_BUNDLE_ERROR, std::move(message));
}

/// The role an entry symbol's name claims, for messages.
const char *roleOf(std::string_view symbol) {
  if (endsWith(symbol, kBlocksSuffix))
    return "the block function's (entry.blocks)";
  if (endsWith(symbol, kNativeSuffix))
    return "the native wrapper's (entry.native)";
  if (endsWith(symbol, kHashSuffix))
    return "the metadata hash's";
  return nullptr;
}

/// `entry.<field>` = `symbol` must carry `suffix`, the name of its role.
tile_status checkRole(const char *field, const std::string &symbol,
                      std::string_view suffix) {
  if (endsWith(symbol, suffix) && symbol.size() > suffix.size())
    return TILE_STATUS_OK;
  const char *other = roleOf(symbol);
  return bundleError("bundle metadata: entry." + std::string(field) + " '" +
                     symbol + "' must name a '" + std::string(suffix) +
                     "' symbol" +
                     (other ? std::string(", but it has ") + other + " name"
                            : std::string()));
}

/// The entry point `symbol` (if `required`, it must exist) is an exported
/// function in executable memory of `image`.
tile_status checkFunction(const elf::Image &image, const char *section,
                          const char *field, const std::string &symbol,
                          bool required) {
  const elf::Symbol *s = image.find(symbol);
  if (!s) {
    if (!required)
      return TILE_STATUS_OK;
    return bundleError(std::string(section) + " does not define the " +
                       (std::strcmp(field, "blocks") == 0
                            ? "block function '"
                            : "entry point '") +
                       symbol + "'");
  }
  if (s->type != STT_FUNC || !image.isCode(*s) ||
      (s->binding != STB_GLOBAL && s->binding != STB_WEAK) ||
      (s->visibility != STV_DEFAULT && s->visibility != STV_PROTECTED))
    return bundleError(std::string(section) + ": entry." + field + " '" +
                       symbol + "' is not an exported function");
  return TILE_STATUS_OK;
}

/// The metadata hash in `image`, if it carries one, equals the metadata's.
tile_status checkHash(const KernelPlan &plan, const elf::Image &image,
                      const char *section) {
  const std::string expected = plan.name + std::string(kHashSuffix);
  for (const elf::Symbol &s : image.symbols()) {
    if (!endsWith(s.name, kHashSuffix))
      continue;
    if (s.name != expected)
      return bundleError(
          "bundle metadata does not match its code: " + std::string(section) +
          " carries the metadata hash of kernel '" +
          std::string(s.name.substr(0, s.name.size() - kHashSuffix.size())) +
          "', but the metadata names kernel '" + plan.name + "'");
    std::string_view value = image.contents(s);
    if (s.type != STT_OBJECT || s.size != 8 || value.size() != 8)
      return bundleError(std::string(section) + ": '" + expected +
                         "' is not an 8-byte constant");
    uint64_t h;
    std::memcpy(&h, value.data(), 8);
    uint64_t expectedHash = bundle::metadataHash(plan.metadataText);
    if (h != expectedHash)
      return bundleError(hashMismatch(plan.name, expectedHash, section, h));
  }
  return TILE_STATUS_OK;
}

tile_status parseElf(const bundle::SectionView &section, elf::Image &image) {
  std::string error;
  if (!image.parse(section.bytes(), error))
    return bundleError("section '" + std::string(section.name) + "' " + error);
  return TILE_STATUS_OK;
}

tile_status checkCpu(const KernelPlan &plan, const bundle::Reader &bundle) {
  const bundle::SectionView *so = bundle.find("host.so");
  if (!so)
    return bundleError("bundle for target 'cpu' has no 'host.so' section");
  if (tile_status st = checkRole("blocks", plan.entryBlocks, kBlocksSuffix))
    return st;
  if (!plan.entryNative.empty())
    if (tile_status st = checkRole("native", plan.entryNative, kNativeSuffix))
      return st;
  elf::Image image;
  if (tile_status st = parseElf(*so, image))
    return st;
  if (tile_status st = checkHash(plan, image, "host.so"))
    return st;
  if (tile_status st =
          checkFunction(image, "host.so", "blocks", plan.entryBlocks, true))
    return st;
  // A missing native wrapper is not an error here: backend 'auto' then
  // uses ffi, and 'native' says so (Load.cpp).
  return checkFunction(image, "host.so", "native", plan.entryNative, false);
}

tile_status checkCuda(const KernelPlan &plan, const bundle::Reader &bundle) {
  if (!plan.entryKernel.empty() && roleOf(plan.entryKernel))
    return bundleError("bundle metadata: entry.kernel '" + plan.entryKernel +
                       "' has " + roleOf(plan.entryKernel) +
                       " name, not a device kernel's");
  if (!plan.entryBlocks.empty())
    if (tile_status st = checkRole("blocks", plan.entryBlocks, kBlocksSuffix))
      return st;
  const bundle::SectionView *so = bundle.find("native.so");
  if (!so)
    return TILE_STATUS_OK;
  if (!plan.entryNative.empty())
    if (tile_status st = checkRole("native", plan.entryNative, kNativeSuffix))
      return st;
  elf::Image image;
  if (tile_status st = parseElf(*so, image))
    return st;
  if (tile_status st = checkHash(plan, image, "native.so"))
    return st;
  return checkFunction(image, "native.so", "native", plan.entryNative, false);
}

} // namespace

std::string hashMismatch(const std::string &kernel, uint64_t metadataHash,
                         const std::string &where, uint64_t codeHash) {
  return "bundle metadata does not match its code: " + where +
         " of kernel '" + kernel + "' was compiled from metadata with hash " +
         hex(codeHash) + ", but the bundle's metadata hashes to " +
         hex(metadataHash) +
         " (edited metadata, or metadata and code from different compiles)";
}

tile_status checkBundleCode(const KernelPlan &plan,
                            const bundle::Reader &bundle) {
  switch (plan.target) {
  case TargetKind::Cpu:
    return checkCpu(plan, bundle);
  case TargetKind::Cuda:
  case TargetKind::Hip: // the same entry names and native.so host side
    return checkCuda(plan, bundle);
  case TargetKind::Metal:
    break;
  }
  return TILE_STATUS_OK;
}

} // namespace tile::rt
