"""French text analysis, identical for notes and questions: one implementation, fast enough
for a 10,000-note vault's bodies (`body_counts`) and used word for word on questions
(`tokenize_fr`, `tokens`).

The order matters (see REFERENCE.md): elisions are stripped and accents folded *before*
stemming, so « données » and « donnees » meet on the same stem.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from itertools import chain

import Stemmer

# Snowball's French list, folded, plus the interrogative words every visitor question carries,
# and the way visitors type those in a hurry (« koi », « kel », « pk », « stp »): a word no note
# holds weighs as much as the rarest one, and would dilute the question it is in.
_STOPWORDS_RAW = """
au aux avec ce ces dans de des du elle en et eux il ils je la le les leur lui ma mais me meme
mes moi mon ne nos notre nous on ou par pas pour qu que qui sa se ses son sur ta te tes toi ton
tu un une vos votre vous c d j l a m n s t y ete etee etees etes etant etante etants etantes
suis es est sommes etes sont serai seras sera serons serez seront serais serait serions seriez
seraient etais etait etions etiez etaient fus fut fumes futes furent sois soit soyons soyez
soient fusse fusses fut fussions fussiez fussent ayant ayante ayantes ayants eu eue eues eus ai
as avons avez ont aurai auras aura aurons aurez auront aurais aurait aurions auriez auraient
avais avait avions aviez avaient eut eumes eutes eurent aie aies ait ayons ayez aient eusse
eusses eussions eussiez eussent ceci cela cet cette ici ils les leurs quel quels quelle quelles
sans soi comment quoi est-ce qu'est-ce pourquoi ou dont lequel laquelle lesquels lesquelles
tout tous toute toutes tres plus moins aussi bien peut fait faire etre avoir
"""
# Typed in a hurry, these are stop words (« quest ce que », « c koi », « jsp »); written in
# capitals, they are names: « QUEST » (a marketing framework), « JSP » (Java Server Pages),
# « CEST ». A note titled « QUEST » was read as « qu'est », and no question found it by its name.
_HURRIED_RAW = """
cest quest koi kel kelle kels kelles keske kes pk pq pkoi pourkoi pcq pck psk paske ki ke ya jsp
tkt stp svp slt bjr mdr lol ptdr
"""
HURRIED: frozenset[str] = frozenset(_HURRIED_RAW.split())
STOPWORDS: frozenset[str] = frozenset(_STOPWORDS_RAW.split()) | HURRIED

Terms = tuple[str, ...]

_ELISIONS = frozenset("l m t qu n s j d c jusqu quoiqu lorsqu puisqu".split())
_SPECIALS = (
    (re.compile(r"c\+\+"), " cpp "),
    (re.compile(r"c#"), " csharp "),
    (re.compile(r"(?<!\w)\.net\b"), " dotnet "),
)
# « UTF-8 » is « utf8 » typed by a visitor (« latin-1 », « sha-256 », « fat-32 » alike): the
# hyphenated form gives its two parts, as any hyphen does, and the joined word too, so either
# spelling meets the other, and « gpt » still meets « gpt-4 ». Only letters then 1-4 digits
# standing alone: « iso-8859-1 » and « x86-64 » are left as they were.
_GLUED = re.compile(r"(?<![\w-])([a-z]{2,})-(\d{1,4})(?![\w-])")
# « e-mail » is « email » typed by a visitor (« e-commerce », « t-shirt » alike): one letter, a
# hyphen, a word, read as its parts and as the joined word.
_LETTER_GLUED = re.compile(r"(?<![\w-])([a-z])-([a-z]{3,})(?![\w-])")
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_STEMMER = Stemmer.Stemmer("french", 0)  # no cache of its own: _stem has one (its own costs 2.7 µs a new word, vs 1.0)


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    """Snowball, after dropping a plural -s that Snowball keeps on borrowed words
    (« transformers » would stem apart from « transformer »)."""
    if len(word) > 4 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    return _STEMMER.stemWord(word)


def words(text: str) -> list[str]:
    """Folded words, elisions stripped, split on hyphens and underscores, a shorthand as the
    words it stands for (SHORTHANDS); no stopword removal."""
    return _folded_words(fold(text))


# Apostrophes as typed: ’ (a phone's, a Mac's), ‘, and ʼ (U+02BC, a letter to Unicode, so
# « lʼécole » was one word).
_APOSTROPHES = str.maketrans("’‘ʼ", "'" * 3)


def _folded_words(text: str) -> list[str]:
    text = text.translate(_APOSTROPHES)
    if "c+" in text or "c#" in text or ".net" in text:  # what _SPECIALS need: spare three scans
        for pattern, replacement in _SPECIALS:
            text = pattern.sub(replacement, text)
    if "-" in text:  # spare the scan of most chunks
        text = _LETTER_GLUED.sub(r"\1 \2 \1\2", _GLUED.sub(r"\1 \2 \1\2", text))
    out: list[str] = []
    for match in _WORD.finditer(text):
        parts = match.group().split("'")
        if len(parts) > 1 and parts[0] in _ELISIONS:
            parts = parts[1:]
        word = "".join(parts)
        if word in SHORTHANDS:
            out.extend(SHORTHANDS[word])
        else:
            out.append(word)
    return out


def tokenize_fr(text: str) -> list[str]:
    """Stems of the meaningful words of `text`, in order (duplicates kept, for BM25)."""
    return list(tokens(text))


# ---- the fast path. A body is most of a vault's bytes, and per-character or per-word Python
# loops made a cold load of 10,000 notes take ~40 s. Words never span whitespace, before or
# after folding (whitespace folds to whitespace, which no word or special spelling holds), so
# a text is split on whitespace as written, in C, and each distinct chunk (« l'école, »,
# « C++ ») is analysed once by the rules above and kept in _CHUNKS: a body is then looked up
# chunk by chunk and counted, all in C. Measured on 10,000 generated notes (3.8 M words,
# 66,000 distinct chunks): 3.0 s, where folding the whole text first took 5.0 s.

_COMBINING_LATIN = re.compile("[\u0300-\u036f]+")
# Characters a reader does not see inside a word, dropped rather than splitting it: a soft hyphen
# (« dé\u00adve\u00adlop\u00adpe\u00adment », pasted from a web page), zero-width spaces and
# joiners, direction marks, a byte-order mark; and ™ ℠, which NFKD would glue to the word
# as « TM » (« Java™ » read « javatm »). Keep in step with obsidian-plugin/src/slug.ts.
_DROPPED = re.compile("[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff\u2120\u2122]+")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_OPENING, _CLOSING = '([{«"', '.,;:!?)]}»"'
_MAX_CHUNKS = 1_000_000  # about 100 MB at most; a vault's own chunks are far fewer


def _strip_combining(match: re.Match) -> str:
    return "".join(ch for ch in match.group() if not unicodedata.combining(ch))


def fold(text: str) -> str:
    """Lowercase and strip accents; œ and æ have no decomposition, so they are spelled out;
    invisible characters go (`_DROPPED`). Latin combining marks go in one C regex; other
    scripts' marks (rare) one by one."""
    if text.isascii():  # nothing to decompose, and casefold() is lower() on ASCII
        return text.lower()
    text = _DROPPED.sub("", text)
    text = unicodedata.normalize("NFKD", text.casefold().replace("œ", "oe").replace("æ", "ae"))
    text = _COMBINING_LATIN.sub("", text)
    return text if text.isascii() else _NON_ASCII.sub(_strip_combining, text)


