"""Answer reuse through the real daemon: a first question asked again is answered from the kept
answers (on /ask, JSON-RPC and the stream, which replays it), and never when it should not be:
after a reload, with history, after a fallback or a busy answer, or across audiences."""

from __future__ import annotations

import asyncio
import json

from grasbot.answer.reuse import AnswerCache, normalise_question, replay_pieces
from support.bots import OWNER, OWNER_TOKEN, rpc_result, sse_events

Q = "Comment fonctionne GrasBot ?"
REPLY = "GrasBot cherche les notes, puis le modèle rédige la réponse à partir d'elles [grasbot-pipeline]."
BOUND = 15


async def ask(client, q: str = Q, **params) -> dict:
    resp = await client.get("/ask", params={"q": q, **params})
    assert resp.status == 200
    return await resp.json()


async def stream(client, q: str = Q) -> list[tuple[str, dict]]:
    resp = await client.get("/ask/stream", params={"q": q})

    async def read():
        return [event async for event in sse_events(resp)]

    return await asyncio.wait_for(read(), BOUND)


async def start(start_daemon, url, vault=None, **settings):
    settings.setdefault("rate_per_minute", 100_000)
    settings.setdefault("rate_burst", 100_000)
    kwargs = {"ollama_url": url, "owner_token": OWNER_TOKEN, **settings}
    return await (start_daemon(vault, **kwargs) if vault is not None else start_daemon(**kwargs))


def test_questions_are_folded_for_reuse_but_not_merged():
    assert normalise_question("Qui es-tu ?") == normalise_question("  QUI  es-tu?") == normalise_question("qui es-tu")
    assert normalise_question("Qui es-tu ?") != normalise_question("Qui es-tu, toi ?")
    assert normalise_question("Comment te contacter ?") != normalise_question("Pourquoi te contacter ?")
    text = "Une réponse assez longue pour être coupée en plusieurs morceaux quand elle est rejouée au visiteur. [x]"
    pieces = list(replay_pieces(text, size=20))
    assert len(pieces) > 2 and "".join(pieces) == text


def test_the_cache_is_bounded_and_bound_to_one_snapshot():
    class Snap:
        pass

    one, two = Snap(), Snap()
    cache = AnswerCache(2)
    cache.forget(one)
    for i in range(3):
        cache.put(one, (i,), {"i": i})
    assert cache.get(one, (0,)) is None and cache.get(one, (2,)) == {"i": 2} and len(cache) == 2  # the oldest went
    cache.forget(two)
    assert cache.get(two, (2,)) is None
    cache.put(one, (5,), {"i": 5})  # an answer written on the old version, finishing after the reload
    assert cache.get(two, (5,)) is None and cache.get(one, (5,)) is None


async def test_a_question_asked_again_is_reused_on_every_path(start_daemon, standin_ollama):
    standin_ollama.script(REPLY, chunks=4)
    client = await start(start_daemon, standin_ollama.url)
    first = await ask(client)
    assert first["reused"] is False and first["busy"] is False and first["model"] == "qwen3:8b"
    again = await ask(client, "  comment FONCTIONNE grasbot?")
    assert again["reused"] is True and len(standin_ollama.requests) == 1
    assert {k: v for k, v in again.items() if k != "reused"} == {k: v for k, v in first.items() if k != "reused"}
    rpc = await rpc_result(client, "answer", {"q": Q})
    assert rpc["reused"] is True and rpc["response"] == first["response"]
    events = await stream(client)
    names = [n for n, _ in events]
    assert names[0] == "sources" and names[-1] == "done" and set(names[1:-1]) == {"token"}
    assert "".join(d["text"] for n, d in events if n == "token") == first["response"]
    assert events[0][1] == {"sources": first["sources"], "grounded": first["grounded"]}
    assert events[-1][1]["reused"] is True and events[-1][1]["response"] == first["response"]
    assert len(standin_ollama.requests) == 1  # none of these reached the model
    generation = (await (await client.get("/health", headers=OWNER)).json())["generation"]
    assert generation["reused"] == {"kept": 1, "hits": 3}


async def test_a_streamed_answer_is_kept_too(start_daemon, standin_ollama):
    standin_ollama.script(REPLY, chunks=4)
    client = await start(start_daemon, standin_ollama.url)
    events = await stream(client)
    assert events[-1][1]["reused"] is False
    assert (await ask(client))["reused"] is True and len(standin_ollama.requests) == 1


async def test_a_reload_forgets_the_kept_answers(start_daemon, standin_ollama, note_writer):
    note_writer("a.md", "title: Les abeilles\nvisibility: public", "Les abeilles font du miel dans la ruche [a].")
    standin_ollama.script("Les abeilles font du miel [a].")
    client = await start(start_daemon, standin_ollama.url, note_writer.root, search_min_score=0.5)
    q = "Que font les abeilles ?"
    assert (await ask(client, q))["reused"] is False
    assert (await ask(client, q))["reused"] is True
    note_writer("a.md", "title: Les abeilles\nvisibility: public", "Les abeilles font du miel et de la cire.")
    assert (await client.post("/reload-vault", headers=OWNER)).status == 200
    after = await ask(client, q)
    assert after["reused"] is False and len(standin_ollama.requests) == 2
    assert (await ask(client, q))["reused"] is True


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
    held = await client.get("/ask/stream", params={"q": Q})
    events = sse_events(held)
    while (await asyncio.wait_for(anext(events), BOUND))[0] != "token":
        pass
    busy = await ask(client)
    assert busy["busy"] is True and busy["reused"] is False
    standin_ollama.release()
    rest = await asyncio.wait_for(_drain(events), BOUND)
    assert rest[-1][1]["model"] == "qwen3:8b"  # this one is kept
    standin_ollama.script(REPLY)
    kept = await ask(client)
    assert kept["reused"] is True and kept["busy"] is False and "llm_error" not in kept
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
