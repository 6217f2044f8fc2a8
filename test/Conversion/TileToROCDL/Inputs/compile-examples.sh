#!/bin/bash
# compile-examples.sh EXAMPLES_DIR OUT_DIR: tilec --target=hip for gfx942 and
# gfx90a on every example; checks that each bundle holds the HIP sections.
n=0
for f in "$1"/*.mlir; do
  name=$(basename "$f" .mlir)
  for chip in gfx942 gfx90a; do
    out="$2/$name.$chip.tileb"
    if ! tilec "$f" --target=hip --chip=$chip -o "$out"; then
      echo "FAIL: $name $chip: tilec failed"; continue
    fi
    ok=1
    for section in metadata hsaco hsaco.resources native.so mlir; do
      grep -q -a "$section" "$out" || { echo "FAIL: $name $chip: no $section section"; ok=0; }
    done
    grep -q -a "\"kind\": \"hip\"" "$out" || { echo "FAIL: $name $chip: metadata kind"; ok=0; }
    grep -q -a "\"chip\": \"$chip\"" "$out" || { echo "FAIL: $name $chip: metadata chip"; ok=0; }
    [ $ok = 1 ] && echo "$name $chip ok"
  done
  n=$((n + 1))
done
echo "compiled $n examples"
