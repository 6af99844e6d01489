"""Admission control through the real daemon: slots, the queue and its bound, the maximum wait,
the owner's slot, visitors who leave, several model hosts, and what /health says of them."""

from __future__ import annotations

import asyncio
import json
import logging
import re

import pytest

from grasbot import ConfigError, Settings
from grasbot.answer.fallback import BUSY_INTRO
from grasbot.server.state import ANSWERING
from support.bots import BUNDLED_VAULT, OWNER, OWNER_TOKEN, bot_of, make_bot, sse_events
from support.standin_ollama import StandinOllama, unused_url

Q = "Comment fonctionne GrasBot ?"
FIRST_PIECE = "GrasBot cherche d'abord les notes qui répondent à la question posée, "  # past the 64-character holdback
PIECES = [FIRST_PIECE, "puis le modèle rédige la réponse [grasbot-pipeline]."]
BOUND = 15  # seconds: a hang fails the test instead of blocking the run


async def until(condition, what: str) -> None:
    async def poll():
        while not condition():
            await asyncio.sleep(0.02)

    try:
        await asyncio.wait_for(poll(), BOUND)
    except TimeoutError:
        pytest.fail(f"never happened: {what}")


class Visitor:
    """One /ask/stream, read event by event; from an address of its own unless `headers` say
    (one visitor waits for fewer answers than the model has slots: `Settings.answers_per_visitor`)."""

    count = 0

    def __init__(self, client, q: str = Q, headers: dict | None = None):
        Visitor.count += 1
        if headers is None:
            headers = {"X-Forwarded-For": f"10.{Visitor.count // 65536 % 256}.{Visitor.count // 256 % 256}.{Visitor.count % 256}"}
        self.client, self.q, self.headers = client, q, headers
        self.events: list[tuple[str, dict]] = []
        self.response = None

    async def open(self) -> Visitor:
        self.response = await self.client.get("/ask/stream", params={"q": self.q}, headers=self.headers)
        assert self.response.status == 200
        self._events = sse_events(self.response)
        return self

    async def next(self) -> tuple[str, dict]:
        event = await asyncio.wait_for(anext(self._events), BOUND)
        self.events.append(event)
        return event

    async def until(self, name: str) -> dict:
        while True:
            got, data = await self.next()
            if got == name:
                return data

    async def rest(self) -> list[tuple[str, dict]]:
        async def drain():
            async for event in self._events:
                self.events.append(event)

        await asyncio.wait_for(drain(), BOUND)
        return self.events

    def close(self) -> None:
        self.response.close()


async def start(start_daemon, ollama_url, **settings):
    settings.setdefault("answer_cache", "off")  # every question goes to the model here
    settings.setdefault("rate_per_minute", 100_000)
    settings.setdefault("rate_burst", 100_000)
    settings.setdefault("concurrent_answers", 100_000)  # the slots still bound a visitor: `Settings.answers_per_visitor`
    return await start_daemon(ollama_url=ollama_url, owner_token=OWNER_TOKEN, **settings)


def busy_said(caplog) -> list[str]:
    """Why the daemon answered from the notes alone, as its log says (the access log: « busy »)."""
    return [r.getMessage() for r in caplog.records if r.name == "grasbot.engine" and r.getMessage().startswith("réponse tirée des notes")]


async def owner_health(client) -> dict:
    return (await (await client.get("/health", headers=OWNER)).json())["generation"]


