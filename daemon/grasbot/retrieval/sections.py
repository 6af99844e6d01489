"""A note cut along its Markdown headings: the passages a prompt is built from.

Pure functions on a note's body (front matter already split off). The cut is made once per
note when it is analysed (`index.analyse_note`), kept in the index cache with the analysis,
and made again only for a note whose bytes changed.

- A note of at most WHOLE_NOTE characters is one passage: short notes stay whole.
- Otherwise every heading starts a section, outside code fences and Obsidian's `$$` math: ATX
  (`#` to `######` then a space) and Setext (a paragraph underlined with `===` or `---`, as
  CommonMark, Obsidian and the site generators read it: `---` after a blank line, a list or
  a quote is a rule); the text before the first heading is a section without a heading.
- A section longer than WINDOW characters is cut into windows at block boundaries (blank
  lines), each window starting with the previous window's last block when that block is
  short (OVERLAP): an answer that straddles two windows is whole in one of them.
- Code blocks (as `markdown.code_in` reads code: closed fences, indented code with the blank lines
  inside it, code in a quote or a list item), tables and quotes (callouts included) are blocks
  that are never split, even when longer than a window. A long plain block is split at line ends, then sentence ends.
- No cut falls inside a link of any syntax (`links.link_spans`): a passage's links are
  rewritten for its audience (`Index.readable_text`) one passage at a time, and half a link
  would keep half a name, or a private note's path. A link longer than a window is kept whole.

The cut is plain tuples, as the cache's marshal wants them:
`(headings, cuts)`, `headings` = ((level, text as written), ...) for every heading in order,
`cuts` = ((start, end, heading), ...) with offsets into the body and the index of the
innermost heading above the cut in `headings` (-1: none).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

from .links import link_spans
from .markdown import code_in

WHOLE_NOTE = 8_000  # characters; the bundled vault's longest note is 7.5 KB, and is sent whole
WINDOW = 1_500  # a longer section is cut into windows of at most this many characters
OVERLAP = 400  # a window's last block starts the next window too when it is at most this long

Heading = tuple[int, str]
Cut = tuple[int, int, int]
Sections = tuple[tuple[Heading, ...], tuple[Cut, ...]]

# The text ends where only a closing run of # and spaces is left: tried where a run of spaces
# starts, not at each of its spaces, and each try reads that run once (possessive); from each
# space, the spaces after it were read again up to the end, each way (a heading line of 120,000
# spaces took four and a half minutes to cut).
_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+((?:[ \t]*+[^ \t\n])*?))?(?:[ \t]++#++)?[ \t]*+$")
_SENTENCE = re.compile(r"[.!?…](?:\s+)")


def whole(body: str) -> Sections:
    """The cut of a note sent whole."""
    return ((), ((0, len(body), -1),))


def cut_note(body: str) -> Sections:
    """The note's sections, windowed (see the module docstring)."""
    if not isinstance(body, str):
        raise TypeError(f"cut_note: the body must be a string, not {type(body).__name__}")
    if len(body) <= WHOLE_NOTE:
        return whole(body)
    headings: list[Heading] = []
    cuts: list[Cut] = []
    current = -1
    blocks: list[tuple[int, int, bool]] = []  # the current section's blocks: (start, end, atomic)
    for kind, start, end, level, text in _lines(body):
        if kind == "heading":
            cuts.extend((s, e, current) for s, e in _windows(body, blocks))
            headings.append((level, text.replace("\n", " ")))
            current, blocks = len(headings) - 1, []
        else:
            blocks.append((start, end, kind == "atomic"))
    cuts.extend((s, e, current) for s, e in _windows(body, blocks))
    if not cuts:  # headings only: nothing to send but the note itself
        return whole(body)
    return tuple(headings), tuple(cuts)


def heading_path(sections: Sections, cut: Cut) -> tuple[str, ...]:
    """The headings above `cut`, outermost first: `("Recettes", "Desserts", "Tarte aux pommes")`."""
    headings = sections[0]
    i = cut[2]
    if i < 0:
        return ()
    path = [headings[i][1]]
    level = headings[i][0]
    for j in range(i - 1, -1, -1):
        if headings[j][0] < level:
            level = headings[j][0]
            path.append(headings[j][1])
            if level == 1:
                break
    return tuple(reversed(path))


