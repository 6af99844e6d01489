"""LLMClient against the stand-in Ollama, through the real `ollama` client."""

from __future__ import annotations

import asyncio
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grasbot._exceptions import LLMFailed, LLMTimeout, LLMUnavailable
from grasbot.answer.llm import LLMClient, ThinkStripper, strip_think
from grasbot.answer.prompt import CUT_ANSWER
from support.standin_ollama import unused_url

MESSAGES = [
    {"role": "system", "content": "Tu es GrasBot. Réponds en français."},
    {"role": "user", "content": "Qu'est-ce qu'un lipide ?"},
]
# Guard against a hang when a test waits for something that never comes; not a speed check.
HANG_GUARD = 10


@pytest.fixture
async def llm(standin_ollama):
    client = LLMClient(standin_ollama.url, timeout=5.0)
    yield client
    await client.aclose()


async def collect(client: LLMClient, messages=MESSAGES) -> list[str]:
    return [piece async for piece in client.stream(messages)]


# -- what reaches Ollama --------------------------------------------------------------------


async def test_generate_request_body(standin_ollama, llm):
    await llm.generate(MESSAGES)
    (body,) = standin_ollama.requests
    assert body["model"] == "qwen3:8b"
    assert body["messages"] == MESSAGES
    assert body["stream"] is False
    assert body["think"] is False
    assert body["options"] == {"temperature": 0.4, "num_predict": 400, "num_ctx": 8192}
    assert body["keep_alive"] == "30m"


async def test_stream_request_body_and_settings(standin_ollama):
    client = LLMClient(standin_ollama.url, model="qwen3:8b", temperature=0.1, keep_alive="5m")
    try:
        await collect(client)
    finally:
        await client.aclose()
    (body,) = standin_ollama.requests
    assert body["stream"] is True
    assert body["think"] is False
    assert body["messages"] == MESSAGES
    assert body["options"] == {"temperature": 0.1, "num_predict": 400, "num_ctx": 8192}
    assert body["keep_alive"] == "5m"


@pytest.mark.parametrize("given, sent", [("-1", -1), ("300", 300), ("1h30m", "1h30m")])
async def test_keep_alive_in_seconds_goes_as_a_number(standin_ollama, given, sent):
    """Ollama reads a string with Go's ParseDuration: "-1" (keep the model loaded) has no unit."""
    client = LLMClient(standin_ollama.url, keep_alive=given)
    try:
        await collect(client)
    finally:
        await client.aclose()
    (body,) = standin_ollama.requests
    assert body["keep_alive"] == sent and isinstance(body["keep_alive"], str) is isinstance(sent, str)  # the client sends -1.0


# -- answers ----------------------------------------------------------------------------------


async def test_generate_returns_the_text(standin_ollama, llm):
    standin_ollama.script("  Un lipide est une graisse.\n", chunks=4)
    assert await llm.generate(MESSAGES) == "Un lipide est une graisse."


async def test_stream_yields_every_piece_in_order(standin_ollama, llm):
    llm.orphan_holdback = 0  # no window: each chunk comes out as it is
    standin_ollama.script(pieces=["Un ", "lipide ", "est ", "une graisse."])
    assert await collect(llm) == ["Un ", "lipide ", "est ", "une graisse."]


async def test_stream_skips_empty_pieces(standin_ollama, llm):
    llm.orphan_holdback = 0
    standin_ollama.script(pieces=["", "Oui", "", " merci"])
    assert await collect(llm) == ["Oui", " merci"]


