"""Which parts of the sources reach the LLM: their passages, chosen by relevance under a budget.

Search ranks notes; a 400 KB course among them holds the answer in one section. So each
source is read as the passages `retrieval.sections` cuts it into, and every passage of every source is
scored against the question with search's own French analysis and BM25 statistics (the
index's idf, its mean passage length), the note's title and the passage's heading path
counting as its words; once the vault's meaning is ready, a section that stands out in meaning
among its note's own adds to that (a paraphrase that shares no word with its passage). The
budget goes first to the passages that say most for the room they take (a cut's score over its
length), whichever note they come from: a long note may give several, a weak source none. The
best source always gives something (its best passage, or its opening when none matches: search
found it by a field).

Only what the audience may read is ever quoted: the passage's text and headings are the
index's `readable_text`, and the sources come from that audience's search.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import quote

from .._config import ANCHOR_FORMS
from ..retrieval.analysis import body_counts, slugify, tokens
from ..retrieval.index import Index, Inverted, bm25_each, inverted, length_norm
from ..retrieval.links import link_spans
from ..retrieval.markdown import code_in, code_kept
from ..retrieval.scoring import read_as
from ..retrieval.search import earlier_questions
from ..retrieval.sections import Sections, heading_path, site_headings

MIN_SHARE = 0.5  # a passage scoring less than half the best one gets only the room left (tuned: 0.3–0.5 alike)
OPENING = 400  # a long note's opening passage this short comes along with its other passages
HISTORY_WEIGHT = 0.5  # the earlier questions' words (those search reads too) count half as much as the question's
# A long note's cut standing out in meaning among the note's own gains MEANING_WEIGHT of the
# spread of the note's word scores (at least MEANING_FLOOR) a deviation, from MEANING_MIN_Z
# deviations. Context recall, tune parts of the two long-note sets: 0.444 -> 0.518 and 0.944
# kept at 0.3-0.5 (weight 1 or 2: the first set 0.917; a floor of 3: nothing gained).
MEANING_WEIGHT, MEANING_MIN_Z, MEANING_FLOOR = 0.5, 1.0, 1.0
# The best source's cut closest in meaning to the question is sent whatever its words score,
# right after its best passage: a paraphrase (« jokers » for « caractères génériques ») gives
# its passage too few words to pass the floor. Context recall, long-note sets: tune 89 -> 90
# of 113 (+1 / -0), test 48 -> 49 of 56; the two closest 89 (+1 / -1), every source's 87.
MEANING_PICKS = 1
# Over the floor, the room goes first to the cuts that say most for the room they take: a cut's
# score over its length (at least ROOM_LENGTH characters) to the power ROOM_POWER, so a
# 1,500-character window that says the course's subject words among others no longer takes the
# room of two shorter cuts, one of which answers; a note sent whole is charged ROOM_LENGTH
# whatever its length. Context recall, the five long-note sets' tune parts: 102 -> 106 of 133
# (+4 / -0; power 0.5, 0.75 or 1 from 800 or 1,000 characters: +1 to +4, none lost; from 600
# or 750, up to 4 lost); test parts 53 -> 52 of 66 (+0 / -1). The right note in the prompt,
# every vault's tune parts: documentation 303 -> 314 (+12 / -1), personal +1 / -0, the others
# unchanged; on the questions it was not chosen on (test parts and round 47's fresh sets)
# documentation +4 / -1, personal +2 / -0, reference +1 / -0. A whole note charged its
# length: documentation 303 -> 282, personal 435 -> 425.
ROOM_LENGTH, ROOM_POWER = 800, 0.75

_T = TypeVar("_T")

CUT_MARK = "\n[… note tronquée : {kept} caractères sur {total} …]"

_COUNTS = object()  # Index.derived's key: {path: each cut's (stem counts, length)}
_ANCHORS = object()  # ... {(path, form): each heading's anchor}
_COUNTS_SIZE = object()  # ... [how many cuts _COUNTS holds]
_CUTS_KEPT = 10_000  # long notes' cuts whose counts an index keeps (about 25 MB), then forgets all at once
_ANCHORS_KEPT = 512  # notes whose anchors an index keeps
_CODE = object()  # ... {path: where the note's body holds code}
_CODE_KEPT = 512  # notes whose code an index keeps (a 1.2 MB course's took 67 ms to read)
# A heading as a site's renderer reads it: a code span's text as written (`__init__`), emphasis
# marks dropped (an underscore only at a word's edge, as CommonMark reads it: snake_case stays),
# a link as its text. As CommonMark reads them too, a code span closes on a run of backticks as
# long as its opening one, and a link's text holds no bracket: each run or `[` is scanned once
# (a heading of 4,000 backticks took 0.8 s to read, of 4,000 `[` 64 ms).
_MARKS = re.compile(
    r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)|\*\*|(?<!\w)__|__(?!\w)|(?<!\w)_(?=\S)|(?<=\S)_(?!\w)|\*"
    r"|\[([^\[\]]*)\]\((?:[^()]|\([^()]*\))*\)"
)
_BREAKING_SPACES = re.compile(r"[^\S\n\u00a0\u2007\u202f]+")  # a no-break space is part of a heading (« Qui suis-je ? »); a newline, of a Setext one


@dataclass(frozen=True)
class Passage:
    """One piece of a note sent to the LLM, as its audience may read it."""

    path: str
    slug: str
    title: str
    heading: tuple[str, ...]  # the headings above it, outermost first (plain text)
    anchor: str | None  # the innermost heading's anchor, in the configured form
    url: str | None  # the note's url with the anchor appended
    text: str
    start: int  # offset in the note's body: passages of one note go in the note's order
    score: float
    whole: bool  # the whole note
    cut: tuple[int, int] | None = None  # (kept, total) characters when cut to fit the budget
    opening: bool = False  # the note's short opening, sent along with its chosen passages

    def to_dict(self) -> dict:
        return {"heading": list(self.heading), "anchor": self.anchor, "url": self.url, "chars": len(self.text)}


def question_weights(question: str, index: Index, history: Sequence[dict] = ()) -> dict[str, float]:
    """{stem: weight}: the question's stems, then the earlier user turns' (a follow-up's
    subject), each read as search reads it (an abbreviation as the word it begins)."""
    weights = dict.fromkeys((read_as(t, index) for t in tokens(question)), 1.0)
    for term in tokens(" ".join(earlier_questions(history))):
        weights.setdefault(read_as(term, index), HISTORY_WEIGHT)
    return weights


def choose_passages(
    question: str,
    sources: Sequence[tuple[str, str | None]],
    index: Index,
    *,
    budget: int,
    anchors: str = "slug",
    history: Sequence[dict] = (),
    meaning: Callable[[str], Sequence[float] | None] | None = None,
) -> tuple[Passage, ...]:
    """The passages of `sources` ((path, url), best first) to send, within `budget` characters,
    in prompt order: the sources' order, each note's passages in the note's order. `meaning`:
    a note's path -> how close in meaning each of its cuts is to the question (cosines, in the
    note's order), or None; without it, passages are chosen by their words alone."""
    if anchors not in ANCHOR_FORMS:
        raise ValueError(f"anchors: must be one of {', '.join(ANCHOR_FORMS)}, not {anchors!r}")
    if not sources:
        return ()
    weights = question_weights(question, index, history)
    terms = {t: w * index.idf(t) for t, w in weights.items()}
    avg = max(index.avg_length(), 1.0)
    scored: list[tuple[float, int, int, str]] = []  # (score, source rank, cut number, path)
    closest: list[tuple[int, float]] = []  # (cut number, score): the best source's closest cuts in meaning
    impacts = None
    for rank, (path, _) in enumerate(sources):
        if len(index.analyses[path].sections[1]) == 1:  # a note sent whole: search's own BM25 of it
            if impacts is None:
                impacts = [(w, index.impacts(t)) for t, w in weights.items()]
            value = sum(w * found.get(path, 0.0) for w, found in impacts)
            if value > 0:
                scored.append((value, rank, 0, path))
            continue
        postings, lengths = _cut_counts(index, path)
        values = bm25_each(postings, [length_norm(length, avg) for length in lengths], terms)
        cosines = meaning(path) if meaning is not None else None
        if cosines is not None and len(cosines) == len(values):
            values = _with_meaning(values, cosines)
            if rank == 0:
                nearest = sorted(range(len(cosines)), key=lambda n: (-cosines[n], n))[:MEANING_PICKS]
                closest = [(n, values[n]) for n in nearest]
        scored.extend((value, rank, number, path) for number, value in enumerate(values) if value > 0)
    scored.sort(key=lambda s: (-s[0], s[1], s[2]))
    floor = scored[0][0] * MIN_SHARE if scored else 0.0
    top = sources[0][0]
    # The best source gives something, first: its best passage, or its opening when none
    # matches (search found it by a field); cut to the budget if it must be.
    first = next((s for s in scored if s[3] == top), (0.0, 0, 0, top))
    cuts_of = {path: index.analyses[path].sections[1] for path, _ in sources}
    start, end, _ = cuts_of[top][first[2]]
    chosen: dict[str, dict[int, tuple[float, int]]] = {top: {first[2]: (first[0], min(end - start, budget))}}
    left = budget - min(end - start, budget)
    for number, value in closest:  # then what it says closest to the question, whatever its words
        start, end, _ = cuts_of[top][number]
        if number not in chosen[top] and end - start <= left:
            chosen[top][number] = (max(value, 0.0), end - start)
            left -= end - start
    over = sorted((s for s in scored if s[0] >= floor), key=lambda s: (-_per_room(s[0], cuts_of[s[3]], s[2]), s[1], s[2]))
    for value, _, number, path in over:
        picked = chosen.setdefault(path, {})
        start, end, _ = cuts_of[path][number]
        if number not in picked and end - start <= left:
            picked[number] = (value, end - start)
            left -= end - start
    # Room left: each other source search found gives its best matching passage, as short
    # notes all came whole before passages (a source that matches no word still gives none).
    for value, _, number, path in scored:
        start, end, _ = cuts_of[path][number]
        if not chosen.get(path) and end - start <= left:
            chosen[path] = {number: (value, end - start)}
            left -= end - start
    for path, picked in chosen.items():  # a long note's short opening says what it is about
        cuts = cuts_of[path]
        size = cuts[0][1] - cuts[0][0]
        if picked and len(cuts) > 1 and 0 not in picked and size <= min(OPENING, left):
            picked[0] = (-1.0, size)
            left -= size
    # in search's order: it weighs what passages cannot see (aliases, the questions a note answers)
    return tuple(passage for path, url in sources if chosen.get(path) for passage in _passages_of(index, path, url, chosen[path], anchors))


