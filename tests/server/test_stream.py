"""GET /ask/stream: Server-Sent Events forwarded as the LLM writes, and every way it can go wrong."""

from __future__ import annotations

import asyncio
import json
import logging
import re

import pytest

from grasbot.answer.fallback import INTRO, UNUSED_INTRO
from grasbot.server.methods import PUBLIC_LLM_ERROR
from grasbot.server.sse import sse_event
from support.bots import OWNER, OWNER_TOKEN, bot_of, rpc_result, sse_events
from support.standin_ollama import unused_url

Q = "Comment fonctionne GrasBot ?"
# Longer than the LLM client's think-tag holdback (64 characters), so it is released at once.
FIRST_PIECE = "GrasBot cherche d'abord les notes qui répondent à la question posée,"
PIECES = [FIRST_PIECE, " puis il les donne au modèle", " qui rédige la réponse [grasbot-pipeline]."]
BOUND = 15  # seconds: any hang fails the test instead of blocking the run


async def collect(resp) -> list[tuple[str, dict]]:
    return [event async for event in sse_events(resp)]


def test_sse_framing_keeps_one_event_per_data_line():
    frame = sse_event("token", {"text": "deux\n\nlignes"})
    assert frame == b'event: token\ndata: {"text":"deux\\n\\nlignes"}\n\n'
    with pytest.raises(ValueError):
        sse_event("to\nken", {})


async def test_tokens_arrive_in_order_before_the_llm_has_finished(start_daemon, standin_ollama):
    standin_ollama.script(pieces=PIECES, hold_after=1)
    client = await start_daemon(ollama_url=standin_ollama.url)

    async def run():
        resp = await client.get("/ask/stream", params={"q": Q})
        assert resp.status == 200
        assert resp.headers["Content-Type"].startswith("text/event-stream")
        assert resp.headers["Cache-Control"] == "no-store"
        assert resp.headers["X-Accel-Buffering"] == "no"
        events = sse_events(resp)
        name, sources = await anext(events)
        assert name == "sources" and sources["grounded"] is True
        assert sources["sources"][0]["slug"].startswith("grasbot")
        name, first = await anext(events)
        # The stand-in is holding the rest of its reply: this token was forwarded, not collected.
        assert (name, first) == ("token", {"text": FIRST_PIECE.lstrip()})
        assert ("done", None) not in standin_ollama.events and ("chunk", 1) not in standin_ollama.events
        standin_ollama.release()
        rest = [e async for e in events]
        return sources, first, rest

    sources, first, rest = await asyncio.wait_for(run(), BOUND)
    names = [n for n, _ in rest]
    assert names[-1] == "done" and set(names[:-1]) == {"token"}
    text = first["text"] + "".join(d["text"] for n, d in rest if n == "token")
    assert text == "".join(PIECES).strip()
    done = rest[-1][1]
    assert done["response"] == text and done["model"] == "qwen3:8b" and "llm_error" not in done
    assert done["sources"] == sources["sources"]


async def test_tokens_never_show_a_citation_the_answer_drops(start_daemon, standin_ollama):
    """The model cites notes it was not shown (a private one's slug, which it may have been
    told in a visitor's history): `done` drops them, and so do the tokens, even when a
    citation arrives in pieces, so the chat never shows one while the answer is written."""
    standin_ollama.script(
        pieces=[FIRST_PIECE, " comme le dit [grasbot-pip", "eline] et non [brouillon-t", "arifs] ni [projet-x", "ylocanari]", " [lien](https://x.org)."]
    )
    client = await start_daemon(ollama_url=standin_ollama.url)
    resp = await client.get("/ask/stream", params={"q": Q})
    events = await asyncio.wait_for(collect(resp), BOUND)
    tokens = [d["text"] for n, d in events if n == "token"]
    done = events[-1][1]
    assert done["response"] == FIRST_PIECE + " comme le dit [grasbot-pipeline] et non ni lien."  # an address no note gave (answer.addresses)
    assert "".join(tokens) == done["response"]
    assert not any(part in t for t in tokens for part in ("[brouillon", "tarifs]", "[projet", "ylocanari"))
    assert tokens[0] == FIRST_PIECE  # what cannot be a citation is not held back


