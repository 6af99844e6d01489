"""The spelling vectors (`retrieval.spelling`) kept beside the index cache, so that a restart
ranks with them from its first searches: at 10,000 notes their build takes some ten seconds,
during which a search ranked without them, and the same question could give another first
note right after a restart than a little later.

Keyed as the index cache is (its header: its format, GrasBot's version, the fingerprint of the
code that reads notes, the vault's path and options), plus this file's format, a fingerprint of
`retrieval/spelling.py`, the piece settings and the Unicode tables that fold words. Then each
note's words are taken only for a note of the same path, file digest and audience, and, for a
note read with hidden paths masked (`Index.masked`), only when the same hidden notes are masked:
the others are read again, as a reload reads an edited note. A file that does not match, or is
truncated or corrupt, is ignored with a log line, and the vectors are built as without one.

Format: a magic line, a CRC-32 of the payload, then the payload: the length of its `marshal`
part (8 bytes), that part (plain data, no code runs on load: the vocabulary's words and pieces,
each audience's paths, file digests, document frequencies and vector lengths), then each note's
word ids and then their counts, as raw int32 and float32 (once for both audiences), written one
note after another and read in place: in one piece they took 60 MB more at a daemon's peak at
10,000 notes. Only the visitor's part is read for a visitor: it holds the public notes alone, as
in memory. Written atomically, 0600, like the index cache.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import marshal
import sys
import unicodedata
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from .._files import atomic_write
from ..retrieval import spelling
from ..retrieval.index import Index
from ..retrieval.spelling import Reading, Spelling
from ..retrieval.vault import VaultOptions
from . import cache

log = logging.getLogger("grasbot.cache")

FILENAME = "spelling.marshal"
FORMAT = 2
MAGIC = b"GRASBOT-SPELLING 2\n"  # then the payload's CRC-32 (4 bytes, big-endian), then the payload
HEAD_SIZE = len(MAGIC) + 4


class Damaged(ValueError):
    """The file is not whole: its magic line, its checksum or its parts' lengths do not match."""


def read_parts(raw: bytes) -> tuple[dict, dict, dict]:
    """(header, plain, notes) of a file's bytes, `plain` with its notes' `ids` and `counts` as
    views of `raw` (no copy); Damaged when it is not whole."""
    view = memoryview(raw)
    if not raw.startswith(MAGIC) or len(raw) < HEAD_SIZE + 8 or zlib.crc32(view[HEAD_SIZE:]).to_bytes(4, "big") != raw[len(MAGIC) : HEAD_SIZE]:
        raise Damaged
    size = int.from_bytes(raw[HEAD_SIZE : HEAD_SIZE + 8], "big")
    start = HEAD_SIZE + 8 + size
    if start > len(raw):
        raise Damaged
    header, plain, notes = marshal.loads(view[HEAD_SIZE + 8 : start])
    words = len(plain["ends"]) and int.from_bytes(plain["ends"][-8:], sys.byteorder)  # the last note's end: every note's words
    if len(raw) != start + 8 * words:
        raise Damaged
    plain["ids"], plain["counts"] = view[start : start + 4 * words], view[start + 4 * words :]
    return header, plain, notes


def _header(root: Path, options: VaultOptions) -> dict:
    code = hashlib.blake2b(Path(spelling.__file__).read_bytes(), digest_size=16).hexdigest()
    return {
        **cache._header(root, options),
        "spelling": (FORMAT, code, spelling.PIECES, spelling.BUCKETS, spelling.BODY_CAP, unicodedata.unidata_version, sys.byteorder),
    }


def _hidden_key(index: Index) -> tuple | None:
    """What the index's masked notes were read without (`Mentions.key`)."""
    return index.hidden.key if index.hidden is not None else index.hidden_key


def state(indexes: Mapping[str, Index]) -> dict:
    """What a file written for these indexes holds of their notes (each note's path and file
    digest, the notes read with hidden paths masked and what those were): equal for two
    versions `load` reads alike, so that a version equal to the file's is not written again."""
    return {a: (frozenset((p, n.digest) for p, n in i.notes.items()), i.masked, _hidden_key(i)) for a, i in indexes.items()}


