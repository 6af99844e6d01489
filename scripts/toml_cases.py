"""Build shared-protocol/cases/toml.json: TOML documents, whether Python's tomllib (the daemon's
reader of a note's Hugo TOML front matter, daemon/grasbot/retrieval/visibility.py) accepts each,
and what it reads. The Obsidian plugin's own reader (obsidian-plugin/src/toml.ts) must give the
same verdict and value for every one (obsidian-plugin/tests/toml.test.ts), and tomllib must still
give the file's (tests/retrieval/test_toml_cases.py): the file cannot drift from Python, and an
edit of toml.ts that breaks agreement fails a test.

Run from the repository's root, with the daemon's Python (3.11+, tomllib):
    python scripts/toml_cases.py
The output is deterministic (a fixed seed), so a run with no change rewrites the same file.
"""

import datetime
import json
import math
import random
import sys
import tomllib
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "shared-protocol" / "cases" / "toml.json"
SEED = 20261207
FUZZED = 1500
MAX_DEPTH = 32  # daemon/grasbot/retrieval/frontmatter.py: a front matter nested past it leaves the note out

# Snippets that a reader a line at a time took and tomllib refuses (a few tomllib accepts), the
# probe that checked toml.ts against tomllib (a key or table twice, escapes, numbers, dates...)
SNIPPETS = [
    'title = "a"\ntitle = "b"',
    "[a]\nx = 1\n[a]\ny = 2",
    "a = 1\n[a]",
    "a.b = 1\na = 2",
    "a = {x = 1}\n[a]",
    "[a.b]\n[a]\nb = 1",
    "a = [1]\n[[a]]",
    "[[a]]\n[a]",
    '"title" = 1\ntitle = 2',
    "'t' = 1\nt = 2",
    '"t\\u0069tle" = 1\ntitle = 2',
    "a.b.c = 1\na.b = 2",
    "[a]\nb.c = 1\n[a.b]",
    "[a.b]\nc = 1\n[a]\nb.d = 2",
    "x = 1\nx.y = 2",
    'title = "a\\qb"',
    'title = "\\x41"',
    'title = "\\u00"',
    'title = "\\uD800"',
    'title = "\\U00110000"',
    'title = "a',
    "title = 'a",
    'title = "a"b',
    'title = "a" "b"',
    'title = "a\x01b"',
    "title = 'a\x7fb'",
    'title = """a\\qb"""',
    'title = """a""""""',
    "title = '''a''''''",
    'title = """a\n\\qb"""',
    "n = 01",
    "n = 1__0",
    "n = _1",
    "n = 1_",
    "n = 0x",
    "n = 0X1F",
    "n = 1.",
    "n = .1",
    "n = 1e",
    "n = +0x1",
    "n = 0b2",
    "n = 1.e5",
    "n = 00",
    "n = -0x1",
    "n = 0o8",
    "n = Inf",
    "n = NaN",
    "n = 1e_5",
    "n = 0_1",
    "n = 1_.0",
    "n = 0x_1",
    "n = 1_e5",
    "n = -nan_",
    "n = +-1",
    "n = 0.0_1",
    "n = 1e05",
    "b = True",
    "b = TRUE",
    "d = 2020-13-01",
    "d = 2020-02-30",
    "d = 2021-02-29",
    "d = 0000-01-01",
    "d = 2020-01-01T25:00:00",
    "d = 2020-01-01T09:00",
    "d = 2020-01-01T09:00:00+25:00",
    "d = 2020-01-01T09:00:00+02:60",
    "d = 2020-01-01T09:00:60",
    "d = 2020-01-01T09:60:00",
    "d = 1979-05-27T07:32:00.",
    "d = 2020-1-01",
    "d = 10000-01-01",
    "d = 2020-01-00",
    "d = 2020-04-31",
    "d = 2020-01-01T09:00:00+0200",
    "d = 2020-01-01T09:00:00z",
    "d = 2020-01-01 09:00:00Z",
    "d = 2020-01-01_09:00:00",
    "t = 25:00:00",
    "t = 07:32",
    "t = 07:60:00",
    "t = 07:32:60",
    "a = [1,,2]",
    "a = [,]",
    "a = [1 2]",
    "a = [",
    "a = ]",
    'tags = [\n "a"\n "b"\n]',
    'tags = [\n "a",\n b\n]',
    "tags = [1, 2",
    "tags = [a, b]",
    'tags = ["a",]',
    'tags = [\n  "a", # c\x01\n]',
    "b = {x = 1,}",
    "b = {x = 1\n, y = 2}",
    "b = {x = 1, x = 2}",
    "b = {x = 1 y = 2}",
    "b = {x = }",
    "b = { x.y = 1, x = 2 }",
    "b = { x.y = 1, x.y = 2 }",
    "b = {,}",
    "b = {x = 1,, y = 2}",
    "b = {x = [1,}",
    "ti tle = 1",
    "ti$tle = 1",
    "= 1",
    "a. = 1",
    ".a = 1",
    "a..b = 1",
    "title",
    "[a b]",
    "[a]]",
    "[[a]",
    "[]",
    "[a.]",
    "hello",
    "hello world",
    "# a\x01",
    "a = [1] junk",
    "a = {x = 1} junk",
    'a = """x""" junk',
    "a = 'x' junk",
    "a = 1 junk",
    "a\n= 1",
    "a =\n1",
    "[[a]]\n[[a.b]]\n[a.b]",
    "[a]\n[[a]]",
    "[a.b]\n[a]\n[a]",
    "x = [\n1,\n2\n] junk",
    "x = [{a = 1},\n{a = 1, a = 2}]",
    "x = [[1]\n",
]
VALID = [
    'title = "a"',
    "title = 'a\\b'",
    'title = """\n  a\n  b"""',
    'title = """a \\\\\n   b"""',
    'title = """a\\\\ \n   b"""',
    "title = '''\na'''",
    'title = """a"""""',
    "title = '''a'''''",
    'title = "\\u00e9\\U0001F600\t\\"\\\\"',
    '"quoted key" = 1',
    "'lit key' = 1",
    '"" = 1',
    "a.b.c = 1\na.d = 2",
    "a . b = 1",
    "[a]\n[a.b]\n[a.c]",
    "[a.b]\n[a]\nx = 1",
    "[a.b.c]\n[a.b]\nx = 1",
    "[[a]]\nx = 1\n[[a]]\nx = 2",
    "[[a]]\n[a.b]\nx = 1\n[[a]]\n[a.b]\nx = 2",
    "[[a]]\n[[a.b]]\n[[a.b]]",
    "n = 0x1F",
    "n = 0o17",
    "n = 0b101",
    "n = 1_000",
    "n = +1",
    "n = -0",
    "n = 1e5",
    "n = 1E+5",
    "n = 1.5e-3",
    "n = 3.14_15",
    "n = inf",
    "n = -inf",
    "n = +nan",
    "n = 0.0",
    "n = -0.0",
    "d = 1979-05-27T07:32:00Z",
    "d = 1979-05-27t07:32:00z",
    "d = 1979-05-27 07:32:00-07:00",
    "d = 1979-05-27T07:32:00.999999999",
    "d = 1979-05-27",
    "d = 2020-02-29",
    "d = 0001-01-01",
    "d = 9999-12-31T23:59:59+23:59",
    "t = 07:32:00",
    "t = 00:32:00.5",
    "a = []",
    "a = [ ]",
    "a = [1, 2, ]",
    "a = [\n  1, # c\n  2,\n]",
    'a = [[1], ["a"], {x = 1}]',
    "a = [\n]",
    "b = {}",
    "b = { }",
    "b = {x = 1, y.z = 2, y.w = 3}",
    "b = { a = { b = 1 } }",
    "# comment with é and \t tab",
    "x = 1 # trailing",
    "   x = 1",
    "\tx = 1",
    "x=1",
    "[ a . b ]",
    "[ 'a' ]",
    "[[ a ]]",
    'a = """ ""\\" """',
    'a = "#"',
    "a = '#'",
    "a = ''",
    'a = ""',
    'a = """"""',
    "a = ''''''",
    'a = """\n"""',
]

