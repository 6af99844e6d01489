"""A note's path typed as text, not linked: the last net under what an audience reads.

`links.rewrite_links` reads every link syntax, but an author also types a note's path where no
syntax reads one: in prose (`voir prive/plan.md`), a footnote, an HTML attribute, code, as a
`file:///…/prive/plan.md` or `C:\\…\\prive\\plan.md` address, in a link some syntax reads wrong
(`[le [grand [très]] plan](prive/plan.md)`), or as a link in code (`` `[[plan]]` ``), which
is code. `Mentions.masked` drops each such mention of a note the reader may not see, as a
rewritten link to it drops its target: its vault path (`.md` and all, any case, any white space,
`’` for `'`, `/` or `\\`, percent-encoded once, twice or not) with the folders or address before
it, its file name alone when that name leads to it as a link's would (but for a web site's
address, `https://…/README.md`), its vault path without `.md` (`prive/plan`, as Obsidian names a
note in a folder) or as a static site publishes its page (`/prive/plan/`, `prive/plan/index.html`,
`prive/plan.html`; `prive/mon-plan/`, `prive/Mon+plan` for `prive/Mon plan.md`, `prive/ete/` for
`prive/Été.md`: `_pages`), the page its own `slug:`, `url:`, `permalink:`, Digital Garden's
`dg-permalink:`, Hugo's `aliases:`, or the `url` and `slug` of a Hugo front matter (TOML, JSON,
Org) publish it at (`labo/plan/`: `Note.own_pages`; not one a
public note is published at too: `index._unpublished`), and a wikilink, `obsidian://` URI, Hugo `ref`, Jekyll `post_url` or Dataview `dv.page` to
it left in code. Only path-shaped text goes: a private note `Projet.md` leaves the word « projet » alone,
and a path without `.md` holds a folder and is read whole (`prive/planning` is not `prive/plan`).

A text is read as written, then as a reader sees it rendered (`_Reading`): without what shows
nothing, a zero-width space, a soft hyphen (`prive/pl\\u200ban.md`), a variation selector, a tag
character, an emphasis's `*` or `_` (`prive/*plan*.md`, `_prive/plan.md_`), a highlight's `==`,
a strikethrough's `~~`, an HTML tag (`prive/<b>plan</b>.md`), an escape's `\\`
(`prive/mon\\_plan.md`), and an HTML character reference read as its character
(`prive/pl&shy;an.md`, `plan&#46;md`). An escape shows what it escapes (`prive/pl\\_an.md` reads
« pl_an », not « plan »), a highlight, strikethrough or tag goes in a path without `.md` too
(`prive/==plan==`, `prive/<b>plan</b>`), and so does an emphasis (`prive/*plan*`,
`*prive*/plan`, `prive/_plan_`: a page shows « prive/plan »), read only where a `/` has one in
its path and the name, without it, starts as a hidden one's.

A typed path ends in `.md`, or its name follows a `/`: one scan finds where one may end, the
text is read once as paths are compared (`_Read`), and each end is compared only with the
hidden paths that end in the same characters (`_Paths`), however many notes are.
"""

from __future__ import annotations

import bisect
import codecs
import copy
import heapq
import html
import itertools
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator

from .._urls import hugo_link, quartz_path
from .links import may_hold_site_links, unreadable_links_dropped

# What a reader does not see: a soft hyphen, zero-width characters, a byte order mark, the
# bidirectional marks and controls (`Index.readable_text` drops the controls after masking), the
# Arabic letter mark; and inside a name, the combining grapheme joiner, the Mongolian and other
# variation selectors (an emoji's among them: « ❤\ufe0f » stays where nothing is masked), the
# Mongolian vowel separator.
_INVISIBLE = "\u00ad\u034f\u061c\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufe00-\ufe0f\ufeff"
# Those outside the BMP: the tag characters (a flag's « 🏴 » then « gbsct »), the variation
# selectors' supplement, the shorthand format controls. A class that holds one made each scan of
# the bundled vault's 115 KB 0.5 -> 1.2 ms: a whole text is scanned with them (`_astral_too`)
# only when it holds a character outside the BMP (`_astral`); a window or a place, always.
_ASTRAL_INVISIBLE = "\U000e0001\U000e0020-\U000e007f\U000e0100-\U000e01ef\U0001bca0-\U0001bca3"


def _astral(text: str) -> bool:
    """Whether `text` holds a character outside the BMP, which UTF-16 writes in four bytes: a
    copy, 0.05 ms for 115 KB, where a search for one took 0.7 ms."""
    return not text.isascii() and len(text.encode("utf-16-le", "surrogatepass")) != 2 * len(text)


def _astral_too(pattern: re.Pattern) -> re.Pattern:
    """`pattern` whose classes of `_INVISIBLE` hold `_ASTRAL_INVISIBLE` too."""
    return re.compile(pattern.pattern.replace(_INVISIBLE, _INVISIBLE + _ASTRAL_INVISIBLE))


