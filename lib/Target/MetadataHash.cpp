//===- MetadataHash.cpp - bake the metadata hash into a kernel's code -----===//

#include "tile/Target/MetadataHash.h"

#include "tile/Runtime/Bundle.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

LogicalResult mlir::tile::addMetadataHashGlobal(Operation *symbolTable,
                                                StringRef kernelName,
                                                StringRef metadataJSON,
                                                unsigned addressSpace) {
  std::string name =
      (kernelName + ::tile::bundle::kMetadataHashSuffix).str();
  if (SymbolTable::lookupSymbolIn(symbolTable, name))
    return symbolTable->emitError("'")
           << name << "' is already defined: it is reserved for the "
           << "metadata hash the compiler adds";
  MLIRContext *ctx = symbolTable->getContext();
  OpBuilder b = OpBuilder::atBlockEnd(&symbolTable->getRegion(0).front());
  Type i64 = IntegerType::get(ctx, 64);
  uint64_t hash = ::tile::bundle::metadataHash(
      std::string_view(metadataJSON.data(), metadataJSON.size()));
  // External linkage and default visibility: the linker keeps it in
  // host.so's dynamic symbol table (--gc-sections keeps exported symbols),
  // ptxas keeps a .visible .global.
  LLVM::GlobalOp::create(b, symbolTable->getLoc(), i64, /*isConstant=*/true,
                         LLVM::Linkage::External, name,
                         b.getIntegerAttr(i64, APInt(64, hash)),
                         /*alignment=*/8, addressSpace);
  return success();
}
