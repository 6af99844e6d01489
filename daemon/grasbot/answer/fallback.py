"""The answer GrasBot gives when the LLM cannot: the notes' own most relevant sentences, cited.

A visitor still gets something true and sourced; the response says plainly that it is an
excerpt, not a written answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..retrieval.analysis import tokenize_fr
from ..retrieval.index import Index
from ..retrieval.markdown import code_dropped, code_in, code_kept
from .passages import Passage, question_weights

SENTENCES = 3
MAX_SENTENCE = 320

INTRO = "Le modèle de langue ne répond pas pour l'instant ; voici ce que disent les notes :"
#: Its opening when the model answered, but not so that the answer could be shown (in English,
#: or nothing left once its unknown citations were removed): it did not fail to answer.
UNUSED_INTRO = "Voici ce que disent les notes :"
#: The extractive answer's opening when generation is full (the response's `busy`).
BUSY_INTRO = "Beaucoup de visiteurs posent des questions en ce moment ; en attendant, voici ce que disent les notes :"
BUSY_NOT_FOUND = "Beaucoup de visiteurs posent des questions en ce moment."
#: The site's pages a visitor is pointed to when the notes do not know (`GRASBOT_SITE_PAGES`).
SITE_PAGES = ("/portfolio", "/competences", "/contact")  # the seed's site


def pages_said(pages: Sequence[str]) -> str:
    """`/portfolio, /competences ou /contact`."""
    return " ou ".join(filter(None, (", ".join(pages[:-1]), *pages[-1:])))


def not_found(pages: Sequence[str] = SITE_PAGES) -> str:
    """What a visitor is told when the notes do not know: the site's own pages, or none."""
    pointer = f" Vous pouvez consulter {pages_said(pages)}." if pages else ""
    return f"Je ne trouve pas cette information dans les notes.{pointer}"


NOT_FOUND = not_found()

# Each of the next three patterns matches what it stands for with its last group, or, without it,
# what it scanned in vain, which the substitution gives back unchanged: every start inside that
# stretch reaches the same `]` (or the same line's first mark) and fails the same way, and is
# skipped. Tried from each `[` (or each line start of a blank run) as they were, a line of
# unclosed brackets (« [0, 1[ », « [[ ») or of blank lines cost the square of its length.
_HEADING_LINE = re.compile(r"^(?=[\s#])\s*(#{1,6}\s.*$)?", re.MULTILINE)  # a heading is a label, not a sentence
_LINK = re.compile(r"!?\[\[([^\]|]*)(?:\|([^\]]*))?(\]\])?")
_MD_LINK = re.compile(r"\[([^\]]*)(\]\((?:[^()]|\([^()]*\))*\))?")  # a destination may hold (…): `javascript:alert('c')`
_MARKUP = re.compile(
    r"^\s*(?:#{1,6}\s+|(?:>\s*)*(?:\[![\w-]+\][+-]?\s*)?(?:(?:[-*+]|\d+[.)])\s+(?:\[.\]\s+)?)?)"  # a line's marks: heading, quote, callout, list, task
    r"|\\(?P<escaped>[\\`*_{}\[\]()#+\-.!|~<>])"  # an escaped character is itself: `\_dmarc`
    r"|`+"
    r"|(?<![\w*_\\])[*_]{1,3}(?=[^\s*_])|(?<=[^\s*_\\])[*_]{1,3}(?![\w*_])"  # emphasis, never inside a word: `pyramid_tm`
    r"|[ \t]+\^[\w-]+[ \t]*$"  # a block's id: `^abc123`
    r"|\[\^[^\[\]\s]+\](?::[ \t]*)?",  # a footnote's mark, and its definition's
    re.MULTILINE,
)
_LIST_ITEM = re.compile(r"\s*(?:[-*+]|\d+[.)])\s+")
_TABLE_RULE = re.compile(r"\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?")
_CELL_BAR = re.compile(r"(?<!\\)\|")
_INLINE_FIELD = re.compile(r"(?<=\w)::[ \t]*")  # Dataview's `Ouverture:: samedi`
# A stop, then space, ends a sentence unless what follows carries it on: a closing guillemet or
# bracket, a comma, or a lower-case word (« quels projets ? », « comment te contacter ? »).
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+(?![»)\]”,;:a-zà-ÿœæ])|\n+")
# Runs of spaces a line may break at, made one space; the no-break spaces French puts before
# « ? ! : ; » and inside guillemets stay, or a phone's narrow screen starts a line with « ? ».
_BREAKING_SPACES = re.compile(r"[^\S\u00a0\u2007\u202f]+")


def _lines_read(text: str) -> str:
    """Lines a reader takes as one: a table row is its cells (its rule is nothing), and a line
    that ends with « : » is one sentence with the list it opens (« Trois commandes suffisent :
    backup ; restore ; list. »): alone, it said nothing, and each item half of it."""
    out: list[str] = []
    lead = None  # the index in `out` of a line that opens a list
    items = 0  # how many it took in
    for line in text.split("\n"):
        bare = line.strip()
        if bare.startswith("|"):
            if _TABLE_RULE.fullmatch(bare):
                continue
            line = bare = " — ".join(cell.strip() for cell in _CELL_BAR.split(bare.strip("|")) if cell.strip())
        item = _LIST_ITEM.match(line)
        if lead is not None and item:
            out[lead] += f"{' ; ' if items else ' '}{line[item.end() :].strip().rstrip(';.,').rstrip()}"
            items += 1
            continue
        if lead is not None and bare:
            out[lead] += "." if items else ""
            lead = None
        if not item and bare.endswith(":"):
            lead, items = len(out), 0
        out.append(line)
    if lead is not None and items:
        out[lead] += "."
    return "\n".join(out)