# the UTF-8 they start with: « %E2%80%8B », and outside the BMP « %F3%A0 » (the tags, the
# supplement's variation selectors), « %F0%9B%B2 » (the shorthand format controls)
_ENCODED_INVISIBLE = r"%(?:25)*(?:[cC]2%(?:25)*[aA][dD]|[eE]2%(?:25)*8[01]|[eE][fF]%(?:25)*[bB][bB]|[fF]3%(?:25)*[aA]0|[fF]0%(?:25)*9[bB]%(?:25)*[bB]2)"
# Where a note's path may end; its case spelt out, as IGNORECASE or a group before the
# alternatives took a passage's scan from 5 to 20 µs. An emphasis that closes after it
# (`_prive/plan.md_`) goes on no name; `%25` is a `%` encoded again (a browser's address).
_END_PLAIN = re.compile(rf"\.[{_INVISIBLE}]*[mM][{_INVISIBLE}]*[dD](?!_*[^\W_])|%(?:25)*2[eE][{_INVISIBLE}]*[mM][{_INVISIBLE}]*[dD](?!_*[^\W_])")
# and the dot as an HTML reference (`plan&#46;md`: the rendered reading reads it), for a text
# that holds a `&`: a third alternative doubled the scan of every note
_END = re.compile(rf"{_END_PLAIN.pattern}|&(?:#0*46|#[xX]0*2[eE]|period);[mM][dD](?!_*[^\W_])")
_ANY_PLAIN = re.compile(rf"{_END_PLAIN.pattern}|\[\[|://")  # what any mention holds: most passages hold none
_ANY = re.compile(rf"{_END.pattern}|\[\[|://")
_END_ASTRAL, _END_PLAIN_ASTRAL = _astral_too(_END), _astral_too(_END_PLAIN)


def _ends(text: str) -> re.Pattern:
    """`_END`, or `_END_PLAIN` for a text without a `&` (`_ANY`, `_ANY_PLAIN` likewise); with
    `_ASTRAL_INVISIBLE` for a text that may hold one."""
    if _astral(text):
        return _END_ASTRAL if "&" in text else _END_PLAIN_ASTRAL
    return _END if "&" in text else _END_PLAIN


_SEPARATOR = re.compile(r"[/\\]|%(?:25)*2[fF]|%(?:25)*5[cC]")  # what a path without `.md` holds
_FRAGMENT = re.compile(r"[#?^][^\s\"'<>()\[\]{}`|]*")  # a heading or a query after it goes too
_PERCENT = re.compile(r"(?:%(?:25)*[0-9A-Fa-f]{2})+")
_BYTE = re.compile(r"%(?:25)*([0-9A-Fa-f]{2})")  # one byte of a run, `%252F` as `%2F`
_ENCODED_BEFORE = re.compile(r"%(?:25)*(?:2[fF]|5[cC])\Z")  # an encoded separator just before a name
# What a rendered Markdown text shows without: the invisible characters, an emphasis's `*` (no
# note's name holds one), a backslash escaping punctuation (`mon\_plan`), and a `_` run that
# may open or close an emphasis (`_prive/plan.md_`, `prive/_plan_.md`; `_unseen` pairs them).
# An HTML tag, comment or character reference: a page shows `prive/<b>plan</b>.md`,
# `prive/pl&shy;an.md` as the path. Each stops at the next `<` or `&`: read once, however hostile.
# A run of white space, which a page shows as one space (`prive/Rachat  Acme.md`): its first alone is read.
_TAG = r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>|<!--[^<>]*-->"
_REFERENCE = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_RENDERED = re.compile(  # read in a window alone (`_Reading._differs`)
    rf"[{_INVISIBLE}{_ASTRAL_INVISIBLE}*]|{_ENCODED_INVISIBLE}|\\[!-/:-@\[-`{{-~]|(?<!\w)_+(?=[^\W_])|(?<=[^\W_])_+(?!\w)|==|~~|{_TAG}|{_REFERENCE.pattern}"
    r"|\s\s"
)
# `==` an Obsidian highlight's, `~~` a strikethrough's (one `~` goes on a name: `~brouillon.md`)
_HIDDEN_BY_RENDERING = re.compile(rf"[{_INVISIBLE}]+|\*+|\\(?=[!-/:-@\[-`{{-~])|={{2,}}|~{{2,}}|{_TAG}|(?<=\s)\s+")  # the escaping backslash alone
# the same without the runs of white space (`_unseen`), which `_normalized` drops at once (`_dropped`)
_HIDDEN_NOT_SPACE = re.compile(_HIDDEN_BY_RENDERING.pattern.removesuffix(r"|(?<=\s)\s+"))
_HIDDEN_NOT_SPACE_ASTRAL = _astral_too(_HIDDEN_NOT_SPACE)
_SPACES_AFTER = re.compile(r"(?<=\s)\s+")  # a run's spaces after its first, which a page does not show
_SPACE_AFTER = re.compile(r"(?<=\s)\s")  # one of them: replaced at once (`_dropped`)
_UNDERSCORES = re.compile(r"_+")
# What the rendered reading looks for in a path without `.md` besides an emphasis
# (`_NEAR_EMPHASIS`: most notes hold a `*` or a `_`, and reading each `/` of them again doubled
# the time a 6 MB vault took); the invisible characters and escapes are rare.
_ESCAPE = re.compile(r"\\[!-/:-@\[-`{-~]")  # a backslash and the punctuation it shows as written
# Two words a run of white space parts on one line (`prive/Rachat  Acme`, `Rachat \u00a0Acme`):
# a page shows one space, and the rendered reading reads one, in a path without `.md` too
_SPACED_WORDS = r"(?<=\w)[^\S\n]{2,}(?=\w)"
_SHOWN_APART = re.compile(rf"[{_INVISIBLE}]|{_ENCODED_INVISIBLE}|{_ESCAPE.pattern}|{_REFERENCE.pattern}|==|~~|{_TAG}|{_SPACED_WORDS}")
_SHOWN_APART_ASTRAL = _astral_too(_SHOWN_APART)
# A separator an emphasis's `*` or `_` is near: in the name after it, on its line
# (`prive/*plan*`, `prive/pl*an*`, `prive/_plan_`, `prive/Plan *secret*`), or in the folders
# before it, with no space between (`*prive*/plan`). One scan for one of the four characters,
# then which it is: an alternation of the two, no first character to search for, took four
# times as long.
_NEAR_EMPHASIS = re.compile(r"[*_/\\](?:(?<=[/\\])(?=[^\n/\\*_]{0,80}+[*_])|(?<=[*_])[^\s*/\\_]{0,80}+[/\\])")
_INVISIBLE_CHAR = re.compile(rf"[{_INVISIBLE}]")  # one, not a run: a scan three times faster
_INVISIBLE_CHAR_ASTRAL = _astral_too(_INVISIBLE_CHAR)
_WEB = re.compile(r"https?://", re.IGNORECASE)  # an address on a web site, not in the vault
_STOP = frozenset(" \t\n\r\"'<>()[]{}`|")  # what ends an address or folders, read leftwards
_IN_NAME = frozenset("-_.~%+")  # a character that goes on a name: no path starts after it
_TAIL = 6  # the characters a path is first looked up by: `lan.md` of `prive/plan.md`
_HEAD = re.compile(r"\w*")  # a name's first word, what a `/` must lead to before a name is looked for
# where a name without `.md` may end: before what no name goes on with (`prive/planning`,
# `prive/plan.pdf`, `prive/plan/annexe`, an accent apart go on; a full stop or a comma does not),
# after the `/` a page's address ends with, or its `.html` file, which the match holds
# (`https://monsite.fr/prive/plan/`, `/prive/plan/index.html`, `prive/plan.html`)
_NAME_ENDS = re.compile(r"(?:/(?:index\.html?)?|\.html?)?(?=[^\w\-~%+/.\u0300-\u036f]|\.(?!\w)|\Z)")
_PAGE_END = len("/index.html") + 1  # what `_NAME_ENDS` reads after a name: `/index.html` and the character after it
# What a site generator writes apart in a page's address (`_pages`): white space, `&`, `'`, `(`…
_PUBLISHED_APART = re.compile(r"[^\w/.+~-]")


