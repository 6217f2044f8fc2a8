//===- TileOps.cpp - tile dialect operations ------------------------------===//

#include "tile/Dialect/Tile/IR/TileDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::tile;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Formats a shape as "128x32" for diagnostics.
static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::interleave(
      shape, os,
      [&](int64_t d) {
        if (ShapedType::isDynamic(d))
          os << "?";
        else
          os << d;
      },
      "x");
  return out;
}

bool mlir::tile::isTileElementType(Type type) {
  if (auto i = dyn_cast<IntegerType>(type))
    return i.isSignless() && llvm::is_contained({1u, 8u, 16u, 32u, 64u},
                                                i.getWidth());
  return type.isF16() || type.isBF16() || type.isF32() || type.isF64() ||
         isa<Float8E4M3FNType, Float8E5M2Type>(type);
}

bool mlir::tile::isAtomicElementType(Type type) {
  return type.isF16() || type.isBF16() || type.isF32() || type.isF64() ||
         type.isSignlessInteger(32) || type.isSignlessInteger(64);
}

/// Ops that work on a block's buffers must sit inside a tile.launch.
static LogicalResult verifyInsideLaunch(Operation *op) {
  if (!op->getParentOfType<LaunchOp>())
    return op->emitOpError("must be nested in a tile.launch");
  return success();
}

static bool isOnChip(MemRefType type) { return getMemoryScope(type).has_value(); }

static bool hasScope(MemRefType type, MemoryScope scope) {
  auto s = getMemoryScope(type);
  return s && *s == scope;
}

/// On-chip buffers are allocated with static shapes and no layout map.
static LogicalResult verifyOnChipOperand(Operation *op, MemRefType type,
                                         StringRef name) {
  if (!type.hasStaticShape())
    return op->emitOpError() << name << " must have a static shape, got "
                             << type;
  return success();
}

//===----------------------------------------------------------------------===//
// LaunchOp
//===----------------------------------------------------------------------===//

void LaunchOp::build(OpBuilder &builder, OperationState &state,
                     ValueRange gridSizes, int64_t threads) {
  state.addOperands(gridSizes);
  state.addAttribute(getThreadsAttrName(state.name),
                     builder.getI64IntegerAttr(threads));
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (Value size : gridSizes)
    block->addArgument(builder.getIndexType(), size.getLoc());
  LaunchOp::ensureTerminator(*body, builder, state.location);
}

// tile.launch blocks(%bx, %by) in (%gx, %gy) threads(128) attr-dict region
ParseResult LaunchOp::parse(OpAsmParser &parser, OperationState &result) {
  SmallVector<OpAsmParser::Argument> indices;
  SmallVector<OpAsmParser::UnresolvedOperand> sizes;
  int64_t threads = 0;
  if (parser.parseKeyword("blocks") ||
      parser.parseArgumentList(indices, OpAsmParser::Delimiter::Paren) ||
      parser.parseKeyword("in") ||
      parser.parseOperandList(sizes, OpAsmParser::Delimiter::Paren))
    return failure();
  if (failed(parser.parseOptionalKeyword("threads")))
    return parser.emitError(parser.getCurrentLocation(),
                            "expected 'threads(N)': a launch needs a thread "
                            "count per block");
  if (parser.parseLParen() || parser.parseInteger(threads) ||
      parser.parseRParen())
    return failure();
  Type indexType = parser.getBuilder().getIndexType();
  if (parser.resolveOperands(sizes, indexType, result.operands))
    return failure();
  result.addAttribute("threads", parser.getBuilder().getI64IntegerAttr(threads));
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  for (auto &arg : indices)
    arg.type = indexType;
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, indices))
    return failure();
  LaunchOp::ensureTerminator(*body, parser.getBuilder(), result.location);
  return success();
}

void LaunchOp::print(OpAsmPrinter &p) {
  p << " blocks(";
  llvm::interleaveComma(getBlockIndices(), p,
                        [&](BlockArgument arg) { p.printOperand(arg); });
  p << ") in (" << getGridSizes() << ") threads(" << getThreadsAttr().getInt()
    << ")";
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs(), {"threads"});
  p << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                /*printBlockTerminators=*/false);
}

