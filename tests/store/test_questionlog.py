"""The visitors' question log: what it keeps, what it never keeps, how long, and `grasbot log`."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import sqlite3
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta

import pytest

from grasbot._config import vault_key
from grasbot.retrieval.scoring import Reason
from grasbot.retrieval.search import SearchResult, Source
from grasbot.store import questionlog
from grasbot.store.questionlog import (
    REOPEN_EVERY,
    SCHEMA_VERSION,
    QuestionLog,
    add_log_parser,
    cmd_log,
    default_log_path,
    is_weak,
    parse_log_path,
)
from support.bots import make_bot, serve_refused, write_note
from support.files import read_only_file, read_only_folder

T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)


class Clock:
    def __init__(self, now: datetime = T0):
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def result(*ranked: tuple[str, float, tuple[str, ...]], grounded: bool = True) -> SearchResult:
    """A search result with `ranked` = (slug, score, signals) sources; the log reads no more."""
    sources = tuple(
        Source(slug, slug.title(), None, score, tuple(Reason(s, 1.0, s) for s in signals), None, f"notes/{slug}.md") for slug, score, signals in ranked
    )
    return SearchResult(None, sources, grounded, 10, 1.0)


def columns(db) -> dict[str, list[str]]:
    with sqlite3.connect(db) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {t: [c[1] for c in conn.execute(f"PRAGMA table_info({t})")] for t in tables}


def rows(db, table: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()


# ---------------------------------------------------------------- schema and privacy


def test_created_on_first_use_with_version_and_wal(tmp_path):
    db = tmp_path / "state" / "grasbot" / "questions.sqlite3"
    log = QuestionLog(db)
    assert log.enabled and db.exists()
    log.close()
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 1
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    # opening again keeps what is there
    with QuestionLog(db, clock=Clock()) as log:
        log.record("bonjour", result(("a", 5.0, ("bm25",))))
    with QuestionLog(db, clock=Clock()) as log:
        assert log.count() == 1


def test_schema_has_no_column_for_the_visitor(tmp_path):
    """The tables can hold nothing about who asked: only these columns exist."""
    db = tmp_path / "q.sqlite3"
    QuestionLog(db).close()
    assert columns(db) == {
        "questions": ["id", "asked_at", "question", "grounded", "followup"],
        "results": ["question_id", "rank", "slug", "path", "score", "signals"],
        "redacted": ["through", "version"],
    }
    every = " ".join(c for cols in columns(db).values() for c in cols)
    for forbidden in ("ip", "addr", "agent", "user", "host", "client", "history", "session", "cookie", "referer"):
        assert forbidden not in every.split() and not any(forbidden in c for c in every.split()), forbidden


def test_a_record_holds_exactly_the_question_and_its_notes(tmp_path):
    db = tmp_path / "q.sqlite3"
    with QuestionLog(db, clock=Clock()) as log:
        log.record(
            "  Comment GrasBot classe-t-il les notes ?  ",
            result(("grasbot", 12.5, ("title", "bm25", "bm25")), ("moteur", 3.75, ("graph",))),
        )
        log.record("et le vélo ?", result(("velo", 1.0, ("bm25",)), grounded=False), followup=True)
    assert rows(db, "questions") == [
        (1, "2025-03-01T12:00:00Z", "Comment GrasBot classe-t-il les notes ?", 1, 0),
        (2, "2025-03-01T12:00:00Z", "et le vélo ?", 0, 1),
    ]
    assert rows(db, "results") == [
        (1, 1, "grasbot", "notes/grasbot.md", 12.5, "bm25,title"),
        (1, 2, "moteur", "notes/moteur.md", 3.75, "graph"),
        (2, 1, "velo", "notes/velo.md", 1.0, "bm25"),
    ]


def test_a_visitors_contact_and_bank_details_are_not_kept(tmp_path):
    """Visitors type their e-mail, phone or IBAN into a chat box; the owner learns which words
    lead to a note from the rest, and keeps none of it for 90 days (GDPR: data minimisation)."""
    db = tmp_path / "q.sqlite3"
    with QuestionLog(db, clock=Clock(), batch_wait=0) as log:
        log.record("mon mail c'est jean.dupont@gmail.com, vous pouvez me recontacter ?", result(grounded=False))
        log.submit("appelez-moi au 06 12 34 56 78 pour l'adhésion 2024", result(("adhesion", 4.0, ("bm25",))))
        log.record("mon IBAN FR76 3000 6000 0112 3456 7890 189, carte 4111 1111 1111 1111", result(grounded=False))
    assert [r[2] for r in rows(db, "questions")] == [
        "mon mail c'est [e-mail], vous pouvez me recontacter ?",
        "appelez-moi au [téléphone] pour l'adhésion 2024",
        "mon IBAN [IBAN], carte [carte]",
    ]
    on_disk = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    for typed in (b"dupont", b"06 12 34", b"3000 6000", b"4111"):
        assert typed not in on_disk


# ---------------------------------------------------------------- a log an older GrasBot wrote

OLD_QUESTIONS = [
    "mon mail c'est jean.dupont@gmail.com, vous pouvez me recontacter ?",
    "comment installer GrasBot ?",
    "appelez-moi au 06 12 34 56 78 pour l'adhésion 2024",
    "mon IBAN FR76 3000 6000 0112 3456 7890 189",
    "écrivez à marie@free.fr",
]
OLD_REDACTED = [
    "mon mail c'est [e-mail], vous pouvez me recontacter ?",
    "comment installer GrasBot ?",
    "appelez-moi au [téléphone] pour l'adhésion 2024",
    "mon IBAN [IBAN]",
    "écrivez à [e-mail]",
]


def older_grasbots_log(db, questions=OLD_QUESTIONS, *, at: datetime = T0) -> None:
    """A log as GrasBot wrote it before `redaction`: schema version 1, no `redacted` marker,
    every question as typed (ungrounded, its nearest note `contact`)."""
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.executescript(
            """
            CREATE TABLE questions (id INTEGER PRIMARY KEY, asked_at TEXT NOT NULL, question TEXT NOT NULL,
                grounded INTEGER NOT NULL, followup INTEGER NOT NULL DEFAULT 0);
            CREATE TABLE results (question_id INTEGER NOT NULL REFERENCES questions(id) ON DELETE CASCADE,
                rank INTEGER NOT NULL, slug TEXT NOT NULL, path TEXT NOT NULL, score REAL NOT NULL,
                signals TEXT NOT NULL, PRIMARY KEY (question_id, rank));
            CREATE INDEX questions_by_time ON questions(asked_at);
            CREATE INDEX results_by_slug ON results(slug, rank);
            PRAGMA user_version=1;
            """
        )
        first = conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM questions").fetchone()[0]
        for i, text in enumerate(questions, first):
            conn.execute("INSERT INTO questions VALUES (?, ?, ?, 0, 0)", (i, at.strftime("%Y-%m-%dT%H:%M:%SZ"), text))
            conn.execute("INSERT INTO results VALUES (?, 1, 'contact', 'contact.md', 0.5, 'bm25')", (i,))


def marker(db) -> list[tuple]:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return conn.execute("SELECT through FROM redacted").fetchall()


def test_an_older_grasbots_log_is_redacted_once_by_the_writer(tmp_path):
    """A log written before `redaction` kept visitors' e-mails and phones as typed for 90 days:
    the first start after the upgrade redacts them, in the writer thread, and marks it done."""
    db = tmp_path / "q.sqlite3"
    older_grasbots_log(db)
    log = QuestionLog(db, clock=Clock(), redact_batch=2)
    assert log.redacted.wait(30)
    assert b"dupont" not in b"".join(p.read_bytes() for p in tmp_path.iterdir())  # the file too, not only its -wal
    log.close()
    assert [r[2] for r in rows(db, "questions")] == OLD_REDACTED
    assert len(rows(db, "results")) == 5 and marker(db) == [(5,)]
    with QuestionLog(db, clock=Clock()) as log:  # done: the next start changes nothing
        assert not log._redacting and log._conn is not None and log._conn.total_changes == 0


def test_an_older_grasbots_log_cleaning_killed_midway_is_finished_at_the_next_start(tmp_path):
    """Each batch is one transaction with the marker: a daemon killed after the first batch
    left two questions redacted and the marker on the second; the next start goes on."""
    db = tmp_path / "q.sqlite3"
    older_grasbots_log(db)
    with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as conn:
        questionlog._ensure_redacted_table(conn)
        assert questionlog._redact_batch(conn, 2) == 2  # then the daemon is killed
    assert [r[2] for r in rows(db, "questions")] == OLD_REDACTED[:2] + OLD_QUESTIONS[2:]
    assert marker(db) == [(2,)]
    with QuestionLog(db, clock=Clock(), redact_batch=2) as log:
        assert log.redacted.wait(30)
    assert [r[2] for r in rows(db, "questions")] == OLD_REDACTED and marker(db) == [(5,)]


def test_questions_an_older_grasbot_wrote_after_a_downgrade_are_redacted_at_the_upgrade(tmp_path):
    """The marker follows the questions this GrasBot writes; an older one, run again on the
    file (it ignores the marker's table), writes past it, and the next start redacts those."""
    db = tmp_path / "q.sqlite3"
    older_grasbots_log(db, OLD_QUESTIONS[:1])
    with QuestionLog(db, clock=Clock()) as log:
        assert log.redacted.wait(30)
        log.record("écrivez à paul@free.fr", result(grounded=False))
    assert marker(db) == [(2,)]
    older_grasbots_log_again = [(3, "2025-03-01T12:00:00Z", "mon 06 12 34 56 78", 0, 0)]
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.executemany("INSERT INTO questions VALUES (?, ?, ?, ?, ?)", older_grasbots_log_again)
    with QuestionLog(db, clock=Clock()) as log:
        assert log.redacted.wait(30)
    assert [r[2] for r in rows(db, "questions")] == [OLD_REDACTED[0], "écrivez à [e-mail]", "mon [téléphone]"]


def test_a_log_redacted_by_an_older_redaction_is_read_again_by_a_newer_one(tmp_path, monkeypatch):
    """The marker says how far, and by which `redaction.VERSION`: a later `redact`, which finds
    what an earlier one missed, reads every question again at its first start, once."""
    db = tmp_path / "q.sqlite3"
    older_grasbots_log(db)
    with QuestionLog(db, clock=Clock()) as log:
        assert log.redacted.wait(30)
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:  # what an earlier redaction let through
        conn.execute("UPDATE questions SET question = 'écrivez à jean @ free.fr' WHERE id = 1")
    monkeypatch.setattr(questionlog, "REDACTION", questionlog.REDACTION + 1)
    with QuestionLog(db, clock=Clock(), redact_batch=2) as log:
        assert log.redacted.wait(30)
    assert rows(db, "questions")[0][2] == "écrivez à [e-mail]"
    with contextlib.closing(sqlite3.connect(db)) as conn:
        assert conn.execute("SELECT through, version FROM redacted").fetchall() == [(5, questionlog.REDACTION)]
    with QuestionLog(db, clock=Clock()) as log:  # done: the next start changes nothing
        assert not log._redacting and log._conn is not None and log._conn.total_changes == 0


def test_questions_written_after_a_downgrade_are_read_again_by_the_newer_redaction_at_the_upgrade(tmp_path, monkeypatch):
    """A newer GrasBot's marker says its `redact` read the log; this one, run again on the file
    after a bad upgrade, writes questions its own `redact` read: the newer, back, reads them again.
    The marker followed them, and they kept what only the newer finds as typed for 90 days."""
    db = tmp_path / "q.sqlite3"
    ours, our_redact = questionlog.REDACTION, questionlog.redact

    def newer() -> None:
        monkeypatch.setattr(questionlog, "REDACTION", ours + 1)
        monkeypatch.setattr(questionlog, "redact", lambda text: our_redact(text).replace("AB-123-CD", "[plaque]"))

    newer()
    with QuestionLog(db, clock=Clock()) as log:
        log.record("ma voiture AB-123-CD est-elle garée ?", result(grounded=False))
    monkeypatch.setattr(questionlog, "REDACTION", ours)  # the downgrade
    monkeypatch.setattr(questionlog, "redact", our_redact)
    with QuestionLog(db, clock=Clock()) as log:
        assert log.redacted.wait(30)
        log.record("et la AB-123-CD ?", result(grounded=False))
    assert [r[2] for r in rows(db, "questions")] == ["ma voiture [plaque] est-elle garée ?", "et la AB-123-CD ?"]
    newer()  # the upgrade again
    with QuestionLog(db, clock=Clock()) as log:
        assert log.redacted.wait(30)
    assert [r[2] for r in rows(db, "questions")] == ["ma voiture [plaque] est-elle garée ?", "et la [plaque] ?"]


def test_a_log_redacted_by_redaction_1_has_its_social_security_numbers_and_addresses_redacted_once(tmp_path):
    """Redaction 1 kept a social security number, a street address and a full-width e-mail as
    typed; this GrasBot's first start reads that log again, once, and marks it done."""
    db = tmp_path / "q.sqlite3"
    typed = ["mon NIR 1 85 05 78 006 084 91", "livrez au 12 rue des Lilas, 75011 Paris", "jean＠exemple.fr", "chmod 755"]
    older_grasbots_log(db, typed)
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:  # as redaction 1 left it: read through, nothing found
        conn.execute("CREATE TABLE redacted (through INTEGER NOT NULL, version INTEGER NOT NULL DEFAULT 0)")
        conn.execute("INSERT INTO redacted VALUES (4, 1)")
    with QuestionLog(db, clock=Clock()) as log:
        assert log.redacted.wait(30)
    assert [r[2] for r in rows(db, "questions")] == ["mon NIR [sécurité sociale]", "livrez au [adresse]", "[e-mail]", "chmod 755"]
    with contextlib.closing(sqlite3.connect(db)) as conn:
        assert conn.execute("SELECT through, version FROM redacted").fetchall() == [(4, questionlog.REDACTION)]
    with QuestionLog(db, clock=Clock()) as log:  # done: the next start changes nothing
        assert not log._redacting and log._conn is not None and log._conn.total_changes == 0


def test_the_shared_log_of_an_older_grasbot_keeps_only_its_last_90_days_redacted(tmp_path, monkeypatch, caplog):
    """An older GrasBot kept every vault's questions in one file that no daemon opens now: they
    stayed as typed and for ever. A start deletes those past retention, redacts the rest, once."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    shared = default_log_path(vault=None)
    shared.parent.mkdir(parents=True)
    older_grasbots_log(shared, OLD_QUESTIONS, at=T0 - timedelta(days=89))
    with contextlib.closing(sqlite3.connect(shared)) as conn, conn:
        conn.execute("UPDATE questions SET asked_at = '2024-11-30T12:00:00Z' WHERE id <= 2")  # 91 days before T0
    caplog.set_level(logging.INFO, logger="grasbot.questionlog")
    own = default_log_path(vault=tmp_path)
    questionlog.tend_old_logs(own, 90, clock=Clock())
    assert [r[2] for r in rows(shared, "questions")] == OLD_REDACTED[2:]
    assert len(rows(shared, "results")) == 3
    assert b"dupont" not in b"".join(p.read_bytes() for p in shared.parent.iterdir() if p.is_file())
    assert caplog.text.count("2 question(s) de plus de 90 jours supprimées, les 3 restantes expurgées") == 1
    caplog.clear()
    questionlog.tend_old_logs(own, 90, clock=Clock())  # nothing more to do: nothing said
    assert caplog.text == "" and len(rows(shared, "questions")) == 3
    questionlog.tend_old_logs(own, 90, clock=Clock(T0 + timedelta(days=2)))  # the last ones past retention: the file goes
    assert not shared.exists() and not any(p.name.startswith(shared.name) for p in shared.parent.iterdir())
    assert "aucune de ses questions n'est des 90 derniers jours, supprimé" in caplog.text
    assert not own.exists()  # the daemon's own log is its own business


def test_a_log_set_aside_as_unreadable_is_deleted_once_its_questions_are_past_retention(tmp_path, caplog):
    """A torn log renamed beside the new one was kept for ever; every question it holds was asked
    before it was set aside, so it goes once that time is past retention, and not before."""
    db = tmp_path / "q.sqlite3"
    expired = [tmp_path / f"q.sqlite3.unreadable-20241130-115959{suffix}" for suffix in ("", "-wal", "-shm")]
    kept = [tmp_path / "q.sqlite3.unreadable-20241201-120001", tmp_path / "q.sqlite3.unreadable-mended", tmp_path / "r.sqlite3.unreadable-20240101-000000"]
    for file in expired + kept:
        file.write_bytes(b"torn")
    caplog.set_level(logging.INFO, logger="grasbot.questionlog")
    questionlog.tend_old_logs(db, 90, clock=Clock())  # 2024-11-30 11:59:59 + 90 days < T0 = 2025-03-01 12:00 < 2024-12-01 12:00:01 + 90 days
    assert [f.exists() for f in expired + kept] == [False, False, False, True, True, True]
    assert caplog.text.count("mis de côté comme illisible le 2024-11-30, au-delà des 90 jours pendant lesquels les questions sont gardées : supprimé") == 1


def test_a_log_set_aside_is_named_for_the_time_the_old_logs_are_read_by(tmp_path):
    """The name `_set_aside` gives is the one `tend_old_logs` reads its time from."""
    db = tmp_path / "q.sqlite3"
    db.write_bytes(b"SQLite format 3\x00" + b"not a database, not at all" * 100)  # a database, torn
    with QuestionLog(db, clock=Clock()):
        pass
    aside = tmp_path / "q.sqlite3.unreadable-20250301-120000"
    assert aside.exists()
    questionlog.tend_old_logs(db, 90, clock=Clock(T0 + timedelta(days=90) - timedelta(seconds=1)))
    assert aside.exists()
    questionlog.tend_old_logs(db, 90, clock=Clock(T0 + timedelta(days=90)))
    assert not aside.exists() and db.exists()


def test_a_running_daemon_deletes_a_log_set_aside_once_past_retention(tmp_path):
    """A log torn while the daemon ran is set aside; `tend_old_logs` deleted it at a start
    only, so a daemon that ran on kept its questions past retention until a restart."""
    db = tmp_path / "q.sqlite3"
    clock = Clock(T0)
    log = QuestionLog(db, retention_days=90, clock=clock, purge_check=0.01)
    aside = tmp_path / "q.sqlite3.unreadable-20250301-120000"  # as `_set_aside` names it at T0
    aside.write_bytes(b"torn")
    clock.now = T0 + timedelta(days=89)
    log.record("récente", result(("a", 5.0, ("bm25",))))  # the writer goes round: not past retention yet
    assert aside.exists()
    clock.now = T0 + timedelta(days=90)
    wait_for(lambda: not aside.exists(), "deleted the log set aside")
    log.close()
    assert [r[2] for r in rows(db, "questions")] == ["récente"]


def test_a_daemon_with_its_log_off_still_deletes_the_vaults_questions_past_retention(tmp_path, caplog):
    """`--question-log off` after weeks logged: the questions the vault's log holds stayed there,
    as written, for ever; only a log the daemon wrote was purged. A start (`tend_old_logs`) and
    then the daily tending delete them once past retention, and the file when none is left."""
    own = tmp_path / "q.sqlite3"
    with QuestionLog(own, clock=Clock(T0 - timedelta(days=91))) as log:
        log.record("écrivez-moi à jean@free.fr", result(("a", 5.0, ("bm25",))))
    with QuestionLog(own, clock=Clock(T0 - timedelta(days=10))) as log:
        log.record("récente", result(("a", 5.0, ("bm25",))))
    caplog.set_level(logging.INFO, logger="grasbot.questionlog")
    questionlog.tend_old_logs(None, 90, clock=Clock(), unwritten=own)  # at start
    with contextlib.closing(sqlite3.connect(own)) as conn:  # closed: a connection left open keeps the file
        assert conn.execute("SELECT question FROM questions").fetchall() == [("récente",)]
    assert "1 question(s) de plus de 90 jours supprimées" in caplog.text
    clock = Clock(T0)
    log = QuestionLog(None, retention_days=90, clock=clock, purge_check=0.01, unwritten=own)
    assert not log.enabled and log.status() == {"state": "off"}
    clock.now = T0 + timedelta(days=81)  # « récente » past retention, a day after the start
    wait_for(lambda: not own.exists(), "deleted the vault's log no daemon writes")
    log.close()
    assert "aucune de ses questions n'est des 90 derniers jours, supprimé" in caplog.text


def test_a_question_whose_rows_cannot_be_made_is_not_logged_and_the_log_stays_on(tmp_path, monkeypatch, caplog):
    """A visitor's text goes through `redact`'s patterns: one that raised on it (« K », the Kelvin
    sign, in an IBAN once did) turned the log off for the daemon's life. That question is not
    logged, counted in `dropped`, said once; the next ones are."""
    real = questionlog.redact

    def breaks(text):
        if "casse" in text:
            raise ValueError("invalid literal for int() with base 36: 'K'")
        return real(text)

    monkeypatch.setattr(questionlog, "redact", breaks)
    with QuestionLog(tmp_path / "q.sqlite3", clock=Clock()) as log:
        log.record("ça casse ?", result(grounded=False))
        log.record("ça casse encore ?", result(grounded=False))
        log.record("et marie@free.fr ?", result(grounded=False))
        assert log.status() == {"state": "on", "dropped": 2}
    assert [r[2] for r in rows(tmp_path / "q.sqlite3", "questions")] == ["et [e-mail] ?"]
    assert caplog.text.count("les lignes d'une question n'ont pas pu être faites") == 1


def test_grasbot_log_on_an_older_grasbots_log_prints_no_raw_contact_and_writes_nothing(tmp_path):
    """`grasbot log` only reads: on a log no daemon has cleaned yet, it prints what it reads
    through `redact`, and leaves the file as it is."""
    db = tmp_path / "q.sqlite3"
    older_grasbots_log(db, at=datetime.now(UTC))
    before = db.read_bytes()
    code, text = run_log(["log", "--question-log", str(db)])
    assert code == 0 and "« écrivez à [e-mail] »" in text and "« appelez-moi au [téléphone] pour l'adhésion 2024 »" in text
    assert "@" not in text and "06 12" not in text
    code, text = run_log(["log", "--question-log", str(db), "--json"])
    assert [q["question"] for q in json.loads(text)["ungrounded"]] == OLD_REDACTED[::-1]
    assert db.read_bytes() == before and "redacted" not in columns(db)


def test_a_real_visitor_search_is_logged_with_its_signals(note_writer, tmp_path):
    note_writer("grasbot.md", "title: GrasBot\nvisibility: public", "GrasBot répond aux visiteurs à partir des notes.")
    note_writer("secret.md", "title: Carnet\nvisibility: private", "GrasBot et mes notes privées.")
    bot = make_bot(note_writer.root)
    db = tmp_path / "q.sqlite3"
    with QuestionLog(db, clock=Clock()) as log:
        log.record("c'est quoi GrasBot ?", bot.search("c'est quoi GrasBot ?", audience="visitor"))
        [logged] = log.questions_ending_on("grasbot")
    assert logged.question == "c'est quoi GrasBot ?" and logged.grounded
    assert [(r.slug, r.signals) for r in logged.results] == [("grasbot", ("bm25", "title"))]
    assert "carnet" not in json.dumps(rows(db, "results")).lower()


# ---------------------------------------------------------------- reading


def filled_log(tmp_path) -> tuple[QuestionLog, Clock]:
    clock = Clock()
    log = QuestionLog(tmp_path / "q.sqlite3", clock=clock)
    entries = [
        ("nulle part", result(grounded=False)),
        ("presque", result(("grasbot", 2.0, ("bm25",)), grounded=False)),
        ("par alias", result(("grasbot", 15.0, ("alias", "bm25")))),
        ("par le texte", result(("grasbot", 5.0, ("bm25",)), ("velo", 1.0, ("graph",)))),
        ("par un lien", result(("jardin", 4.5, ("graph",)), ("velo", 4.0, ("bm25", "tag")))),
        ("par le texte, note prioritaire", result(("velo", 5.5, ("bm25", "priority", "hub")))),
        ("par un tag", result(("velo", 9.0, ("tag", "bm25")))),
    ]
    for i, (question, res) in enumerate(entries):
        clock.now = T0 + timedelta(minutes=i)
        log.record(question, res)
    return log, clock


def test_recent_ungrounded_newest_first(tmp_path):
    log, _ = filled_log(tmp_path)
    found = log.recent_ungrounded(10)
    assert [q.question for q in found] == ["presque", "nulle part"]
    assert found[0].first.slug == "grasbot" and found[1].first is None
    assert [q.question for q in log.recent_ungrounded(1)] == ["presque"]


def test_weakly_found_is_bm25_or_graph_only(tmp_path):
    log, _ = filled_log(tmp_path)
    assert [q.question for q in log.weakly_found(10)] == ["par le texte, note prioritaire", "par un lien", "par le texte"]
    assert [q.question for q in log.weakly_found(2)] == ["par le texte, note prioritaire", "par un lien"]
    assert is_weak(["bm25", "graph"]) and not is_weak(["bm25", "answers"]) and not is_weak(["priority"])


def test_days_window_and_questions_ending_on(tmp_path):
    log, clock = filled_log(tmp_path)
    clock.now = T0 + timedelta(days=3)
    log.record("plus tard", result(("grasbot", 1.0, ("bm25",)), grounded=False))
    assert [q.question for q in log.recent_ungrounded(10, days=1)] == ["plus tard"]
    assert [q.question for q in log.recent_ungrounded(10, days=5)] == ["plus tard", "presque", "nulle part"]
    # first result only: « par le texte » ends on grasbot, « par un lien » does not end on velo
    assert [q.question for q in log.questions_ending_on("grasbot")] == ["plus tard", "par le texte", "par alias", "presque"]
    assert [q.question for q in log.questions_ending_on("velo")] == ["par un tag", "par le texte, note prioritaire"]
    assert log.questions_ending_on("inconnue") == []


# ---------------------------------------------------------------- retention


def test_retention_on_open_deletes_old_rows_and_keeps_recent(tmp_path):
    db = tmp_path / "q.sqlite3"
    clock = Clock(T0 - timedelta(days=100))
    with QuestionLog(db, retention_days=90, clock=clock) as log:
        log.record("vieille question", result(("a", 5.0, ("bm25",))))
        clock.now = T0 - timedelta(days=89)
        log.record("question récente", result(("b", 5.0, ("bm25",))))
    with QuestionLog(db, retention_days=90, clock=Clock(T0)) as log:
        assert [q.question for q in log.recent_ungrounded(10) + log.weakly_found(10)] == ["question récente"]
    assert rows(db, "results") == [(2, 1, "b", "notes/b.md", 5.0, "bm25")]  # the old one's results went too


def test_retention_while_running_at_most_once_a_day(tmp_path):
    db = tmp_path / "q.sqlite3"
    clock = Clock(T0)
    log = QuestionLog(db, retention_days=90, clock=clock)  # purges at T0
    log.record("A", result(("a", 5.0, ("bm25",))))
    clock.now = T0 + timedelta(days=90, hours=1)
    log.record("B", result(("b", 5.0, ("bm25",))))  # a day since the last purge: A is gone
    assert [q.question for q in log.weakly_found(10)] == ["B"]
    purged_at = clock.now
    # The clock is injected, so a row can be stamped in the past: C is 90 days old an hour later.
    clock.now = purged_at - timedelta(days=90) + timedelta(minutes=30)
    log.record("C", result(("c", 5.0, ("bm25",))))
    clock.now = purged_at + timedelta(hours=2)
    log.record("D", result(("d", 5.0, ("bm25",))))  # C is out of retention, but the last purge was 2 h ago
    assert [q.question for q in log.weakly_found(10)] == ["D", "C", "B"]
    clock.now = purged_at + timedelta(days=1)
    log.record("E", result(("e", 5.0, ("bm25",))))
    assert [q.question for q in log.weakly_found(10)] == ["E", "D", "B"]
    log.close()


def test_a_quiet_log_deletes_old_rows_without_a_write(tmp_path):
    """A site no visitor asks anything of for weeks: its writer still looks at the clock (every
    `purge_check`), and the questions past retention go; they stayed until the next question."""
    db = tmp_path / "q.sqlite3"
    clock = Clock(T0)
    log = QuestionLog(db, retention_days=90, clock=clock, purge_check=0.01)
    log.record("ancienne", result(("a", 5.0, ("bm25",))))
    clock.now = T0 + timedelta(days=45)
    log.record("récente", result(("b", 5.0, ("bm25",))))
    clock.now = T0 + timedelta(days=91)  # nothing is written from here on
    # read with another connection: a read through the log could purge on its own
    wait_for(lambda: [r[2] for r in rows(db, "questions")] == ["récente"], "deleted the question past retention")
    assert [r[2] for r in rows(db, "results")] == ["b"]
    log.close()


def test_retention_must_be_positive(tmp_path):
    with pytest.raises(ValueError, match="retention_days"):
        QuestionLog(tmp_path / "q.sqlite3", retention_days=0)


def test_a_flood_of_questions_keeps_the_log_within_its_bound(tmp_path):
    """Retention bounded the log by days, not by size: one visitor at the rate limit (20
    questions a minute; 100 from an IPv6 /48, which a tunnel broker gives for free) asking one
    question again and again, answered from the answer cache at no cost to the model, wrote
    1.3 KB to the log each time, 37 MB a day (185 from a /48), kept 90 days: 3.3 GB on the
    owner's disk (16 GB), the disk the vault's cache, nginx's and the journal's logs share.
    The log keeps its newest `max_questions` (MAX_QUESTIONS by default), their results with them."""
    assert questionlog.MAX_QUESTIONS == 100_000
    db = tmp_path / "q.sqlite3"
    with QuestionLog(db, clock=Clock(), max_questions=50) as log:
        for i in range(40):
            log.record(f"question {i}", result(("a", 5.0, ("bm25",)), ("b", 1.0, ("bm25",))))
        for i in range(40, 130, 30):  # a batch of 30 at once, as the writer thread writes them
            batch = [questionlog._pending(T0, f"question {j}", result(("a", 5.0, ("bm25",)), ("b", 1.0, ("bm25",))), False) for j in range(i, i + 30)]
            with log._lock:
                log._insert(batch)
        assert log.count() == 50
    kept = rows(db, "questions")
    assert [r[2] for r in kept] == [f"question {i}" for i in range(80, 130)]  # the newest
    assert len(rows(db, "results")) == 100 and {r[0] for r in rows(db, "results")} == {r[0] for r in kept}
    with pytest.raises(ValueError, match="max_questions"):
        QuestionLog(tmp_path / "autre.sqlite3", max_questions=0)


# ---------------------------------------------------------------- failure never breaks a request


def test_unwritable_path_warns_once_and_turns_off(tmp_path, caplog):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the log's folder should be")
    with caplog.at_level(logging.WARNING, logger="grasbot.questionlog"):
        log = QuestionLog(blocker / "questions.sqlite3")
        log.record("bonjour", result(("a", 5.0, ("bm25",))))
        log.record("bonsoir", result(("a", 5.0, ("bm25",))))
    assert not log.enabled
    assert log.recent_ungrounded(10) == [] and log.weakly_found(10) == [] and log.count() == 0
    warnings = [r for r in caplog.records if r.name == "grasbot.questionlog"]
    assert len(warnings) == 1 and "not-a-folder" in warnings[0].getMessage()


def in_memory(log: QuestionLog) -> int:
    """The questions waiting in memory for the file (reads count them with those written)."""
    with log._queue:
        return len(log._pending)


def read_only_connection(log: QuestionLog, db) -> None:
    """What a file system remounted read-only, or a file made read-only and opened again, looks
    like to the log's connection: SQLite refuses every write (SQLITE_READONLY). A permission
    taken away leaves the descriptors the connection already holds writable, so a test must
    swap the connection to see a write fail."""
    with log._lock:
        log._conn.close()
        log._conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, check_same_thread=False, isolation_level=None)


def test_a_log_made_read_only_while_the_daemon_runs_keeps_its_questions_until_writable(tmp_path, caplog):
    """A file system remounted read-only while the daemon ran turned the log off for the
    daemon's life, the questions of the failed write and every later one lost. They wait,
    and the file is opened again every REOPEN_EVERY, as one that could not be opened at start."""
    db = tmp_path / "q.sqlite3"
    clock = Clock()
    log = QuestionLog(db, clock=clock, batch_wait=60)
    log.record("avant", result(("a", 5.0, ("bm25",))))
    caplog.set_level(logging.DEBUG, logger="grasbot.questionlog")
    with read_only_file(db):
        read_only_connection(log, db)
        log.submit("pendant 1", result(("a", 5.0, ("bm25",))))
        log.record("pendant 2", result(("b", 4.0, ("bm25",))), followup=True)
        assert log.stalled and log.failure == "impossible d'écrire dans le fichier : attempt to write a readonly database"
        clock.now += REOPEN_EVERY
        log.record("pendant 3", result(grounded=False))  # opened again: still read-only
        assert log.stalled and in_memory(log) == 3 and log.count() == 4
    clock.now += REOPEN_EVERY
    log.record("après", result(("c", 3.0, ("graph",))))
    assert not log.stalled and log.failure is None and log.count() == 5 and in_memory(log) == 0
    log.close()
    logged = [(r[0], r[2], r[3], r[4]) for r in rows(db, "questions")]
    assert logged == [(1, "avant", 1, 0), (2, "pendant 1", 1, 0), (3, "pendant 2", 1, 1), (4, "pendant 3", 0, 0), (5, "après", 1, 0)]
    loud = [(level, message) for level, message in said(caplog) if level != "DEBUG"]
    assert [level for level, _ in loud] == ["WARNING", "INFO"]
    assert (
        f"{db} : impossible d'écrire dans le fichier : attempt to write a readonly database ; jusqu'à 10000 questions sont gardées en attendant" in loud[0][1]
    )
    assert "ouvert ; les 4 question(s) gardées en attendant sont écrites" in loud[1][1]


def _log_on_a_full_disk(tmp_path):
    """A log that took one question, « avant », then no more room (SQLite's own "database or
    disk is full"), and 20 questions of some 7,500 characters kept meanwhile: (file, clock, log,
    the file's pages)."""
    db = tmp_path / "q.sqlite3"
    clock = Clock()
    log = QuestionLog(db, clock=clock, batch_wait=60)
    log.record("avant", result(("a", 5.0, ("bm25",))))
    pages = log._conn.execute("PRAGMA page_count").fetchone()[0]
    log._conn.execute(f"PRAGMA max_page_count={pages}")
    for i in range(20):
        log.record(f"pendant {i} " + "mot " * 1500, result(("a", 5.0, ("bm25",))))
    return db, clock, log, pages


def test_a_full_disk_leaves_no_cut_vault_path_beside_a_log(tmp_path):
    """The file beside a log that names its vault was left cut short on a full disk
    (`/home/me/Coff`): every other vault's daemon then said at start that this log's vault
    « is no longer there », at a path that never was, and to move its log over its own."""
    import resource
    import signal

    log = tmp_path / "state" / "grasbot" / "aaaa" / "questions.sqlite3"
    log.parent.mkdir(parents=True)
    log.touch()
    vault = tmp_path / "Coffre de notes"
    vault.mkdir()
    said = os.fsencode(os.path.realpath(vault))
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    on_too_large = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails, as on a full disk
    resource.setrlimit(resource.RLIMIT_FSIZE, (len(said) - 4, hard))
    try:
        questionlog.note_the_vault(log, vault)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, on_too_large)
    assert questionlog.files_of_vaults_gone(tmp_path / "state" / "grasbot" / "bbbb" / "questions.sqlite3") == []
    questionlog.note_the_vault(log, vault)  # room again
    assert (log.parent / questionlog.VAULT_FILE).read_bytes() == said


def test_a_full_disk_keeps_its_questions_until_there_is_room_again(tmp_path, caplog):
    """A full disk dropped the batch it refused, and every question until there was room."""
    caplog.set_level(logging.INFO, logger="grasbot.questionlog")
    db, clock, log, _ = _log_on_a_full_disk(tmp_path)
    assert log.enabled and log.stalled and log.failure == "impossible d'écrire dans le fichier : database or disk is full"
    log._conn.execute("PRAGMA max_page_count=1000000")  # room again
    log.record("pas encore réessayé", result(("a", 5.0, ("bm25",))))
    assert log.count() == 22 and in_memory(log) == 21  # written again in REOPEN_EVERY, not at every question
    clock.now += REOPEN_EVERY
    log.record("après", result(("a", 5.0, ("bm25",))))
    log.close()
    logged = [r[2] for r in rows(db, "questions")]
    assert logged == ["avant", *(f"pendant {i}" + " mot" * 1500 for i in range(20)), "pas encore réessayé", "après"]
    assert [level for level, _ in said(caplog)] == ["WARNING", "INFO"]
    assert "impossible d'écrire dans le fichier : database or disk is full ; jusqu'à 10000 questions sont gardées en attendant" in said(caplog)[0][1]
    assert "les 22 question(s) gardées en attendant sont écrites" in said(caplog)[1][1]


def test_a_disk_with_room_for_part_of_the_questions_kept_takes_the_oldest_that_fit(tmp_path):
    """A batch was written all or nothing: once a full disk had room for most of the questions
    kept meanwhile but not all, none was written, and a stop lost every one."""
    db, clock, log, pages = _log_on_a_full_disk(tmp_path)
    assert log.stalled and in_memory(log) == 20
    log._conn.execute(f"PRAGMA max_page_count={pages + 12}")  # room for some of them, not all
    clock.now += REOPEN_EVERY
    log.count()  # a read writes what is queued first
    on_disk = [r[2] for r in rows(db, "questions")]
    assert on_disk[0] == "avant" and 1 < len(on_disk) < 21  # the oldest that fit, in order
    assert on_disk[1:] == [f"pendant {i}" + " mot" * 1500 for i in range(len(on_disk) - 1)]
    assert log.stalled and in_memory(log) == 21 - len(on_disk)  # the rest wait, each once
    assert log.count() == 21
    log._conn.execute("PRAGMA max_page_count=1000000")
    clock.now += REOPEN_EVERY
    log.close()
    assert [r[2] for r in rows(db, "questions")] == ["avant", *(f"pendant {i}" + " mot" * 1500 for i in range(20))]


def test_questions_kept_for_a_file_that_refuses_writes_are_bounded_oldest_first(tmp_path, caplog):
    db = tmp_path / "q.sqlite3"
    log = QuestionLog(db, clock=Clock(), batch_wait=60, max_pending=3)
    log.record("avant", result(("a", 5.0, ("bm25",))))
    pages = log._conn.execute("PRAGMA page_count").fetchone()[0]
    log._conn.execute(f"PRAGMA max_page_count={pages}")
    caplog.set_level(logging.INFO, logger="grasbot.questionlog")
    for i in range(6):
        log.record(f"pendant {i} " + "mot " * 1500, result(("a", 5.0, ("bm25",))))
    log._conn.execute("PRAGMA max_page_count=1000000")
    log.close()  # the last write is tried whatever the time
    assert [r[2].split(" mot")[0] for r in rows(db, "questions")] == ["avant", "pendant 3", "pendant 4", "pendant 5"]
    assert [level for level, _ in said(caplog)] == ["WARNING", "WARNING", "INFO"]
    assert "3 questions attendent le fichier ; les plus anciennes sont désormais écartées" in said(caplog)[1][1]
    assert "les 3 question(s) gardées en attendant sont écrites (3 plus anciennes ont été écartées)" in said(caplog)[2][1]


def test_a_question_the_file_was_busy_for_is_written_with_the_next(tmp_path):
    """Another process (a second daemon on the file, the owner's `sqlite3`) held the write
    lock longer than BUSY_TIMEOUT_MS: the question was dropped."""
    db = tmp_path / "q.sqlite3"
    log = QuestionLog(db, clock=Clock())
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    log.record("pendant", result(("a", 5.0, ("bm25",))))
    other.execute("ROLLBACK")
    other.close()
    assert rows(db, "questions") == []
    log.record("après", result(("a", 5.0, ("bm25",))))
    assert log.enabled and [r[2] for r in rows(db, "questions")] == ["pendant", "après"]
    log.close()


def test_a_file_busy_when_the_daemon_starts_keeps_the_log_on(tmp_path):
    """Another process (a second daemon purging, a backup, the owner in `sqlite3`) held the
    write lock while the daemon opened the log: its purge on open was busy, and the log was
    turned off for the daemon's whole life ("impossible d'ouvrir le fichier : database is locked")."""
    db = tmp_path / "q.sqlite3"
    clock = Clock()
    QuestionLog(db, clock=clock).close()  # the log exists, in WAL mode
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    log = QuestionLog(db, retention_days=1, clock=clock)
    other.execute("ROLLBACK")
    other.close()
    assert log.enabled
    log.record("après", result(("a", 5.0, ("bm25",))))
    assert [r[2] for r in rows(db, "questions")] == ["après"]
    clock.now += timedelta(days=2)  # the purge put off is done with a later write
    log.record("deux jours après", result(("a", 5.0, ("bm25",))))
    assert [r[2] for r in rows(db, "questions")] == ["deux jours après"]
    log.close()


def test_a_log_deleted_while_the_daemon_runs_is_started_again(tmp_path, caplog):
    """`rm questions.sqlite3*` while the daemon ran: SQLite went on writing into the deleted
    file, so every later question was lost, without a word, until a restart."""
    db = tmp_path / "q.sqlite3"
    log = QuestionLog(db, clock=Clock(), batch_wait=0)
    log.record("avant", result(("a", 5.0, ("bm25",))))
    for path in tmp_path.glob("q.sqlite3*"):
        path.unlink()
    log.submit("après 1", result(("a", 5.0, ("bm25",))))
    log.record("après 2", result(("a", 5.0, ("bm25",))))
    assert log.enabled and log.count() == 2
    log.close()
    assert [r[2] for r in rows(db, "questions")] == ["après 1", "après 2"]
    said = [r.getMessage() for r in caplog.records if r.name == "grasbot.questionlog"]
    assert len(said) == 1 and "supprimé ou remplacé" in said[0]


def said(caplog) -> list[tuple[str, str]]:
    return [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "grasbot.questionlog"]


def test_a_log_locked_when_the_daemon_starts_keeps_its_questions_until_it_opens(tmp_path, caplog):
    """Another daemon making the file, or the owner's `sqlite3` holding it, when this one
    started: the log was turned off for the daemon's life ("impossible d'ouvrir le fichier : database is locked"),
    every later question lost. The questions wait in the queue and the file is tried again,
    every REOPEN_EVERY, not at every question."""
    db = tmp_path / "q.sqlite3"
    clock = Clock()
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    caplog.set_level(logging.INFO, logger="grasbot.questionlog")
    log = QuestionLog(db, clock=clock, batch_wait=60)
    assert not log.enabled and log.waiting and "locked" in log.failure
    log.submit("pendant 1", result(("a", 5.0, ("bm25",))))
    log.record("pendant 2", result(("b", 4.0, ("bm25",))), followup=True)
    assert log.count() == 2 and in_memory(log) == 2 and log.waiting
    other.execute("COMMIT")
    other.close()
    clock.now += REOPEN_EVERY / 2
    log.submit("pendant 3", result(grounded=False))
    assert log.count() == 3 and in_memory(log) == 3 and log.waiting  # not tried again yet: not on every question
    clock.now += REOPEN_EVERY / 2
    log.submit("après", result(("c", 3.0, ("graph",))))
    assert log.count() == 4 and in_memory(log) == 0 and log.enabled and not log.waiting and log.failure is None
    log.close()
    logged = [(r[0], r[2], r[3], r[4]) for r in rows(db, "questions")]
    assert logged == [(1, "pendant 1", 1, 0), (2, "pendant 2", 1, 1), (3, "pendant 3", 0, 0), (4, "après", 1, 0)]
    assert [(r[0], r[2]) for r in rows(db, "results")] == [(1, "a"), (2, "b"), (4, "c")]
    assert [level for level, _ in said(caplog)] == ["WARNING", "INFO"]
    assert "impossible d'ouvrir le fichier : database is locked" in said(caplog)[0][1] and "réessayé toutes les 30 s" in said(caplog)[0][1]
    assert "ouvert ; les 4 question(s) gardées en attendant sont écrites" in said(caplog)[1][1]


def test_a_folder_not_writable_when_the_daemon_starts_is_tried_again(tmp_path, caplog):
    """A state folder on a mount that comes up late, or made writable after the daemon started."""
    state = tmp_path / "state"
    state.mkdir()
    db = state / "q.sqlite3"
    clock = Clock()
    with read_only_folder(state):
        log = QuestionLog(db, clock=clock, batch_wait=60)
        assert log.waiting and log.failure.startswith("impossible d'ouvrir le fichier : ") and str(db) in log.failure
        log.submit("pendant", result(("a", 5.0, ("bm25",))))
        clock.now += REOPEN_EVERY
        assert log.count() == 1 and in_memory(log) == 1 and log.waiting  # tried again: still not writable
        log.submit("encore pendant", result(("a", 5.0, ("bm25",))))
    clock.now += REOPEN_EVERY
    assert log.count() == 2 and in_memory(log) == 0 and log.enabled
    log.close()
    assert [r[2] for r in rows(db, "questions")] == ["pendant", "encore pendant"]
    assert db.stat().st_mode & 0o777 == 0o600


def test_questions_kept_for_a_log_that_cannot_open_are_written_at_stop_if_it_can(tmp_path):
    """Stopped before the next try: the file is tried once more, so what waited is written."""
    db = tmp_path / "q.sqlite3"
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    log = QuestionLog(db, clock=Clock(), batch_wait=60)
    log.submit("pendant", result(("a", 5.0, ("bm25",))))
    other.execute("COMMIT")
    other.close()
    log.close()
    assert [r[2] for r in rows(db, "questions")] == ["pendant"]
    log.record("après l'arrêt", result(("a", 5.0, ("bm25",))))  # a closed log opens nothing again
    assert [r[2] for r in rows(db, "questions")] == ["pendant"]


def test_a_log_that_still_cannot_open_at_stop_says_what_it_loses(tmp_path, caplog):
    db = tmp_path / "q.sqlite3"
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    log = QuestionLog(db, clock=Clock(), batch_wait=60, max_pending=2)
    caplog.set_level(logging.WARNING, logger="grasbot.questionlog")
    for i in range(4):
        log.submit(f"pendant {i}", result(("a", 5.0, ("bm25",))))
    log.close()
    other.execute("COMMIT")
    other.close()
    messages = [m for _, m in said(caplog)]
    assert len(messages) == 3 and "impossible d'ouvrir le fichier : database is locked" in messages[0]
    assert "2 questions attendent le fichier ; les plus anciennes sont désormais écartées" in messages[1]
    assert "impossible d'ouvrir le fichier : database is locked ; 2 question(s) posées entre-temps ne sont pas enregistrées" in messages[2]


def reads(log: QuestionLog) -> tuple:
    """What every read of the log returns, by question text."""
    return (
        log.count(),
        [q.question for q in log.recent_ungrounded(10)],
        [q.question for q in log.weakly_found(10)],
        [q.question for q in log.questions_ending_on("a")],
        [q.question for q in log.questions_ending_on("a", limit=1)],
    )


def test_reads_see_the_questions_waiting_for_a_file_that_cannot_open_and_each_once_when_written(tmp_path):
    """While the file could not be opened, every read (the alias suggestions, the owner's
    counts) found nothing: the visitors' questions of that time were in memory only."""
    db = tmp_path / "q.sqlite3"
    clock = Clock()
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    log = QuestionLog(db, clock=clock, batch_wait=60)
    log.submit("par le texte", result(("a", 5.0, ("bm25",))))
    log.submit("sans réponse", result(("a", 1.0, ("bm25",)), grounded=False))
    log.submit("par son titre", result(("b", 5.0, ("title",)), ("a", 2.0, ("bm25",))))
    expected = (3, ["sans réponse"], ["par le texte"], ["sans réponse", "par le texte"], ["sans réponse"])
    assert log.waiting and reads(log) == expected
    [waiting] = log.weakly_found(10, days=1)
    assert waiting.to_dict() == {
        "asked_at": "2025-03-01T12:00:00Z",
        "question": "par le texte",
        "grounded": True,
        "followup": False,
        "results": [{"rank": 1, "slug": "a", "path": "notes/a.md", "score": 5.0, "signals": ["bm25"]}],
    }
    other.execute("COMMIT")
    other.close()
    clock.now += REOPEN_EVERY
    assert reads(log) == expected and log.enabled and in_memory(log) == 0  # written, counted once
    log.close()
    assert [r[2] for r in rows(db, "questions")] == ["par le texte", "sans réponse", "par son titre"]


def test_reads_see_the_questions_written_and_those_waiting_for_a_file_made_read_only(tmp_path):
    db = tmp_path / "q.sqlite3"
    log = QuestionLog(db, clock=Clock(), batch_wait=60)
    log.record("avant", result(("a", 5.0, ("bm25",))))
    with read_only_file(db):
        read_only_connection(log, db)
        log.record("pendant", result(("a", 4.0, ("bm25",)), grounded=False))
        assert log.stalled and not log.enabled and in_memory(log) == 1
        assert reads(log) == (2, ["pendant"], ["avant"], ["pendant", "avant"], ["pendant"])
    log.close()
    assert [r[2] for r in rows(db, "questions")] == ["avant", "pendant"]


def test_while_the_file_cannot_open_the_oldest_questions_go_first(tmp_path, caplog):
    db = tmp_path / "q.sqlite3"
    clock = Clock()
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    caplog.set_level(logging.INFO, logger="grasbot.questionlog")
    log = QuestionLog(db, clock=clock, batch_wait=60, max_pending=3)
    for i in range(6):
        log.submit(f"question {i}", result(("a", 5.0, ("bm25",))))
    other.execute("COMMIT")
    other.close()
    clock.now += REOPEN_EVERY
    assert log.count() == 3
    log.close()
    assert [r[2] for r in rows(db, "questions")] == ["question 3", "question 4", "question 5"]
    assert [level for level, _ in said(caplog)] == ["WARNING", "WARNING", "INFO"]  # cannot open, dropping (once), opened
    assert "les 3 question(s) gardées en attendant sont écrites (3 plus anciennes ont été écartées)" in said(caplog)[2][1]


def test_a_newer_grasbots_log_stays_off(tmp_path, caplog):
    """Waiting would not change its schema: the log is off for good, said once, no question kept."""
    db = tmp_path / "q.sqlite3"
    version = SCHEMA_VERSION + 1
    with sqlite3.connect(db) as conn:
        conn.execute(f"PRAGMA user_version={version}")
    conn.close()
    clock = Clock()
    caplog.set_level(logging.DEBUG, logger="grasbot.questionlog")
    log = QuestionLog(db, clock=clock, batch_wait=60)
    assert not log.enabled and not log.waiting
    assert log.failure == f"impossible d'ouvrir le fichier : version de schéma {version}, ce GrasBot connaît la version 1"
    log.submit("bonjour", result(("a", 5.0, ("bm25",))))
    log.record("bonsoir", result(("a", 5.0, ("bm25",))))
    clock.now += REOPEN_EVERY * 10
    assert log.count() == 0 and log._pending == [] and log._writer is None
    log.close()
    assert len(said(caplog)) == 1 and rows(db, "sqlite_master") == []


@pytest.mark.parametrize("version", [0, SCHEMA_VERSION + 1])
def test_the_daemon_leaves_a_database_that_is_not_its_log_as_it_was(tmp_path, version):
    """GRASBOT_QUESTION_LOG naming another program's database by mistake: the daemon switched it
    to WAL and added GrasBot's tables to it (only `grasbot log` left it alone); a newer
    GrasBot's log was switched to WAL before it was refused."""
    db = tmp_path / "factures.sqlite3"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
        conn.execute(f"PRAGMA user_version={version}")
    conn.close()
    before = db.read_bytes()
    log = QuestionLog(db, clock=Clock())
    assert not log.enabled and not log.waiting
    cause = "ce n'est pas un journal de questions de GrasBot" if version == 0 else f"version de schéma {version}, ce GrasBot connaît la version 1"
    assert log.failure == f"impossible d'ouvrir le fichier : {cause}"
    log.close()
    assert db.read_bytes() == before and columns(db) == {"invoices": ["id"]}


def test_a_log_turned_off_keeps_nothing(tmp_path):
    log = QuestionLog(None)
    log.record("bonjour", result(("a", 5.0, ("bm25",))))
    assert not log.enabled and log.questions_ending_on("a") == []
    assert parse_log_path("off") is None and parse_log_path("") is None
    assert parse_log_path("~/q.sqlite3").name == "q.sqlite3" and "~" not in str(parse_log_path("~/q.sqlite3"))


def test_default_path_follows_xdg_state_home(tmp_path):
    key = vault_key(tmp_path / "vault")
    assert default_log_path({"XDG_STATE_HOME": str(tmp_path)}, vault=tmp_path / "vault") == tmp_path / "grasbot" / key / "questions.sqlite3"
    assert default_log_path({}, vault=tmp_path / "vault").parts[-5:] == (".local", "state", "grasbot", key, "questions.sqlite3")
    assert default_log_path({}, vault=None).parts[-4:] == (".local", "state", "grasbot", "questions.sqlite3")  # an older GrasBot's


def test_settings_built_directly_log_to_their_own_vault(tmp_path, monkeypatch):
    """`Settings(vault_dir=…)`, as a program using the package builds it, logs its visitors'
    questions beside that vault's, not the bundled vault's (whose alias suggestions they fed)."""
    from grasbot import Settings

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    jardin = Settings(vault_dir=tmp_path / "jardin")
    assert jardin.question_log == tmp_path / "grasbot" / vault_key(tmp_path / "jardin") / "questions.sqlite3"
    assert Settings().question_log == Settings.load({"XDG_STATE_HOME": str(tmp_path)}).question_log != jardin.question_log
    assert Settings(vault_dir=tmp_path / "jardin", question_log=None).question_log is None


def test_records_from_many_threads(tmp_path):
    log = QuestionLog(tmp_path / "q.sqlite3")

    def ask(n: int) -> None:
        for i in range(25):
            log.record(f"question {n}-{i}", result(("a", 5.0, ("bm25",))))

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert log.enabled and log.count() == 100
    assert len({q.question for q in log.weakly_found(200)}) == 100
    log.close()


# ---------------------------------------------------------------- submit: queued, written in batches


def count_commits(log: QuestionLog) -> list[str]:
    """The COMMITs the log's connection runs from now on, whichever thread runs them."""
    commits: list[str] = []
    log._conn.set_trace_callback(lambda sql: commits.append(sql) if sql.strip().upper() == "COMMIT" else None)
    return commits


def wait_for(predicate, what: str) -> None:
    """Wait for the writer thread (a deadline against a hang, not a speed assertion)."""
    deadline = threading.Event()
    for _ in range(1000):
        if predicate():
            return
        deadline.wait(0.01)
    raise AssertionError(f"the writer thread never {what}")


def test_a_read_right_after_submit_sees_the_question(tmp_path):
    # a long batch_wait: the writer has not written yet, so the read itself must write the queue out
    with QuestionLog(tmp_path / "q.sqlite3", clock=Clock(), batch_wait=60) as log:
        log.submit(" par le texte ", result(("grasbot", 5.0, ("bm25", "graph"))), followup=True)
        [logged] = log.questions_ending_on("grasbot")
        assert (logged.question, logged.grounded, logged.followup) == ("par le texte", True, True)
        assert [(r.rank, r.slug, r.path, r.score, r.signals) for r in logged.results] == [(1, "grasbot", "notes/grasbot.md", 5.0, ("bm25", "graph"))]
        log.submit("nulle part", result(grounded=False))
        assert [q.question for q in log.recent_ungrounded(10)] == ["nulle part"]
        log.submit("par un lien", result(("velo", 1.0, ("graph",))))
        assert [q.question for q in log.weakly_found(10)] == ["par un lien", "par le texte"]
        log.submit("encore", result())
        assert log.count() == 4


def test_submit_and_record_keep_their_order(tmp_path):
    db = tmp_path / "q.sqlite3"
    with QuestionLog(db, clock=Clock(), batch_wait=60) as log:
        log.submit("d'abord", result(("a", 1.0, ("bm25",))))
        log.record("ensuite", result(("b", 2.0, ("bm25",))))
        log.submit("enfin", result(("c", 3.0, ("bm25",))))
    assert [(r[0], r[2]) for r in rows(db, "questions")] == [(1, "d'abord"), (2, "ensuite"), (3, "enfin")]
    assert [(r[0], r[2]) for r in rows(db, "results")] == [(1, "a"), (2, "b"), (3, "c")]


def test_many_submits_from_many_threads_land_in_one_transaction(tmp_path):
    log = QuestionLog(tmp_path / "q.sqlite3", batch_wait=60)
    commits = count_commits(log)

    def ask(n: int) -> None:
        for i in range(50):
            log.submit(f"question {n}-{i}", result(("a", 5.0, ("bm25",)), ("b", 1.0, ("graph",))))

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert commits == []  # all 200 wait in the queue
    assert log.enabled and log.count() == 200
    assert len(commits) == 1  # the read wrote them out: one transaction for 200 questions
    assert len({q.question for q in log.weakly_found(500)}) == 200
    assert len(commits) == 1  # nothing was left to write
    log.close()
    assert len(rows(tmp_path / "q.sqlite3", "results")) == 400


def test_a_batch_takes_a_few_statements_not_one_a_row(tmp_path, monkeypatch):
    """sqlite3 lets the GIL go at every SQLite step and `executemany` steps once a row: under
    load the writer waited for the event loop at every row and fell behind. A batch is now a
    few multi-row statements; with ROWS_PER_STATEMENT at 4, several, the last one short, and
    nothing lost or mixed."""
    from grasbot.store import questionlog as _questionlog

    monkeypatch.setattr(_questionlog, "ROWS_PER_STATEMENT", 4)
    db = tmp_path / "q.sqlite3"
    inserts: list[str] = []
    with QuestionLog(db, clock=Clock(), batch_wait=60) as log:
        log._conn.set_trace_callback(lambda sql: inserts.append(sql) if sql.startswith("INSERT") else None)
        for i in range(7):  # 7 question rows: 2 statements; 21 result rows: 6 statements
            log.submit(f"question {i}", result((f"a{i}", 3.0, ("alias", "bm25")), (f"b{i}", 2.0, ("bm25",)), (f"c{i}", 1.0, ("graph",))))
        assert log.count() == 7
    assert len(inserts) == 8
    assert [(r[0], r[2], r[3], r[4]) for r in rows(db, "questions")] == [(i + 1, f"question {i}", 1, 0) for i in range(7)]
    assert rows(db, "results") == [
        (i + 1, rank, f"{slug}{i}", f"notes/{slug}{i}.md", score, signals)
        for i in range(7)
        for rank, slug, score, signals in ((1, "a", 3.0, "alias,bm25"), (2, "b", 2.0, "bm25"), (3, "c", 1.0, "graph"))
    ]


def test_a_large_batch_is_two_statements(tmp_path):
    """200 questions and their 400 results: one statement each, whatever the batch holds up to
    ROWS_PER_STATEMENT rows."""
    log = QuestionLog(tmp_path / "q.sqlite3", batch_wait=60)
    inserts: list[str] = []
    log._conn.set_trace_callback(lambda sql: inserts.append(sql) if sql.startswith("INSERT") else None)
    for i in range(200):
        log.submit(f"question {i}", result(("a", 5.0, ("bm25",)), ("b", 1.0, ("graph",))))
    assert log.count() == 200
    log.close()
    assert len(inserts) == 2
    assert len(rows(tmp_path / "q.sqlite3", "results")) == 400


def test_the_writer_thread_writes_in_the_background(tmp_path):
    db = tmp_path / "q.sqlite3"
    log = QuestionLog(db, batch_wait=0.05)
    commits = count_commits(log)
    for i in range(20):
        log.submit(f"question {i}", result(("a", 5.0, ("bm25",))))
    # read with another connection, as `grasbot log` does: only the writer thread can have written
    wait_for(lambda: len(rows(db, "questions")) == 20, "wrote the 20 questions")
    assert 1 <= len(commits) <= 20
    assert [r[2] for r in rows(db, "questions")] == [f"question {i}" for i in range(20)]
    log.close()


def test_close_writes_what_is_queued(tmp_path):
    db = tmp_path / "q.sqlite3"
    log = QuestionLog(db, clock=Clock(), batch_wait=60)
    for i in range(3):
        log.submit(f"question {i}", result(("a", 5.0, ("bm25",))))
    log.close()
    assert not log.enabled
    log.submit("après la fermeture", result(("a", 5.0, ("bm25",))))  # dropped, not raised
    with QuestionLog(db, clock=Clock()) as reopened:
        assert reopened.count() == 3
        assert [q.question for q in reopened.questions_ending_on("a")] == ["question 2", "question 1", "question 0"]


def test_a_background_write_the_file_refuses_is_kept_and_written_when_it_takes_writes(tmp_path, caplog):
    db = tmp_path / "q.sqlite3"
    log = QuestionLog(db, clock=Clock(), batch_wait=0.01)
    log.record("avant", result(("a", 5.0, ("bm25",))))
    read_only_connection(log, db)
    with caplog.at_level(logging.WARNING, logger="grasbot.questionlog"):
        log.submit("pendant", result(("a", 5.0, ("bm25",))))
        wait_for(lambda: log.stalled, "kept the batch for the file")
        log.submit("après", result(("a", 5.0, ("bm25",))))  # kept with it
        log.close()  # the file takes writes again: what waited is written
    warnings = [r for r in caplog.records if r.name == "grasbot.questionlog"]
    assert len(warnings) == 1 and "impossible d'écrire dans le fichier" in warnings[0].getMessage()
    assert warnings[0].threadName == "grasbot-questionlog"  # the writer thread met the failure
    assert [r[2] for r in rows(db, "questions")] == ["avant", "pendant", "après"]


def test_a_batch_the_file_was_busy_for_waits_for_the_next_write(tmp_path, caplog):
    db = tmp_path / "q.sqlite3"
    log = QuestionLog(db, clock=Clock(), batch_wait=60)
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    log.submit("pendant 1", result(("a", 5.0, ("bm25",))))
    log.submit("pendant 2", result(("a", 5.0, ("bm25",))))
    with caplog.at_level(logging.DEBUG, logger="grasbot.questionlog"):
        assert log.count() == 2 and in_memory(log) == 2  # the read tried to write the queue: busy, so the batch waits
    other.execute("ROLLBACK")
    other.close()
    assert any("busy, 2 question(s) kept for the next write, 0 not logged" in r.getMessage() for r in caplog.records)
    log.submit("après", result(("a", 5.0, ("bm25",))))
    assert log.enabled and log.count() == 3
    log.close()
    assert [r[2] for r in rows(db, "questions")] == ["pendant 1", "pendant 2", "après"]


def test_a_batch_the_file_is_still_busy_for_at_stop_is_said_lost(tmp_path, caplog):
    db = tmp_path / "q.sqlite3"
    log = QuestionLog(db, clock=Clock(), batch_wait=60, max_pending=2)
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    for i in range(2):
        log.submit(f"pendant {i}", result(("a", 5.0, ("bm25",))))
    log.record("pendant 2", result(("a", 5.0, ("bm25",))))  # busy: the queue keeps its 2 oldest
    caplog.set_level(logging.WARNING, logger="grasbot.questionlog")
    log.close()
    other.execute("ROLLBACK")
    other.close()
    assert [m for _, m in said(caplog)] == [
        f"journal des questions {db} : 2 questions attendent le fichier (un autre processus le tient) ; "
        "les suivantes ne sont pas enregistrées tant qu'elles ne sont pas écrites (/health les compte)",
        f"journal des questions {db} : un autre processus tient le fichier ; 2 question(s) posées entre-temps ne sont pas enregistrées",
    ]
    assert rows(db, "questions") == []


def test_the_queue_is_bounded(tmp_path, caplog):
    db = tmp_path / "q.sqlite3"
    log = QuestionLog(db, clock=Clock(), batch_wait=60, max_pending=3)
    with caplog.at_level(logging.DEBUG, logger="grasbot.questionlog"):
        for i in range(5):
            log.submit(f"question {i}", result(("a", 5.0, ("bm25",))))
    dropped = [r for r in caplog.records if r.name == "grasbot.questionlog" and ("pas enregistrées" in r.getMessage() or "not logged" in r.getMessage())]
    assert [r.levelno for r in dropped] == [logging.WARNING, logging.DEBUG]  # said once, not once a question
    assert "3 questions attendent le fichier (l'écriture est en retard)" in dropped[0].getMessage()
    assert log.status() == {"state": "on", "dropped": 2}
    assert log.count() == 3  # the first three; once written, the queue takes questions again
    log.submit("question 5", result(("a", 5.0, ("bm25",))))
    log.close()
    assert [r[2] for r in rows(db, "questions")] == ["question 0", "question 1", "question 2", "question 5"]
    with pytest.raises(ValueError, match="max_pending"):
        QuestionLog(None, max_pending=0)


def test_questions_a_full_queue_drops_while_another_process_holds_the_file_are_told_and_counted(tmp_path, caplog):
    """Another process held the file and the queue was full: each newer question was dropped
    with a debug line only, and /health said the log was on, nothing dropped."""
    db = tmp_path / "q.sqlite3"
    log = QuestionLog(db, clock=Clock(), batch_wait=60, max_pending=2)
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # the owner's `sqlite3`, a backup, a second daemon
    caplog.set_level(logging.INFO, logger="grasbot.questionlog")
    for i in range(2):
        log.submit(f"gardée {i}", result(("a", 5.0, ("bm25",))))
    assert log.count() == 2  # the read tried to write them: busy, they wait
    for i in range(3):
        log.submit(f"perdue {i}", result(("a", 5.0, ("bm25",))))
    assert log.status() == {"state": "waiting", "kept": 2, "dropped": 3, "error": "un autre processus tient le fichier"}
    other.execute("ROLLBACK")
    other.close()
    assert log.count() == 2 and log.status() == {"state": "on", "dropped": 3}
    log.submit("après", result(("a", 5.0, ("bm25",))))
    log.close()
    assert [r[2] for r in rows(db, "questions")] == ["gardée 0", "gardée 1", "après"]
    told = (
        "2 questions attendent le fichier (un autre processus le tient) ; "
        "les suivantes ne sont pas enregistrées tant qu'elles ne sont pas écrites (/health les compte)"
    )
    assert said(caplog) == [
        ("WARNING", f"journal des questions {db} : {told}"),
        ("INFO", f"journal des questions {db} : écrit à nouveau ; 3 question(s) posées pendant que la file était pleine n'ont pas été enregistrées"),
    ]


def test_submit_purges_old_rows_like_record(tmp_path):
    db = tmp_path / "q.sqlite3"
    clock = Clock(T0)
    log = QuestionLog(db, retention_days=90, clock=clock, batch_wait=60)  # purges at T0
    log.submit("A", result(("a", 5.0, ("bm25",))))
    assert log.count() == 1
    clock.now = T0 + timedelta(days=90, hours=1)
    log.submit("B", result(("b", 5.0, ("bm25",))))  # a day since the last purge: writing B purges A
    assert [q.question for q in log.weakly_found(10)] == ["B"]
    log.close()


def test_a_log_turned_off_ignores_submit(tmp_path):
    log = QuestionLog(None)
    log.submit("bonjour", result(("a", 5.0, ("bm25",))))
    assert not log.enabled and log.count() == 0 and log._writer is None
    log.close()


# ---------------------------------------------------------------- `grasbot log`


def run_log(argv: list[str]) -> tuple[int, str]:
    import argparse

    parser = argparse.ArgumentParser(prog="grasbot")
    add_log_parser(parser.add_subparsers(dest="command", required=True))
    out = io.StringIO()
    code = cmd_log(parser.parse_args(argv), out=out)
    return code, out.getvalue()


def test_grasbot_log_lists_ungrounded_and_weakly_found(tmp_path):
    db = tmp_path / "q.sqlite3"
    with QuestionLog(db) as log:  # the real clock: the command's --days counts back from now
        log.record("robot conversationnel ?", result(("grasbot", 0.8, ("bm25",)), grounded=False))
        log.record("classement des notes ?", result(("grasbot", 5.0, ("bm25",))))
        log.record("c'est quoi GrasBot ?", result(("grasbot", 13.0, ("title", "bm25"))))
    code, text = run_log(["log", "--question-log", str(db), "--json", "--days", "7"])
    assert code == 0
    report = json.loads(text)
    assert [q["question"] for q in report["ungrounded"]] == ["robot conversationnel ?"]
    assert [q["question"] for q in report["weakly_found"]] == ["classement des notes ?"]
    assert report["weakly_found"][0]["results"][0] == {
        "rank": 1,
        "slug": "grasbot",
        "path": "notes/grasbot.md",
        "score": 5.0,
        "signals": ["bm25"],
    }
    code, text = run_log(["log", "--question-log", str(db), "--limit", "5"])
    assert code == 0
    assert "« robot conversationnel ? »  la plus proche : grasbot (0.80; bm25)" in text
    assert "« classement des notes ? »  trouvée : grasbot (5.00; bm25)" in text
    assert "GrasBot ?" not in text


def test_grasbot_log_does_not_create_a_missing_log(tmp_path):
    db = tmp_path / "absent.sqlite3"
    code, text = run_log(["log", "--question-log", str(db), "--json"])
    assert code == 0 and json.loads(text)["ungrounded"] == [] and not db.exists()
    assert run_log(["log", "--question-log", str(db), "--limit", "0"])[0] == 2


def test_an_unreadable_log_is_kept_aside_and_a_new_one_started(tmp_path, caplog):
    """A log SQLite cannot read turned the log off for the daemon's life, its questions lost
    until someone moved the file by hand. It is renamed beside itself, untouched, and the
    daemon logs again."""
    db = tmp_path / "q.sqlite3"
    torn = b"SQLite format 3\x00" + b"not a database, " * 512  # a database's first bytes, then torn
    db.write_bytes(torn)
    caplog.set_level("WARNING", logger="grasbot.questionlog")
    log = QuestionLog(db, clock=lambda: datetime(2026, 12, 4, 21, 30, tzinfo=UTC))
    log.record("bonjour", result(("a", 5.0, ("bm25",))))
    assert log.enabled and log.count() == 1
    log.close()
    aside = tmp_path / "q.sqlite3.unreadable-20261204-213000"
    assert aside.read_bytes() == torn
    assert f"gardé sous le nom {aside}, un nouveau journal est commencé" in caplog.text


def test_a_log_whose_first_page_a_crash_zeroed_is_kept_aside_and_a_new_one_started(tmp_path):
    db = tmp_path / "q.sqlite3"
    db.write_bytes(b"\x00" * 8192)
    log = QuestionLog(db, clock=lambda: datetime(2026, 12, 4, 21, 30, tzinfo=UTC))
    log.record("bonjour", result(("a", 5.0, ("bm25",))))
    assert log.enabled and log.count() == 1
    log.close()
    assert (tmp_path / "q.sqlite3.unreadable-20261204-213000").read_bytes() == b"\x00" * 8192


def test_a_file_that_is_no_database_is_left_as_it_is(tmp_path, caplog):
    """`--question-log` naming a file that never was a log (`/etc/passwd`, a note): it was renamed
    `….unreadable-<date>`, a database made in its place, and the renamed file deleted once past
    retention. It is left as it is, and the log refused."""
    db = tmp_path / "passwd"
    text = b"root:x:0:0:root:/root:/bin/bash\n" * 40
    db.write_bytes(text)
    caplog.set_level("WARNING", logger="grasbot.questionlog")
    log = QuestionLog(db, clock=lambda: datetime(2026, 12, 4, 21, 30, tzinfo=UTC))
    log.record("bonjour", result(("a", 5.0, ("bm25",))))
    assert not log.enabled and not log.waiting
    assert (
        log.failure
        == "impossible d'ouvrir le fichier : ce n'est pas un journal de questions de GrasBot : SQLite n'y lit aucune base ; le fichier est laissé tel quel"
    )
    log.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["passwd"] and db.read_bytes() == text


@pytest.mark.parametrize(
    ("head", "wal"),
    [
        (b"\x00" * 16, None),  # a few zeros, then a note's text: no page a crash zeroed
        (b"\x00" * 600, None),  # more than a page's 512, the file no whole number of pages
        (b"", b""),  # an empty -wal beside it holds no page of any database
    ],
)
def test_a_note_that_begins_with_zeros_or_has_a_stray_wal_beside_it_is_left_as_it_is(tmp_path, head, wal):
    """A file was set aside (renamed, deleted once past retention) when its first 16 bytes were
    zeros, or when any file named like its -wal stood beside it: a note that begins so was lost.
    A crash zeroes whole pages (512 bytes at the least), and a journal SQLite reads begins with
    its magic number."""
    db = tmp_path / "notes.md"
    text = head + "# Mes notes\n\nRien à voir avec un journal.\n".encode() * 20
    db.write_bytes(text)
    if wal is not None:
        (tmp_path / "notes.md-wal").write_bytes(wal)
    log = QuestionLog(db, clock=lambda: datetime(2026, 12, 4, 21, 30, tzinfo=UTC))
    assert not log.enabled and log.failure is not None and "le fichier est laissé tel quel" in log.failure
    log.close()
    assert not [p.name for p in tmp_path.iterdir() if "unreadable" in p.name] and db.read_bytes() == text


def test_a_log_whose_first_pages_a_crash_zeroed_is_kept_aside_though_the_rest_holds_its_pages(tmp_path):
    """What the zeros' rule keeps: whole pages zeroed at the start, the log's other pages after them."""
    db = tmp_path / "q.sqlite3"
    torn = torn_past_its_first_page(db)
    torn = b"\x00" * 4096 + torn[4096:]
    db.write_bytes(torn)
    log = QuestionLog(db, clock=lambda: datetime(2026, 12, 4, 21, 30, tzinfo=UTC))
    log.record("bonjour", result(("a", 5.0, ("bm25",))))
    assert log.enabled and log.count() == 1
    log.close()
    assert (tmp_path / "q.sqlite3.unreadable-20261204-213000").read_bytes() == torn


def test_serve_refuses_a_question_log_named_that_is_no_database_and_leaves_it(tmp_path):
    db = tmp_path / "notes.md"
    db.write_text("# Mes notes\n\nRien à voir avec un journal.\n", encoding="utf-8")
    vault = tmp_path / "vault"
    write_note(vault, "un.md", "title: Un\nvisibility: public", "Le jardin.")
    _, err = serve_refused("--port", "0", "--vault", str(vault), "--question-log", str(db), env={"GRASBOT_CACHE_DIR": str(tmp_path / "cache")})
    assert (
        f"grasbot: le journal des questions {db} est inutilisable (impossible d'ouvrir le fichier : ce n'est pas un journal de questions de GrasBot : "
        "SQLite n'y lit aucune base ; le fichier est laissé tel quel) : nommez-en un autre, ou désactivez-le"
    ) in err
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("notes.md")] == ["notes.md"]  # no -wal, no .unreadable-<date>
    assert db.read_text(encoding="utf-8") == "# Mes notes\n\nRien à voir avec un journal.\n"


