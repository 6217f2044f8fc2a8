//===- TileKernelInfo.td - the typed kernel description ----*- tablegen -*-===//
//
// What the runtime must know of a kernel (docs/bundle.md, "Metadata"), as
// typed attributes: `tile-attach-metadata` builds a `#tile.kernel_info` from
// the `tile.kernel` function and stores it on the module
// (`tile.kernel_info`); later passes read and update it as an attribute
// (shared bytes, variants); the bundle writer turns it into JSON, once.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_DIALECT_TILE_IR_TILEKERNELINFO_TD
#define TILE_DIALECT_TILE_IR_TILEKERNELINFO_TD

include "tile/Dialect/Tile/IR/TileBase.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Tile_ParamAccess : I32EnumAttr<"ParamAccess",
    "what a kernel does to a tensor parameter's memory", [
      I32EnumAttrCase<"read", 1>,
      I32EnumAttrCase<"write", 2>,
      I32EnumAttrCase<"readwrite", 3>
    ]> {
  let cppNamespace = "::mlir::tile";
  let genSpecializedAttr = 0;
}

def Tile_GridExprKind : I32EnumAttr<"GridExprKind",
    "node of a grid extent expression", [
      I32EnumAttrCase<"constant", 0>,
      I32EnumAttrCase<"symbol", 1>,
      I32EnumAttrCase<"scalar", 2>,
      I32EnumAttrCase<"add", 3>,
      I32EnumAttrCase<"sub", 4>,
      I32EnumAttrCase<"mul", 5>,
      I32EnumAttrCase<"divu", 6>,
      I32EnumAttrCase<"divs", 7>,
      I32EnumAttrCase<"ceildivu", 8>,
      I32EnumAttrCase<"ceildivs", 9>,
      I32EnumAttrCase<"remu", 10>,
      I32EnumAttrCase<"rems", 11>,
      I32EnumAttrCase<"minu", 12>,
      I32EnumAttrCase<"maxu", 13>,
      I32EnumAttrCase<"mins", 14>,
      I32EnumAttrCase<"maxs", 15>
    ]> {
  let cppNamespace = "::mlir::tile";
  let genSpecializedAttr = 0;
}

def Tile_VariantGrid : I32EnumAttr<"VariantGrid",
    "the grid a kernel variant is launched with", [
      I32EnumAttrCase<"launch", 0>,
      I32EnumAttrCase<"sms", 1>
    ]> {
  let cppNamespace = "::mlir::tile";
  let genSpecializedAttr = 0;
}

def Tile_TmaOobFill : I32EnumAttr<"TmaOobFill",
    "what a TMA load reads outside the tensor", [
      I32EnumAttrCase<"zero", 0>,
      I32EnumAttrCase<"nan", 1>
    ]> {
  let cppNamespace = "::mlir::tile";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def Tile_GridExprAttr : Tile_Attr<"GridExpr", "grid_expr"> {
  let summary = "a grid extent as an expression the host evaluates";
  let description = [{
    An integer expression over the kernel's symbols (dims of its tensor
    parameters), its integer scalar parameters and constants, evaluated by
    the runtime (or the native wrapper) before a launch. Leaves: an integer
    (`128`), a symbol (`"M"`), an integer scalar parameter (`scalar(3)`: the
    value of parameter 3); inner nodes: `add sub mul divu divs ceildivu
    ceildivs remu rems minu maxu mins maxs` with two operands (`u`/`s`:
    unsigned/signed). Example: `#tile.grid_expr<ceildivu("M", scalar(2))>`.
  }];
  let parameters = (ins "::mlir::tile::GridExprKind":$kind,
                        DefaultValuedParameter<"int64_t", "0">:$value,
                        OptionalParameter<"::mlir::StringAttr">:$symbol,
                        OptionalArrayRefParameter<"::mlir::tile::GridExprAttr">:$operands);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    static GridExprAttr getConstant(::mlir::MLIRContext *ctx, int64_t value);
    static GridExprAttr getSymbol(::mlir::MLIRContext *ctx,
                                  ::llvm::StringRef name);
    static GridExprAttr getScalar(::mlir::MLIRContext *ctx, int64_t param);
    static GridExprAttr getBinary(GridExprKind kind, GridExprAttr lhs,
                                  GridExprAttr rhs);
    /// Prints the expression without the attribute wrapper ("ceildivu("M",
    /// 128)"); parseExpr reads it back.
    void printExpr(::mlir::AsmPrinter &printer) const;
    static GridExprAttr parseExpr(::mlir::AsmParser &parser);
    /// Calls `fn` on this node and every node below it.
    void walk(::llvm::function_ref<void(GridExprAttr)> fn) const;
  }];
}

