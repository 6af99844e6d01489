"""The daemon over HTTP: JSON-RPC methods and spec behaviour, /ask, /health, CORS, logging, `grasbot serve`."""

from __future__ import annotations

import ast
import asyncio
import errno
import json
import logging
import signal
import socket
import subprocess
import urllib.parse
import urllib.request

import pytest
from yarl import URL

from grasbot.answer.prompt import NO_CONTEXT, SYSTEM_RULES
from grasbot.server.app import cannot_listen
from grasbot.server.handlers import STATIC_DIR
from grasbot.server.methods import PUBLIC_LLM_ERROR
from grasbot.server.protocol import openrpc_document
from support.bots import OWNER, OWNER_TOKEN, REPO, bot_of, rpc, rpc_raw, rpc_result, serve_process, serve_refused, write_note
from support.standin_ollama import unused_url

FIRST = "Comment fonctionne GrasBot ?"
FOLLOW_UP = "et avec quel modèle ?"


def private_slugs(client) -> set[str]:
    index = bot_of(client).snapshot.index("owner")
    return {n.slug for n in index.notes.values() if not n.public}


# ---------------------------------------------------------------- JSON-RPC methods


async def test_health_over_rpc_and_http(start_daemon, standin_ollama):
    client = await start_daemon(ollama_url=standin_ollama.url)
    result = await rpc_result(client, "health")
    visitor_size = len(bot_of(client).snapshot.index("visitor"))
    assert result["status"] == "ok" and result["llm_reachable"] is True
    assert result["vault_size"] == visitor_size
    resp = await client.get("/health")
    assert resp.status == 200
    assert await resp.json() == result


async def test_health_asks_ollama_once_however_many_ask_it(start_daemon, standin_ollama, monkeypatch):
    """/health is any visitor's, unlimited: each call, and each `health` of a batch, sent Ollama a
    request (a batch of 20, 20 of them). Callers at once share one probe, and its answer stands
    `reachable_for` seconds; past them, Ollama is asked again (it may have gone down)."""
    from grasbot.answer.llm import LLMClient

    monkeypatch.setattr(LLMClient, "reachable_for", 3600.0)
    client = await start_daemon(ollama_url=standin_ollama.url)

    def probes() -> int:
        return standin_ollama.hits.count(("GET", "/api/tags"))

    batch = [{"jsonrpc": "2.0", "method": "health", "id": i} for i in range(20)]
    _, answers = await rpc_raw(client, batch)
    assert [a["result"]["llm_reachable"] for a in answers] == [True] * 20
    for _ in range(5):
        assert (await (await client.get("/health")).json())["llm_reachable"] is True
    assert probes() == 1
    monkeypatch.setattr(LLMClient, "reachable_for", 0.0)
    standin_ollama.broken = True
    assert (await rpc_result(client, "health"))["llm_reachable"] is False
    assert probes() == 2


async def test_health_says_when_ollama_is_down(start_daemon):
    client = await start_daemon(ollama_url=unused_url())
    result = await rpc_result(client, "health")
    assert result["llm_reachable"] is False and result["status"] == "ok"


async def test_health_says_when_no_note_is_public(start_daemon, tmp_path):
    """The start's log, `grasbot check` and the plugin said it; /health, which a monitor reads,
    said « ok » while every visitor's question found nothing. The owner also hears a --vault
    that holds the vault; a visitor reads no folder's name."""
    from grasbot._engine import NO_PUBLIC_NOTE, NO_PUBLIC_NOTE_FOR_VISITORS

    root = tmp_path / "Documents"
    write_note(root, "Coffre/jardin.md", "title: Jardin", "Le potager.")  # no visibility: private
    (root / "Coffre" / ".obsidian").mkdir()
    client = await start_daemon(root, owner_token=OWNER_TOKEN)
    wrong_folder = f"Coffre/ est un coffre Obsidian (il contient .obsidian/), mais pas {root} : ses notes sont lues sous Coffre/…, des chemins"
    for way in ("rpc", "http"):
        owner = await rpc_result(client, "health", headers=OWNER) if way == "rpc" else await (await client.get("/health", headers=OWNER)).json()
        visitor = await rpc_result(client, "health") if way == "rpc" else await (await client.get("/health")).json()
        assert owner["vault_size"] == 0 and owner["vault_warnings"][0] == NO_PUBLIC_NOTE
        assert len(owner["vault_warnings"]) == 2 and owner["vault_warnings"][1].startswith(wrong_folder)
        assert visitor["vault_warnings"] == [NO_PUBLIC_NOTE_FOR_VISITORS], way
    write_note(root, "Coffre/jardin.md", "title: Jardin\nvisibility: public", "Le potager.")
    await rpc_result(client, "reload", {}, headers=OWNER)
    assert "vault_warnings" not in await rpc_result(client, "health")  # a public note: nothing to say to visitors
    assert len((await rpc_result(client, "health", headers=OWNER))["vault_warnings"]) == 1  # the owner's folder still


async def test_health_under_default_public_says_the_front_matter_keeps_every_note(start_daemon, tmp_path):
    """A daemon launched with --default-visibility public whose every note its front matter
    keeps private: the owner's /health, as `grasbot check`, says so, where it told to launch
    with the option the daemon was launched with; a visitor's says the fact alone, as under the
    default private (how the daemon was launched is the owner's to read)."""
    from grasbot._engine import NO_PUBLIC_NOTE_ALL_KEPT, NO_PUBLIC_NOTE_FOR_VISITORS

    write_note(tmp_path / "vault", "jardin.md", "title: Jardin\ndraft: true", "Le potager.")
    client = await start_daemon(tmp_path / "vault", owner_token=OWNER_TOKEN, default_visibility="public")
    owner = await rpc_result(client, "health", headers=OWNER)
    assert owner["vault_size"] == 0 and owner["vault_warnings"][0] == NO_PUBLIC_NOTE_ALL_KEPT
    visitor = await rpc_result(client, "health")
    assert visitor["vault_size"] == 0 and visitor["vault_warnings"] == [NO_PUBLIC_NOTE_FOR_VISITORS]


async def test_search_ranks_public_notes_with_reasons(start_daemon):
    client = await start_daemon()
    result = await rpc_result(client, "search", {"q": FIRST, "top_k": 3})
    slugs = [s["slug"] for s in result["results"]]
    assert len(slugs) == 3 and slugs[0].startswith("grasbot")
    assert result["grounded"] is True
    assert all(s["reasons"] for s in result["results"])
    assert not set(slugs) & private_slugs(client)


async def test_search_as_owner_sees_private_notes(start_daemon):
    client = await start_daemon(owner_token=OWNER_TOKEN)
    private = private_slugs(client)
    assert private, "the bundled vault should have private notes"
    q = "brouillon GrasBot v4"
    visitor = await rpc_result(client, "search", {"q": q, "top_k": 10})
    owner = await rpc_result(client, "search", {"q": q, "top_k": 10, "audience": "owner"}, headers=OWNER)
    assert not {s["slug"] for s in visitor["results"]} & private
    assert {s["slug"] for s in owner["results"]} & private
    assert owner["vault_size"] > visitor["vault_size"]


async def test_suggest_aliases_takes_the_notes_path_when_two_share_its_slug(start_daemon, tmp_path):
    """The plugin knows the path of the note it shows: with it, a public note's suggestions are
    its own, not a private draft's of the same slug; without it, the error names both."""
    write_note(tmp_path, "archive/plan.md", "title: Plan\nvisibility: private\nanswers: ['Où est le coffre zorglub ?']", "Le coffre zorglub.")
    write_note(tmp_path, "jardin/plan.md", "title: Plan\nvisibility: public", "Le plan du jardin et des ruches.")
    write_note(tmp_path, "jardin/accueil.md", "visibility: public", "Voir [[jardin/plan|les ruches du jardin]].")
    client = await start_daemon(tmp_path, owner_token=OWNER_TOKEN)
    result = await rpc_result(client, "suggest_aliases", {"slug": "plan", "path": "jardin/plan.md"}, headers=OWNER)
    assert [s["alias"] for s in result["suggestions"]] == ["ruches du jardin"]
    error = (await rpc(client, "suggest_aliases", {"slug": "plan"}, headers=OWNER))["error"]
    assert error["code"] == -32602 and error["data"] == (
        "`slug` : « plan » est le slug de 2 notes (archive/plan.md, jardin/plan.md) ; donnez `path`, le chemin de la note voulue"
    ), error
    missing = (await rpc(client, "suggest_aliases", {"slug": "plan", "path": "jardin/x.md"}, headers=OWNER))["error"]
    assert missing == {"code": -32003, "message": "Note not found", "data": "aucune note au chemin « jardin/x.md »"}


