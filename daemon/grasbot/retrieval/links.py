"""Links of every syntax a note may hold: found, their destinations read as vault paths, and
rewritten for a reader.

One module reads them all (wikilinks and embeds, Markdown links, reference definitions,
`<path.md>`, HTML `href` and `src`, `obsidian://`), so what a note links to, where a passage is
never cut (`link_spans`) and what a visitor reads of a link to a private note (`rewrite_links`,
`unreadable_links_dropped`) cannot disagree. Which loaded note a target names (`LinkResolver`,
`resolve_links`) needs the notes: that is `vault`'s.
"""

from __future__ import annotations

import posixpath
import re
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from pathlib import PurePosixPath
from typing import NamedTuple

from .markdown import code_kept

# A heading or a label may hold a bracket, as Obsidian reads them (up to the first `]]`), but not
# `[[`: `[[Note|Projet [2023]]]` was no link, and a private note's name stayed in the text
_WIKILINK_TARGET = r"\[\[([^\[\]|#^]*)(?:[#^]((?:[^\[\]|]++|\[(?!\[)|\](?!\]))*+))?"  # `[[target#heading`, its groups 1 and 2
_WIKILINK = re.compile(rf"(!?){_WIKILINK_TARGET}(?:\|((?:[^\[\]]++|\[(?!\[)|\](?!\]))*+))?\]\]")


class Link(NamedTuple):
    """A named tuple, not a dataclass: a start from the cache makes tens of thousands of them
    (40,000 at 10,000 notes: about 0.08 s as frozen dataclasses, 0.04 s as named tuples)."""

    target: str  # as written, without heading or display text
    display: str | None  # the text after `|`, when the author gave one
    kind: str  # "linked", "related", "body" or "embed"


# _WIKILINK without its leading `(!?)`, so the scan jumps from `[[` to `[[`; the `!` is looked up
# by hand (the character before a `[[` never belongs to the previous link, which ends with `]]`).
_WIKILINK_AT = re.compile(_WIKILINK.pattern.removeprefix("(!?)"))


def links_in(text: str, kind: str) -> list[Link]:
    out: list[Link] = []
    if "[[" not in text:
        return out
    for m in _WIKILINK_AT.finditer(text):
        target = m.group(1).strip()
        if not target:  # [[#heading]] points inside the same note
            continue
        start = m.start()
        embed = start > 0 and text[start - 1] == "!"
        out.append(Link(target, (m.group(3) or "").strip() or None, "embed" if embed else kind))
    return out


