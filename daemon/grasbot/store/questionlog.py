"""What visitors ask, kept for a while so the author can see which words lead to which note.

One SQLite file (stdlib sqlite3, WAL), created on first use. Each visitor question keeps its
time (UTC), its text (an e-mail address, a phone, IBAN, card or social security number, a
street address, a public IP address a visitor typed in it replaced by a placeholder: `redaction`), whether it was grounded, whether
it was a follow-up in a conversation, and the ranked notes with their scores and the signals
that brought each one. Nothing about
the visitor is kept: no address, no user agent, no earlier turns of the conversation. The
tables have no column that could hold them, and `tests/store/test_questionlog.py` reads the
schema to keep it that way. The file keeps the newest `max_questions` (MAX_QUESTIONS: a
flood within retention, at the rate limit, cannot fill the owner's disk), the older deleted as
each batch is written. Rows older than `retention_days` are deleted on open and then
at most once a day: at a write, or by the writer thread, which looks at the clock every
PURGE_CHECK while no question comes (a quiet site kept them until a visitor asked again). For
the files no daemon writes (an older GrasBot's log of every vault, a log set aside as
unreadable, the vault's own log while the daemon writes none, `--question-log off`, or another),
`tend_old_logs` does so at a daemon's start, then the writer once a day.

A log an older GrasBot wrote kept those questions as typed. The `redacted` table marks how far
the questions went through `redact` (this GrasBot's own questions move it as they are written);
below it, the writer thread redacts the rest once, REDACT_BATCH a transaction with the marker,
so the daemon listens at once, the file is locked a few ms at a time, and a daemon stopped or
killed midway goes on at its next start. Until then every read (alias suggestions, `grasbot
log`, which never writes) returns them through `redact`. An older GrasBot ignores the table.

Logging is a side job: neither `submit` nor `record` ever raises, so a full disk or a
read-only home never breaks an answer. A log that cannot be opened for a reason that may pass
(another process holding the file, a full disk, a folder not writable or not mounted yet) warns
once, keeps the questions asked meanwhile in its queue and tries the file again every
REOPEN_EVERY; so does a write that fails while the daemon runs (a file system remounted
read-only, an I/O error: the file is opened again; a full disk: the batch is written again),
its batch back at the queue's front. Only a log that will not open however long it waits
(another program's database, a newer GrasBot's log, a folder named as the file) turns itself
off, warning once.

`grasbot log` opens the file read-only (`read_only=True`): it never creates, purges or
locks it for writing, so it reads a log in a folder it cannot write (another user's daemon's,
a copy on a read-only mount).

Threads: one connection guarded by a lock (`check_same_thread=False`). The server calls
`submit`, which only builds the question's rows on the caller's thread and queues them (a few
microseconds on the event loop, no thread-pool round trip, no SQLite); one daemon writer
thread, started on the first submit, lets a batch gather for `batch_wait` seconds and then
writes every queued question in one transaction, so the occasional WAL checkpoint (which does
fsync) and the per-commit cost fall on that thread, once per batch. Every read and `close`
first write out what is queued, under the same lock, so a read right after a submit sees it
and nothing submitted before `close` is lost; while the file cannot be opened or written, a
read returns the questions waiting in memory with those written before (read through a
read-only connection if the log's own is closed), each once. The queue is bounded (`max_pending`): past it the
newest question is dropped (a warning once, until the file takes a write; the owner's /health
counts them); a batch another process kept from the file (longer than BUSY_TIMEOUT_MS) goes back
to the queue's front; while the file cannot be opened or written, the oldest go first (said once).
`record` (tests, tools) writes the queue and its question at once, synchronously.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sqlite3
import sys
import threading
import urllib.parse
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from glob import escape as glob_escape
from pathlib import Path
from typing import NamedTuple

from .._config import DEFAULT_RETENTION_DAYS, MAX_RETENTION_DAYS, default_log_path, parse_log_path
from .._files import atomic_write
from .._terminal import printable, printable_json
from ..retrieval.scoring import BOOST_SIGNALS, WEAK_SIGNALS
from ..retrieval.search import SearchResult
from .redaction import PLACEHOLDER, redact
from .redaction import VERSION as REDACTION

logger = logging.getLogger("grasbot.questionlog")

SCHEMA_VERSION = 1
PURGE_EVERY = timedelta(days=1)
PURGE_CHECK = 3600.0  # seconds an idle writer sleeps before it looks whether the daily purge is due
BUSY_TIMEOUT_MS = 200  # a reader (`grasbot log`) never blocks a WAL writer; this is for a second writer
BATCH_WAIT = 0.05  # seconds the writer lets submitted questions gather before one transaction
MAX_PENDING = 10_000  # submitted questions waiting for the writer; past it they are dropped
#: Questions the file keeps, the newest (1.3 KB each with their results: 130 MB). Retention
#: bounds the log by days, not by size: one visitor at the rate limit, asking one question the
#: answer cache answers for free, wrote 37 MB a day (185 from an IPv6 /48), 3.3 GB in 90 days.
MAX_QUESTIONS = 100_000
#: `failure` for each thing the log failed doing, in French: the owner reads it in the plugin
#: (/health's `question_log.error`), after the cause its library or the system gave
_FAILED = {
    "cannot open": "impossible d'ouvrir le fichier",
    "cannot write": "impossible d'écrire dans le fichier",
    "cannot read": "impossible de lire le fichier",
    "failed": "le journal a échoué",
}
BUSY_RETRY = 1.0  # seconds the writer waits before writing again a batch another process kept it from writing
REOPEN_EVERY = timedelta(seconds=30)  # a log that could not be opened is tried again this often, while questions wait
MAX_LIMIT = 100_000  # `grasbot log --limit`: SQLite's LIMIT is a 64-bit integer
ROWS_PER_STATEMENT = 500  # 6 values a row: 3,000 variables, SQLite allows 32,766 a statement
REDACT_BATCH = 1_000  # questions of an older GrasBot's log redacted a transaction: the file is locked a few ms at a time
_TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"  # fixed width, so text order is time order
ASIDE, _ASIDE_TIME = ".unreadable-", "%Y%m%d-%H%M%S"  # a log SQLite cannot read is renamed so, with the time (UTC)

# Which signals name a note (alias, title, slug, answers, tags, domains) and which only find it
# (its text, its meaning, a link from a better note): scoring's registry says (`SIGNALS`).

_SCHEMA = """
CREATE TABLE questions (
    id INTEGER PRIMARY KEY,
    asked_at TEXT NOT NULL,
    question TEXT NOT NULL,
    grounded INTEGER NOT NULL,
    followup INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE results (
    question_id INTEGER NOT NULL REFERENCES questions(id) ON DELETE CASCADE,
    rank INTEGER NOT NULL,
    slug TEXT NOT NULL,
    path TEXT NOT NULL,
    score REAL NOT NULL,
    signals TEXT NOT NULL,
    PRIMARY KEY (question_id, rank)
);
CREATE INDEX questions_by_time ON questions(asked_at);
CREATE INDEX results_by_slug ON results(slug, rank);
"""


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _stamp(moment: datetime) -> str:
    if moment.tzinfo is None:
        raise ValueError("the clock must return an aware datetime (UTC)")
    m = moment.astimezone(UTC)  # _TIME_FORMAT, without strftime's cost on every submit
    return f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:{m.second:02d}Z"


def is_weak(signals: Iterable[str]) -> bool:
    """True when a note was found only through its text or a link, never named."""
    found_by = set(signals) - BOOST_SIGNALS
    return bool(found_by) and found_by <= WEAK_SIGNALS


@dataclass(frozen=True)
class LoggedResult:
    rank: int
    slug: str
    path: str
    score: float
    signals: tuple[str, ...]

    def to_dict(self) -> dict:
        return {"rank": self.rank, "slug": self.slug, "path": self.path, "score": round(self.score, 3), "signals": list(self.signals)}

    @classmethod
    def of_row(cls, rank: int, slug: str, path: str, score: float, signals: str) -> LoggedResult:
        """A result as the `results` table holds it (its signals comma-separated)."""
        return cls(rank, slug, path, score, tuple(filter(None, signals.split(","))))


@dataclass(frozen=True)
class LoggedQuestion:
    id: int  # 0 for a question still waiting in memory for the file
    asked_at: datetime
    question: str
    grounded: bool
    followup: bool
    results: tuple[LoggedResult, ...]

    @property
    def first(self) -> LoggedResult | None:
        return self.results[0] if self.results else None

    @property
    def typed(self) -> str:
        """The visitor's own words: each placeholder `redact` wrote is a comma, which ends a
        phrase. Alias suggestions read this, never offering « mail » for « [e-mail] »."""
        return PLACEHOLDER.sub(",", self.question)

    def to_dict(self) -> dict:
        return {
            "asked_at": _stamp(self.asked_at),
            "question": self.question,
            "grounded": self.grounded,
            "followup": self.followup,
            "results": [r.to_dict() for r in self.results],
        }


class _Pending(NamedTuple):
    """One question ready to insert: built on the caller's thread, written by whoever flushes."""

    at: datetime
    asked_at: str
    question: str
    grounded: int
    followup: int
    results: list[tuple[int, str, str, float, str]]  # rank, slug, path, score, signals


def _pending(now: datetime, question: str, result: SearchResult, followup: bool) -> _Pending:
    """The rows of a question, its e-mail addresses, phone numbers, IBANs, card numbers and
    public IP addresses replaced by placeholders (`redaction`): the owner learns which words
    lead to a note, and keeps no visitor's contact or bank details for 90 days."""
    return _Pending(
        now,
        _stamp(now),
        redact(question.strip()),
        int(bool(result.grounded)),
        int(bool(followup)),
        [(rank, s.slug, s.path, float(s.score), ",".join(sorted({r.signal for r in s.reasons}))) for rank, s in enumerate(result.sources, 1)],
    )


def _storable(entry: _Pending) -> bool:
    """Whether SQLite can take the entry's text: a lone surrogate in a question, or in a path
    from a file name that is not UTF-8, fails the whole batch's transaction."""
    texts = [entry.question, *(t for row in entry.results for t in (row[1], row[2], row[4]))]
    for text in texts:
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                return False
    return True


def _waiting(entry: _Pending) -> LoggedQuestion:
    """A question still waiting in memory, as a read returns it: id 0, none given yet."""
    return LoggedQuestion(
        id=0,
        asked_at=entry.at.astimezone(UTC).replace(microsecond=0),  # as it is written: to the second
        question=entry.question,
        grounded=bool(entry.grounded),
        followup=bool(entry.followup),
        results=tuple(LoggedResult.of_row(*row) for row in entry.results),
    )


def _identity(path: Path) -> tuple[int, int] | None:
    """The file at `path` (device, inode), None when there is none."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _busy(exc: sqlite3.OperationalError) -> bool:
    """Whether another connection held the file longer than BUSY_TIMEOUT_MS."""
    return "locked" in str(exc) or "busy" in str(exc)


def _corrupt(exc: sqlite3.DatabaseError) -> bool:
    """Whether SQLite reads no database in the file (not a lock, a full disk or a permission)."""
    return getattr(exc, "sqlite_errorcode", None) in (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT) or any(
        words in str(exc) for words in ("not a database", "malformed")
    )


#: The first bytes of every SQLite database file.
_SQLITE_HEADER = b"SQLite format 3\x00"
#: The first bytes of a journal SQLite reads (its -wal), in either byte order of its checksums.
_WAL_MAGIC = (b"\x37\x7f\x06\x82", b"\x37\x7f\x06\x83")
#: SQLite's smallest page: what a crash that zeroes the start of a database zeroes at the least.
_SMALLEST_PAGE = 512


def _maybe_a_log(path: Path) -> bool:
    """Whether a file SQLite cannot read may be a torn log, to set aside at open: it begins as a
    database does, or with a page's zeros a crash leaves (a file of whole pages), or a journal
    of SQLite's is beside it. Any other file was never a log but named by mistake
    (`--question-log ~/notes.md`, `/etc/passwd`): set aside, it was renamed, a database made in
    its place, and deleted once past retention. A note beginning with a few zeros was, or one
    beside which any file named like its -wal stood."""
    with contextlib.suppress(OSError), open(path.with_name(path.name + "-wal"), "rb") as wal:
        if wal.read(4) in _WAL_MAGIC:
            return True
    with open(path, "rb") as file:
        head = file.read(_SMALLEST_PAGE)
        size = os.fstat(file.fileno()).st_size
    if head.startswith(_SQLITE_HEADER):
        return True
    return len(head) == _SMALLEST_PAGE and size % _SMALLEST_PAGE == 0 and not head.strip(b"\x00")


def _full(exc: sqlite3.OperationalError) -> bool:
    """Whether the disk (or the file's limit) has no room: often for a while only."""
    return getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or "full" in str(exc)


#: Why a file that SQLite reads is not the log (another program's database, named by mistake).
NOT_A_LOG = "ce n'est pas un journal de questions de GrasBot"


def _schema_version(conn: sqlite3.Connection) -> int:
    """The log's schema version, 0 for a file with nothing in it yet. Raises ValueError for
    another program's database (tables, no version) or a newer GrasBot's log, read before
    anything is written: a database named by mistake got GrasBot's tables and WAL."""
    # one statement, so one snapshot: another daemon may create the log between two
    version, tables = conn.execute("SELECT user_version, EXISTS (SELECT 1 FROM sqlite_master) FROM pragma_user_version").fetchone()
    if version == 0 and tables:
        raise ValueError(NOT_A_LOG)
    if version not in (0, SCHEMA_VERSION):
        raise ValueError(f"version de schéma {version}, ce GrasBot connaît la version {SCHEMA_VERSION}")
    return version


def _lasting(exc: BaseException, path: Path) -> bool:
    """Whether opening `path` again would meet the same refusal, so waiting for it only keeps
    questions nobody will write: the file is another program's database or a newer GrasBot's
    log (`_open`'s ValueError), or the setting names a folder or goes through a file, which is
    a mistake to fix, not a mount to wait for. A lock, a full disk, a permission or a folder
    not there yet may pass."""
    if isinstance(exc, ValueError) or path.is_dir():
        return True
    for parent in path.parents:
        if parent.exists():
            return not parent.is_dir()
    return False


def _ensure_redacted_table(conn: sqlite3.Connection) -> None:
    """The marker of how far the questions are redacted: `redacted.through`, the last question id
    whose text `redact` has read, and `redacted.version`, the `redaction.VERSION` that read them.
    A log an older GrasBot wrote has no such table: it starts at 0, so its questions, kept as
    typed, are redacted once; a later `redact`, which finds more, reads them all again. A table,
    not a `user_version`: an older GrasBot refuses a version it does not know, and ignores a table.
    A newer GrasBot's marker (a downgrade) is set to this one's version, its place kept: what this
    one writes is read by this `redact` alone, and the newer one, back, reads it all again."""
    try:
        if conn.execute("SELECT MIN(version) = MAX(version) AND MIN(version) = ? FROM redacted", (REDACTION,)).fetchone()[0]:
            return
    except sqlite3.OperationalError:  # no such table (or column): made below
        pass
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS redacted (through INTEGER NOT NULL, version INTEGER NOT NULL DEFAULT 0)")
        if "version" not in {row[1] for row in conn.execute("PRAGMA table_info(redacted)")}:
            conn.execute("ALTER TABLE redacted ADD COLUMN version INTEGER NOT NULL DEFAULT 0")
        conn.execute("INSERT INTO redacted (through, version) SELECT 0, 0 WHERE NOT EXISTS (SELECT 1 FROM redacted)")
        conn.execute("UPDATE redacted SET through = 0, version = ? WHERE version < ?", (REDACTION, REDACTION))
        conn.execute("UPDATE redacted SET version = ? WHERE version > ?", (REDACTION, REDACTION))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _all_redacted(conn: sqlite3.Connection) -> bool:
    """Whether every question on disk went through `redact`: False for a log an older GrasBot
    wrote (no marker) until it is cleaned, and for one it wrote in again after a downgrade."""
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'redacted'").fetchone():
        return False
    return bool(conn.execute("SELECT (SELECT MAX(through) FROM redacted) >= (SELECT COALESCE(MAX(id), 0) FROM questions)").fetchone()[0])


def _redact_batch(conn: sqlite3.Connection, size: int) -> int:
    """Redact the next `size` questions past the marker, and move it, in one transaction: a
    daemon killed midway leaves the marker at the last batch written, and the next start goes
    on from there. How many questions were read (0: all are redacted)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        through = conn.execute("SELECT MAX(through) FROM redacted").fetchone()[0]
        rows = conn.execute("SELECT id, question FROM questions WHERE id > ? ORDER BY id LIMIT ?", (through, size)).fetchall()
        changed = [(kept, qid) for qid, text in rows if (kept := redact(text)) != text]
        if changed:
            conn.executemany("UPDATE questions SET question = ? WHERE id = ?", changed)
        if rows:
            conn.execute("UPDATE redacted SET through = ?", (rows[-1][0],))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return len(rows)


def _insert_rows(conn: sqlite3.Connection, into: str, rows: list[tuple]) -> None:
    """`rows` in a few statements of up to ROWS_PER_STATEMENT rows each. sqlite3 lets the GIL
    go for every step of SQLite, and `executemany` makes one step a row: taking the GIL back
    from a busy event loop waits for its switch interval (5 ms), so under load the writer
    managed about 200 questions a second, fell behind and would have dropped questions past
    `max_pending` (benchmarks/README.md, round 5)."""
    for start in range(0, len(rows), ROWS_PER_STATEMENT):
        chunk = rows[start : start + ROWS_PER_STATEMENT]
        row = "(" + ", ".join("?" * len(chunk[0])) + ")"
        conn.execute(f"INSERT INTO {into} VALUES {', '.join([row] * len(chunk))}", [v for r in chunk for v in r])


class QuestionLog:
    """The visitors' questions. `QuestionLog(None)` is a log that keeps nothing."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None,
        retention_days: int = DEFAULT_RETENTION_DAYS,
        clock: Callable[[], datetime] = _utcnow,
        *,
        batch_wait: float = BATCH_WAIT,
        max_pending: int = MAX_PENDING,
        read_only: bool = False,
        on_open: Callable[[Path], None] | None = None,
        redact_batch: int = REDACT_BATCH,
        purge_check: float = PURGE_CHECK,
        unwritten: Path | None = None,
        max_questions: int = MAX_QUESTIONS,
    ):
        """`read_only`: for the reading methods; `record` and `submit` then keep nothing.
        `on_open(path)`: called each time the file is opened for writing, at start or once it
        can be (the daemon notes there which vault the log is of); it must not raise.
        `unwritten`: a log no daemon writes now but this one's older questions may be in (the
        vault's own, the log off or named elsewhere), tended daily with the others (`tend_old_logs`).
        `max_questions`: the questions the file keeps, the newest; the older go as each batch is written."""
        if retention_days < 1:
            raise ValueError(f"retention_days must be at least 1, not {retention_days}")
        if max_questions < 1:
            raise ValueError(f"max_questions must be at least 1, not {max_questions}")
        if batch_wait < 0 or max_pending < 1 or redact_batch < 1 or not purge_check > 0:
            raise ValueError("batch_wait must be at least 0, max_pending and redact_batch at least 1, purge_check more than 0")
        self.path = Path(path) if path is not None else None
        self.retention = timedelta(days=retention_days)
        self._clock = clock
        self.read_only = read_only
        self._batch_wait = batch_wait
        self._max_pending = max_pending
        self._on_open = on_open
        self._redact_batch = redact_batch
        self._purge_check = purge_check
        self._unwritten = unwritten
        self._max_questions = max_questions
        self._redacting = False  # questions an older GrasBot kept as typed wait for the writer to redact them
        self.redacted = threading.Event()  # set when they are (or the writer stopped: the next start goes on)
        self.redacted.set()
        # Lock order: `_lock` (the connection) before `_queue` (the pending list), never the
        # reverse; `submit` takes only `_queue`, so it never waits for a transaction or an open.
        self._lock = threading.Lock()
        self._queue = threading.Condition(threading.Lock())
        self._pending: list[_Pending] = []
        self._writer: threading.Thread | None = None
        self._closing = False
        self._conn: sqlite3.Connection | None = None
        self._off = path is None  # turned off for good: nothing is queued any more
        self._last_purge: datetime | None = None
        self._tended = clock()  # when the writer last ran `tend_old_logs` (the daemon runs it at start)
        self.failure: str | None = None  # why the log is off or not open yet, for `grasbot log` and serve to say
        self._file: tuple[int, int] | None = None  # the file the connection writes (device, inode)
        self._full = False  # the last write found the disk full: the connection stays, its batch waits
        self._held = False  # the last write found the file held by another process: its batch waits
        self._tried: datetime | None = None  # while the file could not be opened or written: when it was last tried
        self._trouble = False  # questions wait for a file that could not be opened or written (said once, and when written)
        self._dropped = 0  # questions dropped since the file last took a write (said when it does)
        self._dropping = False  # the queue was full and the newest went (said once until a write)
        self._lost = 0  # questions dropped since the start, for the owner's /health
        self._unmade = False  # a question's rows could not be made (said once)
        if self.path is not None:
            self._try_open()
        if not (self.read_only or self._off) or (unwritten is not None and self.path is None):
            with self._queue:  # the daily purge of a site no visitor asks anything of, logged or not
                self._start_writer()

    @property
    def enabled(self) -> bool:
        """The file is open: questions are written."""
        return self._conn is not None

    @property
    def waiting(self) -> bool:
        """The file could not be opened yet, for a cause that may pass (`failure` says which):
        questions are kept in the queue and the file is tried again every REOPEN_EVERY."""
        return self._conn is None and not self._off and not self.read_only

    @property
    def stalled(self) -> bool:
        """Questions wait for a file that could not be opened or written (`failure` says why)."""
        return self._tried is not None and not self._off

    def status(self) -> dict:
        """For the owner's /health: whether questions are written (`on`), wait for a file that
        could not be opened or written or that another process holds (`waiting`: how many are
        kept, why), or are not logged at all (`off`: why, unless the setting turned the log
        off); `dropped`, when any were, says how many questions a full queue cost since the start."""
        with self._queue:
            kept, dropped = len(self._pending), self._lost
        if self.stalled or (self._held and not self._off):
            return {"state": "waiting", "kept": kept, "dropped": dropped, "error": self.failure or "un autre processus tient le fichier"}
        if self._off or self._conn is None:
            return {"state": "off", **({"error": self.failure} if self.failure else {})}
        return {"state": "on", **({"dropped": dropped} if dropped else {})}

    # ---- opening

    def _open(self, path: Path, *, read_only: bool | None = None) -> sqlite3.Connection:
        """A connection, the schema made on first use. Read-only (the log's, or `read_only`),
        nothing is made or changed.
        With no `-wal` file beside the log, no daemon has it open (a connection keeps one) and
        every question is in the file: SQLite then reads it as `immutable`, which needs no `-shm`
        file beside it, so a log in a folder the reader cannot write can be read."""
        wal = path.with_name(path.name + "-wal")
        read_only = self.read_only if read_only is None else read_only
        if read_only:
            flags = "mode=ro" if wal.exists() else "mode=ro&immutable=1"
            target, uri = f"file:{urllib.parse.quote(os.fspath(path.absolute()))}?{flags}", True
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileExistsError):  # visitors' questions are for the owner's eyes: SQLite gives -wal and -shm its mode
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            target, uri = os.fspath(path), False
        conn = sqlite3.connect(target, uri=uri, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False, isolation_level=None)
        try:
            conn.create_function("grasbot_weak", 1, lambda s: int(is_weak(s.split(","))), deterministic=True)
            if _schema_version(conn) == 0 and not read_only:
                # the schema and its version in one transaction; IMMEDIATE so that two
                # processes opening a new file at once cannot both create it
                conn.execute("BEGIN IMMEDIATE")
                if _schema_version(conn) == 0:
                    for statement in filter(str.strip, _SCHEMA.split(";")):
                        conn.execute(statement)
                    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
                conn.execute("COMMIT")
            if _schema_version(conn) != SCHEMA_VERSION:
                raise ValueError(NOT_A_LOG)  # read-only: a file with nothing in it yet
            if not read_only:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute("PRAGMA foreign_keys=ON")
                # what an UPDATE redacts or a purge deletes is zeroed, not left in the file's free space
                conn.execute("PRAGMA secure_delete=ON")
                _ensure_redacted_table(conn)
        except sqlite3.OperationalError as exc:
            conn.close()
            if read_only and wal.exists():  # a log copied from a daemon that did not stop cleanly
                raise ValueError(
                    f"{exc} : {wal.name} contient des questions pas encore écrites dans le fichier, et SQLite ne le lit qu'en créant un fichier -shm"
                    " à côté ; copiez les deux dans un dossier où vous pouvez écrire"
                ) from exc
            raise
        except BaseException:
            conn.close()
            raise
        return conn

    def _open_log(self) -> None:
        """Open the file and delete old rows, a file SQLite cannot read set aside first. The
        purge counts: it reads the pages past the schema, and a log torn there (its first page
        whole) waited for ever, at every start, its questions lost."""
        assert self.path is not None
        try:
            self._open_and_purge(self.path)
        except sqlite3.DatabaseError as exc:
            if self.read_only or not _corrupt(exc):
                raise
            self._drop_connection()
            if not _maybe_a_log(self.path):
                raise ValueError(f"{NOT_A_LOG} : SQLite n'y lit aucune base ; le fichier est laissé tel quel") from exc
            self._set_aside(self.path, exc)
            self._open_and_purge(self.path)
        if not self.read_only and self._on_open is not None:
            self._on_open(self.path)

    def _open_and_purge(self, path: Path) -> None:
        self._conn = self._open(path)
        self._file = _identity(path)
        self._last_purge = None
        if not self.read_only:
            self._purge(self._clock())
            if not _all_redacted(self._conn):
                # by the writer thread, a batch at a time: not before the daemon listens
                with self._queue:
                    self._redacting = True
                    self.redacted.clear()
                    self._start_writer()
                    self._queue.notify()

    def _try_open(self) -> None:
        """Open the file, at start or again while questions wait. A lasting cause (`_lasting`)
        or a reader (`grasbot log` asks once) turns the log off; any other keeps it waiting.
        Holds `_lock` (or is `__init__`)."""
        try:
            self._open_log()
        except (sqlite3.Error, OSError, ValueError) as exc:
            self._drop_connection()
            assert self.path is not None
            if self.read_only or _lasting(exc, self.path):
                self._give_up("cannot open", exc)
            else:
                self._stall("cannot open", exc)
            return
        self._tried, self.failure = None, None
        with self._queue:
            nothing_kept = not self._pending
        if nothing_kept:
            self._written(0)

    def _stall(self, doing: str, exc: BaseException) -> None:
        """Keep the queued questions for a file that could not be opened or written, and try it
        again in REOPEN_EVERY; said once until they are written. Holds `_lock` (or is `__init__`)."""
        self.failure = f"{_FAILED[doing]} : {exc}"
        self._tried = self._clock()
        if self._trouble:
            logger.debug("question log %s: still %s %s", self.path, doing, exc)
            return
        self._trouble = True
        logger.warning(
            "journal des questions %s : %s : %s ; jusqu'à %d questions sont gardées en attendant, et le fichier est réessayé toutes les %d s",
            self.path,
            _FAILED[doing],
            exc,
            self._max_pending,
            REOPEN_EVERY.total_seconds(),
        )

    def _written(self, kept: int) -> None:
        """The file took a write again after `_stall`, or after a full queue dropped the newest
        questions: say so, with what was kept and dropped. Holds `_lock`."""
        with self._queue:
            trouble, newest = self._trouble, self._dropping
            if not (trouble or newest):
                return
            dropped, self._dropped, self._dropping = self._dropped, 0, False
        self._trouble = False
        if trouble:
            gone = f" ({dropped} {'ont été écartées' if newest else 'plus anciennes ont été écartées'})" if dropped else ""
            logger.info("journal des questions %s : ouvert ; les %d question(s) gardées en attendant sont écrites%s", self.path, kept, gone)
        else:
            logger.info(
                "journal des questions %s : écrit à nouveau ; %d question(s) posées pendant que la file était pleine n'ont pas été enregistrées",
                self.path,
                dropped,
            )

    def _due(self) -> bool:
        """Whether the file, which could not be opened, is to be tried again (a clock set back counts as due)."""
        now, tried = self._clock(), self._tried
        return tried is None or not tried <= now < tried + REOPEN_EVERY

    def _drop_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except sqlite3.Error:
                pass

    def _set_aside(self, path: Path, exc: sqlite3.DatabaseError) -> None:
        """A log SQLite cannot read (torn by a crash of the disk, overwritten): renamed beside
        itself, kept for whoever may mend it, and a new log started. Turned off instead, the
        daemon lost every question until someone moved the file by hand."""
        aside = path.with_name(f"{path.name}{ASIDE}{self._clock().astimezone(UTC):{_ASIDE_TIME}}")
        os.replace(path, aside)
        for suffix in ("-wal", "-shm"):  # a new log must not read the old one's journal
            with contextlib.suppress(FileNotFoundError):
                os.replace(path.with_name(path.name + suffix), aside.with_name(aside.name + suffix))
        logger.warning("journal des questions %s : %s ; gardé sous le nom %s, un nouveau journal est commencé", path, exc, aside)

    def _give_up(self, doing: str, exc: BaseException) -> None:
        """Turn the log off for good. The caller holds `_lock` (or is `__init__`)."""
        if not self._off:
            self._off = True
            self.failure = f"{_FAILED[doing]} : {exc}"
            if not self.read_only:  # a reader (`grasbot log`) says why itself
                logger.warning("journal des questions %s : %s : %s ; les questions ne sont plus enregistrées", self.path, _FAILED[doing], exc)
        self._tried, self._trouble, self._full = None, False, False
        with self._queue:
            self._pending.clear()
        self._drop_connection()

    # ---- writing

    def record(self, question: str, result: SearchResult, *, followup: bool = False) -> None:
        """Log one visitor question and its ranked notes now, with anything submitted before
        it, in one transaction. Never raises.

        Call it for visitor questions only: an owner's results may name private notes.
        `followup` marks a question asked with a conversation history, whose words alone
        did not pick its notes.
        """
        if self._off or self.read_only or (entry := self._entry(question, result, followup)) is None:
            return
        with self._lock:
            self._flush_locked(entry)

    def _entry(self, question: str, result: SearchResult, followup: bool) -> _Pending | None:
        """The question's rows, or None if they cannot be made: that question is not logged
        (counted in `dropped`), and the log stays on for the next ones."""
        try:
            entry = _pending(self._clock(), question, result, followup)
            if not _storable(entry):
                # one question SQLite cannot take (text that is not Unicode) is that question's
                # problem: the log stays on for the next ones
                logger.debug("question log %s: a question that is not Unicode text, not logged", self.path)
                return None
            return entry
        except Exception:  # a bug here must not cost a visitor an answer either, nor the owner the log:
            # a visitor's text goes through `redact`'s patterns, and one question that broke them
            # turned the log off for the daemon's life
            with self._queue:
                self._lost += 1
                first, self._unmade = not self._unmade, True
            if first:
                logger.exception(
                    "journal des questions %s : les lignes d'une question n'ont pas pu être faites, elle n'est pas enregistrée (dit une seule fois)", self.path
                )
            return None

    def submit(self, question: str, result: SearchResult, *, followup: bool = False) -> None:
        """Queue one visitor question for the writer thread; returns at once, never raises.

        Same rows and rules as `record`; a read or `close` writes the queue out first.
        """
        if self._off or self.read_only or (entry := self._entry(question, result, followup)) is None:
            return
        with self._queue:
            if self._closing or self._off:
                return
            if len(self._pending) >= self._max_pending and not self.stalled:
                self._drop_newest(1)
                return
            self._keep(entry)
            if not self._start_writer() and len(self._pending) == 1:
                self._queue.notify()  # the writer sleeps until there is work; once woken, it lets a batch gather

    def _start_writer(self) -> bool:
        """Start the writer thread if it is not running yet; whether it was started. Holds `_queue`."""
        if self._writer is not None or self._closing:
            return False
        self._writer = threading.Thread(target=self._write_loop, name="grasbot-questionlog", daemon=True)
        self._writer.start()
        return True

    def _keep(self, entry: _Pending) -> None:
        """Queue `entry`; while the file cannot be opened or written, past `max_pending` the
        oldest question goes (said once): the newest say most about the vault as it is. Holds `_queue`."""
        if self.stalled:
            self._bound(len(self._pending) + 1 - self._max_pending)
        self._pending.append(entry)

    def _drop_newest(self, over: int) -> None:
        """Count `over` questions the full queue could not take (the newest: the file is held
        by another process, or the writer is behind), said once until the file takes a write.
        A debug line each left the owner unaware that visitors' questions went unlogged.
        Holds `_queue`."""
        self._dropped += over
        self._lost += over
        if not self._dropping:
            self._dropping = True
            why = "un autre processus le tient" if self._held else "l'écriture est en retard"
            logger.warning(
                "journal des questions %s : %d questions attendent le fichier (%s) ; les suivantes ne sont pas enregistrées tant qu'elles ne sont pas écrites "
                "(/health les compte)",
                self.path,
                len(self._pending),
                why,
            )
        else:
            logger.debug("question log %s: %d questions waiting, one question not logged", self.path, len(self._pending))

    def _bound(self, over: int) -> None:
        """Drop the `over` oldest queued questions, said once a stall. Holds `_queue`."""
        if over <= 0:
            return
        del self._pending[:over]
        self._dropped += over
        self._lost += over
        if self._dropped == over:
            logger.warning(
                "journal des questions %s : %d questions attendent le fichier ; les plus anciennes sont désormais écartées", self.path, self._max_pending
            )

    def _write_loop(self) -> None:
        while True:
            with self._queue:
                idle = False
                while not self._pending and not self._closing and not self._redacting and not idle:
                    idle = not self._queue.wait(self._purge_check)  # close() and submit() cut this short
                if self._closing:
                    return  # close() writes what is left
                if self._batch_wait and self._pending:
                    self._queue.wait(self._batch_wait)  # close() cuts this short
                if self._closing:
                    return
            with self._lock:
                self._flush_locked()
                if idle:
                    self._purge_if_due(self._clock())
                pause = REOPEN_EVERY.total_seconds() if self.stalled else BUSY_RETRY if self._held else 0
                if not pause and self._redacting:
                    self._redact_locked()
            self._tend_if_due()
            if pause:  # the questions stay queued: wake to try the file again, not at once
                with self._queue:
                    if not self._closing:
                        self._queue.wait(pause)

    def _tend_if_due(self) -> None:
        """Once a day, the files no daemon writes: a log set aside while the daemon ran, or the
        older GrasBot's log of every vault, kept questions past retention until a restart.
        The writer thread's; not under `_lock`, they are other files."""
        now = self._clock()
        if (self.path is None and self._unwritten is None) or now - self._tended < PURGE_EVERY:
            return
        self._tended = now
        tend_old_logs(self.path, self.retention.days, clock=self._clock, unwritten=self._unwritten)

    def _flush_locked(self, extra: _Pending | None = None, *, last: bool = False) -> None:
        """Write every queued question (then `extra`) in one transaction (on a full disk, as many
        as fit: `_insert_fitting`); a file that could not be opened or written is tried first if
        it is time (`last`: at close, whatever the time). Holds `_lock`; never raises."""
        try:
            if self.waiting and (last or self._due()):
                self._try_open()
            if self._conn is not None:
                self._follow_the_file()
        except Exception as exc:  # a bug here must not cost a visitor an answer either
            logger.exception("journal des questions : erreur inattendue")
            self._give_up("failed", exc)
        with self._queue:
            if extra is not None and not self._off:
                self._keep(extra)
            if self._conn is None or (self._full and not (last or self._due())):
                return  # off (nothing is kept) or waiting for the file or for room (the queue keeps its questions)
            batch, self._pending = self._pending, []
        if not batch:
            return
        try:
            written, refused = self._insert_fitting(batch)
        except Exception as exc:  # a bug here must not cost a visitor an answer either
            logger.exception("journal des questions : erreur inattendue")
            self._give_up("failed", exc)
            return
        if refused is not None:
            self._not_written(batch[written:], refused)
            return
        self._held = self._full = False
        self._tried, self.failure = None, None
        self._written(len(batch))
        self._purge_if_due(max(entry.at for entry in batch))

    def _purge_if_due(self, now: datetime) -> None:
        """Delete the rows past retention if the last purge was PURGE_EVERY before `now` (never
        raises: the old ones go at a later write or wake). Holds `_lock`."""
        if self._conn is None or self.read_only or (self._last_purge is not None and now - self._last_purge < PURGE_EVERY):
            return
        try:
            self._purge(now)
        except (sqlite3.Error, OSError) as exc:
            logger.debug("question log %s: old questions not deleted yet: %s", self.path, exc)

    def _redact_locked(self) -> None:
        """One batch of the questions an older GrasBot kept as typed, redacted now (never
        raises). A file held by another process is tried again at the next turn; any other
        failure leaves them for the next start, said. Holds `_lock`."""
        try:
            done = self._conn is None or _redact_batch(self._conn, self._redact_batch) == 0
            if done and self._conn is not None:
                # the redacted pages into the file now: till a checkpoint, it holds them as typed
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.OperationalError as exc:
            if _busy(exc):
                return
            logger.warning(
                "journal des questions %s : impossible d'expurger les questions qu'un GrasBot plus ancien a gardées telles que tapées : %s ; "
                "nouvel essai au prochain démarrage",
                self.path,
                exc,
            )
            done = True
        except Exception as exc:  # a bug here must not cost a visitor an answer either
            logger.exception("journal des questions %s : erreur inattendue en expurgeant les anciennes questions : %s", self.path, exc)
            done = True
        if done:
            with self._queue:
                self._redacting = False
            self.redacted.set()

    def _not_written(self, batch: list[_Pending], exc: BaseException) -> None:
        """The questions of `batch` the file did not take go back to the queue's front. Holds `_lock`."""
        if not (isinstance(exc, sqlite3.OperationalError) and _busy(exc)):
            self._write_failed(batch, exc)
            return
        # another process (a second daemon on the file, the owner's `sqlite3`) held it longer
        # than BUSY_TIMEOUT_MS: the batch goes back for the next write, which the writer tries
        # after BUSY_RETRY; dropped, it cost every question of the batch
        self._held = True
        with self._queue:
            self._pending[:0] = batch
            over = len(self._pending) - self._max_pending
            if over > 0:
                del self._pending[-over:]
                self._drop_newest(over)
        logger.debug("question log %s: busy, %d question(s) kept for the next write, %d not logged", self.path, len(batch), max(over, 0))

    def _write_failed(self, batch: list[_Pending], exc: BaseException) -> None:
        """A write the file refused for a cause that may pass: the batch goes back to the queue's
        front and waits, as questions wait for a file that cannot be opened. A full disk keeps
        the connection and writes again in REOPEN_EVERY; anything else (a file system remounted
        read-only, an I/O error, a permission) drops it and opens the file again then, which
        sees the file as it is by then. Turned off, the log lost every later question until a
        restart. Holds `_lock`."""
        with self._queue:
            self._pending[:0] = batch
        self._full = isinstance(exc, sqlite3.OperationalError) and _full(exc)
        if not self._full:
            self._drop_connection()
        if isinstance(exc, sqlite3.DatabaseError) and _corrupt(exc) and self.path is not None:
            # torn where the open did not read: set aside and a new log started now, as at
            # open; opened again as it was, it refused every write until someone moved it
            with contextlib.suppress(OSError):
                self._set_aside(self.path, exc)
            self._try_open()  # the batch is written at the next flush, or waits if this fails
        else:
            self._stall("cannot write", exc)
        with self._queue:
            self._bound(len(self._pending) - self._max_pending)

    def _follow_the_file(self) -> None:
        """A log deleted (or replaced) while the daemon runs: SQLite would go on writing into
        the deleted file, every question lost until a restart. One stat a flush; then a new
        log there, or the wait for one. Holds `_lock`."""
        if self.path is None or _identity(self.path) == self._file:
            return
        logger.warning(
            "le journal des questions %s a été supprimé ou remplacé pendant que le démon tournait : "
            "les questions vont désormais dans le fichier qui s'y trouve",
            self.path,
        )
        self._drop_connection()
        self._try_open()

    def _insert_fitting(self, batch: list[_Pending]) -> tuple[int, sqlite3.Error | OSError | None]:
        """Write `batch` in one transaction or, on a disk with room for part of it only, as many
        of its oldest questions as fit, in halves: all or nothing, a queue larger than the room
        freed never fit, though most of it would have. How many were written, and what refused
        the rest."""
        written, step = 0, len(batch)
        while written < len(batch):
            try:
                self._insert(batch[written : written + step])
            except (sqlite3.Error, OSError) as exc:
                if not (isinstance(exc, sqlite3.OperationalError) and _full(exc)) or step == 1:
                    return written, exc
                step = (step + 1) // 2
                continue
            written += step
            step = min(step, len(batch) - written)
        return written, None

    def _insert(self, batch: list[_Pending]) -> None:
        conn = self._conn
        assert conn is not None  # the writer thread inserts only while the log is open
        # IMMEDIATE: the write lock from the start, so the ids read here stay ours until COMMIT
        conn.execute("BEGIN IMMEDIATE")
        try:
            first = conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM questions").fetchone()[0]
            _insert_rows(
                conn,
                "questions (id, asked_at, question, grounded, followup)",
                [(first + i, e.asked_at, e.question, e.grounded, e.followup) for i, e in enumerate(batch)],
            )
            _insert_rows(
                conn,
                "results (question_id, rank, slug, path, score, signals)",
                [(first + i, *row) for i, e in enumerate(batch) for row in e.results],
            )
            # redacted as they are written: the marker follows them if every question before is
            conn.execute("UPDATE redacted SET through = MAX(through, ?) WHERE through >= ?", (first + len(batch) - 1, first - 1))
            # the newest `max_questions` kept, whatever a flood of them asked within retention (ids
            # are given in order: the oldest have the smallest, and the range is read by index)
            if (oldest_kept := first + len(batch) - self._max_questions) > 1:
                conn.execute("DELETE FROM results WHERE question_id < ?", (oldest_kept,))
                conn.execute("DELETE FROM questions WHERE id < ?", (oldest_kept,))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _purge(self, now: datetime) -> None:
        if self._conn is None:
            return
        cutoff = _stamp(now - self.retention)
        conn = self._conn
        try:
            conn.execute("BEGIN")
            try:
                _delete_older(conn, cutoff)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.OperationalError as exc:
            if not _busy(exc):
                raise
            # another process holds the file: the old rows go at a later write (_last_purge
            # unchanged), the log stays on (on open, it was turned off for the daemon's life)
            logger.debug("question log %s: busy, old questions deleted later", self.path)
            return
        self._last_purge = now

    # ---- reading

    def _select(self, where: str, params: tuple, limit: int | None, keeps: Callable[[LoggedQuestion], bool]) -> list[LoggedQuestion]:
        """The questions `where` picks on disk, and those `keeps` picks among the questions
        still waiting in memory (a file held, refused or not open yet), newest first. Both are
        read under `_lock`, which every write holds from taking a batch to writing it or
        putting it back: a question is in one place or the other, never both, never neither."""
        limit = None if limit is None else max(0, int(limit))
        sql = f"SELECT q.id, q.asked_at, q.question, q.grounded, q.followup FROM questions q {where} ORDER BY q.id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params = (*params, limit)
        kept: list[LoggedQuestion] = []
        heads: list[tuple] = []
        results: dict[int, list[LoggedResult]] = {}
        try:
            with self._lock:
                self._flush_locked()
                with self._queue:
                    kept = [q for q in map(_waiting, reversed(self._pending)) if keeps(q)]
                with self._reading() as conn:
                    if conn is not None:
                        heads, results = self._read(conn, sql, params)
        except sqlite3.Error as exc:
            if self.read_only:  # `grasbot log` says so and fails: a damaged log is not an empty one
                self.failure = f"{_FAILED['cannot read']} : {exc}"
            else:
                logger.warning("journal des questions %s : lecture impossible : %s", self.path, exc)
            heads, results = [], {}
        written = [
            LoggedQuestion(
                id=qid,
                asked_at=datetime.strptime(at, _TIME_FORMAT).replace(tzinfo=UTC),
                question=text,
                grounded=bool(grounded),
                followup=bool(followup),
                results=tuple(results[qid]),
            )
            for qid, at, text, grounded, followup in heads
        ]
        return (kept + written)[:limit]

    @staticmethod
    def _read(conn: sqlite3.Connection, sql: str, params: tuple) -> tuple[list[tuple], dict[int, list[LoggedResult]]]:
        """The questions `sql` picks, and the results of each. Questions an older GrasBot kept as
        typed and no daemon has redacted yet (`grasbot log` on a log not opened since the
        upgrade, alias suggestions while the writer cleans) are read through `redact`."""
        heads = conn.execute(sql, params).fetchall()
        if not _all_redacted(conn):
            heads = [(qid, at, redact(text), *rest) for qid, at, text, *rest in heads]
        ids = [h[0] for h in heads]
        results: dict[int, list[LoggedResult]] = {i: [] for i in ids}
        for chunk in range(0, len(ids), 500):
            part = ids[chunk : chunk + 500]
            marks = ",".join("?" * len(part))
            for qid, rank, slug, path, score, signals in conn.execute(
                f"SELECT question_id, rank, slug, path, score, signals FROM results WHERE question_id IN ({marks}) ORDER BY question_id, rank",
                part,
            ):
                results[qid].append(LoggedResult.of_row(rank, slug, path, score, signals))
        return heads, results

    def _since(self, days: float | None) -> str:
        if days is None:
            return ""
        return _stamp(self._clock() - timedelta(days=days))

    def recent_ungrounded(self, limit: int = 50, *, days: float | None = None) -> list[LoggedQuestion]:
        """Newest first: questions no note could ground an answer for."""
        since = self._since(days)
        return self._select(
            "WHERE q.grounded = 0 AND q.asked_at >= ?",
            (since,),
            limit,
            lambda q: not q.grounded and _stamp(q.asked_at) >= since,
        )

    def weakly_found(self, limit: int = 50, *, days: float | None = None) -> list[LoggedQuestion]:
        """Newest first: grounded questions whose first note came only through BM25 or the graph
        (no alias, title, slug, answers, tag or domain named it)."""
        since = self._since(days)
        return self._select(
            "JOIN results r ON r.question_id = q.id AND r.rank = 1 WHERE q.grounded = 1 AND q.asked_at >= ? AND grasbot_weak(r.signals)",
            (since,),
            limit,
            lambda q: q.grounded and _stamp(q.asked_at) >= since and q.first is not None and is_weak(q.first.signals),
        )

    def questions_ending_on(self, slug: str, *, limit: int | None = None) -> list[LoggedQuestion]:
        """Newest first: questions whose first result was the note `slug`, grounded or not."""
        return self._select(
            "WHERE q.id IN (SELECT question_id FROM results WHERE slug = ? AND rank = 1)",
            (slug,),
            limit,
            lambda q: q.first is not None and q.first.slug == slug,
        )

    def count(self) -> int:
        """The questions logged, those still waiting in memory for the file included."""
        with self._lock:
            self._flush_locked()
            with self._queue:
                kept = len(self._pending)
            try:
                with self._reading() as conn:
                    return kept + (conn.execute("SELECT COUNT(*) FROM questions").fetchone()[0] if conn is not None else 0)
            except sqlite3.Error as exc:
                logger.warning("journal des questions %s : lecture impossible : %s", self.path, exc)
                return kept

    @contextlib.contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection | None]:
        """The connection a read uses: the log's, or while the file cannot be opened or
        written, one that only reads it for this read (a file system remounted read-only still
        shows what was written before); None when there is nothing to read. Holds `_lock`."""
        if self._conn is not None or not self.waiting or self.path is None or not self.path.exists():
            yield self._conn
            return
        try:
            conn = self._open(self.path, read_only=True)
        except (sqlite3.Error, OSError, ValueError) as exc:
            logger.debug("question log %s: cannot read what was written before: %s", self.path, exc)
            yield None
            return
        try:
            yield conn
        finally:
            conn.close()

    def close(self) -> None:
        """Stop the writer and write what it had not written yet: nothing submitted is lost but
        what a file that still cannot be opened leaves in the queue (said)."""
        with self._queue:
            self._closing = True
            self._queue.notify_all()
            writer = self._writer
        if writer is not None and writer is not threading.current_thread():
            writer.join(timeout=10)  # at most one transaction (BUSY_TIMEOUT_MS when contended)
        with self._lock:
            self._flush_locked(last=True)  # a file that could not be opened is tried once more
            with self._queue:
                lost, self._pending = len(self._pending), []
            if lost:
                why = self.failure or "un autre processus tient le fichier"
                logger.warning("journal des questions %s : %s ; %d question(s) posées entre-temps ne sont pas enregistrées", self.path, why, lost)
            self._off = True
            self._drop_connection()

    def __enter__(self) -> QuestionLog:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ---------------------------------------------------------------- `grasbot log`