async def test_answer_sends_top_notes_and_rules_to_the_llm(start_daemon, standin_ollama):
    standin_ollama.script("GrasBot cherche d'abord les notes [grasbot-pipeline].", chunks=2)
    client = await start_daemon(ollama_url=standin_ollama.url)
    result = await rpc_result(client, "answer", {"q": FIRST})
    assert result["response"] == "GrasBot cherche d'abord les notes [grasbot-pipeline]."
    assert result["model"] == "qwen3:8b" and "llm_error" not in result
    assert len(standin_ollama.requests) == 1
    sent = standin_ollama.requests[0]
    prompt = "\n".join(m["content"] for m in sent["messages"])
    assert SYSTEM_RULES in prompt
    assert FIRST in sent["messages"][-1]["content"]
    assert len(result["sources"]) >= 3
    for source in result["sources"][:3]:
        assert f"### [{source['slug']}] {source['title']}" in sent["messages"][-1]["content"], source["slug"]
    assert sent["think"] is False


async def test_answer_follow_up_uses_history(start_daemon, standin_ollama):
    standin_ollama.script("Avec qwen3 via Ollama [qwen3].")
    client = await start_daemon(ollama_url=standin_ollama.url)
    first = await rpc_result(client, "answer", {"q": FIRST})
    subject = [s["slug"] for s in first["sources"][:2]]
    alone = await rpc_result(client, "search", {"q": FOLLOW_UP})
    history = [{"role": "user", "content": FIRST}, {"role": "assistant", "content": first["response"]}]
    follow = await rpc_result(client, "answer", {"q": FOLLOW_UP, "history": history})
    follow_slugs = [s["slug"] for s in follow["sources"]]
    # Alone, the follow-up is about models; with the history it stays on GrasBot's notes.
    assert alone["results"][0]["slug"] not in subject
    assert follow_slugs[0] in subject
    assert set(subject) <= set(follow_slugs)
    # and the LLM got the conversation
    messages = standin_ollama.requests[-1]["messages"]
    assert any(m["role"] == "user" and m["content"] == FIRST for m in messages)


async def test_answer_falls_back_when_ollama_is_down(start_daemon):
    down = unused_url()
    client = await start_daemon(ollama_url=down, owner_token=OWNER_TOKEN)
    result = await rpc_result(client, "answer", {"q": FIRST}, headers=OWNER)
    assert result["model"] is None and "OLLAMA_HOST" in result["llm_error"] and down in result["llm_error"]
    assert result["response"] and result["sources"]
    # a visitor, by JSON-RPC or by /ask, reads that the LLM failed, not Ollama's address
    visitor = await rpc_result(client, "answer", {"q": FIRST})
    resp = await client.get("/ask", params={"q": FIRST})
    assert resp.status == 200
    asked = await resp.json()
    for payload in (visitor, asked):
        assert payload["model"] is None and payload["llm_error"] == PUBLIC_LLM_ERROR
        assert payload["response"] == result["response"] and payload["sources"] == result["sources"]
        assert down.split("//")[1] not in json.dumps(payload)
    owner_asked = await (await client.get("/ask", params={"q": FIRST}, headers=OWNER)).json()
    assert owner_asked["llm_error"] == result["llm_error"]


async def test_the_question_log_keeps_visitors_questions_not_the_owners(start_daemon, tmp_path):
    """The plugin sends the token with its previews: they must not pass for visitors' questions."""
    client = await start_daemon(ollama_url=unused_url(), owner_token=OWNER_TOKEN, question_log=str(tmp_path / "q.sqlite3"))
    log = bot_of(client).question_log

    async def ask_every_way(headers: dict | None) -> None:
        await rpc_result(client, "search", {"q": "Quel modèle utilise GrasBot ?"}, headers=headers)
        await rpc_result(client, "answer", {"q": "Comment fonctionne GrasBot ?"}, headers=headers)
        for path, q in (("/ask", "Où tourne le modèle ?"), ("/ask/stream", "Que fait le daemon ?")):
            resp = await client.get(path, params={"q": q}, headers=headers)
            assert resp.status == 200
            await resp.read()

    await ask_every_way(None)
    assert log.count() == 4
    await ask_every_way(OWNER)
    assert log.count() == 4


async def test_a_visitors_e_mail_reaches_the_model_and_not_the_question_log(start_daemon, standin_ollama, tmp_path):
    """The visitor wants an answer to what they typed; what is kept for the owner is the
    question without their contact details."""
    client = await start_daemon(ollama_url=standin_ollama.url, question_log=str(tmp_path / "q.sqlite3"))
    q = "Comment fonctionne GrasBot ? Répondez à jean.dupont@gmail.com ou au 06 12 34 56 78"
    answer = await (await client.get("/ask", params={"q": q})).json()
    assert q in standin_ollama.requests[-1]["messages"][-1]["content"]
    [logged] = bot_of(client).question_log.questions_ending_on(answer["sources"][0]["slug"])
    assert logged.question == "Comment fonctionne GrasBot ? Répondez à [e-mail] ou au [téléphone]"


async def test_a_stop_whose_other_cleanup_fails_still_writes_the_questions_waiting_for_the_log(start_daemon, tmp_path):
    """The log was closed last, after the embedding worker's current call and the model
    clients: a failure there lost the questions waiting in memory, without a word."""
    import sqlite3

    db = tmp_path / "q.sqlite3"
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    client = await start_daemon(question_log=str(db))
    assert (await client.get("/ask", params={"q": "Quel modèle utilise GrasBot ?"})).status == 200
    bot = bot_of(client)
    assert bot.question_log.waiting
    other.execute("COMMIT")
    other.close()

    async def failing() -> None:
        raise RuntimeError("the model client would not close")

    bot.aclose = failing
    with pytest.raises(Exception, match="would not close"):
        await client.close()
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT question FROM questions").fetchall() == [("Quel modèle utilise GrasBot ?",)]


async def test_a_default_question_log_that_cannot_be_used_leaves_serving_unlogged(aiohttp_client, tmp_path):
    """Whether the owner named the log is the settings' to say: the daemon worked it out again
    from os.environ, and took the default place of settings loaded from another environment
    (here a state home that is a file: a home mounted read-only fails the same way) for a
    named log, and would not start."""
    from aiohttp.test_utils import TestServer

    from grasbot import Settings
    from grasbot.server.app import create_app

    state = tmp_path / "pas-un-dossier"
    state.write_text("")
    settings = Settings.load(env={"XDG_STATE_HOME": str(state)}, semantic="off", index_cache=False, ollama_host=unused_url())
    assert not settings.question_log_named and settings.question_log is not None and settings.question_log.is_relative_to(state)
    client = await aiohttp_client(TestServer(create_app(settings, owner_token=OWNER_TOKEN)))
    assert (await rpc_result(client, "search", {"q": "Quel modèle utilise GrasBot ?"}))["results"]
    assert not bot_of(client).question_log.enabled
    named = Settings.load(env={"GRASBOT_QUESTION_LOG": str(settings.question_log)})
    assert named.question_log_named and named.question_log == settings.question_log  # the same place, named: refused at start (tests/test_cli.py)


async def test_a_daemon_with_its_question_log_off_deletes_the_vaults_old_questions(aiohttp_client, tmp_path, monkeypatch):
    """The vault's log written while logging was on, then `--question-log off`: its questions
    past retention stayed for ever. The daemon deletes them at start, logging or not."""
    import sqlite3

    from aiohttp.test_utils import TestServer

    from grasbot import Settings
    from grasbot._config import default_log_path
    from grasbot.server.app import create_app
    from grasbot.store.questionlog import QuestionLog

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    settings = Settings.load(env={"GRASBOT_QUESTION_LOG": "off"}, semantic="off", index_cache=False, ollama_host=unused_url())
    own = default_log_path(vault=settings.vault_dir)
    assert settings.question_log is None and own.is_relative_to(tmp_path)
    own.parent.mkdir(parents=True)
    QuestionLog(own).close()
    with sqlite3.connect(own) as conn:
        conn.execute("INSERT INTO questions VALUES (1, '2000-01-01T00:00:00Z', 'mon adresse : 3 rue des Lilas', 0, 0)")
    conn.close()
    client = await aiohttp_client(TestServer(create_app(settings, owner_token=OWNER_TOKEN)))
    assert (await rpc_result(client, "search", {"q": "Quel modèle utilise GrasBot ?"}))["results"]
    for _ in range(1000):  # the start's tending runs in a thread of its own (a deadline, not a speed)
        if not own.exists():
            break
        await asyncio.sleep(0.01)
    assert not own.exists()
    await client.close()


