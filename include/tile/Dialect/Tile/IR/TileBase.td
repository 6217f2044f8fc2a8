//===- TileBase.td - tile dialect, enums and attributes ----*- tablegen -*-===//
//
// The `tile` dialect: TileLang's block-level programming model in MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_DIALECT_TILE_IR_TILEBASE_TD
#define TILE_DIALECT_TILE_IR_TILEBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

def Tile_Dialect : Dialect {
  let name = "tile";
  let cppNamespace = "::mlir::tile";
  let summary = "Tile-level kernels: a grid of blocks over explicit on-chip buffers";
  let description = [{
    A kernel is a `func.func` marked `tile.kernel` whose arguments are global
    tensors (memrefs without a memory space, dynamic dims allowed) and
    scalars. Its body launches a grid of blocks with `tile.launch`; each block
    allocates shared, fragment and local buffers with `tile.alloc` and works on
    them with collective tile ops (`tile.copy`, `tile.gemm`, `tile.fill`,
    `tile.reduce`, `tile.parallel`, `tile.pipelined`, atomics).

    Kernel-level attributes:
    * `tile.kernel` (unit, on `func.func`): marks a kernel entry.
    * `tile.dims` (array of strings, on a memref argument): a symbolic name per
      dimension ("M", "K", ...); equal names bind equal extents across
      arguments. A static dim may be named too.
    * `tile.output` (unit, on a memref argument): the argument is an output
      that the runtime may allocate when the caller omits it (out_idx).
    * `tile.name` (string, on any argument): the parameter's name in the
      kernel's metadata and in the runtime's error messages (default
      `arg<i>`).
    * `tile.inplace` (unit, on a memref argument the kernel writes): the
      kernel stays correct when this argument is the very same memory as
      another tensor argument (e.g. an elementwise `x = x + y`), so the
      runtime accepts that aliasing; without it, a written argument that
      overlaps any other argument is refused (docs/runtime.md).
    * `tile.kernel_info` (a `#tile.kernel_info`, on the module): the
      kernel's description for the runtime, attached by
      `tile-attach-metadata`.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::func::FuncDialect"
  ];
  let extraClassDeclaration = [{
    static constexpr ::llvm::StringLiteral kKernelAttrName = "tile.kernel";
    static constexpr ::llvm::StringLiteral kDimsAttrName = "tile.dims";
    static constexpr ::llvm::StringLiteral kOutputAttrName = "tile.output";
    static constexpr ::llvm::StringLiteral kNameAttrName = "tile.name";
    static constexpr ::llvm::StringLiteral kInplaceAttrName = "tile.inplace";
    static constexpr ::llvm::StringLiteral kKernelInfoAttrName =
        "tile.kernel_info";
  }];
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Tile_MemoryScope : I32EnumAttr<"MemoryScope",
    "where an on-chip buffer lives", [
      I32EnumAttrCase<"shared", 1>,
      I32EnumAttrCase<"fragment", 2>,
      I32EnumAttrCase<"local", 3>
    ]> {
  let cppNamespace = "::mlir::tile";
  let genSpecializedAttr = 0;
}

def Tile_ReduceKind : I32EnumAttr<"ReduceKind", "reduction combiner", [
      I32EnumAttrCase<"sum", 0>,
      I32EnumAttrCase<"max", 1>,
      I32EnumAttrCase<"min", 2>,
      I32EnumAttrCase<"abssum", 3>,
      I32EnumAttrCase<"absmax", 4>
    ]> {
  let cppNamespace = "::mlir::tile";
  let genSpecializedAttr = 0;
}

def Tile_AtomicKind : I32EnumAttr<"AtomicKind", "atomic read-modify-write", [
      I32EnumAttrCase<"add", 0>,
      I32EnumAttrCase<"max", 1>,
      I32EnumAttrCase<"min", 2>
    ]> {
  let cppNamespace = "::mlir::tile";
  let genSpecializedAttr = 0;
}

def Tile_RasterOrder : I32EnumAttr<"RasterOrder", "block rasterization order", [
      I32EnumAttrCase<"row", 0>,
      I32EnumAttrCase<"column", 1>
    ]> {
  let cppNamespace = "::mlir::tile";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

class Tile_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Tile_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Tile_MemoryScopeAttr : EnumAttr<Tile_Dialect, Tile_MemoryScope, "scope"> {
  let summary = "memory scope of an on-chip buffer (used as memref memory space)";
  let description = [{
    `#tile.scope<shared>`: per block, visible to all its threads.
    `#tile.scope<fragment>`: a tile distributed over the registers of the
    block's threads; its layout (a `#tile.fragment`) is chosen by layout
    inference unless annotated. `#tile.scope<local>`: private to each thread.
    A memref without a memory space is a global tensor.
  }];
  let assemblyFormat = "`<` $value `>`";
}

def Tile_ReduceKindAttr : EnumAttr<Tile_Dialect, Tile_ReduceKind, "reduce_kind">;
def Tile_AtomicKindAttr : EnumAttr<Tile_Dialect, Tile_AtomicKind, "atomic_kind">;
def Tile_RasterOrderAttr : EnumAttr<Tile_Dialect, Tile_RasterOrder, "raster_order">;

def Tile_FragmentLayoutAttr : Tile_Attr<"FragmentLayout", "fragment"> {
  let summary = "mapping of a fragment's tile index to (thread, register)";
  let description = [{
    `thread` maps a tile index (d0, ..., dn) to the id of the thread that holds
    the element; `index` maps it to the element's register slot in that
    thread. `threads` is the number of threads the layout spreads over and
    `replicate` how many copies of each element exist (replicated layouts hold
    an element in several threads, e.g. a reduced row broadcast to a warp).
    Example, a 16x16 tile over 32 threads, 8 elements each:
    `#tile.fragment<thread = (i, j) -> ((i mod 8) * 4 + (j mod 8) floordiv 2),
                    index = (i, j) -> ((i floordiv 8) * 4 + (j floordiv 8) * 2 + j mod 2),
                    threads = 32>`

    The optional `inverse` map `(t, r) -> (d0, ..., dn)` gives, for thread `t`
    and register slot `r` in `[0, R)` (R = 1 + the largest slot), the tile
    index that the register holds; every thread then holds exactly R
    registers. Replicated elements appear under several `t`; `thread` names
    the canonical owner (the one that writes the element back). The verifier
    checks the inverse against `thread`/`index` by enumeration. Code
    generation for GPUs needs it; layout inference always provides it.
  }];
  let parameters = (ins "::mlir::AffineMap":$threadMap,
                        "::mlir::AffineMap":$indexMap,
                        "int64_t":$threads,
                        DefaultValuedParameter<"int64_t", "1">:$replicate,
                        OptionalParameter<"::mlir::AffineMap">:$inverse);
  // `<thread = map, index = map, threads = N (, replicate = R)?
  //  (, inverse = map)?>` (custom: the two optional groups share the comma).
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Checks that this layout covers `shape`: every element maps to a thread
    /// in [0, threads) and no two elements share a (thread, register) slot
    /// (beyond `replicate`). Emits through `emitError` and fails otherwise.
    ::llvm::LogicalResult verifyAgainstShape(
        ::llvm::ArrayRef<int64_t> shape,
        ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError) const;
    /// Registers per thread (1 + the largest slot over `shape`).
    int64_t getNumRegisters(::llvm::ArrayRef<int64_t> shape) const;
  }];
}

def Tile_SwizzleAttr : Tile_Attr<"Swizzle", "swizzle"> {
  let summary = "XOR swizzle of a shared-memory buffer's addresses";
  let description = [{
    CuTe-style swizzle `<bits, base, shift>` on element byte offsets: the
    `bits` bits starting at bit `base + shift` are XORed into the `bits` bits
    starting at bit `base`. `#tile.swizzle<bits = 3, base = 4, shift = 3>` is
    the 128-byte swizzle that TMA and wgmma use; `bits = 0` is no swizzle.

    `panel = P` (bytes, a power of two; 0 = none) stores a buffer whose rows
    (the last dim) are longer than P bytes as column panels: columns
    [k*P, (k+1)*P) of every row form panel k, the panels one after the
    other, each a row-major [rows x P bytes] array; the swizzle acts on the
    byte offset inside the panel. `#tile.swizzle<bits = 3, base = 4,
    shift = 3, panel = 128>` on a 64x128xf16 buffer is two 64x64 halves,
    each in the 128-byte swizzle: the canonical layout wgmma and TMA read
    for rows longer than 128 bytes (and conflict-free for ldmatrix).
  }];
  let parameters = (ins "int64_t":$bits, "int64_t":$base, "int64_t":$shift,
                        DefaultValuedParameter<"int64_t", "0">:$panel);
  let builders = [
    AttrBuilder<(ins "int64_t":$bits, "int64_t":$base, "int64_t":$shift), [{
      return $_get($_ctxt, bits, base, shift, 0);
    }]>
  ];
  let assemblyFormat = [{
    `<` `bits` `=` $bits `,` `base` `=` $base `,` `shift` `=` $shift
    (`,` `panel` `=` $panel^)? `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Applies the swizzle to a byte offset.
    int64_t apply(int64_t byteOffset) const;
  }];
}

def Tile_RasterizationAttr : Tile_Attr<"Rasterization", "raster"> {
  let summary = "block rasterization for L2 reuse (TileLang's T.use_swizzle)";
  let description = [{
    Remaps the linear block id so that consecutive blocks walk a panel of
    `panel` block rows (order = row) or block columns (order = column) of a
    2-D grid instead of whole grid rows, so that blocks running together
    share operand tiles in L2.
  }];
  let parameters = (ins "int64_t":$panel,
                        DefaultValuedParameter<"::mlir::tile::RasterOrder",
                          "::mlir::tile::RasterOrder::row">:$order);
  let assemblyFormat = "`<` `panel` `=` $panel (`,` `order` `=` $order^)? `>`";
  let genVerifyDecl = 1;
}

#endif // TILE_DIALECT_TILE_IR_TILEBASE_TD
