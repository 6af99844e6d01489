"""Who may read a note: what its frontmatter says, the keys the publishers an author uses read
(Obsidian Publish, Jekyll, Hugo, Quartz, Hexo, Digital Garden), its publish and expiry dates,
and the blocks Obsidian shows as text, or hides, that still say so (Hugo's TOML, JSON and Org front matter among them, and
any front matter Hugo reads in an HTML comment at the top of the note). In doubt, private: every value read
otherwise than its author may have meant keeps the note from visitors, with a warning. And
where such a Hugo front matter ends, with its fields (`hugo_frontmatter`): no text of the note,
read once for both.

« Tester cette note » (the plugin's `noteTest.ts`) reads notes by the same rule, and both sides
run the cases of `shared-protocol/cases/visibility.json` and `dates.json`.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
import time
import tomllib
import unicodedata
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Any, NamedTuple

import yaml

from .._zones import zone_named
from .frontmatter import FIELD_KEY, LINE_START, MAX_DEPTH, TEXT_FIELDS, YAML_BREAKS, FrontmatterTooLarge, keys_written, load_frontmatter


@dataclass(frozen=True, slots=True)
class Readers:
    """Whether visitors may read a note, and when its dates change that (a POSIX time; None:
    they never will): a load after it reads the note again, its file unchanged."""

    public: bool
    turn: float | None = None


def who_reads(
    meta: dict,
    header: str,
    text: str,
    body: str,
    prose: str,
    *,
    detected: bool,
    default_public: bool,
    zone: str,
    warnings: list[str],
    hugo: HugoFrontmatter | None = None,
) -> Readers:
    """Who may read the note whose frontmatter `header` holds `meta` (`detected`: the file
    opens with one), `text` its whole text, `body` what follows the frontmatter and `prose` the
    body without its code: the frontmatter first, then a frontmatter Obsidian reads as text
    (behind blank lines, or a second one after the first), one Hugo reads in an HTML comment at
    the top, and a properties block lower down, each of which may keep it private. `zone` reads the dates written without their offset.
    `hugo`: `hugo_frontmatter(text)`, when the caller read it already for the note's fields."""
    verdicts = [_is_public(meta, header, default_public, warnings, zone)]
    if not detected:
        hugo = hugo_frontmatter(text) if hugo is None else hugo
        verdicts.append(_late_frontmatter(text, default_public, warnings, second=False, zone=zone))
        verdicts.append(_toml_frontmatter(hugo, warnings, zone))
        verdicts.append(_json_frontmatter(hugo, warnings, zone))
        verdicts.append(_org_frontmatter(hugo, warnings, zone))
        verdicts.append(_commented_frontmatter(text, warnings, zone))
    elif verdicts[0].public:
        verdicts.append(_late_frontmatter(body, default_public, warnings, second=True, zone=zone))
    if all(verdict.public for verdict in verdicts):
        verdicts.append(_lower_blocks(prose, warnings, zone))
    return _together(verdicts)


def _together(verdicts: list[Readers]) -> Readers:
    """What several places of a note say together: public if each lets visitors read it, and
    the first instant one of their dates changes what it says."""
    return Readers(all(v.public for v in verdicts), min((v.turn for v in verdicts if v.turn is not None), default=None))


_SAYS_NOTHING = Readers(True)  # a block that is not there, or does not say who reads the note
_PRIVATE = Readers(False)


_VISIBILITY_LINE = re.compile(rf"{LINE_START}visibility[ \t]*:", re.IGNORECASE)


def _as_written(header: str, key: str, value: Any) -> str:
    """A field as its author wrote it, for a warning: `visibility: true`, `publish: "no"`, where
    Python's forms, `True`, `'no'`, `None` for a blank, named nothing the author typed. A value
    on the lines below its key (a YAML list) is shown in YAML's flow form, `[public]`."""
    m = re.search(rf"{LINE_START}{re.escape(key)}[ \t]*:[ \t]*([^\n{YAML_BREAKS}]*)", header)
    written = m.group(1).rstrip(" \t") if m else ""  # blanks left by `rstrip`: a lazy group tried them all from each of its lengths
    if not written and value is not None:
        written = _flow(value)
    return f"{key.strip()}: {written}".rstrip()


def _flow(value: Any) -> str:
    """A value in YAML's flow form (`[public]`, `{x: 1}`), or as Python writes it when YAML has
    no form for it: TOML's time of day (`07:32:00`) raised, and took the vault's load down."""
    try:
        return yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=1_000_000).split("\n...")[0].strip()
    except yaml.YAMLError:
        return str(value)


@functools.lru_cache(maxsize=1024)
def _nearly_visibility(key: str) -> bool:
    """A key its author meant as `visibility`: written in French (`visibilité`), or mistyped
    (`visiblity`, `visability`); not another word (`visible`, `visibility_note`). Kept per key:
    a vault's notes share a few dozen keys, and difflib's 10–18 µs for each key of each note
    without `visibility` took 0.3–0.5 s of a first start at 10,000 notes."""
    if not 8 <= len(key.strip()) <= 12:  # most keys (`title`, `tags`, `priority`) at the cost of a length
        return False
    folded = "".join(c for c in unicodedata.normalize("NFKD", key.strip().lower()) if not unicodedata.combining(c))
    return folded != "visibility" and difflib.SequenceMatcher(None, folded, "visibility").ratio() >= 0.85


def _written_twice(header: str) -> list[str]:
    """The keys that keep a note off a site written more than once, in any form YAML reads as
    that key: a line, the key quoted (`"visibility": public`, as JSON writes it), escaped,
    explicit (`? visibility`), in a flow mapping, in an indented frontmatter or brought in by a
    merge key. YAML folds them into one field, its last value: `visibility: private` then
    `"visibility": public`, or `publish: false` then `"publish": true`, was served.
    `visibility` in any case is one key (a plain lookup misses `Visibility`); two cases of the
    others (`Draft`, `draft`) are two fields, each read, so not one written twice. `visibility`
    comes first. The header is composed again only when it may hold such a form: a key's word
    there twice, or an escape."""
    if len(_VISIBILITY_LINE.findall(header)) > 1:
        return ["visibility"]
    low = header.lower()
    if "\\" not in header and not any(low.count(word) > 1 for word in READER_KEYS):
        return []
    try:
        keys = keys_written(header)
    except yaml.YAMLError:  # read once already: cannot happen
        return ["visibility"]
    counted = Counter(
        "visibility" if key.strip().lower() == "visibility" else key for key in keys if isinstance(key, str) and key.strip().lower() in READER_KEYS
    )
    return sorted((key.strip() for key, n in counted.items() if n > 1), key=lambda key: key != "visibility")


