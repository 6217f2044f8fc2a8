//===- SharedMemory.cpp - the chips' shared-memory limit ------------------===//
//
// A kernel that asks for more shared memory per block than its chip has can
// only fail at launch; convert-tile-to-nvgpu checks it at compile time
// against the table below (the opt-in maximum of dynamic shared memory per
// block, cudaDevAttrMaxSharedMemoryPerBlockOptin, of each architecture).
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::nvgpu_lowering;

SharedMemoryLimit nvgpu_lowering::getSharedMemoryLimit(StringRef chip) {
  StringRef arch = chip;
  arch.consume_back("a"); // sm_90a: the sm_90 family
  arch.consume_back("f");
  int64_t kib = llvm::StringSwitch<int64_t>(arch)
                    .Cases({"sm_50", "sm_52", "sm_53", "sm_60", "sm_61",
                            "sm_62"},
                           48)
                    .Cases({"sm_70", "sm_72"}, 96)
                    .Case("sm_75", 64)
                    .Cases({"sm_80", "sm_87"}, 163)
                    .Cases({"sm_86", "sm_89", "sm_120", "sm_121"}, 99)
                    .Cases({"sm_90", "sm_100", "sm_101", "sm_103", "sm_110"},
                           227)
                    .Default(0);
  SharedMemoryLimit limit;
  limit.known = kib != 0;
  // Unknown chips: 48 KiB, what every CUDA GPU gives a block.
  limit.perBlock = (limit.known ? kib : 48) * 1024;
  // The NVPTX backend declares the dynamic shared memory symbol as a 1-byte
  // (16-byte aligned) static variable, which counts against the same limit.
  limit.dynamic = limit.perBlock - 16;
  return limit;
}

LogicalResult KernelLowering::checkSharedMemory(int64_t bytes,
                                                int64_t scratch) {
  SharedMemoryLimit limit = sharedMemoryLimit(sharedMemoryChip);
  if (bytes <= limit.dynamic)
    return success();
  // The head copies' second stages are an option of the persistent form:
  // without them the kernel may fit (the caller lowers it again).
  if (specialized && specialized->doubleHeads) {
    whyNotSpecialized = "two stages of its head copies need " +
                        std::to_string(bytes) +
                        " bytes of shared memory, more than the " +
                        std::to_string(limit.dynamic) + " " + sharedMemoryChip +
                        " allows";
    declinedSpecialization = declinedDoubleHeads = true;
    return failure();
  }
  // A stages(1) loop double-buffered by a warp-specialized form: the
  // variant is declined (the plain kernel keeps one stage).
  if (specialized && llvm::any_of(pipelines, [](auto &entry) {
        return entry.second.promoted;
      })) {
    whyNotSpecialized = "it needs " + std::to_string(bytes) +
                        " bytes of shared memory with two stages of its "
                        "stages(1) loop, more than the " +
                        std::to_string(limit.dynamic) + " " + sharedMemoryChip +
                        " allows";
    declinedSpecialization = true;
    declinedTma = requestTma;
    return failure();
  }
  // The TMA-producer form (its stages aligned for TMA) is only a variant:
  // declined with a remark, not an error.
  if (requestTma) {
    whyNotSpecialized = "it needs " + std::to_string(bytes) +
                        " bytes of shared memory (stages aligned for TMA), "
                        "more than the " + std::to_string(limit.dynamic) +
                        " " + sharedMemoryChip + " allows";
    declinedSpecialization = declinedTma = true;
    return failure();
  }
  auto addLimit = [&](InFlightDiagnostic &diag) {
    if (limit.dynamic == limit.perBlock) {
      // No static part (AMD: the whole LDS allocation is dynamic).
      diag << ", but " << sharedMemoryChip << " allows " << limit.dynamic
           << " bytes of shared memory (LDS) per block";
      return;
    }
    diag << ", but " << sharedMemoryChip << " allows " << limit.dynamic
         << " bytes of dynamic shared memory per block ("
         << limit.perBlock / 1024 << " KiB less 16 bytes of static shared "
         << "memory";
    if (!limit.known)
      diag << "; " << sharedMemoryChip << " is not in the compiler's table, so only the "
           << "48 KiB every CUDA GPU has are assumed";
    diag << ")";
  };
  // The multi-buffering of a software-pipelined loop: name the loop.
  for (auto &entry : pipelines) {
    const PipelinePlan &plan = entry.second;
    int64_t copies = 0;
    for (auto &[value, buf] : buffers)
      if (buf.stages > 1 && multiBuffered.contains(value))
        copies += buf.stageBytes * buf.stages;
    if (copies == 0)
      continue;
    InFlightDiagnostic diag =
        mlir::emitError(plan.loc, "tile.pipelined with stages(")
        << plan.stages << ") needs " << bytes
        << " bytes of shared memory (" << copies << " of them for "
        << plan.distance + 1 << " copies of the shared buffers its copies "
        << "write)";
    addLimit(diag);
    return failure();
  }
  InFlightDiagnostic diag = func.emitError("kernel '")
                            << func.getName() << "' needs " << bytes << " bytes of shared memory ("
                            << bytes - scratch << " for its shared buffers";
  if (scratch)
    diag << ", " << scratch << " of scratch for the lowering";
  diag << ")";
  addLimit(diag);
  return failure();
}
