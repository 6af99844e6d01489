"""The `grasbot` command: search, ask, check, eval, and its errors."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from grasbot import build_snapshot
from grasbot._cli import build_parser, main
from grasbot._config import Settings
from grasbot._engine import NO_PUBLIC_NOTE, NO_PUBLIC_NOTE_ALL_KEPT
from grasbot._exceptions import ConfigError
from grasbot.answer.fallback import INTRO
from grasbot.retrieval.vault import NO_SUCH_FOLDER
from support.bots import BUNDLED_VAULT, REPO, make_bot, serve_process, write_note
from support.standin_ollama import unused_url


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    """The CLI reads the environment: start each test from none of GrasBot's variables, and an
    Ollama address where nothing listens."""
    for var in Settings.ENV:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OLLAMA_HOST", unused_url())


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------- search


def start_log(vault: Path, *args: str) -> str:
    """What `grasbot serve` writes to stderr from its start until it listens and is stopped."""
    proc = serve_process("--port", "0", "--vault", str(vault), "--no-cache", "--semantic", "off", *args)
    try:
        assert proc.stdout.readline().startswith("GrasBot écoute sur ")
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    return err


def test_search_says_how_it_read_an_abbreviation(capsys, note_writer):
    note_writer("sql.md", "title: Bases de données", "J'administre des serveurs PostgreSQL.")
    note_writer("jardin.md", "title: Jardin", "Tailler les rosiers en automne.")
    code, out, err = run(capsys, "search", "tu connais postgres ?", "--vault", str(note_writer.root))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[1] == "lu avec les mots du coffre : postgr → postgresql"
    assert lines[2].startswith("1. [sql] ")
    _, plain, _ = run(capsys, "search", "Tailler les rosiers", "--vault", str(note_writer.root))
    assert "lu avec" not in plain  # nothing to read otherwise


def test_search_bundled_vault_puts_the_pipeline_note_first(capsys):
    code, out, err = run(capsys, "search", "Comment fonctionne GrasBot ?")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("5 notes, réponse fondée sur les notes, coffre de ")
    assert lines[1].startswith("1. [grasbot-pipeline] ")
    assert "(grasbot/grasbot-pipeline.md)" in lines[1]
    # its reasons follow, one per line, before the second note
    reasons = []
    for line in lines[2:]:
        if line.startswith("2. "):
            break
        reasons.append(line.strip())
    assert reasons, out
    passages = [r for r in reasons if r.startswith("§ ")]
    reasons = [r for r in reasons if not r.startswith("§ ")]
    assert all(r.startswith("+") and " : " in r for r in reasons)
    assert passages and passages[0].startswith("§ la note entière, ") and passages[0].endswith(" caractères envoyés")
    signals = {r.split(" : ")[0].split(" ", 1)[1] for r in reasons}
    assert {"alias", "answers"} <= signals


def test_search_json_shape(capsys):
    code, out, _ = run(capsys, "search", "Comment fonctionne GrasBot ?", "--json", "--top-k", "3")
    assert code == 0
    data = json.loads(out)
    assert set(data) == {"results", "grounded", "vault_size", "took_ms"}
    assert data["grounded"] is True
    assert len(data["results"]) == 3
    first = data["results"][0]
    assert set(first) == {"slug", "title", "type", "score", "reasons", "url", "path", "passages"}
    assert first["slug"] == "grasbot-pipeline"
    assert first["passages"] == [{"heading": [], "anchor": None, "url": None, "chars": first["passages"][0]["chars"]}]
    assert first["passages"][0]["chars"] > 1_000  # a short note goes whole
    assert first["path"] == "grasbot/grasbot-pipeline.md"
    assert first["score"] == pytest.approx(sum(r["points"] for r in first["reasons"]), abs=0.01)
    assert all(set(r) == {"signal", "points", "detail"} for r in first["reasons"])
    scores = [r["score"] for r in data["results"]]
    assert scores == sorted(scores, reverse=True)


def test_search_audience_changes_the_vault_size(capsys, note_writer):
    note_writer("pub.md", "visibility: public\ntitle: Robot", "robot")
    note_writer("priv.md", "title: Robot secret", "robot")
    _, out_owner, _ = run(capsys, "search", "robot", "--vault", str(note_writer.root), "--json")
    _, out_visitor, _ = run(capsys, "search", "robot", "--vault", str(note_writer.root), "--json", "--audience", "visitor")
    assert json.loads(out_owner)["vault_size"] == 2
    visitor = json.loads(out_visitor)
    assert visitor["vault_size"] == 1
    assert [r["path"] for r in visitor["results"]] == ["pub.md"]


def installed_grasbot(cwd: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The `grasbot` command the README's install puts in .venv/bin, run in `cwd` without the
    caller's GrasBot settings and with no model host to reach."""
    env = {k: v for k, v in os.environ.items() if k not in Settings.ENV}
    env["OLLAMA_HOST"] = unused_url()
    return subprocess.run([str(REPO / ".venv" / "bin" / "grasbot"), *args], capture_output=True, text=True, env=env, timeout=timeout, cwd=cwd)