def torn_past_its_first_page(db) -> bytes:
    """A log of 300 questions whose pages past the first (the schema) are overwritten, as a
    crash of the disk leaves one: SQLite opens it and reads its version, then finds it torn."""
    with QuestionLog(db, clock=Clock(), batch_wait=0) as log:
        for i in range(300):
            log.record(f"question {i} " + "mot " * 50, result(("a", 5.0, ("bm25",))))
    pages = db.stat().st_size // 4096
    assert pages > 10
    with open(db, "r+b") as f:
        f.seek(2 * 4096)
        f.write(b"\xff" * 4096 * (pages - 2))
    return db.read_bytes()


def test_a_log_torn_past_its_first_page_is_kept_aside_and_a_new_one_started(tmp_path, caplog):
    """Torn where the open did not read, the log waited for a file that would never take a
    write, at every start: every question lost until someone moved the file by hand."""
    db = tmp_path / "q.sqlite3"
    torn = torn_past_its_first_page(db)
    caplog.set_level("WARNING", logger="grasbot.questionlog")
    log = QuestionLog(db, clock=Clock(), batch_wait=60)
    log.record("bonjour", result(("a", 5.0, ("bm25",))))
    assert log.enabled and not log.stalled and log.count() == 1
    log.close()
    aside = tmp_path / "q.sqlite3.unreadable-20250301-120000"
    assert aside.read_bytes() == torn
    assert [r[2] for r in rows(db, "questions")] == ["bonjour"]
    assert [m for _, m in said(caplog)] == [
        f"journal des questions {db} : database disk image is malformed ; gardé sous le nom {aside}, un nouveau journal est commencé"
    ]


