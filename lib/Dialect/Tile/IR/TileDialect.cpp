//===- TileDialect.cpp - tile dialect and attributes ----------------------===//

#include "tile/Dialect/Tile/IR/TileDialect.h"
#include "tile/Dialect/Tile/IR/AffineEval.h"

#include "mlir/IR/Builders.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/ShapedOpInterfaces.h"
#include "llvm/Support/InterleavedRange.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tile;

#include "tile/Dialect/Tile/IR/TileDialect.cpp.inc"
#include "tile/Dialect/Tile/IR/TileEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tile/Dialect/Tile/IR/TileAttrs.cpp.inc"

void TileDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tile/Dialect/Tile/IR/TileAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "tile/Dialect/Tile/IR/TileOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Memory scopes
//===----------------------------------------------------------------------===//

std::optional<MemoryScope> mlir::tile::getMemoryScope(MemRefType type) {
  if (auto scope = dyn_cast_or_null<MemoryScopeAttr>(type.getMemorySpace()))
    return scope.getValue();
  return std::nullopt;
}

StringRef mlir::tile::getScopeName(MemRefType type) {
  if (auto scope = getMemoryScope(type))
    return stringifyMemoryScope(*scope);
  return "global";
}

MemoryScopeAttr mlir::tile::getScopeAttr(MLIRContext *ctx, MemoryScope scope) {
  return MemoryScopeAttr::get(ctx, scope);
}

//===----------------------------------------------------------------------===//
// Kernel-level attributes
//===----------------------------------------------------------------------===//

LogicalResult TileDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  if (attr.getName() == kKernelAttrName) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << kKernelAttrName
                             << "' must be a unit attribute";
    auto func = dyn_cast<func::FuncOp>(op);
    if (!func)
      return op->emitError() << "'" << kKernelAttrName
                             << "' may only mark a func.func";
    if (func.isExternal())
      return op->emitError() << "a tile kernel must have a body";
    if (func.getFunctionType().getNumResults() != 0)
      return op->emitError()
             << "a tile kernel returns nothing; write outputs to arguments";
    for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
      if (auto memref = dyn_cast<MemRefType>(type)) {
        // Any memory space (a #tile.scope or a foreign one) is rejected.
        if (memref.getMemorySpace())
          return op->emitError() << "kernel argument #" << i
                                 << " must be a global memref (no memory "
                                    "space), got "
                                 << type;
        if (!memref.getLayout().isIdentity())
          return op->emitError()
                 << "kernel argument #" << i
                 << " must have the identity layout (strides are checked "
                    "by the runtime)";
        continue;
      }
      if (!type.isIntOrIndexOrFloat())
        return op->emitError() << "kernel argument #" << i
                               << " must be a memref or a scalar, got "
                               << type;
    }
    // A symbol names one extent: two static dims may not give it two values.
    llvm::StringMap<std::pair<int64_t, unsigned>> staticSymbols;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      auto memref = dyn_cast<MemRefType>(func.getArgumentTypes()[i]);
      auto names = func.getArgAttrOfType<ArrayAttr>(i, kDimsAttrName);
      if (!memref || !names ||
          names.size() != static_cast<size_t>(memref.getRank()))
        continue;
      for (auto [d, name] : llvm::enumerate(names)) {
        auto str = dyn_cast<StringAttr>(name);
        int64_t extent = memref.getDimSize(d);
        if (!str || ShapedType::isDynamic(extent))
          continue;
        auto [it, inserted] =
            staticSymbols.try_emplace(str.getValue(), extent, i);
        if (!inserted && it->second.first != extent)
          return op->emitError()
                 << "symbol '" << str.getValue() << "' is " << extent
                 << " in argument #" << i << " but "
                 << it->second.first << " in argument #" << it->second.second;
      }
    }
    unsigned launches = 0;
    func.walk([&](LaunchOp) { ++launches; });
    if (launches == 0)
      return op->emitError() << "a tile kernel must contain a tile.launch";
    // Shape queries (memref.dim) take a constant dimension in range: an
    // extent is bound by its name at launch, and an out-of-range dimension
    // (undefined behaviour) crashes upstream folders of the lowerings.
    WalkResult dims = func.walk([&](ShapedDimOpInterface dim) {
      auto type = dyn_cast<ShapedType>(dim.getShapedValue().getType());
      std::optional<int64_t> d = getConstantIntValue(dim.getDimension());
      if (type && type.hasRank() && d && *d >= 0 && *d < type.getRank())
        return WalkResult::advance();
      InFlightDiagnostic diag = dim->emitOpError(
          "in a tile kernel needs a constant dimension index in [0, ");
      diag << (type && type.hasRank() ? type.getRank() : 0) << ")";
      if (d)
        diag << ", got " << *d;
      return WalkResult::interrupt();
    });
    if (dims.wasInterrupted())
      return failure();
    return success();
  }
  if (attr.getName() == kKernelInfoAttrName) {
    if (!isa<ModuleOp>(op) || !isa<KernelInfoAttr>(attr.getValue()))
      return op->emitError() << "'" << kKernelInfoAttrName
                             << "' must be a #tile.kernel_info on a module";
    return success();
  }
  return op->emitError() << "unknown tile attribute '"
                         << attr.getName().getValue() << "' on an operation";
}

