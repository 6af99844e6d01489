"""A note made private (or public) while the daemon serves: from the moment the reload returns,
the visitor's daemon is the one a fresh start on the new files would be, and nothing of the
note that went private reaches a visitor by any path (results, passages, scores, /health, the
kept answers, the index cache read at the next start).

The note that goes private holds a canary word; after the reload every visitor output is
searched for it, and every visitor search is compared with a daemon started afresh on the
same files (the BM25 statistics, the boilerplate counts and the graph show in the scores)."""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import sys
from pathlib import Path

import pytest

from grasbot._engine import Snapshot
from grasbot.store import cache as _cache
from grasbot.store import gone as _gone
from support.bots import OWNER, OWNER_TOKEN, bot_of, rpc_result, sse_events, write_note

CANARY = "frelonix"
FLIP = "apiculture/ruche-frelonix.md"
FLIP_FRONT = "title: Ruche Frelonix\nslug: ruche-frelonix\naliases: [ruche noire]\nanswers: [Où est la ruche frelonix ?]\ntags: [abeilles]"
FLIP_BODY = """\
    Signé : le rucher du coteau.
    Les abeilles de la ruche frelonix donnent un miel sombre de châtaignier.
    La ruche frelonix est voisine du [[miel]] et de la [[cire]].
    """
QUESTIONS = [
    "Où est la ruche frelonix ?",
    "frelonix",
    "ruche noire",
    "miel sombre de châtaignier",
    "Les abeilles et le miel",
    "le rucher du coteau",
    "la cire des abeilles",
]


def write_vault(root: Path) -> None:
    """Public notes sharing the flip note's words and its signature line (boilerplate when three
    notes hold it), one linking to it by its title and alias."""
    signed = "Signé : le rucher du coteau.\n"
    write_note(root, "miel.md", "title: Le miel\nslug: miel\nvisibility: public", f"{signed}Le miel est clair au printemps. Voir [[Ruche Frelonix]].")
    write_note(root, "cire.md", "title: La cire\nslug: cire\nvisibility: public", f"{signed}La cire sert aux bougies, voir [[ruche noire|la ruche]].")
    write_note(root, "jardin.md", "title: Le jardin\nslug: jardin\nvisibility: public", "Le jardin accueille les ruches et le miel de châtaignier.")
    write_note(root, FLIP, f"{FLIP_FRONT}\nvisibility: public", FLIP_BODY)


def make_private(root: Path, how: str) -> None:
    path = root / FLIP
    if how == "visibility":
        write_note(root, FLIP, f"{FLIP_FRONT}\nvisibility: private", FLIP_BODY)
    elif how == "publish":
        write_note(root, FLIP, f"{FLIP_FRONT}\nvisibility: public\npublish: false", FLIP_BODY)
    elif how == "published":  # Jekyll's
        write_note(root, FLIP, f"{FLIP_FRONT}\nvisibility: public\npublished: false", FLIP_BODY)
    elif how == "excluded":
        (root / "archives").mkdir()
        shutil.move(path, root / "archives" / path.name)
    elif how == "hidden":
        path.parent.rename(root / ".apiculture")
    elif how == "deleted":
        path.unlink()


async def start(start_daemon, vault: Path, url: str | None = None, **settings):
    settings.setdefault("rate_per_minute", 100_000)
    settings.setdefault("rate_burst", 100_000)
    settings.setdefault("exclude", ("archives",))
    client = await start_daemon(vault, url, owner_token=OWNER_TOKEN, **settings)
    await meaning_ready(client)
    return client


async def meaning_ready(client) -> None:
    """Wait for the bundled encoder to have embedded the vault (when meaning is on)."""
    bot = bot_of(client)
    if bot.embedder is None:
        return
    for _ in range(600):
        if "owner" in bot.snapshot.semantic:  # the visitor's index comes first
            return
        await asyncio.sleep(0.05)
    raise AssertionError(bot.semantic_status())


