//===- MetalEntry.cpp - the MSL source and its `kernel void` entry --------===//
//
// The Metal kernel ABI (docs/bundle.md, "msl"), what the metal-torch
// launcher dispatches: buffer i (i < T) is tensor parameter i's data, at
// the tensor's first element; buffer T holds int64 words: per tensor
// parameter its offset, sizes and strides in elements (the kernel ABI's
// fields after the pointers), per scalar parameter its value (integers
// sign-extended, floats as their IEEE bits), in parameter order. The entry
// rebuilds the body's C++ kernel ABI from them.
//
//===----------------------------------------------------------------------===//

#include "tile/Conversion/GPUToEmitC.h"
#include "tile/Conversion/TileToMetalSource.h"
#include "tile/Dialect/Tile/Transforms/KernelMetadata.h"

#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/Target/Cpp/CppEmitter.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

/// `device float` of the body's `device float *` parameter.
FailureOr<std::string> pointeeName(Type t) {
  auto ptr = dyn_cast<emitc::PointerType>(t);
  if (!ptr)
    return failure();
  if (auto opaque = dyn_cast<emitc::OpaqueType>(ptr.getPointee()))
    return opaque.getValue().str();
  return failure();
}

LogicalResult writeEntry(emitc::FuncOp body, const KernelMetadata &md,
                         raw_ostream &os) {
  Location loc = body.getLoc();
  StringRef bodyName = body.getSymName();
  std::string entryName =
      bodyName.drop_back(kMetalBodySuffix.size()).str();
  ArrayRef<Type> inputs = body.getFunctionType().getInputs();
  int64_t threads = md.block[0] * md.block[1] * md.block[2];
  int64_t tensors = llvm::count_if(
      md.params, [](const ParamInfo &p) { return p.isTensor; });
  if (tensors + 1 > kMetalMaxBuffers)
    return emitError(loc) << "the metal target passes each tensor in its own "
                             "buffer and Metal binds at most "
                          << kMetalMaxBuffers << " buffers: kernel '"
                          << md.name << "' has " << tensors
                          << " tensor parameters";
  if (md.sharedBytes > kMetalMaxThreadgroupMemory)
    return emitError(loc) << "kernel '" << md.name << "' needs "
                          << md.sharedBytes
                          << " bytes of threadgroup memory; Apple GPUs have "
                          << kMetalMaxThreadgroupMemory;

  std::string params, call;
  llvm::raw_string_ostream p(params), c(call);
  size_t next = 0;  // body parameter
  int64_t word = 0; // tile_args word
  int64_t buffer = 0;
  auto arg = [&](const Twine &text) {
    c << (next ? ", " : "") << text;
    ++next;
  };
  for (const ParamInfo &param : md.params) {
    if (!param.isTensor) {
      if (next >= inputs.size())
        break;
      arg("tile::scalar_arg(tile_args[" + Twine(word++) + "])");
      continue;
    }
    if (next + 3 + 2 * param.rank > inputs.size())
      return emitError(loc) << "internal error: the MSL kernel body's "
                               "parameters do not match the metadata";
    FailureOr<std::string> elem = pointeeName(inputs[next]);
    if (failed(elem))
      return emitError(loc) << "internal error: parameter '" << param.name
                            << "' is not a device pointer in the MSL body";
    std::string name = "tile_p" + std::to_string(buffer);
    p << "    " << *elem << " *" << name << " [[buffer(" << buffer << ")]],\n";
    ++buffer;
    arg(name);
    arg(name);
    for (int64_t k = 0; k < 1 + 2 * param.rank; ++k)
      arg("tile_args[" + Twine(word++) + "]");
  }
  if (next + 1 != inputs.size())
    return emitError(loc) << "internal error: the MSL kernel body has "
                          << inputs.size() << " parameters, the metadata "
                          << "describes " << next << " (+ the context)";
  arg("tile_ctx");
  // A threadgroup array cannot be empty; float4 makes it 16-byte aligned.
  int64_t smem16 = std::max<int64_t>(1, (md.sharedBytes + 15) / 16);
  os << "\n// ---- the entry (Metal kernel ABI: docs/bundle.md, \"msl\") ----\n"
     << "[[max_total_threads_per_threadgroup(" << threads << ")]]\n"
     << "kernel void " << entryName << "(\n"
     << params << "    device const int64_t *tile_args [[buffer(" << buffer
     << ")]],\n"
     << "    uint3 tile_tid [[thread_position_in_threadgroup]],\n"
     << "    uint3 tile_bid [[threadgroup_position_in_grid]],\n"
     << "    uint3 tile_ntid [[threads_per_threadgroup]],\n"
     << "    uint3 tile_nbid [[threadgroups_per_grid]],\n"
     << "    ushort tile_lane [[thread_index_in_simdgroup]]) {\n"
     << "  TILE_THREADGROUP_ARRAY float4 tile_smem[" << smem16 << "]; // "
     << md.sharedBytes << " bytes\n"
     << "  tile::thread_context tile_ctx = {tile_tid, tile_bid, tile_ntid, "
        "tile_nbid, tile_lane,\n"
     << "      reinterpret_cast<threadgroup int8_t *>(tile_smem)};\n"
     << "  " << bodyName << "(" << call << ");\n"
     << "}\n";
  return success();
}

} // namespace

LogicalResult mlir::tile::printMetalSource(ModuleOp module,
                                           const KernelMetadata &md,
                                           std::string &out) {
  const SourceTarget *metal = lookupSourceTarget("metal");
  SmallVector<emitc::FuncOp> bodies;
  for (auto f : module.getOps<emitc::FuncOp>())
    if (!f.isExternal() && f.getSymName().ends_with(kMetalBodySuffix))
      bodies.push_back(f);
  if (bodies.size() != 1)
    return emitError(module.getLoc())
           << "internal error: expected one MSL kernel body, found "
           << bodies.size();
  std::string kernel;
  llvm::raw_string_ostream os(kernel);
  if (failed(emitc::translateToCpp(module, os)) ||
      failed(writeEntry(bodies.front(), md, os)))
    return failure();
  out = "// Generated by tilec (tile-to-metal-source): Metal Shading "
        "Language for metal-torch.\n"
        "// The device library (include/tile/device/metal) comes first.\n";
  out += metal->deviceLibrary().str();
  out += "\n// ---- the kernel ----\n";
  out += kernel;
  return success();
}
