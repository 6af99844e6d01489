"""Lines that many notes share word for word: a licence paragraph at the foot of every man page,
a template's fixed sentence. They say nothing about any one note, yet BM25 would count their
words in every note that holds them (164 of the 165 man pages of the documentation dev vault end
with the same two paragraphs), so search reads each note without them (`Index`, `semantic`).

Which lines are boilerplate is a property of the whole vault, so it is decided where the whole
vault is seen, when an index is built, and only from the public notes: a private note's lines
never decide what a visitor's index reads. A reload recounts only the changed notes' lines.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from .vault import Note

# Chosen on the dev sets' tune parts (eval/JOURNAL.md, "Measured and left out, round 18"): lines of at
# least 20 characters held by at least 5 % of the public notes and by 3 of them. 2 % or 10 %,
# 10 or 40 characters, moved the documentation vault by one or two questions either way.
MIN_CHARS = 20
MIN_SHARE = 0.05
MIN_NOTES = 3


def _lines(body: str) -> Iterable[str]:
    """The lines of `body` long enough to be boilerplate, stripped."""
    return (s for line in body.splitlines() if len(s := line.strip()) >= MIN_CHARS)


def _keys(body: str) -> set[int]:
    """The distinct lines of `body` long enough to count, as hashes: a note holding a line
    twice is still one note holding it. Python's own string hash is enough: the counts live in
    one process and are never saved (a collision in 2⁶⁴ would merely count two lines as one)."""
    return {hash(s) for s in _lines(body)}


class LineCounts:
    """How many public notes hold each line, by the line's hash, and which lines are common
    enough to be boilerplate. A dict, not numpy arrays: numpy would be imported by every load
    worker and before a daemon listens (a cold start of 10,000 notes took 4.9 s with it, 2.7 s
    without); at 10,000 generated notes it holds 59,000 lines, about 5 MB.

    `evolved` hands its dict on to the counts it makes instead of copying it (a reload of one
    note at 10,000 took 21 ms more with copies): counts evolved once are `spent`, and an index
    built on spent counts counts its notes again. `shared`: the lines two of the notes or more
    hold, by their text, found by `of` as it counts (None for evolved counts)."""

    __slots__ = ("_counts", "notes", "_common", "shared")

    def __init__(self, counts: dict[int, int] | None, notes: int, common: frozenset[int] | None = None, shared: Shared | None = None) -> None:
        self._counts, self.notes = counts, notes
        self._common = common if common is not None else self._above(counts or {}, notes)
        self.shared = shared

    @staticmethod
    def _above(counts: Mapping[int, int], notes: int) -> frozenset[int]:
        floor = _floor(notes)
        return frozenset([key for key, n in counts.items() if n >= floor])

    @classmethod
    def of(cls, bodies: Iterable[str]) -> LineCounts:
        """The counts of `bodies`' lines, and the lines two of them or more hold (`shared`):
        each line's text taken as its second note is counted, where the index cache's writer
        counting them apart held every line's text at once (12 MB more of a first start's peak
        at 10,000 notes). One loop over each note's distinct lines: 55 ms at 10,000 notes,
        where a Counter's update of their hashes, the texts not kept, took 65."""
        counts: dict[int, int] = {}
        twice: dict[int, str] = {}
        held = counts.get
        notes = 0
        for body in bodies:
            for line in set(_lines(body)):
                key = hash(line)
                n = counts[key] = held(key, 0) + 1
                if n == 2:
                    twice[key] = line
            notes += 1
        return cls(counts, notes, shared=Shared({line: counts[key] for key, line in twice.items()}))

    @property
    def spent(self) -> bool:
        return self._counts is None

    def evolved(self, removed: Iterable[str], added: Iterable[str]) -> LineCounts:
        """These counts, the notes of bodies `removed` taken out and those of `added` put in:
        what a reload of a few notes changes, without reading the others. Spends these."""
        counts, self._counts = self._counts, None
        assert counts is not None, "these line counts were evolved already"
        notes = self.notes
        touched: set[int] = set()
        for body in removed:
            keys = _keys(body)
            for key in keys:
                if counts[key] == 1:
                    del counts[key]  # a line no note holds any more is forgotten
                else:
                    counts[key] -= 1
            touched |= keys
            notes -= 1
        for body in added:
            keys = _keys(body)
            for key in keys:
                counts[key] = counts.get(key, 0) + 1
            touched |= keys
            notes += 1
        if _floor(notes) != _floor(self.notes):
            return LineCounts(counts, notes)
        common = set(self._common)  # the same floor: only the touched lines may cross it
        floor = _floor(notes)
        for key in touched:
            if counts.get(key, 0) >= floor:
                common.add(key)
            else:
                common.discard(key)
        return LineCounts(counts, notes, frozenset(common))

    def held_by(self, line: str) -> int:
        """How many notes hold `line`."""
        assert self._counts is not None
        return self._counts.get(hash(line), 0)

    def as_dict(self) -> dict[int, int]:
        assert self._counts is not None
        return dict(self._counts)

    def common(self) -> frozenset[int]:
        """The hashes of the lines held by enough of the notes to be boilerplate."""
        return self._common