def test_a_log_torn_while_the_daemon_runs_is_kept_aside_and_the_batch_written_to_a_new_one(tmp_path, caplog):
    """A write that found the log torn turned it off for the daemon's life."""
    db = tmp_path / "q.sqlite3"
    log = QuestionLog(db, clock=Clock(), batch_wait=60)
    log.record("avant", result(("a", 5.0, ("bm25",))))
    log._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    with open(db, "r+b") as f:  # what a crash of the disk leaves, read by a connection with no page in its cache
        f.seek(4096)
        f.write(b"\xff" * (db.stat().st_size - 4096))
    with log._lock:
        log._conn.close()
        log._conn = sqlite3.connect(db, check_same_thread=False, isolation_level=None)
    caplog.set_level("WARNING", logger="grasbot.questionlog")
    log.submit("pendant", result(("a", 5.0, ("bm25",))))
    log.record("après", result(("a", 5.0, ("bm25",))))
    assert log.enabled and not log.stalled
    log.close()
    assert [r[2] for r in rows(db, "questions")] == ["pendant", "après"]
    aside = tmp_path / "q.sqlite3.unreadable-20250301-120000"
    assert aside.exists() and [m for _, m in said(caplog)] == [
        f"journal des questions {db} : database disk image is malformed ; gardé sous le nom {aside}, un nouveau journal est commencé"
    ]


