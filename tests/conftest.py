"""Shared fixtures: the bundled vault, small vaults written by the test, and the stand-in Ollama."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # the stand-in lives beside the tests

from standin_ollama import StandinOllama, standin_ollama, unused_url  # noqa: E402,F401

from grasbot import GrasBot, LLMClient, Settings  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
BUNDLED_VAULT = REPO / "vault-grasbot"


def write_note(root: Path, rel: str, frontmatter: str | None = None, body: str = "") -> Path:
    """Write one note; `frontmatter` is YAML without the fences (None: no frontmatter at all)."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    text = textwrap.dedent(body).lstrip("\n")
    if frontmatter is not None:
        text = f"---\n{textwrap.dedent(frontmatter).strip()}\n---\n{text}"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(autouse=True, scope="session")
def _xdg_folders_of_the_tests(tmp_path_factory):
    """The daemon keeps its index caches, question log and token in the XDG folders: during the
    tests, folders of their own, never the home of whoever runs them (a run of the suite left
    hundreds of index caches in ~/.cache/grasbot). Daemons the tests start inherit them."""
    base = tmp_path_factory.mktemp("xdg")
    patch = pytest.MonkeyPatch()
    for var in ("XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        patch.setenv(var, str(base / var.lower()))
    yield base
    patch.undo()


@pytest.fixture
def note_writer(tmp_path):
    root = tmp_path / "vault"
    root.mkdir()

    def write(rel: str, frontmatter: str | None = None, body: str = "") -> Path:
        return write_note(root, rel, frontmatter, body)

    write.root = root
    return write


def make_bot(vault: Path, ollama_url: str | None = None, **settings) -> GrasBot:
    """A GrasBot on `vault`; without `ollama_url` its LLM points where nothing listens."""
    settings.setdefault("question_log", "off")
    settings.setdefault("index_cache", False)  # tests/test_cache.py tests the cache on its own
    settings.setdefault("semantic", "off")  # lexical, so a score is exact; tests/test_semantic.py turns it on
    config = Settings.load(env={}, vault_dir=vault, ollama_host=ollama_url or unused_url(), llm_timeout=5.0, **settings)
    return GrasBot.open(config)


@pytest.fixture
def bundled_bot():
    return make_bot(BUNDLED_VAULT)
