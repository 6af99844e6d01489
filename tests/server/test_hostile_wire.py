"""A hostile wire (issue #18): requests Python can parse but no answer could carry, an LLM that
reasons aloud or never stops, and clients that never finish sending. One bad request must
never change how the daemon treats the next one."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grasbot._exceptions import LLMTimeout
from grasbot.answer.fallback import UNUSED_INTRO
from grasbot.answer.llm import LLMClient, ThinkStripper, strip_think
from grasbot.server.protocol import dumps
from support.bots import OWNER, OWNER_TOKEN, bot_of, rpc_raw, sse_events

MESSAGES = [{"role": "user", "content": "Bonjour"}]
QUICK = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


# ---------------------------------------------------------------- numbers and text no answer can carry

HUGE = ["1e400", "-1e400", "1.5E+309", "-0.1e99999", "123456789e999", "9" * 400, "-" + "9" * 5000]  # integers too: 5,000 digits were a bare parse error


@pytest.mark.parametrize("huge", HUGE)
@pytest.mark.parametrize("where", ["top_k", "id", "batch-id", "unknown-param"])
async def test_numbers_beyond_a_double_are_a_parse_error_not_a_500(start_daemon, huge, where):
    client = await start_daemon()
    body = {
        "top_k": f'{{"jsonrpc": "2.0", "method": "search", "params": {{"q": "python", "top_k": {huge}}}, "id": 1}}',
        "id": f'{{"jsonrpc": "2.0", "method": "search", "params": {{"q": "python"}}, "id": {huge}}}',
        "batch-id": f'[{{"jsonrpc": "2.0", "method": "search", "params": {{"q": "python"}}, "id": {huge}}}]',
        "unknown-param": f'{{"jsonrpc": "2.0", "method": "health", "params": {{"x": [{huge}]}}, "id": 2}}',
    }[where]
    resp = await client.post("/rpc", data=body.encode(), headers={"Content-Type": "application/json"})
    assert resp.status == 200
    answer = await resp.json()
    assert answer["error"]["code"] == -32700 and "dépasse ce qu'un double peut représenter" in answer["error"]["data"]
    status, ok = await rpc_raw(client, {"jsonrpc": "2.0", "method": "search", "params": {"q": "python"}, "id": 3})
    assert ok["result"]["results"]  # the next request is served as ever


async def test_a_history_nested_too_deep_says_so(start_daemon):
    """A history of 1,200 nested lists (a URL of 7 KB, under nginx's limit) was refused as « doit
    être une liste JSON d'échanges », which it is, too deep for the parser: now said."""
    client = await start_daemon()
    resp = await client.get("/ask", params={"q": "python", "history": "[" * 1200 + "]" * 1200})
    assert resp.status == 400
    assert (await resp.json())["error"]["data"].startswith("`history` : le JSON est imbriqué trop profondément pour être lu")


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
async def test_nan_and_infinity_are_a_parse_error_that_says_so(start_daemon, constant):
    client = await start_daemon()
    body = f'{{"jsonrpc": "2.0", "method": "search", "params": {{"q": "python", "top_k": {constant}}}, "id": 1}}'
    answer = await (await client.post("/rpc", data=body.encode(), headers={"Content-Type": "application/json"})).json()
    assert answer["error"]["code"] == -32700 and answer["error"]["data"] == f"{constant} n'est pas du JSON : un nombre doit être fini"
    resp = await client.get("/ask", params={"q": "python", "history": f'[{{"role": "user", "content": {constant}}}]'})
    assert resp.status == 400 and (await resp.json())["error"]["data"] == f"`history` : {constant} n'est pas du JSON : un nombre doit être fini"


async def test_a_member_given_twice_is_refused_and_named(start_daemon):
    """`{"q": "a", "q": "grasbot"}` searched « grasbot » (json.loads keeps the last one, silently),
    and a history turn's second `content` replaced its first."""
    client = await start_daemon()
    body = '{"jsonrpc": "2.0", "method": "search", "params": {"q": "a", "q": "grasbot"}, "id": 1}'
    answer = await (await client.post("/rpc", data=body.encode(), headers={"Content-Type": "application/json"})).json()
    assert answer["error"] == {"code": -32700, "message": "Parse error", "data": "le membre 'q' figure deux fois dans un même objet : lequel vaut ?"}
    resp = await client.get("/ask", params={"q": "python", "history": '[{"role": "user", "content": "a", "content": "b"}]'})
    assert resp.status == 400
    assert (await resp.json())["error"]["data"] == "`history` : le membre 'content' figure deux fois dans un même objet : lequel vaut ?"
    status, ok = await rpc_raw(client, {"jsonrpc": "2.0", "method": "search", "params": {"q": "python"}, "id": 3})
    assert ok["result"]["results"]  # the next request is served as ever


async def test_huge_numbers_in_ask_history_are_named(start_daemon):
    client = await start_daemon()
    resp = await client.get("/ask", params={"q": "python", "history": '[{"role": "user", "content": 1e400}]'})
    assert resp.status == 400 and "dépasse ce qu'un double peut représenter" in (await resp.json())["error"]["data"]


SURROGATES = ["\ud800", "\udfff", "a\udc80b", "\ud83d"]  # lone halves; "\ud83d\ude00" paired is fine


@pytest.mark.parametrize("lone", SURROGATES)
async def test_lone_surrogates_are_refused_and_the_question_log_stays_on(start_daemon, tmp_path, lone):
    client = await start_daemon(question_log=str(tmp_path / "q.sqlite3"))
    log = bot_of(client).question_log
    calls = [
        ({"q": f"python {lone}"}, "q"),
        ({"q": "python", "history": [{"role": "user", "content": f"x{lone}"}]}, "history"),
    ]
    for params, name in calls:
        for method in ("search", "answer"):
            if method == "search" and "history" in params:
                continue
            body = json.dumps({"jsonrpc": "2.0", "method": method, "params": params, "id": 1})  # \ud800 escapes
            resp = await client.post("/rpc", data=body.encode(), headers={"Content-Type": "application/json"})
            answer = await resp.json()
            assert answer["error"]["code"] == -32602 and answer["error"]["data"].startswith(f"`{name}` : doit être du texte Unicode")
    # an id the daemon must echo: escaped in the answer, never a 500
    body = json.dumps({"jsonrpc": "2.0", "method": "health", "id": f"id{lone}"})
    resp = await client.post("/rpc", data=body.encode(), headers={"Content-Type": "application/json"})
    assert resp.status == 200 and json.loads(await resp.read())["id"] == f"id{lone}"
    # and the log still logs the next visitor's question
    await rpc_raw(client, {"jsonrpc": "2.0", "method": "search", "params": {"q": "python"}, "id": 2})
    assert log.enabled and log.count() == 1


@pytest.mark.parametrize("path", ["/ask", "/ask/stream"])
@pytest.mark.parametrize(
    "query, name",
    [
        ("q=python%20%ED%A0%80", "q"),  # \ud800 as UTF-8 would write it, if it could
        ("q=caf%E9", "q"),  # Latin-1
        ("q=python&history=%5B%7B%22role%22%3A%22user%22%2C%22content%22%3A%22%FF%22%7D%5D", "history"),
    ],
)
async def test_percent_encoded_bytes_that_are_not_utf8_are_refused_on_ask(start_daemon, tmp_path, path, query, name):
    """The RPC's `q: must be Unicode text`, on the site's endpoints: yarl read such bytes as
    U+FFFD, and the question was answered, and logged, as something the visitor never asked."""
    client = await start_daemon(question_log=str(tmp_path / "q.sqlite3"))
    resp = await client.get(f"{path}?{query}")
    assert resp.status == 400
    error = (await resp.json())["error"]
    assert error["code"] == -32602 and error["data"] == f"`{name}` : doit être du texte Unicode (ses octets encodés en %XX ne sont pas de l'UTF-8)"
    assert bot_of(client).question_log.count() == 0
    resp = await client.get(f"{path}?q=python%20%EF%BF%BD")  # U+FFFD itself, well encoded, is text
    assert resp.status == 200
    await resp.read()


def test_the_question_log_drops_one_question_it_cannot_store(tmp_path, bundled_bot):
    from grasbot.store.questionlog import QuestionLog

    log = QuestionLog(tmp_path / "q.sqlite3")
    result = bundled_bot.search("python")
    log.record("un \ud800 mauvais", result)
    log.record("une bonne question", result)
    log.submit("encore \udfff", result)
    log.submit("une autre", result)
    assert log.enabled and log.count() == 2
    assert [q.question for q in log.questions_ending_on(result.sources[0].slug)] == ["une autre", "une bonne question"]
    log.close()


@QUICK
@given(
    value=st.recursive(
        st.sampled_from(SURROGATES + ["ok", "é", "\U0001f600"]) | st.integers() | st.floats(allow_nan=False, allow_infinity=False),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "\ud800", "b"]), inner, max_size=3),
        max_leaves=8,
    )
)
def test_dumps_always_gives_utf8(value):
    """Whatever strings reach an answer, its text encodes: JSON's own escapes when UTF-8 cannot."""
    text = dumps(value)
    text.encode("utf-8")
    assert json.loads(text) == value


