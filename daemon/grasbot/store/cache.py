"""A persistent cache of parsed notes and their analyses, so a restart does not re-parse a vault.

Never trusted blindly: the file carries a format version, GrasBot's version, a fingerprint of the
code that parses and analyses notes, the vault's path and options, and a CRC-32 of its
payload. Anything that does not match is ignored with a log line and the vault is parsed again.
Each entry is reused only by `load_vault`, which still checks the file's size, mtime and ctime,
and its hash when those differ or when the file changed too recently for them to prove anything.

Format: `marshal` of plain data (str, int, float, bool, None, tuples, dicts). Unlike pickle,
loading it runs no code, and it keeps tuples (JSON would turn them into lists). Writes go to a temporary file then `os.replace`, so a crash mid-write
leaves the old cache or none, never half of one.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import marshal
import os
import sys
import time
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from .._config import vault_key
from .._files import atomic_write
from .._version import __version__
from ..retrieval.boilerplate import Boilerplate, Shared
from ..retrieval.index import NoteAnalysis, NoteCounts
from ..retrieval.links import Link
from ..retrieval.postings import _ID_SIZE, Packed, Postings
from ..retrieval.vault import Issue, LinkResolver, Note, Vault, VaultOptions

log = logging.getLogger("grasbot.cache")

FORMAT = 18  # 2: inverted indexes; 3: packed; 4: links and graphs; 5: no body counts; 6: bytes; 7: CRC-32;
# 8: posting lists as (number, count) pairs; 9: the body counts the note's head (aliases, answers, tags); 10: each note's sections;
# 11: the public notes analysed without the hidden notes' typed paths, and the hidden set they were found for;
# 12: the names of the hidden notes that went, with their paths; 13: the boilerplate lines' texts, and each note's stems of them;
# 14: the lines public notes share, with their counts; 15: the pages the hidden notes were published at, with their paths;
# 16: each note's own pages, when worked out (`Note.own_pages`); 17: the `slug` and `url` of a Hugo front matter (`Note.hugo_slug_written`);
# 18: the folders of hidden notes only, in the hidden set's key (`Mentions.key`)
MAGIC = b"GRASBOT-CACHE 7\n"  # then the payload's CRC-32 (4 bytes, big-endian), then the payload
_OLDER = b"GRASBOT-CACHE"  # any cache written by GrasBot, in this layout or an older one
HEAD_SIZE = len(MAGIC) + 4
FILENAME = "notes.marshal"
_NOTE_FIELDS = tuple(f.name for f in dataclasses.fields(Note))


def _head(payload: bytes) -> bytes:
    """What precedes `payload` in the file. A CRC-32 catches a truncated or damaged file (the
    cache guards against accidents, not against its owner); over 55 MB it takes 0.03 s, where
    blake2b took 0.1 s of a one-second start."""
    return MAGIC + zlib.crc32(payload).to_bytes(4, "big")


def seal(payload: bytes) -> bytes:
    """The file's bytes for `payload`."""
    return _head(payload) + payload


def _code_fingerprint() -> str:
    """Changes whenever the code that turns a file into a Note or a NoteAnalysis changes."""
    import Stemmer

    retrieval = Path(__file__).resolve().parent.parent / "retrieval"
    h = hashlib.blake2b(digest_size=16)
    for name in (
        "analysis.py",
        "boilerplate.py",
        "frontmatter.py",
        "index.py",
        "links.py",
        "markdown.py",
        "mentions.py",
        "postings.py",
        "sections.py",
        "vault.py",
        "visibility.py",
    ):
        h.update((retrieval / name).read_bytes())
    # what they import from the package: a site's page masked (`mentions._pages`), the zone a date is read in
    for name in ("_exceptions.py", "_urls.py", "_zones.py"):
        h.update((retrieval.parent / name).read_bytes())
    h.update(repr((__version__, getattr(Stemmer, "__version__", "?"), _NOTE_FIELDS)).encode())
    return h.hexdigest()