# Shorthands visitors type for words a note spells out, read as those words on both sides, so
# « ta bdd » meets « base de données » and a note's « IA » a question's « intelligence
# artificielle ». Only shorthands with one reading in notes about someone's work: « info »
# (information, informatique), « doc », « dev », « pub », « tel » (a French word) are left out.
_SPELLED_OUT = """
bdd=base_de_données sgbd=système_de_gestion_de_base_de_données maj=mise_à_jour mdp=mot_de_passe
pb=problème pbs=problèmes pbm=problème qqch=quelque_chose qqc=quelque_chose qqn=quelqu'un bcp=beaucoup
ordi=ordinateur ordis=ordinateurs appli=application applis=applications config=configuration
dispo=disponible perf=performance perfs=performances param=paramètre params=paramètres
perso=personnel algo=algorithme algos=algorithmes dico=dictionnaire exo=exercice exos=exercices
secu=sécurité archi=architecture ia=intelligence_artificielle rdv=rendez-vous resto=restaurant
appart=appartement maths=mathématiques philo=philosophie psycho=psychologie compta=comptabilité
asso=association techno=technologie technos=technologies distrib=distribution distribs=distributions
admin=administration sysadmin=administrateur_système vm=machine_virtuelle tuto=tutoriel tutos=tutoriels
prof=professeur profs=professeurs prod=production
"""
SHORTHANDS: dict[str, tuple[str, ...]] = {}  # empty while the table is read, so a long form is not read again
SHORTHANDS.update((short, tuple(_folded_words(fold(long.replace("_", " "))))) for short, _, long in (pair.partition("=") for pair in _SPELLED_OUT.split()))