LogicalResult TileDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  auto func = dyn_cast<func::FuncOp>(op);
  if (!func)
    return op->emitError() << "'" << attr.getName().getValue()
                           << "' may only annotate func.func arguments";
  Type type = func.getArgumentTypes()[argIndex];
  auto memref = dyn_cast<MemRefType>(type);
  if (attr.getName() == kDimsAttrName) {
    auto names = dyn_cast<ArrayAttr>(attr.getValue());
    if (!memref || !names)
      return op->emitError() << "'" << kDimsAttrName
                             << "' must be an array of strings on a memref "
                                "argument (argument #"
                             << argIndex << ")";
    if (names.size() != static_cast<size_t>(memref.getRank()))
      return op->emitError() << "'" << kDimsAttrName << "' of argument #"
                             << argIndex << " names " << names.size()
                             << " dims but the memref has rank "
                             << memref.getRank();
    for (Attribute name : names) {
      auto str = dyn_cast<StringAttr>(name);
      if (!str || str.getValue().empty())
        return op->emitError() << "'" << kDimsAttrName << "' of argument #"
                               << argIndex
                               << " must hold non-empty strings";
    }
    return success();
  }
  if (attr.getName() == kNameAttrName) {
    auto name = dyn_cast<StringAttr>(attr.getValue());
    if (!name || name.getValue().empty())
      return op->emitError() << "'" << kNameAttrName
                             << "' must be a non-empty string (argument #"
                             << argIndex << ")";
    return success();
  }
  if (attr.getName() == kOutputAttrName || attr.getName() == kInplaceAttrName) {
    if (!memref || !isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << attr.getName().getValue()
                             << "' must be a unit attribute on a memref "
                                "argument (argument #"
                             << argIndex << ")";
    return success();
  }
  return op->emitError() << "unknown tile argument attribute '"
                         << attr.getName().getValue() << "'";
}

//===----------------------------------------------------------------------===//
// FragmentLayoutAttr
//===----------------------------------------------------------------------===//

LogicalResult
FragmentLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                           AffineMap threadMap, AffineMap indexMap,
                           int64_t threads, int64_t replicate,
                           AffineMap inverse) {
  if (threadMap.getNumResults() != 1 || indexMap.getNumResults() != 1)
    return emitError() << "fragment layout maps must each have one result";
  if (threadMap.getNumDims() != indexMap.getNumDims())
    return emitError() << "fragment layout thread map has "
                       << threadMap.getNumDims()
                       << " dims but the index map has "
                       << indexMap.getNumDims();
  if (threadMap.getNumSymbols() || indexMap.getNumSymbols())
    return emitError() << "fragment layout maps may not use symbols";
  if (threads <= 0)
    return emitError() << "fragment layout needs a positive thread count";
  if (replicate <= 0 || threads % replicate != 0)
    return emitError() << "fragment layout replicate (" << replicate
                       << ") must be positive and divide threads ("
                       << threads << ")";
  if (inverse) {
    if (inverse.getNumDims() != 2 || inverse.getNumSymbols() != 0)
      return emitError() << "fragment layout inverse map must take (thread, "
                            "register) and no symbols";
    if (inverse.getNumResults() != threadMap.getNumDims())
      return emitError() << "fragment layout inverse map has "
                         << inverse.getNumResults()
                         << " results but the layout has "
                         << threadMap.getNumDims() << " dims";
  }
  return success();
}

