"""From a question to ranked sources: score the notes that can score, then walk the graph."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from .graph import SEEDS, expand_by_graph
from .index import Index
from .scoring import (
    BONUS_MAX,
    FIELD_BOUNDS,
    SEMANTIC_FLOOR,
    Exact,
    Held,
    Query,
    Reason,
    Score,
    bonus_share,
    pair_labels,
    pair_points,
    question_pairs,
    score_note,
    semantic_unit,
)
from .semantic import Closeness
from .spelling import POOL, Spelling, ready

HISTORY_TURNS = 2  # earlier user questions that give a follow-up its subject
FOLLOW_UP_POOL = 10  # a follow-up's notes: the best this many for the question alone and for the conversation
# The notes the pairs signal orders (by_phrases): a fixed number, so that the first notes are the
# same whatever top_k a caller asks (3, 5 or 10 notes, one ranking cut at three places). Five,
# the daemon's SEARCH_TOP_K: against the first ten, dev hit@1 tune 1,196 -> 1,201 of 1,745
# (+6 / -1), test 571 -> 572 of 872 (+3 / -2), hit@5 +1 and +2 (eval/JOURNAL.md, round 47).
PAIRS_POOL = 5
NEW_SUBJECT_DISCOUNT = 0.4  # a note found through the conversation, when the question does not open as a follow-up (with_conversation)
# « et … », « ok, … », « mais … », « d'accord, … »: how French visitors carry on (56 of the 65 follow-ups of the dev sets)
_FOLLOW_UP_OPENER = re.compile(
    r"[\W_]*(?:et|ok|okay|ouais|oui|non|mais|alors|sinon|puis|ensuite|ah|d['’ʼ]accord|du coup|merci|super|parfait)(?![\w-])",
    re.IGNORECASE,
)

_SLACK = 1e-6  # a bound is summed in another order than score_note's total: keep float rounding out
_SHARES = object()  # Index.derived key: each note's tie-breaker share

Semantic = Callable[[str], Mapping[str, Closeness]]  # a question's text -> the notes close to it in meaning


@dataclass(frozen=True)
class Source:
    slug: str
    title: str
    type: str | None
    score: float
    reasons: tuple
    url: str | None
    path: str
    passages: tuple = ()  # the answer.passages.Passage objects the prompt quotes from this note (set by the engine)

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
    context: tuple = ()  # the answer.passages.Passage objects the prompt quotes, in its order (set by the engine)
    # meaning was ready but the question could not be embedded (set by the engine): ranked by
    # words alone, so neither it nor its answer is kept as meaning's
    unembedded: bool = False

    def to_dict(self) -> dict:
        return {
            "results": [s.to_dict() for s in self.sources],
            "grounded": self.grounded,
            "vault_size": self.vault_size,
            "took_ms": round(self.took_ms, 3),
        }


def score_all(query: Query, index: Index, *, exhaustive: bool = False, keep: int | None = None, min_seed_score: float = 0.0) -> dict[str, Score]:
    """The notes with a positive score. `exhaustive` scores every note instead of only the
    candidates: slower, and there only to prove the fast path changes nothing.

    With `keep` (how many notes the caller ranks), a note whose only signal is its body text
    (plus its priority and hub bonus) is scored only if it can still reach the `keep` best, or
    is a neighbour of a graph seed: the notes left out could not appear in the results or change
    the graph walk, so `search()` returns exactly what scoring every note returns.
    """
    paths: Iterable[str]
    if exhaustive:
        paths = index.notes
    elif keep is None:
        paths = index.candidates(query.unique) | query.semantic.keys()
    else:
        return _score_pruned(query, index, max(keep, SEEDS), min_seed_score)
    scores = {}
    for path in paths:
        score = score_note(path, query, index)
        if score.points > 0:
            scores[path] = score
    return scores


def _shares(index: Index) -> Mapping[str, float]:
    """{path: what priority and hub add to the note, as a share of its evidence}, once per index."""
    return index.derived(_SHARES, lambda: {p: bonus_share(n) for p, n in index.notes.items()})


Loose = dict[str, list[tuple[Exact, float]]]  # path -> (a signal's exact points, its bound) for the bounds worth refining


class FieldBounds(NamedTuple):
    """What `_field_bounds` finds of the notes holding a stem of the question in a field."""

    bounds: dict[str, float]
    loose: Loose
    held: Held


def _field_bounds(query: Query, index: Index) -> FieldBounds:
    """For each note holding a stem of the question in a frontmatter field, at least what its
    field signals can earn (`Index.field_hits`): the sum of each signal's bound (`SIGNALS`) for
    the idf of the question's stems its field holds. Also the signals whose bound is loose
    (every declared question's stems pooled) and cheap to replace by their exact points, with
    that bound, which `_score_pruned` refines; and for each field signal the notes whose field
    holds some stem of the question, the only ones it can score (`score_note`'s `held`)."""
    information = query.information
    hits = [index.field_hits(term) for term in query.unique]
    held: dict[str, dict[str, float]] = {f.signal: {} for f in FIELD_BOUNDS}
    for term, found in zip(query.unique, hits, strict=True):
        idf = query.idf[term]
        for f in FIELD_BOUNDS:
            shared = held[f.signal]
            for path, times in found.held[f.field].items():
                shared[path] = shared.get(path, 0.0) + idf * times
    bounds = dict.fromkeys(set().union(*(found.paths for found in hits)), 0.0)
    loose: Loose = {}
    for f in FIELD_BOUNDS:
        for path, shared_idf in held[f.signal].items():
            bound = f.bound(shared_idf, information)
            bounds[path] += bound
            if f.exact is not None and bound > 0:
                loose.setdefault(path, []).append((f.exact, bound))
    return FieldBounds(bounds, loose, held)


def _score_pruned(query: Query, index: Index, keep: int, min_seed_score: float) -> dict[str, Score]:
    """score_all with `keep`: notes best-first by an upper bound on their points, each scored
    exactly until the bound falls below the keep-th best exact score found so far."""
    scores: dict[str, Score] = {}
    if not query.terms and not query.semantic:
        return scores
    bm25, semantic = query.bm25, query.semantic
    raw_bound = query.bm25_unit
    best: list[float] = []  # the `keep` best exact points so far, best first

    def floor() -> float:
        return best[keep - 1] if len(best) >= keep else -1.0

    def record(points: float) -> None:
        if len(best) < keep or points > best[-1]:
            best.append(points)
            best.sort(reverse=True)
            del best[keep:]

    # Notes with a stem of the question in a field: bound = (fields + BM25 + meaning) × tie-breakers.
    fields, loose, held = _field_bounds(query, index) if query.terms else FieldBounds({}, {}, {})
    shares = _shares(index)
    get, sem = bm25.get, semantic.get
    evidence = {path: bound + raw_bound * get(path, 0.0) + sem(path, 0.0) for path, bound in fields.items()}
    ranked = sorted(((e * (1.0 + shares[p]) + _SLACK, p) for p, e in evidence.items()), reverse=True)
    analyses = index.analyses
    for bound, path in ranked:
        if bound < floor():
            break  # every later note has a lower bound
        if path in loose:  # those signals' exact points, found in a fraction of a whole score
            tighter = evidence[path] - sum(bound - exact(analyses[path], query, index) for exact, bound in loose[path])
            if tighter * (1.0 + shares[path]) + _SLACK < floor():
                continue  # a note left out, like those after the break
        score = score_note(path, query, index, held=held)
        if score.points > 0:
            scores[path] = score
            record(score.points)
    # Notes whose only signals are their body text and their meaning (plus the tie-breakers).
    factor = 1.0 + BONUS_MAX
    last = floor()
    # the notes that cannot reach the floor already are left out before sorting (none while it is -1)
    body_only = _body_only(bm25, semantic, fields, raw_bound, factor, last)
    if len(body_only) > keep:
        pending: list[tuple[Score, str]] = []
        for path in sorted(body_only, key=lambda p: (-body_only[p], p)):
            if body_only[path] < floor():
                break  # every later note has a lower bound
            score = score_note(path, query, index, in_fields=False)
            pending.append((score, path))
            record(score.points)
        last = floor()
        scored = [(score, p) for score, p in pending if score.points >= last]
    else:
        scored = [(score_note(p, query, index, in_fields=False), p) for p in body_only]
    for score, path in scored:
        if score.points > 0:
            scores[path] = score
    # A note left out next to a graph seed must keep its own score, as when every note is
    # scored (one that scores 0 is left to the graph walk, as it would be).
    for seed in _seeds(scores, min_seed_score):
        for path, _ in (*index.edges.get(seed, ()), *index.backlinks.get(seed, ())):
            if path not in scores and (path in bm25 or path in fields or path in semantic):
                score = score_note(path, query, index)
                if score.points > 0:
                    scores[path] = score
    return scores


def _body_only(
    bm25: Mapping[str, float], semantic: Mapping[str, float], fields: Mapping[str, float], raw_bound: float, factor: float, last: float
) -> dict[str, float]:
    """{path: the most its body text and its meaning can earn, tie-breakers included} of the
    notes with no stem of the question in a field, for those whose most is at least `last`.
    A note without meaning is bounded by its BM25 alone, the same sum as one with it (0.0
    added), and those bounds are made in numpy: a question's common word holds some 2,000 of
    the 10,000 generated notes' bodies, of which a few dozen can reach the floor."""
    import numpy as np

    paths = list(bm25)
    most = np.fromiter(bm25.values(), dtype=np.float64, count=len(paths))
    most *= raw_bound
    most *= factor
    most += _SLACK
    found = np.flatnonzero(most >= last)
    out = {p: bound for p, bound in zip(map(paths.__getitem__, found.tolist()), most[found].tolist(), strict=True) if p not in fields and p not in semantic}
    get = bm25.get
    for p, points in semantic.items():
        if p not in fields and (bound := (raw_bound * get(p, 0.0) + points) * factor + _SLACK) >= last:
            out[p] = bound
    return out


def _seeds(scores: dict[str, Score], min_seed_score: float) -> list[str]:
    """The graph walk's seeds (expand_by_graph's own rule)."""
    return sorted((p for p, s in scores.items() if s.points >= min_seed_score), key=lambda p: (-scores[p].points, p))[:SEEDS]


def _rank(scores: dict[str, Score]) -> list[tuple[str, Score]]:
    return sorted(scores.items(), key=lambda item: (-item[1].points, item[0]))


def by_phrases(ranked: list[tuple[str, Score]], query: Query, index: Index) -> list[tuple[str, Score]]:
    """The first notes search ranked (`PAIRS_POOL`), each with its pairs signal
    (`scoring.pair_points`: the question's words side by side in it), ranked again: it orders
    the notes found and finds none, so the fast path stays exact. A follow-up's pairs are its
    own words'. On the 1,267 dev questions (the first ten ordered), hit@1 tune +18 / −10 and
    test +13 / −11: the personal vault's notes of prose +15 / −6, the curated and documentation
    vaults +5 / −5 and +11 / −10 (eval/JOURNAL.md, round 22)."""
    pairs = question_pairs(query, index)
    points = pair_points([path for path, _ in ranked], pairs, index) if pairs else {}
    if not points:
        return ranked
    label = pair_labels(query)
    out = []
    for path, score in ranked:
        if path in points:
            gained, found = points[path]
            detail = "mots côte à côte : " + ", ".join(f"« {label(pair)} »" for pair in found)
            score = Score(score.points + gained, [*score.reasons, Reason("pairs", gained, detail)])
        out.append((path, score))
    return _rank(dict(out))


def by_spelling(ranked: list[tuple[str, Score]], text: str, asked: Query, spelling: Spelling, index: Index) -> list[tuple[str, Score]]:
    """The notes search ranked, the first POOL compared with `text` (a follow-up's with its
    conversation) by their words' pieces (`spelling`): one whose cosine stands out earns
    points in the unit of meaning's (a BM25 deviation of `asked`'s), and all are ranked again.
    It finds no note, so the fast path stays exact. Round 38, on the dev sets: hit@1 tune
    753 → 764 (+16 / −5), test 357 → 367 (+12 / −2), no vault losing."""
    unit = asked.unit if asked.unit is not None else max(semantic_unit(asked.bm25.values(), asked.bm25_scale, len(index)), SEMANTIC_FLOOR)
    gained = spelling.points(text, [path for path, _ in ranked], unit)
    if not gained:
        return ranked
    out = dict(ranked)
    for path, (points, cosine, z) in gained.items():
        score = out[path]
        detail = f"mots écrits de même (cosinus {cosine:.2f}, {z:.1f} écarts-types)"
        out[path] = Score(score.points + points, [*score.reasons, Reason("spelling", points, detail)])
    return _rank(out)


def earlier_questions(history: Sequence[dict] | None) -> list[str]:
    """The visitor's last HISTORY_TURNS questions of a conversation: a follow-up's subject. A
    blank turn says nothing: counted, it made the question its own conversation, its points doubled."""
    said = [content for t in (history or ()) if t.get("role") == "user" and (content := t.get("content", "")).strip()]
    return said[-HISTORY_TURNS:]


def with_history(q: str, history: Sequence[dict] | None) -> str | None:
    """A follow-up as search rewrites it (its earlier questions, then itself), or None when
    there is no conversation: the text a follow-up's notes, and its meaning, are found by."""
    earlier = earlier_questions(history)
    return " ".join([*earlier, q]) if earlier else None


def opens_as_follow_up(q: str) -> bool:
    """Whether `q` carries the conversation's subject on (`_FOLLOW_UP_OPENER`); any other
    question may change it."""
    return bool(_FOLLOW_UP_OPENER.match(q))


def with_conversation(own: Mapping[str, Score], in_context: Mapping[str, Score], follows: bool) -> dict[str, Score]:
    """Each note's points for a question asked in a conversation, from its points for the
    question alone (`own`) and for the conversation's text (`in_context`).

    A question that opens as a follow-up (`follows`, `opens_as_follow_up`) carries the subject
    on (search hands it the notes `_pooled` keeps, scored on both sides): a note earns both, so the
    note that both the question's own words and the conversation point to comes first (the
    better of the two, the conversation's at 0.9, before round 23). Any other question may
    change the subject, and what its own words find must then win, or the notes' silence: a
    note found only through the conversation keeps NEW_SUBJECT_DISCOUNT of its points, and the
    better of the two counts. On the 1,357 dev questions of sets one to eleven (217 tune and
    102 test follow-ups), both added: hit@1 tune +16 / −6, test +8 / −0; asked after another
    subject, 497 questions first 320 times at 0.9 and 346 at 0.4 (348 alone), and 84 off-topic
    questions grounded 59 times and 31 (29 alone) (README, "Follow-ups and new subjects")."""
    scores = dict(own)
    share = 1.0 if follows else NEW_SUBJECT_DISCOUNT
    for path, score in in_context.items():
        mine = scores.get(path, Score())
        if not follows and score.points * share <= mine.points:
            continue  # its own points are the better: the conversation's reasons are not written
        kept = [Reason(r.signal, r.points * share, f"{r.detail} (avec la conversation)") for r in score.reasons]
        scores[path] = Score(mine.points + score.points, [*mine.reasons, *kept]) if follows else Score(score.points * share, kept)
    return scores


Scored = dict[str, Score]


def _pooled(own: Scored, in_context: Scored, query: Query, context: Query, index: Index, size: int) -> tuple[Scored, Scored]:
    """A follow-up's notes (`with_conversation` adds their two scores): the `size` best for the
    question alone and the `size` best for the conversation, each scored on both sides. The
    best of each side are the same whether search pruned or scored every note, so the sum of
    their two scores ranks them alike either way; a note missing from a side's scores there is
    no neighbour of its seeds (the graph walk adds them all), so its own score is all it has."""
    paths = {path for scores in (own, in_context) for path, _ in _rank(scores)[:size]}

    def side(scores: Scored, asked: Query) -> Scored:
        both = {path: scores.get(path) or score_note(path, asked, index) for path in paths}
        return {path: score for path, score in both.items() if score.points > 0}

    return side(own, query), side(in_context, context)


def _as_read(index: Index, written: str | None, path: str) -> str | None:
    """A field a page's address is made of (`url: /prive/Plan.md`, `url: "[[Plan]]"`), or None
    when this audience may not read it whole: a link or a typed path to a note it may not see
    (`Index.readable_field`) is no part of an address it is given."""
    return written if written is None or index.readable_field(written, path) == written else None


def search(
    q: str,
    index: Index,
    *,
    top_k: int,
    min_score: float,
    url_for=lambda note_type, slug, path, slug_written, url_written: None,
    history: Sequence[dict] | None = None,
    exhaustive: bool = False,
    semantic: Semantic | None = None,
) -> SearchResult:
    """Ranked sources for `q` from one audience's index, and whether they ground an answer.

    With `history`, the visitor's earlier questions are searched together with this one, so a
    follow-up (« et avec quel modèle ? ») finds the notes the conversation is about; a note
    found that way counts as `with_conversation` says.
    `semantic`: the notes close in meaning to a text (the semantic index of this audience, when
    its embeddings are ready); without it, the ranking is the lexical one.
    """
    started = time.perf_counter()
    query = Query.parse(q, index, semantic(q) if semantic else None)
    spelling = ready(index)

    def scored(query: Query, keep: int = max(top_k, PAIRS_POOL)) -> dict[str, Score]:
        if spelling is not None:
            keep = max(keep, POOL)  # the candidates by_spelling compares are the true first ones
        return expand_by_graph(score_all(query, index, exhaustive=exhaustive, keep=keep, min_seed_score=min_score), index, min_score)

    rewritten = with_history(q, history)
    asked = query
    if rewritten is None:
        scores = scored(query)
    else:
        context = asked = Query.parse(rewritten, index, semantic(rewritten) if semantic else None)
        if opens_as_follow_up(q):
            pool = max(top_k, FOLLOW_UP_POOL)
            own, in_context = _pooled(scored(query, pool), scored(context, pool), query, context, index, pool)
            scores = with_conversation(own, in_context, follows=True)
        else:
            scores = with_conversation(scored(query), scored(context), follows=False)
    first = _rank(scores)
    if spelling is not None:
        first = by_spelling(first, rewritten or q, asked, spelling, index)
    ranked = [*by_phrases(first[:PAIRS_POOL], query, index), *first[PAIRS_POOL:top_k]][:top_k]  # pairs only add: the rest stays below
    sources = tuple(
        Source(
            slug=(note := index.notes[path]).slug,
            title=index.readable_title(path),
            type=index.readable_field(note.type, path),
            score=score.points,
            reasons=tuple(score.reasons),
            # from its own note alone, and its `slug:` and `url:` (a Hugo front matter's too: `Note.published_as`)
            # only as this audience may read them
            url=url_for(note.type, note.slug, note.path, *(_as_read(index, written, path) for written in note.published_as)),
            path=path,
        )
        for path, score in ranked
    )
    grounded = bool(sources) and sources[0].score >= min_score
    return SearchResult(query, sources, grounded, len(index), (time.perf_counter() - started) * 1000)
