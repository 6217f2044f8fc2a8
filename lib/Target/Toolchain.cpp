//===- Toolchain.cpp - find and run the external tools of a target --------===//

#include "tile/Target/Toolchain.h"
#include "tile/Target/EmbeddedLinker.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::tile;

// Set by CMake (lib/Target/CMakeLists.txt): where LLVM's tools were found
// when tile was built, and LLVM's major version (ld.lld-22).
#ifndef TILE_LLVM_TOOLS_DIR
#define TILE_LLVM_TOOLS_DIR ""
#endif
#ifndef TILE_LLVM_VERSION_MAJOR
#define TILE_LLVM_VERSION_MAJOR ""
#endif

/// findLinker's result for the embedded linker: no path, a name.
static constexpr StringLiteral kEmbeddedLinkerName = "ld.lld (embedded)";

std::string mlir::tile::getEnv(StringRef name) {
  const char *v = std::getenv(name.str().c_str());
  return v ? std::string(v) : std::string();
}

bool ToolSearch::tryPath(StringRef how, StringRef path, StringRef relative,
                         bool required) {
  if (found() || failedRequired())
    return found();
  if (path.empty()) {
    places.push_back((how + " (unset)").str());
    return false;
  }
  SmallString<256> candidate(path);
  if (!relative.empty())
    llvm::sys::path::append(candidate, relative);
  bool ok = executable ? llvm::sys::fs::can_execute(candidate)
                             : llvm::sys::fs::is_regular_file(candidate);
  if (ok) {
    places.push_back((how + ": " + candidate).str());
    result = std::string(candidate);
    return true;
  }
  std::string place = (how + ": " + candidate + " (missing)").str();
  places.push_back(place);
  if (required)
    requiredError = (how + " is set, but " + candidate + " is not " +
                     (executable ? "an executable" : "a file"))
                        .str();
  return false;
}

bool ToolSearch::tryPATH(ArrayRef<StringRef> names) {
  if (found() || failedRequired())
    return found();
  for (StringRef name : names) {
    if (auto p = llvm::sys::findProgramByName(name)) {
      places.push_back(("PATH: " + *p));
      result = *p;
      return true;
    }
  }
  places.push_back("PATH (no " + llvm::join(names, ", ") + ")");
  return false;
}

bool ToolSearch::useBuiltIn(StringRef how, StringRef name) {
  if (found() || failedRequired())
    return found();
  places.push_back((how + ": " + name).str());
  result = name.str();
  return true;
}

std::string ToolSearch::describe() const {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << what << ": ";
  if (failedRequired())
    os << "error: " << requiredError;
  else if (found())
    os << *result;
  else
    os << "not found";
  for (size_t i = 0; i < places.size(); ++i)
    os << "\n  " << (i + 1) << ". " << places[i];
  return out;
}

LogicalResult ToolSearch::emitNotFound(Location loc, StringRef hint) const {
  InFlightDiagnostic diag = emitError(loc);
  if (failedRequired())
    diag << requiredError;
  else
    diag << what << " not found; looked in, in order: "
         << llvm::join(places, "; ");
  if (!hint.empty())
    diag << ". " << hint;
  return diag;
}

struct BackgroundTool::Impl {
  SmallString<128> logPath;
  llvm::sys::ProcessInfo process;
  std::string startError;
  bool waited = false;
};

BackgroundTool::BackgroundTool(StringRef program, ArrayRef<StringRef> args)
    : impl(std::make_unique<Impl>()) {
  if (llvm::sys::fs::createTemporaryFile("tile-tool", "log", impl->logPath)) {
    impl->startError = "cannot create a temporary file";
    return;
  }
  std::optional<StringRef> redirects[] = {std::nullopt,
                                          StringRef(impl->logPath),
                                          StringRef(impl->logPath)};
  bool failedToStart = false;
  impl->process = llvm::sys::ExecuteNoWait(
      program, args, std::nullopt, redirects, /*MemoryLimit=*/0,
      &impl->startError, &failedToStart);
  if (failedToStart && impl->startError.empty())
    impl->startError = ("cannot run " + program).str();
}

