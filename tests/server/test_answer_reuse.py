"""Answer reuse through the real daemon: a first question asked again is answered from the kept
answers (on /ask, JSON-RPC and the stream, which replays it), and never when it should not be:
after a reload, with history, after a fallback or a busy answer, or across audiences. The same
question asked while its answer is being written shares that one generation."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from collections.abc import AsyncIterator
from typing import NamedTuple

import pytest

from grasbot.answer import reuse
from grasbot.answer.admission import GRANTED, Busy, Position
from grasbot.answer.reuse import AnswerCache, Flights, normalise_question, replay_pieces
from grasbot.server.state import ANSWERING
from support.bots import OWNER, OWNER_TOKEN, bot_of, rpc_result, sse_events
from support.standin_ollama import StandinOllama

Q = "Comment fonctionne GrasBot ?"
REPLY = "GrasBot cherche les notes, puis le modèle rédige la réponse à partir d'elles [grasbot-pipeline]."
BOUND = 15


_visitors = itertools.count(1)


def visitor() -> dict:
    """A visitor of their own (a proxy's X-Forwarded-For): one visitor waits for fewer answers
    at once than the model has slots (`Settings.answers_per_visitor`), and these ask at once."""
    n = next(_visitors)
    return {"X-Forwarded-For": f"10.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}"}


async def ask(client, q: str = Q, **params) -> dict:
    resp = await client.get("/ask", params={"q": q, **params}, headers=visitor())
    assert resp.status == 200
    return await resp.json()


async def stream(client, q: str = Q, who: dict | None = None) -> list[tuple[str, dict]]:
    resp = await client.get("/ask/stream", params={"q": q}, headers=who or visitor())

    async def read():
        return [event async for event in sse_events(resp)]

    return await asyncio.wait_for(read(), BOUND)


async def owner_counts(client) -> dict:
    """The answers kept and reused, as the owner's /health counts them (a visitor's does not)."""
    return (await (await client.get("/health", headers=OWNER)).json())["generation"]["reused"]


async def start(start_daemon, url, vault=None, **settings):
    settings.setdefault("rate_per_minute", 100_000)
    settings.setdefault("rate_burst", 100_000)
    settings.setdefault("concurrent_answers", 100_000)  # the slots still bound a visitor: `Settings.answers_per_visitor`
    kwargs = {"ollama_url": url, "owner_token": OWNER_TOKEN, **settings}
    return await (start_daemon(vault, **kwargs) if vault is not None else start_daemon(**kwargs))


def test_questions_are_folded_for_reuse_but_not_merged():
    assert normalise_question("Qui es-tu ?") == normalise_question("  QUI  es-tu?") == normalise_question("qui es-tu")
    assert normalise_question("Qui es-tu ?") != normalise_question("Qui es-tu, toi ?")
    assert normalise_question("Comment te contacter ?") != normalise_question("Pourquoi te contacter ?")
    text = "Une réponse assez longue pour être coupée en plusieurs morceaux quand elle est rejouée au visiteur. [x]"
    pieces = list(replay_pieces(text, size=20))
    assert len(pieces) > 2 and "".join(pieces) == text


async def test_a_kept_pace_gives_back_the_models_pieces_and_pauses(monkeypatch):
    """A kept answer's pace was a tuple of its pieces and one of their times: 36 KB for a
    400-piece answer of 2.2 KB. Kept as one text, where each piece ends and when it came, it
    gives back the same pieces, empty ones and characters outside the BMP included, after the
    same pauses."""
    pieces = ["Le ", "", "potager 🌱", " est", " arrosé", " [potager].", "\u200d", "🌱"]
    times = [0.2, 0.25, 0.9, 1.0, 1.0, 2.5, 2.6, 2.75]
    pace = reuse.Pace.of(iter(pieces), iter(times), 3.0)
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(round(seconds, 6))

    monkeypatch.setattr(reuse, "_sleep", sleep)
    given = [piece async for piece in reuse.replayed("".join(pieces), pace)]
    assert given == pieces and list(pace.pieces()) == pieces
    assert slept == [0.2, 0.05, 0.65, 0.1, 0.0, 1.5, 0.1, 0.15, 0.25]  # each piece after the one before, then to its end
    assert [piece async for piece in reuse.replayed("Une réponse.", reuse.AT_ONCE)] == ["Une réponse."]  # no writing known: at once


def test_the_cache_is_bounded_and_bound_to_one_snapshot():
    class Snap:
        pass

    one, two = Snap(), Snap()
    cache = AnswerCache(2)
    k = [cache.key(f"question {i}", "visitor", True) for i in range(6)]
    cache.forget(one)
    for i in range(3):
        cache.put(one, k[i], {"i": i}, pace=reuse.Pace.of(("x",) * i, (0.5,) * i, 2 * i))
    kept = cache.get(one, k[2])
    assert cache.get(one, k[0]) is None and kept is not None and len(cache) == 2  # the oldest gone
    assert kept.payload == {"i": 2} and (list(kept.pace.pieces()), list(kept.pace.times), kept.pace.total) == (["x", "x"], [0.5, 0.5], 4)  # its pace kept
    cache.forget(two)
    assert cache.get(two, k[2]) is None
    cache.put(one, k[5], {"i": 5})  # an answer written on the old version, finishing after the reload
    assert cache.get(two, k[5]) is None and cache.get(one, k[5]) is None


async def test_a_question_asked_again_is_reused_on_every_path(start_daemon, standin_ollama):
    standin_ollama.script(REPLY, chunks=4)
    client = await start(start_daemon, standin_ollama.url)
    first = await ask(client)
    assert first["reused"] is False and first["busy"] is False and first["model"] == "qwen3:8b"
    again = await ask(client, "  comment FONCTIONNE grasbot?")
    assert again == first and len(standin_ollama.requests) == 1  # kept: a visitor is not told so
    rpc = await rpc_result(client, "answer", {"q": Q})
    assert rpc == first
    events = await stream(client)
    names = [n for n, _ in events]
    assert names[0] == "sources" and names[-1] == "done" and set(names[1:-1]) == {"token"}
    assert "".join(d["text"] for n, d in events if n == "token") == first["response"]
    assert events[0][1] == {"sources": first["sources"], "grounded": first["grounded"]}
    assert events[-1][1] == first
    assert len(standin_ollama.requests) == 1  # none of these reached the model
    generation = (await (await client.get("/health", headers=OWNER)).json())["generation"]
    assert generation["reused"] == {"kept": 1, "hits": 3, "shared": 0}


async def test_a_visitor_cannot_tell_whether_another_visitor_asked_the_same_question(start_daemon, standin_ollama, caplog):
    """A visitor told `reused` (on /ask, its stream, `answer`), or reading the public /health
    before and after asking (the answers kept and reused, the generations in flight, the
    queue), learnt whether another visitor had asked that very question: `reused: true`, or a
    count of kept answers that did not grow. A visitor's answer now says `reused: false`, kept
    or not, and a visitor's /health holds nothing that moves with the questions answered; the
    owner reads both, and the access log still says `reused`."""
    caplog.set_level(logging.INFO, "grasbot.access")
    standin_ollama.script(REPLY, chunks=4)
    client = await start(start_daemon, standin_ollama.url)
    before = (await (await client.get("/health")).json())["generation"]
    first = await ask(client)  # another visitor's
    between = (await (await client.get("/health")).json())["generation"]
    again, rpc, events = await ask(client), await rpc_result(client, "answer", {"q": Q}), await stream(client)
    after = (await (await client.get("/health")).json())["generation"]
    assert len(standin_ollama.requests) == 1  # the guard: kept, and given again
    assert [first["reused"], again["reused"], rpc["reused"], events[-1][1]["reused"]] == [False] * 4
    assert again == first and rpc == first and events[-1][1] == first
    assert before == between == after
    assert "reused" not in after and "queued" not in after and "owner_in_use" not in after and all("in_use" not in h for h in after["hosts"])
    owner = (await (await client.get("/health", headers=OWNER)).json())["generation"]
    assert owner["reused"] == {"kept": 1, "hits": 3, "shared": 0} and owner["queued"] == 0 and owner["hosts"][0]["in_use"] == 0
    preview = await (await client.get("/ask", params={"q": Q}, headers=OWNER)).json()
    assert preview["reused"] is True  # the owner's preview reads the visitors' kept answer
    logged = [r.getMessage() for r in caplog.records if r.name == "grasbot.access" and "/ask" in r.getMessage()]
    assert [line.split()[3] for line in logged] == ["ok", "reused", "reused", "reused"], logged


def _sleeps(monkeypatch) -> list[float]:
    """The pauses a replay makes (`reuse._sleep`), recorded and not waited."""
    made: list[float] = []

    async def sleep(delay: float) -> None:
        made.append(delay)
        await asyncio.sleep(0)

    monkeypatch.setattr(reuse, "_sleep", sleep)
    return made


async def test_a_kept_answer_reaches_a_visitor_as_late_as_its_writing_did(start_daemon, standin_ollama, monkeypatch):
    """A kept answer was given at once, where a written one takes the model's time: a visitor
    who timed the answer learnt that the question had been asked before. A visitor's kept
    answer (its stream, /ask, `answer`) now comes at the pace of its writing, its first token
    as late as the model's first was, the whole as late as the model's end, without the model;
    the owner's preview is given at once."""
    standin_ollama.script(REPLY, chunks=4, first_delay=0.6, chunk_delay=0.15)
    client = await start(start_daemon, standin_ollama.url)
    loop = asyncio.get_running_loop()
    asked = loop.time()
    written = await ask(client)
    took = loop.time() - asked  # what the first visitor waited, the search included
    sleeps = _sleeps(monkeypatch)
    events = await stream(client)
    tokens = [data["text"] for name, data in events if name == "token"]
    assert "".join(tokens) == written["response"] and len(standin_ollama.requests) == 1
    assert len(sleeps) >= 2  # before each piece the model wrote, then before `done`
    first, whole = sleeps[0], sum(sleeps)
    assert 0.6 <= first < whole and 0.6 + 3 * 0.15 <= whole <= took, (sleeps, took)
    for replayed in (lambda: ask(client), lambda: rpc_result(client, "answer", {"q": Q}, headers=visitor())):
        sleeps.clear()
        assert await replayed() == written
        assert sum(sleeps) == pytest.approx(whole)
    sleeps.clear()
    preview = await (await client.get("/ask", params={"q": Q}, headers=OWNER)).json()
    assert preview["reused"] is True and sleeps == []  # the owner's preview, at once
    assert len(standin_ollama.requests) == 1


