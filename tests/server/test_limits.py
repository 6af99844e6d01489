"""Limits: sizes from the settings, and the per-client rate limit on questions."""

from __future__ import annotations

import json
import logging

import aiohttp
import pytest
from aiohttp.test_utils import TestServer
from jsonschema import Draft7Validator
from multidict import CIMultiDict

from grasbot import Settings
from grasbot._config import PROTOCOL_LIMITS
from grasbot._exceptions import ConfigError
from grasbot.server.app import create_app
from grasbot.server.ratelimit import RateLimiter, TrustedProxies, client_key
from grasbot.server.state import BOT, LIMITER
from support.bots import BUNDLED_VAULT, REPO, rpc, server_kwargs, settings_for, sse_events

OWNER = "limits-owner-token-0123456789"
OWNER_HEADERS = {"Authorization": f"Bearer {OWNER}"}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def start_clocked(aiohttp_client):
    """A daemon whose rate limit runs on a clock the test moves."""

    async def start(clock: Clock, **overrides):
        app = create_app(settings_for(BUNDLED_VAULT, **overrides), owner_token=OWNER, clock=clock)
        server = TestServer(app)
        await server.start_server(**server_kwargs())
        return await aiohttp_client(server)

    return start


# ---------------------------------------------------------------- sizes


async def test_lowered_question_limit_is_enforced_everywhere(start_daemon):
    client = await start_daemon(max_question=40)
    ok, long = "a" * 40, "a" * 41
    assert "result" in await rpc(client, "search", {"q": ok})
    # the limit in a field the chat reads (it holds the box to it), beside the sentence
    said = {"reason": "`q` : doit compter au plus 40 caractères (longueur reçue : 41)", "param": "q", "max_question": 40}
    for method in ("search", "answer"):
        error = (await rpc(client, method, {"q": long}))["error"]
        assert error == {"code": -32602, "message": "Invalid params", "data": said}
    for path in ("/ask", "/ask/stream"):
        resp = await client.get(path, params={"q": long})
        assert resp.status == 400 and await resp.json() == {"error": {"code": -32602, "message": "Invalid params", "data": said}}


async def test_the_document_says_how_a_lowered_limit_is_refused(start_daemon):
    """Clients read the limits a daemon holds to from its refusals' fields (chat.js and thread.ts
    `lowerLimits`): the OpenRPC document quotes them, and must quote what the daemon says, which
    its `InvalidParamsData` describes."""
    document = json.loads((REPO / "shared-protocol" / "openrpc.json").read_text())
    answer = next(m for m in document["methods"] if m["name"] == "answer")
    history_doc = next(p for p in answer["params"] if p.get("name") == "history")["description"]
    question_doc = document["components"]["contentDescriptors"]["Question"]["description"]
    client = await start_daemon(max_history=4, max_turn=500, max_question=300)
    turns = [{"role": "user", "content": "a"}] * 8
    asked = (
        (history_doc, {"q": "et ?", "history": turns}),
        (history_doc, {"q": "et ?", "history": [*turns[:3], {"role": "assistant", "content": "b" * 2000}]}),
        (question_doc, {"q": "a" * 420}),
    )
    shared = [c for c in json.loads((REPO / "shared-protocol" / "cases" / "history.json").read_text())["refusals"] if not c.get("older")]
    fields = Draft7Validator({**document["components"]["schemas"]["InvalidParamsData"], "components": document["components"]})
    for (doc, params), case in zip(asked, shared, strict=True):
        said = (await rpc(client, "answer", params))["error"]["data"]
        assert f"`` {json.dumps(said, ensure_ascii=False)} ``" in doc
        assert list(fields.iter_errors(said)) == []
        assert said == case["detail"]  # the refusals both clients' suites read limits from