# ---------------------------------------------------------------- the LLM's reasoning

TAGS_OPEN = ["<think>", "<Think>", "<THINK>", "<thinking>", "<Thinking>", "< think>", "<think >"]
TAGS_CLOSE = ["</think>", "</Think>", "</THINK>", "</thinking>", "< /think>", "</ think>", "</think >"]
ANY_TAG = re.compile(r"<\s*/?\s*think", re.IGNORECASE)


def chunked(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]


answer_words = st.sampled_from(["Le jardin ", "partagé ", "a des ruches. ", "Voir [jardin]. ", "x < y ", "<b>gras</b> ", "\n"])
segments = st.one_of(
    answer_words,
    st.tuples(st.sampled_from(TAGS_OPEN), st.sampled_from(["je réfléchis ", "raisonnement secret "]), st.sampled_from(TAGS_CLOSE)).map("".join),
    st.sampled_from(TAGS_CLOSE),
    st.tuples(st.sampled_from(TAGS_OPEN), st.just("raisonnement jamais fermé")).map("".join),
)


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(segments, max_size=8), cuts=st.lists(st.integers(0, 500), max_size=8), holdback=st.sampled_from([0, 8, 64]))
def test_reasoning_is_stripped_alike_whole_or_in_any_chunks(parts, cuts, holdback):
    text = "".join(parts)
    whole = ThinkStripper(holdback)
    expected = whole.feed(text) + whole.finish()
    stream = ThinkStripper(holdback)
    pieces = [stream.feed(piece) for piece in chunked(text, cuts)] + [stream.finish()]
    assert "".join(pieces) == expected, (text, chunked(text, cuts))
    assert not ANY_TAG.search(expected), expected
    assert "raisonnement" not in expected and "réfléchis" not in expected
    if holdback == 64:
        assert strip_think(text) == expected.strip()