@dataclass(frozen=True)
class Shared:
    """The lines two public notes or more hold, by their text, and how many hold each: what
    the index cache keeps so that a start that finds a public note's text changed counts that
    note's lines alone, not every note's (70 ms at 10,000 notes). A line a changed note took
    that no count held may have been in one other note, or none: only a count of every note
    would tell, so it is kept in `most` with how many notes may hold it at most. Every line in
    neither is held by one note at most."""

    counts: Mapping[str, int]
    most: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, bodies: Iterable[str]) -> Shared:
        counts: Counter[str] = Counter()
        for body in bodies:
            counts.update(set(_lines(body)))
        return cls({line: n for line, n in counts.items() if n >= 2})

    def evolved(self, changes: Iterable[tuple[str | None, str | None]]) -> Shared:
        """These counts, each (old body, new body) of a note changed put in (None: the note was
        not public then, or is not now). Only the lines a note dropped or took are touched."""
        counts, most = dict(self.counts), dict(self.most)
        for old, new in changes:
            before, after = set(_lines(old)) if old is not None else set(), set(_lines(new)) if new is not None else set()
            for line in after - before:
                if line in counts:
                    counts[line] += 1
                else:  # one note held it at most
                    most[line] = most.get(line, 1) + 1
            for line in before - after:
                for table in (counts, most):
                    if line in table:
                        if table[line] <= 2:
                            del table[line]  # one note at most holds it now
                        else:
                            table[line] -= 1
        return Shared(counts, most)

    def recounted(self, counts: LineCounts, bodies: Iterable[str]) -> Shared:
        """These lines, those of `bodies` (the notes a reload changed, as they were and are)
        with their counts as `counts` (every note's, evolved) says now."""
        table, most = dict(self.counts), dict(self.most)
        for body in bodies:
            for line in set(_lines(body)):
                most.pop(line, None)
                n = counts.held_by(line)
                if n >= 2:
                    table[line] = n
                else:
                    table.pop(line, None)
        return Shared(table, most)

    def common(self, notes: int) -> frozenset[str] | None:
        """The lines held by enough of `notes` public notes to be boilerplate, or None when a
        line of `most` may be: count them all then."""
        floor = _floor(notes)
        if any(n >= floor for n in self.most.values()):
            return None
        return frozenset(line for line, n in self.counts.items() if n >= floor)


def _floor(notes: int) -> float:
    return max(MIN_NOTES, MIN_SHARE * notes)


CountsOf = Callable[[str, str], Mapping[str, int]]  # (text, the note's path) -> its stems, counted


