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

def ConvertTileToNVGPU : Pass<"convert-tile-to-nvgpu", "::mlir::ModuleOp"> {
  let summary = "Lower a tile kernel's launch to a gpu.func over gpu/nvgpu ops";
  let description = [{
    Outlines the kernel's single tile.launch into `gpu.module @NAME_module {
    gpu.func @NAME_kernel(params) kernel }` (known_block_size = threads),
    with the block indices from gpu.block_id (rasterized like the CPU path)
    and the prelude values the body uses recomputed in the kernel. The kernel
    function itself is removed (the host side is the native wrapper).
    On-chip buffers: shared -> views of dynamic shared memory (swizzled);
    fragments -> per-thread register arrays indexed by the layout's register
    slot (run tile-infer-layouts first); local -> per-thread arrays. Every
    collective op becomes the code one thread runs (see docs/pipelines.md
    for the fast paths: mma.sync + ldmatrix gemm, cp.async copies, warp
    shuffle reductions, register-local parallel bodies; and the general
    paths through shared memory). Updates the metadata's `shared_bytes` to
    the dynamic shared memory the kernel really uses (buffers + scratch).
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_80\"",
           "Target GPU (sm_80, sm_90a, ...): selects the instructions used">,
    Option<"remarks", "remarks", "bool", "false",
           "Emit a remark naming every op that takes a slow general path "
           "(a tile.gemm lowered to SIMT FMAs, a global<->fragment tile.copy "
           "with scalar accesses, a tile.reduce reduced serially or with "
           "its partials in local memory) and the reason">,
    Option<"warpSpecialize", "warp-specialize", "bool", "true",
           "sm_90a: also build NAME_kernel_ws, the warp-specialized form of "
           "a kernel with software-pipelined tile.pipelined loops (a "
           "producer warpgroup issues their copies through mbarrier "
           "stages), recorded as a kernel variant">,
    Option<"wsPingPong", "ws-pingpong", "bool", "true",
           "In the warp-specialized variant of a 256-thread kernel whose "
           "loop's last wgmma gemm is rotated into the next iteration, the "
           "two consumer warpgroups take turns at issuing the loop's gemms "
           "(named barriers), so that one's softmax overlaps the other's "
           "tensor-core work">,
    Option<"wsTma", "ws-tma", "bool", "true",
           "sm_90a: also build NAME_kernel_ws_tma, the warp-specialized form "
           "whose producer is one thread issuing TMA loads (one tensor map "
           "per pipelined copy, extra parameters), when every pipelined copy "
           "can be one; the runtime tries it before NAME_kernel_ws">,
    Option<"wsPersistent", "ws-persistent", "bool", "true",
           "Make the TMA-producer variant persistent when its block holds "
           "a multiprocessor alone: min(#SMs, blocks) CTAs run the launch's "
           "blocks in the order the producer thread claims them (an 8-byte "
           "workspace), loading the next block's tiles during this one's "
           "last iterations and epilogue">,
    Option<"wsDoubleHeads", "ws-double-heads", "bool", "true",
           "In the persistent TMA form, give each head copy (a tile loaded "
           "once per block before its pipelined loop, e.g. "
           "FlashAttention's Q) two shared buffers when they fit, so that "
           "the next block's tile and first pipeline stages load while "
           "this block's loop still reads its own">,
    Option<"sharedMemoryChip", "shared-memory-chip", "std::string", "\"\"",
           "The chip whose shared memory limit the kernels are checked "
           "against (empty: chip): the CUDA C++ lowering of an sm_90a "
           "kernel is sm_80 code that NVRTC compiles for the device">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
    "::mlir::memref::MemRefDialect", "::mlir::math::MathDialect",
    "::mlir::gpu::GPUDialect", "::mlir::nvgpu::NVGPUDialect",
    "::mlir::vector::VectorDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect"
  ];
}

def TileNVVMExpandArith : Pass<"tile-nvvm-expand-arith"> {
  let summary = "Expand the arith ops NVPTX has no instruction for";
  let description = [{
    Rewrites `arith.ceildivsi`, `arith.ceildivui`, `arith.floordivsi` and
    the scaling `arith.scaling_extf` / `arith.scaling_truncf` into plain
    arith ops, which `convert-arith-to-llvm` cannot convert directly.
    Unlike upstream `arith-expand`, the float minimum/maximum ops stay:
    NVPTX implements `llvm.maximum` / `llvm.minimum` as one `max.NaN` /
    `min.NaN` instruction (sm_80+, PTX 7.0+), where the expansion costs a
    compare, a NaN test and two selects per element (a 64-element row
    maximum of a FlashAttention score tile: 256 instructions instead of
    64). `math.trunc`, which neither convert-math-to-llvm nor the libdevice
    patterns of convert-gpu-to-nvvm lower, becomes `llvm.intr.trunc`
    (`cvt.rzi`).

    Example:
    ```mlir
    %q = arith.ceildivui %n, %c64 : index
    %m = arith.maximumf %a, %b : f32
    %t = math.trunc %x : f32
    // becomes
    // %q = arith.select(%n == 0, 0, (%n - 1) / 64 + 1)  (several ops)
    // %m = arith.maximumf %a, %b : f32                    (unchanged)
    // %t = llvm.intr.trunc(%x) : (f32) -> f32
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def TileNVVMFtzExp2 : Pass<"tile-nvvm-ftz-exp2"> {
  let summary = "Lower f32 math.exp2 in GPU kernels to ex2.approx.ftz.f32";
  let description = [{
    Replaces every `math.exp2` on f32 inside a `gpu.module` by the NVVM
    intrinsic `llvm.nvvm.ex2.approx.ftz` (PTX `ex2.approx.ftz.f32`, one
    `MUFU.EX2`), the instruction Triton's `tl.exp2` and `exp2f` under nvcc
    `--use_fast_math` compile to. Without it, libdevice's `__nv_exp2f` gives
    `ex2.approx.f32` (the same approximation, at most 2 ulp), which ptxas
    wraps in a compare and two predicated multiplies per call to keep
    subnormal inputs and results. With FTZ, a subnormal input reads as 0
    (2^x = 1 either way in f32) and a result below 2^-126 (x < -126) is 0
    instead of a subnormal: an absolute difference below 1.2e-38. The
    `tile-to-nvvm` pipeline runs it.

    Example:
    ```mlir
    %e = math.exp2 %x : f32
    // becomes
    %e = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz"(%x) : (f32) -> f32
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def TileNVVMFastDiv : Pass<"tile-nvvm-fast-div"> {
  let summary = "Lower f32 arith.divf in GPU kernels to div.full.f32";
  let description = [{
    Replaces every f32 `arith.divf` (and 1-D vectors of f32, element by
    element) inside a `gpu.module` by the NVVM intrinsic
    `llvm.nvvm.div.full` (PTX `div.full.f32`: at most 2 ulp from the
    correctly rounded quotient, over the full range of both operands), the
    division `nvcc --prec-div=false` and Triton's f32 `/` compile to.
    Without it the NVPTX backend emits the IEEE `div.rn.f32` (`rcp.rn.f32`
    for `1 / x`), which ptxas expands into a Newton iteration, range checks
    and a slow-path call per division: in a GEMM epilogue computing SiLU
    that cost a third of the kernel's time on the H200. The `tile-to-nvvm`
    pipeline runs it unless its option `precise-div` is given (`tilec
    --precise-div`); other element types keep `arith.divf`.

    Example:
    ```mlir
    %q = arith.divf %a, %b : f32
    // becomes
    %q = llvm.call_intrinsic "llvm.nvvm.div.full"(%a, %b) : (f32, f32) -> f32
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::vector::VectorDialect"];
}

def TileFPContract : Pass<"tile-fp-contract"> {
  let summary = "Allow floating-point contraction in GPU kernels";
  let description = [{
    Adds `contract` to the fast-math flags of every float arith op inside
    `gpu.module`s, so that LLVM fuses a multiply feeding an add or
    subtract into one fused multiply-add (`fma.rn.f32`) and the NVPTX
    backend emits plain `mul`/`add` (which ptxas may fuse) instead of the
    `.rn` forms that forbid it. This is the default of nvcc (`--fmad=true`),
    Triton (`enable_fp_fusion`) and hipcc; the fused result is rounded once,
    so it is never less accurate than the separate operations, but it may
    differ from a CPU run in the last bits. The `tile-to-nvvm` pipeline runs
    it unless its option `fp-contract=false` is given (`tilec
    --fp-fusion=false`).

    Example:
    ```mlir
    %y = arith.mulf %a, %b : f32
    // becomes
    %y = arith.mulf %a, %b fastmath<contract> : f32
    ```
  }];
}

def TileROCDLPrivateAllocas : Pass<"tile-rocdl-private-allocas", "::mlir::gpu::GPUFuncOp"> {
  let summary = "Put a gpu.func's per-thread arrays in AMDGPU private memory, in the entry block";
  let description = [{
    The per-thread lowering keeps fragments and local buffers in
    `memref.alloca`s of the default memory space, some inside loops. The
    AMDGPU backend only selects static allocas of the private address space
    (5): a flat (0) alloca fails instruction selection and an alloca outside
    the entry block is a dynamic stack allocation, which it does not
    support. This pass moves every static-shaped `memref.alloca` of the
    function to the start of its entry block (its contents are undefined at
    creation, so one allocation per thread serves every iteration), gives it
    `#gpu.address_space<private>` and casts it back to the original type
    with `memref.memory_space_cast` (LLVM's InferAddressSpaces turns the flat
    accesses back into private ones; SROA then keeps small arrays in
    registers). A dynamically sized alloca is an error naming it.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::gpu::GPUDialect"];
}

def ConvertTileToAMDGPU : Pass<"convert-tile-to-amdgpu", "::mlir::ModuleOp"> {
  let summary = "Lower a tile kernel's launch to a gpu.func over gpu/amdgpu ops (AMD CDNA)";
  let description = [{
    convert-tile-to-nvgpu's outlining and per-thread lowering
    (lib/Conversion/TileToNVGPU/Lowering.h) for AMD's wave64 GPUs
    (gfx90a, gfx942): lanes and waves of 64, warp reductions as gpu.shuffle
    over 64 lanes (ds_bpermute / DPP after convert-gpu-to-rocdl), and
    tile.gemm on f16/bf16 with an f32 accumulator in the MFMA layout
    (tile-infer-layouts{matrix-core=mfma}) as amdgpu.mfma 16x16x16 with A
    and B read from LDS (8-byte ds_read per lane from the swizzled
    buffers). No cp.async: global->LDS copies are vector loads through
    registers. Other gemms are SIMT FMAs (a remark with `remarks`).
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"gfx942\"",
           "Target GPU (gfx90a, gfx942)">,
    Option<"remarks", "remarks", "bool", "false",
           "Emit a remark naming every op that takes a slow general path "
           "(a tile.gemm lowered to SIMT FMAs) and the reason">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
    "::mlir::memref::MemRefDialect", "::mlir::math::MathDialect",
    "::mlir::gpu::GPUDialect", "::mlir::amdgpu::AMDGPUDialect",
    "::mlir::vector::VectorDialect", "::mlir::LLVM::LLVMDialect"
  ];
}


//===----------------------------------------------------------------------===//
// Hopper (sm_90a): warp specialization, TMA + mbarrier + wgmma GEMM kernels
//===----------------------------------------------------------------------===//

def TileWarpSpecialize : Pass<"tile-warp-specialize", "::mlir::ModuleOp"> {
  let summary = "Decide the producer/consumer warpgroup split of pipelined GEMM loops (sm_90a)";
  let description = [{
    Analysis on tile IR: a `tile.pipelined` loop (lb 0, step 1, trip count
    ceildiv(K, kt)) whose body is index arithmetic, global->shared
    `tile.copy`s of the A (m, k*kt) and B (k*kt, n) tiles and one `tile.gemm`
    of exactly those shared buffers into a fragment accumulator, is tagged
    `sm90.warp_specialize = {...}`: producer warpgroups (TMA issue), consumer
    warpgroups (wgmma, 64 accumulator rows each), setmaxnreg register counts,
    the K tile (64: one 128-byte swizzle row of f16/bf16), pipeline stages
    and the thread count. Loops that do not match are left untagged (they
    keep the sm_80 lowering). Runs only when `chip` is sm_90a.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_90a\"", "Target GPU">,
    Option<"remarks", "remarks", "bool", "false",
           "Emit a remark saying why a pipelined loop is not specialized">,
    Option<"persistent", "persistent", "std::string", "\"auto\"",
           "Persistent kernels (one CTA per SM looping over the output "
           "tiles, variant metadata grid = \"sms\"): auto (for the "
           "measured-faster 128x128 tile, and 128x256 tiles with a 16-bit "
           "C), true, false">,
    Option<"schedule", "schedule", "std::string", "\"auto\"",
           "Consumer schedule: cooperative (the consumer warpgroups share "
           "each tile, 64 rows each), pingpong (persistent; two consumer "
           "warpgroups own alternate TMx(<=16384/TM) units and overlap one's "
           "epilogue with the other's mainloop, ordered by named barriers) "
           "or auto (cooperative)">,
    Option<"epilogue", "epilogue", "std::string", "\"auto\"",
           "Epilogue: auto (persistent cooperative kernels with a 16-bit C "
           "and no elementwise epilogue store 64-column chunks through two "
           "128B-swizzled staging buffers per consumer warpgroup with "
           "cp.async.bulk.tensor, a third, optional tensor map; otherwise "
           "stores from registers when persistent, else through an f32 "
           "staging tile), tma (as auto, and persistent unless "
           "persistent=false) or registers (never the TMA stores)">
  ];
}

def ConvertTileGemmToSM90 : Pass<"convert-tile-gemm-to-sm90", "::mlir::ModuleOp"> {
  let summary = "Emit a TMA/mbarrier/wgmma warp-specialized kernel variant for tagged GEMM kernels";
  let description = [{
    For every kernel whose launch is `allocs; clear C; tagged tile.pipelined;
    copy C out` (see tile-warp-specialize), builds a second kernel
    `gpu.func @NAME_kernel_sm90` in `gpu.module @NAME_sm90_module` (moved
    into NAME_module by `tile-sm90-merge-modules` after convert-tile-to-nvgpu):
    producer warpgroup issuing nvgpu.tma.async.load into 128B-swizzled
    stage buffers with mbarrier.arrive.expect_tx, consumer warpgroups
    waiting with mbarrier.try_wait.parity and running nvgpu.warpgroup.mma,
    releasing stages through "empty" mbarriers; epilogue through shared
    memory with bounds-checked stores. The tensor maps are trailing kernel
    params (pointers to CUtensorMap in device memory). Records the variant
    in the metadata's `variants` (docs/bundle.md). The original kernel is
    untouched (it is the fallback when TMA cannot be used).
  }];
  let options = [
    Option<"remarks", "remarks", "bool", "false",
           "Emit a remark saying why a specialized GEMM gets no wide-tile or "
           "narrow-row variant">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
    "::mlir::memref::MemRefDialect", "::mlir::gpu::GPUDialect",
    "::mlir::nvgpu::NVGPUDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::vector::VectorDialect", "::mlir::LLVM::LLVMDialect"
  ];
}

def TileSM90MergeModules : Pass<"tile-sm90-merge-modules", "::mlir::ModuleOp"> {
  let summary = "Move the sm90 kernel variants into their kernel's gpu.module";
  let description = [{
    Moves the functions (and globals) of `gpu.module @NAME_sm90_module` into
    `gpu.module @NAME_module`, so that one cubin holds both kernels.
  }];
}

//===----------------------------------------------------------------------===//
// Source targets: CUDA C++ for NVRTC through EmitC
//===----------------------------------------------------------------------===//

def ConvertGPUToEmitC : Pass<"convert-gpu-to-emitc", "::mlir::ModuleOp"> {
  let summary = "Convert a lowered gpu.module kernel to EmitC for a C++ source target";
  let description = [{
    Runs on the output of convert-tile-to-nvgpu (gpu.func over gpu, nvgpu,
    nvvm, memref, vector, scf, arith and math) and replaces each gpu.module
    by EmitC at the top of the module, ready for `mlir::emitc::translateToCpp`:
    the kernel is an `emitc.func` with the target's kernel specifiers
    (CUDA: `extern "C" __global__ __launch_bounds__(threads)`) taking the
    kernel ABI of docs/bundle.md (per memref: allocated, aligned, offset,
    sizes, strides), rebuilt into `tile::memref<T, R>` values at entry.
    arith and scf go through the upstream ArithToEmitC and SCFToEmitC
    patterns; everything else (indices, barriers, shuffles, shared memory,
    memref access, vectors, cp.async, ldmatrix, mma.sync, atomics, the arith
    and math ops C++ has no operator for, 16-bit floats) becomes calls into
    the target's device header library (include/tile/device/<target>), one
    name per operation: the target's intrinsic table. An op without an
    entry is an error naming it.
  }];
  let options = [
    Option<"target", "target", "std::string", "\"cuda\"",
           "Source target whose kernel qualifiers and device library to use "
           "(cuda, metal)">
  ];
  let dependentDialects = ["::mlir::emitc::EmitCDialect"];
}


//===----------------------------------------------------------------------===//
// Metal Shading Language (the metal target, TileToMetalSource)
//===----------------------------------------------------------------------===//

def TilePrepareMetalKernel : Pass<"tile-prepare-metal-kernel", "::mlir::ModuleOp"> {
  let summary = "Check a lowered gpu.func against Metal's rules and give its "
                "per-thread arrays the private address space";
  let description = [{
    Runs on the output of convert-tile-to-nvgpu, before
    convert-gpu-to-emitc{target=metal}. MSL has no generic pointer: every
    memref's element type is spelled with its address space, so the
    per-thread arrays (memref.alloca) and every memref derived from them
    (reinterpret_cast, extract_strided_metadata's base buffer, ...) get
    `#gpu.address_space<private>` (MSL `thread`); kernel parameters are
    `device` and the dynamic shared memory's views `threadgroup`. Rejects,
    naming the op, what Metal cannot run: 64-bit floats (MSL has no
    double), atomics other than on 32-bit int and f32, a per-thread array
    flowing through control flow.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def TileMetalThreadContext : Pass<"tile-metal-thread-context", "::mlir::ModuleOp"> {
  let summary = "Give an EmitC kernel body the tile::thread_context of MSL";
  let description = [{
    Runs after convert-gpu-to-emitc{target=metal}. MSL has no global
    thread-position built-ins (threadIdx, blockIdx): the `kernel void`
    entry receives them as attributed parameters (printMetalSource writes
    it) and hands them, with the threadgroup memory and the SIMD lane, to
    the kernel body as one `tile::thread_context`. This pass renames each
    kernel `NAME` to `NAME_body`, appends that parameter, and passes it to
    the device library calls that read it (indices, dynamic shared memory,
    SIMD-group shuffles, ldmatrix, mma.sync).
  }];
  let dependentDialects = ["::mlir::emitc::EmitCDialect"];
}


def TileMetalSingleStage : Pass<"tile-metal-single-stage", "::mlir::ModuleOp"> {
  let summary = "Run every tile.pipelined loop with one stage on Metal";
  let description = [{
    A multi-stage tile.pipelined loop multi-buffers its shared buffers so
    that cp.async copies of later iterations overlap the compute of the
    current one. Metal has no asynchronous global-to-threadgroup copy for
    compute kernels (the device library copies at once), so the stages
    would cost threadgroup memory (32 KiB on Apple GPUs) and buy nothing:
    this pass sets `stages` to 1, emitting a remark per loop when asked.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", "false",
           "Emit a remark on every loop whose stages are dropped">
  ];
}

#endif // TILE_CONVERSION_PASSES_TD