async def test_first_piece_arrives_before_the_server_finishes(standin_ollama, llm):
    # The first chunk is longer than the orphan window, so nothing has to wait for more.
    first = "Les lipides sont des molécules " * (llm.orphan_holdback // 20 + 1)
    standin_ollama.script(pieces=[first, "hydrophobes", "."], hold_after=1)
    stream = llm.stream(MESSAGES)
    piece = await asyncio.wait_for(stream.__anext__(), HANG_GUARD)
    # The server is parked after chunk 0 until released: a client that collected the whole
    # reply first would never have returned a piece.
    assert piece == first
    assert standin_ollama.events == [("chunk", 0)]
    standin_ollama.release()
    rest = [p async for p in stream]
    assert "".join(rest) == "hydrophobes."
    assert standin_ollama.events[-1] == ("done", None)


async def test_consumer_stopping_early_closes_the_connection(standin_ollama, llm):
    llm.orphan_holdback = 0
    standin_ollama.script(pieces=["a", "b", "c"], hold_after=1)
    stream = llm.stream(MESSAGES)
    assert await asyncio.wait_for(stream.__anext__(), HANG_GUARD) == "a"
    await stream.aclose()
    standin_ollama.release()

    async def server_sees_disconnect():
        while not any(kind == "disconnected" for kind, _ in standin_ollama.events):
            await asyncio.sleep(0.01)

    await asyncio.wait_for(server_sees_disconnect(), HANG_GUARD)
    assert ("done", None) not in standin_ollama.events
    standin_ollama.script("encore")
    assert await llm.generate(MESSAGES) == "encore"


async def test_an_emoji_joined_across_two_pieces_is_streamed_joined(standin_ollama, llm):
    """A zero-width joiner that ends a piece is held until the next says what it joins: two
    emoji, kept (« 👩‍💻 »), as `generate` keeps them; two letters, dropped."""
    said = ["Bienvenue \U0001f469\u200d", "\U0001f4bb au jardin, ev\u200d", "il.com"]
    standin_ollama.script(pieces=said)
    assert "".join(await collect(llm)) == "Bienvenue \U0001f469\u200d\U0001f4bb au jardin, evil.com"
    standin_ollama.script("".join(said))
    assert await llm.generate(MESSAGES) == "Bienvenue \U0001f469\u200d\U0001f4bb au jardin, evil.com"


# -- reasoning leaked into the content --------------------------------------------------------


async def test_generate_strips_a_leaked_think_block(standin_ollama, llm):
    standin_ollama.script("Un lipide est une graisse.", mode="think")
    assert await llm.generate(MESSAGES) == "Un lipide est une graisse."


async def test_stream_strips_a_leaked_think_block(standin_ollama, llm):
    standin_ollama.script("Un lipide est une graisse.", mode="think", chunks=7)
    pieces = await collect(llm)
    assert "".join(pieces) == "Un lipide est une graisse."
    assert all("think" not in p for p in pieces)


SPLIT_TAGS = ["<th", "ink>je ré", "fléchis</thi", "nk>\n\nOui, ", "c'est <", "b>gras</b>."]


async def test_stream_strips_think_tags_split_across_chunks(standin_ollama, llm):
    standin_ollama.script(pieces=SPLIT_TAGS)
    assert "".join(await collect(llm)) == "Oui, c'est <b>gras</b>."


async def test_generate_strips_think_tags_that_were_split(standin_ollama, llm):
    standin_ollama.script(pieces=SPLIT_TAGS)
    assert await llm.generate(MESSAGES) == "Oui, c'est <b>gras</b>."


@pytest.mark.parametrize(
    "pieces",
    [
        ["\n\n", "</think>", "\n\nOui."],
        ["Je dois répondre.", "</thi", "nk>Oui."],
        ["Je dois répondre.</think>Oui."],
    ],
)
async def test_orphan_closing_tag_drops_what_came_before(standin_ollama, llm, pieces):
    standin_ollama.script(pieces=pieces)
    assert "".join(await collect(llm)) == "Oui."
    assert await llm.generate(MESSAGES) == "Oui."


async def test_late_orphan_past_the_window_never_shows_the_tag(standin_ollama, llm):
    llm.orphan_holdback = 0
    standin_ollama.script(pieces=["Réflexion.", " Suite</think>", "Oui."])
    pieces = await collect(llm)
    # Known limit: what was already yielded stays; only the tag is kept out. The whole-text
    # path sees the orphan and drops everything before it.
    assert pieces == ["Réflexion.", " Suite", "Oui."]
    assert await llm.generate(MESSAGES) == "Oui."


async def test_unclosed_think_block_yields_nothing(standin_ollama, llm):
    standin_ollama.script(pieces=["<think>je réfléchis", " encore"])
    assert await collect(llm) == []
    assert await llm.generate(MESSAGES) == ""


def test_strip_think_cases():
    assert strip_think("Oui.") == "Oui."
    assert strip_think("<think>\n\n</think>\n\nOui.") == "Oui."
    assert strip_think("A <think>x</think>B<think>y</think> C") == "A B C"
    assert strip_think("blabla</think>  Oui.") == "Oui."
    assert strip_think("<think>x</think>Oui</think>, merci") == "Oui, merci"
    assert strip_think("a < b et c </ d") == "a < b et c </ d"
    assert strip_think("fin <thi") == "fin <thi"


TOKENS = st.sampled_from(["<think>", "</think>", "Oui", " ", "\n", "é", "<", "</", "th", "ink>"])


def _stream_through(text: str, cuts: list[int], holdback: int) -> str:
    stripper = ThinkStripper(holdback)
    bounds = [0, *sorted(c % (len(text) + 1) for c in cuts), len(text)]
    out = "".join(stripper.feed(text[a:b]) for a, b in itertools.pairwise(bounds))
    return (out + stripper.finish()).strip()


@settings(max_examples=300, deadline=None)
@given(st.lists(TOKENS, max_size=12).map("".join), st.lists(st.integers(0, 10_000), max_size=6))
def test_chunking_never_changes_the_result(text, cuts):
    # A window wider than the text: streaming must then agree exactly with the whole text.
    assert _stream_through(text, cuts, holdback=len(text) + 1) == strip_think(text)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["<think>", "</think>", "Oui", " ", "<", "th"]), max_size=12)
    .map("".join)
    .filter(lambda t: "</think>" not in t.split("<think>")[0]),
    st.lists(st.integers(0, 10_000), max_size=6),
)
def test_without_orphans_no_window_is_needed(text, cuts):
    assert _stream_through(text, cuts, holdback=0) == strip_think(text)


