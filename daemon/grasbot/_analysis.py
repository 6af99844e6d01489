"""French text analysis, identical for notes and questions.

The order matters (see REFERENCE.md): elisions are stripped and accents folded *before*
stemming, so « données » and « donnees » meet on the same stem.
"""

from __future__ import annotations

import re
import unicodedata
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

_ELISIONS = frozenset("l m t qu n s j d c jusqu quoiqu lorsqu puisqu".split())
_SPECIALS = (
    (re.compile(r"c\+\+"), " cpp "),
    (re.compile(r"c#"), " csharp "),
    (re.compile(r"(?<!\w)\.net\b"), " dotnet "),
)
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_STEMMER = Stemmer.Stemmer("french")


def fold(text: str) -> str:
    """Lowercase and strip accents; œ and æ have no decomposition, so they are spelled out."""
    text = text.casefold().replace("œ", "oe").replace("æ", "ae")
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


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
    return [_stem(w) for w in words(text) if w not in STOPWORDS and (len(w) > 1 or w.isdigit())]


def slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", fold(text)).strip("-")