# White space of any kind, which a reader of a path sees as a space: a line break, a tab, a
# no-break space (a French keyboard's, U+202F before « : »), any other Unicode space
_ASCII_SPACES = ("\n", "\t", "\r", "\x0b", "\x0c")
_WIDE_SPACE = re.compile(r"[\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")
_SPACE_RUN = re.compile(r"\s{2,}")
# What a reader takes for another character: « İ » (U+0130) for « i », the one character lowered
# into two (« i » and a combining dot: a hidden path's key was longer than the same path read in
# a text), a typographic apostrophe for `'` (« L’offre » as a French keyboard, a phone or a
# word processor writes « L'offre »), a non-breaking or Unicode hyphen for `-`
_READ_AS = (("\u0130", "i"), ("\u2019", "'"), ("\u2018", "'"), ("\u02bc", "'"), ("\u2011", "-"), ("\u2010", "-"))


def _folded(text: str) -> str:
    """`text` as paths are compared, one character for one: lower case, `\\` as `/`, any white
    space as a space (`prive/Rachat\\u00a0Acme.md` is `prive/Rachat Acme.md`, either way round),
    « İ » as « i », « ’ » as `'`, a non-breaking hyphen as `-` (`_READ_AS`). A few
    `str.replace`: `str.translate` took ten times as long as the whole fold did before."""
    if not text.isascii():
        for char, read in _READ_AS:
            text = text.replace(char, read)
        text = _WIDE_SPACE.sub(" ", text)
    text = text.lower().replace("\\", "/")
    for space in _ASCII_SPACES:
        text = text.replace(space, " ")
    return text


class _Compatible(dict[int, str]):
    """A `str.translate` table: each character as NFKC reads it (a full-width form, a
    mathematical letter, « ² », « ｐ », « 𝐩 » as « p »; a ligature, a vulgar fraction as the
    characters it stands for, « ﬁ » as « fi », « ½ » as « 1⁄2 »: a path typed with one was left
    to visitors), but for white space, which `_folded` reads already. A reading of several
    characters moves the offsets after it: `_kept` puts each character back where it was typed.
    Each character looked up once."""

    def __missing__(self, code: int) -> str:
        read = unicodedata.normalize("NFKC", chr(code))
        self[code] = chr(code) if any(char.isspace() for char in read) else read
        return self[code]


_COMPATIBLE = _Compatible()
# What NFKC changes in most French notes, which reads as no path's character: the no-break spaces
# `_folded` reads as spaces, « … ». A 9 KB passage that holds one was read again (0.4 ms), where
# the test below without them takes 0.04.
_USUAL = ("\u00a0", "\u202f", "\u2026")


def _compatible(text: str) -> str:
    """`text` in its compatibility reading (`_COMPATIBLE`); at once the text itself when it holds
    no character that reading changes, in NFC or NFD (a Mac's), but for `_USUAL`."""
    if text.isascii():
        return text
    plain = text
    for usual in _USUAL:
        plain = plain.replace(usual, " ")
    if unicodedata.is_normalized("NFKD", plain) or unicodedata.is_normalized("NFKC", plain):  # NFKD first: NFKC of a Mac's text took 0.3 ms
        return text
    return text.translate(_COMPATIBLE)