def add_log_parser(subparsers) -> argparse.ArgumentParser:
    """Add `grasbot log` to the CLI's subparsers; `cmd_log(args)` runs it."""
    p = subparsers.add_parser("log", help="les questions de visiteurs qui n'ont trouvé aucune note, ou la leur seulement par son texte ou un lien")
    p.add_argument(
        "--question-log",
        dest="question_log",
        metavar="FICHIER",
        help="le journal des questions (GRASBOT_QUESTION_LOG ; par défaut $XDG_STATE_HOME/grasbot/<empreinte du chemin du coffre>/questions.sqlite3)",
    )
    p.add_argument(
        "--vault", dest="vault_dir", metavar="DOSSIER", help="le coffre dont lire les questions (VAULT_DIR ; par défaut : le coffre fourni, vault-grasbot/)"
    )
    p.add_argument("--days", type=float, default=30.0, metavar="N", help="les N derniers jours seulement (par défaut 30)")
    p.add_argument("--limit", type=int, default=20, metavar="N", help="N questions au plus par liste (par défaut 20)")
    p.add_argument("--json", action="store_true", help="écrit du JSON au lieu de texte")
    return p


def _first(item: LoggedQuestion) -> str:
    first = item.first
    if first is None:
        return "aucune note"
    return f"{printable(first.slug)} ({first.score:.2f}; {', '.join(first.signals) or '-'})"