# Every other way Markdown and Obsidian link to a note, beside wikilinks: `[label](path.md)` and
# `![alt](path.md)` (destination in `<…>`, URL-encoded, relative to the note, or with spaces when
# it ends in `.md`, as Obsidian accepts, with parentheses in it or a title after it), reference definitions `[ref]: path.md`, `<path.md>` and
# `obsidian://open?file=…` in angle brackets or bare (as Obsidian's « Copy Obsidian URL » pastes
# it), HTML `<a href="…">` and any other tag's `src` or `href` naming a note (`<iframe
# src="note.md">`; an HTML course's `<img src="photo.jpg">` stays as written). A label may hold brackets one level deep (`[![image](a.png)](b.md)`)
# and span lines.
# A fragment does not end on a space another space follows: what comes after, and so the link, is
# the same as after that one, tried first; each end was read on to the spaces' end (24,000 of
# them after `x.md#` and no `)`: three seconds, 200,000: over three minutes).
# Past a `.md#` that ended no link, the path reads on to its fragment's end at once: a `.md` in
# that fragment ends no link either, its fragment's ends and its own end being ends the first
# one tried (`[a](` then `x.md#` 4,000 times: two seconds, 100 KB: forty).
# A label may hold an escaped `]` (`[le plan \] v2](x.md)`, and `[C:\](x.md)` is still a link), a
# title an escaped quote or parenthesis; a bracket inside the label holds no `\`: each `[a\]`
# of a run of them read on to the run's end (200 KB: half a minute a scan).
# A destination may hold an escaped parenthesis or angle bracket (`plan\).md`, `<plan \>.md>`),
# not one in parentheses of its own: `[a](x\)` repeated was read on to the end at each `[`.
# The blanks before the destination are read whole (possessive): one that ends in `.md` could
# start with a blank they gave back, and `[a](` then 100,000 blanks was read again from each.
_MD_LINK = re.compile(
    r"(!?)\[((?:[^\[\]\\]|\\\]?|\[[^\[\]\\]*\])*)\]"
    r"\(\s*+(<(?:[^<>\n\\]|\\[^\n]?)*>|(?:\\[()]|[^()<>\n]|\((?:[^()<>\n\\]|\\(?![()]))*\))(?>\.md#[^()<>\n]*|\\[()]|[^()<>\n]|\((?:[^()<>\n\\]|\\(?![()]))*\))*?\.md(?:#[^()\n]*(?![^\S\n]\s))?(?=\s*\)|\s+[\"'(])|(?:\\[()]|[^\s()<>]|\((?:[^\s()\\]|\\(?![()]))*\))+)"
    r"(?:\s+(?:\"(?:[^\"\\]|\\[\s\S]?)*\"|'(?:[^'\\]|\\[\s\S]?)*'|\((?:[^()\\]|\\[\s\S]?)*\)))?\s*\)",
    re.IGNORECASE,
)
# A reference definition, as CommonMark reads one: its destination and its title may each be on
# the next line (`[ref]:` then `   prive/x.md`: the path was kept in the text, no link read).
# What follows a destination on its own line does not keep it in the text (in doubt, a link);
# one on the next line is a definition's only when a title or nothing follows it, and a title
# on the next line only when nothing does (else that line is prose). `[^1]:` is a footnote.
# One may stand in a block quote, a callout or a list item (`> [ref]: prive/x.md`), whose
# markers it keeps (`within`), and its next lines then open with the quote's `>` too. Its label
# may span lines, but no blank one (`[ma` then `ref]: prive/x.md`: it was text), and hold a
# bracket escaped (`[a\]b]: prive/x.md`: text too).
_REF_TITLE = r"(?:\"(?:[^\"\\\n]|\\[^\n]?)*\"|'(?:[^'\\\n]|\\[^\n]?)*'|\((?:[^()\\\n]|\\[^\n]?)*\))"
_REF_DEF = re.compile(
    r"^(?P<within>(?:[ \t]*+(?:>[ \t]?|[-+*][ \t]++|\d{1,9}[.)][ \t]++))*+) {0,3}"
    r"\[(?!\^)(?P<label>(?:[^\[\]\\\n]++|\\[^\n]?|\n(?![ \t>]*+\n)[ \t>]*+)++)\]:[ \t]*+(?P<next>\n[ \t>]*+)?"
    r"(?P<dest><(?:[^<>\n\\]|\\[^\n]?)*>|[^\s<>]++)(?(next)(?=[ \t]*+(?:$|[\"'(])))"
    rf"(?:[ \t]++{_REF_TITLE}|[ \t]*+\n[ \t>]*+{_REF_TITLE}(?=[ \t]*+$))?",
    re.MULTILINE,
)
# A use: `[text][label]`, `[label][]` or `[label]`, a bracket escaped (`\]`) part of its label or
# text. Not from an escaped `[`, no use's start: each was read on to the next `[` (120 KB of `\[a`:
# 40 s).
_REF_USE = re.compile(r"(?<!(?<!\\)\\)\[((?:[^\[\]\\]++|\\.|\[(?:[^\[\]\\]++|\\.)*+\])*+)\](?:\[((?:[^\[\]\\]++|\\.)*+)\])?", re.DOTALL)
_ANGLE_LINK = re.compile(r"<(obsidian://[^<>\s]+|[^<>\n]+?\.md(?:#[^<>\n]*)?)>", re.IGNORECASE)
# A `<a href>` that no `</a>` follows matches too, with the rest of the text and no group 4: no
# later one is closed either, and each was scanned to the end (100 KB of them: 30 s of a load).
# So does a `<a ` that is no link, up to the next `>`: a `<a ` before that `>` is none either
# (its href would be the first one's), and each was scanned to it, or to the end of the note
# (« <a » 12,000 times, 36 KB: over 20 s). Readers skip such a match (`_html_links`) or give
# it back as written.
_HTML_LINK = re.compile(
    r"<a\s(?:[^>]*?\s)?href\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s>]+))[^>]*>(.*?)</a\s*>"
    r"|<a\s(?:[^>]*?\s)?href\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s>]+)[^>]*>(?!.*?</a\s*>).*"
    r"|<a\s[^>]*",
    re.IGNORECASE | re.DOTALL,
)
_HTML_SOURCE = re.compile(  # a tag left once `_HTML_LINK`'s are read; only a note's counts (`_note_source`)
    r"<[a-z][a-z0-9-]*\s(?:[^<>]*?\s)?(?:src|href)\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s>]+))[^<>]*>",
    re.IGNORECASE,
)
# not after what opens another syntax's destination (`](`, `<`, `href="`, `src=`); a sentence's
# last stop is not the URL's, nor a highlight's closing `==`. A parenthesis or a quote of prose
# opens none: « (obsidian://…) » kept its path; nor does any other `=`: a highlight
# (`==obsidian://…==`) or another attribute (`<span title="obsidian://…">`) kept it too
_OBSIDIAN_URI = r"obsidian://[^\s<>()\[\]\"'`]*[^\s<>()\[\]\"'`.,;:!?=]"
_BARE_OBSIDIAN = re.compile(r"(?<![<\w/])(?<!\]\()(?<!href=)(?<!src=)(?<!href=[\"'])(?<!src=[\"'])" + _OBSIDIAN_URI, re.IGNORECASE)
# What `rewrite_links` reads last, and where a passage is not cut: any URI the other syntaxes
# left, those after `](`, `<` or `href=` included, which they leave only when they are no link
# (`[plan](obsidian://…` with no `)`): the private note's path stayed in the text
_LEFT_OBSIDIAN = re.compile(r"(?<![\w/])" + _OBSIDIAN_URI, re.IGNORECASE)
# A site generator's link to a page by its source file: Hugo's `ref` and `relref` shortcodes
# (`{{< ref "plan" >}}`, `{{% relref path="plan.md#prix" %}}`), Jekyll's `post_url` and `link`
# tags (`{% post_url 2024-05-01-plan %}`), which the site renders as the page's address: a
# note by its file name alone, as a wikilink names one, so the name of a private note stayed
# in the text. As a Markdown link's destination (`[le plan]({{< ref "plan" >}})`), which
# `_MD_LINK` does not read (its blanks, its `<`), the link is read whole: its label. Not
# `{{</* ref … */>}}`, Hugo's way of showing one as text. Eleventy's `url` filter (`{{ '/plan/' |
# url }}`) names a page by its address, a note at the vault's root by its name alone. The first `path=` alone, and a bare
# target whole (possessive): one never closed was read again to the line's end from each
# `path=` and each length of its word, hours for a note's long line. Over several lines too, as
# Hugo reads a shortcode's parameters and Liquid a tag (`{{< ref "plan"` then `>}}`): read up to
# its line's end, such a link left the private note's name in the text; read up to the next
# brace, each start reads its own stretch of the note once.
_SITE_REF = re.compile(
    r"(?:(?P<bang>!?)\[(?P<label>(?:[^\[\]\\]|\\\]?|\[[^\[\]\\]*\])*)\]\(\s*)?"
    r"(?:\{\{[<%]\s*(?:rel)?ref\s+(?>[^{}]*?(?<![\w-])path\s*=\s*)?"
    r"(?:\"(?P<quoted>[^\"\n]*)\"|`(?P<raw>[^`\n]*)`|(?P<bare>[^\s\"`<>%{}]++))[^{}]*?[>%]\}\}"
    r"|\{%-?\s*(?:post_url|link)\s+(?P<liquid>[^\s%{}]+)\s*-?%\}"
    r"|\{\{-?\s*(?:'(?P<url_sq>[^'\n{}]*)'|\"(?P<url_dq>[^\"\n{}]*)\")\s*\|\s*url\b[^{}]*+\}\})"
    r"(?(label)\s*\))"
)
# Dataview's calls that name a note as a wikilink does, by path or file name alone
# (`dv.page("plan")`, `dv.fileLink('plan#prix')`, `dv.sectionLink`, `dv.blockLink`, a query's
# `link("plan")`), in the queries and scripts it runs and a site may render: the private note's
# name stayed in the text. Their first argument, quoted, is the target.
_DATAVIEW_LINK = re.compile(
    # `d`, `l` first and the look behind after it: a pattern that opens with its look behind is tried at every
    # character, 2.1 against 0.7 ms over a 44 KB man page, the same matches
    r"(?:d(?<![\w.$]d)v\.(?:page|fileLink|sectionLink|blockLink)|l(?<![\w.$]l)ink)\(\s*"
    r"(?:\"(?P<dq>[^\"\n]*)\"|'(?P<sq>[^'\n]*)'|`(?P<bq>[^`\n]*)`)"
)
# Dataview's query language names a note by a string too: a source (`FROM "prive/plan"`, `FROM
# #prix and ("plan" or -"jardin")`, any case as Dataview reads it, or a script's
# `dv.pages('"plan"')`) and a file's name or path compared (`WHERE file.name = "plan"`,
# `p.file.path == 'prive/plan.md'`): a private note's name stayed in the text where
# `link("plan")` was masked. A source, or a file's folder compared (`file.folder = "prive"`),
# names a folder too, its notes. A source is read on over its strings, tags, links, `and`, `or`, `-`
# and parentheses, each character once (possessive); `_dataview_names_dropped` reads its strings.
_DATAVIEW_NAMED = re.compile(
    r"file\.(?P<field>name|path|folder)\s*+[!=]?==?\s*+(?:\"(?P<fdq>[^\"\n]*)\"|'(?P<fsq>[^'\n]*)')"
    r"|(?P<source>[fF](?<![\w.][fF])(?i:rom)[ \t]++"
    r"(?:[ \t()!-]++|\"[^\"\n]*+\"|#[^\s()\"]++|\[\[[^\[\]\n]*+\]\]|(?i:and|or)(?!\w))++)"
    r"|dv\.pages\(\s*+(?:'(?P<psq>[^'\n]*)'|\"(?P<pdq>(?:[^\"\\\n]|\\.)*+)\"|`(?P<pbq>[^`\n]*)`)"
)
_DQL_STRING = re.compile(r'"([^"\n]*)"')  # a source's string, in a query or a script's single quotes
_DQL_ESCAPED_STRING = re.compile(r'\\"((?:[^"\\\n])*)\\"')  # one in a script's double quotes
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")  # CommonMark's escapes: `prive/sec\)ret.md` is `sec)ret.md`


