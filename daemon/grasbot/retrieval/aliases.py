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
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from itertools import combinations
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
# A word in this share of the notes (and in GENERIC_MIN_NOTES at least) names none of them:
# « auteur », « note », « GrasBot » in the bundled vault. A phrase of such words alone is no alias.
GENERIC_SHARE = 0.4
GENERIC_MIN_NOTES = 5

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
    sujet propos concernant voir exemple exemples difference differences
    si plutot bientot deja encore toujours vraiment alors donc puis ainsi comme lorsque parce
    avant apres pendant depuis chez vers contre sous selon derriere devant
    """.split()
)
# Words that may sit inside a noun phrase (« moteur de recherche », « liens entre notes »)
# but never at its edges.
CONNECTORS = frozenset("de du des d a au aux en entre l la le les un une".split())
# An article inside a name follows a preposition (« recette de la tarte »); after a noun it
# opens another phrase (« technologie | le casse-briques »).
ARTICLES = frozenset("l la le les un une".split())
# Pronouns search keeps as words (« elles » is no stopword there) but no name holds.
PRONOUNS = frozenset("elles celui celle ceux celles ca cela ceci".split())
# Words after which the next one, when it follows at once, is a verb or a participle: a
# subject or object pronoun (« tu maîtrises », « se passe »), a negation (« ne répond »),
# « que » opening a question (« que règlent »), an auxiliary or a modal (« sont gérées »,
# « peut proposer »). Folded.
VERB_BEFORE = frozenset(
    """
    je j tu il elle on nous vous ils elles se s me m te ne n qu que qui
    est sont ont ete etait etaient sera seront peut peuvent doit doivent faut va vont pourrait
    """.split()
)
# A verb inverted with its subject: « utilise-t-il », « sont-elles », « prend-on ». The word
# before is a verb, and so is a word right after (« est-il programmé », « a-t-il développé »).
_INVERSION = re.compile(r"-(?:t-)?(?:il|elle|on|ils|elles|je|tu|nous|vous|ce)\b", re.IGNORECASE)

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
    punctuation, stopwords, pronouns, question scaffolding and the verbs French marks as such
    (`VERB_BEFORE`, `_INVERSION`), connectors trimmed from both edges. A verb or a pronoun is
    no part of a name: « elles gérées » or « programmé » was offered as an alias."""
    runs: list[_Run] = []
    current: list[tuple[int, int, str, bool]] = []  # (start, end, folded, meaningful)

    def close() -> None:
        # the first meaningful word found, not connectors dropped one by one from the front: each
        # drop moved the rest (« de de … de mot », 240 KB of a link's text: half a second, 3.6 MB: six and a half minutes)
        first = next((i for i, word in enumerate(current) if word[3]), None)
        if first is not None:
            last = max(i for i, word in enumerate(current) if word[3])
            start, end = current[first][0], current[last][1]
            runs.append(_Run(start, end, tuple(tokenize_fr(text[start:end]))))
        current.clear()

    previous_end = 0
    verb_next = False  # the previous word says this one, if it follows at once, is a verb
    for match in _TOKEN.finditer(text):
        if _BREAK.search(text, previous_end, match.start()):
            close()
            verb_next = False
        previous_end = match.end()
        word = fold(match.group())
        inverted = _INVERSION.match(text, match.end()) is not None  # its pronoun is read next
        if word in ARTICLES and current and current[-1][3]:
            close()  # « technologie le casse-briques » is two phrases
        if word in CONNECTORS and not inverted:
            current.append((match.start(), match.end(), word, False))
            verb_next = False
        elif verb_next or inverted or word in STOPWORDS or word in SCAFFOLD or word in PRONOUNS or (len(word) == 1 and not word.isdigit()):
            close()
            verb_next = word in VERB_BEFORE
        else:
            current.append((match.start(), match.end(), word, True))
            verb_next = False
    close()
    return [r for r in runs if r.stems]


def _tidy(phrase: str, at_sentence_start: bool) -> str:
    phrase = " ".join(phrase.split())
    first = phrase.split(" ", 1)[0]
    # « Moteur de recherche ? » is capitalised by the sentence, « GrasBot » or « API » by the author
    if at_sentence_start and first[:1].isupper() and first[1:] == first[1:].lower():
        phrase = phrase[:1].lower() + phrase[1:]
    return phrase


# How a French verb, and seldom a noun or an adjective, ends (« composent », « mettre », « choisit »,
# « obtiendrait »; not « pèse »: « hybride » ends so too); a noun may, hence `named_in` as well.
_VERB_ENDING = re.compile(r"(?:(?<!m)ent|ait|aient|er|ir|oir|ttre|dre|it)$")