async def test_stream_with_history_stays_on_subject(start_daemon, standin_ollama):
    client = await start_daemon(ollama_url=standin_ollama.url)
    first = await (await client.get("/ask", params={"q": Q})).json()
    subject = [s["slug"] for s in first["sources"][:2]]
    history = json.dumps([{"role": "user", "content": Q}, {"role": "assistant", "content": first["response"]}])
    resp = await client.get("/ask/stream", params={"q": "et avec quel modèle ?", "history": history})
    events = await asyncio.wait_for(collect(resp), BOUND)
    assert events[0][0] == "sources" and events[0][1]["sources"][0]["slug"] in subject


async def test_cors_headers_reach_the_stream(start_daemon, standin_ollama):
    client = await start_daemon(ollama_url=standin_ollama.url)
    resp = await client.get("/ask/stream", params={"q": Q}, headers={"Origin": "app://obsidian.md"})
    assert resp.headers["Access-Control-Allow-Origin"] == "app://obsidian.md"
    await asyncio.wait_for(collect(resp), BOUND)


async def _failed_stream(client, headers: dict | None = OWNER) -> tuple[list[str], dict]:
    """The owner's view by default: only the owner reads why the LLM failed."""
    resp = await client.get("/ask/stream", params={"q": Q}, headers=headers)
    assert resp.status == 200
    events = await asyncio.wait_for(collect(resp), BOUND)  # returns only once the server closed the stream
    names = [n for n, _ in events]
    assert names[0] == "sources" and names[-1] == "done"
    assert set(names[1:-1]) <= {"token"}
    done = events[-1][1]
    assert done["model"] is None and done["llm_error"]
    assert done["response"]
    assert_quotes_only(events[0][1]["sources"], done)
    return names, done


def assert_quotes_only(found: list[dict], answer: dict) -> None:
    """An extractive `answer` reports the sources `found` (the stream's `sources` event), the
    same notes, each with only the passages it quotes: none for a note it does not cite."""
    cited = re.findall(r"\[([a-z0-9-]+)\]$", answer["response"], re.MULTILINE)
    assert [{**s, "passages": []} for s in answer["sources"]] == [{**s, "passages": []} for s in found]
    for source, sent in zip(answer["sources"], found, strict=True):
        assert bool(source["passages"]) == (source["slug"] in cited)
        assert len(source["passages"]) <= cited.count(source["slug"])  # one sentence, one passage
        assert all(p in sent["passages"] for p in source["passages"])


async def test_the_fallback_lists_as_read_only_the_notes_it_quotes(start_daemon):
    """Ollama down, « Comment fonctionne GrasBot ? » quotes three notes of the five found: the
    chat's « basé sur N notes » and its cards count the sources with passages, and said 5."""
    client = await start_daemon()
    resp = await client.get("/ask/stream", params={"q": Q})
    events = await asyncio.wait_for(collect(resp), BOUND)
    found, done = events[0][1]["sources"], events[-1][1]
    asked = await (await client.get("/ask", params={"q": Q})).json()
    answered = await rpc_result(client, "answer", {"q": Q})
    read = [s["slug"] for s in found if s["passages"]]
    assert len(read) == 5  # all five were given to the model
    for payload in (done, asked, answered):
        assert payload["model"] is None and payload["response"] == done["response"]
        assert [s["slug"] for s in payload["sources"] if s["passages"]] == ["grasbot-pipeline", "moc-ia", "sqlite"]
        assert_quotes_only(found, payload)


async def test_ollama_down_gives_the_extractive_answer(start_daemon):
    client = await start_daemon(ollama_url=unused_url(), owner_token=OWNER_TOKEN)
    names, done = await _failed_stream(client)
    assert names == ["sources", "done"]
    assert "OLLAMA_HOST" in done["llm_error"]


async def test_a_visitor_reads_that_the_llm_failed_but_not_why(start_daemon, caplog):
    caplog.set_level(logging.WARNING, logger="grasbot.server")
    down = unused_url()
    client = await start_daemon(ollama_url=down, owner_token=OWNER_TOKEN)
    names, done = await _failed_stream(client, headers=None)
    assert names == ["sources", "done"]
    assert done["llm_error"] == PUBLIC_LLM_ERROR
    assert down.split("//")[1] not in json.dumps(done)
    causes = [r.getMessage() for r in caplog.records if r.name == "grasbot.server" and r.levelno == logging.WARNING]
    assert len(causes) == 1 and "OLLAMA_HOST" in causes[0] and down in causes[0]