#: Beside a vault's log in its default place: the path of the vault it belongs to. The place is
#: a hash of that path, so a vault moved or renamed starts another log; this names the old one.
VAULT_FILE = "vault-path"


def note_the_vault(log_path: Path, vault: Path) -> None:
    """Write, beside a log in its default place, which vault it is of (never raises). For the
    owner's eyes, as the log is: where the vault lives is nobody else's on the machine (the
    file is made 0600). Whole or not at all: a path cut short by a full disk names a vault gone."""
    with contextlib.suppress(OSError):
        where = log_path.parent / VAULT_FILE
        said = os.fsencode(os.path.realpath(vault))
        if not where.exists() or where.read_bytes() != said:
            with atomic_write(where) as f:
                f.write(said)
        if where.stat().st_mode & 0o077:  # written readable by all before
            where.chmod(0o600)


def files_of_vaults_gone(path: Path) -> list[tuple[str, Path]]:
    """(the vault's old path, its file) for the files named as `path` in the other vaults' state
    folders (a question log, `store.gone`'s) whose vault is no longer there: moved or renamed,
    it may be this one."""
    found = []
    for noted in sorted(path.parent.parent.glob(f"*/{VAULT_FILE}")):
        other = noted.parent / path.name
        with contextlib.suppress(OSError):
            vault = os.fsdecode(noted.read_bytes())
            if other != path and other.exists() and not os.path.isdir(vault):
                found.append((vault, other))
    return found


