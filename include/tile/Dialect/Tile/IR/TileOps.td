//===- TileOps.td - tile dialect operations ----------------*- tablegen -*-===//

#ifndef TILE_DIALECT_TILE_IR_TILEOPS_TD
#define TILE_DIALECT_TILE_IR_TILEOPS_TD

include "tile/Dialect/Tile/IR/TileBase.td"
include "tile/Dialect/Tile/IR/TileKernelInfo.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/LoopLikeInterface.td"

class Tile_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tile_Dialect, mnemonic, traits>;


//===----------------------------------------------------------------------===//
// Structure: launch, yield
//===----------------------------------------------------------------------===//

def Tile_YieldOp : Tile_Op<"yield", [Pure, Terminator,
    ParentOneOf<["LaunchOp", "ParallelOp", "PipelinedOp"]>]> {
  let summary = "terminator of tile regions";
  let assemblyFormat = "attr-dict";
}

def Tile_LaunchOp : Tile_Op<"launch", [
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>,
    SingleBlockImplicitTerminator<"YieldOp">,
    RecursiveMemoryEffects]> {
  let summary = "launch a grid of blocks";
  let description = [{
    Runs the region once per block of a 1-3 dimensional grid; the region's
    arguments are the block indices (x, y, z order). `threads` is the number
    of threads per block that collective ops inside are distributed over.
    An optional `raster` (a `#tile.raster`) remaps block indices of a 2-D grid
    for L2 reuse. Extents may be dynamic (computed from tensor sizes).

    ```mlir
    tile.launch blocks(%bx, %by) in (%gx, %gy) threads(128) {
      ...
    }
    ```
  }];
  let arguments = (ins Variadic<Index>:$gridSizes,
                       I64Attr:$threads,
                       OptionalAttr<Tile_RasterizationAttr>:$raster);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::mlir::ValueRange":$gridSizes, "int64_t":$threads)>
  ];
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    ::mlir::Block::BlockArgListType getBlockIndices() {
      return getBodyBlock().getArguments();
    }
    unsigned getGridRank() { return getGridSizes().size(); }
  }];
}

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

def Tile_AllocOp : Tile_Op<"alloc", [
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>,
    MemoryEffects<[MemAlloc<AutomaticAllocationScopeResource>]>]> {
  let summary = "allocate a shared, fragment or local buffer of a block";
  let description = [{
    The result type's memory space (`#tile.scope<...>`) is the scope. Shapes
    are static. `layout` annotates a `#tile.fragment` (fragment buffers only)
    or a `#tile.swizzle` (shared buffers only); without it layout inference
    chooses one.

    ```mlir
    %As = tile.alloc : memref<128x32xf16, #tile.scope<shared>>
    %C = tile.alloc {layout = #tile.fragment<...>} : memref<128x128xf32, #tile.scope<fragment>>
    ```
  }];
  let arguments = (ins OptionalAttr<AnyAttrOf<[Tile_FragmentLayoutAttr,
                                               Tile_SwizzleAttr]>>:$layout);
  let results = (outs Res<AnyStaticShapeMemRef, "",
                          [MemAlloc<AutomaticAllocationScopeResource>]>:$buffer);
  let assemblyFormat = "attr-dict `:` type($buffer)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::MemRefType getType() { return getBuffer().getType(); }
    MemoryScope getScope();
  }];
}

//===----------------------------------------------------------------------===//
// Collective tile ops
//===----------------------------------------------------------------------===//

