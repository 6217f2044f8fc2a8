//===- TargetBackend.h - a compilation target of tilec ----------*- C++ -*-===//
//
// A target turns a lowered tile module into the sections of a bundle
// (docs/bundle.md). The compiler driver (tile/Compiler/Compile.h) owns the
// one sequence every target shares:
//
//   parse, verify, mark outputs
//   -> TargetBackend::validate          (chip, features, backends)
//   -> [--emit=metadata]                (the kernel's interface, unlowered)
//   -> TargetBackend::buildPipeline     (or --pass-pipeline)
//   -> [--emit=mlir]
//   -> TargetBackend::generate          (code generation; one artefact for
//                                        --emit=<kind>, else the sections)
//   -> bundle: metadata + the target's sections + mlir (the source)
//
// A target lives in its own folder (lib/Target/<Name>/, this header's
// tile/Target/<Name>/ beside it) and is registered by registerAllTargets()
// (tile/Target/AllTargets.h; CMake's TILE_TARGETS_TO_BUILD lists the
// folders). Nothing else in the compiler names a target: docs/architecture.md
// has the checklist for adding one.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_TARGET_TARGETBACKEND_H
#define TILE_TARGET_TARGETBACKEND_H

#include "tile/Runtime/Bundle.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/LLVM.h"
#include "mlir/Support/Timing.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir {
class OpPassManager;
class PassManager;
namespace tile {

/// The driver's own --emit kinds (every target has them).
inline constexpr StringLiteral kEmitBundle = "bundle";
inline constexpr StringLiteral kEmitMetadata = "metadata";
inline constexpr StringLiteral kEmitMLIR = "mlir";

/// What the compiler is asked to do; the target reads the validated copy.
struct CompileOptions {
  std::string inputPath = "-";
  /// Source text; when non-empty it is compiled instead of `inputPath`.
  std::string source;
  /// A registered target's name (TargetBackend::getName()).
  std::string target = "cpu";
  /// The target's chip; TargetBackend::validate fills in the default.
  std::string chip;
  std::string features;
  /// kEmitBundle, kEmitMetadata, kEmitMLIR or one of the target's kinds.
  std::string emit = kEmitBundle.str();
  /// Execution backends to generate host code for; validate() replaces an
  /// empty list by all the target supports.
  std::vector<std::string> backends;
  /// Replaces the target's lowering pipeline when non-empty (textual, with
  /// or without the `builtin.module(...)` anchor).
  std::string passPipeline;
  /// Parameters to mark as outputs (tile.output) in addition to the source's.
  std::vector<int64_t> outIdx;
  unsigned optLevel = 3;
  /// Root of the target's external toolkit (CUDA: bin/ptxas,
  /// nvvm/libdevice); empty = the target's discovery (docs/building.md).
  std::string toolkitPath;
  /// Report, as remarks on the op, where the lowering takes a slower path
  /// than the target's best (e.g. a kernel without the sm_90a Hopper path,
  /// a gemm on SIMT): tilec --remarks, Python compile(verbose=True).
  bool remarks = false;
  /// GPU targets: let the code generator fuse a multiply feeding an add
  /// into one fma (nvcc's --fmad=true, the default there too); tilec
  /// --fp-fusion=false keeps every float operation separately rounded.
  bool fpContract = true;
  /// GPU targets (cuda): f32 divisions stay IEEE (div.rn.f32); by default
  /// they are PTX div.full.f32, at most 2 ulp off (tilec --precise-div).
  bool preciseDiv = false;
  /// Run MLIR's verifier after every pass of the lowering pipelines (tilec
  /// --verify-each), as tile-opt does by default. Off, the input and each
  /// pipeline's result are still verified once: on the sm_90a GEMM the
  /// per-pass runs were 0.13 s of the 0.35 s lowering (docs/performance.md).
  bool verifyEachPass = false;
  /// Where the driver and the target record the time of each phase (tilec
  /// --mlir-timing); null when nobody listens. Targets nest their phases
  /// with nestTiming().
  TimingScope *timing = nullptr;
};

/// A phase of `options.timing` called `name` (an empty scope when untimed).
inline TimingScope nestTiming(const CompileOptions &options, StringRef name) {
  return options.timing ? options.timing->nest(name) : TimingScope();
}

/// Runs a lowering pipeline `pm` (already filled) on `module`: MLIR's
/// verifier after every pass when options.verifyEachPass, else once on the
/// result, whose failure is an error naming `what` and --verify-each.
LogicalResult runLoweringPipeline(PassManager &pm, ModuleOp module,
                                  const CompileOptions &options,
                                  StringRef what);

/// A target-specific --emit kind (besides bundle, metadata and mlir).
struct EmitKind {
  std::string name;        ///< "ptx"
  std::string description; ///< what the file holds, for --help
  bool binary = false;     ///< bytes, not text: tilec writes a file
  std::string extension;   ///< default output extension ("ptx", "o")
};

/// What TargetBackend::generate produces.
struct TargetOutput {
  /// --emit=<target kind>: that artefact.
  std::string artifact;
  /// --emit=bundle: the target's sections, in bundle order (the driver adds
  /// "metadata" before them and "mlir" after them).
  std::vector<::tile::bundle::Section> sections;
};

/// One compilation target (a plug-in of the compiler driver).
class TargetBackend {
public:
  virtual ~TargetBackend();

