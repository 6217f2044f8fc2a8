/* AbiLayout.c - tile_abi.h and tile_targets.h compiled as C: the layouts
 * AbiTest.cpp compares with C++'s and with docs/bundle.md. */
#include "AbiLayout.h"

#include "tile/Runtime/tile_targets.h"

#include <stddef.h>

#define TILE_X(s, f, off) (int64_t) offsetof(s, f),
const int64_t tile_test_c_offsets[] = {TILE_TEST_ABI_FIELDS(TILE_X)};
#undef TILE_X

#define TILE_X(s, size) (int64_t)sizeof(s),
const int64_t tile_test_c_sizes[] = {TILE_TEST_ABI_SIZES(TILE_X)};
#undef TILE_X

#define TILE_X(id, name, code, bits, lanes, ctype) (int64_t)sizeof(ctype),
const int64_t tile_test_c_dtype_sizes[] = {TILE_DTYPES(TILE_X)};
#undef TILE_X
