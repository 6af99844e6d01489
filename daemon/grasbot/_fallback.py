"""The answer GrasBot gives when the LLM cannot: the notes' own most relevant sentences, cited.

A visitor still gets something true and sourced; the response says plainly that it is an
excerpt, not a written answer.
"""

from __future__ import annotations

import re
from typing import Sequence

from ._analysis import tokenize_fr
from ._index import Index
from ._passages import Passage, question_weights

NOTES_USED = 3
SENTENCES = 3
PER_NOTE = 2
MAX_SENTENCE = 320

INTRO = "Le modèle de langue ne répond pas pour l'instant ; voici ce que disent les notes :"
NOT_FOUND = (
    "Je ne trouve pas cette information dans les notes. Vous pouvez consulter /portfolio, "
    "/competences ou passer par /contact."
)

_CODE = re.compile(r"```.*?```|~~~.*?~~~", re.DOTALL)
_HEADING_LINE = re.compile(r"^\s*#{1,6}\s.*$", re.MULTILINE)  # a heading is a label, not a sentence
_LINK = re.compile(r"!?\[\[([^\]|]*)(?:\|([^\]]*))?\]\]")
_MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_MARKUP = re.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s*)|[*_`]{1,3}", re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")


def sentences(markdown: str) -> list[str]:
    text = _HEADING_LINE.sub("", _CODE.sub(" ", markdown))
    text = _LINK.sub(lambda m: m.group(2) or m.group(1).split("#")[0], text)
    text = _MD_LINK.sub(r"\1", text)
    text = _MARKUP.sub("", text)
    out = []
    for piece in _SENTENCE_END.split(text):
        piece = " ".join(piece.split())
        if len(piece) >= 25:
            out.append(piece if len(piece) <= MAX_SENTENCE else piece[: MAX_SENTENCE - 1].rstrip() + "…")
    return out


def extractive_answer(
    question: str, passages: Sequence[Passage], index: Index, *, grounded: bool, history: Sequence[dict] = ()
) -> str:
    """Up to three sentences, best first, from the passages the LLM would have read (those
    of the first notes), each followed by its [slug]."""
    if not grounded or not passages:
        return NOT_FOUND
    weights = question_weights(question, history)
    notes = list(dict.fromkeys(p.path for p in passages))[:NOTES_USED]
    picked: list[tuple[float, int, int, str, str]] = []
    for rank, path in enumerate(notes):
        scored = []
        slug = next(p.slug for p in passages if p.path == path)
        texts = [_sent_text(p) for p in passages if p.path == path]
        for position, sentence in enumerate(s for text in texts for s in sentences(text)):
            found = set(weights).intersection(tokenize_fr(sentence))
            if found:
                score = sum(weights[t] * index.idf(t) for t in found)
                scored.append((score, rank, position, sentence, slug))
        scored.sort(key=lambda s: (-s[0], s[2]))
        picked.extend(scored[:PER_NOTE])
    if not picked:  # nothing matches word for word: the best passage's opening still says what it is about
        first = sentences(_sent_text(passages[0]))
        picked = [(0.0, 0, 0, first[0], passages[0].slug)] if first else []
    if not picked:
        return NOT_FOUND
    best = sorted(picked, key=lambda s: (-s[0], s[1], s[2]))[:SENTENCES]
    best.sort(key=lambda s: (s[1], s[2]))
    lines = [f"- {sentence} [{slug}]" for _, _, _, sentence, slug in best]
    return "\n".join([INTRO, *lines])


def _sent_text(passage: Passage) -> str:
    """The passage's text without the mark of its cut."""
    return passage.text[: passage.cut[0]] if passage.cut else passage.text
