"""A cold load on several cores gives exactly what one process gives: same notes, analyses,
posting lists (each in the vault's order), graph, warnings and answers; and it runs only where
forking is safe."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

import grasbot._engine as engine
from generate_vault import generate, questions
from grasbot import Settings, build_snapshot, search
from grasbot.retrieval import vault as _vault
from grasbot.retrieval.vault import VaultOptions
from grasbot.store import cache as _cache
from grasbot.store import parallel as _parallel
from support.bots import SERVE_TOKEN


@pytest.fixture
def vault(tmp_path, monkeypatch):
    # the notes read as old: one written under RACY_NS before its read gets ctime -1, and on a
    # loaded machine the one-process load crossed that line where the shares had not (CI)
    monkeypatch.setattr(_vault, "RACY_NS", 0)
    root = tmp_path / "vault"
    paths = generate(root, 240, seed=4)
    # what one process reports must come out of the shares too, in the same order
    paths[10].write_text("---\ntitle: [cassé\n---\ntexte\n", encoding="utf-8")
    paths[130].write_bytes(b"---\ntitle: x\n---\n\xff\xfe pas de l'UTF-8\n")
    paths[200].write_text("---\ntags: 5\npriority: haute\n---\n# Sans lien\n[[note-qui-n-existe-pas]]\n", encoding="utf-8")
    return root, Settings.load(env={}, vault_dir=root)


@pytest.fixture
def forced(monkeypatch):
    """Shares for any vault size, and a fork allowed although pytest runs threads."""
    monkeypatch.setattr(_parallel, "MIN_NOTES", 1)
    monkeypatch.setattr(_parallel, "can_fork", lambda: True)


def test_shares_equal_one_process(vault, forced):
    root, settings = vault
    options = VaultOptions(default_public=settings.default_visibility == "public")
    shares = _parallel.load_shares(root, options, workers=3)
    assert shares is not None and len(shares.notes) == 238
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(engine, "load_shares", lambda *a, **k: None)
        single = build_snapshot(settings)
    parallel = build_snapshot(settings)

    assert parallel.vault.notes == single.vault.notes
    assert list(parallel.vault.notes) == list(single.vault.notes)
    assert [i.to_dict() for i in parallel.vault.errors] == [i.to_dict() for i in single.vault.errors]
    assert len(single.vault.errors) == 2
    assert [i.to_dict() for i in parallel.vault.warnings] == [i.to_dict() for i in single.vault.warnings]
    assert parallel.vault.edges == single.vault.edges
    assert {p: (a.aliases, a.title, a.slug, a.answers, a.tags, a.domains, dict(a.body)) for p, a in parallel.analyses.items()} == {
        p: (a.aliases, a.title, a.slug, a.answers, a.tags, a.domains, dict(a.body)) for p, a in single.analyses.items()
    }
    for audience in ("visitor", "owner"):
        a, b = parallel.index(audience), single.index(audience)
        assert list(a.notes) == list(b.notes)
        assert a.edges == b.edges and a.backlinks == b.backlinks
        assert a.body.total_length == b.body.total_length
        for part_a, part_b in ((a.body, b.body), (a.fields, b.fields)):
            terms = {t for p in b.notes for t in (b.analyses[p].body if part_b is b.body else b.analyses[p].field_terms())}
            assert len(terms) > 100
            for term in terms:  # every posting list, in the vault's order
                assert list(part_a.counts(term).items()) == list(part_b.counts(term).items()), term
                assert part_a.df(term) == part_b.df(term)
        for q in questions(single.vault.notes.values(), 80, seed=3):
            ra, rb = (search(q, i, top_k=5, min_score=4.0).to_dict() for i in (a, b))
            ra.pop("took_ms"), rb.pop("took_ms")
            assert ra == rb, q


def test_each_share_is_made_once_by_this_process_or_a_worker(vault, forced, monkeypatch, tmp_path):
    """This process takes shares from the last one while the workers take them from the first:
    the claims must leave no share undone and none made twice."""
    root, _ = vault
    made = tmp_path / "made.txt"
    share = _parallel._share

    def counted(start, files, options):
        with open(made, "a") as f:  # a worker is another process: it leaves its mark in a file
            f.write(f"{start} {len(files)}\n")
        return share(start, files, options)

    monkeypatch.setattr(_parallel, "_share", counted)
    loaded = _parallel.load_shares(root, VaultOptions(), workers=2)
    assert loaded is not None and len(loaded.notes) == 238
    shares = sorted(tuple(map(int, line.split())) for line in made.read_text().splitlines())
    assert len(shares) == 2 * _parallel.SHARES_PER_WORKER
    assert [start for start, _ in shares] == [0] + [s + n for s, n in shares[:-1]]  # contiguous, none twice
    assert sum(n for _, n in shares) == 240  # every file found, the two unreadable ones included


def test_the_workers_files_are_gone_once_the_shares_are_joined(vault, forced, monkeypatch, tmp_path):
    """Here the worker makes every share (this process claims none), each left in a file of a
    temporary folder: read once, then deleted, folder and all, and so when a worker fails."""
    root, _ = vault
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    here, claim, read = os.getpid(), _parallel._claim, []
    monkeypatch.setattr(_parallel, "_claim", lambda claims, k: os.getpid() != here and claim(claims, k))
    from_worker = _parallel._from_worker

    def reading(path):
        share = from_worker(path)
        read.append((path, Path(path).exists()))  # deleted as soon as read: not held till the end
        return share

    monkeypatch.setattr(_parallel, "_from_worker", reading)
    loaded = _parallel.load_shares(root, VaultOptions(), workers=2)
    assert loaded is not None and len(loaded.notes) == 238
    assert len(read) == 2 * _parallel.SHARES_PER_WORKER
    assert all(Path(p).is_relative_to(scratch) and not left for p, left in read)
    assert list(scratch.iterdir()) == []
    monkeypatch.setattr(_parallel, "_load_share", _fail)
    assert _parallel.load_shares(root, VaultOptions(), workers=2) is None
    assert list(scratch.iterdir()) == []


def test_a_reload_after_a_parallel_load_stays_exact(vault, forced):
    root, settings = vault
    parallel = build_snapshot(settings)
    target = sorted(root.rglob("*.md"))[50]
    target.write_text(target.read_text(encoding="utf-8") + "\nUne tokenisation ajoutée.\n", encoding="utf-8")
    reloaded = build_snapshot(settings, parallel)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(engine, "load_shares", lambda *a, **k: None)
        fresh = build_snapshot(settings)
    for q in [*questions(fresh.vault.notes.values(), 40, seed=8), "tokenisation ajoutée"]:
        ra, rb = (search(q, s.index("owner"), top_k=5, min_score=4.0).to_dict() for s in (reloaded, fresh))
        ra.pop("took_ms"), rb.pop("took_ms")
        assert ra == rb, q


def test_a_parallel_load_writes_a_cache_that_starts_the_same_vault(vault, forced, tmp_path):
    """The cache keeps the shares' packed lists as they are (numbered over every file found,
    private and unreadable ones included): a start from it answers as one process does."""
    root, settings = vault
    build_snapshot(settings, cache_dir=tmp_path / "cache")
    assert _cache.load(tmp_path / "cache", root, engine.vault_options(settings)) is not None
    warm = build_snapshot(settings, cache_dir=tmp_path / "cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(engine, "load_shares", lambda *a, **k: None)
        single = build_snapshot(settings)
    for audience in ("visitor", "owner"):
        for q in questions(single.vault.notes.values(), 60, seed=9):
            ra, rb = (search(q, s.index(audience), top_k=5, min_score=4.0).to_dict() for s in (warm, single))
            ra.pop("took_ms"), rb.pop("took_ms")
            assert ra == rb, q


def test_no_fork_beside_other_threads_or_for_a_small_vault(vault):
    root, settings = vault
    options = VaultOptions()
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not _parallel.can_fork()
        assert _parallel.load_shares(root, options, workers=2) is None
    finally:
        stop.set()
        thread.join()
    assert _parallel.load_shares(root, options, workers=1) is None
    assert 240 < _parallel.MIN_NOTES  # this vault is below the size where forking pays


def _die(share):
    os._exit(3)  # as the kernel's OOM killer would leave it: no exception, no result


def _fail(share):
    raise MemoryError("no room")


@pytest.mark.parametrize("worker", [_die, _fail])
def test_a_worker_that_dies_or_fails_leaves_the_load_to_one_process(vault, forced, monkeypatch, caplog, worker):
    root, settings = vault
    monkeypatch.setattr(_parallel, "_load_share", worker)
    with caplog.at_level(logging.WARNING, logger="grasbot.load"):
        assert _parallel.load_shares(root, VaultOptions(), workers=2) is None
        snapshot = build_snapshot(settings)  # and the start goes on, in this process
    assert any("il est chargé en un seul" in r.getMessage() for r in caplog.records)
    assert len(snapshot.vault.notes) == 238


# A daemon whose workers take every share and block in it: stopped or killed mid-load.
BLOCKED_START = """
import os, sys, time
from grasbot import _cli
from grasbot.store import parallel

