"""What the daemon's application holds, and who is asking.

The application keys (the bot, its settings, the dispatcher, the reload lock, the owner token,
the rate limiter, the trusted proxies) are declared once here so that the RPC methods, the HTTP
handlers, the middleware and the app factory read the same ones without importing each other.
The request keys carry what the access log says about a request (the RPC method, the outcome).
"""

from __future__ import annotations

import asyncio

from aiohttp import web

from .._config import Settings
from .._engine import GrasBot
from .auth import bearer_given, bearer_matches
from .ratelimit import InFlight, RateLimiter, TrustedProxies, client_key
from .rpc import RpcDispatcher

__all__ = [
    "ACCESS_OUTCOMES",
    "ANSWERING",
    "BOT",
    "DISPATCHER",
    "IMPORTED",
    "IN_FLIGHT",
    "LIMITER",
    "LOG_OUTCOME",
    "LOG_WHAT",
    "OWNER_TOKEN",
    "PROXIES",
    "RELOAD_LOCK",
    "SETTINGS",
    "STOPPING",
    "caller_key",
    "caller_view",
    "is_owner",
]

BOT = web.AppKey("bot", GrasBot)
SETTINGS = web.AppKey("settings", Settings)
DISPATCHER = web.AppKey("dispatcher", RpcDispatcher)
RELOAD_LOCK = web.AppKey("reload_lock", asyncio.Lock)
OWNER_TOKEN = web.AppKey("owner_token", str)
LIMITER = web.AppKey("limiter", RateLimiter)
ANSWERING = web.AppKey("answering", InFlight)  # the answers each visitor waits for now
PROXIES = web.AppKey("trusted_proxies", TrustedProxies)
STOPPING = web.AppKey("stopping", asyncio.Event)  # set when the daemon stops: what it cuts then, the client did not leave
#: Set once the packages `grasbot serve` imports after listening are in (`grasbot._imports`);
#: set from the start in an application that does not defer them
IMPORTED = web.AppKey("imported", asyncio.Event)
IN_FLIGHT: web.AppKey[set[asyncio.Task]] = web.AppKey("in_flight", set)  # the handlers' tasks running now: the stop cancels those that outlast it

# request-scoped notes for the access log
LOG_WHAT = web.RequestKey("grasbot_what", str)
LOG_OUTCOME = web.RequestKey("grasbot_outcome", str)
#: Every outcome word the access log writes after the status (`error` followed, on /rpc, by the
#: JSON-RPC codes). Tokens, not sentences: English where the rest of what the owner reads is
#: French, for the owner's alerts and scripts match them (`499 client gone`) and they stay the
#: same from version to version, as the status codes beside them. deploy/README.md lists them.
ACCESS_OUTCOMES = frozenset(
    {
        "ok",
        "busy",
        "reused",
        "llm_error",
        "error",
        "no answer (notification)",
        "client gone",
        "cut by the daemon's stop",
        "rate limited",
        "bad request",
        "reconnect refused",
        "not JSON",
        "body too large",
        "body too slow",
        "body unreadable",
        "expectation refused",
        "unauthorized",
        "reload failed",
        "host refused",
        "cross-site refused",
        "preflight refused",
    }
)


def is_owner(request: web.Request) -> bool:
    """The caller showed the owner token (constant-time check; no token configured: nobody)."""
    return bearer_matches(request.headers.get("Authorization"), request.app[OWNER_TOKEN])


def caller_view(request: web.Request) -> str:
    """Whose view the request is served: `owner`, `visitor`, or `token_refused` (a Bearer token
    that is not the owner's, served as a visitor's). Said in `health`, so that a plugin whose
    token went stale learns it before its previews are taken for visitors' questions; a wrong
    token is never refused outright: a proxy may send its own (oauth2-proxy) for every visitor."""
    authorization = request.headers.get("Authorization")
    if bearer_matches(authorization, request.app[OWNER_TOKEN]):
        return "owner"
    return "token_refused" if bearer_given(authorization) else "visitor"


def caller_key(request: web.Request) -> str:
    """The rate limit's key for the caller (the last X-Forwarded-For, or Forwarded `for=`, address
    behind a trusted proxy).

    Several X-Forwarded-For lines are one list, in order (RFC 9110): HAProxy's `option forwardfor`
    adds its own line after the visitor's, so the first line alone is the visitor's to choose.
    aiohttp reads the Forwarded lines (RFC 7239) into one element each hop, in the same order."""
    forwarded_for = ", ".join(request.headers.getall("X-Forwarded-For", ()))
    forwarded = [element.get("for") for element in request.forwarded]
    return client_key(request.remote, forwarded_for, request.app[PROXIES], forwarded)
