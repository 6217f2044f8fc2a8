//===- KernelInfoAttrs.cpp - the typed kernel description -----------------===//
//
// Syntax and verifiers of #tile.kernel_info and its parts (grid
// expressions, params, variants, tensor maps). The verifiers hold the rules
// the runtime relies on, so a description that passes them always serializes
// to metadata the runtime accepts.
//
//===----------------------------------------------------------------------===//

#include "tile/Dialect/Tile/IR/TileDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

/// Parses `key =`.
ParseResult parseKey(AsmParser &parser, StringRef key) {
  if (parser.parseKeyword(key) || parser.parseEqual())
    return failure();
  return success();
}

/// Parses `[a, b, ...]` (possibly empty) of integers.
ParseResult parseIntList(AsmParser &parser, SmallVectorImpl<int64_t> &out) {
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
    int64_t v;
    if (parser.parseInteger(v))
      return failure();
    out.push_back(v);
    return success();
  });
}

void printIntList(AsmPrinter &printer, ArrayRef<int64_t> values) {
  printer << '[';
  llvm::interleaveComma(values, printer);
  printer << ']';
}

/// Parses `[<...>, <...>]` (possibly empty) of stripped attributes.
template <typename AttrT>
ParseResult parseAttrList(AsmParser &parser, SmallVectorImpl<AttrT> &out) {
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
    FailureOr<AttrT> attr = FieldParser<AttrT>::parse(parser);
    if (failed(attr))
      return failure();
    out.push_back(*attr);
    return success();
  });
}

template <typename AttrT>
void printAttrList(AsmPrinter &printer, ArrayRef<AttrT> attrs) {
  printer << '[';
  llvm::interleaveComma(attrs, printer, [&](AttrT a) {
    printer.printStrippedAttrOrType(a);
  });
  printer << ']';
}

/// Element bits as the kernel ABI stores them (index: int64).
unsigned getElementBits(Type type) {
  return type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
}

bool isBinary(GridExprKind kind) {
  return kind != GridExprKind::constant && kind != GridExprKind::symbol &&
         kind != GridExprKind::scalar;
}

} // namespace

//===----------------------------------------------------------------------===//
// GridExprAttr
//===----------------------------------------------------------------------===//

GridExprAttr GridExprAttr::getConstant(MLIRContext *ctx, int64_t value) {
  return get(ctx, GridExprKind::constant, value, StringAttr(), {});
}

GridExprAttr GridExprAttr::getSymbol(MLIRContext *ctx, StringRef name) {
  return get(ctx, GridExprKind::symbol, 0, StringAttr::get(ctx, name), {});
}

GridExprAttr GridExprAttr::getScalar(MLIRContext *ctx, int64_t param) {
  return get(ctx, GridExprKind::scalar, param, StringAttr(), {});
}

GridExprAttr GridExprAttr::getBinary(GridExprKind kind, GridExprAttr lhs,
                                     GridExprAttr rhs) {
  assert(isBinary(kind) && "not a binary grid op");
  return get(lhs.getContext(), kind, 0, StringAttr(), {lhs, rhs});
}

LogicalResult GridExprAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   GridExprKind kind, int64_t value,
                                   StringAttr symbol,
                                   ArrayRef<GridExprAttr> operands) {
  if (isBinary(kind)) {
    if (operands.size() != 2 || symbol || value != 0)
      return emitError() << "grid op '" << stringifyGridExprKind(kind)
                         << "' takes exactly two operands";
    return success();
  }
  if (!operands.empty())
    return emitError() << "a grid " << stringifyGridExprKind(kind)
                       << " has no operands";
  if (kind == GridExprKind::symbol && (!symbol || symbol.getValue().empty()))
    return emitError() << "a grid symbol needs a non-empty name";
  if (kind != GridExprKind::symbol && symbol)
    return emitError() << "only a grid symbol has a name";
  if (kind == GridExprKind::scalar && value < 0)
    return emitError() << "grid scalar refers to parameter " << value;
  return success();
}

