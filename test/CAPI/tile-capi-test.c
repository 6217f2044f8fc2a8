/*===- tile-capi-test.c - the tile C API, from C ---------------------------===*\
|*                                                                            *|
|* Creates a context, registers and loads the tile dialect through its handle, *|
|* parses a small tile module, verifies and prints it.                        *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

// RUN: tile-capi-test 2>&1 | FileCheck %s

#include "tile-c/Dialect.h"

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#include <stdio.h>
#include <string.h>

static void printToStdout(MlirStringRef str, void *userData) {
  (void)userData;
  fwrite(str.data, 1, str.length, stdout);
}

static const char *kModule =
    "func.func @fill(%C: memref<?x?xf32> {tile.dims = [\"M\", \"N\"], "
    "tile.output}) attributes {tile.kernel} {\n"
    "  %c1 = arith.constant 1 : index\n"
    "  tile.launch blocks(%bx, %by) in (%c1, %c1) threads(128) {\n"
    "    %F = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>\n"
    "    tile.clear %F : memref<64x64xf32, #tile.scope<fragment>>\n"
    "  }\n"
    "  return\n"
    "}\n";

static int testRegistration(void) {
  MlirContext ctx = mlirContextCreate();
  MlirDialectHandle tile = mlirGetDialectHandle__tile__();
  MlirStringRef ns = mlirDialectHandleGetNamespace(tile);
  // CHECK-LABEL: namespace: tile
  printf("namespace: %.*s\n", (int)ns.length, ns.data);

  /* Registering does not load; loading brings its dependent dialects. */
  mlirDialectHandleRegisterDialect(tile, ctx);
  intptr_t before = mlirContextGetNumLoadedDialects(ctx);
  MlirDialect d = mlirDialectHandleLoadDialect(tile, ctx);
  // CHECK: loaded: 1, more dialects: 1
  printf("loaded: %d, more dialects: %d\n", !mlirDialectIsNull(d),
         mlirContextGetNumLoadedDialects(ctx) > before + 1);

  MlirModule module =
      mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(kModule));
  if (mlirModuleIsNull(module)) {
    fprintf(stderr, "FAIL: could not parse the tile module\n");
    return 1;
  }
  MlirOperation op = mlirModuleGetOperation(module);
  // CHECK: verified: 1
  printf("verified: %d\n", mlirOperationVerify(op));
  // CHECK: func.func @fill(%{{.*}}: memref<?x?xf32> {tile.dims = ["M", "N"], tile.output}) attributes {tile.kernel}
  // CHECK: tile.launch blocks
  // CHECK: tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
  // CHECK: tile.clear
  mlirOperationPrint(op, printToStdout, NULL);
  printf("\n");
  mlirModuleDestroy(module);

  /* An invalid module: the verifier reports it. */
  MlirModule bad = mlirModuleCreateParse(
      ctx, mlirStringRefCreateFromCString(
               "%x = tile.alloc : memref<4xf32>\n"));
  // CHECK: bad module rejected: 1
  printf("bad module rejected: %d\n",
         mlirModuleIsNull(bad) || !mlirOperationVerify(mlirModuleGetOperation(bad)));
  if (!mlirModuleIsNull(bad))
    mlirModuleDestroy(bad);
  mlirContextDestroy(ctx);
  return 0;
}

static int testRegistry(void) {
  /* The same through a registry: tileRegisterAllDialects. */
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  tileRegisterAllDialects(registry);
  tileRegisterAllPasses();
  MlirContext ctx = mlirContextCreate();
  mlirContextAppendDialectRegistry(ctx, registry);
  mlirDialectRegistryDestroy(registry);
  mlirContextLoadAllAvailableDialects(ctx);
  MlirModule module =
      mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(kModule));
  // CHECK: registry: parsed 1 verified 1
  printf("registry: parsed %d verified %d\n", !mlirModuleIsNull(module),
         !mlirModuleIsNull(module) &&
             mlirOperationVerify(mlirModuleGetOperation(module)));
  if (!mlirModuleIsNull(module))
    mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
  return 0;
}

int main(void) {
  if (testRegistration())
    return 1;
  if (testRegistry())
    return 1;
  // CHECK: DONE
  printf("DONE\n");
  return 0;
}
