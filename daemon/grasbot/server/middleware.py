"""What wraps every request: CORS (the preflight and the response headers), unexpected errors
turned into a 500 that says nothing about internals, and the access log's one line.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import time
import urllib.parse

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger

from .._exceptions import AuthError, GrasbotError, QueryError
from .._terminal import printable
from .handlers import body_over_limit, error_response
from .protocol import invalid_params_data
from .rpc import OWNER_TOKEN_REQUIRED
from .state import IMPORTED, IN_FLIGHT, LOG_OUTCOME, LOG_WHAT, SETTINGS, STOPPING

__all__ = [
    "CORS_ALLOWED",
    "CORS_PATHS",
    "HOSTS_ALLOWED",
    "AccessLogger",
    "access_log",
    "after_imports",
    "cors_headers",
    "cors_preflight",
    "cross_site_refused",
    "errors_as_json",
    "hosts_checked",
    "nosniff",
    "not_stored",
]

log = logging.getLogger("grasbot.server")
access_log = logging.getLogger("grasbot.access")

#: The CORS allow-list (Settings.cors_origins, app://obsidian.md by default). No wildcard,
#: no localhost rule: the chat page is same-origin, a site's origin is listed explicitly.
CORS_ALLOWED = web.AppKey("cors_allowed", tuple)
#: The names beside localhost a browser may reach the daemon's port by (Settings.allowed_hosts).
HOSTS_ALLOWED = web.AppKey("hosts_allowed", frozenset)
#: path -> the methods a cross-origin caller may use on it.
CORS_PATHS: dict[str, tuple[str, ...]] = {
    "/rpc": ("POST",),
    "/ask": ("GET",),
    "/ask/stream": ("GET",),
    "/health": ("GET",),
}


def _origin_allowed(request: web.Request, origin: str) -> bool:
    return origin in request.app[CORS_ALLOWED]


def _rebound(host: str, allowed: frozenset[str], on_port_80: bool = False) -> bool:
    """Whether a Host header names the daemon's port by a name it does not know: a page whose own
    name an attacker points at this machine (DNS rebinding) is same-origin with the daemon, CORS
    and all, and reads what it answers. A browser writes the port it reached, but for 80; a proxy
    in front (deploy/nginx: `Host $host`) sends the site's name without one, and an address is no
    name that can be rebound. `on_port_80`: the daemon itself listens on port 80, where a browser
    writes no port (`serve --port 80` with no proxy took every name)."""
    if on_port_80 and host and ":" not in host.rpartition("]")[2]:
        host = f"{host}:80"
    name, colon, port = host.rpartition(":")
    if not colon or not port.isdigit() or name.startswith("["):  # no port, or an IPv6 address
        return False
    name = name.lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost") or name in allowed:
        return False
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return True
    return False


@web.middleware
async def hosts_checked(request: web.Request, handler):
    """A request by a rebound name is refused (421) before anything answers it; see `_rebound`."""
    local = request.transport.get_extra_info("sockname") if request.transport is not None else None
    on_port_80 = isinstance(local, tuple) and len(local) >= 2 and local[1] == 80
    if _rebound(request.headers.get("Host", ""), request.app[HOSTS_ALLOWED], on_port_80):
        request[LOG_OUTCOME] = "host refused"
        return error_response(421, "ce démon n'est pas servi sous le nom de l'en-tête Host : ajoutez ce nom à GRASBOT_ALLOWED_HOSTS s'il est le vôtre")
    return await handler(request)


#: The paths where a question is asked: searched, logged, answered by the model, counted.
QUESTION_PATHS = ("/ask", "/ask/stream")
#: Why a question a page on another site made its visitor's browser send is not asked.
CROSS_SITE_REFUSED = "cette question vient d'une page d'un site que GRASBOT_CORS_ORIGINS ne liste pas : elle n'est pas posée"


def _own_origin(request: web.Request, origin: str) -> bool:
    """Whether `Origin` names the host the request was sent to (the chat page at `/`, by a
    browser that names its own origin): its port too, unless the `Host` has none (nginx's
    `Host $host`), as `_rebound` reads it."""
    try:
        parts = urllib.parse.urlsplit(origin)
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        return False
    host = request.headers.get("Host", "").lower().rstrip(".")
    name, colon, given = host.rpartition(":")
    if not colon or not given.isdigit() or (host.startswith("[") and not name.endswith("]")):
        name, given = host, ""  # no port (an IPv6 address's colons are no port)
    if parts.hostname is None or parts.hostname != name.strip("[]").rstrip("."):
        return False
    return not given or port == int(given)


def _from_a_foreign_page(request: web.Request) -> bool:
    """Whether a browser says the request comes from a page on a site not listed: an `Origin`
    (any cross-origin fetch sends one) neither listed nor the daemon's own, or, without one,
    `Sec-Fetch-Site` cross-site or same-site for anything but a page the visitor goes to (an
    `<img>`, a `<script>`, a frame, a no-cors fetch). A client that says neither (curl, a
    script, an older browser) is not refused: the rate limit bounds it."""
    if request.headers.get("Sec-Fetch-Site", "").lower() == "same-origin":
        return False
    origin = request.headers.get("Origin")
    if origin is not None:
        return not (_origin_allowed(request, origin) or _own_origin(request, origin))
    site = request.headers.get("Sec-Fetch-Site", "").lower()
    return site in ("cross-site", "same-site") and request.headers.get("Sec-Fetch-Dest", "").lower() != "document"


@web.middleware
async def cross_site_refused(request: web.Request, handler):
    """A question a page on a site not listed made its visitor's browser send is refused (403)
    before anything is asked. CORS alone hid the answer from that page, not the question from
    the daemon: any site's page (a hidden fetch, `<img src=…/ask?q=…>`) made each of its
    visitors ask, which ran the model, wrote the question log, and spent that visitor's own
    questions and answers, so that they (or anyone behind their address) were refused on the
    owner's site."""
    if request.method == "GET" and request.path in QUESTION_PATHS and _from_a_foreign_page(request):
        request[LOG_OUTCOME] = "cross-site refused"
        return error_response(403, CROSS_SITE_REFUSED)
    return await handler(request)