@pytest.mark.parametrize(
    "reply",
    [
        "<think>Je réfléchis longuement et je ne ferme jamais",
        "<Thinking>tout</Thinking>",
        "   \n",
        "[prive-inconnu]",
    ],
    ids=["unclosed", "only-reasoning", "blank", "only-unknown-citations"],
)
async def test_an_answer_with_nothing_left_falls_back_on_every_path(start_daemon, standin_ollama, reply):
    standin_ollama.script(reply, chunks=3)
    client = await start_daemon(ollama_url=standin_ollama.url)
    q = "Comment fonctionne GrasBot ?"
    ask = await (await client.get("/ask", params={"q": q})).json()
    stream = [e async for e in sse_events(await client.get("/ask/stream", params={"q": q}))]
    done = stream[-1]
    assert done[0] == "done"
    for payload in (ask, done[1]):
        assert payload["llm_error"] and payload["model"] is None
        assert payload["response"].startswith(f"{UNUSED_INTRO}\n")  # it answered: no « ne répond pas » to wait out
    assert ask["response"] == done[1]["response"]


@pytest.mark.parametrize("orphan_at", [10, 63, 64, 200])
async def test_an_orphan_close_tag_is_read_alike_by_ask_and_stream(start_daemon, standin_ollama, orphan_at):
    reply = ("r" * orphan_at) + "</think>Le jardin partagé a des ruches."
    standin_ollama.script(reply, chunks=7)
    client = await start_daemon(ollama_url=standin_ollama.url)
    q = "Comment fonctionne GrasBot ?"
    ask = await (await client.get("/ask", params={"q": q})).json()
    stream = [e async for e in sse_events(await client.get("/ask/stream", params={"q": q}))]
    assert stream[-1][1]["response"] == ask["response"]
    tokens = "".join(d["text"] for n, d in stream if n == "token").strip()
    assert tokens == ask["response"]
    assert "</think>" not in ask["response"]
    assert ask["response"].startswith("r") == (orphan_at >= 64)


