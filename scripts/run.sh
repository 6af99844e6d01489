#!/usr/bin/env bash
# One command on a fresh machine: install everything, then run GrasBot on the bundled vault.
# Extra arguments go to `grasbot serve` (e.g. --port 9000, --vault ~/MonVault); relative paths
# among them are read from the folder it is run from, as any command's.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
(cd "$root" && bash scripts/setup.sh)
grasbot="$root/.venv/bin/grasbot"
# `grasbot check` reads the vault `serve` will, as `serve` will: the same folders and visibility,
# the same meaning (`--semantic off` given to serve would otherwise embed the whole vault in
# check first, minutes before serving) and the same cache
valued="--vault --exclude --default-visibility --semantic --embed-model --ollama-host --cache-dir"
check=()
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  flag="${args[i]%%=*}"
  if [ "${args[i]}" = --no-cache ]; then
    check+=(--no-cache)
  elif [[ " $valued " == *" $flag "* ]]; then
    if [ "$flag" = "${args[i]}" ]; then check+=("${args[i]}" "${args[i + 1]:-}"); else check+=("${args[i]}"); fi
  fi
done
echo "==> grasbot check (la santé du coffre)"
if "$grasbot" check "${check[@]}" >/dev/null; then
  echo "coffre OK"
else  # quoted as a shell reads it: a vault path with a space is one argument when pasted
  echo "grasbot check a trouvé des problèmes : lancez $(printf '%q' "$grasbot")$(printf ' %q' check "${check[@]}")"
fi
exec "$grasbot" serve "$@"
