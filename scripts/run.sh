#!/usr/bin/env bash
# One command on a fresh machine: install everything, then run GrasBot on the bundled vault.
# Extra arguments go to `grasbot serve` (e.g. --port 9000, --vault ~/MonVault).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "==> grasbot check (the bundled vault's health)"
.venv/bin/grasbot check >/dev/null && echo "vault OK" || echo "grasbot check found problems: run .venv/bin/grasbot check"
exec .venv/bin/grasbot serve "$@"