async def visitor_views(client) -> dict:
    """Everything a visitor reads of the vault, without the LLM: searches and /health."""
    views = {}
    for q in QUESTIONS:
        result = await rpc_result(client, "search", {"q": q, "top_k": 10})
        del result["took_ms"]
        views[q] = result
    health = await (await client.get("/health")).json()
    views["/health"] = {k: health[k] for k in ("vault_size", "semantic")}
    return views


def assert_clean(value, where: str) -> None:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    assert CANARY not in text.lower() and "ruche noire" not in text.lower(), f"{where}: {text[:1500]}"


@pytest.mark.parametrize("semantic", ["off", "bundled"])
@pytest.mark.parametrize("how", ["visibility", "publish", "published", "excluded", "hidden", "deleted"])
async def test_a_note_made_private_is_gone_for_visitors_once_the_reload_returns(start_daemon, standin_ollama, tmp_path, how, semantic):
    root = tmp_path / "vault"
    write_vault(root)
    standin_ollama.script("La ruche frelonix donne un miel sombre [ruche-frelonix].")
    client = await start(start_daemon, root, standin_ollama.url, semantic=semantic)
    # warm every cache with the note public: searches, kept answers, the stream's
    before = await rpc_result(client, "search", {"q": "Où est la ruche frelonix ?"})
    assert before["results"][0]["slug"] == "ruche-frelonix"
    for q in QUESTIONS:
        await client.get("/ask", params={"q": q})

    make_private(root, how)
    report = await rpc_result(client, "reload", {}, headers=OWNER)
    assert report["errors"] == []

    standin_ollama.script("Les notes parlent du miel et de la cire [miel].")
    views = await visitor_views(client)
    assert_clean(list(views.values()), "visitor searches and /health")
    fresh = await start(start_daemon, root, semantic=semantic)
    assert views == await visitor_views(fresh)  # scores and passages as a fresh start gives them
    for q in QUESTIONS:
        asked = await (await client.get("/ask", params={"q": q})).json()
        assert_clean(asked, f"/ask {q}")
        assert asked["reused"] is False
        resp = await client.get("/ask/stream", params={"q": q})
        assert_clean([e async for e in sse_events(resp)], f"/ask/stream {q}")
        assert_clean(await rpc_result(client, "answer", {"q": q}), f"answer {q}")
    for slug in ("miel", "cire"):  # a public note's alias suggestions take nothing from it
        suggested = await rpc_result(client, "suggest_aliases", {"slug": slug}, headers=OWNER)
        assert_clean(suggested, f"suggest_aliases {slug}")


async def test_a_private_note_made_public_appears_once_the_reload_returns(start_daemon, tmp_path):
    root = tmp_path / "vault"
    write_vault(root)
    write_note(root, FLIP, f"{FLIP_FRONT}\nvisibility: private", FLIP_BODY)
    client = await start(start_daemon, root)
    assert "ruche-frelonix" not in json.dumps(await visitor_views(client))
    write_note(root, FLIP, f"{FLIP_FRONT}\nvisibility: public", FLIP_BODY)
    await rpc_result(client, "reload", {}, headers=OWNER)
    views = await visitor_views(client)
    assert views["Où est la ruche frelonix ?"]["results"][0]["slug"] == "ruche-frelonix"
    assert views == await visitor_views(await start(start_daemon, root))


@pytest.mark.parametrize("how", ["visibility", "excluded", "hidden", "deleted"])
async def test_the_index_cache_read_at_the_next_start_holds_no_note_made_private(start_daemon, tmp_path, how):
    root = tmp_path / "vault"
    write_vault(root)
    cache = tmp_path / "cache"
    client = await start(start_daemon, root, index_cache=True, cache_dir=str(cache))
    assert "ruche-frelonix" in json.dumps(await visitor_views(client))
    make_private(root, how)
    await rpc_result(client, "reload", {}, headers=OWNER)
    restarted = await start(start_daemon, root, index_cache=True, cache_dir=str(cache))
    views = await visitor_views(restarted)
    assert_clean(list(views.values()), "a restart on the index cache")
    assert views == await visitor_views(await start(start_daemon, root))