@web.middleware
async def cors_preflight(request: web.Request, handler):
    if request.method != "OPTIONS" or request.path not in CORS_PATHS:
        return await handler(request)
    origin = request.headers.get("Origin", "")
    method = request.headers.get("Access-Control-Request-Method", "")
    # A refusal says why, in the JSON of every error: an empty 403 left the owner whose site's
    # origin is not listed (or who sent the wrong method) nothing to read in the browser's tools.
    if not _origin_allowed(request, origin):
        request[LOG_OUTCOME] = "preflight refused"
        return error_response(403, "CORS : l'Origin de la page n'est pas l'une des GRASBOT_CORS_ORIGINS (le propriétaire y inscrit l'origine du site)")
    if method not in CORS_PATHS[request.path]:
        request[LOG_OUTCOME] = "preflight refused"
        return error_response(403, f"CORS : cette adresse n'accepte que {' ou '.join(CORS_PATHS[request.path])} (Access-Control-Request-Method)")
    return web.Response(
        status=204,
        headers={
            "Access-Control-Allow-Methods": ", ".join((*CORS_PATHS[request.path], "OPTIONS")),
            "Access-Control-Allow-Headers": "Content-Type, Authorization, Last-Event-ID",  # an EventSource's reconnect: handlers.handle_ask_stream
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
        # A 429's Retry-After is no CORS-safelisted header: unexposed, a page on another origin
        # (the widget) cannot read it and tells its visitor to wait a minute whatever was said.
        response.headers["Access-Control-Expose-Headers"] = "Retry-After"


async def nosniff(request: web.Request, response: web.StreamResponse) -> None:
    """Every response is what its Content-Type says, the static files (chat.js, chat.css, which
    the page and the widget load) included: aiohttp's static route sets no header of its own."""
    response.headers["X-Content-Type-Options"] = "nosniff"


async def not_stored(request: web.Request, response: web.StreamResponse) -> None:
    """An answer, /health, an error: never kept by a cache between the daemon and a browser
    (a Varnish keeps a response that says nothing for 2 minutes): it would serve one visitor's
    answer to the next after the reload that made its note private, and a 429 to everyone.
    The chat's files set their own (`no-cache`: kept, but checked first)."""
    response.headers.setdefault("Cache-Control", "no-store")


def _endpoints(app: web.Application) -> str:
    """`GET /ask, POST /rpc, …`: what a request to no endpoint is told, read from the router so
    that it names the routes as they are (the path asked for is never quoted back)."""
    routes = (
        f"{r.method} {r.resource.canonical}{'/…' if isinstance(r.resource, web.StaticResource) else ''}"
        for r in app.router.routes()
        if r.resource is not None and r.method not in ("HEAD", "OPTIONS", "*")  # "*": app's 405 and 404
    )
    return ", ".join(dict.fromkeys(routes))


@web.middleware
async def after_imports(request: web.Request, handler):
    """A request that comes while `grasbot serve` imports what it left for after listening
    waits for it (half a second, which its first answer would pay anyway): imported by the
    handler beside that thread, jsonschema was left half made (`grasbot._imports`)."""
    imported = request.app[IMPORTED]
    if not imported.is_set():
        await imported.wait()
    return await handler(request)


@web.middleware
async def errors_as_json(request: web.Request, handler):
    """An unexpected exception becomes a 500 that says nothing about internals; a path that is
    no endpoint, or a method an endpoint does not take, is answered in the same JSON as every
    other error (a client posting to /ask learns it wants GET), never as aiohttp's plain text.
    A request cut before its end has its access line written here: aiohttp cancels the handler
    of a client who leaves (or of every request, when the daemon stops), and writes none."""
    started = time.perf_counter()
    task = asyncio.current_task()
    if task is not None:
        request.app[IN_FLIGHT].add(task)
    try:
        return await handler(request)
    except asyncio.CancelledError:
        # 499, as nginx logs a client that closed its request; 503, a request the stop cut
        status, outcome = (503, "cut by the daemon's stop") if request.app[STOPPING].is_set() else (499, "client gone")
        access_log.info("%s %.1f ms", _access_line(request, status, outcome), (time.perf_counter() - started) * 1000)
        raise
    except web.HTTPRequestEntityTooLarge:
        return error_response(413, body_over_limit(request.app[SETTINGS].max_body))
    except web.HTTPMethodNotAllowed as exc:
        taken = sorted(exc.allowed_methods - {"HEAD"}) or sorted(exc.allowed_methods)
        response = error_response(405, f"cette adresse n'accepte que {' ou '.join(taken)}")
        response.headers["Allow"] = ", ".join(sorted(exc.allowed_methods))
        return response
    except web.HTTPNotFound:
        return error_response(404, f"aucune adresse de GrasBot à ce chemin ; il sert {_endpoints(request.app)}")
    except web.HTTPException:
        raise
    except GrasbotError as exc:
        if isinstance(exc, QueryError):
            return error_response(400, invalid_params_data(exc))
        if isinstance(exc, AuthError):
            return error_response(401, str(exc) or OWNER_TOKEN_REQUIRED)
        log.error("%s %s a échoué", request.method, printable(request.path), exc_info=exc)
        return error_response(500)
    except Exception as exc:  # noqa: BLE001
        log.error("%s %s a échoué", request.method, printable(request.path), exc_info=exc)
        return error_response(500)
    finally:
        if task is not None:
            request.app[IN_FLIGHT].discard(task)


class AccessLogger(AbstractAccessLogger):
    """`POST /rpc search 200 ok 12.3 ms`: method, path, status, outcome, duration; no IP, no query."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        self.logger.info("%s %.1f ms", _access_line(request, response.status, request.get(LOG_OUTCOME)), time * 1000)


def _access_line(request: web.BaseRequest, status: int, outcome: str | None) -> str:
    """The path as `printable` writes it: aiohttp decodes it, and a visitor's `/static/%0a…`
    (which nginx passes on) wrote a line of its own, or a terminal's escape codes, in the log."""
    what = request.get(LOG_WHAT)
    parts = [request.method, printable(request.path)]
    if what:
        parts.append(what)
    parts.append(str(status))
    if outcome:
        parts.append(outcome)
    return " ".join(parts)