# -- failures ---------------------------------------------------------------------------------


async def test_unknown_model_is_llm_unavailable_with_ollama_text(standin_ollama):
    """A host without the model cannot serve it, as one that cannot be reached: the next is tried."""
    client = LLMClient(standin_ollama.url, model="mistral:7b")
    try:
        for call in (client.generate(MESSAGES), collect(client)):
            with pytest.raises(LLMUnavailable) as info:
                await call
            message = str(info.value)
            assert 'model "mistral:7b" not found, try pulling it first' in message
            assert "ollama pull mistral:7b" in message
            assert standin_ollama.url in message and "OLLAMA_HOST" in message
    finally:
        await client.aclose()


async def test_http_500_is_llm_failed(standin_ollama, llm):
    standin_ollama.script(mode="http_500", error="llama runner process has terminated")
    for call in (llm.generate(MESSAGES), collect(llm)):
        with pytest.raises(LLMFailed, match="HTTP 500.*llama runner process has terminated"):
            await call


async def test_error_line_mid_stream_is_llm_failed(standin_ollama, llm):
    llm.orphan_holdback = 0
    standin_ollama.script(pieces=["Un ", "lipide"], mode="error_line", error_after=1, error="model runner crashed")
    got = []
    with pytest.raises(LLMFailed, match="model runner crashed") as info:
        async for piece in llm.stream(MESSAGES):
            got.append(piece)
    assert got == ["Un "]
    assert "qwen3:8b" in str(info.value)


async def test_dropped_connection_mid_stream_is_llm_unavailable(standin_ollama, llm):
    llm.orphan_holdback = 0
    standin_ollama.script(pieces=["Un ", "lipide ", "est"], mode="drop", drop_after=2)
    got = []
    with pytest.raises(LLMUnavailable, match="a été coupée") as info:
        async for piece in llm.stream(MESSAGES):
            got.append(piece)
    assert got == ["Un ", "lipide "]
    assert "OLLAMA_HOST" in str(info.value)


async def test_connection_dropped_before_the_reply_is_llm_unavailable(standin_ollama, llm):
    standin_ollama.script(pieces=["Un ", "lipide"], mode="drop", drop_after=0)
    with pytest.raises(LLMUnavailable):
        await collect(llm)