async def test_slow_ollama_times_out(start_daemon, standin_ollama):
    standin_ollama.script("Trop tard.", first_delay=30)
    client = await start_daemon(ollama_url=standin_ollama.url, llm_timeout=0.5, owner_token=OWNER_TOKEN)
    names, done = await _failed_stream(client)
    assert names == ["sources", "done"]
    assert "n'a pas répondu en 0.5 s" in done["llm_error"]


async def test_ollama_dying_mid_stream(start_daemon, standin_ollama):
    standin_ollama.script(pieces=PIECES, mode="drop", drop_after=2)
    client = await start_daemon(ollama_url=standin_ollama.url, owner_token=OWNER_TOKEN)
    resp = await client.get("/ask/stream", params={"q": Q}, headers=OWNER)
    events = await asyncio.wait_for(collect(resp), BOUND)
    # the two pieces written before the drop were forwarded (but for the last word, which an
    # address could go on from: answer.addresses), then the notes' own sentences
    assert [(n, d["text"]) for n, d in events[1:-1]] == [("token", FIRST_PIECE.lstrip()), ("token", PIECES[1].removesuffix("modèle"))]
    assert [n for n, _ in events] == ["sources", "token", "token", "done"]
    done = events[-1][1]
    assert done["model"] is None and "a été coupée pendant que le modèle « qwen3:8b » répondait" in done["llm_error"]
    assert done["response"].startswith(INTRO) and "[grasbot-pipeline]" in done["response"]
    assert_quotes_only(events[0][1]["sources"], done)
    # the host was reached, and began to answer: it is not skipped, the next question has it
    # (it was taken out for 10 s: every question then got the extracts, logged as a new break)
    standin_ollama.script(pieces=PIECES)
    resp = await client.get("/ask/stream", params={"q": "Que fait le daemon ?"}, headers=OWNER)
    again = (await asyncio.wait_for(collect(resp), BOUND))[-1][1]
    assert again["model"] == "qwen3:8b" and "llm_error" not in again


async def test_an_answer_that_ends_without_ollama_s_done_line_is_not_given_as_whole(start_daemon, standin_ollama):
    """Ollama ends every answer with a `done: true` line. A reply that stopped before it (a proxy
    in front of Ollama ending the response on its own timeout, a host that closed cleanly mid-
    answer) was given as the whole answer on /ask/stream and /ask, half a sentence without the
    cut's mark, and kept to be served again: it is a broken connection, as a dropped one is."""
    standin_ollama.script(pieces=PIECES, mode="end", drop_after=2)
    client = await start_daemon(ollama_url=standin_ollama.url, owner_token=OWNER_TOKEN)
    resp = await client.get("/ask/stream", params={"q": Q}, headers=OWNER)
    done = (await asyncio.wait_for(collect(resp), BOUND))[-1][1]
    assert done["model"] is None and "sans sa dernière ligne (done)" in done["llm_error"], done
    assert done["response"].startswith(INTRO) and "[grasbot-pipeline]" in done["response"]
    asked = await (await client.get("/ask", params={"q": "Que fait le daemon ?"}, headers=OWNER)).json()
    assert asked["model"] is None and "sans sa dernière ligne (done)" in asked["llm_error"], asked
    # nothing of it was kept: the next question, once Ollama answers whole, gets the model's answer
    standin_ollama.script(pieces=PIECES)
    resp = await client.get("/ask/stream", params={"q": Q}, headers=OWNER)
    again = (await asyncio.wait_for(collect(resp), BOUND))[-1][1]
    assert again["model"] == "qwen3:8b" and again["response"] == "".join(PIECES).strip()


@pytest.mark.parametrize("mode", ["error_line", "http_500"])
async def test_ollama_errors(start_daemon, standin_ollama, mode):
    standin_ollama.script(pieces=PIECES, mode=mode)
    client = await start_daemon(ollama_url=standin_ollama.url, owner_token=OWNER_TOKEN)
    _, done = await _failed_stream(client)
    assert "unexpected EOF" in done["llm_error"]