async def test_queue_positions_then_tokens_and_the_slot_is_never_exceeded(start_daemon, standin_ollama, caplog):
    caplog.set_level(logging.INFO, "grasbot.engine")
    standin_ollama.script(pieces=PIECES, hold_after=1)
    client = await start(start_daemon, standin_ollama.url, llm_slots=1, llm_queue=2, llm_max_wait=60)
    first = await Visitor(client).open()
    assert (await first.next())[0] == "sources"
    assert (await first.next())[0] == "token"  # generating, and held there
    second, third = await Visitor(client).open(), await Visitor(client).open()
    assert [await second.next() for _ in range(2)][1] == ("queue", {"position": 1})
    assert [await third.next() for _ in range(2)][1] == ("queue", {"position": 2})
    # a fourth finds the queue full: the notes' extract at once, marked busy, no queue event
    fourth = await Visitor(client).open()
    events = await fourth.rest()
    assert [n for n, _ in events] == ["sources", "done"]
    done = events[-1][1]
    assert done["busy"] is True and done["reused"] is False and done["model"] is None and "llm_error" not in done
    assert done["response"].startswith(BUSY_INTRO)
    assert busy_said(caplog) == ["réponse tirée des notes, sans le modèle : la file d'attente est pleine (LLM_QUEUE 2, LLM_MAX_WAIT 60 s)"]
    assert len(standin_ollama.requests) == 1  # only the first reached the model
    standin_ollama.release()
    for visitor in (first, second, third):
        events = await visitor.rest()
        assert events[-1][0] == "done" and events[-1][1]["busy"] is False and events[-1][1]["model"] == "qwen3:8b"
        names = [n for n, _ in events]
        assert names.index("sources") < names.index("token") and all(n != "queue" for n in names[names.index("token") :]), (
            names
        )  # queue events come after sources and before the first token
    # the third moved up once the second got the slot
    assert [d for n, d in third.events if n == "queue"] == [{"position": 2}, {"position": 1}]
    assert len(standin_ollama.requests) == 3 and standin_ollama.max_in_flight == 1


async def test_a_wait_estimated_over_the_maximum_is_busy_at_once(start_daemon, standin_ollama, caplog):
    caplog.set_level(logging.INFO, "grasbot.engine")
    standin_ollama.script(pieces=PIECES, hold_after=1)
    client = await start(start_daemon, standin_ollama.url, llm_slots=1, llm_queue=10, llm_max_wait=30)
    bot_of(client).admission.answer_seconds = 40.0  # as if answers took 40 s lately
    first = await Visitor(client).open()
    await first.until("token")
    resp = await client.get("/ask", params={"q": Q})
    payload = await resp.json()
    assert payload["busy"] is True and payload["response"].startswith(BUSY_INTRO)
    assert busy_said(caplog) == ["réponse tirée des notes, sans le modèle : environ 40 s d'attente (LLM_QUEUE 10, LLM_MAX_WAIT 30 s)"]
    assert len(standin_ollama.requests) == 1
    standin_ollama.release()
    await first.rest()


async def test_a_queued_question_waits_at_most_the_maximum(start_daemon, standin_ollama, caplog):
    caplog.set_level(logging.INFO, "grasbot.engine")
    standin_ollama.script(pieces=PIECES, hold_after=1)
    client = await start(start_daemon, standin_ollama.url, llm_slots=1, llm_queue=10, llm_max_wait=0.3)
    bot_of(client).admission.answer_seconds = 0.01  # the estimate lets it in; the wait is what ends it
    first = await Visitor(client).open()
    await first.until("token")
    second = await Visitor(client).open()
    events = await second.rest()  # the first is still held: only the wait can end this
    assert [n for n, _ in events] == ["sources", "queue", "done"]
    assert events[-1][1]["busy"] is True
    assert busy_said(caplog) == ["réponse tirée des notes, sans le modèle : une place attendue 0.3 s en vain (LLM_MAX_WAIT)"]
    assert ("done", None) not in standin_ollama.events and len(standin_ollama.requests) == 1
    assert (await owner_health(client))["queued"] == 0
    standin_ollama.release()
    await first.rest()


