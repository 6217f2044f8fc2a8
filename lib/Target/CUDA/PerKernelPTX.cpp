//===- PerKernelPTX.cpp - device code, one LLVM module per kernel ---------===//
//
// See PerKernelPTX.h. Each part is cloned, translated to LLVM IR, optimized
// and printed as PTX on a thread of the MLIRContext's pool, in its own
// llvm::LLVMContext (MLIR's NVVM serializer makes one per call); the
// biggest kernels start first, so that two threads finish close together.
//
//===----------------------------------------------------------------------===//

#include "tile/Target/CUDA/PerKernelPTX.h"
#include "tile/Target/CUDA/PTXMerge.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Threading.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

#include <numeric>

using namespace mlir;

namespace {

/// The keep-alive helpers' names (PerKernelPTX.h); the lowering never makes
/// a symbol with this prefix.
constexpr StringLiteral kKeepAlivePrefix = "__tile_keep_shared_";
/// NVPTX's shared-memory address space.
constexpr unsigned kSharedAddressSpace = 3;

bool isKernel(LLVM::LLVMFuncOp fn) {
  return !fn.isExternal() &&
         (fn->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName()) ||
          fn.getCConv() == LLVM::cconv::CConv::PTX_Kernel);
}

/// The module-local shared-memory variables more than one function uses:
/// NVPTX keeps these at module scope (and demotes the others).
llvm::StringSet<> sharedVariablesOfSeveralFunctions(gpu::GPUModuleOp module) {
  llvm::StringSet<> local, several;
  llvm::StringMap<Operation *> user;
  for (auto global : module.getOps<LLVM::GlobalOp>())
    if (global.getAddrSpace() == kSharedAddressSpace &&
        (global.getLinkage() == LLVM::Linkage::Internal ||
         global.getLinkage() == LLVM::Linkage::Private))
      local.insert(global.getSymName());
  for (auto fn : module.getOps<LLVM::LLVMFuncOp>())
    fn.walk([&](LLVM::AddressOfOp addressOf) {
      StringRef name = addressOf.getGlobalName();
      if (!local.contains(name))
        return;
      auto [it, inserted] = user.try_emplace(name, fn);
      if (!inserted && it->second != fn.getOperation())
        several.insert(name);
    });
  return several;
}

/// Adds, for each variable of `keep` the module still has, an internal
/// function that returns its address: a second user, so that NVPTX's printer
/// does not demote it into the kernel (what the whole module does).
void addKeepAliveUsers(llvm::Module &module, const llvm::StringSet<> &keep) {
  SmallVector<llvm::GlobalVariable *> variables;
  for (llvm::GlobalVariable &gv : module.globals())
    if (gv.hasLocalLinkage() && gv.getAddressSpace() == kSharedAddressSpace &&
        !gv.use_empty() && keep.contains(gv.getName()))
      variables.push_back(&gv);
  unsigned n = 0;
  for (llvm::GlobalVariable *gv : variables) {
    auto *type = llvm::FunctionType::get(gv->getType(), /*isVarArg=*/false);
    auto *fn = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage,
                                      kKeepAlivePrefix + Twine(n++), module);
    llvm::IRBuilder<> builder(
        llvm::BasicBlock::Create(module.getContext(), "", fn));
    builder.CreateRet(gv);
  }
}

/// A module holding `whole`'s copy with one kernel: the parent's attributes,
/// the gpu.module's attributes and every op of its body but the other
/// kernels.
OwningOpRef<ModuleOp>
clonePart(gpu::GPUModuleOp whole, Operation *kernel,
          const llvm::SmallPtrSetImpl<Operation *> &kernels) {
  OwningOpRef<ModuleOp> holder = ModuleOp::create(whole.getLoc());
  if (Operation *parent = whole->getParentOp())
    (*holder)->setAttrs(parent->getAttrDictionary());
  OpBuilder builder = OpBuilder::atBlockEnd(holder->getBody());
  Operation *part = builder.insert(whole->cloneWithoutRegions());
  builder.setInsertionPointToEnd(&part->getRegion(0).emplaceBlock());
  for (Operation &op : whole.getBodyRegion().front())
    if (&op == kernel || !kernels.contains(&op))
      builder.clone(op);
  return holder;
}

} // namespace

FailureOr<std::optional<std::string>>
mlir::tile::cuda::generatePerKernelPTX(gpu::GPUModuleOp module,
                                       StringRef toolkitRoot, bool remarks,
                                       TimingScope &timing) {
  ArrayAttr targets = module.getTargetsAttr();
  if (!targets || targets.size() != 1)
    return std::optional<std::string>();
  auto target = dyn_cast<gpu::TargetAttrInterface>(targets[0]);
  SmallVector<LLVM::LLVMFuncOp> kernels;
  llvm::SmallPtrSet<Operation *, 8> kernelSet;
  for (auto fn : module.getOps<LLVM::LLVMFuncOp>())
    if (isKernel(fn)) {
      kernels.push_back(fn);
      kernelSet.insert(fn);
    }
  if (!target || kernels.size() < 2)
    return std::optional<std::string>();

  llvm::StringSet<> keep = sharedVariablesOfSeveralFunctions(module);
  // The biggest kernels first: the threads take the next kernel as they
  // finish one.
  SmallVector<size_t> sizes, order(kernels.size());
  for (LLVM::LLVMFuncOp fn : kernels) {
    size_t ops = 0;
    fn.walk([&](Operation *) { ++ops; });
    sizes.push_back(ops);
  }
  std::iota(order.begin(), order.end(), 0);
  llvm::sort(order, [&](size_t a, size_t b) {
    return sizes[a] != sizes[b] ? sizes[a] > sizes[b] : a < b;
  });

  std::vector<std::string> parts(kernels.size());
  auto generate = [&](size_t k) -> LogicalResult {
    TimingScope kernelTiming =
        timing.nest(std::string("kernel ") + kernels[k].getSymName().str());
    OwningOpRef<ModuleOp> holder = clonePart(module, kernels[k], kernelSet);
    auto part = *holder->getOps<gpu::GPUModuleOp>().begin();
    auto onOptimized = [&](llvm::Module &m) { addKeepAliveUsers(m, keep); };
    gpu::TargetOptions options(
        toolkitRoot, /*librariesToLink=*/{}, /*cmdOptions=*/"",
        /*elfSection=*/"", gpu::CompilationTarget::Assembly,
        /*getSymbolTableCallback=*/{}, /*initialLlvmIRCallback=*/{},
        /*linkedLlvmIRCallback=*/{}, onOptimized);
    std::optional<SmallVector<char, 0>> ptx =
        target.serializeToObject(part, options);
    if (!ptx)
      return failure();
    parts[k].assign(ptx->begin(), ptx->end());
    return success();
  };
  if (failed(failableParallelForEach(module.getContext(), order, generate)))
    return failure();

  TimingScope mergeTiming = timing.nest("merge PTX");
  std::string why;
  FailureOr<std::string> merged = mergePTXModules(parts, kKeepAlivePrefix, why);
  if (failed(merged)) {
    if (remarks)
      module.emitRemark()
          << "the device code is generated as one LLVM module, on one "
             "thread, not one module per kernel: "
          << why;
    return std::optional<std::string>();
  }
  return std::optional<std::string>(std::move(*merged));
}
