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
import socket
import threading
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


def bounded_transport(limit: int, too_long: Callable[[], Exception], *, asynchronous: bool, too_slow: Callable[[float], Exception] | None = None) -> Any:
    """httpx's own transport, whose replies stop being read past `limit` bytes (`too_long()` is
    raised): a host at OLLAMA_HOST that sent an endless body (a line that never ends, a reply
    that never closes) was read into memory until a deadline, gigabytes at a local network's
    speed. httpx has no such limit of its own; it is imported here, with ollama, at first use.

    `too_slow` (the sync client's, the embeddings'): a reply is also read within its client's
    read timeout in all, headers and body, not each read within it; past it, httpx's own
    ReadTimeout before the headers are in (as for a host silent that long), `too_slow(seconds)`
    in the body. httpx's timeouts are each read's: a host sending a byte a second held the call
    for as long as it went on (the size bound days away at that pace). Its connections are not
    kept between calls: each is watched from its opening."""
    import httpx

    if asynchronous:
        if too_slow is not None:
            raise ValueError("only the sync client's replies are bounded in time here")
        return _bounded_transport_type()(httpx.AsyncHTTPTransport(), limit, too_long)
    if too_slow is None:
        return _bounded_transport_type()(httpx.HTTPTransport(), limit, too_long)
    inner = httpx.HTTPTransport(limits=httpx.Limits(max_keepalive_connections=0))
    return _bounded_transport_type()(inner, limit, too_long, too_slow)


class _Deadline:
    """A sync reply's whole time, from its request on: once it has passed, the connection's
    socket is shut down, which ends the read the calling thread waits in (a read of its own
    waits for its timeout each time, and a byte that comes resets it). httpcore names the
    socket as it opens the connection (its `trace` extension), so the connection is one opened
    for this request: the transport keeps none."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.passed = False
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._pass)
        self._timer.daemon = True
        self._timer.start()

    def trace(self, name: str, info: dict[str, Any]) -> None:
        """httpcore's `trace` callback: the socket of a connection opened (or of its TLS, once started)."""
        stream = info.get("return_value") if name.endswith(".complete") else None
        sock = getattr(stream, "get_extra_info", lambda _: None)("socket")
        if isinstance(sock, socket.socket):
            with self._lock:
                self._sock = sock
                if self.passed:
                    _shut(sock)

    def _pass(self) -> None:
        with self._lock:
            self.passed = True
            if self._sock is not None:
                _shut(self._sock)

    def cancel(self) -> None:
        self._timer.cancel()


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # closed already: nothing is read from it any more
        pass


@functools.cache
def _bounded_transport_type() -> type:
    """One transport and one stream for the sync client (embeddings) and the async one (answers),
    as httpx's own `ByteStream` is both: only the inner transport differs."""
    import httpx

    class Stream(httpx.SyncByteStream, httpx.AsyncByteStream):
        def __init__(self, inner: Any, limit: int, too_long: Callable[[], Exception], deadline: _Deadline | None = None, too_slow: Any = None) -> None:
            self._inner, self._left, self._too_long = inner, limit, too_long
            self._deadline, self._too_slow = deadline, too_slow

        def _counted(self, chunk: bytes) -> bytes:
            self._left -= len(chunk)
            if self._left < 0:
                raise self._too_long()
            return chunk

        def __iter__(self) -> Iterator[bytes]:
            deadline = self._deadline
            try:
                for chunk in self._inner:
                    if deadline is not None and deadline.passed:
                        raise self._too_slow(deadline.seconds)
                    yield self._counted(chunk)
            except httpx.TransportError:
                if deadline is not None and deadline.passed:  # the read the deadline ended: not the host's fault
                    raise self._too_slow(deadline.seconds) from None
                raise
            finally:
                if deadline is not None:
                    deadline.cancel()

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self._inner:
                yield self._counted(chunk)

        def close(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
            self._inner.close()

        async def aclose(self) -> None:
            await self._inner.aclose()

    class Transport(httpx.BaseTransport, httpx.AsyncBaseTransport):
        def __init__(self, inner: Any, limit: int, too_long: Callable[[], Exception], too_slow: Callable[[float], Exception] | None = None) -> None:
            self._inner, self._limit, self._too_long, self._too_slow = inner, limit, too_long, too_slow

        def handle_request(self, request: httpx.Request) -> httpx.Response:
            seconds = request.extensions.get("timeout", {}).get("read")
            if self._too_slow is None or seconds is None:
                response = self._inner.handle_request(request)
                response.stream = Stream(response.stream, self._limit, self._too_long)
                return response
            deadline = _Deadline(seconds)
            request.extensions["trace"] = _traced(request.extensions.get("trace"), deadline.trace)
            try:
                response = self._inner.handle_request(request)
            except httpx.TransportError:
                deadline.cancel()
                if deadline.passed:  # no whole headers in time: what httpx says of a host silent that long
                    raise httpx.ReadTimeout("timed out", request=request) from None
                raise
            except BaseException:
                deadline.cancel()
                raise
            response.stream = Stream(response.stream, self._limit, self._too_long, deadline, self._too_slow)
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


def _traced(first: Callable[[str, dict[str, Any]], Any] | None, then: Callable[[str, dict[str, Any]], None]) -> Callable[[str, dict[str, Any]], None]:
    """A `trace` callback calling `first` (one the request had already), then `then`."""
    if first is None:
        return then

    def both(name: str, info: dict[str, Any]) -> None:
        first(name, info)
        then(name, info)

    return both


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
