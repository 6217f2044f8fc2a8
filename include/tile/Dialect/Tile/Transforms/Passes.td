//===- Passes.td - tile dialect transformation passes ------*- tablegen -*-===//

#ifndef TILE_DIALECT_TILE_TRANSFORMS_PASSES_TD
#define TILE_DIALECT_TILE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TileAttachMetadata : Pass<"tile-attach-metadata", "::mlir::ModuleOp"> {
  let summary = "Extract the kernel's runtime metadata and attach it as JSON";
  let description = [{
    Finds the module's single `tile.kernel` function and stores its metadata
    (parameters, symbols, outputs, grid expressions, block size, shared-memory
    bytes, target; see docs/bundle.md) as a JSON string in the module
    attribute `tile.metadata`. Later passes generate host entry points from
    it and `tilec` writes it into the bundle. Fails with a precise error when
    a grid extent cannot be computed on the host from the arguments.
  }];
  let options = [
    Option<"target", "target", "std::string", "\"cpu\"",
           "Target kind recorded in the metadata (cpu, cuda, hip, metal)">,
    Option<"chip", "chip", "std::string", "\"\"", "Target chip">,
    Option<"features", "features", "std::string", "\"\"", "Target features">
  ];
  let dependentDialects = ["::mlir::tile::TileDialect"];
}

#endif // TILE_DIALECT_TILE_TRANSFORMS_PASSES_TD