def test_real_subprocess(tmp_path):
    proc = installed_grasbot(tmp_path, "search", "Comment fonctionne GrasBot ?", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["results"][0]["slug"] == "grasbot-pipeline"
    proc = installed_grasbot(tmp_path, "search", timeout=60)
    assert proc.returncode == 2
    assert "question" in proc.stderr


def test_python_dash_m_grasbot_is_the_grasbot_command():
    """`python -m grasbot` was « No module named grasbot.__main__; 'grasbot' is a package and
    cannot be directly executed »."""
    proc = subprocess.run([sys.executable, "-m", "grasbot", "search", "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("utilisation : grasbot search ")


def test_search_says_its_header_in_french(tmp_path):
    """`grasbot search`'s first line, as the author reads it in a terminal: the notes found,
    whether they ground an answer, the vault's size, the time."""
    proc = installed_grasbot(tmp_path, "search", "Comment fonctionne GrasBot ?", "--semantic", "off", "--no-cache")
    assert proc.returncode == 0, proc.stderr
    notes = len(build_snapshot(Settings.load(env={}, vault_dir=BUNDLED_VAULT, semantic="off")).index("owner"))
    header = re.fullmatch(rf"5 notes, réponse fondée sur les notes, coffre de {notes} notes, (\d+\.\d) ms", proc.stdout.splitlines()[0])
    assert header is not None, proc.stdout.splitlines()[0]


def test_help_says_what_grasbot_is_in_french(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # argparse wraps at the terminal's width
    with pytest.raises(SystemExit) as stopped:
        main(["--help"])
    assert stopped.value.code == 0
    lines = capsys.readouterr().out.splitlines()
    assert "Répond aux visiteurs d'un site à partir d'un coffre Obsidian de notes en français." in lines
    assert "  -h, --help            affiche cette aide et s'arrête" in lines
    assert any(line.split() == ["search", *"classe les notes pour une question, avec les raisons de chaque score".split()] for line in lines), lines


COMMANDS = ("search", "ask", "check", "eval", "serve", "log")


@pytest.mark.parametrize("argv", [[], *([command] for command in COMMANDS)])
def test_help_says_argparses_own_words_in_french(capsys, monkeypatch, argv):
    """argparse's usage line, titles and -h were English beside GrasBot's French help."""
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit) as stopped:
        main([*argv, "--help"])
    assert stopped.value.code == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith(" ".join(["utilisation : grasbot", *argv, "[-h] "]))
    assert "options:" in lines and any(line.split() == ["-h,", "--help", *"affiche cette aide et s'arrête".split()] for line in lines)
    assert ("arguments:" in lines) == (argv in ([], ["search"], ["ask"]))  # the command, or the question
    for english in ("usage:", "positional arguments", "show this help message"):
        assert english not in out
    # the values' names: « --token-file FILE », « --model LLM_MODEL » (argparse's default, the dest in capitals)
    named = {word for value in re.findall(r"\[--[a-z-]+ ([^\]]+)\]", out) for word in re.findall(r"[A-ZÀ-Ý_]{2,}", value)}
    assert not named & {"DIR", "FILE", "NAME", "SECONDS", "DURATION", "CHARS", "PATH", "ORIGIN", "HOST", "TOKEN", "LLM_MODEL", "LLM_TEMPERATURE"}


@pytest.mark.parametrize(
    "argv, error",
    [
        ([], "grasbot: erreur : les arguments suivants sont obligatoires : commande"),
        (["eval"], "grasbot eval: erreur : les arguments suivants sont obligatoires : --questions"),
        (["search", "q", "--bogus"], "grasbot: erreur : arguments non reconnus : --bogus"),
        (["serve", "--port", "x"], "grasbot serve: erreur : argument --port : pas un nombre entier : 'x'"),
        (["log", "--days", "x"], "grasbot log: erreur : argument --days : pas un nombre : 'x'"),
        (
            ["frobnicate"],
            "grasbot: erreur : argument commande : choix invalide : 'frobnicate' (au choix : 'search', 'ask', 'check', 'eval', 'serve', 'log')",
        ),
        (["ask", "q", "--audience", "admin"], "grasbot ask: erreur : argument --audience : choix invalide : 'admin' (au choix : 'visitor', 'owner')"),
        (["serve", "--port"], "grasbot serve: erreur : argument --port : attend une valeur"),
        (["eval", "--questions"], "grasbot eval: erreur : argument --questions : attend au moins une valeur"),
        (["check", "--json=oui"], "grasbot check: erreur : argument --json : ne prend pas de valeur : 'oui'"),
        (
            ["search", "q", "--llm-"],
            "grasbot search: erreur : option ambiguë : --llm- peut désigner --llm-timeout, --llm-max-tokens, --llm-context, --llm-deadline",
        ),
        (["serve", "--host", ""], "grasbot serve: erreur : argument --host : ne doit pas être vide (omettez l'option pour la valeur par défaut)"),
    ],
)
def test_argparses_errors_are_said_in_french_with_the_usage_line_and_exit_2(capsys, argv, error):
    """« grasbot: error: unrecognized arguments: --bogus » and its kind were English."""
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"utilisation : {error.split(':')[0]} [-h] ")
    assert _choices_unquoted(err.splitlines()[-1]) == _choices_unquoted(error)


def _choices_unquoted(line: str) -> str:
    """The choices of « (au choix : …) » without their quotes: Python 3.11 writes them as repr
    (`'search', 'ask'`), later versions as str (`search, ask`); `requires-python` takes both."""
    return re.sub(r"\(au choix : [^)]*\)", lambda found: found[0].replace("'", ""), line)


def test_an_error_argparse_words_otherwise_is_shown_as_it_wrote_it(capsys, monkeypatch):
    """A later Python's new wording is not known: it is still said, in its English."""
    import argparse

    reworded = {"unrecognized arguments: %s": "no such arguments (%s)", "argument %(argument_name)s: %(message)s": "%(argument_name)s -> %(message)s"}
    monkeypatch.setattr(argparse, "_", lambda english: reworded.get(english, english))
    with pytest.raises(SystemExit) as stopped:
        main(["search", "q", "--bogus"])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == "grasbot: erreur : no such arguments (--bogus)"
    with pytest.raises(SystemExit):
        main(["serve", "--port", "x"])
    assert capsys.readouterr().err.splitlines()[-1] == "grasbot serve: erreur : --port -> invalid int value: 'x'"


# ---------------------------------------------------------------- ask


def test_ask_without_ollama_exits_0_with_the_fallback(capsys):
    code, out, err = run(capsys, "ask", "Comment fonctionne GrasBot ?")
    assert code == 0, err
    assert out.startswith(INTRO)
    assert "[grasbot-pipeline]" in out
    assert "fondée sur les notes : oui — modèle : aucun" in out
    assert "(sans le modèle de langue : Impossible de joindre Ollama" in out
    assert " ; la réponse ci-dessus est faite d'extraits des notes)" in out
    assert "Traceback" not in out + err


def test_ask_json_without_ollama(capsys):
    code, out, _ = run(capsys, "ask", "Comment fonctionne GrasBot ?", "--json")
    assert code == 0
    data = json.loads(out)
    assert set(data) == {"response", "sources", "grounded", "model", "vault_size", "busy", "reused", "llm_error"}
    assert data["busy"] is False and data["reused"] is False
    assert data["model"] is None
    assert data["grounded"] is True
    assert data["response"].startswith(INTRO)
    assert data["sources"][0]["slug"] == "grasbot-pipeline"


def test_ask_with_a_flag_pointing_nowhere(capsys, monkeypatch):
    monkeypatch.delenv("OLLAMA_HOST")
    code, out, _ = run(capsys, "ask", "Comment fonctionne GrasBot ?", "--ollama-host", unused_url(), "--json")
    assert code == 0
    assert json.loads(out)["model"] is None


# ---------------------------------------------------------------- check


def clean_vault(note_writer) -> Path:
    note_writer(
        "robot.md",
        'title: Robot suiveur\ntags: [arduino]\nanswers: ["Comment marche le robot suiveur ?"]\nvisibility: public',
        "Un robot qui suit une ligne. Voir [[jardin]].",
    )
    note_writer("jardin.md", 'title: Jardin potager\nanswers: ["Que pousse-t-il dans le potager ?"]', "Des tomates et des courgettes.")
    return note_writer.root


def test_check_passes_on_a_clean_vault(capsys, note_writer):
    code, out, err = run(capsys, "check", "--vault", str(clean_vault(note_writer)))
    assert code == 0, out + err
    assert out.splitlines()[0] == "2 notes chargées, 1 publique"
    assert out.rstrip().endswith("OK")


def test_check_fails_and_lists_every_problem(capsys, note_writer):
    root = clean_vault(note_writer)
    note_writer("casse.md", "title: [pas fermé", "x")
    note_writer("double.md", "slug: robot", "un doublon")
    note_writer("orphelin.md", "title: Orphelin", "Voir [[nulle-part]].")
    note_writer("rate.md", 'title: Zzz\nanswers: ["Comment marche le robot suiveur ?"]', "")
    code, out, _ = run(capsys, "check", "--vault", str(root))
    assert code == 1
    assert "casse.md : propriétés YAML invalides" in out
    assert "slug « robot » en double" in out
    assert "orphelin.md : le lien [[nulle-part]] ne mène à aucune note" in out
    assert "rate.md : « Comment marche le robot suiveur ? » → rang 2, en premier : robot" in out
    assert out.rstrip().endswith("Problèmes trouvés.")


def test_check_passes_when_notes_link_into_an_excluded_folder(capsys, note_writer):
    """`--exclude Journal` and a kept note linking into it: `check` failed forever, though the
    author left the folder out on purpose."""
    root = clean_vault(note_writer)
    note_writer("Journal/Journal du 3 mai.md", None, "Mon journal.")
    note_writer("jardin.md", 'title: Jardin potager\nanswers: ["Que pousse-t-il dans le potager ?"]', "Des tomates, voir [[Journal du 3 mai]].")
    code, out, err = run(capsys, "check", "--vault", str(root), "--exclude", "Journal")
    assert code == 0, out + err
    assert "ne mène à aucune note" not in out


def test_check_says_a_note_that_failed_to_load_once_not_as_a_dangling_link(capsys, note_writer):
    """A link to a note whose YAML is broken: `check` said the note failed, then « the link
    leads to no note », which sent the author looking for a missing note."""
    root = clean_vault(note_writer)
    note_writer("casse.md", "title: [pas fermé", "x")
    note_writer("lien.md", "title: Lien", "Voir [[casse]].")
    code, out, _ = run(capsys, "check", "--vault", str(root))
    assert code == 1
    assert "casse.md : propriétés YAML invalides" in out
    assert "[[casse]]" not in out and "ne mène à aucune note" not in out


def test_check_warns_when_no_note_is_public(capsys, note_writer):
    note_writer("jardin.md", "title: Jardin potager", "Des tomates et des courgettes.")  # private by default
    code, out, _ = run(capsys, "check", "--vault", str(note_writer.root))
    assert code == 1
    assert out.splitlines()[:4] == ["1 note chargée, 0 publique", "", "Avertissements (1) :", f"  . : {NO_PUBLIC_NOTE}"]


def test_check_under_default_public_says_the_frontmatters_keep_every_note(capsys, note_writer):
    """Launched with --default-visibility public already, the author was told to launch with it."""
    note_writer("jardin.md", "draft: true", "Des tomates et des courgettes.")
    code, out, _ = run(capsys, "check", "--vault", str(note_writer.root), "--default-visibility", "public")
    assert code == 1
    assert f"  . : {NO_PUBLIC_NOTE_ALL_KEPT}" in out.splitlines()
    assert "--default-visibility" not in NO_PUBLIC_NOTE_ALL_KEPT and NO_PUBLIC_NOTE not in out


def test_check_says_a_folder_without_notes_is_not_a_vault(capsys, tmp_path):
    """A --vault that names the wrong folder (a typo's neighbour, the vault's parent's sibling)
    was told to mark its notes `visibility: public`: it has none."""
    (tmp_path / "lisez-moi.txt").write_text("pas une note", encoding="utf-8")
    code, out, _ = run(capsys, "check", "--vault", str(tmp_path), "--semantic", "off")
    assert code == 1
    assert out.splitlines()[:4] == [
        "0 note chargée, 0 publique",
        "",
        "Avertissements (1) :",
        f"  . : aucune note trouvée dans {tmp_path} : il ne contient aucune note Markdown (.md) hors des dossiers cachés ou exclus ; "
        "--vault est-il bien le dossier de votre coffre ?",
    ]


def test_check_and_serve_name_the_obsidian_vault_inside_the_folder_given(capsys, note_writer):
    """--vault given the folder that holds the vault (~/Documents, not ~/Documents/Coffre): every
    note was read as `Coffre/…`, the plugin's paths named none (its alias suggestions silent,
    « no note at path »), and neither check nor the start said why."""
    note_writer("Coffre/robot.md", "title: Robot\nvisibility: public", "Un robot qui suit une ligne.")
    (note_writer.root / "Coffre" / ".obsidian").mkdir()
    said = (
        f"Coffre/ est un coffre Obsidian (il contient .obsidian/), mais pas {note_writer.root} : ses notes sont lues sous Coffre/…, "
        f"des chemins que le plugin Obsidian et les URL en {{path}} ne nomment pas ; lancez avec --vault {note_writer.root / 'Coffre'} si c'est votre coffre"
    )
    code, out, _ = run(capsys, "check", "--vault", str(note_writer.root), "--semantic", "off")
    assert code == 1
    assert out.splitlines()[:4] == ["1 note chargée, 1 publique", "", "Avertissements (1) :", f"  . : {said}"]
    assert said in start_log(note_writer.root)
    code, out, _ = run(capsys, "check", "--vault", str(note_writer.root / "Coffre"), "--semantic", "off")
    assert code == 0, out


def test_check_shows_a_file_name_that_holds_a_newline_on_one_line(capsys, note_writer):
    root = clean_vault(note_writer)
    note_writer("a\n  b.md: fake problem\nc.md", "title: [pas fermé", "x")
    code, out, _ = run(capsys, "check", "--vault", str(root))
    assert code == 1
    assert "  a\\n  b.md: fake problem\\nc.md : propriétés YAML invalides" in out
    assert not any(line.startswith("  b.md") for line in out.splitlines())


def test_serve_embeds_the_vault_once_it_listens(note_writer):
    """The embedding worker starts after `serve` listens (its share of the interpreter delayed
    listening by up to 0.8 s at 10,000 notes); it must still start: meaning gets ready."""
    note_writer("a.md", "visibility: public", "Le potager arrosé par un capteur d'humidité.")
    note_writer("b.md", "visibility: public", "Une API de réservation écrite en Python.")
    proc = serve_process("--port", "0", "--vault", str(note_writer.root), "--no-cache")
    try:
        line = proc.stdout.readline()
        assert line.startswith("GrasBot écoute sur "), line
        url = re.search(r"http://\S+", line).group(0) + "/health"
        for _ in range(600):  # at most a minute: the bundled encoder loads, then two texts
            semantic = json.load(urllib.request.urlopen(url, timeout=10))["semantic"]
            if semantic["ready"]:
                break
            time.sleep(0.1)
        assert semantic["backend"] == "bundled" and semantic["ready"], semantic
        assert semantic["embedded"] == semantic["total"] > 0
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def test_serve_says_at_start_what_it_could_not_load(note_writer):
    note_writer("casse.md", "title: [pas fermé\nvisibility: public", "x")
    err = start_log(note_writer.root)
    assert "1 note(s) n'ont pas pu être chargées et ne sont pas servies ; `grasbot check` dit lesquelles et pourquoi" in err
    assert NO_PUBLIC_NOTE in err


def test_serve_warns_at_start_of_a_folder_of_exclude_the_vault_does_not_have(note_writer):
    """`--exclude Prives` for `Privé/`: the folder meant to be hidden was read, and with the
    default public its notes were served, while serve's log said « 1 warning(s) about the
    notes » at INFO, one among many."""
    note_writer("Privé/budget.md", None, "Mon salaire.")
    err = start_log(note_writer.root, "--exclude", "Prives,prive", "--default-visibility", "public", "--site-pages", "off")
    said = [line for line in err.splitlines() if "--exclude" in line]
    assert len(said) == 1 and said[0].endswith(" WARNING grasbot.server: Prives : " + NO_SUCH_FOLDER), err


def test_serve_says_at_start_that_a_vault_of_ones_own_sends_visitors_to_the_demo_sites_pages(note_writer):
    """The default --site-pages and --url-map are the bundled vault's site's: an author who
    served their own vault with them sent visitors to /portfolio and /contact pages their site
    may not have, and no line at start said so."""
    note_writer("robot.md", "visibility: public\ntype: Projet", "Mon robot cuisinier.")
    note_writer("recette.md", "visibility: public\ntype: recette", "Une tarte.")
    note_writer("brouillon.md", "visibility: private\ntype: competence", "Un brouillon.")
    err = start_log(note_writer.root)
    assert (
        "un visiteur auquel les notes ne savent pas répondre est envoyé vers /portfolio, /competences, /contact, les pages du site de démonstration"
        " (le --site-pages par défaut, GRASBOT_SITE_PAGES) : nommez celles de votre site, ou off"
    ) in err
    assert "les notes publiques de type Projet mènent aux pages du site de démonstration (le --url-map par défaut" in err  # not the private note's type
    err = start_log(note_writer.root, "--site-pages", "/contact", "--url-map", "*=/{path}")
    assert "site de démonstration" not in err


def test_the_demo_sites_types_are_those_whose_public_notes_have_a_page(note_writer, caplog):
    """The start names the public notes' types the default --url-map sends to the demo site's
    pages; it asks each type's template first (`Settings.url_template`), no longer every note's
    page (20 ms of a start at 10,000 notes): the same types as every note's `url_for` gives."""
    from grasbot.server.app import _say_the_demo_sites_pages

    for i, (kind, visibility) in enumerate(
        [("Projet", "public"), ("PROJET", "public"), ("Compétence", "public"), ("recette", "public"), ("skill", "private"), ("", "public")]
    ):
        note_writer(f"n{i}.md", f"visibility: {visibility}" + (f"\ntype: {kind}" if kind else ""), "Un texte.")
    bot = make_bot(note_writer.root)
    notes = bot.snapshot.index("visitor").notes.values()
    every_note = sorted({n.type for n in notes if n.type and bot.settings.url_for(n.type, n.slug, n.path)})
    assert every_note == ["Compétence", "PROJET", "Projet"]
    with caplog.at_level("WARNING", logger="grasbot.server"):
        _say_the_demo_sites_pages(bot)
    assert f"les notes publiques de type {', '.join(every_note)} mènent aux pages du site de démonstration" in caplog.text


def test_check_json(capsys, note_writer):
    root = clean_vault(note_writer)
    note_writer("casse.md", "title: [pas fermé", "x")
    code, out, _ = run(capsys, "check", "--vault", str(root), "--json")
    assert code == 1
    data = json.loads(out)
    assert data["notes"] == 2 and data["public"] == 1
    assert [e["path"] for e in data["errors"]] == ["casse.md"]
    assert data["warnings"] == [] and data["misses"] == []


def test_check_lists_the_lines_search_reads_past_without_failing(capsys, note_writer):
    root = clean_vault(note_writer)
    footer = "Cette fiche est publiée sous licence libre, reproduction autorisée."
    for name in ("a", "b", "c"):
        note_writer(f"{name}.md", f"title: Fiche {name}\nvisibility: public", f"Le sujet propre à la fiche {name}.\n{footer}\n")
    note_writer("privee.md", "title: Privée\nvisibility: private", f"Brouillon.\n{footer}\n")
    code, out, err = run(capsys, "check", "--vault", str(root))
    assert code == 0, out + err
    assert f"Lignes que la recherche ne lit pas, présentes mot pour mot dans 5 % des notes publiques ou plus (1) :\n  3 notes : « {footer} »" in out
    code, out, _ = run(capsys, "check", "--vault", str(root), "--json")
    assert json.loads(out)["boilerplate"] == [{"line": footer, "notes": 3}]  # the private note is not counted


def _run_sh(tmp_path: Path, *argv: str) -> tuple[list[list[str]], str]:
    """scripts/run.sh in a copy of the checkout whose setup is a no-op and whose `grasbot` only
    records its arguments (check fails, serve returns): what each was given, and what it printed."""
    root = tmp_path / "checkout"
    (root / "scripts").mkdir(parents=True)
    (root / "scripts" / "run.sh").write_text((REPO / "scripts" / "run.sh").read_text(encoding="utf-8"), encoding="utf-8")
    (root / "scripts" / "setup.sh").write_text("true\n", encoding="utf-8")
    grasbot = root / ".venv" / "bin" / "grasbot"
    grasbot.parent.mkdir(parents=True)
    grasbot.write_text(f"#!/bin/sh\nprintf '%s\\0' \"$@\" >> {root / 'calls'}\nprintf '\\n' >> {root / 'calls'}\n[ \"$1\" != check ]\n", encoding="utf-8")
    grasbot.chmod(0o755)
    done = subprocess.run(["bash", str(root / "scripts" / "run.sh"), *argv], capture_output=True, text=True, timeout=60, check=True)
    calls = [line.split("\0") for line in (root / "calls").read_text(encoding="utf-8").split("\0\n")[:-1]]
    return calls, done.stdout


def test_run_sh_checks_the_vault_as_serve_will_read_it(tmp_path):
    """`bash scripts/run.sh --vault ~/Mes\\ Notes --semantic off` ran `grasbot check` with meaning
    on: minutes embedding a large vault before the daemon started, its misses ranked otherwise
    than serve's. And the command it told to run split the vault's path at its space."""
    vault = str(tmp_path / "Mes Notes")
    calls, out = _run_sh(tmp_path, "--vault", vault, "--semantic", "off", "--port", "9000", "--cache-dir=/tmp/c", "--no-cache")
    assert calls == [
        ["check", "--vault", vault, "--semantic", "off", "--cache-dir=/tmp/c", "--no-cache"],
        ["serve", "--vault", vault, "--semantic", "off", "--port", "9000", "--cache-dir=/tmp/c", "--no-cache"],
    ]
    (said,) = [line for line in out.splitlines() if line.startswith("grasbot check a trouvé des problèmes : lancez ")]
    assert shlex.split(said.removeprefix("grasbot check a trouvé des problèmes : lancez "))[1:] == calls[0]


# ---------------------------------------------------------------- eval


def eval_vault(note_writer) -> Path:
    note_writer("a.md", "title: Robot\naliases: [robot suiveur]", "Un robot. Voir [[c]].")
    note_writer("b.md", "title: Arduino", "Des cartes électroniques.")
    note_writer("c.md", "title: Jardin", "Des tomates.")
    return note_writer.root


def test_eval_exact_metrics(capsys, note_writer, tmp_path):
    root = eval_vault(note_writer)
    tsv = tmp_path / "q.tsv"
    tsv.write_text(
        "# question<TAB>paths\n"
        "robot suiveur\ta.md\n"  # rank 1
        "tomates du jardin\tc.md;b.md\n"  # rank 1
        "\n"
        "robot\tc.md\n"  # rank 2: c comes in through a's link
        "bouillabaisse\ta.md\n",  # nothing found
        encoding="utf-8",
    )
    lexical = ("--vault", str(root), "--default-visibility", "public", "--semantic", "off")
    code, out, err = run(capsys, "eval", "--questions", str(tsv), *lexical, "--json")
    assert code == 0, err
    assert err == ""  # every expected note is in the vault
    data = json.loads(out)
    assert data["questions"] == 4 and data["semantic"] is False
    assert data["hit@1"] == 0.5
    assert data["hit@5"] == 0.75
    assert data["mrr@10"] == pytest.approx((1 + 1 + 0.5 + 0) / 4)
    misses = {m["question"]: m for m in data["misses"]}
    assert set(misses) == {"robot", "bouillabaisse"}
    assert misses["robot"]["rank"] == 2
    assert misses["robot"]["got"][:2] == ["a.md", "c.md"]
    assert misses["bouillabaisse"]["rank"] is None
    assert misses["bouillabaisse"]["got"] == []
    # the plain BM25 beside it: no graph walk, so « robot » never reaches c.md
    assert data["engines"]["plain BM25"] == {"hit@1": 0.5, "hit@5": 0.5, "mrr@10": 0.5}
    assert set(data["engines"]) == {"GrasBot", "plain BM25"}  # no lexical line without meaning
    assert data["paired"] == {"plain BM25": {"won": 0, "lost": 0, "p": 1.0}}  # first on the same two questions

    code, out, _ = run(capsys, "eval", "--questions", str(tsv), *lexical)
    assert code == 0
    assert out.splitlines()[:2] == [
        "    GrasBot : 4 questions  hit@1 0.500  hit@5 0.750  MRR@10 0.625  fondées sur les notes 0.750",  # all but bouillabaisse
        "BM25 simple : 4 questions  hit@1 0.500  hit@5 0.500  MRR@10 0.500",
    ]
    assert "  manquée (rang 2) : robot  attendue : c.md ; en tête : a.md, c.md" in out.splitlines()
    assert "  manquée (absente des 10 premières) : bouillabaisse  attendue : a.md ; en tête : aucune note" in out.splitlines()
    assert "GrasBot face à BM25 simple : premier sur 0 questions où il ne l'est pas, pas sur 0 où il l'est (test des signes, p 1.000)" in out.splitlines()


def test_eval_says_which_expected_notes_are_not_in_the_vault(capsys, note_writer, tmp_path):
    """A typo in a question file, or a note renamed since it was written, is still counted (as
    a miss) but said, with its file and line, rather than lowering the figures silently."""
    root = eval_vault(note_writer)
    tsv = tmp_path / "q.tsv"
    tsv.write_text("robot suiveur\ta.md\ntomates du jardin\tc.md;tomate.md\nrobot\trobots.md\n", encoding="utf-8")
    code, out, err = run(capsys, "eval", "--questions", str(tsv), "--vault", str(root), "--default-visibility", "public", "--semantic", "off", "--json")
    assert code == 0
    assert err.splitlines() == [
        f"grasbot eval: {tsv}:2: tomate.md n'est pas une note que le visiteur lit : une question à laquelle elle seule répond compte comme manquée",
        f"grasbot eval: {tsv}:3: robots.md n'est pas une note que le visiteur lit : une question à laquelle elle seule répond compte comme manquée",
    ]
    data = json.loads(out)
    assert data["questions"] == 3 and data["hit@1"] == round(2 / 3, 4)  # c.md still answers the second


def test_eval_of_another_vaults_questions_is_refused_naming_the_vault(capsys, note_writer, tmp_path):
    """Not one expected note in the vault (the README's example run on the bundled vault): a
    line of warning for each question, then hit@1 0.000 as if measured. Said once, exit 2."""
    root = eval_vault(note_writer)
    tsv = tmp_path / "q.tsv"
    tsv.write_text("le robot suiveur\tcours/Robot.md\ndes tomates\tcours/Jardin.md\n", encoding="utf-8")
    code, out, err = run(capsys, "eval", "--questions", str(tsv), "--vault", str(root), "--semantic", "off")
    assert code == 2 and out == ""
    assert err.splitlines() == [
        f"grasbot: eval : aucune des notes qu'attendent les questions de {tsv} n'est une note que le visiteur lit dans {root} : "
        "--vault est-il le coffre de ces questions (ou ses notes sans champ visibility, privées : --default-visibility public) ?"
    ]
    tsv.write_text("le robot suiveur\ta.md\ndes tomates\tcours/Jardin.md\n", encoding="utf-8")  # one note is there: measured, the other said
    code, out, err = run(capsys, "eval", "--questions", str(tsv), "--vault", str(root), "--semantic", "off", "--default-visibility", "public")
    assert code == 0 and "GrasBot : 2 questions" in out and err.count("n'est pas une note que le visiteur lit") == 1


def test_eval_reads_a_note_named_by_its_file_name_or_slug_as_its_path_and_says_so(capsys, note_writer, tmp_path):
    """A question file written by hand, or by a tool that knows the site's pages, names notes
    by name or slug: read as paths, each said; a name two notes share is said, and like a
    private note's slug, read as no note."""
    note_writer("Cours/Robot suiveur.md", "title: Robot\naliases: [robot suiveur]", "Un robot.")
    note_writer("Cours/Jardin.md", "title: Jardin", "Des tomates du jardin.")
    note_writer("Archives/Jardin.md", "title: Vieux jardin", "Des courges.")
    note_writer("Arduino.md", "title: Arduino\nvisibility: private", "Des cartes électroniques.")
    tsv = tmp_path / "q.tsv"
    tsv.write_text(
        "robot suiveur\trobot-suiveur\n"  # the slug
        "un robot\tRobot suiveur.md\n"  # the file's name
        "encore un robot\tCours\\Robot suiveur\n"  # a Windows path without .md
        "tomates du jardin\tJardin\n"  # two notes are named so
        "des cartes\tarduino\n",  # a private note's slug
        encoding="utf-8",
    )
    args = ("--vault", str(note_writer.root), "--default-visibility", "public", "--semantic", "off", "--json")
    code, out, err = run(capsys, "eval", "--questions", str(tsv), *args)
    assert code == 0
    assert err.splitlines() == [
        f"grasbot eval: {tsv}:1: robot-suiveur lu comme Cours/Robot suiveur.md",
        f"grasbot eval: {tsv}:2: Robot suiveur.md lu comme Cours/Robot suiveur.md",
        f"grasbot eval: {tsv}:3: Cours\\Robot suiveur lu comme Cours/Robot suiveur.md",
        f"grasbot eval: {tsv}:4: Jardin nomme 2 notes (Archives/Jardin.md, Cours/Jardin.md) : écrivez son chemin",
        f"grasbot eval: {tsv}:4: Jardin n'est pas une note que le visiteur lit : une question à laquelle elle seule répond compte comme manquée",
        f"grasbot eval: {tsv}:5: arduino n'est pas une note que le visiteur lit : une question à laquelle elle seule répond compte comme manquée",
    ]
    data = json.loads(out)
    assert data["hit@1"] == 0.6  # the three robot questions find their note, read by its path
    assert {m["question"]: m["expected"] for m in data["misses"]} == {"tomates du jardin": ["Jardin"], "des cartes": ["arduino"]}


def test_eval_reads_several_files_as_one_set_and_says_whether_a_difference_is_more_than_chance(capsys, note_writer, tmp_path):
    """A vault's test parts asked together, as one set; the questions GrasBot has first and the
    plain BM25 not, each way, with the sign test's p (none here: both miss « robot », whose
    note only GrasBot's graph walk brings into the first five)."""
    root = eval_vault(note_writer)
    first, second = tmp_path / "a.tsv", tmp_path / "b.tsv"
    first.write_text("robot suiveur\ta.md\n", encoding="utf-8")
    second.write_text("des tomates\tc.md\nrobot\tc.md\n", encoding="utf-8")
    lexical = ("--vault", str(root), "--default-visibility", "public", "--semantic", "off")
    code, out, err = run(capsys, "eval", "--questions", str(first), str(second), *lexical, "--json", "--top-k", "5")
    assert code == 0, err
    data = json.loads(out)
    assert data["questions"] == 3
    assert data["engines"]["GrasBot"]["hit@5"] == 1.0 and data["engines"]["plain BM25"]["hit@5"] == pytest.approx(2 / 3, abs=1e-4)
    assert data["paired"]["plain BM25"] == {"won": 0, "lost": 0, "p": 1.0}  # at hit@1 both miss « robot »


def test_the_sign_test_and_the_paired_counts():
    from grasbot._evaluate import Case, Outcome, Report, paired, sign_test

    assert sign_test(12, 3) == pytest.approx(2 * (1 + 15 + 105 + 455) / 2**15)  # 0.035
    assert sign_test(3, 12) == sign_test(12, 3)
    assert sign_test(5, 5) == 1.0 and sign_test(0, 0) == 1.0
    assert sign_test(6, 0) == pytest.approx(2 / 64)
    cases = [Case(f"q{i}", frozenset({"a.md"}), i) for i in range(5)]
    ours = Report(tuple(Outcome(c, r) for c, r in zip(cases, [("a.md",), ("a.md",), ("b.md", "a.md"), (), ("a.md",)], strict=True)))
    theirs = Report(tuple(Outcome(c, r) for c, r in zip(cases, [("b.md", "a.md"), (), ("a.md",), (), ("a.md",)], strict=True)))
    assert paired(ours, theirs) == {"won": 2, "lost": 1, "p": 1.0}
    assert paired(ours, theirs, k=5) == {"won": 1, "lost": 0, "p": 1.0}  # q0 and q2 both within 5, q1 only ours
    with pytest.raises(ValueError, match="same questions"):
        paired(ours, Report(theirs.outcomes[:4]))


def test_eval_asks_each_question_again_after_another_subject(capsys, note_writer, tmp_path):
    """--new-subject: each question without history asked after the closest earlier one about
    other notes. « des trucs électroniques ? » alone finds its note; after a question about the
    robot, the robot's note (through the conversation, at the new-subject discount) outranks it."""
    root = eval_vault(note_writer)
    tsv = tmp_path / "q.tsv"
    tsv.write_text(
        "le robot suiveur, le robot\ta.md\n"
        "des trucs électroniques ?\tb.md\n"
        "tomates du jardin\tc.md\n"
        "et les tomates ?\tc.md\trobot suiveur\n",  # a follow-up: asked as it is, not again
        encoding="utf-8",
    )
    lexical = ("--vault", str(root), "--default-visibility", "public", "--semantic", "off")
    code, out, err = run(capsys, "eval", "--questions", str(tsv), *lexical, "--new-subject", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["questions"] == 4
    assert data["new_subject"] == {
        "questions": 3,
        "hit@1": pytest.approx(2 / 3, abs=1e-4),
        "hit@5": 1.0,
        "mrr@10": pytest.approx((1 + 0.5 + 1) / 3, abs=1e-4),
        "alone": {"hit@1": 1.0, "hit@5": 1.0, "mrr@10": 1.0},
    }
    code, out, _ = run(capsys, "eval", "--questions", str(tsv), *lexical, "--new-subject")
    assert code == 0
    assert "après un autre sujet : 3 questions  hit@1 0.667  hit@5 1.000  MRR@10 0.833 (posées seules : 1.000 / 1.000 / 1.000)" in out
    code, out, _ = run(capsys, "eval", "--questions", str(tsv), *lexical, "--json")
    assert "new_subject" not in json.loads(out)  # asked for, or not measured

    # off-topic questions, each after one of those: the conversation's notes must not ground them
    # (at the follow-ups' discount, the robot's and the garden's did: 2 of 3)
    off = tmp_path / "off.txt"
    off.write_text("la météo de demain\nune recette de bouillabaisse ?\nqui a gagné le match ?\n", encoding="utf-8")
    code, out, _ = run(capsys, "eval", "--questions", str(tsv), *lexical, "--new-subject", "--off-topic", str(off), "--json")
    data = json.loads(out)
    assert data["engines"]["GrasBot"]["off_topic_grounded"] == 0.0 and data["new_subject"]["off_topic_grounded"] == 0.0
    code, out, _ = run(capsys, "eval", "--questions", str(tsv), *lexical, "--new-subject", "--off-topic", str(off))
    assert "(posées seules : 1.000 / 1.000 / 1.000) ; hors sujet fondées après l'une d'elles 0.000" in out


def test_another_subject_is_the_closest_earlier_question_about_other_notes():
    from grasbot._evaluate import Case, after_another_subject

    a1, a2, b, c = (
        Case(q, frozenset(p), i) for i, (q, p) in enumerate([("a ?", {"a.md"}), ("a encore ?", {"a.md", "x.md"}), ("b ?", {"b.md"}), ("c ?", {"c.md"})])
    )
    follow_up = Case("et a ?", frozenset({"a.md"}), 9, history=("c ?",))
    pairs = after_another_subject([a1, a2, follow_up, b, c])
    assert [(case.question, changed.question, changed.history, changed.expected) for case, changed in pairs] == [
        ("a ?", "a ?", ("c ?",), a1.expected),  # none before it: from the last one back
        ("a encore ?", "a encore ?", ("c ?",), a2.expected),  # « a ? » shares a.md; « b ? » is further back from the end than « c ? »
        ("b ?", "b ?", ("a encore ?",), b.expected),  # the follow-up is not asked again, nor taken as a subject
        ("c ?", "c ?", ("b ?",), c.expected),
    ]
    assert all(case is original for (case, _), original in zip(pairs, [a1, a2, b, c], strict=True))
    assert after_another_subject([a1, a2]) == []  # every other question is about the same note


def test_eval_counts_the_off_topic_questions_it_would_answer(capsys, note_writer, tmp_path):
    """An off-topic question grounded is one GrasBot answers from notes that do not know."""
    root = eval_vault(note_writer)
    tsv = tmp_path / "q.tsv"
    tsv.write_text("robot suiveur\ta.md\nbouillabaisse\ta.md\n", encoding="utf-8")
    off = tmp_path / "off.txt"
    off.write_text("# nothing in the vault says\nune recette de bouillabaisse ?\n\nun robot suiveur de cuisine ?\nla météo de demain\n", encoding="utf-8")
    lexical = ("--vault", str(root), "--default-visibility", "public", "--semantic", "off")
    code, out, err = run(capsys, "eval", "--questions", str(tsv), "--off-topic", str(off), *lexical, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["off_topic"] == 3
    # the robot's alias grounds « un robot suiveur de cuisine ? »: one of three
    assert data["engines"]["GrasBot"]["off_topic_grounded"] == pytest.approx(1 / 3, abs=1e-4)
    assert data["engines"]["GrasBot"]["grounded"] == 0.5
    assert "grounded" not in data["engines"]["plain BM25"]  # it has no threshold to say it knows
    code, out, _ = run(capsys, "eval", "--questions", str(tsv), "--off-topic", str(off), *lexical, "--min-score", "1000")
    assert code == 0
    assert out.splitlines()[0].endswith("fondées sur les notes 0.000, hors sujet fondées 0.000 sur 3")

    off.write_text("une question\tun.md\n", encoding="utf-8")
    code, _, err = run(capsys, "eval", "--questions", str(tsv), "--off-topic", str(off), *lexical)
    assert code == 2 and "une question par ligne, sans note attendue" in err
    off.write_text("# rien\n", encoding="utf-8")
    code, _, err = run(capsys, "eval", "--questions", str(tsv), "--off-topic", str(off), *lexical)
    assert code == 2 and "off.txt : aucune question dans le fichier" in err


def test_eval_bad_file(capsys, note_writer, tmp_path):
    tsv = tmp_path / "bad.tsv"
    tsv.write_text("une question sans tabulation\n", encoding="utf-8")
    code, _, err = run(capsys, "eval", "--questions", str(tsv), "--vault", str(eval_vault(note_writer)))
    assert code == 2
    assert "bad.tsv:1 : 'question<TAB>chemin;chemin[<TAB>question précédente || …[<TAB>phrase]]' attendu" in err
    code, _, err = run(capsys, "eval", "--questions", str(tmp_path / "absent.tsv"))
    assert code == 2
    assert "impossible de lire le fichier de questions" in err
    tsv.write_bytes(b"\x89PNG\r\n")  # was « 'utf-8' codec can't decode byte 0x89 in position 0: invalid start byte »
    code, _, err = run(capsys, "eval", "--questions", str(tsv))
    assert code == 2 and err.strip() == f"grasbot: impossible de lire le fichier de questions {tsv} : ce n'est pas du texte UTF-8 (octet 0)"
    tsv.write_text("robot suiveur\ta.md\t\tun robot\tune colonne de trop\n", encoding="utf-8")  # glued into the phrase, it was
    code, _, err = run(capsys, "eval", "--questions", str(tsv), "--vault", str(eval_vault(note_writer)))
    assert code == 2 and "bad.tsv:1 : 'question<TAB>chemin;chemin[<TAB>question précédente || …[<TAB>phrase]]' attendu" in err


def test_eval_reads_a_file_saved_with_a_byte_order_mark(capsys, note_writer, tmp_path):
    tsv = tmp_path / "q.tsv"
    tsv.write_text("# des questions\nrobot suiveur\ta.md\n", encoding="utf-8-sig")
    lexical = ("--vault", str(eval_vault(note_writer)), "--default-visibility", "public", "--semantic", "off", "--json")
    code, out, err = run(capsys, "eval", "--questions", str(tsv), *lexical)
    assert code == 0, err
    assert json.loads(out)["questions"] == 1


# ---------------------------------------------------------------- errors


def test_missing_vault_folder_exits_2(capsys, tmp_path):
    code, out, err = run(capsys, "search", "robot", "--vault", str(tmp_path / "absent"))
    assert code == 2
    assert out == ""
    assert err.startswith("grasbot: dossier du coffre introuvable :")
    assert "Traceback" not in err


def test_a_vault_folder_that_is_a_file_or_a_loop_of_links_exits_2_saying_which(capsys, tmp_path):
    (tmp_path / "note.md").write_text("une note", encoding="utf-8")
    (tmp_path / "boucle").symlink_to(tmp_path / "boucle")
    code, _, err = run(capsys, "search", "robot", "--vault", str(tmp_path / "note.md"))
    assert code == 2 and err == f"grasbot: le dossier du coffre {tmp_path / 'note.md'} est un fichier, pas un dossier (réglez --vault ou VAULT_DIR)\n"
    code, _, err = run(capsys, "search", "robot", "--vault", str(tmp_path / "boucle"))  # was a traceback
    assert code == 2 and err == f"grasbot: le dossier du coffre {tmp_path / 'boucle'} est une boucle de liens symboliques (réglez --vault ou VAULT_DIR)\n"


def test_serve_with_a_missing_vault_folder_says_why_and_exits_2(tmp_path):
    """`serve` loads the vault before it starts its event loop (so a large vault can load on
    every core): a vault it cannot load stops it there, with the reason."""
    proc = installed_grasbot(tmp_path, "serve", "--vault", str(tmp_path / "absent"), "--port", "0", "--token-file", str(tmp_path / "token"), timeout=60)
    assert proc.returncode == 2
    assert "grasbot: démarrage impossible : dossier du coffre introuvable :" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


@pytest.mark.parametrize("command", ["search", "ask"])
def test_a_question_that_is_not_utf8_is_refused_by_name(capsys, command):
    """A byte that is not UTF-8 on the command line reaches Python as a lone surrogate: `ask` said
    Ollama "sent a reply GrasBot cannot read", when the question was what could not be sent."""
    code, out, err = run(capsys, command, "jardin caf\udce9")  # "café" typed in Latin-1
    assert code == 2 and out == ""
    assert err.startswith("grasbot: `q` : doit être du texte Unicode")


def test_vault_dir_from_the_environment(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("VAULT_DIR", str(tmp_path / "absent"))
    code, _, err = run(capsys, "check")
    assert code == 2
    assert "dossier du coffre introuvable" in err


# `Cuisine/Crème brûlée.md` where each generator serves it; {slug} (creme-brulee) found it on none
@pytest.mark.parametrize(
    "template, url",
    [
        ("/recettes/{slug}", "/recettes/creme-brulee"),  # GrasBot's own, unchanged
        # MkDocs, use_directory_urls (its default): about/license.md is /about/license/
        ("/{mkdocs}", "/Cuisine/Cr%C3%A8me%20br%C3%BBl%C3%A9e/"),
        ("/{path}.html", "/Cuisine/Cr%C3%A8me%20br%C3%BBl%C3%A9e.html"),
        ("/recettes/{name}.html", "/recettes/Cr%C3%A8me%20br%C3%BBl%C3%A9e.html"),
        # Quartz v4, quartz/util/path.ts slugifyFilePath: a space is -, case, accents and folder kept
        ("/{quartz}", "/Cuisine/Cr%C3%A8me-br%C3%BBl%C3%A9e"),
        # Obsidian Publish: publish.obsidian.md/help-da/Avancerede+emner/Brug+af+obsidian+URI
        ("/{publish}", "/Cuisine/Cr%C3%A8me+br%C3%BBl%C3%A9e"),
        # Hugo, common/paths/path.go Sanitize, then lower case (disablePathToLower: false)
        ("/{hugo}/", "/cuisine/cr%C3%A8me-br%C3%BBl%C3%A9e/"),
    ],
)
def test_url_map_fields_are_each_generators_page(template, url):
    settings = Settings.load(env={"GRASBOT_URL_MAP": f"recette={template}"})
    assert settings.url_for("recette", "creme-brulee", "Cuisine/Crème brûlée.md") == url


@pytest.mark.parametrize(
    "field, url",
    [
        ("path", "/Notes/Q%26A%3A%20100%25%20%C3%A7a%20%3F%231"),  # nothing can end the path: a ? or # is encoded
        ("name", "/Q%26A%3A%20100%25%20%C3%A7a%20%3F%231"),
        ("quartz", "/Notes/Q-and-A%3A-100-percent-%C3%A7a-1"),  # & -and-, % -percent, ? and # dropped
        ("publish", "/Notes/Q%26A%3A+100%25+%C3%A7a+%3F%231"),
        ("hugo", "/notes/qa-100-%C3%A7a-%231"),  # & : % ? dropped, # kept, runs of spaces one hyphen
    ],
)
def test_url_map_fields_encode_what_a_file_name_may_hold(field, url):
    settings = Settings.load(env={"GRASBOT_URL_MAP": f"*=/{{{field}}}"})
    assert settings.url_for(None, "q-a-100-ca-1", "Notes/Q&A: 100% ça ?#1.md") == url


# Hugo's page for a content file (resources/page/page_paths.go, CreateTargetPaths; the front
# matter as hugolib/page__meta.go reads it): `slug:` replaces the name, `-` trimmed
# (gohugo.io/content-management/urls/#slug); `url:` is the whole path, kept as written on a page
# (« preserve its value without sanitization »), with no `/` after it when it names a file;
# a leaf bundle's index.md is its folder's page, a section's _index.md takes no slug, the
# vault's own _index.md is the home page. GrasBot linked all of these to a page Hugo never made.
@pytest.mark.parametrize(
    "path, slug, url, page",
    [
        ("Cuisine/Crème brûlée.md", "Ma Crème", None, "/cuisine/ma-cr%C3%A8me/"),
        ("Cuisine/Crème brûlée.md", "-creme-", None, "/cuisine/creme/"),
        ("Cuisine/Crème brûlée.md", None, "/Articles/Ma crème", "/Articles/Ma%20cr%C3%A8me/"),
        ("Cuisine/Crème brûlée.md", "ignored", "recettes/creme.html", "/recettes/creme.html"),
        ("Cuisine/Crème brûlée.md", "creme", "https://ailleurs.example/x", "/cuisine/creme/"),  # Hugo refuses it
        ("Cuisine/Tarte/index.md", None, None, "/cuisine/tarte/"),
        ("Cuisine/Tarte/index.md", "tatin", None, "/cuisine/tatin/"),
        ("Cuisine/_index.md", "ignored", None, "/cuisine/"),
        ("Cuisine/_index.md", None, "/Mes Recettes/", "/mes-recettes/"),  # a section's url is sanitized
        ("_index.md", None, None, "/"),
    ],
)
def test_url_map_hugo_reads_the_notes_slug_and_url_and_bundles(path, slug, url, page):
    settings = Settings.load(env={"GRASBOT_URL_MAP": "*=/{hugo}/"})
    assert settings.url_for(None, "x", path, slug, url) == page


# A folder whose name the generator drops whole (Quartz: `?`, `#`; Hugo: `!!!`, `%`) is no folder
# of the page's path, as both join it; an imported folder of that name made `//evil.example/x`,
# which a browser reads as the host evil.example: the source's link left the site.
@pytest.mark.parametrize(
    "template, path, page",
    [
        ("/{quartz}", "?/evil.example/x.md", "/evil.example/x"),
        ("/{quartz}", "#/evil.example/x.md", "/evil.example/x"),
        ("/{quartz}", "Notes/?/x.md", "/Notes/x"),
        ("/{quartz}", "?/index.md", "/"),
        ("/{hugo}/", "!!!/evil.example/x.md", "/evil.example/x/"),
        ("/{hugo}/", "%/evil.example/x.md", "/evil.example/x/"),
        ("/{hugo}/", "Notes/?/x.md", "/notes/x/"),
        ("/{hugo}/", "!!!/_index.md", "/"),
    ],
)
def test_a_folder_the_generator_drops_whole_keeps_the_link_on_the_site(template, path, page):
    settings = Settings.load(env={"GRASBOT_URL_MAP": f"*={template}"})
    url = settings.url_for(None, "x", path)
    assert url == page
    assert urllib.parse.urljoin("https://site.example/notes/", url).startswith("https://site.example/")


# Where each generator serves a note, from its own code: MkDocs (mkdocs/structure/files.py,
# File._get_stem, _get_dest_path and _get_url) serves index.md and README.md (that case only) as
# their folder, and with `use_directory_urls: false` links them as the folder's index.html
# (`/{path}/` and `/{path}.html` sent visitors to /Cuisine/index/ and /Cuisine/README.html, 404s);
# Quartz v4 (quartz/util/path.ts, slugifyFilePath and simplifySlug) reads _index as index and
# links a folder's index as the folder (`/Cuisine/index` is not the page it links)
@pytest.mark.parametrize(
    "template, path, page",
    [
        ("/{mkdocs}", "Cuisine/Crème brûlée.md", "/Cuisine/Cr%C3%A8me%20br%C3%BBl%C3%A9e/"),
        ("/{mkdocs}", "Cuisine/index.md", "/Cuisine/"),
        ("/{mkdocs}", "Cuisine/README.md", "/Cuisine/"),
        ("/{mkdocs}", "Cuisine/readme.md", "/Cuisine/readme/"),
        ("/{mkdocs}", "index.md", "/"),
        ("/{mkdocs}", "README.md", "/"),
        ("/{mkdocs_html}", "Cuisine/Crème brûlée.md", "/Cuisine/Cr%C3%A8me%20br%C3%BBl%C3%A9e.html"),
        ("/{mkdocs_html}", "Cuisine/index.md", "/Cuisine/index.html"),
        ("/{mkdocs_html}", "Cuisine/README.md", "/Cuisine/index.html"),
        ("/{mkdocs_html}", "Cuisine/readme.md", "/Cuisine/readme.html"),
        ("/{mkdocs_html}", "index.md", "/index.html"),
        ("/{mkdocs_html}", "README.md", "/index.html"),
        ("/{quartz}", "Cuisine/Crème brûlée.md", "/Cuisine/Cr%C3%A8me-br%C3%BBl%C3%A9e"),
        ("/{quartz}", "Cuisine/index.md", "/Cuisine/"),
        ("/{quartz}", "Cuisine/_index.md", "/Cuisine/"),
        ("/{quartz}", "Cuisine/Index.md", "/Cuisine/Index"),
        ("/{quartz}", "Cuisine/mon index.md", "/Cuisine/mon-index"),
        ("/{quartz}", "index.md", "/"),
    ],
)
def test_url_map_serves_a_note_where_its_site_generator_does(template, path, page):
    assert Settings.load(env={"GRASBOT_URL_MAP": f"*={template}"}).url_for(None, "x", path) == page


def test_url_map_types_fold_case_and_accents_and_a_catch_all_serves_the_rest():
    default = Settings.load(env={})
    # the default map, unchanged, now finds a type written with its accent or capital
    assert default.url_for("compétence", "docker", "Docker.md") == "/competences/docker"
    assert default.url_for("Projet", "robot", "Robot.md") == "/portfolio/robot"
    assert default.url_for("note", "docker", "Docker.md") is None
    assert default.url_for(None, "docker", "Docker.md") is None
    settings = Settings.load(env={"GRASBOT_URL_MAP": "Compétence=/c/{slug},=/sans-type/{slug},*=/notes/{path}"})
    assert settings.url_for("COMPETENCE", "docker", "Docker.md") == "/c/docker"
    assert settings.url_for(None, "docker", "Docker.md") == "/sans-type/docker"  # the empty key: notes without a type
    assert settings.url_for("cours", "docker", "Cours/Docker.md") == "/notes/Cours/Docker"  # the catch-all: any other
    assert Settings.load(env={"GRASBOT_URL_MAP": "*=/notes/{path}"}).url_for(None, "d", "Docker.md") == "/notes/Docker"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["search", "q", "--top-k", "0"], "SEARCH_TOP_K doit être entre 1 et 50"),
        (["search", "q", "--llm-timeout", "-1"], "LLM_TIMEOUT doit être positif"),
        # a site's url with a field str.format cannot fill: every question that found a note was a 500
        (
            ["search", "q", "--url-map", "projet=/p/{slug}/{page}"],
            "l'url du type 'projet' ('/p/{slug}/{page}') ne peut pas être construite : {page} n'est pas un champ",
        ),
        (
            ["search", "q", "--url-map", "projet=/p/{slug}}"],
            "l'url du type 'projet' ('/p/{slug}}') ne peut pas être construite : ses accolades ne se lisent pas",
        ),
        (["search", "q", "--url-map", "projet=/p/{slug}{slug.__class__}"], "ne peut pas être construite : {slug.__class__} n'est pas un champ"),
        (["search", "q", "--url-map", "projet=/p/{path!r}"], "ne peut pas être construite : {path!r} n'est pas un champ"),
        (["search", "q", "--url-map", "*=/notes"], "GRASBOT_URL_MAP : l'url du type '*' ('/notes') ne peut pas être construite : elle ne contient aucun champ"),
        (["search", "q", "--url-map", "projet=/p/{Path}"], "{publish}, {hugo}, {mkdocs}, {mkdocs_html}"),
        # which of the two a note of type Compétence got was the order of a dict
        (
            ["search", "q", "--url-map", "competence=/a/{slug},Compétence=/b/{slug}"],
            "GRASBOT_URL_MAP : les types 'competence' et 'compétence' sont un même type",
        ),
        (
            ["search", "q", "--url-map", "projet=/a/{slug},projet=/b/{slug}"],
            "--url-map : impossible d'utiliser 'projet=/a/{slug},projet=/b/{slug}' (le type 'projet' reçoit deux urls",
        ),
    ],
)
def test_bad_values_exit_2(capsys, argv, message):
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert message in err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["search", "q", "--top-k", "beaucoup"], "pas un nombre entier"),
        (["search", "q", "--default-visibility", "amis"], "choix invalide"),
        (["search", "q", "--audience", "admin"], "choix invalide"),
        (["search", "q", "--nope"], "arguments non reconnus"),
        # float() takes them, and NaN passed every bound: a question grounded by no score of NaN
        (["search", "q", "--min-score", "nan"], "argument --min-score : pas un nombre fini : 'nan'"),
        (["search", "q", "--temperature", "inf"], "argument --temperature : pas un nombre fini : 'inf'"),
        (["serve", "--body-timeout", "nan"], "argument --body-timeout : pas un nombre fini : 'nan'"),
        (["eval"], "--questions"),
        (["frobnicate"], "choix invalide"),
        ([], "obligatoires"),
    ],
)
def test_bad_flags_exit_2(capsys, argv, message):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_bad_environment_value_exits_2(capsys, monkeypatch):
    monkeypatch.setenv("SEARCH_TOP_K", "cinq")
    code, _, err = run(capsys, "search", "q")
    assert code == 2
    assert "SEARCH_TOP_K" in err