def _per_room(value: float, cuts: Sequence[tuple[int, int, int]], number: int) -> float:
    """A passage's score for the room it takes: over its cut's length, at least ROOM_LENGTH
    characters, to the power ROOM_POWER; a note sent whole (one cut) is charged ROOM_LENGTH."""
    start, end, _ = cuts[number]
    room = end - start if len(cuts) > 1 else 0
    return value / max(room, ROOM_LENGTH) ** ROOM_POWER


def _with_meaning(values: Sequence[float], cosines: Sequence[float]) -> list[float]:
    """A long note's cuts' word scores with their meaning added, as search fuses them: a cut
    standing out in meaning among the note's own (at least MEANING_MIN_Z deviations above
    their mean cosine) gains MEANING_WEIGHT of the spread of the note's word scores for each
    deviation, so a paraphrase that shares no word with its passage still finds it."""
    import numpy as np  # here: meaning is there only once the semantic index (numpy) is

    words, close = np.asarray(values, dtype=float), np.asarray(cosines, dtype=float)
    spread = float(close.std())
    if spread <= 0:
        return list(values)
    z = (close - close.mean()) / spread
    unit = max(float(words.std()), MEANING_FLOOR)
    return np.where(z >= MEANING_MIN_Z, words + MEANING_WEIGHT * unit * z, words).tolist()