def link_target(dest: str, rel: str) -> str | None:
    """The vault path a Markdown or HTML link's destination names, from the note at `rel`
    (URL-decoded, `#heading` and `?query` cut, `..` resolved); None for what is no note of the
    vault's (a web address, `mailto:`, a heading of the same note). A `file://` URL is a path on
    the author's disk, which no visitor may follow: read as a link, by its name."""
    dest = dest.strip()
    if dest.startswith("<") and dest.endswith(">"):
        dest = dest[1:-1].strip()
    dest = _ESCAPED.sub(r"\1", dest)
    if dest[:11].lower() == "obsidian://":
        return _obsidian_target(dest)
    if dest[:7].lower() == "file://":  # a file of the author's disk: a note by its name, as `open?path=`
        return urllib.parse.unquote(urllib.parse.urlsplit(dest).path).strip().lstrip("/") or None
    if _SCHEME.match(dest) or dest.startswith("//"):
        return None
    dest = urllib.parse.unquote(dest.split("#", 1)[0].split("?", 1)[0]).strip()
    if not dest:
        return None
    if dest.startswith("/"):
        return posixpath.normpath(dest.lstrip("/"))
    return posixpath.normpath(posixpath.join(posixpath.dirname(rel), dest))


def _obsidian_target(uri: str) -> str | None:
    """The note an `obsidian://` URI names: `open?file=` (or `path=`, a path on disk: a note by
    its name then), `new?name=`, the Advanced URI plugin's `filepath=`, or the shorthands
    `obsidian://vault/<vault>/<note>` and `obsidian:///<path on disk>`; a search (`search?query=`) names none."""
    parts = urllib.parse.urlsplit(uri)
    query = urllib.parse.parse_qs(parts.query)
    named = (query.get("file") or query.get("path") or query.get("filepath") or query.get("name") or [""])[0]
    if not named and parts.netloc.lower() == "vault":
        named = urllib.parse.unquote(parts.path).lstrip("/").partition("/")[2]
    elif not named and not parts.netloc:  # `obsidian:///home/moi/coffre/note`, a path on disk
        named = urllib.parse.unquote(parts.path)
    return named.strip().lstrip("/") or None