def save(cache_dir: Path, root: Path, options: VaultOptions, indexes: Mapping[str, Index]) -> bool:
    """Write the Spellings these indexes were given (every audience's, built: else nothing is
    written); a failure is logged, never raised (the file is a cache)."""
    path = cache_dir / FILENAME
    try:
        built = {audience: spelling.ready(index) for audience, index in indexes.items()}
        if any(s is None or s.reading.notes is not indexes[a].notes for a, s in built.items()):
            return False
        spellings: dict[str, Spelling] = {a: s for a, s in built.items() if s is not None}
        dumped = spelling.dump(spellings)
        notes = {a: (tuple(i.notes[p].digest for p in dumped.plain["audiences"][a][0]), i.masked, _hidden_key(i)) for a, i in indexes.items()}
        head = marshal.dumps((_header(root, options), dumped.plain, notes))
        with atomic_write(path) as f:  # mkstemp: 0600
            f.write(MAGIC + bytes(4))  # the checksum, once the payload is written
            crc = 0
            for part in (len(head).to_bytes(8, "big"), head):
                crc = zlib.crc32(part, crc)
                f.write(part)
            for words in itertools.chain(dumped.ids, dumped.counts):  # one note's at a time
                crc = zlib.crc32(words.data, crc)
                f.write(words.data)
            f.seek(len(MAGIC))
            f.write(crc.to_bytes(4, "big"))
        return True
    except (OSError, ValueError, TypeError) as exc:
        log.warning("vecteurs d'orthographe non écrits dans %s : %s", path, exc)
        return False


class Loaded(NamedTuple):
    """The file's Spellings (`spelling.restore`), and which audiences' are exactly what their
    index's notes read now: those are given to the index as they are (`spelling.adopt`), the
    others reused as a reload reuses the version before."""

    spellings: dict[str, Spelling]
    exact: frozenset[str]


def load(cache_dir: Path, root: Path, options: VaultOptions, indexes: Mapping[str, Index]) -> Loaded | None:
    """The file's Spellings for these indexes, or None (missing, stale, corrupt: logged, then
    ignored)."""
    path = cache_dir / FILENAME
    raw = cache.read_file(path, "vecteurs d'orthographe", "reconstruits")
    if raw is None:
        return None
    try:
        header, plain, notes = read_parts(raw)
        if header != _header(root, options):
            log.info("les vecteurs d'orthographe %s sont ceux d'une autre version, d'un autre code, coffre ou d'autres options : reconstruits", path)
            return None
        if set(plain["audiences"]) != set(indexes) or set(notes) != set(indexes):
            raise ValueError("audiences differ")
        readings: dict[str, Reading] = {}
        texts: dict[str, dict[str, str]] = {}
        exact = set()
        for audience, index in indexes.items():
            paths = plain["audiences"][audience][0]
            digests, masked, key = notes[audience]
            if len(digests) != len(paths) or type(masked) is not frozenset:
                raise ValueError(f"the {audience}'s digests do not match its notes")
            same_key = key == _hidden_key(index)
            current = index.notes
            valid = {}
            for path, digest in zip(paths, digests, strict=True):
                note = current.get(path)
                if note is None or note.digest != digest:
                    continue
                was, now = path in masked, path in index.masked
                if was or now:  # read without the hidden paths: the same ones, both times
                    if not (same_key and was and now):
                        continue
                    texts.setdefault(audience, {})[path] = spelling.note_text(index, path)
                valid[path] = note
            readings[audience] = Reading(valid, masked, audience)
            if len(valid) == len(current) == len(paths):
                exact.add(audience)
        spellings = spelling.restore(plain, readings, texts)
        for audience in exact:  # its reading is the index's own: a reload's `previous` compares its Note objects
            spellings[audience].reading = Reading.of(indexes[audience])
        return Loaded(spellings, frozenset(exact))
    except Damaged:
        log.warning("les vecteurs d'orthographe %s sont tronqués, corrompus ou d'une autre forme : reconstruits", path)
        return None
    except Exception as exc:  # a malformed payload must never stop the worker's build
        log.warning("les vecteurs d'orthographe %s sont inutilisables (%s : %s) : reconstruits", path, type(exc).__name__, exc)
        return None