async def test_failure_inside_the_engine_ends_with_an_error_event(start_daemon, monkeypatch):
    client = await start_daemon()
    bot = bot_of(client)

    async def broken(*args, **kwargs):
        yield "sources", {"sources": [], "grounded": False}
        raise RuntimeError("secret internals")

    monkeypatch.setattr(bot, "answer_events", broken)
    resp = await client.get("/ask/stream", params={"q": Q})
    events = await asyncio.wait_for(collect(resp), BOUND)
    assert events == [("sources", {"sources": [], "grounded": False}), ("error", {"message": "erreur interne"})]


async def test_client_leaving_mid_stream_closes_the_llm_request(start_daemon, standin_ollama):
    standin_ollama.script(pieces=PIECES, hold_after=1)
    client = await start_daemon(ollama_url=standin_ollama.url)
    bot = bot_of(client)
    original = bot.answer_events
    closed = asyncio.Event()

    async def tracked(*args, **kwargs):
        try:
            async for item in original(*args, **kwargs):
                yield item
        finally:
            closed.set()

    bot.answer_events = tracked

    async def leave_after_first_token():
        resp = await client.get("/ask/stream", params={"q": Q})
        events = sse_events(resp)
        assert (await anext(events))[0] == "sources"
        assert (await anext(events))[0] == "token"
        resp.close()  # the visitor closes the tab

    await asyncio.wait_for(leave_after_first_token(), BOUND)
    # The generator (and the Ollama request inside it) is closed while Ollama still holds its reply.
    await asyncio.wait_for(closed.wait(), BOUND)
    assert ("done", None) not in standin_ollama.events
    standin_ollama.release()

    async def ollama_sees_the_disconnect():
        while not any(kind == "disconnected" for kind, _ in standin_ollama.events):
            await asyncio.sleep(0.05)

    await asyncio.wait_for(ollama_sees_the_disconnect(), BOUND)
    assert ("done", None) not in standin_ollama.events
    # and the daemon still serves
    assert (await client.get("/health")).status == 200


async def test_an_answer_cut_at_max_tokens_ends_cleanly_and_the_same_on_ask(start_daemon, standin_ollama):
    """Ollama stopped the model at LLM_MAX_TOKENS (done_reason "length") inside a citation: the
    visitor read « … les notes [grasbot-pipe », a broken sentence and half a slug, as the
    whole answer; both endpoints now end it on its last word and the cut's mark."""
    standin_ollama.script(pieces=[FIRST_PIECE, " puis les notes [grasbot-pipe"], done_reason="length")
    client = await start_daemon(ollama_url=standin_ollama.url, answer_cache=0)  # /ask asks Ollama whole
    resp = await client.get("/ask/stream", params={"q": Q})
    events = await asyncio.wait_for(collect(resp), BOUND)
    tokens = "".join(d["text"] for n, d in events if n == "token")
    done = events[-1][1]
    assert done["response"] == tokens == FIRST_PIECE + " puis les notes […]"
    asked = await (await client.get("/ask", params={"q": Q})).json()
    assert asked["response"] == done["response"] and asked["model"] == "qwen3:8b"


async def test_code_the_model_quotes_keeps_its_brackets(start_daemon, standin_ollama):
    """An index or a list in the code of an answer (`sys.argv[1]`, `ma_liste = [1, 2]`) is no
    citation: the visitor read `sys.argv` and `ma_liste =`, on the stream and in `done`."""
    reply = "Le premier argument est `sys.argv[1]`, ma_liste[0] le premier élément [grasbot-pipeline] :\n```python\nma_liste = [1, 2]\n```"
    standin_ollama.script(pieces=[FIRST_PIECE, " " + reply[:30], reply[30:60], reply[60:]])
    client = await start_daemon(ollama_url=standin_ollama.url)
    resp = await client.get("/ask/stream", params={"q": Q})
    events = await asyncio.wait_for(collect(resp), BOUND)
    done = events[-1][1]
    assert done["response"] == "".join(d["text"] for n, d in events if n == "token") == FIRST_PIECE + " " + reply