def _cut_counts(index: Index, path: str) -> tuple[Inverted, list[int]]:
    """Each cut's stems (with the note's title and the cut's heading path), inverted
    (`index.inverted`), and each cut's length, for a note cut in several: made when the note
    is first a source, and kept with the index (at most _CUTS_KEPT cuts, then all forgotten
    at once)."""
    sections = index.analyses[path].sections
    memo = index.derived(_COUNTS, dict)
    found = memo.get(path)
    if found is None:
        kept = index.derived(_COUNTS_SIZE, lambda: [0])
        if kept[0] >= _CUTS_KEPT:
            memo.clear()
            kept[0] = 0
        kept[0] += len(sections[1])
        note = index.notes[path]
        body = note.body
        every = []
        for cut in sections[1]:
            head = " ".join((note.title, *heading_path(sections, cut)))
            every.append(body_counts(index.searchable_text(f"{head}\n{index.boilerplate.strip(body[cut[0] : cut[1]])}", path)))
        found = memo[path] = (inverted(every), [sum(counts.values()) for counts in every])
    return found


LINK_REACH = 500  # characters around a cut where a link across its edge is looked for (a label is a few words)


def _around_links(body: str, start: int, end: int) -> tuple[int, int]:
    """A cut of `body` widened to hold whole every link it would cut: its links are rewritten
    for the reader in this text alone, and half of one is not read as a link, so a private
    note's path would stay in it. The sections never cut a link inside a block; a link that
    spans blocks is the author's slip, and is whole here. (Only the cut's surroundings are
    read: the whole of a 1.2 MB course took 50 ms at every answer.)"""
    low, high = max(0, start - LINK_REACH), min(len(body), end + LINK_REACH)
    if not any(opening in body[low:start] or opening in body[max(0, end - LINK_REACH) : end] for opening in "[<"):
        return start, end  # no link opens before either edge: none crosses it (most cuts)
    for first, last in link_spans(body[low:high]):
        if low + first < start < low + last:
            start = low + first
        if low + first < end < low + last:
            end = low + last
    return start, end