# ---------------------------------------------------------------- the LLM's length and time


async def test_every_answer_is_bounded_in_tokens(start_daemon, standin_ollama):
    client = await start_daemon(ollama_url=standin_ollama.url, llm_max_tokens=123, answer_cache="off")  # both reach the model
    await client.get("/ask", params={"q": "Comment fonctionne GrasBot ?"})
    [e async for e in sse_events(await client.get("/ask/stream", params={"q": "Comment fonctionne GrasBot ?"}))]
    assert [body["options"]["num_predict"] for body in standin_ollama.requests] == [123, 123]


async def test_a_reply_that_never_ends_is_read_no_further_than_any_answer_takes(start_daemon, standin_ollama, caplog):
    """A host at OLLAMA_HOST that sent a line that never ends (streamed, or a whole reply that
    never closes) was read into memory until LLM_DEADLINE: 12 GB by then at loopback speed,
    for one visitor's question. Its reply is dropped past the bytes any answer takes."""
    standin_ollama.script(mode="flood")
    client = await start_daemon(ollama_url=standin_ollama.url, answer_cache="off", owner_token=OWNER_TOKEN)  # /ask asks Ollama whole

    async def ask():
        asked = await (await client.get("/ask", params={"q": "Comment fonctionne GrasBot ?"}, headers=OWNER)).json()
        events = [e async for e in sse_events(await client.get("/ask/stream", params={"q": "Quel modèle ?"}, headers=OWNER))]
        return asked, events[-1][1]

    asked, done = await asyncio.wait_for(ask(), 15)
    for answer in (asked, done):
        assert answer["model"] is None and answer["response"].startswith(("Le modèle de langue", UNUSED_INTRO)), answer
        assert "une réponse de plus de 2686976 octets" in answer["llm_error"] and "LLM_MAX_TOKENS (400)" in answer["llm_error"], answer
    status, ok = await rpc_raw(client, {"jsonrpc": "2.0", "method": "health", "id": 1})
    assert ok["result"]["status"] == "ok"


async def test_a_steady_stream_past_the_deadline_is_cut(standin_ollama):
    # Each chunk comes well within `timeout`; the whole never ends within `deadline`.
    standin_ollama.script(pieces=[f"mot{i} " for i in range(400)], chunk_delay=0.05)
    client = LLMClient(standin_ollama.url, timeout=5.0, deadline=0.6)
    client.orphan_holdback = 0
    got = []
    started = time.perf_counter()
    try:
        with pytest.raises(LLMTimeout, match="LLM_DEADLINE"):
            async for piece in client.stream(MESSAGES):
                got.append(piece)
    finally:
        await client.aclose()
    # cut at the deadline: never before it, and with a slack a loaded 2-core machine cannot
    # eat (seconds late), well before the stream's own end (400 pieces, 20 s)
    assert 0.5 < time.perf_counter() - started < 0.6 + 5
    assert 3 < len(got) < 400


async def test_a_slow_whole_answer_past_the_deadline_falls_back(start_daemon, standin_ollama):
    standin_ollama.script("Trop tard.", first_delay=30)
    client = await start_daemon(ollama_url=standin_ollama.url, owner_token=OWNER_TOKEN, llm_timeout=60.0, llm_deadline=0.5)
    started = time.perf_counter()
    answer = await (await client.get("/ask", params={"q": "Comment fonctionne GrasBot ?"}, headers=OWNER)).json()
    # given up at the deadline, with a slack a loaded 2-core machine cannot eat, long before the model's 30 s
    assert time.perf_counter() - started < 0.5 + 5
    assert "LLM_DEADLINE" in answer["llm_error"] and answer["response"].startswith("Le modèle de langue ne répond pas")


# ---------------------------------------------------------------- slow clients


