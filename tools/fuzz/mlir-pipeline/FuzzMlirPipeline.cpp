//===- FuzzMlirPipeline.cpp - libFuzzer target: parse -> verify -> lower --===//
//
// The input is MLIR text. It is parsed (and so verified) in a context with
// every upstream dialect and extension loaded, as tilec does (the loaded
// dialects decide the canonicalization patterns the pipelines run; issue 10
// found a crash only that pattern set has). When it holds a `tile.kernel`,
// the module is lowered with the tile-to-cpu pipeline and, separately, with
// the generic GPU pipeline (tile-to-nvvm, chip sm_80, not serialized), with
// the verifier after every pass. Diagnostics are the expected outcome for
// most inputs and are dropped; a crash, an assertion, a fatal LLVM error, a
// sanitizer report or a hang (libFuzzer's -timeout) is a bug.
//
//===----------------------------------------------------------------------===//

#include "tile/Conversion/Passes.h"
#include "tile/Conversion/TileToNVVM.h"
#include "tile/Dialect/Tile/IR/TileDialect.h"
#include "tile/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>

using namespace mlir;

namespace {

/// Inputs above this size are skipped: their cost, not their content, would
/// dominate (the seeds are a few KiB).
constexpr size_t kMaxInputBytes = 64 * 1024;

/// A context accumulates uniqued types and attributes; a fresh one every so
/// many inputs keeps memory bounded without paying the setup on each input.
constexpr unsigned kInputsPerContext = 256;

struct Fuzzer {
  DialectRegistry registry;
  std::unique_ptr<MLIRContext> context;
  unsigned inputs = 0;

  Fuzzer() {
    registerAllDialects(registry);
    registerAllExtensions(registry);
    tile::registerAllDialects(registry);
  }

  MLIRContext &getContext() {
    if (!context || ++inputs % kInputsPerContext == 0) {
      context = std::make_unique<MLIRContext>(
          registry, MLIRContext::Threading::DISABLED);
      context->loadAllAvailableDialects();
      context->printOpOnDiagnostic(false);
      context->printStackTraceOnDiagnostic(false);
    }
    return *context;
  }
};

Fuzzer &getFuzzer() {
  static Fuzzer fuzzer;
  return fuzzer;
}

bool hasKernel(ModuleOp module) {
  for (auto func : module.getOps<func::FuncOp>())
    if (func->hasAttr(tile::TileDialect::kKernelAttrName))
      return true;
  return false;
}

void lower(ModuleOp module, function_ref<void(OpPassManager &)> build) {
  OwningOpRef<ModuleOp> copy = module.clone();
  PassManager pm(module.getContext());
  build(pm);
  (void)pm.run(*copy);
}

//===--------------------------------------------------------------------===//
// Mutations that keep the text parseable
//===--------------------------------------------------------------------===//
//
// Byte-level mutations of MLIR text mostly produce parse errors. Half of the
// mutations here instead replace one token of a known class by another of
// the same class — an element type, an integer literal, a memory scope, a
// reduction/atomic kind — so that the result still parses and reaches the
// verifiers and the lowerings with values their authors did not plan for
// (the crashes of issue 10: vector/index buffers, a negative dim index,
// 65536 pipeline stages).

struct TokenClass {
  ArrayRef<StringRef> words; // what is replaced (whole words)
  ArrayRef<StringRef> by;    // replacements
};

constexpr StringRef kTypes[] = {
    "f16",  "bf16", "f32", "f64",   "i1",         "i8",           "i16",
    "i32",  "i64",  "index", "f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "tf32",
    "f80",  "f4E2M1FN", "i4", "i17", "ui32", "si8", "vector<4xf32>",
    "complex<f32>", "none"};
constexpr StringRef kScopes[] = {"shared", "fragment", "local"};
constexpr StringRef kKinds[] = {"add", "max", "min", "sum", "abssum",
                                "absmax"};
constexpr StringRef kIntegers[] = {
    "0",   "1",    "-1",    "2",     "3",          "7",           "31",
    "32",  "33",   "64",    "96",    "127",        "128",         "255",
    "256", "1023", "1024",  "1025",  "4096",       "65536",       "1048576",
    "2147483647",  "-2147483648",    "4294967296", "9223372036854775807",
    "-9223372036854775808"};

bool isWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

/// Positions [begin, end) of the whole-word occurrences of `words` in `text`
/// (integers: maximal digit runs with an optional leading '-').
SmallVector<std::pair<size_t, size_t>> findTokens(StringRef text,
                                                  ArrayRef<StringRef> words,
                                                  bool integers) {
  SmallVector<std::pair<size_t, size_t>> found;
  for (size_t i = 0; i < text.size(); ++i) {
    if (i > 0 && (isWordChar(text[i - 1]) || text[i - 1] == '%'))
      continue;
    if (integers) {
      size_t j = i + (text[i] == '-');
      size_t k = j;
      while (k < text.size() && std::isdigit(static_cast<unsigned char>(text[k])))
        ++k;
      if (k > j && (k == text.size() || !isWordChar(text[k])))
        found.push_back({i, k});
      continue;
    }
    for (StringRef w : words) {
      // Element types follow the 'x' of a shape too ("64xf32").
      StringRef rest = text.drop_front(i);
      if (rest.starts_with(w) &&
          (i + w.size() == text.size() || !isWordChar(text[i + w.size()])))
        found.push_back({i, i + w.size()});
    }
  }
  // "64xf32": the type after a shape's 'x' is a word of its own.
  if (!integers)
    for (size_t i = 1; i < text.size(); ++i)
      if (text[i - 1] == 'x' && i >= 2 &&
          std::isdigit(static_cast<unsigned char>(text[i - 2])))
        for (StringRef w : words)
          if (text.drop_front(i).starts_with(w) &&
              (i + w.size() == text.size() || !isWordChar(text[i + w.size()])))
            found.push_back({i, i + w.size()});
  return found;
}

size_t mutateToken(uint8_t *data, size_t size, size_t maxSize,
                   std::mt19937 &rng) {
  StringRef text(reinterpret_cast<const char *>(data), size);
  int which = rng() % 4;
  ArrayRef<StringRef> words = which == 0   ? ArrayRef<StringRef>(kTypes)
                              : which == 1 ? ArrayRef<StringRef>(kScopes)
                              : which == 2 ? ArrayRef<StringRef>(kKinds)
                                           : ArrayRef<StringRef>();
  ArrayRef<StringRef> by = which == 3 ? ArrayRef<StringRef>(kIntegers) : words;
  auto tokens = findTokens(text, words, which == 3);
  if (tokens.empty())
    return 0;
  auto [begin, end] = tokens[rng() % tokens.size()];
  StringRef with = by[rng() % by.size()];
  std::string out = (text.take_front(begin) + with + text.drop_front(end)).str();
  if (out.size() > maxSize)
    return 0;
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

} // namespace

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned int seed) {
  std::mt19937 rng(seed);
  if (rng() % 2)
    if (size_t n = mutateToken(data, size, maxSize, rng))
      return n;
  return LLVMFuzzerMutate(data, size, maxSize);
}

