// tile.h - the whole MSL device library of tile's generated Metal source,
// for compiling an `msl` section's kernel part with an include path
// (xcrun metal -I<prefix>/include). tilec prepends the three files' text to
// each generated source instead, so torch.mps.compile_shader needs none.
#pragma once
#include "types.h"
#include "memref.h"
#include "intrinsics.h"