@pytest.mark.parametrize(
    "var, value, message",
    [
        # NaN passed every bound: a rate limit of NaN limited nobody
        ("GRASBOT_RATE_PER_MINUTE", "nan", "GRASBOT_RATE_PER_MINUTE : impossible d'utiliser 'nan' (ce n'est pas un nombre fini)"),
        ("LLM_TIMEOUT", "nan", "LLM_TIMEOUT : impossible d'utiliser 'nan' (ce n'est pas un nombre fini)"),
        ("SEARCH_MIN_SCORE", "-inf", "SEARCH_MIN_SCORE : impossible d'utiliser '-inf' (ce n'est pas un nombre fini)"),
        # said in Python's English: « (invalid literal for int() with base 10: 'abc') », « (could not convert string to float: 'abc') »
        ("GRASBOT_PORT", "abc", "GRASBOT_PORT : impossible d'utiliser 'abc' (ce n'est pas un nombre entier)"),
        ("GRASBOT_MAX_QUESTION", "1e3", "GRASBOT_MAX_QUESTION : impossible d'utiliser '1e3' (ce n'est pas un nombre entier)"),
        ("LLM_TIMEOUT", "abc", "LLM_TIMEOUT : impossible d'utiliser 'abc' (ce n'est pas un nombre)"),
        # timedelta cannot hold it: `serve` died on it with a traceback once the vault was loaded
        ("GRASBOT_LOG_RETENTION_DAYS", "99999999999999", "GRASBOT_LOG_RETENTION_DAYS doit être entre 1 et 36500 jours, pas 99999999999999"),
    ],
)
def test_bad_environment_values_are_refused_before_anything_starts(capsys, monkeypatch, var, value, message):
    monkeypatch.setenv(var, value)
    code, _, err = run(capsys, "search", "q")
    assert code == 2
    assert message in err