async def test_a_visitor_who_leaves_frees_the_queue_place_and_the_slot(start_daemon, standin_ollama, caplog):
    caplog.set_level("INFO", logger="grasbot.access")
    standin_ollama.script(pieces=PIECES, hold_after=1)
    client = await start(start_daemon, standin_ollama.url, llm_slots=1, llm_queue=5, llm_max_wait=60)
    first = await Visitor(client).open()
    await first.until("token")
    queued = await Visitor(client).open()
    assert await queued.until("queue") == {"position": 1}
    behind = await Visitor(client).open()
    assert await behind.until("queue") == {"position": 2}
    queued.close()  # leaves while queued
    assert await behind.until("queue") == {"position": 1}
    assert (await owner_health(client))["queued"] == 1
    first.close()  # leaves while generating: the Ollama request is closed, the slot goes to `behind`
    await behind.until("token")
    standin_ollama.release()
    await until(lambda: any(kind == "disconnected" for kind, _ in standin_ollama.events), "Ollama sees the first visitor go")
    events = await behind.rest()
    assert events[-1][1]["model"] == "qwen3:8b"
    # the visitor who left the queue never reached the model
    assert len(standin_ollama.requests) == 2
    generation = await owner_health(client)
    assert generation["queued"] == 0 and generation["hosts"][0]["in_use"] == 0
    # aiohttp writes no access line for a handler it cancels: each visitor who left has one
    gone = [r.getMessage() for r in caplog.records if r.name == "grasbot.access" and " 499 client gone " in r.getMessage()]
    assert len(gone) == 2 and all(line.startswith("GET /ask/stream 499 client gone ") for line in gone), gone


@pytest.mark.parametrize("answer_cache", ["off", "256"])  # the model asked whole, or through a shared generation
async def test_a_visitor_who_leaves_a_plain_ask_frees_the_slot(start_daemon, standin_ollama, answer_cache):
    standin_ollama.script(pieces=PIECES, first_delay=30)  # the model would take 30 s
    client = await start(start_daemon, standin_ollama.url, llm_slots=1, llm_queue=5, llm_max_wait=60, answer_cache=answer_cache)
    asking = asyncio.ensure_future(client.get("/ask", params={"q": Q}))
    await until(lambda: standin_ollama.in_flight == 1, "the question reaches the model")
    assert (await owner_health(client))["hosts"][0]["in_use"] == 1
    asking.cancel()  # the visitor closes the page: the connection goes
    await until(lambda: ("disconnected", None) in standin_ollama.events, "the model's request is closed")
    await until(lambda: bot_of(client).admission.hosts[0].in_use == 0, "the slot is free")
    standin_ollama.script(pieces=PIECES)
    payload = await (await client.get("/ask", params={"q": "Quel modèle utilise GrasBot ?"})).json()
    assert payload["model"] == "qwen3:8b" and payload["busy"] is False  # the next question has the slot at once
    assert len(standin_ollama.requests) == 2 and standin_ollama.max_in_flight == 1


async def test_the_owner_has_a_slot_of_their_own(start_daemon, standin_ollama):
    standin_ollama.script(pieces=PIECES, hold_after=1)
    client = await start(start_daemon, standin_ollama.url, llm_slots=1, llm_queue=0, llm_max_wait=60)
    visitor = await Visitor(client).open()
    await visitor.until("token")
    refused = await (await client.get("/ask", params={"q": Q})).json()
    assert refused["busy"] is True  # no queue at all: a visitor finds it full
    owner = await Visitor(client, headers=OWNER).open()
    await owner.until("token")  # the owner writes beside the visitor
    generation = await owner_health(client)
    assert generation["owner_in_use"] == 1 and generation["hosts"][0]["in_use"] == 2
    standin_ollama.release()
    for stream in (visitor, owner):
        done = (await stream.rest())[-1][1]
        assert done["busy"] is False and done["model"] == "qwen3:8b"
    assert standin_ollama.max_in_flight == 2  # the visitors' slot and the owner's


# ---------------------------------------------------------------- several hosts


async def test_a_question_goes_to_the_least_busy_host(start_daemon):
    async with StandinOllama() as one, StandinOllama() as two:
        for host in (one, two):
            host.script(pieces=PIECES, hold_after=1)
        client = await start(start_daemon, f"{one.url},{two.url}", llm_slots=1, llm_queue=4)
        first = await Visitor(client).open()
        await first.until("token")
        second = await Visitor(client).open()
        await second.until("token")  # not queued: the other host had a free slot
        assert len(one.requests) == 1 and len(two.requests) == 1
        third = await Visitor(client).open()
        assert await third.until("queue") == {"position": 1}
        generation = await owner_health(client)
        assert [h["in_use"] for h in generation["hosts"]] == [1, 1] and generation["queued"] == 1
        one.release()
        two.release()
        for stream in (first, second, third):
            assert (await stream.rest())[-1][1]["model"] == "qwen3:8b"
        assert one.max_in_flight == 1 and two.max_in_flight == 1


