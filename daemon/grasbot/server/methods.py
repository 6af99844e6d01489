"""The JSON-RPC methods (search, answer, reload, health, suggest_aliases), and what the HTTP
endpoints share with them: the configured limits on a question, what a caller may read of an
answer, and the vault reload.

Each method receives an `RpcContext` first, then its params by name, already checked against
the OpenRPC document by the dispatcher (`rpc.py`); owner-only methods are refused there too.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
from collections.abc import Callable, Iterator
from typing import Any

from aiohttp import web

from .._config import Settings
from .._engine import RELOADED, ReloadReport, check_question, vault_files
from .._exceptions import NoteNotFound, VaultError
from ..answer.language import NOT_FRENCH
from .peers import FROM_PEER, reload_peers
from .protocol import ParamsError
from .ratelimit import RateLimiter
from .rpc import NOTE_NOT_FOUND, RATE_LIMITED, VAULT_RELOAD_FAILED, RpcError
from .state import ANSWERING, BOT, LIMITER, OWNER_TOKEN, RELOAD_LOCK, SETTINGS, caller_key, caller_view, is_owner

__all__ = [
    "ANSWERING_ALREADY",
    "ANSWERING_NETWORK",
    "PUBLIC_LLM_ERROR",
    "RPC_METHODS",
    "RpcContext",
    "check_limits",
    "for_caller",
    "health_for",
    "one_answer",
    "reload_reason",
    "reload_vault",
    "too_many_questions",
]

log = logging.getLogger("grasbot.server")

STATS_PER_TURN = 500  # files a reload stats on the event loop between two turns of requests (~5 ms)

#: `llm_error` as a caller without the owner token reads it. The cause names Ollama's address
#: and repeats its errors: the daemon's log and the owner's calls carry it, a site's visitors don't.
PUBLIC_LLM_ERROR = "le modèle de langue n'a pas répondu : cette réponse est faite d'extraits des notes"


#: Why a visitor's question is refused while they wait for as many answers as they may already
#: (`Settings.answers_per_visitor`) (`data.reason` of -32002): said to the visitor, in the site's language.
ANSWERING_ALREADY = "Vos questions précédentes sont encore en cours de réponse : attendez la fin de l'une d'elles, puis posez celle-ci."
#: The same when the visitor's IPv6 /48 waits for GRASBOT_CONCURRENT_NETWORK_ANSWERS: the questions
#: may be their neighbours', not theirs.
ANSWERING_NETWORK = "Trop de questions venues de votre réseau sont en cours de réponse : réessayez dans un instant."


def too_many_questions(retry_after: int) -> dict:
    """-32002's (HTTP 429's) data for a visitor over the rate limit: the seconds to wait, and
    `reason`, said to them in the site's language, as the refusal of an answer awaited already."""
    return {"retry_after": retry_after, "reason": f"Trop de questions à la suite : réessayez dans {retry_after} s."}


@contextlib.contextmanager
def one_answer(app: web.Application, client: str | None) -> Iterator[None]:
    """Hold one of the answers `client` may wait for at once during the block (None: the owner,
    never limited), or refuse the question (-32002, HTTP 429) with the seconds an answer takes
    lately as `retry_after`: within its rate limit one visitor's questions asked at once held
    every model slot while the others waited."""
    if client is None:
        yield
        return
    answering = app[ANSWERING]
    if (full := answering.enter(client)) is not None:
        wait = RateLimiter.retry_after(app[BOT].admission.answer_seconds)
        reason = ANSWERING_ALREADY if full == client else ANSWERING_NETWORK
        raise RpcError(RATE_LIMITED, "Rate limited", {"retry_after": wait, "reason": reason})
    try:
        yield
    finally:
        answering.leave(client)


class RpcContext:
    """What every JSON-RPC method receives first. `client`, the rate limit's key for the caller,
    is worked out only for a visitor's question, the owner's never (it was 4 % of a `search` call)."""

    __slots__ = ("bot", "app", "is_owner", "_request")

    def __init__(self, request: web.Request) -> None:
        self.bot, self.app, self.is_owner, self._request = request.app[BOT], request.app, is_owner(request), request

    @property
    def client(self) -> str:
        return caller_key(self._request)


