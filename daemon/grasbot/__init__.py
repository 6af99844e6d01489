"""GrasBot: answers a site's visitors from an Obsidian vault of French notes.

The pipeline, one function each, in the order the data flows:
load_vault → analyse_note/Index → score_note → expand_by_graph → search → build_prompt →
LLMClient.generate → GrasBot.answer.

The code lives in four internal subpackages, in that order: `retrieval` (vault to ranked
notes), `answer` (passages, prompt, LLM, fallback), `store` (index cache, parallel load,
question log) and `server` (the daemon). The public API is what this module exports. Each name
is imported on first use (PEP 562), so `from grasbot import Settings` loads the settings alone,
not the retriever.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

#: name -> the module that defines it
_EXPORTS = {
    "Settings": "._config",
    "GrasBot": "._engine",
    "ReloadReport": "._engine",
    "Snapshot": "._engine",
    "build_snapshot": "._engine",
    "load_vault": ".retrieval.vault",
    "Vault": ".retrieval.vault",
    "VaultOptions": ".retrieval.vault",
    "Note": ".retrieval.vault",
    "tokenize_fr": ".retrieval.analysis",
    "Index": ".retrieval.index",
    "analyse_note": ".retrieval.index",
    "Query": ".retrieval.scoring",
    "score_note": ".retrieval.scoring",
    "expand_by_graph": ".retrieval.graph",
    "search": ".retrieval.search",
    "SearchResult": ".retrieval.search",
    "Source": ".retrieval.search",
    "suggest_aliases": ".retrieval.aliases",
    "build_prompt": ".answer.prompt",
    "LLMClient": ".answer.llm",
    "extractive_answer": ".answer.fallback",
    "QuestionLog": ".store.questionlog",
    "create_app": ".server.app",
    "serve": ".server.app",
    **dict.fromkeys(
        (
            "AnswerUnused",
            "AuthError",
            "ConfigError",
            "EmbeddingError",
            "GrasbotError",
            "LLMError",
            "LLMFailed",
            "LLMTimeout",
            "LLMUnavailable",
            "NoteNotFound",
            "QueryError",
            "VaultError",
        ),
        "._exceptions",
    ),
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # once: the next lookup does not come here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


if TYPE_CHECKING:  # what type checkers and editors see; at run time, __getattr__ above
    from ._config import Settings
    from ._engine import GrasBot, ReloadReport, Snapshot, build_snapshot
    from ._exceptions import (
        AnswerUnused,
        AuthError,
        ConfigError,
        EmbeddingError,
        GrasbotError,
        LLMError,
        LLMFailed,
        LLMTimeout,
        LLMUnavailable,
        NoteNotFound,
        QueryError,
        VaultError,
    )
    from .answer.fallback import extractive_answer
    from .answer.llm import LLMClient
    from .answer.prompt import build_prompt
    from .retrieval.aliases import suggest_aliases
    from .retrieval.analysis import tokenize_fr
    from .retrieval.graph import expand_by_graph
    from .retrieval.index import Index, analyse_note
    from .retrieval.scoring import Query, score_note
    from .retrieval.search import SearchResult, Source, search
    from .retrieval.vault import Note, Vault, VaultOptions, load_vault
    from .server.app import create_app, serve
    from .store.questionlog import QuestionLog

__all__ = [
    "AnswerUnused",
    "AuthError",
    "ConfigError",
    "EmbeddingError",
    "GrasBot",
    "GrasbotError",
    "Index",
    "LLMClient",
    "LLMError",
    "LLMFailed",
    "LLMTimeout",
    "LLMUnavailable",
    "Note",
    "NoteNotFound",
    "Query",
    "QuestionLog",
    "QueryError",
    "ReloadReport",
    "SearchResult",
    "Settings",
    "Snapshot",
    "Source",
    "Vault",
    "VaultError",
    "VaultOptions",
    "__version__",
    "analyse_note",
    "build_prompt",
    "build_snapshot",
    "create_app",
    "expand_by_graph",
    "extractive_answer",
    "load_vault",
    "score_note",
    "search",
    "serve",
    "suggest_aliases",
    "tokenize_fr",
]