# `{` and `(` are looked for first: one character is found by `memchr`, a pair by a two-way
# search ten times slower (0.13 against 1.3 µs over a 1 KB passage), and most passages hold no
# `{` (87 % of the dev vaults'), many no `(` (48 %). The four pairs looked for in each passage
# made building the prompt 40–50 µs slower at 10,000 generated notes (p50 about 1.1 ms).


def _may_hold_site_ref(text: str) -> bool:
    """Whether `text` may hold a `_SITE_REF`: substring tests, C-fast, where most texts hold none."""
    return "{" in text and ("{{" in text or "{%" in text)


def _may_hold_dataview_link(text: str) -> bool:
    """Whether `text` may hold a `_DATAVIEW_LINK` (« ink( » is `link(`, `Link(`, `dv.fileLink(`…)."""
    return "(" in text and ("page(" in text or "ink(" in text)


def _may_hold_dataview_name(text: str) -> bool:
    """Whether `text` may hold a `_DATAVIEW_NAMED`: but for a script's `file.name == 'plan'`, each
    names a note in double quotes (« rom » alone let the pattern read 151 of 2,731 passages)."""
    return "file." in text or ('"' in text and ("pages(" in text or "from" in text or "FROM" in text or "From" in text))


# The syntaxes a text is read for only when their guard says it may hold one
_GUARDED: dict[re.Pattern[str], Callable[[str], bool]] = {
    _SITE_REF: _may_hold_site_ref,
    _DATAVIEW_LINK: _may_hold_dataview_link,
    _DATAVIEW_NAMED: _may_hold_dataview_name,
}


