"""The daemon's application and its process: `create_app()` (what tests and embedders use)
and `serve()` (what `grasbot serve` runs).

One GrasBot per application, opened by a cleanup context (the vault loads in a worker thread,
the LLM client is closed on the way out). Requests read the bot's current snapshot, so a
reload that swaps it never disturbs a request in flight. The routes are `handlers.py`, the
JSON-RPC methods `methods.py`, what wraps every request `middleware.py`.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import logging
import signal
import socket
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from aiohttp import hdrs, web
from aiohttp.http_exceptions import HttpProcessingError

from .._config import BUNDLED_VAULT, DEFAULT_SITE_PAGES, DEFAULT_URL_MAP, Settings, default_log_path
from .._engine import GrasBot, vault_wide_warnings
from .._exceptions import ConfigError, VaultError
from .._imports import import_once
from .._terminal import counted
from ..retrieval.vault import NO_SUCH_FOLDER
from ..store.questionlog import QuestionLog, note_the_vault, say_logs_of_vaults_gone, tend_old_logs
from .auth import resolve_owner_token
from .handlers import (
    PAGE_HEADERS,
    STATIC_DIR,
    expect_continue,
    handle_ask,
    handle_ask_stream,
    handle_health,
    handle_reload,
    handle_rpc,
    rpc_expect,
    static_file,
)
from .methods import RPC_METHODS, reload_reason, reload_vault
from .middleware import (
    CORS_ALLOWED,
    HOSTS_ALLOWED,
    AccessLogger,
    access_log,
    after_imports,
    cors_headers,
    cors_preflight,
    cross_site_refused,
    errors_as_json,
    hosts_checked,
    nosniff,
    not_stored,
)
from .protocol import prepare_validators
from .ratelimit import InFlight, RateLimiter, TrustedProxies
from .rpc import RpcDispatcher
from .state import ANSWERING, BOT, DISPATCHER, IMPORTED, IN_FLIGHT, LIMITER, OWNER_TOKEN, PROXIES, RELOAD_LOCK, SETTINGS, STOPPING

__all__ = ["create_app", "runner_kwargs", "serve"]

log = logging.getLogger("grasbot.server")

#: Clients whose rate-limit bucket is remembered at once (the least recently seen go first).
MAX_CLIENTS = 10_000
SHUTDOWN_TIMEOUT = 5.0
#: Connections the kernel holds until the daemon accepts them (aiohttp's default, 128): a burst
#: of 500 visitors at once overflowed 128, and a connection refused at SYN is retried by its
#: client a second later (13 of 500 streams got their first event past 1 s). Linux caps it at
#: net.core.somaxconn (4096 by default).
BACKLOG = 1024
LINGERING_TIME = 1.0
#: aiohttp's own limit on a request line, in bytes: the least the daemon reads one up to.
AIOHTTP_MAX_LINE = 8190


def create_app(
    settings: Settings,
    bot: GrasBot | None = None,
    *,
    owner_token: str | None = None,
    clock: Callable[[], float] = time.monotonic,
    embed_at_start: bool = True,
) -> web.Application:
    """The daemon's application. It takes ownership of `bot` (closed on cleanup).

    Owner-only calls need `Authorization: Bearer <token>` with `owner_token`, else
    `settings.token`. With neither, nobody is the owner: every owner call is refused.
    (`serve` always has a token: it reads or creates the token file.) `clock` drives the
    rate limit (tests pass their own). `embed_at_start`: the embedding worker starts with the
    app; `serve` passes False and starts it once it listens, so that the worker's share of the
    interpreter does not delay listening (0.03 to 0.8 s of a warm start at 10,000 notes).
    """
    token = owner_token if owner_token is not None else (settings.token or "")
    if not token:
        log.warning("aucun jeton du propriétaire : tous les appels réservés au propriétaire seront refusés")
    try:
        proxies = TrustedProxies(settings.trusted_proxies)
    except ValueError as exc:
        raise ConfigError(f"GRASBOT_TRUSTED_PROXIES: {exc}") from None
    app = web.Application(middlewares=[hosts_checked, cors_preflight, cross_site_refused, errors_as_json, after_imports], client_max_size=settings.max_body)
    app[SETTINGS] = settings
    app[OWNER_TOKEN] = token
    app[CORS_ALLOWED] = tuple(settings.cors_origins)
    app[HOSTS_ALLOWED] = frozenset(settings.allowed_hosts)
    app[PROXIES] = proxies
    app[STOPPING] = asyncio.Event()
    app[IN_FLIGHT] = set()
    app[IMPORTED] = asyncio.Event()
    app[IMPORTED].set()  # `serve` clears it until its imports are in
    app[LIMITER] = RateLimiter(
        settings.rate_per_minute,
        settings.rate_burst,
        network_per_minute=settings.rate_network_per_minute,
        network_burst=settings.rate_network_burst,
        max_clients=MAX_CLIENTS,
        clock=clock,
    )
    app[ANSWERING] = InFlight(settings.answers_per_visitor, settings.answers_per_network)
    app[RELOAD_LOCK] = asyncio.Lock()
    app[DISPATCHER] = RpcDispatcher(RPC_METHODS, is_owner=lambda ctx: ctx.is_owner, max_batch=settings.max_batch)

    async def bot_ctx(app: web.Application) -> AsyncIterator[None]:
        opened = bot
        if opened is None:
            opened = await asyncio.get_running_loop().run_in_executor(None, GrasBot.open, settings)
        default_place = None if settings.question_log_named else settings.question_log  # the vault's own log
        new_log = default_place is not None and not default_place.exists()
        # the vault noted beside its log whenever the log opens: at start, or once its folder can be written
        noted = None if default_place is None else functools.partial(note_the_vault, vault=settings.vault_dir)
        own = default_log_path(vault=settings.vault_dir)  # this vault's log when it was on: its questions expire all the same
        unwritten = own if own != settings.question_log else None
        opened.question_log = await asyncio.to_thread(QuestionLog, settings.question_log, settings.log_retention_days, on_open=noted, unwritten=unwritten)
        usable = opened.question_log.enabled or opened.question_log.waiting  # waiting: locked, full, not mounted yet
        if settings.question_log_named and settings.question_log is not None and not usable:
            # the default place may be read-only (a home mounted so): serving goes on, unlogged;
            # a place the owner chose is a mistake to hear now, not in the log's silence
            raise ConfigError(
                f"le journal des questions {settings.question_log} est inutilisable ({opened.question_log.failure}) : nommez-en un autre, ou désactivez-le"
            )
        if default_place is not None and usable and new_log:  # was this vault moved? its questions are in the log of its old place
            say_logs_of_vaults_gone(default_place, log.warning)
        # the files no daemon writes any more keep the retention promise too; off the start's path
        tend = functools.partial(tend_old_logs, settings.question_log, settings.log_retention_days, unwritten=unwritten)
        threading.Thread(target=tend, name="grasbot-old-logs", daemon=True).start()
        app[BOT] = opened
        if embed_at_start:
            opened.start_embedding()  # a worker: questions are answered lexically until it is done
        yield
        try:  # the log first: the visitors' questions waiting in memory are not left to what may fail or hang after
            await asyncio.to_thread(opened.question_log.close)
        finally:
            await opened.aclose()

    app.cleanup_ctx.append(bot_ctx)
    app.cleanup_ctx.append(_dates_ctx)
    app.on_response_prepare.append(cors_headers)
    app.on_response_prepare.append(nosniff)
    app.on_response_prepare.append(not_stored)
    # an `Expect` the daemon cannot meet is answered in its JSON, on every route (aiohttp's is text)
    get = functools.partial(app.router.add_get, expect_handler=expect_continue)
    get("/", static_file("index.html", PAGE_HEADERS))
    get("/widget.js", static_file("widget.js"))
    for asset in sorted(STATIC_DIR.iterdir()):  # a route each: any other /static/ path is the JSON 404 of every path
        if asset.name not in ("index.html", "widget.js"):  # at / and /widget.js: from /static/ their relative paths break
            get(f"/static/{asset.name}", static_file(asset.name))
    get("/favicon.ico", _no_icon)
    app.router.add_post("/rpc", handle_rpc, expect_handler=rpc_expect)
    get("/ask", handle_ask, allow_head=False)  # a HEAD would ask the model, log and count a question
    get("/ask/stream", handle_ask_stream, allow_head=False)
    get("/health", handle_health)
    app.router.add_post("/reload-vault", handle_reload, expect_handler=expect_continue)
    _refused_by_routes_of_our_own(app)
    return app


def _refused_by_routes_of_our_own(app: web.Application) -> None:
    """A method an endpoint does not take, and a path that is none, reach a route of the daemon's
    whose `Expect` is met by `expect_continue`: left to aiohttp's router, they got a route of its
    own, whose expect handler answered `Expect: foo` with a plain-text 417 before any middleware.
    The 405 and 404 are raised here and written by `errors_as_json`, as before."""
    for resource in [r for r in app.router.resources() if isinstance(r, web.Resource)]:
        resource.add_route(hdrs.METH_ANY, _method_not_allowed, expect_handler=expect_continue)
    app.router.add_route(hdrs.METH_ANY, "/{path:.*}", _not_found, expect_handler=expect_continue)


async def _method_not_allowed(request: web.Request) -> web.StreamResponse:
    route = request.match_info.route
    taken = {r.method for r in route.resource or ()} - {hdrs.METH_ANY}
    raise web.HTTPMethodNotAllowed(request.method, taken)


async def _not_found(request: web.Request) -> web.StreamResponse:
    raise web.HTTPNotFound()


def runner_kwargs(settings: Settings | None = None) -> dict[str, Any]:
    """How the app must be run: our access log, handlers cancelled when a client goes, and a
    connection closed when its next request's headers are not all in `header_timeout` seconds
    after it opened or after the previous response (aiohttp's keep-alive timer: it runs until a
    whole request has arrived, so it also lets go a client that sends its headers a byte at a
    time; aiohttp's default is an hour). After a body is refused (too large, too slow), at most
    LINGERING_TIME seconds more of it are read before the connection closes (aiohttp's: 10).

    A request line is read up to GRASBOT_MAX_BODY bytes (never under aiohttp's 8,190): a
    question or a history over the daemon's limits, percent-encoded past 8,190 bytes, was
    refused by aiohttp's parser in English plain text (« Got more than 8190 bytes when
    reading »); the daemon's own check now says what is too long, in French and in JSON. A
    query string is what a body is to a POST: it may be as large."""
    settings = settings or Settings()
    return {
        "access_log_class": AccessLogger,
        "access_log": access_log,
        "handler_cancellation": True,
        "shutdown_timeout": SHUTDOWN_TIMEOUT,
        "keepalive_timeout": settings.header_timeout,
        "lingering_time": LINGERING_TIME,
        "max_line_size": max(AIOHTTP_MAX_LINE, settings.max_body),
    }


#: What to check when the address is not one this machine listens on.
_HOST_HINT = "--host est-il une adresse de cette machine ?"

#: Why a start could not listen, and what to do, by the error's number: asyncio's own sentence
#: is English and repeats the address (« error while attempting to bind on address
#: ('127.0.0.1', 80): permission denied »), and a port under 1024 was asked whether --host is
#: an address of this machine.
_LISTEN_REFUSED = {
    errno.EADDRINUSE: ("le port est déjà pris", "un autre démon tourne-t-il ? choisissez un autre --port"),
    errno.EACCES: (
        "permission refusée",
        "un port sous 1024 n'est ouvert qu'à root : choisissez-en un de 1024 ou plus, derrière le proxy de deploy/nginx",
    ),
    errno.EADDRNOTAVAIL: ("adresse indisponible", _HOST_HINT),
}


def cannot_listen(exc: OSError) -> str:
    """Why the daemon cannot listen, in French, with what to try (`grasbot serve` says it and exits 2)."""
    if isinstance(exc, socket.gaierror):  # a --host that is no address and no name this machine resolves
        return f"nom d'hôte inconnu ({_HOST_HINT})"
    said, hint = _LISTEN_REFUSED.get(exc.errno or 0, (exc.strerror or str(exc), _HOST_HINT))
    return f"{said} ({hint})"


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


async def _serve(settings: Settings, owner_token: str, bot: GrasBot, stop: asyncio.Event | None = None, hangup: threading.Event | None = None) -> int:
    """Serve until `stop` is set (by default: until SIGINT or SIGTERM; SIGHUP reloads the
    vault, as daemons do: see `_reload_on_hangup`). Once listening, worker
    threads load what serving could do without (numpy, jsonschema, ollama, then the index cache
    the start left to write); they are waited for before returning. A start that cannot listen
    still writes that cache, then returns 2. `hangup`: set by a SIGHUP that came before this
    loop handles them (`serve`): the vault is read again, before listening when it came first."""
    app = create_app(settings, bot, owner_token=owner_token, embed_at_start=False)
    runner = web.AppRunner(app, **runner_kwargs(settings))
    await runner.setup()
    if hangup is not None and hangup.is_set():  # the load may have read a note before the edit the SIGHUP announced
        hangup.clear()
        await _reload_on_hangup(app)
    app[IMPORTED].clear()  # requests wait for the imports `_after_start` makes
    try:
        site = web.TCPSite(runner, settings.host, settings.port, backlog=BACKLOG)
        await site.start()
    except OSError as exc:
        print(f"grasbot: impossible d'écouter sur {settings.host}:{settings.port} : {cannot_listen(exc)}", file=sys.stderr, flush=True)
        await runner.cleanup()
        await asyncio.to_thread(_write_cache, bot)  # the load is not lost: the next start reads it
        return 2

    stop = asyncio.Event() if stop is None else stop
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    loop.add_signal_handler(signal.SIGHUP, lambda: _track(app, asyncio.create_task(_reload_on_hangup(app))))
    if hangup is not None and hangup.is_set():  # came since: its default action would have ended the daemon
        _track(app, asyncio.create_task(_reload_on_hangup(app)))
    port = runner.addresses[0][1]
    snapshot = app[BOT].snapshot
    held, public = len(snapshot.vault.notes), len(snapshot.index("visitor"))
    print(f"GrasBot écoute sur http://{_url_host(settings.host)}:{port} (coffre : {counted(held, 'note')}, {counted(public, 'publique')})", flush=True)
    app[BOT].start_embedding()  # a worker: questions are answered lexically until it is done
    deferred = asyncio.ensure_future(_after_start(app, bot))
    try:
        await stop.wait()
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            loop.remove_signal_handler(signum)
        log.info("arrêt du démon")
        app[STOPPING].set()
        stopped = asyncio.ensure_future(runner.cleanup())  # stops listening, then waits for what is in flight
        if in_flight := app[IN_FLIGHT].copy():
            # aiohttp waits for a handler but never cancels one: an answer waiting on the model
            # held the stop for as long as LLM_TIMEOUT, past systemd's TimeoutStopSec
            _, outlasting = await asyncio.wait(in_flight, timeout=SHUTDOWN_TIMEOUT)
            for task in outlasting:
                task.cancel()
        await stopped
        await deferred  # a cache half written is no cache: the next start would parse it all
    return 0


def _track(app: web.Application, task: asyncio.Task) -> None:
    """A task the stop waits for (then cancels) as it does a request's."""
    app[IN_FLIGHT].add(task)
    task.add_done_callback(app[IN_FLIGHT].discard)


async def _reload_on_hangup(app: web.Application) -> None:
    """SIGHUP reads the vault again, as the owner's reload does (`systemctl reload`, a
    logrotate script's `kill -HUP`). By default it ended the daemon, and systemd restarts no
    service that SIGHUP ended: a stray hangup took the site's answers down until someone
    noticed. A daemon started in a terminal that closes goes on serving, as nginx does."""
    await app[IMPORTED].wait()  # a reload imports what the workers do
    log.info("SIGHUP : rechargement du coffre")
    try:
        report = await reload_vault(app)
    except Exception as exc:  # noqa: BLE001 - said as the owner's reload says it; nobody else to tell
        log.warning("SIGHUP : le coffre n'a pas été rechargé, la version d'avant reste servie : %s", reload_reason(exc))
        return
    log.info(
        "SIGHUP : coffre rechargé : %d notes (ajoutées : %d, modifiées : %d, retirées : %d, non chargées : %d)",
        report.vault_size,
        report.added,
        report.changed,
        report.removed,
        len(report.errors),
    )


#: How long the daemon sleeps at most between two looks at its notes' dates (`_reload_when_dates_turn`):
#: a reload may have brought an earlier one.
DATES_LOOK = 60.0


async def _dates_ctx(app: web.Application) -> AsyncIterator[None]:
    """`_reload_when_dates_turn` while the app runs."""
    task = asyncio.ensure_future(_reload_when_dates_turn(app))
    yield
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def _reload_when_dates_turn(app: web.Application) -> None:
    """Reloads the vault when a note's publish date or expiry date comes (`GrasBot.next_turn`):
    a note whose `expiryDate` came was served to every visitor until its owner reloaded, and
    one whose `publishDate` came was not. An asyncio task, not a thread: it sleeps until that
    instant, or DATES_LOOK seconds at most; a reload that fails is tried again DATES_LOOK
    seconds later."""
    while True:
        turn, now = app[BOT].next_turn(), time.time()
        if turn is None or turn > now:
            await asyncio.sleep(DATES_LOOK if turn is None else min(DATES_LOOK, turn - now))
            continue
        await app[IMPORTED].wait()  # a reload imports what the workers do
        log.info("la date d'une note change qui peut la lire : rechargement du coffre")
        try:
            await reload_vault(app)
        except Exception as exc:  # noqa: BLE001 - said as the owner's reload says it; nobody else to tell
            log.warning("le coffre n'a pas été rechargé à la date d'une note, la version d'avant reste servie : %s", reload_reason(exc))
            await asyncio.sleep(DATES_LOOK)


async def _no_icon(request: web.Request) -> web.Response:
    """Every browser asks for it: 204, not a 404 that lists the endpoints in every console."""
    return web.Response(status=204)


def _say_what_was_not_loaded(bot: GrasBot) -> None:
    """A note skipped, or no note public, is the author's to hear at start, not to find out
    from a visitor: `grasbot check` says which and why."""
    vault = bot.snapshot.vault
    if vault.errors:
        log.warning("%d note(s) n'ont pas pu être chargées et ne sont pas servies ; `grasbot check` dit lesquelles et pourquoi", len(vault.errors))
    if vault.warnings:
        log.info("%d avertissement(s) sur les notes ; `grasbot check` les liste", len(vault.warnings))
    for issue in vault.warnings:  # a folder meant to be hidden and read all the same: not one warning among many
        if issue.message == NO_SUCH_FOLDER:
            log.warning("%s : %s", issue.path, NO_SUCH_FOLDER)
    for said in vault_wide_warnings(vault, bot.vault_size()):
        log.warning(said)


def _say_the_demo_sites_pages(bot: GrasBot) -> None:
    """The default --site-pages and --url-map are the bundled vault's demo site's: a vault of
    one's own served with them sent every visitor the notes could not answer to /portfolio,
    /competences and /contact, and a public note of `type: projet` linked to /portfolio/<slug>,
    pages the author's site may not have, with no word at start (the README's table says it)."""
    settings = bot.settings
    if settings.vault_dir.resolve() == BUNDLED_VAULT.resolve():
        return
    if tuple(settings.site_pages) == DEFAULT_SITE_PAGES:
        log.warning(
            "un visiteur auquel les notes ne savent pas répondre est envoyé vers %s, les pages du site de démonstration"
            " (le --site-pages par défaut, GRASBOT_SITE_PAGES) : nommez celles de votre site, ou off",
            ", ".join(DEFAULT_SITE_PAGES),
        )
    if dict(settings.url_map) == DEFAULT_URL_MAP:
        # each type's template asked once (the default map's, all under `/`, give every note of
        # their types a page): 8,468 notes' url_for took 20 ms of a start
        types = {note.type for note in bot.snapshot.index("visitor").notes.values() if note.type}
        routed = sorted(kind for kind in types if settings.url_template(kind))
        if routed:
            log.warning(
                "les notes publiques de type %s mènent aux pages du site de démonstration (le --url-map par défaut, GRASBOT_URL_MAP : %s) :"
                " donnez à --url-map les adresses de votre site",
                ", ".join(routed),
                ",".join(f"{kind}={template}" for kind, template in DEFAULT_URL_MAP.items()),
            )


async def _after_start(app: web.Application, bot: GrasBot) -> None:
    """What a start leaves for later, done in worker threads while the daemon listens: the
    packages and validators the first requests need (they wait for them: `after_imports`),
    then the index cache; never raises."""
    try:
        await asyncio.to_thread(_import_later)
    finally:
        app[IMPORTED].set()
    await asyncio.to_thread(_write_cache, bot)


def _import_later() -> None:
    """The packages a start left out, then every method's params validator (0.4 s); never raises."""
    import_once("numpy", "jsonrpcserver", "jsonschema", "ollama")
    try:
        prepare_validators()
    except Exception:  # noqa: BLE001 - a call that needs it will say what is wrong
        log.exception("les validateurs des paramètres JSON-RPC n'ont pas pu être faits")


def _write_cache(bot: GrasBot) -> None:
    """The index cache the start left to write, if any; never raises."""
    started = time.perf_counter()
    try:
        if bot.write_cache():
            log.info("cache de l'index écrit en %.2f s", time.perf_counter() - started)
    except Exception:  # noqa: BLE001 - the cache is optional: serving goes on without it
        log.exception("cache de l'index non écrit")


class _MalformedRequests(logging.Filter):
    """aiohttp logs a request it cannot parse (a header over 8 KiB, a bad chunk size, a byte
    that is no URL) as an ERROR with a traceback quoting the request's bytes: any client that
    reaches the daemon could fill its log with them, and with what it sent. One line instead,
    a warning that names the fault, not the bytes; aiohttp has already answered 400."""

    def filter(self, record: logging.LogRecord) -> bool:
        fault = record.exc_info[1] if record.exc_info else None
        if isinstance(fault, HttpProcessingError):
            record.levelno, record.levelname = logging.WARNING, "WARNING"
            record.msg, record.args = "%s, refused by aiohttp (%s %s)", (record.getMessage(), fault.code, type(fault).__name__)
            record.exc_info = record.exc_text = None
        return True


def _quiet_malformed_requests() -> None:
    """Install `_MalformedRequests` on aiohttp's server logger, once."""
    server_log = logging.getLogger("aiohttp.server")
    if not any(isinstance(f, _MalformedRequests) for f in server_log.filters):
        server_log.addFilter(_MalformedRequests())


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
    _quiet_malformed_requests()
    started = time.perf_counter()
    # A stop while the vault loads ends it as a Ctrl-C does, so that what the load made (the
    # workers of a parallel load, their folder) is cleaned up; by default SIGTERM killed this
    # process alone, and a process run as a container's PID 1 ignored it. A reload asked
    # meanwhile (SIGHUP) is kept for when the vault is loaded: the load may have read a note
    # before the edit it announces (a note made private was served public until the next
    # reload), and until the event loop handles it, SIGHUP's default action ends the daemon.
    main = threading.current_thread() is threading.main_thread()
    hangup = threading.Event()
    on_term = signal.signal(signal.SIGTERM, signal.default_int_handler) if main else None
    on_hangup = signal.signal(signal.SIGHUP, lambda signum, frame: hangup.set()) if main else None
    try:
        try:
            # Before the event loop and its threads: a large vault then loads on every core
            # (store.parallel forks only a process that runs no other thread).
            bot = GrasBot.open(settings, write_cache=False)  # written once serving: see _serve
        except VaultError as exc:
            print(f"grasbot: démarrage impossible : {exc}", file=sys.stderr, flush=True)
            return 2
        except KeyboardInterrupt:
            print("grasbot: arrêté pendant le chargement du coffre", file=sys.stderr, flush=True)
            return 0
        finally:
            if main:
                signal.signal(signal.SIGTERM, on_term)
        log.info("coffre chargé en %.2f s", time.perf_counter() - started)
        _say_what_was_not_loaded(bot)
        _say_the_demo_sites_pages(bot)
        try:
            code = asyncio.run(_serve(settings, token.value, bot, hangup=hangup))
        except KeyboardInterrupt:  # a second Ctrl-C during shutdown
            return 0
    finally:
        if main:
            signal.signal(signal.SIGHUP, on_hangup)
    log.debug("served for %.1f s", time.perf_counter() - started)
    return code