def test_a_setting_cannot_raise_the_protocols_limits():
    """The document the daemon serves (`rpc.discover`) says what a client may send: a setting
    above it was ignored (a question, a history, a turn) or obeyed against it (a batch)."""
    document = json.loads((REPO / "shared-protocol" / "openrpc.json").read_text(encoding="utf-8"))
    schemas = document["components"]["schemas"]
    history = next(p for m in document["methods"] if m["name"] == "answer" for p in m["params"] if p.get("name") == "history")
    assert PROTOCOL_LIMITS == {
        "max_question": schemas["Question"]["maxLength"],
        "max_history": history["schema"]["maxItems"],
        "max_turn": schemas["HistoryTurn"]["properties"]["content"]["maxLength"],
        "max_batch": 20,
    }
    assert "a batch of at most 20 per body" in document["info"]["description"]
    for variable, value, limit in (
        ("GRASBOT_MAX_QUESTION", "5000", 500),
        ("GRASBOT_MAX_HISTORY", "9", 8),
        ("GRASBOT_MAX_TURN", "2001", 2000),
        ("GRASBOT_MAX_BATCH", "30", 20),
    ):
        with pytest.raises(ConfigError, match=rf"^{variable} peut abaisser la limite du protocole, {limit}, pas la relever \({value}\)$"):
            Settings.load(env={variable: value})
        assert getattr(Settings.load(env={variable: str(limit)}), variable.removeprefix("GRASBOT_").lower()) == limit  # the limit itself is taken


async def test_lowered_history_limits(start_daemon):
    client = await start_daemon(max_history=2, max_turn=30)
    turn = {"role": "user", "content": "les abeilles"}
    three = [turn, {"role": "assistant", "content": "oui"}, turn]
    long_turn = [{"role": "user", "content": "x" * 31}]
    # each limit in the field a client reads to send again within it, whatever the sentence says
    cases = [
        (three, {"reason": "`history` : doit compter au plus 2 éléments (nombre reçu : 3)", "param": "history", "max_history": 2}),
        (long_turn, {"reason": "`history[0].content` : doit compter au plus 30 caractères (longueur reçue : 31)", "param": "history", "max_turn": 30}),
    ]
    for history, said in cases:
        error = (await rpc(client, "answer", {"q": "jardin", "history": history}))["error"]
        assert error == {"code": -32602, "message": "Invalid params", "data": said}
        for path in ("/ask", "/ask/stream"):
            resp = await client.get(path, params={"q": "jardin", "history": json.dumps(history)})
            assert resp.status == 400 and await resp.json() == {"error": {"code": -32602, "message": "Invalid params", "data": said}}
    assert "result" in await rpc(client, "answer", {"q": "jardin", "history": three[:2]})


async def test_body_over_the_configured_limit_is_413_json(start_daemon):
    client = await start_daemon(max_body=1024)
    body = json.dumps({"jsonrpc": "2.0", "method": "search", "params": {"q": "x" * 1100}, "id": 1})
    resp = await client.post("/rpc", data=body, headers={"Content-Type": "application/json"})
    assert resp.status == 413 and resp.content_type == "application/json"
    assert await resp.json() == {
        "jsonrpc": "2.0",
        "error": {"code": -32600, "message": "Invalid Request", "data": "le corps de la requête dépasse la limite de 1024 octets"},
        "id": None,
    }

    # chunked, without Content-Length: the same answer
    async def chunks():
        for _ in range(4):
            yield b"x" * 400

    resp = await client.post("/rpc", data=chunks(), headers={"Content-Type": "application/json"})
    assert resp.status == 413 and (await resp.json())["error"]["code"] == -32600
    assert "result" in await rpc(client, "health")  # still serving


async def test_batch_over_the_configured_limit(start_daemon):
    client = await start_daemon(max_batch=3)
    call = {"jsonrpc": "2.0", "method": "health", "id": 1}
    resp = await client.post("/rpc", json=[call] * 4)
    answer = await resp.json()
    assert answer["error"]["code"] == -32600 and answer["id"] is None
    assert "limite de 3" in answer["error"]["data"]
    resp = await client.post("/rpc", json=[call] * 3)
    assert len(await resp.json()) == 3


# ---------------------------------------------------------------- the token bucket


