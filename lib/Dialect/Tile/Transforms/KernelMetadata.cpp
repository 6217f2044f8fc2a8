//===- KernelMetadata.cpp - extract and serialize kernel metadata ---------===//

#include "tile/Dialect/Tile/Transforms/KernelMetadata.h"

#include "tile/Dialect/Tile/IR/TileDialect.h"
#include "tile/Runtime/tile_abi.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

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

/// Bytes per element of a metadata dtype name ("float16" -> 2), 0 if unknown.
static int64_t getDTypeBytes(StringRef name) {
  DLDataType type;
  if (!tile_dtype_from_name(name.str().c_str(), &type))
    return 0;
  return (int64_t(type.bits) * type.lanes + 7) / 8;
}

static int64_t getElementBytes(Type type) {
  if (type.isIndex())
    return 8;
  return std::max<int64_t>(1, type.getIntOrFloatBitWidth() / 8);
}

//===----------------------------------------------------------------------===//
// GridExpr
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

std::optional<GridExpr> GridExpr::fromJSON(const json::Value &v) {
  const json::Object *obj = v.getAsObject();
  if (!obj)
    return std::nullopt;
  GridExpr e;
  if (auto c = obj->getInteger("const")) {
    e.kind = Kind::Const;
    e.value = *c;
    return e;
  }
  if (auto s = obj->getString("sym")) {
    e.kind = Kind::Sym;
    e.name = s->str();
    return e;
  }
  if (auto p = obj->getInteger("scalar")) {
    e.kind = Kind::Scalar;
    e.param = *p;
    return e;
  }
  auto op = obj->getString("op");
  const json::Array *args = obj->getArray("args");
  if (!op || !args || args->size() != 2)
    return std::nullopt;
  e.kind = Kind::Op;
  e.name = op->str();
  for (const json::Value &a : *args) {
    auto sub = fromJSON(a);
    if (!sub)
      return std::nullopt;
    e.args.push_back(std::move(*sub));
  }
  return e;
}

//===----------------------------------------------------------------------===//
// KernelMetadata <-> JSON
//===----------------------------------------------------------------------===//

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
  if (!variants.empty())
    root["variants"] = json::Array(variants);
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

FailureOr<KernelMetadata>
KernelMetadata::fromJSONString(StringRef text, std::string &error) {
  auto parsed = json::parse(text);
  if (!parsed) {
    error = llvm::toString(parsed.takeError());
    return failure();
  }
  const json::Object *root = parsed->getAsObject();
  auto fail = [&](const Twine &msg) -> FailureOr<KernelMetadata> {
    error = msg.str();
    return failure();
  };
  if (!root)
    return fail("metadata is not a JSON object");
  KernelMetadata md;
  if (auto n = root->getString("name"))
    md.name = n->str();
  else
    return fail("metadata lacks 'name'");
  if (const json::Object *t = root->getObject("target")) {
    md.targetKind = t->getString("kind").value_or("cpu").str();
    md.chip = t->getString("chip").value_or("").str();
    md.features = t->getString("features").value_or("").str();
  }
  const json::Array *params = root->getArray("params");
  if (!params)
    return fail("metadata lacks 'params'");
  for (const json::Value &pv : *params) {
    const json::Object *po = pv.getAsObject();
    if (!po)
      return fail("a param is not an object");
    ParamInfo p;
    p.name = po->getString("name").value_or("").str();
    p.isTensor = po->getString("kind").value_or("") == "tensor";
    p.dtype = po->getString("dtype").value_or("").str();
    p.elementBytes = getDTypeBytes(p.dtype);
    if (p.elementBytes == 0)
      return fail("param '" + p.name + "' has unknown dtype '" + p.dtype + "'");
    if (p.isTensor) {
      p.rank = po->getInteger("rank").value_or(0);
      if (const json::Array *shape = po->getArray("shape"))
        for (const json::Value &d : *shape)
          p.shape.push_back(d.getAsInteger().value_or(-1));
      if (const json::Array *dims = po->getArray("dims"))
        for (const json::Value &d : *dims)
          p.dims.push_back(d.getAsString().value_or("").str());
      p.isOutput = po->getBoolean("output").value_or(false);
      if (static_cast<int64_t>(p.shape.size()) != p.rank ||
          static_cast<int64_t>(p.dims.size()) != p.rank)
        return fail("param '" + p.name + "' has inconsistent rank/shape/dims");
    }
    md.params.push_back(std::move(p));
  }
  if (const json::Array *syms = root->getArray("symbols"))
    for (const json::Value &s : *syms)
      md.symbols.push_back(s.getAsString().value_or("").str());
  const json::Array *grid = root->getArray("grid");
  if (!grid || grid->size() != 3)
    return fail("metadata needs a 3-entry 'grid'");
  for (unsigned i = 0; i < 3; ++i) {
    auto e = GridExpr::fromJSON((*grid)[i]);
    if (!e)
      return fail("grid expression " + Twine(i) + " is malformed");
    md.grid[i] = std::move(*e);
  }
  if (const json::Array *block = root->getArray("block"))
    for (unsigned i = 0; i < 3 && i < block->size(); ++i)
      md.block[i] = (*block)[i].getAsInteger().value_or(1);
  md.sharedBytes = root->getInteger("shared_bytes").value_or(0);
  if (const json::Array *variants = root->getArray("variants"))
    md.variants = *variants;
  return md;
}

