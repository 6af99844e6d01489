"""The walk along links: a note the question did not name, but that the best notes point to.

A neighbour inherits a share of the score of the note that brought it in, so it can round out
the context but never outrank its source. The walk happens inside one audience's index, so a
visitor's walk cannot step onto a private note.
"""

from __future__ import annotations

from .index import Index
from .scoring import Reason, Score

SEEDS = 3  # how many of the best notes lend their score to their neighbours
SHARE = {"linked": 0.3, "related": 0.3, "body": 0.2, "embed": 0.2}


def expand_by_graph(scores: dict[str, Score], index: Index, min_seed_score: float) -> dict[str, Score]:
    """Add the neighbours of the best-scored notes to `scores` (a new dict is returned)."""
    seeds = sorted(
        (p for p, s in scores.items() if s.points >= min_seed_score),
        key=lambda p: (-scores[p].points, p),
    )[:SEEDS]
    found: dict[str, Score] = {}
    for seed in seeds:
        seed_note = index.notes[seed]
        neighbours = [(t, k, "lien depuis") for t, k in index.edges.get(seed, ())]
        neighbours += [(s, k, "cité par") for s, k in index.backlinks.get(seed, ())]
        for path, kind, relation in neighbours:
            if path in scores:
                continue
            points = scores[seed].points * SHARE.get(kind, 0.2)
            if path not in found or points > found[path].points:
                detail = f"{relation} [{seed_note.slug}] ({kind})"
                found[path] = Score(points, [Reason("graph", points, detail)])
    return {**scores, **found}