async def _raw(port: int, data: bytes, wait: float) -> tuple[bytes, float]:
    """Send `data`, then read until the server closes or `wait` seconds pass."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    started = time.perf_counter()
    writer.write(data)
    await writer.drain()
    got = b""
    try:
        async with asyncio.timeout(wait):
            while chunk := await reader.read(65536):
                got += chunk
    except TimeoutError:
        got += b"<still open>"
    writer.close()
    return got, time.perf_counter() - started


async def test_a_visitor_gone_as_soon_as_asked_is_no_error(start_daemon, caplog):
    """The stream's headers could not be written to a closed connection: that was an ERROR
    with its traceback and a 500 in the access log, for anyone to cause at will."""
    caplog.set_level("INFO", logger="grasbot")
    client = await start_daemon()
    for _ in range(5):
        reader, writer = await asyncio.open_connection("127.0.0.1", client.server.port)
        writer.write(b"GET /ask/stream?q=python HTTP/1.1\r\nHost: x\r\n\r\n")
        await writer.drain()
        writer.transport.abort()
    status, ok = await rpc_raw(client, {"jsonrpc": "2.0", "method": "health", "id": 1})
    assert ok["result"]["status"] == "ok"
    await asyncio.sleep(0.5)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [r.getMessage() for r in caplog.records]
    assert not [r for r in caplog.records if r.name == "grasbot.access" and " 500 " in r.getMessage()]


async def test_headers_that_never_end_are_let_go(start_daemon):
    client = await start_daemon(header_timeout=0.5)
    port = client.server.port
    got, took = await _raw(port, b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ", 5)
    assert not got.endswith(b"<still open>") and took < 3, (got, took)
    # and a whole request on a fresh connection is served as ever
    got, _ = await _raw(port, b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 5)
    assert got.startswith(b"HTTP/1.1 200")


async def test_a_body_that_never_ends_gets_408(start_daemon):
    client = await start_daemon(body_timeout=0.5)
    port = client.server.port
    head = b"POST /rpc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n"
    got, took = await _raw(port, head + b'{"jsonrpc": "2.0", ', 5)
    assert got.startswith(b"HTTP/1.1 408") and "non reçu en 0.5 s".encode() in got, got
    assert took < 3 and not got.endswith(b"<still open>")
    status, ok = await rpc_raw(client, {"jsonrpc": "2.0", "method": "health", "id": 1})
    assert ok["result"]["status"] == "ok"


async def test_expect_100_continue_is_refused_before_a_body_over_the_limit(start_daemon):
    client = await start_daemon(max_body=1024)
    port = client.server.port
    head = "POST /rpc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nExpect: {}\r\n\r\n"
    got, _ = await _raw(port, head.format(5000, "100-continue").encode(), 3)  # the client waits for its 100, sends nothing
    assert got.startswith(b"HTTP/1.1 413") and b"100 Continue" not in got and "dépasse la limite de 1024 octets".encode() in got, got
    assert not got.endswith(b"<still open>")
    body = json.dumps({"jsonrpc": "2.0", "method": "health", "id": 1}).encode()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)  # a body within the limit gets its 100, then its answer
    writer.write(head.format(len(body), "100-continue").encode())
    assert await reader.readuntil(b"\r\n\r\n") == b"HTTP/1.1 100 Continue\r\n\r\n"
    writer.write(body)
    assert (await reader.readline()).startswith(b"HTTP/1.1 200")
    writer.close()
    got, _ = await _raw(port, head.format(len(body), "cookies").encode() + body, 3)
    assert got.startswith(b"HTTP/1.1 417") and b"Expect: 'cookies' n'est pas compris" in got, got
    status, ok = await rpc_raw(client, {"jsonrpc": "2.0", "method": "health", "id": 1})
    assert ok["result"]["status"] == "ok"


async def test_an_expectation_not_understood_is_a_json_417_on_every_route(start_daemon, caplog):
    """aiohttp answers an `Expect` it cannot meet before any middleware, in plain text
    (« Unknown Expect: foo »): a client decoding the daemon's JSON errors read no JSON."""
    caplog.set_level("INFO", logger="grasbot.access")
    client = await start_daemon()
    routes = {(r.method, r.resource.canonical) for r in client.app.router.routes() if r.method not in ("HEAD", "*") and r.resource is not None}
    assert {("GET", "/ask"), ("GET", "/ask/stream"), ("GET", "/health"), ("GET", "/"), ("POST", "/reload-vault")} <= routes
    # and what no route takes: a path that is none, a method an endpoint does not take (HEAD and
    # OPTIONS included), which aiohttp's router answered with its own plain-text 417
    refused = {("GET", "/nulle-part"), ("OPTIONS", "/nulle-part"), ("POST", "/ask"), ("HEAD", "/ask"), ("OPTIONS", "/ask"), ("PUT", "/rpc"), ("DELETE", "/")}
    for method, path in sorted((routes - {("POST", "/rpc")}) | refused):  # /rpc's is its JSON-RPC error: above
        resp = await client.request(method, path, headers={"Expect": "foo"})
        assert resp.status == 417 and resp.headers["Content-Type"] == "application/json; charset=utf-8", (method, path)
        if method == "HEAD":
            continue
        error = {"code": -32600, "message": "Invalid Request", "data": "Expect: 'foo' n'est pas compris : seul 100-continue l'est"}
        assert await resp.json() == {"error": error}, (method, path)
        assert resp.headers["Cache-Control"] == "no-store" and resp.headers["X-Content-Type-Options"] == "nosniff"
    assert "GET /health 417 expectation refused" in caplog.text
    # 100-continue is still met, with the daemon's 100, on a route of the site as on /rpc
    got, _ = await _raw(client.server.port, b"GET /health HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n", 3)
    assert got.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200"), got


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
async def test_a_body_its_content_encoding_cannot_decode_is_named_not_a_500(start_daemon, encoding, caplog):
    client = await start_daemon()
    body = json.dumps({"jsonrpc": "2.0", "method": "health", "id": 1}).encode()  # said compressed, sent plain
    resp = await client.post("/rpc", data=body, headers={"Content-Type": "application/json", "Content-Encoding": encoding})
    assert resp.status == 400
    answer = await resp.json()
    assert answer["error"]["code"] == -32600 and answer["id"] is None
    assert answer["error"]["data"] == f"le corps de la requête ne peut pas être décodé comme son Content-Encoding ({encoding}) l'annonce"
    status, ok = await rpc_raw(client, {"jsonrpc": "2.0", "method": "health", "id": 2})
    assert ok["result"]["status"] == "ok"
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []  # answered, so no traceback