def _kept_word(word: str) -> bool:
    """Whether search reads a folded word: no stop word, no single letter (a digit counts)."""
    return word not in STOPWORDS and (len(word) > 1 or word.isdigit())


def _kept_words(found: Sequence[str], written: str) -> list[str]:
    """The words of `found` (`written`'s, folded) search reads: `_kept_word`, and a HURRIED
    word written in capitals in `written`, a name (« QUEST »)."""
    kept = [w for w in found if _kept_word(w)]
    if len(kept) < len(found) and not HURRIED.isdisjoint(found):
        capitals = {fold(m.group()) for m in _WORD.finditer(written) if m.group().isupper()}
        kept = [w for w in found if _kept_word(w) or (w in HURRIED and w in capitals)]
    return kept


def _chunk_terms(chunk: str) -> Terms:
    """The stems of one chunk: its words (`words`), stopwords and single letters out, stemmed.
    Most chunks are one plain word, maybe between brackets or before punctuation: that word
    is what `words` finds (no apostrophe, no special spelling, one regex match), so the regex
    is spared. A leading dot is kept: « .net » is a special spelling."""
    folded = fold(chunk)
    word = folded.lstrip(_OPENING).rstrip(_CLOSING)
    found = (word,) if word.isalnum() and word.isascii() and word not in SHORTHANDS else _folded_words(folded)
    return tuple(_stem(w) for w in _kept_words(found, chunk))


class _ChunkTable(dict):
    """A chunk of text as written (no whitespace in it) -> its stems, made on first lookup."""

    def __missing__(self, chunk: str) -> Terms:
        if len(self) >= _MAX_CHUNKS:
            self.clear()
        terms = self[chunk] = _chunk_terms(chunk)
        return terms


_CHUNKS = _ChunkTable()


class _StemTable(dict):
    """A chunk -> its one stem (most chunks), None when it has none (« de », « — »), or its
    stems when it has several (« porte-clés »): what body_counts counts without chaining a
    tuple per word (15 % of its time, measured on 5,000 generated notes)."""

    def __missing__(self, chunk: str) -> str | Terms | None:
        if len(self) >= _MAX_CHUNKS:
            self.clear()
        terms = _CHUNKS[chunk]
        stem = self[chunk] = terms[0] if len(terms) == 1 else (terms or None)
        return stem


_STEMS = _StemTable()


def body_counts(text: str) -> Counter[str]:
    """Counter(tokenize_fr(text)), counted in C."""
    counts = Counter(map(_STEMS.__getitem__, text.split()))
    counts.pop(None, None)
    for several in [key for key in counts if type(key) is tuple]:
        times = counts.pop(several)
        for stem in several:
            counts[stem] += times
    return counts


def spelled(text: str) -> dict[str, str]:
    """{stem: the first word of `text` that gives it, as written}: a stem shown to whoever
    wrote the word (a reason's « menu démarrage », not « menu demarr »)."""
    out: dict[str, str] = {}
    for match in _WORD.finditer(text.translate(_APOSTROPHES)):
        head, _, rest = match.group().partition("'")
        written = rest if rest and fold(head) in _ELISIONS else match.group()  # « l'espace »: « espace »
        for word in _kept_words(_folded_words(fold(match.group())), match.group()):
            out.setdefault(_stem(word), written)
    return out


def tokens(text: str) -> Terms:
    """tuple(tokenize_fr(text)), through the same chunk table as body_counts."""
    return tuple(chain.from_iterable(map(_CHUNKS.__getitem__, text.split())))


def slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", fold(text)).strip("-")