// libMLIR is not instrumented, but the LLVM allocators its headers inline
// into this program poison the memory they keep for reuse (ASan builds see
// LLVM_ADDRESS_SANITIZER_BUILD); an allocator shared with libMLIR then
// reports false use-after-poison. Manual poisoning is off; every other
// check stays (ASAN_OPTIONS from the environment still apply on top).
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

/// Whether `text` holds a dense array of an element type that is neither
/// an integer nor a float (`array<index: 4>`, which the type mutation above
/// makes from `array<i64: 4>`): MLIR 22's parser crashes on it
/// (Parser::parseDenseArrayAttr asks the type for its bit width, a null
/// FloatType dereference). The crash is upstream's, not ours, so such
/// inputs are skipped rather than reported.
bool hasUpstreamDenseArrayCrash(StringRef text) {
  for (size_t pos = text.find("array<"); pos != StringRef::npos;
       pos = text.find("array<", pos + 1)) {
    StringRef type = text.drop_front(pos + 6).ltrim();
    if (type.starts_with("index") ||
        !(type.consume_front("i") || type.consume_front("si") ||
          type.consume_front("ui") || type.consume_front("f") ||
          type.consume_front("bf") || type.consume_front("tf")))
      return true;
  }
  return false;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > kMaxInputBytes)
    return 0;
  if (hasUpstreamDenseArrayCrash(
          StringRef(reinterpret_cast<const char *>(data), size)))
    return 0;
  MLIRContext &ctx = getFuzzer().getContext();
  ScopedDiagnosticHandler silence(&ctx,
                                  [](Diagnostic &) { return success(); });
  ParserConfig config(&ctx);
  // The lexer reads up to a terminating NUL, as files and strings have;
  // libFuzzer's buffer has none.
  std::string text(reinterpret_cast<const char *>(data), size);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, config);
  if (!module || !hasKernel(*module))
    return 0;
  lower(*module, [](OpPassManager &pm) {
    tile::buildTileToCPUPipeline(pm, tile::TileToCPUPipelineOptions());
  });
  lower(*module, [](OpPassManager &pm) {
    tile::TileToNVVMPipelineOptions options;
    options.chip = "sm_80";
    options.format = "none";
    tile::buildTileToNVVMPipeline(pm, options);
  });
  return 0;
}
