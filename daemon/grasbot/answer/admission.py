"""Admission control for generation: a few slots per model host, one bounded queue, a bounded wait.

A consumer GPU writes a few answers at a time; sending it a hundred makes every visitor wait
for all of them, and most until the timeout. So each host takes at most `slots` generations,
the others wait in one FIFO queue (the first slot freed on any host goes to its head), and a
question that finds the queue full, or whose estimated wait is over `max_wait`, is refused at
once (`Busy`: the caller answers from the notes). A queued question that is still waiting at
`max_wait` is refused then. The owner has a slot of their own, beside the visitors'.

A host that cannot be reached or lacks the model (`LLMUnavailable` before any word of its answer) is skipped for
`RETRY_AFTER` seconds, then tried again, and the question goes to the next host; a host whose
connection broke after it had begun to answer was reached: only that answer fails (the rule
the embeddings follow too: `_hosts`).
Leaving (a closed stream, a cancelled request) frees the place or slot at once: everything
is released in `finally` blocks, after the upstream request is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from dataclasses import dataclass, field

from .._exceptions import LLMUnavailable
from .._hosts import RETRY_AFTER, Reach
from .llm import LLMClient

__all__ = ["GRANTED", "Admission", "Busy", "Granted", "NoHost", "Position", "SearchLane"]

#: What an answer is expected to take before one was measured: Qwen3 8B on a consumer GPU
#: writes one in 2-10 s. Replaced by the measured mean as soon as answers finish.
FIRST_GUESS = 5.0
SMOOTHING = 0.2  # weight of the newest answer's time in the running mean
OWNER_SLOTS = 1


class SearchLane:
    """Questions searched one at a time, first come first served, with the network read between
    two searches. A search is CPU on the event loop (a few ms with meaning); under a burst the
    loop would otherwise run every search it had scheduled before reading the visitors who came
    next, who then wait seconds for a first event. In the lane a newcomer is counted at once
    (`waiting`: the stream tells them their place) and its search waits for its turn."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()  # FIFO; an uncontended turn does not suspend
        self.waiting = 0  # questions in the lane: searching, or waiting to

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        self.waiting += 1
        try:
            async with self._lock:
                # held across one turn of the loop: the visitors it reads meanwhile line up
                # behind (each search then has a turn of its own, the network read between)
                await asyncio.sleep(0)
                yield
        finally:
            self.waiting -= 1


class Busy(Exception):
    """No generation for this question: the queue is full, or the wait would be too long."""


class NoHost(LLMUnavailable):
    """Every model host failed lately: the extractive fallback is the last resort."""


@dataclass(frozen=True)
class Position:
    """The question's place in the queue, 1-based (what the stream's `queue` event says)."""

    position: int


class Granted:
    """`stream`'s word that a slot is held and the model asked: an answer's pace is read from
    there (answer.reuse.Pace), its wait in the queue being the load of its time, not the model's."""


GRANTED = Granted()


@dataclass(eq=False, kw_only=True)
class Host(Reach):
    llm: LLMClient
    slots: int
    visitors: int = 0  # generations of visitors in flight
    owners: int = 0  # the owner's, beside them

    @property
    def in_use(self) -> int:
        return self.visitors + self.owners


@dataclass(eq=False)
class _Waiter:
    owner: bool
    ends: float  # when it stops waiting (max_wait after it came)
    granted: asyncio.Future = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    moved: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass(eq=False)
class Ticket:
    """A slot held on a host."""

    host: Host
    owner: bool
    started: float