def test_bundled_vault_is_the_default():
    assert Settings.load(env={}).vault_dir.resolve() == BUNDLED_VAULT.resolve()


def test_eval_new_subject_with_no_earlier_subject_says_so(capsys, note_writer, tmp_path):
    """One question, or all about one note: nothing to ask after another subject (it was a ZeroDivisionError)."""
    root = eval_vault(note_writer)
    tsv = tmp_path / "q.tsv"
    tsv.write_text("le robot suiveur\ta.md\nencore le robot\ta.md\n", encoding="utf-8")
    code, out, err = run(
        capsys, "eval", "--questions", str(tsv), "--vault", str(root), "--default-visibility", "public", "--semantic", "off", "--new-subject", "--json"
    )
    assert code == 0 and "new_subject" not in json.loads(out)
    assert "--new-subject : aucune question n'en a une plus ancienne sur d'autres notes après laquelle la poser" in err


def test_eval_questions_given_twice_reads_both_files(capsys, note_writer, tmp_path):
    root = eval_vault(note_writer)
    (tmp_path / "a.tsv").write_text("le robot suiveur\ta.md\n", encoding="utf-8")
    (tmp_path / "b.tsv").write_text("tomates du jardin\tc.md\n", encoding="utf-8")
    lexical = ("--vault", str(root), "--default-visibility", "public", "--semantic", "off", "--json")
    code, out, _ = run(capsys, "eval", "--questions", str(tmp_path / "a.tsv"), "--questions", str(tmp_path / "b.tsv"), *lexical)
    assert code == 0 and json.loads(out)["questions"] == 2