void GridExprAttr::printExpr(AsmPrinter &printer) const {
  switch (getKind()) {
  case GridExprKind::constant:
    printer << getValue();
    return;
  case GridExprKind::symbol:
    printer.printString(getSymbol().getValue());
    return;
  case GridExprKind::scalar:
    printer << "scalar(" << getValue() << ')';
    return;
  default:
    printer << stringifyGridExprKind(getKind()) << '(';
    getOperands()[0].printExpr(printer);
    printer << ", ";
    getOperands()[1].printExpr(printer);
    printer << ')';
  }
}

GridExprAttr GridExprAttr::parseExpr(AsmParser &parser) {
  MLIRContext *ctx = parser.getContext();
  SMLoc loc = parser.getCurrentLocation();
  int64_t value;
  OptionalParseResult integer = parser.parseOptionalInteger(value);
  if (integer.has_value())
    return failed(*integer) ? GridExprAttr() : getConstant(ctx, value);
  std::string name;
  if (succeeded(parser.parseOptionalString(&name))) {
    if (name.empty())
      return parser.emitError(loc, "a grid symbol needs a non-empty name"),
             GridExprAttr();
    return getSymbol(ctx, name);
  }
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return {};
  if (keyword == "scalar") {
    if (parser.parseLParen() || parser.parseInteger(value) ||
        parser.parseRParen())
      return {};
    return getChecked([&] { return parser.emitError(loc); }, ctx,
                      GridExprKind::scalar, value, StringAttr(),
                      ArrayRef<GridExprAttr>{});
  }
  std::optional<GridExprKind> kind = symbolizeGridExprKind(keyword);
  if (!kind || !isBinary(*kind))
    return parser.emitError(loc, "unknown grid op '") << keyword << "'",
           GridExprAttr();
  if (parser.parseLParen())
    return {};
  GridExprAttr lhs = parseExpr(parser);
  if (!lhs || parser.parseComma())
    return {};
  GridExprAttr rhs = parseExpr(parser);
  if (!rhs || parser.parseRParen())
    return {};
  return getBinary(*kind, lhs, rhs);
}

void GridExprAttr::walk(function_ref<void(GridExprAttr)> fn) const {
  fn(*this);
  for (GridExprAttr operand : getOperands())
    operand.walk(fn);
}

Attribute GridExprAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  GridExprAttr expr = parseExpr(parser);
  if (!expr || parser.parseGreater())
    return {};
  return expr;
}

void GridExprAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printExpr(printer);
  printer << '>';
}

//===----------------------------------------------------------------------===//
// KernelParamAttr
//===----------------------------------------------------------------------===//

Type KernelParamAttr::getElementType() const {
  if (MemRefType memref = getMemRefType())
    return memref.getElementType();
  return getType();
}

int64_t KernelParamAttr::getRank() const {
  MemRefType memref = getMemRefType();
  return memref ? memref.getRank() : 0;
}

LogicalResult
KernelParamAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        StringAttr name, Type type, ArrayRef<StringAttr> dims,
                        ParamAccess access, bool output, bool inplace) {
  if (!name || name.getValue().empty())
    return emitError() << "a kernel parameter needs a non-empty name";
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref) {
    // One rule for scalars, so that every host ABI agrees on their C types.
    if (!type.isInteger(32) && !type.isInteger(64) && !type.isIndex() &&
        !type.isF32() && !type.isF64())
      return emitError() << "parameter '" << name.getValue() << "' has type "
                         << type
                         << "; scalars must be i32, i64, index, f32 or f64";
    if (!dims.empty() || access != ParamAccess::read || output || inplace)
      return emitError() << "scalar parameter '" << name.getValue()
                         << "' can have no dims, access, output or inplace";
    return success();
  }
  if (memref.getMemorySpace() || !memref.getLayout().isIdentity())
    return emitError() << "tensor parameter '" << name.getValue()
                       << "' must be a memref with the identity layout and "
                          "no memory space, got "
                       << type;
  if (!memref.getElementType().isIntOrIndexOrFloat())
    return emitError() << "tensor parameter '" << name.getValue()
                       << "' has element type " << memref.getElementType()
                       << "; only integer and float elements have a dtype";
  if (static_cast<int64_t>(dims.size()) != memref.getRank())
    return emitError() << "tensor parameter '" << name.getValue() << "' has "
                       << dims.size() << " dim names for rank "
                       << memref.getRank();
  for (auto [d, dim] : llvm::enumerate(dims))
    if ((!dim || dim.getValue().empty()) && memref.isDynamicDim(d))
      return emitError() << "dynamic dim " << d << " of parameter '"
                         << name.getValue() << "' needs a symbol name";
  if (inplace && access == ParamAccess::read)
    return emitError() << "parameter '" << name.getValue()
                       << "' is declared inplace, but the kernel never "
                          "writes it";
  return success();
}