LogicalResult LaunchOp::verify() {
  unsigned rank = getGridSizes().size();
  if (rank < 1 || rank > 3)
    return emitOpError("grid must have 1 to 3 dimensions, got ") << rank;
  // The getters of I64Attr return uint64_t; compare signed.
  int64_t threads = getThreadsAttr().getInt();
  if (threads <= 0)
    return emitOpError("needs a positive thread count per block, got ")
           << threads;
  if (threads > 1024)
    return emitOpError("thread count ")
           << threads << " exceeds the 1024 threads of a block";
  if (getRaster() && rank != 2)
    return emitOpError("rasterization applies to a 2-D grid, got rank ")
           << rank;
  if ((*this)->getParentOfType<LaunchOp>())
    return emitOpError("may not be nested in another tile.launch");
  return success();
}

/// Names the block indices %bx, %by, %bz in the printed IR.
void LaunchOp::getAsmBlockArgumentNames(Region &region,
                                        OpAsmSetValueNameFn setNameFn) {
  static constexpr const char *kNames[] = {"bx", "by", "bz"};
  for (auto [i, arg] : llvm::enumerate(region.getArguments()))
    if (i < std::size(kNames))
      setNameFn(arg, kNames[i]);
}

LogicalResult LaunchOp::verifyRegions() {
  Block &block = getBodyBlock();
  if (block.getNumArguments() != getGridSizes().size())
    return emitOpError("expects one block index per grid dimension (")
           << getGridSizes().size() << "), got " << block.getNumArguments();
  for (BlockArgument arg : block.getArguments())
    if (!arg.getType().isIndex())
      return emitOpError("block indices must be of index type");
  return success();
}

//===----------------------------------------------------------------------===//
// AllocOp
//===----------------------------------------------------------------------===//

MemoryScope AllocOp::getScope() { return *getMemoryScope(getType()); }

/// Names results after their scope: %shared, %fragment, %local.
void AllocOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  if (auto scope = getMemoryScope(getType()))
    setNameFn(getBuffer(), stringifyMemoryScope(*scope));
}

