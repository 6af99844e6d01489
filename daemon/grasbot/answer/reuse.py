"""Answer reuse: finished answers kept for the questions visitors ask again and again, and an
answer being written shared by everyone who asks the same question meanwhile.

A site hears "Qui es-tu ?" a hundred times a day, and each costs the GPU seconds. An answer is
kept under the question (case and spacing folded), the audience it was written for, the
settings that shape it and whether meaning was part of the search; it belongs to one vault
snapshot, so a reload (a new snapshot) forgets every answer at once. Only first questions
(no history), and only complete answers the model wrote (never a fallback, never a busy
answer) are kept. The audience is in the key: an answer the owner's notes shaped is never
given to a visitor. The owner's answers (its previews of a visitor's included) are kept
apart from the visitors', and a visitor's question never reads them: a visitor told `reused`
would read that the owner had asked the question. The owner's preview reads the visitors'
first (what a visitor is told, though the owner's own was written before it), without moving
them in their order.

A link shared on a forum brings fifty visitors asking the same first question within seconds,
before the first answer is finished and kept: `Flights` gives them one generation, whose
pieces each of them reads from the start (`Flight.follow`), instead of fifty slots.

A kept answer given at once told a visitor who timed it that the question had been asked
before: it is kept with the pace of its writing (`Pace`), and a visitor, once their turn has
come as it would for an answer written (`Admission.turn`), is given it at that pace
(`replayed`), without the model.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import time
import unicodedata
import weakref
from array import array
from collections import Counter, OrderedDict
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Hashable, Iterable, Iterator
from typing import NamedTuple

from .admission import Granted

__all__ = ["AnswerCache", "Flight", "Flights", "Kept", "Pace", "normalise_question", "replay_pieces", "replayed", "waited"]

_SPACE = re.compile(r"\s+")
_SPACE_BEFORE_MARK = re.compile(r"\s+([?!.,;:…])")
_TRAILING_MARKS = re.compile(r"[\s?!.…]+$")
REPLAY_PIECE = 48  # characters per `token` event when a kept answer is given at once


def normalise_question(q: str) -> str:
    """ "Qui es-tu ?", "qui es-tu?" and "QUI  ES-TU" are one question; "Qui es-tu, toi ?" is not."""
    text = unicodedata.normalize("NFKC", q).casefold()
    text = _SPACE_BEFORE_MARK.sub(r"\1", _SPACE.sub(" ", text))
    return _TRAILING_MARKS.sub("", text).strip()


_sleep = asyncio.sleep  # what a replay waits with (a test's clock)


class Pace(NamedTuple):
    """How an answer was written: the model's pieces, when each came and when the last did, in
    seconds from when the model was asked for it (its slot granted): what its writing showed a
    visitor, through the stream's filters. Its wait for a slot is left out: a visitor given it
    again waits for their own (`Admission.turn`), in the load of their time.

    Kept as the pieces' text joined, where each ends and when each came, in arrays (`of`): as a
    tuple of its 400 pieces and one of their times, an answer of 2.2 KB took 36 KB of
    `AnswerCache`, and 7.4 KB so (tracemalloc)."""

    text: str = ""
    ends: array = array("I")  # where each piece ends in `text`
    times: array = array("d")
    total: float = 0.0

    @classmethod
    def of(cls, pieces: Iterable[str], times: Iterable[float], total: float) -> Pace:
        pieces = list(pieces)
        return cls("".join(pieces), array("I", itertools.accumulate(map(len, pieces))), array("d", times), total)

    def pieces(self) -> Iterator[str]:
        """The pieces as the model gave them."""
        start = 0
        for end in self.ends:
            yield self.text[start:end]
            start = end


AT_ONCE = Pace()  # an answer whose writing is not known: given at once


class Kept(NamedTuple):
    """A kept answer's payload and the pace it was written at."""

    payload: dict
    pace: Pace = AT_ONCE


async def replayed(text: str, pace: Pace) -> AsyncGenerator[str, None]:
    """A kept answer as the model wrote it (`Pace.pieces`), each piece as long after the one
    before it as it came, then a last wait to its end; for the caller to show through the
    filters a written answer goes through, so that its tokens and their pauses are the ones
    its writing showed. Given at once, or evenly spaced in pieces cut by words, it told a
    visitor who timed its tokens that it was kept: a written answer's rhythm is the model's,
    with a pause wherever a citation is held until its `]`. `text` in `replay_pieces`, at once,
    when its writing is not known."""
    if not pace.ends:
        for piece in replay_pieces(text):
            yield piece
        return
    before = 0.0
    for piece, came in zip(pace.pieces(), pace.times, strict=True):
        await _sleep(came - before)
        before = came
        yield piece
    await _sleep(pace.total - before)