Attribute KernelParamAttr::parse(AsmParser &parser, Type) {
  MLIRContext *ctx = parser.getContext();
  SMLoc loc = parser.getCurrentLocation();
  std::string name;
  Type type;
  if (parser.parseLess() || parser.parseString(&name) || parser.parseColon() ||
      parser.parseType(type))
    return {};
  SmallVector<StringAttr> dims;
  ParamAccess access = ParamAccess::read;
  bool output = false, inplace = false;
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    SMLoc keyLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&key))
      return {};
    if (key == "dims") {
      if (parser.parseEqual() ||
          parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
            std::string dim;
            if (parser.parseString(&dim))
              return failure();
            dims.push_back(StringAttr::get(ctx, dim));
            return success();
          }))
        return {};
    } else if (key == "access") {
      FailureOr<ParamAccess> a;
      if (parser.parseEqual() || failed(a = FieldParser<ParamAccess>::parse(
                                            parser)))
        return {};
      access = *a;
    } else if (key == "output") {
      output = true;
    } else if (key == "inplace") {
      inplace = true;
    } else {
      return parser.emitError(keyLoc, "unknown kernel parameter field '")
                 << key << "' (expected dims, access, output, inplace)",
             Attribute();
    }
  }
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(loc); }, ctx,
                    StringAttr::get(ctx, name), type, ArrayRef<StringAttr>(dims),
                    access, output, inplace);
}

void KernelParamAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printer.printString(getName().getValue());
  printer << " : " << getType();
  if (!getDims().empty()) {
    printer << ", dims = [";
    llvm::interleaveComma(getDims(), printer, [&](StringAttr d) {
      printer.printString(d.getValue());
    });
    printer << ']';
  }
  if (getAccess() != ParamAccess::read)
    printer << ", access = " << stringifyParamAccess(getAccess());
  if (getOutput())
    printer << ", output";
  if (getInplace())
    printer << ", inplace";
  printer << '>';
}

//===----------------------------------------------------------------------===//
// TmaDescAttr
//===----------------------------------------------------------------------===//

LogicalResult TmaDescAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  int64_t param, Type elementType,
                                  ArrayRef<int64_t> box,
                                  ArrayRef<int64_t> elementStrides,
                                  int64_t interleave, int64_t swizzle,
                                  int64_t l2Promotion, TmaOobFill,
                                  bool) {
  if (param < 0)
    return emitError() << "tensor map of parameter " << param;
  if (!elementType.isIntOrFloat())
    return emitError() << "tensor map element type " << elementType
                       << " is not an integer or float type";
  if (box.empty() || box.size() > 5)
    return emitError() << "a tensor map has 1 to 5 dims, got " << box.size();
  if (elementStrides.size() != box.size())
    return emitError() << "tensor map has " << box.size() << " box dims but "
                       << elementStrides.size() << " element strides";
  for (int64_t b : box)
    if (b < 1 || b > 256)
      return emitError() << "tensor map box dims must be in [1, 256], got "
                         << b;
  for (int64_t s : elementStrides)
    if (s < 1 || s > 8)
      return emitError()
             << "tensor map element strides must be in [1, 8], got " << s;
  if (interleave != 0 && interleave != 16 && interleave != 32)
    return emitError() << "tensor map interleave must be 0, 16 or 32 bytes";
  if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128)
    return emitError() << "tensor map swizzle must be 0, 32, 64 or 128 bytes";
  if (l2Promotion != 0 && l2Promotion != 64 && l2Promotion != 128 &&
      l2Promotion != 256)
    return emitError()
           << "tensor map L2 promotion must be 0, 64, 128 or 256 bytes";
  return success();
}