# Dates and times: Python's datetime refuses a day no calendar has and year 0; TOML 1.0 wants
# seconds and a colon in the offset; local dates, times and date-times; fractions past 6 digits
DATES = [
    "2020-02-29", "2021-02-29", "2024-02-29", "1900-02-29", "2000-02-29", "2020-04-31", "2020-02-30", "2020-06-31", "2020-13-01", "2020-00-10",
    "2020-01-00", "2020-01-32", "0000-01-01", "0001-01-01", "9999-12-31", "0000-12-31T23:30:00-01:00", "0001-01-01T00:00:00+01:00",
    "9999-12-31T23:59:59-01:00", "2020-01-01T00:00:00Z", "2020-01-01T00:00:00.999999+02:00", "2020-01-01T00:00:00.1234567+02:00",
    "2020-01-01T00:00:00.0Z", "2020-01-01T00:00:00.Z", "2020-01-01 09:00:00", "2020-01-01t09:00:00z", "2020-01-01T09:00", "2020-01-01T09:00Z",
    "2020-01-01T23:59:60Z", "2020-01-01T24:00:00Z", "2020-12-31T23:59:60+01:00", "2020-01-01T09:00:00+0200", "2020-01-01T09:00:00+02",
    "2020-01-01T09:00:00-00:00", "2020-01-01T09:00:00+24:00", "2020-01-01T09:00:00+23:59", "2020-01-01T09:00:00-12:60", "2020-1-01",
    "20-01-01", "2020-01-01T9:00:00", "07:32:00", "07:32", "23:59:60", "24:00:00", "00:00:00.123456789", "00:00:00.000000", "07:32:00Z",
    "07:32:00+02:00", "2027-01-01", "2027-01-01T00:00:00+14:00", "2026-12-06T23:00:00-02:00", "2026-12-07T00:00:00Z", "1979-05-27T07:32:00",
]  # fmt: skip

