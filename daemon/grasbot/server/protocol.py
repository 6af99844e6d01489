"""GrasBot's wire protocol, read from the OpenRPC document both sides are tested against.

The document lives in ``shared-protocol/openrpc.json``; ``grasbot/server/protocol/openrpc.json``
is a symlink to it so that it ships inside the package. Params and results are checked
with the document's own JSON Schemas, so the daemon cannot accept or send anything the
TypeScript client was not told about.
"""

from __future__ import annotations

import copy
import functools
import json
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._exceptions import QueryError

if TYPE_CHECKING:  # jsonschema is imported by the first validator made: 40-50 ms of a daemon's start (see prepare_validators)
    from jsonschema import Draft7Validator
    from jsonschema.exceptions import ValidationError

__all__ = [
    "OPENRPC_PATH",
    "WireError",
    "dumps",
    "loads",
    "ParamsError",
    "ResultError",
    "invalid_params_data",
    "method_names",
    "openrpc_document",
    "owner_only_methods",
    "validate_params",
    "validate_result",
]

OPENRPC_PATH = Path(__file__).resolve().parent / "protocol" / "openrpc.json"
OWNER_ONLY_FLAG = "x-grasbot-owner-only"

_TYPE_WORDS = {
    "string": "un texte",
    "integer": "un entier",
    "number": "un nombre",
    "boolean": "un booléen",
    "array": "une liste",
    "object": "un objet",
    "null": "null",
}


class ParamsError(QueryError):
    """The params of a call do not match the method's schema.

    ``param`` is the top-level parameter at fault (None when the params as a whole are
    wrong), so the HTTP layer can point at the right field too. ``said``: what a client acts
    on, beside the sentence (the document's `InvalidParamsData`: the limit a param is held to,
    the params a method takes); the error's `data` is then an object (`invalid_params_data`).
    """

    def __init__(self, message: str, param: str | None = None, *, said: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.param = param
        self.said = dict(said or {})


def invalid_params_data(exc: QueryError) -> str | dict[str, Any]:
    """-32602's `data` (and the 400's of /ask and /ask/stream) for `exc`: its sentence, or, when
    it says what a client acts on, `{"reason": sentence, …}`: the limit a param is held to
    (`param`, `max_question`, `max_history`, `max_turn`) or the params a method takes
    (`expected`). Clients read those fields, never the sentence, whose words may change."""
    said = exc.said if isinstance(exc, ParamsError) else {}
    return {"reason": str(exc), **said} if said else str(exc)


class WireError(ValueError):
    """A request's JSON that Python can parse but GrasBot must not take: the message says why."""


def _reject_constant(name: str) -> Any:
    raise WireError(f"{name} n'est pas du JSON : un nombre doit être fini")


_BEYOND_A_DOUBLE = "un nombre dépasse ce qu'un double peut représenter (environ ±1.8e308)"
_DOUBLE_DIGITS = len(str(int(sys.float_info.max)))  # 309


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):  # 1e400 parses as infinity, which JSON cannot say
        raise WireError(_BEYOND_A_DOUBLE)
    return value


def _integer(text: str) -> int:
    # Digits counted before int(): past 4,300 it raises a ValueError that says nothing of the number.
    if len(text) - text.startswith("-") > _DOUBLE_DIGITS or abs(value := int(text)) > sys.float_info.max:
        raise WireError(_BEYOND_A_DOUBLE)
    return value


def _members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    members = dict(pairs)
    if len(members) < len(pairs):  # which one was meant? json.loads keeps the last, silently
        seen: set[str] = set()
        for name, _ in pairs:
            if name in seen:
                raise WireError(f"le membre {name!r} figure deux fois dans un même objet : lequel vaut ?")
            seen.add(name)
    return members


def loads(text: str | bytes) -> Any:
    """json.loads of what a caller sent, refusing what no JSON answer could carry back: NaN,
    Infinity and numbers, integers too, that overflow a double, an object naming a member
    twice, and nesting deeper than Python's parser goes (ValueError, WireError for those: the
    last was a bare « Parse error » for JSON that is well formed)."""
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_float=_finite, parse_int=_integer, object_pairs_hook=_members)
    except RecursionError:
        raise WireError(f"le JSON est imbriqué trop profondément pour être lu (au-delà d'environ {sys.getrecursionlimit()} niveaux)") from None


