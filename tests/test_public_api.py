"""The public API is what `grasbot/__init__.py` exports, and nothing changes it by accident
(as httpx's `test_exported_members`): a name added, dropped or renamed shows here."""

from __future__ import annotations

import grasbot

EXPORTED = {
    # the engine and its settings
    "GrasBot", "Settings", "Snapshot", "ReloadReport", "build_snapshot",
    # the pipeline, in the order the data flows
    "load_vault", "Vault", "VaultOptions", "Note", "tokenize_fr", "analyse_note", "Index", "Query", "score_note",
    "expand_by_graph", "search", "SearchResult", "Source", "build_prompt", "LLMClient", "extractive_answer",
    # around it
    "QuestionLog", "suggest_aliases", "create_app", "serve", "__version__",
    # the exceptions
    "GrasbotError", "ConfigError", "VaultError", "QueryError", "NoteNotFound", "AuthError", "EmbeddingError",
    "LLMError", "LLMUnavailable", "LLMTimeout", "LLMFailed",
}


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
    for name in ("ConfigError", "VaultError", "QueryError", "NoteNotFound", "AuthError", "LLMError"):
        assert issubclass(getattr(grasbot, name), grasbot.GrasbotError)
