//===- Passes.td - tile dialect transformation passes ------*- tablegen -*-===//

#ifndef TILE_DIALECT_TILE_TRANSFORMS_PASSES_TD
#define TILE_DIALECT_TILE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TileAttachMetadata : Pass<"tile-attach-metadata", "::mlir::ModuleOp"> {
  let summary = "Describe the kernel for the runtime as a #tile.kernel_info";
  let description = [{
    Finds the module's single `tile.kernel` function and stores its
    description (parameters with the access each tensor gets, symbols,
    outputs, grid expressions, block size, shared-memory bytes, target; see
    docs/bundle.md) as a `#tile.kernel_info` in the module attribute
    `tile.kernel_info`. Later passes update it (shared bytes, variants) and
    generate host entry points from it; `tilec` writes it into the bundle as
    JSON. A tensor parameter's access is `read` only when no op can write
    its memory (seen through views and casts; calls and other opaque uses
    count as writes). Fails with a precise error when a grid extent cannot
    be computed on the host from the arguments, or a parameter cannot be
    described (unsupported type, duplicate name, `tile.inplace` on a
    parameter the kernel never writes).
  }];
  let options = [
    Option<"target", "target", "std::string", "\"cpu\"",
           "Target kind recorded in the metadata (cpu, cuda, hip, metal)">,
    Option<"chip", "chip", "std::string", "\"\"", "Target chip">,
    Option<"features", "features", "std::string", "\"\"", "Target features">
  ];
  let dependentDialects = ["::mlir::tile::TileDialect"];
}