@pytest.mark.parametrize(
    "argv, flag",
    [
        (["serve", "--host", ""], "--host"),
        (["search", "--vault", "", "x"], "--vault"),
        (["search", "--model", " ", "x"], "--model"),
        (["serve", "--cache-dir", ""], "--cache-dir"),
        (["serve", "--token-file", ""], "--token-file"),
    ],
)
def test_an_empty_flag_value_is_refused(capsys, argv, flag):
    """`--host ""` bound every interface, `--vault ""` read the current folder."""
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    assert f"argument {flag} : ne doit pas être vide (omettez l'option pour la valeur par défaut)" in capsys.readouterr().err


@pytest.mark.parametrize(
    "env, message",
    [
        (
            {"LLM_KEEP_ALIVE": "banana"},
            "LLM_KEEP_ALIVE doit être une durée comme Ollama la lit (30m, 1h30m, 90s) ou des secondes (-1 garde le modèle chargé), pas 'banana'",
        ),
        ({"LLM_KEEP_ALIVE": "1d"}, "LLM_KEEP_ALIVE doit être une durée comme Ollama la lit"),
        ({"LLM_TEMPERATURE": "-1"}, "LLM_TEMPERATURE doit être entre 0 et 2, pas -1.0"),
    ],
)
def test_settings_ollama_would_refuse_are_refused_at_start(capsys, monkeypatch, env, message):
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    code, _, err = run(capsys, "search", "robot", "--semantic", "off")
    assert code == 2 and message in err


