//===- CompileCUDA.cpp - compile a tile kernel for NVIDIA GPUs ------------===//
//
// tile-to-nvvm up to (excluding) serialization, then gpu-module-to-binary
// twice: format=isa for the PTX section and format=bin (ptxas) for the
// cubin. The host side is the native wrapper alone (deviceType kDLCUDA),
// compiled for the host CPU into native.so.
//
//===----------------------------------------------------------------------===//

#include "tile/Compiler/CompileCUDA.h"

#include "tile/Compiler/MetadataHash.h"
#include "tile/Conversion/HostWrapperBuilder.h"
#include "tile/Conversion/TileToNVVM.h"
#include "tile/Dialect/Tile/Transforms/KernelMetadata.h"
#include "tile/Runtime/Bundle.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Regex.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

/// The serialized object of the module's single gpu.binary.
FailureOr<std::string> binaryObject(ModuleOp module) {
  std::string out;
  unsigned count = 0;
  module.walk([&](gpu::BinaryOp binary) {
    for (Attribute a : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(a);
      out = object.getObject().getValue().str();
      ++count;
    }
  });
  if (count != 1)
    return module.emitError("expected one serialized GPU object, found ")
               << count,
           failure();
  return out;
}

FailureOr<std::string> serialize(ModuleOp module, StringRef format) {
  PassManager pm(module.getContext());
  buildTileNVVMSerialization(pm, format, "/usr/local/cuda");
  if (failed(pm.run(module)))
    return failure();
  return binaryObject(module);
}

/// native.so: the native wrapper for CUDA tensors, compiled for the host.
LogicalResult buildNativeSharedObject(MLIRContext *ctx, Location loc,
                                      const KernelMetadata &md,
                                      StringRef metadataJSON,
                                      unsigned optLevel, std::string &so) {
  OwningOpRef<ModuleOp> host = ModuleOp::create(loc);
  if (failed(buildNativeWrapper(*host, md, kDLCUDA)) ||
      failed(addMetadataHashGlobal(*host, md.name, metadataJSON)))
    return failure();
  std::string cpuName;
  auto tm = createHostTargetMachine(loc, "host", "", optLevel, cpuName);
  if (!tm)
    return failure();
  llvm::LLVMContext llvmContext;
  auto llvmModule = translateModuleToLLVMIR(*host, llvmContext, md.name);
  if (!llvmModule)
    return emitError(loc) << "translation of the native wrapper failed";
  llvmModule->setDataLayout(tm->createDataLayout());
  llvmModule->setTargetTriple(tm->getTargetTriple());
  auto optimize = makeOptimizingTransformer(optLevel, 0, tm.get());
  if (llvm::Error err = optimize(llvmModule.get()))
    return emitError(loc) << "LLVM optimization failed: "
                          << llvm::toString(std::move(err));
  SmallString<0> object;
  {
    llvm::raw_svector_ostream os(object);
    llvm::legacy::PassManager codegen;
    if (tm->addPassesToEmitFile(codegen, os, nullptr,
                                llvm::CodeGenFileType::ObjectFile))
      return emitError(loc) << "the host target cannot emit object files";
    codegen.run(*llvmModule);
  }
  return linkSharedObject(loc, object.str(), so);
}

} // namespace

LogicalResult mlir::tile::compileCUDA(ModuleOp module,
                                      const CompileOptions &options,
                                      const std::string &source,
                                      std::string &output) {
  Location loc = module.getLoc();
  MLIRContext *ctx = module.getContext();
  std::string chip = options.chip.empty() ? "sm_80" : options.chip;
  if (!llvm::Regex("^sm_[0-9]+a?$").match(chip))
    return emitError(loc) << "unknown CUDA chip '" << chip
                          << "' (expected sm_80, sm_90a, ...)";
  std::string features = options.features.empty() ? "+ptx80" : options.features;

  bool printed = false;
  if (failed(runLowering(
          module, options,
          [&](OpPassManager &pm) {
            TileToNVVMPipelineOptions pipeline;
            pipeline.chip = chip;
            pipeline.features = features;
            pipeline.optLevel = std::min(options.optLevel, 3u);
            pipeline.format = "none";
            buildTileToNVVMPipeline(pm, pipeline);
          },
          output, printed)))
    return failure();
  if (printed)
    return success();

  // The device code carries the metadata hash (cuModuleGetGlobal).
  auto md = getAttachedMetadata(module);
  if (failed(md))
    return failure();
  std::string metadataJSON = md->toJSONString(/*pretty=*/true);
  WalkResult hashed = module.walk([&](gpu::GPUModuleOp gpuModule) {
    return failed(addMetadataHashGlobal(gpuModule, md->name, metadataJSON,
                                        /*addressSpace=*/1))
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  if (hashed.wasInterrupted())
    return failure();

  OwningOpRef<ModuleOp> isaModule = cast<ModuleOp>(module->clone());
  auto ptx = serialize(*isaModule, "isa");
  if (failed(ptx))
    return failure();
  if (options.emit == Emit::LLVM) {
    output = std::move(*ptx);
    return success();
  }
  auto cubin = serialize(module, "bin");
  if (failed(cubin))
    return failure();
  if (options.emit == Emit::Object) {
    output = std::move(*cubin);
    return success();
  }

  bool wantNative = options.backends.empty() ||
                    llvm::is_contained(options.backends, "native");
  std::vector<::tile::bundle::Section> sections = {
      {"metadata", metadataJSON},
      {"cubin", std::move(*cubin)},
      {"ptx", std::move(*ptx)}};
  if (wantNative) {
    std::string so;
    if (failed(buildNativeSharedObject(ctx, loc, *md, metadataJSON,
                                       options.optLevel, so)))
      return failure();
    sections.push_back({"native.so", std::move(so)});
  }
  sections.push_back({"mlir", source});
  std::string error;
  if (!::tile::bundle::write(sections, output, error))
    return emitError(loc) << "cannot write the bundle: " << error;
  return success();
}