async def waited(text: str, pace: Pace) -> None:
    """As long as `replayed` takes: a kept answer given whole (/ask) comes when its stream would end."""
    async for _ in replayed(text, pace):
        pass


def replay_pieces(text: str, size: int = REPLAY_PIECE) -> Iterator[str]:
    """A kept answer as a stream's `token`s, cut after a space near every `size` characters:
    joined, they give back `text`."""
    start = 0
    while start < len(text):
        end = text.find(" ", start + size)
        end = len(text) if end == -1 else end + 1
        yield text[start:end]
        start = end


class AnswerCache:
    """A bounded LRU of answer payloads for one snapshot at a time; size 0: off."""

    def __init__(self, size: int, shape: Hashable = ()) -> None:
        self.size = size
        self.shape = shape  # the settings an answer depends on (a new GrasBot for new settings, but said)
        # The vault version the answers were written on and the answers, bound as one: a reload
        # (another thread) binds a new pair in one assignment. Kept apart, a question read
        # between the new version and the clearing of the old answers got one written before
        # the reload, which may quote a note it made private.
        # the owner's answers are the second dict: they never push a visitor's out, nor are given to one
        self._bound: tuple[weakref.ref | None, OrderedDict[tuple, Kept], OrderedDict[tuple, Kept]] = (None, OrderedDict(), OrderedDict())
        self._hits: Counter[str] = Counter()  # by who asked ("owner", else the audience): a visitor's /health counts the visitors' only

    def key(self, q: str, audience: str, ranked_by: tuple[bool, ...]) -> tuple:
        """`ranked_by`: which of the signals built off the start's path (meaning, spelling) the
        search had: an answer written before they were is not given once they are."""
        return (normalise_question(q), audience, ranked_by, self.shape)

    def get(self, snapshot: object, key: tuple, *, owner: bool = False) -> Kept | None:
        """The kept answer for `key`, with its pace; `owner`: the owner asks (a preview as a
        visitor included): the one visitors are given (left where it is in their order), what a
        preview shows, else the owner's own; a reuse a visitor's /health does not count."""
        ref, visitors, owners = self._bound
        if ref is None or ref() is not snapshot:
            return None
        found = visitors.get(key) if owner else None
        if found is None:
            kept = owners if owner else visitors
            found = kept.get(key)
            if found is not None:
                kept.move_to_end(key)
        if found is not None:
            self._hits["owner" if owner else key[1]] += 1
        return found

    def put(self, snapshot: object, key: tuple, payload: dict, *, owner: bool = False, pace: Pace = AT_ONCE) -> None:
        """Keep `payload`, written on `snapshot` at `pace`, unless the vault has been reloaded
        since; `owner`: written for the owner's question, kept among the owner's."""
        if self.size <= 0:
            return
        ref, visitors, owners = self._bound
        if ref is None or ref() is None:
            self._bind(snapshot)
            ref, visitors, owners = self._bound
        if ref is None or ref() is not snapshot:
            return  # written on a vault version that is gone, or not yet seen by get()
        kept = owners if owner else visitors
        kept[key] = Kept(payload, pace)
        kept.move_to_end(key)
        while len(kept) > self.size:
            kept.popitem(last=False)

    def forget(self, snapshot: object) -> None:
        """A new vault version: every answer goes (the reload calls it once it has swapped)."""
        self._bind(snapshot)

    def __len__(self) -> int:
        return len(self._bound[1]) + len(self._bound[2])

    def counts(self, audience: str | None = None) -> tuple[int, int]:
        """(answers kept, times one was reused) for the visitors' questions to `audience`, or
        everyone's (the owner's too)."""
        _, visitors, owners = self._bound
        if audience is None:
            return len(visitors) + len(owners), self._hits.total()
        return sum(1 for key in visitors if key[1] == audience), self._hits[audience]

    def _bind(self, snapshot: object) -> None:
        self._bound = (weakref.ref(snapshot), OrderedDict(), OrderedDict())


