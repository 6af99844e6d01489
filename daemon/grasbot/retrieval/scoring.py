"""How much one note answers one question, and why.

Every signal is evidence on one scale: points grow with the information (idf) of the words a
field shares with the question, as a share of all the question says, so a match on « fait » is
worth little and a match on « Overton » a lot, whichever field holds it. Ten points is a field
(or a body) that says everything the question says. Meaning comes in as a semantic signal on
the same scale (the question's spread of BM25 points across the notes), which is how a z-score
fusion of BM25 and a sentence encoder ranks (issue 17: the fusion beat every lexical variant on
three vaults). Priority and hub are tie-breakers: a few per cent of the note's own evidence,
never enough to lift a weaker note over a clearly better one.

`SIGNALS` is the registry: every signal's name, kind, the most it gives, and for a frontmatter
field's signal the bound search's pruning reads (adding a signal changes this module and the
index, not search; `pairs` only orders the notes search found, in `search.by_phrases`). Each
score comes with its reasons, so "why did this note come up?" always has an answer.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import NamedTuple

from .analysis import spelled, tokenize_fr
from .index import K1, Index, NoteAnalysis, Terms
from .semantic import Closeness

SCALE = 10.0  # points of a field that says all the question says
ALIAS_WEIGHT = 1.0
TITLE_POINTS = 8.0
TITLE_QUESTION_SHARE = 0.5  # a title holding this share of the question's idf earns full points
PARTIAL_TITLE = 0.5  # a title the question names in part earns this share of its points, pro rata
SHORT_TITLE = 4  # stems: a shorter title earns its share of them (tune hit@1 of 1,105: +6 / −0; dropped under 3, +9 / −2)
ANSWERS_MAX = 12.0  # a declared question identical to the visitor's
ANSWERS_THRESHOLD = 0.5  # idf-weighted Dice below which a note's question is not the visitor's (0.4 grounded off-topic ones)
TAG_WEIGHT, LONG_TAG_WEIGHT, DOMAIN_WEIGHT = 0.5, 0.6, 0.3
TAXONOMY_CAP = 10.0  # so a note stuffed with tags cannot outweigh the rest
BM25_WEIGHT = 1.0  # body BM25 as a share of the question's ceiling, times SCALE
PAIR_WEIGHT = 0.2  # the question's words side by side in a note, a share of SCALE (tune hit@1 of 845, the first 30 ordered: 0.1 +3, 0.15 +4, 0.2 +8, 0.3 +2)
SEMANTIC_WEIGHT = 1.0  # a z-score of meaning against a z-score of the body's BM25
ASKED_WEIGHT = 0.5  # ... of a declared question's meaning (curated tune hit@1: 0.3-0.7 within a question, 1.0 worse)
ASKED_SAME = 0.8  # a declared question this close in meaning is the visitor's: the answers signal's points
SEMANTIC_MIN_Z = 0.5  # notes closer in meaning than this many deviations above the mean (1.0: docs tune hit@5 -1 question)
SEMANTIC_NOTES = 50  # ... and among them, the closest this many: what a search can afford to score
SEMANTIC_FLOOR = 0.5  # the semantic signal's unit when the body's BM25 barely varies (points)
ABBREVIATION_MIN = 5  # letters of a question's stem the vault lacks, for it to be read as a word it begins
PRIORITY_STEP, PRIORITY_CAP = 0.002, 10.0  # × the note's evidence: 2 % at priority 10
HUB_SHARE = 0.01
HUB_TYPES = frozenset({"moc", "hub", "index"})
BONUS_MAX = PRIORITY_STEP * PRIORITY_CAP + HUB_SHARE  # the most a tie-breaker adds, as a share

# Index.derived key: {a declared question's stems: the sum of their idf}, what its Dice overlap
# with any question divides by; 85 declared questions a search at 10,000 generated notes, each
# summed again per question before
_DECLARED_INFORMATION = object()


Bound = Callable[[float, float], float]  # (the question's idf a field holds, the question's information) -> the most points
Exact = Callable[[NoteAnalysis, "Query", Index], float]
Held = Mapping[str, Container[str]]  # a field signal -> the notes whose field holds a stem of the question


class Signal(NamedTuple):
    """One entry of the registry. `kind`: naming (the note's own fields name the subject), weak
    (found through its text, its meaning or a link: `grasbot log` suggests an alias), boost (a
    tie-breaker). `most`: the most points it can give, for a question that scores it at all.

    A signal matched on a frontmatter field also names that `field` (`index.FIELD_LAYOUT`) and
    its `bound`: the most it gives a note whose field holds stems of the question worth that
    much idf (each stem's idf counted once per tag or domain holding it). Search's pruning
    sums these bounds and skips a note they cannot lift (`search._field_bounds`). `exact`: the
    signal's own points, when its bound is loose and they cost little next to a whole score."""

    name: str
    kind: str
    most: float | None  # None: bounded per question (BM25's ceiling, the semantic unit)
    field: str | None = None
    bound: Bound | None = None
    exact: Exact | None = None


def alias_points(alias_idf: float, information: float) -> float:
    """An alias found as a run in the question: the share of the question it says."""
    return SCALE * ALIAS_WEIGHT * min(1.0, alias_idf / information) if information > 0 else 0.0


def title_points_for(shared_idf: float, information: float) -> float:
    """A title's points for the idf it shares with the question, before its coverage discount;
    rising with it, so a bound on the shared idf is a bound on the points."""
    if information <= 0:
        return 0.0
    return TITLE_POINTS * min(1.0, shared_idf / (TITLE_QUESTION_SHARE * information))


def dice_points(dice: float) -> float:
    """The answers signal's points for an idf-weighted Dice overlap at or above the threshold;
    rising with it, so a bound on the overlap (search's pruning) is a bound on the points."""
    return ANSWERS_MAX * dice


def answers_bound(shared_idf: float, information: float) -> float:
    """The most the answers signal gives a note whose declared questions together hold
    `shared_idf` of the question: the best one holds at most that, and its Dice overlap is
    at most 2S/(Q + S) (its own words count at least S)."""
    dice = 2 * shared_idf / (information + shared_idf) if information + shared_idf > 0 else 0.0
    return dice_points(dice) if dice >= ANSWERS_THRESHOLD else 0.0


def _taxonomy_bound(weight: float) -> Bound:
    """Tags' or domains' bound: each group holding a stem adds its share of the question."""

    def bound(held_idf: float, information: float) -> float:
        return min(TAXONOMY_CAP, SCALE * weight * held_idf / information) if information > 0 else 0.0

    return bound


SIGNALS: dict[str, Signal] = {
    s.name: s
    for s in (
        Signal("alias", "naming", SCALE * ALIAS_WEIGHT, "alias", alias_points),
        Signal("title", "naming", TITLE_POINTS, "title", title_points_for),  # the better of title and slug
        Signal("slug", "naming", TITLE_POINTS),  # bounded with the title: the field holds both
        Signal("answers", "naming", ANSWERS_MAX, "answers", answers_bound, lambda fields, query, index: answers_points(fields.answers, query, index)[0]),
        Signal("tag", "naming", TAXONOMY_CAP, "tag", _taxonomy_bound(max(TAG_WEIGHT, LONG_TAG_WEIGHT))),
        Signal("domain", "naming", TAXONOMY_CAP, "domain", _taxonomy_bound(DOMAIN_WEIGHT)),
        Signal("bm25", "weak", None),
        Signal("pairs", "weak", SCALE * PAIR_WEIGHT),  # orders the notes found, after the rest (search.by_phrases)
        Signal("semantic", "weak", None),
        Signal("spelling", "weak", None),  # words written alike, among the first candidates (search.by_spelling)
        Signal("graph", "weak", None),
        Signal("priority", "boost", PRIORITY_STEP * PRIORITY_CAP),
        Signal("hub", "boost", HUB_SHARE),
    )
}


class FieldBound(NamedTuple):
    """A field signal as search's pruning reads it (what `SIGNALS` says of it)."""

    signal: str
    field: str
    bound: Bound
    exact: Exact | None


FIELD_BOUNDS = tuple(FieldBound(s.name, s.field, s.bound, s.exact) for s in SIGNALS.values() if s.field is not None and s.bound is not None)
WEAK_SIGNALS = frozenset(s.name for s in SIGNALS.values() if s.kind == "weak")
BOOST_SIGNALS = frozenset(s.name for s in SIGNALS.values() if s.kind == "boost")


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
    bm25_scale: float  # the raw score worth SCALE × BM25_WEIGHT points: the question's ceiling
    idf: Mapping[str, float]  # of each term of the question
    information: float  # the sum of those idf: how much the question says
    semantic: Mapping[str, float] = field(default_factory=dict)  # {path: points} of the notes close in meaning
    closeness: Mapping[str, Closeness] = field(default_factory=dict)
    read: Mapping[str, str] = field(default_factory=dict)  # {a stem as written: the index's term it reads as} (read_as)
    # what one deviation of meaning is worth (`semantic_unit`, at least SEMANTIC_FLOOR), when the
    # notes close in meaning needed it: search's spelling signal counts in the same unit
    unit: float | None = None

    @property
    def bm25_unit(self) -> float:
        """The points one unit of raw BM25 is worth for this question (search's bounds read it)."""
        return SCALE * BM25_WEIGHT / self.bm25_scale

    @classmethod
    def parse(cls, text: str, index: Index, closeness: Mapping[str, Closeness] | None = None) -> Query:
        """`closeness`: the notes whose meaning is at least SEMANTIC_MIN_Z deviations above the
        mean (the semantic index's answer for this text), or None without semantic signal.

        BM25 points are a share of the question's ceiling (every term of it, saturated), so a
        question the vault barely touches cannot look grounded on BM25 alone."""
        written = tokenize_fr(text)
        terms = tuple(read_as(term, index) for term in written)
        unique = frozenset(terms)
        bm25 = index.bm25(unique)
        scale = max(index.bm25_ceiling(unique), 1e-9)
        idf = {t: index.idf(t) for t in unique}
        semantic: dict[str, float] = {}
        unit = None
        if closeness:
            unit = max(semantic_unit(bm25.values(), scale, len(index)), SEMANTIC_FLOOR)
            for path, close in closeness.items():
                points = meaning_points(close, unit)
                if points > 0:
                    semantic[path] = points
        read = {w: t for w, t in zip(written, terms, strict=True) if w != t}
        return cls(text, terms, unique, bm25, scale, idf, math.fsum(idf.values()), semantic, dict(closeness or {}), read, unit)


class Pair(NamedTuple):
    """Two stems the question holds side by side (its stop words between them left out), and
    their weight: the two stems' idf, which ranked the dev sets as the pair's own idf did and
    needs no count of every pair of every note."""

    a: str
    b: str
    weight: float


def question_pairs(query: Query, index: Index) -> tuple[Pair, ...]:
    """Each two neighbouring stems of the question that some note's body holds, once, in
    either order."""
    held = {t for t in query.unique if index.df(t) > 0}
    pairs: dict[frozenset[str], Pair] = {}
    for a, b in pairwise(query.terms):
        key = frozenset((a, b))
        if a != b and a in held and b in held and key not in pairs:
            pairs[key] = Pair(a, b, query.idf[a] + query.idf[b])
    return tuple(pairs.values())


def pair_labels(query: Query) -> Callable[[Pair], str]:
    """How a pair is shown in a reason: the question's words as written (`analysis.spelled`),
    spelled only once some note holds a pair (75 µs a long question)."""
    words = spelled(query.text)
    written = {read: stem for stem, read in query.read.items()}
    return lambda pair: " ".join(words.get(written.get(t, t), t) for t in (pair.a, pair.b))


def pair_points(paths: Sequence[str], pairs: Sequence[Pair], index: Index) -> dict[str, tuple[float, list[Pair]]]:
    """The pairs signal of each of `paths` where some pair stands side by side, and those
    pairs: BM25 over the pairs (a pair's count saturating as a word's does, the whole
    note's length normalised), as a share of what the pairs found side by side in any of
    `paths` could give, SCALE × PAIR_WEIGHT points at most. A pair no note holds side by side
    weighs nothing: it would only shrink every note's share."""
    found: dict[str, dict[Pair, int]] = {}
    holding = {term: index.impacts(term) for pair in pairs for term in (pair.a, pair.b)}
    for path in paths:
        # only a note whose text holds both words of a pair can hold them side by side: the
        # others are not strung
        possible = [pair for pair in pairs if path in holding[pair.a] and path in holding[pair.b]]
        if not possible:
            continue
        text = index.stem_text(path)
        counts = {pair: n for pair in possible if (n := text.count(f" {pair.a} {pair.b} ") + text.count(f" {pair.b} {pair.a} "))}
        if counts:
            found[path] = counts
    ceiling = math.fsum(pair.weight for pair in {p for counts in found.values() for p in counts}) * (K1 + 1.0)
    points = {}
    for path, counts in found.items():
        norm = index.note_norm(path)
        raw = math.fsum(pair.weight * tf * (K1 + 1.0) / (tf + norm) for pair, tf in counts.items())
        points[path] = (SCALE * PAIR_WEIGHT * raw / ceiling, list(counts))
    return points


def read_as(term: str, index: Index) -> str:
    """A stem of the question that no note holds, of ABBREVIATION_MIN letters or more, read as
    the index's most common term that begins with it, counted as BM25 counts it (a word only
    boilerplate lines hold, such as every man page's licence paragraph, is no reading):
    visitors shorten words (« postgres », « appli », « distrib ») that a note spells out.
    Shorter stems are left as they are: « truc » begins too many words to stand for any. On
    the tune parts, curated hit@1 +1 question (« postgres »), nothing lost; 4 letters lost a
    question to the lexical engine."""
    if len(term) < ABBREVIATION_MIN or not term.isalpha() or index.holds(term):
        return term
    longer = index.completions(term)
    return max(longer, key=lambda t: (index.df(t), t)) if longer else term


def meaning_points(close: Closeness, unit: float) -> float:
    """The semantic signal: `unit` points a deviation of closeness, the note's own text's and
    its closest declared question's, each counting from SEMANTIC_MIN_Z deviations. A declared
    question at least ASKED_SAME close is the visitor's own, in other words: it earns what the
    answers signal gives a question with that overlap, even when the visitor's has no word
    BM25 can read (« Qui es-tu ? » is all stop words: its unit is the floor, and one note's
    own « Qui es-tu ? » could not ground an answer). On the dev sets, 1 question of 66 comes
    that close to a declared question, of its own note; the rankings are unchanged."""
    points = SEMANTIC_WEIGHT * close.z if close.z >= SEMANTIC_MIN_Z else 0.0
    if close.asked_z >= SEMANTIC_MIN_Z:
        points += ASKED_WEIGHT * close.asked_z
        if close.asked_cosine >= ASKED_SAME:
            return max(unit * points, dice_points(close.asked_cosine))
    return unit * points


def semantic_unit(raw_bm25, scale: float, notes: int) -> float:
    """The standard deviation of the body's BM25 points over every note of the audience (a note
    without a word of the question counts as 0): what one deviation of meaning is worth."""
    if notes <= 1:
        return 0.0
    raw = list(raw_bm25)  # summed in C: as a Python loop, a common word's notes cost 0.3-0.45 ms at 10,000
    per_raw = SCALE * BM25_WEIGHT / scale
    mean = per_raw * sum(raw) / notes
    square = per_raw * per_raw * sum(map(operator.mul, raw, raw)) / notes
    return math.sqrt(max(0.0, square - mean * mean))


@dataclass
class Score:
    points: float = 0.0
    reasons: list[Reason] = field(default_factory=list)

    def add(self, signal: str, points: float, detail: str) -> None:
        if points > 0:
            self.points += points
            self.reasons.append(Reason(signal, points, detail))


def contains_run(haystack: Terms, needle: Terms) -> bool:
    n = len(needle)
    return any(haystack[i : i + n] == needle for i in range(len(haystack) - n + 1))


def bonus_share(note) -> float:
    """What priority and hub add to a note that scores, as a share of its evidence."""
    share = PRIORITY_STEP * max(0.0, min(note.priority, PRIORITY_CAP)) if note.priority else 0.0
    return share + (HUB_SHARE if (note.type or "").lower() in HUB_TYPES else 0.0)


def score_note(path: str, query: Query, index: Index, *, in_fields: bool = True, held: Held | None = None) -> Score:
    """Score one note of `index` for `query`; a note that shares nothing with it scores 0.
    `in_fields=False`: the caller knows no frontmatter field of the note holds a stem of the
    question (the inverted index says so), so only its text and its meaning can score.
    `held`: which notes' fields hold a stem of the question, field signal by field signal (the
    inverted index's, as search's bounds read them): a signal whose field holds none is not
    looked at, since it would find nothing (a note scored by its fields holds the question's
    stems in one field of five, mostly: 2.9 of its 10.6 µs spared)."""
    note = index.notes[path]
    score = Score()
    if not query.terms and not query.semantic:
        return score
    if in_fields and query.terms:
        _field_signals(score, note, index.analyses[path], query, index, held)

    raw = query.bm25.get(path, 0.0)
    if raw > 0:
        score.add("bm25", query.bm25_unit * raw, f"texte de la note (BM25 {raw:.2f})")
    semantic = query.semantic.get(path)
    if semantic:
        close = query.closeness[path]
        said = []
        if close.z >= SEMANTIC_MIN_Z:
            said.append(f"sens proche (cosinus {close.cosine:.2f}, {close.z:.1f} écarts-types)")
        if close.asked_z >= SEMANTIC_MIN_Z:
            said.append(f"question « {close.asked} » proche (cosinus {close.asked_cosine:.2f}, {close.asked_z:.1f} écarts-types)")
        score.add("semantic", semantic, " ; ".join(said))

    if score.points > 0:
        evidence = score.points
        if note.priority:
            priority = max(0.0, min(note.priority, PRIORITY_CAP))
            score.add("priority", PRIORITY_STEP * priority * evidence, f"priorité {note.priority:g}")
        if (note.type or "").lower() in HUB_TYPES:
            score.add("hub", HUB_SHARE * evidence, "note carrefour (MOC)")
    return score


def _field_signals(score: Score, note, fields, query: Query, index: Index, held: Held | None = None) -> None:
    """Alias, title or slug, answers, tags and domains, in that order; with `held`, only those
    whose field holds a stem of the question (`score_note`)."""
    unique, idf, information = query.unique, query.idf, query.information
    path = note.path
    aliases = []
    if held is None or path in held["alias"]:
        # an alias's first stem must be a stem of the question: a set lookup spares most the run search
        aliases = [(raw, a) for raw, a in fields.aliases if (not a or a[0] in unique) and contains_run(query.terms, a)]
    if aliases:
        held_idf, raw = max(((math.fsum(idf[t] for t in set(a)), raw) for raw, a in aliases), key=lambda pair: pair[0])
        score.add("alias", alias_points(held_idf, information), f"alias « {raw} »")

    title_points, title_detail, title_signal = 0.0, "", ""
    titles = (("title", fields.title), ("slug", fields.slug)) if held is None or path in held["title"] else ()  # the field holds both
    for signal, terms in titles:
        shared = unique.intersection(terms)
        if not shared:
            continue
        stems = len(set(terms))
        covered = len(shared) / stems
        # A title is strong evidence when it names what the question is about, weak when it
        # names one common word of a long question (« Python » in a question about Airflow).
        points = title_points_for(math.fsum(idf[t] for t in shared), information) * (1.0 if covered == 1.0 else PARTIAL_TITLE * covered)
        # A title of a word or two names a broad subject (« sudo », « Python »), which a question
        # names before asking about one part of it (« Configuration de sudo »), so it earns its
        # share of SHORT_TITLE stems; a long note keeps its title's full points, since its body
        # counts as its best passage, where its subject's words may be rare. A question that is
        # the title and nothing more names the note itself: all its points (« Mermaid pour
        # Obsidian » came second to the course « Obsidian »).
        short = stems < SHORT_TITLE and not index.scored_by_passage(note.path) and unique != frozenset(terms)
        if short:
            points *= stems / SHORT_TITLE
        if points > title_points:
            title_signal, title_points = signal, points
            label = index.readable_title(note.path) if signal == "title" else note.slug  # a title may link to a private note
            said = ([] if covered == 1.0 else [f"{covered:.0%} des mots"]) + ([f"court : {stems}/{SHORT_TITLE} de ses points"] if short else [])
            title_detail = f"{'titre' if signal == 'title' else 'slug'} « {label} »" + (f" ({', '.join(said)})" if said else "")
    if title_points:
        score.add(title_signal, title_points, title_detail)

    if held is None or path in held["answers"]:
        points, answer = answers_points(fields.answers, query, index)
        if points:
            score.add("answers", points, f"question « {answer} »")

    taxonomy = 0.0
    for signal, groups, label in (("tag", fields.tags, "tag #"), ("domain", fields.domains, "domaine ")):
        if held is not None and path not in held[signal]:
            continue
        for raw, seq in groups:
            if unique.issuperset(seq):
                weight = DOMAIN_WEIGHT if signal == "domain" else (LONG_TAG_WEIGHT if len(seq) > 1 else TAG_WEIGHT)
                points = min(SCALE * weight * math.fsum(idf[t] for t in set(seq)) / information, TAXONOMY_CAP - taxonomy)
                taxonomy += points
                score.add(signal, points, f"{label}{raw}")


def declared_information(index: Index) -> None:
    """Every declared question's idf sum (what `answers_points` keeps as it meets them), summed
    now: a search at 10,000 generated notes met some 55 declared questions' stems not summed
    yet, each idf counted from the postings (4-7 µs), until the memo held the vault's 12,000
    questions. A worker's, off a search's path (`GrasBot.settle_spelling`); each stem's idf
    counted once here."""
    said = index.derived(_DECLARED_INFORMATION, dict)
    idf: dict[str, float] = {}
    analyses = index.analyses
    for path in index.notes:
        for _, seq in analyses[path].answers:
            if seq not in said:  # the same sum in the same order as answers_points makes
                said[seq] = math.fsum(idf[t] if t in idf else idf.setdefault(t, index.idf(t)) for t in set(seq))


def answers_points(answers, query: Query, index: Index) -> tuple[float, str]:
    """The answers signal: the note's declared question closest to the visitor's, by a Dice
    overlap of their stems weighted by idf (two questions that share only « fait » and « déjà »
    overlap by little), and that question; (0.0, "") below ANSWERS_THRESHOLD."""
    unique, idf = query.unique, query.idf
    said = index.derived(_DECLARED_INFORMATION, dict)
    best_dice, best_answer = 0.0, ""
    for raw, seq in answers:
        if unique.isdisjoint(seq):
            continue  # a Dice overlap of 0 never beats the best
        asked = set(seq)
        shared = math.fsum(idf[t] for t in asked & unique)
        information = said.get(seq)
        if information is None:  # the same sum in the same order as the question's idf would give
            information = said[seq] = math.fsum(index.idf(t) for t in asked)
        dice = 2 * shared / (query.information + information)
        if dice > best_dice:
            best_dice, best_answer = dice, raw
    if best_dice < ANSWERS_THRESHOLD:
        return 0.0, ""
    return dice_points(best_dice), best_answer
