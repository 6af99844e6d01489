"""From a question to ranked sources: score the notes that can score, then walk the graph."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from itertools import chain
from typing import Sequence

from ._graph import SEEDS, expand_by_graph
from ._index import Index
from ._scoring import (
    ALIAS_POINTS,
    ANSWERS_THRESHOLD,
    TITLE_QUESTION_SHARE,
    BM25_MAX,
    DOMAIN_POINTS,
    LONG_TAG_POINTS,
    TAG_POINTS,
    TAXONOMY_CAP,
    TITLE_POINTS,
    HUB_POINTS,
    HUB_TYPES,
    PRIORITY_CAP,
    PRIORITY_STEP,
    Query,
    Reason,
    Score,
    answers_points,
    dice_points,
    score_note,
)

HISTORY_TURNS = 2  # earlier user questions that give a follow-up its subject
HISTORY_DISCOUNT = 0.9  # a note found through the conversation ranks a little below one the question names


_BONUS_MAX = PRIORITY_STEP * PRIORITY_CAP + HUB_POINTS + 1e-9  # the most priority and hub add to a note
_TAG_MAX = max(TAG_POINTS, LONG_TAG_POINTS)
_SLACK = 1e-6  # a bound is summed in another order than score_note's total: keep float rounding out


@dataclass(frozen=True)
class Source:
    slug: str
    title: str
    type: str | None
    score: float
    reasons: tuple
    url: str | None
    path: str
    passages: tuple = ()  # the _passages.Passage objects the prompt quotes from this note (set by the engine)

    def to_dict(self) -> dict:
        return {
            "slug": self.slug,
            "title": self.title,
            "type": self.type,
            "score": round(self.score, 3),
            "reasons": [r.to_dict() for r in self.reasons],
            "url": self.url,
            "path": self.path,
            "passages": [p.to_dict() for p in self.passages],
        }


@dataclass(frozen=True)
class SearchResult:
    query: Query
    sources: tuple[Source, ...]
    grounded: bool
    vault_size: int
    took_ms: float
    context: tuple = ()  # the _passages.Passage objects the prompt quotes, in its order (set by the engine)

    def to_dict(self) -> dict:
        return {
            "results": [s.to_dict() for s in self.sources],
            "grounded": self.grounded,
            "vault_size": self.vault_size,
            "took_ms": round(self.took_ms, 3),
        }


def score_all(
    query: Query, index: Index, *, exhaustive: bool = False, keep: int | None = None, min_seed_score: float = 0.0
) -> dict[str, Score]:
    """The notes with a positive score. `exhaustive` scores every note instead of only the
    candidates: slower, and there only to prove the fast path changes nothing.

    With `keep` (how many notes the caller ranks), a note whose only signal is its body text
    (plus its priority and hub bonus) is scored only if it can still reach the `keep` best, or
    is a neighbour of a graph seed: the notes left out could not appear in the results or change
    the graph walk, so `search()` returns exactly what scoring every note returns.
    """
    if exhaustive:
        paths = index.notes
    elif keep is None:
        paths = index.candidates(query.unique)
    else:
        return _score_pruned(query, index, max(keep, SEEDS), min_seed_score)
    scores = {}
    for path in paths:
        score = score_note(path, query, index)
        if score.points > 0:
            scores[path] = score
    return scores


def _bonus(note) -> float:
    """What priority and hub add to a note that scores (score_note's last two signals)."""
    points = PRIORITY_STEP * max(0.0, min(note.priority, PRIORITY_CAP)) if note.priority else 0.0
    return points + (HUB_POINTS if (note.type or "").lower() in HUB_TYPES else 0.0)


def _field_bounds(query: Query, index: Index) -> tuple[dict[str, float], dict[str, float]]:
    """For each note holding a stem of the question in a frontmatter field, at least what its
    field signals can earn (`Index.field_hits`): an alias, at most ALIAS_POINTS; a title or
    slug, at most its share of the question's idf; answers, at most what a Dice overlap with
    every stem the note's answers hold would give; tags and domains holding a stem, their full
    points. Also {path: the answers' part of its bound}: pooling every answer's stems makes
    that part loose, and `_score_pruned` refines it."""
    hits = [index.field_hits(term) for term in query.unique]
    title_idf: dict[str, float] = {}
    taxonomy: dict[str, float] = {}
    for term, found in zip(query.unique, hits):  # summed over the question's stems in their order
        idf = query.idf[term]
        for path in found.title:
            title_idf[path] = title_idf.get(path, 0.0) + idf
        for path, tags, domains in found.taxonomy:
            taxonomy[path] = taxonomy.get(path, 0.0) + _TAG_MAX * tags + DOMAIN_POINTS * domains
    # answers: the points of a Dice overlap of k question stems, by k (a handful of values)
    answered = Counter(chain.from_iterable(found.answers for found in hits))
    asked = len(query.unique)
    by_count = {}
    for k in set(answered.values()):
        dice = 2 * k / (k + asked)
        if dice >= ANSWERS_THRESHOLD:
            by_count[k] = dice_points(dice)
    pooled = {path: by_count[k] for path, k in answered.items() if k in by_count}
    # A bound sums its parts in one order: alias, title, answers, taxonomy. Most notes have an
    # answers part alone (0.0 + x is x), so only the few with an alias or a title are summed here.
    bounds = dict.fromkeys(set().union(*(found.paths for found in hits)), 0.0)
    bounds.update(pooled)
    aliased = frozenset().union(*(found.alias for found in hits))
    title_scale = TITLE_QUESTION_SHARE * query.information
    for path in aliased.union(title_idf):
        bound = ALIAS_POINTS if path in aliased else 0.0
        if path in title_idf:
            bound += TITLE_POINTS * (min(1.0, title_idf[path] / title_scale) if title_scale > 0 else 1.0)
        if path in pooled:
            bound += pooled[path]
        bounds[path] = bound
    for path, points in taxonomy.items():
        bounds[path] += min(TAXONOMY_CAP, points)
    return bounds, pooled


def _score_pruned(query: Query, index: Index, keep: int, min_seed_score: float) -> dict[str, Score]:
    """score_all with `keep`: notes best-first by an upper bound on their points, each scored
    exactly until the bound falls below the keep-th best exact score found so far."""
    scores: dict[str, Score] = {}
    if not query.terms:
        return scores
    bm25 = query.bm25
    raw_bound = BM25_MAX / query.bm25_scale
    best: list[float] = []  # the `keep` best exact points so far, best first

    def floor() -> float:
        return best[keep - 1] if len(best) >= keep else -1.0

    def record(points: float) -> None:
        if len(best) < keep or points > best[-1]:
            best.append(points)
            best.sort(reverse=True)
            del best[keep:]

    # Notes with a stem of the question in a field: bound = field maxima + BM25 + bonuses.
    fields, pooled = _field_bounds(query, index)
    bonuses = index.bonuses
    get = bm25.get
    ranked = sorted(
        [(bound + raw_bound * get(path, 0.0) + bonuses[path] + _SLACK, path) for path, bound in fields.items()],
        reverse=True,
    )
    analyses = index.analyses
    for bound, path in ranked:
        if bound < floor():
            break  # every later note has a lower bound
        if path in pooled:  # its answers' exact points, found in a fraction of a whole score
            if bound - pooled[path] + answers_points(analyses[path].answers, query.unique)[0] < floor():
                continue  # a note left out, like those after the break
        score = score_note(path, query, index)
        if score.points > 0:
            scores[path] = score
            record(score.points)
    # Notes whose only signal is their body text (plus priority and hub bonus).
    last = floor()
    if last > 0:  # the notes that cannot reach the floor already are left out before sorting
        least = (last - _BONUS_MAX) / raw_bound
        body_only = [p for p, raw in bm25.items() if raw >= least and p not in fields]
    else:
        body_only = [p for p in bm25 if p not in fields]
    if len(body_only) > keep:
        # Best first by BM25 (a bonus adds at most _BONUS_MAX); exact totals only where needed.
        body_only.sort(key=bm25.__getitem__, reverse=True)
        pending: list[tuple[Score, str]] = []
        for path in body_only:
            if raw_bound * bm25[path] + _BONUS_MAX < floor():
                break  # every later note has a lower BM25, so a lower bound too
            score = score_note(path, query, index, in_fields=False)
            pending.append((score, path))
            record(score.points)
        last = floor()
        body_only = [(score, p) for score, p in pending if score.points >= last]
    else:
        body_only = [(score_note(p, query, index, in_fields=False), p) for p in body_only]
    for score, path in body_only:
        if score.points > 0:
            scores[path] = score
    # A note left out next to a graph seed must keep its own score, as when every note is
    # scored (one that scores 0 is left to the graph walk, as it would be).
    for seed in _seeds(scores, min_seed_score):
        for path, _ in (*index.edges.get(seed, ()), *index.backlinks.get(seed, ())):
            if path not in scores and (path in bm25 or path in fields):
                score = score_note(path, query, index)
                if score.points > 0:
                    scores[path] = score
    return scores


def _seeds(scores: dict[str, Score], min_seed_score: float) -> list[str]:
    """The graph walk's seeds (expand_by_graph's own rule)."""
    return sorted((p for p, s in scores.items() if s.points >= min_seed_score), key=lambda p: (-scores[p].points, p))[:SEEDS]


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
    keep = {"exhaustive": exhaustive, "keep": top_k, "min_seed_score": min_score}
    scores = expand_by_graph(score_all(query, index, **keep), index, min_score)
    earlier = [t.get("content", "") for t in (history or ()) if t.get("role") == "user"][-HISTORY_TURNS:]
    if earlier:
        context = Query.parse(" ".join([*earlier, q]), index)
        in_context = expand_by_graph(score_all(context, index, **keep), index, min_score)
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