def for_caller(payload: dict, is_owner: bool) -> dict:
    """An answer's payload as this caller may read it; an LLM failure's cause goes to the log.
    A visitor is never told `reused`: an answer kept, or shared while it was written, is
    another visitor's question, and `reused: true` told whoever asked whether someone had
    asked it before (the access log and the owner still say it: `answer_outcome`)."""
    if not is_owner and payload.get("reused"):
        payload = {**payload, "reused": False}
    cause = payload.get("llm_error")
    if cause is None:
        return payload
    if cause.startswith(NOT_FRENCH):  # a slip of the model, not a host or a setting to fix
        log.info("la réponse du modèle de langue n'était pas en français, celle donnée est faite d'extraits des notes : %s", cause)
    elif cause.startswith(RELOADED):  # the owner reloaded meanwhile: nothing to fix either
        log.info("la réponse du modèle de langue n'a pas été montrée, celle donnée est faite d'extraits des notes : %s", cause)
    else:
        log.warning("le modèle de langue n'a pas répondu, la réponse donnée est faite d'extraits des notes : %s", cause)
    return payload if is_owner else {**payload, "llm_error": PUBLIC_LLM_ERROR}


def check_limits(settings: Settings, q: str, history: list | tuple = ()) -> None:
    """The configured limits, where they are lower than the protocol's own (its schema checked those).

    Messages name the parameter and the sizes, never the value: it may be anything. The
    refusal's `data` says the limit by its setting's name too (`max_question`, `max_history`,
    `max_turn`), which a client reads to ask again within it.
    """
    if len(q) > settings.max_question:
        raise ParamsError(
            f"`q` : doit compter au plus {settings.max_question} caractères (longueur reçue : {len(q)})",
            param="q",
            said={"param": "q", "max_question": settings.max_question},
        )
    if len(history) > settings.max_history:
        raise ParamsError(
            f"`history` : doit compter au plus {settings.max_history} éléments (nombre reçu : {len(history)})",
            param="history",
            said={"param": "history", "max_history": settings.max_history},
        )
    for i, turn in enumerate(history):
        content = turn.get("content", "") if isinstance(turn, dict) else ""
        if isinstance(content, str) and len(content) > settings.max_turn:
            raise ParamsError(
                f"`history[{i}].content` : doit compter au plus {settings.max_turn} caractères (longueur reçue : {len(content)})",
                param="history",
                said={"param": "history", "max_turn": settings.max_turn},
            )


def _take_question(ctx: RpcContext, q: str) -> None:
    """Spend one of a visitor's questions, or refuse the call (-32002): the owner is never
    limited, and a question the engine refuses costs nothing, as on /ask.

    `search` and `answer` take from the one bucket /ask and /ask/stream share: each logs the
    visitor's question, and the limit is on questions, whatever the method; a bucket of its
    own for `search` would let a client flood the question log at twice the rate."""
    if ctx.is_owner:
        return
    check_question(q)
    wait = ctx.app[LIMITER].take(ctx.client)
    if wait:
        raise RpcError(RATE_LIMITED, "Rate limited", too_many_questions(RateLimiter.retry_after(wait)))


async def _m_search(ctx: RpcContext, q: str, audience: str, top_k: int | None = None) -> dict:
    check_limits(ctx.app[SETTINGS], q)
    _take_question(ctx, q)
    await ctx.bot.prepare_question(q, owner=ctx.is_owner)
    result = ctx.bot.search(q, top_k=top_k, audience=audience, owner=ctx.is_owner)  # the owner's caches apart: `GrasBot.search`
    if not ctx.is_owner and audience == "visitor":  # the owner's previews are not visitors' questions
        ctx.bot.record(q, result)
    return result.to_dict()


async def _m_answer(ctx: RpcContext, q: str, history: list, audience: str) -> dict:
    check_limits(ctx.app[SETTINGS], q, history)
    if not ctx.is_owner:
        check_question(q)  # a question the engine refuses is refused before it holds anything
    with one_answer(ctx.app, None if ctx.is_owner else ctx.client):
        _take_question(ctx, q)
        payload = await ctx.bot.answer(q, history=history, audience=audience, record=not ctx.is_owner, owner=ctx.is_owner)
    return for_caller(payload, ctx.is_owner)


