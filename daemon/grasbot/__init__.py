"""GrasBot: answers a site's visitors from an Obsidian vault of French notes.

The pipeline, one function each, in the order the data flows:
load_vault → analyse_note/Index → score_note → expand_by_graph → search → build_prompt →
LLMClient.generate → GrasBot.answer.
"""

from ._aliases import suggest_aliases
from ._analysis import tokenize_fr
from ._config import Settings
from ._engine import GrasBot, ReloadReport, Snapshot, build_snapshot
from ._exceptions import (
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
from ._fallback import extractive_answer
from ._graph import expand_by_graph
from ._index import Index, analyse_note
from ._llm import LLMClient
from ._prompt import build_prompt
from ._questionlog import QuestionLog
from ._scoring import Query, score_note
from ._search import SearchResult, Source, search
from ._server import create_app, serve
from ._vault import Note, Vault, VaultOptions, load_vault
from ._version import __version__

__all__ = [
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
