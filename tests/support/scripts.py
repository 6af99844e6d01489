"""The eval scripts (`eval/*.py`) as the tests import them: they are scripts, not a package, so
each is loaded from its file (a pytest plugin: tests/conftest.py registers it)."""

from __future__ import annotations

import importlib.util

import pytest

from support.bots import REPO


@pytest.fixture(scope="module")
def dev_ranks():
    """`eval/dev_ranks.py`, loaded once per test module."""
    spec = importlib.util.spec_from_file_location("dev_ranks", REPO / "eval" / "dev_ranks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