def may_hold_site_links(text: str) -> bool:
    """Whether `text` may hold a site generator's or Dataview's link to a note (`{{< ref`,
    `{% post_url`, `dv.page(`, `FROM "plan"`): what `mentions` asks before it reads a passage for
    them, where their openings as alternatives of its own pattern made its scan 4–5 times slower."""
    return _may_hold_site_ref(text) or _may_hold_dataview_link(text) or _may_hold_dataview_name(text)


def _site_target(m: re.Match) -> str | None:
    """The note a `_SITE_REF` names, as a wikilink's target (by path or file name, its `#anchor`
    cut); None for an anchor of the same page (`{{< ref "#prix" >}}`)."""
    written = next(g for g in m.group("quoted", "raw", "bare", "liquid", "url_sq", "url_dq") if g is not None)
    target = written.split("#", 1)[0].strip()
    if m.group("url_sq") is None and m.group("url_dq") is None:
        return target or None
    page = target.removesuffix("index.html").removesuffix(".html").strip("/")  # the page `/plan/` is the note `plan`
    if _SCHEME.match(target) or target.startswith("//") or "." in page.rsplit("/", 1)[-1].lower().removesuffix(".md"):
        return None  # a web address, or a file (`/css/site.css`): no note
    return page or None


def md_links_in(text: str, rel: str, kind: str) -> list[Link]:
    """The links of every syntax but wikilinks in `text`, their targets as vault paths."""
    out = []
    if "](" in text:
        for m in _MD_LINK.finditer(text):
            target = link_target(m.group(3), rel)
            if target is not None:
                out.append(Link(target, m.group(2).strip() or None, "embed" if m.group(1) else kind))
    if "]:" in text:
        for m in _REF_DEF.finditer(text):
            target = link_target(m.group("dest"), rel)
            if target is not None:
                out.append(Link(target, None, kind))
    if "<" in text:
        for m in _ANGLE_LINK.finditer(text):
            target = link_target(m.group(1), rel)
            if target is not None:
                out.append(Link(target, None, kind))
        for m in _html_links(text):
            target = link_target(next(g for g in m.group(1, 2, 3) if g is not None), rel)
            if target is not None:
                out.append(Link(target, _TAG.sub("", m.group(4)).strip() or None, kind))
        for m in _HTML_SOURCE.finditer(_HTML_LINK.sub(lambda m: m.group(0) if m.group(4) is None else " ", text)):
            target = _note_source(m, rel)
            if target is not None:
                out.append(Link(target, None, kind))
    if "://" in text:
        for m in _BARE_OBSIDIAN.finditer(text):
            target = link_target(m.group(0), rel)
            if target is not None:
                out.append(Link(target, None, kind))
    if _may_hold_site_ref(text):
        for m in _SITE_REF.finditer(text):
            target = _site_target(m)
            if target is not None:
                out.append(Link(target, (m.group("label") or "").strip() or None, "embed" if m.group("bang") else kind))
    return out


