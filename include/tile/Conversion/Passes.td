//===- Passes.td - tile conversion passes ------------------*- tablegen -*-===//

#ifndef TILE_CONVERSION_PASSES_TD
#define TILE_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTileToSCF : Pass<"convert-tile-to-scf"> {
  let summary = "Lower collective tile ops to whole-tile scf loops";
  let description = [{
    Gives every collective op (copy, gemm, fill, clear, reduce, parallel,
    pipelined, atomic, atomic_tile) its reference semantics as serial loops
    over the whole tile: the threads of a block are not simulated one by one.
    Out-of-bounds global reads of a copy produce zero and out-of-bounds
    writes are dropped; gemm accumulates in the accumulator's type (f16
    accumulators add in f32 and round per step); a pipelined loop becomes the
    serial loop it stands for; atomics become memref.atomic_rmw because the
    blocks of a grid may run on several host threads. tile.launch and
    tile.alloc are left for the launch lowering.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
    "::mlir::memref::MemRefDialect", "::mlir::math::MathDialect"
  ];
}

def ConvertTileLaunchToCPU : Pass<"convert-tile-launch-to-cpu", "::mlir::ModuleOp"> {
  let summary = "Outline a kernel's launch into a per-block host function";
  let description = [{
    Turns the `tile.kernel` function into `NAME__tile_block(args..., bx, by,
    bz, gx, gy, gz)`, which runs one block: the launch body, preceded by
    clones of the pure computations it uses from outside the launch and by
    the block rasterization remap. On-chip buffers become stack allocations
    and lose their `#tile.scope` memory space. The function gets a C
    interface so that the generated entry points can call it with memref
    descriptors. Run after convert-tile-to-scf.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def TileCPUEntryPoints : Pass<"tile-cpu-entry-points", "::mlir::ModuleOp"> {
  let summary = "Generate the host entry points of a CPU kernel (LLVM dialect)";
  let description = [{
    From the attached metadata, generates in the LLVM dialect:
    `NAME__tile_blocks(args, begin, end, gx, gy, gz)`, the block-range entry
    of the CPU kernel ABI, and `NAME__tile_native(tensors, scalars, env)`,
    the native backend's host wrapper: straight-line checks of every
    DLTensor argument in the documented order (docs/bundle.md), symbol
    binding, allocation of omitted outputs through the runtime, grid
    computation and the launch through the runtime's `run` callback. Run
    after the block function has been lowered to the LLVM dialect.
  }];
  let options = [
    Option<"nativeWrapper", "native-wrapper", "bool", "true",
           "Generate the native backend's wrapper (else only the ffi entry)">
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // TILE_CONVERSION_PASSES_TD
