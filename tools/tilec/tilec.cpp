//===- tilec.cpp - compile a tile kernel into a bundle --------------------===//
//
//   tilec kernel.mlir --target=cpu -o kernel.tileb
//   tilec kernel.mlir --emit=mlir|llvm|obj|bundle [-o out]
//
// Parses the kernel, lowers it with the target's pipeline (or the one given
// with --pass-pipeline), generates machine code and packs the metadata and the
// binaries into a bundle (docs/bundle.md) that the runtime loads.
//
//===----------------------------------------------------------------------===//

#include "tile/Compiler/Compile.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include "tile/InitAll.h"
#include "tile/Support/OutputFile.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory tilecCategory("tilec options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<kernel.mlir>"),
                                      cl::init("-"), cl::cat(tilecCategory));
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("path"), cl::init(""),
                                       cl::cat(tilecCategory));
static cl::opt<mlir::tile::Target> target(
    "target", cl::desc("Target to compile for"), cl::init(mlir::tile::Target::CPU),
    cl::values(clEnumValN(mlir::tile::Target::CPU, "cpu", "the host CPU"),
               clEnumValN(mlir::tile::Target::CUDA, "cuda", "NVIDIA GPUs (cubin)"),
               clEnumValN(mlir::tile::Target::HIP, "hip", "AMD GPUs (hsaco)"),
               clEnumValN(mlir::tile::Target::Metal, "metal", "Apple GPUs (MSL)")),
    cl::cat(tilecCategory));
static cl::opt<std::string>
    chip("chip",
         cl::desc("Chip: CPU name (default: the host's), sm_80, sm_90a, gfx942"),
         cl::init(""), cl::cat(tilecCategory));
static cl::opt<std::string> features("features", cl::desc("Target features"),
                                     cl::init(""), cl::cat(tilecCategory));
static cl::opt<mlir::tile::Emit> emit(
    "emit", cl::desc("What to write"), cl::init(mlir::tile::Emit::Bundle),
    cl::values(clEnumValN(mlir::tile::Emit::Metadata, "metadata",
                          "the kernel's metadata (JSON)"),
               clEnumValN(mlir::tile::Emit::MLIR, "mlir", "IR after lowering"),
               clEnumValN(mlir::tile::Emit::LLVM, "llvm", "LLVM IR of the host code"),
               clEnumValN(mlir::tile::Emit::Object, "obj", "object file"),
               clEnumValN(mlir::tile::Emit::Bundle, "bundle", "kernel bundle")),
    cl::cat(tilecCategory));
static cl::list<std::string>
    backends("backend",
             cl::desc("Execution backends to generate code for (default: all "
                      "the target supports): ffi, native"),
             cl::CommaSeparated, cl::cat(tilecCategory));
static cl::opt<std::string>
    passPipeline("pass-pipeline",
                 cl::desc("Textual pass pipeline to lower with instead of "
                          "the target's"),
                 cl::init(""), cl::cat(tilecCategory));
static cl::list<int>
    outIdx("out-idx",
           cl::desc("Parameters that are outputs the runtime may allocate "
                    "(adds tile.output; negative: from the end)"),
           cl::CommaSeparated, cl::cat(tilecCategory));
static cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimization level"),
                                  cl::init(3), cl::Prefix,
                                  cl::cat(tilecCategory));

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerAllPasses();
  mlir::tile::registerAllPasses();
  registerPassManagerCLOptions();
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  cl::ParseCommandLineOptions(argc, argv, "tile kernel compiler\n");

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  mlir::tile::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  mlir::tile::CompileOptions options;
  options.inputPath = inputFile;
  options.target = target;
  options.chip = chip;
  options.features = features;
  options.emit = emit;
  options.backends.assign(backends.begin(), backends.end());
  options.passPipeline = passPipeline;
  options.outIdx.assign(outIdx.begin(), outIdx.end());
  options.optLevel = optLevel;

  std::string output;
  if (failed(mlir::tile::compileKernel(context, options, output)))
    return 1;

  std::string outPath = outputFile;
  if (outPath.empty())
    outPath = (emit == mlir::tile::Emit::Bundle || emit == mlir::tile::Emit::Object)
                  ? mlir::tile::defaultOutputPath(inputFile, emit)
                  : "-";
  std::string error;
  auto out = openOutputFile(outPath, &error);
  if (!out) {
    llvm::errs() << "tilec: cannot write '" << outPath << "': " << error
                 << "\n";
    return 1;
  }
  out->os() << output;
  return succeeded(mlir::tile::closeOutputFile(*out, /*keep=*/true, "tilec"))
             ? 0
             : 1;
}
