//===- KernelMetadata.cpp - build, decode and serialize kernel_info ------===//

#include "tile/Dialect/Tile/Transforms/KernelMetadata.h"

#include "tile/Dialect/Tile/IR/TileDialect.h"
#include "tile/Dialect/Tile/Transforms/ParamAccess.h"
#include "tile/Runtime/tile_abi.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::tile;
namespace json = llvm::json;

//===----------------------------------------------------------------------===//
// dtypes
//===----------------------------------------------------------------------===//

/// The DLPack encoding of an element type ({0, 0, 0} if it has none); its
/// name then comes from the one dtype table, TILE_DTYPES in tile_abi.h.
static DLDataType getDLPackType(Type type) {
  auto dl = [](int code, unsigned bits) -> DLDataType {
    if (bits > 64) // wider than any dtype (and than DLDataType::bits)
      return {};
    return {static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1};
  };
  if (type.isIndex())
    return dl(kDLInt, 64);
  if (type.isInteger(1))
    return dl(TILE_DL_BOOL, 8);
  if (auto it = dyn_cast<IntegerType>(type))
    return dl(it.isUnsigned() ? kDLUInt : kDLInt, it.getWidth());
  if (type.isBF16())
    return dl(kDLBfloat, 16);
  if (isa<Float8E4M3FNType>(type))
    return dl(TILE_DL_FLOAT8_E4M3FN, 8);
  if (isa<Float8E5M2Type>(type))
    return dl(TILE_DL_FLOAT8_E5M2, 8);
  if (type.isF16() || type.isF32() || type.isF64())
    return dl(kDLFloat, type.getIntOrFloatBitWidth());
  return {};
}

std::string mlir::tile::getDTypeName(Type type) {
  const char *name = tile_dtype_name(getDLPackType(type));
  return name ? name : "";
}

static int64_t getElementBytes(Type type) {
  if (type.isIndex())
    return 8;
  return std::max<int64_t>(1, type.getIntOrFloatBitWidth() / 8);
}

//===----------------------------------------------------------------------===//
// Decoding #tile.kernel_info
//===----------------------------------------------------------------------===//

GridExpr GridExpr::get(GridExprAttr attr) {
  GridExpr e;
  switch (attr.getKind()) {
  case GridExprKind::constant:
    e.value = attr.getValue();
    return e;
  case GridExprKind::symbol:
    e.kind = Kind::Sym;
    e.name = attr.getSymbol().getValue().str();
    return e;
  case GridExprKind::scalar:
    e.kind = Kind::Scalar;
    e.param = attr.getValue();
    return e;
  default:
    e.kind = Kind::Op;
    e.name = stringifyGridExprKind(attr.getKind()).str();
    for (GridExprAttr operand : attr.getOperands())
      e.args.push_back(get(operand));
    return e;
  }
}

KernelMetadata KernelMetadata::get(KernelInfoAttr info) {
  KernelMetadata md;
  md.name = info.getName().getValue().str();
  md.targetKind = info.getTarget().getValue().str();
  md.chip = info.getChip().getValue().str();
  md.features = info.getFeatures().getValue().str();
  for (KernelParamAttr attr : info.getParams()) {
    ParamInfo p;
    p.name = attr.getName().getValue().str();
    p.isTensor = attr.isTensor();
    p.dtype = getDTypeName(attr.getElementType());
    p.elementBytes = getElementBytes(attr.getElementType());
    p.isOutput = attr.getOutput();
    p.access = attr.getAccess();
    p.inplace = attr.getInplace();
    if (MemRefType memref = attr.getMemRefType()) {
      p.rank = memref.getRank();
      for (int64_t d : memref.getShape())
        p.shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
      for (StringAttr d : attr.getDims())
        p.dims.push_back(d.getValue().str());
    }
    md.params.push_back(std::move(p));
  }
  for (StringRef s : info.getSymbols())
    md.symbols.push_back(s.str());
  for (unsigned i = 0; i < 3; ++i) {
    md.grid[i] = GridExpr::get(info.getGrid()[i]);
    md.block[i] = info.getBlock()[i];
  }
  md.sharedBytes = info.getSharedBytes();
  md.variants.assign(info.getVariants().begin(), info.getVariants().end());
  return md;
}