def dumps(value: Any, **options: Any) -> str:
    """json.dumps for the wire, UTF-8 as is; a string that UTF-8 cannot encode (a lone
    surrogate, from a request id or a file name) is sent escaped rather than failing the
    response, so no caller's input can turn an answer into an HTTP 500."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, **options)
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = json.dumps(value, ensure_ascii=True, allow_nan=False, **options)
    return text


def lone_surrogate_in(value: Any) -> bool:
    """Whether a string in `value` (params, already checked against their schema: shallow) holds
    a lone UTF-16 surrogate, which JSON's `\\ud800` can carry but no UTF-8 text can: SQLite,
    the LLM's client and every log would fail on it."""
    if isinstance(value, str):
        if value.isascii():
            return False
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, Mapping):
        return any(lone_surrogate_in(k) or lone_surrogate_in(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(lone_surrogate_in(v) for v in value)
    return False


class ResultError(ValueError):
    """A method's result does not match the document; the message starts with its path."""


@functools.lru_cache(maxsize=1)
def _document() -> dict[str, Any]:
    try:
        text = OPENRPC_PATH.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RuntimeError(
            f"OpenRPC document missing at {OPENRPC_PATH}: it must be a symlink to shared-protocol/openrpc.json (or a copy of it in an installed package)"
        ) from None
    return json.loads(text)


def openrpc_document() -> dict[str, Any]:
    """The OpenRPC document, as a fresh copy the caller may change."""
    return copy.deepcopy(_document())


def _resolve(node: Any) -> Any:
    """Follow local ``$ref``s (``#/components/...``) until a concrete object."""
    seen = set()
    while isinstance(node, Mapping) and "$ref" in node:
        ref = node["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#/") or ref in seen:
            raise RuntimeError(f"unsupported or circular $ref {ref!r} in the OpenRPC document")
        seen.add(ref)
        node = _document()
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def _methods() -> dict[str, dict[str, Any]]:
    return {m["name"]: m for m in map(_resolve, _document()["methods"])}


def method_names() -> frozenset[str]:
    return frozenset(_methods())


def owner_only_methods() -> frozenset[str]:
    """Methods the document marks as needing the owner token."""
    return frozenset(n for n, m in _methods().items() if m.get(OWNER_ONLY_FLAG))


def _method(name: str) -> dict[str, Any]:
    try:
        return _methods()[name]
    except KeyError:
        raise LookupError(f"method {name!r} is not in the OpenRPC document") from None


def _with_components(schema: dict[str, Any]) -> dict[str, Any]:
    # The document's schemas use "#/components/..." refs: give the schema the same root.
    return {"allOf": [schema], "components": _document()["components"]}


@functools.cache
def _params_spec(name: str) -> tuple[Draft7Validator, dict[str, Any], tuple[str, ...]]:
    descriptors = [_resolve(p) for p in _method(name)["params"]]
    properties = {d["name"]: d["schema"] for d in descriptors}
    schema = {
        "type": "object",
        "properties": properties,
        "required": [d["name"] for d in descriptors if d.get("required")],
        "additionalProperties": False,
    }
    defaults = {}
    integers = []
    for pname, pschema in properties.items():
        concrete = _resolve(pschema)
        if "default" in concrete:
            defaults[pname] = concrete["default"]
        if concrete.get("type") == "integer":
            integers.append(pname)
    from jsonschema import Draft7Validator

    validator = Draft7Validator(_with_components(schema))
    return validator, defaults, tuple(integers)


def prepare_validators() -> None:
    """Make every method's params validator now, jsonschema imported with them: `grasbot serve`
    calls it once listening (`server.app._import_later`), so that its start does not wait for the
    import and a first call does not either (one that comes meanwhile waits for it:
    `server.middleware.after_imports`)."""
    for name in sorted(method_names()):
        _params_spec(name)


def _best_error(validator: Draft7Validator, instance: Any) -> ValidationError | None:
    from jsonschema.exceptions import best_match

    return best_match(validator.iter_errors(instance))


_SIMPLE_KEYWORDS = frozenset({"type", "minLength", "maxLength", "pattern", "minimum", "maximum", "enum", "default", "title", "description", "examples"})


def _simple_check(schema: Any) -> Callable[[Any], bool] | None:
    """A predicate that accepts a value only if `schema` does, for a schema made of the simple
    keywords above (None otherwise). jsonschema finds the same answer ~30 times slower, and
    explains a refusal: validate_params asks it whenever this says no."""
    schema = _resolve(schema)
    if not isinstance(schema, Mapping) or not set(schema) <= _SIMPLE_KEYWORDS:
        return None
    kind = schema.get("type")
    low, high = schema.get("minimum"), schema.get("maximum")
    enum = schema.get("enum")
    if kind == "string":
        if enum is not None and not all(isinstance(e, str) for e in enum):
            return None
        shortest, longest = schema.get("minLength", 0), schema.get("maxLength")
        pattern = re.compile(schema["pattern"]) if "pattern" in schema else None

        def check(v: Any) -> bool:
            return (
                isinstance(v, str)
                and len(v) >= shortest
                and (longest is None or len(v) <= longest)
                and (pattern is None or pattern.search(v) is not None)
                and (enum is None or v in enum)
            )

        return check
    if kind in ("integer", "number") and enum is None and not {"minLength", "maxLength", "pattern"} & set(schema):

        def check(v: Any) -> bool:
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                return False
            if kind == "integer" and isinstance(v, float) and not v.is_integer():
                return False
            return (low is None or v >= low) and (high is None or v <= high)

        return check
    return None


def _simple_params_check(properties: Mapping[str, Any], required: Iterable[str]) -> Callable[[Mapping], bool] | None:
    checks = {name: _simple_check(schema) for name, schema in properties.items()}
    if any(c is None for c in checks.values()):
        return None
    required = tuple(required)

    def check(params: Mapping) -> bool:
        return all(name in params for name in required) and all((c := checks.get(name)) is not None and c(value) for name, value in params.items())

    return check


@functools.cache
def _quick_params_check(name: str) -> Callable[[Mapping], bool] | None:
    descriptors = [_resolve(p) for p in _method(name)["params"]]
    return _simple_params_check({d["name"]: d["schema"] for d in descriptors}, [d["name"] for d in descriptors if d.get("required")])


@functools.cache
def _result_validator(name: str) -> Draft7Validator:
    from jsonschema import Draft7Validator

    result = _resolve(_method(name)["result"])
    return Draft7Validator(_with_components(result["schema"]))


def _path(parts: Iterable[Any]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _show(value: Any, limit: int = 40) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _describe(error: ValidationError, top_level_noun: str = "paramètre", *, ours: bool = False) -> str:
    """One sentence that names what is wrong and why. It never quotes a string the caller sent:
    an error message is no place to reflect a visitor's text back (numbers are fine). `ours`:
    the value is the daemon's own result, checked in tests, where naming everything helps."""
    where = _path(error.absolute_path)
    kind, expected, value = error.validator, error.validator_value, error.instance
    prefix = f"`{where}` : " if where else ""
    if kind == "required":
        missing = next(p for p in expected if p not in value)
        return f"`{_path([*error.absolute_path, missing])}` : obligatoire, mais absent"
    if kind == "additionalProperties":
        known = error.schema.get("properties", {})
        extra = [k for k in value if k not in known]
        noun = top_level_noun if not where else "champ"
        plural = "s" if len(extra) > 1 else ""
        allowed = ", ".join(sorted(known)) or "aucun"
        if ours:
            return f"{prefix}{noun}{plural} inconnu{plural} : " + ", ".join(repr(k) for k in sorted(extra))
        return f"{prefix}{len(extra)} {noun}{plural} inconnu{plural} (attendus : {allowed})"
    if kind == "type":
        types = [expected] if isinstance(expected, str) else list(expected)
        return prefix + "doit être " + " ou ".join(_TYPE_WORDS.get(t, t) for t in types)
    if kind == "minimum":
        return f"{prefix}{_show(value)} est inférieur au minimum ({expected})"
    if kind == "maximum":
        return f"{prefix}{_show(value)} est supérieur au maximum ({expected})"
    if kind == "minLength":
        if expected == 1:
            return prefix + "ne doit pas être vide"
        return f"{prefix}doit compter au moins {expected} caractères (longueur reçue : {len(value)})"
    if kind == "maxLength":
        return f"{prefix}doit compter au plus {expected} caractères (longueur reçue : {len(value)})"
    if kind == "pattern" and expected == "\\S":
        return prefix + "ne doit pas être fait que d'espaces"
    if kind == "enum":
        allowed = ", ".join(_show(v) for v in expected)
        return f"{prefix}doit être l'une des valeurs {allowed}" + (f" (reçu : {_show(value)})" if ours else "")
    if kind == "maxItems":
        return f"{prefix}doit compter au plus {expected} éléments (nombre reçu : {len(value)})"
    if kind == "minItems":
        return f"{prefix}doit compter au moins {expected} éléments (nombre reçu : {len(value)})"
    message = error.message if len(error.message) <= 200 else error.message[:199] + "…"
    return prefix + "refusé par le schéma : " + message


#: The protocol's limits a client holds to, by the schema keyword and the path (a `*` for any
#: index) that says them: the names of the daemon's settings that may lower them (`check_limits`).
_LIMITS = {
    ("maxLength", ("q",)): "max_question",
    ("maxItems", ("history",)): "max_history",
    ("maxLength", ("history", "*", "content")): "max_turn",
}


def _said(error: ValidationError) -> dict[str, Any]:
    """What a client acts on in a refusal (`ParamsError.said`): the limit it names, or the
    params a method takes when it names unknown ones; {} for any other."""
    if error.validator == "additionalProperties" and not error.absolute_path:
        return {"expected": sorted(error.schema.get("properties", {}))}
    path = tuple("*" if isinstance(part, int) else part for part in error.absolute_path)
    limit = _LIMITS.get((str(error.validator), path))
    return {"param": path[0], limit: error.validator_value} if limit else {}


def validate_params(method: str, params: Any) -> dict[str, Any]:
    """Check a call's params against the document; return them with defaults filled in.

    ``params`` is what the request carried: an object, an array (refused unless empty:
    every GrasBot method takes its params by name) or None when absent.
    """
    validator, defaults, integers = _params_spec(method)
    if params is None or params == []:
        params = {}
    if isinstance(params, list):
        raise ParamsError(f"`params` doit être un objet de paramètres nommés, pas une liste (`{method}` prend ses paramètres par leur nom)")
    if not isinstance(params, Mapping):
        raise ParamsError("`params` doit être un objet de paramètres nommés")
    quick = _quick_params_check(method)
    error = None if quick is not None and quick(params) else _best_error(validator, dict(params))
    if error is not None:
        top = error.absolute_path[0] if error.absolute_path else None
        if top is None and error.validator == "required":
            top = next(p for p in error.validator_value if p not in params)
        elif top is None and error.validator == "additionalProperties":
            top = sorted(p for p in params if p not in error.schema.get("properties", {}))[0]
        raise ParamsError(_describe(error), param=top if isinstance(top, str) else None, said=_said(error))
    for name, value in params.items():
        if lone_surrogate_in(value):
            raise ParamsError(
                f"`{name}` : doit être du texte Unicode (il contient une moitié de paire de substitution UTF-16 seule, comme \\ud800)", param=name
            )
    out = dict(params)
    for name in integers:
        # JSON Schema counts 5.0 as an integer; Python code downstream wants an int.
        if isinstance(out.get(name), float):
            out[name] = int(out[name])
    for name, default in defaults.items():
        out.setdefault(name, copy.deepcopy(default))
    return out


def validate_result(method: str, result: Any) -> None:
    """Raise ResultError, naming the path at fault, if a result breaks the document."""
    error = _best_error(_result_validator(method), result)
    if error is not None:
        # Paths below the root lead the message: "search result: results[0].score: ...".
        raise ResultError(f"résultat de {method} : {_describe(error, 'champ', ours=True)}")