int BackgroundTool::wait(std::string &log) {
  impl->waited = true;
  int rc = -1;
  if (impl->startError.empty()) {
    std::string errorMessage;
    llvm::sys::ProcessInfo done =
        llvm::sys::Wait(impl->process, /*SecondsToWait=*/std::nullopt,
                        &errorMessage);
    rc = done.ReturnCode;
    if (auto buffer = llvm::MemoryBuffer::getFile(impl->logPath))
      log = (*buffer)->getBuffer().str();
    log += errorMessage;
  } else {
    log = impl->startError;
  }
  if (!impl->logPath.empty())
    llvm::sys::fs::remove(impl->logPath);
  impl->logPath.clear();
  return rc;
}

BackgroundTool::~BackgroundTool() {
  if (impl && !impl->waited) {
    std::string ignored;
    wait(ignored);
  }
}

int mlir::tile::runTool(StringRef program, ArrayRef<StringRef> args,
                        std::string &log) {
  return BackgroundTool(program, args).wait(log);
}

ToolSearch mlir::tile::findLinker() {
  ToolSearch search("ld.lld");
  std::string env = getEnv("TILE_LD_LLD");
  if (!env.empty()) {
    search.tryPath("$TILE_LD_LLD", env, "", /*required=*/true);
    return search;
  }
  search.tryPath("$TILE_LD_LLD", "");
  if (hasEmbeddedLinker()) {
    search.useBuiltIn("lld's ELF driver inside this tilec (static build)",
                      kEmbeddedLinkerName);
    return search;
  }
  StringRef major = TILE_LLVM_VERSION_MAJOR;
  std::string versioned = ("ld.lld-" + major).str();
  search.tryPath("LLVM tools directory found by CMake", TILE_LLVM_TOOLS_DIR,
                 "ld.lld");
  if (major.empty())
    search.tryPATH({"ld.lld"});
  else
    search.tryPATH({versioned, "ld.lld"});
  return search;
}

LogicalResult mlir::tile::linkSharedObject(Location loc, StringRef object,
                                           std::string &sharedObject) {
  ToolSearch lld = findLinker();
  if (!lld.found())
    return lld.emitNotFound(loc, "ld.lld links the host code's shared object: "
                                 "install lld (Debian: lld-22) or set "
                                 "TILE_LD_LLD=/path/to/ld.lld");
  SmallString<128> objPath, soPath;
  int objFd;
  if (llvm::sys::fs::createTemporaryFile("tile-kernel", "o", objFd, objPath))
    return emitError(loc) << "cannot create a temporary file";
  {
    llvm::raw_fd_ostream os(objFd, /*shouldClose=*/true);
    os << object;
  }
  llvm::FileRemover objRemover(objPath);
  if (llvm::sys::fs::createTemporaryFile("tile-kernel", "so", soPath))
    return emitError(loc) << "cannot create a temporary file";
  llvm::FileRemover soRemover(soPath);
  std::string log;
  StringRef program = lld.getPath();
  SmallVector<StringRef> args = {program, "-shared", "--gc-sections", "-O2",
                                 "-o",    soPath,    objPath};
  int rc = program == kEmbeddedLinkerName ? runEmbeddedLinker(args, log)
                                          : runTool(program, args, log);
  if (rc != 0)
    return emitError(loc) << "linking the kernel's shared object failed ("
                          << program << " exited with " << rc << "): "
                          << StringRef(log).trim();
  auto buffer = llvm::MemoryBuffer::getFile(soPath);
  if (!buffer)
    return emitError(loc) << "cannot read the linked shared object";
  sharedObject = (*buffer)->getBuffer().str();
  return success();
}
