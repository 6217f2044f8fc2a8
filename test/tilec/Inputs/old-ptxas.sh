#!/usr/bin/env bash
# old-ptxas.sh DIR: a ptxas in DIR/bin that, like a ptxas from before
# --split-compile, rejects that option (logging each call to DIR/ptxas.log)
# and otherwise runs the real ptxas tilec finds now.
set -euo pipefail
dir="$1"
ptxas="$(tilec --print-toolchain --target=cuda | sed -n 's/^ptxas: //p')"
mkdir -p "$dir/bin"
cat >"$dir/bin/ptxas" <<SCRIPT
#!/bin/sh
echo "ptxas \$*" >>"$dir/ptxas.log"
case " \$* " in
  *" --split-compile "*) echo "ptxas fatal   : Unknown option '-split-compile'" >&2; exit 255 ;;
esac
exec "$ptxas" "\$@"
SCRIPT
chmod +x "$dir/bin/ptxas"
