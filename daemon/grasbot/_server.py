"""The daemon: JSON-RPC at POST /rpc and the site's HTTP endpoints, on aiohttp.

One GrasBot per application, opened by a cleanup context (the vault loads in a worker thread,
the LLM client is closed on the way out). Requests read the bot's current snapshot, so a
reload that swaps it never disturbs a request in flight. `serve()` is what `grasbot serve`
runs; `create_app()` is what tests and embedders use.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger

from ._aliases import suggest_aliases
from ._auth import bearer_matches, resolve_owner_token
from ._config import Settings
from ._engine import GrasBot, ReloadReport, vault_files
from ._exceptions import AuthError, ConfigError, GrasbotError, NoteNotFound, QueryError, VaultError
from ._llm import load_ollama
from ._protocol import ParamsError, WireError, dumps, loads, validate_params
from ._questionlog import QuestionLog
from ._ratelimit import RateLimiter, TrustedProxies, client_key
from ._rpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    NOTE_NOT_FOUND,
    RATE_LIMITED,
    UNAUTHORIZED,
    VAULT_RELOAD_FAILED,
    RpcDispatcher,
    RpcError,
)
from ._sse import SSE_HEADERS, sse_event

__all__ = [
    "BOT",
    "AccessLogger",
    "RpcContext",
    "create_app",
    "serve",
]

log = logging.getLogger("grasbot.server")
access_log = logging.getLogger("grasbot.access")

BOT = web.AppKey("bot", GrasBot)
SETTINGS = web.AppKey("settings", Settings)
DISPATCHER = web.AppKey("dispatcher", RpcDispatcher)
RELOAD_LOCK = web.AppKey("reload_lock", asyncio.Lock)
OWNER_TOKEN = web.AppKey("owner_token", str)
LIMITER = web.AppKey("limiter", RateLimiter)
PROXIES = web.AppKey("trusted_proxies", TrustedProxies)

#: The CORS allow-list (Settings.cors_origins, app://obsidian.md by default). No wildcard,
#: no localhost rule: the chat page is same-origin, a site's origin is listed explicitly.
CORS_ALLOWED = web.AppKey("cors_allowed", tuple)
#: path -> the methods a cross-origin caller may use on it.
CORS_PATHS: dict[str, tuple[str, ...]] = {
    "/rpc": ("POST",),
    "/ask": ("GET",),
    "/ask/stream": ("GET",),
    "/health": ("GET",),
}
STATIC_DIR = Path(__file__).resolve().parent / "static"
#: Clients whose rate-limit bucket is remembered at once (the least recently seen go first).
MAX_CLIENTS = 10_000
SHUTDOWN_TIMEOUT = 5.0
LINGERING_TIME = 1.0
STATS_PER_TURN = 500  # files a reload stats on the event loop between two turns of requests (~5 ms)

#: `llm_error` as a caller without the owner token reads it. The cause names Ollama's address
#: and repeats its errors: the daemon's log and the owner's calls carry it, a site's visitors don't.
PUBLIC_LLM_ERROR = "the language model did not answer: this response is built from the notes"

# request-scoped notes for the access log
_LOG_WHAT = web.RequestKey("grasbot_what", str)
_LOG_OUTCOME = web.RequestKey("grasbot_outcome", str)


class RpcContext:
    """What every JSON-RPC method receives first. `client`, the rate limit's key for the caller,
    is worked out only for the methods that are rate limited (it was 4 % of a `search` call)."""

    __slots__ = ("bot", "app", "is_owner", "_request")

    def __init__(self, request: web.Request) -> None:
        self.bot, self.app, self.is_owner, self._request = request.app[BOT], request.app, _is_owner(request), request

    @property
    def client(self) -> str:
        return _client(self._request)


# ---------------------------------------------------------------- JSON-RPC methods


def _for_caller(payload: dict, is_owner: bool) -> dict:
    """An answer's payload as this caller may read it; an LLM failure's cause goes to the log."""
    cause = payload.get("llm_error")
    if cause is None:
        return payload
    log.warning("the LLM did not answer, the response was built from the notes: %s", cause)
    return payload if is_owner else {**payload, "llm_error": PUBLIC_LLM_ERROR}


async def _m_search(ctx: RpcContext, q: str, audience: str, top_k: int | None = None) -> dict:
    check_limits(ctx.app[SETTINGS], q)
    await ctx.bot.prepare_question(q)
    result = ctx.bot.search(q, top_k=top_k, audience=audience)
    if not ctx.is_owner and audience == "visitor":  # the owner's previews are not visitors' questions
        ctx.bot.record(q, result)
    return result.to_dict()


async def _m_answer(ctx: RpcContext, q: str, history: list, audience: str) -> dict:
    check_limits(ctx.app[SETTINGS], q, history)
    if not ctx.is_owner:
        wait = ctx.app[LIMITER].take(ctx.client)
        if wait:
            raise RpcError(RATE_LIMITED, "Rate limited", {"retry_after": RateLimiter.retry_after(wait)})
    payload = await ctx.bot.answer(q, history=history, audience=audience, record=not ctx.is_owner)
    return _for_caller(payload, ctx.is_owner)


async def _m_suggest_aliases(ctx: RpcContext, slug: str, limit: int) -> dict:
    index = ctx.bot.snapshot.index("owner")  # owner-only: the dispatcher checked the token
    try:
        return await asyncio.to_thread(suggest_aliases, slug, index, ctx.bot.question_log, limit)
    except NoteNotFound as exc:
        raise RpcError(NOTE_NOT_FOUND, "Note not found", str(exc)) from None


async def _m_reload(ctx: RpcContext) -> dict:
    try:
        report = await reload_vault(ctx.app)
    except (VaultError, OSError) as exc:
        raise RpcError(VAULT_RELOAD_FAILED, "Vault reload failed", _reason(exc)) from None
    return report.to_dict()


async def _m_health(ctx: RpcContext) -> dict:
    return await ctx.bot.health()


RPC_METHODS: dict[str, Callable[..., Any]] = {
    "search": _m_search,
    "answer": _m_answer,
    "reload": _m_reload,
    "health": _m_health,
    "suggest_aliases": _m_suggest_aliases,
}


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and not isinstance(exc, VaultError):
        return f"cannot read the vault: {exc.strerror or exc}"
    return str(exc)


async def reload_vault(app: web.Application) -> ReloadReport:
    """Run the blocking reload in a worker thread, one at a time; the old vault serves meanwhile.

    The files are walked and stat()ed here first, on the event loop, STATS_PER_TURN between
    two turns of requests. A worker thread gives up the GIL at every stat and, while the loop
    is busy, waits for it to come back: one changed note of 10,000 took 4.2 s to reload under
    a load of `search` calls that way, 165 ms idle (benchmarks/README.md, round 5)."""
    bot = app[BOT]
    async with app[RELOAD_LOCK]:
        scanned = []
        for found in vault_files(bot.settings):
            try:
                found[1].stat()  # kept by the entry for load_vault
            except OSError:
                pass  # load_vault asks again, and reports it
            scanned.append(found)
            if len(scanned) % STATS_PER_TURN == 0:
                await asyncio.sleep(0)
        return await asyncio.get_running_loop().run_in_executor(None, bot.reload, scanned)


# ---------------------------------------------------------------- helpers


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(
        text=dumps(data),
        status=status,
        content_type="application/json",
    )


# HTTP status -> the JSON-RPC error the body carries (shared-protocol/README.md)
_HTTP_ERRORS = {
    400: (INVALID_PARAMS, "Invalid params"),
    401: (UNAUTHORIZED, "Unauthorized"),
    413: (INVALID_REQUEST, "Invalid Request"),
    429: (RATE_LIMITED, "Rate limited"),
    500: (INTERNAL_ERROR, "Internal error"),
}


def _error(status: int, data: Any = None, *, code: int | None = None, message: str | None = None) -> web.Response:
    """`{"error": {code, message, data}}`, the same codes and texts as the RPC errors, so one
    client-side decoder serves both (the plugin's stream and its RPC calls)."""
    default_code, default_message = _HTTP_ERRORS[status]
    error: dict[str, Any] = {"code": code or default_code, "message": message or default_message}
    if data is not None:
        error["data"] = data
    return _json({"error": error}, status=status)


def _is_owner(request: web.Request) -> bool:
    """The caller showed the owner token (constant-time check; no token configured: nobody)."""
    return bearer_matches(request.headers.get("Authorization"), request.app[OWNER_TOKEN])


def _client(request: web.Request) -> str:
    return client_key(request.remote, request.headers.get("X-Forwarded-For"), request.app[PROXIES])


def check_limits(settings: Settings, q: str, history: list | tuple = ()) -> None:
    """The configured limits, where they are lower than the protocol's own (its schema checked those).

    Messages name the parameter and the sizes, never the value: it may be anything.
    """
    if len(q) > settings.max_question:
        raise ParamsError(f"q: must be at most {settings.max_question} characters (got {len(q)})", param="q")
    if len(history) > settings.max_history:
        raise ParamsError(f"history: must have at most {settings.max_history} items (got {len(history)})", param="history")
    for i, turn in enumerate(history):
        content = turn.get("content", "") if isinstance(turn, dict) else ""
        if isinstance(content, str) and len(content) > settings.max_turn:
            raise ParamsError(
                f"history[{i}].content: must be at most {settings.max_turn} characters (got {len(content)})",
                param="history",
            )


def _rate_limited(request: web.Request) -> web.Response | None:
    """A 429 if this visitor has asked too much lately; owners are not limited."""
    if _is_owner(request):
        return None
    wait = request.app[LIMITER].take(_client(request))
    if not wait:
        return None
    seconds = RateLimiter.retry_after(wait)
    request[_LOG_OUTCOME] = "rate limited"
    response = _error(429, {"retry_after": seconds})
    response.headers["Retry-After"] = str(seconds)
    return response


def _ask_params(request: web.Request) -> tuple[str, list]:
    """q and the optional JSON-encoded history of /ask and /ask/stream, checked like `answer`'s."""
    params: dict[str, Any] = {}
    if "q" in request.query:
        params["q"] = request.query["q"]
    raw = request.query.get("history", "").strip()
    if raw:
        try:
            params["history"] = loads(raw)
        except WireError as exc:
            raise QueryError(f"history: {exc}") from None
        except (ValueError, RecursionError):
            raise QueryError("history: must be a JSON array of {role, content} turns") from None
    checked = validate_params("answer", params)
    check_limits(request.app[SETTINGS], checked["q"], checked["history"])
    return checked["q"], checked["history"]


# ---------------------------------------------------------------- handlers


async def handle_rpc(request: web.Request) -> web.Response:
    settings = request.app[SETTINGS]
    try:
        async with asyncio.timeout(settings.body_timeout):  # a client that trickles its body is let go
            body = await request.read()
    except TimeoutError:
        request[_LOG_OUTCOME] = "body too slow"
        response = _json(
            {
                "jsonrpc": "2.0",
                "error": {"code": -32600, "message": "Invalid Request", "data": f"request body not received within {settings.body_timeout:g} s"},
                "id": None,
            },
            status=408,
        )
        response.force_close()  # the rest of the body may still come: this connection is done (LINGERING_TIME)
        return response
    except web.HTTPRequestEntityTooLarge:
        request[_LOG_OUTCOME] = "body too large"
        limit = request.app[SETTINGS].max_body
        return _json(
            {
                "jsonrpc": "2.0",
                "error": {"code": -32600, "message": "Invalid Request", "data": f"request body is over the limit of {limit} bytes"},
                "id": None,
            },
            status=413,
        )
    ctx = RpcContext(request)
    text, (request[_LOG_WHAT], request[_LOG_OUTCOME]) = await request.app[DISPATCHER].dispatch_summarized(body, ctx)
    if text is None:
        return web.Response(status=204)
    return web.Response(text=text, content_type="application/json")


def _visitor_question(request: web.Request) -> tuple[str, list] | web.Response:
    """/ask's and /ask/stream's q and history, or the 400 or 429 that refuses them: bad
    requests are refused before they use up any of the client's questions."""
    try:
        q, history = _ask_params(request)
    except QueryError as exc:
        request[_LOG_OUTCOME] = "bad request"
        return _error(400, str(exc))
    return _rate_limited(request) or (q, history)


async def handle_ask(request: web.Request) -> web.Response:
    asked = _visitor_question(request)
    if isinstance(asked, web.Response):
        return asked
    q, history = asked
    owner = _is_owner(request)
    payload = await request.app[BOT].answer(q, history=history, audience="visitor", record=not owner)
    request[_LOG_OUTCOME] = "llm_error" if "llm_error" in payload else "ok"
    return _json(_for_caller(payload, owner))


async def handle_ask_stream(request: web.Request) -> web.StreamResponse:
    asked = _visitor_question(request)
    if isinstance(asked, web.Response):
        return asked
    q, history = asked
    response = web.StreamResponse(headers=SSE_HEADERS)
    await response.prepare(request)
    request[_LOG_OUTCOME] = "client gone"
    owner = _is_owner(request)
    events = request.app[BOT].answer_events(q, history=history, audience="visitor", record=not owner)
    try:
        # aclosing: when the client goes (the handler is cancelled or a write fails), the
        # generator is closed at once, and with it the request to Ollama.
        async with contextlib.aclosing(events):
            async for name, data in events:
                if name == "done":
                    data = _for_caller(data, owner)
                await response.write(sse_event(name, data))
                if name == "done":
                    request[_LOG_OUTCOME] = "llm_error" if "llm_error" in data else "ok"
    except ConnectionResetError:  # aiohttp's ClientConnectionResetError included
        return response
    except Exception as exc:  # noqa: BLE001 - the stream is open: say so in-band, then end it
        message = str(exc) if isinstance(exc, QueryError) else "internal error"
        if not isinstance(exc, QueryError):
            log.error("stream failed", exc_info=exc)
        request[_LOG_OUTCOME] = "error"
        with contextlib.suppress(ConnectionResetError):
            await response.write(sse_event("error", {"message": message}))
    with contextlib.suppress(ConnectionResetError):
        await response.write_eof()
    return response


def _static_file(name: str) -> Callable[[web.Request], Any]:
    """A handler for one file of static/ at a path of its own: `/` is the chat page, and
    `/widget.js` the tag a site embeds (the owner's pages name it, so it never moves)."""

    async def handler(request: web.Request) -> web.FileResponse:
        return web.FileResponse(
            STATIC_DIR / name, headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}
        )

    return handler