def test_bucket_allows_a_burst_then_the_rate():
    clock = Clock()
    limiter = RateLimiter(per_minute=6, burst=3, clock=clock)  # one every 10 s
    assert [limiter.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.take("a") == pytest.approx(10.0)
    assert limiter.take("b") == 0.0  # another client has its own bucket
    clock.now += 4
    assert limiter.take("a") == pytest.approx(6.0)  # a refused call spends nothing
    clock.now += 6
    assert limiter.take("a") == 0.0
    assert limiter.take("a") == pytest.approx(10.0)
    clock.now += 1000  # a long pause refills to the burst, not beyond
    assert [limiter.take("a") for _ in range(4)][-1] > 0
    assert RateLimiter.retry_after(0.2) == 1 and RateLimiter.retry_after(10.0) == 10 and RateLimiter.retry_after(10.01) == 11


def test_buckets_are_bounded_and_expire():
    clock = Clock()
    limiter = RateLimiter(per_minute=60, burst=2, max_clients=100, clock=clock)
    for i in range(5000):
        limiter.take(f"10.0.{i // 256}.{i % 256}")
    assert len(limiter) == 100  # the least recently seen were forgotten
    clock.now += 1.0  # not yet full again: kept
    limiter.take("fresh")
    assert len(limiter) == 100
    clock.now += 2.0  # 2 tokens at 1/s: every idle bucket is full again, so it is dropped
    limiter.take("fresh")
    assert len(limiter) == 1
    # forgetting a full bucket changes nothing for its client
    assert limiter.take("10.0.0.1") == 0.0


def test_client_key():
    trusted = TrustedProxies(["127.0.0.1", "::1", "10.1.0.0/16"])
    # a proxy that appends (Debian's proxy_params) puts the visitor's address after what they sent
    assert client_key("127.0.0.1", "203.0.113.9, 198.51.100.7", trusted) == "198.51.100.7"
    assert client_key("127.0.0.1", "203.0.113.9, 198.51.100.7, 10.1.2.3", trusted) == "198.51.100.7"  # a trusted proxy's own
    assert client_key("127.0.0.1", "10.1.2.3, 127.0.0.1", trusted) == "10.1.2.3"  # all trusted: the first
    assert client_key("127.0.0.1", "203.0.113.9, unknown", trusted) == "127.0.0.1"  # what lies before garbage is not believed
    assert client_key("10.1.2.3", " 203.0.113.9 ", trusted) == "203.0.113.9"
    assert client_key("::1", "203.0.113.9", trusted) == "203.0.113.9"
    assert client_key("::ffff:127.0.0.1", "203.0.113.9", trusted) == "203.0.113.9"
    # a peer that is not a trusted proxy: its header is the visitor's own words
    assert client_key("198.51.100.7", "203.0.113.9", trusted) == "198.51.100.7"
    # garbage from a trusted proxy: the peer
    assert client_key("127.0.0.1", "unknown", trusted) == "127.0.0.1"
    assert client_key("127.0.0.1", "", trusted) == "127.0.0.1"
    # IPv6 visitors count by /64
    assert client_key("127.0.0.1", "2001:db8:1:2:aaaa::1", trusted) == client_key("2001:db8:1:2:bbbb::9", None, trusted)
    assert client_key("127.0.0.1", "2001:db8:1:2::1", trusted) == "2001:db8:1:2::/64"
    assert client_key("127.0.0.1", "[2001:db8::1]:443", trusted) == "2001:db8::/64"
    # an IPv4 address with its port (Azure's Application Gateway writes them so) is that visitor's
    assert client_key("127.0.0.1", "203.0.113.9:51234", trusted) == "203.0.113.9"
    assert client_key("127.0.0.1", "198.51.100.7:443, 10.1.2.3:8080", trusted) == "198.51.100.7"
    with pytest.raises(ValueError):
        TrustedProxies(["nginx.local"])
    # a proxy listed as a dual-stack socket shows it (`ss`, a listener on "::") is that IPv4 proxy
    mapped = TrustedProxies(["::ffff:172.17.0.1", "::ffff:10.2.0.0/112"])
    assert client_key("::ffff:172.17.0.1", "203.0.113.9", mapped) == "203.0.113.9"
    assert client_key("172.17.0.1", "203.0.113.9", mapped) == "203.0.113.9"
    assert client_key("10.2.3.4", "203.0.113.9", mapped) == "203.0.113.9"
    assert client_key("10.3.0.1", "203.0.113.9", mapped) == "10.3.0.1"


# ---------------------------------------------------------------- over HTTP


async def test_ask_and_stream_share_a_bucket_and_answer_429(start_clocked):
    clock = Clock()
    client = await start_clocked(clock, rate_per_minute=6, rate_burst=2)
    q = {"q": "Quelles compétences en Python ?"}
    assert (await client.get("/ask", params=q)).status == 200
    assert (await client.get("/ask/stream", params=q)).status == 200
    for path in ("/ask", "/ask/stream"):
        resp = await client.get(path, params=q)
        assert resp.status == 429 and resp.headers["Retry-After"] == "10"
        assert resp.content_type == "application/json"
        assert await resp.json() == {
            "error": {"code": -32002, "message": "Rate limited", "data": {"retry_after": 10, "reason": "Trop de questions à la suite : réessayez dans 10 s."}}
        }
    clock.now += 3.5
    resp = await client.get("/ask", params=q)
    assert resp.status == 429 and resp.headers["Retry-After"] == "7"  # 6.5 s, rounded up
    clock.now += 6.5
    resp = await client.get("/ask/stream", params=q)
    assert resp.status == 200
    assert [name async for name, _ in sse_events(resp)][-1] == "done"
    # bad requests are refused before they cost anything; the health check is not limited
    assert (await client.get("/ask", params={"q": ""})).status == 400
    for _ in range(30):
        assert (await client.get("/health")).status == 200


async def test_a_visitors_search_is_limited_and_shares_the_questions_bucket(start_clocked, tmp_path):
    """`search` logs a visitor's question as `answer` does: unlimited, a client could fill the
    question log (and the owner's alias suggestions) with as many as it could send."""
    clock = Clock()
    client = await start_clocked(clock, rate_per_minute=6, rate_burst=2, question_log=str(tmp_path / "q.sqlite3"))
    log = client.server.app[BOT].question_log
    # a question the engine refuses costs nothing, as on /ask
    for q in ("", "\u200b"):
        for method in ("search", "answer"):
            assert (await rpc(client, method, {"q": q}))["error"]["code"] == -32602
    assert "result" in await rpc(client, "search", {"q": "python"})
    assert (await client.get("/ask", params={"q": "python"})).status == 200  # the same bucket
    for n in range(30):
        answer = await rpc(client, "search", {"q": f"python {n}"}, id=n)
        assert answer["error"] == {
            "code": -32002,
            "message": "Rate limited",
            "data": {"retry_after": 10, "reason": "Trop de questions à la suite : réessayez dans 10 s."},
        }
    assert (await rpc(client, "answer", {"q": "python"}))["error"]["code"] == -32002
    assert log.count() == 2  # the search and /ask: none of the refused ones
    # the owner is never limited, and their previews are not logged
    for n in range(10):
        assert "result" in await rpc(client, "search", {"q": "python"}, id=n, headers=OWNER_HEADERS)
        assert "result" in await rpc(client, "search", {"q": "python", "audience": "owner"}, id=n, headers=OWNER_HEADERS)
    clock.now += 10
    assert "result" in await rpc(client, "search", {"q": "python"})
    assert log.count() == 3


async def test_a_batch_cannot_get_around_the_limit(start_clocked, tmp_path):
    """Each search or answer of a batch takes from the bucket, and a batch is at most
    GRASBOT_MAX_BATCH calls: a visitor cannot buy a thousand searches with one request."""
    clock = Clock()
    # 3 slots: a visitor may wait for 2 answers at once, and the batch's answers are refused by the rate limit
    client = await start_clocked(clock, rate_per_minute=6, rate_burst=3, max_batch=10, llm_slots=3, question_log=str(tmp_path / "q.sqlite3"))
    log = client.server.app[BOT].question_log
    huge = json.dumps([{"jsonrpc": "2.0", "method": "search", "params": {"q": "a"}, "id": i} for i in range(1000)], separators=(",", ":"))
    assert len(huge) < 64 * 1024  # under the body limit: the batch limit is what refuses it
    error = (await (await client.post("/rpc", data=huge, headers={"Content-Type": "application/json"})).json())["error"]
    assert error == {"code": -32600, "message": "Invalid Request", "data": "lot de 1000 requêtes, au-delà de la limite de 10 par lot"}
    assert log.count() == 0
    assert "result" in await rpc(client, "search", {"q": "python"})  # the refused batch cost nothing
    batch = [{"jsonrpc": "2.0", "method": method, "params": {"q": f"python {i}"}, "id": i} for i, method in enumerate(["search", "answer"] * 5)]
    answers = await (await client.post("/rpc", json=batch)).json()
    assert sum("result" in a for a in answers) == 2
    assert [a["error"]["data"] for a in answers if "error" in a] == [{"retry_after": 10, "reason": "Trop de questions à la suite : réessayez dans 10 s."}] * 8
    # notifications get no answer, but take from the bucket all the same
    notes = [{"jsonrpc": "2.0", "method": "search", "params": {"q": "python"}} for _ in range(10)]
    clock.now += 10
    assert (await client.post("/rpc", json=notes)).status == 204
    assert log.count() == 4
    assert (await rpc(client, "search", {"q": "python"}))["error"]["code"] == -32002


async def test_rpc_answer_is_limited_per_member(start_clocked):
    clock = Clock()
    client = await start_clocked(clock, rate_per_minute=6, rate_burst=2, concurrent_answers=3, llm_slots=4)  # 3 answers at once
    batch = [{"jsonrpc": "2.0", "method": "answer", "params": {"q": "python"}, "id": i} for i in range(3)]
    resp = await client.post("/rpc", json=batch)
    answers = sorted(await resp.json(), key=lambda a: a["id"])
    assert sum("result" in a for a in answers) == 2
    [limited] = [a for a in answers if "error" in a]
    assert limited["error"] == {
        "code": -32002,
        "message": "Rate limited",
        "data": {"retry_after": 10, "reason": "Trop de questions à la suite : réessayez dans 10 s."},
    }
    assert (await client.get("/ask", params={"q": "python"})).status == 429  # the same bucket


async def test_owner_is_not_limited(start_clocked):
    clock = Clock()
    client = await start_clocked(clock, rate_per_minute=1, rate_burst=1)
    for n in range(4):
        assert "result" in await rpc(client, "answer", {"q": "python"}, id=n, headers=OWNER_HEADERS)
        assert (await client.get("/ask", params={"q": "python"}, headers=OWNER_HEADERS)).status == 200
    assert "result" in await rpc(client, "answer", {"q": "python"})
    assert (await rpc(client, "answer", {"q": "python"}))["error"]["code"] == -32002


async def test_forwarded_for_counts_only_from_a_trusted_proxy(start_clocked):
    clock = Clock()
    # the test client connects from 127.0.0.1, a trusted proxy by default
    client = await start_clocked(clock, rate_per_minute=1, rate_burst=1)
    for visitor in ("203.0.113.1", "203.0.113.2"):
        headers = {"X-Forwarded-For": visitor}
        assert (await client.get("/ask", params={"q": "python"}, headers=headers)).status == 200
        assert (await client.get("/ask", params={"q": "python"}, headers=headers)).status == 429
    # behind a proxy that appends (`$proxy_add_x_forwarded_for`), a visitor's own address comes
    # last: the ones they write before it buy no new bucket
    for forged in ("198.51.100.1", "198.51.100.2, 198.51.100.3"):
        headers = {"X-Forwarded-For": f"{forged}, 203.0.113.1"}
        assert (await client.get("/ask", params={"q": "python"}, headers=headers)).status == 429

    untrusting = await start_clocked(Clock(), rate_per_minute=1, rate_burst=1, trusted_proxies="10.9.9.9")
    assert (await untrusting.get("/ask", params={"q": "python"}, headers={"X-Forwarded-For": "203.0.113.1"})).status == 200
    # a new X-Forwarded-For does not buy a new bucket: the peer is what counts
    resp = await untrusting.get("/ask", params={"q": "python"}, headers={"X-Forwarded-For": "203.0.113.2"})
    assert resp.status == 429
    assert len(untrusting.server.app[LIMITER]) == 1


async def test_forwarded_for_from_a_peer_not_trusted_is_said_once_in_the_log(start_clocked, caplog):
    """nginx in a container reaches the daemon from 172.17.0.1, not listed: every visitor is one
    client, all refused after the burst. The owner's log says once which peer and what to set."""
    caplog.set_level(logging.WARNING, logger="grasbot")
    client = await start_clocked(Clock(), trusted_proxies="10.9.9.9")
    for visitor in ("203.0.113.1", "203.0.113.2"):
        assert (await client.get("/ask", params={"q": "python"}, headers={"X-Forwarded-For": visitor})).status == 200
    said = [r.getMessage() for r in caplog.records if "X-Forwarded-For" in r.getMessage()]
    assert said == [
        "X-Forwarded-For venu de 127.0.0.1 est ignoré, car ce n'est pas un proxy de confiance (GRASBOT_TRUSTED_PROXIES : 10.9.9.9) : "
        "la limite de débit compte tous ceux qu'il relaie comme un seul client ; si c'est votre proxy inverse, ajoutez-le à cette liste"
    ]
    assert all("203.0.113" not in r.getMessage() for r in caplog.records)


def test_a_visitor_who_sends_forwarded_for_from_a_public_address_is_not_named(caplog):
    caplog.set_level(logging.WARNING, logger="grasbot")
    trusted = TrustedProxies(["127.0.0.1"])
    for peer in ("8.8.8.8", "2606:4700::1", "8.8.4.4"):
        assert client_key(peer, "203.0.113.9", trusted) != "203.0.113.9"
    assert [r.getMessage().split(" est ignoré")[0] for r in caplog.records] == ["X-Forwarded-For venu d'une adresse publique"]
    assert client_key("127.0.0.1", "203.0.113.9", trusted) == "203.0.113.9"  # a trusted one: nothing to say
    assert len(caplog.records) == 1


async def test_a_proxy_that_adds_its_own_forwarded_for_line_is_read_after_the_visitors(start_clocked):
    """HAProxy's `option forwardfor` adds an X-Forwarded-For line after the one the visitor sent:
    the lines are one list, so a forged first line buys no new bucket, over HTTP or JSON-RPC."""
    client = await start_clocked(Clock(), rate_per_minute=1, rate_burst=1)
    for forged in ("198.51.100.1", "198.51.100.2", "198.51.100.3"):
        headers = CIMultiDict([("X-Forwarded-For", forged), ("X-Forwarded-For", "203.0.113.1")])
        resp = await client.get("/ask", params={"q": "python"}, headers=headers)
        assert resp.status == (200 if forged == "198.51.100.1" else 429)
    headers = CIMultiDict([("X-Forwarded-For", "198.51.100.4"), ("X-Forwarded-For", "203.0.113.1")])
    resp = await client.post("/rpc", json={"jsonrpc": "2.0", "method": "answer", "params": {"q": "python"}, "id": 1}, headers=headers)
    assert (await resp.json())["error"]["code"] == -32002
    assert len(client.server.app[LIMITER]) == 1


async def test_visitors_a_proxy_names_with_their_port_are_counted_apart(start_clocked):
    """Azure's Application Gateway writes `X-Forwarded-For: 203.0.113.9:51234`: each visitor its
    own bucket, not the proxy's one for all (one visitor's questions refused everyone's)."""
    client = await start_clocked(Clock(), rate_per_minute=1, rate_burst=1)
    for visitor in ("192.0.2.1:50000", "192.0.2.2:50001", "192.0.2.3:50002"):
        resp = await client.get("/ask", params={"q": "python"}, headers={"X-Forwarded-For": visitor})
        assert resp.status == 200
    resp = await client.get("/ask", params={"q": "python"}, headers={"X-Forwarded-For": "192.0.2.1:61000"})
    assert resp.status == 429


async def test_a_proxy_that_sends_only_forwarded_has_its_visitors_counted_apart(start_clocked):
    """HAProxy's `option forwarded` writes RFC 7239's `Forwarded: for=…` and no X-Forwarded-For:
    read the same way, or every visitor was the proxy, all refused once one asked too much."""
    client = await start_clocked(Clock(), rate_per_minute=1, rate_burst=1)
    visitors = ("for=203.0.113.1;proto=https", 'for="[2001:db8::1]:4711"', 'For="198.51.100.7:4711";by=10.0.0.1', "for=192.0.2.5")
    for forwarded in visitors:
        assert (await client.get("/ask", params={"q": "python"}, headers={"Forwarded": forwarded})).status == 200
    # several elements and lines are one list: the last one that is no trusted proxy is the visitor's
    for forged in ("for=198.51.100.1", "for=198.51.100.2, for=198.51.100.3"):
        headers = CIMultiDict([("Forwarded", forged), ("Forwarded", "for=203.0.113.1, for=127.0.0.1")])
        assert (await client.get("/ask", params={"q": "python"}, headers=headers)).status == 429
    assert (await client.get("/ask", params={"q": "python"}, headers={"Forwarded": "for=2001:db8::99"})).status == 200  # unquoted: garbage, the peer
    assert len(client.server.app[LIMITER]) == 5


async def test_a_forwarded_header_that_names_another_client_buys_no_new_bucket(start_clocked):
    """nginx overwrites X-Forwarded-For but passes a visitor's own `Forwarded` on, and a proxy that
    writes only Forwarded passes X-Forwarded-For on: when the two name different clients, one is
    the visitor's to choose, so neither is believed and a fresh one a question gets no fresh bucket."""
    client = await start_clocked(Clock(), rate_per_minute=1, rate_burst=1)
    for n in range(3):
        headers = {"X-Forwarded-For": "203.0.113.1", "Forwarded": f"for=198.51.100.{n}"}
        assert (await client.get("/ask", params={"q": "python"}, headers=headers)).status == (200 if n == 0 else 429)
        headers = {"X-Forwarded-For": f"198.51.100.{n}", "Forwarded": "for=203.0.113.2"}
        assert (await client.get("/ask", params={"q": "python"}, headers=headers)).status == 429
    # a proxy that writes both, in agreement: the visitor's bucket; an obfuscated `for` says nothing
    for n, forwarded in enumerate(('for="203.0.113.3:4711"', "for=_hidden", "proto=https")):
        headers = {"X-Forwarded-For": "203.0.113.3", "Forwarded": forwarded}
        assert (await client.get("/ask", params={"q": "python"}, headers=headers)).status == (200 if n == 0 else 429)
    assert (await client.get("/ask", params={"q": "python"}, headers={"X-Forwarded-For": "203.0.113.1"})).status == 200


async def test_forwarded_from_a_peer_not_trusted_is_said_once_in_the_log(start_clocked, caplog):
    caplog.set_level(logging.WARNING, logger="grasbot")
    client = await start_clocked(Clock(), trusted_proxies="10.9.9.9")
    for visitor in ("203.0.113.1", "203.0.113.2"):
        assert (await client.get("/ask", params={"q": "python"}, headers={"Forwarded": f"for={visitor}"})).status == 200
    said = [r.getMessage() for r in caplog.records if "Forwarded" in r.getMessage()]
    assert said == [
        "Forwarded venu de 127.0.0.1 est ignoré, car ce n'est pas un proxy de confiance (GRASBOT_TRUSTED_PROXIES : 10.9.9.9) : "
        "la limite de débit compte tous ceux qu'il relaie comme un seul client ; si c'est votre proxy inverse, ajoutez-le à cette liste"
    ]
    assert len(client.server.app[LIMITER]) == 1


async def test_a_visitor_routed_an_ipv6_48_gets_no_fresh_bucket_for_each_64(start_clocked):
    """An IPv6 visitor counts by /64, and one home or server may be routed a /48: 65,536 /64s, a
    full bucket for each question. The /48 has its bucket too (GRASBOT_RATE_NETWORK_*); another
    /48, and IPv4 visitors, keep their own."""
    clock = Clock()
    limits = {"rate_per_minute": 1, "rate_burst": 1, "rate_network_per_minute": 3, "rate_network_burst": 3}
    client = await start_clocked(clock, **limits)

    async def ask(address: str) -> aiohttp.ClientResponse:
        return await client.get("/ask", params={"q": "python"}, headers={"X-Forwarded-For": address})

    statuses = [(await ask(f"2001:db8:1:{n:x}::1")).status for n in range(6)]
    assert statuses == [200, 200, 200, 429, 429, 429]
    refused = await ask("2001:db8:1:ffff::1")
    assert refused.status == 429 and refused.headers["Retry-After"] == "20"  # the /48's next token: 3 a minute
    assert (await ask("2001:db8:2::1")).status == 200  # another /48
    assert [(await ask(f"198.51.100.{n}")).status for n in range(10)] == [200] * 10  # no such bucket for IPv4
    # a /64 refused by its /48 spent nothing of its own: once the /48 has a token, it asks
    clock.now += 20
    assert (await ask("2001:db8:1:10::1")).status == 200
    assert (await ask("2001:db8:1:11::1")).status == 429
    # over JSON-RPC too: the same buckets
    answer = await rpc(client, "search", {"q": "python"}, headers={"X-Forwarded-For": "2001:db8:1:12::1"})
    assert answer["error"] == {
        "code": -32002,
        "message": "Rate limited",
        "data": {"retry_after": 20, "reason": "Trop de questions à la suite : réessayez dans 20 s."},
    }


def test_the_network_limit_is_configured_like_the_visitors():
    settings = Settings.load({"GRASBOT_RATE_NETWORK_PER_MINUTE": "50", "GRASBOT_RATE_NETWORK_BURST": "10"})
    assert (settings.rate_network_per_minute, settings.rate_network_burst) == (50.0, 10)
    assert (Settings.load({}).rate_network_per_minute, Settings.load({}).rate_network_burst) == (100.0, 25)
    with pytest.raises(ConfigError, match="GRASBOT_RATE_NETWORK_BURST doit valoir au moins 1, pas 0"):
        Settings.load({"GRASBOT_RATE_NETWORK_BURST": "0"})
    with pytest.raises(ConfigError, match="GRASBOT_RATE_NETWORK_PER_MINUTE doit être positif, pas -1.0"):
        Settings.load({"GRASBOT_RATE_NETWORK_PER_MINUTE": "-1"})


async def test_a_proxy_on_another_loopback_address_is_trusted_by_default(start_clocked):
    """nginx that reaches the daemon from 127.0.1.1 (Debian's /etc/hosts name for the machine,
    or `proxy_bind`) is as local as 127.0.0.1: any process of the machine may use either. Left
    untrusted by default, every visitor it forwarded was one client, all refused after the burst."""
    client = await start_clocked(Clock(), rate_per_minute=1, rate_burst=1)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=("127.0.1.1", 0))) as session:
        for visitor in ("203.0.113.1", "203.0.113.2", "203.0.113.3"):
            async with session.get(client.make_url("/ask"), params={"q": "python"}, headers={"X-Forwarded-For": visitor}) as resp:
                assert resp.status == 200
        async with session.get(client.make_url("/ask"), params={"q": "python"}, headers={"X-Forwarded-For": "203.0.113.1"}) as resp:
            assert resp.status == 429
    assert len(client.server.app[LIMITER]) == 3