def _is_public(meta: dict, header: str, default_public: bool, warnings: list[str], zone: str) -> Readers:
    """Whether visitors may read the note. Every doubt keeps it private, with a warning: a
    `visibility` written twice (YAML keeps the last one), or in another case (`Visibility:`,
    which a plain lookup misses and the default would then make public), anything but
    `public`, Obsidian Publish's `publish: false`, Jekyll's `published: false` or Digital
    Garden's `dg-publish: false` (`_PUBLISH_KEYS`), which an author may count on to keep a note
    off every public site, or a static site's `draft: true`, `private: true` or `hidden: true`
    (`_HIDING_KEYS`), which keeps it off theirs, or a page its publisher does not write
    (`_unwritten`: Hugo's `build: {render: never}`, Eleventy's `permalink: false`); one of these
    written twice, as `visibility`,
    whichever value YAML kept. A public note is then held back by its dates (`_scheduled`, a
    time without its offset read in `zone`), with the instant they change that, if any."""
    given = [value for key, value in meta.items() if isinstance(key, str) and key.strip().lower() == "visibility"]
    twice = _written_twice(header)
    if len(given) > 1 or "visibility" in twice:
        warnings.append("`visibility` est donné plus d'une fois : la note reste privée")
        return _PRIVATE
    if twice:
        warnings.append(f"`{twice[0]}` est donné plus d'une fois : la note reste privée")
        return _PRIVATE
    near = [] if given else [key for key in meta if isinstance(key, str) and _nearly_visibility(key)]
    if near:  # `visibilité: private` with the default public: the note its author hid was served
        warnings.append(f"`{_as_written(header, near[0], meta[near[0]])}` n'est pas `visibility`, le champ que lit GrasBot : la note reste privée")
        return _PRIVATE
    said = str(given[0]).strip().lower() if given else None
    if said is not None and said not in ("public", "private"):  # « publique », `true`: a typo must not pass unseen
        written = _as_written(header, next(key for key in meta if isinstance(key, str) and key.strip().lower() == "visibility"), given[0])
        warnings.append(f"`{written}` n'est ni `public` ni `private` : la note reste privée")
    public = default_public if said is None else said == "public"
    withheld = [
        (key, value)
        for key, value in meta.items()
        if isinstance(key, str) and key.strip().lower() in _PUBLISH_KEYS and _says_no(value) and not (key.strip().lower() == "published" and _is_date(value))
    ]
    if public and withheld:
        key, value = withheld[0]
        if key not in _PUBLISH_KEYS or value is not False:  # `Publish: false`, `publish: "false"`, `published: 0`
            warnings.append(f"`{_as_written(header, key, value)}` est lu comme `{key.strip().lower()}: false` : la note reste privée")
        elif given:  # a default overruled needs no word; a note that says both does
            warnings.append(f"`{key}: false` garde la note privée, quelle que soit sa `visibility`")
        return _PRIVATE
    drafts = [(key, value) for key, value in meta.items() if isinstance(key, str) and key.strip().lower() in _HIDING_KEYS and _draft(value) is not False]
    if public and drafts:  # Quartz and Hugo publish no `draft: true`, Hexo lists no `hidden: true`
        key, value = drafts[0]
        low = key.strip().lower()
        if _draft(value) is None:
            warnings.append(f"`{_as_written(header, key, value)}` n'est ni un oui ni un non (`true` ou `false`) : la note reste privée")
        elif key != low or value is not True:  # `Draft: true`, `draft: "true"`, `private: oui`, `hidden: 1`
            warnings.append(f"`{_as_written(header, key, value)}` est lu comme `{low}: true` : la note reste privée")
        elif given:
            warnings.append(f"`{low}: true` garde la note privée, quelle que soit sa `visibility`")
        return _PRIVATE
    unwritten = _unwritten(meta, header)
    if public and unwritten:  # Hugo renders no `build: {render: never}`, Eleventy writes no `permalink: false`
        shown, as_text = unwritten[0]
        if as_text is None:
            warnings.append(f"`{shown}` n'est ni `always`, ni `link`, ni `never` : la note reste privée")
        elif as_text:  # `permalink: "false"`
            warnings.append(f"`{shown}` est lu comme `permalink: false` : la note reste privée")
        elif given:
            warnings.append(f"`{shown}` garde la note privée, quelle que soit sa `visibility`")
        return _PRIVATE
    if not public:
        return _PRIVATE
    held, turn = _scheduled(meta, header, warnings, zone_named(zone))
    return Readers(not held, turn)


# Hugo's front matter keys for a page's publish date and expiry date (its default
# `frontmatter` configuration, read in any case as Hugo reads keys): a page whose publish date
# is to come, or whose expiry date is past, is not published. Hugo's last fallback for the
# publish date, `date`, is not read: in a vault it is as often an event's or a meeting's.
# `published` is a date there only when it holds one (else Jekyll's yes or no: `_PUBLISH_KEYS`).
_PUBLISH_DATE_KEYS = ("publishdate", "pubdate", "published")
_EXPIRY_DATE_KEYS = ("expirydate", "unpublishdate")
_DATE_EXAMPLE = "2026-05-01, 2026-05-01T09:00:00+02:00"


def now() -> float:
    """The time the dates of a note are read against (a function: tests set it)."""
    return time.time()


def _in_zone(wall: datetime, zone: tzinfo | None) -> float:
    """A time without its offset read in `zone` as Hugo reads it (Go's time.Date): at the offset
    of the wall clock taken as UTC, or, when the instant that gives falls under another offset,
    at that one. zoneinfo's own reading (fold 0) differs where the clock is skipped or repeated:
    02:30 on Paris's autumn night is Hugo's 01:30 UTC, zoneinfo's 00:30."""
    try:
        if zone is None:  # `local`: 3.5.0's reading, where the machine is
            return wall.timestamp()
        guess = wall.replace(tzinfo=UTC)
        first = guess - (guess.astimezone(zone).utcoffset() or timedelta())
        return (guess - (first.astimezone(zone).utcoffset() or timedelta())).timestamp()
    except (OverflowError, ValueError):  # an instant beyond year 1 or 9999 (`0001-01-01`): no clock change there
        return wall.replace(tzinfo=zone or UTC).timestamp()


