#!/usr/bin/env bash
# One command on a fresh machine: install everything, then run GrasBot on the bundled vault.
# Extra arguments go to `grasbot serve` (e.g. --port 9000, --vault ~/MonVault); relative paths
# among them are read from the folder it is run from, as any command's.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
(cd "$root" && bash scripts/setup.sh)
grasbot="$root/.venv/bin/grasbot"
# `grasbot check` reads the vault `serve` will: the same --vault, --exclude and --default-visibility
check=()
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --vault | --exclude | --default-visibility) check+=("${args[i]}" "${args[i + 1]:-}") ;;
    --vault=* | --exclude=* | --default-visibility=*) check+=("${args[i]}") ;;
  esac
done
echo "==> grasbot check (the vault's health)"
"$grasbot" check "${check[@]}" >/dev/null && echo "vault OK" || echo "grasbot check found problems: run $grasbot check ${check[*]}"
exec "$grasbot" serve "$@"