//===----------------------------------------------------------------------===//
// Extraction
//===----------------------------------------------------------------------===//

namespace {
/// Turns the SSA computation of a grid extent into a GridExpr.
class GridExprBuilder {
public:
  GridExprBuilder(func::FuncOp kernel, const KernelMetadata &md)
      : kernel(kernel), md(md) {}

  FailureOr<GridExpr> build(Value v, Operation *user) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() != &kernel.getBody().front())
        return user->emitError("grid extent depends on a block argument that "
                               "is not a kernel argument"),
               failure();
      const ParamInfo &p = md.params[arg.getArgNumber()];
      if (p.isTensor || p.dtype.rfind("int", 0) != 0)
        return user->emitError("grid extent uses argument #")
                   << arg.getArgNumber() << " which is not an integer scalar",
               failure();
      GridExpr e;
      e.kind = GridExpr::Kind::Scalar;
      e.param = arg.getArgNumber();
      return e;
    }
    Operation *op = v.getDefiningOp();
    if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
        return GridExpr::constant(i.getInt());
    }
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
            arith::ExtUIOp, arith::TruncIOp>(op))
      return build(op->getOperand(0), user);
    if (auto dim = dyn_cast<memref::DimOp>(op))
      return buildDim(dim, user);
    static const llvm::StringMap<StringRef> binaryOps = {
        {"arith.addi", "add"},        {"arith.subi", "sub"},
        {"arith.muli", "mul"},        {"arith.divui", "divu"},
        {"arith.divsi", "divs"},      {"arith.ceildivui", "ceildivu"},
        {"arith.ceildivsi", "ceildivs"}, {"arith.remui", "remu"},
        {"arith.remsi", "rems"},      {"arith.minui", "minu"},
        {"arith.maxui", "maxu"},      {"arith.minsi", "mins"},
        {"arith.maxsi", "maxs"}};
    auto it = binaryOps.find(op->getName().getStringRef());
    if (it == binaryOps.end())
      return op->emitError("grid extent cannot be computed on the host: '")
                 << op->getName()
                 << "' is not one of the integer ops allowed in grid "
                    "expressions (constants, memref.dim of an argument, "
                    "integer scalars, add/sub/mul/div/ceildiv/rem/min/max)",
             failure();
    GridExpr e;
    e.kind = GridExpr::Kind::Op;
    e.name = it->second.str();
    for (Value operand : op->getOperands()) {
      auto sub = build(operand, user);
      if (failed(sub))
        return failure();
      e.args.push_back(std::move(*sub));
    }
    return e;
  }

