//===- OutputFile.h - finish writing a tool's output file -------*- C++ -*-===//
//
// raw_fd_ostream reports a write error it still holds when destroyed as the
// fatal "LLVM ERROR: IO failure on output stream" (e.g. `-o /dev/full`, a
// full disk). The tools finish their output with closeOutputFile instead:
// one line naming the file and the error, and a failure to exit 1 with.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_SUPPORT_OUTPUTFILE_H
#define TILE_SUPPORT_OUTPUTFILE_H

#include "mlir/Support/LLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::tile {

/// Flushes `out`; keeps the file when that succeeds and `keep` is set.
/// On a write error: prints "<tool>: cannot write '<path>': <error>",
/// clears the error (so that destroying `out` removes the file instead of
/// aborting) and fails.
inline LogicalResult closeOutputFile(llvm::ToolOutputFile &out, bool keep,
                                     StringRef tool) {
  out.os().flush();
  if (std::error_code ec = out.os().error()) {
    llvm::errs() << tool << ": cannot write ";
    if (out.getFilename() == "-")
      llvm::errs() << "the standard output";
    else
      llvm::errs() << "'" << out.getFilename() << "'";
    llvm::errs() << ": " << ec.message() << "\n";
    out.os().clear_error();
    return failure();
  }
  if (keep)
    out.keep();
  return success();
}

} // namespace mlir::tile

#endif // TILE_SUPPORT_OUTPUTFILE_H
