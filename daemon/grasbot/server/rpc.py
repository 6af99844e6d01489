"""JSON-RPC 2.0 dispatch for POST /rpc, conformant to the specification's own examples.

jsonrpcserver 5.0.9 runs each single, well-formed request (method lookup, arity check,
notification handling, response envelope). Around it this module does what the library
gets wrong or leaves out: parsing and request checks (so each bad member of a batch gets
its own -32600), batches member by member with a size limit, params checked against the
OpenRPC document, owner-only methods, GrasbotError → error code mapping, and internal
errors that never carry the exception's text. jsonrpcserver (with jsonschema, which it checks
its request schema with as it is imported) is imported by the first call that needs it, or by
`grasbot serve` once listening (`server.app._import_later`).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast

from .._exceptions import AuthError, GrasbotError, QueryError, VaultError
from .protocol import (
    WireError,
    dumps,
    invalid_params_data,
    loads,
    method_names,
    openrpc_document,
    owner_only_methods,
    validate_params,
    validate_result,
)

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "NOTE_NOT_FOUND",
    "PARSE_ERROR",
    "RATE_LIMITED",
    "UNAUTHORIZED",
    "VAULT_RELOAD_FAILED",
    "RpcDispatcher",
    "RpcError",
]

logger = logging.getLogger("grasbot.rpc")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
UNAUTHORIZED = -32001
RATE_LIMITED = -32002
NOTE_NOT_FOUND = -32003
VAULT_RELOAD_FAILED = -32004

# Codes whose answer never carries data: the spec's examples have none, and for
# internal errors data would leak the exception's text.
_NO_DATA = {PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INTERNAL_ERROR, -32000}
_MESSAGES = {
    PARSE_ERROR: "Parse error",
    INVALID_REQUEST: "Invalid Request",
    METHOD_NOT_FOUND: "Method not found",
    INVALID_PARAMS: "Invalid params",
    INTERNAL_ERROR: "Internal error",
    -32000: "Internal error",
}
_REQUEST_KEYS = {"jsonrpc", "method", "params", "id"}
#: An error without a data member, as `_error_fields` says it (jsonrpcserver's NODATA, without importing it).
_WITHOUT_DATA = object()
#: Why an owner-only call (or an `audience: owner`) is refused without the owner token.
OWNER_TOKEN_REQUIRED = "jeton du propriétaire requis"


class RpcError(GrasbotError):
    """Raised by a method to answer a specific JSON-RPC error (e.g. -32003 note not found).

    ``data`` None means the error object carries no data member.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def _error(code: int, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": _MESSAGES[code]}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "error": error, "id": None}


def _not_utf8(exc: UnicodeDecodeError) -> str:
    """What a body that is not UTF-8 is told: where, and which byte (never more of the body)."""
    where = f"octet 0x{exc.object[exc.start]:02X} à la position {exc.start}"
    return f"le corps n'est pas de l'UTF-8 ({where}) : JSON-RPC se lit en UTF-8, quel que soit le charset qu'annonce le Content-Type"


#: A JSON value's kind, as a refused request is told what it was instead of an object.
_KINDS = ((bool, "un booléen"), (str, "un texte"), (int, "un nombre"), (float, "un nombre"), (list, "un tableau"))
#: Why an empty batch is refused (-32600).
EMPTY_BATCH = "lot vide : un lot contient au moins une requête"


def _malformed(member: Any) -> str | None:
    """Why `member` is no Request object as section 4 of the spec defines it (extra members
    refused), in French, as the daemon's other refusals say it; None when it is one. -32600 said
    nothing of why, and a client's author had to guess which rule the request broke. Never
    quotes what the caller sent: an unknown member is counted, not named."""
    if not isinstance(member, dict):
        kind = next((name for types, name in _KINDS if isinstance(member, types)), "null")
        return f"la requête doit être un objet JSON, pas {kind}"
    if "jsonrpc" not in member:
        return '`jsonrpc` manque : il doit valoir "2.0"'
    if member["jsonrpc"] != "2.0":
        return '`jsonrpc` doit valoir "2.0"'
    if "method" not in member:
        return "`method` manque : le nom de la méthode appelée"
    if not isinstance(member["method"], str):
        return "`method` doit être un texte"
    if "params" in member and not isinstance(member["params"], (list, dict)):
        return "`params` doit être un objet (les paramètres par nom) ou un tableau"
    if "id" in member:
        rid = member["id"]
        if isinstance(rid, bool) or not isinstance(rid, (str, int, float, type(None))):
            return "`id` doit être un texte, un nombre ou null"
    unknown = len(set(member) - _REQUEST_KEYS)
    if unknown:
        return f"{unknown} membre{'s' if unknown > 1 else ''} inconnu{'s' if unknown > 1 else ''} (permis : jsonrpc, method, params, id)"
    return None


def _well_formed(member: Any) -> bool:
    return _malformed(member) is None


def _default_is_owner(context: Any) -> bool:
    return bool(getattr(context, "is_owner", False))


def _serialize(payload: Any) -> str:
    return dumps(payload)


class RpcDispatcher:
    """Answer JSON-RPC request bodies with the given methods.

    ``methods`` maps a name to ``async def method(context, **params)``. Methods named in
    the OpenRPC document get their params validated (defaults filled in) before they run;
    others are refused unless ``allow_undocumented`` (used by the spec tests), and then get
    only jsonrpcserver's arity check, by position or by name. Owner-only methods are those
    in ``owner_only`` plus those the document flags; ``is_owner(context)`` says whether the
    caller showed the owner token. ``check_results`` validates every documented method's
    result against the document (for tests: a mismatch is answered -32603 and logged).
    """

    def __init__(
        self,
        methods: Mapping[str, Callable[..., Any]],
        owner_only: Iterable[str] = (),
        *,
        is_owner: Callable[[Any], bool] = _default_is_owner,
        max_batch: int = 20,
        allow_undocumented: bool = False,
        check_results: bool = False,
    ) -> None:
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        documented = method_names()
        methods = dict(methods)
        if "rpc.discover" not in methods:
            methods["rpc.discover"] = _discover
        unknown = sorted(set(methods) - documented)
        if unknown and not allow_undocumented:
            raise ValueError(f"methods not described in openrpc.json: {', '.join(unknown)} (describe them there, or pass allow_undocumented=True)")
        self._owner_only = frozenset(owner_only) | owner_only_methods()
        self._is_owner = is_owner
        self._max_batch = max_batch
        self._check_results = check_results
        self._methods = {name: (self._documented(name, func) if name in documented else self._plain(name, func)) for name, func in methods.items()}
        self._documented_names = frozenset(documented) & frozenset(methods)

    @property
    def method_names(self) -> frozenset[str]:
        return frozenset(self._methods)

    # -- per-method wrappers handed to jsonrpcserver ---------------------------------

    def _documented(self, name: str, func: Callable[..., Any]) -> Callable[..., Any]:
        # (context, *args, **kwargs): any arity is accepted, the schema check below is the
        # real one and names the faulty parameter. Answers (True, result) or (False, error
        # fields): `_call_documented` makes the response.
        async def call(context: Any, *args: Any, **kwargs: Any) -> tuple[bool, Any]:
            try:
                if name in self._owner_only and not self._is_owner(context):
                    raise AuthError(OWNER_TOKEN_REQUIRED)
                params = validate_params(name, list(args) if args else kwargs)
                if params.get("audience") == "owner" and not self._is_owner(context):
                    raise AuthError(OWNER_TOKEN_REQUIRED)
                result = await _maybe_await(func(context, **params))
                if self._check_results:
                    validate_result(name, result)
            except Exception as exc:
                return False, _error_fields(name, exc)
            return True, result

        return call

    def _plain(self, name: str, func: Callable[..., Any]) -> Callable[..., Any]:
        # functools.wraps exposes func's signature, so jsonrpcserver checks the arity.
        @functools.wraps(func)
        async def call(context: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                if name in self._owner_only and not self._is_owner(context):
                    raise AuthError(OWNER_TOKEN_REQUIRED)
                result = await _maybe_await(func(context, *args, **kwargs))
            except Exception as exc:
                return _error_result(name, exc)
            from jsonrpcserver import Success

            return Success(result)

        return call

    # -- dispatch ----------------------------------------------------------------------

    async def dispatch(self, body: bytes | str, context: Any = None) -> str | None:
        """The response text for a request body, or None when nothing must be answered."""
        return (await self.dispatch_summarized(body, context))[0]

    async def dispatch_summarized(self, body: bytes | str, context: Any = None) -> tuple[str | None, tuple[str, str]]:
        """(`dispatch`'s answer, (what was called, how it ended)) for the access log, from the
        request and replies as parsed and built here: no JSON is read twice."""
        try:
            text = body.decode("utf-8") if isinstance(body, (bytes, bytearray)) else body
            # A byte-order mark before the JSON (PowerShell's and Notepad's UTF-8) is no part of
            # it: RFC 8259 lets a parser ignore it, and json.loads refused the call as a bare -32700.
            parsed = loads(text.removeprefix("\ufeff"))
        except UnicodeDecodeError as exc:  # a Windows console's cp1252, a client's latin-1: said, not a bare parse error
            return self._answered(None, _error(PARSE_ERROR, _not_utf8(exc)))
        except WireError as exc:  # JSON, but not what an answer could carry back: say what
            return self._answered(None, _error(PARSE_ERROR, str(exc)))
        except ValueError:  # not JSON
            return self._answered(None, _error(PARSE_ERROR))
        if isinstance(parsed, list):
            if not parsed:
                return self._answered(parsed, _error(INVALID_REQUEST, EMPTY_BATCH))
            if len(parsed) > self._max_batch:
                return self._answered(
                    parsed,
                    _error(
                        INVALID_REQUEST,
                        f"lot de {len(parsed)} requêtes, au-delà de la limite de {self._max_batch} par lot",
                    ),
                )
            again = _discover_again(parsed)
            answers = await asyncio.gather(*(_discovered_already(m) if i in again else self._one(m, context) for i, m in enumerate(parsed)))
            return self._answered(parsed, [a for a in answers if a is not None] or None)
        answer = await self._one(parsed, context, check=False)
        try:
            return self._answered(parsed, answer)
        except Exception:  # encoded once here, rather than once to check it and once to send it
            return self._answered(parsed, self._internal_error(parsed))

    def _answered(self, request: Any, reply: Any) -> tuple[str | None, tuple[str, str]]:
        """The reply's text, and what the access log says of the call: method names and error
        codes, never params (they hold questions), and never a method name we do not have
        (the caller chose it: it could say anything)."""
        text = None if reply is None else _serialize(reply)
        members = request if isinstance(request, list) else [request]
        names = [m["method"] if isinstance(m, dict) and isinstance(m.get("method"), str) and m["method"] in self._methods else "?" for m in members]
        what = names[0] if not isinstance(request, list) else f"batch[{len(names)}] " + ",".join(names)
        if reply is None:
            return text, (what[:200], "no answer (notification)")
        codes = [r["error"]["code"] for r in (reply if isinstance(reply, list) else [reply]) if "error" in r]
        return text, (what[:200], "ok" if not codes else "error " + ",".join(map(str, codes)))

    def _internal_error(self, member: dict[str, Any]) -> dict[str, Any] | None:
        logger.exception("l'appel JSON-RPC de %r a échoué", member.get("method"))
        if "id" not in member:
            return None
        return {"jsonrpc": "2.0", "error": {"code": INTERNAL_ERROR, "message": "Internal error"}, "id": member["id"]}

    async def _one(self, member: Any, context: Any, check: bool = True) -> dict[str, Any] | None:
        """The answer to one request; `check`: make sure it encodes as JSON (a batch's members
        are checked one by one, so that one bad result fails alone)."""
        why = _malformed(member)
        if why is not None:
            return _error(INVALID_REQUEST, why)
        try:
            if member["method"] in self._documented_names:
                response = await self._call_documented(member, context)
            else:
                from jsonrpcserver import async_dispatch_to_serializable

                dispatched = await async_dispatch_to_serializable(
                    "",  # already parsed: the deserializer hands jsonrpcserver the member
                    self._methods,
                    context=context,
                    deserializer=lambda _text: member,
                )
                response = cast(dict[str, Any] | None, dispatched)  # one member, so one response, never a list
            if response is not None and check:
                _serialize(response)  # a result JSON cannot carry must fail here, per id
        except Exception:
            return self._internal_error(member)
        if response is None:
            return None
        error = response.get("error")
        if error is not None:
            code = error["code"]
            if code in _NO_DATA:
                error.pop("data", None)
                error["message"] = _MESSAGES[code]
                if code == -32000:  # jsonrpcserver's own failure: still an internal error
                    error["code"] = INTERNAL_ERROR
        return response

    async def _call_documented(self, member: dict[str, Any], context: Any) -> dict[str, Any] | None:
        """What jsonrpcserver answers for a well-formed call of a documented method, without
        its per-call work that cannot change the answer here: `_well_formed` already refused
        what its request schema refuses, and the wrapper accepts any arity and catches every
        exception. (jsonrpcserver's schema check alone took about a third of a `search` call.)"""
        params = member.get("params", [])
        args = params if isinstance(params, list) else []
        kwargs = params if isinstance(params, dict) else {}
        ok, value = await self._methods[member["method"]](context, *args, **kwargs)
        if "id" not in member:
            return None
        if ok:
            return {"jsonrpc": "2.0", "result": value, "id": member["id"]}
        code, message, data = value
        error = {"code": code, "message": message}
        if data is not _WITHOUT_DATA:
            error["data"] = data
        return {"jsonrpc": "2.0", "error": error, "id": member["id"]}


async def _discover(context: Any) -> dict[str, Any]:
    return openrpc_document()


#: Why a batch's second `rpc.discover` is refused.
DISCOVERED_ALREADY = "rpc.discover ne reçoit qu'une réponse par lot : son premier appel dans ce lot a le document"


def _discover_again(batch: list[Any]) -> set[int]:
    """The places of a batch's `rpc.discover` calls after its first one answered (an id). The
    document is 21 KB: twenty of them in one batch were 430 KB answered for a request of 1 KB,
    to anyone, with no question spent (the rate limit counts questions)."""
    answered = [i for i, m in enumerate(batch) if _well_formed(m) and m["method"] == "rpc.discover" and "id" in m]
    return set(answered[1:])


async def _discovered_already(member: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "error": {"code": INVALID_REQUEST, "message": _MESSAGES[INVALID_REQUEST], "data": DISCOVERED_ALREADY}, "id": member["id"]}


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def _error_result(method: str, exc: Exception) -> Any:
    """Map what a method raised to a jsonrpcserver Error, logging what is unexpected."""
    from jsonrpcserver import Error
    from jsonrpcserver.sentinels import NODATA

    code, message, data = _error_fields(method, exc)
    return Error(code, message, NODATA if data is _WITHOUT_DATA else data)


def _error_fields(method: str, exc: Exception) -> tuple[int, str, Any]:
    """(code, message, data or _WITHOUT_DATA) for what a method raised, logging what is unexpected."""
    if isinstance(exc, RpcError):
        if exc.code == INTERNAL_ERROR:
            logger.error("la méthode %s a répondu par une erreur interne : %s", method, exc.message)
            return INTERNAL_ERROR, _MESSAGES[INTERNAL_ERROR], _WITHOUT_DATA
        return exc.code, exc.message, _WITHOUT_DATA if exc.data is None else exc.data
    if isinstance(exc, QueryError):  # ParamsError included
        return INVALID_PARAMS, _MESSAGES[INVALID_PARAMS], invalid_params_data(exc)
    if isinstance(exc, AuthError):
        return UNAUTHORIZED, "Unauthorized", str(exc) or OWNER_TOKEN_REQUIRED
    if isinstance(exc, VaultError):
        logger.warning("méthode %s : erreur du coffre : %s", method, exc)
        return VAULT_RELOAD_FAILED, "Vault reload failed", str(exc)
    logger.error("la méthode %s a échoué", method, exc_info=exc)
    return INTERNAL_ERROR, _MESSAGES[INTERNAL_ERROR], _WITHOUT_DATA
