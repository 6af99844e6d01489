"""Retrieval quality on a file of questions with the notes that answer them, beside the plain
BM25 that GrasBot has to beat (issue 17: held-out visitor questions are what it is judged on)."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

from ._analysis import tokenize_fr
from ._exceptions import ConfigError
from ._vault import Note

HISTORY_SEPARATOR = "||"


@dataclass(frozen=True)
class Case:
    question: str
    expected: frozenset[str]  # vault-relative paths
    line: int
    history: tuple[str, ...] = ()  # the visitor's earlier questions, for a follow-up

    @property
    def turns(self) -> list[dict]:
        """The history as the daemon takes it (the assistant's replies are not in the file)."""
        return [{"role": "user", "content": q} for q in self.history]


@dataclass(frozen=True)
class Outcome:
    case: Case
    ranked: tuple[str, ...]  # paths, best first

    @property
    def rank(self) -> int | None:
        for position, path in enumerate(self.ranked, 1):
            if path in self.case.expected:
                return position
        return None


@dataclass(frozen=True)
class Report:
    outcomes: tuple[Outcome, ...]

    def hit_at(self, k: int) -> float:
        return sum(1 for o in self.outcomes if o.rank is not None and o.rank <= k) / len(self.outcomes)

    def mrr_at(self, k: int) -> float:
        return sum(1 / o.rank for o in self.outcomes if o.rank is not None and o.rank <= k) / len(self.outcomes)

    def misses(self, k: int = 1) -> list[Outcome]:
        return [o for o in self.outcomes if o.rank is None or o.rank > k]

    def figures(self) -> dict:
        return {"hit@1": round(self.hit_at(1), 4), "hit@5": round(self.hit_at(5), 4), "mrr@10": round(self.mrr_at(10), 4)}

    def to_dict(self) -> dict:
        return {
            "questions": len(self.outcomes),
            **self.figures(),
            "misses": [
                {"question": o.case.question, "expected": sorted(o.case.expected), "rank": o.rank, "got": list(o.ranked[:3])}
                for o in self.misses()
            ],
        }


def read_cases(path: str | Path) -> list[Case]:
    """`question<TAB>path;path[<TAB>earlier question || earlier question]` lines; `#` lines and
    blank lines are comments."""
    cases = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the questions file {path}: {exc}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        question, tab, rest = line.partition("\t")
        paths, _, earlier = rest.partition("\t")
        expected = frozenset(p.strip() for p in paths.split(";") if p.strip())
        if not tab or not question.strip() or not expected:
            raise ConfigError(f"{path}:{number}: expected 'question<TAB>path;path', got {line[:60]!r}")
        history = tuple(q.strip() for q in earlier.split(HISTORY_SEPARATOR) if q.strip())
        cases.append(Case(question.strip(), expected, number, history))
    if not cases:
        raise ConfigError(f"{path}: no questions in the file")
    return cases


def evaluate(cases: Sequence[Case], rank: Callable[[Case], Sequence[str]]) -> Report:
    """`rank(case)` returns vault-relative paths, best first (at least the first 10)."""
    return Report(tuple(Outcome(case, tuple(rank(case))) for case in cases))


class PlainBM25:
    """The baseline: Okapi BM25 (Lucene's idf, k1 1.2, b 0.75) over each whole note as one flat
    field — title, file name, every frontmatter text field and the body — with GrasBot's own
    French analysis. No passages, no graph, no weights: what a plain search engine gives."""

    K1, B = 1.2, 0.75

    def __init__(self, notes: Mapping[str, Note], body: Callable[[str], str] | None = None) -> None:
        """`body(path)`: the note's text as the audience reads it (links to hidden notes keep their
        label only); the raw body when omitted."""
        read = body or (lambda path: notes[path].body)
        self._counts = {path: Counter(tokenize_fr(_flat_text(note, read(path)))) for path, note in notes.items()}
        self._lengths = {path: sum(c.values()) for path, c in self._counts.items()}
        self._avg = (sum(self._lengths.values()) / len(self._lengths)) if self._lengths else 1.0
        self._df: Counter[str] = Counter()
        for counts in self._counts.values():
            self._df.update(counts.keys())

    def rank(self, question: str, k: int = 10) -> list[str]:
        n, terms = len(self._counts), set(tokenize_fr(question))
        idf = {t: math.log(1 + (n - self._df[t] + 0.5) / (self._df[t] + 0.5)) for t in terms if self._df[t]}
        scores = {}
        for path, counts in self._counts.items():
            norm = self.K1 * (1 - self.B + self.B * self._lengths[path] / self._avg)
            score = sum(idf[t] * counts[t] * (self.K1 + 1) / (counts[t] + norm) for t in idf if t in counts)
            if score > 0:
                scores[path] = score
        return sorted(scores, key=lambda p: (-scores[p], p))[:k]


def _flat_text(note: Note, body: str) -> str:
    fields = (note.title, note.name, *note.aliases, *note.answers, *note.tags, *note.domains, body)
    return "\n".join(f for f in fields if f)