LogicalResult AllocOp::verify() {
  MemRefType type = getType();
  auto scope = getMemoryScope(type);
  if (!scope)
    return emitOpError("result must be in a tile memory scope "
                       "(#tile.scope<shared|fragment|local>), got ")
           << type;
  if (!type.getLayout().isIdentity())
    return emitOpError("buffers are allocated with the identity layout; "
                       "use the 'layout' attribute for fragment layouts and "
                       "swizzles");
  if (type.getNumElements() == 0)
    return emitOpError("buffer has no elements");
  if (!isTileElementType(type.getElementType()))
    return emitOpError("unsupported element type ")
           << type.getElementType()
           << " (on-chip buffers hold i1, i8, i16, i32, i64, f16, bf16, f32, "
              "f64, f8E4M3FN or f8E5M2)";
  if (failed(verifyInsideLaunch(*this)))
    return failure();
  // A buffer belongs to the block: allocating per iteration of a parallel
  // body would give every element its own buffer.
  if ((*this)->getParentOfType<ParallelOp>())
    return emitOpError("allocates a block's buffer and may not be nested in "
                       "a tile.parallel; allocate it in the launch body");
  if (Attribute layout = getLayoutAttr()) {
    if (auto fragment = dyn_cast<FragmentLayoutAttr>(layout)) {
      if (*scope != MemoryScope::fragment)
        return emitOpError("a #tile.fragment layout needs a fragment buffer, "
                           "got a ")
               << stringifyMemoryScope(*scope) << " buffer";
      if (failed(fragment.verifyAgainstShape(
              type.getShape(), [&] { return emitOpError(); })))
        return failure();
      auto launch = (*this)->getParentOfType<LaunchOp>();
      if (fragment.getThreads() != launch.getThreadsAttr().getInt())
        return emitOpError("fragment layout spreads over ")
               << fragment.getThreads() << " threads but the launch has "
               << launch.getThreadsAttr().getInt();
    } else if (auto swizzle = dyn_cast<SwizzleAttr>(layout)) {
      if (*scope != MemoryScope::shared)
        return emitOpError("a #tile.swizzle needs a shared buffer, got a ")
               << stringifyMemoryScope(*scope) << " buffer";
      if (int64_t panel = swizzle.getPanel()) {
        int64_t rowBytes =
            type.getShape().back() *
            std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
        if (type.getRank() < 2 || rowBytes % panel)
          return emitOpError("a swizzle panel of ")
                 << panel << " bytes needs rows (the last dim) of a multiple "
                 << "of " << panel << " bytes, got " << type.getRank()
                 << "-D rows of " << rowBytes << " bytes";
      }
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// CopyOp
//===----------------------------------------------------------------------===//

Value CopyOp::getGlobal() {
  if (!isOnChip(cast<MemRefType>(getSource().getType())))
    return getSource();
  if (!isOnChip(cast<MemRefType>(getTarget().getType())))
    return getTarget();
  return {};
}

OperandRange CopyOp::getGlobalIndices() {
  return getGlobal() == getSource() ? getSourceIndices() : getTargetIndices();
}

MemRefType CopyOp::getTileType() {
  Value onChip = getGlobal() == getSource() ? getTarget() : getSource();
  return cast<MemRefType>(onChip.getType());
}

bool CopyOp::isRankReducing() {
  return getDropDims() && !getDropDims()->empty();
}

SmallVector<int64_t> CopyOp::getGlobalTileShape() {
  SmallVector<int64_t> shape(getTileType().getShape());
  if (auto drop = getDropDims())
    for (int64_t d : *drop)
      shape.insert(shape.begin() + d, 1);
  return shape;
}

SmallVector<Value> CopyOp::expandTileIndex(ValueRange tileIndex, Value zero) {
  SmallVector<Value> idx(tileIndex);
  if (auto drop = getDropDims())
    for (int64_t d : *drop)
      idx.insert(idx.begin() + d, zero);
  return idx;
}

int64_t CopyOp::getGlobalDim(int64_t d) {
  if (auto drop = getDropDims())
    for (int64_t dropped : *drop)
      if (dropped <= d)
        ++d;
  return d;
}

/// What a view of an on-chip buffer is called in diagnostics.
static std::string describeDefinition(Value v) {
  if (Operation *def = v.getDefiningOp())
    return ("a view ('" + def->getName().getStringRef() + "')").str();
  return "a block argument";
}

LogicalResult CopyOp::verify() {
  auto src = cast<MemRefType>(getSource().getType());
  auto dst = cast<MemRefType>(getTarget().getType());
  if (failed(verifyInsideLaunch(*this)))
    return failure();
  if (!isOnChip(src) && !isOnChip(dst))
    return emitOpError("copies between global tensors are not tile copies; "
                       "one side must be a shared, fragment or local buffer");
  ArrayRef<int64_t> drop;
  if (auto d = getDropDims())
    drop = *d;
  if (isOnChip(src) && isOnChip(dst) && !drop.empty())
    return emitOpError("drop_dims names dims of a global side; both sides "
                       "are on-chip");
  if (!drop.empty()) {
    int64_t globalRank = cast<MemRefType>(getGlobal().getType()).getRank();
    for (auto [i, d] : llvm::enumerate(drop)) {
      if (d < 0 || d >= globalRank)
        return emitOpError("drop_dims entry ")
               << d << " is not a dim of the rank-" << globalRank
               << " global " << (getGlobal() == getSource() ? "source" : "target");
      if (i > 0 && drop[i - 1] >= d)
        return emitOpError("drop_dims must be strictly increasing");
    }
  }
  int64_t srcRank = src.getRank(), dstRank = dst.getRank();
  int64_t dropped = static_cast<int64_t>(drop.size());
  if ((isOnChip(src) ? srcRank : srcRank - dropped) !=
      (isOnChip(dst) ? dstRank : dstRank - dropped)) {
    if (drop.empty())
      return emitOpError("source rank (")
             << srcRank << ") and target rank (" << dstRank
             << ") differ; a rank-reducing copy lists the global dims it "
                "drops in drop_dims";
    int64_t globalRank = isOnChip(src) ? dstRank : srcRank;
    return emitOpError("the rank-")
           << globalRank << " global side less " << dropped
           << " dropped dims has rank " << globalRank - dropped
           << " but the on-chip side has rank "
           << (isOnChip(src) ? srcRank : dstRank);
  }
  auto checkSide = [&](Value operand, MemRefType type, OperandRange indices,
                       StringRef side) -> LogicalResult {
    if (isOnChip(type)) {
      if (!indices.empty())
        return emitOpError() << "the on-chip " << side
                             << " takes no indices: the copy covers it whole";
      if (failed(verifyOnChipOperand(*this, type, side)))
        return failure();
      // The GPU lowering keeps its own representation of every tile.alloc
      // (registers, swizzled shared memory); a view of one has none.
      if (!operand.getDefiningOp<AllocOp>())
        return emitOpError() << "the on-chip " << side
                             << " must be a tile.alloc buffer, not "
                             << describeDefinition(operand)
                             << "; to drop unit dims of a global tensor use "
                                "drop_dims";
      return success();
    }
    if (indices.size() != static_cast<size_t>(type.getRank()))
      return emitOpError() << "the global " << side << " needs "
                           << type.getRank() << " start indices, got "
                           << indices.size();
    return success();
  };
  if (failed(checkSide(getSource(), src, getSourceIndices(), "source")) ||
      failed(checkSide(getTarget(), dst, getTargetIndices(), "target")))
    return failure();
  if (isOnChip(src) && isOnChip(dst) && src.getShape() != dst.getShape())
    return emitOpError("on-chip copy shapes differ: ")
           << formatShape(src.getShape()) << " (" << getScopeName(src)
           << ") vs " << formatShape(dst.getShape()) << " ("
           << getScopeName(dst) << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// GemmOp
//===----------------------------------------------------------------------===//

int64_t GemmOp::getM() {
  auto a = cast<MemRefType>(getA().getType());
  return a.getDimSize(getTransposeA() ? 1 : 0);
}
int64_t GemmOp::getK() {
  auto a = cast<MemRefType>(getA().getType());
  return a.getDimSize(getTransposeA() ? 0 : 1);
}
int64_t GemmOp::getN() {
  auto b = cast<MemRefType>(getB().getType());
  return b.getDimSize(getTransposeB() ? 0 : 1);
}

/// True when `a` x `b` accumulating into `c` is a supported gemm.
static bool isSupportedGemmTyping(Type a, Type b, Type c) {
  auto isF8 = [](Type t) { return isa<Float8E4M3FNType, Float8E5M2Type>(t); };
  if (isF8(a) && isF8(b))
    return c.isF32();
  if (a != b)
    return false;
  if (a.isF16())
    return c.isF32() || c.isF16();
  if (a.isBF16() || a.isF32())
    return c.isF32();
  if (a.isInteger(8))
    return c.isInteger(32);
  return false;
}

LogicalResult GemmOp::verify() {
  auto a = cast<MemRefType>(getA().getType());
  auto b = cast<MemRefType>(getB().getType());
  auto c = cast<MemRefType>(getC().getType());
  if (failed(verifyInsideLaunch(*this)))
    return failure();
  if (!hasScope(a, MemoryScope::shared) && !hasScope(a, MemoryScope::fragment))
    return emitOpError("A must be a shared or fragment buffer, got a ")
           << getScopeName(a) << " buffer";
  if (!hasScope(b, MemoryScope::shared))
    return emitOpError("B must be a shared buffer, got a ")
           << getScopeName(b) << " buffer";
  if (!hasScope(c, MemoryScope::fragment))
    return emitOpError("C (the accumulator) must be a fragment buffer, got a ")
           << getScopeName(c) << " buffer";
  if (a.getRank() != 2 || b.getRank() != 2 || c.getRank() != 2)
    return emitOpError("A, B and C must be 2-D tiles");
  if (failed(verifyOnChipOperand(*this, a, "A")) ||
      failed(verifyOnChipOperand(*this, b, "B")) ||
      failed(verifyOnChipOperand(*this, c, "C")))
    return failure();
  int64_t kB = b.getDimSize(getTransposeB() ? 1 : 0);
  if (getK() != kB)
    return emitOpError("reduction dims differ: op(A) is ")
           << getM() << "x" << getK() << " but op(B) is " << kB << "x"
           << getN();
  if (c.getDimSize(0) != getM() || c.getDimSize(1) != getN())
    return emitOpError("C is ")
           << formatShape(c.getShape()) << " but op(A) x op(B) is " << getM()
           << "x" << getN();
  if (!isSupportedGemmTyping(a.getElementType(), b.getElementType(),
                             c.getElementType()))
    return emitOpError("unsupported element types: A ")
           << a.getElementType() << ", B " << b.getElementType()
           << ", C " << c.getElementType()
           << " (supported: f16 x f16 -> f32|f16, bf16 x bf16 -> f32, "
              "f32 x f32 -> f32 (tf32), f8 x f8 -> f32, i8 x i8 -> i32)";
  return success();
}

//===----------------------------------------------------------------------===//
// FillOp / ClearOp
//===----------------------------------------------------------------------===//

static LogicalResult verifyFillTarget(Operation *op, MemRefType type) {
  if (failed(verifyInsideLaunch(op)))
    return failure();
  if (!isOnChip(type))
    return op->emitOpError("fills on-chip buffers only, got a global tensor");
  return verifyOnChipOperand(op, type, "buffer");
}

LogicalResult FillOp::verify() {
  auto type = cast<MemRefType>(getBuffer().getType());
  if (getValue().getType() != type.getElementType())
    return emitOpError("value type ")
           << getValue().getType() << " differs from the element type "
           << type.getElementType();
  return verifyFillTarget(*this, type);
}

LogicalResult ClearOp::verify() {
  return verifyFillTarget(*this, cast<MemRefType>(getBuffer().getType()));
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::verify() {
  auto src = cast<MemRefType>(getSource().getType());
  auto dst = cast<MemRefType>(getTarget().getType());
  if (failed(verifyInsideLaunch(*this)))
    return failure();
  if (!isOnChip(src) || !isOnChip(dst))
    return emitOpError("reduces between on-chip buffers; got a ")
           << getScopeName(src) << " source and a " << getScopeName(dst)
           << " target";
  if (failed(verifyOnChipOperand(*this, src, "source")) ||
      failed(verifyOnChipOperand(*this, dst, "target")))
    return failure();
  int64_t dim = getDimAttr().getInt(); // signed: getDim() is uint64_t
  if (dim < 0 || dim >= src.getRank())
    return emitOpError("reduction dim ")
           << dim << " is out of range for a rank-" << src.getRank()
           << " source";
  if (src.getElementType() != dst.getElementType())
    return emitOpError("source element type ")
           << src.getElementType() << " differs from target element type "
           << dst.getElementType();
  // 8-bit floats have no arithmetic in the lowerings (only conversions).
  Type elt = src.getElementType();
  if (!isa<FloatType, IntegerType>(elt) ||
      (isa<FloatType>(elt) && elt.getIntOrFloatBitWidth() < 16))
    return emitOpError("reduces integer or f16/bf16/f32/f64 buffers, got ")
           << elt;
  SmallVector<int64_t> expected(src.getShape());
  expected.erase(expected.begin() + dim);
  if (dst.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("target must have shape ")
           << (expected.empty() ? std::string("[] (rank 0)")
                                : formatShape(expected))
           << " (source without dim " << dim << "), got "
           << (dst.getRank() ? formatShape(dst.getShape())
                             : std::string("[] (rank 0)"));
  return success();
}

//===----------------------------------------------------------------------===//
// ParallelOp
//===----------------------------------------------------------------------===//

void ParallelOp::build(OpBuilder &builder, OperationState &state,
                       ArrayRef<int64_t> extents) {
  state.addAttribute(getExtentsAttrName(state.name),
                     builder.getDenseI64ArrayAttr(extents));
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (size_t i = 0; i < extents.size(); ++i)
    block->addArgument(builder.getIndexType(), state.location);
  ParallelOp::ensureTerminator(*body, builder, state.location);
}

// tile.parallel (%i, %j) in [128, 64] attr-dict region
ParseResult ParallelOp::parse(OpAsmParser &parser, OperationState &result) {
  SmallVector<OpAsmParser::Argument> ivs;
  SmallVector<int64_t> extents;
  if (parser.parseArgumentList(ivs, OpAsmParser::Delimiter::Paren) ||
      parser.parseKeyword("in") || parser.parseLSquare())
    return failure();
  if (failed(parser.parseOptionalRSquare())) {
    if (parser.parseCommaSeparatedList([&]() {
          int64_t e;
          if (parser.parseInteger(e))
            return failure();
          extents.push_back(e);
          return success();
        }) ||
        parser.parseRSquare())
      return failure();
  }
  result.addAttribute("extents",
                      parser.getBuilder().getDenseI64ArrayAttr(extents));
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  for (auto &iv : ivs)
    iv.type = parser.getBuilder().getIndexType();
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, ivs))
    return failure();
  ParallelOp::ensureTerminator(*body, parser.getBuilder(), result.location);
  return success();
}

void ParallelOp::print(OpAsmPrinter &p) {
  p << " (";
  llvm::interleaveComma(getInductionVars(), p,
                        [&](BlockArgument arg) { p.printOperand(arg); });
  p << ") in [";
  llvm::interleaveComma(getExtents(), p);
  p << "]";
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs(), {"extents"});
  p << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                /*printBlockTerminators=*/false);
}

LogicalResult ParallelOp::verify() {
  if (getExtents().empty())
    return emitOpError("needs at least one extent");
  for (int64_t e : getExtents())
    if (e <= 0)
      return emitOpError("extents must be positive, got ") << e;
  return verifyInsideLaunch(*this);
}

LogicalResult ParallelOp::verifyRegions() {
  Block &block = getBodyBlock();
  if (block.getNumArguments() != getExtents().size())
    return emitOpError("expects one induction variable per extent (")
           << getExtents().size() << "), got " << block.getNumArguments();
  for (BlockArgument arg : block.getArguments())
    if (!arg.getType().isIndex())
      return emitOpError("induction variables must be of index type");
  return success();
}

//===----------------------------------------------------------------------===//
// PipelinedOp
//===----------------------------------------------------------------------===//

void PipelinedOp::build(OpBuilder &builder, OperationState &state,
                        Value lowerBound, Value upperBound, Value step,
                        int64_t stages) {
  state.addOperands({lowerBound, upperBound, step});
  state.addAttribute(getStagesAttrName(state.name),
                     builder.getI64IntegerAttr(stages));
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  block->addArgument(builder.getIndexType(), state.location);
  PipelinedOp::ensureTerminator(*body, builder, state.location);
}

// tile.pipelined %k = %lb to %ub step %s stages(3) attr-dict region
ParseResult PipelinedOp::parse(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::Argument iv;
  OpAsmParser::UnresolvedOperand lb, ub, step;
  int64_t stages = 0;
  Type indexType = parser.getBuilder().getIndexType();
  if (parser.parseArgument(iv) || parser.parseEqual() ||
      parser.parseOperand(lb) || parser.parseKeyword("to") ||
      parser.parseOperand(ub) || parser.parseKeyword("step") ||
      parser.parseOperand(step) || parser.parseKeyword("stages") ||
      parser.parseLParen() || parser.parseInteger(stages) ||
      parser.parseRParen())
    return failure();
  if (parser.resolveOperand(lb, indexType, result.operands) ||
      parser.resolveOperand(ub, indexType, result.operands) ||
      parser.resolveOperand(step, indexType, result.operands))
    return failure();
  result.addAttribute("stages", parser.getBuilder().getI64IntegerAttr(stages));
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  iv.type = indexType;
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, {iv}))
    return failure();
  PipelinedOp::ensureTerminator(*body, parser.getBuilder(), result.location);
  return success();
}