LogicalResult FragmentLayoutAttr::verifyAgainstShape(
    ArrayRef<int64_t> shape,
    function_ref<InFlightDiagnostic()> emitError) const {
  if (static_cast<int64_t>(getThreadMap().getNumDims()) !=
      static_cast<int64_t>(shape.size()))
    return emitError() << "fragment layout has " << getThreadMap().getNumDims()
                       << " dims but the buffer has rank " << shape.size();
  // Enumerate the tile: fragments are register tiles (at most a few thousand
  // elements per thread), so this is cheap and catches every bad layout. The
  // product is bounded as it is formed so that no shape can overflow it.
  constexpr int64_t kMaxCheckedElements = 1 << 20;
  int64_t numElements = 1;
  for (int64_t d : shape) {
    if (d < 0 || llvm::MulOverflow(numElements, d, numElements))
      return emitError() << "fragment of shape " << llvm::interleaved(shape)
                         << " is too large to live in registers";
  }
  if (numElements > kMaxCheckedElements)
    return emitError() << "fragment of " << numElements
                       << " elements is too large to live in registers";
  // Every map is evaluated numerically (AffineEval.h): this runs on every
  // op verification, at every element of the tile.
  AffineMapEvaluator threadEval(getThreadMap()), indexEval(getIndexMap());
  auto evalOne = [&](AffineMap map, ArrayRef<int64_t> point,
                     int64_t &out) -> LogicalResult {
    const AffineMapEvaluator &eval =
        map == getThreadMap() ? threadEval : indexEval;
    std::optional<int64_t> v = eval.evaluateResult(0, point);
    if (!v)
      return emitError() << "fragment layout map " << AffineMapAttr::get(map)
                         << " cannot be evaluated at ("
                         << llvm::interleaved(point)
                         << "): division or modulo by a non-positive value, "
                            "or overflow";
    out = *v;
    return success();
  };
  llvm::DenseMap<std::pair<int64_t, int64_t>, int64_t> slotUses;
  SmallVector<int64_t> index(shape.size(), 0);
  for (int64_t linear = 0; linear < numElements; ++linear) {
    int64_t rest = linear;
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      index[d] = rest % shape[d];
      rest /= shape[d];
    }
    int64_t thread = 0, slot = 0;
    if (failed(evalOne(getThreadMap(), index, thread)) ||
        failed(evalOne(getIndexMap(), index, slot)))
      return failure();
    if (thread < 0 || thread >= getThreads())
      return emitError() << "fragment layout maps an element to thread "
                         << thread << ", outside [0, " << getThreads() << ")";
    if (slot < 0)
      return emitError() << "fragment layout maps an element to negative "
                            "register index "
                         << slot;
    if (++slotUses[{thread, slot}] > 1)
      return emitError() << "fragment layout maps two elements to thread "
                         << thread << " register " << slot;
  }
  if (AffineMap inverse = getInverse()) {
    int64_t regs = getNumRegisters(shape);
    int64_t slots = 0, copies = 0;
    if (llvm::MulOverflow(getThreads(), regs, slots) ||
        llvm::MulOverflow(numElements, getReplicate(), copies) ||
        slots != copies)
      return emitError() << "fragment layout with an inverse map must give "
                            "every thread the same "
                         << regs << " registers: " << getThreads() << " x "
                         << regs << " slots != " << numElements
                         << " elements x replicate " << getReplicate();
    SmallVector<int64_t> idx;
    AffineMapEvaluator inverseEval(inverse);
    auto evalInverse = [&](int64_t t, int64_t r) -> LogicalResult {
      if (inverseEval.evaluateAll({t, r}, idx))
        return success();
      return emitError() << "fragment layout inverse map "
                         << AffineMapAttr::get(inverse)
                         << " cannot be evaluated at (" << t << ", " << r
                         << "): division or modulo by a non-positive value, "
                            "or overflow";
    };
    for (int64_t t = 0; t < getThreads(); ++t) {
      for (int64_t r = 0; r < regs; ++r) {
        if (failed(evalInverse(t, r)))
          return failure();
        for (auto [d, v] : llvm::enumerate(idx))
          if (v < 0 || v >= shape[d])
            return emitError() << "fragment layout inverse maps thread " << t
                               << " register " << r
                               << " outside the tile (dim " << d << " = "
                               << v << ")";
        int64_t slot = 0;
        if (failed(evalOne(getIndexMap(), idx, slot)))
          return failure();
        if (slot != r)
          return emitError() << "fragment layout inverse maps thread " << t
                             << " register " << r
                             << " to an element whose index map gives "
                             << slot;
      }
    }
    // The canonical owner of every element holds it.
    for (int64_t linear = 0; linear < numElements; ++linear) {
      int64_t rest = linear;
      for (int64_t d = shape.size() - 1; d >= 0; --d) {
        index[d] = rest % shape[d];
        rest /= shape[d];
      }
      int64_t thread = 0, slot = 0;
      if (failed(evalOne(getThreadMap(), index, thread)) ||
          failed(evalOne(getIndexMap(), index, slot)) ||
          failed(evalInverse(thread, slot)))
        return failure();
      if (ArrayRef<int64_t>(idx) != ArrayRef<int64_t>(index))
        return emitError() << "fragment layout inverse does not map thread "
                           << thread << " register " << slot
                           << " back to the element that the thread map "
                              "assigns to it";
    }
  }
  return success();
}