marks, vault = sys.argv[1:]
parallel.MIN_NOTES, parallel.cores = 1, lambda: 2
here, claim = os.getpid(), parallel._claim
parallel._claim = lambda claims, k: os.getpid() != here and claim(claims, k)  # the workers take every share


def blocked(start, files, options):
    open(os.path.join(marks, str(os.getpid())), "w").close()
    time.sleep(3600)


parallel._share = blocked
sys.exit(_cli.main(["serve", "--vault", vault, "--port", "0", "--semantic", "off", "--no-cache", "--question-log", "off"]))
"""


def _start_blocked(vault_root: Path, tmp_path: Path) -> tuple[subprocess.Popen, Path, Path, int]:
    """The daemon, its temporary folder, its workers' folder and its worker's id, once that
    worker is inside a share."""
    marks, scratch = tmp_path / "marks", tmp_path / "tmp"
    marks.mkdir()
    scratch.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRASBOT_")}
    env.update({"TMPDIR": str(scratch), "GRASBOT_TOKEN": SERVE_TOKEN})
    proc = subprocess.Popen([sys.executable, "-c", BLOCKED_START, str(marks), str(vault_root)], stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 60  # a guard against a hang, not a measure
    while not any(marks.iterdir()):
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.poll() is not None else "no worker started"
        time.sleep(0.05)
    worker = int(next(marks.iterdir()).name)
    (folder,) = scratch.iterdir()
    return proc, scratch, folder, worker


def _running(pid: int) -> bool:
    """Alive and not a zombie (a worker whose parent died waits to be reaped by init)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def _end(proc: subprocess.Popen, worker: int) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait(10)
    if _running(worker):
        os.kill(worker, signal.SIGKILL)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_while_loading_ends_the_workers_and_removes_their_folder(vault, tmp_path, signum):
    """SIGTERM killed the daemon alone: its worker stayed, blocked forever on the pool's queue
    with the daemon's stderr open, and the shares' folder stayed in /tmp; SIGINT waited for
    the workers to make every share left."""
    proc, scratch, _, worker = _start_blocked(vault[0], tmp_path)
    try:
        proc.send_signal(signum)
        assert proc.wait(30) == 0
        assert "arrêté pendant le chargement du coffre" in proc.stderr.read()
        assert not _running(worker)
        assert list(scratch.iterdir()) == []
    finally:
        _end(proc, worker)


def test_a_load_killed_leaves_no_worker_and_the_next_load_removes_its_folder(vault, tmp_path):
    """SIGKILL cleans up nothing in the process: the worker dies with it, and its folder is
    removed by the next load, not the folder of a load still running."""
    proc, scratch, folder, worker = _start_blocked(vault[0], tmp_path)
    try:
        proc.kill()
        proc.wait(10)
        deadline = time.monotonic() + 30  # a guard against a hang, not a measure
        while _running(worker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _running(worker)
        running = scratch / f"{_parallel.FOLDER_PREFIX}{os.getpid()}-abc"
        running.mkdir()
        _parallel.sweep_folders(str(scratch))
        assert list(scratch.iterdir()) == [running]
        assert folder.name.startswith(f"{_parallel.FOLDER_PREFIX}{proc.pid}-")
    finally:
        _end(proc, worker)
