#!/usr/bin/env bash
# log-ptxas.sh DIR: a ptxas in DIR/bin that logs each call to DIR/ptxas.log
# and runs the real ptxas tilec finds now.
set -euo pipefail
dir="$1"
ptxas="$(tilec --print-toolchain --target=cuda | sed -n 's/^ptxas: //p')"
mkdir -p "$dir/bin"
cat >"$dir/bin/ptxas" <<SCRIPT
#!/bin/sh
echo "ptxas \$*" >>"$dir/ptxas.log"
exec "$ptxas" "\$@"
SCRIPT
chmod +x "$dir/bin/ptxas"