async def _m_suggest_aliases(ctx: RpcContext, slug: str, limit: int, path: str | None = None) -> dict:
    from ..retrieval.aliases import suggest_aliases  # the owner's tool: imported by its first call, not by every start

    index = ctx.bot.snapshot.index("owner")  # owner-only: the dispatcher checked the token
    try:
        return await asyncio.to_thread(suggest_aliases, slug, index, ctx.bot.question_log, limit, path)
    except NoteNotFound as exc:
        raise RpcError(NOTE_NOT_FOUND, "Note not found", str(exc)) from None


async def _m_reload(ctx: RpcContext) -> dict:
    try:
        report = await reload_vault(ctx.app)
    except (VaultError, OSError) as exc:
        raise RpcError(VAULT_RELOAD_FAILED, "Vault reload failed", reload_reason(exc)) from None
    return await reloaded(ctx._request, report)


async def _m_health(ctx: RpcContext) -> dict:
    return await health_for(ctx._request)


async def health_for(request: web.Request) -> dict:
    """The health as this caller may read it, and whose view that is (`caller`, `state.caller_view`)."""
    caller = caller_view(request)
    return {**await request.app[BOT].health(caller == "owner"), "caller": caller}


RPC_METHODS: dict[str, Callable[..., Any]] = {
    "search": _m_search,
    "answer": _m_answer,
    "reload": _m_reload,
    "health": _m_health,
    "suggest_aliases": _m_suggest_aliases,
}


async def reloaded(request: web.Request, report: ReloadReport) -> dict:
    """The reload's result, and the peers' when this daemon passes the reload on (`peers`)."""
    result = report.to_dict()
    peers = request.app[SETTINGS].peers
    if peers and not request.headers.get(FROM_PEER):
        result["peers"] = await reload_peers(peers, request.app[OWNER_TOKEN])
    return result


def answer_outcome(payload: dict) -> str:
    """An answer's outcome in the access log."""
    if "llm_error" in payload:
        return "llm_error"
    return "busy" if payload["busy"] else "reused" if payload["reused"] else "ok"


def reload_reason(exc: BaseException) -> str:
    """Why a reload failed, as the owner reads it (the previous vault keeps serving)."""
    if isinstance(exc, OSError) and not isinstance(exc, VaultError):
        return f"impossible de lire le coffre : {exc.strerror or exc}"
    return str(exc)


async def reload_vault(app: web.Application) -> ReloadReport:
    """Run the blocking reload in a worker thread, one at a time; the old vault serves meanwhile.

    The files are walked and stat()ed here first, on the event loop, STATS_PER_TURN between
    two turns of requests. A worker thread gives up the GIL at every stat and, while the loop
    is busy, waits for it to come back: one changed note of 10,000 took 4.2 s to reload under
    a load of `search` calls that way, 165 ms idle (benchmarks/README.md, round 5).

    A reload that fails still applies what the notes' own files and dates say
    (`GrasBot.reload(known_only=True)`: a note made private, deleted or expired leaves the
    visitors' answers): the previous vault, which keeps serving, held them public for as long
    as a folder stayed unreadable or the drive unmounted. Its caller hears the reload's error."""
    bot = app[BOT]
    loop = asyncio.get_running_loop()
    async with app[RELOAD_LOCK]:
        try:
            scanned: list[tuple[str, os.DirEntry]] = []
            skipped: list[str] = []
            for found in vault_files(bot.settings, skipped):
                try:
                    found[1].stat()  # kept by the entry for load_vault
                except OSError:
                    pass  # load_vault asks again, and reports it
                scanned.append(found)
                if len(scanned) % STATS_PER_TURN == 0:
                    await asyncio.sleep(0)
            return await loop.run_in_executor(None, bot.reload, scanned, skipped)
        except Exception:
            try:
                await loop.run_in_executor(None, functools.partial(bot.reload, skipped=skipped, known_only=True))
            except Exception:  # noqa: BLE001 - the reload's own failure is the one its caller hears
                log.exception("les notes rendues privées, supprimées ou expirées n'ont pas pu être retirées aux visiteurs")
            raise
