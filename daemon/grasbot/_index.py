"""The searchable form of a vault, one per audience.

A visitor's index is built from public notes only: a private note is not hidden at query
time, it is simply absent — from the scores, the BM25 statistics, the graph and the counts.
Each note is analysed once (`analyse_note`), and the result is shared by both audiences and
reused by a reload for every note whose bytes did not change.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Mapping

from ._analysis import tokenize_fr
from ._postings import Postings
from ._vault import LinkResolver, Note, Vault, rewrite_links

Terms = tuple[str, ...]
Labeled = tuple[tuple[str, Terms], ...]  # (the author's text, its stems), empty stems left out

# Okapi BM25 with Lucene's idf, which stays positive and monotonic on a 41-note vault.
K1 = 1.2
B = 0.75


@dataclass(frozen=True)
class NoteAnalysis:
    """A note's fields as stems. Depends on the note alone, never on the rest of the vault."""

    aliases: Labeled
    title: Terms
    slug: Terms
    answers: Labeled
    tags: Labeled
    domains: Labeled
    body: Mapping[str, int]  # stem -> count

    def field_terms(self) -> dict[str, int]:
        """Every stem of the frontmatter fields: a note that has none of a question's stems here
        or in its body cannot score, which is what lets search skip it."""
        terms: set[str] = set(self.title) | set(self.slug)
        for group in (self.aliases, self.answers, self.tags, self.domains):
            for _, seq in group:
                terms.update(seq)
        return dict.fromkeys(terms, 1)


def _labeled(values: tuple[str, ...]) -> Labeled:
    pairs = ((v, tuple(tokenize_fr(v))) for v in values)
    return tuple((v, t) for v, t in pairs if t)


def analyse_note(note: Note) -> NoteAnalysis:
    return NoteAnalysis(
        aliases=_labeled(note.aliases),
        title=tuple(tokenize_fr(note.title)),
        slug=tuple(tokenize_fr(note.slug.replace("-", " "))),
        answers=_labeled(note.answers),
        tags=_labeled(note.tags),
        domains=_labeled(note.domains),
        body=Counter(tokenize_fr(f"{note.title}\n{note.name}\n{note.body}")),
    )


@dataclass(frozen=True)
class Index:
    """Everything search needs for one audience. Immutable: a reload makes a new one."""

    audience: str
    notes: Mapping[str, Note]
    analyses: Mapping[str, NoteAnalysis]
    body: Postings  # BM25 over note bodies
    fields: Postings  # which notes carry a stem in their frontmatter fields
    edges: Mapping[str, tuple[tuple[str, str], ...]]  # only between notes of this audience
    backlinks: Mapping[str, tuple[tuple[str, str], ...]]
    resolver: LinkResolver | None = None

    def __len__(self) -> int:
        return len(self.notes)

    def readable_body(self, path: str) -> str:
        """The note's body as this audience may read it: links become words, and a link to a
        note outside the audience (a private one, for a visitor) loses its target's name."""

        def visible(target: str) -> bool:
            resolved = self.resolver.resolve(target) if self.resolver else None
            return resolved is None or resolved in self.notes

        return rewrite_links(self.notes[path].body, visible)

    # ---- BM25 statistics

    def idf(self, term: str) -> float:
        n, df = len(self.body), self.body.df(term)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def bm25(self, terms: Iterable[str]) -> dict[str, float]:
        """Okapi BM25 of every note holding at least one of `terms`, term at a time."""
        scores: dict[str, float] = {}
        if not len(self.body):
            return scores
        avg = self.body.total_length / len(self.body)
        for term in set(terms):
            idf = self.idf(term)
            for path, tf in self.body.counts(term).items():
                norm = K1 * (1.0 - B + B * self.body.length(path) / avg)
                scores[path] = scores.get(path, 0.0) + idf * tf * (K1 + 1.0) / (tf + norm)
        return scores

    def bm25_ceiling(self, terms: Iterable[str]) -> float:
        """What a note would score if it held every term infinitely often: the yardstick that
        turns a raw BM25 score into the share of the question a note covers."""
        return sum(self.idf(t) * (K1 + 1.0) for t in terms)

    def candidates(self, terms: Iterable[str]) -> set[str]:
        """Notes holding at least one of `terms` in a field or in the body: the only ones that
        can score. Every other note scores 0 whatever the weights."""
        out: set[str] = set()
        for term in terms:
            out.update(self.fields.paths_with(term))
            out.update(self.body.paths_with(term))
        return out

    # ---- building

    @classmethod
    def build(cls, vault: Vault, audience: str, analyses: Mapping[str, NoteAnalysis]) -> "Index":
        notes = {p: n for p, n in vault.notes.items() if audience == "owner" or n.public}
        return cls._assemble(audience, notes, {p: analyses[p] for p in notes}, vault, Postings(), Postings(), notes)

    def evolved(self, vault: Vault, analyses: Mapping[str, NoteAnalysis]) -> "Index":
        """The index of `vault`, reusing this one's postings for every unchanged note."""
        notes = {p: n for p, n in vault.notes.items() if self.audience == "owner" or n.public}
        changed = {p for p, n in notes.items() if self.notes.get(p) is not n}
        removed = [p for p in self.notes if p not in notes]
        return self._assemble(
            self.audience, notes, {p: analyses[p] for p in notes}, vault, self.body, self.fields, changed, removed
        )

    @classmethod
    def _assemble(cls, audience, notes, analyses, vault, body, fields, changed, removed=()) -> "Index":
        body = body.evolved(removed, {p: analyses[p].body for p in changed})
        fields = fields.evolved(removed, {p: analyses[p].field_terms() for p in changed})
        edges = {p: tuple((t, k) for t, k in vault.edges.get(p, ()) if t in notes) for p in notes}
        back: dict[str, list[tuple[str, str]]] = {}
        for source, targets in edges.items():
            for target, kind in targets:
                back.setdefault(target, []).append((source, kind))
        backlinks = {p: tuple(v) for p, v in back.items()}
        return cls(audience, notes, analyses, body, fields, edges, backlinks, vault.resolver)