void PipelinedOp::print(OpAsmPrinter &p) {
  p << " ";
  p.printOperand(getInductionVar());
  p << " = " << getLowerBound() << " to " << getUpperBound() << " step "
    << getStep() << " stages(" << getStagesAttr().getInt() << ")";
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs(), {"stages"});
  p << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                /*printBlockTerminators=*/false);
}

LogicalResult PipelinedOp::verify() {
  int64_t stages = getStagesAttr().getInt(); // signed; getStages() is not
  if (stages < 1 || stages > kMaxPipelineStages)
    return emitOpError("stages must be in [1, ")
           << kMaxPipelineStages << "], got " << stages;
  return verifyInsideLaunch(*this);
}

LogicalResult PipelinedOp::verifyRegions() {
  Block &block = getBodyBlock();
  if (block.getNumArguments() != 1 || !block.getArgument(0).getType().isIndex())
    return emitOpError("body must take one index induction variable");
  int64_t numOps = static_cast<int64_t>(block.getOperations().size()) - 1;
  if (auto stage = getStageAttr()) {
    if (static_cast<int64_t>(stage.size()) != numOps)
      return emitOpError("'stage' has ")
             << stage.size() << " entries but the body has " << numOps
             << " ops";
    for (int64_t s : stage.asArrayRef())
      if (s < 0 || s >= getStagesAttr().getInt())
        return emitOpError("stage ")
               << s << " is outside [0, " << getStagesAttr().getInt() << ")";
  }
  if (auto order = getOrderAttr()) {
    if (static_cast<int64_t>(order.size()) != numOps)
      return emitOpError("'order' has ")
             << order.size() << " entries but the body has " << numOps
             << " ops";
    SmallVector<bool> seen(numOps, false);
    for (int64_t o : order.asArrayRef()) {
      if (o < 0 || o >= numOps || seen[o])
        return emitOpError("'order' must be a permutation of [0, ")
               << numOps << ")";
      seen[o] = true;
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Atomics
//===----------------------------------------------------------------------===//

static LogicalResult verifyAtomicElementType(Operation *op, Type type) {
  if (!isAtomicElementType(type))
    return op->emitOpError("atomics support f16, bf16, f32, f64, i32 and i64 "
                           "elements, got ")
           << type;
  return success();
}

LogicalResult AtomicOp::verify() {
  auto type = cast<MemRefType>(getBuffer().getType());
  if (failed(verifyInsideLaunch(*this)))
    return failure();
  if (getValue().getType() != type.getElementType())
    return emitOpError("value type ")
           << getValue().getType() << " differs from the element type "
           << type.getElementType();
  if (getIndices().size() != static_cast<size_t>(type.getRank()))
    return emitOpError("needs ")
           << type.getRank() << " indices, got " << getIndices().size();
  if (isOnChip(type) && !hasScope(type, MemoryScope::shared))
    return emitOpError("atomics target global or shared memory, got a ")
           << getScopeName(type) << " buffer";
  return verifyAtomicElementType(*this, type.getElementType());
}

LogicalResult AtomicTileOp::verify() {
  auto src = cast<MemRefType>(getSource().getType());
  auto dst = cast<MemRefType>(getTarget().getType());
  if (failed(verifyInsideLaunch(*this)))
    return failure();
  if (!isOnChip(src))
    return emitOpError("source must be an on-chip buffer, got a global tensor");
  if (!isGlobal(dst))
    return emitOpError("target must be a global tensor, got a ")
           << getScopeName(dst) << " buffer";
  if (src.getRank() != dst.getRank())
    return emitOpError("source rank (")
           << src.getRank() << ") and target rank (" << dst.getRank()
           << ") differ";
  if (getIndices().size() != static_cast<size_t>(dst.getRank()))
    return emitOpError("needs ")
           << dst.getRank() << " start indices, got " << getIndices().size();
  if (src.getElementType() != dst.getElementType())
    return emitOpError("source element type ")
           << src.getElementType() << " differs from target element type "
           << dst.getElementType();
  if (failed(verifyOnChipOperand(*this, src, "source")))
    return failure();
  return verifyAtomicElementType(*this, dst.getElementType());
}

#define GET_OP_CLASSES
#include "tile/Dialect/Tile/IR/TileOps.cpp.inc"

//===----------------------------------------------------------------------===//
// PipelinedOp
//===----------------------------------------------------------------------===//

bool PipelinedOp::collectRecomputableSlice(
    Value v, llvm::SetVector<Operation *> &slice) {
  if (v == getInductionVar() || !getBody().isAncestor(v.getParentRegion()))
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != &getBodyBlock() ||
      def->getNumRegions() != 0 || !isMemoryEffectFree(def))
    return false;
  for (Value operand : def->getOperands())
    if (!collectRecomputableSlice(operand, slice))
      return false;
  slice.insert(def);
  return true;
}