_TAG = re.compile(r"<[^<>]*>")

# Every syntax `rewrite_links` reads as a link, wikilinks and embeds included.
_LINK_SYNTAXES = (_WIKILINK_AT, _MD_LINK, _REF_DEF, _ANGLE_LINK, _HTML_LINK, _HTML_SOURCE, _LEFT_OBSIDIAN, _SITE_REF, _DATAVIEW_LINK, _DATAVIEW_NAMED)


def link_spans(text: str) -> list[tuple[int, int]]:
    """Where `text` holds a link of any syntax, as merged (start, end) spans in order. A passage
    cut inside one would leave each half unread as a link by `rewrite_links`: a private note's
    path, or the name of its file, would stay in the text."""
    syntaxes = [p for p in _LINK_SYNTAXES if p not in _GUARDED or _GUARDED[p](text)]  # most texts hold none of those: 2.3 times the scan
    found = (_html_links(text) if pattern is _HTML_LINK else pattern.finditer(text) for pattern in syntaxes)
    spans = sorted((m.start(), m.end()) for matches in found for m in matches)
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _html_links(text: str) -> Iterator[re.Match]:
    """`_HTML_LINK`'s links in `text`: without the unclosed rest it matches to skip it."""
    return (m for m in _HTML_LINK.finditer(text) if m.group(4) is not None)


def _note_source(m: re.Match, rel: str) -> str | None:
    """The note an `_HTML_SOURCE` tag names, or None: an image, a video or a web page is
    no note (and an HTML course's examples of them are its text)."""
    dest = next(g for g in m.group(1, 2, 3) if g is not None)
    target = link_target(dest, rel)
    if target is None or not (dest.strip()[:11].lower() == "obsidian://" or target.lower().endswith(".md")):
        return None
    return target


_EMBED_SIZE = re.compile(r"(?:^|\|)\s*\d+(?:x\d+)?\s*$")


# Wikilinks are read again while one inside another's label was (an embed in a link's label,
# one pass more), up to this many times: a pass per level, 40,000 links one in the next (240 KB)
# took minutes to load, and a visitor's passage of them seconds. Past it, a wikilink's opening
# that is left (`[[target|`, `[[target#heading`) goes, so no target stays in the text.
_WIKILINK_PASSES = 8
_WIKILINK_OPENING = re.compile(rf"{_WIKILINK_TARGET}\|?")


def rewrite_links(text: str, keep, rel: str = "", code: Sequence[tuple[int, ...]] = ()) -> str:
    """`text` with every link to a note turned into plain words: its label, or its target's name
    when `keep(target)` says the reader may see that note; a link to a note the reader may not
    see keeps only the label the author wrote in this note, or nothing. Every syntax goes the
    same way (`md_links_in`'s, with destinations read from the note at `rel`); links to web
    addresses stay as written, and so does `code` (`code_in`'s spans of `text`), which holds no
    link. (Wikilinks: `_WIKILINK.sub`, scanned from each `[[` like
    `links_in`: a pattern that starts with `(!?)` is tried at every position of every body.)"""
    if code:
        return code_kept(text, code, lambda plain: rewrite_links(plain, keep, rel))
    for _ in range(_WIKILINK_PASSES):
        if "[[" not in text:  # no wikilink without it: spare the scan
            break
        # again while it finds some: one a link inside its label hid (`[[Note|![[photo.png]]]]`,
        # which Obsidian reads as a link to Note) is whole once that one is read
        rewritten = _rewrite_wikilinks(text, keep)
        if rewritten == text:
            break
        text = rewritten
    else:  # links in links in links…: what is left of them loses its targets
        text = _WIKILINK_OPENING.sub("", text)
    if "](" not in text and "]:" not in text and "<" not in text and "://" not in text and not _may_hold_site_ref(text):
        return text
    return _rewrite_other_links(text, keep, rel)


