"""The HTTP endpoints: POST /rpc (handed to the dispatcher), the site's GET /ask and its SSE
stream /ask/stream, /health, the owner's POST /reload-vault, the chat page at / and the widget
a site embeds, /widget.js.

Errors outside /rpc carry the same `{"error": {code, message, data}}` body, with the same codes
and texts as the RPC errors, so one client-side decoder serves both.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import urllib.parse
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

from aiohttp import web

from .._engine import check_question
from .._exceptions import QueryError, VaultError
from .methods import (
    RpcContext,
    answer_outcome,
    check_limits,
    for_caller,
    health_for,
    one_answer,
    reload_reason,
    reload_vault,
    reloaded,
    too_many_questions,
)
from .protocol import WireError, dumps, invalid_params_data, loads, validate_params
from .ratelimit import RateLimiter
from .rpc import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, OWNER_TOKEN_REQUIRED, RATE_LIMITED, UNAUTHORIZED, VAULT_RELOAD_FAILED, RpcError
from .sse import SSE_HEADERS, STREAM_ID, sse_event
from .state import BOT, DISPATCHER, LIMITER, LOG_OUTCOME, LOG_WHAT, SETTINGS, STOPPING, caller_key, is_owner

__all__ = [
    "PAGE_HEADERS",
    "STATIC_DIR",
    "body_over_limit",
    "error_response",
    "expect_continue",
    "handle_ask",
    "handle_ask_stream",
    "handle_health",
    "handle_reload",
    "handle_rpc",
    "json_response",
    "rpc_expect",
    "static_file",
]

log = logging.getLogger("grasbot.server")

STATIC_DIR = Path(__file__).resolve().parent / "static"


def json_response(data: Any, status: int = 200) -> web.Response:
    return web.Response(
        text=dumps(data),
        status=status,
        content_type="application/json",
    )


# HTTP status -> the JSON-RPC error the body carries (shared-protocol/README.md)
_HTTP_ERRORS = {
    400: (INVALID_PARAMS, "Invalid params"),
    401: (UNAUTHORIZED, "Unauthorized"),
    403: (INVALID_REQUEST, "Invalid Request"),
    404: (INVALID_REQUEST, "Invalid Request"),
    405: (INVALID_REQUEST, "Invalid Request"),
    413: (INVALID_REQUEST, "Invalid Request"),
    417: (INVALID_REQUEST, "Invalid Request"),
    421: (INVALID_REQUEST, "Invalid Request"),
    429: (RATE_LIMITED, "Rate limited"),
    500: (INTERNAL_ERROR, "Internal error"),
}


def error_response(status: int, data: Any = None, *, code: int | None = None, message: str | None = None) -> web.Response:
    """`{"error": {code, message, data}}`, the same codes and texts as the RPC errors, so one
    client-side decoder serves both (the plugin's stream and its RPC calls)."""
    default_code, default_message = _HTTP_ERRORS[status]
    error: dict[str, Any] = {"code": code or default_code, "message": message or default_message}
    if data is not None:
        error["data"] = data
    return json_response({"error": error}, status=status)


def body_over_limit(max_body: int) -> str:
    """What a body over GRASBOT_MAX_BODY is told (the 413 of /rpc and of any other path)."""
    return f"le corps de la requête dépasse la limite de {max_body} octets"


#: The `error` event of a stream that failed for a reason the visitor is not told (the log says).
STREAM_FAILED = "erreur interne"


def _too_many(request: web.Request, data: dict) -> web.Response:
    request[LOG_OUTCOME] = "rate limited"
    response = error_response(429, data)
    response.headers["Retry-After"] = str(data["retry_after"])
    return response


@contextlib.contextmanager
def _visitor_turn(request: web.Request) -> Iterator[web.Response | None]:
    """None while this visitor's question may be answered (one of the answers they may wait for
    at once held meanwhile), else the 429 that refuses it: they wait for as many already, or
    have asked too much lately (a question refused spends nothing). Owners are not limited."""
    if is_owner(request):
        yield None
        return
    client = caller_key(request)
    with contextlib.ExitStack() as holding:
        try:
            holding.enter_context(one_answer(request.app, client))
        except RpcError as exc:
            yield _too_many(request, exc.data)
            return
        wait = request.app[LIMITER].take(client)
        yield _too_many(request, too_many_questions(RateLimiter.retry_after(wait))) if wait else None


def _not_utf8(raw_query: str) -> str | None:
    """q or history, when its percent-encoded bytes are not UTF-8 (`%ED%A0%80`, Latin-1's `%E9`):
    the query as parsed holds U+FFFD in their place, and would be answered and logged changed."""
    for pair in raw_query.split("&"):
        name, _, value = pair.partition("=")
        if "%" not in value or (name := urllib.parse.unquote(name)) not in ("q", "history"):
            continue
        try:
            urllib.parse.unquote_to_bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            return name
    return None


def _ask_params(request: web.Request) -> tuple[str, list]:
    """q and the optional JSON-encoded history of /ask and /ask/stream, checked like `answer`'s."""
    bad = _not_utf8(request.rel_url.raw_query_string)
    if bad is not None:
        raise QueryError(f"`{bad}` : doit être du texte Unicode (ses octets encodés en %XX ne sont pas de l'UTF-8)")
    for name in ("q", "history"):
        if len(request.query.getall(name, ())) > 1:  # which one was meant? (a proxy or a form may add one)
            raise QueryError(f"`{name}` : donné plus d'une fois")
    params: dict[str, Any] = {}
    if "q" in request.query:
        params["q"] = request.query["q"]
    raw = request.query.get("history", "").strip()
    if raw:
        try:
            params["history"] = loads(raw)
        except WireError as exc:
            raise QueryError(f"`history` : {exc}") from None
        except ValueError:
            raise QueryError("`history` : doit être une liste JSON d'échanges {role, content}") from None
    checked = validate_params("answer", params)
    check_limits(request.app[SETTINGS], checked["q"], checked["history"])
    check_question(checked["q"])  # what the engine refuses, refused before a stream opens
    return checked["q"], checked["history"]


#: The Content-Encodings aiohttp decodes before the handler reads the body.
_DECODED = ("gzip", "deflate", "br", "zstd")


def _body_refused(status: int, why: str) -> web.Response:
    """A POST /rpc whose body could not be read: the JSON-RPC -32600 error, `id` null, saying why."""
    return json_response({"jsonrpc": "2.0", "error": {"code": INVALID_REQUEST, "message": "Invalid Request", "data": why}, "id": None}, status=status)


def _expectation_unmet(request: web.Request) -> str | None:
    """Why the request's `Expect` cannot be met, or None: only 100-continue can, and only
    asked over HTTP/1.1 (HTTP/1.0 has no 100 to send: the body comes anyway)."""
    expect = request.headers.get("Expect", "")
    if request.version < (1, 1) or expect.lower() == "100-continue":  # aiohttp's own rule
        return None
    request[LOG_OUTCOME] = "expectation refused"
    return f"Expect: {expect!r} n'est pas compris : seul 100-continue l'est"


#: The body types /rpc reads: JSON, `+json` types, and the two older JSON-RPC clients send
#: (« JSON-RPC over HTTP »): none of them can be sent cross-site without a CORS preflight.
_JSON = "application/json"
_JSON_RPC = frozenset((_JSON, "application/json-rpc", "application/jsonrequest"))


def _not_json(request: web.Request) -> str | None:
    """Why /rpc refuses the body's declared type, or None. A page on any site may POST a
    `text/plain` body, a form or a type-less Blob without asking the daemon first (no CORS
    preflight): only a JSON body, which a browser sends cross-site only once the daemon has
    allowed its origin, is read. The type is named when it looks like one, never quoted raw; a
    header aiohttp cannot read (`application/json, text/plain`, an empty one) is
    application/octet-stream to it, which the client did not send: said illegible."""
    given = request.headers.get("Content-Type")
    mime = request.content_type
    if given is not None and (mime in _JSON_RPC or (mime.startswith("application/") and mime.endswith("+json"))):
        return None
    request[LOG_OUTCOME] = "not JSON"
    if given is None:
        got = "aucun Content-Type"
    elif given.partition(";")[0].strip().lower() != mime:
        got = "un Content-Type illisible"
    else:
        got = mime if re.fullmatch(r"[\w.+-]{1,64}/[\w.+-]{1,64}", mime) else "un autre Content-Type"
    return f"le Content-Type doit être {_JSON} (reçu : {got}) : le corps d'une requête JSON-RPC est du JSON"


async def _continue(request: web.Request) -> None:
    """The interim 100 a client sending `Expect: 100-continue` waits for, as aiohttp's own
    expect handler writes it (a private function of aiohttp: its name may change in any release)."""
    if request.version >= (1, 1):
        await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        request.writer.output_size = 0  # the 100 is not part of the response's size


async def expect_continue(request: web.Request) -> web.Response | None:
    """Every route's `Expect`: 100-continue gets its 100, any other a 417 in the daemon's JSON
    error. aiohttp's own 417 was plain text (« Unknown Expect: foo »), sent before the
    middleware that makes every other error JSON."""
    if (unmet := _expectation_unmet(request)) is not None:
        return error_response(417, unmet)
    await _continue(request)
    return None


async def rpc_expect(request: web.Request) -> web.Response | None:
    """`Expect: 100-continue` on /rpc: a declared body over the limit gets its 413 now, instead of
    a 100 that asks the client to send what will be refused; any other body gets its 100."""
    max_body = request.app[SETTINGS].max_body
    if (unmet := _expectation_unmet(request)) is not None:
        return _body_refused(417, unmet)
    if (wrong := _not_json(request)) is not None:
        response = _body_refused(415, wrong)
        response.force_close()  # the client waits to be told to send its body: it never will be
        return response
    if request.version >= (1, 1) and request.content_length is not None and request.content_length > max_body:
        request[LOG_OUTCOME] = "body too large"
        response = _body_refused(413, body_over_limit(max_body))
        response.force_close()  # the client was told not to send it: this connection reads no more
        return response
    await _continue(request)
    return None


async def handle_rpc(request: web.Request) -> web.Response:
    settings = request.app[SETTINGS]
    if (wrong := _not_json(request)) is not None:
        return _body_refused(415, wrong)
    try:
        async with asyncio.timeout(settings.body_timeout):  # a client that trickles its body is let go
            body = await request.read()
    except TimeoutError:
        request[LOG_OUTCOME] = "body too slow"
        response = _body_refused(408, f"corps de la requête non reçu en {settings.body_timeout:g} s")
        response.force_close()  # the rest of the body may still come: this connection is done (app.LINGERING_TIME)
        return response
    except web.HTTPRequestEntityTooLarge:
        request[LOG_OUTCOME] = "body too large"
        return _body_refused(413, body_over_limit(settings.max_body))
    except web.RequestPayloadError:  # a body its Content-Encoding cannot decode, or cut short
        request[LOG_OUTCOME] = "body unreadable"
        encoding = request.headers.get("Content-Encoding", "").strip().lower()
        why = (
            f"le corps de la requête ne peut pas être décodé comme son Content-Encoding ({encoding}) l'annonce"
            if encoding in _DECODED
            else "le corps de la requête n'a pas pu être lu en entier"
        )
        # Nothing more of it can be read: without this, aiohttp would try after the answer (its
        # lingering read) and log the same error again as an unhandled exception.
        request.content.feed_eof()
        response = _body_refused(400, why)
        response.force_close()  # this connection is done
        return response
    ctx = RpcContext(request)
    text, (request[LOG_WHAT], request[LOG_OUTCOME]) = await request.app[DISPATCHER].dispatch_summarized(body, ctx)
    if text is None:
        return web.Response(status=204)
    return web.Response(text=text, content_type="application/json")


def _visitor_question(request: web.Request) -> tuple[str, list] | web.Response:
    """/ask's and /ask/stream's q and history, or the 400 that refuses them: bad requests are
    refused before they use up any of the client's questions (`_visitor_turn`)."""
    try:
        return _ask_params(request)
    except QueryError as exc:
        request[LOG_OUTCOME] = "bad request"
        return error_response(400, invalid_params_data(exc))


async def handle_ask(request: web.Request) -> web.Response:
    asked = _visitor_question(request)
    if isinstance(asked, web.Response):
        return asked
    q, history = asked
    with _visitor_turn(request) as refused:
        if refused is not None:
            return refused
        owner = is_owner(request)
        payload = await request.app[BOT].answer(q, history=history, audience="visitor", record=not owner, owner=owner)
    request[LOG_OUTCOME] = answer_outcome(payload)
    return json_response(for_caller(payload, owner))


async def handle_ask_stream(request: web.Request) -> web.StreamResponse:
    if "Last-Event-ID" in request.headers:  # an EventSource reconnecting to a stream that ended: see sse.STREAM_ID
        request[LOG_OUTCOME] = "reconnect refused"
        return web.Response(status=204)
    asked = _visitor_question(request)
    if isinstance(asked, web.Response):
        return asked
    q, history = asked
    with _visitor_turn(request) as refused:
        return refused or await _stream(request, q, history)


async def _stream(request: web.Request, q: str, history: list) -> web.StreamResponse:
    """The answer's events to a visitor's /ask/stream, as they come."""
    response = web.StreamResponse(headers=SSE_HEADERS)
    request[LOG_OUTCOME] = "client gone"
    try:
        await response.prepare(request)
        await response.write(STREAM_ID)
    except ConnectionResetError:  # gone as soon as asked: nothing to say, and no 500
        return response
    owner = is_owner(request)
    events = request.app[BOT].answer_events(q, history=history, audience="visitor", record=not owner, owner=owner)
    try:
        # aclosing: when the client goes (the handler is cancelled or a write fails), the
        # generator is closed at once, and with it the request to Ollama.
        async with contextlib.aclosing(events):
            async for name, data in events:
                if name == "done":
                    outcome = answer_outcome(data)  # as it is: a visitor's `done` does not say `reused`
                    data = for_caller(data, owner)
                await response.write(sse_event(name, data))
                if name == "done":
                    request[LOG_OUTCOME] = outcome
    except ConnectionResetError:  # aiohttp's ClientConnectionResetError included
        return response
    except asyncio.CancelledError:
        if request.app[STOPPING].is_set():  # the daemon stops, not the visitor: say so before the stream ends
            with contextlib.suppress(ConnectionResetError):
                await response.write(sse_event("error", {"message": "le démon s'arrête : posez la question de nouveau dans un instant"}))
                await response.write_eof()
        raise
    except Exception as exc:  # noqa: BLE001 - the stream is open: say so in-band, then end it
        message = str(exc) if isinstance(exc, QueryError) else STREAM_FAILED
        if not isinstance(exc, QueryError):
            log.error("le flux a échoué", exc_info=exc)
        request[LOG_OUTCOME] = "error"
        with contextlib.suppress(ConnectionResetError):
            await response.write(sse_event("error", {"message": message}))
    with contextlib.suppress(ConnectionResetError):
        await response.write_eof()
    return response


#: The chat page's headers beyond its <meta> policy: `frame-ancestors` is ignored in a <meta>
#: policy, and without it any site could show the page in a frame (clickjacking).
PAGE_HEADERS = {"Content-Security-Policy": "frame-ancestors 'none'"}


def static_file(name: str, headers: dict[str, str] | None = None) -> Callable[[web.Request], Awaitable[web.FileResponse]]:
    """A handler for one file of static/ at a path of its own: `/` is the chat page, and
    `/widget.js` the tag a site embeds (the owner's pages name it, so it never moves);
    `headers` are added to the response."""

    async def handler(request: web.Request) -> web.FileResponse:
        return web.FileResponse(STATIC_DIR / name, headers={"Cache-Control": "no-cache", **(headers or {})})  # nosniff: middleware.nosniff

    return handler


async def handle_health(request: web.Request) -> web.Response:
    return json_response(await health_for(request))


async def handle_reload(request: web.Request) -> web.Response:
    if not is_owner(request):
        request[LOG_OUTCOME] = "unauthorized"
        return error_response(401, OWNER_TOKEN_REQUIRED)
    try:
        report = await reload_vault(request.app)
    except (VaultError, OSError) as exc:
        request[LOG_OUTCOME] = "reload failed"
        return error_response(500, f"le coffre précédent reste servi : {reload_reason(exc)}", code=VAULT_RELOAD_FAILED, message="Vault reload failed")
    return json_response(await reloaded(request, report))
