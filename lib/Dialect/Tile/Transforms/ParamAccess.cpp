//===- ParamAccess.cpp - what a kernel does to its tensor params ----------===//

#include "tile/Dialect/Tile/Transforms/ParamAccess.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::tile;

ParamAccess mlir::tile::computeParamAccess(Value memref) {
  bool read = false, written = false;
  SmallVector<Value> worklist{memref};
  llvm::SmallPtrSet<Value, 8> seen{memref};
  auto follow = [&](Value v) {
    if (isa<BaseMemRefType>(v.getType()) && seen.insert(v).second)
      worklist.push_back(v);
  };
  while (!worklist.empty() && !(read && written)) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      auto effects = dyn_cast<MemoryEffectOpInterface>(user);
      // Unknown effects, a region op or terminator handing the memref on
      // (block arguments, region results), or the address leaving the
      // memref world: assume the worst.
      if (!effects || user->hasTrait<OpTrait::IsTerminator>() ||
          isa<memref::ExtractAlignedPointerAsIndexOp>(user)) {
        read = written = true;
        break;
      }
      SmallVector<MemoryEffects::EffectInstance> instances;
      effects.getEffects(instances);
      // A memory op that names the values it touches but not ours uses the
      // memref as plain data (memref.store of the memref into a buffer of
      // memrefs): it escapes.
      if (llvm::any_of(instances, [](const auto &e) { return e.getValue(); }) &&
          llvm::none_of(instances,
                        [&](const auto &e) { return e.getValue() == v; })) {
        read = written = true;
        break;
      }
      for (const MemoryEffects::EffectInstance &e : instances) {
        // An effect on another operand is not ours; one on no particular
        // value (on a whole resource) may be.
        if (e.getValue() && e.getValue() != v)
          continue;
        if (!e.getValue() &&
            e.getResource() != SideEffects::DefaultResource::get())
          continue;
        if (isa<MemoryEffects::Write, MemoryEffects::Free>(e.getEffect()))
          written = true;
        else if (isa<MemoryEffects::Read>(e.getEffect()))
          read = true;
      }
      // A memref result may alias the operand (subview, cast, ...).
      for (Value result : user->getResults())
        follow(result);
    }
  }
  if (written)
    return read ? ParamAccess::readwrite : ParamAccess::write;
  return ParamAccess::read;
}
