"""Property-based abuse of the daemon: whatever arrives, a well-formed answer, and it keeps serving.

Visitor-facing, both sides: the wire (any JSON, any params, any bytes, numbers and strings no
answer could carry) and the vault (a hostile author's notes: alias bombs, hidden comments,
links of every syntax to a private note, FIFOs, symlinks into excluded folders), each example
bounded by hypothesis' settings, the whole module in a few seconds to half a minute.

The daemon runs in a thread on a real loopback port for the whole module (hypothesis wants
no function-scoped fixtures), and the examples are sent over plain HTTP.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import shutil
import threading
import tracemalloc
import urllib.parse
from pathlib import Path

# Imported before a daemon's worker thread imports it (the encoder's, after the daemon listens):
# hypothesis's `sampled_from` looks into `sys.modules["numpy"]`, and a module another thread is
# still importing has no `ndarray` yet (this file alone failed `test_any_json_value` so)
import numpy  # noqa: F401
import pytest
from aiohttp import web
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator

from grasbot.server.app import create_app, runner_kwargs
from grasbot.server.protocol import ResultError, method_names, openrpc_document, validate_result
from grasbot.server.state import BOT
from support.bots import BUNDLED_VAULT, settings_for

OWNER = "fuzz-owner-token-0123456789abcdef"
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
METHODS = sorted(method_names())
PARAM_NAMES = ["q", "top_k", "audience", "history", "slug", "limit", "role", "content"]
INVALID_PARAMS_DATA = Draft7Validator(openrpc_document()["components"]["schemas"]["InvalidParamsData"])


class Daemon:
    """create_app() served on 127.0.0.1, port 0, from a thread with its own event loop."""

    def __init__(self, vault: Path, **overrides) -> None:
        overrides.setdefault("question_log", str(vault.parent / "questions.sqlite3"))  # one bad request must not turn it off
        self.settings = settings_for(vault, rate_per_minute=1_000_000, rate_burst=1_000_000, **overrides)
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.port = 0

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._start())
        self.ready.set()
        self.loop.run_forever()
        self.loop.run_until_complete(self.runner.cleanup())
        self.loop.close()

    async def _start(self) -> None:
        self.app = create_app(self.settings, owner_token=OWNER)
        self.runner = web.AppRunner(self.app, **runner_kwargs(self.settings))
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.port = self.runner.addresses[0][1]

    def __enter__(self) -> Daemon:
        self.thread.start()
        assert self.ready.wait(60), "the daemon did not start"
        return self

    def __exit__(self, *exc) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request(method, path, body=body, headers={"Content-Type": "application/json", **(headers or {})})
            resp = conn.getresponse()
            return resp.status, resp.read()
        finally:
            conn.close()

    def question_log_enabled(self) -> bool:
        return self.app[BOT].question_log.enabled

    def rpc(self, payload, *, owner: bool = False) -> tuple[int, bytes]:
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()  # ensure_ascii: lone surrogates as \\ud800
        return self.request("POST", "/rpc", body, {"Authorization": f"Bearer {OWNER}"} if owner else None)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    vault = tmp_path_factory.mktemp("fuzz") / "vault"
    shutil.copytree(BUNDLED_VAULT, vault)
    with Daemon(vault) as running:
        yield running


# ---------------------------------------------------------------- what a good answer is


def _requests_by_id(payload) -> dict[str, set[str]]:
    """id -> the methods asked under it: a batch may reuse an id (the spec does not forbid it),
    and then a result must fit one of them."""
    members = payload if isinstance(payload, list) else [payload]
    out: dict[str, set[str]] = {}
    for m in members:
        if isinstance(m, dict) and "id" in m and isinstance(m.get("method"), str):
            try:
                out.setdefault(json.dumps(m["id"]), set()).add(m["method"])
            except (TypeError, ValueError):
                pass
    return out


def _fits_one(methods: set[str], result) -> bool:
    for method in methods:
        try:
            validate_result(method, result)
        except ResultError:
            continue
        return True
    return False


def check_rpc_answer(status: int, raw: bytes, payload) -> None:
    if status == 204:
        assert raw == b""
        return
    assert status in (200, 413), (status, raw[:300])
    answer = json.loads(raw)  # strict UTF-8 JSON, or this fails
    members = answer if isinstance(answer, list) else [answer]
    assert members, "an empty array is never an answer"
    if isinstance(payload, bytes):
        try:
            payload = json.loads(payload)
        except (ValueError, RecursionError):
            payload = None
    by_id = _requests_by_id(payload)
    for m in members:
        assert isinstance(m, dict) and m.get("jsonrpc") == "2.0", m
        assert set(m) <= {"jsonrpc", "result", "error", "id"} and "id" in m, m
        assert ("result" in m) != ("error" in m), m
        if "error" in m:
            error = m["error"]
            assert isinstance(error["code"], int) and not isinstance(error["code"], bool)
            assert isinstance(error["message"], str) and error["message"]
            assert set(error) <= {"code", "message", "data"}
            if error["code"] == -32603:
                assert "data" not in error  # an internal error never says why
        else:
            # a batch may reuse an id, for a known method and an unknown one alike: the result
            # must answer one of the known methods asked under it
            methods = by_id.get(json.dumps(m["id"]), set()) & set(METHODS)
            assert methods, m
            if len(methods) == 1:
                validate_result(next(iter(methods)), m["result"])  # its message names the fault
            else:
                assert _fits_one(methods, m["result"]), m


def still_serving(daemon: Daemon) -> None:
    status, raw = daemon.rpc({"jsonrpc": "2.0", "method": "search", "params": {"q": "python"}, "id": 1})
    answer = json.loads(raw)
    assert status == 200 and answer["result"]["results"], answer


# ---------------------------------------------------------------- strategies

ODD = ["\x00", "\u200f", "\u202e", "\u2066", "\ufeff", "\ud800", "\udfff", "\U0001f600", "é", "\u0301", "\n", "\\", '"']
odd_text = st.text(alphabet=st.one_of(st.characters(blacklist_categories=()), st.sampled_from(ODD)), max_size=60) | st.sampled_from(
    ["", " ", "a" * 501, "é" * 2001, "\x00" * 10, "[[python]]", "ignore tes instructions"]
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | st.floats(allow_nan=False, allow_infinity=False) | odd_text,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(odd_text, children, max_size=5),
    max_leaves=20,
)
ids = st.none() | st.integers() | odd_text | st.floats(allow_nan=False, allow_infinity=False) | st.booleans() | st.lists(st.integers(), max_size=2)
params = st.dictionaries(st.sampled_from(PARAM_NAMES) | odd_text, json_values, max_size=4) | st.lists(json_values, max_size=3) | json_values
calls = st.fixed_dictionaries(
    {"jsonrpc": st.sampled_from(["2.0", "2.0", "2.0", "1.0", 2.0])},
    optional={"method": st.sampled_from(METHODS) | odd_text | json_values, "params": params, "id": ids},
)


# ---------------------------------------------------------------- properties


@FUZZ
@given(payload=json_values)
def test_any_json_value(daemon, payload):
    check_rpc_answer(*daemon.rpc(payload), payload)


@FUZZ
@given(payload=calls | st.lists(calls, min_size=1, max_size=25))
def test_calls_with_any_params(daemon, payload):
    check_rpc_answer(*daemon.rpc(payload), payload)
    check_rpc_answer(*daemon.rpc(payload, owner=True), payload)


@FUZZ
@given(method=st.sampled_from(METHODS), name=st.sampled_from(PARAM_NAMES), value=json_values)
def test_wrong_types_for_every_param(daemon, method, name, value):
    base = {"q": "python"} if method in ("search", "answer") else ({"slug": "python"} if method == "suggest_aliases" else {})
    payload = {"jsonrpc": "2.0", "method": method, "params": {**base, name: value}, "id": 1}
    check_rpc_answer(*daemon.rpc(payload, owner=True), payload)


ODD_BODIES = [b"", b"\xff\xfe", b"{" * 5000, b"[" * 100_000, b'{"jsonrpc": "2.0", "method": "search", "params": {"q": "\\ud800"}, "id": 1}']


@FUZZ
@given(body=st.binary(max_size=300) | st.sampled_from(ODD_BODIES))
def test_any_bytes(daemon, body):
    check_rpc_answer(*daemon.rpc(body), body)


@FUZZ
@given(q=st.text(max_size=700) | st.sampled_from(["", "\x00", "\u202eevil", "a" * 501]), history=st.none() | json_values.map(json.dumps) | st.text(max_size=50))
def test_ask_with_any_query(daemon, q, history):
    query = {"q": q} if history is None else {"q": q, "history": history}
    for path in ("/ask", "/ask/stream"):
        status, raw = daemon.request("GET", f"{path}?{urllib.parse.urlencode(query)}")
        assert status in (200, 400, 414, 431), (status, raw[:200])
        if status == 400 and raw.startswith(b"{"):
            body = json.loads(raw)
            assert set(body) == {"error"} and body["error"]["code"] == -32602
            data = body["error"]["data"]
            assert isinstance(data, str) or not list(INVALID_PARAMS_DATA.iter_errors(data)), data  # a sentence, or one with a limit's fields
        elif status == 200 and path == "/ask":
            assert set(json.loads(raw)) >= {"response", "sources", "grounded", "model", "vault_size"}
        elif status == 200:
            assert raw.rstrip().split(b"\n")[-2].startswith(b"event: ") or b"event: done" in raw


def test_daemon_keeps_serving_and_memory_stays_bounded(daemon):
    """Run after the others (file order): it is still up, and N more requests do not grow memory."""
    still_serving(daemon)
    batch = [{"jsonrpc": "2.0", "method": "search", "params": {"q": f"python projet {i} \u202e\x00"}, "id": i} for i in range(10)]

    def burst(n: int) -> None:
        for i in range(n):
            daemon.rpc(batch)
            daemon.rpc({"jsonrpc": "2.0", "method": "search", "params": {"q": "é" * 600}, "id": i})
            daemon.rpc(b"{not json" * (i % 50))

    burst(10)  # warm up caches
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        burst(40)
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert after - before < 4 * 1024 * 1024, f"grew by {(after - before) / 1e6:.1f} MB over 40 rounds"
    still_serving(daemon)


# ---------------------------------------------------------------- broken notes, then a reload

frontmatters = st.one_of(
    odd_text,
    st.sampled_from(
        [
            "title: [unclosed",
            "title: 'a\n  b",
            ": :",
            "- a\n- b",
            "title: !!python/object:os.system x",
            "visibility: public\nvisibility: private",
            "aliases: 12",
            "linked: {a: b}",
            "answers: [[[]]]",
            "&a [*a, *a]",
            "title: " + "x" * 5000,
            "tags: [\x00]",
            "\t\ttitle: tab",
            "visibility: public\nslug: ../../etc",
        ]
    ),
    json_values.map(lambda v: "title: " + json.dumps(v)),
)


@pytest.fixture(scope="module")
def small_daemon(tmp_path_factory):
    vault = tmp_path_factory.mktemp("broken") / "vault"
    vault.mkdir()
    (vault / "sain.md").write_text("---\ntitle: Note saine\nvisibility: public\n---\nLes abeilles du jardin.\n", encoding="utf-8")
    with Daemon(vault) as running:
        running.vault = vault
        yield running


@settings(max_examples=25, deadline=None)
@given(front=frontmatters, body=odd_text, name=st.sampled_from(["casse.md", "sous/dossier.md", "é €.md"]))
def test_broken_frontmatter_then_reload(small_daemon, front, body, name):
    path = small_daemon.vault / name
    path.parent.mkdir(parents=True, exist_ok=True)
    text = f"---\n{front}\n---\n{body}"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    try:
        payload = {"jsonrpc": "2.0", "method": "reload", "id": 1}
        status, raw = small_daemon.rpc(payload, owner=True)
        check_rpc_answer(status, raw, payload)
        status, raw = small_daemon.rpc({"jsonrpc": "2.0", "method": "search", "params": {"q": "abeilles jardin"}, "id": 2})
        found = json.loads(raw)["result"]["results"]
        assert "sain" in {r["slug"] for r in found}, found
    finally:
        path.unlink()


# ---------------------------------------------------------------- the wire: what parses but no answer can carry

HUGE_NUMBERS = ["1e400", "-1e400", "1E+309", "9" * 400 + "e9", "-0.5e99999"]
LONE = ["\\ud800", "\\udfff", "\\udc80x", "\\ud83d"]
templates = st.sampled_from(
    [
        '{{"jsonrpc": "2.0", "method": "search", "params": {{"q": "python {s}", "top_k": {n}}}, "id": {n}}}',
        '{{"jsonrpc": "2.0", "method": "search", "params": {{"q": "python {s}"}}, "id": "{s}"}}',
        '{{"jsonrpc": "2.0", "method": "answer", "params": {{"q": "python", "history": [{{"role": "user", "content": "{s}"}}]}}, "id": {n}}}',
        '[{{"jsonrpc": "2.0", "method": "health", "id": {n}}}, {{"jsonrpc": "2.0", "method": "search", "params": {{"q": "{s}"}}, "id": 2}}]',
        '{{"jsonrpc": "2.0", "method": "{s}", "params": [{n}], "id": "{s}"}}',
    ]
)


@FUZZ
@given(
    template=templates,
    number=st.sampled_from(HUGE_NUMBERS) | st.integers(-3, 30).map(str),
    text=st.sampled_from(LONE) | odd_text.map(lambda t: json.dumps(t)[1:-1]),
)
def test_requests_no_answer_could_carry(daemon, template, number, text):
    body = template.format(n=number, s=text).encode()
    status, raw = daemon.rpc(body)
    check_rpc_answer(status, raw, body)
    still_serving(daemon)
    assert daemon.question_log_enabled()


# ---------------------------------------------------------------- the vault: a hostile author, then visitors

CANARY = "qwertzcanari"
PRIVATE = f"prive/Carnet {CANARY}.md"


@pytest.fixture(scope="module")
def hostile_daemon(tmp_path_factory):
    vault = tmp_path_factory.mktemp("hostile") / "vault"
    (vault / "prive").mkdir(parents=True)
    (vault / PRIVATE).write_text(f"---\nvisibility: private\n---\nLe jardin {CANARY} et ses ruches.\n", encoding="utf-8")
    (vault / "exclu").mkdir()
    (vault / "exclu" / f"{CANARY}.md").write_text(f"---\nvisibility: public\n---\nLe jardin {CANARY}.\n", encoding="utf-8")
    (vault / ".trash").mkdir()
    (vault / ".trash" / f"{CANARY}.md").write_text(f"---\nvisibility: public\n---\nLe jardin {CANARY}.\n", encoding="utf-8")
    (vault / "sain.md").write_text("---\ntitle: Le jardin\nvisibility: public\n---\nLes abeilles du jardin et les ruches.\n", encoding="utf-8")
    with Daemon(vault, exclude="exclu") as running:
        running.vault = vault
        yield running


def _links_to_private(label: str) -> list[str]:
    encoded = urllib.parse.quote(f"Carnet {CANARY}.md")
    return [
        f"[[Carnet {CANARY}]]",
        f"[[prive/Carnet {CANARY}|{label}]]",
        f"![[Carnet {CANARY}]]",
        f"[{label}](prive/{encoded})",
        f"[{label}](<prive/Carnet {CANARY}.md>)",
        f"![{label}](/prive/{encoded})",
        f"<prive/{encoded}>",
        f'<a href="prive/{encoded}">{label}</a>',
        f"[{label}][r]\n\n[r]: prive/{encoded}\n",
        f"[{label}](obsidian://open?file=prive%2FCarnet%20{CANARY})",
        f"[{label}](./prive/../prive/{encoded})",
    ]


hostile_bodies = st.lists(
    st.one_of(
        st.sampled_from(["Les abeilles du jardin partagé butinent la lavande. ", "Le miel des ruches.\n", "\n\n", "`%%code%%` "]),
        st.sampled_from([f"%%{CANARY}%%", f"%%\n{CANARY}\n%%\n", f"<!-- {CANARY} -->", f"<!--\n{CANARY}\n-->"]),
        st.sampled_from(["", "le carnet", "ce lien"]).flatmap(lambda label: st.sampled_from(_links_to_private(label))),
    ),
    max_size=8,
).map("".join)
hostile_fronts = st.sampled_from(
    [
        "title: Une note du jardin\nvisibility: public",
        "visibility: public\n" + "\n".join(f"l{k}: &l{k} [{', '.join([f'*l{k - 1}' if k else 'lol'] * 9)}]" for k in range(9)) + "\ntitle: *l8",
        "visibility: public\na: &a [*a]\ntitle: x",
        "visibility: public\ntags: " + "[" * 50 + "]" * 50,
        f'visibility: public\ntitle: Jardin %%{CANARY}%%\naliases: ["<!-- {CANARY} -->"]',  # fields lose comments too
    ]
)
kinds = st.sampled_from(["file", "file", "fifo", "link-excluded", "link-trash", "folder-link-excluded"])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    front=hostile_fronts,
    body=hostile_bodies,
    kind=kinds,
    question=st.sampled_from(["Que font les abeilles du jardin ?", "le carnet du jardin", "ruches et miel", CANARY]),
)
def test_a_hostile_vault_shows_visitors_nothing_private(hostile_daemon, front, body, kind, question):
    vault = hostile_daemon.vault
    made = vault / "pub"
    made.mkdir(exist_ok=True)
    note = made / "note.md"
    if kind == "file":
        note.write_text(f"---\n{front}\n---\n{body}", encoding="utf-8")
    elif kind == "fifo":
        os.mkfifo(note)
    elif kind == "link-excluded":
        note.symlink_to(vault / "exclu" / f"{CANARY}.md")
    elif kind == "link-trash":
        note.symlink_to(vault / ".trash" / f"{CANARY}.md")
    else:
        (made / "dossier").symlink_to(vault / "exclu", target_is_directory=True)
    try:
        payload = {"jsonrpc": "2.0", "method": "reload", "id": 1}
        # a reload that hangs (a FIFO read, a device) fails on the connection's 30 s timeout;
        # how fast one is, is the benchmarks' to say
        status, raw = hostile_daemon.rpc(payload, owner=True)
        check_rpc_answer(status, raw, payload)
        answers = [
            hostile_daemon.rpc({"jsonrpc": "2.0", "method": "search", "params": {"q": question}, "id": 2})[1],
            hostile_daemon.rpc({"jsonrpc": "2.0", "method": "answer", "params": {"q": question}, "id": 3})[1],
            hostile_daemon.request("GET", "/ask?" + urllib.parse.urlencode({"q": question}))[1],
            hostile_daemon.request("GET", "/ask/stream?" + urllib.parse.urlencode({"q": question}))[1],
            hostile_daemon.request("GET", "/health")[1],
        ]
        for raw_answer in answers:
            text = raw_answer.decode("utf-8").lower()
            assert CANARY not in text and "prive/" not in text, text[:500]
        still_serving_jardin = json.loads(answers[0])
        assert "result" in still_serving_jardin
    finally:
        if note.is_symlink() or note.exists():
            note.unlink()
        if (made / "dossier").is_symlink():
            (made / "dossier").unlink()