def _passages_of(index: Index, path: str, url: str | None, picked: Mapping[int, tuple[float, int]], anchors: str):
    """A note's chosen cuts ({number: (score, room)}) as Passages, in the note's order; the
    overlap of two chosen windows is sent once."""
    note = index.notes[path]
    sections: Sections = index.analyses[path].sections
    cuts = sections[1]
    whole = len(cuts) == 1
    done = 0  # offset sent up to
    for number in sorted(picked, key=lambda n: cuts[n][0]):
        start, end, heading = cuts[number]
        score, room = picked[number]
        if not whole:
            start, end = _around_links(note.body, *index.uncut(path, max(start, done), end))  # no half of a link nor of a hidden path
            start = max(start, done)
        else:
            start, end = 0, len(note.body)
        text = index.readable_text(note.body[start:end], path, _code_in_cut(index, path, start, end)).strip()
        if not text:
            continue
        done = end
        cut = None
        if len(text) > room:
            kept = _cut(text, room)
            cut, text = (len(kept), len(text)), kept + CUT_MARK.format(kept=len(kept), total=len(text))
        anchor = _anchor(index, path, sections, heading, anchors) if heading >= 0 else None
        yield Passage(
            path=path,
            slug=note.slug,
            title=index.readable_title(path),
            heading=tuple(_plain(index.readable_text(h, path)) for h in heading_path(sections, cuts[number])),
            anchor=anchor,
            url=f"{url}#{anchor}" if url and anchor and "#" not in url else url,  # a url with a fragment (/#/portfolio/x) routes by it
            text=text,
            start=start,
            score=round(max(score, 0.0), 4),
            whole=whole and cut is None,
            cut=cut,
            opening=score < 0,
        )


