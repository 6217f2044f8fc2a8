//===- tilec.cpp - compile a tile kernel into a bundle --------------------===//
//
//   tilec kernel.mlir [--target=cpu|cuda] [--chip=...] -o kernel.tileb
//   tilec kernel.mlir --emit=metadata|mlir|llvm|obj|ptx|cubin|bundle [-o out]
//   tilec --info kernel.tileb [--section=NAME]
//   tilec --print-toolchain [--target=cuda]
//
// Parses the kernel, lowers it with the target's pipeline (or the one given
// with --pass-pipeline), generates machine code and packs the metadata and the
// binaries into a bundle (docs/bundle.md) that the runtime loads. Targets,
// their chips and emit kinds come from the target registry
// (tile/Target/TargetBackend.h). --help lists tilec's own options; LLVM's and
// MLIR's are behind --help-hidden.
//
//===----------------------------------------------------------------------===//

#include "tile/Compiler/Compile.h"
#include "tile/InitAll.h"
#include "tile/Target/AllTargets.h"
#include "tile/Target/EmbeddedLinker.h"
#include "tile/Target/TargetBackend.h"

#ifdef TILE_TILEC_WITH_RUNTIME
#include "tile/Runtime/tile_runtime.h"
#endif

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Transforms/Passes.h"

#include "tile/Support/OutputFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cstdlib>
#include <deque>

using namespace mlir;
namespace cl = llvm::cl;

namespace {

/// A cl::opt value picked from names known only at run time (registered
/// targets, emit kinds): --help lists them, an unknown one is a clear error.
/// `Tag` is an enum class so that cl::parser<Tag> is the literal parser.
template <typename Tag> class ChoiceParser : public cl::parser<Tag> {
public:
  using cl::parser<Tag>::parser;

  void add(StringRef name, StringRef help) {
    for (const std::string &n : names)
      if (n == name)
        return;
    names.push_back(name.str());
    helps.push_back(help.str());
    this->addLiteralOption(names.back(), Tag(names.size() - 1), helps.back());
  }
  StringRef name(Tag value) const { return names[unsigned(value)]; }

  bool parse(cl::Option &option, StringRef, StringRef arg, Tag &value) {
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == arg) {
        value = Tag(i);
        return false;
      }
    return option.error("unknown value '" + arg + "' (expected one of: " +
                        llvm::join(names, ", ") + ")");
  }

private:
  std::deque<std::string> names, helps; // stable storage for the StringRefs
};

enum class TargetChoice : unsigned {};
enum class EmitChoice : unsigned {};

cl::OptionCategory tilecCategory("tilec options");
cl::OptionCategory debugCategory("Debugging (MLIR)");

cl::opt<std::string> inputFile(cl::Positional,
                               cl::desc("<kernel.mlir | bundle with --info>"),
                               cl::init("-"), cl::cat(tilecCategory));
cl::opt<std::string> outputFile(
    "o",
    cl::desc("Output file (default: <input>.tileb for bundles, "
             "<input>.<ext> for binary --emit kinds, else stdout)"),
    cl::value_desc("path"), cl::init(""), cl::cat(tilecCategory));
cl::opt<TargetChoice, false, ChoiceParser<TargetChoice>>
    targetOpt("target", cl::desc("Target to compile for (default: cpu)"),
              cl::cat(tilecCategory));
cl::opt<std::string> chip("chip", cl::init(""), cl::cat(tilecCategory));
cl::opt<std::string>
    features("features",
             cl::desc("Target features, comma separated (cpu: +avx2,...; "
                      "cuda: the PTX ISA, default +ptx80)"),
             cl::init(""), cl::cat(tilecCategory));
cl::opt<EmitChoice, false, ChoiceParser<EmitChoice>>
    emitOpt("emit", cl::desc("What to write (default: bundle)"),
            cl::cat(tilecCategory));
cl::list<std::string> backends(
    "backend",
    cl::desc("Execution backends to generate code for (default: all "
             "the target supports; cpu: ffi, native; cuda: ffi, native, "
             "nvrtc (the CUDA C++ source section))"),
    cl::CommaSeparated, cl::cat(tilecCategory));