def _kept(text: str, compatible: str, masked: str) -> str:
    """`masked`, made from `compatible` (`text` read by `_COMPATIBLE`, a character as one or
    several) by taking spans out, written with the characters `text` typed where it kept them:
    each of its characters is the next one of `compatible` that reads the same, and a typed
    character comes back when all those its reading gave were kept (« ﬁ » for « fi »); one
    whose reading was partly taken out shows what is left of that reading. Two characters that
    read the same and that this takes one for the other show the same to a reader: no path
    comes back. `masked` itself if some character of it is not `compatible`'s (none: masking
    only takes out)."""
    typed = [i for i, char in enumerate(text) for _ in _COMPATIBLE[ord(char)]]  # each of `compatible`'s characters' in `text`
    places: list[int] = []
    at = 0
    for char in masked:
        at = compatible.find(char, at)
        if at < 0:
            return masked
        places.append(at)
        at += 1
    out: list[str] = []
    for source, group in itertools.groupby(places, key=typed.__getitem__):
        read = [compatible[place] for place in group]
        out.append(text[source] if len(read) == len(_COMPATIBLE[ord(text[source])]) else "".join(read))
    return "".join(out)


class Mentions:
    """The typed paths of the notes an audience may not read, and what masks them."""

    def __init__(
        self,
        hidden: Iterable[str],
        resolve: Callable[[str], str | None],
        former: Iterable[tuple[str, str]] = (),
        pages: Iterable[str] = (),
        former_pages: Iterable[tuple[str, str]] = (),
        folders: Iterable[str] = (),
    ):
        """`hidden`: the vault paths of the notes the reader may not see, loaded or not (a note
        --exclude left out); `resolve`: a link's target to its loaded note's path
        (`LinkResolver.resolve`), for a name typed alone; `former`: the (name, path) of hidden
        notes' names no note holds now, which `resolve` reads too (`index.former_names`): kept
        in `key` with the paths; `pages`: the addresses hidden notes' own front matter
        publishes them at (`_urls.own_pages`: `labo/plan` for `permalink: /labo/plan/`), masked
        as a path without `.md` is, so only those that hold a folder (`plan-v2` alone is words);
        `former_pages`: the (page, path) of pages hidden notes held and no note holds now (the
        note went or changed its `permalink:`: `index.former_pages`), masked as `pages` and kept
        in `key` with their paths; `folders`: those that hold hidden notes and none the reader
        may see (`index.hidden_folders`), which a Dataview query names as their notes (`FROM
        "prive"`): kept in `key`, a public note there or gone changes what is masked."""
        self._hidden = frozenset(hidden)
        self._folders = frozenset(_folded(unicodedata.normalize("NFC", folder)) for folder in folders)
        self._former = frozenset(former)
        self._former_pages = frozenset(former_pages)
        self._resolve = resolve
        pages = (*pages, *(page for page, _ in self._former_pages))
        # each in both Unicode forms, and in its compatibility reading, which `masked` reads a text in too
        typed_pages = {unicodedata.normalize(form, page) for page in pages if "/" in page for form in ("NFC", "NFD")}
        self._pages_typed = typed_pages | set(map(_compatible, typed_pages))
        self._pages = frozenset(map(_folded, self._pages_typed))
        typed: set[str] = set()
        for path in self._hidden:
            name = path.rsplit("/", 1)[-1]
            for shown in (path, name) if resolve(name) in (path, None) else (path,):  # None: a note not loaded (--exclude)
                # and with a run of white space as one space, as a page shows a name that holds one
                forms = {unicodedata.normalize(form, spaced) for form in ("NFC", "NFD") for spaced in {shown, _SPACE_RUN.sub(" ", shown)}}
                typed |= forms | set(map(_compatible, forms))
        self._keys = frozenset(map(_folded, typed))
        self._typed = typed
        self._span = 3 * max(map(len, self._keys | self._pages), default=0) + 16  # how far a typed path may reach (`around`): percent-encoded thrice
        # the two readings' tables, made by the first text masked (`_readings`): a start whose
        # notes are masked as the index cache kept them reads none (20 ms at 10,000 notes)
        self._read_as: tuple[_Reading, _Reading] | None = None

    def _readings(self) -> tuple[_Reading, _Reading]:
        """(as written, as rendered); two threads making them at once make the same. A path
        that holds nothing rendering hides reads the same both ways: when none does (as a
        vault's paths are), the rendered reading shares the written one's tables (a start that
        masks a changed note made them twice, 29 ms at 10,000 notes, 1,500 private)."""
        if self._read_as is None:
            rendered, pages = {_shown(key) for key in self._typed}, {_shown(page) for page in self._pages_typed}
            written = _Reading(self._keys, rendered=False, pages=self._pages)
            same = rendered == self._keys and pages == self._pages
            self._read_as = (written, written.rendered() if same else _Reading(rendered, rendered=True, pages=pages))
        return self._read_as

    @property
    def key(self) -> tuple[frozenset[str], frozenset[str], frozenset[tuple[str, str]], frozenset[str], frozenset[tuple[str, str]], frozenset[str]]:
        """The paths, former names, pages, former pages and folders this masks, as plain data:
        equal for two that mask the same (a reload's, when no hidden note came or went nor
        changed its address), and what the index cache keeps of it."""
        return self._hidden, self._keys, self._former, self._pages, self._former_pages, self._folders

    def masked(self, text: str) -> str:
        """`text` without any typed path of a hidden note, nor the folders or address before it,
        nor a wikilink, `obsidian://` URI, Hugo `ref`, Jekyll `post_url` or Dataview `dv.page` to one left in code: as written, then as a reader
        sees it rendered (`_RENDERED`: `prive/pl\\u200ban.md`, `prive/*plan*.md`): one reading
        could not tell a Windows folder's `\\_archive` from an escaped `mon\\_plan`, and the
        written text keeps what it masked before (`mon\\u200bplan.md` is no `plan.md`). Then
        in its compatibility reading (`_COMPATIBLE`: `ｐｒｉｖｅ／Ｐｌａｎ．ｍｄ` is `prive/Plan.md`,
        `ﬁchiers/Plan.md` is `fichiers/Plan.md`, as NFKC and every other fold of GrasBot read
        it), what it did not mask keeping the characters typed (`_kept`: a public note's « m² »,
        « ｎｏｔｅ » or « ﬁn » stay). That reading comes first: the written one took the name
        alone of `prive／plan.md`, where « ／ » parts no folder, and left « prive／ »."""
        if not self._keys and not self._pages:
            return text
        compatible = _compatible(text)  # at once for the usual note, accents and all
        if compatible != text:
            masked = self._masked(compatible)
            text = text if masked == compatible else _kept(text, compatible, masked)
        return self._masked(text)

    def _masked(self, text: str) -> str:
        """`masked` of the text as it is written, without its compatibility reading."""
        written, rendered = self._readings()
        if (_ANY if "&" in text else _ANY_PLAIN).search(text) is not None or may_hold_site_links(text):
            text = written.typed_md_masked(unreadable_links_dropped(text, self._hides, self._hides_folder))
        text = rendered.typed_md_masked(text)  # before a part of it, without `.md`, goes
        # rendered first: it reads `prive/Rachat  Acme` as one path, where the written text's
        # reading took `prive/Rachat` (a private note too) and left « Acme » to the reader; and
        # again after, for what the written reading parted (`Zed/Plan\u200bprive/*Acme*`)
        return rendered.bare_masked(written.bare_masked(rendered.bare_masked(text)))

    def around(self, text: str, start: int, end: int) -> tuple[int, int]:
        """`text[start:end]`, a piece of a longer text, widened so that no typed path `masked`
        removes crosses its ends: a passage cut at the space of `prive/Rachat Acme.md` ended
        with « prive/Rachat » and the next began with « Acme.md », each masked alone, so both
        halves of the name reached the reader. An end is moved only when masking the text
        around it whole differs from masking its two sides apart, by as much as a path may
        span (percent-encoded thrice), a few times at most."""
        if not self._keys and not self._pages:
            return start, end
        reach = self._span
        for _ in range(4):
            if start <= 0 or not self._crosses(text, start, reach):
                break
            start = max(0, start - reach)
        for _ in range(4):
            if end >= len(text) or not self._crosses(text, end, reach):
                break
            end = min(len(text), end + reach)
        return start, end

    def _crosses(self, text: str, at: int, reach: int) -> bool:
        """Whether a typed path `masked` removes crosses `at` (`around`)."""
        low, high = max(0, at - reach), min(len(text), at + reach)
        return self.masked(text[low:at]) + self.masked(text[at:high]) != self.masked(text[low:high])

    def _hides(self, target: str) -> bool:
        """Whether a link's target is a hidden note: one loaded, or one --exclude left out, by its
        path or its file name."""
        resolved = self._resolve(target)
        if resolved is not None:
            return resolved in self._hidden
        key = _folded(target.strip()).lstrip("/")
        return (key if key.endswith(".md") else f"{key}.md") in self._keys

    def _hides_folder(self, folder: str) -> bool:
        """Whether a Dataview query's folder (`FROM "prive/"`) holds hidden notes and none the
        reader may see: its name is theirs."""
        return bool(self._folders) and _folded(unicodedata.normalize("NFC", folder)).strip().strip("/") in self._folders