def _code_in_cut(index: Index, path: str, start: int, end: int) -> list[tuple[int, int]]:
    """Where body[start:end] holds code, as the whole note reads it: a list item above the cut
    makes its indented lines the item's paragraph, whose links are rewritten, not code."""
    codes = _kept(index, _CODE, path, _CODE_KEPT, lambda: code_in(index.notes[path].body))
    return [(max(s, start) - start, min(e, end) - start) for s, e, _ in codes if s < end and e > start]


def _cut(text: str, limit: int) -> str:
    """Cut at a paragraph or sentence end when one is close, so the model does not read half a word."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    for sep in ("\n\n", "\n", ". "):
        at = head.rfind(sep)
        if at >= limit * 0.7:
            return head[: at + len(sep)].rstrip()
    return head.rstrip()


def _plain(heading: str, *, spaces_as_written: bool = False, markup: Callable[[str], str] | None = None) -> str:
    """A heading as read: emphasis marks dropped, a code span's text as written, a link as its
    text, its no-break spaces kept (GitHub drops them from an anchor, as it does a space's
    neighbours), and the newlines of a Setext heading written over several lines (GitHub and
    rehype-slug drop them: « Ligne un » then « ligne deux » is ligne-unligne-deux). Runs of
    spaces are one space, but `spaces_as_written` keeps each inside a line as the page's text
    does, for ids that make each space a hyphen (GitHub's, Hugo's: `a  b` is a--b). `markup`
    reads the text outside code spans as the site's renderer does (`_rendered_text`)."""
    outside = markup or (lambda text: text)
    pieces, at = [], 0
    for found in _MARKS.finditer(heading):
        pieces.append(outside(heading[at : found.start()]))
        pieces.append(found.group(2) if found.group(1) else outside(found.group(3) or ""))
        at = found.end()
    pieces.append(outside(heading[at:]))
    lines = "".join(pieces).split("\n")
    return "\n".join((line if spaces_as_written else _BREAKING_SPACES.sub(" ", line)).strip() for line in lines)


# CommonMark's inline HTML (6.6): an open or closing tag (a comment is gone already: the vault
# hides it); and its entity and numeric character references (2.5), which only a semicolon closes
_HTML_TAG = re.compile(
    r"<(?:/?[A-Za-z][A-Za-z0-9-]*+(?:\s++[A-Za-z_:][\w.:-]*+(?:\s*+=\s*+(?:[^\s\"'=<>`]++|'[^']*+'|\"[^\"]*+\"))?+)*+\s*+/?>)",
)
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]*+);")
_NAMED_ENTITY = re.compile(r"&[A-Za-z][A-Za-z0-9]*+;")


def _rendered_text(text: str) -> str:
    """Text outside code as the page's heading element holds it, from which GitHub, Quartz
    (rehype-raw, then rehype-slug's hast-util-to-string) and MkDocs (Python-Markdown's toc:
    `slugify(html.unescape(strip_tags(inner html)))`) make its id: inline HTML tags dropped,
    their text kept, entities read (`&amp;` is &, `&nbsp;` a no-break space)."""
    return _unescaped(_HTML_TAG.sub("", text))


def _unescaped(text: str, references: re.Pattern[str] = _ENTITY) -> str:
    """`text` with the character references `references` finds read (`&amp;` is &)."""
    return references.sub(lambda m: html.unescape(m.group()), text)


def _hugo_text(text: str) -> str:
    """Hugo's `render.TextPlain` (markup/goldmark/internal/render): a raw HTML tag is stripped
    (its text kept); named entities are resolved afterwards over the whole text
    (`util.ResolveEntityNames`, code spans included), numeric ones left as written. Between
    tags, goldmark's typographer (on in Hugo by default) has made each `---` an `&mdash;` and
    each `--` an `&ndash;` before: dashes the id drops, where it keeps `-` as a hyphen."""
    return "".join(_TYPOGRAPHER_DASHES.sub(_typographer_dashes, piece) for piece in _HTML_TAG.split(text))


# goldmark's typographer (extension/typographer.go) reads a run of hyphens from its start: `---`
# an em dash, then `--` an en dash, a lone `-` left as text
_TYPOGRAPHER_DASHES = re.compile(r"-{2,}")


