"""The public API is what `grasbot/__init__.py` exports, and nothing changes it by accident
(as httpx's `test_exported_members`): a name added, dropped or renamed shows here."""

from __future__ import annotations

import ast
import subprocess
import sys

import grasbot

EXPORTED = {
    # the engine and its settings
    "GrasBot",
    "Settings",
    "Snapshot",
    "ReloadReport",
    "build_snapshot",
    # the pipeline, in the order the data flows
    "load_vault",
    "Vault",
    "VaultOptions",
    "Note",
    "tokenize_fr",
    "analyse_note",
    "Index",
    "Query",
    "score_note",
    "expand_by_graph",
    "search",
    "SearchResult",
    "Source",
    "build_prompt",
    "LLMClient",
    "extractive_answer",
    # around it
    "QuestionLog",
    "suggest_aliases",
    "create_app",
    "serve",
    "__version__",
    # the exceptions
    "GrasbotError",
    "ConfigError",
    "VaultError",
    "QueryError",
    "NoteNotFound",
    "AuthError",
    "EmbeddingError",
    "LLMError",
    "LLMUnavailable",
    "LLMTimeout",
    "LLMFailed",
    "AnswerUnused",
}


def printed_by(code: str) -> str:
    """What `code` prints in a fresh interpreter: what a start imports is seen there alone."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout


def test_exported_members():
    assert set(grasbot.__all__) == EXPORTED
    assert len(grasbot.__all__) == len(EXPORTED)  # no name twice
    for name in grasbot.__all__:
        member = getattr(grasbot, name)
        if name != "__version__":
            assert member.__module__.startswith("grasbot."), name  # ours, re-exported from a private module


def test_the_exceptions_form_the_documented_hierarchy():
    assert issubclass(grasbot.EmbeddingError, grasbot.GrasbotError)
    for name in ("LLMUnavailable", "LLMTimeout", "LLMFailed"):
        assert issubclass(getattr(grasbot, name), grasbot.LLMError)
    assert issubclass(grasbot.AnswerUnused, grasbot.LLMFailed)
    for name in ("ConfigError", "VaultError", "QueryError", "NoteNotFound", "AuthError", "LLMError"):
        assert issubclass(getattr(grasbot, name), grasbot.GrasbotError)


def test_the_settings_load_without_the_retriever():
    """`from grasbot import Settings` (the command line, the plugin's tests, an embedder's
    config) loads the settings alone: nothing of retrieval, answer, store or server."""
    code = (
        "import sys\n"
        "from grasbot import Settings\n"
        "from grasbot._config import Settings as Same\n"
        "assert Settings is Same and Settings().port == 8765\n"
        "print(sorted(m for m in sys.modules if m.startswith('grasbot.')))\n"
    )
    loaded = ast.literal_eval(printed_by(code))
    assert "grasbot.retrieval.search" not in loaded
    assert loaded == ["grasbot._config", "grasbot._exceptions", "grasbot._urls", "grasbot._version", "grasbot._zones"]


def test_a_daemons_start_imports_neither_grasbot_eval_nor_the_alias_suggestions():
    """`grasbot eval`'s module and the owner's alias suggestions serve no start: `grasbot serve`
    (its command line, its app) imports neither; `grasbot eval` and the first `suggest_aliases`
    call import their own (tests/test_cli.py, tests/server/test_server.py answer through them)."""
    code = (
        "import sys\n"
        "import grasbot._cli, grasbot.server.app\n"
        "from grasbot import Settings, create_app\n"
        "create_app(Settings.load(env={}, question_log='off'), owner_token='t' * 32)\n"
        "print(sorted(m for m in ('grasbot._evaluate', 'grasbot.retrieval.aliases') if m in sys.modules))\n"
    )
    assert ast.literal_eval(printed_by(code)) == []


def test_every_export_is_lazy_and_found():
    """Each name of `__all__` has its module in the lazy table, and no name there is missing from `__all__`."""
    assert set(grasbot._EXPORTS) | {"__version__"} == set(grasbot.__all__)
    assert set(dir(grasbot)) >= set(grasbot.__all__)


def test_the_patterns_of_every_top_level_domain_compile_at_first_use():
    """The patterns that hold the root zone's 1,285 top-level domains took 60 ms to compile: a
    daemon that imports them to serve must not pay it before it listens. Compiled at first use,
    they read as the pattern they stand for."""
    code = (
        "import grasbot._cli, grasbot.server.app\n"
        "from grasbot import _contacts\n"
        "from grasbot.answer import addresses\n"
        "lazy = [_contacts.EMAIL, _contacts.SPELLED_EMAIL, addresses._ADDRESS]\n"
        "print([('compiled' in p.__dict__) for p in lazy])\n"
        "print(addresses.keep_known_addresses('écrivez à jean arobase evil point app', []))\n"
        "print('compiled' in addresses._ADDRESS.__dict__)\n"
    )
    before, answer, after = printed_by(code).splitlines()
    assert before == "[False, False, False]"
    assert answer == "écrivez à (e-mail retiré)"
    assert after == "True"


def test_the_question_logs_redaction_patterns_compile_at_first_use():
    """The patterns that take a logged question's addresses, numbers and IPs out took 7 ms of a
    daemon's start to compile, for the first question logged: compiled by their first use, they
    redact as the patterns they stand for."""
    code = (
        "import grasbot._cli, grasbot.server.app\n"
        "from grasbot.store import redaction\n"
        "lazy = [redaction.PLACEHOLDER, redaction._IBAN, redaction._CARD, redaction._NIR, redaction._POSTAL, redaction._IPV4, redaction._IPV6]\n"
        "print(sum('compiled' in p.__dict__ for p in lazy))\n"
        "print(redaction.redact('au 12 rue de la Paix, IBAN FR76 3000 6000 0112 3456 7890 189, depuis 81.2.69.160'))\n"
        "print(sum('compiled' in p.__dict__ for p in lazy))\n"
    )
    before, answer, after = printed_by(code).splitlines()
    assert before == "0"
    assert answer == "au [adresse], IBAN [IBAN], depuis [IP]"
    assert after == "6"  # the placeholders' pattern is for reading a redacted text back
