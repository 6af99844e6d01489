"""Words written alike: a note whose words share most of their letters with the question's.

A question's stems meet a note's only when both spell a word alike (« parametrage » is not
« paramètre »'s stem, « postgre » not « postgresql »'s). Here each word of the question and of
the note is read as its pieces of 3 to 5 letters (accents folded, each word padded with a
space), and the first candidates search found are compared with the question by the TF-IDF
cosine of those pieces: the one that stands out gets points (`points`). Measured on the dev
sets (round 38): hit@1 tune 753 → 764 (+16 / −5), test 357 → 367 (+12 / −2), no vault losing.

Words are folded as search's stems are (`analysis.fold`: « nœud » is « noeud »); a fold of its
own, which kept « œ » a letter, ranked two dev questions lower (round 39: tune hit@1 +1 / −0
with `analysis.fold`, test unchanged).

The pieces are hashed into BUCKETS; each distinct word is cut once, into one shared vocabulary,
and a note keeps only its words' ids and counts, so a candidate's vector is gathered when asked
for. It is built off the start's path (`warm`): until then a search gives no such points. A
restart reads it from beside the index cache (`store.spellings`: `dump`, `restore`), every note
whose text is the same reused, the others read again as a reload reads them.
"""

from __future__ import annotations

import math
import re
import threading
import zlib
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from .analysis import fold
from .index import Index
from .vault import Note

if TYPE_CHECKING:
    import numpy as np  # imported where used: serving's start does not wait for numpy

PIECES = (3, 5)  # the shortest and longest piece of a word, its padding spaces included
BUCKETS = 1 << 20  # pieces hashed (crc32) into this many: 4 MB of document frequencies
BODY_CAP = 10_000  # characters of a note's body read: its head says what it is about
POOL = 20  # the candidates compared: search keeps this many exact (`scored`'s keep)
MIN_Z = 1.0  # standard deviations above the pool's mean cosine a note must stand
WEIGHT = 0.25  # points per standard deviation, in units of a BM25 deviation (`semantic_unit`)

_WORD = re.compile(r"\w+")
_KEY = object()  # Index.derived key: the index's Spelling, once warmed
_BUILDING = threading.Lock()  # one build at a time: they share the vocabulary


def word_buckets(word: str) -> list[int]:
    """The buckets of a folded word's pieces, a piece as often as the word holds it. A word
    shorter than a piece is that piece, once more, and no longer piece is cut (the measured
    rule: « de » is «  de  » twice)."""
    padded = f" {word} "
    pieces: list[str] = []
    for n in range(PIECES[0], PIECES[1] + 1):
        if len(padded) < n:
            pieces.append(padded)
            break
        pieces.extend(padded[i : i + n] for i in range(len(padded) - n + 1))
    return [zlib.crc32(p.encode()) & (BUCKETS - 1) for p in pieces]


def note_text(index: Index, path: str) -> str:
    """What the note says as this audience's search reads it (`Index.searchable_text`: a link's
    label alone, a visitor's never holding a private note's masked path): title, file name,
    aliases, declared questions, tags, domains, the body's first BODY_CAP characters."""
    note = index.notes[path]
    fields = (note.title, note.name, *note.aliases, *note.answers, *note.tags, *note.domains)
    parts = (*(index.searchable_text(f, path) for f in fields if f), index.searchable_text(note.body, path)[:BODY_CAP])
    return "\n".join(p for p in parts if p)