async def handle_health(request: web.Request) -> web.Response:
    return _json(await request.app[BOT].health())


async def handle_reload(request: web.Request) -> web.Response:
    if not _is_owner(request):
        request[_LOG_OUTCOME] = "unauthorized"
        return _error(401, "owner token required")
    try:
        report = await reload_vault(request.app)
    except (VaultError, OSError) as exc:
        request[_LOG_OUTCOME] = "reload failed"
        return _error(
            500, f"the previous vault keeps serving: {_reason(exc)}", code=VAULT_RELOAD_FAILED, message="Vault reload failed"
        )
    return _json(report.to_dict())


# ---------------------------------------------------------------- middleware and signals


def _origin_allowed(request: web.Request, origin: str) -> bool:
    return origin in request.app[CORS_ALLOWED]


@web.middleware
async def cors_preflight(request: web.Request, handler):
    if request.method != "OPTIONS" or request.path not in CORS_PATHS:
        return await handler(request)
    origin = request.headers.get("Origin", "")
    method = request.headers.get("Access-Control-Request-Method", "")
    if not _origin_allowed(request, origin) or method not in CORS_PATHS[request.path]:
        return web.Response(status=403)
    return web.Response(
        status=204,
        headers={
            "Access-Control-Allow-Methods": ", ".join((*CORS_PATHS[request.path], "OPTIONS")),
            "Access-Control-Allow-Headers": "Content-Type, Authorization",
            "Access-Control-Max-Age": "600",
        },
    )