//===----------------------------------------------------------------------===//
// JSON (docs/bundle.md), written when the bundle is
//===----------------------------------------------------------------------===//

json::Value GridExpr::toJSON() const {
  switch (kind) {
  case Kind::Const:
    return json::Object{{"const", value}};
  case Kind::Sym:
    return json::Object{{"sym", name}};
  case Kind::Scalar:
    return json::Object{{"scalar", param}};
  case Kind::Op: {
    json::Array list;
    for (const GridExpr &a : args)
      list.push_back(a.toJSON());
    return json::Object{{"op", name}, {"args", std::move(list)}};
  }
  }
  llvm_unreachable("bad GridExpr kind");
}

/// "none" for 0 bytes, else "<n>B" (the tensor map enums' metadata names).
static std::string bytesName(int64_t bytes) {
  return bytes == 0 ? "none" : std::to_string(bytes) + "B";
}

static json::Value toJSON(KernelVariantAttr v) {
  json::Array tma;
  for (TmaDescAttr t : v.getTma()) {
    json::Object entry{
        {"param", t.getParam()},
        {"dtype", getDTypeName(t.getElementType())},
        {"rank", static_cast<int64_t>(t.getBox().size())},
        {"box", json::Array(t.getBox())},
        {"element_strides", json::Array(t.getElementStrides())},
        {"interleave", bytesName(t.getInterleave())},
        {"swizzle", bytesName(t.getSwizzle())},
        {"l2_promotion", bytesName(t.getL2Promotion())},
        {"oob_fill", stringifyTmaOobFill(t.getOobFill())}};
    if (t.getOptional())
      entry["optional"] = true;
    tma.push_back(std::move(entry));
  }
  json::Object o{{"kind", v.getKind().getValue()},
                 {"chip", v.getChip().getValue()},
                 {"kernel", v.getKernel().getValue()},
                 {"block", json::Array(v.getBlock())},
                 {"shared_bytes", v.getSharedBytes()},
                 {"tma", std::move(tma)}};
  if (v.getGrid() != VariantGrid::launch)
    o["grid"] = stringifyVariantGrid(v.getGrid());
  if (v.getMaxTiles() > 0)
    o["max_tiles"] = v.getMaxTiles();
  if (v.getSchedule())
    o["schedule"] = v.getSchedule().getValue();
  if (ArrayRef<int64_t> sk = v.getSplitK(); !sk.empty())
    o["split_k"] = json::Object{{"k_param", sk[0]},
                                {"k_dim", sk[1]},
                                {"block_k", sk[2]},
                                {"slice_bytes", sk[3]}};
  if (v.getWorkspaceBytes() > 0)
    o["workspace_bytes"] = v.getWorkspaceBytes();
  // Two operands per launch under their own key: a runtime that knows only
  // "pack" (one argument group) ignores it (docs/bundle.md).
  if (v.getPackKernel())
    o[v.getPackOperands() == 2 ? "pack2" : "pack"] =
        json::Object{{"kernel", v.getPackKernel().getValue()},
                     {"elem_bytes", v.getPackElemBytes()}};
  if (ArrayRef<int64_t> c = v.getCoarsen(); !c.empty())
    o["coarsen"] = json::Array(c);
  if (int64_t speedup = v.getCoarseSpeedup())
    o["coarse_speedup"] = speedup;
  if (v.getSplit() != 1)
    o["split"] = v.getSplit();
  if (ArrayRef<int64_t> r = v.getMaxRows(); !r.empty())
    o["max_rows"] = json::Object{{"rows", r[0]},
                                 {"params", json::Array(r.drop_front())}};
  return o;
}

std::vector<int64_t> KernelMetadata::outIdx() const {
  std::vector<int64_t> out;
  for (auto [i, p] : llvm::enumerate(params))
    if (p.isOutput)
      out.push_back(i);
  return out;
}