class Vocabulary:
    """Every distinct folded word the built notes hold, cut once: word -> id, and each id's
    buckets in one CSR (`offsets`, `buckets`). Shared by the builds that follow (a reload's,
    the other audience's): ids only grow, and each Spelling keeps the arrays of its own time."""

    def __init__(self) -> None:
        import numpy as np

        self.ids: dict[str, int] = {}
        self.offsets = np.zeros(1, dtype=np.int64)
        self.buckets = np.zeros(0, dtype=np.int32)
        self._pending = array("i")  # 4 bytes a piece: a list of a million ints held 36 MB at the build's peak
        self._lengths = array("i")
        self.first = 0  # how many words its first builds found (each audience's: the owner's holds the private notes' too)

    def outgrown(self) -> bool:
        """Whether the words edits added since its first build (ids are never dropped: a
        Spelling built before reads them) passed as many again, and 10,000 more."""
        return len(self.ids) > 2 * self.first + 10_000

    def id_of(self, word: str) -> int:
        """Its id, cutting a word met for the first time (kept for `commit`). A word whose
        pieces could not all be kept (memory short) leaves none: each later word's pieces are
        read from where the lengths before it end."""
        got = self.ids.get(word)
        if got is None:
            pieces = word_buckets(word)
            pending, lengths = self._pending, self._lengths
            held, cut = len(pending), len(lengths)
            got = len(self.ids)
            try:
                pending.extend(pieces)
                lengths.append(len(pieces))
                self.ids[word] = got
            except BaseException:
                del pending[held:], lengths[cut:]
                raise
        return got

    def commit(self, anew: bool = False) -> None:
        """The CSR extended by the words cut since the last commit (new arrays: a Spelling
        built before keeps reading its own). `anew`: an audience's first build on it, whose
        words are what the notes hold, not what edits added (`outgrown`)."""
        import numpy as np

        if self._lengths:
            ends = self.offsets[-1] + np.cumsum(np.frombuffer(self._lengths, dtype=np.int32).astype(np.int64))
            offsets = np.concatenate([self.offsets, ends])
            buckets = np.concatenate([self.buckets, np.frombuffer(self._pending, dtype=np.int32)])
            pending, lengths = array("i"), array("i")  # made before: all four replaced, or none
            # both or neither (memory short between them read every later word's pieces wrong)
            self.offsets, self.buckets = offsets, buckets
            self._pending, self._lengths = pending, lengths
        if anew:
            self.first = max(self.first, len(self.ids))


@dataclass(frozen=True)
class NoteWords:
    """A note's distinct words (vocabulary ids) and how often it holds each, with a digest of
    the text they were read from: a reload reuses them while that text stays the same."""

    ids: np.ndarray  # int32
    counts: np.ndarray  # float32
    digest: int | None  # None: read from the file (`restore`), whose text no reload compares with


_SCRATCH_LOCK = threading.Lock()
_scratches: list[np.ndarray] = []


def _marks() -> np.ndarray:
    """One bit a bucket, set for a question's (128 KB, where a table of each bucket's place,
    4 MB, was read at random: a search's other reads had evicted it, and the pieces' 50,000
    lookups waited on memory); made once, used under _SCRATCH_LOCK and left all zero after use."""
    import numpy as np

    if not _scratches:
        _scratches.append(np.zeros(BUCKETS >> 3, dtype=np.uint8))
    return _scratches[0]


_BIT = (1, 2, 4, 8, 16, 32, 64, 128)  # a bucket's bit in its byte of `_marks`, by its three low bits