def _typographer_dashes(run: re.Match) -> str:
    return "-" if len(run.group()) % 3 == 1 else "–"


# Quartz's arrows (ofm.ts `arrowRegex`, `parseArrows` on by default): each an HTML arrow (→, ⇒, ←, ⇐)
# in the text it finds them in, which github-slugger then drops
_QUARTZ_ARROWS = re.compile(r"-{1,2}>|={1,2}>|<-{1,2}|<={1,2}")


def _quartz_text(text: str) -> str:
    """`_rendered_text` as Quartz renders it: each text between tags, its entities read, loses
    the arrows its ObsidianFlavoredMarkdown made (`Entrée -> sortie` reads `Entrée → sortie`)."""
    return "".join(_QUARTZ_ARROWS.sub("→", _unescaped(piece)) for piece in _HTML_TAG.split(text))


# A wikilink as ofm.ts's `wikilinkRegex` reads it (its table-cell parts aside): the note, `#` and
# the section (or `#^` and the block), `|` and the label; a bracket ends each, `#` the note and
# the section, `\` the note
_QUARTZ_WIKILINK = re.compile(r"(!?)\[\[([^\[\]|#\\]++)?(#++[^\[\]|#\\]++)?(\\?\|[^\[\]#]++)?\]\]")
# A wikilink as the other sites read it: text, its brackets too
_RAW_WIKILINK = re.compile(r"\[\[([^\[\]]*+)\]\]")


def _wikilinks_shown(heading: str, form: str, may_read: Callable[[str], bool]) -> str:
    """The heading with each wikilink to a note the reader may see (or to a section of its own
    note) as the site shows it; one to a note they may not see is left to `readable_text`,
    which drops its name. `quartz` (ofm.ts): its label, else its section (`[[Note#Sec]]` is
    Sec, `[[Note#^bloc]]` ^bloc), else its note as written (`[[Dossier/Note]]` is
    Dossier/Note); GitHub, Hugo and MkDocs read no wikilink: their brackets are text, the rest
    is read as written (`[[Note#Sec|Voir]]` is Note#Sec|Voir, of which the ids keep NoteSecVoir)."""
    if "[[" not in heading or form not in ("quartz", "github", "hugo", "mkdocs"):
        return heading

    def quartz(m: re.Match) -> str:
        embed, note, section, label = m.groups()
        note = (note or "").strip()
        if embed or label or (note and not may_read(note)):
            return m.group()  # an embed is no text; a label is kept by readable_text
        return section.strip()[1:].strip() if section else note

    def raw(m: re.Match) -> str:
        target = re.split(r"[|#^]", m.group(1), maxsplit=1)[0].strip()
        return m.group(1) if not target or may_read(target) else m.group()

    pattern, shown = (_QUARTZ_WIKILINK, quartz) if form == "quartz" else (_RAW_WIKILINK, raw)
    return code_kept(heading, code_in(heading), lambda text: pattern.sub(shown, text))


# goldmark's heading attributes (parser/atx_heading.go `parseLastLineAttributes`, on in Hugo by
# `markup.goldmark.parser.attribute.title`): a `{…}` list closing the heading's last line, of
# `#id`, `.class` and `name=value` items; `#id` runs up to a space or ASCII punctuation other
# than `_ - : .` (parser/attribute.go). It is no part of the heading's text.
_ATTRIBUTE = r"""(?:[#.][^\s!-,/;-@\[-^`{-~]++|[A-Za-z_:][\w:.-]*+\s*+=\s*+(?:"[^"]*+"|'[^']*+'|[^\s"'{}]++))"""
_ATTRIBUTES = re.compile(rf"[ \t]*+\{{[ \t]*+((?:{_ATTRIBUTE}[ \t]*+,?[ \t]*+)*+)\}}[ \t]*+$")
_ATTRIBUTE_ID = re.compile(r"""(?:^|[\s,])(?:#([^\s!-,/;-@\[-^`{-~]++)|id\s*+=\s*+(?:"([^"]*+)"|'([^']*+)'|([^\s"'{}]++)))""")