async def test_a_host_that_never_accepts_the_connection_is_unavailable_not_slow():
    """A full accept queue (a machine down behind a firewall behaves alike): the connection is
    never opened. It was an LLMTimeout after the whole LLM_TIMEOUT, and the host was never
    skipped, so every other question waited for it while another host sat idle."""
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    fillers = []
    try:
        for _ in range(16):  # fill the accept queue: the next connection is never answered
            filler = socket.socket()
            filler.setblocking(False)
            filler.connect_ex(server.getsockname())
            fillers.append(filler)
        client = LLMClient(f"http://127.0.0.1:{server.getsockname()[1]}", timeout=30.0)
        client.connect_timeout = 0.5
        started = asyncio.get_running_loop().time()
        with pytest.raises(LLMUnavailable, match=r"^Impossible de joindre Ollama sur .* en 0.5 s : cette machine est-elle allumée"):
            await client.generate(MESSAGES)
        assert asyncio.get_running_loop().time() - started < 10
    finally:
        for filler in fillers:
            filler.close()
        server.close()


async def test_malformed_payload_is_llm_failed(standin_ollama, llm):
    # A chunk without `message` fails the ollama client's validation.
    standin_ollama.script(pieces=["x"])
    original = standin_ollama._line

    async def broken_line(response, obj):
        obj.pop("message", None)
        await original(response, obj)

    standin_ollama._line = broken_line
    with pytest.raises(LLMFailed, match="ne sait pas lire"):
        await collect(llm)


async def test_slow_first_chunk_is_llm_timeout(standin_ollama):
    standin_ollama.script("Oui", first_delay=30)
    client = LLMClient(standin_ollama.url, timeout=0.2)
    try:
        for call in (client.generate(MESSAGES), collect(client)):
            with pytest.raises(LLMTimeout) as info:
                await asyncio.wait_for(call, HANG_GUARD)
            assert "0.2 s" in str(info.value) and "qwen3:8b" in str(info.value)
    finally:
        await client.aclose()


async def test_stall_between_chunks_is_llm_timeout(standin_ollama):
    standin_ollama.script(pieces=["Un lipide", " est"], chunk_delay=30)
    client = LLMClient(standin_ollama.url, timeout=0.2)
    client.orphan_holdback = 0
    got = []
    try:
        with pytest.raises(LLMTimeout):
            async for piece in client.stream(MESSAGES):
                got.append(piece)
    finally:
        await client.aclose()
    assert got == ["Un lipide"]


async def test_slow_but_within_timeout_still_answers(standin_ollama, llm):
    standin_ollama.script(pieces=["Oui", "."], first_delay=0.05, chunk_delay=0.05)
    assert "".join(await collect(llm)) == "Oui."


async def test_nothing_listening_is_llm_unavailable():
    url = unused_url()
    client = LLMClient(url, timeout=5.0)
    try:
        for call in (client.generate(MESSAGES), collect(client)):
            with pytest.raises(LLMUnavailable) as info:
                await call
            assert url in str(info.value) and "OLLAMA_HOST" in str(info.value)
    finally:
        await client.aclose()


async def test_host_falls_back_to_ollama_host(monkeypatch, standin_ollama):
    monkeypatch.setenv("OLLAMA_HOST", standin_ollama.url)
    client = LLMClient(None)
    try:
        assert client.host == standin_ollama.url
        assert await client.generate(MESSAGES) == "Bonjour, je suis GrasBot."
    finally:
        await client.aclose()


# -- reachable --------------------------------------------------------------------------------


async def test_reachable_true_against_the_standin(standin_ollama, llm):
    assert await llm.reachable() is True
    assert ("GET", "/api/tags") in standin_ollama.hits


async def test_reachable_does_not_count_the_import_of_ollama(standin_ollama, llm, monkeypatch):
    """A daemon's first /health imports the ollama package (seconds on a cold start, or waiting
    for the server's worker that imports it): a host that answers at once is reachable."""
    import time

    from grasbot.answer import llm as module

    imported = module.load_ollama

    def slow_import():
        time.sleep(0.3)
        return imported()

    monkeypatch.setattr(module, "load_ollama", slow_import)
    llm.reachable_timeout = 0.1
    assert await llm.reachable() is True
    assert ("GET", "/api/tags") in standin_ollama.hits


async def test_reachable_false_when_nothing_listens():
    client = LLMClient(unused_url())
    try:
        assert await client.reachable() is False
    finally:
        await client.aclose()


