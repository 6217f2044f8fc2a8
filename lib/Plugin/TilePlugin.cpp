//===- TilePlugin.cpp - tile as an mlir-opt dialect and pass plugin -------===//
//
//   mlir-opt --load-dialect-plugin=libTilePlugin.so \
//            --load-pass-plugin=libTilePlugin.so in.mlir
//
// The plugin links libMLIR.so, as mlir-opt does, so both share one copy of
// MLIR's registries.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"

#include "tile/InitAll.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "tile", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            mlir::tile::registerAllDialects(*registry);
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "tile", LLVM_VERSION_STRING,
          []() { mlir::tile::registerAllPasses(); }};
}