# What TOML 1.1 reads and tomllib (TOML 1.0) refuses, beside their TOML 1.0 forms
TOML11 = [
    "b = {x = 1,}", "b = {x = 1, y = 2,}", "b = {x = 1\n, y = 2}", "b = {\nx = 1}", "b = {x = 1 # c\n}", "b = {}", "b = { }", "b = {x = 1, y = {z = 2}}",
    'title = "\\x41"', 'title = "\\e"', 'title = "\\u0041"', 'title = """\\x41"""', "title = '\\x41'", "t = 07:32", "d = 1979-05-27T07:32",
    "d = 1979-05-27 07:32Z", "t = 07:32:00",
]  # fmt: skip

# Numbers JavaScript holds otherwise: integers past 2^53 (tomllib's are exact, toml.ts's the nearest
# double), inf and nan, signed zeros, a float past the largest double
NUMBERS = [
    "n = 9007199254740992", "n = 9007199254740993", "n = -9007199254740993", "n = 9223372036854775807", "n = -9223372036854775808",
    "n = 99999999999999999999999", "n = 0x7fffffffffffffff", "n = 0xffff_ffff_ffff_ffff_ff", "n = 0o7777777777777777777", "n = 0b" + "1" * 60,
    "n = 1e400", "n = -1e400", "n = 1e-400", "n = inf", "n = +inf", "n = -inf", "n = nan", "n = +nan", "n = -nan", "n = -0", "n = +0",
    "n = -0.0", "n = +0.0", "n = 0e0", "n = 5e-324", "n = 1.7976931348623157e308", "n = 0.1", "n = 1_000.000_1",
]  # fmt: skip