def TileInferLayouts : Pass<"tile-infer-layouts", "::mlir::ModuleOp"> {
  let summary = "Choose a #tile.fragment for every fragment and a #tile.swizzle for shared buffers";
  let description = [{
    Gives every `tile.alloc` of a fragment without a layout a
    `#tile.fragment` with an inverse map (thread, register) -> index:
    * gemm accumulators: the mma.sync m16n8k16 accumulator layout, the block's
      warps tiling C (wm x wn warps, each an (M/wm) x (N/wn) warp tile of
      16x8 MMA tiles, 4 registers per MMA tile);
    * fragments tied to a laid-out fragment by a tile.parallel or a copy of
      the same shape: that layout;
    * reduction targets (when small, at most 256 elements): replicated in
      every thread (register r holds element r);
    * fragments copied from or to global memory (not gemm operands) whose
      rows are whole 16-byte chunks and whose chunk count is a multiple of
      T: the linear layout over 16-byte chunks (chunk c in thread c mod T,
      its V elements in registers V * (c floordiv T) + {0..V-1}), so the
      copies are 16-byte vector accesses;
    * everything else: the linear layout, element l (row-major) in thread
      l mod T, register l floordiv T (coalesced global accesses), or the
      replicated layout when the tile is not a multiple of the thread count.
    Layouts that do not match a use are legal: convert-tile-to-nvgpu then
    moves the data through shared memory. Shared buffers used as gemm
    operands get the XOR swizzle that makes ldmatrix conflict-free for their
    row pitch (16-byte chunks XORed with the row index modulo 8); rows longer
    than 128 bytes are stored as 128-byte column panels, each in the 128-byte
    swizzle (the canonical layout wgmma reads). Other shared buffers (used
    only by copies, clears, fills and tile.parallel loads/stores) get the
    XOR swizzle of 16-byte chunks that needs the fewest shared-memory
    wavefronts for the accesses the lowering emits, when that beats the
    row-major layout (a transpose's tile read down its columns).
    With `wgmma` (sm_90a), an accumulator with 16 rows per warp (M = 16 x
    warps) gets the warp tiling with one 16-row strip per warp, which is
    wgmma's accumulator layout, instead of the squarest warp tile.

    With `matrix-core=mfma` (AMD CDNA, wavefronts of 64 lanes) the
    accumulators get the MFMA 16x16x16 accumulator layout instead (lane
    l of a 16x16 tile holds column l % 16, rows 4 * (l / 16) + {0..3}) and
    gemm operands in LDS an XOR swizzle of 8-byte chunks that keeps the 16
    rows a wavefront reads per MFMA on distinct banks.
  }];
  let options = [
    Option<"wgmma", "wgmma", "bool", "false",
           "Prefer accumulator layouts wgmma can produce (sm_90a)">,
    Option<"matrixCore", "matrix-core", "std::string", "\"mma.sync\"",
           "Accumulator layouts for the target's matrix instructions: "
           "mma.sync (NVIDIA, warps of 32) or mfma (AMD CDNA, wave64)">
  ];
  let dependentDialects = ["::mlir::tile::TileDialect"];
}

def TileSpecializeUniformMasks
    : Pass<"tile-specialize-uniform-masks", "::mlir::ModuleOp"> {
  let summary = "A second copy of a masked tile.parallel for tiles where the mask is all true";
  let description = [{
    A `tile.parallel` inside a loop whose body selects (`arith.select`) on
    a predicate of its indices, such as the padding and causal mask
    TileLang-style attention kernels write into the score tile before
    every key tile's gemm, is wrapped in
    `scf.if %allTrue { copy with the predicate = true } else { original }`,
    with `%allTrue` computed before it: comparisons of affine functions of
    the indices (addi, subi, muli by constants, values from outside the
    parallel) evaluated at the corner of the extents worst for them,
    combined through andi / ori / xori-with-true. The interior tiles then
    run the unmasked body (the select folds away); the last and diagonal
    tiles run the original. Predicates it cannot bound are left alone, as
    are unsigned comparisons of differences (which could wrap).

    ```mlir
    tile.parallel (%i, %j) in [128, 128] {
      %kj = arith.addi %k0, %j : index
      %in = arith.cmpi slt, %kj, %S : index
      %v = arith.select %in, %zero, %ninf : f32
      memref.store %v, %acc[%i, %j] : memref<128x128xf32, #tile.scope<fragment>>
    }
    ```
    becomes `scf.if (k0 + 127 < S) { ... store %zero ... } else { ... }`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def TilePipelineFragmentCopies
    : Pass<"tile-pipeline-fragment-copies", "::mlir::ModuleOp"> {
  let summary = "Register multi-buffering of a tile.pipelined loop's global -> fragment copies";
  let description = [{
    For a `tile.pipelined` loop with `stages = S >= 2` whose body copies
    global memory into fragments (`tile.copy %X[...] to %frag`), issues the
    copy of iteration i + S - 1 before the ops of iteration i that follow
    the copy, into one of S fragments (the target and S - 1 new
    `tile.alloc`s next to it), so the loads of the next chunks are in
    flight while the current one is consumed. Fragments stay statically
    addressed (registers): the loop is unrolled S times, iteration
    g * S + k reading fragment k, as an `scf.for` over groups of S
    iterations with the look-ahead copies and the later iterations of a
    group guarded, so exactly the original iterations run, in order, for
    any trip count and dynamic bounds. S = 2 is double buffering, one
    iteration ahead; larger S holds S copies of each fragment in registers.

    A copy qualifies when its source is global memory, its target a
    fragment `tile.alloc` outside the loop that no other op writes and that
    is read only in the loop after the copy, and its source and indices are
    computed from loop invariants and the induction variable by ops without
    side effects; the loop must write no global memory (no op of the body
    with a write effect on a global memref or undeclared effects). Loops
    with global -> shared copies (the cp.async pipeline's producers), with
    explicit `stage` / `order` attributes or nested in another
    `tile.pipelined` are left unchanged. With `remarks`, each loop with
    S >= 2 and a global -> fragment copy that it leaves unchanged gets a
    remark saying why (loops without such copies are not its business).

    ```mlir
    tile.pipelined %t = %c0 to %n step %c1 stages(2) {
      %col = arith.muli %t, %c1024 : index
      tile.copy %X[%row, %col] to %x : memref<?x?xf32> to memref<4x1024xf32, #tile.scope<fragment>>
      tile.parallel (%i, %j) in [4, 1024] { ... %x ... }
    }
    ```
    becomes a prologue copy of iteration 0 into `%x` and a loop over pairs
    whose first half copies iteration 2g + 1 into `%x1` before adding `%x`,
    and whose second half (if 2g + 1 < n) copies iteration 2g + 2 into `%x`
    before adding `%x1`.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", "false",
           "Emit a remark for each loop with stages >= 2 whose global -> "
           "fragment copies are not multi-buffered">
  ];
  let dependentDialects = ["::mlir::tile::TileDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

#endif // TILE_DIALECT_TILE_TRANSFORMS_PASSES_TD
