"""The repository's scripts (`eval/`, `benchmarks/`, `scripts/`) as the tests import them: they
are scripts, not a package, so each is loaded from its file (a pytest plugin: tests/conftest.py
registers it)."""

from __future__ import annotations

import importlib.util
from types import ModuleType

import pytest

from support.bots import REPO


def load_script(path: str) -> ModuleType:
    """The script at `path` (from the repository's root), loaded as a module of its own name."""
    file = REPO / path
    spec = importlib.util.spec_from_file_location(file.stem, file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def dev_ranks():
    """`eval/dev_ranks.py`, loaded once per test module."""
    return load_script("eval/dev_ranks.py")