def test_grasbot_log_says_why_it_cannot_read_a_log(tmp_path, capsys):
    db = tmp_path / "q.sqlite3"
    db.write_bytes(b"not a database, " * 512)  # a file torn or overwritten by something else
    assert run_log(["log", "--question-log", str(db)])[0] == 2
    err = capsys.readouterr().err
    assert f"grasbot: impossible de lire le journal des questions {db} (impossible d'ouvrir le fichier : file is not a database)" in err


@pytest.mark.parametrize("days", ["nan", "inf", "1e9", "800000"])
def test_grasbot_log_refuses_days_no_date_can_reach(tmp_path, capsys, days):
    db = tmp_path / "q.sqlite3"
    QuestionLog(db).close()
    assert run_log(["log", "--question-log", str(db), "--days", days])[0] == 2  # was a traceback
    assert "grasbot: --days doit être supérieur à 0 et au plus 36500, et --limit entre 1 et 100000" in capsys.readouterr().err
    assert run_log(["log", "--question-log", str(db), "--days", "36500"])[0] == 0


def test_grasbot_log_reads_a_log_in_a_folder_it_cannot_write(tmp_path):
    """Another user's daemon's log, or a copy on a read-only mount: opened read-write, SQLite
    had to make files beside it, and the command said it could not read the log."""
    state = tmp_path / "state"
    db = state / "q.sqlite3"
    with QuestionLog(db) as log:
        log.record("robot conversationnel ?", result(("grasbot", 0.8, ("bm25",)), grounded=False))
    with read_only_folder(state):
        code, text = run_log(["log", "--question-log", str(db), "--json"])
        assert sorted(os.listdir(state)) == ["q.sqlite3"]
    assert code == 0
    assert [q["question"] for q in json.loads(text)["ungrounded"]] == ["robot conversationnel ?"]