async def test_the_model_is_given_a_window_that_holds_the_whole_prompt(start_daemon, standin_ollama, caplog):
    """Ollama reads num_ctx tokens (its own default, 2,048 or 4,096, cuts a longer prompt from
    the start without a word): GrasBot sends LLM_CONTEXT at every call, and a conversation as
    long as the daemon accepts (8 turns of 2,000 characters) loses its oldest turns so that the
    rules, the notes, the question and the answer fit in it."""
    caplog.set_level(logging.INFO, logger="grasbot")
    client = await start_daemon(ollama_url=standin_ollama.url, answer_cache="off")
    turns = [{"role": role, "content": f"{role} {i} " + "mot " * 496} for i in range(4) for role in ("user", "assistant")]
    status, reply = await rpc_raw(client, {"jsonrpc": "2.0", "method": "answer", "params": {"q": "Comment fonctionne GrasBot ?", "history": turns}, "id": 1})
    assert status == 200 and reply["result"]["model"] == "qwen3:8b", reply
    (body,) = standin_ollama.requests
    settings = bot_of(client).settings
    assert body["options"]["num_ctx"] == settings.llm_context == 8192
    messages = body["messages"]
    assert sum(len(m["content"]) for m in messages) <= settings.prompt_room == (8192 - 400) * 3
    assert messages[-1]["content"].startswith("Notes de l'auteur :") and messages[-1]["content"].endswith("Question : Comment fonctionne GrasBot ?")
    kept = messages[1:-1]
    assert kept and len(kept) < len(turns) and kept == turns[len(turns) - len(kept) :]  # the newest turns, in order
    assert kept[0]["role"] == "user"
    said = [r.getMessage() for r in caplog.records if "plus anciens tours laissés de côté" in r.getMessage()]  # and the owner is told
    assert said == [f"conversation coupée pour tenir dans LLM_CONTEXT (8192 tokens) : ses {len(turns) - len(kept)} plus anciens tours laissés de côté"]