def _cut_verb(text: str, run: _Run, known: NoteText) -> _Run:
    """`run` up to a word that follows another noun at once, ends as a verb does and is never a
    noun, in the question or in `known` (the note's text): « signal | pèse », « chatbot | envoie ». A run
    `known` holds as it is stays whole (« recherche plein texte »)."""
    if not known.text or known.holds(_flat(text[run.start : run.end])):
        return run
    flat_question = _flat(text)
    after_noun, previous_end = False, run.start
    for match in _TOKEN.finditer(text, run.start, run.end):
        noun = fold(match.group()) not in CONNECTORS
        joined = text[previous_end : match.start()] in ("-", "'", "’")  # « home-lab » is one word
        previous_end = match.end()
        if (
            noun
            and after_noun
            and not joined
            and _VERB_ENDING.search(fold(match.group()))
            and not (known.names(match.group()) or named_in(match.group(), flat_question))
        ):
            end = len(text[: match.start()].rstrip())
            return _Run(run.start, end, tuple(tokenize_fr(text[run.start : end])))
        after_noun = noun
    return run


def key_phrase(
    text: str, note_terms: frozenset[str] | set[str] = frozenset(), *, skip=lambda stems, phrase: False, known: NoteText | None = None
) -> str | None:
    """The part of a question (or link text) worth an alias: the run that shares the most stems
    with the note, then the longest, then the first; runs `skip` rejects (given their stems and
    their text) are not candidates. With `known`, the note's text, a run is cut before a verb
    (`_cut_verb`). None when nothing is left or the phrase is too long to be an alias."""
    runs = [_cut_verb(text, r, known) for r in _runs(text)] if known is not None and known.text else _runs(text)
    candidates = [r for r in runs if r.stems and not skip(r.stems, text[r.start : r.end])]
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


_DETERMINER = (
    r"(?:\b(?:le|la|les|un|une|des|du|ce|cet|cette|ces|mon|ma|mes|ton|ta|tes|son|sa|ses|notre|nos|votre|vos|leur|leurs|quel|quelle|quels|quelles)\s+|\bl')"
)


def _flat(text: str) -> str:
    return " ".join(fold(text).replace("’", "'").split())


def named_in(phrase: str, text: str) -> bool:
    """Whether `text` (folded by `_flat`) uses `phrase` as a noun: the phrase itself, after a
    determiner (« les collisions », « l'API », « quelles bases de données »). A verb or a
    participle left over from a question (« désactiver », « testée ») never follows one."""
    return re.search(_DETERMINER + re.escape(_flat(phrase)) + r"\b", text) is not None


_DETERMINED = re.compile(_DETERMINER)
_BOUNDARY = re.compile(r"\b")
_LEAD = re.compile(r"\w*")


def _lead(text: str, at: int) -> str:
    """The word characters `text` holds from `at` on."""
    m = _LEAD.match(text, at)
    return m.group() if m else ""


class NoteText:
    """A note's text (folded by `_flat`), read once for what each question asks of it: whether
    it holds a phrase as written (`holds`) or uses one as a noun (`names`). Each run and each
    verb-like word of each logged question searched the whole text (a note of 1 MB: 0.4 s a
    question of 125 characters, 1.5 s one of 500); they now look up the words they start with."""

    def __init__(self, text: str) -> None:
        self.text = text

    @cached_property
    def _chunks(self) -> list[str]:
        return self.text.split(" ")

    @cached_property
    def _at(self) -> dict[str, list[int]]:
        """Each space-separated chunk: where it stands among them."""
        at: dict[str, list[int]] = {}
        for i, chunk in enumerate(self._chunks):
            at.setdefault(chunk, []).append(i)
        return at

    @cached_property
    def _after(self) -> dict[str, list[int]]:
        """The leading word characters of the word a determiner names: where that word starts."""
        after: dict[str, list[int]] = {}
        for m in _DETERMINED.finditer(self.text):
            after.setdefault(_lead(self.text, m.end()), []).append(m.end())
        return after

    def holds(self, phrase: str) -> bool:
        """`f" {phrase} " in f" {text} "`, `phrase` folded by `_flat`."""
        pieces = phrase.split(" ")
        if not phrase:
            return not self.text
        rarest = min(range(len(pieces)), key=lambda j: len(self._at.get(pieces[j], ())))
        return any(self._chunks[i - rarest : i - rarest + len(pieces)] == pieces for i in self._at.get(pieces[rarest], ()) if i >= rarest)

    def names(self, phrase: str) -> bool:
        """`named_in(phrase, text)`."""
        flat = _flat(phrase)
        if not flat:
            return named_in(phrase, self.text)
        return any(self.text.startswith(flat, at) and _BOUNDARY.match(self.text, at + len(flat)) is not None for at in self._after.get(_lead(flat, 0), ()))


_JOINED = re.compile(r"(?<=[^\W_])[-‐‑'’](?=[^\W_])")


def name_key(text: str) -> str:
    """A name with case, accents, plurals and the hyphens or apostrophes inside words taken out:
    « adresse e-mail » and « Adresses email » are one name."""
    return "".join(tokenize_fr(_JOINED.sub("", text)))