def test_a_long_embedding_is_announced_once(capsys, note_writer, tmp_path, monkeypatch):
    """A first run on a large vault embeds for minutes before it answers: said, not silent;
    the vectors kept, the next run says nothing."""
    import grasbot._cli

    monkeypatch.setattr(grasbot._cli, "ANNOUNCE_FROM", 2)  # the test vault's few texts stand for thousands
    monkeypatch.setenv("GRASBOT_CACHE_DIR", str(tmp_path / "cache"))
    root = clean_vault(note_writer)
    code, _, err = run(capsys, "search", "robot", "--vault", str(root))
    assert code == 0
    assert "grasbot: calcul du sens de 4 textes, une fois (ils sont gardés dans le cache) ; --semantic off répond tout de suite" in err  # 2 heads, 2 questions
    code, _, err = run(capsys, "search", "robot", "--vault", str(root))
    assert code == 0 and "calcul du sens" not in err


def test_check_embeds_only_a_vault_whose_notes_declare_answers(capsys, note_writer, tmp_path, monkeypatch):
    """`grasbot check` searches only for the questions notes declare in `answers`; on a vault
    that declares none it embedded every note first all the same (scripts/run.sh checks
    before it serves: 77 s for a 209-note vault, minutes for a larger one)."""
    import grasbot._cli

    monkeypatch.setattr(grasbot._cli, "ANNOUNCE_FROM", 1)  # the test vault's few texts stand for thousands
    monkeypatch.setenv("GRASBOT_CACHE_DIR", str(tmp_path / "cache"))
    note_writer("a.md", "title: Robot\nvisibility: public", "Un robot suiveur de ligne.")
    note_writer("b.md", "title: Arduino\nvisibility: public", "Des cartes électroniques.")
    code, out, err = run(capsys, "check", "--vault", str(note_writer.root))
    assert code == 0 and "2 notes chargées, 2 publiques" in out
    assert "calcul du sens" not in err
    note_writer("a.md", "title: Robot\nvisibility: public\nanswers: [C'est quoi le robot ?]", "Un robot suiveur de ligne.")
    code, out, err = run(capsys, "check", "--vault", str(note_writer.root))
    assert code == 0 and "grasbot: calcul du sens" in err  # its question is ranked with meaning, as serve ranks it