async def test_a_failed_host_is_skipped_then_tried_again(start_daemon):
    async with StandinOllama() as good:
        good.script("".join(PIECES))
        down = unused_url()
        client = await start(start_daemon, f"{down},{good.url}", llm_slots=1)
        admission = bot_of(client).admission
        payload = await (await client.get("/ask", params={"q": Q}, headers=OWNER)).json()
        # the first host could not be reached: the same question went to the second
        assert payload["model"] == "qwen3:8b" and "llm_error" not in payload and len(good.requests) == 1
        hosts = (await owner_health(client))["hosts"]
        assert [(h["url"], h["state"]) for h in hosts] == [(down, "down"), (good.url, "up")]
        # while skipped, it is not even tried (the stand-in answers the next one straight away)
        await (await client.get("/ask", params={"q": Q})).json()
        assert len(good.requests) == 2
        # the first host comes back where it was; once its time out is over it is tried again
        port = int(down.rsplit(":", 1)[1])
        async with StandinOllama(port=port) as back:
            back.script("".join(PIECES))
            admission.hosts[0].down_until = 0.0  # the skip is over
            assert (await owner_health(client))["hosts"][0]["state"] == "retrying"
            payload = await (await client.get("/ask", params={"q": Q})).json()
            assert payload["model"] == "qwen3:8b" and len(back.requests) == 1
            assert (await owner_health(client))["hosts"][0]["state"] == "up"


async def test_a_host_without_the_model_is_skipped_for_the_next(start_daemon):
    """A host whose Ollama lacks the model failed every answer sent to it (half of them, with
    two hosts), while the other host, which has it, sat idle."""
    async with StandinOllama(models=()) as bare, StandinOllama() as good:
        good.script("".join(PIECES))
        client = await start(start_daemon, f"{bare.url},{good.url}", llm_slots=1)
        for _ in range(2):
            payload = await (await client.get("/ask", params={"q": Q}, headers=OWNER)).json()
            assert payload["model"] == "qwen3:8b" and "llm_error" not in payload
        assert len(good.requests) == 2
        hosts = (await owner_health(client))["hosts"]
        assert [(h["url"], h["state"]) for h in hosts] == [(bare.url, "down"), (good.url, "up")]
        assert "ollama pull qwen3:8b" in hosts[0]["error"]


async def test_every_host_failed_gives_the_extractive_answer(start_daemon):
    hosts = f"{unused_url()},{unused_url()}"
    client = await start(start_daemon, hosts)
    for _ in range(2):  # trying each, then knowing each is down
        payload = await (await client.get("/ask", params={"q": Q}, headers=OWNER)).json()
        assert payload["model"] is None and payload["busy"] is False and "OLLAMA_HOST" in payload["llm_error"]
        assert payload["response"].startswith("Le modèle de langue ne répond pas")
    assert [h["state"] for h in (await owner_health(client))["hosts"]] == ["down", "down"]


async def test_health_names_the_hosts_to_the_owner_only(start_daemon):
    async with StandinOllama() as one, StandinOllama() as two:
        client = await start(start_daemon, f"{one.url},{two.url}", llm_slots=3)
        owner = await owner_health(client)
        assert [(h["url"], h["state"], h["slots"], h["in_use"]) for h in owner["hosts"]] == [(one.url, "up", 3, 0), (two.url, "up", 3, 0)]
        resp = await client.get("/health")
        text = await resp.text()
        visitor = json.loads(text)["generation"]
        assert [set(h) for h in visitor["hosts"]] == [{"state", "slots"}] * 2  # nor what moves as questions are answered
        for url in (one.url, two.url):
            assert url.split("//")[1] not in text
        rpc = await client.post("/rpc", json={"jsonrpc": "2.0", "method": "health", "id": 1})
        assert one.url.split("//")[1] not in await rpc.text()


