#!/usr/bin/env bash
# One command on a fresh machine: install everything the tests need, then run every test,
# Python (pytest) and TypeScript (lint, typecheck, vitest, browser tests). Fails if any fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
echo "==> Python : lint et mise en forme (ruff : le paquet, les benchmarks, les scripts d'eval, ceux du dépôt et les tests)"
.venv/bin/ruff check daemon benchmarks eval scripts tests
.venv/bin/ruff format --check daemon benchmarks eval scripts tests
echo "==> Python : vérification des types (mypy : le paquet)"
.venv/bin/mypy
echo "==> Python : tests"
.venv/bin/python -m pytest -p no:cacheprovider "$@"
echo "==> TypeScript : tests"
npm test
