//===- AbsentLLVMTargets.cpp - no-op entry points of left-out LLVM parts --===//
//
// Only in the static tilec (TILE_STATIC_TOOLS, which compiles this file
// with TILE_EMBEDDED_LLD; elsewhere it is empty), which carries the code
// generators of tile's targets alone (TILE_STATIC_LLVM_TARGETS: X86 hosts,
// NVPTX). lld's ELF driver, linked in for the host shared objects
// (EmbeddedLinker.h), initializes every target LLVM was built with, and its
// LTO backend registers LLVM's static pass-plugin extensions (Polly): both
// for link-time optimization, which tilec never asks for (it links one
// native object). Those entry points are defined here as no-ops so that the
// other code generators stay out of the binary. A target reached through
// them anyway is not registered, and LLVM reports it ("no available
// targets"); nothing is silently miscompiled.
//
// AbsentLLVMTargets.inc (lib/Target/CMakeLists.txt) lists
// LLVM_TARGETS_TO_BUILD minus TILE_STATIC_LLVM_TARGETS, and
// LLVM_STATIC_EXTENSIONS.
//
//===----------------------------------------------------------------------===//

#ifdef TILE_EMBEDDED_LLD

#include "llvm/Plugins/PassPlugin.h"
#include "llvm/Support/TargetSelect.h"

#define TILE_ABSENT_LLVM_TARGET(T)                                             \
  extern "C" void LLVMInitialize##T##TargetInfo() {}                           \
  extern "C" void LLVMInitialize##T##Target() {}                               \
  extern "C" void LLVMInitialize##T##TargetMC() {}                             \
  extern "C" void LLVMInitialize##T##AsmPrinter() {}                           \
  extern "C" void LLVMInitialize##T##AsmParser() {}                            \
  extern "C" void LLVMInitialize##T##Disassembler() {}                         \
  extern "C" void LLVMInitialize##T##TargetMCA() {}

#define TILE_ABSENT_LLVM_EXTENSION(E)                                          \
  llvm::PassPluginLibraryInfo get##E##PluginInfo() {                           \
    return {LLVM_PLUGIN_API_VERSION, #E " (not in this tilec)", "",           \
            [](llvm::PassBuilder &) {}};                                       \
  }

#include "AbsentLLVMTargets.inc"

#endif // TILE_EMBEDDED_LLD