def default_cache_dir(vault_root: str | os.PathLike[str], cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """`cache_dir` (the flag), else $GRASBOT_CACHE_DIR, else $XDG_CACHE_HOME/grasbot/<hash of the vault path>."""
    chosen = cache_dir or os.environ.get("GRASBOT_CACHE_DIR", "").strip()
    if chosen:
        return Path(chosen).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or Path.home() / ".cache"
    return Path(base) / "grasbot" / vault_key(vault_root)


def _header(root: Path, options: VaultOptions) -> dict:
    return {
        "format": FORMAT,
        "version": __version__,
        "code": _code_fingerprint(),
        "vault": os.path.realpath(root),
        # every option, read from the dataclass itself: one added to VaultOptions changes the
        # header without being listed here (a stale cache would keep the old visibility)
        "options": {f.name: repr(getattr(options, f.name)) for f in dataclasses.fields(options)},
        "byteorder": sys.byteorder,  # of the packed posting lists
        "local_zone": time.tzname,  # GRASBOT_TIME_ZONE=local reads a note's dates where the machine is
        "id_size": _ID_SIZE,
    }


def _note_to_plain(note: Note) -> tuple:
    values = []
    for name in _NOTE_FIELDS:
        value = getattr(note, name)
        if name == "links":
            value = tuple(map(tuple, value))  # marshal takes plain tuples only
        values.append(value)
    # then its pages, as worked out (a hidden note's, by `index.hidden_paths`), or None: a start
    # worked out 1,500 private notes' again, 0.1-0.2 s at 10,000 notes; made from its fields
    # alone, by code the header's fingerprint covers
    values.append(vars(note).get("own_pages"))
    return tuple(values)


def _frozen(cls, data: dict):
    """A frozen dataclass instance from its fields' values, without __init__'s per-field
    object.__setattr__: 10,000 notes and their links are made at every start."""
    obj = object.__new__(cls)
    obj.__dict__.update(data)
    return obj


def _note_from_plain(values: tuple) -> Note:
    *fields, pages = values
    data = dict(zip(_NOTE_FIELDS, fields, strict=True))
    data["links"] = tuple(map(Link._make, data["links"]))  # TypeError if not 3 values: refused
    if pages is not None:  # `Note.own_pages` as it was worked out
        if type(pages) is not tuple or not set(map(type, pages)) <= {str}:
            raise ValueError("malformed pages")
        data["own_pages"] = pages
    return _frozen(Note, data)


def postings_to_plain(p, with_docs: bool, numbers: Mapping[str, int] | None = None) -> tuple:
    """Posting lists packed (`retrieval.postings.pack`), and for field postings each note's stems as a
    (keys, values) pair of tuples: nothing to hash when loading, and a posting list is unpacked
    only when a search reads it."""
    paths, packed = p.packed(numbers)
    docs = {path: Packed.of(m).plain() for path, m in p._docs.items()} if with_docs else None
    return paths, packed, p._lengths, p.total_length, docs


def _postings_from_plain(plain, docs) -> Postings:
    paths, packed, lengths, total, own_docs = plain
    if docs is None:
        docs = {p: Packed(*pair) for p, pair in own_docs.items()}
    if docs.keys() != lengths.keys() or not lengths.keys() <= set(paths) or total != sum(lengths.values()):
        raise ValueError("inverted index does not match its notes")
    width = 2 * _ID_SIZE
    if not set(map(type, packed.values())) <= {bytes} or any(n % width for n in set(map(len, packed.values()))):
        raise ValueError("malformed posting list")
    if len(paths) != len(set(paths)):
        raise ValueError("a note numbered twice")
    return Postings.from_packed(tuple(paths), packed, docs, lengths, total)


#: NoteAnalysis's fields, read from the dataclass (a field a new signal needs is cached without
#: being named here), body aside: it is the note's text analysed, recomputed when read.
_ANALYSIS_FIELDS = tuple(f.name for f in dataclasses.fields(NoteAnalysis) if f.name != "body")


def _analysis_to_plain(a) -> tuple:
    # no body counts: they are the note's text analysed (analyse_note), recomputed when read
    return tuple(getattr(a, name) for name in _ANALYSIS_FIELDS)


def entries_to_plain(notes: Mapping[str, Note], analyses: Mapping) -> dict[str, tuple]:
    return {p: (_note_to_plain(n), _analysis_to_plain(analyses[p])) for p, n in notes.items()}


def entries_from_plain(entries: Mapping[str, tuple]) -> tuple[dict[str, Note], dict]:
    """Notes and their analyses; each analysis's body counts are made again when first read."""
    notes, analyses = {}, {}
    for rel, (note, analysis) in entries.items():
        note = _note_from_plain(note)
        if note.path != rel:
            raise ValueError(f"entry {rel!r} holds {note.path!r}")
        notes[rel] = note
        analyses[rel] = _frozen(NoteAnalysis, {**dict(zip(_ANALYSIS_FIELDS, analysis, strict=True)), "body": NoteCounts(note)})
    return notes, analyses


def _masks_from_plain(plain, notes: Mapping[str, Note]) -> tuple:
    """`save`'s masks: (the hidden set's key, {path: the public note's analysis without its paths})."""
    key, found = plain
    if type(key) is not tuple or [type(k) for k in key] != [frozenset] * 6:
        raise ValueError("malformed hidden set")
    masked = {}
    for rel, (analysis, body) in found.items():
        if rel not in notes or not notes[rel].public:
            raise ValueError(f"masked entry {rel!r} is not a public note")
        masked[rel] = _frozen(NoteAnalysis, {**dict(zip(_ANALYSIS_FIELDS, analysis, strict=True)), "body": Packed(*body)})
    return key, masked


def _boilerplate_from_plain(plain, notes: Mapping[str, Note]) -> Boilerplate:
    """`save`'s boilerplate: (its lines' texts, {path: the stems of them the note holds}, the
    lines public notes share: ({text: how many hold it}, {text: how many may hold it at most}))."""
    texts, held, (counts, most) = plain
    for table in (counts, most):
        if type(table) is not dict or not set(map(type, table)) <= {str} or not all(type(n) is int and n >= 2 for n in table.values()):
            raise ValueError("malformed shared lines")
    if type(texts) is not tuple or not set(map(type, texts)) <= {str} or type(held) is not dict or not held.keys() <= notes.keys():
        raise ValueError("malformed boilerplate")
    if not all(type(stems) is dict and set(map(type, stems.values())) <= {int} for stems in held.values()):
        raise ValueError("malformed boilerplate stems")
    return Boilerplate.kept(texts, held, Shared(counts, most))


def save(cache_dir: Path, vault: Vault, analyses: Mapping, indexes: Mapping | None = None) -> bool:
    """Write the cache atomically; a failure is logged, never raised (the cache is optional).

    With `indexes` (built from exactly `vault` and `analyses`), their inverted indexes are
    written too, so that a start does not invert the vault again.
    """
    try:
        notes = entries_to_plain(vault.notes, analyses)
        postings = None
        if indexes is not None:
            visitor, owner = indexes["visitor"], indexes["owner"]
            parts = (visitor.body, visitor.fields, owner.body.parts[1], owner.fields.parts[1])
            # body docs are the analyses' own counts: written once, with the analyses
            postings = tuple(postings_to_plain(p, with_docs=i % 2 == 1) for i, p in enumerate(parts))
        links = graphs = masks = boilerplate = None
        if indexes is not None:  # a start that finds no note changed counts no line of any (`Boilerplate.kept`)
            boilerplate = indexes["visitor"].boilerplate.plain(vault.notes)
        if indexes is not None and (visitor := indexes["visitor"]).hidden_key is not None:
            # the notes read without a hidden note's typed path: a start reads only the changed ones for them
            masks = (visitor.hidden_key, {p: (_analysis_to_plain(a := visitor.analyses[p]), Packed.of(a.body).plain()) for p in visitor.masked})
        if vault.resolver is not None:  # resolved links: a start resolves only the changed notes'
            links = (
                dict(vars(vault.resolver)),
                vault.edges,
                {p: tuple((i.path, i.message) for i in found) for p, found in vault.broken_links.items()},
                tuple((i.path, i.message) for i in vault.duplicate_slugs),
            )
            if indexes is not None:
                graphs = {a: (i.edges, i.backlinks) for a, i in indexes.items()}
        payload = marshal.dumps((_header(vault.root, vault.options), (notes, postings, links, graphs, masks, boilerplate)))
        with atomic_write(cache_dir / FILENAME) as f:
            f.write(_head(payload))
            f.write(payload)  # not seal(): no copy of tens of megabytes
        return True
    except (OSError, ValueError, TypeError) as exc:
        log.warning("cache de l'index non écrit dans %s : %s", cache_dir, exc)
        return False


class Cached(NamedTuple):
    """What a cache holds. Past `notes` and `analyses`, each part may be None (an older
    writer, or a vault saved without them): the engine then rebuilds that part."""

    notes: dict[str, Note]
    analyses: dict
    postings: tuple | None  # the public and private notes' body and field Postings
    links: tuple | None  # (LinkResolver, edges, broken links by note, duplicate-slug issues)
    graphs: dict | None  # audience -> (edges, backlinks)
    masks: tuple | None = None  # `Index.from_postings`'s: the hidden set's key, the notes analysed without its paths
    boilerplate: Boilerplate | None = None  # `Index.from_postings`'s: the lines the notes share, as counted (`Boilerplate.kept`)


def _newer_layout(raw: bytes) -> bool:
    """Whether a cache's magic line names a layout past this one's (a downgrade): an owner
    reading « older » there looks for the wrong GrasBot."""
    head = raw[:64]
    line = head[len(_OLDER) : head.find(b"\n")].strip()
    return line.isdigit() and int(line) > int(MAGIC[len(_OLDER) :].strip())


def read_file(path: Path, what: str, then: str) -> bytes | None:
    """A cache file's bytes, or None: missing (a first start, said nowhere) or unreadable
    (logged as « `what` PATH : lecture impossible (why) ; `then` »)."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("%s %s : lecture impossible (%s) ; %s", what, path, exc, then)
        return None


def load(cache_dir: Path, root: Path, options: VaultOptions) -> Cached | None:
    """What the cache holds, or None (missing, stale, corrupt: logged, then ignored). Each
    part is checked against the notes it claims to describe."""
    path = cache_dir / FILENAME
    raw = read_file(path, "cache de l'index", "reconstruit")
    if raw is None:
        return None
    if not raw.startswith(MAGIC):
        if raw.startswith(_OLDER):
            log.info(
                "le cache de l'index %s a été écrit par une version %s de GrasBot : reconstruit",
                path,
                "plus récente" if _newer_layout(raw) else "plus ancienne",
            )
        else:
            log.warning("le cache de l'index %s n'est pas un cache de GrasBot : ignoré", path)
        return None
    payload = memoryview(raw)[HEAD_SIZE:]  # no copy of tens of megabytes
    if len(raw) < HEAD_SIZE or zlib.crc32(payload).to_bytes(4, "big") != raw[len(MAGIC) : HEAD_SIZE]:
        log.warning("le cache de l'index %s est tronqué ou corrompu : ignoré", path)
        return None
    try:
        header, entries = marshal.loads(payload)
        if header != _header(root, options):
            log.info("le cache de l'index %s est celui d'une autre version, d'un autre code, coffre ou d'autres options : ignoré", path)
            return None
        entries, plain_postings, plain_links, graphs, plain_masks, plain_boilerplate = entries
        notes, analyses = entries_from_plain(entries)
        masks = _masks_from_plain(plain_masks, notes) if plain_masks is not None and plain_postings is not None else None
        postings = None
        if plain_postings is not None:
            masked = masks[1] if masks is not None else {}
            # the postings counted a masked note's words without the paths: so must its counts, which a reload takes out
            public = {p: (masked.get(p) or analyses[p]).body for p, n in notes.items() if n.public}
            private = {p: analyses[p].body for p, n in notes.items() if not n.public}
            pub_body, pub_fields, priv_body, priv_fields = plain_postings
            postings = (
                _postings_from_plain(pub_body, public),
                _postings_from_plain(pub_fields, None),
                _postings_from_plain(priv_body, private),
                _postings_from_plain(priv_fields, None),
            )
            if postings[1]._docs.keys() != public.keys() or postings[3]._docs.keys() != private.keys():
                raise ValueError("inverted index does not match its notes")
        links = None
        if plain_links is not None:
            tables, edges, dangling, duplicates = plain_links
            if edges.keys() != notes.keys() or not dangling.keys() <= notes.keys():
                raise ValueError("resolved links do not match the notes")
            resolver = object.__new__(LinkResolver)
            if set(tables) != set(vars(LinkResolver(()))):
                raise ValueError("resolver tables differ from this version's")
            resolver.__dict__.update(tables)
            links = (
                resolver,
                edges,
                {p: tuple(Issue(*i) for i in found) for p, found in dangling.items()},
                [Issue(*i) for i in duplicates],
            )
        if graphs is not None and (postings is None or links is None or set(graphs) != {"visitor", "owner"} or graphs["owner"][0].keys() != notes.keys()):
            raise ValueError("link graphs do not match the notes")
        boilerplate = _boilerplate_from_plain(plain_boilerplate, notes) if plain_boilerplate is not None and postings is not None else None
        return Cached(notes, analyses, postings, links, graphs, masks, boilerplate)
    except Exception as exc:  # a malformed payload must never stop the daemon
        log.warning("le cache de l'index %s est inutilisable (%s : %s) : ignoré", path, type(exc).__name__, exc)
        return None
