"""Whether the model's answer reads as French. qwen3 sometimes answers in English despite the
prompt's first rule (when the question or the notes hold English), or drifts into Chinese: a
French site's visitor then gets the notes' own sentences instead (the engine treats such an
answer as a failed one, `answer.fallback`).

English is told from French by counting each language's function words, which no answer can
avoid; what a French answer quotes as written is left out first: code, addresses, `[slug]`
citations and links, quotations (« … », “…”, "…", a `>` quote), and English words written with
a capital (a title, « The Pragmatic Programmer », or a product; a French one, « Le », counts). Another language in Latin letters
(German, Spanish) is left as written: its function words are French's or English's (« die »,
« la », « que »), so counting them would take good French answers from visitors, and the model
is not seen writing them. A script other than Latin is judged by its letters.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

__all__ = ["MIN_ENGLISH", "NOT_FRENCH", "why_not_french"]

#: Lower-case function words of one language that are no word of the other (« a », « an »,
#: « as », « on », « or », « but », « son », « do » are both, and left out).
ENGLISH = frozenset(
    "the and is are was were of to in with this that which these those you your it its for from "
    "have has had be been by not can will would should could there their they what how when where does".split()
)
FRENCH = frozenset(
    "le la les un une de des du au aux à et est sont ont se dans pour avec ce cette ces qui que vous votre vos nous "
    "il ils elle elles sur pas ne mais ou où très aussi comme été être sa ses leur leurs je lui en par".split()
)
_ELIDED = re.compile(r"(?:[cdjlmnst]|qu|jusqu|lorsqu|puisqu)'[^\W\d_]")  # « l'outil », « qu'il »
_CONTRACTED = re.compile(r"[^\W\d_]+(?:n't|'re|'ve|'ll|'m)|(?:it|that|there|what|here|let)'s")  # « don't », « it's »

#: The fewest English function words that make an answer English: under it, an answer is too
#: short to say (« Yes, in 2021. »), and it is left as written.
MIN_ENGLISH = 3
#: English must outnumber French more than this: a French answer quoting English keeps its own words.
RATIO = 3
#: The fewest letters of another script (CJK, Cyrillic…) that make an answer not French, and
#: how few Latin letters each of them may stand beside (a Chinese character says a word).
MIN_SCRIPT = 10
SCRIPT_RATIO = 5

#: How every reason `why_not_french` gives begins (the daemon logs them at info, not as a failure).
NOT_FRENCH = "le modèle a répondu en "

_QUOTED = re.compile(
    r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)"  # fenced code, an unclosed fence to the end
    r"|(`+).*?(?:\1|\Z)"  # inline code
    r"|^[ \t]*>.*$"  # a quote
    r"|«[^«»]*»|“[^“”]*”|\"[^\"\n]*\""  # quotations (each read once: an opening stops a scan)
    r"|!?\[[^\[\]\n]*\](?:\([^()\s]*\))?"  # a citation, a link and its label, an image
    r"|(?:https?|ftp|file)://\S+|www\.\S+|(?<!\S)\S*@\S*",  # addresses, from a word's start
    re.DOTALL | re.MULTILINE,
)
_EDGES = ".,;:!?…()[]{}<>\"“”‘'*_~"


def why_not_french(text: str) -> str | None:
    """Why `text` does not read as French (a reason beginning NOT_FRENCH), or None when it does,
    or when it is too short to say."""
    prose = _QUOTED.sub(" ", text)
    letters = Counter(_script(c) for c in prose if c.isalpha())
    latin = letters.pop("LATIN", 0)
    other = sum(letters.values())
    if other >= MIN_SCRIPT and other * SCRIPT_RATIO >= latin:
        script = letters.most_common(1)[0][0]
        named = SCRIPTS.get(script, f"« {script.title()} »")
        return f"{NOT_FRENCH}écriture {named}, pas en français ({other} lettres d'autres écritures pour {latin} latines)"
    english = french = 0
    for chunk in prose.replace("’", "'").split():
        word = chunk.strip(_EDGES)
        if not word.replace("'", "").isalpha():
            continue  # a path, a number, a-compound
        if word[0].islower() and (word in ENGLISH or _CONTRACTED.fullmatch(word)):
            english += 1
        elif (lower := word.lower()) in FRENCH or _ELIDED.match(lower):
            french += 1  # « Le », « L'outil » at a sentence's start: French whatever its case
    if english >= MIN_ENGLISH and english > RATIO * french:
        return f"{NOT_FRENCH}anglais, pas en français ({english} mots-outils anglais pour {french} français)"
    return None


#: The scripts a model drifts into, by their first word in Unicode's names, as French names them
#: (« écriture cyrillique »); any other is named as Unicode writes it, in « ».
SCRIPTS = {
    "CJK": "chinoise (idéogrammes CJK)",
    "HIRAGANA": "japonaise (hiragana)",
    "KATAKANA": "japonaise (katakana)",
    "HANGUL": "coréenne (hangeul)",
    "CYRILLIC": "cyrillique",
    "GREEK": "grecque",
    "ARABIC": "arabe",
    "HEBREW": "hébraïque",
    "DEVANAGARI": "dévanagari",
    "BENGALI": "bengalie",
    "TAMIL": "tamoule",
    "THAI": "thaïe",
    "ARMENIAN": "arménienne",
    "GEORGIAN": "géorgienne",
}


def _script(letter: str) -> str:
    """A letter's script as Unicode names it: LATIN, CJK, CYRILLIC, HIRAGANA… A modifier (« ʼ »)
    or a mathematical letter (« 𝑥 ») is written with Latin text: it counts as Latin."""
    script = unicodedata.name(letter, "LATIN").split(" ", 1)[0]
    return "LATIN" if script in ("MODIFIER", "MATHEMATICAL", "FULLWIDTH") else script
