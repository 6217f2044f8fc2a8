#!/usr/bin/env bash
# log-ptxas.sh DIR [--old]: a ptxas in DIR/bin that logs each call to
# DIR/ptxas.log and runs the real ptxas tilec finds now. With --old it
# first rejects --split-compile, as a ptxas from before that option did.
set -euo pipefail
dir="$1"
reject=""
if [[ "${2:-}" == "--old" ]]; then
  reject='case " $* " in
  *" --split-compile "*) echo "ptxas fatal   : Unknown option '"'"'-split-compile'"'"'" >&2; exit 255 ;;
esac'
fi
ptxas="$(tilec --print-toolchain --target=cuda | sed -n 's/^ptxas: //p')"
mkdir -p "$dir/bin"
cat >"$dir/bin/ptxas" <<SCRIPT
#!/bin/sh
echo "ptxas \$*" >>"$dir/ptxas.log"
$reject
exec "$ptxas" "\$@"
SCRIPT
chmod +x "$dir/bin/ptxas"