async def test_a_question_too_long_for_aiohttps_request_line_gets_the_daemons_french_error(start_daemon):
    """A question far over GRASBOT_MAX_QUESTION, percent-encoded past aiohttp's 8,190-byte request
    line (« é » is 6 bytes so), was aiohttp's bare English `400 Bad Request` (« Got more than 8190
    bytes when reading ») in plain text: the request line is read up to what a body may be, so the
    daemon's own check answers it in French and in JSON, on both endpoints."""
    client = await start_daemon()
    question = "é" * 3000  # 18,000 bytes encoded: between aiohttp's line limit and GRASBOT_MAX_QUESTION's
    said = {"reason": "`q` : doit compter au plus 500 caractères (longueur reçue : 3000)", "param": "q", "max_question": 500}
    for path in ("/ask", "/ask/stream"):
        resp = await client.get(path, params={"q": question})
        assert resp.status == 400 and resp.content_type == "application/json", await resp.text()
        assert await resp.json() == {"error": {"code": -32602, "message": "Invalid params", "data": said}}
    # a history past the line too, within the daemon's limits but one
    history = [{"role": "user", "content": "é" * 2001}]
    resp = await client.get("/ask", params={"q": "jardin", "history": json.dumps(history, ensure_ascii=False)})
    assert resp.status == 400 and (await resp.json())["error"]["data"]["max_turn"] == 2000
    # past GRASBOT_MAX_BODY the parser still refuses the line, before the daemon reads it
    resp = await client.get("/ask", params={"q": "a" * (64 * 1024)})
    assert resp.status == 400 and "Got more than 65536 bytes" in await resp.text()
    assert (await client.get("/health")).status == 200  # still serving