cl::opt<std::string> passPipeline(
    "pass-pipeline",
    cl::desc("Textual pass pipeline to lower with instead of the target's, "
             "e.g. 'tile-to-nvvm{chip=sm_90a format=none}' (the "
             "builtin.module(...) anchor is optional)"),
    cl::init(""), cl::cat(tilecCategory));
cl::list<int>
    outIdx("out-idx",
           cl::desc("Parameters that are outputs the runtime may allocate "
                    "(adds tile.output; negative: from the end)"),
           cl::CommaSeparated, cl::cat(tilecCategory));
cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimization level (0-3)"),
                           cl::init(3), cl::Prefix, cl::cat(tilecCategory));
cl::opt<std::string> toolkit(
    "toolkit",
    cl::desc("Root of the target's external toolkit (cuda: a CUDA toolkit "
             "with bin/ptxas and nvvm/libdevice); default: found as "
             "--print-toolchain shows"),
    cl::value_desc("dir"), cl::init(""), cl::cat(tilecCategory));
cl::opt<bool> remarks(
    "remarks",
    cl::desc("Print a remark for each op that gets a slower lowering than "
             "the target's best, with the reason (cuda: kernels without the "
             "sm_90a TMA/wgmma path, gemms on SIMT)"),
    cl::init(false), cl::cat(tilecCategory));
// Not "fp-contract": LLVM's codegen flags register that name in the static
// tilec (its embedded ld.lld), and two registrations abort.
cl::opt<bool> fpContract(
    "fp-fusion",
    cl::desc("GPU targets: fuse float multiply-adds into fma instructions "
             "(like nvcc --fmad=true); false keeps each operation rounded "
             "separately (results closer to the CPU target's)"),
    cl::init(true), cl::cat(tilecCategory));
cl::opt<bool> preciseDiv(
    "precise-div",
    cl::desc("CUDA: keep f32 divisions correctly rounded (div.rn.f32); by "
             "default they compile to div.full.f32, at most 2 ulp off, as "
             "with nvcc --prec-div=false and in Triton"),
    cl::init(false), cl::cat(tilecCategory));
cl::opt<bool> verifyEach(
    "verify-each",
    cl::desc("Verify the IR after every pass of the lowering (slower; for "
             "debugging a pass). Without it, the input and the lowered "
             "module are verified once"),
    cl::init(false), cl::cat(tilecCategory));
cl::opt<unsigned> jobs(
    "jobs",
    cl::desc("Threads for the compile: MLIR's passes and the cuda target's "
             "device code (one LLVM module per kernel); 0 (default): one per "
             "core; 1: one thread, like --mlir-disable-threading. The output "
             "is the same for any N"),
    cl::value_desc("N"), cl::init(0), cl::cat(tilecCategory));
cl::opt<bool> info(
    "info",
    cl::desc("Describe the bundle given as input (interface, launch shape, "
             "sections) without loading its device code: works for any "
             "target on any machine"),
    cl::cat(tilecCategory));
cl::opt<std::string>
    section("section",
            cl::desc("With --info: write this section of the bundle instead "
                     "(mlir, llvm, ptx, metadata, ...)"),
            cl::value_desc("name"), cl::init(""), cl::cat(tilecCategory));
cl::opt<bool> printToolchain(
    "print-toolchain",
    cl::desc("Print where the --target's external tools (ld.lld, ptxas, "
             "libdevice) are found, and every place searched, in order"),
    cl::cat(tilecCategory));