def test_grasbot_log_reads_a_log_the_daemon_is_writing(tmp_path):
    db = tmp_path / "q.sqlite3"
    with QuestionLog(db, batch_wait=0) as log:
        log.record("première question ?", result(("a", 0.5, ("bm25",)), grounded=False))
        assert [q["question"] for q in json.loads(run_log(["log", "--question-log", str(db), "--json"])[1])["ungrounded"]] == ["première question ?"]
        log.record("seconde question ?", result(("a", 0.5, ("bm25",)), grounded=False))
        code, text = run_log(["log", "--question-log", str(db), "--json"])
        assert code == 0
        assert [q["question"] for q in json.loads(text)["ungrounded"]] == ["seconde question ?", "première question ?"]
        log.record("troisième question ?", result(("a", 0.5, ("bm25",)), grounded=False))  # the reader left it writable
        assert log.enabled and log.count() == 3


def test_grasbot_log_changes_nothing_in_the_log(tmp_path):
    """Reading deletes no old question (the daemon's retention does) and writes no byte."""
    db = tmp_path / "q.sqlite3"
    asked = datetime.now(UTC) - timedelta(days=200)
    with QuestionLog(db, retention_days=365, clock=Clock(asked)) as log:
        log.record("une vieille question ?", result(("a", 0.5, ("bm25",)), grounded=False))
    before = db.read_bytes()
    code, text = run_log(["log", "--question-log", str(db), "--json", "--days", "365"])
    assert code == 0 and [q["question"] for q in json.loads(text)["ungrounded"]] == ["une vieille question ?"]
    assert db.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["q.sqlite3"]