//===----------------------------------------------------------------------===//
// KernelVariantAttr
//===----------------------------------------------------------------------===//

LogicalResult
KernelVariantAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          StringAttr kind, StringAttr chip, StringAttr kernel,
                          ArrayRef<int64_t> block, int64_t sharedBytes,
                          VariantGrid grid, int64_t maxTiles, StringAttr,
                          ArrayRef<TmaDescAttr> tma, ArrayRef<int64_t> splitK,
                          int64_t workspaceBytes, StringAttr packKernel,
                          int64_t packElemBytes, int64_t packOperands,
                          ArrayRef<int64_t> coarsen, int64_t coarseSpeedup,
                          ArrayRef<int64_t> maxRows, int64_t split) {
  if (!kind || kind.getValue().empty() || !kernel ||
      kernel.getValue().empty() || !chip)
    return emitError() << "a kernel variant needs a kind, a chip and a "
                          "kernel name";
  if (block.size() != 3 || llvm::any_of(block, [](int64_t b) {
        return b < 1 || b > 1024;
      }) || block[0] * block[1] * block[2] > 1024)
    return emitError() << "a kernel variant's block must be three positive "
                          "sizes of at most 1024 threads in all";
  if (sharedBytes < 0 || sharedBytes > (int64_t(1) << 30))
    return emitError() << "a kernel variant's shared_bytes must be in "
                          "[0, 2^30]";
  if (maxTiles < 0)
    return emitError() << "a kernel variant's max_tiles must be >= 0 (0: "
                          "no limit)";
  if (!splitK.empty() &&
      (splitK.size() != 4 || splitK[0] < 0 || splitK[1] < 0 || splitK[2] < 1 ||
       splitK[3] < 1 || splitK[3] > (int64_t(1) << 30)))
    return emitError() << "a kernel variant's split_k must be [param, dim, "
                          "block_k, slice_bytes] with param, dim >= 0, "
                          "block_k >= 1 and slice_bytes in [1, 2^30]";
  if (workspaceBytes < 0 || workspaceBytes > (int64_t(1) << 40))
    return emitError() << "a kernel variant's workspace_bytes must be in "
                          "[0, 2^40]";
  if (packKernel && (packKernel.getValue().empty() || packKernel == kernel))
    return emitError() << "a kernel variant's pack kernel must be a "
                          "non-empty name other than the variant's kernel";
  if (bool(packKernel) != (packElemBytes != 0) ||
      (packKernel && !llvm::is_contained({1, 2, 4, 8}, packElemBytes)))
    return emitError() << "a kernel variant's pack and pack_elem_bytes go "
                          "together, with pack_elem_bytes 1, 2, 4 or 8";
  if (packOperands != 1 && (!packKernel || packOperands != 2))
    return emitError() << "a kernel variant's pack_operands must be 1 or 2, "
                          "and 1 without a pack kernel";
  if (packKernel && tma.empty())
    return emitError() << "a kernel variant with a pack kernel needs tma "
                          "entries";
  if (!coarsen.empty() &&
      (coarsen.size() != 3 || llvm::any_of(coarsen, [](int64_t c) {
         return c < 1 || c > 65535;
       })))
    return emitError() << "a kernel variant's coarsen must be three factors "
                          "in [1, 65535]";
  if (coarseSpeedup != 0 &&
      (coarsen.empty() || coarseSpeedup < 100 || coarseSpeedup > 10000))
    return emitError() << "a kernel variant's coarse_speedup must be in "
                          "[100, 10000] and come with coarsen";
  if (!coarsen.empty() && !splitK.empty())
    return emitError() << "a kernel variant cannot be both split_k and "
                          "coarsen";
  if (split != 1 && (coarsen.empty() || grid != VariantGrid::sms ||
                     split < 2 || split > 64))
    return emitError() << "a kernel variant's split must be in [2, 64] and "
                          "come with coarsen and grid = sms";
  if (!maxRows.empty() &&
      (maxRows.size() < 2 || maxRows[0] < 1 ||
       llvm::any_of(maxRows.drop_front(), [](int64_t p) { return p < 0; })))
    return emitError() << "a kernel variant's max_rows must be [rows, param, "
                          "...] with rows >= 1 and at least one param >= 0";
  return success();
}

