"""The OpenRPC document, its examples and the params/result checks built on it."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from jsonschema import Draft7Validator
from referencing import Registry
from referencing.jsonschema import DRAFT7

from grasbot._exceptions import QueryError
from grasbot.server import rpc as _rpc
from grasbot.server.protocol import (
    OPENRPC_PATH,
    ParamsError,
    ResultError,
    invalid_params_data,
    method_names,
    openrpc_document,
    owner_only_methods,
    validate_params,
    validate_result,
)
from support.bots import REPO
from support.examples import EXAMPLES, SHARED, load_example

PROTOCOL_LEVEL = {-32700, -32600, -32601}

# The meta-schema packages, pinned as devDependencies in the root package.json.
META_PACKAGES = ("@open-rpc/meta-schema", "@json-schema-tools/meta-schema")


def _load_meta_schemas() -> tuple[dict, dict]:
    node = shutil.which("node")
    script = "process.stdout.write(JSON.stringify([require('@open-rpc/meta-schema').openrpcDocument,require('@json-schema-tools/meta-schema').jsonSchema]))"
    if node is None:
        pytest.fail("node is needed to read the OpenRPC meta-schema from node_modules")
    proc = subprocess.run([node, "-e", script], cwd=REPO, capture_output=True, text=True, env=os.environ.copy())
    if proc.returncode != 0:
        pytest.fail(
            "cannot load the OpenRPC meta-schema: run `npm ci` at the repository root "
            f"(devDependencies {', '.join(META_PACKAGES)}).\n{proc.stderr.strip()[:500]}"
        )
    openrpc_meta, json_schema_meta = json.loads(proc.stdout)
    return openrpc_meta, json_schema_meta


@pytest.fixture(scope="module")
def meta_validator() -> Draft7Validator:
    openrpc_meta, json_schema_meta = _load_meta_schemas()
    # The OpenRPC meta-schema refers to the JSON Schema meta-schema by URL: serve it locally.
    resource = DRAFT7.create_resource(json_schema_meta)
    registry = Registry().with_resources([("https://meta.json-schema.tools", resource), ("https://meta.json-schema.tools/", resource)])
    return Draft7Validator(openrpc_meta, registry=registry)


def _doc_errors(validator: Draft7Validator, doc: dict) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message[:200]}" for e in validator.iter_errors(doc)]


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


# -- the document -------------------------------------------------------------------------


def test_packaged_path_is_the_shared_document() -> None:
    assert OPENRPC_PATH.exists(), f"{OPENRPC_PATH} missing: it must link to shared-protocol"
    assert os.path.samefile(OPENRPC_PATH, SHARED / "openrpc.json")
    assert openrpc_document() == _load(SHARED / "openrpc.json")


def test_document_is_valid_openrpc(meta_validator: Draft7Validator) -> None:
    assert _doc_errors(meta_validator, openrpc_document()) == []


def test_meta_schema_check_catches_a_broken_document(meta_validator: Draft7Validator) -> None:
    doc = openrpc_document()
    del doc["methods"][0]["params"]  # params are required by OpenRPC
    doc["methods"][1]["result"] = {"name": "r"}  # a content descriptor needs a schema
    assert len(_doc_errors(meta_validator, doc)) >= 2


def test_methods_and_errors_are_the_agreed_ones() -> None:
    doc = openrpc_document()
    assert method_names() == {"search", "answer", "reload", "health", "suggest_aliases", "rpc.discover"}
    assert owner_only_methods() == {"reload", "suggest_aliases"}
    codes = {e["code"]: e["message"] for e in doc["components"]["errors"].values()}
    assert codes == {
        -32700: "Parse error",
        -32600: "Invalid Request",
        -32601: "Method not found",
        -32602: "Invalid params",
        -32603: "Internal error",
        -32001: "Unauthorized",
        -32002: "Rate limited",
        -32003: "Note not found",
        -32004: "Vault reload failed",
    }
    assert (_rpc.UNAUTHORIZED, _rpc.RATE_LIMITED, _rpc.NOTE_NOT_FOUND, _rpc.VAULT_RELOAD_FAILED) == (-32001, -32002, -32003, -32004)


def _refs(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def test_every_ref_resolves_and_methods_use_components() -> None:
    doc = openrpc_document()
    for ref in _refs(doc):
        assert ref.startswith("#/components/"), ref
        node = doc
        for part in ref[2:].split("/"):
            assert part in node, f"unresolved $ref {ref}"
            node = node[part]
    referenced = set()
    for method in doc["methods"]:
        assert method["paramStructure"] == "by-name", method["name"]
        assert "schema" in method["result"], method["name"]
        assert method["errors"], method["name"]
        for error in method["errors"]:
            assert set(error) == {"$ref"} and error["$ref"].startswith("#/components/errors/")
            referenced.add(error["$ref"].rsplit("/", 1)[1])
    for name, error in doc["components"]["errors"].items():
        assert name in referenced or error["code"] in PROTOCOL_LEVEL, f"unused error {name}"


# -- the examples -------------------------------------------------------------------------

REQUIRED_EXAMPLES = {
    "search",
    "answer",
    "reload",
    "health",
    "suggest_aliases",
    "rpc-discover",
    "error-method-not-found",
    "error-wrong-param-type",
    "error-missing-q",
    "error-q-too-long",
    "error-parse",
    "error-invalid-request",
    "batch",
    "batch-empty",
    "notification",
    "error-unauthorized",
}


def _pairs(example: dict):
    """(request member, its response) for every member that is answered."""
    request, response = example["request"], example["response"]
    requests = request if isinstance(request, list) else [request]
    responses = response if isinstance(response, list) else ([] if response is None else [response])
    by_id = {}
    for member in requests:
        if isinstance(member, dict) and "id" in member:
            assert member["id"] not in by_id, "ids must be unique inside an example"
            by_id[member["id"]] = member
    for resp in responses:
        yield by_id.get(resp["id"]), resp


def _error_codes(doc: dict, method: str) -> set[int]:
    m = next(m for m in doc["methods"] if m["name"] == method)
    return {doc["components"]["errors"][e["$ref"].rsplit("/", 1)[1]]["code"] for e in m["errors"]}


def test_required_examples_exist() -> None:
    assert REQUIRED_EXAMPLES <= {p.stem for p in EXAMPLES}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_is_well_formed_and_matches_the_document(path: Path) -> None:
    doc = openrpc_document()
    messages = {e["code"]: e["message"] for e in doc["components"]["errors"].values()}
    example = load_example(path)
    assert set(example) == {"description", "request", "response"}
    assert isinstance(example["description"], str) and example["description"]
    response = example["response"]
    if isinstance(response, list):
        assert response, "a batch is answered with a non-empty array or not at all"
    for request, resp in _pairs(example):
        assert resp["jsonrpc"] == "2.0" and "id" in resp
        assert ("result" in resp) != ("error" in resp), resp
        if "result" in resp:
            assert request is not None, f"result for an id no request has: {resp['id']!r}"
            validate_result(request["method"], resp["result"])
        else:
            error = resp["error"]
            assert set(error) <= {"code", "message", "data"}
            assert error["message"] == messages[error["code"]]
            if request is not None and request.get("method") in method_names():
                assert error["code"] in _error_codes(doc, request["method"]) | PROTOCOL_LEVEL
            else:
                assert error["code"] in PROTOCOL_LEVEL


def test_every_method_has_a_success_example() -> None:
    succeeded = set()
    for path in EXAMPLES:
        for request, resp in _pairs(load_example(path)):
            if "result" in resp:
                succeeded.add(request["method"])
    assert succeeded == method_names()


def test_discover_example_refers_to_the_document_instead_of_copying_it() -> None:
    path = SHARED / "examples" / "rpc-discover.json"
    assert _load(path)["response"]["result"] == {"$ref": "../openrpc.json"}
    assert load_example(path)["response"]["result"] == openrpc_document()


# -- validate_params ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "params", "message", "param"),
    [
        ("search", {}, "`q` : obligatoire, mais absent", "q"),
        ("search", {"q": 42}, "`q` : doit être un texte", "q"),
        ("search", {"q": ""}, "`q` : ne doit pas être vide", "q"),
        ("search", {"q": " \t\n"}, "`q` : ne doit pas être fait que d'espaces", "q"),
        ("search", {"q": "é" * 501}, "`q` : doit compter au plus 500 caractères (longueur reçue : 501)", "q"),
        ("search", {"q": "ok", "top_k": 0}, "`top_k` : 0 est inférieur au minimum (1)", "top_k"),
        ("search", {"q": "ok", "top_k": 51}, "`top_k` : 51 est supérieur au maximum (50)", "top_k"),
        ("search", {"q": "ok", "top_k": 2.5}, "`top_k` : doit être un entier", "top_k"),
        ("search", {"q": "ok", "top_k": True}, "`top_k` : doit être un entier", "top_k"),
        ("search", {"q": "ok", "foo": 1}, "1 paramètre inconnu (attendus : audience, q, top_k)", "foo"),
        ("search", {"q": "ok", "b": 1, "a": 2}, "2 paramètres inconnus (attendus : audience, q, top_k)", "a"),
        ("search", {"q": "ok", "audience": "admin"}, '`audience` : doit être l\'une des valeurs "visitor", "owner"', "audience"),
        ("answer", {"q": "ok", "history": {}}, "`history` : doit être une liste", "history"),
        ("answer", {"q": "ok", "history": [{"role": "user", "content": "a"}] * 9}, "`history` : doit compter au plus 8 éléments (nombre reçu : 9)", "history"),
        (
            "answer",
            {"q": "ok", "history": [{"role": "system", "content": "a"}]},
            '`history[0].role` : doit être l\'une des valeurs "user", "assistant"',
            "history",
        ),
        ("answer", {"q": "ok", "history": [{"role": "user"}]}, "`history[0].content` : obligatoire, mais absent", "history"),
        (
            "answer",
            {"q": "ok", "history": [{"role": "user", "content": "x" * 2001}]},
            "`history[0].content` : doit compter au plus 2000 caractères (longueur reçue : 2001)",
            "history",
        ),
        ("answer", {"q": "ok", "history": [{"role": "user", "content": "a", "at": 1}]}, "`history[0]` : 1 champ inconnu (attendus : content, role)", "history"),
        ("suggest_aliases", {"limit": 3}, "`slug` : obligatoire, mais absent", "slug"),
        ("suggest_aliases", {"slug": "a", "limit": 99}, "`limit` : 99 est supérieur au maximum (50)", "limit"),
        ("health", {"verbose": True}, "1 paramètre inconnu (attendus : aucun)", "verbose"),
        ("search", ["push swap"], "`params` doit être un objet de paramètres nommés, pas une liste (`search` prend ses paramètres par leur nom)", None),
    ],
)
def test_validate_params_names_the_parameter_and_why(method, params, message, param) -> None:
    with pytest.raises(ParamsError) as caught:
        validate_params(method, params)
    assert str(caught.value) == message
    assert caught.value.param == param
    assert isinstance(caught.value, QueryError)


def _invalid_params_data_errors(data) -> list[str]:
    doc = openrpc_document()
    validator = Draft7Validator({**doc["components"]["schemas"]["InvalidParamsData"], "components": doc["components"]})
    return [e.message for e in validator.iter_errors(data)]


@pytest.mark.parametrize(
    ("method", "params", "said"),
    [
        ("search", {"q": "é" * 501}, {"param": "q", "max_question": 500}),
        ("answer", {"q": "ok", "history": [{"role": "user", "content": "a"}] * 9}, {"param": "history", "max_history": 8}),
        ("answer", {"q": "ok", "history": [{"role": "user", "content": "a"}, {"role": "user", "content": "x" * 2001}]}, {"param": "history", "max_turn": 2000}),
        ("search", {"q": "ok", "b": 1, "a": 2}, {"expected": ["audience", "q", "top_k"]}),
        ("suggest_aliases", {"slug": "a", "path": "x.md", "nope": 1}, {"expected": ["limit", "path", "slug"]}),
        ("health", {"verbose": True}, {"expected": []}),
        # refusals no client acts on: the sentence alone, as every -32602 of an older daemon
        ("search", {"q": 42}, None),
        ("search", {"q": "ok", "top_k": 51}, None),
        ("answer", {"q": "ok", "history": [{"role": "user", "content": "a", "at": 1}]}, None),
        ("search", ["push swap"], None),
    ],
)
def test_a_refusal_a_client_acts_on_says_it_in_fields(method, params, said) -> None:
    """The limit a param is held to, and the params a method takes, are `data` fields a client
    reads (the document's `InvalidParamsData`) beside the sentence: the chat and the plugin read
    them from the sentence's words, and a change of wording broke their retry silently."""
    with pytest.raises(ParamsError) as caught:
        validate_params(method, params)
    data = invalid_params_data(caught.value)
    if said is None:
        assert data == str(caught.value)
    else:
        assert data == {"reason": str(caught.value), **said}
        assert _invalid_params_data_errors(data) == []


def test_the_documents_invalid_params_objects_are_its_schema() -> None:
    """What components/errors and the examples show of an object -32602 `data` is an
    `InvalidParamsData`, as what the daemon sends is (test_limits checks the daemon's)."""
    doc = openrpc_document()
    shown = [e["data"] for e in doc["components"]["errors"].values() if e["code"] == -32602 and isinstance(e.get("data"), dict)]
    for path in EXAMPLES:
        for _, resp in _pairs(load_example(path)):
            error = resp.get("error", {})
            if error.get("code") == -32602 and isinstance(error.get("data"), dict):
                shown.append(error["data"])
    assert len(shown) >= 5  # two in components/errors, three examples
    for data in shown:
        assert _invalid_params_data_errors(data) == [], data


def test_validate_params_fills_defaults_and_keeps_values() -> None:
    assert validate_params("search", {"q": "push swap"}) == {"q": "push swap", "audience": "visitor"}
    assert validate_params("search", {"q": "x", "top_k": 3, "audience": "owner"}) == {"q": "x", "top_k": 3, "audience": "owner"}
    assert validate_params("answer", {"q": "x"})["history"] == []
    assert validate_params("suggest_aliases", {"slug": "push-swap"}) == {"slug": "push-swap", "limit": 10}
    assert validate_params("health", None) == {} and validate_params("health", []) == {}
    assert validate_params("search", {"q": "é" * 500})["q"] == "é" * 500


def test_validate_params_turns_whole_floats_into_ints_and_copies_defaults() -> None:
    top_k = validate_params("search", {"q": "x", "top_k": 7.0})["top_k"]
    assert top_k == 7 and type(top_k) is int
    first = validate_params("answer", {"q": "x"})
    first["history"].append({"role": "user", "content": "leak"})
    assert validate_params("answer", {"q": "x"})["history"] == []


def test_validate_params_unknown_method() -> None:
    with pytest.raises(LookupError):
        validate_params("nope", {})


# -- validate_result ----------------------------------------------------------------------


def test_validate_result_names_the_path() -> None:
    good = _load(SHARED / "examples" / "search.json")["response"]["result"]
    validate_result("search", good)
    bad = copy.deepcopy(good)
    bad["results"][0]["reasons"][1]["signal"] = "vibes"
    with pytest.raises(ResultError, match=r"^résultat de search : `results\[0\]\.reasons\[1\]\.signal` : doit être l'une des valeurs"):
        validate_result("search", bad)
    bad = copy.deepcopy(good)
    del bad["results"][2]["path"]
    with pytest.raises(ResultError, match=r"`results\[2\]\.path` : obligatoire, mais absent"):
        validate_result("search", bad)
    bad = dict(good, extra=1)
    with pytest.raises(ResultError, match="champ inconnu : 'extra'"):
        validate_result("search", bad)
    health = _load(SHARED / "examples" / "health.json")["response"]["result"]
    with pytest.raises(ResultError, match=r"`status` : doit être l'une des valeurs"):
        validate_result("health", dict(health, status="degraded"))
    with pytest.raises(ResultError, match=r"`vault_size` : -1 est inférieur au minimum \(0\)"):
        validate_result("health", dict(health, vault_size=-1))


def test_document_copy_is_independent() -> None:
    doc = openrpc_document()
    doc["methods"].clear()
    assert openrpc_document()["methods"]


def test_the_shared_history_cases_state_the_protocol_limits():
    """The chat page and the plugin each run shared-protocol/cases/history.json with their own
    history rule: its limits must be the ones `answer` checks."""
    doc, cases = _load(SHARED / "openrpc.json"), _load(SHARED / "cases" / "history.json")
    (history,) = [p for m in doc["methods"] if m["name"] == "answer" for p in m["params"] if p.get("name") == "history"]
    assert cases["limits"] == {
        "turns": history["schema"]["maxItems"],
        "turn_chars": doc["components"]["schemas"]["HistoryTurn"]["properties"]["content"]["maxLength"],
    }