@dataclass(frozen=True)
class Boilerplate:
    """The vault's boilerplate lines, and the stems of them each note holds (only the notes
    that hold some: `held`). `counts` is None for an index made without its notes' text at
    hand (the cache's seed, and what a start or a reload evolved from `shared` alone): a build
    then evolves `shared`, or counts from scratch without it, as it does from spent counts."""

    counts: LineCounts | None = None
    lines: frozenset[int] = frozenset()
    held: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    # the lines public notes share, by text (`Shared`): made with the counts, kept by the index cache
    # (with `lines` and `held`: a start that finds no note changed reads no body, 70 ms at 10,000
    # notes), evolved by a start's or a reload's changed notes
    shared: Shared | None = field(default=None, compare=False)

    @classmethod
    def kept(cls, texts: Iterable[str], held: Mapping[str, Mapping[str, int]], shared: Shared) -> Boilerplate:
        """The boilerplate the index cache kept (`plain`): its lines' texts, hashed in this
        process, what each note holds of them, and the lines public notes share. Its counts
        are made by the first reload that cannot do with `shared`."""
        return cls(None, frozenset(map(hash, texts)), held, shared)

    def plain(self, notes: Mapping[str, Note]) -> tuple[tuple[str, ...], dict[str, dict[str, int]], tuple[dict[str, int], dict[str, int]]]:
        """What the index cache keeps of it (`kept`): the texts of its lines, found in the notes
        that hold some, the stems each holds, and the lines public notes share with their
        counts (`Shared`: counted here, by the writer, only when no count made it); `notes`: the
        vault's, as it was counted from."""
        texts = {line for path in self.held for line in self.found_in(notes[path].body)}
        shared = self.shared if self.shared is not None else Shared.of(note.body for note in notes.values() if note.public)
        return tuple(sorted(texts)), {path: dict(stems) for path, stems in self.held.items()}, (dict(shared.counts), dict(shared.most))

    @classmethod
    def of(cls, notes: Mapping[str, Note], public: Iterable[str], counts_of: CountsOf) -> Boilerplate:
        """`notes`: every note of the vault; `public`: the paths whose lines are counted."""
        counts = LineCounts.of(notes[p].body for p in public)
        return cls._held_by(counts, notes, counts_of, {}, counts.shared)

    def evolved(
        self,
        notes: Mapping[str, Note],
        old_public: Mapping[str, Note],
        new_public: Mapping[str, Note],
        changed: Iterable[str],
        gone: Iterable[str],
        counts_of: CountsOf,
    ) -> Boilerplate:
        """This vault's boilerplate after a reload that changed the notes `changed` and removed
        `gone`; `old_public`: the public notes before, as this was counted from."""
        changed, gone = list(changed), list(gone)
        touched = [*gone, *changed]
        if self.counts is None or self.counts.spent:
            if self.shared is not None:
                # as the cache kept it (or counts handed on): only the changed notes' lines are counted
                # (none when no public note's text changed: a file touched, read the same; a private
                # note edited), only what the changed notes hold of the lines is read again
                old, new = (old_public.get(p) for p in touched), (new_public.get(p) for p in touched)
                evolved = self.shared.evolved((a.body if a is not None else None, b.body if b is not None else None) for a, b in zip(old, new, strict=True))
                common = evolved.common(len(new_public))
                if common is not None:
                    lines = frozenset(map(hash, common))
                    if lines != self.lines:  # other lines: every note read again for what it holds of them
                        held: dict[str, Mapping[str, int]] = {}
                        return Boilerplate(None, lines, held, evolved)._completed(held, notes, counts_of)
                    again = set(touched)
                    held = {p: c for p, c in self.held.items() if p not in again}
                    kept = Boilerplate(None, self.lines, held, evolved)  # these lines, uncounted still
                    return kept._completed(held, {p: notes[p] for p in changed if p in notes}, counts_of)
            return Boilerplate.of(notes, new_public, counts_of)
        removed = [old_public[p].body for p in touched if p in old_public]
        added = [new_public[p].body for p in changed if p in new_public]
        counts = self.counts.evolved(removed, added)
        shared = self.shared.recounted(counts, [*removed, *added]) if self.shared is not None else None
        if counts.common() != self.lines:  # other lines, or the same held by fewer notes: read them all again
            return self._held_by(counts, notes, counts_of, {}, shared)
        held = {p: c for p, c in self.held.items() if p in notes}
        for path in touched:
            held.pop(path, None)
        return self._held_by(counts, {p: notes[p] for p in changed if p in notes}, counts_of, held, shared)

    @classmethod
    def _held_by(cls, counts: LineCounts, reading: Mapping[str, Note], counts_of: CountsOf, held: dict, shared: Shared | None) -> Boilerplate:
        """The boilerplate of `counts`, `held` completed with what the notes `reading` hold."""
        return cls(counts, counts.common(), held, shared)._completed(held, reading, counts_of)

    def _completed(self, held: dict, reading: Mapping[str, Note], counts_of: CountsOf) -> Boilerplate:
        """This boilerplate, just made on `held`, with what the notes `reading` hold of its lines
        added to `held` before anyone reads it."""
        if self.lines:
            for path, note in reading.items():
                found = self.found_in(note.body)
                if found:
                    held[path] = counts_of("\n".join(found), path)
        return self

    def found_in(self, body: str) -> list[str]:
        """The boilerplate lines of `body`, stripped, each time it holds one."""
        return [s for s in _lines(body) if hash(s) in self.lines]

    def texts(self, notes: Iterable[Note]) -> Counter[str]:
        """Each boilerplate line as written, and how many of `notes` hold it: what `grasbot
        check` shows an author, whose template sentence would otherwise vanish unannounced."""
        found: Counter[str] = Counter()
        for note in notes:
            if note.path in self.held:
                found.update(set(self.found_in(note.body)))
        return found

    def strip(self, text: str) -> str:
        """`text` without its boilerplate lines (a note's body, or a piece of it)."""
        if not self.lines:
            return text
        lines = self.lines
        return "".join(line for line in text.splitlines(keepends=True) if not (len(s := line.strip()) >= MIN_CHARS and hash(s) in lines))


EMPTY = Boilerplate()