async def test_health_counts_the_new_vaults_texts_once_a_large_reload_returns(start_daemon, tmp_path, monkeypatch):
    """A reload with more texts to embed than it embeds inline leaves them to the worker: /health
    counts the new vault's texts from then on, not the old one's, the note made private included."""
    root = tmp_path / "vault"
    write_vault(root)
    many = 80  # beyond what a reload embeds before it swaps (EMBED_INLINE)
    for i in range(many):
        write_note(root, f"ruches/ruche-{i}.md", "visibility: public", f"La ruche numéro {i} du coteau.")
    client = await start(start_daemon, root, semantic="bundled")
    bot = bot_of(client)
    before = (await (await client.get("/health")).json())["semantic"]
    make_private(root, "visibility")
    for i in range(many):
        write_note(root, f"ruches/ruche-{i}.md", "visibility: public", f"La ruche numéro {i} du coteau, repeinte.")
    monkeypatch.setattr(bot, "start_embedding", lambda: None)  # the worker has not begun yet
    await rpc_result(client, "reload", {}, headers=OWNER)
    after = (await (await client.get("/health")).json())["semantic"]
    fresh = (await (await (await start(start_daemon, root, semantic="bundled")).get("/health")).json())["semantic"]
    assert after["total"] == fresh["total"] != before["total"]
    assert after["embedded"] == fresh["total"] - many
    # meanwhile the notes left as they were rank by meaning too, the note made private by no one's
    assert after["ready"] is True and FLIP not in bot.snapshot.semantic["visitor"].paths


async def test_an_answer_being_written_when_the_note_goes_private_is_never_shared_after_the_reload(start_daemon, standin_ollama, tmp_path):
    """A visitor's stream is being written from the note when the reload makes it private: a
    visitor asking the same question after the reload gets an answer of their own, and the
    first one, once finished, is not kept for anyone."""
    root = tmp_path / "vault"
    write_vault(root)
    q = "Où est la ruche frelonix ?"
    standin_ollama.script(
        pieces=["La ruche frelonix est au coteau, derrière le jardin et ses rangées de lavande,", " près du miel [ruche-frelonix]."], hold_after=1
    )
    client = await start(start_daemon, root, standin_ollama.url, llm_slots=2, llm_queue=2)
    first = await client.get("/ask/stream", params={"q": q})
    first_events = sse_events(first)
    while (await asyncio.wait_for(anext(first_events), 15))[0] != "token":
        pass
    make_private(root, "visibility")
    await rpc_result(client, "reload", {}, headers=OWNER)  # while the first answer is being written
    standin_ollama.script_next("Les notes parlent du miel [miel].")
    later = await client.get("/ask/stream", params={"q": q}, headers={"X-Forwarded-For": "198.51.100.7"})  # another visitor
    later_seen = await asyncio.wait_for(_drain(sse_events(later)), 15)
    assert_clean(later_seen, "a stream asked after the reload")
    assert later_seen[-1][1]["reused"] is False and len(standin_ollama.requests) == 2
    standin_ollama.release()
    await asyncio.wait_for(_drain(first_events), 15)
    standin_ollama.script("Les notes parlent de la cire [cire].")
    again = await (await client.get("/ask", params={"q": q})).json()
    assert_clean(again, "/ask after the first answer finished")


async def test_two_reloads_at_once_leave_the_note_private(start_daemon, tmp_path):
    root = tmp_path / "vault"
    write_vault(root)
    client = await start(start_daemon, root)
    make_private(root, "publish")
    by_rpc, by_http = await asyncio.gather(rpc_result(client, "reload", {}, headers=OWNER), client.post("/reload-vault", headers=OWNER))
    assert by_http.status == 200 and by_rpc["vault_size"] == (await by_http.json())["vault_size"] == 4
    views = await visitor_views(client)
    assert_clean(list(views.values()), "searches after two reloads")
    assert views == await visitor_views(await start(start_daemon, root))