def test_check_names_the_symlinks_it_leaves_out(capsys, note_writer, tmp_path):
    """Left out on purpose (a link to /etc must not become part of a public site), but named:
    an author who linked a folder in expects its notes."""
    root = clean_vault(note_writer)
    outside = tmp_path / "ailleurs"
    outside.mkdir()
    (outside / "n.md").write_text("x", encoding="utf-8")
    (root / "lien.md").symlink_to(outside / "n.md")
    (root / "dossier").symlink_to(outside, target_is_directory=True)
    (root / "casse.md").symlink_to(tmp_path / "nulle-part.md")
    code, out, _ = run(capsys, "check", "--vault", str(root))
    assert code == 0  # not a problem: said, as the lines search reads past are
    assert "Liens symboliques laissés de côté, qui mènent hors du coffre ou dans un dossier caché ou exclu (3) :\n  casse.md\n  lien.md\n  dossier/\n" in out
    code, out, _ = run(capsys, "check", "--vault", str(root), "--json")
    assert json.loads(out)["links_left_out"] == ["casse.md", "lien.md", "dossier/"]


@pytest.mark.parametrize("given", ["/", ".", "./", "..", "../Archives", "Journal/../..", "Journal\\..\\.."])
def test_an_excluded_folder_outside_the_vault_is_refused(given):
    """`--exclude /` read as the vault's root made every note's path « left out » (the masking
    of excluded notes' paths then erased every public note's from what visitors read), and
    `--exclude ..` walked the folder above the vault at every load."""
    with pytest.raises(ConfigError, match=r"GRASBOT_EXCLUDE \(--exclude\) : .* n'est pas un dossier du coffre"):
        Settings.load(env={"GRASBOT_EXCLUDE": given})
    assert Settings.load(env={"GRASBOT_EXCLUDE": "Journal,./Archives/2023/"}).exclude == ("Journal", "Archives/2023")


