"""Every error GrasBot raises on purpose, in one hierarchy.

GrasbotError
├── ConfigError          a setting or flag has a value we cannot use
├── VaultError           the vault folder itself cannot be read (one bad note is not an error:
│                        it is skipped and reported in Vault.errors)
├── QueryError           a question or its parameters are unusable (empty, too long, bad audience)
├── NoteNotFound         no note has the slug asked for
├── AuthError            an owner-only operation was asked without the owner's token
├── EmbeddingError       the semantic backend could not embed; search answers lexically meanwhile
└── LLMError             Ollama could not give an answer; the caller falls back to extraction
    ├── LLMUnavailable   nothing listens at OLLAMA_HOST, or the connection broke
    ├── LLMTimeout       Ollama did not answer in time
    └── LLMFailed        Ollama answered with an error (HTTP status, error line, bad payload)
        └── AnswerUnused an answer came, but none of it can be shown (empty once its reasoning
                         and unknown citations are removed, or not in French)

Messages are written for the person who will read them: they say what was wrong and,
where it helps, what to do. They never carry a traceback or a private note's content.
"""

from __future__ import annotations


class GrasbotError(Exception):
    """Base class: catch this to catch everything GrasBot raises on purpose."""


class ConfigError(GrasbotError):
    pass


class VaultError(GrasbotError):
    pass


class QueryError(GrasbotError):
    pass


class NoteNotFound(GrasbotError):
    def __init__(self, slug: str, path: str | None = None):
        super().__init__(f"aucune note n'a le slug « {slug} »" if path is None else f"aucune note au chemin « {path} »")
        self.slug = slug
        self.path = path


class AuthError(GrasbotError):
    pass


class EmbeddingError(GrasbotError):
    pass


class LLMError(GrasbotError):
    pass


class LLMUnavailable(LLMError):
    pass


class LLMTimeout(LLMError):
    pass


class LLMFailed(LLMError):
    pass


class AnswerUnused(LLMFailed):
    pass
