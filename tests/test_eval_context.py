"""`grasbot eval` on a file with phrases: context recall read from what a stand-in Ollama received."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from test_context import ANSWERS, COURSE

from grasbot._cli import main
from grasbot._evaluate import contains, quotes_answer, read_cases
from grasbot._exceptions import ConfigError
from support.bots import REPO, write_note
from support.standin_ollama import unused_url


@pytest.fixture
def course_vault(tmp_path):
    root = tmp_path / "vault"
    write_note(root, "cours/Jardinage.md", "title: Cours de jardinage", COURSE)
    write_note(root, "notes/cuisine.md", "title: Cuisine", "Une tarte aux pommes du verger.")
    return root


def questions_file(tmp_path, rows) -> str:
    path = tmp_path / "passages.tsv"
    path.write_text(
        "# question<TAB>note<TAB>(no history)<TAB>phrase\n" + "".join("\t".join((q, note, "", phrase)) + "\n" for q, note, phrase in rows),
        encoding="utf-8",
    )
    return str(path)


def test_context_recall_through_the_standin(course_vault, tmp_path):
    never = "Cette phrase n'est dans aucune note du jardin."
    rows = [
        ("Comment combattre la condensation sur le vitrage de la serre ?", "cours/Jardinage.md", ANSWERS["serre"]),
        ("Comment piéger les limaces ?", "cours/Jardinage.md", "  ".join(ANSWERS["ravageurs"].split(" "))),  # spaces collapse
        ("Que dit le cours de jardinage sur le compost ?", "cours/Jardinage.md", never),
    ]
    run = subprocess.run(
        [
            sys.executable,
            str(REPO / "eval" / "context_recall.py"),
            "--questions",
            questions_file(tmp_path, rows),
            "--vault",
            str(course_vault),
            "--default-visibility",
            "public",
            "--min-score",
            "1",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["questions"] == 3
    assert report["context_recall"] == pytest.approx(2 / 3, abs=1e-4)
    assert [m["question"] for m in report["context_misses"]] == ["Que dit le cours de jardinage sur le compost ?"]
    assert report["fallback_recall"] == pytest.approx(2 / 3, abs=1e-4)
    assert report["hit@5"] == 1.0


def test_context_recall_needs_an_ollama_that_records(course_vault, tmp_path, capsys):
    rows = [("Comment piéger les limaces ?", "cours/Jardinage.md", ANSWERS["ravageurs"])]
    code = main(
        [
            "eval",
            "--questions",
            questions_file(tmp_path, rows),
            "--vault",
            str(course_vault),
            "--default-visibility",
            "public",
            "--ollama-host",
            unused_url(),
            "--llm-timeout",
            "2",
        ]
    )
    assert code == 2
    assert "grasbot: rappel du contexte : le modèle de langue de http://127.0.0.1:" in capsys.readouterr().err


def test_a_phrase_column_that_is_empty_is_refused(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_text("Une question ?\tnote.md\t\t \n", encoding="utf-8")
    with pytest.raises(ConfigError, match=re.escape("bad.tsv:1 : 'question<TAB>chemin;chemin[<TAB>question précédente || …[<TAB>phrase]]' attendu")):
        read_cases(path)


def test_contains_and_quotes_answer():
    assert contains("Le **port**  publié\nreste local.", "port** publié reste")
    assert not contains("Le port publié", "**port** publié")
    assert contains("Le port publié", "**port** publié", marks=False)
    passage = "Le passage commence par une introduction.\n\nLa phrase qui répond est ici, en entier."
    answer = "Le modèle de langue ne répond pas pour l'instant ; voici ce que disent les notes :\n- Le passage commence par une introduction. [x]"
    assert quotes_answer(answer, [passage], "phrase qui répond")  # a sentence of the answering passage
    assert not quotes_answer(answer, ["Autre chose entièrement."], "phrase qui répond")


def test_a_follow_up_is_measured_with_its_history(course_vault, tmp_path):
    """Ranking read a follow-up's history, but the prompt and the fallback measured were those
    of the follow-up asked alone: not what the visitor who asked it gets."""
    path = tmp_path / "suite.tsv"
    path.write_text(
        f"Et comment s'en débarrasser ?\tcours/Jardinage.md\tLes limaces dévorent mes salades du jardin.\t{ANSWERS['ravageurs']}\n",
        encoding="utf-8",
    )
    command = [sys.executable, str(REPO / "eval" / "context_recall.py"), "--questions", str(path), "--vault", str(course_vault)]
    run = subprocess.run([*command, "--default-visibility", "public", "--json"], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["hit@1"] == 1.0 and report["context_recall"] == 1.0 and report["fallback_recall"] == 1.0, report