@pytest.mark.parametrize("given", ["Journal//Intime", "./Journal/./Intime/", "Journal\\Intime", " Journal/Intime/ "])
def test_an_excluded_folder_is_left_out_however_its_path_is_written(note_writer, given):
    """`--exclude Journal//Intime` (or `./Journal/./Intime`, or Windows' `Journal\\Intime`) matched
    no note the walk named: the folder's notes reached visitors, and no warning said so."""
    note_writer("Journal/Intime/coffre.md", "visibility: public", "# Coffre\n\nLe code du coffre.\n")
    note_writer("accueil.md", "visibility: public", "# Accueil\n\nBienvenue.\n")
    bot = make_bot(note_writer.root, exclude=given)
    assert sorted(bot.snapshot.index("visitor").notes) == ["accueil.md"]
    assert bot.snapshot.vault.excluded == {"Journal/Intime/coffre.md"}


def test_the_enumerated_settings_are_read_in_any_case():
    """GRASBOT_INDEX_CACHE=OFF was read, GRASBOT_SEMANTIC=OFF refused."""
    settings = Settings.load(env={"GRASBOT_SEMANTIC": "OFF", "GRASBOT_ANCHORS": "Slug", "GRASBOT_DEFAULT_VISIBILITY": "Public"})
    assert (settings.semantic, settings.anchors, settings.default_visibility) == ("off", "slug", "public")


def test_serve_refuses_a_question_log_it_was_told_to_use_and_cannot(tmp_path):
    """The default place may be read-only, and serving goes on unlogged; a place the owner
    named is a mistake to hear at start: it served for weeks with a WARNING and no log."""
    folder = tmp_path / "un-dossier"
    folder.mkdir()
    proc = serve_process("--port", "0", "--semantic", "off", "--question-log", str(folder))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "GrasBot écoute sur" not in out
    failure = "impossible d'ouvrir le fichier : unable to open database file"
    assert f"grasbot: le journal des questions {folder} est inutilisable ({failure}) : nommez-en un autre, ou désactivez-le" in err


def test_a_bad_trusted_proxy_is_refused_before_serve_makes_anything(tmp_path):
    """It was refused once the token file was made and the vault loaded."""
    config = tmp_path / "xdg"
    proc = serve_process("--port", "0", "--semantic", "off", "--trusted-proxies", "10.0.0.300", env={"XDG_CONFIG_HOME": str(config)}, token=None)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and out == ""
    assert "GRASBOT_TRUSTED_PROXIES : le proxy de confiance '10.0.0.300' n'est ni une adresse IP ni un réseau" in err
    assert not (config / "grasbot").exists() and "coffre chargé" not in err


def test_a_vault_whose_path_is_not_utf8_is_served(capsys, tmp_path):
    """A folder named in Latin-1 above the vault: every command crashed on the key of its
    cache and question log (`UnicodeEncodeError`); the key of a UTF-8 path is unchanged."""
    from grasbot._config import vault_key

    root = tmp_path / os.fsdecode(b"lat\xe9") / "vault"
    write_note(root, "un.md", "title: Le jardin\nvisibility: public", "Les abeilles butinent la lavande du jardin.")
    code, out, err = run(capsys, "search", "abeilles", "--vault", str(root))
    assert code == 0 and "un.md" in out, err
    assert vault_key("/tmp/jardin") == hashlib.sha256(b"/tmp/jardin").hexdigest()[:16]


def test_site_pages_are_read_checked_and_turned_off():
    from grasbot import ConfigError, Settings
    from grasbot.answer.fallback import SITE_PAGES

    assert Settings().site_pages == SITE_PAGES == ("/portfolio", "/competences", "/contact")  # the seed's
    assert Settings.load({"GRASBOT_SITE_PAGES": " /blog , /contact "}).site_pages == ("/blog", "/contact")
    assert Settings.load({"GRASBOT_SITE_PAGES": "off"}).site_pages == ()
    assert Settings.load({}, site_pages="/a,https://b.fr/c").site_pages == ("/a", "https://b.fr/c")
    with pytest.raises(ConfigError, match=r"GRASBOT_SITE_PAGES : 'contact' doit être une page du site"):
        Settings.load({"GRASBOT_SITE_PAGES": "/blog,contact"})


def test_serve_with_the_token_on_its_command_line_warns_that_other_users_can_read_it(capsys, monkeypatch):
    """A process's command line is every local user's to read (`ps`): they could call the
    daemon as the owner. GRASBOT_TOKEN (its environment is the owner's alone) says nothing."""
    import grasbot.server.app

    served = []
    monkeypatch.setattr(grasbot.server.app, "serve", lambda settings: served.append(settings.token) or 0)
    code, _, err = run(capsys, "serve", "--token", "given-on-the-command-line-0123")
    assert code == 0 and served == ["given-on-the-command-line-0123"]
    assert err.startswith(
        "grasbot: attention : --token met le jeton du propriétaire dans la ligne de commande, que tout utilisateur de cette machine peut lire (ps)"
    )
    assert "GRASBOT_TOKEN ou dans le fichier du jeton (--token-file), puis changez-le\n" in err and "given-on-the-command-line" not in err
    monkeypatch.setenv("GRASBOT_TOKEN", "given-in-the-environment-0123")
    code, _, err = run(capsys, "serve")
    assert code == 0 and served[-1] == "given-in-the-environment-0123" and err == ""


def test_serve_warns_of_a_peer_that_the_owner_token_reaches_in_clear(capsys, monkeypatch):
    """A reload passes the owner token on to each peer: over plain HTTP to another host, anyone
    on the way reads it. Peers on this machine, or by https://, say nothing."""
    import grasbot.server.app

    monkeypatch.setattr(grasbot.server.app, "serve", lambda settings: 0)
    peers = "http://10.0.0.6:8765,http://127.0.0.1:8766,https://b.exemple.fr,http://[::1]:8767,http://localhost:8768"
    code, _, err = run(capsys, "serve", "--peers", peers)
    assert code == 0
    assert err == (
        "grasbot: attention : GRASBOT_PEERS : un rechargement envoie à http://10.0.0.6:8765 le jeton du propriétaire en HTTP simple, "
        "que quiconque sur le trajet lit : joignez ce démon en https:// ou par un lien privé\n"
    )


# ---------------------------------------------------------------- the README's table


def test_the_readme_configuration_table_names_every_setting_and_every_flag_of_serve(capsys):
    """The README's Configuration table is where an owner looks a setting up: a variable or a
    flag missing there is one nobody finds, a row for one that does not exist a setting that
    silently does nothing. The visitor limits it names as variables only are the deploy
    guide's Limits table."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    intro, table = section.split("\n| variable |", 1)
    rows = [line.split("|")[1:3] for line in table.splitlines() if line.startswith("| `")]
    variables = {name for cell, _ in rows for name in re.findall(r"`([A-Z_]+)`", cell)}
    flags = {flag for _, cell in rows for flag in re.findall(r"`(--[a-z-]+)`", cell)}
    limits = set(re.findall(r"`(GRASBOT_[A-Z_]+)`", intro))
    assert variables | limits == set(Settings.ENV) and not variables & limits
    deploy_limits = (REPO / "deploy" / "README.md").read_text(encoding="utf-8").split("\n## Limits\n", 1)[1].split("\n## ", 1)[0]
    limit_rows = "\n".join(line for line in deploy_limits.splitlines() if line.startswith("| "))
    assert limits == set(re.findall(r"`(GRASBOT_[A-Z_]+)`", limit_rows))
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    taken = set(re.findall(r"\[(--[a-z-]+)", capsys.readouterr().out))  # the usage line: [--host HOST] …
    assert flags == taken - {"--json"}


@pytest.mark.parametrize("command", ["search", "ask", "check"])
def test_every_command_takes_the_index_cache_flags(command, tmp_path, monkeypatch):
    """`grasbot check --no-cache` was « unrecognized arguments », though every command honours
    GRASBOT_INDEX_CACHE and GRASBOT_CACHE_DIR."""
    import grasbot._cli

    opened = []
    monkeypatch.setattr(grasbot._cli.GrasBot, "open", lambda settings: opened.append(settings) or (_ for _ in ()).throw(SystemExit(0)))
    args = [command, *(["question"] if command != "check" else []), "--no-cache", "--cache-dir", str(tmp_path / "c"), "--semantic", "off"]
    with pytest.raises(SystemExit):
        grasbot._cli.main(args)
    assert opened[0].index_cache is False and opened[0].cache_dir == tmp_path / "c"


def test_the_hugo_anchor_form_is_taken_by_the_flag_and_the_environment():
    """`hugo` (Hugo's own ids) is a form the flag and GRASBOT_ANCHORS both take."""
    assert Settings.load(env={"GRASBOT_ANCHORS": "hugo"}).anchors == "hugo"
    assert build_parser().parse_args(["search", "q", "--anchors", "hugo"]).anchors == "hugo"