# A date as text, and maybe its time (hours and minutes at least) and offset: what « Tester cette
# note » reads too (noteTest.ts `ISO_DATE`); Python reads more (`2026-05-01T09`, `20260501`,
# `2026-W18-5`), which Hugo reads as no date, and the plugin said private what was served; an
# offset's hours 00-23 and minutes 00-59 (`fromisoformat` read `+02:99` as +03:39)
_ISO_INSTANT = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,6})?)?(?:Z|[+-](?:[01]\d|2[0-3])(?::?[0-5]\d)?)?)?", re.ASCII)


def _instant(value: Any, zone: tzinfo | None) -> float | None:
    """A front matter date as a POSIX time: a YAML date or timestamp, or ISO 8601 text
    (`_ISO_INSTANT`: a date alone is its midnight, and a time without its offset is read in
    `zone`, as Hugo reads it in its site's, `_in_zone`); None for what is no date (`bientôt`,
    `2026-13-01`, `2026-W18-5`, a list)."""
    if isinstance(value, str):
        if _ISO_INSTANT.fullmatch(value.strip()) is None:
            return None
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    if isinstance(value, datetime):
        return value.timestamp() if value.tzinfo is not None else _in_zone(value, zone)
    if isinstance(value, date):
        return _in_zone(datetime(value.year, value.month, value.day), zone)
    return None


def _scheduled(meta: dict, header: str, warnings: list[str], zone: tzinfo | None) -> tuple[bool, float | None]:
    """Whether a note's dates hold it back from visitors now, as Hugo would not publish it (a
    publish date to come, an expiry date past: `_PUBLISH_DATE_KEYS`, `_EXPIRY_DATE_KEYS`, every
    case of each read), and the next instant one of them changes that (None: none will). A date
    that cannot be read holds it back, with a warning; a blank is no date."""
    now_, held, turns = now(), False, []
    for key, value in meta.items():
        low = key.strip().lower() if isinstance(key, str) else None
        publishes = low in _PUBLISH_DATE_KEYS and not (low == "published" and not _is_date(value))
        if not (publishes or low in _EXPIRY_DATE_KEYS) or value is None or value == "":
            continue
        instant = _instant(value, zone)
        if instant is None:
            warnings.append(f"`{_as_written(header, key, value)}` n'est pas une date ({_DATE_EXAMPLE}) : la note reste privée")
            held = True
            continue
        held |= instant > now_ if publishes else instant <= now_
        if instant > now_:
            turns.append(instant)
    return held, min(turns, default=None)


# Obsidian Publish's `publish`, Jekyll's `published` and the Digital Garden plugin's
# `dg-publish`: a note whose frontmatter says no to one is left off the site it is published
# with, so it must not be served here either (`_says_no`: any value but a yes)
_PUBLISH_KEYS = ("publish", "published", "dg-publish")
# The keys whose yes keeps a note off a site (`_draft`: a yes, or what is neither a yes nor a
# no): a static site's `draft` (Quartz, Hugo), Hexo's `hidden` (hexo-hide-posts: off every
# list, search and feed) and `private`, which the sites that filter on it read so (an
# Eleventy or Astro site's own rule) and which says what its author means in any case
_HIDING_KEYS = ("draft", "private", "hidden")
# Hugo's build options (`_build` before 0.65), whose `render` says whether the page is written
# (`_renders`), and Eleventy's `permalink`, whose `false` writes none (`_unwritten`)
_BUILD_KEYS = ("build", "_build")
_UNWRITTEN_KEYS = (*_BUILD_KEYS, "permalink")
# The keys that say who may read a note, each `_is_public`'s in any case of it
READER_KEYS = tuple(dict.fromkeys(("visibility", *_PUBLISH_KEYS, *_HIDING_KEYS, *_UNWRITTEN_KEYS, *_PUBLISH_DATE_KEYS, *_EXPIRY_DATE_KEYS)))

# A date, as a YAML date or as text (`2024-05-01`, `2024-05-01T10:00`): what `published` holds in
# the themes that name the post's date so (Astro's Fuwari…), where Jekyll's is a yes or a no
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ][0-9:.+\-Z]*)?")


def _is_date(value: Any) -> bool:
    """Whether `published` holds a date: the day a post came out, which publishes it."""
    return isinstance(value, date) or (isinstance(value, str) and _ISO_DATE.fullmatch(value.strip()) is not None)


def _says_no(value: Any) -> bool:
    """`publish: false` (or `published: false`) in any of the forms an author may mean it: every value but a yes
    (`true`, `1`, `oui`…) or none at all (`publish:` left blank), for in doubt, private:
    `publish: private`, `publish: draft` or `publish: [false]` made a note public."""
    if value is None or isinstance(value, bool):
        return value is False
    if isinstance(value, (int, float)):
        return value == 0 or value != value  # NaN (`.nan`) is no yes either
    return not (isinstance(value, str) and value.strip().lower() in ("true", "yes", "on", "1", "oui", "vrai", "public", ""))


def _draft(value: Any) -> bool | None:
    """Whether `draft` marks the note a draft, which the site generators an Obsidian author
    publishes with leave unpublished (Quartz and Hugo, and many Astro, Eleventy or Jekyll sites
    by their own rule), and so `private` or `hidden` (`_HIDING_KEYS`): True for a yes
    (`true`, `1`, `oui`…), False for a no (`false`, `0`, `non`…) or none at all (`draft:` left
    blank), None for anything else (`draft: peut-être`, `draft: [true]`), which keeps the note
    private too, for in doubt, private."""
    if value is None or isinstance(value, bool):
        return value is True
    if isinstance(value, (int, float)):
        return None if value != value else value != 0  # NaN (`.nan`) is neither
    if not isinstance(value, str):
        return None
    said = value.strip().lower()
    if said in ("true", "yes", "on", "1", "oui", "vrai"):
        return True
    return False if said in ("false", "no", "off", "0", "non", "faux", "") else None


def _renders(value: Any) -> bool | None:
    """Whether Hugo's `build: {render: …}` writes the page: True for `always` (a yes before Hugo
    0.76, or a blank), False for `never` and `link` (a no), which render none; None for anything
    else (`render: parfois`), which keeps the note private too, for in doubt, private."""
    if value is None or isinstance(value, bool):
        return value is not False
    if isinstance(value, float) and value.is_integer():  # `1.0`, a number as JavaScript reads it
        value = int(value)
    said = str(value).strip().lower() if isinstance(value, (str, int)) else None
    if said in ("always", "true", "1", ""):
        return True
    return False if said in ("never", "link", "false", "0") else None


def _unwritten(meta: dict, header: str) -> list[tuple[str, bool | None]]:
    """The fields by which a note's publisher writes no page of it, each as a warning shows it
    (`build.render: never`) and how it says so: False as the publisher reads it, None unclear
    (`_renders`), True as text (`permalink: "false"`, which Eleventy would take for an address
    and its author for the no). A `build` that holds no mapping (`build: 1.2.3`, a software's)
    is no Hugo option; `list: never` alone leaves the page on the site."""
    found: list[tuple[str, bool | None]] = []
    for key, value in meta.items():
        low = key.strip().lower() if isinstance(key, str) else None
        if low in _BUILD_KEYS and isinstance(value, dict):
            for option, render in value.items():
                if isinstance(option, str) and option.strip().lower() == "render" and (said := _renders(render)) is not True:
                    shown = render if isinstance(render, str) else _flow(render)
                    found.append((f"{key.strip()}.{option.strip()}: {shown}", said))
        elif low == "permalink" and value is False:
            found.append((_as_written(header, key, value), False))
        elif low == "permalink" and isinstance(value, str) and value.strip().lower() == "false":
            found.append((_as_written(header, key, value), True))
    return found


# Blank lines, then what reads as a frontmatter: Obsidian reads no properties there
FIELDS = {*READER_KEYS, "priority", *TEXT_FIELDS}
# A frontmatter's line that names a key, which may say who reads the note (`_says_who_reads`): a
# line as PyYAML reads it, in a block Obsidian shows as text too (a lower block's
# `x: a\u2028draft: true` is a draft to PyYAML, and was served, its line read as naming `x` only)
_READER_LINE = re.compile(rf"{LINE_START}[ \t]*({FIELD_KEY})[ \t]*:")
# A frontmatter behind blank lines, spaces (` ---`, a thematic break to Obsidian) or what shows
# nothing (a zero-width space, a second byte order mark, a no-break space pasted before it), or
# whose opening `---` is followed by what shows nothing (`---` and a zero-width space: text too)
_INVISIBLE = "\u200b-\u200d\u2060\ufeff"
_LATE_FRONTMATTER = re.compile(rf"\A(?P<before>[\s{_INVISIBLE}]*)---(?P<after>[ \t\u00a0{_INVISIBLE}]*)\n(?P<fields>.*?)\n---[ \t]*(?:\n|\Z)", re.DOTALL)


def _says_who_reads(key: Any) -> bool:
    """Whether a frontmatter's key says who may read the note, in any case: one of
    `READER_KEYS`, or a key nearly `visibility` (`visibilité`), which keeps it private."""
    return isinstance(key, str) and (key.strip().lower() in READER_KEYS or _nearly_visibility(key))


def folded_reader(fields: str, meta: dict) -> str | None:
    """The first line of a YAML block that opens, unindented, with a key saying who reads the
    note which PyYAML read into another field's value (`x: "a` then `draft: true"`, a quoted text
    or a flow list going on below at its key's indent, after a line feed or U+2028), as written;
    None when each such key is one of `meta`'s. Its author reads a field there, the plugin's
    YAML refuses the value, and the note was served: in doubt, not. Only a quote or a bracket
    left open carries a line at its key's indent into a value."""
    if not any(opening in fields for opening in "\"'[{"):
        return None
    keys = None
    for line in _READER_LINE.finditer(fields):
        if fields[line.start()] in " \t" or not _says_who_reads(line.group(1)):
            continue
        keys = {str(key).strip().lower() for key in meta} if keys is None else keys
        if line.group(1).strip().lower() not in keys:
            return _yaml_line(fields, line.start())
    return None


def _late_frontmatter(text: str, default_public: bool, warnings: list[str], *, second: bool, zone: str) -> Readers:
    """A frontmatter after blank lines, spaces or invisible characters, or whose opening `---`
    is followed by invisible characters, is no frontmatter, for Obsidian as here; but when it
    says the note is private, it is kept private (in doubt, private), and the author told; its
    dates count too, for when they change that.
    `second`: `text` is the body after the frontmatter, and such a block there a second one
    (a template inserted into a note that had its own), which only counts when it says who may
    read the note."""
    m = _LATE_FRONTMATTER.match(text)
    if m is None:
        return _SAYS_NOTHING
    before = m.group("before")
    if second:
        if not any(_says_who_reads(line.group(1)) for line in _READER_LINE.finditer(m.group("fields"))):
            return _SAYS_NOTHING
        where, remove = "un second bloc de propriétés après le premier, qu'Obsidian ne lit pas", "réunissez-les en un seul bloc"
    elif not before:  # read as a frontmatter were it not for what follows its `---`
        where, remove = "des caractères invisibles après le --- d'ouverture", "supprimez-les"
    elif before.endswith("\n") and not before.strip(" \t\n"):
        where, remove = "des lignes vides avant le --- d'ouverture", "supprimez les lignes vides"
    else:
        where, remove = "des espaces ou des caractères invisibles avant le --- d'ouverture", "supprimez-les"
    try:
        meta = load_frontmatter(m.group("fields"))
    except Exception:  # not YAML: text, as Obsidian shows it, unless it says who may read the note (in doubt, private)
        if not any(_says_who_reads(line.group(1)) for line in _READER_LINE.finditer(m.group("fields"))):
            return _SAYS_NOTHING
        said = "ses champs sont lus comme du texte, mais ils disent qui peut lire la note, ce qui la garde privée"
        warnings.append(f"{where}, et un YAML invalide : {said} ({remove}, puis corrigez le YAML)")
        return _PRIVATE
    if isinstance(meta, dict) and (folded := folded_reader(m.group("fields"), meta)) is not None:
        said = f"`{folded}` y continue la valeur d'un autre champ, ce qui garde la note privée"
        warnings.append(f"{where} : ses champs sont lus comme du texte, et {said} ({remove})")
        return _PRIVATE
    if not isinstance(meta, dict) or not any(str(key).strip().lower() in FIELDS or _says_who_reads(key) for key in meta):  # a rule, then a heading
        return _SAYS_NOTHING
    verdict = _is_public(meta, m.group("fields"), default_public or second, [], zone)  # a second block's silence says nothing
    if verdict.public:
        warnings.append(f"{where} : ses champs sont lus comme du texte, pas comme des propriétés ({remove})")
    else:
        warnings.append(f"{where} : ses champs sont lus comme du texte, mais ils gardent la note privée ({remove})")
    return verdict


# A properties block lower in the note, between two `---` lines (a template inserted at the
# cursor, a note pasted below another): Obsidian reads it as text, a rule and a heading
_LOWER_BLOCK = re.compile(r"^---[ \t]*\n(?P<fields>(?:(?!---[ \t]*$)[^\n]*\n){1,50}?)---[ \t]*$", re.MULTILINE)


def _lower_blocks(prose: str, warnings: list[str], zone: str) -> Readers:
    """Whether a properties block lower in the note says it is private: an author who inserted
    a template's `visibility: private` or `draft: true` there saw the note as theirs, and it was
    served. Kept private (in doubt, private: broken YAML that names who may read it too), and the
    author told; `prose` is the body without its code, where a block is an example, not a field.
    Its dates count too: an expiry date to come takes the note back then."""
    if "---" not in prose:
        return _SAYS_NOTHING
    verdicts: list[Readers] = []
    for m in _LOWER_BLOCK.finditer(prose):
        fields = m.group("fields")
        readers = [line.group(1) for line in _READER_LINE.finditer(fields) if _says_who_reads(line.group(1))]
        if not readers:
            continue
        try:
            meta = load_frontmatter(fields)
        except Exception:  # not YAML, but it says who may read the note
            meta = None
        folded = folded_reader(fields, meta) if isinstance(meta, dict) else None
        verdict = _is_public(meta, fields, True, [], zone) if isinstance(meta, dict) and folded is None else _PRIVATE
        verdicts.append(verdict)
        if verdict.public:
            continue
        said = folded or _as_written(fields, readers[0], meta.get(readers[0]) if isinstance(meta, dict) else None)
        warnings.append(
            f"un bloc de propriétés plus bas dans la note, qu'Obsidian lit comme du texte, dit `{said}` : la note reste privée "
            "(mettez ses champs dans les propriétés en tête de note, ou supprimez le bloc)"
        )
        break
    return _together(verdicts)


# Where a Hugo front matter is, as its warning says, and what to do with its fields: shown as
# text at the top of the note, or hidden in an HTML comment there (`_commented_frontmatter`)
_AS_TEXT = "qu'Obsidian lit comme du texte"
_MOVE = "mettez ses champs en YAML dans les propriétés de la note"
_IN_COMMENT = "dans un commentaire HTML (<!-- … -->) qu'Obsidian cache mais que Hugo lit"
_MOVE_OUT = "sortez ses champs du commentaire et mettez-les en YAML dans les propriétés de la note"


def _told(hidden: bool) -> tuple[str, str, str]:
    """A Hugo front matter's warning's words: where Obsidian leaves it, what to do with its
    fields, and what a broken one's warning says before « qui dit… » (`hidden`: in a comment)."""
    return (_IN_COMMENT, _MOVE_OUT, f"{_IN_COMMENT}, ") if hidden else (_AS_TEXT, _MOVE, "")


# Hugo's TOML front matter, between two `+++` lines at the top of the note (Hugo skips what
# precedes it but spaces): Obsidian shows it as text, Hugo reads it as the page's fields
_TOML_FRONTMATTER = re.compile(rf"\A[\s{_INVISIBLE}]*\+\+\+[ \t]*\n(?P<fields>.*?)\n\+\+\+[ \t]*(?:\n|\Z)", re.DOTALL)
# A TOML line that sets a key or opens a table, and its first key (`draft = true`, `"draft" = true`,
# `build.render = …`, `[build]`; `visibilité = …` too, no TOML, which a key nearly `visibility` makes private)
_TOML_LINE = re.compile(r"""^[ \t]*(?:\[[ \t]*)?(?:"(?P<basic>[^"\n]*)"|'(?P<literal>[^'\n]*)'|(?P<bare>[\w-]+))[ \t]*[.=\]].*$""", re.MULTILINE)


# A dotted key of more parts than MAX_DEPTH where TOML reads a key (a line's start, a table's
# header, an inline table's `{` or `,`): its tables nest past the bound, and tomllib reads it in
# time quadratic in its parts (its flags checked for each prefix: 40,000 parts took 22 s).
# « Tester cette note » finds it by the same pattern (noteTest.ts `TOML_LONG_KEY`)
_TOML_PART = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')"""
_TOML_LONG_KEY = re.compile(
    rf"(?:^[ \t]*(?:\[\[?[ \t]*)?|[{{,][ \t]*)(?:{_TOML_PART}[ \t]*\.[ \t]*){{{MAX_DEPTH}}}{_TOML_PART}(?:[ \t]*\.[ \t]*{_TOML_PART})*[ \t]*[=\]]",
    re.MULTILINE,
)


def _toml_fields(fields: str) -> dict[str, Any] | None:
    """tomllib's reading of a TOML front matter, None where it nests past MAX_DEPTH (a key of
    too many parts, found before tomllib reads it; a RecursionError); raises TOMLDecodeError."""
    if _TOML_LONG_KEY.search(fields) is not None:
        return None
    try:
        return tomllib.loads(fields)
    except RecursionError:
        return None


def _toml_key(line: re.Match[str]) -> str:
    """The first key a `_TOML_LINE` names, as TOML reads it: a quoted one's escapes too
    (`"dr\\u0061ft"` is `draft`, which a note served as a key that said nothing); as written
    when they are no TOML escapes (the block does not parse then)."""
    basic, literal, bare = line.group("basic", "literal", "bare")
    if basic is not None and "\\" in basic:
        try:
            return next(iter(tomllib.loads(f'"{basic}" = 0')))
        except tomllib.TOMLDecodeError:
            return basic
    return basic if basic is not None else literal if literal is not None else bare


def _toml_frontmatter(block: HugoFrontmatter, warnings: list[str], zone: str, *, hidden: bool = False) -> Readers:
    """Hugo's TOML front matter (`+++`, `draft = true`, `+++`) is text to Obsidian and was none
    here: the draft Hugo leaves unpublished was served. Its fields count as the frontmatter's
    do, but only to keep the note private (its silence says nothing); TOML that does not parse
    and names a key that says who reads the note keeps it private too (in doubt, private).
    `hidden`: it is in an HTML comment, which the warning says."""
    if block.kind != "toml":
        return _SAYS_NOTHING
    readers = [line.group(0).strip() for line in _TOML_LINE.finditer(block.written) if _says_who_reads(_toml_key(line))]
    if not readers:
        return _SAYS_NOTHING
    said = ", ".join(f"`{line}`" for line in readers)
    seen, move, lead = _told(hidden)
    meta = block.reading
    if meta is _BROKEN:
        warnings.append(f"un front matter TOML (entre deux +++) invalide, {lead}qui dit qui peut lire la note ({said}) : la note reste privée ({move})")
        return _PRIVATE
    if meta is None or _nested_past(meta, MAX_DEPTH):  # tomllib, then a warning's yaml.safe_dump, nest without a bound
        raise FrontmatterTooLarge(f"le front matter TOML imbrique des listes ou des champs sur plus de {MAX_DEPTH} niveaux : note ignorée")
    verdict = _is_public(meta, "", True, [], zone)
    if not verdict.public:
        warnings.append(f"un front matter TOML (entre deux +++), {seen}, dit {said} : la note reste privée ({move})")
    return verdict


def _nested_past(value: Any, depth: int) -> bool:
    """Whether lists and tables nest in `value` past `depth` levels, read no further than that:
    a YAML frontmatter is bounded so (frontmatter.MAX_DEPTH), and a TOML one's RecursionError
    took the vault's load down."""
    if depth < 0:
        return True
    inside = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return any(_nested_past(item, depth - 1) for item in inside)


# Hugo's JSON front matter, an object at the top of the note (Hugo skips what precedes it but
# spaces): Obsidian shows it as text, Hugo reads it as the page's fields
_JSON_FRONTMATTER = re.compile(rf"\A[\s{_INVISIBLE}]*(?=\{{)")
# What Hugo's lexer counts to find the brace that closes it: a character escaped, a quote, a brace
_JSON_TOKEN = re.compile(r'\\.|["{}]', re.DOTALL)
# A key and its colon, then its value on that line (`"draft": true`; `draft: true` too, in JSON
# that does not parse); in JSON that does, only quoted ones are keys (a string holds no bare `"`)
_JSON_KEY = re.compile(r"""(?:^|(?<=[{,]))[ \t]*(?:"(?P<quoted>(?:[^"\\\n]|\\.)*)"|'(?P<single>[^'\n]*)'|(?P<bare>[\w-]+))[ \t]*:[^,}\n]*""", re.MULTILINE)


def _json_block(text: str, start: int) -> str:
    """The JSON front matter opening at `start`, where Hugo's lexer ends it: at the brace that
    closes the first outside quotes, a backslash escaping what follows it (the rest of the note
    when none does, which no JSON reader reads)."""
    depth, quoted = 0, False
    for token in _JSON_TOKEN.finditer(text, start):
        mark = token.group()
        if mark == '"':
            quoted = not quoted
        elif not quoted and mark in ("{", "}"):
            depth += 1 if mark == "{" else -1
            if depth == 0:
                return text[start : token.end()]
    return text[start:]


# A JSON escape, a surrogate's high half with the low one that pairs it, or a low half alone
_JSON_ESCAPE = re.compile(r"\\(?:u[dD][89abAB][0-9a-fA-F]{2}(\\u[dD][c-fC-F][0-9a-fA-F]{2})?|u[dD][c-fC-F][0-9a-fA-F]{2}|.)", re.DOTALL)


def _paired(block: str) -> str:
    """`block` with each surrogate's half escaped alone (`\\ud800`) as `\\ufffd`, which Hugo's
    reader (Go's encoding/json) reads it as: Python's json gives a lone surrogate, which no UTF-8
    encodes (the title of a prompt sent to the model, as httpx writes it, raised)."""
    if "\\u" not in block:
        return block

    def escape(m: re.Match[str]) -> str:
        lone = len(m.group(0)) == 6 and m.group(0)[1] == "u" and m.group(1) is None
        return "\\ufffd" if lone else m.group(0)

    return _JSON_ESCAPE.sub(escape, block)


def _json_key(line: re.Match[str]) -> str:
    """A `_JSON_KEY` match's key, its escapes read (`"dr\\u0061ft"` is `draft`)."""
    quoted = line.group("quoted")
    if quoted is None:
        return line.group("single") if line.group("single") is not None else line.group("bare")
    try:
        return str(json.loads(f'"{quoted}"'))
    except ValueError:
        return quoted


def _no_constant(name: str) -> Any:
    """`NaN`, `Infinity`: no JSON, which Hugo's reader (Go's) refuses and Python's would read."""
    raise ValueError(name)


def _json_frontmatter(block: HugoFrontmatter, warnings: list[str], zone: str, *, hidden: bool = False) -> Readers:
    """Hugo's JSON front matter (`{ "draft": true }` at the top of the note) is text to Obsidian
    and was none here: the draft Hugo leaves unpublished was served. Its fields count as the
    frontmatter's do, but only to keep the note private (its silence says nothing); a key that
    says who reads the note given twice (JSON keeps the last, as YAML), or JSON that does not
    parse and names such a key, keeps it private too (in doubt, private). `hidden`: it is in an
    HTML comment, which the warning says."""
    if block.kind != "json":
        return _SAYS_NOTHING
    readers = [(key, line) for line in _JSON_KEY.finditer(block.written) if _says_who_reads(key := _json_key(line))]
    where = "un front matter JSON (un objet { … } en tête de note)"
    seen, move, lead = _told(hidden)
    meta = block.reading
    if meta is _BROKEN:
        if not readers:
            return _SAYS_NOTHING
        said = ", ".join(f"`{line.group(0).strip()}`" for _, line in readers)
        warnings.append(f"{where} invalide, {lead}qui dit qui peut lire la note ({said}) : la note reste privée ({move})")
        return _PRIVATE
    if meta is None or _nested_past(meta, MAX_DEPTH):  # json, then a warning's json.dumps, nest up to the interpreter's bound
        if not readers:  # it says nothing of who reads the note: nothing to read in it
            return _SAYS_NOTHING
        raise FrontmatterTooLarge(f"le front matter JSON imbrique des listes ou des champs sur plus de {MAX_DEPTH} niveaux : note ignorée")
    twice = [key for key, n in Counter(key for key, line in readers if line.group("quoted") is not None).items() if n > 1]
    if twice:
        warnings.append(f"{where} {lead}donne `{twice[0]}` plus d'une fois : la note reste privée ({move})")
        return _PRIVATE
    verdict = _is_public(meta, "", True, [], zone)
    if not verdict.public:
        shown = (f"`{json.dumps(key, ensure_ascii=False)}: {json.dumps(value, ensure_ascii=False)}`" for key, value in meta.items() if _says_who_reads(key))
        warnings.append(f"{where}, {seen}, dit {', '.join(shown)} : la note reste privée ({move})")
    return verdict


# Hugo's Org front matter: the lines at the top of the note while each starts with `#+` (its
# lexer reads them in any content file, Markdown too), which Obsidian shows as text
_ORG_FRONTMATTER = re.compile(rf"\A[\s{_INVISIBLE}]*(?P<lines>#\+[^\n]*(?:\n#\+[^\n]*)*)")
# A line Hugo's Org reader (go-org) reads as a key and its value (`#+draft: true`, `#+title:`),
# and the key any `#+` line names (`#+draft:true`, which it does not read: no space)
_ORG_KEYWORD = re.compile(r"#\+(?P<key>[^:]+):(?:[ \t\f\r]+(?P<value>.*)|[ \t\f\r]*$)")
_ORG_NAMED = re.compile(r"#\+[ \t]*([^:\s]+)")
# An Org date's opening, `<2020-05-01 ` of `<2020-05-01 Fri>`, which Hugo reads as its day for its
# date keys when a `>` or `]` closes it further on (`_org_day`)
_ORG_DATE = re.compile(r"[<\[](\d{4}-\d{2}-\d{2}) ")
_ORG_DATE_KEYS = ("date", "lastmod", "publishdate", "expirydate")


def _org_fields(lines: list[str]) -> dict[str, Any]:
    """Org front matter's `#+key: value` lines as Hugo reads them: a key in lower case, a value as
    text, a key given twice (in any case) a list of its values, `#+key[]: a b` a list of words, an
    Org date its day for Hugo's date keys."""
    given: dict[str, str] = {}
    for line in lines:
        keyword = _ORG_KEYWORD.match(line)
        if keyword is not None:
            key, value = keyword.group("key").lower(), (keyword.group("value") or "").strip()
            given[key] = f"{given[key]}\n{value}" if key in given else value
    fields: dict[str, Any] = {}
    for key, value in given.items():
        if key.endswith("[]"):
            fields[key[:-2]] = value.split()
        elif "\n" in value:
            fields[key] = value.split("\n")
        elif key in _ORG_DATE_KEYS and (day := _org_day(value)) is not None:
            fields[key] = day
        else:
            fields[key] = value
    return fields


def _org_day(value: str) -> str | None:
    """The day of the first Org date a `>` or `]` closes further on in `value`, one line: its
    opening searched before the last of them only, where a pattern ending `.*[>\\]]` read the
    rest of the line again from each `<` (`<2020-01-01 ` never closed: 240 KB took 100 s)."""
    closing = max(value.rfind(">"), value.rfind("]"))
    day = _ORG_DATE.search(value, 0, max(closing, 0))
    return None if day is None else day.group(1)


def _org_frontmatter(block: HugoFrontmatter, warnings: list[str], zone: str, *, hidden: bool = False) -> Readers:
    """Hugo's Org front matter (`#+draft: true` at the top of the note) is text to Obsidian and
    was none here: the draft Hugo leaves unpublished was served. Its fields count as the
    frontmatter's do, but only to keep the note private (its silence says nothing); a line that
    names a key that says who reads the note in a form Hugo does not read (`#+draft:true`) keeps
    it private too (in doubt, private). `hidden`: it is in an HTML comment, which the warning says."""
    if block.kind != "org":
        return _SAYS_NOTHING
    lines = block.written.split("\n")
    named = [(line, _ORG_KEYWORD.match(line)) for line in lines if (key := _ORG_NAMED.match(line)) and _says_who_reads(key.group(1).removesuffix("[]"))]
    if not named:
        return _SAYS_NOTHING
    where = "un front matter Org (des lignes #+clé: valeur en tête de note)"
    seen, move, lead = _told(hidden)
    unread = [line.strip() for line, keyword in named if keyword is None]
    if unread:
        said = ", ".join(f"`{line}`" for line in unread)
        fix = f"écrivez-la `#+clé: valeur`, ou {move}"
        warnings.append(f"{where} {lead}dont Hugo ne lit pas une ligne qui dit qui peut lire la note ({said}) : la note reste privée ({fix})")
        return _PRIVATE
    verdict = _is_public(block.fields, "", True, [], zone)
    if not verdict.public:
        said = ", ".join(f"`{line.strip()}`" for line, _ in named)
        warnings.append(f"{where}, {seen}, dit {said} : la note reste privée ({move})")
    return verdict


# Hugo's front matter in an HTML comment at the top of the note: its lexer skips blanks, then
# the rest of each line a `<!--` opens, then reads a front matter as at the top (Obsidian hides
# the comment); a YAML one runs from its `---` to the next line that starts with `---` (`--- -->`),
# or, none closing it (Hugo then builds no page), to the end of the comment
_COMMENT_OPENING = re.compile(rf"\A(?:[\s{_INVISIBLE}]*<!--[^\n]*\n)+")
_COMMENTED_YAML = re.compile(rf"\A[\s{_INVISIBLE}]*---(?P<fields>[^\n]*\n.*?)(?:\n---|(?P<open>\Z))", re.DOTALL)


_BROKEN = object()  # what `_yaml_or_broken` gives for text that is no YAML


def _yaml_or_broken(fields: str) -> Any:
    """`load_frontmatter`'s reading of `fields`, or `_BROKEN` where it raises."""
    try:
        return load_frontmatter(fields)
    except Exception:  # any error of the YAML loader, or a bound passed
        return _BROKEN


# The rest of a line as PyYAML reads it, up to the next of its line breaks
_YAML_LINE = re.compile(f"[^\n{YAML_BREAKS}]*")


def _yaml_line(text: str, start: int) -> str:
    """The line of `text` from `start`, as a warning shows it: up to the next of YAML's line breaks."""
    line = _YAML_LINE.match(text, start)
    return "" if line is None else line.group().strip()


def _commented_yaml(text: str, warnings: list[str], zone: str) -> Readers:
    """A YAML front matter at the top of the comment's text, read as `_toml_frontmatter` reads a
    TOML one: its fields only keep the note private; YAML that does not parse and names a key that
    says who reads the note, or a block never closed that names one, too (in doubt, private)."""
    m = _COMMENTED_YAML.match(text)
    if m is None:
        return _SAYS_NOTHING
    fields = m.group("fields").split("-->")[0] if m.group("open") is not None else m.group("fields")
    readers = [_yaml_line(fields, key.start()) for key in _READER_LINE.finditer(fields) if _says_who_reads(key.group(1))]
    meta = _BROKEN if m.group("open") is not None else _yaml_or_broken(fields)  # a block never closed is no YAML either
    if meta is _BROKEN:  # not YAML (Hugo would build no page), but it may say who reads the note
        if not readers:
            return _SAYS_NOTHING
        said = ", ".join(f"`{line}`" for line in readers)
        where = f"un front matter YAML (entre deux ---) invalide, {_IN_COMMENT}"
        warnings.append(f"{where}, qui dit qui peut lire la note ({said}) : la note reste privée ({_MOVE_OUT})")
        return _PRIVATE
    if not isinstance(meta, dict):
        return _SAYS_NOTHING
    if (folded := folded_reader(fields, meta)) is not None:
        where = f"un front matter YAML (entre deux ---), {_IN_COMMENT}"
        warnings.append(f"{where}, dit `{folded}` dans la valeur d'un autre champ : la note reste privée ({_MOVE_OUT})")
        return _PRIVATE
    verdict = _is_public(meta, fields, True, [], zone)
    if not verdict.public:
        shown = readers or [_as_written(fields, key, value) for key, value in meta.items() if _says_who_reads(key)]
        said = ", ".join(f"`{line}`" for line in shown)
        warnings.append(f"un front matter YAML (entre deux ---), {_IN_COMMENT}, dit {said} : la note reste privée ({_MOVE_OUT})")
    return verdict


def _commented_frontmatter(text: str, warnings: list[str], zone: str) -> Readers:
    """Hugo reads a front matter wrapped in an HTML comment at the top of the note (`<!--`, `---`,
    `draft: true`, `---`, `-->`), which Obsidian hides: its author saw no properties, and the
    draft Hugo leaves unpublished was served. YAML, TOML, JSON or Org, its fields only keep the
    note private; a comment never closed, where Hugo builds no page, is read the same."""
    m = _COMMENT_OPENING.match(text)
    if m is None:
        return _SAYS_NOTHING
    inner = text[m.end() :]
    block = hugo_frontmatter(inner)
    return _together(
        [
            _commented_yaml(inner, warnings, zone),
            _toml_frontmatter(block, warnings, zone, hidden=True),
            _json_frontmatter(block, warnings, zone, hidden=True),
            _org_frontmatter(block, warnings, zone, hidden=True),
        ]
    )


class HugoFrontmatter(NamedTuple):
    """The Hugo front matter a note's text opens with, read once: `who_reads` judges its reading,
    `vault.parse_note` cuts it from the body and reads its fields (read apart, tomllib or json
    ran twice a note)."""

    end: int  # where the text Hugo shows starts: 0 for none, and for a `{` that opens no JSON object
    kind: str = ""  # "toml", "json" or "org"; "" for none
    written: str = ""  # as written: TOML's lines between the `+++`, the JSON object, the Org lines
    # what who_reads judges: the fields, None where they nest past the bound, _BROKEN where they do not parse
    reading: Any = None

    @property
    def fields(self) -> dict[str, Any]:
        """As Hugo reads them; {} where they do not parse."""
        return self.reading if isinstance(self.reading, dict) else {}


def hugo_frontmatter(text: str) -> HugoFrontmatter:
    """The Hugo front matter a note without properties opens with (TOML between `+++`, a JSON
    object, Org `#+` lines), where it ends and its fields; `end` 0 and no fields for none. Hugo
    shows none of it as the page's text, where the note's body kept it, indexed and quoted to
    visitors. A `{` that opens no JSON object is text (`{Note} de bas de page`)."""
    if (toml := _TOML_FRONTMATTER.match(text)) is not None:
        written = toml.group("fields")
        try:
            reading: Any = _toml_fields(written)
        except tomllib.TOMLDecodeError:
            reading = _BROKEN
        return HugoFrontmatter(toml.end(), "toml", written, reading)
    if (opening := _JSON_FRONTMATTER.match(text)) is not None:
        written = _json_block(text, opening.end())
        try:
            reading = json.loads(_paired(written), parse_constant=_no_constant)
        except RecursionError:
            reading = None
        except ValueError:
            reading = _BROKEN
        return HugoFrontmatter(opening.end() + len(written) if isinstance(reading, dict) else 0, "json", written, reading)
    if (org := _ORG_FRONTMATTER.match(text)) is not None:
        return HugoFrontmatter(org.end(), "org", org.group("lines"), _org_fields(org.group("lines").split("\n")))
    return HugoFrontmatter(0)