class _Reading:
    """The hidden paths as one reading of a text writes them (`_normalized`), and what masks them."""

    def __init__(self, keys: Iterable[str], rendered: bool, pages: Iterable[str] = ()):
        self._rendered = rendered
        keys = frozenset(keys)
        self._paths = _Paths(keys)
        # a path without `.md` must hold a folder: `Projet` alone is a word; and the pages
        # hidden notes' front matter publishes them at (`Mentions`), which hold one
        bare = {key[:-3] for key in keys if "/" in key and key.endswith(".md")} | set(pages)
        bare |= {page for path in bare for page in _pages(path)}  # and as a site publishes it
        self._bare = _Paths(bare)
        self._names = frozenset(key.rsplit("/", 1)[1] for key in bare)
        heads: dict[str, set[int]] = {}
        for name in self._names:
            heads.setdefault(_head(name), set()).add(len(name))
        self._heads = {head: sorted(lengths, reverse=True) for head, lengths in heads.items()}  # a name's first word: its lengths
        self._spaced = any(" " in name for name in self._names)  # a name a run of white space may part (`_SPACED_WORDS`)
        self._name_span = max(map(len, self._names), default=0) + _PAGE_END  # and what follows: does the name go on?
        self._reach = max(map(len, keys | bare), default=0) + 2  # how far before its end a path may hold what rendering hides

    def rendered(self) -> _Reading:
        """The rendered reading of these very keys: the same tables, read as rendered."""
        twin = copy.copy(self)
        twin._rendered = True
        return twin

    def typed_md_masked(self, text: str) -> str:
        """`Mentions.masked` of the paths that end in `.md`."""
        out: list[str] = []
        last = 0
        read: _Read | None = None
        for end in _ends(text).finditer(text):
            if end.start() < last or not self._differs(text, max(last, end.start() - self._reach), end.end()):
                continue
            read = read or _Read(text, self._rendered)
            start = self._paths.mention(read, last, end.end())
            if start is None:
                continue
            folders = _folders_before(text, start, last)
            if _WEB.match(text, folders) and _SEPARATOR.search(text, start, end.end()) is None:
                continue  # a file name alone ending a web site's address names that site's file
            out.append(text[last:folders])
            fragment = _FRAGMENT.match(text, end.end())
            last = fragment.end() if fragment else end.end()
        if not out:
            return text
        out.append(text[last:])
        return "".join(out)

    def _differs(self, text: str, start: int, end: int) -> bool:
        """Whether this reading may find a path in `text[start:end]` that the text as written
        does not hold: only around what rendering hides (most of a note's `*` and `_` are far
        from any path), so the rendered reading costs little more than a search."""
        return not self._rendered or _RENDERED.search(text, start, end) is not None

    def _separators_near_unseen(self, text: str) -> Iterator[re.Match]:
        """The separators whose path may hold what `_SHOWN_APART` finds: each `/` of every note
        read again, for the few that hold one, doubled the time a 6 MB vault took."""
        astral = _astral(text)
        shown_apart = _SHOWN_APART_ASTRAL if astral else _SHOWN_APART
        if (
            (_INVISIBLE_CHAR_ASTRAL if astral else _INVISIBLE_CHAR).search(text) is None
            and ("\\" not in text or _ESCAPE.search(text) is None)
            and not ("%" in text or "&" in text or "<" in text or "==" in text or "~~" in text)
            and not (self._spaced and ("  " in text or "\t" in text or not text.isascii()))
        ) or shown_apart.search(text) is None:
            return  # the usual note: one alternation scanned it three times slower than these
        end = 0
        for unseen in shown_apart.finditer(text):
            start = max(end, unseen.start() - self._name_span - 9)  # `%25252F`: a separator, encoded three times
            end = max(end, unseen.end() + self._reach)
            yield from _SEPARATOR.finditer(text, start, end)

    @staticmethod
    def _separators_near_emphasis(text: str) -> Iterator[re.Match]:
        """The separators an emphasis's `*` or `_` may be in the path of (`_NEAR_EMPHASIS`):
        `bare_masked` reads only those whose name, without it, starts as a hidden one's
        (`_emphasized_head`): each `/` of every note read so took 40 % more time."""
        if "*" not in text and "_" not in text:
            return
        for near in _NEAR_EMPHASIS.finditer(text):
            separator = near if text[near.start()] in "/\\" else _SEPARATOR.match(text, near.end() - 1)
            if separator is not None:  # always: the scan ended on one
                yield separator

    def _separators(self, text: str) -> Iterator[re.Match]:
        """The separators a path this reading finds may hold, each once, in order."""
        if not self._rendered:
            yield from _SEPARATOR.finditer(text)
            return
        last = -1
        for separator in heapq.merge(self._separators_near_unseen(text), self._separators_near_emphasis(text), key=lambda m: m.start()):
            if separator.start() != last:
                last = separator.start()
                yield separator

    def _emphasized_head(self, text: str, after: int) -> bool:
        """Whether the name at `after`, without an emphasis's `*` or the `_` that opens one,
        starts as a hidden name does (`*plan*`, `pl*an*`, `_plan_`: « plan »)."""
        shown = _head(text[after : after + self._name_span].replace("*", "").lstrip("_"))
        return shown in self._heads or shown.rstrip("_") in self._heads

    def bare_masked(self, text: str) -> str:
        """`Mentions.masked` of the paths without `.md`: after each `/`, the hidden names that
        end where a name may end (`_NAME_ENDS`) are looked up, the longest first, then the
        whole path that ends with one."""
        if not self._names or not ("/" in text or "\\" in text or "%" in text):  # what _SEPARATOR needs: a substring test is C
            return text
        out: list[str] = []
        last = 0
        read: _Read | None = None
        for separator in self._separators(text):
            after = separator.end()
            if separator.start() < last or _SEPARATOR.match(text, after):
                continue
            head = _head(text, after)
            if (
                text[after : after + 1] != "%"
                and head not in self._heads
                and not (self._rendered and (_SHOWN_APART_ASTRAL.match(text, after + len(head)) or self._emphasized_head(text, after)))
            ):
                continue  # most `/` (a date's, an address's, « et/ou ») lead to no hidden name; a
                # name with what rendering hides in it is read as shown (`prive/pl&shy;an`, `prive/*plan*`: « plan »)
            read = read or _Read(text, self._rendered)
            name_at = read.index(after)
            window = read.folded[name_at : name_at + self._name_span]
            for length in self._heads.get(_head(window), ()):  # `plan secret v2` before `plan secret`
                ends = _NAME_ENDS.match(window, length) if window[:length] in self._names else None
                if ends is None:
                    continue
                start = self._bare.mention(read, last, read.offset(name_at + length))
                if start is not None:
                    out.append(text[last : _folders_before(text, start, last)])
                    end = read.offset(name_at + ends.end())  # with the `/` after it, if any
                    fragment = _FRAGMENT.match(text, end)
                    last = fragment.end() if fragment else end
                    break
        if not out:
            return text
        out.append(text[last:])
        return "".join(out)