def nesting() -> list[str]:
    """Arrays, inline tables, dotted keys and headers 32 and 33 levels deep: past 32 the daemon
    leaves the note out (visibility.py `_nested_past`), where toml.ts stops reading."""
    docs = []
    for n in (31, 32, 33, 34):
        docs.append("t = " + "[" * n + "1" + "]" * n)
        docs.append("t = " + "{a = " * n + "1" + "}" * n)
        mixed = "[{a = " * (n // 2) + "1" + "}]" * (n // 2)
        docs.append("t = " + (f"[{mixed}]" if n % 2 else mixed))
        docs.append(".".join(["a"] * n) + " = 1")
        docs.append("[" + ".".join(["a"] * n) + "]\nx = 1")
        docs.append("[[" + ".".join(["a"] * n) + "]]\nx = []")
        docs.append("t = {" + ".".join(["a"] * n) + " = 1}")
    docs.append("t = [" + "[" * 32 + "]" * 32 + ", 1]")
    docs.append("t = " + "[" * 33 + "]" * 32)
    return docs


def fuzzed(rng: random.Random, base: list[str]) -> list[str]:
    """Random mutations of the snippets and valid lines, as the probe's fuzz.py made them: a few
    lines joined, then characters or TOML tokens inserted, deleted or copied; as many that tomllib
    accepts as it refuses (most mutations break the document), so that values are compared too."""
    alphabet = list(" \t\n=.,[]{}\"'#\\_-+:0123456789abcdefxoTZzeu") + [
        "true",
        "false",
        "inf",
        "nan",
        '"""',
        "'''",
        "\\u",
        "2020-01-01",
        "07:32:00",
        "\r\n",
        "\x7f",
        "é",
    ]
    docs: dict[bool, list[str]] = {True: [], False: []}
    while min(len(kept) for kept in docs.values()) < FUZZED // 2:
        doc = "\n".join(rng.sample(base, rng.randint(1, 3)))
        for _ in range(rng.randint(0, 3)):
            i = rng.randint(0, len(doc))
            op = rng.random()
            if op < 0.4:
                doc = doc[:i] + rng.choice(alphabet) + doc[i:]
            elif op < 0.8:
                doc = doc[:i] + doc[i + 1 :]
            else:
                j = rng.randint(0, len(doc))
                doc = doc[:i] + doc[j : j + 5] + doc[i:]
        made = None if doc in base or doc in docs[True] or doc in docs[False] else case(doc, "fuzz")
        if made is not None and len(docs[made["accepted"]]) < FUZZED // 2:
            docs[made["accepted"]].append(doc)
    return docs[True] + docs[False]


def tagged(value: Any) -> Any:
    """tomllib's value as JSON both sides compare: a date, a date-time (local or with its offset)
    or a time of day as {"$date"|"$datetime"|"$time": Python's isoformat}, inf and nan as
    {"$float": "inf"|"-inf"|"nan"}, an integer past 2^53 as {"$int": its digits}."""
    if isinstance(value, dict):
        if any(key.startswith("$") for key in value):
            raise ValueError("a key that reads as a tag")
        return {key: tagged(item) for key, item in value.items()}
    if isinstance(value, list):
        return [tagged(item) for item in value]
    if isinstance(value, datetime.datetime):
        return {"$datetime": value.isoformat()}
    if isinstance(value, datetime.date):
        return {"$date": value.isoformat()}
    if isinstance(value, datetime.time):
        return {"$time": value.isoformat()}
    if isinstance(value, float) and not math.isfinite(value):
        return {"$float": "nan" if math.isnan(value) else "inf" if value > 0 else "-inf"}
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**53:
        return {"$int": str(value)}
    return value


def nested_past(value: Any, depth: int) -> bool:
    """visibility.py `_nested_past`, whose answer the test checks against the daemon's own."""
    if depth < 0:
        return True
    inside = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return any(nested_past(item, depth - 1) for item in inside)


def case(text: str, origin: str) -> dict[str, Any] | None:
    try:
        read = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {"text": text, "from": origin, "accepted": False}
    try:
        value = tagged(read)
    except ValueError:
        return None
    out = {"text": text, "from": origin, "accepted": True, "value": value}
    if nested_past(read, MAX_DEPTH):
        out["deep"] = True
    return out


DESCRIPTION = (
    "TOML documents and whether Python's tomllib accepts each: the daemon reads a note's Hugo TOML front matter (between `+++`) with it"
    " (daemon/grasbot/retrieval/visibility.py `_toml_frontmatter`), and keeps private a note whose front matter it refuses; the Obsidian"
    " plugin's « Tester cette note » reads it with its own port of tomllib's rules (obsidian-plugin/src/toml.ts `parseToml`), which must"
    " refuse the same documents (NotToml) and read the others to the same `value`. `value` is tomllib's, as JSON: a date, a date-time"
    ' (local or with its offset) or a time of day as {"$date"|"$datetime"|"$time": Python\'s isoformat}, inf and nan as {"$float": "inf"|"-inf"|"nan"},'
    ' an integer past 2^53 as {"$int": its digits}. `deep`: tables and arrays nest past 32 levels, and the daemon leaves the note out'
    " (visibility.py `_nested_past`); toml.ts may stop there (TomlTooDeep). `from`: snippet (what a reader a line at a time took), valid,"
    " date (dates and times), number, toml1.1 (what TOML 1.1 reads and tomllib does not), nesting, fuzz (random mutations of snippets and valid lines)."
    " Generated by scripts/toml_cases.py (a fixed seed): edit it, not this file. Tested by tests/retrieval/test_toml_cases.py (tomllib) and"
    " obsidian-plugin/tests/toml.test.ts (toml.ts)."
)


def main(out: Path = OUT) -> None:
    rng = random.Random(SEED)
    sources = [
        *((text, "snippet") for text in SNIPPETS),
        *((text, "valid") for text in VALID),
        *((f"d = {value}", "date") for value in DATES),
        *((f"x = [{value}]\ny = {{ z = {value} }}", "date") for value in DATES),
        *((text, "toml1.1") for text in TOML11),
        *((text, "number") for text in NUMBERS),
        *((text, "nesting") for text in nesting()),
        *((text, "fuzz") for text in fuzzed(rng, SNIPPETS + VALID)),
    ]
    cases, seen = [], set()
    for text, origin in sources:
        made = case(text, origin)
        if made is not None and text not in seen:
            seen.add(text)
            cases.append(made)
    lines = ",\n".join("\t\t" + json.dumps(item, ensure_ascii=False) for item in cases)
    out.write_text(f'{{\n\t"description": {json.dumps(DESCRIPTION, ensure_ascii=False)},\n\t"cases": [\n{lines}\n\t]\n}}\n', encoding="utf-8")
    accepted = sum(item["accepted"] for item in cases)
    print(f"{out}: {len(cases)} cases, {accepted} accepted, {len(cases) - accepted} refused, {out.stat().st_size} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