def test_grasbot_log_leaves_another_database_alone(tmp_path, capsys):
    """A --question-log that names another SQLite file: it used to get GrasBot's tables."""
    db = tmp_path / "other.sqlite3"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    conn.close()
    before = db.read_bytes()
    assert run_log(["log", "--question-log", str(db)])[0] == 2
    assert (
        f"grasbot: impossible de lire le journal des questions {db} (impossible d'ouvrir le fichier : ce n'est pas un journal de questions de GrasBot)"
        in capsys.readouterr().err
    )
    assert db.read_bytes() == before and columns(db) == {"invoices": ["id"]}


def test_grasbot_log_reads_an_empty_file_as_no_question(tmp_path):
    db = tmp_path / "q.sqlite3"
    db.touch()
    code, text = run_log(["log", "--question-log", str(db), "--json"])
    assert code == 0 and json.loads(text)["ungrounded"] == [] and db.stat().st_size == 0


def test_grasbot_log_says_what_to_do_with_a_crashed_log_in_a_read_only_folder(tmp_path, capsys):
    """A daemon killed mid-run leaves questions in the -wal file; in a folder the reader cannot
    write, SQLite cannot read them. Copied to a folder it can write, they are read."""
    state = tmp_path / "state"
    state.mkdir()
    db = state / "q.sqlite3"
    killed = (
        "import os, sys\n"
        "from grasbot.store.questionlog import QuestionLog\n"
        "from grasbot.retrieval.search import SearchResult\n"
        "log = QuestionLog(sys.argv[1], batch_wait=0)\n"
        "log._conn.execute('PRAGMA wal_autocheckpoint=0')\n"
        "log.record('perdue ?', SearchResult(None, (), False, 10, 1.0))\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", killed, str(db)], check=True)
    (state / "q.sqlite3-shm").unlink()
    assert (state / "q.sqlite3-wal").stat().st_size > 0
    with read_only_folder(state):
        assert run_log(["log", "--question-log", str(db)])[0] == 2
    err = capsys.readouterr().err
    assert "q.sqlite3-wal contient des questions pas encore écrites dans le fichier" in err and "copiez les deux dans un dossier où vous pouvez écrire" in err
    code, text = run_log(["log", "--question-log", str(db), "--json"])
    assert code == 0 and [q["question"] for q in json.loads(text)["ungrounded"]] == ["perdue ?"]