class _Paths:
    """Hidden paths as `_folded` writes them, found by where they end: a place is compared only
    with the lengths of the paths that end in its last _TAIL characters (compared with every
    length, 151 for a real vault's private notes, 200 KB of « /x » took 2 s)."""

    def __init__(self, keys: Iterable[str]):
        self._keys = frozenset(keys)
        by_tail: dict[str, set[int]] = {}
        for key in self._keys:
            if len(key) >= _TAIL:
                by_tail.setdefault(key[-_TAIL:], set()).add(len(key))
        self._by_tail = {tail: sorted(lengths, reverse=True) for tail, lengths in by_tail.items()}  # the longest path first
        self._short = sorted({len(key) for key in self._keys if len(key) < _TAIL}, reverse=True)

    def mention(self, read: _Read, low: int, end: int) -> int | None:
        """Where in the text the longest path ending at offset `end` starts, if one does, not
        before offset `low`; it must start a name, not go on one (`monplan.md` is not `plan.md`)."""
        folded, stop, floor = read.folded, read.index(end), read.index(low)
        tail = self._by_tail.get(folded[stop - _TAIL : stop], ()) if stop >= _TAIL else ()
        for length in (*tail, *self._short):
            at = stop - length
            if at < floor or folded[at:stop] not in self._keys:
                continue
            before = folded[at - 1] if at else " "
            if not (before.isalnum() or before in _IN_NAME):
                return read.offset(at)
        return None