def _rewrite_wikilinks(text: str, keep) -> str:
    """rewrite_links for wikilinks and embeds, in one pass."""
    out: list[str] = []
    last = 0
    for m in _WIKILINK_AT.finditer(text):
        start = m.start()
        embed = start > last and text[start - 1] == "!"
        if embed:  # an embed's `!` goes with it
            start -= 1
        out.append(text[last:start])
        target, label = m.group(1).strip(), (m.group(3) or "").strip()
        if embed:  # `![[photo.png|300]]`, `![[photo.png|Les ruches|400x300]]`: a size is no label
            label = _EMBED_SIZE.sub("", label).strip()
        if label or not target:
            out.append(label)
        elif keep(target):
            out.append(PurePosixPath(target).name)
        last = m.end()
    out.append(text[last:])
    return "".join(out)


def unreadable_links_dropped(text: str, unreadable: Callable[[str], bool], unreadable_folder: Callable[[str], bool] = lambda folder: False) -> str:
    """`text` without the wikilinks, `obsidian://` URIs, site generators' and Dataview's links
    whose target `unreadable` says the reader may not see, wherever they stand, code included
    (`rewrite_links` leaves code as written): each gives way to its label, or nothing, as a
    rewritten link does (a Dataview call keeps its code, its target gone), and so does a
    Dataview query's folder that `unreadable_folder` says holds none the reader may see (`FROM
    "prive"`). A course's
    `[[Note]]` in code, or a link to a note the reader may see, stays as written."""
    if "[[" in text:
        out: list[str] = []
        last = 0
        for m in _WIKILINK_AT.finditer(text):
            if not unreadable(m.group(1).strip()):
                continue
            embed = m.start() > last and text[m.start() - 1] == "!"
            label = (m.group(3) or "").strip()
            out += (text[last : m.start() - 1 if embed else m.start()], _EMBED_SIZE.sub("", label).strip() if embed else label)
            last = m.end()
        text = "".join((*out, text[last:]))
    if _may_hold_site_ref(text):  # Hugo and Jekyll render them in code too

        def hugo(m: re.Match) -> str:
            target = _site_target(m)
            return m.group(0) if target is None or not unreadable(target) else (m.group("label") or "").strip()

        text = _SITE_REF.sub(hugo, text)
    if _may_hold_dataview_link(text):  # a query's or a script's, code as a rule
        text = _DATAVIEW_LINK.sub(lambda m: _dataview_dropped(m, unreadable), text)
    if _may_hold_dataview_name(text):
        text = _DATAVIEW_NAMED.sub(lambda m: _dataview_names_dropped(m, unreadable, unreadable_folder), text)
    if "://" in text:

        def uri(m: re.Match) -> str:
            target = _obsidian_target(m.group(0))
            return "" if target is not None and unreadable(target) else m.group(0)

        text = _LEFT_OBSIDIAN.sub(uri, text)
    return text


def _dataview_dropped(m: re.Match, unreadable: Callable[[str], bool]) -> str:
    """A `_DATAVIEW_LINK` whose target `unreadable` says the reader may not see, its quotes
    left empty (`dv.page("")`): the code around it stays as written."""
    group = next(g for g in ("dq", "sq", "bq") if m.group(g) is not None)
    target = m.group(group).split("#", 1)[0].strip()
    if not target or not unreadable(target):
        return m.group(0)
    return m.string[m.start() : m.start(group)] + m.string[m.end(group) : m.end()]