@pytest.mark.parametrize("front", ["draft: true", "visibility: public\ndraft: true", "Draft: oui"])
async def test_a_draft_reaches_no_visitor_with_the_default_public(start_daemon, standin_ollama, tmp_path, front):
    """With `--default-visibility public`, a note marked `draft: true`, which Quartz, Hugo,
    Jekyll, Eleventy and Astro leave unpublished, was served to visitors: its text reaches
    neither a search, nor the model, nor an answer. The same note with `draft: false` does."""
    root = tmp_path / "vault"
    write_vault(root)
    secret, title = "Le code du portail du rucher est 7431, à changer en mai.", "title: Le portail du rucher"
    write_note(root, "jardin/portail.md", f"{title}\n{front}", secret)
    standin_ollama.script("Les notes parlent du miel et de la cire [miel].")
    client = await start(start_daemon, root, standin_ollama.url, default_visibility="public")
    questions = ["Quel est le code du portail du rucher ?", "portail", "code à changer en mai"]
    for q in questions:
        found = await rpc_result(client, "search", {"q": q, "top_k": 10})
        assert [r for r in found["results"] if "portail" in json.dumps(r, ensure_ascii=False) or "7431" in json.dumps(r)] == []
        asked = await (await client.get("/ask", params={"q": q})).json()
        assert "7431" not in json.dumps(asked) and "portail" not in json.dumps(asked.get("sources"), ensure_ascii=False)
    assert "7431" not in json.dumps(standin_ollama.requests)

    write_note(root, "jardin/portail.md", f"{title}\ndraft: false", secret)
    await rpc_result(client, "reload", {}, headers=OWNER)
    assert (await rpc_result(client, "search", {"q": questions[0]}))["results"][0]["path"] == "jardin/portail.md"
    await client.get("/ask", params={"q": questions[0]})
    assert "7431" in json.dumps(standin_ollama.requests)  # what the checks above look for, once the note is no draft


async def _drain(events) -> list:
    return [event async for event in events]


@pytest.mark.parametrize("breakage", ["broken YAML", "not UTF-8"])
@pytest.mark.parametrize("at", ["start", "reload"])
async def test_a_private_notes_path_stays_masked_while_the_note_cannot_be_loaded(start_daemon, standin_ollama, tmp_path, breakage, at):
    """A private note whose frontmatter the author is halfway through editing (or that a sync
    left in another encoding) is not loaded: whether it is private cannot be read, so its path
    typed in a public note stays masked for visitors, as when it loaded private. It reached
    their passages and the model's prompt from the reload (or start) that failed to read it."""
    root = tmp_path / "vault"
    write_note(root, "jardin.md", "title: Le jardin\nvisibility: public", "Le jardin fleurit en avril, le plan est dans prive/plan-rouge.md.")
    secret = write_note(root, "prive/plan-rouge.md", "title: Plan rouge\nvisibility: private", "Le plan rouge du jardin.")
    broken = "---\ntitle: [Plan rouge\nvisibility: private\n---\nLe plan rouge du jardin.\n"
    raw = broken.encode() if breakage == "broken YAML" else secret.read_text(encoding="utf-8").replace("rouge du", "rouge é du").encode("latin-1")
    if at == "start":
        secret.write_bytes(raw)
    client = await start(start_daemon, root, standin_ollama.url)
    if at == "reload":
        secret.write_bytes(raw)
        report = await rpc_result(client, "reload", {}, headers=OWNER)
        assert [e["path"] for e in report["errors"]] == ["prive/plan-rouge.md"]
    q = "le jardin fleurit en avril"
    standin_ollama.script("Le jardin fleurit en avril [jardin].")
    assert (await (await client.get("/ask", params={"q": q})).json())["response"] == "Le jardin fleurit en avril [jardin]."
    prompt = json.dumps(standin_ollama.requests[-1]["messages"], ensure_ascii=False)
    assert "le plan est dans ." in prompt and "plan-rouge" not in prompt
    standin_ollama.script(mode="http_500")  # the notes' own sentences instead
    said = (await (await client.get("/ask/stream", params={"q": "quand le jardin fleurit-il ?"})).text()).split("event: done")[-1]
    assert "le plan est dans" in said and "plan-rouge" not in said