def test_the_new_bounds_are_settings_like_the_others():
    from grasbot import Settings
    from grasbot._cli import _settings, build_parser
    from grasbot._exceptions import ConfigError

    env = {"LLM_MAX_TOKENS": "200", "LLM_DEADLINE": "30", "GRASBOT_HEADER_TIMEOUT": "4", "GRASBOT_BODY_TIMEOUT": "3"}
    s = Settings.load(env=env)
    assert (s.llm_max_tokens, s.llm_deadline, s.header_timeout, s.body_timeout) == (200, 30.0, 4.0, 3.0)
    args = build_parser().parse_args(["serve", "--llm-max-tokens", "250", "--llm-deadline", "45", "--header-timeout", "2", "--body-timeout", "1"])
    s = _settings(args)
    assert (s.llm_max_tokens, s.llm_deadline, s.header_timeout, s.body_timeout) == (250, 45.0, 2.0, 1.0)
    for var, value in [("LLM_MAX_TOKENS", "0"), ("LLM_DEADLINE", "-1"), ("GRASBOT_HEADER_TIMEOUT", "0"), ("GRASBOT_BODY_TIMEOUT", "nan")]:
        with pytest.raises(ConfigError, match=var):
            Settings.load(env={var: value})
    assert Settings.load(env={"LLM_CONTEXT": "16384"}).llm_context == 16384
    assert _settings(build_parser().parse_args(["serve", "--llm-context", "32768"])).llm_context == 32768
    with pytest.raises(ConfigError, match="LLM_CONTEXT doit être entre 1024 et 262144 tokens, pas 512"):
        Settings.load(env={"LLM_CONTEXT": "512"})
    # Ollama's own default window cannot hold the default budget: said at start, with what would
    with pytest.raises(ConfigError, match=r"LLM_CONTEXT 4096 tokens ne peut pas contenir GRASBOT_PROMPT_BUDGET 12000 caractères .* montez LLM_CONTEXT à 5936"):
        Settings.load(env={"LLM_CONTEXT": "4096"})
    assert Settings.load(env={"LLM_CONTEXT": "4096", "GRASBOT_PROMPT_BUDGET": "6000"}).prompt_room == (4096 - 400) * 3


@pytest.mark.parametrize(
    "content_type, named",
    [
        ("text/plain", "text/plain"),  # an HTML form's enctype="text/plain": sent cross-site with no preflight
        ("application/x-www-form-urlencoded", "application/x-www-form-urlencoded"),  # a form's, and `curl -d`'s
        ("multipart/form-data; boundary=x", "multipart/form-data"),
        (None, "aucun Content-Type"),  # fetch() of a Blob with no type: no preflight either
        ('text/plain; x="<script>"', "text/plain"),
        # a header aiohttp cannot read is application/octet-stream to it, which the client never sent
        ("application/json, text/plain", "un Content-Type illisible"),
        ("", "un Content-Type illisible"),
        ("application/octet-stream", "application/octet-stream"),
    ],
)
async def test_a_body_that_is_not_declared_json_is_refused_before_any_method_runs(start_daemon, tmp_path, content_type, named, caplog):
    """A page on any site could POST JSON-RPC to a daemon on the visitor's machine as a form or
    plain text, which a browser sends without a CORS preflight: questions asked, logged and
    rate-limited under the visitor's name. A JSON body is what the daemon reads."""
    caplog.set_level("INFO", logger="grasbot.access")
    client = await start_daemon(question_log=str(tmp_path / "q.sqlite3"))
    body = json.dumps({"jsonrpc": "2.0", "method": "search", "params": {"q": "python"}, "id": 1}).encode()
    headers = {} if content_type is None else {"Content-Type": content_type}
    resp = await client.post("/rpc", data=body, headers=headers, skip_auto_headers=["Content-Type"])
    assert resp.status == 415
    assert await resp.json() == {
        "jsonrpc": "2.0",
        "error": {
            "code": -32600,
            "message": "Invalid Request",
            "data": f"le Content-Type doit être application/json (reçu : {named}) : le corps d'une requête JSON-RPC est du JSON",
        },
        "id": None,
    }
    assert "POST /rpc 415 not JSON" in caplog.text
    assert bot_of(client).question_log.count() == 0  # nothing was asked
    # with Expect: 100-continue it is refused before the body is sent
    declared = "" if content_type is None else f"Content-Type: {content_type}\r\n"
    head = f"POST /rpc HTTP/1.1\r\nHost: x\r\n{declared}Content-Length: {len(body)}\r\nExpect: 100-continue\r\n\r\n"
    got, _ = await _raw(client.server.port, head.encode(), 3)
    assert got.startswith(b"HTTP/1.1 415") and b"100 Continue" not in got and not got.endswith(b"<still open>"), got
    # JSON, with a charset or as a +json type, is served as ever
    for declared in ("application/json", "Application/JSON; charset=utf-8", "application/json-rpc+json", "application/json-rpc", "application/jsonrequest"):
        resp = await client.post("/rpc", data=body, headers={"Content-Type": declared})
        assert resp.status == 200 and (await resp.json())["result"]["results"], declared
