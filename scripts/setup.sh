#!/usr/bin/env bash
# Installs what GrasBot needs into this checkout: a Python venv (.venv) with the package,
# and the plugin's node_modules. Safe to run again: the venv and the system packages are made
# only when missing; pip, `npm ci` (node_modules anew, from package-lock.json) and the plugin's
# build run each time, so a pull's new dependencies are never missed.
# Usage: bash scripts/setup.sh [--test]   (--test adds the test tools, nginx, chromium and systemd-analyze)
set -euo pipefail
cd "$(dirname "$0")/.."

with_tests=false
[ "${1:-}" = "--test" ] && with_tests=true

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "==> création de .venv"
  "$python" -m venv .venv
fi
echo "==> installation du paquet grasbot"
if $with_tests; then
  .venv/bin/pip install --quiet --disable-pip-version-check -e '.[test]'
else
  .venv/bin/pip install --quiet --disable-pip-version-check -e .
fi
# GrasBot's own modules compiled now, as pip compiles a regular install's: an editable one
# leaves them to the first start, and where PYTHONDONTWRITEBYTECODE is set, to every start
# (0.1–0.15 s of a restart's 1 s at 10,000 notes, benchmarks/README.md)
.venv/bin/python -m compileall -q daemon/grasbot

echo "==> installation des paquets node du plugin"
if [ -f package-lock.json ]; then npm ci --no-audit --no-fund --loglevel=error; else npm install --no-audit --no-fund --loglevel=error; fi
npm run --silent build

if $with_tests; then
  missing=()
  command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
  command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || missing+=(chromium)
  command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)  # checks deploy/systemd/grasbot.service
  if [ ${#missing[@]} -gt 0 ]; then
    echo "==> installation des paquets Debian : ${missing[*]}"
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi
