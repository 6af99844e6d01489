"""Frontmatter loading: an exact fast path for the flat headers Obsidian authors write.

Why: with CSafeLoader the C parser is quick, but PyYAML still resolves and constructs every
scalar in Python; on a cold load of 10,000 generated notes that was ~2.1 s of ~16 s. Most
headers are flat `key: value` lines, flow lists `[a, b]` and block lists `- item`, which a
line-based reader handles in a fraction of that. Measured over the 10,000 headers of the
benchmark vault (seed 7), best of 7: yaml.load 1.47 s, load_frontmatter 0.33 s, and all 10,000
headers (and the 48 of vault-grasbot/) took the fast path.

Exactness: types are never guessed here. Plain scalars go through the loader's own resolver and
SafeConstructor (so `2024-01-01`, `007`, `0x1F`, `1:30`, `.inf`, `~` come out as PyYAML makes
them), and anything outside the recognised shapes (comments, anchors, tags, block scalars, flow
mappings, multi-line scalars, tabs, odd characters, ...) is handed to PyYAML itself, which also
raises the errors.

Booleans are Obsidian's, not YAML 1.1's: only `true` and `false` (in three cases) are one, as
in js-yaml, the parser behind Obsidian's `parseYaml`, and as its help says of a checkbox
property. PyYAML's `yes`, `No`, `on`, `OFF` are the text the author wrote: `title: No` was the
title « False », `aliases: [Off, ON]` the aliases « False » and « True ».

Dates are the plugin's, not YAML 1.1's: a plain scalar is a timestamp only in ISO 8601's usual
form (`2026-05-01`, `2026-05-01T09:30:00`, its fraction to six digits and an offset, `Z`,
`+02`, `+02:00`, after it), which « Tester cette note » (noteTest.ts `ISO_DATE`) reads from the
text Obsidian gives it. PyYAML's other forms (`2026-5-1 9:00:00`, `2026-05-01 09:00:00 +2`, a
lower-case `t`, a space before `Z`, seven digits of a second) are the text written, which is no
date: `publishDate: 2020-5-1 9:00:00` made a note public that the plugin said was private.

A field GrasBot reads as text (`TEXT_FIELDS`: a title, an alias, a tag…) is the text written:
a plain scalar there is never made a number, a boolean or a date (`title: 1:30` was « 90 »,
YAML 1.1's sexagesimal, `017` « 15 », `1_000` « 1000 », `2.10` « 2.1 », `2024-02-30` skipped the
note), only `~`, `null` or nothing is no value. Other fields (`priority`, `publish`) keep
their types.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import MappingNode, ScalarNode, SequenceNode
from yaml.resolver import Resolver

try:  # python-frontmatter's loader: C when PyYAML was built with libyaml
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _SafeLoader

__all__ = ["TEXT_FIELDS", "FrontmatterTooLarge", "Loader", "keys_written", "load_frontmatter"]

#: The fields whose values (or list items) are read as the text written, by their key in any case
TEXT_FIELDS = frozenset({"title", "slug", "type", "source", "updated", "domains", "tags", "aliases", "answers", "linked", "related"})
# A top-level field's key as written on its line, for the patterns that look for one in a
# header's text: words, dots and dashes, spaces between them. Each space read once
# (possessive): a lazy `\w[\w .-]*?` before `[ \t]*:` read the spaces after each of them again,
# and a frontmatter line of 100,000 spaces took seconds (a million, minutes) to load
FIELD_KEY = r"\w[\w.-]*+(?: ++[\w.-]++)*+"
# YAML's line breaks but the line feed (`\r`, U+0085, U+2028, U+2029): PyYAML ends a line at each,
# where Obsidian reads them as text, and a key after one is a key to the daemon
# (`x: a\u2028draft: true` is a draft)
YAML_BREAKS = "\r\x85\u2028\u2029"
# Where a line of a header starts as PyYAML reads it, for a pattern that looks for a key on its
# line: at the start, after a line feed, or after another of YAML's line breaks
LINE_START = rf"(?<![^\n{YAML_BREAKS}])"

_BOOL_TAG = "tag:yaml.org,2002:bool"
_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")  # YAML 1.2's core schema, js-yaml's
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
# an offset's hours 00-23 and minutes 00-59: PyYAML read `+02:99` as +03:39, where the plugin and Hugo read no date
_TIMESTAMP = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?(?:Z|[-+](?:[01][0-9]|2[0-3])(?::[0-5][0-9])?)?)?$")
_OWN = {_BOOL_TAG: _BOOL, _TIMESTAMP_TAG: _TIMESTAMP}


class _Resolver(Resolver):
    """PyYAML's implicit types, a boolean only `true` or `false`, a date only in ISO's usual form
    (see the module's docstring)."""

    yaml_implicit_resolvers = {
        first: [(tag, _OWN.get(tag, regexp)) for tag, regexp in resolvers] for first, resolvers in Resolver.yaml_implicit_resolvers.items()
    }


class Loader(_SafeLoader, _Resolver):
    """The safe loader (C when PyYAML has it), reading booleans as Obsidian does and
    `TEXT_FIELDS` as written: the reference and the fallback."""

    def construct_document(self, node: Any) -> Any:
        if isinstance(node, MappingNode):
            self.flatten_mapping(node)  # a merged `<<: *base`'s fields are the mapping's own
            done: dict[int, Any] = {}
            node.value = [(k, _as_written(self, v, done) if _is_text_key(k) else v) for k, v in node.value]
        return super().construct_document(node)

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        """A value its explicit tag cannot make (`!!bool 0`, `!!int abc`) is a YAML error that
        names the tag, the value and its line: SafeConstructor raised KeyError, ValueError or
        AttributeError, which told the author nothing (or that a date did not exist); so is a
        number Python cannot make (ValueError past int()'s 4,300 digits, OverflowError)."""

        def number() -> bool:  # YAML reads the scalar's text as the number its tag names
            return isinstance(node, ScalarNode) and node.tag in _NUMBER_TAGS and node.tag == self.resolve(ScalarNode, node.value, (True, False))

        if isinstance(node, ScalarNode) and node.tag == _INT_TAG and _too_many_parts(node.value) and number():
            raise _too_long(node)
        try:
            return super().construct_object(node, deep)
        except (KeyError, ValueError, AttributeError, TypeError, OverflowError):
            if number():  # a number Python cannot make: more than 4,300 digits (int()'s bound), a float past its range
                raise _too_long(node) from None
            if not isinstance(node, ScalarNode) or node.tag == self.resolve(ScalarNode, node.value, (not node.style, bool(node.style))):
                raise  # an implicit type: `2024-02-30` is a date that does not exist
            tag = node.tag.replace("tag:yaml.org,2002:", "!!")
            said = f"l'étiquette YAML {tag} ne fait pas de valeur de « {node.value} » : enlevez l'étiquette, ou mettez la valeur entre guillemets"
            raise ConstructorError(None, None, said, node.start_mark) from None


def _too_many_parts(text: str) -> bool:
    """Whether a base 60 int (`1:59:59`) has more parts than `_MAX_BASE_60_PARTS`: PyYAML makes
    it by multiplying an ever longer int by 60 for each, quadratic (a million characters: a minute)."""
    return text.count(":") >= _MAX_BASE_60_PARTS


def _too_long(node: ScalarNode) -> ConstructorError:
    shown = node.value if len(node.value) <= 40 else node.value[:40] + "…"
    return ConstructorError(None, None, f"le nombre « {shown} » est trop grand pour être lu : mettez-le entre guillemets", node.start_mark)


def _is_text_key(node: Any) -> bool:
    return isinstance(node, ScalarNode) and node.tag == _STR_TAG and node.value.lower() in TEXT_FIELDS


def _as_written(resolver: Resolver, node: Any, done: dict[int, Any]) -> Any:
    """`node` with each plain scalar in it that YAML makes a number, a boolean or a date made a
    string of its text again. New nodes: an anchored one may be another field's value too."""
    if isinstance(node, ScalarNode):
        if node.style or node.tag in (_STR_TAG, _NULL_TAG) or node.tag != resolver.resolve(ScalarNode, node.value, (True, False)):
            return node  # quoted, text already, no value, or tagged by the author (`!!int 5` is 5 either way)
        return ScalarNode(_STR_TAG, node.value, node.start_mark, node.end_mark, node.style)
    if not isinstance(node, SequenceNode):
        return node
    copy = done.get(id(node))
    if copy is None:  # an alias is the same node again: copied once, a loop kept a loop
        copy = done[id(node)] = SequenceNode(node.tag, [], node.start_mark, node.end_mark, node.flow_style)
        copy.value.extend(_as_written(resolver, item, done) for item in node.value)
    return copy


# Anything but newline and characters both YAML readers take as plain printable text: tabs,
# CR, NEL, U+2028/2029 (YAML line breaks), BOM, controls, surrogates. Those go to PyYAML.
_ODD_CHAR = re.compile("[^\n -~\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
_KEY = re.compile(r"\w[\w.-]*(?: [\w.-]+)*")
# A plain item's spaces are its own only when more of it follows: read once each (possessive),
# where its end was looked for after each of them by reading the spaces after it again
# (`['a', b` and 150,000 spaces: minutes).
_FLOW_ITEM = re.compile(r""" *(?:"([^"\\]*)"|'((?:[^']|'')*)'|([^ ,'"\[\]{}](?:[^ ,\[\]{}]| ++(?=[^ ,\[\]{}]))*+)) *(,|$)""")
_FLOW_SPECIAL = frozenset("[]{}")
# Characters that cannot start a plain scalar ('-' is checked apart: `-1` is a plain scalar).
_INDICATORS = frozenset("?:,[]{}#&*!|>'\"%@`")
_STR_TAG = Resolver.DEFAULT_SCALAR_TAG
_NULL_TAG = "tag:yaml.org,2002:null"
_INT_TAG = "tag:yaml.org,2002:int"
_NUMBER_TAGS = (_INT_TAG, "tag:yaml.org,2002:float")
# a base 60 int's parts, past which it is too long to read: 4,200 digits, about int()'s bound on a decimal one (4,300)
_MAX_BASE_60_PARTS = 2_400
_MERGE_TAG = "tag:yaml.org,2002:merge"
_CONSTRUCTORS = {  # the implicit tags built the way SafeConstructor builds them
    tag: SafeConstructor.yaml_constructors[tag] for tag in (f"tag:yaml.org,2002:{name}" for name in ("null", "bool", "int", "float", "timestamp"))
}

_resolver = _Resolver()
_constructor = SafeConstructor()
_plain_cache: dict[str, Any] = {}  # plain text -> constructed value (all immutable)
_key_reader: dict[str, Callable[[str], Any] | None] = {}


#: What a frontmatter may amount to once its anchors and aliases are expanded, beyond what it
#: holds as written: a few hundred bytes of nested aliases (the "billion laughs") become a
#: billion values when a field is turned into text. A note over a bound is skipped and reported.
MAX_NODES = 20_000  # values (scalars, lists, mappings), counted with every alias expanded
MAX_CHARS = 1_000_000  # characters of scalars, every alias expanded
MAX_DEPTH = 32  # lists and mappings nested in each other (PyYAML constructs them recursively)


class _Fallback(Exception):
    """The header leaves the fast subset: PyYAML decides."""


class FrontmatterTooLarge(ValueError):
    """The frontmatter would expand past a bound (MAX_NODES, MAX_CHARS, MAX_DEPTH): the message
    says which, for the author, in French as the vault's notes are."""


def _count(n: int) -> str:
    """A count as French writes it, thousands apart (« 1 000 000 »)."""
    return f"{n:,}".replace(",", " ")


def load_frontmatter(header: str) -> Any:
    """Return exactly `yaml.load(header, Loader=Loader)`, or raise the same yaml.YAMLError;
    FrontmatterTooLarge when what it holds, aliases expanded, is over a bound."""
    fast = _fast(header)  # no anchors, no aliases, no nesting: nothing to bound
    if fast is None:
        return _bounded_load(header)
    return fast


def keys_written(header: str) -> list[str]:
    """The keys of a frontmatter's top-level mapping, one for each time it is written, as YAML
    reads each (`"visibility"`, `'visibility'`, `"visibilit\\x79"`, `? visibility`, a flow
    mapping's, an indented one's), where the mapping `load_frontmatter` returns keeps one of
    each, its last value; and each key a merge key (`<<: {…}`, `<<: *base`, `<<: [*a, *b]`)
    brings in, from each mapping it merges, where YAML keeps one value (and PyYAML the last of
    a list's, where YAML's spec and js-yaml, Obsidian's, keep the first's). For a header
    `load_frontmatter` has read: composing is linear in its size, a mapping merged through
    aliases is read once each time it is merged."""
    loader = Loader(header)
    try:
        node = loader.get_single_node()
    finally:
        loader.dispose()
    if not isinstance(node, MappingNode):
        return []
    keys: list[str] = []
    _keys_of(node, keys, set())
    return keys


def _keys_of(node: MappingNode, keys: list[str], merging: set[int]) -> None:
    """`node`'s keys into `keys`, those of the mappings its merge keys bring in with them."""
    merging.add(id(node))  # a mapping that merges itself (`&a {<<: *a}`) is read once
    for key, value in node.value:
        if not isinstance(key, ScalarNode):
            continue
        if key.tag != _MERGE_TAG:
            keys.append(key.value)
            continue
        for merged in value.value if isinstance(value, SequenceNode) else [value]:
            if isinstance(merged, MappingNode) and id(merged) not in merging:
                _keys_of(merged, keys, merging)
    merging.discard(id(node))


def _bounded_load(header: str) -> Any:
    """yaml.load's two steps, with the node graph measured between them: composing is linear in
    the header's size, and constructing (or printing) an expanded alias is what explodes."""
    loader = Loader(header)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_bounds(node, len(header))
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _children(node: Any) -> list:
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return node.value if not isinstance(node, ScalarNode) else []


def _check_bounds(root: Any, header_chars: int) -> None:
    """Measure the graph once per distinct node (an alias is the same node object again), with
    an explicit stack: a recursive walk would itself overflow on deep nesting. An alias to an
    enclosing node (`&a [*a]`) expands forever."""
    measured: dict[int, tuple[int, int, int]] = {}  # id -> (nodes, chars, depth), expanded
    entered: set[int] = set()  # nodes whose children are being measured: the current path
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        kids = _children(node)
        if children_done:
            entered.discard(key)
            own = len(node.value) if isinstance(node, ScalarNode) else 0
            nodes = 1 + sum(measured[id(k)][0] for k in kids)
            chars = own + sum(measured[id(k)][1] for k in kids)
            depth = (0 if isinstance(node, ScalarNode) else 1) + max((measured[id(k)][2] for k in kids), default=0)
            if depth > MAX_DEPTH:
                raise FrontmatterTooLarge(f"les propriétés imbriquent des listes ou des champs sur plus de {MAX_DEPTH} niveaux")
            measured[key] = (nodes, chars, depth)
            continue
        if key in measured:
            continue
        if key in entered:
            raise FrontmatterTooLarge("les propriétés ont un alias vers la liste ou les champs qui le contiennent (elles ne finissent jamais)")
        entered.add(key)
        stack.append((node, True))
        stack.extend((k, False) for k in kids if id(k) not in measured)
    nodes, chars, _ = measured[id(root)]
    if nodes > max(MAX_NODES, len(measured)):
        raise FrontmatterTooLarge(f"les propriétés se déploient en {_count(nodes)} valeurs par leurs alias (au plus {_count(MAX_NODES)})")
    if chars > max(MAX_CHARS, header_chars):
        raise FrontmatterTooLarge(f"les propriétés se déploient en {_count(chars)} caractères par leurs alias (au plus {_count(MAX_CHARS)})")


def _fast(header: str) -> dict[str, Any] | None:
    """The mapping read by the fast path, or None when the header needs PyYAML."""
    if _ODD_CHAR.search(header) is not None:
        return None
    try:
        return _read(header)
    except _Fallback:
        return None


def _read(header: str) -> dict[str, Any] | None:
    result: dict[str, Any] = {}
    open_key: str | None = None  # last key with an empty value: block items may follow
    open_plain: Callable[[str], Any] = _plain  # how that key's plain items are read
    items: list[Any] | None = None
    items_indent = 0
    for line in header.split("\n"):
        first = line[:1]
        if first != " " and first != "-":
            if not line:
                continue
            key, colon, value = line.partition(":")
            plain = _reader(key) if colon else None
            if plain is None or (value and value[0] != " "):
                raise _Fallback
            value = value.strip(" ")
            # Plain dict assignment is PyYAML's rule for a repeated key: last value, first place.
            if value:
                result[key] = _value(value, plain)
                open_key = None
            else:
                result[key] = None
                open_key, open_plain, items = key, plain, None
            continue
        item = line.lstrip(" ")
        if not item:
            continue
        if item[:2] != "- " or open_key is None:
            raise _Fallback
        indent = len(line) - len(item)
        if items is None:
            items = result[open_key] = []
            items_indent = indent
        elif indent != items_indent:
            raise _Fallback
        item = item[2:].strip(" ")
        if not item:
            raise _Fallback
        items.append(_scalar(item, open_plain))
    return result or None


def _reader(key: str) -> Callable[[str], Any] | None:
    """How a plain key's plain scalars are read (`_written` for `TEXT_FIELDS`), or None for a
    key the fast path leaves to PyYAML."""
    try:
        return _key_reader[key]
    except KeyError:
        pass
    reader: Callable[[str], Any] | None = None
    if len(key) <= 128 and _KEY.fullmatch(key) is not None and _resolver.resolve(ScalarNode, key, (True, False)) == _STR_TAG:
        reader = _written if key.lower() in TEXT_FIELDS else _plain
    if len(_key_reader) >= 4096:
        _key_reader.clear()
    _key_reader[key] = reader
    return reader


def _value(text: str, plain: Callable[[str], Any]) -> Any:
    if text[0] != "[":
        return _scalar(text, plain)
    if text[-1] != "]":
        raise _Fallback
    inner = text[1:-1]
    if not inner.strip(" "):
        return []
    if "'" not in inner and '"' not in inner:  # the usual `[a, b]`: no quotes, no regex
        out = []
        for part in inner.split(","):
            part = part.strip(" ")
            if not part or ":" in part or _FLOW_SPECIAL.intersection(part):
                raise _Fallback
            out.append(plain(part))
        return out
    out = []
    pos, end = 0, len(inner)
    while pos < end:
        m = _FLOW_ITEM.match(inner, pos)
        if m is None or (m.group(4) == "," and m.end() == end):  # `[a,]`: leave it to PyYAML
            raise _Fallback
        double, single, bare = m.group(1, 2, 3)
        if double is not None:
            out.append(double)
        elif single is not None:
            out.append(_single(single))
        else:
            if ":" in bare:  # conservative: YAML parsers have disagreed on `[a:b]`
                raise _Fallback
            out.append(plain(bare))
        pos = m.end()
    return out


def _scalar(text: str, plain: Callable[[str], Any]) -> Any:
    """One non-empty scalar on one line, spaces stripped, in block context."""
    first = text[0]
    if first == '"':
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != '"' or '"' in inner or "\\" in inner:
            raise _Fallback
        return inner
    if first == "'":
        if len(text) < 2 or text[-1] != "'":
            raise _Fallback
        return _single(text[1:-1])
    return plain(text)


def _single(inner: str) -> str:
    if "'" not in inner:
        return inner
    if "'" in inner.replace("''", ""):
        raise _Fallback
    return inner.replace("''", "'")


def _plain_tag(text: str) -> str:
    """The tag PyYAML gives a plain scalar the fast path reads (else _Fallback)."""
    first = text[0]
    if first in _INDICATORS or (first == "-" and (len(text) == 1 or text[1] == " ")) or ": " in text or " #" in text or text[-1] == ":":
        raise _Fallback
    return _resolver.resolve(ScalarNode, text, (True, False))


def _written(text: str) -> str | None:
    """A plain scalar of a `TEXT_FIELDS` field: its text, or None for no value (`~`)."""
    try:
        return None if _plain_cache[text] is None else text
    except KeyError:
        pass
    tag = _plain_tag(text)
    if tag == _NULL_TAG:
        return None
    if tag == _STR_TAG:
        _cache(text, text)
    return text


def _plain(text: str) -> Any:
    try:
        return _plain_cache[text]
    except KeyError:
        pass
    tag = _plain_tag(text)
    if tag == _STR_TAG:
        value: Any = text
    else:
        construct = _CONSTRUCTORS.get(tag)
        if construct is None:  # `=` (value) or `<<` (merge)
            raise _Fallback
        if tag == _INT_TAG and _too_many_parts(text):
            raise _Fallback  # PyYAML's Loader names it and its line
        try:
            value = construct(_constructor, ScalarNode(tag, text))
        except (ValueError, OverflowError):
            # A number too long for Python, a date no calendar has: PyYAML's Loader names the
            # number and its line, and reads the lines below first (`x: 2024-02-30` then `  y`
            # is the text « 2024-02-30 y », a later line may be another error): raising here
            # left out a note PyYAML reads
            raise _Fallback from None
    _cache(text, value)
    return value


def _cache(text: str, value: Any) -> None:
    if len(_plain_cache) >= 4096:
        _plain_cache.clear()
    _plain_cache[text] = value