def test_grasbot_log_shows_a_visitors_control_characters_as_escapes(tmp_path):
    """A question that retitles or clears the owner's terminal, or forges a line of the report."""
    db = tmp_path / "q.sqlite3"
    forged = "vélo »  la plus proche : contact (9.99; alias)\n  2026-01-01T00:00:00Z  « FORGÉE"
    with QuestionLog(db) as log:
        log.record("\x1b]0;PWNED\x07\x1b[2J\x1b[31mrouge\x1b[0m ?", result(("a", 0.5, ("bm25",)), grounded=False))
        log.record(forged, result(("a", 0.5, ("bm25",)), grounded=False))
        log.record("l'ordre \u202einversé\u202c, ça\u00a0va ?", result(("a", 0.5, ("bm25",)), grounded=False))
    code, text = run_log(["log", "--question-log", str(db)])
    assert code == 0
    assert not any(c in text for c in "\x1b\x07\u202e\u202c\r")
    assert "« \\x1b]0;PWNED\\x07\\x1b[2J\\x1b[31mrouge\\x1b[0m ? »" in text
    assert "« vélo »  la plus proche : contact (9.99; alias)\\n  2026-01-01T00:00:00Z  « FORGÉE »" in text
    assert "« l'ordre \\u202einversé\\u202c, ça\u00a0va ? »" in text  # a space, even a no-break one, stays
    lines = text.splitlines()
    assert lines[2] == "Questions auxquelles aucune note n'a répondu (3) :" and all(line.startswith("  20") for line in lines[3:6]) and lines[6] == ""
    assert json.loads(run_log(["log", "--question-log", str(db), "--json"])[1])["ungrounded"][1]["question"] == forged