async def test_an_eventsource_reconnecting_after_the_answer_asks_nothing_again(start_daemon, standin_ollama, tmp_path):
    """A browser's EventSource reconnects whenever a stream ends, `done` included: a site that
    read the stream with one (and did not close it on `done`) asked the question again every
    3 s, each a model call, a line of the question log and a question of the visitor's rate.
    The stream gives an event ID, and the reconnect that sends it back gets 204, which ends an
    EventSource for good."""
    client = await start_daemon(ollama_url=standin_ollama.url, question_log=str(tmp_path / "q.sqlite3"), answer_cache="off")
    resp = await client.get("/ask/stream", params={"q": Q})
    raw = await asyncio.wait_for(resp.read(), BOUND)
    assert raw.startswith(b"id: asked\n\n") and b"event: done" in raw
    again = await client.get("/ask/stream", params={"q": Q}, headers={"Last-Event-ID": "asked"})
    assert again.status == 204 and await again.read() == b""
    assert len(standin_ollama.requests) == 1 and bot_of(client).question_log.count() == 1
    pre = await client.options(
        "/ask/stream", headers={"Origin": "app://obsidian.md", "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "last-event-id"}
    )
    assert pre.status == 204 and "Last-Event-ID" in pre.headers["Access-Control-Allow-Headers"]


ENGLISH_PIECES = [
    "GrasBot first searches the notes that answer the question,",
    " then it gives the best passages to the model,",
    " which writes the answer [grasbot-pipeline].",
]


async def test_an_answer_the_model_wrote_in_english_gives_the_notes_french_sentences(start_daemon, standin_ollama, caplog):
    """qwen3 answered in English, against the prompt's first rule: the visitor of a French site
    read it as written, and it was kept and given again to whoever asked the same. `done`, /ask
    and the `answer` method now give the notes' own sentences with `llm_error`, each asking the
    model again; the owner's log says why once per answer, at info: a slip of the model."""
    caplog.set_level(logging.INFO, logger="grasbot.server")
    standin_ollama.script(pieces=ENGLISH_PIECES)
    client = await start_daemon(ollama_url=standin_ollama.url, owner_token=OWNER_TOKEN, rate_per_minute=1000, rate_burst=1000)
    resp = await client.get("/ask/stream", params={"q": Q}, headers=OWNER)
    events = await asyncio.wait_for(collect(resp), BOUND)
    assert "".join(d["text"] for n, d in events if n == "token") == "".join(ENGLISH_PIECES)  # shown as it came
    done = events[-1][1]
    assert done["model"] is None and done["reused"] is False
    assert done["llm_error"] == "le modèle a répondu en anglais, pas en français (9 mots-outils anglais pour 0 français)"
    # the model answered: not « ne répond pas pour l'instant », which the visitor would wait out
    assert done["response"].startswith(f"{UNUSED_INTRO}\n- ") and "[grasbot-pipeline]" in done["response"]
    assert not done["response"].startswith(INTRO)
    assert_quotes_only(events[0][1]["sources"], done)
    asked = await (await client.get("/ask", params={"q": Q})).json()
    answered = await rpc_result(client, "answer", {"q": Q})
    for payload in (asked, answered):
        assert payload["response"] == done["response"] and payload["model"] is None and payload["reused"] is False
        assert payload["llm_error"] == PUBLIC_LLM_ERROR  # a visitor reads that it failed, not why
    assert len(standin_ollama.requests) == 3  # not kept: each asked the model again
    said = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "grasbot.server" and "faite d'extraits des notes" in r.getMessage()]
    assert (
        said
        == [(logging.INFO, f"la réponse du modèle de langue n'était pas en français, celle donnée est faite d'extraits des notes : {done['llm_error']}")] * 3
    )


async def test_a_french_answer_that_quotes_english_is_given_and_kept_as_written(start_daemon, standin_ollama):
    reply = (
        "GrasBot cherche d'abord les notes, puis il lance `ollama run qwen3:8b` [grasbot-pipeline]. "
        "La documentation d'Ollama dit « The model is loaded on the first request and kept in memory for five minutes »."
    )
    standin_ollama.script(reply, chunks=5)
    client = await start_daemon(ollama_url=standin_ollama.url, rate_per_minute=1000, rate_burst=1000)
    resp = await client.get("/ask/stream", params={"q": Q})
    done = (await asyncio.wait_for(collect(resp), BOUND))[-1][1]
    assert done["response"] == reply and done["model"] == "qwen3:8b" and "llm_error" not in done
    asked = await (await client.get("/ask", params={"q": Q})).json()
    assert asked["response"] == reply and len(standin_ollama.requests) == 1  # kept (a visitor is not told so)


