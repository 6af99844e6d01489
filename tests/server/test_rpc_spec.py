"""RpcDispatcher against the JSON-RPC 2.0 specification's examples and our own examples."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from types import SimpleNamespace

import pytest

from grasbot._exceptions import AuthError, LLMUnavailable, QueryError, VaultError
from grasbot.server.protocol import method_names
from grasbot.server.rpc import RpcDispatcher, RpcError
from support.examples import EXAMPLES, load_example

OWNER = SimpleNamespace(is_owner=True)
VISITOR = SimpleNamespace(is_owner=False)


# -- section 7 of the specification -------------------------------------------------------

notified: list[tuple[str, tuple]] = []


async def subtract(context, minuend, subtrahend):
    return minuend - subtrahend


async def sum_(context, *numbers):
    return sum(numbers)


async def update(context, *args):
    notified.append(("update", args))


async def notify_hello(context, *args):
    notified.append(("notify_hello", args))


async def notify_sum(context, *args):
    notified.append(("notify_sum", args))


async def get_data(context):
    return ["hello", 5]


@pytest.fixture
def spec_rpc() -> RpcDispatcher:
    notified.clear()
    return RpcDispatcher(
        {
            "subtract": subtract,
            "sum": sum_,
            "update": update,
            "notify_hello": notify_hello,
            "notify_sum": notify_sum,
            "get_data": get_data,
        },
        allow_undocumented=True,
    )


def E(code, message, id=None, data=None):  # noqa: N802 - reads like the spec's responses
    error = {"code": code, "message": message, **({} if data is None else {"data": data})}
    return {"jsonrpc": "2.0", "error": error, "id": id}


NOT_AN_OBJECT = "la requête doit être un objet JSON, pas un nombre"  # -32600's `data`, which the spec allows


SPEC_EXAMPLES = [
    # rpc call with positional parameters
    ('{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}', {"jsonrpc": "2.0", "result": 19, "id": 1}),
    ('{"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2}', {"jsonrpc": "2.0", "result": -19, "id": 2}),
    # rpc call with named parameters
    ('{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}', {"jsonrpc": "2.0", "result": 19, "id": 3}),
    ('{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": 4}', {"jsonrpc": "2.0", "result": 19, "id": 4}),
    # notifications
    ('{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}', None),
    ('{"jsonrpc": "2.0", "method": "foobar"}', None),
    # non-existent method
    ('{"jsonrpc": "2.0", "method": "foobar", "id": "1"}', E(-32601, "Method not found", "1")),
    # invalid JSON
    ('{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]', E(-32700, "Parse error")),
    # invalid Request object
    ('{"jsonrpc": "2.0", "method": 1, "params": "bar"}', E(-32600, "Invalid Request", data="`method` doit être un texte")),
    # batch, invalid JSON
    ('[\n  {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},\n  {"jsonrpc": "2.0", "method"\n]', E(-32700, "Parse error")),
    # empty array
    ("[]", E(-32600, "Invalid Request", data="lot vide : un lot contient au moins une requête")),
    # invalid batch (but not empty)
    ("[1]", [E(-32600, "Invalid Request", data=NOT_AN_OBJECT)]),
    # invalid batch
    ("[1,2,3]", [E(-32600, "Invalid Request", data=NOT_AN_OBJECT)] * 3),
    # batch
    (
        """[
        {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
        {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
        {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},
        {"foo": "boo"},
        {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
        {"jsonrpc": "2.0", "method": "get_data", "id": "9"}
    ]""",
        [
            {"jsonrpc": "2.0", "result": 7, "id": "1"},
            {"jsonrpc": "2.0", "result": 19, "id": "2"},
            E(-32600, "Invalid Request", data='`jsonrpc` manque : il doit valoir "2.0"'),
            E(-32601, "Method not found", "5"),
            {"jsonrpc": "2.0", "result": ["hello", 5], "id": "9"},
        ],
    ),
    # batch, all notifications
    (
        """[
        {"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},
        {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}
    ]""",
        None,
    ),
]


@pytest.mark.parametrize(("request_text", "expected"), SPEC_EXAMPLES)
async def test_specification_examples(spec_rpc: RpcDispatcher, request_text: str, expected) -> None:
    answer = await spec_rpc.dispatch(request_text.encode(), None)
    assert (None if answer is None else json.loads(answer)) == expected


async def test_notifications_run_but_get_no_answer(spec_rpc: RpcDispatcher) -> None:
    assert await spec_rpc.dispatch(b'{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}') is None
    batch = b'[{"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]}, {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}]'
    assert await spec_rpc.dispatch(batch) is None
    assert sorted(notified) == [("notify_hello", (7,)), ("notify_sum", (1, 2, 4)), ("update", (1, 2, 3, 4, 5))]


async def test_arity_errors_are_invalid_params(spec_rpc: RpcDispatcher) -> None:
    answer = json.loads(await spec_rpc.dispatch(b'{"jsonrpc": "2.0", "method": "subtract", "params": [42], "id": 7}'))
    assert answer["error"]["code"] == -32602 and answer["error"]["message"] == "Invalid params"
    assert "subtrahend" in answer["error"]["data"]
    answer = json.loads(await spec_rpc.dispatch(b'{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 1, "x": 2}, "id": 8}'))
    assert answer["error"]["code"] == -32602 and answer["id"] == 8


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b'"just a string"', "la requête doit être un objet JSON, pas un texte"),
        (b"42", "la requête doit être un objet JSON, pas un nombre"),
        (b"null", "la requête doit être un objet JSON, pas null"),
        (b'[[{"jsonrpc": "2.0", "method": "sum", "id": 1}]]', "la requête doit être un objet JSON, pas un tableau"),
        (b'{"method": "sum", "id": 1}', '`jsonrpc` manque : il doit valoir "2.0"'),
        (b'{"jsonrpc": "1.0", "method": "sum", "id": 1}', '`jsonrpc` doit valoir "2.0"'),
        (b'{"jsonrpc": 2.0, "method": "sum", "id": 1}', '`jsonrpc` doit valoir "2.0"'),
        (b'{"jsonrpc": "2.0", "id": 1}', "`method` manque : le nom de la méthode appelée"),
        (b'{"jsonrpc": "2.0", "method": 1, "params": "bar"}', "`method` doit être un texte"),
        (b'{"jsonrpc": "2.0", "method": "sum", "params": 3, "id": 1}', "`params` doit être un objet (les paramètres par nom) ou un tableau"),
        (b'{"jsonrpc": "2.0", "method": "sum", "id": true}', "`id` doit être un texte, un nombre ou null"),
        (b'{"jsonrpc": "2.0", "method": "sum", "id": {"a": 1}}', "`id` doit être un texte, un nombre ou null"),
        (b'{"jsonrpc": "2.0", "method": "sum", "id": 1, "extra": 1}', "1 membre inconnu (permis : jsonrpc, method, params, id)"),
        (b'{"jsonrpc": "2.0", "method": "sum", "id": 1, "extra": 1, "x": 2}', "2 membres inconnus (permis : jsonrpc, method, params, id)"),
        (b"[]", "lot vide : un lot contient au moins une requête"),
    ],
)
async def test_an_invalid_request_says_in_french_what_is_wrong(spec_rpc: RpcDispatcher, body: bytes, why: str) -> None:
    """-32600 said nothing of why, where every other refusal of the daemon says it in `data`, in
    French: a client writer had to guess which of the spec's rules the request broke. It never
    quotes what the caller sent (an unknown member is counted, not named)."""
    answer = json.loads(await spec_rpc.dispatch(body))
    error = answer[0]["error"] if isinstance(answer, list) else answer["error"]
    assert error == {"code": -32600, "message": "Invalid Request", "data": why}


@pytest.mark.parametrize(
    "body",
    [b"", b"  ", b"[1,"],
)
async def test_unparsable_bodies_are_parse_errors(spec_rpc: RpcDispatcher, body: bytes) -> None:
    assert json.loads(await spec_rpc.dispatch(body)) == E(-32700, "Parse error")


@pytest.mark.parametrize("body", [b"[" * 30_000 + b"]" * 30_000, b"[" * 100_000])
async def test_json_nested_too_deep_is_a_parse_error_that_says_so(spec_rpc: RpcDispatcher, body: bytes) -> None:
    """30,000 levels of well-formed JSON (well under the body's 64 KiB) were a bare « Parse
    error », the same as broken JSON: the caller had no way to tell what to change."""
    answer = json.loads(await spec_rpc.dispatch(body))
    assert answer["id"] is None and answer["error"]["code"] == -32700
    assert answer["error"]["data"].startswith("le JSON est imbriqué trop profondément pour être lu (au-delà d'environ ")


@pytest.mark.parametrize(
    ("body", "byte", "offset"),
    [
        ('{"jsonrpc": "2.0", "method": "sum", "params": ["café"], "id": 1}'.encode("latin-1"), "E9", 51),  # a Windows console's curl
        ('{"jsonrpc": "2.0", "method": "sum", "id": 1}'.encode("utf-16"), "FF", 0),
    ],
)
async def test_a_body_not_utf8_is_a_parse_error_that_says_so(spec_rpc: RpcDispatcher, body: bytes, byte: str, offset: int) -> None:
    """It was a bare « Parse error », the same as broken JSON: a client sending Latin-1 had no
    way to tell, though /ask names the same fault in its query string."""
    answer = json.loads(await spec_rpc.dispatch(body))
    why = (
        f"le corps n'est pas de l'UTF-8 (octet 0x{byte} à la position {offset}) : JSON-RPC se lit en UTF-8, quel que soit le charset qu'annonce le Content-Type"
    )
    assert answer == {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error", "data": why}, "id": None}


async def test_a_byte_order_mark_before_the_body_is_read_past(spec_rpc: RpcDispatcher) -> None:
    """PowerShell 5's and Notepad's UTF-8 starts with EF BB BF: RFC 8259 lets a parser ignore it,
    and the call was a bare « Parse error », the same as broken JSON, with nothing to say why."""
    call = '{"jsonrpc": "2.0", "method": "sum", "params": [1, 2], "id": 1}'
    for body in (b"\xef\xbb\xbf" + call.encode(), "\ufeff" + call):
        assert json.loads(await spec_rpc.dispatch(body)) == {"jsonrpc": "2.0", "result": 3, "id": 1}
    # one mark, at the start: anywhere else it is a character JSON does not allow there
    assert json.loads(await spec_rpc.dispatch(b"\xef\xbb\xbf\xef\xbb\xbf" + call.encode())) == E(-32700, "Parse error")


async def test_nan_is_a_parse_error_that_says_why(spec_rpc: RpcDispatcher) -> None:
    answer = json.loads(await spec_rpc.dispatch(b'{"jsonrpc": "2.0", "method": "sum", "params": [NaN], "id": 1}'))
    assert answer["id"] is None and answer["error"] == {"code": -32700, "message": "Parse error", "data": "NaN n'est pas du JSON : un nombre doit être fini"}


async def test_null_id_is_a_call_not_a_notification(spec_rpc: RpcDispatcher) -> None:
    answer = await spec_rpc.dispatch(b'{"jsonrpc": "2.0", "method": "sum", "params": [1, 2], "id": null}')
    assert json.loads(answer) == {"jsonrpc": "2.0", "result": 3, "id": None}


async def test_text_bodies_and_utf8_answers(spec_rpc: RpcDispatcher) -> None:
    rpc = RpcDispatcher({"echo": lambda context, text: text}, allow_undocumented=True)
    answer = await rpc.dispatch('{"jsonrpc": "2.0", "method": "echo", "params": ["éléphant"], "id": 1}')
    assert "éléphant" in answer and json.loads(answer)["result"] == "éléphant"


# -- errors raised by methods -------------------------------------------------------------


async def test_internal_errors_leak_nothing(caplog: pytest.LogCaptureFixture) -> None:
    async def broken(context):
        raise RuntimeError("secret path /home/fernand/vault/private.md")

    async def unserializable(context):
        return {"when": object()}

    async def llm_down(context):
        raise LLMUnavailable("Ollama at http://127.0.0.1:11434 refused")

    rpc = RpcDispatcher({"broken": broken, "unserializable": unserializable, "llm_down": llm_down}, allow_undocumented=True)
    with caplog.at_level(logging.ERROR, logger="grasbot.rpc"):
        for number, name in enumerate(["broken", "unserializable", "llm_down"]):
            body = json.dumps({"jsonrpc": "2.0", "method": name, "id": number}).encode()
            answer = await rpc.dispatch(body)
            assert json.loads(answer) == E(-32603, "Internal error", number)
            assert "secret" not in answer and "Traceback" not in answer and "11434" not in answer
        # a notification that fails is logged too, and still not answered
        assert await rpc.dispatch(b'{"jsonrpc": "2.0", "method": "broken"}') is None
    assert sum("secret path" in r.getMessage() or (r.exc_info and "secret path" in str(r.exc_info[1])) for r in caplog.records) == 2


async def test_grasbot_errors_map_to_codes() -> None:
    async def query_error(context):
        raise QueryError("q: la question est vide")

    async def auth_error(context):
        raise AuthError("jeton du propriétaire requis")

    async def vault_error(context):
        raise VaultError("le dossier du vault est illisible")

    async def not_found(context):
        raise RpcError(-32003, "Note not found", "no note with slug 'x'")

    async def limited(context):
        raise RpcError(-32002, "Rate limited")

    rpc = RpcDispatcher(
        {"query_error": query_error, "auth_error": auth_error, "vault_error": vault_error, "not_found": not_found, "limited": limited},
        allow_undocumented=True,
    )
    expected = {
        "query_error": {"code": -32602, "message": "Invalid params", "data": "q: la question est vide"},
        "auth_error": {"code": -32001, "message": "Unauthorized", "data": "jeton du propriétaire requis"},
        "vault_error": {"code": -32004, "message": "Vault reload failed", "data": "le dossier du vault est illisible"},
        "not_found": {"code": -32003, "message": "Note not found", "data": "no note with slug 'x'"},
        "limited": {"code": -32002, "message": "Rate limited"},
    }
    for name, error in expected.items():
        answer = await rpc.dispatch(json.dumps({"jsonrpc": "2.0", "method": name, "id": name}))
        assert json.loads(answer) == {"jsonrpc": "2.0", "error": error, "id": name}


# -- batches ------------------------------------------------------------------------------


async def test_batch_limit(spec_rpc: RpcDispatcher) -> None:
    def batch(n):
        return json.dumps([{"jsonrpc": "2.0", "method": "sum", "params": [i, 1], "id": i} for i in range(n)])

    answers = json.loads(await spec_rpc.dispatch(batch(20)))
    assert [a["result"] for a in answers] == [i + 1 for i in range(20)]
    refused = json.loads(await spec_rpc.dispatch(batch(21)))
    assert refused == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Invalid Request", "data": "lot de 21 requêtes, au-delà de la limite de 20 par lot"},
    }
    small = RpcDispatcher({"sum": sum_}, allow_undocumented=True, max_batch=2)
    assert json.loads(await small.dispatch(batch(3)))["error"]["data"] == ("lot de 3 requêtes, au-delà de la limite de 2 par lot")
    assert len(json.loads(await small.dispatch(batch(2)))) == 2
    with pytest.raises(ValueError):
        RpcDispatcher({}, max_batch=0)


# -- GrasBot's own methods ----------------------------------------------------------------


def test_undocumented_methods_are_refused_by_default() -> None:
    with pytest.raises(ValueError, match="subtract"):
        RpcDispatcher({"subtract": subtract})


async def test_documented_methods_get_validated_params_with_defaults() -> None:
    seen = {}

    async def search(context, **params):
        seen.update(params)
        return {"results": [], "grounded": False, "vault_size": 0, "took_ms": 0.1}

    rpc = RpcDispatcher({"search": search}, check_results=True)
    answer = json.loads(await rpc.dispatch(b'{"jsonrpc": "2.0", "method": "search", "params": {"q": "cv"}, "id": 1}', VISITOR))
    assert answer["result"]["grounded"] is False
    assert seen == {"q": "cv", "audience": "visitor"}  # top_k absent: the daemon applies SEARCH_TOP_K
    answer = json.loads(await rpc.dispatch(b'{"jsonrpc": "2.0", "method": "search", "params": ["cv"], "id": 2}', VISITOR))
    assert answer["error"]["code"] == -32602 and "par leur nom" in answer["error"]["data"]


async def test_owner_only_and_owner_audience_need_the_token() -> None:
    calls = []

    async def reload(context):
        calls.append("reload")
        return {"vault_size": 0, "added": 0, "changed": 0, "removed": 0, "errors": [], "took_ms": 1}

    async def search(context, q, audience, top_k=None):
        calls.append(audience)
        return {"results": [], "grounded": False, "vault_size": 0, "took_ms": 0.1}

    rpc = RpcDispatcher({"reload": reload, "search": search})
    unauthorized = {"code": -32001, "message": "Unauthorized", "data": "jeton du propriétaire requis"}
    for body in (
        b'{"jsonrpc": "2.0", "method": "reload", "id": 1}',
        b'{"jsonrpc": "2.0", "method": "search", "params": {"q": "a", "audience": "owner"}, "id": 1}',
    ):
        assert json.loads(await rpc.dispatch(body, VISITOR))["error"] == unauthorized
        assert json.loads(await rpc.dispatch(body, None))["error"] == unauthorized
        assert "result" in json.loads(await rpc.dispatch(body, OWNER))
    assert calls == ["reload", "owner"]
    custom = RpcDispatcher({"search": search}, owner_only={"search"}, is_owner=lambda ctx: ctx == "token")
    body = b'{"jsonrpc": "2.0", "method": "search", "params": {"q": "a"}, "id": 1}'
    assert json.loads(await custom.dispatch(body, OWNER))["error"]["code"] == -32001
    assert "result" in json.loads(await custom.dispatch(body, "token"))


async def test_results_that_break_the_document_are_internal_errors_when_checked(caplog) -> None:
    async def health(context):
        return {"status": "ok"}

    body = b'{"jsonrpc": "2.0", "method": "health", "id": 1}'
    assert "result" in json.loads(await RpcDispatcher({"health": health}).dispatch(body))
    with caplog.at_level(logging.ERROR, logger="grasbot.rpc"):
        answer = await RpcDispatcher({"health": health}, check_results=True).dispatch(body)
    assert json.loads(answer) == E(-32603, "Internal error", 1)
    assert any("`vault_size` : obligatoire, mais absent" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)


async def test_discover_returns_the_document() -> None:
    from grasbot.server.protocol import openrpc_document

    answer = await RpcDispatcher({}).dispatch(b'{"jsonrpc": "2.0", "method": "rpc.discover", "id": 1}')
    assert json.loads(answer)["result"] == openrpc_document()


# -- replaying shared-protocol/examples ---------------------------------------------------

# Errors a method raises itself; every other error in the examples must come from the
# dispatcher, so a stub reached for them is a failure.
RAISED_BY_METHODS = {-32002, -32003, -32004}


def _stubs(example: dict) -> dict:
    request, response = example["request"], example["response"]
    requests = request if isinstance(request, list) else [request]
    responses = response if isinstance(response, list) else ([] if response is None else [response])
    by_id = {r["id"]: r for r in responses}
    answers: dict[str, dict] = {}
    for member in requests:
        if isinstance(member, dict) and member.get("id", object()) in by_id:
            answers[member["method"]] = by_id[member["id"]]

    def stub(name):
        async def method(context, **params):
            expected = answers.get(name)
            if expected is None:
                return {"stub": "result for a notification"}
            if "result" in expected:
                return expected["result"]
            error = expected["error"]
            assert error["code"] in RAISED_BY_METHODS, f"{name} reached although {error} was expected"
            raise RpcError(error["code"], error["message"], error.get("data"))

        return method

    return {name: stub(name) for name in method_names() - {"rpc.discover"}}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
async def test_dispatcher_answers_each_example_exactly(path: Path) -> None:
    example = load_example(path)
    request = example["request"]
    body = request if isinstance(request, str) else json.dumps(request, ensure_ascii=False)
    owner = "-32001" not in json.dumps(example["response"])
    rpc = RpcDispatcher(_stubs(example), check_results=True)
    answer = await rpc.dispatch(body.encode("utf-8"), OWNER if owner else VISITOR)
    assert (None if answer is None else json.loads(answer)) == example["response"]


# -- what the access log is told ------------------------------------------------------------


async def test_dispatch_summarized_names_methods_and_error_codes_never_params(spec_rpc):
    """The access log gets the method names (one we do not have is "?": the caller chose it)
    and the error codes, from the request and replies as the dispatcher parsed and built them;
    the text is what `dispatch` answers."""
    cases = [
        (b'{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}', ("subtract", "ok")),
        (b'{"jsonrpc": "2.0", "method": "subtract", "params": ["secret question"], "id": 2}', ("subtract", "error -32602")),
        (b'{"jsonrpc": "2.0", "method": "update", "params": [1]}', ("update", "no answer (notification)")),
        (b'{"jsonrpc": "2.0", "method": "<script>", "id": 3}', ("?", "error -32601")),
        (b'{"jsonrpc": "2.0", "method": "subtract", "params": [1, 2], "id": 4', ("?", "error -32700")),
        (b"[]", ("batch[0] ", "error -32600")),
        (
            b'[{"jsonrpc": "2.0", "method": "sum", "params": [1, 2], "id": 5}, {"jsonrpc": "2.0", "method": "nope", "id": 6},'
            b' {"jsonrpc": "2.0", "method": "update", "params": [7]}, {"foo": "boo"}]',
            ("batch[4] sum,?,update,?", "error -32601,-32600"),
        ),
        (b'[{"jsonrpc": "2.0", "method": "update", "params": [1]}]', ("batch[1] update", "no answer (notification)")),
    ]
    for body, summary in cases:
        text, got = await spec_rpc.dispatch_summarized(body)
        assert got == summary, body
        assert text == await spec_rpc.dispatch(body), body
        assert "secret" not in " ".join(got)


#: A fresh process: the daemon imported and its app built, calls answered before and after `_import_later`.
_LISTENING = """
import asyncio, json, sys
import grasbot._cli
from grasbot import Settings, create_app
from grasbot.server import app, protocol, rpc

create_app(Settings.load(env={}, question_log="off"), owner_token="t" * 32)
loaded = lambda: sorted(m for m in ("jsonschema", "jsonrpcserver") if m in sys.modules)
assert loaded() == [], loaded()

async def search(context, q, top_k=5, audience="visitor"):
    return {"results": []}

calls = [
    {"jsonrpc": "2.0", "method": "search", "params": {"q": 5}, "id": 1},
    {"jsonrpc": "2.0", "method": "nope", "id": 2},
    {"jsonrpc": "2.0", "method": "search", "params": {"q": "x", "extra": 1}, "id": 3},
]
answer = lambda: [asyncio.run(rpc.RpcDispatcher({"search": search}).dispatch(json.dumps(c))) for c in calls]
before = answer()
protocol._params_spec.cache_clear()
app._import_later()
assert loaded() == ["jsonrpcserver", "jsonschema"], loaded()
assert protocol._params_spec.cache_info().currsize == len(protocol.method_names())
assert answer() == before
print(json.dumps(before))
"""


def test_jsonschema_and_jsonrpcserver_are_imported_once_the_daemon_listens():
    """Their import (jsonrpcserver checks its request schema with jsonschema as it is imported)
    took 50-60 ms of a daemon's start: importing the daemon and building its app import neither;
    `_import_later`, run once listening, imports them and makes every method's params validator.
    A call that comes before (an app `serve` does not run) gets the same answer: it imports what
    it needs itself."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _LISTENING], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    before = json.loads(done.stdout)
    assert [json.loads(text)["error"]["code"] for text in before] == [-32602, -32601, -32602]
