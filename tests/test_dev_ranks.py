"""eval/dev_ranks.py: every dev question ranked and saved, two saved runs compared question by question."""

from __future__ import annotations

import json

import pytest

from support.bots import make_bot, write_note


def test_the_question_files_are_every_tune_and_test_part_of_a_stem(dev_ranks, tmp_path):
    for name in ("a.tune.tsv", "a.set2.test.tsv", "a2.tune.tsv", "ab.tune.tsv", "a.heldout.tsv", "a.offtopic.tune.txt", "b.test.tsv"):
        (tmp_path / name).write_text("", encoding="utf-8")
    found = [(path.name, part) for path, part in dev_ranks.question_files(["a"], tmp_path)]
    assert found == [("a.tune.tsv", "tune"), ("a2.tune.tsv", "tune"), ("a.set2.test.tsv", "test")]


def test_each_question_is_saved_with_the_rank_of_its_note(dev_ranks, tmp_path):
    vault = tmp_path / "vault"
    write_note(vault, "jardin.md", "title: Le potager\nvisibility: public", "Semer les tomates en avril, les arroser le soir.")
    write_note(vault, "cuisine.md", "title: La tarte\nvisibility: public", "Une tarte aux pommes du verger, cuite trente minutes.")
    write_note(vault, "secret.md", "title: Les tomates cachées\nvisibility: private", "Des tomates, des tomates, des tomates.")
    questions = tmp_path / "passages2.tune.tsv"
    questions.write_text(
        "# question<TAB>note<TAB>earlier question\n"
        "quand semer les tomates ?\tjardin.md\t\n"
        "et combien de temps au four ?\tcuisine.md\tune recette de tarte aux pommes ?\n"
        "quand semer les tomates ?\tsecret.md\t\n",
        encoding="utf-8",
    )
    ranks = dev_ranks.rank_files(make_bot(vault), "personal", [(questions, "tune")])
    assert ranks == {
        "passages2.tune.tsv:2": {"vault": "personal", "set": "long notes", "part": "tune", "follow_up": False, "rank": 1},
        "passages2.tune.tsv:3": {"vault": "personal", "set": "long notes", "part": "tune", "follow_up": True, "rank": 1},
        # a private note: never found for a visitor
        "passages2.tune.tsv:4": {"vault": "personal", "set": "long notes", "part": "tune", "follow_up": False, "rank": None},
    }


def test_two_runs_are_compared_question_by_question_on_each_part(dev_ranks, tmp_path, capsys):
    def row(vault, part, rank):
        return {"vault": vault, "set": vault, "part": part, "follow_up": False, "rank": rank}

    before = {
        "c.tune.tsv:1": row("curated", "tune", 1),
        "c.tune.tsv:2": row("curated", "tune", 3),
        "c.tune.tsv:3": row("curated", "tune", None),
        "c.test.tsv:1": row("curated", "test", 1),
        "d.tune.tsv:1": row("documentation", "tune", 2),
        "gone.tsv:1": row("curated", "tune", 1),  # not in the other run: left out of both
    }
    after = {**before, "c.tune.tsv:1": row("curated", "tune", 2), "c.tune.tsv:2": row("curated", "tune", 1), "c.tune.tsv:3": row("curated", "tune", 4)}
    after["d.tune.tsv:1"] = row("documentation", "tune", 1)
    del after["gone.tsv:1"]
    rows = {(r["set"], r["part"]): r for r in dev_ranks.compare(before, after)}
    assert list(rows) == [("curated", "tune"), ("curated", "test"), ("documentation", "tune"), ("all", "tune"), ("all", "test")]
    assert rows[("curated", "tune")] == {"set": "curated", "part": "tune", "questions": 3, "hit@1": (1, 1), "hit@5": (2, 3), "won": 1, "lost": 1, "p": 1.0}
    assert rows[("curated", "test")]["won"] == rows[("curated", "test")]["lost"] == 0
    assert rows[("all", "tune")] == {"set": "all", "part": "tune", "questions": 4, "hit@1": (1, 2), "hit@5": (3, 4), "won": 2, "lost": 1, "p": 1.0}

    first, second = tmp_path / "before.json", tmp_path / "after.json"
    first.write_text(json.dumps(before), encoding="utf-8")
    second.write_text(json.dumps(after), encoding="utf-8")
    assert dev_ranks.main(["compare", str(first), str(second)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].split() == ["curated", "tune", "3", "questions", "hit@1", "1", "→", "1", "(+1", "/", "−1,", "p", "1.000)", "hit@5", "2", "→", "3"]
    with pytest.raises(SystemExit, match="dev_ranks: cannot read .*absent.json"):
        dev_ranks.main(["compare", str(first), str(tmp_path / "absent.json")])