async def test_a_kept_answer_is_replayed_in_as_many_tokens_as_its_writing_streamed(start_daemon, standin_ollama, monkeypatch):
    """A kept answer came 48 characters a token, where the model's stream gives a word or less
    a token: a visitor who read the stream's events (the page's own script, or the network
    tab) told a kept answer at a glance, and so that the question had been asked before,
    whatever its pace. It comes in the tokens its writing streamed
    (test_a_kept_answer_is_replayed_in_the_tokens_and_pauses_its_writing_showed)."""
    reply = " ".join([REPLY] * 4)
    standin_ollama.script(reply, chunks=80, chunk_delay=0.01)
    client = await start(start_daemon, standin_ollama.url)
    written = [data["text"] for name, data in await stream(client) if name == "token"]
    _sleeps(monkeypatch)
    replayed = [data["text"] for name, data in await stream(client) if name == "token"]
    assert "".join(replayed) == "".join(written) and len(standin_ollama.requests) == 1
    assert len(written) / 2 <= len(replayed) <= 2 * len(written), (len(written), len(replayed))
    assert sorted(map(len, replayed))[len(replayed) // 2] <= 2 * sorted(map(len, written))[len(written) // 2]  # the median token


async def test_a_kept_answer_is_replayed_in_the_tokens_and_pauses_its_writing_showed(start_daemon, standin_ollama, monkeypatch):
    """A kept answer's tokens came evenly spaced between its first and its end, cut by words,
    where a written one shows the model's rhythm through the stream's filters: a citation held
    back until its `]` comes after a pause several pieces long, a piece the model was slow to
    write after its own, a piece held to the end with none: a visitor who timed the stream's
    events (on the stand-in, the gaps between a written answer's tokens varied 0.8 times their
    mean and the longest was 7 times the median; a replay's 0.03 times and 1.1) told a kept
    answer. It is replayed as the model wrote it, each piece as long after the one before it,
    through the same filters: the same tokens, the same pauses."""
    pieces = ["GrasBot cherche ", "d'abord les notes ", "qui répondent [", "grasbot", "-pipeline", "]", ", puis le ", "modèle rédige ", "la réponse."]
    standin_ollama.script(pieces=pieces, hold_after=7, chunk_delay=0.01)
    client = await start(start_daemon, standin_ollama.url)
    writing = asyncio.ensure_future(stream(client))
    await asyncio.wait_for(standin_ollama.first_chunk_sent.wait(), BOUND)
    await asyncio.sleep(0.4)  # the model slow on its eighth piece
    standin_ollama.release()
    written = [data["text"] for name, data in await writing if name == "token"]
    sleeps = _sleeps(monkeypatch)
    replayed = [data["text"] for name, data in await stream(client) if name == "token"]
    assert replayed == written and len(standin_ollama.requests) == 1, (written, replayed)
    gaps = sleeps[1:]  # after the first piece the daemon read: before each other one, then before `done`
    assert sum(gap >= 0.25 for gap in gaps) == 1 and sum(gap >= 0.1 for gap in gaps) == 1, gaps  # the slow piece's pause, its own


def _kinds(events) -> list[tuple[str, object]]:
    """The events a visitor reads, the tokens as one (how many, and their pace, are
    test_a_kept_answer_is_replayed_in_as_many_tokens_as_its_writing_streamed's): the rest as a
    kept and a written answer share it."""
    kinds = [(name, data.get("position")) for name, data in events]
    return [kind for i, kind in enumerate(kinds) if kind[0] != "token" or kinds[i - 1][0] != "token"]


async def test_a_kept_answer_waits_for_a_slot_as_a_written_one_would(start_daemon, standin_ollama, monkeypatch):
    """A kept answer came with no `queue` event and was never refused as busy, where one the model
    writes waits its turn while every slot is taken, or is refused when the queue is full: a
    visitor who saw the slots taken and still got an answer at once learnt that the question had
    been asked before. A kept answer waits its turn as a written one does, the same events in the
    same load (and the same refusals, its visitor's own limit included), and gives the slot back
    as soon as it is granted."""
    standin_ollama.script(REPLY, chunks=4)
    client = await start(start_daemon, standin_ollama.url, llm_slots=1, llm_queue=4)
    await ask(client)
    _sleeps(monkeypatch)
    generation = bot_of(client).admission
    seen, again = {}, {}
    for label, q in (("kept", Q), ("written", "Où sont rangées les notes ?")):
        standin_ollama.script(pieces=HELD, hold_after=1)
        holder = await client.get("/ask/stream", params={"q": f"Quel modèle utilise GrasBot ? {label}"}, headers=visitor())
        holder_events, _ = await _events_until_token(holder)  # the only slot, taken
        who = visitor()
        asked = asyncio.ensure_future(stream(client, q, who))
        await asyncio.wait_for(_until(lambda asked=asked: len(generation._queue) == 1 or asked.done()), BOUND)
        again[label] = (await client.get("/ask/stream", params={"q": "Et ensuite ?"}, headers=who)).status
        standin_ollama.script(REPLY, chunks=4)
        standin_ollama.release()
        await asyncio.wait_for(_drain(holder_events), BOUND)
        seen[label] = _kinds(await asked)
    assert seen["kept"][:2] == seen["written"][:2] == [("sources", None), ("queue", 1)], seen
    assert seen["kept"] == seen["written"], seen
    assert again == {"kept": 429, "written": 429}  # its visitor waits for as many answers as they may
    assert generation.hosts[0].in_use == 0 and len(standin_ollama.requests) == 4  # the kept one wrote nothing

    busy = await start(start_daemon, standin_ollama.url, llm_slots=1, llm_queue=0)
    await ask(busy)
    standin_ollama.script(pieces=HELD, hold_after=1)
    holder = await busy.get("/ask/stream", params={"q": "Quel modèle utilise GrasBot ?"}, headers=visitor())
    holder_events, _ = await _events_until_token(holder)
    refused = [(await stream(busy, q))[-1][1] for q in (Q, "Où sont rangées les notes ?")]
    refused.append(await ask(busy))
    assert [(payload["busy"], payload["model"]) for payload in refused] == [(True, None)] * 3, refused
    standin_ollama.release()
    await asyncio.wait_for(_drain(holder_events), BOUND)


async def test_a_kept_answers_pace_leaves_out_its_writings_wait_for_a_slot(start_daemon, standin_ollama, monkeypatch):
    """A kept answer's pace was read from when its question was asked, its wait for a slot
    included: given again after a turn of its visitor's own (`Admission.turn`), it would count
    a wait twice, the first asker's load on top of this visitor's. It is read from when the
    model was asked for it."""
    client = await start(start_daemon, standin_ollama.url, llm_slots=1, llm_queue=4)
    standin_ollama.script(pieces=HELD, hold_after=1)
    holder = await client.get("/ask/stream", params={"q": "Quel modèle utilise GrasBot ?"}, headers=visitor())
    holder_events, _ = await _events_until_token(holder)
    writing = asyncio.ensure_future(stream(client))
    await asyncio.wait_for(_until(lambda: len(bot_of(client).admission._queue) == 1), BOUND)
    await asyncio.sleep(0.6)  # its wait for the slot
    standin_ollama.script(REPLY, chunks=4, first_delay=0.1)
    standin_ollama.release()
    await asyncio.wait_for(_drain(holder_events), BOUND)
    await writing
    sleeps = _sleeps(monkeypatch)
    await stream(client)
    assert 0.1 <= sleeps[0] < 0.5, sleeps  # its first piece 0.1 s after the model was asked, 0.7 s after the question


async def test_a_visitor_who_leaves_a_replayed_answer_ends_its_replay(start_daemon, standin_ollama, monkeypatch):
    """A kept answer replayed to a visitor takes no model slot, and ends when the visitor leaves
    (their stream closed, their /ask given up): nothing of it is left waiting."""
    standin_ollama.script(REPLY, chunks=4)
    client = await start(start_daemon, standin_ollama.url)
    await ask(client)
    waiting: set[object] = set()

    async def sleep(delay: float) -> None:
        mark = object()
        waiting.add(mark)
        try:
            await asyncio.Event().wait()  # a replay as long as a test's patience
        finally:
            waiting.discard(mark)

    monkeypatch.setattr(reuse, "_sleep", sleep)
    streamed = await client.get("/ask/stream", params={"q": Q}, headers=visitor())
    await asyncio.wait_for(_until(lambda: bool(waiting)), BOUND)
    assert bot_of(client).admission.hosts[0].in_use == 0  # no slot
    streamed.close()
    await asyncio.wait_for(_until(lambda: not waiting), BOUND)
    plain = asyncio.ensure_future(client.get("/ask", params={"q": Q}, headers=visitor()))
    await asyncio.wait_for(_until(lambda: bool(waiting)), BOUND)
    plain.cancel()
    await asyncio.gather(plain, return_exceptions=True)
    await asyncio.wait_for(_until(lambda: not waiting), BOUND)
    await asyncio.wait_for(_until(lambda: len(client.server.app[ANSWERING]) == 0), BOUND)
    assert len(standin_ollama.requests) == 1


async def test_a_streamed_answer_is_kept_too(start_daemon, standin_ollama):
    standin_ollama.script(REPLY, chunks=4)
    client = await start(start_daemon, standin_ollama.url)
    events = await stream(client)
    assert events[-1][1]["reused"] is False
    assert (await ask(client))["response"] == events[-1][1]["response"] and len(standin_ollama.requests) == 1


async def test_a_reload_forgets_the_kept_answers(start_daemon, standin_ollama, note_writer):
    note_writer("a.md", "title: Les abeilles\nvisibility: public", "Les abeilles font du miel dans la ruche [a].")
    standin_ollama.script("Les abeilles font du miel [a].")
    client = await start(start_daemon, standin_ollama.url, note_writer.root, search_min_score=0.5)
    q = "Que font les abeilles ?"
    assert (await ask(client, q))["reused"] is False
    await ask(client, q)
    assert len(standin_ollama.requests) == 1
    note_writer("a.md", "title: Les abeilles\nvisibility: public", "Les abeilles font du miel et de la cire.")
    assert (await client.post("/reload-vault", headers=OWNER)).status == 200
    after = await ask(client, q)
    assert after["reused"] is False and len(standin_ollama.requests) == 2
    await ask(client, q)
    assert len(standin_ollama.requests) == 2


async def test_no_reuse_with_history_or_when_off(start_daemon, standin_ollama):
    standin_ollama.script(REPLY)
    client = await start(start_daemon, standin_ollama.url)
    history = json.dumps([{"role": "user", "content": "Bonjour"}, {"role": "assistant", "content": "Bonjour !"}])
    for _ in range(2):
        assert (await ask(client, history=history))["reused"] is False
    assert len(standin_ollama.requests) == 2
    off = await start(start_daemon, standin_ollama.url, answer_cache="off")
    assert [(await ask(off))["reused"] for _ in range(2)] == [False, False]
    assert len(standin_ollama.requests) == 4


async def test_fallbacks_and_busy_answers_are_not_kept(start_daemon, standin_ollama):
    standin_ollama.script(mode="http_500")
    client = await start(start_daemon, standin_ollama.url, llm_slots=1, llm_queue=0)
    failed = await ask(client)
    assert "llm_error" in failed and failed["reused"] is False
    # a busy answer: the only slot is held by a stream
    standin_ollama.script(pieces=["GrasBot cherche d'abord les notes qui répondent à la question posée, ", "[grasbot-pipeline]"], hold_after=1)
    held = await client.get("/ask/stream", params={"q": Q}, headers=visitor())
    events = sse_events(held)
    while (await asyncio.wait_for(anext(events), BOUND))[0] != "token":
        pass
    busy = await ask(client, "Quel modèle utilise GrasBot ?")  # another question: no slot for it
    assert busy["busy"] is True and busy["reused"] is False
    standin_ollama.release()
    rest = await asyncio.wait_for(_drain(events), BOUND)
    assert rest[-1][1]["model"] == "qwen3:8b"  # this one is kept
    standin_ollama.script(REPLY)
    kept = await ask(client)
    assert (await owner_counts(client))["hits"] == 1 and kept["busy"] is False and "llm_error" not in kept
    assert kept["response"] == rest[-1][1]["response"]


async def _drain(events) -> list:
    return [event async for event in events]


async def test_an_owner_answer_is_never_reused_for_a_visitor(start_daemon, standin_ollama, note_writer):
    """The owner's answer may quote a private note: a visitor asking the same question must
    get their own answer, written from the public notes only."""
    note_writer("public.md", "title: Le rucher\nvisibility: public", "Le rucher du jardin compte trois ruches.")
    note_writer("journal.md", "title: Journal du rucher\nvisibility: private", "Le rucher cache le code canari-rucher-91.")
    client = await start(start_daemon, standin_ollama.url, note_writer.root, search_min_score=0.5)
    q = "Que dit le journal du rucher ?"
    standin_ollama.script("Le journal dit canari-rucher-91 [journal].")
    owner = await rpc_result(client, "answer", {"q": q, "audience": "owner"}, headers=OWNER)
    assert "canari-rucher-91" in owner["response"] and owner["reused"] is False
    again = await rpc_result(client, "answer", {"q": q, "audience": "owner"}, headers=OWNER)
    assert again["reused"] is True  # kept, for the owner
    standin_ollama.script("Le rucher compte trois ruches [public].")
    for visitor in (
        await ask(client, q),
        await ask(
            client,
            q,
        ),
        (await stream(client, q))[-1][1],
    ):
        assert "canari-rucher-91" not in json.dumps(visitor) and "journal" not in json.dumps(visitor)
    assert len(standin_ollama.requests) == 2  # the visitor's own answer, written once, then reused
    assert all("canari-rucher-91" not in m["content"] for m in standin_ollama.requests[-1]["messages"])
    # A visitor's /health counts none of them; the owner's counts everyone's.
    assert "reused" not in (await (await client.get("/health")).json())["generation"]
    assert await owner_counts(client) == {"kept": 2, "hits": 3, "shared": 0}


async def test_a_visitor_is_never_given_what_the_owners_preview_kept(start_daemon, standin_ollama):
    """The owner's preview (audience visitor, with the owner token) kept its answer among the
    visitors': a visitor asking the same question was told `reused`, and a visitor's /health
    counted one more answer kept, either telling that the owner had asked it. The owner's
    answers are kept apart: the visitor's is written anew, and its /health counts nothing."""
    standin_ollama.script(REPLY)
    client = await start(start_daemon, standin_ollama.url)
    preview = await (await client.get("/ask", params={"q": Q}, headers=OWNER)).json()
    assert preview["reused"] is False
    assert (await rpc_result(client, "answer", {"q": Q, "audience": "visitor"}, headers=OWNER))["reused"] is True  # kept, for the owner
    assert await owner_counts(client) == {"kept": 1, "hits": 1, "shared": 0}  # the owner's alone
    visitor = await ask(client)
    assert visitor["reused"] is False and len(standin_ollama.requests) == 2
    assert (await stream(client))[-1][1]["response"] == visitor["response"] and len(standin_ollama.requests) == 2  # the visitor's own, kept
    assert await owner_counts(client) == {"kept": 2, "hits": 2, "shared": 0}


async def test_a_preview_shows_the_answer_visitors_are_given_once_they_have_one(start_daemon, standin_ollama):
    """The owner previewed a question (its answer kept among the owner's), then a visitor asked
    it and was given another text (the model wrote it anew: the owner's answers are apart). A
    second preview showed the owner's first text, which no visitor is told: the preview reads
    the visitors' kept answer first, as the plugin presents it (« what a visitor is told »)."""
    other = "GrasBot lit les notes du coffre, et le modèle en tire une réponse [grasbot-pipeline]."
    standin_ollama.script(REPLY)
    client = await start(start_daemon, standin_ollama.url)
    assert (await (await client.get("/ask", params={"q": Q}, headers=OWNER)).json())["response"] == REPLY
    standin_ollama.script(other)
    assert (await ask(client))["response"] == other
    for preview in (
        await (await client.get("/ask", params={"q": Q}, headers=OWNER)).json(),
        await rpc_result(client, "answer", {"q": Q, "audience": "visitor"}, headers=OWNER),
    ):
        assert preview["reused"] is True and preview["response"] == other
    assert (await ask(client))["response"] == other and len(standin_ollama.requests) == 2


HELD = ["GrasBot cherche d'abord les notes qui répondent à la question posée,", " puis le modèle rédige la réponse [grasbot-pipeline]."]


async def _events_until_token(resp) -> tuple:
    events = sse_events(resp)
    seen = []
    while not seen or seen[-1][0] != "token":
        seen.append(await asyncio.wait_for(anext(events), BOUND))
    return events, seen


async def test_the_same_question_asked_meanwhile_shares_one_generation(start_daemon, standin_ollama, monkeypatch):
    """Five visitors ask what the first is being answered: the model writes one answer, and each
    visitor, on the stream or on /ask, gets all of it from its first word (each after a turn of
    their own, its slot given back at once)."""
    _sleeps(monkeypatch)
    standin_ollama.script(pieces=HELD, hold_after=1)
    client = await start(start_daemon, standin_ollama.url, llm_slots=2, llm_queue=0)
    first = await client.get("/ask/stream", params={"q": Q}, headers=visitor())
    first_events, seen = await _events_until_token(first)
    assert seen[-1][1]["text"] == HELD[0]
    later = await client.get("/ask/stream", params={"q": "comment fonctionne grasbot"}, headers=visitor())  # folded: the same question
    later_events, later_seen = await _events_until_token(later)
    assert later_seen[-1][1]["text"] == HELD[0]  # the pieces written before it came, from the first
    plain = [asyncio.ensure_future(ask(client)) for _ in range(3)]  # a slot for each turn, none held
    await asyncio.sleep(0.2)
    assert not any(task.done() for task in plain)  # they wait for the answer, not busy
    standin_ollama.release()
    done_first = (await asyncio.wait_for(_drain(first_events), BOUND))[-1][1]
    done_later = (await asyncio.wait_for(_drain(later_events), BOUND))[-1][1]
    answers = await asyncio.gather(*plain)
    assert len(standin_ollama.requests) == 1 and standin_ollama.max_in_flight == 1
    assert done_first["reused"] is False and done_first["model"] == "qwen3:8b"
    for payload in (done_later, *answers):
        assert payload["reused"] is False and payload["busy"] is False  # shared: a visitor is not told so
        assert payload["response"] == done_first["response"] == "".join(HELD)
    assert len(bot_of(client).flights) == 0  # landed: the kept answer takes over
    health = await (await client.get("/health", headers=OWNER)).json()
    assert health["generation"]["reused"]["shared"] == 4 and health["generation"]["hosts"][0]["in_use"] == 0
    assert "reused" not in (await (await client.get("/health")).json())["generation"]  # the owner's to know
    assert (await ask(client))["response"] == done_first["response"] and len(standin_ollama.requests) == 1


async def test_a_visitor_who_joins_an_answer_being_written_gets_its_pieces_as_late_as_its_writing_did(start_daemon, standin_ollama, monkeypatch):
    """A visitor asking what another is being answered got the pieces written before they came
    at once, and the rest sooner than the model writes: the first token long before a model's
    first comes told them that someone had just asked the same. Each piece now comes as long
    after their turn came as it came after the model was asked for it; the one who started it
    waits for nothing more."""
    standin_ollama.script(pieces=HELD, hold_after=1, first_delay=0.5)
    client = await start(start_daemon, standin_ollama.url, llm_slots=2, llm_queue=4)  # a slot free: its turn at once
    sleeps = _sleeps(monkeypatch)
    first = await client.get("/ask/stream", params={"q": Q}, headers=visitor())
    first_events, _ = await _events_until_token(first)
    assert sleeps == []  # the one who started it
    later = await client.get("/ask/stream", params={"q": Q}, headers=visitor())
    later_events, later_seen = await _events_until_token(later)
    assert later_seen[-1][1]["text"] == HELD[0]
    assert len(sleeps) == 1 and sleeps[0] >= 0.45, sleeps  # the first piece came 0.5 s after the generation began
    standin_ollama.release()
    done_first = (await asyncio.wait_for(_drain(first_events), BOUND))[-1][1]
    done_later = (await asyncio.wait_for(_drain(later_events), BOUND))[-1][1]
    assert done_later["response"] == done_first["response"] == "".join(HELD) and len(standin_ollama.requests) == 1
    assert len(sleeps) == 2 and sleeps[1] > sleeps[0], sleeps  # the second as long after, the hold included


async def test_a_visitor_who_joins_an_answer_being_written_waits_their_own_turn(start_daemon, standin_ollama, monkeypatch):
    """A visitor who asked what another was waiting to be answered was told the first asker's
    place in the queue (or none, when the first had a slot), where a question of their own
    waits behind the first: one told « 1 » while the slots were taken learnt that someone had
    asked it just before. They now wait their own turn, as an answer written for them would
    (the same `queue` events, the slot given back once granted), then get the pieces at the
    pace they were written."""
    _sleeps(monkeypatch)
    client = await start(start_daemon, standin_ollama.url, llm_slots=1, llm_queue=4, llm_max_wait=60)
    generation = bot_of(client).admission
    seen = {}
    for label, q in (("joined", Q), ("written", "Où sont rangées les notes ?")):
        standin_ollama.script(pieces=HELD, hold_after=1)
        holder = await client.get("/ask/stream", params={"q": f"Quel modèle utilise GrasBot ? {label}"}, headers=visitor())
        holder_events, _ = await _events_until_token(holder)  # the only slot, taken
        first = asyncio.ensure_future(stream(client, f"{Q} {label}" if label == "written" else Q))
        await asyncio.wait_for(_until(lambda: len(generation._queue) == 1), BOUND)
        asked = asyncio.ensure_future(stream(client, q))
        await asyncio.wait_for(_until(lambda asked=asked: len(generation._queue) == 2 or asked.done()), BOUND)
        standin_ollama.script(REPLY, chunks=4)
        standin_ollama.release()
        await asyncio.wait_for(_drain(holder_events), BOUND)
        await first
        seen[label] = _kinds(await asked)
    assert seen["joined"] == seen["written"], seen
    assert seen["joined"][:3] == [("sources", None), ("queue", 2), ("queue", 1)], seen
    assert len(standin_ollama.requests) == 5  # the one who joined wrote nothing


async def _read_until(events, seen: list, name: str, why: str) -> dict:
    """The next `name` event, the others read on the way into `seen`; one that never comes fails
    the test, naming what was missing, rather than hanging it."""
    while True:
        try:
            event = await asyncio.wait_for(anext(events), BOUND)
        except TimeoutError:
            raise AssertionError(f"no `{name}` event ({why}) within {BOUND} s, after {_kinds(seen)}") from None
        except StopAsyncIteration:
            raise AssertionError(f"no `{name}` event ({why}): the stream ended after {_kinds(seen)}") from None
        seen.append(event)
        if event[0] == name:
            return event[1]


class _SentBack(NamedTuple):
    """An answer whose first host dropped it before a word, queued again at 1 behind a question
    that holds the other host's only slot; its first asker and a joiner whose turn came read it."""

    client: object
    other_host: StandinOllama
    first: object
    first_events: AsyncIterator
    first_seen: list
    joiner: object
    joiner_events: AsyncIterator
    joiner_seen: list
    rpc_joiner: asyncio.Future
    behind: asyncio.Future


@contextlib.asynccontextmanager
async def _sent_back(start_daemon) -> AsyncIterator[_SentBack]:
    async with StandinOllama() as dropping, StandinOllama() as other_host:
        dropping.script(pieces=HELD, hold_after=0, mode="drop", drop_after=0)  # accepts, then drops before a word
        other_host.script(pieces=HELD, hold_after=1)
        client = await start(start_daemon, f"{dropping.url},{other_host.url}", llm_slots=1, llm_queue=4, llm_max_wait=60, llm_timeout=60)
        generation = bot_of(client).admission
        generation.retry_after = 3600  # the dropping host is not tried again within the test
        first = await client.get("/ask/stream", params={"q": Q}, headers=visitor())
        first_events, first_seen = sse_events(first), []
        await asyncio.wait_for(_until(lambda: len(dropping.requests) == 1), BOUND)
        holder = await client.get("/ask/stream", params={"q": "Quel modèle utilise GrasBot ?"}, headers=visitor())
        await _events_until_token(holder)  # the other host's only slot
        joiner = await client.get("/ask/stream", params={"q": Q}, headers=visitor())
        joiner_events, joiner_seen = sse_events(joiner), []
        assert await _read_until(joiner_events, joiner_seen, "queue", "its own turn") == {"position": 1}
        rpc_joiner = asyncio.ensure_future(rpc_result(client, "answer", {"q": Q}, headers=visitor()))
        await asyncio.wait_for(_until(lambda: len(generation._queue) == 2), BOUND)
        behind = asyncio.ensure_future(stream(client, "Où sont rangées les notes ?"))
        await asyncio.wait_for(_until(lambda: len(generation._queue) == 3), BOUND)
        dropping.release()  # dropped before its first word: the answer goes back into the queue, last
        await asyncio.wait_for(_until(lambda: len(generation._queue) == 4), BOUND)
        assert await _read_until(first_events, first_seen, "queue", "the first asker's place once queued again") == {"position": 4}
        holder.close()  # a slot: the two joiners' turns, then the question behind, which holds it
        await asyncio.wait_for(_until(lambda: len(other_host.requests) == 2 and len(generation._queue) == 1), BOUND)
        yield _SentBack(client, other_host, first, first_events, first_seen, joiner, joiner_events, joiner_seen, rpc_joiner, behind)


@pytest.mark.parametrize("ends", ["written", "failed"])
async def test_a_visitor_who_joined_an_answer_sent_back_to_the_queue_is_told_its_place(start_daemon, monkeypatch, ends):
    """The first asker's host drops the answer before its first word: the answer goes back into
    the queue, behind the joiners' own turns and another question. The joiner's turn came, and it
    then waited for the answer with no event at all while the first asker was told its place
    (« 4 », then « 1 »): the joiner's stream sat silent up to LLM_MAX_WAIT. It is told the
    answer's place as the first asker is, then given it, or the same error the first asker is;
    one who asked on JSON-RPC gets the same answer."""
    _sleeps(monkeypatch)
    async with _sent_back(start_daemon) as it:
        while (await _read_until(it.joiner_events, it.joiner_seen, "queue", "the answer's place once queued again")) != {"position": 1}:
            pass
        while (await _read_until(it.first_events, it.first_seen, "queue", "the first asker's place")) != {"position": 1}:
            pass
        if ends == "failed":
            it.other_host.script_next(mode="http_500")  # the answer's next try, after the question behind
        it.other_host.release()
        done_first = (await asyncio.wait_for(_drain(it.first_events), BOUND))[-1]
        done_joiner = (await asyncio.wait_for(_drain(it.joiner_events), BOUND))[-1]
        answered = await asyncio.wait_for(it.rpc_joiner, BOUND)
        await asyncio.wait_for(it.behind, BOUND)
    assert done_first[0] == done_joiner[0] == "done"
    assert done_joiner[1] == done_first[1], (done_first, done_joiner)  # the same answer, or the same error
    assert answered == done_first[1]
    if ends == "written":
        assert done_first[1]["response"] == "".join(HELD) and "llm_error" not in done_first[1]
    else:
        assert done_first[1]["model"] is None and done_first[1]["llm_error"] and done_first[1]["busy"] is False
    assert len(it.other_host.requests) == 3  # the answer written once for the three


@pytest.mark.parametrize("leaves", ["first", "joiner"])
async def test_a_reader_who_leaves_while_the_answer_is_queued_again_leaves_it_to_the_others(start_daemon, monkeypatch, leaves):
    """The first asker, or a joiner whose turn came, leaves while the answer waits in the queue
    again: the others (one on the stream, one on JSON-RPC) are given it, written once, and its
    slot and place are given back."""
    _sleeps(monkeypatch)
    async with _sent_back(start_daemon) as it:
        (it.first if leaves == "first" else it.joiner).close()
        stays_events = it.joiner_events if leaves == "first" else it.first_events
        it.other_host.release()
        done = (await asyncio.wait_for(_drain(stays_events), BOUND))[-1]
        answered = await asyncio.wait_for(it.rpc_joiner, BOUND)
        await asyncio.wait_for(it.behind, BOUND)
        generation = bot_of(it.client).admission
        await asyncio.wait_for(_until(lambda: not generation._queue and all(h.in_use == 0 for h in generation.hosts)), BOUND)
    assert done[0] == "done" and done[1]["response"] == answered["response"] == "".join(HELD), (done, answered)
    assert len(it.other_host.requests) == 3 and it.other_host.chats_done == 2  # the question behind and the answer, whole
    assert [kind for kind, _ in it.other_host.events].count("disconnected") == 1  # the holder alone, closed to free its slot


@pytest.mark.parametrize("leaves", ["first", "joiner", "first on /ask", "joiner on /ask"])
async def test_a_reader_who_leaves_while_a_joiner_waits_its_turn_leaves_the_answer_to_the_other(start_daemon, standin_ollama, monkeypatch, leaves):
    """The only slot writes the answer, a joiner waits its own turn behind it: the first asker
    leaving (its stream closed, or its /ask cancelled) ends nothing, the joiner is given the
    answer; the joiner leaving frees its place, and neither stalls the answer nor holds a slot
    (a question asked next is written)."""
    _sleeps(monkeypatch)
    standin_ollama.script(pieces=HELD, hold_after=1)
    client = await start(start_daemon, standin_ollama.url, llm_slots=1, llm_queue=4, llm_max_wait=60, llm_timeout=60)
    generation = bot_of(client).admission
    plain = leaves.endswith("/ask")
    if plain and leaves.startswith("first"):
        first = asyncio.ensure_future(client.get("/ask", params={"q": Q}, headers=visitor()))
        await asyncio.wait_for(standin_ollama.first_chunk_sent.wait(), BOUND)
    else:
        first_response = await client.get("/ask/stream", params={"q": Q}, headers=visitor())
        first_events, _ = await _events_until_token(first_response)
    if plain and leaves.startswith("joiner"):
        joiner = asyncio.ensure_future(client.get("/ask", params={"q": Q}, headers=visitor()))
        await asyncio.wait_for(_until(lambda: len(generation._queue) == 1), BOUND)
    else:
        joiner_response = await client.get("/ask/stream", params={"q": Q}, headers=visitor())
        joiner_events, joiner_seen = sse_events(joiner_response), []
        assert await _read_until(joiner_events, joiner_seen, "queue", "its own turn") == {"position": 1}
    if leaves == "first on /ask":
        first.cancel()
    elif leaves == "first":
        first_response.close()
    else:
        if plain:
            joiner.cancel()
        else:
            joiner_response.close()
        await asyncio.wait_for(_until(lambda: not generation._queue), BOUND)  # its place freed
    standin_ollama.release()
    done = (await asyncio.wait_for(_drain(joiner_events if leaves.startswith("first") else first_events), BOUND))[-1]
    assert done[0] == "done" and done[1]["response"] == "".join(HELD), done
    await asyncio.wait_for(_until(lambda: all(h.in_use == 0 for h in generation.hosts) and not bot_of(client).flights), BOUND)
    assert len(standin_ollama.requests) == 1 and not any(kind == "disconnected" for kind, _ in standin_ollama.events)
    standin_ollama.script(REPLY)
    assert (await asyncio.wait_for(ask(client, "Quel modèle utilise GrasBot ?"), BOUND))["model"] == "qwen3:8b"  # no slot held


async def test_a_shared_generation_goes_on_for_those_who_stay_and_ends_with_the_last(start_daemon, standin_ollama):
    standin_ollama.script(pieces=HELD, hold_after=1)
    client = await start(start_daemon, standin_ollama.url, llm_slots=2, llm_queue=4)  # the second's turn at once
    first = await client.get("/ask/stream", params={"q": Q}, headers=visitor())
    await _events_until_token(first)
    second = await client.get("/ask/stream", params={"q": Q}, headers=visitor())
    second_events, _ = await _events_until_token(second)
    first.close()  # the one who started it leaves: the answer goes on for the other
    await asyncio.sleep(0.2)
    assert not any(kind == "disconnected" for kind, _ in standin_ollama.events)
    standin_ollama.release()
    done = (await asyncio.wait_for(_drain(second_events), BOUND))[-1][1]
    assert done["response"] == "".join(HELD) and done["reused"] is False and len(standin_ollama.requests) == 1
    # the last reader leaving ends it: the slot is freed and the model's request closed
    standin_ollama.script(pieces=HELD, hold_after=1)
    other = "Quel modèle utilise GrasBot ?"
    alone = await client.get("/ask/stream", params={"q": other}, headers=visitor())
    await _events_until_token(alone)
    alone.close()
    generation = bot_of(client).admission
    await asyncio.wait_for(_until(lambda: generation.hosts[0].in_use == 0 and not bot_of(client).flights), BOUND)
    standin_ollama.release()
    await asyncio.wait_for(_until(lambda: any(kind == "disconnected" for kind, _ in standin_ollama.events)), BOUND)
    # and the same question asked again starts a new generation rather than joining the one that ended
    standin_ollama.script(REPLY)
    again = await ask(client, other)
    assert again["reused"] is False and again["model"] == "qwen3:8b" and len(standin_ollama.requests) == 3
    assert again["response"].startswith(REPLY.split(" [")[0])  # its citation is of a note this question was not shown


async def test_no_shared_generation_for_the_owner_or_when_reuse_is_off(start_daemon, standin_ollama):
    """The owner's preview takes the owner's slot and gets its own answer; with reuse off, the
    same question waits for a slot of its own."""
    standin_ollama.script(pieces=HELD, hold_after=1)
    client = await start(start_daemon, standin_ollama.url, llm_slots=1, llm_queue=4)
    first = await client.get("/ask/stream", params={"q": Q}, headers=visitor())
    first_events, _ = await _events_until_token(first)
    owner = asyncio.ensure_future(client.get("/ask", params={"q": Q}, headers=OWNER))
    await asyncio.wait_for(_until(lambda: len(standin_ollama.requests) == 2), BOUND)  # its own generation
    standin_ollama.release()
    await asyncio.wait_for(_drain(first_events), BOUND)
    assert (await (await asyncio.wait_for(owner, BOUND)).json())["reused"] is False
    assert standin_ollama.max_in_flight == 2

    standin_ollama.script(pieces=HELD, hold_after=1)
    off = await start(start_daemon, standin_ollama.url, llm_slots=1, llm_queue=4, answer_cache="off")
    first = await off.get("/ask/stream", params={"q": Q}, headers=visitor())
    first_events, _ = await _events_until_token(first)
    second = await off.get("/ask/stream", params={"q": Q}, headers=visitor())
    second_events = sse_events(second)
    assert [await asyncio.wait_for(anext(second_events), BOUND) for _ in range(2)][1] == ("queue", {"position": 1})
    standin_ollama.release()
    await asyncio.wait_for(_drain(first_events), BOUND)
    done = (await asyncio.wait_for(_drain(second_events), BOUND))[-1][1]
    assert done["reused"] is False and len(standin_ollama.requests) == 4


async def test_a_flight_gives_each_reader_everything_and_how_it_ended():
    """Pure: readers joined at different times each get every piece from the first, the queue
    place only before the first piece, and the error that ended the source."""
    gate = asyncio.Event()
    snapshot, other_snapshot = object(), object()

    async def source():
        yield Position(2)
        yield Position(1)
        await gate.wait()
        yield "Bonjour "
        yield "à tous"
        raise Busy("the queue is full")

    async def read(flight) -> tuple[list, str]:
        got = []
        try:
            async for item in flight.follow():
                got.append(item)
        except Busy as exc:
            return got, str(exc)
        return got, ""

    flights = Flights()
    first, started = flights.join(("q",), snapshot, source, audience="visitor")
    reading = asyncio.ensure_future(read(first))
    await asyncio.sleep(0)
    same, again = flights.join(("q",), snapshot, source, audience="visitor")
    elsewhere, anew = flights.join(("q",), other_snapshot, source, audience="visitor")  # another vault version: its own
    assert started and not again and same is first and anew and elsewhere is not first
    late = asyncio.ensure_future(read(same))
    gate.set()
    early_items, early_end = await asyncio.wait_for(reading, BOUND)
    late_items, late_end = await asyncio.wait_for(late, BOUND)
    assert early_items[-2:] == late_items[-2:] == ["Bonjour ", "à tous"]
    assert all(isinstance(i, Position) for i in early_items[:-2]) and early_items[-3] == Position(1)
    assert early_end == late_end == "the queue is full"
    await asyncio.wait_for(read(elsewhere), BOUND)
    await asyncio.sleep(0)
    assert len(flights) == 0


async def test_a_joiner_is_told_the_flights_place_only_while_it_is_in_the_queue():
    """Pure: a reader whose turn came while the flight writes is given no place it had before
    its slot (the flight is out of the queue); sent back into the queue, its new place."""
    granted, dropped, again = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def source():
        yield Position(1)
        yield GRANTED
        granted.set()
        await dropped.wait()  # its host failed before a word: back into the queue
        yield Position(2)
        await again.wait()
        yield GRANTED
        yield "Bonjour"

    async def no_wait():  # the joiner's own turn, come at once
        return
        yield

    flights = Flights()
    flight, _ = flights.join(("q",), object(), source, audience="visitor")
    first = asyncio.ensure_future(_follow(flight.follow()))
    await asyncio.wait_for(granted.wait(), BOUND)
    joined, _ = flights.join(("q",), flight.snapshot, source, audience="visitor")
    reader = joined.follow(no_wait())
    told = asyncio.ensure_future(anext(reader))
    for _ in range(5):
        await asyncio.sleep(0)
    assert not told.done(), told.result()  # writing: nothing to tell, not its place before
    dropped.set()
    assert await asyncio.wait_for(told, BOUND) == Position(2)
    again.set()
    assert await asyncio.wait_for(anext(reader), BOUND) == "Bonjour"
    await reader.aclose()
    assert (await asyncio.wait_for(first, BOUND))[-2:] == [Position(2), "Bonjour"]  # the first asker, as before


async def _follow(reader) -> list:
    return [item async for item in reader]


async def _until(condition) -> None:
    while not condition():
        await asyncio.sleep(0.02)


async def test_the_owners_previews_are_not_counted_as_visitors_reuses(start_daemon, standin_ollama):
    """The plugin previews as a visitor (audience visitor, with the owner token): a preview of a
    question visitors asked is answered from their kept answer, as they would be, but the
    public /health counted it among the visitors' reuses, and two previews at once among the
    visitors' shared answers. (A visitor's /health now counts none: the owner's does.)"""
    standin_ollama.script(REPLY)
    client = await start(start_daemon, standin_ollama.url)
    assert (await ask(client))["reused"] is False  # a visitor
    owner_stream = await client.get("/ask/stream", params={"q": Q}, headers=OWNER)  # the owner's preview, as the plugin asks it
    preview = [event async for event in sse_events(owner_stream)]
    assert preview[-1][1]["reused"] is True and preview[-1][1]["response"] == REPLY  # what a visitor is told
    assert (await ask(client))["response"] == REPLY and len(standin_ollama.requests) == 1  # a visitor again, from the kept answer
    assert "reused" not in (await (await client.get("/health")).json())["generation"]
    assert await owner_counts(client) == {"kept": 1, "hits": 2, "shared": 0}
    # two previews of a new question at once: one generation, shared by the owner's two
    standin_ollama.script(pieces=HELD, hold_after=1)
    other = "Quel modèle utilise GrasBot ?"
    first_events, _ = await _events_until_token(await client.get("/ask/stream", params={"q": other}, headers=OWNER))
    second_events, _ = await _events_until_token(await client.get("/ask/stream", params={"q": other}, headers=OWNER))
    standin_ollama.release()
    done = [(await asyncio.wait_for(_drain(events), BOUND))[-1][1] for events in (first_events, second_events)]
    assert done[0]["response"] == done[1]["response"] and done[1]["reused"] is True and len(standin_ollama.requests) == 2
    assert (await owner_counts(client))["shared"] == 1


@pytest.mark.parametrize("path", ["stream", "ask"])
async def test_a_kept_answer_replayed_while_a_reload_takes_its_note_away_is_not_given(start_daemon, standin_ollama, note_writer, monkeypatch, path):
    """A kept answer is replayed at its writing's pace after its visitor's turn, seconds in all:
    a reload meanwhile that made the note it quotes private forgot the kept answers, but not the
    one being replayed, which went on to the visitor, the private note's words, slug and card
    with it, where an answer being written is checked against the vault served before each of
    its words (`_check_current`) and answered from the current notes instead."""
    note_writer("a.md", "title: Les abeilles\nvisibility: public", "Les abeilles font le miel zorglub dans la ruche.")
    note_writer("b.md", "title: La ruche\nvisibility: public", "La ruche abrite les abeilles.")
    standin_ollama.script("Les abeilles font le miel zorglub [a].", chunks=4)
    client = await start(start_daemon, standin_ollama.url, note_writer.root, search_min_score=0.5)
    q = "Que font les abeilles dans la ruche ?"
    assert "zorglub" in (await ask(client, q))["response"]
    gate, waiting = asyncio.Event(), []

    async def sleep(delay: float) -> None:
        waiting.append(delay)
        await gate.wait()

    monkeypatch.setattr(reuse, "_sleep", sleep)
    if path == "stream":
        given = asyncio.ensure_future(stream(client, q))
    else:
        given = asyncio.ensure_future(ask(client, q))
    await asyncio.wait_for(_until(lambda: bool(waiting)), BOUND)  # replaying
    note_writer("a.md", "title: Les abeilles\nvisibility: private", "Les abeilles font le miel zorglub dans la ruche.")
    assert (await client.post("/reload-vault", headers=OWNER)).status == 200
    gate.set()
    said = await asyncio.wait_for(given, BOUND)
    if path == "stream":  # its sources came before the reload, as a written answer's do
        assert said[0][0] == "sources"
        said = said[1:]
    done = said[-1][1] if path == "stream" else said
    assert "zorglub" not in json.dumps(said, ensure_ascii=False), said
    assert done.get("reused") is not True and "a" not in [s["slug"] for s in done["sources"]]
    assert len(standin_ollama.requests) == 1
