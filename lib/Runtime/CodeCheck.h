//===- CodeCheck.h - Cross-checks of a bundle's code and its metadata -----===//
//
// A bundle carries native code: loading it is like loading a shared library
// (docs/bundle.md, "Trust model"). Within that model the runtime refuses a
// bundle whose metadata disagrees with its code before any of the code is
// mapped or run, because the launch path sizes buffers and builds argument
// frames from the metadata alone:
//
//   * host.so / native.so pass the structural ELF checks (ElfImage.h);
//   * each entry point named by the metadata has its role's suffix
//     (entry.blocks `__tile_blocks`, entry.native `__tile_native`) and is an
//     exported function in executable memory; entry.kernel is none of these
//     and no variant's kernel;
//   * the metadata hash the compiler baked into the code
//     (bundle::kMetadataHashSuffix) equals the hash of the loaded metadata,
//     so an edited dtype, shape, grid or entry name is refused.
//
// Code without a hash (hand-written bundles such as the runtime tests'
// fixtures, bundles of an older tilec) is loaded without the third check.
// The cubin / PTX hash needs the driver: CudaDevice checks it when the
// module is loaded on a device (checkLoadedHash).
//
//===----------------------------------------------------------------------===//
#ifndef TILE_LIB_RUNTIME_CODECHECK_H
#define TILE_LIB_RUNTIME_CODECHECK_H

#include "Metadata.h"
#include "tile/Runtime/Bundle.h"

#include <string>

namespace tile::rt {

/// Runs the checks above on the sections of `plan.target`'s bundle. Returns
/// TILE_STATUS_OK, or fail()s with TILE_STATUS_BUNDLE_ERROR.
tile_status checkBundleCode(const KernelPlan &plan,
                            const bundle::Reader &bundle);

/// The message for a code hash that differs from the metadata's
/// (`metadataHash`); `where` names the code ("host.so", "the cubin").
std::string hashMismatch(const std::string &kernel, uint64_t metadataHash,
                         const std::string &where, uint64_t codeHash);

} // namespace tile::rt

#endif // TILE_LIB_RUNTIME_CODECHECK_H