def Tile_CopyOp : Tile_Op<"copy", [AttrSizedOperandSegments]> {
  let summary = "tile-shaped copy between global, shared and fragment buffers";
  let description = [{
    Copies a tile whose extent is the shape of the on-chip side. A global side
    is addressed by a start index (one per dim); out-of-bounds global reads
    produce zero and out-of-bounds global writes are dropped, so tails of
    dynamic shapes need no user code. Between two on-chip buffers the shapes
    must match and no indices are given. Element types may differ: the copy
    converts (floats round to nearest even, integers sign-extend or
    truncate, an integer becomes a float as a signed value and i1 as 0 / 1,
    a float an integer toward zero and i1 as x != 0).

    A rank-reducing copy moves a tile of lower rank out of (or into) a global
    tensor: `drop_dims` lists the global dims (increasing) in which the tile
    has extent 1 and that the on-chip side does not have; the remaining
    global dims map in order to the on-chip dims. The global side still takes
    one start index per dim (the dropped dims' start is the fixed
    coordinate). Below, `Q[b, h, m:m+64, 0:128]` of a [B, H, S, D] tensor.

    ```mlir
    tile.copy %A[%m, %k] to %As : memref<?x?xf16> to memref<128x32xf16, #tile.scope<shared>>
    tile.copy %C to %Cg[%m, %n] : memref<128x128xf32, #tile.scope<fragment>> to memref<?x?xf16>
    tile.copy %Q[%b, %h, %m, %c0] to %Qs drop_dims [0, 1]
        : memref<?x?x?x?xf16> to memref<64x128xf16, #tile.scope<shared>>
    ```
  }];
  let arguments = (ins Arg<AnyMemRef, "", [MemRead]>:$source,
                       Variadic<Index>:$sourceIndices,
                       Arg<AnyMemRef, "", [MemWrite]>:$target,
                       Variadic<Index>:$targetIndices,
                       OptionalAttr<DenseI64ArrayAttr>:$drop_dims);
  let assemblyFormat = [{
    $source (`[` $sourceIndices^ `]`)? `to` $target (`[` $targetIndices^ `]`)?
    (`drop_dims` $drop_dims^)? attr-dict `:` type($source) `to` type($target)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The global side (source or target), or null between on-chip buffers.
    ::mlir::Value getGlobal();
    ::mlir::OperandRange getGlobalIndices();
    /// The on-chip side's type: the tile's shape.
    ::mlir::MemRefType getTileType();
    /// Whether `drop_dims` is non-empty.
    bool isRankReducing();
    /// The tile's extent in the global tensor's dims: the on-chip shape with
    /// a 1 at every dropped dim.
    ::llvm::SmallVector<int64_t> getGlobalTileShape();
    /// Global-rank offsets into the tile of the on-chip index `tileIndex`:
    /// `zero` at every dropped dim. Add to getGlobalIndices() for the
    /// global element.
    ::llvm::SmallVector<::mlir::Value> expandTileIndex(
        ::mlir::ValueRange tileIndex, ::mlir::Value zero);
    /// The global dim of on-chip dim `d`.
    int64_t getGlobalDim(int64_t d);
  }];
}

def Tile_GemmOp : Tile_Op<"gemm"> {
  let summary = "C += op(A) x op(B) on a block's tiles";
  let description = [{
    `C` (a fragment, MxN) accumulates `op(A) x op(B)` where `op` transposes
    when `transpose_a` / `transpose_b` is set; A (MxK, or KxM transposed) is a
    shared or fragment buffer, B (KxN, or NxK transposed) a shared buffer.
    With `clear` C is zeroed first. Element types: f16 (accumulating in f32
    or f16), bf16 (f32), f32 as tf32 (f32), f8 E4M3/E5M2 in any combination
    (f32), i8 (i32).

    ```mlir
    tile.gemm %As, %Bs, %C {transpose_b} : memref<128x32xf16, #tile.scope<shared>>,
        memref<128x32xf16, #tile.scope<shared>>, memref<128x128xf32, #tile.scope<fragment>>
    ```
  }];
  let arguments = (ins Arg<AnyMemRef, "", [MemRead]>:$a,
                       Arg<AnyMemRef, "", [MemRead]>:$b,
                       Arg<AnyMemRef, "", [MemRead, MemWrite]>:$c,
                       UnitAttr:$transpose_a,
                       UnitAttr:$transpose_b,
                       UnitAttr:$clear);
  let assemblyFormat = [{
    $a `,` $b `,` $c attr-dict `:` type($a) `,` type($b) `,` type($c)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getM();
    int64_t getN();
    int64_t getK();
  }];
}

def Tile_FillOp : Tile_Op<"fill"> {
  let summary = "fill an on-chip buffer with a scalar";
  let arguments = (ins Arg<AnyMemRef, "", [MemWrite]>:$buffer, AnyType:$value);
  let assemblyFormat = "$buffer `,` $value attr-dict `:` type($buffer) `,` type($value)";
  let hasVerifier = 1;
}

def Tile_ClearOp : Tile_Op<"clear"> {
  let summary = "set every element of an on-chip buffer to zero";
  let arguments = (ins Arg<AnyMemRef, "", [MemWrite]>:$buffer);
  let assemblyFormat = "$buffer attr-dict `:` type($buffer)";
  let hasVerifier = 1;
}

def Tile_ReduceOp : Tile_Op<"reduce"> {
  let summary = "reduce an on-chip buffer along one dimension";
  let description = [{
    `target` has the shape of `source` without dimension `dim`. Kinds: sum,
    max, min, abssum (sum of |x|), absmax (max of |x|). With `clear` (the
    default in TileLang) the target is overwritten; without it the reduction
    is combined with the target's current values.

    ```mlir
    tile.reduce max %S into %M {dim = 1 : i64, clear} : memref<64x128xf32, #tile.scope<fragment>> into memref<64xf32, #tile.scope<fragment>>
    ```
  }];
  let arguments = (ins Tile_ReduceKindAttr:$kind,
                       Arg<AnyMemRef, "", [MemRead]>:$source,
                       Arg<AnyMemRef, "", [MemRead, MemWrite]>:$target,
                       I64Attr:$dim,
                       UnitAttr:$clear);
  let assemblyFormat = [{
    $kind $source `into` $target attr-dict `:` type($source) `into` type($target)
  }];
  let hasVerifier = 1;
}