private:
  FailureOr<GridExpr> buildDim(memref::DimOp dim, Operation *user) {
    auto arg = dyn_cast<BlockArgument>(dim.getSource());
    std::optional<int64_t> index = dim.getConstantIndex();
    if (!arg || arg.getOwner() != &kernel.getBody().front() || !index)
      return dim.emitError("grid extent uses memref.dim of something other "
                           "than a kernel argument at a constant dim"),
             failure();
    const ParamInfo &p = md.params[arg.getArgNumber()];
    if (*index < 0 || *index >= p.rank)
      return dim.emitError("memref.dim index out of range"), failure();
    if (p.shape[*index] >= 0)
      return GridExpr::constant(p.shape[*index]);
    GridExpr e;
    e.kind = GridExpr::Kind::Sym;
    e.name = p.dims[*index];
    return e;
  }

  func::FuncOp kernel;
  const KernelMetadata &md;
};
} // namespace

FailureOr<KernelMetadata> mlir::tile::extractKernelMetadata(func::FuncOp kernel) {
  KernelMetadata md;
  md.name = kernel.getSymName().str();
  llvm::StringSet<llvm::MallocAllocator> seenSymbols;
  for (auto [i, type] : llvm::enumerate(kernel.getArgumentTypes())) {
    ParamInfo p;
    if (auto name = kernel.getArgAttrOfType<StringAttr>(
            i, TileDialect::kNameAttrName))
      p.name = name.getValue().str();
    else
      p.name = "arg" + std::to_string(i);
    Type elementType = type;
    if (auto memref = dyn_cast<MemRefType>(type)) {
      p.isTensor = true;
      p.rank = memref.getRank();
      p.shape.assign(memref.getShape().begin(), memref.getShape().end());
      for (int64_t &d : p.shape)
        if (ShapedType::isDynamic(d))
          d = -1;
      auto names = kernel.getArgAttrOfType<ArrayAttr>(
          i, TileDialect::kDimsAttrName);
      for (int64_t d = 0; d < p.rank; ++d) {
        std::string sym;
        if (names)
          sym = cast<StringAttr>(names[d]).getValue().str();
        else if (p.shape[d] < 0)
          sym = p.name + "." + std::to_string(d);
        if (!sym.empty() && seenSymbols.insert(sym).second)
          md.symbols.push_back(sym);
        p.dims.push_back(sym);
      }
      p.isOutput = kernel.getArgAttr(i, TileDialect::kOutputAttrName) != nullptr;
      elementType = memref.getElementType();
    } else if (!isa<IntegerType, IndexType, FloatType>(type) ||
               (isa<FloatType>(type) && !type.isF32() && !type.isF64()) ||
               (isa<IntegerType>(type) && !type.isInteger(32) &&
                !type.isInteger(64))) {
      return kernel.emitError("scalar argument #")
                 << i << " has type " << type
                 << "; scalars must be i32, i64, index, f32 or f64",
             failure();
    }
    p.dtype = getDTypeName(elementType);
    if (p.dtype.empty())
      return kernel.emitError("argument #")
                 << i << " has unsupported element type " << elementType,
             failure();
    p.elementBytes = getElementBytes(elementType);
    md.params.push_back(std::move(p));
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
  GridExprBuilder builder(kernel, md);
  for (unsigned i = 0; i < 3; ++i) {
    if (i >= launch.getGridRank()) {
      md.grid[i] = GridExpr::constant(1);
      continue;
    }
    auto e = builder.build(launch.getGridSizes()[i], launch);
    if (failed(e))
      return failure();
    md.grid[i] = std::move(*e);
  }
  md.block[0] = launch.getThreads();
  launch.walk([&](AllocOp alloc) {
    if (alloc.getScope() != MemoryScope::shared)
      return;
    MemRefType type = alloc.getType();
    int64_t bytes = type.getNumElements() * getElementBytes(type.getElementType());
    // Keep every buffer 128-byte aligned, as TMA and swizzled layouts need.
    md.sharedBytes += llvm::alignTo(bytes, 128);
  });
  return md;
}

FailureOr<KernelMetadata> mlir::tile::getAttachedMetadata(ModuleOp module) {
  auto attr = module->getAttrOfType<StringAttr>(kMetadataAttrName);
  if (!attr)
    return module.emitError("module has no '")
               << kMetadataAttrName
               << "' attribute; run tile-attach-metadata first",
           failure();
  std::string error;
  auto md = KernelMetadata::fromJSONString(attr.getValue(), error);
  if (failed(md))
    return module.emitError("malformed kernel metadata: ") << error, failure();
  return md;
}