def _prose_read(text: str) -> str:
    """Markdown read as a reader reads it: headings out, links as their labels, marks off."""
    text = _HEADING_LINE.sub(lambda m: m.group(0) if m.group(1) is None else "", text)
    text = _LINK.sub(lambda m: m.group(0) if m.group(3) is None else m.group(2) or m.group(1).split("#")[0], text)
    text = _MD_LINK.sub(lambda m: m.group(0) if m.group(2) is None else m.group(1), text)
    text = _INLINE_FIELD.sub(" : ", _lines_read(text))
    return _MARKUP.sub(lambda m: m.group("escaped") or "", text)


def sentences(markdown: str) -> list[str]:
    """The sentences an extract may quote; a code span's text is quoted as written, without its
    backticks: a link or a mark in it is no link nor mark (`[[Nom de la note]]`, `**kwargs`)."""
    # code is what `markdown.code_in` reads, the rule tags and links are read by: a fence of four
    # backticks holds one of three, an unclosed fence is no fence, an indented block is code
    text = code_kept(*code_dropped(markdown, code_in(markdown), spans=True), _prose_read, lambda span: span.strip("`"))
    out = []
    for piece in _SENTENCE_END.split(text):
        piece = _BREAKING_SPACES.sub(" ", piece).strip()
        if len(piece) >= 25:
            out.append(piece if len(piece) <= MAX_SENTENCE else piece[: MAX_SENTENCE - 1].rstrip() + "…")
    return out


@dataclass(frozen=True)
class Extract:
    """The extractive answer and the passages its sentences come from, best first: the
    response's sources show those alone as what it was written from, not every passage the
    model would have read (a visitor read « basé sur 5 notes » under three quoted)."""

    text: str
    quoted: tuple[Passage, ...] = ()


def extractive_answer(
    question: str,
    passages: Sequence[Passage],
    index: Index,
    *,
    grounded: bool,
    history: Sequence[dict] = (),
    busy: bool = False,
    pages: Sequence[str] = SITE_PAGES,
) -> str:
    """The text of `extract`."""
    return extract(question, passages, index, grounded=grounded, history=history, busy=busy, pages=pages).text


def extract(
    question: str,
    passages: Sequence[Passage],
    index: Index,
    *,
    grounded: bool,
    history: Sequence[dict] = (),
    busy: bool = False,
    unused: bool = False,
    pages: Sequence[str] = SITE_PAGES,
) -> Extract:
    """`busy`: generation was full, and the answer says so; `unused`: the model answered, but
    not in a way that could be shown (UNUSED_INTRO); `pages`: the site's pages a visitor
    is pointed to when the notes do not know. Up to three sentences from the
    passages the LLM would have read, each followed by its
    [slug]: the best sentence of each of the best passages, best passage first (a passage's
    relevance counts its heading, which none of its sentences holds), then the next best
    sentences of those passages if fewer than three passages have one."""
    if not grounded or not passages:
        return Extract(f"{BUSY_NOT_FOUND} {not_found(pages)}" if busy else not_found(pages))
    weights = question_weights(question, index, history)
    rounds: list[list[tuple[str, Passage]]] = []  # per passage, best passage first: its sentences best first
    for passage in sorted(passages, key=lambda p: -p.score):
        scored = []
        for position, sentence in enumerate(sentences(_sent_text(passage))):
            found = set(weights).intersection(tokenize_fr(sentence))
            if found:
                scored.append((-sum(weights[t] * index.idf(t) for t in found), position, sentence))
        if scored:
            rounds.append([(sentence, passage) for _, _, sentence in sorted(scored)])
    found_in: dict[tuple[str, str], Passage] = {}  # a sentence repeated in several passages is quoted once
    for depth in range(SENTENCES):
        for ranked in rounds:
            if depth < len(ranked):
                sentence, passage = ranked[depth]
                found_in.setdefault((sentence, passage.slug), passage)
    picked = list(found_in.items())[:SENTENCES]
    if not picked:  # nothing matches word for word: the best passage's opening still says what it is about
        first = sentences(_sent_text(passages[0]))
        picked = [((first[0], passages[0].slug), passages[0])] if first else []
    if not picked:
        return Extract(f"{BUSY_NOT_FOUND} {not_found(pages)}" if busy else not_found(pages))
    lines = [f"- {sentence} [{slug}]" for (sentence, slug), _ in picked]
    opening = BUSY_INTRO if busy else UNUSED_INTRO if unused else INTRO
    return Extract("\n".join([opening, *lines]), tuple(dict.fromkeys(passage for _, passage in picked)))


def _sent_text(passage: Passage) -> str:
    """The passage's text without the mark of its cut."""
    return passage.text[: passage.cut[0]] if passage.cut else passage.text
