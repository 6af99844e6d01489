"""Aliases a note is missing, from the words that already lead to it.

The alias is GrasBot's strongest signal, but the author writes aliases by hand. Four kinds of
evidence show which words readers use for a note:

- ``link_text``: the display text of links to it (``[[slug|moteur de recherche]]``);
- ``visitor_question``: visitors' grounded questions whose first note it was, found without
  an alias, title or slug match (so its text or a link did the work);
- ``ungrounded_question``: visitors' questions that grounded nothing, whose nearest note it was;
- ``answers``: the note's own ``answers``, whose key phrase no alias carries.

Each is reduced to a short phrase (`key_phrase`), phrases the note already matches (same
normalisation as search) are dropped, near-duplicates are merged, and the rest are ranked.

Score: each source has a weight (`SOURCE_WEIGHTS`: the author's own link texts count most,
a guess from an ungrounded question least), and a suggestion scores the sum over its
sources of weight × the number of distinct pieces of evidence (linking notes, questions).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .._exceptions import NoteNotFound, QueryError
from .analysis import STOPWORDS, fold, tokenize_fr, words
from .index import Index, NoteAnalysis, Terms
from .scoring import contains_run
from .vault import LinkResolver, Note

if TYPE_CHECKING:  # the log is read, never imported: retrieval comes before the store
    from ..store.questionlog import QuestionLog

SOURCE_WEIGHTS = {
    "link_text": 1.0,  # chosen by the author, in another note
    "visitor_question": 0.8,  # visitors' words, and the note did answer them
    "answers": 0.6,  # the author's words, but written as a whole question
    "ungrounded_question": 0.5,  # visitors' words; the note was only the nearest
}
SOURCE_ORDER = tuple(SOURCE_WEIGHTS)  # ties between phrasings go to the earlier source
MAX_ALIAS_WORDS = 6  # meaningful words; a longer phrase is a sentence, not an alias
MAX_LIMIT = 50

# Folded words that carry a question but never its subject: they end a phrase like stopwords.
SCAFFOLD = frozenset(
    """
    comment combien quand kesako quoi pourquoi quel quelle quels quelles
    parle parles parlez parler explique expliques expliquez expliquer dis dites dire
    connais connait connaissez connaitre sais sait savez savoir veux voudrais aimerais
    cherche cherches cherchez chercher trouve trouver montre montrez montrer
    donne donnez donner peux pouvez pourrais pourriez signifie signifient veut
    definition definir definis sert servent servir fonctionne fonctionnent fonctionner
    marche marchent utilise utiliser existe ya svp stp merci bonjour salut hello
    ca chose choses quelque truc trucs info infos information informations
    sujet propos concernant voir exemple exemples
    """.split()
)
# Words that may sit inside a noun phrase (« moteur de recherche », « notes d'un visiteur »)
# but never at its edges.
CONNECTORS = frozenset("de du des d a au aux en l la le les un une".split())

_TOKEN = re.compile(r"[^\W_]+(?:\+\+|#(?!\w))?")  # C++ and C# are words
_BREAK = re.compile(r"[?!.,;:()\[\]{}\"«»“”/|]")


# ---------------------------------------------------------------- the phrase that matters


@dataclass(frozen=True)
class _Run:
    start: int
    end: int
    stems: Terms


def _runs(text: str) -> list[_Run]:
    """Noun-phrase-like runs of `text`: meaningful words joined by connectors, cut at
    punctuation, stopwords and question scaffolding, connectors trimmed from both edges."""
    runs: list[_Run] = []
    current: list[tuple[int, int, str, bool]] = []  # (start, end, folded, meaningful)

    def close() -> None:
        while current and not current[-1][3]:
            current.pop()
        while current and not current[0][3]:
            current.pop(0)
        if current:
            start, end = current[0][0], current[-1][1]
            runs.append(_Run(start, end, tuple(tokenize_fr(text[start:end]))))
        current.clear()

    previous_end = 0
    for match in _TOKEN.finditer(text):
        if _BREAK.search(text, previous_end, match.start()):
            close()
        previous_end = match.end()
        word = fold(match.group())
        if word in CONNECTORS:
            current.append((match.start(), match.end(), word, False))
        elif word in STOPWORDS or word in SCAFFOLD or (len(word) == 1 and not word.isdigit()):
            close()
        else:
            current.append((match.start(), match.end(), word, True))
    close()
    return [r for r in runs if r.stems]


def _tidy(phrase: str, at_sentence_start: bool) -> str:
    phrase = " ".join(phrase.split())
    first = phrase.split(" ", 1)[0]
    # « Moteur de recherche ? » is capitalised by the sentence, « GrasBot » or « API » by the author
    if at_sentence_start and first[:1].isupper() and first[1:] == first[1:].lower():
        phrase = phrase[:1].lower() + phrase[1:]
    return phrase


def key_phrase(text: str, note_terms: frozenset[str] | set[str] = frozenset(), *, skip=lambda stems: False) -> str | None:
    """The part of a question (or link text) worth an alias: the run that shares the most stems
    with the note, then the longest, then the first; runs `skip` rejects are not candidates.
    None when nothing is left or the phrase is too long to be an alias."""
    candidates = [r for r in _runs(text) if not skip(r.stems)]
    if not candidates:
        return None
    best = max(candidates, key=lambda r: (len(set(r.stems) & note_terms), len(r.stems), -r.start))
    if len(best.stems) > MAX_ALIAS_WORDS:
        return None
    leading = text[: best.start].strip()
    return _tidy(text[best.start : best.end], at_sentence_start=not _TOKEN.search(leading))


# ---------------------------------------------------------------- coverage and merging


def covered(stems: Terms, analysis: NoteAnalysis) -> bool:
    """True when a question holding `stems` already matches the note by name: an alias whose
    stems run inside it (search's alias rule), or all of the title's or the slug's stems."""
    if not stems:
        return True
    if any(contains_run(stems, alias) for _, alias in analysis.aliases):
        return True
    held = set(stems)
    return any(terms and set(terms) <= held for terms in (analysis.title, analysis.slug))


@dataclass
class _Candidate:
    alias: str
    stems: frozenset[str]
    evidence: dict[str, list[str]] = field(default_factory=dict)  # source -> distinct evidence, in order

    def add(self, source: str, item: str) -> None:
        found = self.evidence.setdefault(source, [])
        if item not in found:
            found.append(item)

    @property
    def score(self) -> float:
        return sum(SOURCE_WEIGHTS[s] * len(items) for s, items in self.evidence.items())

    @property
    def source(self) -> str:
        return max(self.evidence, key=lambda s: (SOURCE_WEIGHTS[s] * len(self.evidence[s]), -SOURCE_ORDER.index(s)))

    def phrasing_rank(self) -> tuple:
        """Higher is better: most evidence, then the author's own sources, then the broader
        phrase (fewer stems: it matches every question the longer one matches), then
        accented over unaccented, then shorter, then alphabetical."""
        count = sum(len(v) for v in self.evidence.values())
        best_source = min(SOURCE_ORDER.index(s) for s in self.evidence)
        accented = fold(self.alias) != self.alias.casefold()
        return (count, -best_source, -len(self.stems), accented, -len(self.alias), tuple(-ord(c) for c in self.alias))


def _merge(candidates: list[_Candidate]) -> list[_Candidate]:
    """Merge phrases whose stems are equal or one within the other; keep the best phrasing."""
    parent = list(range(len(candidates)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, a in enumerate(candidates):
        for j in range(i + 1, len(candidates)):
            b = candidates[j]
            if a.stems <= b.stems or b.stems <= a.stems:
                parent[root(j)] = root(i)
    groups: dict[int, list[_Candidate]] = {}
    for i, c in enumerate(candidates):
        groups.setdefault(root(i), []).append(c)
    merged = []
    for members in groups.values():
        keep = max(members, key=_Candidate.phrasing_rank)
        out = _Candidate(keep.alias, keep.stems)
        for member in sorted(members, key=_Candidate.phrasing_rank, reverse=True):
            for source, items in member.evidence.items():
                for item in items:
                    out.add(source, item)
        merged.append(out)
    return merged


# ---------------------------------------------------------------- the sources


def _find(slug: str, index: Index) -> tuple[str, Note]:
    # the same note a duplicated slug resolves to elsewhere: the first path in sorted order
    for path in sorted(index.notes):
        if index.notes[path].slug == slug:
            return path, index.notes[path]
    raise NoteNotFound(slug)


def _link_texts(path: str, index: Index) -> list[tuple[str, str]]:
    """(display text, linking note's slug) for every link to `path` that has a display text.
    A private note's links count for a private note only: a public note's alias, once
    accepted, is read by visitors, and a draft's words must not reach them that way."""
    public = index.notes[path].public
    sources = sorted({source for source, _ in index.backlinks.get(path, ()) if index.notes[source].public or not public})
    if not sources:
        return []
    resolver = LinkResolver(index.notes.values())
    found = []
    for source in sources:
        for link in index.notes[source].links:
            if link.display and resolver.resolve(link.target) == path:
                found.append((link.display, index.notes[source].slug))
    return found


def suggest_aliases(slug: str, index: Index, log: QuestionLog | None, limit: int = 10) -> dict:
    """Suggested aliases for the note `slug`, best first, at most `limit`.

    `index` is the owner's index, so a private note has suggestions too, from its own
    `answers` and the links of any note; a public note's come from public notes and visitors
    only (`_link_texts`). They are for the author's eyes only; the RPC layer makes
    `suggest_aliases` owner-only. (The log itself holds visitor questions and public notes only.)

    Raises NoteNotFound for an unknown slug, QueryError for a limit out of 1..50.
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise QueryError(f"limit: must be an integer from 1 to {MAX_LIMIT}, not {limit!r}")
    path, note = _find(slug, index)
    analysis = index.analyses[path]
    note_terms = frozenset(analysis.body) | frozenset(analysis.field_terms())

    def skip(stems: Terms) -> bool:
        return covered(stems, analysis)

    candidates: dict[str, _Candidate] = {}  # one per phrasing; _merge groups them by stems

    def offer(text: str, source: str, evidence: str) -> None:
        phrase = key_phrase(text, note_terms, skip=skip)
        if phrase is not None:
            key = " ".join(phrase.casefold().split())
            if key not in candidates:
                candidates[key] = _Candidate(phrase, frozenset(tokenize_fr(phrase)))
            candidates[key].add(source, evidence)

    for display, linking_slug in _link_texts(path, index):
        offer(display, "link_text", linking_slug)

    for answer in note.answers:
        offer(answer, "answers", answer)

    if log is not None:
        seen: set[tuple[str, str]] = set()
        for item in log.questions_ending_on(slug):
            first = item.first
            if first is None or item.followup:  # a follow-up's own words did not find the note
                continue
            if item.grounded:
                if set(first.signals) & {"alias", "title", "slug"}:
                    continue  # already found by name
                source = "visitor_question"
            else:
                source = "ungrounded_question"
            asked = " ".join(words(item.question))  # one visitor's refreshes count once
            if (source, asked) in seen:
                continue
            seen.add((source, asked))
            offer(item.question, source, item.question)

    suggestions = _merge(list(candidates.values()))
    suggestions.sort(key=lambda c: (-c.score, c.alias))
    return {
        "slug": note.slug,
        "suggestions": [
            {
                "alias": c.alias,
                "source": c.source,
                "evidence": [item for source in SOURCE_ORDER for item in c.evidence.get(source, ())],
                "score": round(c.score, 3),
            }
            for c in suggestions[:limit]
        ],
    }
