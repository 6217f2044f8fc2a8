//===- EmbeddedLinker.h - lld's ELF driver inside tilec ---------*- C++ -*-===//
//
// A statically linked tilec (TILE_STATIC_TOOLS, the Python wheel) carries
// lld's ELF driver and links the host code's shared objects with it, so that
// it needs no ld.lld on the machine it runs on (tile/Target/Toolchain.h:
// findLinker, linkSharedObject). Other builds run the ld.lld program.
//
// The driver runs in a child process, tilec itself started as
// `tilec -tile-embedded-ld <ld.lld arguments>`: lld resets every LLVM
// command-line option of the process it runs in (cl::ResetAllOptionOccurrences),
// which would clobber tilec's own options (-o, --emit, ...) mid-compile.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_TARGET_EMBEDDEDLINKER_H
#define TILE_TARGET_EMBEDDEDLINKER_H

#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::tile {

/// True when this tilec was built with lld's ELF driver inside.
bool hasEmbeddedLinker();

/// Runs lld's ELF driver on `args` (args[0] is the program name, e.g.
/// "ld.lld") in a child tilec, its diagnostics appended to `log`. Returns
/// the exit status (like running ld.lld), or -1 when there is no embedded
/// linker or the child could not be started.
int runEmbeddedLinker(ArrayRef<StringRef> args, std::string &log);

/// tilec's main() calls this first: when argv selects the embedded linker
/// (`-tile-embedded-ld` as argv[1]), runs it, sets `exitCode` and returns
/// true.
bool runEmbeddedLinkerMain(int argc, char **argv, int &exitCode);

} // namespace mlir::tile

#endif // TILE_TARGET_EMBEDDEDLINKER_H
