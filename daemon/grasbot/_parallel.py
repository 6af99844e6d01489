"""A cold load on every core: worker processes read, parse, analyse and invert shares of the
vault, and the main process joins the shares as it would read the index cache.

Parsing and analysing a note depends on that note alone, so a vault splits into contiguous
shares. Each worker returns its share in the cache's own plain form (marshal: no code runs
when it loads), posting lists packed with each note's number in the whole vault, so joining
two shares' lists for a term is a concatenation in order. What comes back is a `Cached`, and
the engine takes it exactly as it takes a cache: `load_vault` still checks every file against
it, resolves the links and reports the notes that could not be read.

Workers are forked, which costs nothing to start, and only from a process that runs no other
thread (a fork copies locks, not the threads that hold them): the daemon and the CLI load the
vault before they start any. Otherwise, with one core or a small vault, this returns None and
the engine loads the vault in its own process, as it does when a worker fails or is killed.
"""

from __future__ import annotations

import logging
import marshal
import multiprocessing
import os
import sys
import threading
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from . import _cache
from ._index import analyse_note
from ._postings import Packed, Postings, pack_all
from ._vault import VaultOptions, _scan, parse_note

log = logging.getLogger("grasbot.load")

# Below this, forking and joining cost more than they save. Measured on the 2-vCPU VM of
# benchmarks/README.md (two CPU-bound processes there run only 1.4 times as fast as one):
# 4,000 notes 2.9-3.7 s in shares vs 2.9-3.2 s in one process, 10,000 notes 8.9 vs 10.1 s.
MIN_NOTES = 5_000
SHARES_PER_WORKER = 2  # shares differ in size: more shares than workers keeps both busy


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def load_shares(root: str | os.PathLike[str], options: VaultOptions, workers: int | None = None) -> _cache.Cached | None:
    """The vault below `root` parsed, analysed and inverted by `workers` processes (default:
    one per core), or None when one process should do it."""
    workers = cores() if workers is None else workers
    root = Path(root)
    if workers < 2 or not can_fork() or not root.is_dir():
        return None
    files = [(rel, entry.path) for rel, entry in _scan(root, options)]
    if len(files) < MIN_NOTES:
        return None
    count = workers * SHARES_PER_WORKER
    bounds = [len(files) * k // count for k in range(count + 1)]
    shares = [(bounds[k], files[bounds[k] : bounds[k + 1]], options) for k in range(count)]
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            parts = list(pool.map(_load_share, shares))
    except Exception as exc:  # a worker killed (out of memory) or failing: one process will do
        log.warning("loading the vault in %d processes failed (%s: %s): loading it in one", workers, type(exc).__name__, exc)
        return None
    return _join(tuple(rel for rel, _ in files), [marshal.loads(p) for p in parts])


def _load_share(share: tuple[int, list[tuple[str, str]], VaultOptions]) -> bytes:
    """In a worker: one share's notes, analyses and four inverted indexes (public and private
    notes' bodies and fields), numbered from `start`. A file that cannot be read or parsed is
    left out: `load_vault` reads it again and says why."""
    start, files, options = share
    files = [(sys.intern(rel), path) for rel, path in files]  # as _scan made them: see there
    notes, analyses = {}, {}
    for rel, path in files:
        try:
            with open(path, "rb") as f:
                mtime_ns = os.fstat(f.fileno()).st_mtime_ns
                raw = f.read()
            note = parse_note(rel, raw, mtime_ns=mtime_ns, options=options)
        except (OSError, ValueError):
            continue
        notes[rel], analyses[rel] = note, analyse_note(note)
    numbers = {rel: start + i for i, (rel, _) in enumerate(files)}
    postings = []
    for public in (True, False):
        group = [p for p, n in notes.items() if n.public == public]
        for fields in (False, True):
            docs = {p: analyses[p].field_terms() if fields else analyses[p].body for p in group}
            postings.append(_plain_postings(docs, numbers, with_docs=fields))
    return marshal.dumps((_cache.entries_to_plain(notes, analyses), postings))


def _plain_postings(docs: dict, numbers: dict[str, int], with_docs: bool) -> tuple:
    """`_cache.postings_to_plain(Postings.from_docs(docs), with_docs, numbers)`, packed
    straight from the notes' counts (`pack_all`)."""
    lengths = {p: sum(counts.values()) for p, counts in docs.items()}
    plain_docs = {p: Packed.of(counts).plain() for p, counts in docs.items()} if with_docs else None
    return tuple(docs), pack_all(docs, numbers), lengths, sum(lengths.values()), plain_docs


def _join(paths: tuple[str, ...], parts: list) -> _cache.Cached:
    """The shares as one vault, in the files' order: what one process would have built."""
    entries: dict = {}
    for share_entries, _ in parts:
        entries.update(share_entries)
    notes, analyses = _cache.entries_from_plain(entries)
    joined = []
    for k in range(4):  # public body, public fields, private body, private fields
        lists: dict[str, list[bytes]] = {}
        lengths: dict[str, int] = {}
        docs: dict = {}
        total = 0
        for _, postings in parts:
            _, packed, share_lengths, share_total, share_docs = postings[k]
            for term, blob in packed.items():
                lists.setdefault(term, []).append(blob)
            lengths.update(share_lengths)
            total += share_total
            if share_docs is not None:
                docs.update((p, Packed(*pair)) for p, pair in share_docs.items())
        if k % 2 == 0:  # a body's counts: the analyses' own, made again when read
            docs = {p: analyses[p].body for p in lengths}
        packed = {term: blobs[0] if len(blobs) == 1 else b"".join(blobs) for term, blobs in lists.items()}
        joined.append(Postings.from_packed(paths, packed, docs, lengths, total))
    return _cache.Cached(notes, analyses, tuple(joined), None, None)
