//===- Toolchain.h - find and run the external tools of a target -*- C++ -*-===//
//
// Targets call external tools (ld.lld for host shared objects; ptxas for
// cubins) and read toolkit files (libdevice). They are found at run time by
// searching an ordered list of places, and a miss is an error that names
// every place searched, in order, so the user knows what to set
// (docs/building.md, "Toolchain discovery"). Nothing is hard-coded: the
// places are environment variables, options, what CMake discovered when tile
// was built, and PATH.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_TARGET_TOOLCHAIN_H
#define TILE_TARGET_TOOLCHAIN_H

#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::tile {

/// An ordered search for one tool or file.
class ToolSearch {
public:
  /// `what` names the thing searched ("ptxas"); an `executable` must be
  /// executable, anything else a regular file.
  explicit ToolSearch(StringRef what, bool executable = true)
      : what(what.str()), executable(executable) {}

  /// Where the search looks next: `how` says where the candidate comes from
  /// ("$CUDA_HOME"), `path` is the candidate, `relative` is appended to it
  /// ("bin/ptxas"). An empty `path` records the place as unset. With
  /// `required`, a set but wrong place is an error instead of a miss (an
  /// explicit setting must not be silently ignored). Returns true once found.
  bool tryPath(StringRef how, StringRef path, StringRef relative = "",
               bool required = false);
  /// The first `names` entry found on PATH.
  bool tryPATH(ArrayRef<StringRef> names);
  /// Something built into this program stands in for the tool (the static
  /// tilec's linker): found, with `how` as the place and `name` as the path.
  bool useBuiltIn(StringRef how, StringRef name);

  bool found() const { return result.has_value(); }
  /// The found path, or the set-but-wrong required place's error.
  const std::string &getPath() const { return *result; }
  bool failedRequired() const { return !requiredError.empty(); }
  /// Every place looked at, in order, with what was there: for errors and
  /// `tilec --print-toolchain`.
  std::string describe() const;
  /// Emits "<what> not found; looked in: ..." (or the required place's
  /// error) at `loc` with `hint` appended, and returns failure.
  LogicalResult emitNotFound(Location loc, StringRef hint = "") const;

private:
  std::string what;
  bool executable;
  std::vector<std::string> places;
  std::optional<std::string> result;
  std::string requiredError;
};

/// The environment variable `name`, or "" when unset.
std::string getEnv(StringRef name);

/// Runs `program` with `args` (args[0] is the program name), its stdout and
/// stderr captured into `log`. Returns the exit status (-1 if it could not
/// be started, with the reason in `log`).
int runTool(StringRef program, ArrayRef<StringRef> args, std::string &log);

/// A tool running in the background (startTool), so that the compiler can
/// do other work while it runs (the CUDA target builds the host wrapper
/// while ptxas assembles the cubin). The destructor waits for a tool nobody
/// waited for: no child outlives an early error return.
class BackgroundTool {
public:
  /// Starts `program` with `args` (as runTool), stdout and stderr captured.
  BackgroundTool(StringRef program, ArrayRef<StringRef> args);
  BackgroundTool(const BackgroundTool &) = delete;
  BackgroundTool &operator=(const BackgroundTool &) = delete;
  ~BackgroundTool();

  /// Waits for the tool: its exit status and its output in `log`, as runTool.
  int wait(std::string &log);

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// ld.lld, which links host objects into shared objects:
///   $TILE_LD_LLD, then in a static tilec (TILE_STATIC_TOOLS, the wheel) the
///   lld ELF driver inside it (tile/Target/EmbeddedLinker.h), else ld.lld in
///   the LLVM tools directory CMake found LLVM in, then ld.lld-<LLVM major> /
///   ld.lld on PATH.
ToolSearch findLinker();

/// Links `object` into a shared object with ld.lld (findLinker: the program,
/// or the embedded linker in a child tilec). Undefined symbols (libm
/// functions) are left for the dynamic loader: the runtime process has libm.
LogicalResult linkSharedObject(Location loc, StringRef object,
                               std::string &sharedObject);

} // namespace mlir::tile

#endif // TILE_TARGET_TOOLCHAIN_H
