#!/usr/bin/env bash
# fake-toolkit.sh DIR: a CUDA toolkit layout in DIR whose bin/ptxas logs each
# call to DIR/ptxas.log and runs the real ptxas; nvvm/libdevice links the
# real libdevice. Both real ones are where tilec finds them now.
set -euo pipefail
dir="$1"
found="$(tilec --print-toolchain --target=cuda)"
ptxas="$(sed -n 's/^ptxas: //p' <<<"$found")"
libdevice="$(sed -n 's/^libdevice: //p' <<<"$found")"
mkdir -p "$dir/bin" "$dir/nvvm/libdevice"
cat >"$dir/bin/ptxas" <<SCRIPT
#!/bin/sh
echo "ptxas \$*" >>"$dir/ptxas.log"
exec "$ptxas" "\$@"
SCRIPT
chmod +x "$dir/bin/ptxas"
ln -sf "$libdevice" "$dir/nvvm/libdevice/libdevice.10.bc"