Attribute KernelVariantAttr::parse(AsmParser &parser, Type) {
  MLIRContext *ctx = parser.getContext();
  SMLoc loc = parser.getCurrentLocation();
  StringAttr kind, chip, kernel, schedule, packKernel;
  SmallVector<int64_t> block;
  int64_t sharedBytes = 0, maxTiles = 0, workspaceBytes = 0,
          packElemBytes = 0, packOperands = 1, coarseSpeedup = 0, split = 1;
  VariantGrid grid = VariantGrid::launch;
  SmallVector<TmaDescAttr> tma;
  SmallVector<int64_t> splitK, coarsen, maxRows;
  if (parser.parseLess() || parser.parseAttribute(kind) ||
      parser.parseComma() || parseKey(parser, "chip") ||
      parser.parseAttribute(chip) || parser.parseComma() ||
      parseKey(parser, "kernel") || parser.parseAttribute(kernel) ||
      parser.parseComma() || parseKey(parser, "block") ||
      parseIntList(parser, block) || parser.parseComma() ||
      parseKey(parser, "shared_bytes") || parser.parseInteger(sharedBytes))
    return {};
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    SMLoc keyLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    if (key == "grid") {
      FailureOr<VariantGrid> g = FieldParser<VariantGrid>::parse(parser);
      if (failed(g))
        return {};
      grid = *g;
    } else if (key == "max_tiles") {
      if (parser.parseInteger(maxTiles))
        return {};
    } else if (key == "schedule") {
      if (parser.parseAttribute(schedule))
        return {};
    } else if (key == "tma") {
      if (parseAttrList(parser, tma))
        return {};
    } else if (key == "split_k") {
      if (parseIntList(parser, splitK))
        return {};
    } else if (key == "workspace_bytes") {
      if (parser.parseInteger(workspaceBytes))
        return {};
    } else if (key == "pack") {
      if (parser.parseAttribute(packKernel))
        return {};
    } else if (key == "pack_elem_bytes") {
      if (parser.parseInteger(packElemBytes))
        return {};
    } else if (key == "pack_operands") {
      if (parser.parseInteger(packOperands))
        return {};
    } else if (key == "coarsen") {
      if (parseIntList(parser, coarsen))
        return {};
    } else if (key == "coarse_speedup") {
      if (parser.parseInteger(coarseSpeedup))
        return {};
    } else if (key == "max_rows") {
      if (parseIntList(parser, maxRows))
        return {};
    } else if (key == "split") {
      if (parser.parseInteger(split))
        return {};
    } else {
      return parser.emitError(keyLoc, "unknown kernel variant field '")
                 << key
                 << "' (expected grid, max_tiles, schedule, tma, split_k, "
                    "workspace_bytes, pack, pack_elem_bytes, pack_operands, "
                    "coarsen, coarse_speedup, max_rows, split)",
             Attribute();
    }
  }
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(loc); }, ctx, kind, chip,
                    kernel, ArrayRef<int64_t>(block), sharedBytes, grid,
                    maxTiles, schedule, ArrayRef<TmaDescAttr>(tma),
                    ArrayRef<int64_t>(splitK), workspaceBytes, packKernel,
                    packElemBytes, packOperands, ArrayRef<int64_t>(coarsen),
                    coarseSpeedup, ArrayRef<int64_t>(maxRows), split);
}