  /// --target=<name>; also the metadata's target kind ("cpu", "cuda").
  virtual StringRef getName() const = 0;
  /// One line for --help ("NVIDIA GPUs: cubin + PTX, sm_80 or newer").
  virtual StringRef getDescription() const = 0;
  /// The chips --chip accepts, for --help and diagnostics.
  virtual std::string getChipHelp() const = 0;
  /// Execution backends tilec can generate code for (`--backend`).
  virtual ArrayRef<StringRef> getExecutionBackends() const = 0;
  /// The target's own --emit kinds.
  virtual ArrayRef<EmitKind> getEmitKinds() const = 0;

  /// Dialects, interfaces and translations the target's pipeline and code
  /// generation need.
  virtual void registerDialects(DialectRegistry &registry) const {}

  /// Checks the chip (filling in the default when empty) and the features
  /// of `options`, reporting problems at `loc`. Whatever passes must not
  /// abort later: a chip the lowering cannot handle is rejected here. The
  /// driver has already checked `emit` and `backends` against the target's
  /// lists.
  virtual LogicalResult validate(CompileOptions &options,
                                 Location loc) const = 0;

  /// Adds the default lowering pipeline for the validated `options`.
  virtual void buildPipeline(OpPassManager &pm,
                             const CompileOptions &options) const = 0;

  /// Generates code for the lowered `module`. For --emit=bundle fills
  /// `out.sections`; for one of getEmitKinds() fills `out.artifact` (and
  /// only does the work that artefact needs).
  virtual LogicalResult generate(ModuleOp module, const CompileOptions &options,
                                 TargetOutput &out) const = 0;

  /// Whether the target also lowers the kernel a second way, from the
  /// module as it was before buildPipeline (a source target: cuda's C++ for
  /// the nvrtc backend). The driver then keeps a copy of the verified module
  /// and calls generateFromUnlowered once the pipeline has run: on a second
  /// thread, concurrently with generate, unless the context has
  /// multithreading disabled (then after generate).
  virtual bool needsUnloweredModule(const CompileOptions &options) const {
    return false;
  }

  /// The second lowering (see needsUnloweredModule): `unlowered` is the
  /// verified input (the target may lower it in place), `lowered` the module
  /// generate() sees. It may run while generate() changes `lowered`'s body:
  /// it may read `lowered`'s own attributes (the kernel metadata), nothing
  /// inside it, and generate() must not change those attributes. Appends its sections to `out.sections` for
  /// --emit=bundle, or fills `out.artifact` for its own emit kinds.
  virtual LogicalResult generateFromUnlowered(ModuleOp unlowered,
                                              ModuleOp lowered,
                                              const CompileOptions &options,
                                              TargetOutput &out) const {
    return success();
  }

  /// Where the target's external tools and files are found for `options`
  /// (one ToolSearch::describe() per tool), for `tilec --print-toolchain`.
  virtual std::string describeToolchain(const CompileOptions &options) const {
    return "";
  }

  /// The emit kind called `name`, or nullptr.
  const EmitKind *findEmitKind(StringRef name) const;
};

/// Adds `target` to the process-wide registry (a second target of the same
/// name is ignored: registration is idempotent).
void registerTarget(std::unique_ptr<TargetBackend> target);
/// The registered target called `name`, or nullptr.
const TargetBackend *lookupTarget(StringRef name);
/// Every registered target, in registration order.
std::vector<const TargetBackend *> getRegisteredTargets();
/// "cpu, cuda": the registered targets' names.
std::string getRegisteredTargetNames();

} // namespace tile
} // namespace mlir

#endif // TILE_TARGET_TARGETBACKEND_H
