"""The answer GrasBot gives when the LLM cannot: the notes' own most relevant sentences, cited.

A visitor still gets something true and sourced; the response says plainly that it is an
excerpt, not a written answer.
"""

from __future__ import annotations

import re
from typing import Sequence

from ._analysis import tokenize_fr
from ._index import Index
from ._vault import Note

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


def extractive_answer(question: str, notes: Sequence[Note], index: Index, *, grounded: bool) -> str:
    """Up to three sentences, best first, from the first notes, each followed by its [slug]."""
    if not grounded or not notes:
        return NOT_FOUND
    wanted = set(tokenize_fr(question))
    picked: list[tuple[float, int, int, str, str]] = []
    for rank, note in enumerate(notes[:NOTES_USED]):
        scored = []
        for position, sentence in enumerate(sentences(note.body)):
            found = wanted.intersection(tokenize_fr(sentence))
            if found:
                scored.append((sum(index.idf(t) for t in found), rank, position, sentence, note.slug))
        scored.sort(key=lambda s: (-s[0], s[2]))
        picked.extend(scored[:PER_NOTE])
    if not picked:  # nothing matches word for word: the best note's opening still says what it is about
        first = sentences(notes[0].body)
        picked = [(0.0, 0, 0, first[0], notes[0].slug)] if first else []
    if not picked:
        return NOT_FOUND
    best = sorted(picked, key=lambda s: (-s[0], s[1], s[2]))[:SENTENCES]
    best.sort(key=lambda s: (s[1], s[2]))
    lines = [f"- {sentence} [{slug}]" for _, _, _, sentence, slug in best]
    return "\n".join([INTRO, *lines])