async def test_a_named_question_log_locked_at_start_is_served_and_written_when_free(aiohttp_client, tmp_path):
    """Another process held the log the owner named when the daemon started: serve refused to
    start ("cannot be used (impossible d'ouvrir le fichier : database is locked)"), as for a folder named by
    mistake. It serves, keeps the visitors' questions and writes them once the file is free."""
    import sqlite3

    from aiohttp.test_utils import TestServer

    from grasbot import Settings
    from grasbot.server.app import create_app

    db = tmp_path / "q.sqlite3"
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    settings = Settings.load(env={"GRASBOT_QUESTION_LOG": str(db)}, semantic="off", index_cache=False, ollama_host=unused_url())
    assert settings.question_log_named
    client = await aiohttp_client(TestServer(create_app(settings, owner_token=OWNER_TOKEN)))
    assert (await rpc_result(client, "search", {"q": "Quel modèle utilise GrasBot ?"}))["results"]
    assert bot_of(client).question_log.waiting
    other.execute("COMMIT")
    other.close()
    await client.close()  # the stop tries the file once more
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT question FROM questions").fetchall() == [("Quel modèle utilise GrasBot ?",)]
    conn.close()


async def test_rpc_discover_serves_the_document(start_daemon):
    client = await start_daemon()
    assert await rpc_result(client, "rpc.discover") == openrpc_document()


async def test_a_batch_gets_the_document_once(start_daemon):
    """Twenty `rpc.discover` in one batch were twenty copies of the 21 KB document (430 KB for a
    request of 1 KB, to any caller, no question spent): the first call has it, the others are
    told why they have not, each under its id, and the batch's other calls are answered as ever."""
    client = await start_daemon()
    batch = [{"jsonrpc": "2.0", "method": "rpc.discover", "id": i} for i in range(19)]
    batch.insert(1, {"jsonrpc": "2.0", "method": "health", "id": "h"})
    resp = await client.post("/rpc", data=json.dumps(batch).encode(), headers={"Content-Type": "application/json"})
    assert resp.status == 200
    text = await resp.text()
    answers = {a["id"]: a for a in json.loads(text)}
    assert answers[0]["result"] == openrpc_document() and answers["h"]["result"]["status"] == "ok"
    refused = {
        "code": -32600,
        "message": "Invalid Request",
        "data": "rpc.discover ne reçoit qu'une réponse par lot : son premier appel dans ce lot a le document",
    }
    assert [answers[i].get("error") for i in range(1, 19)] == [refused] * 18
    assert len(text) < 2 * len(json.dumps(openrpc_document()))
    assert await rpc_result(client, "rpc.discover") == openrpc_document()  # a call of its own is answered whole, as ever


async def test_reload_over_rpc_and_http(start_daemon, note_writer):
    note_writer("a.md", "title: Alpha\nvisibility: public", "Une note sur les abeilles.")
    client = await start_daemon(note_writer.root, owner_token=OWNER_TOKEN)
    result = await rpc_result(client, "reload", {}, headers=OWNER)
    assert (result["vault_size"], result["added"], result["changed"], result["removed"]) == (1, 0, 0, 0)
    note_writer("b.md", "title: Beta\nvisibility: public", "Une note sur les bourdons.")
    resp = await client.post("/reload-vault", headers=OWNER)
    assert resp.status == 200
    body = await resp.json()
    assert (body["vault_size"], body["added"]) == (2, 1)


async def test_parameter_errors_name_the_parameter(start_daemon):
    client = await start_daemon()
    cases = [
        ("search", {"q": 42}, "`q` : doit être un texte"),
        ("search", {"q": "x", "top_k": 0}, "top_k"),
        ("search", {"q": "x", "audience": "admin"}, "audience"),
        ("answer", {"q": "x", "history": "pas une liste"}, "history"),
        ("search", {}, "`q` : obligatoire, mais absent"),
        ("search", {"q": "\u200b\u200c"}, "`q` : la question est vide (elle ne contient que des caractères invisibles)"),
    ]
    for method, params, needle in cases:
        answer = await rpc(client, method, params)
        assert answer["error"]["code"] == -32602, answer
        assert needle in answer["error"]["data"]


async def test_exceptions_never_leak(start_daemon, monkeypatch):
    client = await start_daemon()
    bot = bot_of(client)

    def boom(*args, **kwargs):
        raise RuntimeError("secret internals /home/owner/vault")

    monkeypatch.setattr(bot, "search", boom)
    answer = await rpc(client, "search", {"q": "python"})
    assert answer["error"] == {"code": -32603, "message": "Internal error"}
    resp = await client.get("/ask", params={"q": "python"})
    assert resp.status == 500
    assert await resp.json() == {"error": {"code": -32603, "message": "Internal error"}}


# ---------------------------------------------------------------- the JSON-RPC 2.0 specification over HTTP


