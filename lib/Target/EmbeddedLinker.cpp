//===- EmbeddedLinker.cpp - lld's ELF driver inside tilec -----------------===//
//
// Compiled with TILE_EMBEDDED_LLD (TILE_STATIC_TOOLS builds, which link
// lldELF and lldCommon); without it the functions report that there is no
// embedded linker.
//
//===----------------------------------------------------------------------===//

#include "tile/Target/EmbeddedLinker.h"
#include "tile/Target/Toolchain.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

#ifdef TILE_EMBEDDED_LLD
#include "lld/Common/Driver.h"
LLD_HAS_DRIVER(elf)
#endif

using namespace mlir;

static constexpr const char *kEmbeddedLinkerFlag = "-tile-embedded-ld";

bool mlir::tile::hasEmbeddedLinker() {
#ifdef TILE_EMBEDDED_LLD
  return true;
#else
  return false;
#endif
}

int mlir::tile::runEmbeddedLinker(ArrayRef<StringRef> args, std::string &log) {
  if (!hasEmbeddedLinker()) {
    log += "this tilec has no embedded linker";
    return -1;
  }
  std::string self = llvm::sys::fs::getMainExecutable(nullptr, nullptr);
  if (self.empty()) {
    log += "cannot find the tilec executable to run its embedded linker";
    return -1;
  }
  SmallVector<StringRef> argv = {self, kEmbeddedLinkerFlag};
  argv.append(args.begin() + (args.empty() ? 0 : 1), args.end());
  std::string childLog;
  int rc = runTool(self, argv, childLog);
  log += childLog;
  return rc;
}

bool mlir::tile::runEmbeddedLinkerMain(int argc, char **argv, int &exitCode) {
  if (argc < 2 || std::strcmp(argv[1], kEmbeddedLinkerFlag) != 0)
    return false;
#ifdef TILE_EMBEDDED_LLD
  SmallVector<const char *> args = {"ld.lld"};
  args.append(argv + 2, argv + argc);
  lld::Result result = lld::lldMain(args, llvm::outs(), llvm::errs(),
                                    {{lld::Gnu, &lld::elf::link}});
  exitCode = result.retCode;
#else
  llvm::errs() << "tilec: " << kEmbeddedLinkerFlag
               << ": this tilec has no embedded linker\n";
  exitCode = 1;
#endif
  return true;
}
