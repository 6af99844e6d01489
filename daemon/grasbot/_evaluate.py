"""Retrieval quality on a file of questions with the notes that answer them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from ._exceptions import ConfigError


@dataclass(frozen=True)
class Case:
    question: str
    expected: frozenset[str]  # vault-relative paths
    line: int


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

    def to_dict(self) -> dict:
        return {
            "questions": len(self.outcomes),
            "hit@1": round(self.hit_at(1), 4),
            "hit@5": round(self.hit_at(5), 4),
            "mrr@10": round(self.mrr_at(10), 4),
            "misses": [
                {"question": o.case.question, "expected": sorted(o.case.expected), "rank": o.rank, "got": list(o.ranked[:3])}
                for o in self.misses()
            ],
        }


def read_cases(path: str | Path) -> list[Case]:
    """`question<TAB>path;path` lines; `#` lines and blank lines are comments."""
    cases = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the questions file {path}: {exc}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        question, tab, paths = line.partition("\t")
        expected = frozenset(p.strip() for p in paths.split(";") if p.strip())
        if not tab or not question.strip() or not expected:
            raise ConfigError(f"{path}:{number}: expected 'question<TAB>path;path', got {line[:60]!r}")
        cases.append(Case(question.strip(), expected, number))
    if not cases:
        raise ConfigError(f"{path}: no questions in the file")
    return cases


def evaluate(cases: Sequence[Case], rank: Callable[[str], Sequence[str]]) -> Report:
    """`rank(question)` returns vault-relative paths, best first (at least the first 10)."""
    return Report(tuple(Outcome(case, tuple(rank(case.question))) for case in cases))