/// Fills the run-time parts of the options from the target registry.
void describeTargets() {
  std::string chipHelp = "Chip:";
  for (const mlir::tile::TargetBackend *t :
       mlir::tile::getRegisteredTargets()) {
    targetOpt.getParser().add(t->getName(), t->getDescription());
    chipHelp += " " + t->getName().str() + ": " + t->getChipHelp() + ";";
  }
  static std::string chipDesc = chipHelp;
  chip.setDescription(chipDesc);

  auto &emits = emitOpt.getParser();
  emits.add(mlir::tile::kEmitBundle,
            "the kernel bundle the runtime loads (docs/bundle.md)");
  emits.add(mlir::tile::kEmitMetadata,
            "the kernel's interface (params, grid, ...) as JSON, unlowered");
  emits.add(mlir::tile::kEmitMLIR, "the module after the target's lowering");
  // Kinds several targets share ("llvm", "obj") get one line naming each.
  std::vector<std::pair<std::string, std::string>> kinds;
  for (const mlir::tile::TargetBackend *t :
       mlir::tile::getRegisteredTargets())
    for (const mlir::tile::EmitKind &k : t->getEmitKinds()) {
      std::string line = t->getName().str() + ": " + k.description;
      auto it = llvm::find_if(kinds, [&](auto &e) { return e.first == k.name; });
      if (it == kinds.end())
        kinds.push_back({k.name, line});
      else
        it->second += "; " + line;
    }
  for (auto &[name, help] : kinds)
    emits.add(name, help);
}

/// --help shows tilec's options and a few MLIR debugging ones; everything
/// else (LLVM's codegen flags, MLIR's) stays available behind --help-hidden.
void hideUnrelatedOptions() {
  auto &options = cl::getRegisteredOptions();
  for (StringRef name :
       {"mlir-print-ir-after-all", "mlir-print-ir-before-all",
        "mlir-print-ir-after-failure", "mlir-print-ir-tree-dir",
        "mlir-timing", "mlir-disable-threading"})
    if (cl::Option *o = options.lookup(name))
      o->addCategory(debugCategory);
  // Hidden, not cl::HideUnrelatedOptions' ReallyHidden: --help-hidden
  // still lists them.
  for (auto &entry : options) {
    cl::Option *o = entry.second;
    bool ours = llvm::any_of(o->Categories, [](cl::OptionCategory *c) {
      return c == &tilecCategory || c == &debugCategory;
    });
    bool generic = llvm::is_contained(
        {StringRef("help"), StringRef("help-list"), StringRef("version")},
        entry.first);
    if (!ours && !generic && o->getOptionHiddenFlag() == cl::NotHidden)
      o->setHiddenFlag(cl::Hidden);
  }
}

/// An LLVM fatal error (a code generator failing on input validation let
/// through) ends tilec with a diagnostic and status 1, not an abort.
void onFatalError(void *, const char *reason, bool) {
  llvm::errs() << "tilec: error: LLVM failed: " << reason << "\n";
  llvm::errs().flush();
  std::_Exit(1);
}

int writeOutput(StringRef path, StringRef bytes) {
  std::string error;
  auto out = openOutputFile(path, &error);
  if (!out) {
    llvm::errs() << "tilec: cannot write '" << path << "': " << error << "\n";
    return 1;
  }
  out->os() << bytes;
  return succeeded(mlir::tile::closeOutputFile(*out, /*keep=*/true, "tilec"))
             ? 0
             : 1;
}

/// tilec --info BUNDLE [--section=NAME]: the runtime reads the bundle (the
/// compiler parses no metadata of its own), without loading device code.
int runInfo() {
#ifdef TILE_TILEC_WITH_RUNTIME
  tile_kernel_t k = nullptr;
  if (tile_kernel_inspect_file(inputFile.c_str(), &k) != TILE_STATUS_OK) {
    llvm::errs() << "tilec: error: " << inputFile << ": " << tile_last_error()
                 << "\n";
    return 1;
  }
  std::string text;
  if (!section.empty()) {
    const void *data = nullptr;
    size_t size = 0;
    if (tile_kernel_section(k, section.c_str(), &data, &size) !=
        TILE_STATUS_OK) {
      std::vector<std::string> names;
      for (int32_t i = 0; i < tile_kernel_num_sections(k); ++i)
        names.push_back(tile_kernel_section_name(k, i));
      llvm::errs() << "tilec: error: " << inputFile << " has no section '"
                   << section << "' (it has: " << llvm::join(names, ", ")
                   << ")\n";
      tile_kernel_release(k);
      return 1;
    }
    text.assign(static_cast<const char *>(data), size);
  } else {
    text.resize(tile_kernel_describe(k, nullptr, 0));
    tile_kernel_describe(k, text.data(), text.size() + 1);
  }
  tile_kernel_release(k);
  return writeOutput(outputFile.empty() ? "-" : outputFile.getValue(), text);
#else
  llvm::errs() << "tilec: error: --info needs the runtime; this tilec was "
                  "built with TILE_ENABLE_RUNTIME=OFF\n";
  return 1;
#endif
}

} // namespace

