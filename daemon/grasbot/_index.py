"""The searchable form of a vault, one per audience.

A visitor's index is built from public notes only: a private note is not hidden at query
time, it is simply absent — from the scores, the BM25 statistics, the graph and the counts.
Each note is analysed once (`analyse_note`), and the result is shared by both audiences and
reused by a reload for every note whose bytes did not change.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from . import _analysis
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


# ---- body analysis, fast: equal to Counter(tokenize_fr(text)) (tests/test_fast_path.py checks it),
# but folds the text in C and stems each distinct word once. A body is most of a vault's bytes,
# and tokenize_fr's per-character and per-word Python loops made a cold load of 10,000 notes
# take ~40 s.

_COMBINING_LATIN = re.compile("[\u0300-\u036f]+")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
# ASCII bytes that `_analysis._WORD` can match (letters, digits) and the apostrophe; the rest splits.
_WORD_BYTES = bytes(c if c == 39 or (c < 128 and chr(c).isalnum()) else 32 for c in range(256))
_NEEDLES = {r"c\+\+": "c++", r"c#": "c#", r"(?<!\w)\.net\b": ".net"}  # a literal each match contains
_TERMS: dict[object, str] = {}  # raw word (str or ASCII bytes) -> its stem, "" for a stopword


def _strip_combining(match: re.Match) -> str:
    return "".join(ch for ch in match.group() if not unicodedata.combining(ch))


def _fold(text: str) -> str:
    """_analysis.fold: combining marks dropped by one C regex, then (rarely) the exact rule."""
    text = unicodedata.normalize("NFKD", text.casefold().replace("œ", "oe").replace("æ", "ae"))
    text = _COMBINING_LATIN.sub("", text)
    return text if text.isascii() else _NON_ASCII.sub(_strip_combining, text)


def _term(word: str) -> str:
    """tokenize_fr's treatment of one `_WORD` match: elision, stopword, stem."""
    parts = word.split("'")
    if len(parts) > 1 and parts[0] in _analysis._ELISIONS:
        parts = parts[1:]
    word = "".join(parts)
    if word in _analysis.STOPWORDS or not (len(word) > 1 or word.isdigit()):
        return ""
    return _analysis._stem(word)


def body_counts(text: str) -> dict[str, int]:
    """Counter(tokenize_fr(text)), faster."""
    text = _fold(text)
    if "’" in text or "‘" in text:
        text = text.replace("’", "'").replace("‘", "'")
    for pattern, replacement in _analysis._SPECIALS:
        needle = _NEEDLES.get(pattern.pattern)
        if needle is None or needle in text:  # a substring test is much cheaper than the scan
            text = pattern.sub(replacement, text)
    if text.isascii():
        raw = Counter(text.encode("ascii").translate(_WORD_BYTES).split())
    else:
        raw = Counter(_analysis._WORD.findall(text))
    out: dict[str, int] = {}
    get = _TERMS.get
    for word, count in raw.items():
        term = get(word)
        if term is None:
            s = word.decode("ascii") if isinstance(word, bytes) else word
            if "'" in s and _analysis._WORD.fullmatch(s) is None:
                # stray apostrophes (« 'mot », « a''b »): split the way _WORD would
                for piece in _analysis._WORD.findall(s):
                    if t := _term(piece):
                        out[t] = out.get(t, 0) + count
                continue
            term = _term(s)
            if len(_TERMS) < 1_000_000:
                _TERMS[word] = term
        if term:
            out[term] = out.get(term, 0) + count
    return out


def analyse_note(note: Note) -> NoteAnalysis:
    return NoteAnalysis(
        aliases=_labeled(note.aliases),
        title=tuple(tokenize_fr(note.title)),
        slug=tuple(tokenize_fr(note.slug.replace("-", " "))),
        answers=_labeled(note.answers),
        tags=_labeled(note.tags),
        domains=_labeled(note.domains),
        body=body_counts(f"{note.title}\n{note.name}\n{note.body}"),
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
    _memo: dict = field(default_factory=dict, compare=False, repr=False)  # term -> BM25 impacts

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
        for term in set(terms):
            impacts = self._impacts(term)
            if not scores:
                scores.update(impacts)  # 0.0 + x is x: same floats as adding one by one
                continue
            get = scores.get
            for path, value in impacts.items():
                scores[path] = get(path, 0.0) + value
        return scores

    def _impacts(self, term: str) -> Mapping[str, float]:
        """{path: one term's BM25 share}, computed once per index: an Index never changes."""
        memo = self._memo
        impacts = memo.get(term)
        if impacts is None:
            idf = self.idf(term)
            avg = self.body.total_length / len(self.body)
            length = self.body.length
            impacts = {
                path: idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * length(path) / avg))
                for path, tf in self.body.counts(term).items()
            }
            if len(memo) >= 4_096:
                memo.clear()
            memo[term] = impacts
        return impacts

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
        picked = {p: analyses[p] for p in notes}
        body = Postings.from_docs({p: a.body for p, a in picked.items()})
        fields = Postings.from_docs({p: a.field_terms() for p, a in picked.items()})
        return cls._assemble(audience, notes, picked, vault, body, fields, ())

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
