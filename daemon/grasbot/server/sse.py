"""Server-Sent Events framing for GET /ask/stream.

One event is `event: NAME`, one `data:` line of JSON, then a blank line. `json.dumps` escapes
newlines inside strings, so a payload never spans two data lines and a token that contains
"\\n\\n" cannot end an event early.
"""

from __future__ import annotations

from typing import Any

from .protocol import dumps

__all__ = ["SSE_HEADERS", "STREAM_ID", "sse_event", "sse_comment"]

#: no-store so nothing keeps a visitor's answer (no-cache lets a cache keep it); X-Accel-Buffering
#: so nginx forwards each event.
SSE_HEADERS = {
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-store",
    "X-Accel-Buffering": "no",
}


#: The stream's first bytes: an event ID and no data, which no client dispatches as an event.
#: A browser's EventSource reconnects whenever a stream ends, `done` included, and sends the ID
#: back as `Last-Event-ID`: that request is answered 204, which tells it to stop, instead of
#: asking the question again every 3 s.
STREAM_ID = b"id: asked\n\n"


def sse_event(event: str, data: Any) -> bytes:
    if not event or any(c in event for c in "\r\n:"):
        raise ValueError(f"not a usable SSE event name: {event!r}")
    payload = dumps(data, separators=(",", ":"))
    return f"event: {event}\ndata: {payload}\n\n".encode()


def sse_comment(text: str = "") -> bytes:
    """A line clients ignore: keeps a quiet connection from looking dead to proxies."""
    return (": " + " ".join(text.split()) + "\n\n").encode("utf-8")