async def test_reachable_false_when_the_server_errors(standin_ollama, llm):
    standin_ollama.broken = True
    assert await llm.reachable() is False


# -- the stand-in itself ----------------------------------------------------------------------


async def test_standin_speaks_the_protocol(standin_ollama):
    import json

    import aiohttp

    standin_ollama.script("abcdef", chunks=3)
    async with aiohttp.ClientSession() as session:
        async with session.post(
            f"{standin_ollama.url}/api/chat",
            json={"model": "qwen3:8b", "messages": MESSAGES, "stream": True},
        ) as r:
            assert r.headers["Content-Type"].startswith("application/x-ndjson")
            lines = [json.loads(line) for line in (await r.text()).splitlines()]
        async with session.get(f"{standin_ollama.url}/api/version") as r:
            assert (await r.json())["version"]
    assert [line["message"]["content"] for line in lines] == ["ab", "cd", "ef", ""]
    assert all(line["done"] is False for line in lines[:-1])
    final = lines[-1]
    assert final["done"] is True and final["done_reason"] == "stop"
    for counter in ("total_duration", "load_duration", "prompt_eval_count", "prompt_eval_duration", "eval_count", "eval_duration"):
        assert isinstance(final[counter], int)


def test_ollama_is_imported_only_when_a_call_needs_it():
    """The ollama package (with pydantic and httpx) costs a third of a daemon's start:
    importing GrasBot, building its app and making a client import none of it; a call does."""
    import subprocess
    import sys

    code = (
        "import sys, asyncio\n"
        "import grasbot, grasbot._cli\n"
        "from grasbot import Settings, create_app\n"
        "create_app(Settings.load(env={}, question_log='off'), owner_token='t' * 32)\n"
        "from grasbot.answer.llm import LLMClient\n"
        f"client = LLMClient({unused_url()!r}, timeout=2)\n"
        "assert not {'ollama', 'pydantic', 'httpx'} & sys.modules.keys(), 'imported too early'\n"
        "assert asyncio.run(client.reachable()) is False\n"
        "assert 'ollama' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


async def test_an_answer_past_what_max_tokens_allows_is_cut_there(standin_ollama, llm, caplog):
    """An Ollama that ignores num_predict sent 5 MB answers: streamed whole, sent again in
    `done`, kept in the answer cache (1 GB at 256 of them)."""
    llm.max_tokens, llm.orphan_holdback = 10, 0  # 160 characters
    standin_ollama.script(pieces=["Un mot. " * 10] * 50, chunk_delay=0.01)  # 4,000 characters
    pieces = await collect(llm)
    assert "".join(pieces) == ("Un mot. " * 500)[:160] + CUT_ANSWER  # the visitor reads that it was cut
    assert "a envoyé une réponse de plus de 160 caractères, plus que LLM_MAX_TOKENS (10) ne le permet : coupée là" in caplog.text
    await asyncio.sleep(0.2)
    assert len([kind for kind, _ in standin_ollama.events if kind == "chunk"]) < 10  # the rest was never asked for
    assert await llm.generate(MESSAGES) == ("Un mot. " * 500)[:160] + CUT_ANSWER


async def test_an_answer_ollama_stopped_at_max_tokens_says_it_was_cut(standin_ollama, llm):
    """Ollama stops the model at num_predict (done_reason "length"): the answer broke off
    mid-word, « … rédige la répo », and the visitor read it as the whole answer."""
    standin_ollama.script(pieces=["Le modèle rédige ", "la répo"], done_reason="length")
    assert "".join(await collect(llm)) == "Le modèle rédige la répo" + CUT_ANSWER
    assert await llm.generate(MESSAGES) == "Le modèle rédige la répo" + CUT_ANSWER
    standin_ollama.script(pieces=["<think>je réfléchis encore"], done_reason="length")
    assert await collect(llm) == [] and await llm.generate(MESSAGES) == ""  # nothing said: the fallback answers
    standin_ollama.script(pieces=["Le modèle rédige ", "la réponse."])
    assert "".join(await collect(llm)) == await llm.generate(MESSAGES) == "Le modèle rédige la réponse."
