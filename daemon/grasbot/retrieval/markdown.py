"""Code and comments as CommonMark and Obsidian read them: one rule for where a note holds code.

Every reader of a note's text shares it, so none disagrees with another about what is code:
comments are hidden outside code only (`strip_hidden`), tags and links are read and rewritten
outside it (`code_in`, `code_dropped`, `code_kept`), and a long note is never cut inside a block.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from typing import NamedTuple

# Code, read as CommonMark reads it: a fence is closed by a run of its own character at least
# as long, with nothing after it; a backtick fence's info string holds no backtick; a code span
# closes on a run of backticks as long as its opening one, which no backslash escapes. Where it
# cannot be sure it reads no code: an unclosed fence is no fence (so it hides no comment, and
# its lines keep their tags and links). The one rule for every reader of code: comments
# (`_HIDDEN`), the prose tags and links are read from and the text links are rewritten in
# (`code_in`, which adds indented code blocks), and the blocks a long note is never cut inside
# (`FENCED`, `sections`).
_FENCED = (
    r"^[ ]{0,3}(?P<ticks>`{3,})[^`\n]*$.*?^[ ]{0,3}(?P=ticks)`*[ \t]*$"
    r"|^[ ]{0,3}(?P<tildes>~{3,})[^\n]*$.*?^[ ]{0,3}(?P=tildes)~*[ \t]*$"
)
_SPAN = r"(?<![\\`])(?P<span>`+)(?!`)[^\n]*?(?<!`)(?P=span)(?!`)"
FENCED = re.compile(_FENCED, re.MULTILINE | re.DOTALL)
_CODE = re.compile(f"{_FENCED}|{_SPAN}", re.MULTILINE | re.DOTALL)

# What Obsidian shows nobody: `%%comments%%` (inline or over lines) and HTML `<!-- comments -->`.
# Code is matched first and kept as it is: a comment marker inside code is shown as code. An
# unclosed comment runs to the end of the note, as Obsidian hides it.
_HIDDEN = re.compile(f"(?P<code>{_FENCED}|{_SPAN})|%%.*?(?:%%|\\Z)|<!--.*?(?:-->|\\Z)", re.MULTILINE | re.DOTALL)


# A fence's line: up to three spaces, a run of ` or ~ (three or more), what follows on the line.
_FENCE_LINE = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})([^\n]*)$", re.MULTILINE)


def fences_read_once(text: str) -> str:
    """`text` with each fence that nothing closes masked: a line that opens one (an info string
    after its run, « ```python », so it closes none) and that no later line of its character, as
    long or longer and alone, closes. The patterns above tried each such line against the rest
    of the note and failed each time: 10,000 « ```python » lines with no bare fence after them
    took 6 s to read, for no code. Its run replaced by as many NULs (offsets kept), the line is
    what the patterns found there, and never try again: no fence, no code span, no comment.
    A « ~~~~ python » line that only shorter bare lines close is read by the patterns as the
    run those can close and the rest as its info string, after trying each longer run against
    the rest of the note: the tildes past the longest run below are masked, so it is read so at
    once (2,000 « ~~~~ python » blocks closed by « ~~~ » took 2 s, 8,000 of them 33 s)."""
    if "```" not in text and "~~~" not in text:
        return text
    lines = list(_FENCE_LINE.finditer(text))
    above, tildes = [], 0  # the longest run of tildes of the fence lines above each
    for line in lines:
        above.append(tildes)
        if line.group(1)[0] == "~":
            tildes = max(tildes, len(line.group(1)))
    longest = {"`": 0, "~": 0}  # the longest line below that may close a fence of this character
    masked: list[tuple[int, int, str]] = []
    for line, longest_above in zip(reversed(lines), reversed(above), strict=True):
        run, rest = line.group(1), line.group(2)
        if not rest.strip(" \t"):
            # A bare « ~~~~~~ » is tried as every run down to what a line below can close, each
            # try reading the rest of its line: a line of n tildes cost n²/2. A run longer than
            # any line below or above can use, as opener or closer, is read as spaces, which
            # leave it the same closer (`~*[ \t]*$`) and opener (`[^\n]*`) for every shorter run.
            if run[0] == "~" and len(run) > (kept := max(3, longest["~"], longest_above)):
                masked.append((line.start(1) + kept, line.end(1), " "))
            longest[run[0]] = max(longest[run[0]], len(run))
        elif run[0] == "~" and longest["~"] < 3:  # the pattern may read a longer run as ~~~ and an info string
            masked.append((*line.span(1), "\0"))
        elif run[0] == "~" and len(run) > longest["~"]:  # read as the longest run below can close: no longer
            masked.append((line.start(1) + longest["~"], line.end(1), "\0"))
        elif run[0] == "`" and len(run) > longest["`"] and "`" not in rest:  # opens, and nothing closes it
            masked.append((*line.span(1), "\0"))
    if not masked:
        return text
    parts: list[str] = []
    at = 0
    for start, end, fill in reversed(masked):
        parts += (text[at:start], fill * (end - start))
        at = end
    parts.append(text[at:])
    return "".join(parts)


def _sub(pattern: re.Pattern, text: str, replace: Callable[[re.Match, str], str], code: Sequence[tuple[int, int]] = ()) -> str:
    """`pattern.sub` read on `fences_read_once(text)`, its output made of `text`'s own characters:
    `replace(match, the text it covers)`; a match that starts inside one of `code`'s (start, end)
    spans (in order, disjoint) is left as written, and the search goes on after that span."""
    masked = fences_read_once(text)
    if masked is text and not code:
        return pattern.sub(lambda m: replace(m, m.group(0)), text)
    parts: list[str] = []
    at = pos = 0
    ends = [end for _, end in code]
    while (m := pattern.search(masked, pos)) is not None:
        inside = bisect.bisect_right(code, (m.start(), len(text)))  # the spans that start at or before it
        if inside and m.start() < ends[inside - 1]:
            pos = ends[inside - 1]
            continue
        parts += (text[at : m.start()], replace(m, text[m.start() : m.end()]))
        at = pos = max(m.end(), m.start() + 1)
    parts.append(text[at:])
    return "".join(parts)


def _unhide(m: re.Match, covered: str) -> str:
    if m.group("code") is not None:
        return covered
    return "\n" if "\n" in covered else " "  # lines stay lines: sentences are split at them


def strip_hidden(body: str) -> str:
    """`body` without the comments its author hid from readers."""
    if "%%" not in body and "<!--" not in body:  # the scan needs one of them: spare it
        return body
    if _CONTAINED.search(body) is None:
        return _sub(_HIDDEN, body, _unhide)
    fences = [m.span() for m in FENCED.finditer(fences_read_once(body))] if "```" in body or "~~~" in body else []
    return _sub(_HIDDEN, body, _unhide, _contained_code(body, fences))


# Code inside a block quote or a list item, read line by line as CommonMark does (spec 4.4, 4.5,
# 5.1 to 5.3): each line first continues the quotes (`>`) and list items it is in (an item: a
# blank line, or one indented to the item's content), then may open new ones; what is left is
# read from the innermost one's content column. There, four columns more after a blank line, a
# heading or a fence open an indented code block, which runs on through blank lines while its
# lines stay so indented, and a fence indented at most three columns opens a fenced block, closed
# by a run of its own character at least as long inside the same quotes and items (else it is no
# fence, as above; its lines are read again). A line that continues none of them, inside a
# paragraph, is that paragraph's (lazy continuation): no code. The fences `FENCED` finds are read
# first and their lines skipped. HTML blocks are not read: their lines stay prose.
_LIST_MARKER = re.compile(r"(?:[-*+]|\d{1,9}[.)])(?=[ \t]|$)")
_ATX = re.compile(r"#{1,6}(?:[ \t]|$)")
_BREAK = re.compile(r"(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,}|=+[ \t]*)$")  # a rule, or a Setext underline
_OPENS = re.compile(r"(`{3,})[^`]*$|(~{3,})")
_QUOTE = -1  # a quote in the stack of containers; an item is its content column


def _skip_blank(line: str, at: int, column: int) -> tuple[int, int]:
    """(offset, column) of the first character from `at` that is not a space or a tab; a tab goes
    to the next multiple of four, as CommonMark counts it."""
    while at < len(line):
        char = line[at]
        if char == " ":
            column += 1
        elif char == "\t":
            column += 4 - column % 4
        else:
            break
        at += 1
    return at, column


def _past_quote(line: str, mark: int, column: int) -> tuple[int, int, int]:
    """(offset, column, content column) past the quote mark `>` at offset `mark`, in `column`:
    one space or tab after it is the mark's own (CommonMark 5.1)."""
    at, column = mark + 1, column + 1
    return at, column, column + 1 if at < len(line) and line[at] in " \t" else column


def _continued(line: str, stack: Sequence[int]) -> tuple[int, int, int, int]:
    """How many of `stack`'s containers `line` continues, and where its rest begins: (that many,
    offset, column, the content column it is read from)."""
    at = column = content = 0
    first, first_column = _skip_blank(line, at, column)  # again only past a quote mark: a line of deep items is read once
    for depth, item in enumerate(stack):
        if item == _QUOTE:
            if first_column - content > 3 or first == len(line) or line[first] != ">":
                return depth, at, column, content
            at, column, content = _past_quote(line, first, first_column)
            first, first_column = _skip_blank(line, at, column)
        elif first < len(line) and first_column < item:
            return depth, at, column, content
        else:
            content = item
    return len(stack), at, column, content


def _fence_closed(lines: list[str], i: int, stack: Sequence[int], run: str) -> int:
    """The index of the line after line `i` that closes the fence `run` opens, inside `stack`'s
    containers; -(the first line outside them, or the end) when none does."""
    for j in range(i + 1, len(lines)):
        depth, at, column, content = _continued(lines[j], stack)
        if depth < len(stack):
            return -j
        first, first_column = _skip_blank(lines[j], at, column)
        if first_column - content <= 3 and lines[j].startswith(run, first):
            rest = lines[j][first:].lstrip(run[0])
            if not rest.strip(" \t"):
                return j
    return -len(lines)


def _contained_code(text: str, fences: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The code blocks of `text` that `FENCED` does not find, as (start, end) spans from their
    first line's start, their lines without the last newline: indented code, and fences in a
    quote or indented in a list item; `fences`: `FENCED`'s closed fences, in order."""
    lines = text.split("\n")
    starts = [0] * len(lines)
    for i in range(1, len(lines)):
        starts[i] = starts[i - 1] + len(lines[i - 1]) + 1
    found: list[tuple[int, int]] = []
    stack: list[int] = []
    paragraph = False  # the line before is a paragraph's, which the next one may continue
    code_depth = -1  # the containers an indented block is in, while in one
    failed: dict[tuple[str, int], tuple[int, int]] = {}  # (character, depth): (run, line) no closer was found before
    fence = iter(fences)
    next_fence = next(fence, None)
    i = 0
    while i < len(lines):
        line, start = lines[i], starts[i]
        i += 1
        while next_fence is not None and start >= next_fence[1]:
            next_fence = next(fence, None)
        depth, at, column, content = _continued(line, stack)
        if next_fence is not None and start >= next_fence[0]:  # `FENCED`'s: code already
            if start == next_fence[0]:
                del stack[depth:]
            paragraph, code_depth = False, -1
            continue
        first, first_column = _skip_blank(line, at, column)
        if code_depth == len(stack) == depth and (first == len(line) or first_column - content >= 4):
            if first < len(line):
                found[-1] = (found[-1][0], start + len(line))
            continue
        code_depth = -1
        opened: list[int] = []
        while first < len(line) and first_column - content < 4:  # new quotes and items
            if line[first] == ">":
                opened.append(_QUOTE)
                at, column, content = _past_quote(line, first, first_column)
            else:
                marker = _LIST_MARKER.match(line, first) if _BREAK.match(line, first) is None else None
                if marker is None:
                    break
                after, after_column = _skip_blank(line, marker.end(), first_column + marker.end() - first)
                empty = after == len(line)
                if paragraph and depth == len(stack) and not opened and (empty or marker.group()[0].isdigit() and marker.group()[:-1] != "1"):
                    break  # an item that cannot interrupt a paragraph: its text
                at, column = marker.end(), first_column + marker.end() - first
                gap = after_column - column
                content = column + (1 if empty or gap > 4 else gap)
                opened.append(content)
            first, first_column = _skip_blank(line, at, column)
        blank = first == len(line)
        run = _OPENS.match(line, first) if not blank and first_column - content < 4 else None
        lazy = paragraph and depth < len(stack) and not opened and not blank and run is None
        if lazy and (first_column - content >= 4 or _ATX.match(line, first) is None and _BREAK.match(line, first) is None):
            continue  # a paragraph's lazy continuation: its containers stay open
        del stack[depth:]
        stack += opened
        if blank:
            paragraph = False
            continue
        if first_column - content >= 4 and not (paragraph and not opened):
            found.append((start, start + len(line)))
            code_depth, paragraph = len(stack), False
            continue
        if run is not None:
            mark = run.group(1) or run.group(2)
            known = failed.get((mark[0], len(stack)))
            end = -known[1] if known is not None and known[0] <= len(mark) and i - 1 < known[1] else _fence_closed(lines, i - 1, stack, mark)
            if end >= 0:
                found.append((start, starts[end] + len(lines[end])))
                i, paragraph = end + 1, False
                continue
            failed[(mark[0], len(stack))] = (len(mark), -end)
        paragraph = _ATX.match(line, first) is None and _BREAK.match(line, first) is None
    return found


# What `_contained_code` needs to find anything: an indented line (after quote marks or list
# markers), or a fence after a quote mark or a list marker.
# Possessive: a run of « > > > … » is read one way, where the spaces between quote marks could
# each end one mark's or begin the next's, which a line of 50 marks made 2^50 ways to fail.
_CONTAINED = re.compile(
    r"^(?:[ ]{0,3}(?:>|[-*+]|\d{1,9}+[.)])[ ]?)*+(?: {4}|[ ]{0,3}\t)[ \t]*+\S"  # indented code
    r"|^(?:[ \t]*+(?:>|[-*+]|\d{1,9}+[.)])[ \t]*+)++(?:```|~~~)",  # a fence behind a mark
    re.MULTILINE,
)


class Code(NamedTuple):
    start: int
    end: int
    block: bool  # a fence or an indented block; False: a code span


def code_in(text: str) -> list[Code]:
    """Where `text` holds code, in order: fences and code spans as `_CODE` reads them, and the
    blocks of quotes, list items and indentation (`_contained_code`); a span or a fence inside
    such a block is that block's. The one rule for what is code: comments are not read in it
    (`strip_hidden`), tags and links are not read in it, links in it are not rewritten
    (`rewrite_links`), a long note is not cut inside a block (`sections`), and the extractive
    answer quotes no block of it."""
    fenced = "`" in text or "~~~" in text
    contained = _CONTAINED.search(text) is not None
    if not fenced and not contained:
        return []
    found = [Code(*m.span(), m.group("span") is None) for m in _CODE.finditer(fences_read_once(text))] if fenced else []
    if not contained:
        return found
    blocks = _contained_code(text, [(start, end) for start, end, block in found if block])
    if not blocks:
        return found
    merged: list[Code] = []
    for code in sorted([*found, *(Code(start, end, True) for start, end in blocks)]):
        if merged and code.start < merged[-1].end:  # a span on a block's line
            continue
        merged.append(code)
    return merged


_KEPT_MARK = re.compile(r"\0(\d+)\0")


def code_kept(text: str, codes: Sequence[tuple[int, ...]], change: Callable[[str], str], put: Callable[[str], str] = str) -> str:
    """`change(text)` that leaves the pieces of code `codes` (start, end, ...) as written (or as
    `put` gives each): each is read as a mark no pattern of links or markup takes apart, then
    put back. A link in code is no link (`[[Nom de la note]]` in a course on Obsidian), one
    around a code span still is (`[`cmd`](a.md)`). A text that holds a NUL is changed whole:
    its code is not told apart."""
    if not codes or "\0" in text:
        return change(text)
    parts: list[str] = []
    kept: list[str] = []
    at = 0
    for start, end, *_ in codes:
        parts += (text[at:start], f"\0{len(kept)}\0")
        kept.append(text[start:end])
        at = end
    parts.append(text[at:])
    return _KEPT_MARK.sub(lambda m: put(kept[int(m.group(1))]), change("".join(parts)))


def code_dropped(text: str, codes: Sequence[Code], *, spans: bool = False) -> tuple[str, list[tuple[int, int]]]:
    """`text` with each piece of code `codes` made one space: the prose tags and links are read
    from. With `spans`, code spans stay as written (an extract quotes no block, but a span's
    words), and where each stands in what is left comes too."""
    parts: list[str] = []
    where: list[tuple[int, int]] = []
    at = size = 0
    for start, end, block in codes:
        kept = spans and not block
        piece = text[start:end] if kept else " "
        size += start - at
        if kept:
            where.append((size, size + len(piece)))
        parts += (text[at:start], piece)
        size += len(piece)
        at = end
    parts.append(text[at:])
    return "".join(parts), where