def _pieces(offsets: np.ndarray, buckets: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each bucket of these words, word after word, and how many each word has: the ranges of
    the CSR read at once, no loop over words. Read by `np.take`, the places summed in place:
    numpy's `[]` takes a slower path for an index array, and a search's 50,000 pieces made
    three more temporaries of them (`Spelling.cosines` 1.37 → 1.29 ms inside a search)."""
    import numpy as np

    starts = np.take(offsets, ids)
    lengths = np.take(offsets, ids + 1)
    lengths -= starts
    if not len(lengths):
        return np.zeros(0, dtype=np.int32), lengths
    ends = np.cumsum(lengths)
    starts -= ends - lengths  # each word's first piece, less its place among them all
    places = np.arange(ends[-1])
    places += np.repeat(starts, lengths)
    return np.take(buckets, places), lengths


def _gather(offsets: np.ndarray, buckets: np.ndarray, ids: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each bucket of these words and its count, a word's count repeated for each piece."""
    import numpy as np

    found, lengths = _pieces(offsets, buckets, ids)
    return found, np.repeat(counts, lengths) if len(lengths) else np.zeros(0)


class Reading(NamedTuple):
    """The notes a build read, and those that type a hidden note's path (`Index.masked`, the
    same for both audiences): the text of any other depends on the note alone
    (`Index.searchable_text`). `audience`: whose index it read (`Vocabulary.commit`'s anew)."""

    notes: Mapping[str, Note]
    masked: frozenset[str]
    audience: str

    @classmethod
    def of(cls, index: Index) -> Reading:
        return cls(index.notes, index.masked, index.audience)

    def reads_as(self, other: Reading, path: str) -> bool:
        """Whether the note at `path` reads the same in both: the same object, masked in neither."""
        note = self.notes[path]
        return other.notes.get(path) is note and path not in self.masked and path not in other.masked


class Spelling:
    """One audience's piece vectors: each note's words, the pieces' document frequencies (one
    int32 array of BUCKETS) and the notes' count, against one vocabulary."""

    def __init__(self, vocabulary: Vocabulary, notes: Mapping[str, NoteWords], df: np.ndarray, reading: Reading) -> None:
        self.vocabulary = vocabulary
        self.offsets, self.buckets = vocabulary.offsets, vocabulary.buckets  # as of this build
        self.notes = notes
        self.df = df
        self.n = len(notes)
        self.reading = reading
        self._norms: dict[str, float] = {}  # `norm`, filled as questions come and by `keep_norms`

    def _idf(self, found: np.ndarray) -> np.ndarray:
        """Smooth idf of each bucket."""
        import numpy as np

        return np.log((1.0 + self.n) / (1.0 + self.df[found].astype(np.float64))) + 1.0

    def _vector(self, buckets: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The sorted distinct buckets and their weights, sublinear tf times idf, not normalised
        (a sort: numpy's hashed unique is slower on a note's few thousand pieces)."""
        import numpy as np

        if not len(buckets):
            return buckets, np.zeros(0)
        order = np.argsort(buckets, kind="stable")
        ordered = buckets[order]
        first = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
        found = ordered[first]
        return found, (1.0 + np.log(np.add.reduceat(counts[order].astype(np.float64), first))) * self._idf(found)

    def norm(self, path: str, pieces: tuple[np.ndarray, np.ndarray] | None = None) -> float:
        """The length of the note's vector, kept: a question reads only its own buckets of a
        note's thousands of pieces (`cosines`), and needs this. `pieces`: the note's, when
        gathered already."""
        known = self._norms.get(path)
        if known is None:
            words = self.notes[path]
            weights = self._vector(*(pieces if pieces is not None else _gather(self.offsets, self.buckets, words.ids, words.counts)))[1]
            known = self._norms[path] = math.sqrt(float(weights @ weights))
        return known

    def keep_norms(self) -> None:
        """Every note's `norm`, so that no question pays for one (a worker's: seconds at 10,000 notes)."""
        for path in self.notes:
            self.norm(path)

    def question_vector(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """The sorted buckets of a question's pieces and their weights. A word no note holds is
        cut here and not kept: a visitor's words do not grow the vocabulary."""
        import numpy as np

        words = Counter(_WORD.findall(fold(text)))
        ids, known = self.vocabulary.ids, len(self.offsets) - 1
        buckets: list[int] = []
        counts: list[int] = []
        for word, times in words.items():
            got = ids.get(word)
            cut = word_buckets(word) if got is None or got >= known else self.buckets[self.offsets[got] : self.offsets[got + 1]].tolist()
            buckets += cut
            counts += [times] * len(cut)
        found, weights = self._vector(np.array(buckets, dtype=np.int32), np.array(counts, dtype=np.float32))
        norm = math.sqrt(float(weights @ weights))
        return found, weights / norm if norm else weights

    def cosines(self, text: str, paths: Sequence[str]) -> list[float]:
        """The cosine of the question's vector with each note's (0.0 for a note not built): only
        the note's pieces among the question's are counted, its length is kept (`norm`). The
        notes are read together (one gather of their words' pieces, one count of the question's
        pieces in each), then each cosine summed as a note's own: 20 notes' numpy calls one by
        one cost more than their arithmetic."""
        import numpy as np

        asked, weights = self.question_vector(text)
        out = [0.0] * len(paths)
        built = [(k, path, words) for k, path in enumerate(paths) if (words := self.notes.get(path)) is not None]
        if not len(asked) or not built:
            return out
        ids = np.concatenate([words.ids for _, _, words in built])
        counts = np.concatenate([words.counts for _, _, words in built])
        buckets, lengths = _pieces(self.offsets, self.buckets, ids)
        ends = np.cumsum(lengths)  # where each word's pieces end among them all
        firsts = np.cumsum([0, *(len(words.ids) for _, _, words in built)])  # each note's first word
        width = len(asked)
        bit = np.array(_BIT, dtype=np.uint8)
        with _SCRATCH_LOCK:
            marks = _marks()
            np.bitwise_or.at(marks, asked >> 3, bit[asked & 7])  # several of the question's buckets may share a byte
            try:
                held_by = np.take(marks, buckets >> 3)
            finally:
                marks[asked >> 3] = 0
        # `take`, not `[]`: numpy's indexing reads an int32 index by a slower path, and finds the
        # nonzero of a bool array faster than of bytes (the 50,000 pieces' test 0.29 → 0.16 ms)
        held_by &= np.take(bit, buckets & 7)
        hit = np.flatnonzero(held_by.astype(bool))
        # the word and the note of each piece found, read from the few found alone (not a count
        # and a note repeated for each of the 50,000 pieces)
        word = np.searchsorted(ends, hit, side="right")
        note = np.searchsorted(firsts, word, side="right") - 1
        # each note's count of each of the question's pieces (its place among `asked`, which is sorted)
        tf = np.bincount(note * width + np.searchsorted(asked, buckets[hit]), weights=counts[word], minlength=len(built) * width).reshape(len(built), width)
        held = tf > 0
        theirs = (1.0 + np.log(tf[held])) * np.broadcast_to(self._idf(asked), tf.shape)[held]
        mine = np.broadcast_to(weights, tf.shape)[held]
        found = np.cumsum(held.sum(axis=1)).tolist()
        bounds = np.concatenate(([0], ends))[firsts].tolist()  # where each note's pieces begin and end
        words = firsts.tolist()
        first = 0
        for (k, path, _), start, stop, a, b, end in zip(built, bounds[:-1], bounds[1:], words[:-1], words[1:], found, strict=True):
            norm = self._norms.get(path)
            if norm is None:  # not measured yet (`keep_norms`): its pieces are here
                norm = self.norm(path, (buckets[start:stop], np.repeat(counts[a:b], lengths[a:b])))
            if end > first and norm:
                out[k] = float(mine[first:end] @ theirs[first:end]) / norm
            first = end
        return out

    def points(self, text: str, paths: Sequence[str], unit: float) -> dict[str, tuple[float, float, float]]:
        """{path: (points, cosine, z)} for the notes among `paths` (the first POOL candidates)
        whose cosine stands MIN_Z deviations above theirs: WEIGHT × `unit` × z points."""
        import numpy as np

        pool = list(paths[:POOL])
        if not pool:
            return {}
        cosines = np.array(self.cosines(text, pool))
        mean, sd = float(cosines.mean()), float(cosines.std())
        if sd <= 0:
            return {}
        out = {}
        for path, cosine in zip(pool, cosines.tolist(), strict=True):
            z = (cosine - mean) / sd
            if z >= MIN_Z - 1e-9:  # the better of two stands exactly one deviation out: not left to rounding
                out[path] = (WEIGHT * unit * z, cosine, z)
        return out


def _unique_buckets(offsets: np.ndarray, buckets: np.ndarray, words: Iterable[NoteWords]) -> np.ndarray:
    """How many of these notes hold each bucket: each note's buckets counted once (an indexed
    `+=` adds once for an index given twice, no sort needed)."""
    import numpy as np

    df = np.zeros(BUCKETS, dtype=np.int32)
    for w in words:
        df[_pieces(offsets, buckets, w.ids)[0]] += 1
    return df


def build(index: Index, previous: Sequence[Spelling] = ()) -> Spelling:
    """The index's Spelling. `previous`: other Spellings (the version before, the other
    audience's) whose notes' words are reused, as the same arrays, for each note whose text is
    the same; the document frequencies are counted again from the first's, for the notes that
    differ (all of them without one)."""
    with _BUILDING:
        return _build(index, previous)


def _build(index: Index, previous: Sequence[Spelling]) -> Spelling:
    import numpy as np

    vocabulary = previous[0].vocabulary if previous else Vocabulary()
    reusable = [s for s in previous if s.vocabulary is vocabulary]  # ids of one vocabulary only
    reading = Reading.of(index)
    notes: dict[str, NoteWords] = {}
    for path in index.notes:
        kept = next((old for s in reusable if reading.reads_as(s.reading, path) and (old := s.notes.get(path)) is not None), None)
        if kept is None:  # edited, masked, or new: read, then reused if it reads as it did
            text = note_text(index, path)
            digest = hash(text)
            kept = next((old for s in reusable if (old := s.notes.get(path)) is not None and old.digest == digest), None)
            if kept is None:
                words = Counter(_WORD.findall(fold(text)))
                found = list(map(vocabulary.ids.get, words))
                if None in found:  # words met for the first time
                    found = list(map(vocabulary.id_of, words))
                ids = np.array(found, dtype=np.int32)
                kept = NoteWords(ids, np.fromiter(words.values(), dtype=np.float32, count=len(words)), digest)
        notes[path] = kept
    vocabulary.commit(anew=not any(s.reading.audience == index.audience for s in reusable))
    offsets, buckets = vocabulary.offsets, vocabulary.buckets
    if previous:  # the notes that differ from the first's: their counts leave, the new ones come
        base = previous[0]
        went = [w for p, w in base.notes.items() if notes.get(p) is not w]
        came = [w for p, w in notes.items() if base.notes.get(p) is not w]
        df = base.df - _unique_buckets(base.offsets, base.buckets, went) + _unique_buckets(offsets, buckets, came)
    else:
        df = _unique_buckets(offsets, buckets, notes.values())
    built = Spelling(vocabulary, notes, df, reading)
    if previous and built.n == base.n and np.array_equal(df, base.df):
        # no idf moved (a field this does not read edited, words a note held said again): the
        # lengths known of the notes that are the same stay exactly what they were, not measured
        # again (seconds at 10,000 notes). An edit that moves one piece's count moves nearly every
        # note's length: a line added to one note moved 61 pieces, which 9,965 of 10,000 hold.
        known = list(base._norms.items())  # at once: a search adds to them meanwhile
        built._norms = {p: length for p, length in known if notes.get(p) is base.notes[p]}
    return built


class Dumped(NamedTuple):
    """What `dump` gives: the plain parts (str, int, bytes, tuples), and the notes' word ids and
    counts as arrays, one a note, to be written one after the other (`ids`, then `counts`): in
    one piece they were 60 MB more at a daemon's peak at 10,000 notes, over its 600 MB."""

    plain: dict
    ids: Iterator[np.ndarray]
    counts: Iterator[np.ndarray]


def dump(spellings: Mapping[str, Spelling]) -> Dumped:
    """These Spellings, built on one vocabulary, for `restore`: each note's words once (the
    owner's public notes share the visitor's), the vocabulary reduced to the words some note
    holds, renumbered (a file read at each start, edits' words kept, would only grow), the
    document frequencies and the lengths known. `restore` takes `plain` with `ids` and `counts`
    the bytes of those arrays, in order."""
    import numpy as np

    with _BUILDING:  # a build adds words meanwhile
        vocabulary = next(iter(spellings.values())).vocabulary
        if any(s.vocabulary is not vocabulary for s in spellings.values()):
            raise ValueError("the spellings were built on two vocabularies")
        latest = max(spellings.values(), key=lambda s: len(s.offsets))  # ids only grow: its arrays hold every other's
        offsets, buckets = latest.offsets, latest.buckets
        words = list(vocabulary.ids)[: len(offsets) - 1]  # a dict keeps the order ids were given in
    entries: list[NoteWords] = []
    numbers: dict[int, int] = {}  # id(NoteWords) -> its place in entries
    audiences = {}
    for audience, spelling in spellings.items():
        paths = tuple(spelling.notes)
        taken = array("i")
        for path in paths:
            words_of = spelling.notes[path]
            number = numbers.get(id(words_of))
            if number is None:
                number = numbers[id(words_of)] = len(entries)
                entries.append(words_of)
            taken.append(number)
        norms = np.array([spelling._norms.get(path, math.nan) for path in paths], dtype=np.float64)
        audiences[audience] = (paths, taken.tobytes(), spelling.df.astype(np.int32).tobytes(), norms.tobytes())
    held = np.zeros(len(words), dtype=bool)
    for entry in entries:
        held[entry.ids] = True
    used = np.flatnonzero(held)
    renumber = np.zeros(len(words), dtype=np.int32)
    renumber[used] = np.arange(len(used), dtype=np.int32)
    kept, _ = _pieces(offsets, buckets, used)
    lengths = offsets[used + 1] - offsets[used]
    plain = {
        "words": "\n".join(words[i] for i in used.tolist()),  # a word is \\w+: never a line break
        "offsets": np.concatenate(([0], np.cumsum(lengths))).astype(np.int64).tobytes(),
        "buckets": kept.astype(np.int32).tobytes(),
        "ends": np.cumsum([len(w.ids) for w in entries], dtype=np.int64).tobytes(),
        "audiences": audiences,
    }
    return Dumped(plain, (renumber[w.ids] for w in entries), (np.asarray(w.counts, dtype=np.float32) for w in entries))


def restore(plain: Mapping, readings: Mapping[str, Reading], texts: Mapping[str, Mapping[str, str]]) -> dict[str, Spelling]:
    """The Spellings `dump` gave, on one new vocabulary, each with its notes as they were and
    `readings[audience]`: the notes whose words still read the same (a reload's `previous`
    reuses those alone; the others are there for their document frequencies). `texts`: the text
    of each note that only its digest can tell from another version (a masked one, `Reading`).
    ValueError when the parts do not fit together."""
    import numpy as np

    words = plain["words"].split("\n") if plain["words"] else []
    offsets = np.frombuffer(plain["offsets"], dtype=np.int64)
    buckets = np.frombuffer(plain["buckets"], dtype=np.int32)
    ends = np.frombuffer(plain["ends"], dtype=np.int64)
    ids = np.frombuffer(plain["ids"], dtype=np.int32)
    counts = np.frombuffer(plain["counts"], dtype=np.float32)
    if len(offsets) != len(words) + 1 or offsets[0] != 0 or offsets[-1] != len(buckets) or (len(offsets) > 1 and (np.diff(offsets) <= 0).any()):
        raise ValueError("the vocabulary's pieces do not match its words")
    if len(buckets) and (buckets.min() < 0 or buckets.max() >= BUCKETS):
        raise ValueError("a piece outside the buckets")
    if len(ids) != len(counts) or (len(ends) and (ends[-1] != len(ids) or (np.diff(ends) < 0).any() or ends[0] < 0)) or (not len(ends) and len(ids)):
        raise ValueError("the notes' words do not match their counts")
    if len(ids) and (ids.min() < 0 or ids.max() >= len(words)):
        raise ValueError("a note holds a word the vocabulary does not")
    vocabulary = Vocabulary()
    vocabulary.ids = {word: i for i, word in enumerate(words)}
    if len(vocabulary.ids) != len(words):
        raise ValueError("a word given twice")
    vocabulary.offsets, vocabulary.buckets = offsets, buckets
    vocabulary.first = len(words)
    starts = np.concatenate(([0], ends[:-1])).tolist() if len(ends) else []
    entries = [(ids[a:b], counts[a:b]) for a, b in zip(starts, ends.tolist(), strict=True)]
    made: dict[tuple[int, str], NoteWords] = {}
    out = {}
    for audience, (paths, taken, df, norms) in plain["audiences"].items():
        reading = readings[audience]
        numbers = np.frombuffer(taken, dtype=np.int32).tolist()
        df_array = np.frombuffer(df, dtype=np.int32)
        lengths = np.frombuffer(norms, dtype=np.float64).tolist()
        if len(numbers) != len(paths) or len(lengths) != len(paths) or len(set(paths)) != len(paths) or len(df_array) != BUCKETS:
            raise ValueError(f"the {audience}'s notes do not match their parts")
        notes: dict[str, NoteWords] = {}
        for path, number in zip(paths, numbers, strict=True):
            text = texts.get(audience, {}).get(path)
            key = (number, text if text is not None else "")
            words_of = made.get(key)
            if words_of is None:
                entry_ids, entry_counts = entries[number]  # IndexError past them
                words_of = made[key] = NoteWords(entry_ids, entry_counts, hash(text) if text is not None else None)
            notes[path] = words_of
        spelling = Spelling(vocabulary, notes, df_array, reading)
        spelling._norms = {path: length for path, length in zip(paths, lengths, strict=True) if path in reading.notes and math.isfinite(length)}
        out[audience] = spelling
    return out


def adopt(index: Index, spelling: Spelling) -> Spelling:
    """Give the index a Spelling `restore` gave for exactly its notes (a start's, from the file)."""
    with _BUILDING:
        return index.derived(_KEY, lambda: spelling)


def ready(index: Index) -> Spelling | None:
    """The index's Spelling once built (`warm`), else None: a search does not wait for it."""
    return index.made(_KEY)


def warm(index: Index, previous: Sequence[Spelling] = ()) -> Spelling:
    """The index's Spelling, built once (a second call, or one waiting for the first, returns
    it), reusing what `previous` holds."""
    with _BUILDING:
        return index.derived(_KEY, lambda: _build(index, previous))
