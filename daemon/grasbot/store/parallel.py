"""A cold load on every core: this process and forked workers read, parse, analyse and invert
shares of the vault, and this process joins the shares as it would read the index cache.

Parsing and analysing a note depends on that note alone, so a vault splits into contiguous
shares. A worker leaves its share in the cache's own plain form (marshal: no code runs when it
loads), posting lists packed with each note's number in the whole vault, so joining two
shares' lists for a term is a concatenation in order; the shares this process makes itself
need no such round trip. What comes out is a `Cached`, and the engine takes it exactly as it
takes a cache: `load_vault` still checks every file against it, resolves the links and reports
the notes that could not be read.

Workers are forked, which costs nothing to start, and only from a process that runs no other
thread (a fork copies locks, not the threads that hold them): the daemon and the CLI load the
vault before they start any. Otherwise, with one core or a small vault, this returns None and
the engine loads the vault in its own process, as it does when a worker fails or is killed.

A stop while loading (SIGINT, or SIGTERM, which `serve` turns into the same KeyboardInterrupt)
ends the workers at once and removes their folder. A process killed with SIGKILL cleans up
nothing: its workers die with it (the kernel's parent-death signal, on Linux), and the next
load removes the folder it left, which is named after it.
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import logging
import marshal
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import threading
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path

from ..retrieval.index import analyse_note, body_counts_of
from ..retrieval.postings import Packed, Postings, pack_all
from ..retrieval.vault import VaultOptions, _scan, parse_note, read_note_file
from . import cache as _cache

log = logging.getLogger("grasbot.load")

# Below this, forking and joining cost more than they save. Measured on the 2-vCPU VM of
# benchmarks/README.md (two CPU-bound processes there run only 1.4 times as fast as one), this
# process and one worker against this process alone: 1,000 notes 0.62-0.63 s vs 0.59-0.95 s,
# 2,000 notes 1.18-1.23 s vs 1.60-1.72 s, 4,000 notes 2.13-2.49 s vs 2.85-4.00 s.
MIN_NOTES = 2_000
SHARES_PER_WORKER = 4
#: The workers' folder in the temporary folder: this, the loading process's id, a dash.
FOLDER_PREFIX = "grasbot-load-"


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def _regular(entry: os.DirEntry) -> bool:
    try:
        return entry.is_file()  # the walk's d_type: no system call but for a symlink
    except OSError:
        return False


def load_shares(
    root: str | os.PathLike[str],
    options: VaultOptions,
    workers: int | None = None,
    scanned: list[tuple[str, os.DirEntry]] | None = None,
) -> _cache.Cached | None:
    """The vault below `root` parsed, analysed and inverted by `workers` processes (default:
    one per core; this process is one of them), or None when one process should do it.
    `scanned`: the vault's files, if the caller has walked them (`_scan`)."""
    workers = cores() if workers is None else workers
    root = Path(root)
    if workers < 2 or not can_fork() or not root.is_dir():
        return None
    # what is not a regular file is left to load_vault, which reports it without opening it
    files = [(rel, entry.path) for rel, entry in (_scan(root, options) if scanned is None else scanned) if _regular(entry)]
    if len(files) < MIN_NOTES:
        return None
    count = workers * SHARES_PER_WORKER
    # The workers take shares from the first, this process from the last: they meet in the
    # middle, where shares are smallest, so the last one taken leaves the other little to wait.
    weights = [count // 2 - min(k, count - 1 - k) for k in range(count)]
    bounds = [len(files) * sum(weights[:k]) // sum(weights) for k in range(count + 1)]
    shares = [(k, bounds[k], files[bounds[k] : bounds[k + 1]], options) for k in range(count)]
    context = multiprocessing.get_context("fork")
    claims = context.Array("b", count)  # shared by inheritance: which shares someone has taken
    joined = _Join(tuple(rel for rel, _ in files), count)
    sweep_folders(tempfile.gettempdir())
    before = set(multiprocessing.active_children())
    try:
        with tempfile.TemporaryDirectory(prefix=f"{FOLDER_PREFIX}{os.getpid()}-") as folder:
            pool = ProcessPoolExecutor(workers - 1, mp_context=context, initializer=_inherit, initargs=(claims, folder, os.getpid()))
            try:
                _make(pool, shares, claims, joined)
            except BaseException:
                # A stop or a failure: what the workers are making is not waited for (leaving
                # the pool would first make every share left, for nothing), nor is a worker
                # left behind, blocked forever on the pool's queue and holding the folder.
                ours = set(multiprocessing.active_children()) - before
                for worker in ours:
                    worker.terminate()
                for worker in ours:
                    worker.join()
                raise
            finally:
                pool.shutdown(cancel_futures=True)
    except Exception as exc:  # a worker killed (out of memory) or failing: one process will do
        log.warning("le chargement du coffre en %d processus a échoué (%s : %s) : il est chargé en un seul", workers, type(exc).__name__, exc)
        return None
    return joined.result()


def _make(pool: ProcessPoolExecutor, shares: list, claims, joined: _Join) -> None:
    """Every share is offered to the workers, first to last, while this process takes shares
    from the last one down and joins the workers' as they come: whoever is free does the next
    thing, so no process waits while another has work left."""
    made = {k: pool.submit(_load_share, share) for k, share in enumerate(shares)}
    mine = len(shares) - 1
    while made:
        ready = [k for k, future in made.items() if future.done()]
        for k in ready:
            path = made.pop(k).result()  # raises what the worker raised
            if path is not None:  # None: this process took that share
                joined.add(k, _from_worker(path))
        if ready:
            continue
        if mine >= 0 and _claim(claims, mine):
            joined.add(mine, _share(*shares[mine][1:]))
            mine -= 1
        else:
            mine = -1  # the workers have taken the rest
            wait(made.values(), return_when=FIRST_COMPLETED)


def sweep_folders(temporary: str) -> None:
    """Remove the workers' folders that loads killed with SIGKILL left in `temporary`: those
    whose process is gone (one per kill, each as large as the vault's index)."""
    for path in glob.glob(os.path.join(glob.escape(temporary), f"{FOLDER_PREFIX}*-*")):
        pid = os.path.basename(path)[len(FOLDER_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's: alive
        return True
    return True


PR_SET_PDEATHSIG = 1  # linux/prctl.h
_claims = _folder = None  # in a worker: the shares' claims and where to leave a share, inherited


def _inherit(claims, folder: str, parent: int) -> None:
    """A worker's start. A Ctrl-C reaches every process of the terminal's group: the forking
    process alone decides what it stops. And a worker dies with that process, however it
    dies: a worker whose parent is gone waits on the pool's queue forever."""
    global _claims, _folder
    _claims, _folder = claims, folder
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not `serve`'s, which the fork copied: terminate() ends it
    with contextlib.suppress(OSError, AttributeError):  # not Linux: no parent-death signal
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # it died before the signal was asked for
        os._exit(1)


def _claim(claims, k: int) -> bool:
    with claims.get_lock():
        if claims[k]:
            return False
        claims[k] = 1
        return True


def _load_share(share: tuple[int, int, list[tuple[str, str]], VaultOptions]) -> str | None:
    """In a worker: one share written in the cache's plain form (marshal: no code runs when it
    loads) to a file whose path is returned, or None when the forking process took it first.
    A file, not the result pipe: that process is busy with its own shares, and a pipe's
    reader that has to win the GIL back for every 64 kB held a worker up ~0.5 s a share."""
    k, start, files, options = share
    if not _claim(_claims, k):
        return None
    notes, analyses, postings = _share(start, files, options)
    assert _folder is not None  # set by the pool's initializer
    path = os.path.join(_folder, f"share-{k}")
    with open(path, "wb") as f:
        marshal.dump((_cache.entries_to_plain(notes, analyses), postings), f)
    return path


def _share(start: int, files: list[tuple[str, str]], options: VaultOptions) -> tuple[dict, dict, list]:
    """One share's notes, analyses (body counts made again when read, as a cache's are) and
    four inverted indexes (public and private notes' bodies and fields), numbered from
    `start`. A file that cannot be read or parsed is left out: `load_vault` reads it again and
    says why."""
    files = [(sys.intern(rel), path) for rel, path in files]  # as _scan made them: see there
    notes, analyses, bodies = {}, {}, {}
    for rel, path in files:
        try:
            raw, mtime_ns, ctime_ns = read_note_file(path)  # never hangs on a FIFO: see there
            note = parse_note(rel, raw, mtime_ns=mtime_ns, ctime_ns=ctime_ns, options=options)
        except (OSError, ValueError):
            continue
        notes[rel], bodies[rel] = note, body_counts_of(note)
        analyses[rel] = analyse_note(note, lazy_body=True)  # as light as the workers' notes
    numbers = {rel: start + i for i, (rel, _) in enumerate(files)}
    postings = []
    for public in (True, False):
        group = [p for p, n in notes.items() if n.public == public]
        for fields in (False, True):
            docs = {p: analyses[p].field_terms() if fields else bodies[p] for p in group}
            postings.append(_plain_postings(docs, numbers, with_docs=fields))
    return notes, analyses, postings


def _from_worker(path: str) -> tuple[dict, dict, list]:
    with open(path, "rb") as f:
        data = f.read()
    os.remove(path)  # read once: no need to keep tens of megabytes in the temporary folder
    entries, postings = marshal.loads(data)
    notes, analyses = _cache.entries_from_plain(entries)
    return notes, analyses, postings


def _plain_postings(docs: dict, numbers: dict[str, int], with_docs: bool) -> tuple:
    """`cache.postings_to_plain(Postings.from_docs(docs), with_docs, numbers)`, packed
    straight from the notes' counts (`pack_all`)."""
    lengths = {p: sum(counts.values()) for p, counts in docs.items()}
    plain_docs = {p: Packed.of(counts).plain() for p, counts in docs.items()} if with_docs else None
    return tuple(docs), pack_all(docs, numbers), lengths, sum(lengths.values()), plain_docs


class _Join:
    """The shares as one vault, in the files' order: what one process would have built. Shares
    are added in any order, as they are made; a posting list's blobs take their share's slot,
    and what depends on order (the notes', the lengths') is put together once all are in."""

    def __init__(self, paths: tuple[str, ...], count: int) -> None:
        self._paths = paths
        self._count = count
        self._shares: dict[int, tuple[dict, dict, list]] = {}
        # per index (public body, public fields, private body, private fields): term -> blobs
        self._lists: list[dict[str, list[bytes]]] = [{} for _ in range(4)]

    def add(self, k: int, share: tuple[dict, dict, list]) -> None:
        self._shares[k] = share
        for index, (_, packed, _, _, _) in enumerate(share[2]):
            lists = self._lists[index]
            for term, blob in packed.items():
                slots = lists.get(term)
                if slots is None:
                    slots = lists[term] = [b""] * self._count
                slots[k] = blob

    def result(self) -> _cache.Cached:
        notes: dict = {}
        analyses: dict = {}
        shares = [self._shares[k] for k in range(self._count)]
        for share_notes, share_analyses, _ in shares:
            notes.update(share_notes)
            analyses.update(share_analyses)
        joined = []
        for index in range(4):
            lengths: dict[str, int] = {}
            docs: dict = {}
            total = 0
            for _, _, postings in shares:
                _, _, share_lengths, share_total, share_docs = postings[index]
                lengths.update(share_lengths)
                total += share_total
                if share_docs is not None:
                    docs.update((p, Packed(*pair)) for p, pair in share_docs.items())
            if index % 2 == 0:  # a body's counts: the analyses' own, made again when read
                docs = {p: analyses[p].body for p in lengths}
            lists = self._lists[index]
            packed = dict(zip(lists, map(b"".join, lists.values()), strict=True))
            joined.append(Postings.from_packed(self._paths, packed, docs, lengths, total))
        return _cache.Cached(notes, analyses, tuple(joined), None, None)