# ---------------------------------------------------------------- settings


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"LLM_SLOTS": "0"}, "LLM_SLOTS doit être entre 1 et 64"),
        ({"LLM_SLOTS": "deux"}, "LLM_SLOTS : impossible d'utiliser 'deux'"),
        ({"LLM_QUEUE": "-1"}, "LLM_QUEUE doit être entre 0"),
        ({"LLM_MAX_WAIT": "-2"}, "LLM_MAX_WAIT doit être entre 0 et 3600"),
        ({"GRASBOT_ANSWER_CACHE": "beaucoup"}, "GRASBOT_ANSWER_CACHE : impossible d'utiliser 'beaucoup'"),
        ({"GRASBOT_ANSWER_CACHE": "-5"}, "GRASBOT_ANSWER_CACHE doit être un nombre de réponses"),
        ({"OLLAMA_HOST": "http://a:1,http://a:1"}, "OLLAMA_HOST nomme deux fois un même hôte"),
        ({"GRASBOT_PEERS": "ftp://x"}, "GRASBOT_PEERS : 'ftp://x' doit être l'URL http:// ou https:// d'un démon"),
        # each was taken, then every answer fell back blaming "a reply GrasBot cannot read" from Ollama
        ({"OLLAMA_HOST": "http://[::1"}, "OLLAMA_HOST : 'http://[::1' n'est pas une URL (Invalid IPv6 URL)"),
        ({"OLLAMA_HOST": "http://a:1,http://b:99999"}, "OLLAMA_HOST : 'http://b:99999' n'est pas une URL (Port out of range 0-65535)"),
        ({"OLLAMA_HOST": "ftp://x"}, "OLLAMA_HOST : 'ftp://x' doit être une URL http:// ou https://, ou hôte:port"),
        ({"GRASBOT_PEERS": "http://[::1"}, "GRASBOT_PEERS : 'http://[::1' n'est pas une URL (Invalid IPv6 URL)"),
        # named both settings, « OLLAMA_HOST et GRASBOT_PEERS », whichever of them the owner had set
        ({"OLLAMA_HOST": "http://a b"}, "OLLAMA_HOST : 'http://a b' n'est pas une URL"),
        ({"GRASBOT_PEERS": "http://a b"}, "GRASBOT_PEERS : 'http://a b' n'est pas une URL"),
    ],
)
def test_bad_settings_are_clear_errors(env, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        Settings.load(env=env)


async def test_one_ipv6_network_cannot_hold_every_slot_from_its_many_64s(start_daemon, standin_ollama):
    """A host routed a /48 asks from 65,536 /64s, each holding GRASBOT_CONCURRENT_ANSWERS: its
    /48 waits for GRASBOT_CONCURRENT_NETWORK_ANSWERS answers at most (3 here), as its rate limit
    counts it; one more from any of its /64s is refused (429, a reason that names the network,
    not questions they asked), spends nothing, and a visitor of another /48 has a slot at once."""
    standin_ollama.script(pieces=PIECES, hold_after=1)
    limits = {"concurrent_answers": 2, "concurrent_network_answers": 3, "rate_network_burst": 100, "rate_network_per_minute": 1}
    client = await start(start_daemon, standin_ollama.url, llm_slots=4, llm_max_wait=60, **limits)
    bot_of(client).admission.answer_seconds = 7.2
    held = [await Visitor(client, headers={"X-Forwarded-For": f"2001:db8:1:{n}::1"}).open() for n in (1, 2, 3)]
    for stream in held:
        await stream.until("token")
    reason = "Trop de questions venues de votre réseau sont en cours de réponse : réessayez dans un instant."
    refused = await client.get("/ask/stream", params={"q": Q}, headers={"X-Forwarded-For": "2001:db8:1:4::1"})
    assert refused.status == 429 and refused.headers["Retry-After"] == "8"
    assert await refused.json() == {"error": {"code": -32002, "message": "Rate limited", "data": {"retry_after": 8, "reason": reason}}}
    body = {"jsonrpc": "2.0", "method": "answer", "params": {"q": Q}, "id": 1}
    answer = await (await client.post("/rpc", json=body, headers={"X-Forwarded-For": "2001:db8:1:ffff::9"})).json()
    assert answer["error"]["data"] == {"retry_after": 8, "reason": reason}
    other = await Visitor(client, headers={"X-Forwarded-For": "2001:db8:2::1"}).open()  # another /48
    assert [name for name, _ in [await other.next() for _ in range(2)]] == ["sources", "token"]
    assert standin_ollama.max_in_flight == 4 and len(standin_ollama.requests) == 4
    held[0].close()  # one of its /64s leaves: the network has a place again
    await until(lambda: bot_of(client).admission.hosts[0].in_use == 3, "the slot is free")
    again = await Visitor(client, headers={"X-Forwarded-For": "2001:db8:1:4::1"}).open()
    await again.until("token")
    standin_ollama.release()
    for stream in (*held[1:], other, again):
        assert (await stream.rest())[-1][0] == "done"
    await until(lambda: len(client.server.app[ANSWERING]) == 0, "every place given back, the network's too")


def test_settings_defaults_and_forms():
    default = Settings.load(env={})
    assert (default.llm_slots, default.llm_queue, default.llm_max_wait, default.answer_cache, default.concurrent_answers) == (2, 32, 20.0, 256, 2)
    assert Settings.load(env={"GRASBOT_CONCURRENT_ANSWERS": "1"}).concurrent_answers == 1
    with pytest.raises(ConfigError, match="GRASBOT_CONCURRENT_ANSWERS doit valoir au moins 1, pas 0"):
        Settings.load(env={"GRASBOT_CONCURRENT_ANSWERS": "0"})
    assert (default.concurrent_network_answers, Settings.load(env={"GRASBOT_CONCURRENT_NETWORK_ANSWERS": "3"}).concurrent_network_answers) == (8, 3)
    with pytest.raises(ConfigError, match="GRASBOT_CONCURRENT_NETWORK_ANSWERS doit valoir au moins 1, pas 0"):
        Settings.load(env={"GRASBOT_CONCURRENT_NETWORK_ANSWERS": "0"})
    assert Settings.load(env={"GRASBOT_ANSWER_CACHE": "off"}).answer_cache == 0
    assert Settings.load(env={}, answer_cache="12").answer_cache == 12
    many = Settings.load(env={"OLLAMA_HOST": " http://a:1/ , http://b:2 ,"})
    assert many.ollama_hosts == ("http://a:1", "http://b:2")
    forms = Settings.load(env={"OLLAMA_HOST": "localhost:11434,http://[::1]:11434,HTTPS://ollama.example.org"})
    assert forms.ollama_hosts == ("localhost:11434", "http://[::1]:11434", "HTTPS://ollama.example.org")
    assert default.ollama_hosts == (None,)


async def test_a_question_behind_others_being_searched_is_told_its_place_before_its_sources():
    bot = make_bot(BUNDLED_VAULT)
    async with bot.lane.turn():  # another visitor's question is being searched
        events = bot.answer_events(Q)
        assert await asyncio.wait_for(anext(events), BOUND) == ("queue", {"position": 2})
        sources = asyncio.ensure_future(anext(events))
        await asyncio.sleep(0.1)
        assert not sources.done() and bot.lane.waiting == 2  # its search waits for its turn
    name, data = await asyncio.wait_for(sources, BOUND)
    assert name == "sources" and data["sources"]
    await events.aclose()
    assert bot.lane.waiting == 0
    alone = [name async for name, _ in bot.answer_events(Q)]  # nobody ahead: no place to tell
    assert alone[0] == "sources" and "queue" not in alone


async def test_one_visitor_cannot_hold_every_slot_with_questions_asked_at_once(start_daemon, standin_ollama):
    """Within their rate limit a visitor could open five streams at once and hold every model
    slot, the other visitors waiting behind them. One visitor waits for GRASBOT_CONCURRENT_ANSWERS
    answers at most (2): a third question is refused (429, Retry-After, a French reason) and
    spends nothing of their rate limit; another visitor has a slot at once."""
    standin_ollama.script(pieces=PIECES, hold_after=1)
    client = await start(start_daemon, standin_ollama.url, llm_slots=3, llm_max_wait=60, rate_burst=3, rate_per_minute=1, concurrent_answers=2)
    bot_of(client).admission.answer_seconds = 7.2  # as answers took lately
    greedy = {"X-Forwarded-For": "203.0.113.1"}
    held = [await Visitor(client, headers=greedy).open() for _ in range(2)]
    for stream in held:
        await stream.until("token")
    reason = "Vos questions précédentes sont encore en cours de réponse : attendez la fin de l'une d'elles, puis posez celle-ci."
    for path in ("/ask/stream", "/ask"):
        resp = await client.get(path, params={"q": "Quel modèle utilise GrasBot ?"}, headers=greedy)
        assert resp.status == 429 and resp.headers["Retry-After"] == "8"
        assert await resp.json() == {"error": {"code": -32002, "message": "Rate limited", "data": {"retry_after": 8, "reason": reason}}}
    body = {"jsonrpc": "2.0", "method": "answer", "params": {"q": "Quel modèle utilise GrasBot ?"}, "id": 1}
    answer = await (await client.post("/rpc", json=body, headers=greedy)).json()
    assert answer["error"] == {"code": -32002, "message": "Rate limited", "data": {"retry_after": 8, "reason": reason}}
    other = await Visitor(client, headers={"X-Forwarded-For": "198.51.100.7"}).open()
    assert [name for name, _ in [await other.next() for _ in range(2)]] == ["sources", "token"]  # no queue: a slot was free
    assert standin_ollama.max_in_flight == 3 and len(standin_ollama.requests) == 3
    held[0].close()  # a visitor who leaves gives their place back at once
    await until(lambda: bot_of(client).admission.hosts[0].in_use == 2, "the slot is free")
    again = await Visitor(client, headers=greedy).open()  # the third of their burst: the refused ones spent nothing
    await again.until("token")
    owner = [await Visitor(client, headers=OWNER).open() for _ in range(3)]  # the owner is never limited
    await owner[0].until("token")
    standin_ollama.release()
    for stream in (held[1], other, again, *owner):
        assert (await stream.rest())[-1][0] == "done"


async def test_with_the_default_slots_one_visitor_leaves_a_slot_to_the_others(start_daemon, standin_ollama):
    """LLM_SLOTS 2 and GRASBOT_CONCURRENT_ANSWERS 2, the defaults, let one visitor's two questions
    asked at once hold both of the model's slots, every other visitor queued behind them. A
    visitor waits for one fewer answer than the slots at most (1 here): their second question is
    refused (429), and another visitor takes the slot left at once, without queueing."""
    standin_ollama.script(pieces=PIECES, hold_after=1)
    client = await start(start_daemon, standin_ollama.url, llm_slots=2, concurrent_answers=2, llm_max_wait=60)
    greedy = {"X-Forwarded-For": "203.0.113.1"}
    first = await Visitor(client, headers=greedy).open()
    await first.until("token")
    second = await client.get("/ask/stream", params={"q": "Quel modèle utilise GrasBot ?"}, headers=greedy)
    assert second.status == 429 and (await second.json())["error"]["data"]["reason"].startswith("Vos questions précédentes")
    other = await Visitor(client, headers={"X-Forwarded-For": "198.51.100.7"}).open()
    assert [name for name, _ in [await other.next() for _ in range(2)]] == ["sources", "token"]  # a slot was left to them
    assert bot_of(client).admission.hosts[0].visitors == 2 and standin_ollama.max_in_flight == 2
    standin_ollama.release()
    for stream in (first, other):
        assert (await stream.rest())[-1][0] == "done"


async def test_a_visitor_who_stops_an_answer_and_asks_again_at_once_is_answered(start_daemon, standin_ollama):
    """With the default slots a visitor waits for one answer at a time: one who stops it (the
    chat's « Arrêter » closes the stream) and asks again at once is answered, not refused for
    the answer they just left (the daemon cancels its handler when the connection goes)."""
    standin_ollama.script(pieces=PIECES, hold_after=1)
    client = await start(start_daemon, standin_ollama.url, llm_slots=2, concurrent_answers=2, llm_max_wait=60)
    me = {"X-Forwarded-For": "203.0.113.1"}
    statuses = []
    for _ in range(5):
        first = await Visitor(client, headers=me).open()
        await first.until("token")
        first.close()
        again = await client.get("/ask/stream", params={"q": "Quel modèle utilise GrasBot ?"}, headers=me)
        statuses.append(again.status)
        again.close()
        await until(lambda: bot_of(client).admission.hosts[0].in_use == 0, "both slots free")
    standin_ollama.release()
    assert statuses == [200] * 5


def test_a_visitor_waits_for_fewer_answers_than_the_model_has_slots():
    """The rule the README says: GRASBOT_CONCURRENT_ANSWERS, and one fewer than LLM_SLOTS times the
    model hosts at most, 1 at least (a single slot cannot be shared)."""
    assert Settings.load(env={}).answers_per_visitor == 1
    assert Settings.load(env={"LLM_SLOTS": "4"}).answers_per_visitor == 2
    assert Settings.load(env={"LLM_SLOTS": "1"}).answers_per_visitor == 1
    assert Settings.load(env={"LLM_SLOTS": "2", "OLLAMA_HOST": "http://a:1,http://b:2", "GRASBOT_CONCURRENT_ANSWERS": "5"}).answers_per_visitor == 3


def test_a_network_waits_for_fewer_answers_than_the_model_has_slots():
    """An IPv6 /48 is bounded as a visitor is: GRASBOT_CONCURRENT_NETWORK_ANSWERS (8 by default),
    and one fewer than LLM_SLOTS times the model hosts at most, 1 at least: with the default 2
    slots its 8 /64s held both, every other visitor queued behind them."""
    assert Settings.load(env={}).answers_per_network == 1
    assert Settings.load(env={"LLM_SLOTS": "4"}).answers_per_network == 3
    assert Settings.load(env={"LLM_SLOTS": "1"}).answers_per_network == 1
    assert Settings.load(env={"LLM_SLOTS": "16"}).answers_per_network == 8
    two_hosts = {"LLM_SLOTS": "2", "OLLAMA_HOST": "http://a:1,http://b:2"}
    assert Settings.load(env={**two_hosts, "GRASBOT_CONCURRENT_NETWORK_ANSWERS": "2"}).answers_per_network == 2
    assert Settings.load(env=two_hosts).answers_per_network == 3


async def test_a_network_cannot_hold_every_slot_with_the_default_limit(start_daemon, standin_ollama):
    """With 2 slots and GRASBOT_CONCURRENT_NETWORK_ANSWERS left at 8, two /64s of one /48 asked
    at once and held both slots: the second is refused (429, the network's reason), and a
    visitor of another /48 is written to at once."""
    standin_ollama.script(pieces=PIECES, hold_after=1)
    client = await start(start_daemon, standin_ollama.url, llm_slots=2, llm_max_wait=60, rate_network_burst=100)
    first = await Visitor(client, headers={"X-Forwarded-For": "2001:db8:1:1::1"}).open()
    await first.until("token")
    refused = await client.get("/ask/stream", params={"q": Q}, headers={"X-Forwarded-For": "2001:db8:1:2::1"})
    assert refused.status == 429
    assert (await refused.json())["error"]["data"]["reason"].startswith("Trop de questions venues de votre réseau")
    other = await Visitor(client, headers={"X-Forwarded-For": "2001:db8:2::1"}).open()
    await other.until("token")
    assert standin_ollama.max_in_flight == 2
    standin_ollama.release()
    for stream in (first, other):
        assert (await stream.rest())[-1][0] == "done"
