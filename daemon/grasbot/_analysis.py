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
from functools import lru_cache

import Stemmer

# Snowball's French list, folded, plus the interrogative words every visitor question carries.
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
tout tous toute toutes tres plus moins aussi bien peut fait faire etre avoir cest quest
"""
STOPWORDS: frozenset[str] = frozenset(_STOPWORDS_RAW.split())

Terms = tuple[str, ...]

_ELISIONS = frozenset("l m t qu n s j d c jusqu quoiqu lorsqu puisqu".split())
_SPECIALS = (
    (re.compile(r"c\+\+"), " cpp "),
    (re.compile(r"c#"), " csharp "),
    (re.compile(r"(?<!\w)\.net\b"), " dotnet "),
)
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_STEMMER = Stemmer.Stemmer("french")


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    """Snowball, after dropping a plural -s that Snowball keeps on borrowed words
    (« transformers » would stem apart from « transformer »)."""
    if len(word) > 4 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    return _STEMMER.stemWord(word)


def words(text: str) -> list[str]:
    """Folded words, elisions stripped, split on hyphens and underscores; no stopword removal."""
    text = fold(text).replace("’", "'").replace("‘", "'")
    for pattern, replacement in _SPECIALS:
        text = pattern.sub(replacement, text)
    out: list[str] = []
    for match in _WORD.finditer(text):
        parts = match.group().split("'")
        if len(parts) > 1 and parts[0] in _ELISIONS:
            parts = parts[1:]
        out.append("".join(parts))
    return out


def tokenize_fr(text: str) -> list[str]:
    """Stems of the meaningful words of `text`, in order (duplicates kept, for BM25)."""
    return list(tokens(text))


# ---- the fast path: text is folded in C, split in C when it is ASCII, and each distinct word
# is stemmed once (_TERMS). A body is most of a vault's bytes, and per-character and per-word
# Python loops made a cold load of 10,000 notes take ~40 s.

_COMBINING_LATIN = re.compile("[\u0300-\u036f]+")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
# ASCII bytes that `_WORD` can match (letters, digits) and the apostrophe; the rest splits.
_WORD_BYTES = bytes(c if c == 39 or (c < 128 and chr(c).isalnum()) else 32 for c in range(256))
_NEEDLES = {r"c\+\+": "c++", r"c#": "c#", r"(?<!\w)\.net\b": ".net"}  # a literal each match contains
_TERMS: dict[object, str] = {}  # raw word (str or ASCII bytes) -> its stem, "" for a stopword


def _strip_combining(match: re.Match) -> str:
    return "".join(ch for ch in match.group() if not unicodedata.combining(ch))


def fold(text: str) -> str:
    """Lowercase and strip accents; œ and æ have no decomposition, so they are spelled out.
    Latin combining marks go in one C regex; other scripts' marks (rare) one by one."""
    text = unicodedata.normalize("NFKD", text.casefold().replace("œ", "oe").replace("æ", "ae"))
    text = _COMBINING_LATIN.sub("", text)
    return text if text.isascii() else _NON_ASCII.sub(_strip_combining, text)


def _term(word: str) -> str:
    """tokenize_fr's treatment of one `_WORD` match: elision, stopword, stem."""
    parts = word.split("'")
    if len(parts) > 1 and parts[0] in _ELISIONS:
        parts = parts[1:]
    word = "".join(parts)
    if word in STOPWORDS or not (len(word) > 1 or word.isdigit()):
        return ""
    return _stem(word)


_WEIRD: set[object] = set()  # raw words with stray apostrophes: several terms each, never in _TERMS


def _raw_words(text: str) -> list:
    """The `_WORD` matches of `text` once folded, as tokenize_fr sees them (ASCII
    words as bytes, split in C), before elision, stopwords and stemming."""
    text = fold(text)
    if "’" in text or "‘" in text:
        text = text.replace("’", "'").replace("‘", "'")
    for pattern, replacement in _SPECIALS:
        needle = _NEEDLES.get(pattern.pattern)
        if needle is None or needle in text:  # a substring test is much cheaper than the scan
            text = pattern.sub(replacement, text)
    if text.isascii():
        return text.encode("ascii").translate(_WORD_BYTES).split()
    return _WORD.findall(text)


def _learn(raw: list) -> bool:
    """Put every word of `raw` in _TERMS; False when one needs the slow path (see _WEIRD)."""
    missing = set(raw).difference(_TERMS)
    if missing:
        if len(_TERMS) + len(missing) > 1_000_000:
            _TERMS.clear()
            missing = set(raw)
        for word in missing:
            s = word.decode("ascii") if isinstance(word, bytes) else word
            if "'" in s and _WORD.fullmatch(s) is None:
                _WEIRD.add(word)
            else:
                _TERMS[word] = _term(s)
    return not (_WEIRD and not _WEIRD.isdisjoint(raw))


def _weird_terms(word) -> list[str]:
    """stray apostrophes (« 'mot », « a''b »): split the way _WORD would"""
    s = word.decode("ascii") if isinstance(word, bytes) else word
    return [t for piece in _WORD.findall(s) if (t := _term(piece))]


def body_counts(text: str) -> dict[str, int]:
    """Counter(tokenize_fr(text)), counted in C."""
    words = _raw_words(text)
    if _learn(words):
        counts = Counter(map(_TERMS.__getitem__, words))
        counts.pop("", None)
        return dict(counts)
    out: dict[str, int] = {}
    for word, count in Counter(words).items():
        for term in _weird_terms(word) if word in _WEIRD else (_TERMS[word],):
            if term:
                out[term] = out.get(term, 0) + count
    return out


def tokens(text: str) -> Terms:
    """tuple(tokenize_fr(text)), through the same word table as body_counts."""
    words = _raw_words(text)
    if _learn(words):
        return tuple(filter(None, map(_TERMS.__getitem__, words)))
    out: list[str] = []
    for word in words:
        if word in _WEIRD:
            out.extend(_weird_terms(word))
        elif term := _TERMS[word]:
            out.append(term)
    return tuple(out)


def slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", fold(text)).strip("-")