@pytest.mark.parametrize("restart", ["--no-cache", "cache deleted", "cache of another format", "other options"])
async def test_a_hidden_note_that_went_stays_masked_at_a_start_without_the_index_cache(start_daemon, standin_ollama, tmp_path, monkeypatch, restart):
    """A private note deleted while the daemon served left « prive/plan-rouge.md » typed in a
    public note, and its title in that note's code: masked from the reload on, and at a start on
    the index cache, which alone remembered them. A start without it (--no-cache, its file
    deleted, a cache of another format or options) showed both to visitors. A small file in the
    vault's state folder keeps them for every start; the owner still reads them."""
    root = tmp_path / "vault"
    write_note(root, "prive/plan-rouge.md", "title: Projet Zorglub\nvisibility: private", "Le plan rouge.")
    typed = "Le jardin fleurit en avril : le plan est dans prive/plan-rouge.md, voir `[[Projet Zorglub]]`."
    write_note(root, "jardin.md", "title: Le jardin\nvisibility: public", typed)
    write_note(root, "potager.md", "title: Le potager\nvisibility: public", "Le potager en mai.")
    cache = tmp_path / "cache"
    client = await start(start_daemon, root, standin_ollama.url, index_cache=True, cache_dir=str(cache))
    (root / "prive/plan-rouge.md").unlink()
    await rpc_result(client, "reload", {}, headers=OWNER)
    settings: dict = {"index_cache": True, "cache_dir": str(cache)}
    if restart == "--no-cache":
        settings = {}
    elif restart == "cache deleted":
        (cache / _cache.FILENAME).unlink()
    elif restart == "cache of another format":
        monkeypatch.setattr(_cache, "FORMAT", _cache.FORMAT + 1)
    else:
        settings["exclude"] = ("brouillons",)
    restarted = await start(start_daemon, root, standin_ollama.url, **settings)

    def clean(value, where: str) -> None:
        text = json.dumps(value, ensure_ascii=False).lower()
        assert "rouge" not in text and "zorglub" not in text, f"{where}: {text[:1500]}"

    found = await rpc_result(restarted, "search", {"q": "le jardin fleurit en avril", "top_k": 10})
    assert found["results"][0]["slug"] == "jardin"
    clean(found, "search")
    for q in ("rouge", "zorglub"):  # nor is the public note found by their words
        assert (await rpc_result(restarted, "search", {"q": q}))["results"] == []
    standin_ollama.script("Le jardin fleurit en avril [jardin].")
    asked = await (await restarted.get("/ask", params={"q": "le jardin fleurit en avril"})).json()
    assert asked["response"] == "Le jardin fleurit en avril [jardin]."
    clean(asked, "/ask")
    clean(standin_ollama.requests[-1]["messages"], "the prompt")
    await rpc_result(restarted, "answer", {"q": "le jardin fleurit en avril", "audience": "owner"}, headers=OWNER)
    assert "prive/plan-rouge.md" in json.dumps(standin_ollama.requests[-1]["messages"], ensure_ascii=False)  # the owner reads what they typed
    kept = _gone.default_path(root)
    assert kept.stat().st_mode & 0o777 == 0o600
    assert _gone.load(kept).paths == {"prive/plan-rouge.md"}