async def cors_headers(request: web.Request, response: web.StreamResponse) -> None:
    """On prepare, so that streamed responses get the headers too."""
    if request.path not in CORS_PATHS:
        return
    response.headers["Vary"] = "Origin"
    origin = request.headers.get("Origin", "")
    if origin and _origin_allowed(request, origin):
        response.headers["Access-Control-Allow-Origin"] = origin


@web.middleware
async def errors_as_json(request: web.Request, handler):
    """An unexpected exception becomes a 500 that says nothing about internals."""
    try:
        return await handler(request)
    except web.HTTPRequestEntityTooLarge:
        return _error(413, f"request body is over the limit of {request.app[SETTINGS].max_body} bytes")
    except web.HTTPException:
        raise
    except GrasbotError as exc:
        if isinstance(exc, QueryError):
            return _error(400, str(exc))
        if isinstance(exc, AuthError):
            return _error(401, str(exc) or "owner token required")
        log.error("%s %s failed", request.method, request.path, exc_info=exc)
        return _error(500)
    except Exception as exc:  # noqa: BLE001
        log.error("%s %s failed", request.method, request.path, exc_info=exc)
        return _error(500)


# ---------------------------------------------------------------- access log


class AccessLogger(AbstractAccessLogger):
    """`POST /rpc search 200 ok 12.3 ms`: method, path, status, outcome, duration; no IP, no query."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        what = request.get(_LOG_WHAT)
        outcome = request.get(_LOG_OUTCOME)
        parts = [request.method, request.path]
        if what:
            parts.append(what)
        parts.append(str(response.status))
        if outcome:
            parts.append(outcome)
        self.logger.info("%s %.1f ms", " ".join(parts), time * 1000)


# ---------------------------------------------------------------- the application


def create_app(
    settings: Settings,
    bot: GrasBot | None = None,
    *,
    owner_token: str | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> web.Application:
    """The daemon's application. It takes ownership of `bot` (closed on cleanup).

    Owner-only calls need `Authorization: Bearer <token>` with `owner_token`, else
    `settings.token`. With neither, nobody is the owner: every owner call is refused.
    (`serve` always has a token: it reads or creates the token file.) `clock` drives the
    rate limit (tests pass their own).
    """
    token = owner_token if owner_token is not None else (settings.token or "")
    if not token:
        log.warning("no owner token: owner-only calls will all be refused")
    try:
        proxies = TrustedProxies(settings.trusted_proxies)
    except ValueError as exc:
        raise ConfigError(f"GRASBOT_TRUSTED_PROXIES: {exc}") from None
    app = web.Application(middlewares=[cors_preflight, errors_as_json], client_max_size=settings.max_body)
    app[SETTINGS] = settings
    app[OWNER_TOKEN] = token
    app[CORS_ALLOWED] = tuple(settings.cors_origins)
    app[PROXIES] = proxies
    app[LIMITER] = RateLimiter(settings.rate_per_minute, settings.rate_burst, max_clients=MAX_CLIENTS, clock=clock)
    app[RELOAD_LOCK] = asyncio.Lock()
    app[DISPATCHER] = RpcDispatcher(RPC_METHODS, is_owner=lambda ctx: ctx.is_owner, max_batch=settings.max_batch)

    async def bot_ctx(app: web.Application) -> AsyncIterator[None]:
        opened = bot
        if opened is None:
            opened = await asyncio.get_running_loop().run_in_executor(None, GrasBot.open, settings)
        opened.question_log = await asyncio.to_thread(QuestionLog, settings.question_log, settings.log_retention_days)
        app[BOT] = opened
        opened.start_embedding()  # a worker: questions are answered lexically until it is done
        yield
        await opened.aclose()
        await asyncio.to_thread(opened.question_log.close)

    app.cleanup_ctx.append(bot_ctx)
    app.on_response_prepare.append(cors_headers)
    app.router.add_get("/", _static_file("index.html"))
    app.router.add_get("/widget.js", _static_file("widget.js"))
    app.router.add_static("/static/", STATIC_DIR, follow_symlinks=False)
    app.router.add_post("/rpc", handle_rpc)
    app.router.add_get("/ask", handle_ask)
    app.router.add_get("/ask/stream", handle_ask_stream)
    app.router.add_get("/health", handle_health)
    app.router.add_post("/reload-vault", handle_reload)
    return app


def runner_kwargs(settings: Settings | None = None) -> dict[str, Any]:
    """How the app must be run: our access log, handlers cancelled when a client goes, and a
    connection closed when its next request's headers are not all in `header_timeout` seconds
    after it opened or after the previous response (aiohttp's keep-alive timer: it runs until a
    whole request has arrived, so it also lets go a client that sends its headers a byte at a
    time; aiohttp's default is an hour). After a body is refused (too large, too slow), at most
    LINGERING_TIME seconds more of it are read before the connection closes (aiohttp's: 10)."""
    return {
        "access_log_class": AccessLogger,
        "access_log": access_log,
        "handler_cancellation": True,
        "shutdown_timeout": SHUTDOWN_TIMEOUT,
        "keepalive_timeout": (settings or Settings()).header_timeout,
        "lingering_time": LINGERING_TIME,
    }


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


async def _serve(settings: Settings, owner_token: str, bot: GrasBot, stop: asyncio.Event | None = None) -> int:
    """Serve until `stop` is set (by default: until SIGINT or SIGTERM). Once listening, a worker
    thread loads what serving could do without (the ollama package, then the index cache the
    start left to write); it is waited for before returning. A start that cannot listen
    still writes that cache, then returns 2."""
    app = create_app(settings, bot, owner_token=owner_token)
    runner = web.AppRunner(app, **runner_kwargs(settings))
    await runner.setup()
    try:
        site = web.TCPSite(runner, settings.host, settings.port)
        await site.start()
    except OSError as exc:
        print(
            f"grasbot: cannot listen on {settings.host}:{settings.port}: {exc.strerror or exc} "
            "(is another daemon running? choose another --port)",
            file=sys.stderr,
            flush=True,
        )
        await runner.cleanup()
        await asyncio.to_thread(_write_cache, bot)  # the load is not lost: the next start reads it
        return 2

    stop = asyncio.Event() if stop is None else stop
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    port = runner.addresses[0][1]
    snapshot = app[BOT].snapshot
    print(
        f"GrasBot listening on http://{_url_host(settings.host)}:{port} "
        f"(vault: {len(snapshot.vault.notes)} notes, {len(snapshot.index('visitor'))} public)",
        flush=True,
    )
    deferred = asyncio.ensure_future(asyncio.to_thread(_after_start, bot))
    try:
        await stop.wait()
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        log.info("stopping")
        await runner.cleanup()
        await deferred  # a cache half written is no cache: the next start would parse it all
    return 0


def _after_start(bot: GrasBot) -> None:
    """What a start leaves for later, done while the daemon serves; never raises."""
    try:
        load_ollama()  # so the first answer does not wait for the import
    except Exception:  # noqa: BLE001 - the first answer will say what is wrong
        log.exception("the ollama package cannot be imported")
    _write_cache(bot)


def _write_cache(bot: GrasBot) -> None:
    """The index cache the start left to write, if any; never raises."""
    started = time.perf_counter()
    try:
        if bot.write_cache():
            log.info("index cache written in %.2f s", time.perf_counter() - started)
    except Exception:  # noqa: BLE001 - the cache is optional: serving goes on without it
        log.exception("index cache not written")


def serve(settings: Settings) -> int:
    """Run the daemon until SIGINT or SIGTERM; 0 on a clean stop, 2 if it cannot start.

    The owner token is resolved first (a ConfigError if it cannot be used); where it lives
    goes to stderr, stdout keeps its one "listening" line.
    """
    token = resolve_owner_token(settings)
    print(f"grasbot: {token.describe()}", file=sys.stderr, flush=True)
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per Ollama call is noise
    started = time.perf_counter()
    try:
        # Before the event loop and its threads: a large vault then loads on every core
        # (_parallel forks only a process that runs no other thread).
        bot = GrasBot.open(settings, write_cache=False)  # written once serving: see _serve
    except VaultError as exc:
        print(f"grasbot: cannot start: {exc}", file=sys.stderr, flush=True)
        return 2
    log.info("vault loaded in %.2f s", time.perf_counter() - started)
    try:
        code = asyncio.run(_serve(settings, token.value, bot))
    except KeyboardInterrupt:  # a second Ctrl-C during shutdown
        return 0
    log.debug("served for %.1f s", time.perf_counter() - started)
    return code
