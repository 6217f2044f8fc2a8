//===- client-pipeline.cpp - run a tile pipeline from C++ -----------------===//
//
//   client-pipeline KERNEL.mlir [PIPELINE]
//
// Parses a tile kernel and lowers it with a PassManager built in C++: the
// textual PIPELINE (default "builtin.module(tile-to-cpu)") through
// tile::parsePassPipelineInto, or, with PIPELINE "cxx", the pipeline
// builder. Prints the lowered module. With "plain:PIPELINE" it shows the
// trap parsePassPipelineInto avoids: mlir::parsePassPipeline(text, pm)
// nests an anchored pipeline one level down and the run changes nothing.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include "tile/Conversion/Passes.h"
#include "tile/InitAll.h"
#include "tile/PassPipeline.h"

#include <string>

int main(int argc, char **argv) {
  if (argc < 2) {
    llvm::errs() << "usage: client-pipeline KERNEL.mlir [PIPELINE]\n";
    return 2;
  }
  std::string pipeline = argc > 2 ? argv[2] : "builtin.module(tile-to-cpu)";

  mlir::tile::registerAllPasses(); // textual pipelines name registered passes
  mlir::DialectRegistry registry;
  mlir::tile::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(argv[1], &context);
  if (!module)
    return 1;

  mlir::PassManager pm(&context);
  if (pipeline == "cxx") {
    mlir::tile::TileToCPUPipelineOptions options;
    mlir::tile::buildTileToCPUPipeline(pm, options);
  } else if (pipeline.rfind("plain:", 0) == 0) {
    if (mlir::failed(mlir::parsePassPipeline(pipeline.substr(6), pm)))
      return 1;
  } else if (mlir::failed(mlir::tile::parsePassPipelineInto(pipeline, pm))) {
    return 1;
  }
  if (mlir::failed(pm.run(*module)))
    return 1;
  module->print(llvm::outs());
  return 0;
}