int main(int argc, char **argv) {
  int linkerExit; // the static tilec's linker child (EmbeddedLinker.h)
  if (mlir::tile::runEmbeddedLinkerMain(argc, argv, linkerExit))
    return linkerExit;
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::install_fatal_error_handler(onFatalError);
  // tile's passes and MLIR's generic ones (canonicalize, cse, ...) for
  // --pass-pipeline; the dialects are those tile and its targets use, not
  // MLIR's registerAll*: a static tilec (the wheel) then carries no other
  // dialect, pass or code generator.
  mlir::tile::registerAllPasses();
  registerTransformsPasses();
  mlir::tile::registerAllTargets();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  describeTargets();
  hideUnrelatedOptions();
  cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "tile " << TILE_VERSION << " (targets: "
       << mlir::tile::getRegisteredTargetNames() << ")\n";
  });
  cl::ParseCommandLineOptions(
      argc, argv,
      "tile kernel compiler\n\n"
      "  tilec kernel.mlir --target=cuda --chip=sm_90a -o kernel.tileb\n"
      "  tilec kernel.mlir --target=cuda --emit=ptx\n"
      "  tilec --info kernel.tileb [--section=mlir]\n\n"
      "LLVM's and MLIR's own options: --help-hidden\n");

  if (info)
    return runInfo();

  mlir::tile::CompileOptions options;
  options.inputPath = inputFile;
  if (targetOpt.getNumOccurrences())
    options.target = targetOpt.getParser().name(targetOpt).str();
  options.chip = chip;
  options.features = features;
  if (emitOpt.getNumOccurrences())
    options.emit = emitOpt.getParser().name(emitOpt).str();
  options.backends.assign(backends.begin(), backends.end());
  options.passPipeline = passPipeline;
  options.outIdx.assign(outIdx.begin(), outIdx.end());
  options.optLevel = optLevel;
  options.toolkitPath = toolkit;
  options.remarks = remarks;
  options.fpContract = fpContract;
  options.preciseDiv = preciseDiv;
  options.verifyEachPass = verifyEach;

  if (printToolchain) {
    const mlir::tile::TargetBackend *t =
        mlir::tile::lookupTarget(options.target);
    llvm::outs() << "target " << options.target << "\n"
                 << t->describeToolchain(options);
    return 0;
  }

  DialectRegistry registry;
  mlir::tile::registerAllDialects(registry);
  for (const mlir::tile::TargetBackend *t : mlir::tile::getRegisteredTargets())
    t->registerDialects(registry);
  // --jobs=N: the context's threads (declared first: outlives the context).
  std::optional<llvm::DefaultThreadPool> threads;
  MLIRContext context(registry);
  if (jobs != 0 && context.isMultithreadingEnabled()) {
    context.disableMultithreading();
    if (jobs > 1) {
      threads.emplace(llvm::hardware_concurrency(jobs));
      context.setThreadPool(*threads);
    }
  }
  context.loadAllAvailableDialects();
  // Errors and remarks point at the user's source line; the op dump MLIR
  // attaches to every diagnostic (the whole kernel in generic form for an
  // error on the function) would bury them. --mlir-print-op-on-diagnostic
  // given explicitly still decides.
  auto &registered = llvm::cl::getRegisteredOptions();
  auto printOp = registered.find("mlir-print-op-on-diagnostic");
  if (printOp == registered.end() ||
      printOp->second->getNumOccurrences() == 0)
    context.printOpOnDiagnostic(false);

  std::string output;
  if (failed(mlir::tile::compileKernel(context, options, output)))
    return 1;

  std::string outPath = outputFile;
  if (outPath.empty())
    outPath = mlir::tile::defaultOutputPath(inputFile, options);
  return writeOutput(outPath, output);
}