def _dataview_names_dropped(m: re.Match, unreadable: Callable[[str], bool], unreadable_folder: Callable[[str], bool]) -> str:
    """A `_DATAVIEW_NAMED` with the strings that name a note, or a folder of notes, the reader
    may not see left empty (`FROM ""`, `file.name = ""`, `file.folder = ""`), as
    `_dataview_dropped` leaves a call's. A source's string is a note's or a folder's, as Dataview
    reads it."""
    group = next(g for g in ("fdq", "fsq", "source", "psq", "pdq", "pbq") if m.group(g) is not None)
    start, end = m.span(group)
    if group in ("fdq", "fsq"):
        hides = unreadable_folder if m.group("field") == "folder" else unreadable
        return m.group(0) if not hides(m.group(group)) else m.string[m.start() : start] + m.string[end : m.end()]
    strings = _DQL_ESCAPED_STRING if group == "pdq" else _DQL_STRING

    def kept_or_emptied(s: re.Match) -> str:
        named = s.group(1)
        return s.group(0) if not (unreadable(named) or unreadable_folder(named)) else s.string[s.start() : s.start(1)] + s.string[s.end(1) : s.end()]

    kept = strings.sub(kept_or_emptied, m.group(group))
    return m.string[m.start() : start] + kept + m.string[end : m.end()]


def _shown(target: str, keep) -> str:
    """What a link without a label shows: its target's name if the reader may see it."""
    if not keep(target):
        return ""
    name = PurePosixPath(target).name
    return name[:-3] if name.lower().endswith(".md") else name


_LABEL_BREAK = re.compile(r"\n[ \t>]*")


def _ref_key(label: str) -> str:
    """A reference's label as CommonMark matches a use to its definition: case folded, each run
    of white space one space (`[le plan][Ma  Ref]` uses `[ma ref]:`); a block quote's `>`
    opening one of its lines is no part of it. Lowered only, such a use kept its brackets."""
    return " ".join(_LABEL_BREAK.sub(" ", label).split()).casefold()


def _rewrite_other_links(text: str, keep, rel: str) -> str:
    """rewrite_links for every syntax but wikilinks."""
    if _may_hold_site_ref(text):  # first: a Markdown link around one is read with it

        def hugo(m: re.Match) -> str:
            target = _site_target(m)
            if target is None:
                return m.group(0)
            label = _rewrite_other_links(m.group("label") or "", keep, rel).strip()
            return label or _shown(target, keep)

        text = _SITE_REF.sub(hugo, text)
    if "](" in text:

        def markdown(m: re.Match) -> str:
            target = link_target(m.group(3), rel)
            if target is None:  # a web address stays, but not a link to a note inside its label
                label = _rewrite_other_links(m.group(2), keep, rel)
                return m.group(0) if label == m.group(2) else f"{m.group(1)}[{label}]{m.group(0)[m.end(2) - m.start() + 1 :]}"
            label = _rewrite_other_links(m.group(2), keep, rel).strip()  # an image inside the link
            return label or _shown(target, keep)

        text = _MD_LINK.sub(markdown, text)
    if "]:" in text:
        refs: set[str] = set()

        def definition(m: re.Match) -> str:
            if link_target(m.group("dest"), rel) is None:
                return m.group(0)
            refs.add(_ref_key(m.group("label")))
            return m.group("within")  # a definition shows nothing to a reader: neither does it here

        text = _REF_DEF.sub(definition, text)
        if refs:

            def use(m: re.Match) -> str:
                ref = _ref_key(m.group(2) or m.group(1))
                return m.group(1) if ref in refs else m.group(0)

            text = _REF_USE.sub(use, text)
    if "<" in text:

        def angle(m: re.Match) -> str:
            target = link_target(m.group(1), rel)
            return m.group(0) if target is None else _shown(target, keep)

        def html(m: re.Match) -> str:
            if m.group(4) is None:  # no `</a>` after it
                return m.group(0)
            target = link_target(next(g for g in m.group(1, 2, 3) if g is not None), rel)
            if target is None:
                return m.group(0)
            return _TAG.sub("", m.group(4)).strip() or _shown(target, keep)

        def source(m: re.Match) -> str:
            target = _note_source(m, rel)
            return m.group(0) if target is None else _shown(target, keep)

        text = _ANGLE_LINK.sub(angle, text)
        text = _HTML_LINK.sub(html, text)
        text = _HTML_SOURCE.sub(source, text)
    if "://" in text:

        def bare(m: re.Match) -> str:
            target = link_target(m.group(0), rel)
            return m.group(0) if target is None else _shown(target, keep)

        text = _LEFT_OBSIDIAN.sub(bare, text)
    return text