def Tile_KernelParamAttr : Tile_Attr<"KernelParam", "param"> {
  let summary = "one parameter of a kernel's description";
  let description = [{
    A kernel parameter as the runtime sees it: its name, its type (a global
    memref for a tensor, i32/i64/index/f32/f64 for a scalar), the symbol of
    each tensor dim (`""` for an unnamed static dim), what the kernel does
    to the tensor's memory (`read`, `write`, `readwrite`; computed by
    `tile-attach-metadata`, see docs/dialect.md), whether it is an output
    the runtime may allocate (`output`, from `tile.output`) and whether the
    kernel stays correct when it shares memory with another parameter
    (`inplace`, from `tile.inplace`).
    Example: `#tile.param<"C" : memref<?x?xf32>, dims = ["M", "N"],
    access = write, output>`; a scalar: `#tile.param<"alpha" : f32>`.
  }];
  let parameters = (ins "::mlir::StringAttr":$name,
                        "::mlir::Type":$type,
                        OptionalArrayRefParameter<"::mlir::StringAttr">:$dims,
                        DefaultValuedParameter<"::mlir::tile::ParamAccess",
                          "::mlir::tile::ParamAccess::read">:$access,
                        DefaultValuedParameter<"bool", "false">:$output,
                        DefaultValuedParameter<"bool", "false">:$inplace);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    bool isTensor() const { return ::llvm::isa<::mlir::MemRefType>(getType()); }
    /// The tensor's memref type (null for a scalar).
    ::mlir::MemRefType getMemRefType() const {
      return ::llvm::dyn_cast<::mlir::MemRefType>(getType());
    }
    /// The element type of a tensor, the type of a scalar.
    ::mlir::Type getElementType() const;
    int64_t getRank() const;
    /// Whether the kernel may write the parameter's memory.
    bool isWritten() const {
      return getAccess() != ::mlir::tile::ParamAccess::read;
    }
  }];
}

def Tile_TmaDescAttr : Tile_Attr<"TmaDesc", "tma"> {
  let summary = "a tensor map (CUtensorMap) a kernel variant needs";
  let description = [{
    One TMA descriptor that the runtime encodes per launch for tensor
    parameter `param` (docs/bundle.md, "Kernel variants"): element type,
    box and element strides (innermost first, one per tensor dim),
    interleave (0, 16 or 32 bytes), swizzle span (0, 32, 64 or 128 bytes),
    L2 promotion (0, 64, 128 or 256 bytes) and the out-of-bounds fill.
    `optional`: the kernel also runs without this map (the runtime passes a
    null pointer when it cannot encode it for a launch, e.g. the C of the
    TMA-store epilogue, which then stores through its threads); a
    required map that cannot be encoded makes the runtime try the next
    variant.

    Example:

    ```mlir
    #tile.tma<param = 2, type = f16, box = [64, 64], element_strides = [1, 1],
              interleave = 0, swizzle = 128, l2_promotion = 256,
              oob_fill = zero, optional = true>
    ```
  }];
  let parameters = (ins "int64_t":$param,
                        "::mlir::Type":$elementType,
                        ArrayRefParameter<"int64_t">:$box,
                        ArrayRefParameter<"int64_t">:$elementStrides,
                        "int64_t":$interleave,
                        "int64_t":$swizzle,
                        "int64_t":$l2Promotion,
                        "::mlir::tile::TmaOobFill":$oobFill,
                        DefaultValuedParameter<"bool", "false">:$optional);
  let assemblyFormat = [{
    `<` `param` `=` $param `,` `type` `=` $elementType `,`
        `box` `=` `[` $box `]` `,`
        `element_strides` `=` `[` $elementStrides `]` `,`
        `interleave` `=` $interleave `,` `swizzle` `=` $swizzle `,`
        `l2_promotion` `=` $l2Promotion `,` `oob_fill` `=` $oobFill
        (`,` `optional` `=` $optional^)? `>`
  }];
  let genVerifyDecl = 1;
}

