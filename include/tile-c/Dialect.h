/*===- tile-c/Dialect.h - C API for the tile dialect --------------*- C -*-===*\
|*                                                                            *|
|* Registers the tile dialect and its passes from C (and from any language    *|
|* with a C FFI). Link against TileCAPI, which also carries MLIR's core C API  *|
|* (mlirContextCreate, mlirModuleCreateParse, ...) over the one libMLIR.so.   *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef TILE_C_DIALECT_H
#define TILE_C_DIALECT_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// mlirGetDialectHandle__tile__(): the tile dialect's handle, for
/// mlirDialectHandleRegisterDialect / mlirDialectHandleInsertDialect.
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Tile, tile);

/// Adds the tile dialect and every dialect its lowerings produce to
/// `registry` (mlir::tile::registerAllDialects).
MLIR_CAPI_EXPORTED void tileRegisterAllDialects(MlirDialectRegistry registry);

/// Registers every tile pass and pipeline with the global pass registry
/// (mlir::tile::registerAllPasses).
MLIR_CAPI_EXPORTED void tileRegisterAllPasses(void);

#ifdef __cplusplus
}
#endif

#endif /* TILE_C_DIALECT_H */
