"""The frontmatter fast path returns exactly what PyYAML (CSafeLoader, booleans as Obsidian reads
them) returns, or defers to it.

Equality alone would hide a wrong type (1 == 1.0 == True), so results are compared as type
trees; and since deferring to PyYAML always agrees, the fast path must be seen to take most
real headers and a good share of the generated ones.
"""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import frontmatter
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generate_vault import generate
from grasbot.retrieval.frontmatter import Loader, _fast, load_frontmatter
from support.bots import REPO

LOADER = Loader


def same(a, b) -> bool:
    """Equal values of identical types, all the way down (NaN equals NaN, -0.0 is not 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return len(a) == len(b) and all(same(ka, kb) and same(va, vb) for (ka, va), (kb, vb) in zip(a.items(), b.items(), strict=True))
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return repr(a) == repr(b)
    if isinstance(a, dt.datetime):
        return a == b and a.utcoffset() == b.utcoffset()
    return a == b


def reference(header: str):
    try:
        return "ok", yaml.load(header, Loader=LOADER)
    except Exception as exc:  # noqa: BLE001 - the kind of failure is part of the contract
        return "error", type(exc)


def check(header: str) -> bool:
    """Assert agreement with PyYAML; return whether the fast path took the header."""
    kind, expected = reference(header)
    fast = _fast(header)
    if kind == "error":
        assert fast is None, (header, expected, fast)
        with pytest.raises(expected):
            load_frontmatter(header)
        return False
    if fast is not None:
        assert same(fast, expected), (header, fast, expected)
    assert same(load_frontmatter(header), expected), header
    return fast is not None


# --- (a) differential, from a grammar of Obsidian-style headers and nasty cases -------------

CLEAN_KEY_LIST = ["title", "tags", "aliases", "type", "date-created", "Date created", "a.b", "y", "_x", "clé", "x y", "priority", "on_x"]
NASTY_KEY_LIST = [
    "on",
    "yes",
    "No",
    "null",
    "Null",
    "true",
    "~",
    "<<",
    "=",
    "1",
    "007",
    "1.5",
    "2024-01-01",
    "x:y",
    "-x",
    "?x",
    "x ",
    "#x",
    "&a",
    "a" * 130,
    "a" * 1100,
]
# Plain scalars the fast path must type exactly like PyYAML.
CLEAN_ATOM_LIST = [
    "2024-01-01",
    "2024-01-01 10:00:00",
    "2024-01-01T10:00:00Z",
    "2024-1-1",
    "2001-12-14t21:59:43.10-05:00",
    "1e3",
    "1.0e+3",
    "0o17",
    "0x1F",
    "0b101",
    "017",
    "007",
    "08",
    "1_000",
    "-1",
    "+1",
    "1:30",
    "190:20:30",
    ".5",
    "-.inf",
    ".NaN",
    ".nan",
    "1.",
    "~",
    "null",
    "Null",
    "yes",
    "No",
    "on",
    "OFF",
    "y",
    "n",
    "true",
    "a#b",
    "C#",
    "it's",
    "l'auteur",
    "a:b",
    "http://x.y/z",
    "--",
    "---",
    "...",
    "a\\b",
    "é à ç",
    "😀 emoji",
    "\xa0a\xa0",
    "a\u3000",
    "a  b",
    "R&D",
    "x!",
    "-x",
    "2024-02-30",  # dates no calendar has: PyYAML raises, unless the scalar goes on below
    "2023-02-29 10:00:00",
    "2024-01-01T24:00:00Z",
]
NASTY_ATOM_LIST = [
    "[[lien]]",
    "=",
    "<<",
    "quoted: x",
    "a #b",
    'dit "oui"',
    "a:",
    "- a",
    "-",
    "? x",
    "[a, b]",
    "{a: 1}",
    "&a x",
    "*a",
    "!!str x",
    "| x",
    "> x",
    "%x",
    "@x",
    "`x`",
    "a\tb",
    "a\rb",
    "a\u2028b",
    "a\x85b",
    "\ufeffa",
    "a\x07",
    " a ",
    "",
    "a'b",
    "a''b",
    "'",
    'a"',
    "#",
    ":x",
]
CLEAN_KEYS = st.sampled_from(CLEAN_KEY_LIST)
NASTY_KEYS = st.one_of(st.sampled_from(NASTY_KEY_LIST), st.text(alphabet="abcé_-. 1:#", min_size=1, max_size=6))
CLEAN_ATOMS = st.one_of(st.sampled_from(CLEAN_ATOM_LIST), st.text(alphabet="ab1-.é😀 ", min_size=1, max_size=8))
NASTY_ATOMS = st.one_of(
    st.sampled_from(NASTY_ATOM_LIST),
    st.text(alphabet="ab1-:#'\" ,[]{}.&*!|>%@\\\téà😀\xa0", max_size=8),
)
EXTRA_LINES = st.sampled_from(["# comment", "---", "...", "  more", "- stray", "%YAML 1.1", "  key: nested", "\tx: y"])


def pick(draw, level: int, clean, nasty):
    """Draw from `nasty` with probability level/10, else from `clean` (both strategies)."""
    return draw(nasty if draw(st.integers(0, 9)) < level else clean)


@st.composite
def scalars(draw, level: int):
    atom = pick(draw, level, CLEAN_ATOMS, NASTY_ATOMS)
    style = pick(draw, level, st.sampled_from(["plain", "double", "single"]), st.just("single-raw"))
    if style == "double":
        return f'"{atom}"'
    if style == "single":
        return "'" + atom.replace("'", "''") + "'"
    if style == "single-raw":
        return f"'{atom}'"
    return atom


@st.composite
def values(draw, level: int):
    form = draw(st.sampled_from(["scalar", "scalar", "flow", "empty", "block"]))
    if form == "scalar":
        return draw(scalars(level)), []
    if form == "flow":
        inner = draw(st.sampled_from([", ", ",", " , ", ",  "])).join(draw(st.lists(scalars(level), max_size=4)))
        ends = st.sampled_from(["", " "]), st.just(",")
        return "[" + pick(draw, level, *ends) + inner + pick(draw, level, *ends) + "]", []
    if form == "empty":
        return "", []
    indent = draw(st.sampled_from([0, 2, 2, 4]))
    lines = []
    for item in draw(st.lists(scalars(level), max_size=4)):
        here = pick(draw, level, st.just(indent), st.sampled_from([0, 1, 3]))
        dash = pick(draw, level, st.sampled_from(["- ", "- ", "-  "]), st.just("-"))
        lines.append(" " * here + dash + item)
    return "", lines


@st.composite
def headers(draw):
    """An Obsidian-style header where each part goes wrong with probability level/10."""
    level = draw(st.sampled_from([0, 0, 1, 2, 5]))
    out = [""]
    for _ in range(draw(st.integers(0, 6))):
        value, items = draw(values(level))
        gap = pick(draw, level, st.sampled_from([" ", " ", "  "]), st.sampled_from(["", "\t"]))
        trail = pick(draw, level, st.sampled_from(["", "", " ", "  "]), st.just("\t"))
        key = pick(draw, level, CLEAN_KEYS, NASTY_KEYS)
        out.append(f"{key}:{gap if value else ''}{value}{trail}")
        out.extend(items)
        extra = pick(draw, level, st.sampled_from([None] * 6 + ["", "   ", "  more"]), EXTRA_LINES)
        if extra is not None:
            out.append(extra)
    return "\n".join(out) + draw(st.sampled_from(["\n", "", "\n\n"]))


def test_fast_path_agrees_with_pyyaml():
    took: list[bool] = []

    @settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(headers())
    def run(header):
        took.append(check(header))

    run()
    # Without this the test would pass with a fast path that always defers to PyYAML.
    assert sum(took) >= len(took) // 5, f"fast path took only {sum(took)} of {len(took)} headers"


STYLES = {
    "plain": lambda a: a,
    "double": lambda a: f'"{a}"',
    "single": lambda a: "'" + a.replace("'", "''") + "'",
    "single-raw": lambda a: f"'{a}'",
}


@pytest.mark.parametrize("style", sorted(STYLES))
def test_every_listed_atom_in_every_position(style):
    """Hypothesis favours the first entries of a list: the listed traps are all checked here."""
    for atom in CLEAN_ATOM_LIST + NASTY_ATOM_LIST:
        text = STYLES[style](atom)
        heads = (f"k: {text}\n", f"k: {text}  \nz: 1\n", f"k: [{text}]\n", f"k: [x, {text} ,y]\n", f"k:\n  - {text}\n  - x\n", f"k:\n- {text}\n")
        for header in (*heads, f"k: {text}\n  more\n"):  # the last: a plain scalar that goes on below
            check(header)
    for key in CLEAN_KEY_LIST + NASTY_KEY_LIST:
        check(f"{key}: x\n")
        check(f"{key}:\n  - x\n")


# --- (b) real headers: the bundled vault and a generated one --------------------------------


def vault_headers(root: Path) -> list[str]:
    handler = frontmatter.YAMLHandler()
    out = []
    for path in sorted(root.rglob("*.md")):
        text = path.read_bytes().decode("utf-8-sig")
        if handler.detect(text):
            out.append(handler.split(text)[0])
    return out


@pytest.mark.parametrize("source", ["bundled", "generated"])
def test_real_headers_agree_and_take_the_fast_path(source, tmp_path):
    if source == "bundled":
        root = REPO / "vault-grasbot"
    else:
        root = tmp_path / "vault"
        generate(root, 200, seed=3)
    headers_ = vault_headers(root)
    assert len(headers_) >= (40 if source == "bundled" else 200)
    took = [check(h) for h in headers_]
    assert sum(took) >= 0.95 * len(took), f"fast path took {sum(took)} of {len(took)}"


# --- (c) named edge cases ----------------------------------------------------------------------


def test_obsidian_header_reads_with_pyyaml_types():
    header = (
        "\ntitle: \"Casse-briques: le jeu\"\nslug: jeu\ndomains: [web, 'l''atelier', \"a, b\"]\n"
        'aliases:\n  - "casse-briques"\n  - petit jeu\npriority: 5\nscore: 1.5\n'
        "updated: 2026-05-27\nat: 2024-01-01 10:00:00\ndraft: false\nnothing:\nempty: []\n"
    )
    got = _fast(header)
    assert got == {
        "title": "Casse-briques: le jeu",
        "slug": "jeu",
        "domains": ["web", "l'atelier", "a, b"],
        "aliases": ["casse-briques", "petit jeu"],
        "priority": 5,
        "score": 1.5,
        "updated": "2026-05-27",  # a text field: as written
        "at": dt.datetime(2024, 1, 1, 10, 0),
        "draft": False,
        "nothing": None,
        "empty": [],
    }
    assert same(got, yaml.load(header, Loader=LOADER))


@pytest.mark.parametrize(
    "text, expected",
    [
        ("007", 7),
        ("0x1F", 31),
        ("1_000", 1000),
        ("1:30", 90),
        ("0o17", "0o17"),
        ("1e3", "1e3"),
        ("~", None),
        ("yes", "yes"),
        ("Off", "Off"),
        ("TRUE", True),
        ("False", False),
        ("y", "y"),
        ("C#", "C#"),
        ("a:b", "a:b"),
    ],
)
def test_plain_scalars_resolve_like_yaml_1_1_but_booleans(text, expected):
    got = _fast(f"k: {text}\n")
    assert got is not None and same(got["k"], expected)


@pytest.mark.parametrize("shape", ["flat", "pyyaml"])
def test_a_boolean_is_true_or_false_alone_as_obsidian_reads_one(shape):
    """js-yaml, behind Obsidian's parseYaml, reads YAML 1.2's booleans: `title: No` is the title
    « No » there, and was « False » here, `aliases: [Off, ON]` the aliases « False », « True »."""
    header = "title: No\naliases: [Off, ON]\ntags:\n  - yes\ndraft: true\nfini: FALSE\n"
    if shape == "pyyaml":  # a comment sends the header to PyYAML itself
        header += "# fin\n"
        assert _fast(header) is None
    got = load_frontmatter(header)
    assert same(got, {"title": "No", "aliases": ["Off", "ON"], "tags": ["yes"], "draft": True, "fini": False})


@pytest.mark.parametrize("shape", ["flat", "pyyaml"])
def test_a_text_field_is_the_text_written(shape):
    """YAML 1.1 made `title: 1:30` the title « 90 » (sexagesimal), `017` « 15 », `1_000` « 1000 »,
    `aliases: [0x1F]` « 31 »: a field GrasBot reads as text is what the author wrote, in any
    case of its key; `priority` and `publish` keep their types."""
    header = (
        "title: 1:30\naliases: [0x1F, 1:30, 2.10]\nTags:\n  - 017\n  - 1_000\n  - true\n"
        "slug: 2024-02-30\nupdated: 2024-01-01 10:00:00\ntype: ~\npriority: 0x1F\npublish: 017\n"
    )
    if shape == "pyyaml":
        header += "# fin\n"
        assert _fast(header) is None
    got = load_frontmatter(header)
    expected = {
        "title": "1:30",
        "aliases": ["0x1F", "1:30", "2.10"],
        "Tags": ["017", "1_000", "true"],
        "slug": "2024-02-30",
        "updated": "2024-01-01 10:00:00",
        "type": None,
        "priority": 31,
        "publish": 15,
    }
    assert same(got, expected), got


def test_a_text_field_from_an_anchor_or_a_merge_is_the_text_written():
    """Only PyYAML reads these: the anchored value stays a number for the field that is one."""
    got = load_frontmatter("n: &n 017\npriority: *n\ntitle: *n\nl: &l [1:30]\ntags: *l\n<<: {aliases: [1_000]}\n")
    assert same(got, {"aliases": ["1_000"], "n": 15, "priority": 15, "title": "017", "l": [90], "tags": ["1:30"]}), got


def test_nan_and_infinity():
    got = _fast("a: .NaN\nb: -.inf\n")
    assert math.isnan(got["a"]) and got["b"] == -math.inf


def test_duplicate_key_keeps_first_place_and_last_value():
    header = "a: 1\nb: 2\na:\n  - x\n"
    assert list(_fast(header).items()) == [("a", ["x"]), ("b", 2)]
    assert same(_fast(header), yaml.load(header, Loader=LOADER))


@pytest.mark.parametrize(
    "header",
    [
        "true: x\n",
        "False: 1\n",
        "<<: {a: 1}\n",
        "a: b # note\n",
        "a: &x 1\nb: *x\n",
        "a: !!str 1\n",
        "a: |\n  text\n",
        "a: {b: 1}\n",
        "a: b\n  c\n",
        "a:\tb\n",
        'a: "x\\ty"\n',
        "a: [b, [c]]\n",
        "a: [b,]\n",
        "a:\n  - b\n - c\n",
        "a: x\n- b\n",
        "%YAML 1.1\n---\na: b\n",
        "a: b\r\n",
        "",
    ],
)
def test_headers_outside_the_subset_go_to_pyyaml(header):
    assert _fast(header) is None
    check(header)


def test_pyyaml_errors_are_raised_unchanged():
    for header in ("a: b: c\n", "a: [b\n", "a: 'b\n", "a:\n  - b\n c: d\n", "a: \x07\n"):
        assert _fast(header) is None
        with pytest.raises(yaml.YAMLError):
            load_frontmatter(header)


@pytest.mark.parametrize(
    "header",
    [
        "x: 2024-02-30\n  y\n",
        "x: 2023-02-29 10:00:00\n  y\n",
        "x:\n- 2024-02-30\n  - a\n",
        "x:\n  - 2024-02-30\n    # c\n",
        "x: 2024-02-30\n---\n",
        "x: [2024-02-30]\n  - a\n",
        "x: 2024-02-30\ny: [a: b]\n",
    ],
)
def test_a_date_that_does_not_exist_is_read_as_far_as_pyyaml_reads(header):
    """`x: 2024-02-30` then `  y` is the text « 2024-02-30 y » to PyYAML (a plain scalar goes on
    below), and a later line may be a YAML error: the fast path made the date at once and raised
    Python's ValueError, the note left out where PyYAML reads it (or names another error)."""
    check(header)


def test_a_flow_list_item_padded_with_spaces_is_read_once():
    """`tags: ['a', b … c]` with a long run of spaces inside an item: its end was looked for after
    each space by reading the spaces after it again (200,000 spaces took about four minutes).
    It is read as PyYAML reads it."""
    header = "tags: ['a', b" + " " * 200_000 + "c]"
    assert load_frontmatter(header) == yaml.load(header, Loader=Loader) == {"tags": ["a", "b" + " " * 200_000 + "c"]}