@pytest.mark.parametrize("path", ["/ask", "/ask/stream"])
async def test_a_question_waiting_for_a_slot_when_the_note_goes_private_gets_nothing_of_it(start_daemon, standin_ollama, tmp_path, path, caplog):
    """A visitor's question is searched while the note is public, then waits for the model's
    only slot (LLM_MAX_WAIT) while the owner makes the note private and reloads: its answer,
    written after the reload from the old passages, quoted the note to that visitor. It gets the
    notes' extract from the vault served now instead."""
    caplog.set_level(logging.INFO, logger="grasbot")
    root = tmp_path / "vault"
    write_vault(root)
    q = "Où est la ruche frelonix ?"
    standin_ollama.script("La ruche frelonix donne un miel sombre de châtaignier [ruche-frelonix].", first_delay=2)
    client = await start(start_daemon, root, standin_ollama.url, llm_slots=1, llm_max_wait=30, llm_timeout=30, concurrent_network_answers=8)
    ahead = asyncio.create_task(client.get("/ask", params={"q": "Le jardin et les ruches"}, headers={"X-Forwarded-For": "192.0.2.1"}))
    while not standin_ollama.requests:  # the slot is taken
        await asyncio.sleep(0.02)
    bot = bot_of(client)
    asked = asyncio.create_task(client.get(path, params={"q": q}))
    while not bot.admission.view(owner=True)["queued"]:  # searched, and waiting for the slot
        await asyncio.sleep(0.02)
    make_private(root, "visibility")
    await rpc_result(client, "reload", {}, headers=OWNER)
    response = await asked
    if path == "/ask":
        said = await response.json()
    else:
        events = [e async for e in sse_events(response)]
        said = [e for e in events if e[0] != "sources"]  # the sources were sent before the reload
    await ahead
    assert_clean(said, f"{path} waiting during the reload")
    assert len(standin_ollama.requests) == 2  # the model wrote it after the reload: not shown
    said_in_log = [r.getMessage() for r in caplog.records if "extraits des notes" in r.getMessage()]
    # the question ahead, being written from the same note, gives way as well: two, neither « no answer »
    assert len(said_in_log) == 2 and all(m.startswith("la réponse du modèle de langue n'a pas été montrée") for m in said_in_log), said_in_log


async def test_a_reload_that_takes_nothing_from_visitors_leaves_a_stream_its_answer(start_daemon, standin_ollama, tmp_path, monkeypatch):
    """A reload that only adds a note lands while an answer streams: the model's answer is
    given whole, and the vault is compared with the one the answer was written from once for
    that reload, not at every piece (a comparison of every note's name, 10,000 at a time)."""
    root = tmp_path / "vault"
    write_vault(root)
    reply = "La ruche frelonix donne un miel sombre de châtaignier [ruche-frelonix]."
    standin_ollama.script(reply, chunks=12, hold_after=2)
    client = await start(start_daemon, root, standin_ollama.url)
    bot = bot_of(client)
    started, real, compared = bot.snapshot, Snapshot.index, []

    def index(snapshot, audience):  # each full comparison reads the new version's index once
        if snapshot is not started and sys._getframe(1).f_code.co_name == "_check_current":
            compared.append(audience)
        return real(snapshot, audience)

    monkeypatch.setattr(Snapshot, "index", index)
    response = await client.get("/ask/stream", params={"q": "Où est la ruche frelonix ?"})
    events = []
    async for event in sse_events(response):
        events.append(event)
        if event[0] == "sources":
            while ("chunk", 1) not in standin_ollama.events:  # two pieces written, the reply held
                await asyncio.sleep(0.02)
            write_note(root, "nouveau.md", "title: Nouveau\nvisibility: public", "Une note de plus.")
            await rpc_result(client, "reload", {}, headers=OWNER)
            standin_ollama.release()  # ten more pieces, each checked
    done = events[-1][1]
    assert events[-1][0] == "done" and done["model"] is not None and done["response"] == reply, done
    assert bot.snapshot is not started and compared == ["visitor"], compared