json::Value KernelMetadata::toJSON() const {
  json::Array paramList;
  for (const ParamInfo &p : params) {
    json::Object o{{"name", p.name},
                   {"kind", p.isTensor ? "tensor" : "scalar"},
                   {"dtype", p.dtype}};
    if (p.isTensor) {
      o["rank"] = p.rank;
      o["shape"] = json::Array(p.shape);
      json::Array dims;
      for (const std::string &d : p.dims)
        dims.push_back(d);
      o["dims"] = std::move(dims);
      o["output"] = p.isOutput;
      o["access"] = stringifyParamAccess(p.access);
      o["inplace"] = p.inplace;
    }
    paramList.push_back(std::move(o));
  }
  json::Array symbolList;
  for (const std::string &s : symbols)
    symbolList.push_back(s);
  json::Object root{
      {"format", "tile-kernel"},
      {"version", 1},
      {"compiler", "tile 0.1.0"},
      {"name", name},
      {"target", json::Object{{"kind", targetKind},
                              {"chip", chip},
                              {"features", features}}},
      {"params", std::move(paramList)},
      {"out_idx", json::Array(outIdx())},
      {"symbols", std::move(symbolList)},
      {"grid", json::Array{grid[0].toJSON(), grid[1].toJSON(),
                           grid[2].toJSON()}},
      {"block", json::Array{block[0], block[1], block[2]}},
      {"shared_bytes", sharedBytes},
      {"entry", json::Object{{"blocks", blocksEntry()},
                             {"native", nativeEntry()},
                             {"kernel", name + "_kernel"}}}};
  if (!variants.empty()) {
    json::Array list;
    for (KernelVariantAttr v : variants)
      list.push_back(::toJSON(v));
    root["variants"] = std::move(list);
  }
  return root;
}

std::string KernelMetadata::toJSONString(bool pretty) const {
  std::string out;
  llvm::raw_string_ostream os(out);
  if (pretty)
    os << llvm::formatv("{0:2}", toJSON());
  else
    os << toJSON();
  return out;
}

//===----------------------------------------------------------------------===//
// Extraction
//===----------------------------------------------------------------------===//

namespace {
/// Turns the SSA computation of a grid extent into a #tile.grid_expr.
class GridExprBuilder {
public:
  GridExprBuilder(func::FuncOp kernel, ArrayRef<KernelParamAttr> params)
      : kernel(kernel), params(params), ctx(kernel.getContext()) {}

  FailureOr<GridExprAttr> build(Value v, Operation *user) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() != &kernel.getBody().front())
        return user->emitError("grid extent depends on a block argument that "
                               "is not a kernel argument"),
               failure();
      KernelParamAttr p = params[arg.getArgNumber()];
      if (p.isTensor() || !p.getType().isIntOrIndex())
        return user->emitError("grid extent uses argument #")
                   << arg.getArgNumber() << " which is not an integer scalar",
               failure();
      return GridExprAttr::getScalar(ctx, arg.getArgNumber());
    }
    Operation *op = v.getDefiningOp();
    if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
        return GridExprAttr::getConstant(ctx, i.getInt());
    }
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
            arith::ExtUIOp, arith::TruncIOp>(op))
      return build(op->getOperand(0), user);
    if (auto dim = dyn_cast<memref::DimOp>(op))
      return buildDim(dim);
    static const llvm::StringMap<GridExprKind> binaryOps = {
        {"arith.addi", GridExprKind::add},
        {"arith.subi", GridExprKind::sub},
        {"arith.muli", GridExprKind::mul},
        {"arith.divui", GridExprKind::divu},
        {"arith.divsi", GridExprKind::divs},
        {"arith.ceildivui", GridExprKind::ceildivu},
        {"arith.ceildivsi", GridExprKind::ceildivs},
        {"arith.remui", GridExprKind::remu},
        {"arith.remsi", GridExprKind::rems},
        {"arith.minui", GridExprKind::minu},
        {"arith.maxui", GridExprKind::maxu},
        {"arith.minsi", GridExprKind::mins},
        {"arith.maxsi", GridExprKind::maxs}};
    auto it = binaryOps.find(op->getName().getStringRef());
    if (it == binaryOps.end())
      return op->emitError("grid extent cannot be computed on the host: '")
                 << op->getName()
                 << "' is not one of the integer ops allowed in grid "
                    "expressions (constants, memref.dim of an argument, "
                    "integer scalars, add/sub/mul/div/ceildiv/rem/min/max)",
             failure();
    auto lhs = build(op->getOperand(0), user);
    if (failed(lhs))
      return failure();
    auto rhs = build(op->getOperand(1), user);
    if (failed(rhs))
      return failure();
    return GridExprAttr::getBinary(it->second, *lhs, *rhs);
  }