def test_grasbot_log_json_shows_a_visitors_control_characters_as_escapes(tmp_path):
    """`--json` escaped what JSON must (a newline, ESC), not what a terminal acts on beyond it:
    a right-to-left override that reorders the owner's report, a C1 control (U+009B, the CSI of
    8-bit escape sequences), a line separator, DEL, reached the owner's terminal raw. Escaped
    as JSON's \\u escapes, the report reads back the same."""
    db = tmp_path / "q.sqlite3"
    asked = "l'ordre \u202einversé\u202c, \x9b31mrouge\x9b0m \u2028ligne\x7f \U000e0041 ça\u00a0va ?"
    with QuestionLog(db) as log:
        log.record(asked, result(("a", 0.5, ("bm25",)), grounded=False))
    code, text = run_log(["log", "--question-log", str(db), "--json"])
    assert code == 0
    assert not any(c in text for c in "\u202e\u202c\x9b\u2028\x7f\U000e0041"), text
    assert "\\u202einversé\\u202c, \\u009b31mrouge\\u009b0m \\u2028ligne\\u007f \\udb40\\udc41 ça\u00a0va ?" in text
    assert json.loads(text)["ungrounded"][0]["question"] == asked


def test_grasbot_log_into_a_closed_pipe_ends_without_a_traceback(tmp_path):
    """`grasbot log | head -1`: head closes the pipe while the report is written."""
    db = tmp_path / "q.sqlite3"
    with QuestionLog(db) as log:
        for i in range(50):
            log.record(f"question {i} " + "longue " * 300, result(("a", 0.5, ("bm25",)), grounded=False))
    proc = subprocess.Popen(
        [sys.executable, "-m", "grasbot._cli", "log", "--question-log", str(db), "--limit", "50"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()  # before the report is written: ~110 KB would not fit a pipe's buffer anyway
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 1
    assert err == "", err


def test_grasbot_log_refuses_a_limit_sqlite_cannot_take(tmp_path, capsys):
    db = tmp_path / "q.sqlite3"
    with QuestionLog(db) as log:
        log.record("robot ?", result(("a", 0.5, ("bm25",)), grounded=False))
    assert run_log(["log", "--question-log", str(db), "--limit", "9223372036854775808"])[0] == 2  # was an OverflowError
    assert "--limit entre 1 et 100000" in capsys.readouterr().err
    assert run_log(["log", "--question-log", str(db), "--limit", "100000"])[0] == 0


def test_grasbot_log_fails_on_a_damaged_log_rather_than_report_none(tmp_path, capsys):
    db = tmp_path / "q.sqlite3"
    with QuestionLog(db) as log:
        for i in range(300):
            log.record(f"question {i} " + "longue " * 40, result(("a", 0.5, ("bm25",)), grounded=False))
    raw = bytearray(db.read_bytes())
    for page in range(4096, len(raw), 4096):  # every page but the first: the file opens, its tables do not read
        raw[page : page + 100] = b"\xff" * 100
    db.write_bytes(bytes(raw))
    code, text = run_log(["log", "--question-log", str(db), "--json"])
    assert code == 2 and text == ""
    assert (
        f"grasbot: impossible de lire le journal des questions {db} (impossible de lire le fichier : database disk image is malformed)"
        in capsys.readouterr().err
    )


def test_grasbot_log_says_when_there_is_no_log_or_a_folder(tmp_path, capsys):
    missing = tmp_path / "typo.sqlite3"
    code, text = run_log(["log", "--question-log", str(missing)])
    assert code == 0 and "Questions auxquelles aucune note n'a répondu (0)" in text and not missing.exists()
    assert f"grasbot: pas encore de journal des questions à {missing} : le démon l'écrit dès qu'un visiteur pose une question" in capsys.readouterr().err
    assert run_log(["log", "--question-log", str(tmp_path)])[0] == 2
    assert f"grasbot: le journal des questions {tmp_path} est un dossier : donnez le chemin du fichier" in capsys.readouterr().err


def test_the_log_is_readable_by_its_owner_only(tmp_path):
    """Visitors' questions: the token file is 0600, so is the log, whatever the umask."""
    db = tmp_path / "state" / "q.sqlite3"
    previous = os.umask(0o022)
    try:
        with QuestionLog(db) as log:
            log.record("robot ?", result(("a", 0.5, ("bm25",)), grounded=False))
            modes = {p.name: p.stat().st_mode & 0o777 for p in db.parent.iterdir()}
    finally:
        os.umask(previous)
    assert modes == {"q.sqlite3": 0o600, "q.sqlite3-wal": 0o600, "q.sqlite3-shm": 0o600}


def test_each_vault_has_its_own_log_and_grasbot_log_reads_the_one_named(tmp_path, monkeypatch, capsys):
    """One log for every vault: the demo vault's questions showed in another vault's
    `grasbot log`, and fed its alias suggestions."""
    from grasbot._cli import main
    from grasbot._config import Settings

    state = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    monkeypatch.delenv("GRASBOT_QUESTION_LOG", raising=False)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a, b = (Settings.load(vault_dir=tmp_path / name).question_log for name in ("a", "b"))
    assert a != b and a.parent.parent == b.parent.parent == state / "grasbot"
    assert a.parent.parent.parent == state and a.name == b.name == "questions.sqlite3"
    with QuestionLog(a) as log:
        log.record("une question du vault a ?", result(("x", 0.5, ("bm25",)), grounded=False))
    assert main(["log", "--vault", str(tmp_path / "a"), "--json"]) == 0
    assert [q["question"] for q in json.loads(capsys.readouterr().out)["ungrounded"]] == ["une question du vault a ?"]
    # vault b has none yet; an older GrasBot's one log for every vault is pointed to
    shared = state / "grasbot" / "questions.sqlite3"
    QuestionLog(shared).close()
    assert main(["log", "--vault", str(tmp_path / "b"), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["ungrounded"] == []
    assert f"un GrasBot plus ancien gardait les questions de tous les coffres dans {shared} : --question-log {shared} les lit" in captured.err


def test_grasbot_log_of_a_vault_folder_that_does_not_exist_says_so(tmp_path, monkeypatch, capsys):
    """`grasbot log --vault ~/Notse` (a typo) said « no question log yet » and exited 0: the
    author waited for visitors' questions in a log no daemon would ever write."""
    from grasbot._cli import main
    from grasbot._config import Settings

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("GRASBOT_QUESTION_LOG", raising=False)
    typo = tmp_path / "Notse"
    assert main(["log", "--vault", str(typo)]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"grasbot: dossier du coffre introuvable : {typo} (réglez --vault ou VAULT_DIR)\n" and captured.out == ""
    # a vault gone (a drive not mounted) whose log is there is still read
    gone = tmp_path / "Disque" / "Notes"
    with QuestionLog(Settings.load(vault_dir=gone).question_log) as log:
        log.record("une question ?", result(("x", 0.5, ("bm25",)), grounded=False))
    assert main(["log", "--vault", str(gone), "--json"]) == 0
    assert [q["question"] for q in json.loads(capsys.readouterr().out)["ungrounded"]] == ["une question ?"]
