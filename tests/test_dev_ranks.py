"""eval/dev_ranks.py: every dev question ranked and saved (GrasBot and the plain BM25), two saved
runs compared question by question, one run pooled over every set."""

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
        "passages2.tune.tsv:2": {"vault": "personal", "set": "long notes", "part": "tune", "follow_up": False, "rank": 1, "plain": 1},
        "passages2.tune.tsv:3": {"vault": "personal", "set": "long notes", "part": "tune", "follow_up": True, "rank": 1, "plain": 1},
        # a private note: never found for a visitor, by either
        "passages2.tune.tsv:4": {"vault": "personal", "set": "long notes", "part": "tune", "follow_up": False, "rank": None, "plain": None},
    }


def test_the_plain_bm25_beside_grasbot_reads_the_visitors_notes_as_one_flat_text(dev_ranks, tmp_path):
    # The declared question and the title name the subject; the body of the other note says
    # the question's words more often: GrasBot weighs the fields, the plain BM25 counts words.
    vault = tmp_path / "vault"
    declared = "title: Réparer un vélo\nanswers:\n  - comment changer une chambre à air ?\nvisibility: public"
    write_note(vault, "velo.md", declared, "Démonter la roue, trouver la fuite.")
    write_note(vault, "air.md", "title: Le compresseur\nvisibility: public", "Une chambre, de l'air, une chambre à air, changer l'air de la chambre.")
    questions = tmp_path / "a.test.tsv"
    questions.write_text("comment changer une chambre à air ?\tvelo.md\t\n", encoding="utf-8")
    ranks = dev_ranks.rank_files(make_bot(vault), "curated", [(questions, "test")])
    assert (ranks["a.test.tsv:1"]["rank"], ranks["a.test.tsv:1"]["plain"]) == (1, 2)


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


def test_one_run_is_pooled_over_every_set_beside_the_plain_bm25(dev_ranks, tmp_path, capsys):
    def row(vault, part, rank, plain):
        return {"vault": vault, "set": vault, "part": part, "follow_up": False, "rank": rank, "plain": plain}

    ranks = {
        "c.tune.tsv:1": row("curated", "tune", 1, 2),
        "c.tune.tsv:2": row("curated", "tune", 3, 1),
        "c.set2.tune.tsv:1": row("curated", "tune", 1, None),
        "c.set2.test.tsv:1": row("curated", "test", 2, 1),  # behind the plain BM25 on this part
        "c.set2.test.tsv:2": row("curated", "test", None, 7),
        "d.tune.tsv:1": row("documentation", "tune", 1, 1),
    }
    overall, parts = dev_ranks.pooled(ranks)
    assert overall == [
        {"set": "curated", "part": "tune", "questions": 3, "hit@1": 2, "hit@5": 3, "plain hit@1": 1, "plain hit@5": 2},
        {"set": "curated", "part": "test", "questions": 2, "hit@1": 0, "hit@5": 1, "plain hit@1": 1, "plain hit@5": 1},
        {"set": "documentation", "part": "tune", "questions": 1, "hit@1": 1, "hit@5": 1, "plain hit@1": 1, "plain hit@5": 1},
    ]
    assert [(p["file"], p["part"], p["hit@1"], p["plain hit@1"]) for p in parts] == [
        ("c", "tune", 1, 1),
        ("c.set2", "test", 0, 1),
        ("c.set2", "tune", 1, 0),
        ("d", "tune", 1, 1),
    ]

    saved = tmp_path / "ranks.json"
    saved.write_text(json.dumps(ranks), encoding="utf-8")
    assert dev_ranks.main(["pooled", str(saved)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].split() == ["curated", "tune", "3", "questions", "hit@1", "0.667", "hit@5", "1.000", "(plain", "BM25", "0.333", "/", "0.667)"]
    assert printed[-2:] == ["first less often than the plain BM25 on 1 of 4 set parts:", "  c.set2 test: 0 against 1 of 2"]

    del ranks["d.tune.tsv:1"]["plain"]  # saved by a run from before the plain BM25 was kept
    saved.write_text(json.dumps(ranks), encoding="utf-8")
    with pytest.raises(SystemExit, match="no plain BM25 beside them"):
        dev_ranks.main(["pooled", str(saved)])