private:
  FailureOr<GridExprAttr> buildDim(memref::DimOp dim) {
    auto arg = dyn_cast<BlockArgument>(dim.getSource());
    std::optional<int64_t> index = dim.getConstantIndex();
    if (!arg || arg.getOwner() != &kernel.getBody().front() || !index)
      return dim.emitError("grid extent uses memref.dim of something other "
                           "than a kernel argument at a constant dim"),
             failure();
    KernelParamAttr p = params[arg.getArgNumber()];
    if (*index < 0 || *index >= p.getRank())
      return dim.emitError("memref.dim index out of range"), failure();
    int64_t extent = p.getMemRefType().getDimSize(*index);
    if (!ShapedType::isDynamic(extent))
      return GridExprAttr::getConstant(ctx, extent);
    return GridExprAttr::getSymbol(ctx, p.getDims()[*index].getValue());
  }

  func::FuncOp kernel;
  ArrayRef<KernelParamAttr> params;
  MLIRContext *ctx;
};
} // namespace

/// The description of argument `i`.
static KernelParamAttr buildParam(func::FuncOp kernel, unsigned i) {
  MLIRContext *ctx = kernel.getContext();
  Type type = kernel.getArgumentTypes()[i];
  auto name = kernel.getArgAttrOfType<StringAttr>(i, TileDialect::kNameAttrName);
  if (!name)
    name = StringAttr::get(ctx, "arg" + std::to_string(i));
  SmallVector<StringAttr> dims;
  ParamAccess access = ParamAccess::read;
  bool output = false, inplace = false;
  if (auto memref = dyn_cast<MemRefType>(type)) {
    auto names =
        kernel.getArgAttrOfType<ArrayAttr>(i, TileDialect::kDimsAttrName);
    for (int64_t d = 0; d < memref.getRank(); ++d) {
      if (names)
        dims.push_back(cast<StringAttr>(names[d]));
      else if (memref.isDynamicDim(d))
        dims.push_back(StringAttr::get(ctx, name.getValue() + "." + Twine(d)));
      else
        dims.push_back(StringAttr::get(ctx, ""));
    }
    output = kernel.getArgAttr(i, TileDialect::kOutputAttrName) != nullptr;
    inplace = kernel.getArgAttr(i, TileDialect::kInplaceAttrName) != nullptr;
    access = computeParamAccess(kernel.getArgument(i));
  }
  // An output the runtime may allocate (uninitialized, like torch.empty)
  // must not be accumulated into: an atomic reads what is there first, so
  // an omitted output would give garbage, silently.
  if (output) {
    Operation *atomic = nullptr;
    kernel.walk([&](Operation *op) {
      Value target;
      if (auto a = dyn_cast<AtomicOp>(op))
        target = a.getBuffer();
      else if (auto a = dyn_cast<AtomicTileOp>(op))
        target = a.getTarget();
      while (target && target.getDefiningOp<ViewLikeOpInterface>())
        target = target.getDefiningOp<ViewLikeOpInterface>().getViewSource();
      if (target == kernel.getArgument(i)) {
        atomic = op;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (atomic) {
      InFlightDiagnostic d = atomic->emitError("'")
                             << name.getValue()
                             << "' is a tile.output (allocated uninitialized "
                                "when the caller omits it) but this atomic "
                                "accumulates into it: drop tile.output and "
                                "have the caller pass the tensor (zeroed, or "
                                "holding what to accumulate onto)";
      d.attachNote(kernel.getArgument(i).getLoc()) << "the output";
      return nullptr;
    }
  }
  auto param = KernelParamAttr::getChecked(
      [&] { return kernel.emitError(); }, ctx, name, type,
      ArrayRef<StringAttr>(dims), access, output, inplace);
  if (param && getDTypeName(param.getElementType()).empty()) {
    kernel.emitError("argument #")
        << i << " has unsupported element type " << param.getElementType();
    return nullptr;
  }
  return param;
}

/// The first 8-bit float type in `t` (a memref's element type, a vector's),
/// if any.
static FloatType eightBitFloat(Type t) {
  if (auto shaped = dyn_cast<ShapedType>(t))
    t = shaped.getElementType();
  auto f = dyn_cast<FloatType>(t);
  return f && f.getWidth() == 8 ? f : FloatType();
}

LogicalResult mlir::tile::verifyLowerableElementTypes(func::FuncOp kernel) {
  for (BlockArgument arg : kernel.getArguments())
    if (FloatType f = eightBitFloat(arg.getType()))
      return mlir::emitError(arg.getLoc(), "argument #")
             << arg.getArgNumber() << " has element type " << f
             << ": 8-bit float tensors are not supported by the tile "
                "lowerings yet (convert them to f16 or bf16 before the "
                "kernel)";
  WalkResult r = kernel.walk([&](Operation *op) {
    for (Type t : llvm::concat<Type>(op->getOperandTypes(),
                                     op->getResultTypes()))
      if (FloatType f = eightBitFloat(t)) {
        op->emitError("8-bit float type ")
            << f << " is not supported by the tile lowerings yet";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

FailureOr<KernelInfoAttr> mlir::tile::buildKernelInfo(func::FuncOp kernel,
                                                      StringRef target,
                                                      StringRef chip,
                                                      StringRef features) {
  MLIRContext *ctx = kernel.getContext();
  SmallVector<KernelParamAttr> params;
  for (unsigned i = 0; i < kernel.getNumArguments(); ++i) {
    KernelParamAttr p = buildParam(kernel, i);
    if (!p)
      return failure();
    params.push_back(p);
  }

  SmallVector<LaunchOp> launches;
  kernel.walk([&](LaunchOp l) { launches.push_back(l); });
  if (launches.size() != 1)
    return kernel.emitError("a tile kernel must contain exactly one "
                            "tile.launch, found ")
               << launches.size(),
           failure();
  LaunchOp launch = launches.front();
  if (launch->getParentOp() != kernel.getOperation())
    return launch.emitError("tile.launch must be at the top level of the "
                            "kernel body"),
           failure();
  GridExprBuilder builder(kernel, params);
  SmallVector<GridExprAttr> grid;
  for (unsigned i = 0; i < 3; ++i) {
    if (i >= launch.getGridRank()) {
      grid.push_back(GridExprAttr::getConstant(ctx, 1));
      continue;
    }
    auto e = builder.build(launch.getGridSizes()[i], launch);
    if (failed(e))
      return failure();
    grid.push_back(*e);
  }
  int64_t block[3] = {static_cast<int64_t>(launch.getThreads()), 1, 1};
  int64_t sharedBytes = 0;
  launch.walk([&](AllocOp alloc) {
    if (alloc.getScope() != MemoryScope::shared)
      return;
    MemRefType type = alloc.getType();
    int64_t bytes = type.getNumElements() * getElementBytes(type.getElementType());
    // Keep every buffer 128-byte aligned, as TMA and swizzled layouts need.
    sharedBytes += llvm::alignTo(bytes, 128);
  });
  auto info = KernelInfoAttr::getChecked(
      [&] { return kernel.emitError(); }, ctx, kernel.getSymNameAttr(),
      StringAttr::get(ctx, target), StringAttr::get(ctx, chip),
      StringAttr::get(ctx, features), ArrayRef<KernelParamAttr>(params),
      ArrayRef<GridExprAttr>(grid), ArrayRef<int64_t>(block), sharedBytes,
      ArrayRef<KernelVariantAttr>{});
  if (!info)
    return failure();
  return info;
}

FailureOr<KernelMetadata> mlir::tile::extractKernelMetadata(func::FuncOp kernel) {
  auto info = buildKernelInfo(kernel, "cpu", "", "");
  if (failed(info))
    return failure();
  return KernelMetadata::get(*info);
}

FailureOr<KernelInfoAttr> mlir::tile::getKernelInfo(ModuleOp module) {
  auto info = module->getAttrOfType<KernelInfoAttr>(
      TileDialect::kKernelInfoAttrName);
  if (!info)
    return module.emitError("module has no '")
               << TileDialect::kKernelInfoAttrName
               << "' attribute; run tile-attach-metadata first",
           failure();
  return info;
}

void mlir::tile::setKernelInfo(ModuleOp module, KernelInfoAttr info) {
  module->setAttr(TileDialect::kKernelInfoAttrName, info);
}

FailureOr<KernelMetadata> mlir::tile::getAttachedMetadata(ModuleOp module) {
  auto info = getKernelInfo(module);
  if (failed(info))
    return failure();
  return KernelMetadata::get(*info);
}
