"""From a question to ranked sources: score the notes that can score, then walk the graph."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence

from ._graph import expand_by_graph
from ._index import Index
from ._scoring import Query, Reason, Score, score_note

HISTORY_TURNS = 2  # earlier user questions that give a follow-up its subject
HISTORY_DISCOUNT = 0.9  # a note found through the conversation ranks a little below one the question names


@dataclass(frozen=True)
class Source:
    slug: str
    title: str
    type: str | None
    score: float
    reasons: tuple
    url: str | None
    path: str

    def to_dict(self) -> dict:
        return {
            "slug": self.slug,
            "title": self.title,
            "type": self.type,
            "score": round(self.score, 3),
            "reasons": [r.to_dict() for r in self.reasons],
            "url": self.url,
            "path": self.path,
        }


@dataclass(frozen=True)
class SearchResult:
    query: Query
    sources: tuple[Source, ...]
    grounded: bool
    vault_size: int
    took_ms: float

    def to_dict(self) -> dict:
        return {
            "results": [s.to_dict() for s in self.sources],
            "grounded": self.grounded,
            "vault_size": self.vault_size,
            "took_ms": round(self.took_ms, 3),
        }


def score_all(query: Query, index: Index, *, exhaustive: bool = False) -> dict[str, Score]:
    """Every note with a positive score. `exhaustive` scores every note instead of only the
    candidates: slower, and there only to prove the fast path changes nothing."""
    paths = index.notes if exhaustive else index.candidates(query.unique)
    scores = {}
    for path in paths:
        score = score_note(path, query, index)
        if score.points > 0:
            scores[path] = score
    return scores


def _rank(scores: dict[str, Score]) -> list[tuple[str, Score]]:
    return sorted(scores.items(), key=lambda item: (-item[1].points, item[0]))


def search(
    q: str,
    index: Index,
    *,
    top_k: int,
    min_score: float,
    url_for=lambda note_type, slug: None,
    history: Sequence[dict] | None = None,
    exhaustive: bool = False,
) -> SearchResult:
    """Ranked sources for `q` from one audience's index, and whether they ground an answer.

    With `history`, the visitor's earlier questions are searched together with this one, so a
    follow-up (« et avec quel modèle ? ») finds the notes the conversation is about.
    """
    started = time.perf_counter()
    query = Query.parse(q, index)
    scores = expand_by_graph(score_all(query, index, exhaustive=exhaustive), index, min_score)
    earlier = [t.get("content", "") for t in (history or ()) if t.get("role") == "user"][-HISTORY_TURNS:]
    if earlier:
        context = Query.parse(" ".join([*earlier, q]), index)
        in_context = expand_by_graph(score_all(context, index, exhaustive=exhaustive), index, min_score)
        for path, score in in_context.items():
            points = score.points * HISTORY_DISCOUNT
            if points > scores.get(path, Score()).points:
                reasons = [
                    Reason(r.signal, r.points * HISTORY_DISCOUNT, f"{r.detail} (avec la conversation)")
                    for r in score.reasons
                ]
                scores[path] = Score(points, reasons)
    ranked = _rank(scores)[:top_k]
    sources = tuple(
        Source(
            slug=(note := index.notes[path]).slug,
            title=note.title,
            type=note.type,
            score=score.points,
            reasons=tuple(score.reasons),
            url=url_for(note.type, note.slug),
            path=path,
        )
        for path, score in ranked
    )
    grounded = bool(sources) and sources[0].score >= min_score
    return SearchResult(query, sources, grounded, len(index), (time.perf_counter() - started) * 1000)
