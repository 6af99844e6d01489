"""How much one note answers one question, and why.

The weights are the seed's. Each signal adds its points with a reason a person can read, so
"why did this note come up?" always has an answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, NamedTuple

from ._analysis import tokenize_fr
from ._index import Index, Terms

ALIAS_POINTS = 10.0
TITLE_POINTS = 8.0
ANSWERS_MIN, ANSWERS_MAX = 5.0, 12.0
ANSWERS_THRESHOLD = 0.5  # Dice overlap below which a note's question is not the visitor's
TITLE_QUESTION_SHARE = 0.5  # a title holding this share of the question's idf earns full points
PARTIAL_TITLE = 0.5  # a title the question names in part earns this share of its points, pro rata
TAG_POINTS, LONG_TAG_POINTS, DOMAIN_POINTS = 4.0, 5.0, 3.0
TAXONOMY_CAP = 10.0  # so a note stuffed with tags cannot outweigh an alias
BM25_MAX = 5.0
BM25_FULL_SHARE = 0.4  # share of the question's BM25 ceiling (every term, saturated) worth full points
PRIORITY_STEP, PRIORITY_CAP = 0.1, 10.0
HUB_POINTS = 0.3
HUB_TYPES = frozenset({"moc", "hub", "index"})


class Reason(NamedTuple):
    """One signal's points and why (a named tuple: a search makes dozens of them)."""

    signal: str
    points: float
    detail: str

    def to_dict(self) -> dict:
        return {"signal": self.signal, "points": round(self.points, 3), "detail": self.detail}


@dataclass(frozen=True)
class Query:
    """A question analysed once, with what every note's score needs from the whole index."""

    text: str
    terms: Terms
    unique: frozenset[str]
    bm25: Mapping[str, float]  # raw BM25 of every note whose body holds a term of the question
    bm25_scale: float  # the raw score worth BM25_MAX points
    idf: Mapping[str, float]  # of each term of the question
    information: float  # the sum of those idf: how much the question says

    @classmethod
    def parse(cls, text: str, index: Index) -> "Query":
        """BM25 points are relative to the best note, so the ranking is BM25's own; but when even
        the best note covers little of the question, the points shrink, so that a question the
        vault barely touches cannot look grounded on BM25 alone."""
        terms = tuple(tokenize_fr(text))
        unique = frozenset(terms)
        bm25 = index.bm25(unique)
        scale = max(max(bm25.values(), default=0.0), BM25_FULL_SHARE * index.bm25_ceiling(unique))
        idf = {t: index.idf(t) for t in unique}
        return cls(text, terms, unique, bm25, scale, idf, sum(idf.values()))


@dataclass
class Score:
    points: float = 0.0
    reasons: list[Reason] = field(default_factory=list)

    def add(self, signal: str, points: float, detail: str) -> None:
        if points > 0:
            self.points += points
            self.reasons.append(Reason(signal, points, detail))


def _contains_run(haystack: Terms, needle: Terms) -> bool:
    n = len(needle)
    return any(haystack[i : i + n] == needle for i in range(len(haystack) - n + 1))


def score_note(path: str, query: Query, index: Index, *, in_fields: bool = True) -> Score:
    """Score one note of `index` for `query`; a note that shares nothing with it scores 0.
    `in_fields=False`: the caller knows no frontmatter field of the note holds a stem of the
    question (the inverted index says so), so only its text can score."""
    note = index.notes[path]
    score = Score()
    if not query.terms:
        return score
    if in_fields:
        _field_signals(score, note, index.analyses[path], query)

    raw = query.bm25.get(path, 0.0)
    if raw > 0:
        score.add("bm25", BM25_MAX * raw / query.bm25_scale, f"texte de la note (BM25 {raw:.2f})")

    if score.points > 0:
        if note.priority:
            priority = max(0.0, min(note.priority, PRIORITY_CAP))
            score.add("priority", PRIORITY_STEP * priority, f"priorité {note.priority:g}")
        if (note.type or "").lower() in HUB_TYPES:
            score.add("hub", HUB_POINTS, "note carrefour (MOC)")
    return score


def _field_signals(score: Score, note, fields, query: Query) -> None:
    """Alias, title or slug, answers, tags and domains, in that order."""
    unique = query.unique
    # an alias's first stem must be a stem of the question: a set lookup spares most the run search
    aliases = [(raw, a) for raw, a in fields.aliases if (not a or a[0] in unique) and _contains_run(query.terms, a)]
    if aliases:
        best = max(aliases, key=lambda pair: len(pair[1]))[0]
        score.add("alias", ALIAS_POINTS, f"alias « {best} »")

    title_points, title_detail = 0.0, ""
    for signal, terms, label in (("title", fields.title, note.title), ("slug", fields.slug, note.slug)):
        shared = unique.intersection(terms)
        if not shared:
            continue
        named = set(terms)
        covered = len(shared) / len(named)
        # A title is strong evidence when it names what the question is about, weak when it
        # names one common word of a long question (« Python » in a question about Airflow).
        weight = min(1.0, sum(query.idf[t] for t in shared) / (TITLE_QUESTION_SHARE * query.information))
        points = TITLE_POINTS * weight * (1.0 if covered == 1.0 else PARTIAL_TITLE * covered)
        if points > title_points:
            title_signal, title_points = signal, points
            title_detail = f"{'titre' if signal == 'title' else 'slug'} « {label} »" + ("" if covered == 1.0 else f" ({covered:.0%} des mots)")
    if title_points:
        score.add(title_signal, title_points, title_detail)

    points, answer = answers_points(fields.answers, unique)
    if points:
        score.add("answers", points, f"question « {answer} »")

    taxonomy = 0.0
    for raw, seq in fields.tags:
        if unique.issuperset(seq):
            points = min(LONG_TAG_POINTS if len(seq) > 1 else TAG_POINTS, TAXONOMY_CAP - taxonomy)
            taxonomy += points
            score.add("tag", points, f"tag #{raw}")
    for raw, seq in fields.domains:
        if unique.issuperset(seq):
            points = min(DOMAIN_POINTS, TAXONOMY_CAP - taxonomy)
            taxonomy += points
            score.add("domain", points, f"domaine {raw}")


def answers_points(answers, unique: frozenset[str]) -> tuple[float, str]:
    """The answers signal: the points of the note's question closest to the visitor's (Dice
    overlap of their stems) and that question, or (0.0, "") below ANSWERS_THRESHOLD."""
    best_dice, best_answer = 0.0, ""
    for raw, seq in answers:
        if unique.isdisjoint(seq):
            continue  # a Dice overlap of 0 never beats the best
        asked = set(seq)
        dice = 2 * len(asked & unique) / (len(asked) + len(unique))
        if dice > best_dice:
            best_dice, best_answer = dice, raw
    if best_dice < ANSWERS_THRESHOLD:
        return 0.0, ""
    return dice_points(best_dice), best_answer


def dice_points(dice: float) -> float:
    """The answers signal's points for a Dice overlap at or above ANSWERS_THRESHOLD; rising with
    it, so a bound on the overlap (search's pruning) is a bound on the points."""
    share = (dice - ANSWERS_THRESHOLD) / (1 - ANSWERS_THRESHOLD)
    return ANSWERS_MIN + (ANSWERS_MAX - ANSWERS_MIN) * share