def hugo_heading_id(heading: str) -> tuple[str, str | None]:
    """The heading's text without the attribute list closing its last line, and the id that
    list gives (`## Installer {#install}`: `Installer`, `install`), as Hugo renders it; the
    last `#id` or `id=` wins, as goldmark sets attributes in order."""
    head, newline, last = heading.rpartition("\n")
    found = _ATTRIBUTES.search(last) if last.endswith("}") else None
    if found is None:
        return heading, None
    ids = [next(group for group in m.groups() if group is not None) for m in _ATTRIBUTE_ID.finditer(found.group(1))]
    return head + newline + last[: found.start()], ids[-1] if ids else None


def _anchor(index: Index, path: str, sections: Sections, heading: int, form: str) -> str | None:
    """The heading's anchor as the site makes it (`form`), made unique in the note as
    github-slugger does (`unique_anchors`)."""
    if form == "none":
        return None

    def anchors() -> list[str]:
        headings = site_headings(index.notes[path].body)  # a callout's headings take ids too
        if sum(section for _, section in headings) != len(sections[0]):
            headings = tuple((text, True) for _, text in sections[0])
        written = [hugo_heading_id(text) if form == "hugo" else (text, None) for text, _ in headings]
        markup = {"hugo": _hugo_text, "quartz": _quartz_text, "github": _rendered_text, "mkdocs": _rendered_text}.get(form)
        shown = [_wikilinks_shown(text, form, index.may_read) for text, _ in written]
        plain = [_plain(index.readable_text(text, path), spaces_as_written=form in ("github", "quartz", "hugo"), markup=markup) for text in shown]
        if form == "hugo":  # goldmark resolves named entities in the text it made, code included
            plain = [_unescaped(text, _NAMED_ENTITY) for text in plain]
        # Python-Markdown (MkDocs) reads an underline only under one line: several lines above
        # it are a paragraph, with no id
        heading_of = [form != "mkdocs" or "\n" not in text for text in plain]
        given = [custom for (_, custom), heading in zip(written, heading_of, strict=True) if heading]
        auto = [custom or anchor_of(text, form) for text, heading, (_, custom) in zip(plain, heading_of, written, strict=True) if heading]
        made = iter(unique_anchors(auto, form, fixed=[custom is not None for custom in given]))
        ids = [next(made) if heading else "" for heading in heading_of]
        # a heading's own id is shown as written, unless it names what this audience may not
        # read (`{id="prive/Plan.md"}`): the passage then links the page itself
        ids = ["" if custom is not None and index.readable_text(custom, path) != custom else anchor for anchor, (_, custom) in zip(ids, written, strict=True)]
        return [anchor for anchor, (_, section) in zip(ids, headings, strict=True) if section]

    return _kept(index, _ANCHORS, (path, form), _ANCHORS_KEPT, anchors)[heading] or None


def _kept(index: Index, memo: object, key: object, most: int, make: Callable[[], _T]) -> _T:
    """`make()`, kept with the index under `key` in its `memo`, which holds at most `most`
    entries and then forgets them all at once: made for a note when it is first a source."""
    kept = index.derived(memo, dict)
    found = kept.get(key)
    if found is None:
        if len(kept) >= most:
            kept.clear()
        found = kept[key] = make()
    return found


def anchor_of(heading: str, form: str) -> str:
    """`slug`: ASCII, lower case, hyphens (« Tarte aux pommes » → tarte-aux-pommes), the note
    slugs' own rule; `github`, `quartz`: github-slugger's (GitHub, Quartz's rehype-slug): lower case, then
    only letters, marks, decimal and letter numbers, connector punctuation (`_`), `-` and
    spaces are kept, each space a hyphen; `mkdocs`: Python-Markdown's toc (MkDocs): ASCII,
    punctuation dropped, spaces and hyphens one hyphen (l’été → lete); `text`: the heading as
    written, percent-encoded (Obsidian Publish); `hugo`: Hugo's default (`_hugo_anchor`)."""
    if form == "slug":
        return slugify(heading)
    if form in ("github", "quartz"):
        return "".join(c for c in heading.lower() if _github_keeps(c)).replace(" ", "-")
    if form == "mkdocs":  # Python-Markdown's toc.slugify: accents folded, other letters dropped
        ascii_only = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode("ascii")
        return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", ascii_only).strip().lower())
    if form == "hugo":
        return _hugo_anchor(heading)
    if form == "text":
        return quote(heading.replace("\n", " "), safe="")
    raise ValueError(f"anchors: must be one of {', '.join(ANCHOR_FORMS)}, not {form!r}")