def site_headings(body: str) -> tuple[tuple[str, bool], ...]:
    """Every heading a site's renderer gives an id, in order, as (text as written, whether it
    starts one of `cut_note`'s sections): the section headings, and those inside a quote or a
    callout (`> ## Exemple`), which no section starts but which take an id, and so the
    number a later heading of the same text gets (`exemple-1`). A Setext heading written over
    several lines keeps its newlines."""
    found: list[tuple[str, bool]] = []
    for kind, start, end, _, text in _lines(body):
        if kind == "heading":
            found.append((text, True))
        elif kind == "atomic" and ">" in body[start:end]:
            found.extend((quoted, False) for quoted in _quoted_headings(body[start:end]))
    return tuple(found)


_QUOTE = re.compile(r" {0,3}(?:> ?)+")
_FENCE_LINE = re.compile(r" {0,3}(`{3,}|~{3,})")


def _quoted_headings(block: str) -> Iterator[str]:
    """The ATX headings of a block's quoted lines, outside code fences (quoted or not)."""
    fence = ""
    for line in block.split("\n"):
        quote = _QUOTE.match(line)
        inner = line[quote.end() :] if quote else line
        opening = _FENCE_LINE.match(inner)
        if fence:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence) and not inner[opening.end() :].strip():
                fence = ""
            continue
        if opening:
            fence = opening.group(1)
            continue
        heading = _HEADING.match(inner) if quote and inner.lstrip(" ").startswith("#") else None
        if heading:
            yield (heading.group(2) or "").strip()


# ---------------------------------------------------------------- reading the blocks


def _lines(body: str) -> Iterator[tuple[str, int, int, int, str]]:
    """The body as headings and blocks, in order: ("heading", start, end of its line, level,
    text) or ("atomic" | "plain", start, end, 0, "") for a block (blank lines between blocks).
    A Setext heading (a paragraph underlined with `=` or `-`) is a heading from its first line
    to its underline, its text the paragraph's lines, stripped, joined by a newline, as
    CommonMark keeps them (`cut_note` shows them joined by a space; a site's anchor reads the
    newline: GitHub's drops it)."""
    pos, n = 0, len(body)
    block_start = -1
    atomic = False
    paragraph = False  # the block so far is a paragraph a Setext underline would make a heading
    math = False  # inside Obsidian's $$ … $$, where nothing is a heading
    # the code blocks, as `vault` reads code (fences closed; indented code through its blank
    # lines; fences and indented code in quotes and list items), each from its first line's start
    fences = iter([(body.rfind("\n", 0, start) + 1, end) for start, end, block in code_in(body) if block])
    fence = next(fences, None)
    while pos < n:
        eol = body.find("\n", pos)
        line_end = n if eol < 0 else eol
        line = body[pos:line_end]
        nxt = line_end + 1
        while fence is not None and fence[0] < pos:
            fence = next(fences, None)
        if fence is not None and fence[0] == pos:  # a block of code is one block with what touches it
            if block_start < 0:
                block_start = pos
            atomic, paragraph = True, False
            pos = fence[1] + 1
            fence = next(fences, None)
            continue
        stripped = line.strip()
        if not stripped:
            if block_start >= 0:
                yield ("atomic" if atomic else "plain"), block_start, pos - 1, 0, ""
                block_start = -1
            pos = nxt
            continue
        heading = _HEADING.match(line) if line.lstrip(" ").startswith("#") else None
        if heading:
            if block_start >= 0:
                yield ("atomic" if atomic else "plain"), block_start, pos - 1, 0, ""
                block_start = -1
            yield "heading", pos, min(nxt, n), len(heading.group(1)), (heading.group(2) or "").strip()
            pos = nxt
            continue
        if paragraph and not math and block_start >= 0 and _UNDERLINE.match(line):
            text = "\n".join(part.strip() for part in body[block_start : pos - 1].split("\n"))
            yield "heading", block_start, min(nxt, n), 1 if stripped[0] == "=" else 2, text
            block_start = -1
            pos = nxt
            continue
        if "$$" in line and line.count("$$") % 2:
            math = not math
        if block_start < 0:
            block_start, atomic = pos, stripped[0] in "|>"
            paragraph = not math and _NOT_PARAGRAPH.match(line) is None
        elif stripped[0] in "|>":
            atomic = True
        if paragraph and (math or "$$" in line or _INTERRUPTS.match(line)):
            paragraph = False
        pos = nxt
    if block_start >= 0:
        yield ("atomic" if atomic else "plain"), block_start, n, 0, ""