Attribute FragmentLayoutAttr::parse(AsmParser &parser, Type) {
  AffineMap threadMap, indexMap, inverse;
  int64_t threads = 0, replicate = 1;
  if (parser.parseLess() || parser.parseKeyword("thread") ||
      parser.parseEqual() || parser.parseAffineMap(threadMap) ||
      parser.parseComma() || parser.parseKeyword("index") ||
      parser.parseEqual() || parser.parseAffineMap(indexMap) ||
      parser.parseComma() || parser.parseKeyword("threads") ||
      parser.parseEqual() || parser.parseInteger(threads))
    return {};
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    if (key == "replicate") {
      if (parser.parseInteger(replicate))
        return {};
    } else if (key == "inverse") {
      if (parser.parseAffineMap(inverse))
        return {};
    } else {
      parser.emitError(parser.getCurrentLocation(),
                       "expected 'replicate' or 'inverse', got '")
          << key << "'";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<FragmentLayoutAttr>(
      parser.getContext(), threadMap, indexMap, threads, replicate, inverse);
}

void FragmentLayoutAttr::print(AsmPrinter &printer) const {
  printer << "<thread = " << getThreadMap() << ", index = " << getIndexMap()
          << ", threads = " << getThreads();
  if (getReplicate() != 1)
    printer << ", replicate = " << getReplicate();
  if (getInverse())
    printer << ", inverse = " << getInverse();
  printer << ">";
}

int64_t FragmentLayoutAttr::getNumRegisters(ArrayRef<int64_t> shape) const {
  int64_t numElements = 1;
  for (int64_t d : shape)
    numElements *= d;
  SmallVector<int64_t> index(shape.size(), 0);
  AffineMapEvaluator indexEval(getIndexMap());
  int64_t regs = 0;
  for (int64_t linear = 0; linear < numElements; ++linear) {
    int64_t rest = linear;
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      index[d] = rest % shape[d];
      rest /= shape[d];
    }
    // An element whose slot cannot be evaluated counts for nothing here;
    // verifyAgainstShape reports it.
    if (std::optional<int64_t> slot = indexEval.evaluateResult(0, index))
      regs = std::max(regs, *slot + 1);
  }
  return regs;
}

//===----------------------------------------------------------------------===//
// SwizzleAttr
//===----------------------------------------------------------------------===//

LogicalResult SwizzleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  int64_t bits, int64_t base, int64_t shift,
                                  int64_t panel) {
  if (bits < 0 || base < 0 || shift < 0 || panel < 0)
    return emitError() << "swizzle parameters must be non-negative";
  // Checked before any sum or shift below so that neither can overflow.
  for (int64_t p : {bits, base, shift})
    if (p > 20)
      return emitError() << "swizzle parameter " << p
                         << " reaches beyond any shared-memory offset (bit 20)";
  if (bits + base + shift > 20)
    return emitError() << "swizzle reaches bit " << bits + base + shift
                       << ", beyond any shared-memory offset";
  if (panel && (!llvm::isPowerOf2_64(panel) || panel < 16))
    return emitError() << "swizzle panel (" << panel
                       << " bytes) must be a power of two of at least 16";
  if (panel && bits && (int64_t(1) << (base + shift)) > panel)
    return emitError() << "swizzle panel (" << panel << " bytes) is narrower "
                       << "than the swizzled row (" << (int64_t(1) << (base + shift))
                       << " bytes)";
  if (bits > 0 && shift < bits)
    return emitError() << "swizzle shift (" << shift
                       << ") must be at least bits (" << bits
                       << ") so that the XORed bit ranges do not overlap";
  return success();
}

int64_t SwizzleAttr::apply(int64_t byteOffset) const {
  if (getBits() == 0)
    return byteOffset;
  int64_t mask = ((int64_t(1) << getBits()) - 1) << (getBase() + getShift());
  return byteOffset ^ ((byteOffset & mask) >> getShift());
}

//===----------------------------------------------------------------------===//
// RasterizationAttr
//===----------------------------------------------------------------------===//

LogicalResult
RasterizationAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          int64_t panel, RasterOrder) {
  if (panel <= 0)
    return emitError() << "rasterization panel must be positive, got "
                       << panel;
  return success();
}