def _hugo_anchor(heading: str) -> str:
    """Hugo's default id (`autoHeadingIDType: github`, markup/goldmark/autoid.go
    `sanitizeAnchorName`), made from the heading's last line only, as goldmark's
    `generateAutoHeadingID` reads a Setext heading over several lines: trimmed, each space and
    `-` a hyphen, letters (lower case, rune by rune as Go's `unicode.ToLower`), decimal digits
    and `_` kept, all else dropped, marks too (an emoji's variation selector, a decomposed
    accent); `heading` when nothing is left."""
    kept = []
    for c in heading.rpartition("\n")[2].strip():
        if c in " -":
            kept.append("-")
        elif c == "_" or c.isalpha() or unicodedata.category(c) == "Nd":
            kept.append(c.lower()[0])  # İ: Go's simple mapping, i, where Python's full one adds a dot
    return "".join(kept) or "heading"


# github-slugger strips the categories its script/generate-regex.mjs lists (other numbers,
# punctuation but `-` and connectors, symbols, separators but the space, controls, formats,
# private use, unassigned) except the Alphabetic code points among them: the circled and
# squared Latin letters, symbols that Unicode counts as letters (Ⓐ, 🅰).
_ALPHABETIC_SYMBOLS = ((0x24B6, 0x24E9), (0x1F130, 0x1F149), (0x1F150, 0x1F169), (0x1F170, 0x1F189))


def _github_keeps(c: str) -> bool:
    if c in " -":
        return True
    category = unicodedata.category(c)
    if category[0] in "LM" or category in ("Nd", "Nl", "Pc"):
        return True
    return category == "So" and any(low <= ord(c) <= high for low, high in _ALPHABETIC_SYMBOLS)


def unique_anchors(anchors: Sequence[str], form: str, fixed: Sequence[bool] = ()) -> list[str]:
    """Each heading's anchor unique in its note, as github-slugger's `slug()` makes it (Hugo's
    goldmark alike): an anchor already given gets the first of -1, -2 … not yet given, so
    « Recette », « Recette 1 », « Recette » are recette, recette-1, recette-2. `mkdocs`:
    Python-Markdown's `_1`, `_2`; `text` is left alone: Obsidian Publish links a heading by its
    text, the first of that text. An anchor `fixed` (a heading's own `{#id}`) is kept as
    written and taken from the later ones, as Hugo's idFactory `Put` does."""
    if form == "text":
        return list(anchors)
    if form == "mkdocs":
        return _python_markdown_unique(anchors)
    taken: dict[str, int] = {}
    unique = []
    for base, kept in zip(anchors, list(fixed) + [False] * (len(anchors) - len(fixed)), strict=True):
        anchor = base
        while anchor in taken and not kept:
            taken[base] += 1
            anchor = f"{base}-{taken[base]}"
        taken.setdefault(anchor, 0)
        unique.append(anchor)
    return unique


_ID_COUNT = re.compile(r"^(.*)_([0-9]+)$")


def _python_markdown_unique(anchors: Sequence[str]) -> list[str]:
    """Python-Markdown toc's `unique`: an id taken, or empty, gets `_1`, or its own `_N` one up."""
    taken: set[str] = set()
    unique = []
    for anchor in anchors:
        while anchor in taken or not anchor:
            counted = _ID_COUNT.match(anchor)
            anchor = f"{counted.group(1)}_{int(counted.group(2)) + 1}" if counted else f"{anchor}_1"
        taken.add(anchor)
        unique.append(anchor)
    return unique