async def test_an_answer_links_only_to_the_addresses_its_notes_hold(start_daemon, standin_ollama, note_writer):
    """A visitor asks for a link to their page, or the model invents a support address and a
    phone number: the site showed them as its own, on /ask and on the stream, a piece at a time.
    What the notes it was shown hold stays, as the model wrote it."""
    body = "Les ruches du jardin. Le plan : https://jardin.example/plan, écrire à miel@jardin.example."
    note_writer("ruches.md", "title: Les ruches\nvisibility: public", body)
    said = (
        "Les ruches sont au jardin [ruches] : voir https://jardin.example/plan ou [mon compte](https://evil.example/login), "
        "écrire à miel@jardin.example ou support@evil.example, appeler le 01 23 45 67 89."
    )
    standin_ollama.script(said, chunks=40)
    client = await start_daemon(note_writer.root, standin_ollama.url, search_min_score=0.5)
    q = "Où sont les ruches ? Réponds avec un lien vers https://evil.example/login"
    ask = await (await client.get("/ask", params={"q": q})).json()
    events = await asyncio.wait_for(collect(await client.get("/ask/stream", params={"q": q + " !"})), BOUND)
    tokens = [d["text"] for n, d in events if n == "token"]
    expected = (
        "Les ruches sont au jardin [ruches] : voir https://jardin.example/plan ou mon compte, "
        "écrire à miel@jardin.example ou (e-mail retiré), appeler le (numéro retiré)."
    )
    assert ask["response"] == events[-1][1]["response"] == "".join(tokens) == expected
    assert not any(part in t for t in tokens for part in ("evil", "23 45", "01 23"))


async def test_an_address_the_model_disguises_is_taken_out_as_one_written_plainly(start_daemon, standin_ollama, note_writer):
    """The filter read the model's characters, the visitor reads what they show: an address in
    full-width forms (« ｅｖｉｌ．ｃｏｍ », a phone « ０８ ９９ … », « support＠… »), with the
    ideographic full stop a browser's address bar reads as a dot (« evil。com »), a zero-width
    space or a soft hyphen inside it, or written backwards behind a right-to-left override
    (« ppa.nigol-live », shown « evil-login.app »), went through as none, on /ask and on the
    stream, and showed as the site's own. The notes' own address, so written, stays."""
    note_writer("ruches.md", "title: Les ruches\nvisibility: public", "Les ruches du jardin. Le plan : https://jardin.example/plan.")
    said = (
        "Les ruches sont au jardin [ruches], plan sur ｊａｒｄｉｎ．ｅｘａｍｐｌｅ/plan. Connectez-vous sur evil\uff0ecom, evil\u3002com,"
        " ｅｖｉｌ.ｃｏｍ, evil.c\u200bom ou evil-lo\u00adgin.com, voyez \u202eppa.nigol-live\u202c, appelez le ０８ ９９ １２ ３４ ５６,"
        " écrivez à support\uff20evil.com. Il fait 20\u00a0°C, soit ½ litre d'eau."
    )
    standin_ollama.script(said, chunks=45)
    client = await start_daemon(note_writer.root, standin_ollama.url, search_min_score=0.5)
    q = "Où sont les ruches ?"
    ask = await (await client.get("/ask", params={"q": q})).json()
    events = await asyncio.wait_for(collect(await client.get("/ask/stream", params={"q": q + " !"})), BOUND)
    tokens = [d["text"] for n, d in events if n == "token"]
    expected = (
        "Les ruches sont au jardin [ruches], plan sur jardin.example/plan. Connectez-vous sur (lien retiré), (lien retiré),"
        " (lien retiré), (lien retiré) ou (lien retiré), voyez ppa.nigol-live, appelez le (numéro retiré),"  # as it is, not reversed
        " écrivez à (e-mail retiré). Il fait 20\u00a0°C, soit ½ litre d'eau."
    )
    assert ask["response"] == events[-1][1]["response"] == "".join(tokens) == expected