def say_logs_of_vaults_gone(log_path: Path, say: Callable[[str], None]) -> None:
    for vault, log in files_of_vaults_gone(log_path):
        said = f"le journal des questions d'un coffre qui était à {printable(vault)}, et n'y est plus, est {log}"
        say(f"{said} : si ce coffre a été déplacé de là, déplacez ce fichier vers {log_path}")


def _delete_older(conn: sqlite3.Connection, cutoff: str) -> int:
    """Delete the questions asked before `cutoff` and their results, in the caller's
    transaction (a daemon's own log, or an older GrasBot's `tend_old_logs` reads); how many."""
    conn.execute("DELETE FROM results WHERE question_id IN (SELECT id FROM questions WHERE asked_at < ?)", (cutoff,))
    return conn.execute("DELETE FROM questions WHERE asked_at < ?", (cutoff,)).rowcount


def tend_old_logs(log_path: Path | None, retention_days: int, *, clock: Callable[[], datetime] = _utcnow, unwritten: Path | None = None) -> None:
    """Keep the retention promise for the files no daemon writes any more (never raises; a
    daemon runs it at start, in a thread of its own). The log an older GrasBot shared between
    every vault (`default_log_path(vault=None)`), and `unwritten` (the vault's own log, which a
    daemon whose log is off or named elsewhere does not write): their questions past retention
    are deleted and the rest redacted, and the file goes once none is left; a log set aside as
    unreadable goes once every question it can hold is past retention (its rename time and
    `retention_days`). Left alone, they kept visitors' questions for ever. Each is said once, when done."""
    retention, now = timedelta(days=retention_days), clock()
    try:
        shared = default_log_path(vault=None)
        if shared != log_path and shared.is_file():
            _tend_shared_log(shared, retention, now, "celui d'un GrasBot plus ancien, de tous les coffres")
        if unwritten is not None and unwritten not in (log_path, shared) and unwritten.is_file():
            _tend_shared_log(unwritten, retention, now, "celui de ce coffre, non écrit tant que le démon enregistre ailleurs ou pas du tout")
        for folder_log in {p for p in (log_path, shared, unwritten) if p is not None}:
            _delete_expired_asides(folder_log, retention, now)
    except Exception:  # old files are a chore beside the daemon: one that failed must not stop it
        logger.exception("journal des questions : erreur inattendue en supprimant les vieilles questions de journaux plus anciens")