class _Read:
    """A text as paths are compared (`_normalized`), made once for a scan: each mention's window
    read again (up to 9 characters, `%E2%80%99`, for each of the longest path's) took 5 s for a 40 KB
    passage of percent-encoded addresses, at each question that quoted it."""

    def __init__(self, text: str, rendered: bool = False):
        self.folded, self._starts = _normalized(text, rendered)
        self._size = len(text)

    def index(self, offset: int) -> int:
        """Where the character at `offset` of the text (or its end, or the next one shown) stands in `folded`."""
        return offset if self._starts is None else bisect.bisect_left(self._starts, offset)

    def offset(self, at: int) -> int:
        """Where the character at `at` of `folded` (or its end) comes from in the text."""
        if self._starts is None:
            return at
        return self._starts[at] if at < len(self._starts) else self._size


def _pages(path: str) -> Iterator[str]:
    """A hidden note's path without `.md` (`_folded`) as the site generators GRASBOT_URL_MAP
    names publish its page, where that differs (`_urls`): Hugo's run of spaces and hyphens one
    hyphen, what it does not keep dropped (`prive/rachat - acme`, `prive/l'offre (v2)` at
    `prive/rachat-acme/`, `prive/loffre-v2/`), Quartz's each white space a hyphen and `&`
    `-and-` (`prive/rachat---acme`), Obsidian Publish's space a `+` (`prive/rachat+acme`): with
    a hyphen for a run alone, `prive/Rachat---Acme`, `prive/Rachat+Acme` showed « Acme ». And
    as sites that slug it otherwise do: Jekyll's `:slug` and Eleventy's `slugify`, each run of
    what is no letter or digit one hyphen (`prive/l-offre-v2/`), and each form without its
    accents, as Hugo's `removePathAccents` (`prive/été 2024` at `prive/ete-2024/`) or Eleventy
    write it: dropping them after a rule or before gives the same, and Hugo's rule, made again
    for the path without them, doubled the time a thousand hidden notes' tables took."""
    plain = _unaccented(path)
    forms: list[str] = []
    if _PUBLISHED_APART.search(path) is not None or "_" in path:
        forms += (hugo_link(path).rstrip("/"), quartz_path(path), path.replace(" ", "+"), _slugged(path))
    if plain != path:
        forms += [_unaccented(form) for form in forms] if forms else [plain]
    for page in dict.fromkeys(forms):
        if page != path and "/" in page and not page.endswith("/"):  # a folder's index page is no note's name
            yield page


_NOT_SLUGGED = re.compile(r"(?:[^\w\u0300-\u036f/]|_)+")  # a run of what is no letter, digit or accent


def _slugged(path: str) -> str:
    """Each folder and the name of `path` as Jekyll's `slugify` writes them (its default mode:
    each run of what is no letter, digit or accent one hyphen, none at either end)."""
    return "/".join(_NOT_SLUGGED.sub("-", part).strip("-") for part in path.split("/"))


class _Marks(dict[int, int | None]):
    """A `str.translate` table that drops the nonspacing marks (Unicode's Mn, as Hugo's
    `removePathAccents`), each character looked up once: a test of each character of each
    form in Python took twice the time Hugo's rule did."""

    def __missing__(self, code: int) -> int | None:
        kept = None if unicodedata.category(chr(code)) == "Mn" else code
        self[code] = kept
        return kept


_MARKS = _Marks()


