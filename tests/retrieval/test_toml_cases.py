"""shared-protocol/cases/toml.json: TOML documents, whether Python's tomllib accepts each and what
it reads. The daemon reads a note's Hugo TOML front matter with tomllib (visibility.py
`_toml_frontmatter`); the plugin's « Tester cette note » with its own port of tomllib's rules
(obsidian-plugin/src/toml.ts), which obsidian-plugin/tests/toml.test.ts runs on the same cases.
Here: the file is still tomllib's word, and what scripts/toml_cases.py writes."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from grasbot.retrieval import visibility
from grasbot.retrieval.frontmatter import MAX_DEPTH
from grasbot.retrieval.vault import VaultOptions, parse_note
from support.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
CASES_FILE = ROOT / "shared-protocol" / "cases" / "toml.json"
CASES = json.loads(CASES_FILE.read_text(encoding="utf-8"))["cases"]


GENERATOR = load_script("scripts/toml_cases.py")  # writes the file: its `tagged` is how it writes a value


def _reading(text: str) -> dict[str, Any]:
    """What the file says of `text`, as tomllib reads it now."""
    try:
        value = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {"accepted": False}
    # json.dumps tells 1 from 1.0 and keeps the order of keys, which == on the decoded values would not
    read = {"accepted": True, "value": json.dumps(GENERATOR.tagged(value), ensure_ascii=False)}
    return read | ({"deep": True} if visibility._nested_past(value, MAX_DEPTH) else {})


def test_tomllib_gives_every_shared_toml_case_its_verdict_and_value():
    assert len(CASES) > 1500
    differing = []
    for case in CASES:
        said = {"accepted": case["accepted"]}
        if case["accepted"]:
            said["value"] = json.dumps(case["value"], ensure_ascii=False)
        if case.get("deep"):
            said["deep"] = True
        if _reading(case["text"]) != said:
            differing.append(case["text"])
    assert differing == [], f"{len(differing)} cases tomllib reads otherwise now, first: {differing[0]!r}"


def test_the_shared_toml_cases_are_what_the_generator_writes(tmp_path):
    GENERATOR.main(tmp_path / "toml.json")
    assert (tmp_path / "toml.json").read_text(encoding="utf-8") == CASES_FILE.read_text(encoding="utf-8"), "run python scripts/toml_cases.py"


@pytest.mark.parametrize("where", ["before", "after"])
def test_a_note_whose_toml_front_matter_tomllib_refuses_stays_private_beside_draft_false(where):
    """The verdict the cases stand for: a Hugo TOML front matter that says `draft = false` and
    that tomllib refuses keeps the note private; one nested past 32 levels (`deep`) leaves it out
    (« note ignorée »), which toml.ts's TomlTooDeep stands for on the plugin's side."""
    checked = 0
    for case in CASES:
        block = f"{case['text']}\ndraft = false" if where == "before" else f"draft = false\n{case['text']}"
        if "+++" in case["text"] or "\r" in case["text"] or (_reading(block)["accepted"] != case["accepted"]):
            continue  # a line of `+++` or a carriage return would end or change the block; or the line changes the verdict
        if case["accepted"] and not case.get("deep"):
            continue  # its other fields decide (a date to come, `draft` twice...)
        try:
            public = parse_note("n.md", f"+++\n{block}\n+++\nCorps.\n".encode(), mtime_ns=0, options=VaultOptions(default_public=True)).public
        except ValueError as exc:
            assert case.get("deep") and "imbrique" in str(exc), (case["text"], exc)
            continue
        assert not case.get("deep"), case["text"]
        assert public is False, case["text"]
        checked += 1
    assert checked > 800
