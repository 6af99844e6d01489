"""The Ollama hosts `OLLAMA_HOST` lists, and the one rule answers and embeddings both follow to
reach them: a host that cannot be reached (nothing listens, the connection does not open within
CONNECT_TIMEOUT, or breaks before any reply), or that does not have the model, is skipped for
RETRY_AFTER seconds, then tried again, the next host taking its calls meanwhile. A slow host,
or one that answers with another error, was reached: its call fails, the host is not skipped.

`answer.admission` spreads answers over the hosts by load; `Failover` is for calls that go to
one host after another (the embeddings), the host that answered last tried first.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

RETRY_AFTER = 10.0  # seconds a host that could not be reached is skipped
CONNECT_TIMEOUT = 5.0  # seconds to open a connection: a machine on the network answers in milliseconds
DEFAULT_HOST = "http://127.0.0.1:11434"


def host_url(host: str | None) -> str:
    """The URL a host of `Settings.ollama_hosts` stands for (None: the ollama client's default)."""
    return host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST


def unreachable(exc: BaseException) -> bool:
    """Whether a call's error means the host could not be reached (the next one is tried): a
    connection refused, not opened in time, or broken; not a reply that was slow to come."""
    import httpx  # the ollama client's transport, imported with it

    if isinstance(exc, httpx.TimeoutException):
        return isinstance(exc, httpx.ConnectTimeout)
    return isinstance(exc, (httpx.TransportError, OSError))  # ConnectionError: ollama's "Failed to connect"


def bounded_transport(limit: int, too_long: Callable[[], Exception], *, asynchronous: bool) -> Any:
    """httpx's own transport, whose replies stop being read past `limit` bytes (`too_long()` is
    raised): a host at OLLAMA_HOST that sent an endless body (a line that never ends, a reply
    that never closes) was read into memory until a deadline, gigabytes at a local network's
    speed. httpx has no such limit of its own; it is imported here, with ollama, at first use."""
    import httpx

    return _bounded_transport_type()(httpx.AsyncHTTPTransport() if asynchronous else httpx.HTTPTransport(), limit, too_long)


@functools.cache
def _bounded_transport_type() -> type:
    """One transport and one stream for the sync client (embeddings) and the async one (answers),
    as httpx's own `ByteStream` is both: only the inner transport differs."""
    import httpx

    class Stream(httpx.SyncByteStream, httpx.AsyncByteStream):
        def __init__(self, inner: Any, limit: int, too_long: Callable[[], Exception]) -> None:
            self._inner, self._left, self._too_long = inner, limit, too_long

        def _counted(self, chunk: bytes) -> bytes:
            self._left -= len(chunk)
            if self._left < 0:
                raise self._too_long()
            return chunk

        def __iter__(self) -> Iterator[bytes]:
            for chunk in self._inner:
                yield self._counted(chunk)

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self._inner:
                yield self._counted(chunk)

        def close(self) -> None:
            self._inner.close()

        async def aclose(self) -> None:
            await self._inner.aclose()

    class Transport(httpx.BaseTransport, httpx.AsyncBaseTransport):
        def __init__(self, inner: Any, limit: int, too_long: Callable[[], Exception]) -> None:
            self._inner, self._limit, self._too_long = inner, limit, too_long

        def handle_request(self, request: httpx.Request) -> httpx.Response:
            response = self._inner.handle_request(request)
            response.stream = Stream(response.stream, self._limit, self._too_long)
            return response

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            response = await self._inner.handle_async_request(request)
            response.stream = Stream(response.stream, self._limit, self._too_long)
            return response

        def close(self) -> None:
            self._inner.close()

        async def aclose(self) -> None:
            await self._inner.aclose()

    return Transport


def model_missing(exc: BaseException) -> bool:
    """Whether Ollama's reply says the host does not have the model (not pulled there): it is
    skipped as one that cannot be reached, the model maybe on the next."""
    return getattr(exc, "status_code", None) == 404 and "not found" in str(getattr(exc, "error", ""))


@dataclass(eq=False)
class Reach:
    """What is known of reaching one host."""

    url: str
    down_until: float = 0.0  # monotonic time before which the host is skipped
    failed: bool = False  # the last attempt could not connect
    error: str = ""  # what it said then

    def usable(self, now: float) -> bool:
        return now >= self.down_until

    def state(self, now: float) -> str:
        if not self.failed:
            return "up"
        return "down" if now < self.down_until else "retrying"

    def lost(self, why: str, retry_after: float) -> None:
        """It could not be reached: skipped for `retry_after` seconds."""
        self.failed, self.down_until, self.error = True, time.monotonic() + retry_after, why

    def reached(self) -> None:
        self.failed = False


class Failover:
    """Hosts a call goes to one after another, the skipped ones left out: the one that answered
    last first (a visitor's question does not wait on a dead host at each call, nor after it
    is tried again), then the others in OLLAMA_HOST's order. Shared by threads: each change is
    one attribute's."""

    def __init__(self, hosts: Sequence[str | None], retry_after: float | None = None) -> None:
        if not hosts:
            raise ValueError("at least one model host is needed")
        self.hosts = [Reach(host_url(h)) for h in hosts]
        self.retry_after = RETRY_AFTER if retry_after is None else retry_after
        self._last = self.hosts[0]

    def order(self) -> list[Reach]:
        """The hosts to try now, in turn (none when every one is skipped)."""
        now = time.monotonic()
        return sorted((h for h in self.hosts if h.usable(now)), key=lambda h: h is not self._last)

    def reached(self, host: Reach) -> None:
        host.reached()
        self._last = host

    def lost(self, host: Reach, why: str) -> None:
        host.lost(why, self.retry_after)

    def errors(self) -> str:
        """What the hosts that could not be reached said, each."""
        return "; ".join(h.error for h in self.hosts if h.failed)