class Flight:
    """One answer being written, shared: its pieces so far, the newest of anything else its
    source said (a place in the queue), and how it ended. The generation runs in a task of its
    own, so a reader who leaves does not end it for the others; the last one to leave does
    (the task is cancelled: its slot is freed and the model's request closed)."""

    def __init__(self, snapshot: object) -> None:
        self.snapshot = snapshot
        self.pieces: list[str] = []
        self.status: object = None  # the newest item of the source that is not a piece
        self.error: BaseException | None = None
        self.finished = False
        self.readers = 0
        self.abandoned = False  # its last reader left: cancelled, never to be joined
        self.task: asyncio.Task | None = None
        self._changed = asyncio.Event()
        self._started = time.monotonic()  # then when the model was asked for it (`Granted`)
        self._times: list[float] = []  # when each piece came
        self._ended: float | None = None

    @property
    def pace(self) -> Pace:
        """The pace it was written at, once finished (`Pace`)."""
        ended = self._ended if self._ended is not None else time.monotonic()
        return Pace.of(self.pieces, (came - self._started for came in self._times), ended - self._started)

    async def run(self, source: AsyncIterator[object]) -> None:
        try:
            async for item in source:
                if isinstance(item, str):
                    self._times.append(time.monotonic())
                    self.pieces.append(item)
                elif isinstance(item, Granted):
                    self._started = time.monotonic()
                    self.status = None  # out of the queue: a place said before is past
                    continue
                else:
                    self.status = item
                self._notify()
        except asyncio.CancelledError:
            self.error = asyncio.CancelledError()
            raise
        except Exception as exc:  # told to every reader, who answers from the notes
            self.error = exc
        finally:
            self._ended = time.monotonic()
            self.finished = True
            self._notify()

    def _notify(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def follow(self, turn: AsyncIterator[object] | None = None) -> AsyncGenerator[object, None]:
        """Every piece from the first, then each as it comes; before the first piece, the
        source's newest status when it changes. Raises what ended the source. Each reader
        `Flights.join` counted follows once. `turn`: a visitor who joined it waits their own
        (`Admission.turn`: its places and refusals, not the first asker's, which told them
        that another had just asked the same), then gets each piece as long after their turn
        came as it came after the model was asked for it, those written meanwhile included.
        Their turn come, the flight's places if it went back into the queue (its host failed
        before a word): the wait is the flight's then, and a joiner told nothing sat silent
        up to LLM_MAX_WAIT where the first asker was told its place."""
        sent, said = 0, None
        try:
            if turn is not None:
                async for place in turn:
                    yield place
            joined = time.monotonic()
            while True:
                changed = self._changed
                while sent < len(self.pieces):
                    if turn is not None and (wait := joined + self._times[sent] - self._started - time.monotonic()) > 0:
                        await _sleep(wait)
                    sent += 1
                    yield self.pieces[sent - 1]
                if not sent and self.status is not None and self.status is not said:
                    said = self.status
                    yield said
                    continue  # the state may have moved while the reader read
                if self.finished:
                    if self.error is not None:
                        raise self.error
                    return
                await changed.wait()
        finally:
            self.readers -= 1
            if not self.readers and self.task is not None and not self.task.done():
                self.abandoned = True
                self.task.cancel()


class Flights:
    """The answers being written, by key; a finished one is forgotten (AnswerCache keeps it)."""

    def __init__(self) -> None:
        self._flying: dict[Hashable, Flight] = {}
        self._shared: Counter[str] = Counter()  # questions that joined a flight, by who asked, as AnswerCache's hits (what /health says)

    def shared(self, audience: str | None = None) -> int:
        return self._shared.total() if audience is None else self._shared[audience]

    def join(self, key: Hashable, snapshot: object, source: Callable[[], AsyncIterator[object]], audience: str) -> tuple[Flight, bool]:
        """The flight for `key` on `snapshot`, and whether this call started it (with
        `source()`): a flight of another vault version is never joined. The caller is one
        more reader, and must `follow` the flight; `audience`: who asks, as /health counts it."""
        flight = self._flying.get(key)
        if flight is not None and flight.snapshot is snapshot and not (flight.finished or flight.abandoned):
            flight.readers += 1
            self._shared[audience] += 1
            return flight, False
        flight = self._flying[key] = Flight(snapshot)
        flight.readers = 1
        task = flight.task = asyncio.get_running_loop().create_task(flight.run(source()))
        task.add_done_callback(lambda _: self._landed(key, flight))
        return flight, True

    def _landed(self, key: Hashable, flight: Flight) -> None:
        if self._flying.get(key) is flight:
            del self._flying[key]

    def __len__(self) -> int:
        return len(self._flying)