void KernelVariantAttr::print(AsmPrinter &printer) const {
  printer << '<' << getKind() << ", chip = " << getChip()
          << ", kernel = " << getKernel() << ", block = ";
  printIntList(printer, getBlock());
  printer << ", shared_bytes = " << getSharedBytes();
  if (getGrid() != VariantGrid::launch)
    printer << ", grid = " << stringifyVariantGrid(getGrid());
  if (getMaxTiles() != 0)
    printer << ", max_tiles = " << getMaxTiles();
  if (getSchedule())
    printer << ", schedule = " << getSchedule();
  if (!getTma().empty()) {
    printer << ", tma = ";
    printAttrList(printer, getTma());
  }
  if (!getSplitK().empty()) {
    printer << ", split_k = ";
    printIntList(printer, getSplitK());
  }
  if (getWorkspaceBytes() != 0)
    printer << ", workspace_bytes = " << getWorkspaceBytes();
  if (getPackKernel())
    printer << ", pack = " << getPackKernel()
            << ", pack_elem_bytes = " << getPackElemBytes();
  if (getPackOperands() != 1)
    printer << ", pack_operands = " << getPackOperands();
  if (!getCoarsen().empty()) {
    printer << ", coarsen = ";
    printIntList(printer, getCoarsen());
  }
  if (getCoarseSpeedup() != 0)
    printer << ", coarse_speedup = " << getCoarseSpeedup();
  if (getSplit() != 1)
    printer << ", split = " << getSplit();
  if (!getMaxRows().empty()) {
    printer << ", max_rows = ";
    printIntList(printer, getMaxRows());
  }
  printer << '>';
}

//===----------------------------------------------------------------------===//
// KernelInfoAttr
//===----------------------------------------------------------------------===//

SmallVector<StringRef> KernelInfoAttr::getSymbols() const {
  llvm::SetVector<StringRef> symbols;
  for (KernelParamAttr p : getParams())
    for (StringAttr d : p.getDims())
      if (!d.getValue().empty())
        symbols.insert(d.getValue());
  return SmallVector<StringRef>(symbols.begin(), symbols.end());
}

SmallVector<int64_t> KernelInfoAttr::getOutIdx() const {
  SmallVector<int64_t> out;
  for (auto [i, p] : llvm::enumerate(getParams()))
    if (p.getOutput())
      out.push_back(i);
  return out;
}

KernelInfoAttr KernelInfoAttr::withSharedBytes(int64_t bytes) const {
  return get(getContext(), getName(), getTarget(), getChip(), getFeatures(),
             getParams(), getGrid(), getBlock(), bytes, getVariants());
}

KernelInfoAttr
KernelInfoAttr::withVariants(ArrayRef<KernelVariantAttr> variants) const {
  return get(getContext(), getName(), getTarget(), getChip(), getFeatures(),
             getParams(), getGrid(), getBlock(), getSharedBytes(), variants);
}

LogicalResult
KernelInfoAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       StringAttr name, StringAttr target, StringAttr chip,
                       StringAttr features, ArrayRef<KernelParamAttr> params,
                       ArrayRef<GridExprAttr> grid, ArrayRef<int64_t> block,
                       int64_t sharedBytes,
                       ArrayRef<KernelVariantAttr> variants) {
  if (!name || name.getValue().empty())
    return emitError() << "a kernel description needs a name";
  if (!target || target.getValue().empty() || !chip || !features)
    return emitError() << "a kernel description needs a target kind, chip "
                          "and features";
  llvm::StringSet<> names, bound;
  for (KernelParamAttr p : params) {
    if (!names.insert(p.getName().getValue()).second)
      return emitError() << "two kernel parameters are named '"
                         << p.getName().getValue()
                         << "' (set distinct tile.name attributes)";
    for (StringAttr d : p.getDims())
      bound.insert(d.getValue());
  }
  if (grid.size() != 3)
    return emitError() << "a kernel description has three grid extents, got "
                       << grid.size();
  for (size_t axis = 0; axis < grid.size(); ++axis) {
    GridExprAttr extent = grid[axis];
    LogicalResult ok = success();
    extent.walk([&](GridExprAttr e) {
      if (failed(ok))
        return;
      if (e.getKind() == GridExprKind::symbol &&
          !bound.contains(e.getSymbol().getValue()))
        ok = emitError() << "grid extent " << axis << " uses symbol '"
                         << e.getSymbol().getValue()
                         << "', which no tensor dim binds";
      if (e.getKind() != GridExprKind::scalar)
        return;
      int64_t i = e.getValue();
      Type t = i < static_cast<int64_t>(params.size()) && !params[i].isTensor()
                   ? params[i].getType()
                   : Type();
      if (!t || !t.isIntOrIndex())
        ok = emitError() << "grid extent " << axis << " uses parameter #" << i
                         << ", which is not an integer scalar";
    });
    if (failed(ok))
      return failure();
  }
  if (block.size() != 3 || llvm::any_of(block, [](int64_t b) { return b < 1; }))
    return emitError() << "a kernel description's block must be three "
                          "positive sizes";
  if (sharedBytes < 0)
    return emitError() << "a kernel description's shared_bytes must be >= 0";
  for (KernelVariantAttr v : variants) {
    for (int64_t i : v.getMaxRows().drop_front(v.getMaxRows().empty() ? 0 : 1)) {
      KernelParamAttr p =
          i < static_cast<int64_t>(params.size()) ? params[i] : nullptr;
      if (!p || !p.isTensor() || p.getRank() < 1)
        return emitError() << "variant '" << v.getKernel().getValue()
                           << "' limits the rows of parameter #" << i
                           << ", which is not a tensor";
    }
    for (TmaDescAttr t : v.getTma()) {
      int64_t i = t.getParam();
      KernelParamAttr p =
          i < static_cast<int64_t>(params.size()) ? params[i] : nullptr;
      if (!p || !p.isTensor() ||
          p.getRank() != static_cast<int64_t>(t.getBox().size()) ||
          getElementBits(p.getElementType()) !=
              getElementBits(t.getElementType()))
        return emitError() << "variant '" << v.getKernel().getValue()
                           << "' maps parameter #" << i
                           << ", which is not a tensor of the map's rank and "
                              "element size";
    }
  }
  return success();
}