# CommonMark's Setext heading underline (4.3): up to three spaces, then `=` or `-` alone
_UNDERLINE = re.compile(r" {0,3}(?:=+|-+)[ \t]*$")
# What a paragraph does not start with: indented code, a list item, a quote, a table, HTML, a rule
_NOT_PARAGRAPH = re.compile(r" {4}|\t| {0,3}(?:[-*+](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$)|[>|<]|(?:[-*_][ \t]*){3,}$)")
# What ends a paragraph without a blank line, so that an underline below is no longer its own
_INTERRUPTS = re.compile(r" {0,3}(?:[-*+][ \t]|1[.)][ \t]|[>|<])")


def _windows(body: str, blocks: list[tuple[int, int, bool]]) -> list[tuple[int, int]]:
    """Blocks packed into windows of at most WINDOW characters, with a block of overlap."""
    pieces: list[tuple[int, int]] = []
    for start, end, atomic in blocks:
        end = _rstrip(body, start, end)
        if end <= start:
            continue
        if atomic or end - start <= WINDOW:
            pieces.append((start, end))
        else:
            pieces.extend(_split_plain(body, start, end))
    if not pieces:
        return []
    if pieces[-1][1] - pieces[0][0] <= WINDOW:
        return [(pieces[0][0], pieces[-1][1])]
    windows: list[tuple[int, int]] = []
    first = 0
    for i in range(1, len(pieces) + 1):
        if i < len(pieces) and pieces[i][1] - pieces[first][0] <= WINDOW:
            continue
        windows.append((pieces[first][0], pieces[i - 1][1]))
        if i == len(pieces):
            break
        last = pieces[i - 1]
        # the previous window's last block starts this one, when short and not its only block
        overlap = i - 1 > first and last[1] - last[0] <= OVERLAP and pieces[i][1] - last[0] <= WINDOW
        first = i - 1 if overlap else i
    return windows


def _rstrip(body: str, start: int, end: int) -> int:
    while end > start and body[end - 1].isspace():
        end -= 1
    return end


def _split_plain(body: str, start: int, end: int) -> list[tuple[int, int]]:
    """A plain block longer than WINDOW, in pieces: at line ends, else at sentence ends, else at
    a space; never inside a link."""
    links = [(s + start, e + start) for s, e in link_spans(body[start:end])]
    pieces = []
    while end - start > WINDOW:
        at = _split_point(body, start, start + WINDOW, links)
        pieces.append((start, _rstrip(body, start, at)))
        start = at
        while start < end and body[start].isspace():
            start += 1
    if end > start:
        pieces.append((start, end))
    return pieces


def _split_point(body: str, start: int, limit: int, links: list[tuple[int, int]]) -> int:
    """Where to cut body[start:limit]: the last line end, sentence end or space in its second
    half (in that order of preference) that is outside every link; else `limit`, or, when that
    falls inside a link, before the link, or after it when it began at `start`."""
    half = start + (limit - start) // 2
    candidates = [body.rfind("\n", half, limit) + 1]
    sentence_ends = [m.end() for m in _SENTENCE.finditer(body, half, limit)]
    candidates.append(sentence_ends[-1] if sentence_ends else 0)
    candidates.append(body.rfind(" ", half, limit) + 1)
    for at in candidates:
        if at > half and _link_around(links, at) is None:
            return at
    link = _link_around(links, limit)
    if link is None:
        return limit
    return link[0] if link[0] > start else link[1]


def _link_around(links: list[tuple[int, int]], at: int) -> tuple[int, int] | None:
    """The link a cut at `at` would fall inside (`links`: sorted, disjoint spans), if any."""
    i = bisect.bisect_right(links, (at, at)) - 1
    if i >= 0 and links[i][0] < at < links[i][1]:
        return links[i]
    return None