class Admission:
    def __init__(
        self,
        clients: Sequence[LLMClient],
        *,
        slots: int = 2,
        queue_limit: int = 32,
        max_wait: float = 20.0,
        retry_after: float = RETRY_AFTER,
    ) -> None:
        if not clients:
            raise ValueError("at least one model host is needed")
        self.hosts = [Host(c.host, llm=c, slots=slots) for c in clients]
        self.queue_limit = queue_limit
        self.max_wait = max_wait
        self.retry_after = retry_after
        self._queue: deque[_Waiter] = deque()  # visitors
        self._owner_queue: deque[_Waiter] = deque()
        self._owner_in_use = 0
        self.answer_seconds = FIRST_GUESS
        self._wakeup: asyncio.TimerHandle | None = None

    # ---- the public side

    async def stream(self, messages: list[dict], *, owner: bool = False) -> AsyncGenerator[Position | Granted | str, None]:
        """The answer's pieces, after `Position`s while the question waits its turn, then
        `GRANTED` once its slot is held. Raises Busy, NoHost, or the LLMError of the host that
        answered."""
        tried: set[int] = set()
        while True:
            waiter = self._enter(owner)
            ticket = None
            try:
                async for place in self._places(waiter):
                    yield place
                ticket = waiter.granted.result()
                yield GRANTED
                said = False
                try:
                    async with contextlib.aclosing(ticket.host.llm.stream(messages)) as pieces:
                        async for piece in pieces:
                            said = True
                            yield piece
                except LLMUnavailable as exc:
                    if said:  # it was reached, and answered: one connection broke, not the host
                        raise
                    self._failed(ticket.host, exc)
                    tried.add(id(ticket.host))
                    if len(tried) >= len(self.hosts):
                        raise
                    continue  # not a word yet: the next host
                self._succeeded(ticket)
                return
            finally:  # the upstream request is closed by now (aclosing)
                if ticket is None:
                    self._leave(waiter)
                else:
                    self._release(ticket)

    async def turn(self, *, owner: bool = False) -> AsyncGenerator[Position, None]:
        """A question's turn for an answer written already (kept, or written for another
        visitor): the `Position`s and the refusals (Busy, NoHost) `stream` would give it in this
        load, its slot given back once granted. Given at once, or while every slot was taken
        and others waited, it told its visitor that someone had asked it before."""
        waiter = self._enter(owner)
        try:
            async for place in self._places(waiter):
                yield place
        finally:
            self._leave(waiter)  # granted: the slot is given back

    async def generate(self, messages: list[dict], *, owner: bool = False) -> str:
        """The whole answer (`LLMClient.generate` through a slot); raises like `stream`."""
        tried: set[int] = set()
        while True:
            waiter = self._enter(owner)
            try:
                while not waiter.granted.done():
                    await self._wait(waiter)
                ticket = waiter.granted.result()
            except BaseException:
                self._leave(waiter)
                raise
            try:
                text = await ticket.host.llm.generate(messages)
            except LLMUnavailable as exc:
                self._failed(ticket.host, exc)
                tried.add(id(ticket.host))
                if len(tried) >= len(self.hosts):
                    raise
                continue
            finally:
                self._release(ticket)
            self._succeeded(ticket)
            return text

    def view(self, *, owner: bool) -> dict:
        """What /health says: each host's state and slots, the queue's limits; the owner's view
        says too where each host is and why one is skipped (not reached, or without the model),
        and what moves with the questions being answered: the generations in flight, the queue,
        the owner's slot. A visitor's does not: a visitor who asked a question and saw no
        generation start knew its answer was kept, so that another visitor had asked it."""
        now = time.monotonic()
        hosts = []
        for host in self.hosts:
            entry = {"state": host.state(now), "slots": host.slots}
            hosts.append({"url": host.url, **entry, "in_use": host.in_use, **({"error": host.error} if host.failed else {})} if owner else entry)
        limits = {"queue_limit": self.queue_limit, "max_wait": self.max_wait}
        if not owner:
            return {"hosts": hosts, **limits}
        return {"hosts": hosts, "queued": len(self._queue), **limits, "owner_in_use": self._owner_in_use}

    # ---- queue and slots

    def _enter(self, owner: bool) -> _Waiter:
        """A place in the queue (granted at once when a slot is free), or Busy / NoHost now."""
        now = time.monotonic()
        slots = sum(h.slots for h in self.hosts if h.usable(now))
        if not slots:
            raise self._no_host()
        waiter = _Waiter(owner, ends=now + self.max_wait)
        queue = self._owner_queue if owner else self._queue
        queue.append(waiter)
        self._dispatch()
        if waiter.granted.done() or owner:
            return waiter
        ahead = self._position(waiter)
        wait = ahead * self.answer_seconds / slots
        if ahead > self.queue_limit or wait > self.max_wait:
            self._leave(waiter)
            why = "la file d'attente est pleine" if ahead > self.queue_limit else f"environ {wait:.0f} s d'attente"
            raise Busy(f"{why} (LLM_QUEUE {self.queue_limit}, LLM_MAX_WAIT {self.max_wait:g} s)")
        return waiter

    async def _places(self, waiter: _Waiter) -> AsyncGenerator[Position, None]:
        """The waiter's place each time it changes, until it is granted."""
        last = None
        while not waiter.granted.done():
            place = self._position(waiter)
            if place != last:
                last = place
                yield Position(place)
            await self._wait(waiter)

    async def _wait(self, waiter: _Waiter) -> None:
        """Until the waiter's place changes or it is granted; Busy once it has waited max_wait."""
        remaining = waiter.ends - time.monotonic()
        if remaining <= 0:
            raise Busy(f"une place attendue {self.max_wait:g} s en vain (LLM_MAX_WAIT)")
        waiter.moved.clear()
        moved = asyncio.ensure_future(waiter.moved.wait())
        try:
            await asyncio.wait((moved, waiter.granted), timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
        finally:
            moved.cancel()

    def _position(self, waiter: _Waiter) -> int:
        queue = self._owner_queue if waiter.owner else self._queue
        return queue.index(waiter) + 1

    def _leave(self, waiter: _Waiter) -> None:
        """A waiter that goes (refused, cancelled, gone): its place is freed, those behind move
        up; granted meanwhile, its slot is given back."""
        queue = self._owner_queue if waiter.owner else self._queue
        try:
            i = queue.index(waiter)
        except ValueError:
            granted = waiter.granted
            if granted.done() and not granted.cancelled() and granted.exception() is None:
                self._release(granted.result())
            return
        del queue[i]
        waiter.granted.cancel()
        for behind in list(queue)[i:]:
            behind.moved.set()

    def _pick(self, now: float, owner: bool) -> Host | None:
        """The least busy usable host (with a visitor slot free, unless for the owner)."""
        hosts = [h for h in self.hosts if h.usable(now) and (owner or h.visitors < h.slots)]
        return min(hosts, key=lambda h: (h.in_use / h.slots, h.in_use), default=None)

    def _dispatch(self) -> None:
        now = time.monotonic()
        for queue, owner in ((self._owner_queue, True), (self._queue, False)):
            moved = False
            while queue and (not owner or self._owner_in_use < OWNER_SLOTS):
                host = self._pick(now, owner)
                if host is None:
                    break
                waiter = queue.popleft()
                moved = True
                if owner:
                    host.owners += 1
                    self._owner_in_use += 1
                else:
                    host.visitors += 1
                waiter.granted.set_result(Ticket(host, owner, now))
            if moved:
                for behind in queue:
                    behind.moved.set()
        self._schedule_retry(now)

    def _schedule_retry(self, now: float) -> None:
        """With questions waiting and a host skipped, look again when it may be tried."""
        if self._wakeup is not None or not (self._queue or self._owner_queue):
            return
        later = [h.down_until for h in self.hosts if not h.usable(now)]
        if later:

            def wake() -> None:
                self._wakeup = None
                self._dispatch()

            self._wakeup = asyncio.get_running_loop().call_later(min(later) - now + 0.01, wake)

    def _release(self, ticket: Ticket) -> None:
        if ticket.owner:
            ticket.host.owners -= 1
            self._owner_in_use -= 1
        else:
            ticket.host.visitors -= 1
        self._dispatch()

    def _succeeded(self, ticket: Ticket) -> None:
        ticket.host.reached()
        self.answer_seconds += SMOOTHING * (time.monotonic() - ticket.started - self.answer_seconds)

    def _failed(self, host: Host, exc: Exception) -> None:
        host.lost(str(exc), self.retry_after)
        now = time.monotonic()
        if any(h.usable(now) for h in self.hosts):
            return
        for queue in (self._queue, self._owner_queue):  # nobody left to wait for: the fallback now
            while queue:
                queue.popleft().granted.set_exception(self._no_host())

    def _no_host(self) -> NoHost:
        """Every host is skipped: what each said when it failed (the owner's llm_error)."""
        return NoHost("; ".join(h.error for h in self.hosts if h.error) or "aucun hôte de modèle n'est joignable")