Attribute KernelInfoAttr::parse(AsmParser &parser, Type) {
  MLIRContext *ctx = parser.getContext();
  SMLoc loc = parser.getCurrentLocation();
  StringAttr name, target, chip, features;
  SmallVector<KernelParamAttr> params;
  SmallVector<GridExprAttr> grid;
  SmallVector<int64_t> block;
  int64_t sharedBytes = 0;
  SmallVector<KernelVariantAttr> variants;
  if (parser.parseLess() || parser.parseAttribute(name) ||
      parser.parseComma() || parseKey(parser, "target") ||
      parser.parseAttribute(target) || parser.parseComma() ||
      parseKey(parser, "chip") || parser.parseAttribute(chip) ||
      parser.parseComma() || parseKey(parser, "features") ||
      parser.parseAttribute(features) || parser.parseComma() ||
      parseKey(parser, "params") || parseAttrList(parser, params) ||
      parser.parseComma() || parseKey(parser, "grid") ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        GridExprAttr e = GridExprAttr::parseExpr(parser);
        if (!e)
          return failure();
        grid.push_back(e);
        return success();
      }) ||
      parser.parseComma() || parseKey(parser, "block") ||
      parseIntList(parser, block) || parser.parseComma() ||
      parseKey(parser, "shared_bytes") || parser.parseInteger(sharedBytes))
    return {};
  if (succeeded(parser.parseOptionalComma()) &&
      (parseKey(parser, "variants") || parseAttrList(parser, variants)))
    return {};
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(loc); }, ctx, name, target,
                    chip, features, ArrayRef<KernelParamAttr>(params),
                    ArrayRef<GridExprAttr>(grid), ArrayRef<int64_t>(block),
                    sharedBytes, ArrayRef<KernelVariantAttr>(variants));
}

void KernelInfoAttr::print(AsmPrinter &printer) const {
  printer << '<' << getName() << ", target = " << getTarget()
          << ", chip = " << getChip() << ", features = " << getFeatures()
          << ", params = ";
  printAttrList(printer, getParams());
  printer << ", grid = [";
  llvm::interleaveComma(getGrid(), printer,
                        [&](GridExprAttr e) { e.printExpr(printer); });
  printer << "], block = ";
  printIntList(printer, getBlock());
  printer << ", shared_bytes = " << getSharedBytes();
  if (!getVariants().empty()) {
    printer << ", variants = ";
    printAttrList(printer, getVariants());
  }
  printer << '>';
}