def _tend_shared_log(path: Path, retention: timedelta, now: datetime, whose: str) -> None:
    """Delete the questions past retention of a log no daemon writes and redact the rest; the file, once empty."""
    try:
        conn = sqlite3.connect(os.fspath(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    except sqlite3.Error as exc:
        logger.warning("journal des questions %s (%s) : impossible de l'ouvrir pour en supprimer les vieilles questions : %s", path, whose, exc)
        return
    try:
        if _schema_version(conn) != SCHEMA_VERSION:
            return  # an empty file: nothing kept
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA secure_delete=ON")
        cutoff = _stamp(now - retention)
        conn.execute("BEGIN IMMEDIATE")
        try:
            deleted = _delete_older(conn, cutoff)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        _ensure_redacted_table(conn)
        while _redact_batch(conn, REDACT_BATCH):
            pass
        left = conn.execute("SELECT COUNT(*) FROM questions").fetchone()[0]
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # what was deleted or redacted, out of the -wal too
    except (sqlite3.Error, ValueError) as exc:
        logger.warning("journal des questions %s (%s) : impossible d'en supprimer les vieilles questions : %s", path, whose, exc)
        return
    finally:
        conn.close()
    days = retention.days
    if not left and not path.with_name(path.name + "-wal").exists():  # a -wal left: another process has it open
        for file in (path, path.with_name(path.name + "-shm")):
            with contextlib.suppress(FileNotFoundError):
                file.unlink()
        logger.info("journal des questions %s (%s) : aucune de ses questions n'est des %d derniers jours, supprimé", path, whose, days)
    elif deleted:
        logger.info(
            "journal des questions %s (%s) : %d question(s) de plus de %d jours supprimées, les %d restantes expurgées ; --question-log %s les lit",
            path,
            whose,
            deleted,
            days,
            left,
            path,
        )


def _delete_expired_asides(log_path: Path, retention: timedelta, now: datetime) -> None:
    """Delete the logs set aside beside `log_path` whose every question is past retention."""
    for aside in sorted(log_path.parent.glob(f"{glob_escape(log_path.name)}{ASIDE}*")):
        try:
            at = datetime.strptime(aside.name[len(log_path.name) + len(ASIDE) :], _ASIDE_TIME).replace(tzinfo=UTC)
        except ValueError:
            continue  # its -wal or -shm, gone with it; or a name this GrasBot did not give
        if now < at + retention:
            continue
        try:
            for file in (aside, aside.with_name(aside.name + "-wal"), aside.with_name(aside.name + "-shm")):
                with contextlib.suppress(FileNotFoundError):
                    file.unlink()
        except OSError as exc:
            logger.warning(
                "journal des questions %s : mis de côté le %s, au-delà des %d jours pendant lesquels les questions sont gardées, "
                "ne peut pas être supprimé : %s",
                aside,
                at.date(),
                retention.days,
                exc,
            )
            continue
        logger.info(
            "journal des questions %s : mis de côté comme illisible le %s, au-delà des %d jours pendant lesquels les questions sont gardées : supprimé",
            aside,
            at.date(),
            retention.days,
        )


def cmd_log(args: argparse.Namespace, settings=None, *, out=None) -> int:
    """`grasbot log`. With `settings` (which carry `question_log`), the flag still wins;
    without, the flag, then GRASBOT_QUESTION_LOG, then the default. The log is only read:
    its old questions are deleted by the daemon that writes it."""
    out = out or sys.stdout
    if not 0 < args.days <= MAX_RETENTION_DAYS or not 1 <= args.limit <= MAX_LIMIT:  # not: NaN is neither
        print(f"grasbot: --days doit être supérieur à 0 et au plus {MAX_RETENTION_DAYS}, et --limit entre 1 et {MAX_LIMIT}", file=sys.stderr)
        return 2
    if args.question_log is not None:
        path = parse_log_path(args.question_log)
    elif settings is not None:
        path = settings.question_log
    else:
        path = parse_log_path(os.environ.get("GRASBOT_QUESTION_LOG") or default_log_path())
    if path is None:
        print("grasbot: le journal des questions est désactivé (GRASBOT_QUESTION_LOG=off)", file=sys.stderr)
        return 2
    ungrounded: list[LoggedQuestion] = []
    weak: list[LoggedQuestion] = []
    if path.is_dir():
        print(f"grasbot: le journal des questions {path} est un dossier : donnez le chemin du fichier", file=sys.stderr)
        return 2
    vault = settings.vault_dir if settings is not None and args.question_log is None else None
    if not path.exists() and vault is not None and not vault.is_dir():  # a typo in --vault: no log « yet » and exit 0 hid it
        print(f"grasbot: dossier du coffre introuvable : {vault} (réglez --vault ou VAULT_DIR)", file=sys.stderr)
        return 2
    if not path.exists():  # reading creates no log
        print(f"grasbot: pas encore de journal des questions à {path} : le démon l'écrit dès qu'un visiteur pose une question", file=sys.stderr)
        shared = default_log_path(vault=None)
        if shared.exists() and shared != path:  # where an older GrasBot kept every vault's questions
            print(f"grasbot: un GrasBot plus ancien gardait les questions de tous les coffres dans {shared} : --question-log {shared} les lit", file=sys.stderr)
        say_logs_of_vaults_gone(path, lambda said: print(f"grasbot: {said}", file=sys.stderr))
    elif path.stat().st_size:  # an empty file holds no question
        with QuestionLog(path, read_only=True) as log:
            if log.enabled:
                ungrounded = log.recent_ungrounded(args.limit, days=args.days)
                weak = log.weakly_found(args.limit, days=args.days)
            if log.failure is not None:
                print(f"grasbot: impossible de lire le journal des questions {path} ({log.failure})", file=sys.stderr)
                return 2
    if args.json:
        report = {
            "path": str(path),
            "days": args.days,
            "ungrounded": [q.to_dict() for q in ungrounded],
            "weakly_found": [q.to_dict() for q in weak],
        }
        print(printable_json(json.dumps(report, ensure_ascii=False, indent=2)), file=out)  # a visitor's bidi override, C1 control: escaped
        return 0
    print(f"Journal des questions {path}, {args.days:g} derniers jours", file=out)
    for title, items, label in (
        ("Questions auxquelles aucune note n'a répondu", ungrounded, "la plus proche"),
        ("Questions dont la note n'a été trouvée que par son texte (BM25) ou un lien (graph)", weak, "trouvée"),
    ):
        print(f"\n{title} ({len(items)}) :", file=out)
        for item in items:
            mark = " [suite]" if item.followup else ""
            print(f"  {_stamp(item.asked_at)}  « {printable(item.question)} »{mark}  {label} : {_first(item)}", file=out)
        if not items:
            print("  aucune", file=out)
    return 0