def Tile_KernelVariantAttr : Tile_Attr<"KernelVariant", "variant"> {
  let summary = "an alternative kernel of the same launch for specific hardware";
  let description = [{
    A second kernel in the device code that implements the same launch on
    specific hardware (docs/bundle.md, "Kernel variants"); the runtime falls
    back to the kernel's own entry whenever it cannot use it. Today one
    kind: `"sm90_tma_wgmma"`. `grid`: `launch` (the launch's grid) or `sms`
    (persistent: one CTA per multiprocessor); `max_tiles`: used only for
    launches of at most that many blocks (0: any); `schedule`:
    informational; `tma`: the tensor maps it takes as trailing kernel
    parameters. `split_k = [param, dim, block_k, slice_bytes]`: a split-K
    kernel (the runtime launches it with grid (tiles, S, 1) for S K-slices
    of the reduction extent `dim` of tensor param `param`, in units of
    `block_k`, and chooses S per launch; its workspace holds `slice_bytes`
    per tile and slice); `workspace_bytes`: the fixed part of the
    zero-initialised device scratch it takes as its last kernel parameter
    (after the tensor maps): a launch's workspace is `workspace_bytes` plus,
    for split-K, tiles x S x `slice_bytes` (no parameter when that is 0).
    `pack = "NAME_pack2_b2"`, `pack_elem_bytes = 2`: a strided-copy kernel in
    the same device code with which the runtime may repack a read-only
    operand whose base or row pitch a tensor map cannot describe into an
    aligned workspace (docs/bundle.md, "pack"); `pack_operands = 2`: one
    launch of it copies up to two operands (blockIdx.y picks one of two
    argument groups; absent: 1, one operand per launch). `coarsen = [cx, cy, cz]`:
    each CTA tile of the variant covers cx x cy x cz blocks of the launch's
    grid (the variant's tiles: ceildiv(gx, cx) * ceildiv(gy, cy) *
    ceildiv(gz, cz); the runtime's tile-shape cost model decides per launch
    whether it runs; absent: one block per tile); `coarse_speedup = P`
    (with `coarsen` only, P in [100, 10000]): the compiler's estimate, in
    percent, of how much faster a launch block runs inside a coarse tile
    than as a tile of its own, which that cost model weighs (absent: 125).
    `split = P` (with `coarsen` only, P in [2, 64]): each launch block is P
    CTA tiles of the variant (launch tiles of more than 128 rows in 128-row
    parts): the variant's tiles are P times those `coarsen` gives, the
    runtime launches min(#SMs, tiles) CTAs of a persistent one, and the
    cost model compares it with the kernel's other split variants (blocks
    per CTA tile: cx * cy * cz / P).
    `max_rows = [R, p, ...]`:
    used only for launches in which dim 0 of every listed tensor param `p`
    is at most R (the narrow kernel of skinny GEMMs, which computes only
    the first R rows of each tile; with split_k, the runtime's narrow cost
    model picks its K-slices, 1 included).
    Example: `#tile.variant<"sm90_tma_wgmma", chip = "sm_90a",
    kernel = "gemm_kernel_sm90", block = [384, 1, 1], shared_bytes = 164864,
    grid = sms, tma = [<param = 0, type = f16, box = [64, 128], ...>]>`.
  }];
  let parameters = (ins "::mlir::StringAttr":$kind,
                        "::mlir::StringAttr":$chip,
                        "::mlir::StringAttr":$kernel,
                        ArrayRefParameter<"int64_t">:$block,
                        "int64_t":$sharedBytes,
                        DefaultValuedParameter<"::mlir::tile::VariantGrid",
                          "::mlir::tile::VariantGrid::launch">:$grid,
                        DefaultValuedParameter<"int64_t", "0">:$maxTiles,
                        OptionalParameter<"::mlir::StringAttr">:$schedule,
                        OptionalArrayRefParameter<"::mlir::tile::TmaDescAttr">:$tma,
                        OptionalArrayRefParameter<"int64_t">:$splitK,
                        DefaultValuedParameter<"int64_t", "0">:$workspaceBytes,
                        OptionalParameter<"::mlir::StringAttr">:$packKernel,
                        DefaultValuedParameter<"int64_t", "0">:$packElemBytes,
                        DefaultValuedParameter<"int64_t", "1">:$packOperands,
                        OptionalArrayRefParameter<"int64_t">:$coarsen,
                        DefaultValuedParameter<"int64_t", "0">:$coarseSpeedup,
                        OptionalArrayRefParameter<"int64_t">:$maxRows,
                        DefaultValuedParameter<"int64_t", "1">:$split);
  let builders = [
    // A variant without a pack kernel or coarsening.
    AttrBuilder<(ins "::mlir::StringAttr":$kind, "::mlir::StringAttr":$chip,
                     "::mlir::StringAttr":$kernel,
                     "::llvm::ArrayRef<int64_t>":$block,
                     "int64_t":$sharedBytes, "::mlir::tile::VariantGrid":$grid,
                     "int64_t":$maxTiles, "::mlir::StringAttr":$schedule,
                     "::llvm::ArrayRef<::mlir::tile::TmaDescAttr>":$tma,
                     "::llvm::ArrayRef<int64_t>":$splitK,
                     "int64_t":$workspaceBytes), [{
      return $_get($_ctxt, kind, chip, kernel, block, sharedBytes, grid,
                   maxTiles, schedule, tma, splitK, workspaceBytes,
                   ::mlir::StringAttr(), 0, 1, ::llvm::ArrayRef<int64_t>(),
                   0, ::llvm::ArrayRef<int64_t>(), 1);
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def Tile_KernelInfoAttr : Tile_Attr<"KernelInfo", "kernel_info"> {
  let summary = "the kernel's description for the runtime";
  let description = [{
    Everything the runtime needs to launch the kernel (docs/bundle.md): its
    name, target (kind, chip, features), parameters, grid (three extents as
    `#tile.grid_expr` expressions), block size, dynamic shared memory bytes
    and hardware-specific variants. The symbols are the distinct non-empty
    dim names of the tensor parameters, in order of appearance; `out_idx`
    lists the `output` parameters. Stored on the module as `tile.kernel_info`
    by `tile-attach-metadata`; the verifier checks that grid expressions use
    bound symbols and integer scalars, and variants refer to tensor params.
    Example:
    ```
    #tile.kernel_info<"add", target = "cpu", chip = "", features = "",
      params = [<"A" : memref<?xf32>, dims = ["N"]>,
                <"C" : memref<?xf32>, dims = ["N"], access = write, output>],
      grid = [ceildivu("N", 256), 1, 1], block = [128, 1, 1],
      shared_bytes = 0>
    ```
  }];
  let parameters = (ins "::mlir::StringAttr":$name,
                        "::mlir::StringAttr":$target,
                        "::mlir::StringAttr":$chip,
                        "::mlir::StringAttr":$features,
                        OptionalArrayRefParameter<"::mlir::tile::KernelParamAttr">:$params,
                        ArrayRefParameter<"::mlir::tile::GridExprAttr">:$grid,
                        ArrayRefParameter<"int64_t">:$block,
                        "int64_t":$sharedBytes,
                        OptionalArrayRefParameter<"::mlir::tile::KernelVariantAttr">:$variants);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The distinct non-empty dim names of the tensor params, in order.
    ::llvm::SmallVector<::llvm::StringRef> getSymbols() const;
    /// The indices of the `output` params.
    ::llvm::SmallVector<int64_t> getOutIdx() const;
    /// Copies with one field replaced.
    KernelInfoAttr withSharedBytes(int64_t bytes) const;
    KernelInfoAttr
    withVariants(::llvm::ArrayRef<KernelVariantAttr> variants) const;
  }];
}

#endif // TILE_DIALECT_TILE_IR_TILEKERNELINFO_TD