def _unaccented(text: str) -> str:
    """`text` without its accents (NFD, the nonspacing marks dropped: `_Marks`)."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", text).translate(_MARKS))


def _head(text: str, at: int = 0) -> str:
    """The first word of a name that starts at `at`, as paths are compared (`plan` of `Plan-secret`)."""
    found = _HEAD.match(text, at)
    return _folded(found.group()) if found else ""


def _normalized(window: str, rendered: bool = False) -> tuple[str, list[int] | None]:
    """`window` as paths are compared (`_folded`, percent-encoding read as UTF-8, again if it
    was encoded twice) and, when that changed its length, where each of its characters starts
    in `window` (None: where it is); `rendered`: without what a reader does not see
    (`_unseen`)."""
    folded = _folded(window)
    unseen = _unseen(window) if rendered else []
    spaced = rendered and _SPACES_AFTER.search(window) is not None
    if not unseen and not spaced and "%" not in window and not (rendered and "&" in window) and len(folded) == len(window):
        return folded, None
    chars: list[str] = []
    starts: list[int] = []

    def plain(at: int, until: int) -> None:
        chars.append(folded[at:until])  # one character each: the window's fold, made once (each part's took 2/3 of a read)
        starts.extend(range(at, until))

    def decoded(run: re.Match) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        pending = run.start()
        for byte in _BYTE.finditer(window, run.start(), run.end()):
            got = _folded(decoder.decode(bytes.fromhex(byte.group(1))))
            if rendered:
                got = _INVISIBLE_CHAR_ASTRAL.sub("", got)
            chars.extend(got)
            starts.extend([pending] * len(got))
            if got:
                pending = byte.end()
        tail = _folded(decoder.decode(b"", final=True))
        chars.extend(tail)
        starts.extend([pending] * len(tail))

    def referenced(reference: re.Match) -> None:
        got = html.unescape(reference.group())
        if got == reference.group():  # no character's name (`&nom;`): shown as written
            plain(reference.start(), reference.end())
            return
        got = _INVISIBLE_CHAR_ASTRAL.sub("", _folded(got))
        chars.extend(got)
        starts.extend([reference.start()] * len(got))

    at = 0
    runs = [(run.start(), run.end(), run) for run in _PERCENT.finditer(window)] if "%" in window else []
    if rendered and "&" in window:
        runs += [(ref.start(), ref.end(), ref) for ref in _REFERENCE.finditer(window)]
    if not runs and "\0" not in window:
        return _dropped(window, folded, unseen, spaced)
    if spaced:
        unseen += [(m.start(), m.end(), None) for m in _SPACES_AFTER.finditer(window)]
    for start, end, run in sorted([*runs, *unseen], key=lambda span: span[0]):
        if start < at:
            continue  # within a tag read as unseen (`<a title="x_y &amp; %2F">`)
        plain(at, start)
        if run is not None:
            (referenced if run.re is _REFERENCE else decoded)(run)
        at = end
    plain(at, len(window))
    return "".join(chars), starts


def _dropped(window: str, folded: str, unseen: list[tuple[int, int, None]], spaced: bool) -> tuple[str, list[int]]:
    """`_normalized` of a window where nothing reads as another character (no percent-encoding,
    no character reference), only what shows nothing goes: `unseen`, and with `spaced` each
    white space after another (`_SPACES_AFTER`). Marked in one string, then kept or dropped
    at once: read as spans, each folded apart, a run of spaces after each word made 300 notes
    take 165 ms to mask, against 40 with one space."""
    marked = _SPACE_AFTER.sub("\0", window) if spaced else window  # `window` holds no NUL
    if unseen:
        parts: list[str] = []
        at = 0
        for start, end, _ in sorted(unseen):
            if end > at:  # a span within another (a tag's `_`) is in it already
                start = max(start, at)
                parts += (marked[at:start], "\0" * (end - start))
                at = end
        parts.append(marked[at:])
        marked = "".join(parts)
    shown = marked.encode("latin-1", "replace")  # a zero byte for each character dropped, and for no other
    return "".join(itertools.compress(folded, shown)), list(itertools.compress(range(len(window)), shown))


def _shown(key: str) -> str:
    """`_normalized(key, rendered=True)`'s text, at once for a key that holds nothing it reads
    (nothing rendering hides, no `_`, no `%`, no `&`): its fold, one character for one."""
    if "_" in key or "%" in key or "&" in key or _astral(key) or _HIDDEN_BY_RENDERING.search(key) is not None:
        return _normalized(key, rendered=True)[0]
    return _folded(key)


def _unseen(text: str) -> list[tuple[int, int, None]]:
    """Where `text` holds what a reader of it rendered does not see (`_RENDERED`): the invisible
    characters, `*`, a `\\` that escapes punctuation, and the `_` runs that open and close an
    emphasis in a line; a `_` between two letters, or one nothing closes, is a name's
    (`mon_plan`, Hugo's `_index.md`). A run of white space's spaces after its first are not
    among them: `_normalized` drops those (`_SPACES_AFTER`)."""
    spans: list[tuple[int, int, None]] = []
    held = "*" in text or "\\" in text or "==" in text or "~~" in text or "<" in text  # substring tests are C: its scan took 7 times as long
    astral = _astral(text)
    if held or (_INVISIBLE_CHAR_ASTRAL if astral else _INVISIBLE_CHAR).search(text) is not None:
        spans += ((m.start(), m.end(), None) for m in (_HIDDEN_NOT_SPACE_ASTRAL if astral else _HIDDEN_NOT_SPACE).finditer(text))
    if "_" in text:
        opened: tuple[int, int] | None = None
        for run in _UNDERSCORES.finditer(text):
            start, end = run.span()
            before = text[start - 1] if start else " "
            after = text[end] if end < len(text) else " "
            if before == "\\":
                continue  # escaped: shown as it is
            if _in_word(after) and not _in_word(before):
                opened = (start, end)
            elif opened is not None and _in_word(before) and not _in_word(after):
                if "\n" not in text[opened[1] : start]:
                    spans += ((*opened, None), (start, end, None))
                opened = None
    return spans


def _in_word(char: str) -> bool:
    """Whether `char` goes on a word, as emphasis reads it: a letter, a digit or an accent apart."""
    return unicodedata.category(char)[0] in "LNM"


def _folders_before(text: str, start: int, floor: int) -> int:
    """Where the folders or the address before a path starting at `start` begin (`../`,
    `/home/me/Coffre/`, `file:///…/`, `C:\\…\\`), not before `floor`; `start` if none."""
    shown = start
    while shown > floor and _INVISIBLE_CHAR_ASTRAL.match(text, shown - 1):
        shown -= 1  # `prive/\\ufeffplan.md`: the name was read without it
    if text[shown - 1 : shown] in ("/", "\\"):
        start = shown
    if text[start - 1 : start] not in ("/", "\\") and _ENCODED_BEFORE.search(text, max(floor, start - 32), start) is None:
        return start
    while start > floor and text[start - 1] not in _STOP:
        start -= 1
    return start
