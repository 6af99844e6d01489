"""The dev sets themselves (eval/*.tsv): every expected note is one a visitor can be given.

A question whose expected note was renamed, or is private, can never be ranked first: it would
count as a miss of the engine when it is a fault of the file, and nobody would see it.
"""

from __future__ import annotations

import pytest

from grasbot._evaluate import read_cases
from support.bots import REPO, make_bot


@pytest.mark.parametrize("vault", ["curated", "personal", "documentation", "reference"])
def test_every_expected_note_of_the_dev_sets_is_visible_to_a_visitor(dev_ranks, vault):
    folder, visibility, stems = dev_ranks.VAULTS[vault]
    assert folder is None or folder.is_dir(), f"{folder} is absent: the {vault} vault's dev sets need it"
    bot = make_bot(folder or REPO / "vault-grasbot", **({"default_visibility": visibility} if visibility else {}))
    visible = bot.snapshot.index("visitor").notes.keys()
    files = dev_ranks.question_files(stems)
    assert {part for _, part in files} == {"tune", "test"}
    wrong = []
    for path, _ in files:
        assert path.read_text(encoding="utf-8").startswith("# "), f"{path.name}: the first line says who wrote the questions, and how"
        for case in read_cases(path):
            wrong += [f"{path.name}:{case.line}: {note}" for note in sorted(case.expected - visible)]
            assert all(case.history), f"{path.name}:{case.line}: an empty earlier question"
    assert wrong == []