async def test_spec_cases_over_http(start_daemon):
    client = await start_daemon()
    assert await rpc_raw(client, '{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]') == (
        200,
        {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": None},
    )

    def invalid(why: str) -> dict:  # the spec's answer, and why in `data`, as the daemon says its other refusals
        return {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request", "data": why}, "id": None}

    assert await rpc_raw(client, {"jsonrpc": "2.0", "method": 1, "params": "bar"}) == (200, invalid("`method` doit être un texte"))
    assert await rpc_raw(client, []) == (200, invalid("lot vide : un lot contient au moins une requête"))
    not_an_object = invalid("la requête doit être un objet JSON, pas un nombre")
    assert await rpc_raw(client, [1]) == (200, [not_an_object])
    assert await rpc_raw(client, [1, 2, 3]) == (200, [not_an_object] * 3)
    assert await rpc_raw(client, {"jsonrpc": "2.0", "method": "foobar", "id": "1"}) == (
        200,
        {"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": "1"},
    )
    # notifications, alone or in a batch, are answered with nothing: HTTP 204
    assert await rpc_raw(client, {"jsonrpc": "2.0", "method": "health"}) == (204, None)
    notes = [{"jsonrpc": "2.0", "method": "health"}, {"jsonrpc": "2.0", "method": "search", "params": {"q": "python"}}]
    assert await rpc_raw(client, notes) == (204, None)
    # a mixed batch: one answer per request, in order, none for the notification
    batch = [
        {"jsonrpc": "2.0", "method": "search", "params": {"q": "python", "top_k": 1}, "id": "1"},
        {"jsonrpc": "2.0", "method": "health"},
        {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
        {"foo": "boo"},
        {"jsonrpc": "2.0", "method": "health", "id": "9"},
    ]
    _, answers = await rpc_raw(client, batch)
    assert [a["id"] for a in answers] == ["1", "5", None, "9"]
    assert [a.get("error", {}).get("code") for a in answers] == [None, -32601, -32600, None]


async def test_owner_token_guards_owner_calls(start_daemon):
    client = await start_daemon(owner_token="s3cret")
    unauthorized = {"code": -32001, "message": "Unauthorized", "data": "jeton du propriétaire requis"}
    assert (await rpc(client, "reload", {}))["error"] == unauthorized
    assert (await rpc(client, "search", {"q": "x", "audience": "owner"}))["error"] == unauthorized
    wrong = {"Authorization": "Bearer nope"}
    assert (await rpc(client, "reload", {}, headers=wrong))["error"] == unauthorized
    good = {"Authorization": "Bearer s3cret"}
    assert (await rpc(client, "reload", {}, headers=good))["result"]["vault_size"] > 0
    assert "result" in await rpc(client, "search", {"q": "x", "audience": "owner"}, headers=good)
    resp = await client.post("/reload-vault")
    assert resp.status == 401 and await resp.json() == {"error": {"code": -32001, "message": "Unauthorized", "data": "jeton du propriétaire requis"}}
    assert (await client.post("/reload-vault", headers=good)).status == 200


async def test_body_over_the_limit_is_refused(start_daemon):
    client = await start_daemon()
    big = json.dumps({"jsonrpc": "2.0", "method": "search", "params": {"q": "x" * 70_000}, "id": 1})
    resp = await client.post("/rpc", data=big, headers={"Content-Type": "application/json"})
    assert resp.status == 413


# ---------------------------------------------------------------- /ask


async def test_ask_answers_as_a_visitor(start_daemon, standin_ollama):
    standin_ollama.script("Python est son langage principal [python].")
    client = await start_daemon(ollama_url=standin_ollama.url)
    resp = await client.get("/ask", params={"q": "Quelles compétences en Python ?"})
    assert resp.status == 200 and resp.content_type == "application/json"
    body = await resp.json()
    assert body["response"] == "Python est son langage principal [python]."
    assert body["sources"][0]["slug"] == "python"
    assert set(body) >= {"response", "sources", "grounded", "model", "vault_size"}
    assert body["vault_size"] == len(bot_of(client).snapshot.index("visitor"))
    private = await client.get("/ask", params={"q": "brouillon GrasBot v4"})
    assert not {s["slug"] for s in (await private.json())["sources"]} & private_slugs(client)


async def test_ask_with_history(start_daemon, standin_ollama):
    client = await start_daemon(ollama_url=standin_ollama.url)
    first = await (await client.get("/ask", params={"q": FIRST})).json()
    subject = [s["slug"] for s in first["sources"][:2]]
    history = json.dumps([{"role": "user", "content": FIRST}, {"role": "assistant", "content": first["response"]}])
    resp = await client.get("/ask", params={"q": FOLLOW_UP, "history": history})
    assert resp.status == 200
    assert (await resp.json())["sources"][0]["slug"] in subject


async def test_a_question_the_notes_do_not_know_is_not_answered_from_the_conversation(start_daemon, standin_ollama):
    """After a question about GrasBot, « la recette de la tartiflette » is still one the notes
    do not know: the model gets the no-context prompt, not GrasBot's notes (at the follow-ups'
    discount, the conversation's notes grounded it)."""
    client = await start_daemon(ollama_url=standin_ollama.url)
    history = [{"role": "user", "content": FIRST}, {"role": "assistant", "content": "GrasBot cherche dans les notes [grasbot]."}]
    alone = await rpc_result(client, "search", {"q": "Quelle est la recette de la tartiflette ?"})
    assert alone["grounded"] is False
    reply = await rpc_result(client, "answer", {"q": "Quelle est la recette de la tartiflette ?", "history": history})
    assert reply["grounded"] is False
    (body,) = standin_ollama.requests
    assert body["messages"][-1]["content"] == f"{NO_CONTEXT}\n\nQuestion : Quelle est la recette de la tartiflette ?"
    assert body["messages"][1:-1] == history


async def test_a_site_names_the_pages_its_visitors_are_sent_to(start_daemon, standin_ollama):
    """A site without /portfolio nor /competences names its own pages (GRASBOT_SITE_PAGES): the
    model's rules, the no-context prompt and the notes' extract send visitors there, and only
    there; `off` sends them nowhere."""
    client = await start_daemon(ollama_url=standin_ollama.url, site_pages=("/blog", "https://exemple.fr/contact"))
    await rpc_result(client, "answer", {"q": "Quelle est la recette de la tartiflette ?"})
    (body,) = standin_ollama.requests
    rules, question = body["messages"][0]["content"], body["messages"][-1]["content"]
    assert "dis-le franchement et oriente vers le site : /blog ou https://exemple.fr/contact. N'invente rien." in rules
    assert "dans les notes et propose /blog ou https://exemple.fr/contact. Si" in question
    assert "/portfolio" not in rules + question and "/competences" not in rules + question

    down = await start_daemon(ollama_url="http://127.0.0.1:9", site_pages=())
    reply = await rpc_result(down, "answer", {"q": "Quelle est la recette de la tartiflette ?"})
    assert reply["response"] == "Je ne trouve pas cette information dans les notes."


@pytest.mark.parametrize(
    "params, needle",
    [
        ({}, "`q` : obligatoire, mais absent"),
        ({"q": ""}, "q"),
        ({"q": "   "}, "q"),
        ({"q": "\u200b"}, "`q` : la question est vide (elle ne contient que des caractères invisibles)"),
        ({"q": "\ufeff\u2060\u200d \x00"}, "`q` : la question est vide (elle ne contient que des caractères invisibles)"),
        ({"q": "a" * 501}, "500"),
        ({"q": "python", "history": "{pas du json"}, "history"),
        ({"q": "python", "history": '{"role": "user"}'}, "history"),
        ({"q": "python", "history": json.dumps([{"role": "user", "content": "x"}] * 9)}, "history"),
    ],
)
async def test_ask_bad_parameters_are_400(start_daemon, params, needle):
    client = await start_daemon()
    for path in ("/ask", "/ask/stream"):
        resp = await client.get(path, params=params)
        assert resp.status == 400, path
        body = await resp.json()
        assert set(body) == {"error"} and body["error"]["code"] == -32602, body
        data = body["error"]["data"]
        assert body["error"]["message"] == "Invalid params" and needle in (data["reason"] if isinstance(data, dict) else data)


async def test_a_visitors_refused_question_is_said_in_french_whole(start_daemon):
    """The 400 a visitor's browser gets on /ask and /ask/stream names the parameter and why, in
    the site's French: it was English beside the chat's French."""
    client = await start_daemon()
    cases = [
        ({"q": "  "}, "`q` : ne doit pas être fait que d'espaces"),
        ({"q": "\u200b"}, "`q` : la question est vide (elle ne contient que des caractères invisibles)"),
        ({"q": "a" * 501}, {"reason": "`q` : doit compter au plus 500 caractères (longueur reçue : 501)", "param": "q", "max_question": 500}),
        ({"q": "python", "history": "{pas du json"}, "`history` : doit être une liste JSON d'échanges {role, content}"),
        ({"q": "python", "history": '[{"role": "user"}]'}, "`history[0].content` : obligatoire, mais absent"),
        (
            {"q": "python", "history": '[{"role": "user", "content": "a", "role": "user"}]'},
            "`history` : le membre 'role' figure deux fois dans un même objet : lequel vaut ?",
        ),
    ]
    for path in ("/ask", "/ask/stream"):
        for params, said in cases:
            resp = await client.get(path, params=params)
            assert resp.status == 400 and await resp.json() == {"error": {"code": -32602, "message": "Invalid params", "data": said}}, (path, params)


async def test_ask_refuses_a_parameter_given_twice(start_daemon):
    client = await start_daemon()
    for path in ("/ask", "/ask/stream"):
        for params, name in (([("q", "python"), ("q", "docker")], "q"), ([("q", "python"), ("history", "[]"), ("history", "[]")], "history")):
            resp = await client.get(path, params=params)
            assert resp.status == 400, (path, params)
            assert (await resp.json())["error"]["data"] == f"`{name}` : donné plus d'une fois"


async def test_a_wrong_method_or_path_is_told_in_json(start_daemon):
    """A client posting to /ask learns that it wants GET, and a path that is no endpoint which
    ones there are, in the JSON every other error has (not aiohttp's plain text); the path
    asked for is never quoted back."""
    client = await start_daemon()
    wrong = (("POST", "/ask", "GET"), ("POST", "/ask/stream", "GET"), ("GET", "/rpc", "POST"), ("GET", "/reload-vault", "POST"), ("DELETE", "/health", "GET"))
    for method, path, takes in wrong:
        response = await client.request(method, path)
        assert response.status == 405, (method, path)
        assert takes in response.headers["Allow"].split(", "), (method, path)
        assert await response.json() == {"error": {"code": -32600, "message": "Invalid Request", "data": f"cette adresse n'accepte que {takes}"}}
    response = await client.get("/nulle-part/<b>x</b>")
    assert response.status == 404
    error = (await response.json())["error"]
    assert (error["code"], error["message"]) == (-32600, "Invalid Request")
    assert all(route in error["data"] for route in ("GET /ask", "GET /ask/stream", "GET /health", "POST /rpc", "POST /reload-vault"))
    assert "nulle" not in error["data"] and "<b>" not in error["data"]
    assert (await client.get("/health")).status == 200


async def test_a_head_request_asks_nothing(start_daemon, tmp_path):
    """`curl -I /ask?q=…` ran a whole answer: the model was asked, the question logged and
    counted against the visitor's rate."""
    client = await start_daemon(question_log=str(tmp_path / "q.sqlite3"))
    for path in ("/ask", "/ask/stream"):
        response = await client.head(path, params={"q": "Quel modèle utilise GrasBot ?"})
        assert response.status == 405 and response.headers["Allow"] == "GET", path
    assert bot_of(client).question_log.count() == 0
    assert (await client.head("/health")).status == 200


# ---------------------------------------------------------------- CORS


async def test_cors_allows_only_the_listed_origins(start_daemon):
    client = await start_daemon()
    call = json.dumps({"jsonrpc": "2.0", "method": "health", "id": 1})
    for origin in ("app://obsidian.md",):
        resp = await client.post("/rpc", data=call, headers={"Content-Type": "application/json", "Origin": origin})
        assert resp.headers["Access-Control-Allow-Origin"] == origin
        assert "Origin" in resp.headers["Vary"]
        pre = await client.options("/ask/stream", headers={"Origin": origin, "Access-Control-Request-Method": "GET"})
        assert pre.status == 204 and pre.headers["Access-Control-Allow-Origin"] == origin
        assert "Authorization" in pre.headers["Access-Control-Allow-Headers"]
    # no implicit localhost: a dev server's origin must be listed in cors_origins
    for origin in (
        "https://evil.example",
        "http://localhost.evil.example",
        "https://localhost:5173",
        "null",
        "http://localhost:5173",
        "http://127.0.0.1:8080",
        "http://localhost",
    ):
        resp = await client.post("/rpc", data=call, headers={"Content-Type": "application/json", "Origin": origin})
        assert resp.status == 200 and "Access-Control-Allow-Origin" not in resp.headers
        pre = await client.options("/rpc", headers={"Origin": origin, "Access-Control-Request-Method": "POST"})
        assert pre.status == 403 and "Access-Control-Allow-Origin" not in pre.headers
    # the owner's reload is not offered cross-origin, and methods are checked
    pre = await client.options("/reload-vault", headers={"Origin": "app://obsidian.md", "Access-Control-Request-Method": "POST"})
    assert "Access-Control-Allow-Origin" not in pre.headers
    pre = await client.options("/rpc", headers={"Origin": "app://obsidian.md", "Access-Control-Request-Method": "DELETE"})
    assert pre.status == 403


async def test_a_refused_preflight_says_why_in_json(start_daemon, caplog):
    """A preflight from an origin not listed, or for a method the endpoint does not take, was an
    empty 403: the owner whose site's origin was missing read nothing in the browser's tools."""
    caplog.set_level(logging.INFO, logger="grasbot.access")
    client = await start_daemon(cors_origins="https://site.example")
    pre = await client.options("/ask/stream", headers={"Origin": "https://autre.example", "Access-Control-Request-Method": "GET"})
    assert pre.status == 403 and pre.content_type == "application/json"
    why = "CORS : l'Origin de la page n'est pas l'une des GRASBOT_CORS_ORIGINS (le propriétaire y inscrit l'origine du site)"
    assert await pre.json() == {"error": {"code": -32600, "message": "Invalid Request", "data": why}}
    assert "OPTIONS /ask/stream 403 preflight refused" in caplog.text
    pre = await client.options("/rpc", headers={"Origin": "https://site.example", "Access-Control-Request-Method": "PUT"})
    assert pre.status == 403
    assert (await pre.json())["error"]["data"] == "CORS : cette adresse n'accepte que POST (Access-Control-Request-Method)"
    pre = await client.options("/rpc", headers={"Origin": "https://site.example", "Access-Control-Request-Method": "POST"})
    assert pre.status == 204 and pre.headers["Access-Control-Allow-Origin"] == "https://site.example"


async def test_a_page_on_an_unlisted_origin_cannot_make_its_visitors_ask(start_daemon, tmp_path, caplog):
    """CORS hid the answer from a page on a site not listed, not the question from the daemon:
    any page made each of its visitors' browsers ask (a hidden fetch, `<img src=…/ask?q=…>`, a
    frame), which ran the model, wrote the question log and spent that visitor's own questions
    and answers at once: a page left open in a tab, or visited by anyone behind the same
    address (an office, a mobile carrier's NAT), kept them refused (429) on the owner's site."""
    caplog.set_level(logging.INFO, logger="grasbot.access")
    client = await start_daemon(cors_origins="https://site.example", question_log=str(tmp_path / "q.sqlite3"), rate_burst=1, rate_per_minute=1)
    q = {"q": "Quel modèle utilise GrasBot ?"}
    foreign = [
        {"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors"},  # fetch()
        {"Origin": "https://evil.example"},  # a browser without Sec-Fetch-*
        {"Origin": "null", "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors"},  # a sandboxed frame
        {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"},  # <img src>
        {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe"},  # <iframe src>
        {"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "script"},  # another of the site's hosts
    ]
    why = "cette question vient d'une page d'un site que GRASBOT_CORS_ORIGINS ne liste pas : elle n'est pas posée"
    for path in ("/ask", "/ask/stream"):
        for headers in foreign:
            resp = await client.get(path, params=q, headers=headers)
            assert resp.status == 403, (path, headers)
            assert await resp.json() == {"error": {"code": -32600, "message": "Invalid Request", "data": why}}
            assert "Access-Control-Allow-Origin" not in resp.headers
    assert bot_of(client).question_log.count() == 0
    assert "GET /ask/stream 403 cross-site refused" in caplog.text
    # nothing of the visitor's was spent: their one question of the minute is theirs to ask
    resp = await client.get("/ask", params=q, headers={"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors"})  # the chat page
    assert resp.status == 200
    own = f"http://{client.server.host}:{client.server.port}"
    for headers in (
        {"Origin": "https://site.example", "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors"},  # the widget on the owner's site
        {"Origin": own},  # the daemon's own page, by a browser that names it
        {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"},  # a link followed
        {"Sec-Fetch-Site": "none"},  # typed in the address bar
        {},  # curl, a script
    ):
        resp = await client.get("/ask", params=q, headers=headers)
        assert resp.status == 429, headers  # let through: refused by the rate limit only


# ---------------------------------------------------------------- logging


async def test_access_log_has_method_and_outcome_but_no_ip_or_question(start_daemon, caplog):
    caplog.set_level(logging.INFO, logger="grasbot.access")
    client = await start_daemon()
    await rpc(client, "search", {"q": "zygomatique secret"})
    await rpc(client, "search", {"q": 42})
    await client.get("/ask", params={"q": ""})
    lines = [r.getMessage() for r in caplog.records if r.name == "grasbot.access"]
    assert len(lines) == 3, lines
    assert lines[0].startswith("POST /rpc search 200 ok ")
    assert lines[1].startswith("POST /rpc search 200 error -32602 ")
    assert lines[2].startswith("GET /ask 400 bad request ")
    assert all(line.endswith(" ms") for line in lines)
    text = "\n".join(lines)
    assert "127.0.0.1" not in text and "zygomatique" not in text


async def test_the_access_logs_outcomes_are_tokens_the_deploy_guide_lists():
    """The access log's outcome words are English where all else the owner reads is French: they
    are tokens, as the status beside them, which an owner's alerts and scripts match (`499 client
    gone`) and which stay from version to version (README: « Upgrading »), not sentences to
    translate. None was listed anywhere: each the daemon writes is in `ACCESS_OUTCOMES`, and
    deploy/README.md's access log table says exactly those and what each means. (The two of a
    cancelled request, `client gone` and `cut by the daemon's stop`, are asserted on the lines
    written: test_admission.py, test_a_stream_the_stop_cuts_has_its_access_line.)"""
    from grasbot.server.methods import answer_outcome
    from grasbot.server.rpc import RpcDispatcher
    from grasbot.server.state import ACCESS_OUTCOMES

    guide = (REPO / "deploy" / "README.md").read_text(encoding="utf-8").split("\n### The access log\n", 1)[1].split("\n#", 1)[0]
    listed = {line.split("`")[1] for line in guide.splitlines() if line.startswith("| `")}
    assert listed == ACCESS_OUTCOMES
    written = set()
    for path in (REPO / "daemon" / "grasbot" / "server").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                if any(isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Name) and t.slice.id == "LOG_OUTCOME" for t in node.targets):
                    written.add(node.value.value)
    answers = [{"llm_error": "x", "busy": False, "reused": False}, *({"busy": b, "reused": r} for b in (False, True) for r in (False, True))]
    written |= {answer_outcome(payload) for payload in answers}

    async def health(context):
        return {}

    rpc = RpcDispatcher({"health": health}, allow_undocumented=True)
    for body in ('{"jsonrpc": "2.0", "method": "health", "id": 1}', '{"jsonrpc": "2.0", "method": "nope", "id": 1}', '{"jsonrpc": "2.0", "method": "health"}'):
        written.add((await rpc.dispatch_summarized(body))[1][1].split(" -")[0])  # `error -32601`: the token, then the codes
    assert len(written) > 15 and written <= ACCESS_OUTCOMES, written - ACCESS_OUTCOMES


async def test_access_log_cannot_be_given_a_forged_line_or_escape_codes_by_a_path(start_daemon, caplog):
    """nginx passes `/static/…` on as the visitor wrote it, and aiohttp decodes the path."""
    caplog.set_level(logging.INFO, logger="grasbot.access")
    client = await start_daemon()
    forged = "/static/%0A2026-01-01%2000:00:00,000%20INFO%20grasbot.access:%20POST%20/reload-vault%20200%20ok%1B%5B2J"
    resp = await client.get(URL(forged, encoded=True))
    assert resp.status == 404
    lines = [r.getMessage() for r in caplog.records if r.name == "grasbot.access"]
    assert len(lines) == 1, lines
    assert lines[0].startswith(r"GET /static/\n2026-01-01 00:00:00,000 INFO grasbot.access: POST /reload-vault 200 ok\x1b[2J 404 ")
    assert "\n" not in lines[0] and "\x1b" not in lines[0]


# ---------------------------------------------------------------- `grasbot serve`


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait(10)


def test_serve_listens_answers_and_stops_on_sigterm(note_writer, tmp_path):
    note_writer("un.md", "title: Un\nvisibility: public", "Le jardin et les abeilles.")
    note_writer("deux.md", "title: Deux\nvisibility: private", "Le verger.")
    cache = tmp_path / "cache"
    proc = serve_process("--port", "0", "--vault", str(note_writer.root), env={"GRASBOT_CACHE_DIR": str(cache)})
    try:
        line = proc.stdout.readline()  # the daemon prints it once ready; a crash gives EOF
        assert line.startswith("GrasBot écoute sur http://127.0.0.1:"), (line, proc.stderr.read() if not line else "")
        assert line.rstrip().endswith("(coffre : 2 notes, 1 publique)")
        url = line.split()[3]
        with urllib.request.urlopen(f"{url}/health", timeout=10) as resp:
            health = json.load(resp)
        assert health["status"] == "ok" and health["vault_size"] == 1 and health["llm_reachable"] is False
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
        assert proc.stdout.read() == ""  # exactly one line on stdout
        stderr = proc.stderr.read()
        assert "GET /health 200" in stderr
        access = [ln for ln in stderr.splitlines() if "grasbot.access" in ln]
        assert access and not any("127.0.0.1" in ln for ln in access)
        assert "cache de l'index écrit en" in stderr and (cache / "notes.marshal").is_file()  # while serving
    finally:
        _stop(proc)


@pytest.mark.parametrize("freed", [False, True], ids=["still-held", "freed"])
def test_sigterm_writes_the_questions_waiting_for_the_log_or_says_how_many_are_lost(note_writer, tmp_path, freed):
    """Visitors' questions waiting in memory for a log another process holds: a clean stop
    tries the file once more, and names the file and the count of those it cannot write."""
    import sqlite3

    note_writer("un.md", "title: Un\nvisibility: public", "Le jardin et les abeilles.")
    db = tmp_path / "q.sqlite3"
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")  # held as the daemon starts: tried again in 30 s only
    proc = serve_process("--port", "0", "--vault", str(note_writer.root), env={"GRASBOT_QUESTION_LOG": str(db)})
    try:
        line = proc.stdout.readline()
        assert line.startswith("GrasBot écoute sur http://"), (line, proc.stderr.read() if not line else "")
        url = line.split()[3]
        for q in ("les abeilles", "le jardin"):
            with urllib.request.urlopen(f"{url}/ask?q={urllib.parse.quote(q)}", timeout=10) as resp:
                assert resp.status == 200
        if freed:
            other.execute("COMMIT")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
        stderr = proc.stderr.read()
    finally:
        _stop(proc)
        if not freed:
            other.execute("COMMIT")
        other.close()
    lost = f"journal des questions {db} : impossible d'ouvrir le fichier : database is locked ; 2 question(s) posées entre-temps ne sont pas enregistrées"
    with sqlite3.connect(db) as conn:
        if freed:
            assert [q for (q,) in conn.execute("SELECT question FROM questions ORDER BY id")] == ["les abeilles", "le jardin"]
            assert "pas enregistrées" not in stderr
        else:
            assert conn.execute("SELECT name FROM sqlite_master").fetchall() == [] and lost in stderr


def test_serve_stops_on_sigint(note_writer):
    note_writer("un.md", "title: Un\nvisibility: public", "Le jardin.")
    proc = serve_process("--port", "0", "--vault", str(note_writer.root))
    try:
        assert proc.stdout.readline().startswith("GrasBot écoute sur ")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(15) == 0
    finally:
        _stop(proc)


async def test_a_reload_that_finds_the_vault_folder_empty_keeps_the_previous_vault(start_daemon, note_writer):
    """A mount point whose drive is gone is an empty folder: the reload said « 0 notes, 2
    removed » and the site answered from nothing, with no warning."""
    note_writer("a.md", "visibility: public", "Les abeilles du rucher.")
    note_writer("b.md", "visibility: public", "La lavande du jardin.")
    client = await start_daemon(note_writer.root, owner_token=OWNER_TOKEN)
    for path in note_writer.root.glob("*.md"):
        path.unlink()
    reply = await rpc(client, "reload", {}, headers=OWNER)
    assert reply["error"]["code"] == -32004  # VAULT_RELOAD_FAILED
    assert reply["error"]["data"].endswith(
        "ne contient plus aucune note (il en contenait 2) : son disque est-il monté ? "
        "Le coffre précédent reste servi ; redémarrez le démon pour servir un coffre vide"
    )
    found = await rpc_result(client, "search", {"q": "abeilles"})
    assert [s["slug"] for s in found["results"]][:1] == ["a"]


def test_serve_reloads_the_vault_on_sighup(note_writer):
    """SIGHUP (`systemctl reload`, a logrotate script's `kill -HUP`) ended the daemon, and
    systemd restarts no service that SIGHUP ended: now it reads the vault again, as the
    owner's reload does, and a reload that fails leaves the previous vault serving."""
    note_writer("un.md", "title: Un\nvisibility: public", "Le jardin.")
    proc = serve_process("--port", "0", "--vault", str(note_writer.root))
    try:
        url = proc.stdout.readline().split()[3]
        note_writer("deux.md", "title: Deux\nvisibility: public", "Les ruches du verger.")
        proc.send_signal(signal.SIGHUP)
        said = next((line for line in iter(proc.stderr.readline, "") if "SIGHUP : coffre" in line), "")  # "": the daemon ended
        assert "SIGHUP : coffre rechargé : 2 notes (ajoutées : 1, modifiées : 0, retirées : 0, non chargées : 0)" in said
        with urllib.request.urlopen(f"{url}/health", timeout=10) as resp:
            assert json.load(resp)["vault_size"] == 2
        note_writer.root.rename(note_writer.root.with_name("ailleurs"))
        proc.send_signal(signal.SIGHUP)
        said = next((line for line in iter(proc.stderr.readline, "") if "SIGHUP : le coffre" in line), "")
        assert "le coffre n'a pas été rechargé, la version d'avant reste servie : dossier du coffre introuvable" in said
        with urllib.request.urlopen(f"{url}/health", timeout=10) as resp:
            assert json.load(resp)["vault_size"] == 2
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
    finally:
        _stop(proc)


#: `grasbot serve` whose vault load is followed, before the daemon listens, by the author's
#: edit (the note $EDITED made private) and a SIGHUP, as a hook's `systemctl reload` after a
#: sync that lands while a restart loads the vault.
_HANGUP_WHILE_LOADING = """\
import os, signal, sys
from pathlib import Path
from grasbot import _cli, _engine

edited = Path(os.environ["EDITED"])
loaded = _engine.GrasBot.open.__func__

def open_then_edit(cls, *args, **kwargs):
    bot = loaded(cls, *args, **kwargs)
    edited.write_text(edited.read_text(encoding="utf-8").replace("visibility: public", "visibility: private"), encoding="utf-8")
    os.kill(os.getpid(), signal.SIGHUP)
    return bot

_engine.GrasBot.open = classmethod(open_then_edit)
sys.exit(_cli.main())
"""


def test_a_sighup_while_the_vault_loads_reloads_it_before_visitors_are_served(note_writer, tmp_path):
    """A SIGHUP that came while the daemon loaded the vault was ignored (« the load itself »),
    but the load may have read a note before the edit the SIGHUP announced: a note made private
    then was served as public until the next reload. It is now a reload before listening."""
    note_writer("jardin.md", "title: Le jardin\nvisibility: public", "Le jardin et les abeilles.")
    secret = note_writer("ruche.md", "title: La ruche frelonix\nvisibility: public", "La ruche frelonix est au fond du jardin.")
    script = tmp_path / "serve_hangup.py"
    script.write_text(_HANGUP_WHILE_LOADING, encoding="utf-8")
    proc = serve_process("--port", "0", "--vault", str(note_writer.root), env={"EDITED": str(secret)}, script=script)
    try:
        url = proc.stdout.readline().split()[3]
        with urllib.request.urlopen(f"{url}/ask?q=frelonix", timeout=30) as resp:
            asked = json.load(resp)
        assert asked["vault_size"] == 1 and "frelonix" not in json.dumps(asked).lower()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
        assert "SIGHUP : coffre rechargé : 2 notes (ajoutées : 0, modifiées : 1, retirées : 0, non chargées : 0)" in proc.stderr.read()
    finally:
        _stop(proc)


def test_serve_port_taken_exits_2(note_writer, tmp_path):
    note_writer("un.md", "title: Un\nvisibility: public", "Le jardin.")
    cache = tmp_path / "cache"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out, err = serve_refused("--port", str(port), "--vault", str(note_writer.root), env={"GRASBOT_CACHE_DIR": str(cache)})
    assert out == ""
    assert f"impossible d'écouter sur 127.0.0.1:{port}" in err and "Traceback" not in err
    assert "(un autre démon tourne-t-il ? choisissez un autre --port)" in err
    assert (cache / "notes.marshal").is_file()  # the vault it loaded is kept for the next start


def test_serve_on_an_address_not_of_this_machine_exits_2_naming_the_host(note_writer):
    note_writer("un.md", "title: Un\nvisibility: public", "Le jardin.")
    _, err = serve_refused("--host", "192.0.2.1", "--port", "0", "--vault", str(note_writer.root))  # TEST-NET-1: nobody's
    (said,) = [line for line in err.splitlines() if line.startswith("grasbot: impossible d'écouter sur 192.0.2.1:0 : ")]
    assert said.endswith("(--host est-il une adresse de cette machine ?)") and "Traceback" not in err, err  # it said: choose another --port


@pytest.mark.parametrize(
    ("exc", "said"),
    [
        # as asyncio raises them: its sentence is English and repeats the address
        (
            OSError(errno.EACCES, "error while attempting to bind on address ('127.0.0.1', 80): permission denied"),
            "permission refusée (un port sous 1024 n'est ouvert qu'à root : choisissez-en un de 1024 ou plus, derrière le proxy de deploy/nginx)",
        ),
        (
            OSError(errno.EADDRINUSE, "error while attempting to bind on address ('127.0.0.1', 8765): address already in use"),
            "le port est déjà pris (un autre démon tourne-t-il ? choisissez un autre --port)",
        ),
        (socket.gaierror(socket.EAI_NONAME, "Name or service not known"), "nom d'hôte inconnu (--host est-il une adresse de cette machine ?)"),
    ],
)
def test_a_start_that_cannot_listen_says_why_in_french(exc, said):
    """`--port 80` as a user was « error while attempting to bind on address ('127.0.0.1', 80):
    permission denied (--host est-il une adresse de cette machine ?) »: English, and the wrong
    thing to check."""
    assert cannot_listen(exc) == said


def test_serve_missing_vault_exits_2(tmp_path):
    out, err = serve_refused("--port", "0", "--vault", str(tmp_path / "absent"))
    assert "dossier du coffre introuvable" in err and "Traceback" not in err
    assert out == ""


async def test_serve_answers_while_the_cache_is_written_and_waits_for_it(note_writer, tmp_path, monkeypatch, capsys):
    """`serve` starts answering before the index cache is written (a cold start or a restart
    that found notes changed), and does not return until it is written. A note written less
    than `RACY_NS` before its read is read again at the next start, and the cache then written
    again once its stamps prove it: the last assertion held only while the test took under 3 s,
    and failed on a loaded machine. The stamps are trusted at once here."""
    import asyncio
    import threading

    import aiohttp

    from grasbot import GrasBot, Settings
    from grasbot.retrieval import vault as _vault
    from grasbot.server import app
    from grasbot.store import cache as _cache

    monkeypatch.setattr(_vault, "RACY_NS", 0)
    note_writer("un.md", "title: Un\nvisibility: public", "Le jardin et les abeilles.")
    cache = tmp_path / "cache"
    settings = Settings.load(env={}, vault_dir=note_writer.root, port=0, cache_dir=cache, question_log="off", ollama_host=unused_url())
    bot = GrasBot.open(settings, write_cache=False)
    writing, release = threading.Event(), threading.Event()
    real_save = _cache.save

    def held_save(*args, **kwargs):
        writing.set()
        release.wait(30)
        return real_save(*args, **kwargs)

    monkeypatch.setattr(_cache, "save", held_save)
    stop = asyncio.Event()
    served = asyncio.create_task(app._serve(settings, "test-serve-token-0123456789", bot, stop))
    try:
        assert await asyncio.to_thread(writing.wait, 30)
        url = capsys.readouterr().out.split()[3]  # "GrasBot écoute sur http://127.0.0.1:PORT ..."
        async with aiohttp.ClientSession() as session, session.get(f"{url}/health") as resp:
            assert resp.status == 200 and (await resp.json())["vault_size"] == 1
        assert not (cache / _cache.FILENAME).exists()
        stop.set()
        done, _ = await asyncio.wait({served}, timeout=1)
        assert not done  # still waiting for the cache
    finally:
        release.set()
        stop.set()
    assert await served == 0
    assert (cache / _cache.FILENAME).is_file()
    assert GrasBot.open(settings, write_cache=False).snapshot.unsaved_in is None  # the cache is current


async def test_cors_allow_list_comes_from_settings(start_daemon):
    client = await start_daemon(cors_origins="https://site.example")
    call = json.dumps({"jsonrpc": "2.0", "method": "health", "id": 1})
    resp = await client.post("/rpc", data=call, headers={"Content-Type": "application/json", "Origin": "https://site.example"})
    assert resp.headers["Access-Control-Allow-Origin"] == "https://site.example"
    resp = await client.post("/rpc", data=call, headers={"Content-Type": "application/json", "Origin": "app://obsidian.md"})
    assert "Access-Control-Allow-Origin" not in resp.headers


async def test_search_without_top_k_follows_search_top_k(start_daemon):
    """SEARCH_TOP_K is the daemon's default for `search` too, not only the CLI's."""
    client = await start_daemon(search_top_k=2)
    default = await rpc_result(client, "search", {"q": "Comment fonctionne GrasBot ?"})
    assert len(default["results"]) == 2
    asked = await rpc_result(client, "search", {"q": "Comment fonctionne GrasBot ?", "top_k": 4})
    assert len(asked["results"]) == 4
    assert [r["slug"] for r in asked["results"][:2]] == [r["slug"] for r in default["results"]]


async def test_the_chat_page_and_the_widget_are_served_as_files(start_daemon):
    """`/` and `/widget.js` at paths of their own (a site's tag names the latter), revalidated
    at each load so a new version reaches visitors, never sniffed into another type."""
    client = await start_daemon()
    for path, name, kind in (("/", "index.html", "text/html"), ("/widget.js", "widget.js", "javascript")):
        response = await client.get(path)
        assert response.status == 200, path
        assert kind in response.headers["Content-Type"], path
        assert response.headers["Cache-Control"] == "no-cache"
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert await response.text() == (STATIC_DIR / name).read_text(encoding="utf-8")
    for name in ("chat.js", "page.js", "chat.css"):  # what the page and the widget load next
        response = await client.get(f"/static/{name}")
        assert response.status == 200, name
        assert response.headers["Cache-Control"] == "no-cache" and await response.text() == (STATIC_DIR / name).read_text(encoding="utf-8")
    for path in ("/static/../app.py", "/static/", "/static/absent.js", "/static/chat.js/x", "/static/index.html", "/static/widget.js"):
        response = await client.get(path)
        assert response.status == 404, path
        assert (await response.json())["error"]["data"].startswith("aucune adresse de GrasBot à ce chemin"), path
    icon = await client.get("/favicon.ico")  # asked by every browser: no 404 in the console
    assert icon.status == 204 and await icon.read() == b""


async def test_no_cache_may_keep_an_answer_health_or_an_error(start_daemon):
    """A response that says nothing of caching is kept by a shared cache (Varnish: 2 minutes):
    an answer quoting a note made private since, a 429, the owner's /health with its hosts."""
    client = await start_daemon(owner_token=OWNER_TOKEN, rate_burst=1)
    responses = {
        "answer": await client.get("/ask", params={"q": "Qui es-tu ?"}),
        "rate limited": await client.get("/ask", params={"q": "Qui es-tu ?"}),
        "bad request": await client.get("/ask", params={"q": ""}),
        "stream": await client.get("/ask/stream", params={"q": "Qui es-tu ?"}, headers=OWNER),
        "health": await client.get("/health"),
        "owner's health": await client.get("/health", headers=OWNER),
        "rpc": await client.post("/rpc", json={"jsonrpc": "2.0", "method": "health", "id": 1}),
        "reload refused": await client.post("/reload-vault"),
        "no endpoint": await client.get("/absent"),
    }
    assert responses["rate limited"].status == 429
    for what, response in responses.items():
        assert response.headers.get("Cache-Control") == "no-store", what


async def test_a_stream_the_stop_cuts_has_its_access_line(note_writer, standin_ollama, capsys, caplog):
    """aiohttp writes no access line for a handler it cancels: a stream cut by the daemon's
    stop left no trace, and one cut by its visitor would read the same."""
    import asyncio

    import aiohttp

    from grasbot import GrasBot, Settings
    from grasbot.server import app

    caplog.set_level("INFO", logger="grasbot.access")
    note_writer("un.md", "title: Le jardin\nvisibility: public", "Le jardin et les abeilles butinent la lavande.")
    standin_ollama.script(pieces=["Les abeilles butinent la lavande du jardin, "] * 3, hold_after=1)
    settings = Settings.load(env={}, vault_dir=note_writer.root, port=0, question_log="off", index_cache=False, semantic="off", ollama_host=standin_ollama.url)
    stop = asyncio.Event()
    served = asyncio.create_task(app._serve(settings, "test-serve-token-0123456789", GrasBot.open(settings, write_cache=False), stop))
    try:
        while not (out := capsys.readouterr().out):
            await asyncio.sleep(0.05)
        url = out.split()[3]  # "GrasBot écoute sur http://127.0.0.1:PORT ..."
        async with aiohttp.ClientSession() as session, session.get(f"{url}/ask/stream", params={"q": "le jardin et les abeilles"}) as resp:
            assert [await resp.content.readline() for _ in range(3)] == [b"id: asked\n", b"\n", b"event: sources\n"]
            while standin_ollama.in_flight != 1:  # the model is writing (held after its first piece)
                await asyncio.sleep(0.05)
            stop.set()
            rest = b"".join([chunk async for chunk in resp.content.iter_any()])
            started = asyncio.get_running_loop().time()
            await asyncio.wait_for(served, 30)
            assert asyncio.get_running_loop().time() - started < 5
        assert 'event: error\ndata: {"message":"le démon s\'arrête : posez la question de nouveau dans un instant"}'.encode() in rest, rest
    finally:
        standin_ollama.release()
        stop.set()
        await asyncio.wait_for(served, 30)
    lines = [r.getMessage() for r in caplog.records if r.name == "grasbot.access"]
    assert any(line.startswith("GET /ask/stream 503 cut by the daemon's stop ") for line in lines), lines
    assert not any("client gone" in line for line in lines), lines


async def test_a_daemon_start_deletes_the_old_questions_of_an_older_grasbots_shared_log(aiohttp_client, tmp_path, monkeypatch):
    """The log an older GrasBot kept for every vault is opened by no daemon now: its questions,
    as typed, outlived the 90 days. A start deletes them, the file with them when none is left."""
    import asyncio
    import sqlite3

    from aiohttp.test_utils import TestServer

    from grasbot import Settings
    from grasbot._config import default_log_path
    from grasbot.server.app import create_app

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    shared = default_log_path(vault=None)
    shared.parent.mkdir(parents=True)
    with sqlite3.connect(shared) as conn:
        conn.executescript(
            "CREATE TABLE questions (id INTEGER PRIMARY KEY, asked_at TEXT NOT NULL, question TEXT NOT NULL,"
            " grounded INTEGER NOT NULL, followup INTEGER NOT NULL DEFAULT 0);"
            "CREATE TABLE results (question_id INTEGER NOT NULL, rank INTEGER NOT NULL, slug TEXT NOT NULL,"
            " path TEXT NOT NULL, score REAL NOT NULL, signals TEXT NOT NULL, PRIMARY KEY (question_id, rank));"
            "PRAGMA user_version=1;"
            "INSERT INTO questions VALUES (1, '2020-01-01T00:00:00Z', 'mon mail jean@free.fr', 0, 0);"
        )
    conn.close()
    vault = tmp_path / "vault"
    write_note(vault, "un.md", "title: Le jardin\nvisibility: public", "Les abeilles du jardin.")
    settings = Settings.load(vault_dir=vault, semantic="off", index_cache=False, ollama_host=unused_url())
    client = await aiohttp_client(TestServer(create_app(settings, owner_token=OWNER_TOKEN)))
    for _ in range(300):  # a thread of its own, off the start's path
        if not shared.exists():
            break
        await asyncio.sleep(0.1)
    await client.close()
    assert not shared.exists() and settings.question_log != shared


async def test_a_vault_moved_is_told_where_its_old_question_log_is(aiohttp_client, tmp_path, monkeypatch, capsys, caplog):
    """The log's default place is a hash of the vault's path: a vault moved or renamed started
    an empty log, its questions left unnamed in another folder, and `grasbot log` said none."""
    import os

    from aiohttp.test_utils import TestServer

    from grasbot import Settings
    from grasbot._cli import main
    from grasbot.server.app import create_app
    from grasbot.store.questionlog import VAULT_FILE
    from support.bots import write_note

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    old, new = tmp_path / "Ancien", tmp_path / "Nouveau"
    write_note(old, "un.md", "title: Le jardin\nvisibility: public", "Les abeilles du jardin.")

    async def serve(vault):
        settings = Settings.load(vault_dir=vault, semantic="off", index_cache=False, ollama_host=unused_url())
        client = await aiohttp_client(TestServer(create_app(settings, owner_token=OWNER_TOKEN)))
        assert (await client.get("/ask", params={"q": "les abeilles"})).status == 200
        await client.close()
        return settings.question_log

    first = await serve(old)
    assert (first.parent / VAULT_FILE).read_bytes() == os.fsencode(os.path.realpath(old))
    assert (first.parent / VAULT_FILE).stat().st_mode & 0o777 == 0o600  # the owner's, as the log is
    os.rename(old, new)
    caplog.set_level("WARNING", logger="grasbot.server")
    second = await serve(new)
    assert second != first
    hint = (
        f"le journal des questions d'un coffre qui était à {old}, et n'y est plus, est {first} : "
        f"si ce coffre a été déplacé de là, déplacez ce fichier vers {second}"
    )
    assert hint in caplog.text
    second.unlink()  # not asked since: `grasbot log` finds no log at the new place, and says where the old one is
    capsys.readouterr()
    assert main(["log", "--vault", str(new)]) == 0
    assert hint in capsys.readouterr().err


async def test_a_log_that_opens_late_notes_its_vault_beside_it(aiohttp_client, tmp_path, monkeypatch):
    """A state folder not writable when the daemon started (a mount that comes up late): the
    log waited and opened later, but the file naming its vault was written only at start, so
    a vault moved afterwards had its old log unnamed by `serve` and `grasbot log`."""
    import os
    import sqlite3

    from aiohttp.test_utils import TestServer

    from grasbot import Settings
    from grasbot.server.app import create_app
    from grasbot.store.questionlog import VAULT_FILE
    from support.bots import write_note
    from support.files import read_only_folder

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    (tmp_path / "state" / "grasbot").mkdir(parents=True)
    vault = tmp_path / "Jardin"
    write_note(vault, "un.md", "title: Le jardin\nvisibility: public", "Les abeilles du jardin.")
    settings = Settings.load(vault_dir=vault, semantic="off", index_cache=False, ollama_host=unused_url())
    with read_only_folder(tmp_path / "state" / "grasbot"):
        client = await aiohttp_client(TestServer(create_app(settings, owner_token=OWNER_TOKEN)))
        assert (await client.get("/ask", params={"q": "les abeilles"})).status == 200
    await client.close()  # the stop tries the file once more: it opens, and writes what waited
    with sqlite3.connect(settings.question_log) as written:
        assert written.execute("SELECT question FROM questions").fetchall() == [("les abeilles",)]
    assert (settings.question_log.parent / VAULT_FILE).read_bytes() == os.fsencode(os.path.realpath(vault))


async def test_the_owners_health_says_the_question_log_waits_and_how_many_questions_it_keeps(aiohttp_client, tmp_path):
    """A log that could not be opened or written said so once in the journal, and /health
    said nothing: the owner learnt that questions waited in memory, or were lost, only there."""
    from aiohttp.test_utils import TestServer

    from grasbot import Settings
    from grasbot.server.app import create_app
    from support.bots import write_note
    from support.files import read_only_folder

    state = tmp_path / "state"
    state.mkdir()
    write_note(tmp_path / "vault", "un.md", "title: Le jardin\nvisibility: public", "Les abeilles du jardin.")
    settings = Settings.load(vault_dir=tmp_path / "vault", question_log=state / "q.sqlite3", semantic="off", index_cache=False, ollama_host=unused_url())
    with read_only_folder(state):
        client = await aiohttp_client(TestServer(create_app(settings, owner_token=OWNER_TOKEN)))
        assert (await client.get("/ask", params={"q": "les abeilles"})).status == 200
        owners = (await (await client.get("/health", headers=OWNER)).json())["question_log"]
        visitors = await (await client.get("/health")).json()
    await client.close()
    assert owners["state"] == "waiting" and owners["kept"] == 1 and owners["dropped"] == 0
    assert owners["error"].startswith("impossible d'ouvrir le fichier : ") and "q.sqlite3" in owners["error"]
    assert "question_log" not in visitors  # where the owner's files are is no visitor's to know


async def test_the_owners_health_says_the_question_log_is_on_or_off(aiohttp_client, tmp_path):
    from aiohttp.test_utils import TestServer

    from grasbot import Settings
    from grasbot.server.app import create_app
    from support.bots import write_note

    write_note(tmp_path / "vault", "un.md", "title: Le jardin\nvisibility: public", "Les abeilles du jardin.")
    for setting, expected in ((tmp_path / "q.sqlite3", {"state": "on"}), ("off", {"state": "off"})):
        settings = Settings.load(vault_dir=tmp_path / "vault", question_log=setting, semantic="off", index_cache=False, ollama_host=unused_url())
        client = await aiohttp_client(TestServer(create_app(settings, owner_token=OWNER_TOKEN)))
        assert (await (await client.get("/health", headers=OWNER)).json())["question_log"] == expected
        await client.close()
