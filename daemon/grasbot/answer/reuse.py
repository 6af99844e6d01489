"""Answer reuse: finished answers kept for the questions visitors ask again and again.

A site hears "Qui es-tu ?" a hundred times a day, and each costs the GPU seconds. An answer is
kept under the question (case and spacing folded), the audience it was written for, the
settings that shape it and whether meaning was part of the search; it belongs to one vault
snapshot, so a reload (a new snapshot) forgets every answer at once. Only first questions
(no history), and only complete answers the model wrote (never a fallback, never a busy
answer) are kept. The audience is in the key: an answer the owner's notes shaped is never
given to a visitor.
"""

from __future__ import annotations

import re
import unicodedata
import weakref
from collections import OrderedDict
from collections.abc import Hashable, Iterator

__all__ = ["AnswerCache", "normalise_question", "replay_pieces"]

_SPACE = re.compile(r"\s+")
_SPACE_BEFORE_MARK = re.compile(r"\s+([?!.,;:…])")
_TRAILING_MARKS = re.compile(r"[\s?!.…]+$")
REPLAY_PIECE = 48  # characters per `token` event when a kept answer is replayed


def normalise_question(q: str) -> str:
    """ "Qui es-tu ?", "qui es-tu?" and "QUI  ES-TU" are one question; "Qui es-tu, toi ?" is not."""
    text = unicodedata.normalize("NFKC", q).casefold()
    text = _SPACE_BEFORE_MARK.sub(r"\1", _SPACE.sub(" ", text))
    return _TRAILING_MARKS.sub("", text).strip()


def replay_pieces(text: str, size: int = REPLAY_PIECE) -> Iterator[str]:
    """A kept answer as a stream's `token`s, cut after a space near every `size` characters:
    joined, they give back `text`."""
    start = 0
    while start < len(text):
        end = text.find(" ", start + size)
        end = len(text) if end == -1 else end + 1
        yield text[start:end]
        start = end


class AnswerCache:
    """A bounded LRU of answer payloads for one snapshot at a time; size 0: off."""

    def __init__(self, size: int, shape: Hashable = ()) -> None:
        self.size = size
        self.shape = shape  # the settings an answer depends on (a new GrasBot for new settings, but said)
        self._snapshot: weakref.ref | None = None
        self._kept: OrderedDict[tuple, dict] = OrderedDict()
        self.hits = 0

    def key(self, q: str, audience: str, semantic: bool) -> tuple:
        return (normalise_question(q), audience, semantic, self.shape)

    def get(self, snapshot: object, key: tuple) -> dict | None:
        if not self._same(snapshot):
            return None
        payload = self._kept.get(key)
        if payload is not None:
            self._kept.move_to_end(key)
            self.hits += 1
        return payload

    def put(self, snapshot: object, key: tuple, payload: dict) -> None:
        """Keep `payload`, written on `snapshot`, unless the vault has been reloaded since."""
        if self.size <= 0:
            return
        if self._snapshot is None or self._snapshot() is None:
            self._bind(snapshot)
        if not self._same(snapshot):
            return  # written on a vault version that is gone, or not yet seen by get()
        self._kept[key] = payload
        self._kept.move_to_end(key)
        while len(self._kept) > self.size:
            self._kept.popitem(last=False)

    def forget(self, snapshot: object) -> None:
        """A new vault version: every answer goes (the reload calls it once it has swapped)."""
        self._bind(snapshot)

    def __len__(self) -> int:
        return len(self._kept)

    def _bind(self, snapshot: object) -> None:
        self._snapshot = weakref.ref(snapshot)
        self._kept.clear()

    def _same(self, snapshot: object) -> bool:
        return self._snapshot is not None and self._snapshot() is snapshot