def Tile_ParallelOp : Tile_Op<"parallel", [
    SingleBlockImplicitTerminator<"YieldOp">,
    RecursiveMemoryEffects]> {
  let summary = "data-parallel iteration over a tile's index space (T.Parallel)";
  let description = [{
    Runs the body once for every index of the static `extents`; iterations
    are independent and are distributed over the block's threads by the
    layout of the fragments they touch. The body reads and writes buffers
    with memref ops and computes with arith/math.

    ```mlir
    tile.parallel (%i, %j) in [128, 64] {
      %x = memref.load %F[%i, %j] : memref<128x64xf32, #tile.scope<fragment>>
      ...
    }
    ```
  }];
  let arguments = (ins DenseI64ArrayAttr:$extents);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::llvm::ArrayRef<int64_t>":$extents)>];
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    ::mlir::Block::BlockArgListType getInductionVars() {
      return getBodyBlock().getArguments();
    }
  }];
}

def Tile_PipelinedOp : Tile_Op<"pipelined", [
    SingleBlockImplicitTerminator<"YieldOp">,
    RecursiveMemoryEffects]> {
  let summary = "serial loop that the compiler may software-pipeline (T.Pipelined)";
  let description = [{
    A serial loop `for %iv = %lb to %ub step %step`; with `stages = N` the
    compiler overlaps the copies of iteration i + N - 1 with the compute of
    iteration i (global -> shared copies: a cp.async pipeline with N copies
    of each shared buffer; global -> fragment copies: N fragments, the loop
    unrolled N times). `stage` and `order` optionally give, per op of the body
    (terminator excluded), its pipeline stage in [0, stages) and its issue
    order (a permutation). The result is always that of the serial loop.
    On sm_90a the warp-specialized variants run a `stages(1)` loop without
    `stage`/`order` with two stages (the producer warpgroup loads one
    iteration ahead) where the second stage fits in shared memory; a remark
    says so (docs/pipelines.md, "stages(1) loops").

    ```mlir
    tile.pipelined %k = %c0 to %nk step %c1 stages(3) {
      ...
    }
    ```
  }];
  let arguments = (ins Index:$lowerBound, Index:$upperBound, Index:$step,
                       I64Attr:$stages,
                       OptionalAttr<DenseI64ArrayAttr>:$stage,
                       OptionalAttr<DenseI64ArrayAttr>:$order);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::mlir::Value":$lowerBound,
      "::mlir::Value":$upperBound, "::mlir::Value":$step, "int64_t":$stages)>];
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    ::mlir::BlockArgument getInductionVar() { return getBodyBlock().getArgument(0); }
    /// Whether `v` can be recomputed for any iteration (ahead of it, as a
    /// software pipeline's producers are): defined outside the loop, the
    /// induction variable, or memory-effect-free ops of the body without
    /// regions over those, which are added to `slice` (operands first).
    bool collectRecomputableSlice(
        ::mlir::Value v, ::llvm::SetVector<::mlir::Operation *> &slice);
  }];
}

//===----------------------------------------------------------------------===//
// Atomics
//===----------------------------------------------------------------------===//

def Tile_AtomicOp : Tile_Op<"atomic"> {
  let summary = "scalar atomic add / max / min on a buffer element";
  let description = [{
    ```mlir
    tile.atomic add %v, %out[%i] : f32, memref<?xf32>
    ```
  }];
  let arguments = (ins Tile_AtomicKindAttr:$kind, AnyType:$value,
                       Arg<AnyMemRef, "", [MemRead, MemWrite]>:$buffer,
                       Variadic<Index>:$indices);
  let assemblyFormat = [{
    $kind $value `,` $buffer `[` $indices `]` attr-dict `:` type($value) `,` type($buffer)
  }];
  let hasVerifier = 1;
}

def Tile_AtomicTileOp : Tile_Op<"atomic_tile"> {
  let summary = "element-wise atomic add / max / min of an on-chip tile into global memory";
  let description = [{
    Combines every element of the on-chip `source` into the global `target`
    at the tile starting at `indices`; out-of-bounds elements are dropped.

    ```mlir
    tile.atomic_tile add %acc to %out[%m, %n] : memref<64x64xf32, #tile.scope<fragment>> to memref<?x?xf32>
    ```
  }];
  let arguments = (ins Tile_AtomicKindAttr:$kind,
                       Arg<AnyMemRef, "", [MemRead]>:$source,
                       Arg<AnyMemRef, "", [MemRead, MemWrite]>:$target,
                       Variadic<Index>:$indices);
  let assemblyFormat = [{
    $kind $source `to` $target `[` $indices `]` attr-dict `:` type($source) `to` type($target)
  }];
  let hasVerifier = 1;
}

#endif // TILE_DIALECT_TILE_IR_TILEOPS_TD
