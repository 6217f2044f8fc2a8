//===- FuzzNpy.cpp - libFuzzer target: tile-run's .npy reader -------------===//
//
// parseNpy on arbitrary bytes must return an array or a message; when it
// returns an array, the array must be exactly what its header promises
// (tile-run indexes it by shape without further checks), which is asserted
// here, and every element must convert (loadElement, as tile-run does).
//
//===----------------------------------------------------------------------===//
#include "Elements.h"
#include "Npy.h"

#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tilerun::NpyArray a;
  std::string error;
  if (!tilerun::parseNpy(
          std::string_view(reinterpret_cast<const char *>(data), size), a,
          error)) {
    if (error.empty())
      std::abort(); // every refusal has a message
    return 0;
  }
  size_t elems = 1;
  for (int64_t d : a.shape) {
    if (d < 0)
      std::abort();
    elems *= size_t(d);
  }
  if (a.shape.size() > tilerun::kNpyMaxRank ||
      a.data.size() != elems * (a.dtype.bits / 8))
    std::abort();
  double sum = 0;
  for (size_t i = 0; i < elems; ++i)
    sum += tilerun::loadElement(a.dtype, a.data.data(), int64_t(i));
  (void)sum;
  return 0;
}
