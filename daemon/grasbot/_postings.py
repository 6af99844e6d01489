"""Inverted indexes that can be changed cheaply without disturbing their readers.

`evolved()` returns a new index and leaves the old one untouched: only the posting lists of
the changed notes' terms are copied. A reload builds the next index this way while requests
keep reading the current one, then the daemon swaps them in one assignment.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping


_EMPTY: Mapping[str, int] = {}


class Postings:
    """term -> {note path: count}, plus each note's term counts and total length."""

    __slots__ = ("_postings", "_docs", "_lengths", "total_length")

    def __init__(self) -> None:
        self._postings: dict[str, dict[str, int]] = {}
        self._docs: dict[str, Mapping[str, int]] = {}
        self._lengths: dict[str, int] = {}
        self.total_length = 0

    def __len__(self) -> int:
        return len(self._docs)

    def __contains__(self, path: str) -> bool:
        return path in self._docs

    def df(self, term: str) -> int:
        return len(self._postings.get(term, ()))

    def tf(self, term: str, path: str) -> int:
        return self._postings.get(term, {}).get(path, 0)

    def length(self, path: str) -> int:
        return self._lengths.get(path, 0)

    def paths_with(self, term: str) -> Iterable[str]:
        return self._postings.get(term, {}).keys()

    def counts(self, term: str) -> Mapping[str, int]:
        """{path: count} for `term`; read it, never change it."""
        return self._postings.get(term, _EMPTY)

    @classmethod
    def from_docs(cls, docs: Mapping[str, Mapping[str, int]]) -> "Postings":
        """Built in one pass: what `evolved()` from empty gives, without its copy-on-write cost."""
        new = cls()
        postings: defaultdict[str, dict[str, int]] = defaultdict(dict)
        for path, counts in docs.items():
            new._docs[path] = counts
            length = sum(counts.values())
            new._lengths[path] = length
            new.total_length += length
            for term, count in counts.items():
                postings[term][path] = count
        new._postings = dict(postings)
        return new

    def evolved(self, removed: Iterable[str] = (), added: Mapping[str, Mapping[str, int]] | None = None) -> "Postings":
        """A copy with `removed` paths gone and `added` ({path: term counts}) put in."""
        added = added or {}
        new = Postings()
        new._postings = dict(self._postings)
        new._docs = dict(self._docs)
        new._lengths = dict(self._lengths)
        new.total_length = self.total_length
        copied: set[str] = set()

        def writable(term: str) -> dict[str, int]:
            if term not in copied:
                copied.add(term)
                new._postings[term] = dict(new._postings.get(term, {}))
            return new._postings[term]

        for path in {*removed, *added}:
            old = new._docs.pop(path, None)
            if old is None:
                continue
            new.total_length -= new._lengths.pop(path)
            for term in old:
                plist = writable(term)
                plist.pop(path, None)
                if not plist:
                    del new._postings[term]
                    copied.discard(term)
        for path, counts in added.items():
            new._docs[path] = counts
            length = sum(counts.values())
            new._lengths[path] = length
            new.total_length += length
            for term, count in counts.items():
                writable(term)[path] = count
        return new