def _name_keys(notes: Iterable[Note]) -> set[str]:
    """The notes' titles, slugs and aliases as a phrase's stems joined (`"".join(stems)`) meet them."""
    return {key for n in notes for text in (n.title, n.slug, *n.aliases) for key in ("".join(tokenize_fr(text)), name_key(text))}


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

    # Each phrase is joined to the phrases whose stems are a subset of its own, found by its few
    # subsets (an alias has at most MAX_ALIAS_WORDS), not by comparing every pair: one per distinct
    # question of the log, 4,000 of them took half a second, 100,000 more than two and a half minutes.
    first: dict[frozenset[str], int] = {}  # phrases of equal stems are one: the first stands for them
    for j, b in enumerate(candidates):
        parent[j] = first.setdefault(b.stems, j)
    for stems, j in first.items():
        if len(stems) <= 2 * MAX_ALIAS_WORDS:
            subsets: Iterable[frozenset[str]] = (frozenset(s) for k in range(len(stems)) for s in combinations(sorted(stems), k))
        else:  # longer than any alias key_phrase offers: against each phrase
            subsets = (other for other in first if other < stems)
        for subset in subsets:
            if subset in first:
                parent[root(first[subset])] = root(j)
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


def _find(slug: str, index: Index, path: str | None) -> tuple[str, Note]:
    """The note asked for: the one at `path` when given, else the one note with `slug`. Two
    notes sharing a slug (a public one and a private draft) are named rather than one picked:
    the first in sorted order could be the draft, and the plugin offered its phrases as the
    public note's aliases, which visitors read."""
    if path is not None:
        wanted = unicodedata.normalize("NFC", path)
        for rel, note in index.notes.items():
            if unicodedata.normalize("NFC", rel) == wanted:
                return rel, note
        raise NoteNotFound(slug, path)
    paths = sorted(rel for rel, note in index.notes.items() if note.slug == slug)
    if len(paths) > 1:
        raise QueryError(f"`slug` : « {slug} » est le slug de {len(paths)} notes ({', '.join(paths)}) ; donnez `path`, le chemin de la note voulue")
    if not paths:
        raise NoteNotFound(slug)
    return paths[0], index.notes[paths[0]]


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


def suggest_aliases(slug: str, index: Index, log: QuestionLog | None, limit: int = 10, path: str | None = None) -> dict:
    """Suggested aliases for the note `slug`, best first, at most `limit`.

    `index` is the owner's index, so a private note has suggestions too, from its own
    `answers` and the links of any note; a public note's come from public notes and visitors
    only (`_link_texts`). They are for the author's eyes only; the RPC layer makes
    `suggest_aliases` owner-only. (The log itself holds visitor questions and public notes only.)

    `path` (the vault path of the note, as the plugin knows it) says which note when two share
    `slug`; without it, such a slug is a QueryError that names them.

    Raises NoteNotFound for an unknown slug or path, QueryError for a limit out of 1..50.
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise QueryError(f"`limit` : doit être un entier de 1 à {MAX_LIMIT}, pas {limit!r}")
    path, note = _find(slug, index, path)
    analysis = index.analyses[path]
    note_terms = frozenset(analysis.body) | frozenset(analysis.field_terms())
    # the names of every note: this one's is no suggestion, another's would take its questions
    own = _name_keys([note])
    others = _name_keys(n for other, n in index.notes.items() if other != path)
    generic_from = max(GENERIC_MIN_NOTES, GENERIC_SHARE * len(index.notes))

    own_text = NoteText(_flat(" ".join((note.title, *note.aliases, note.body))))  # not its answers: they are evidence

    def skip(stems: Terms, phrase: str) -> bool:
        joined = "".join(stems)
        return covered(stems, analysis) or joined in own or joined in others

    def generic(stems: Terms) -> bool:  # not for link texts: the notes linking so count in df
        return all(index.df(stem) >= generic_from for stem in stems)

    candidates: dict[str, _Candidate] = {}  # one per phrasing; _merge groups them by stems

    def offer(text: str, source: str, evidence: str) -> None:
        if source == "link_text":  # the author's own name for the note, as written
            phrase = key_phrase(text, note_terms, skip=skip)
        else:  # a question: its phrase must be a noun there or in the note
            flat = _flat(text)
            phrase = key_phrase(
                text,
                note_terms,
                skip=lambda stems, p: skip(stems, p) or generic(stems) or not (named_in(p, flat) or own_text.names(p)),
                known=own_text,
            )
        if phrase is not None and source == "ungrounded_question" and not note_terms & set(tokenize_fr(phrase)):
            return  # the note was nearest by the question's other words: this phrase is about something else
        if phrase is not None:
            key = " ".join(phrase.casefold().split())
            if key not in candidates:
                candidates[key] = _Candidate(phrase, frozenset(tokenize_fr(phrase)))
            candidates[key].add(source, evidence)

    for display, linking_slug in _link_texts(path, index):
        offer(display, "link_text", linking_slug)

    for answer in note.answers:
        offer(answer, "answers", answer)

    if log is not None and note.public:  # the log's notes are public: a private one's slug is another's there
        seen: set[tuple[str, str]] = set()
        for item in log.questions_ending_on(note.slug):
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
            offer(item.typed, source, item.question)  # the placeholders of what the log kept out are no words

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
