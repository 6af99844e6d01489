"""The chat page in a real browser, through the real proxy.

Headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core from
tests/browser/chat_page.mjs, through support/browser.py) loads `/` through nginx in front of `grasbot serve` and holds a
conversation; the stand-in Ollama writes the answers. The driver runs the steps a test
gives it and reports what is on screen; the assertions are here. Screenshots go to
test-artifacts/.
"""

from __future__ import annotations

import asyncio
import json

import aiohttp

from support.browser import ARTIFACTS, FOLLOWUP, HOSTILE_REPLY, ask, drive, history_sent
from support.nginx import QUESTION, SCRIPT_TITLE, STUCK, Stack, grasbot_behind_nginx

THIRD = "Merci, et à quelle fréquence ?"
MARKDOWN_REPLY = (
    "Le **Potager connecté** arrose tout seul [potager], grâce à *Python* [python].\n\n"
    "- un script `arrosage.py`\n- des capteurs d'humidité\n\n"
    "```\npython arrosage.py --zone 1\n```\n\n" + HOSTILE_REPLY
)
SECOND_REPLY = "Il tourne sur un Raspberry Pi [potager]."
THIRD_REPLY = "Il lit les capteurs toutes les dix minutes [potager]."


async def on_page(stack: Stack, steps: list[dict], **options) -> dict:
    return await drive(f"{stack.url}/", steps, origins=(stack.url,), **options)


# ---------------------------------------------------------------- a conversation


async def test_a_three_turn_conversation_sends_its_history(stack: Stack):
    stack.ollama.script_next(MARKDOWN_REPLY, chunks=12, chunk_delay=0.03)
    stack.ollama.script_next(SECOND_REPLY, chunks=3)
    stack.ollama.script_next(THIRD_REPLY, chunks=3)
    report = await on_page(
        stack,
        [
            *ask(QUESTION, 1),
            {"do": "snapshot", "name": "first"},
            *ask(FOLLOWUP, 2, click=True),
            *ask(THIRD, 3),
            {"do": "snapshot", "name": "third"},
            {"do": "screenshot", "name": "chat-conversation.png"},
            {"do": "axe", "name": "page"},
        ],
    )
    first, third = report["snapshots"]["first"], report["snapshots"]["third"]
    assert report["title"].startswith("GrasBot")
    assert report["snapshots"]["first"]["scripts"] == ["static/chat.js", "static/page.js"]  # relative: any prefix
    assert [t["status"] for t in third["turns"]] == ["done", "done", "done"]
    assert [t["question"] for t in third["turns"]] == [f"Vous : {q}" for q in (QUESTION, FOLLOWUP, THIRD)]
    # the thread, the sources and their sections, drawn without bullets, still say they are lists
    # (Safari and VoiceOver drop the role of a list whose list-style is none)
    bare = third["bareLists"]
    assert {b["cls"] for b in bare} == {"grasbot-thread", "grasbot-sources", "grasbot-passages"}, bare
    assert all(b["role"] == "list" for b in bare), bare

    # the follow-up was answered from the first turn's note: history reached the daemon
    requests = stack.ollama.requests
    assert len(requests) == 3
    first_answer = requests[0] and report["snapshots"]["first"]["turns"][0]
    assert history_sent(requests[0]) == []
    sent = history_sent(requests[1])
    assert [m["role"] for m in sent] == ["user", "assistant"]
    assert sent[0]["content"] == QUESTION
    assert sent[1]["content"].startswith("Le **Potager connecté** arrose tout seul [potager]")
    assert "électrovanne" in requests[1]["messages"][-1]["content"]  # the potager note is in the prompt
    second = third["turns"][1]
    assert "Potager connecté" in [s["text"] for s in second["sources"]]
    assert second["cites"] == [{"text": "Potager connecté", "href": f"{stack.url}/portfolio/potager"}]
    assert len(history_sent(requests[2])) == 4  # two exchanges
    async with aiohttp.ClientSession() as http:  # control: alone, the follow-up finds no potager
        async with http.get(f"{stack.url}/ask", params={"q": FOLLOWUP}) as response:
            alone = await response.json()
    assert "potager" not in [s["slug"] for s in alone["sources"]] and alone["grounded"] is False, alone

    # the first answer: Markdown made into elements, citations into links, markup left as text
    turn = first_answer
    assert turn["markup"] == {"p": 2, "strong": 1, "em": 1, "code": 1, "pre": 1, "ul": 2, "ol": 0}
    assert turn["cites"] == [
        {"text": "Potager connecté", "href": f"{stack.url}/portfolio/potager"},
        {"text": "Python", "href": f"{stack.url}/competences/python"},
    ]
    assert HOSTILE_REPLY in turn["answer"]
    assert turn["badge"] == f"basé sur {len(turn['sources'])} notes"
    assert turn["notes"] == [] and turn["error"] is None and not turn["retry"]
    cards = {card["text"]: card for card in turn["sources"]}
    assert cards["Potager connecté"]["href"] == f"{stack.url}/portfolio/potager"
    sections = {p["text"]: p for p in cards["Potager connecté"]["passages"]}
    assert sections["Le script d'arrosage"]["href"] == f"{stack.url}/portfolio/potager#le-script-d-arrosage"
    assert cards[SCRIPT_TITLE]["href"] is None  # type `note` has no URL; its markup title is text
    assert all(card["visible"] for card in cards.values())
    assert "Journal intime" not in cards

    # announced once complete, not token by token (12 tokens came)
    announced = [a["text"] for a in first["announcements"] if a["region"] == "announce"]
    assert announced == ["Réponse de GrasBot : " + turn["spoken"]]
    # paragraphs, list items and lines apart (textContent ran « Python [Python].un script »)
    assert turn["spoken"].startswith("Le Potager connecté arrose tout seul [Potager connecté], grâce à Python [Python].\n\nun script arrosage.py\ndes capteurs")
    assert {r["live"] for r in first["live"]} == {"polite"}
    assert not any("grasbot-thread" in r["cls"] or "grasbot-answer" in r["cls"] for r in first["live"])
    assert (ARTIFACTS / "chat-conversation.png").stat().st_size > 10_000


async def test_stop_mid_stream_closes_the_request_to_the_model(stack: Stack):
    stack.ollama.script("Le **potager** arrose tout seul. " * 40, chunks=60, chunk_delay=0.25)  # 15 s
    report = await on_page(
        stack,
        [
            {"do": "ask", "q": QUESTION},
            {"do": "waitText", "text": "potager"},
            {"do": "snapshot", "name": "streaming"},
            {"do": "press", "key": "Escape"},
            {"do": "wait", "states": ["stopped"], "turns": 1},
            {"do": "snapshot", "name": "stopped"},
            {"do": "screenshot", "name": "chat-stopped.png"},
        ],
    )
    streaming, stopped = report["snapshots"]["streaming"], report["snapshots"]["stopped"]
    assert streaming["state"] == "streaming" and streaming["stopVisible"]
    turn = stopped["turns"][0]
    assert turn["status"] == "stopped"
    assert "Réponse arrêtée." in turn["notes"] and turn["retry"]
    assert turn["answer"].startswith("Le potager arrose tout seul.")  # what was shown stays shown: no raw `**`
    assert turn["markup"]["strong"] >= 1
    assert not stopped["stopVisible"]
    assert stopped["focused"].startswith("textarea.grasbot-input")

    # the daemon closed its request to the model: the stand-in found its client gone
    loop = asyncio.get_running_loop()
    deadline = loop.time() + STUCK
    while not any(kind == "disconnected" for kind, _ in stack.ollama.events) and loop.time() < deadline:
        await asyncio.sleep(0.05)
    assert any(kind == "disconnected" for kind, _ in stack.ollama.events), stack.ollama.events
    assert ("done", None) not in stack.ollama.events
    assert sum(kind == "chunk" for kind, _ in stack.ollama.events) < 50


async def test_retry_after_a_broken_connection(stack: Stack):
    stack.ollama.script("Le potager arrose tout seul [potager].", chunks=3)
    report = await on_page(
        stack,
        [
            *ask(QUESTION, 1),
            {"do": "snapshot", "name": "failed"},
            {"do": "click", "selector": ".grasbot-retry"},
            {"do": "wait", "states": ["done"], "turns": 1},
            {"do": "snapshot", "name": "retried"},
        ],
        routes=[{"match": "/ask/stream", "times": 1}],
    )
    failed = report["snapshots"]["failed"]["turns"][0]
    assert failed["status"] == "error"
    assert failed["error"] == "Impossible de joindre GrasBot : vérifiez votre connexion, puis réessayez."
    assert failed["errorRole"] == "alert"  # a new error: a screen reader says it at once
    assert failed["retry"] and failed["badge"] is None
    retried = report["snapshots"]["retried"]
    assert len(retried["turns"]) == 1
    assert retried["turns"][0]["status"] == "done" and retried["turns"][0]["error"] is None
    assert retried["turns"][0]["answer"] == "Le potager arrose tout seul [Potager connecté]."
    assert len(stack.ollama.requests) == 1  # the broken request never reached the daemon


async def test_a_question_asked_while_the_visitor_awaits_answers_already_says_why_it_waits(tmp_path):
    """A visitor waiting for as many answers as GRASBOT_CONCURRENT_ANSWERS allows (another tab)
    is told so in the daemon's words, not « trop de questions à la suite », which they did not ask."""
    async with grasbot_behind_nginx(tmp_path, {"GRASBOT_CONCURRENT_ANSWERS": "1"}) as stack:
        # longer than the 64 characters the daemon holds back: a token is out before the stand-in holds
        pieces = ["Le Potager connecté est un projet de jardin où tout se fait automatiquement, ", "il arrose tout seul."]
        stack.ollama.script(pieces=pieces, hold_after=1)
        async with aiohttp.ClientSession() as http, http.get(f"{stack.url}/ask/stream", params={"q": QUESTION}) as other_tab:
            await asyncio.wait_for(other_tab.content.readuntil(b"event: token"), STUCK)
            report = await on_page(stack, [*ask(FOLLOWUP, 1), {"do": "snapshot", "name": "refused"}])
            stack.ollama.release()
            await other_tab.read()
    refused = report["snapshots"]["refused"]["turns"][0]
    assert refused["status"] == "error" and refused["retry"]
    assert refused["error"] == "Vos questions précédentes sont encore en cours de réponse : attendez la fin de l'une d'elles, puis posez celle-ci."


async def test_a_rate_limited_question_says_when_to_retry(tmp_path):
    async with grasbot_behind_nginx(tmp_path, {"GRASBOT_RATE_BURST": "1", "GRASBOT_RATE_PER_MINUTE": "1"}) as stack:
        stack.ollama.script("Le potager arrose tout seul.", chunks=2)
        report = await on_page(stack, [*ask(QUESTION, 1), *ask(FOLLOWUP, 2), {"do": "snapshot", "name": "limited"}])
    first, second = report["snapshots"]["limited"]["turns"]
    assert first["status"] == "done"
    assert second["status"] == "error" and second["retry"]
    assert not second["retryEnabled"]  # until the time the daemon gave: a Retry before it is refused again
    assert first["retryEnabled"] is False and not first["retry"]
    assert second["error"].startswith("Trop de questions à la suite : réessayez dans ")
    assert 1 <= int(second["error"].removeprefix("Trop de questions à la suite : réessayez dans ").split()[0]) <= 60


async def test_long_answers_keep_the_request_under_the_proxy_limit(stack: Stack):
    """Four exchanges of long French answers would not fit a proxy's 8 KiB request line once
    URL-encoded (nginx's by default, Apache's): the oldest go, the newest stays, and every
    question is answered."""
    long_reply = "Réponse détaillée à propos de l'électrovanne et du potager. " * 30  # 1,800 characters
    stack.ollama.script(long_reply, chunks=4)
    questions = [QUESTION, FOLLOWUP, THIRD, "Et ensuite ?", "Et pour finir ?"]
    steps = [step for i, q in enumerate(questions, 1) for step in ask(q, i)]
    report = await on_page(stack, [*steps, {"do": "snapshot", "name": "end"}])
    assert [t["status"] for t in report["snapshots"]["end"]["turns"]] == ["done"] * 5
    last = history_sent(stack.ollama.requests[-1])
    assert 2 <= len(last) < 8  # some history, not all of it
    assert last[-2] == {"role": "user", "content": "Et ensuite ?"}  # the newest exchange is kept
    assert last[-1]["content"] == long_reply.strip()[: len(last[-1]["content"])]
    streamed = [u for u in report["requests"] if "/ask/stream?" in u]
    assert len(streamed) == 5 and max(len(u) for u in streamed) <= 7000
    # control: the whole history (what the daemon's own limits allow) is over 8 KiB sent so; the
    # repository's nginx reads a line as long as the daemon does, and the daemon answers it
    whole = [{"role": r, "content": c} for q in questions[1:] for r, c in (("user", q), ("assistant", long_reply.strip()))]
    async with aiohttp.ClientSession() as http:
        for _ in range(3):  # the page's five questions may have spent the visitor's burst: the daemon says when to come back
            async with http.get(f"{stack.url}/ask/stream", params={"q": "?", "history": json.dumps(whole)}) as response:
                assert len(str(response.url)) > 8192
                if response.status != 429:
                    assert response.status == 200, await response.text()
                    break
                await asyncio.sleep(float(response.headers["Retry-After"]))
        else:
            raise AssertionError("the daemon kept refusing the control question for the rate limit")


async def test_the_chat_keeps_to_a_daemon_configured_with_lower_limits(tmp_path):
    """A daemon's 400 names its limit: the chat sends what it allows, or says what is wrong."""
    limits = {"GRASBOT_MAX_QUESTION": "60", "GRASBOT_MAX_HISTORY": "2", "GRASBOT_MAX_TURN": "100"}
    long_reply = "Le potager arrose tout seul grâce à un script Python. " * 6  # over 100 characters
    too_long = "Une question bien trop longue pour ce démon-là, qui en veut soixante au plus ?"
    async with grasbot_behind_nginx(tmp_path, limits) as stack:
        stack.ollama.script(long_reply, chunks=2)
        report = await on_page(
            stack,
            [*ask(QUESTION, 1), *ask(FOLLOWUP, 2), *ask(THIRD, 3), *ask(too_long, 4), {"do": "snapshot", "name": "end"}],
        )
    end = report["snapshots"]["end"]
    assert [t["status"] for t in end["turns"]] == ["done", "done", "done", "error"]
    first, second, third = (history_sent(r) for r in stack.ollama.requests)
    assert first == []
    # each turn cut to the daemon's 100 characters, and only the last exchange (2 turns)
    assert second == [{"role": "user", "content": QUESTION}, {"role": "assistant", "content": long_reply.strip()[:100]}]
    assert third == [{"role": "user", "content": FOLLOWUP}, {"role": "assistant", "content": long_reply.strip()[:100]}]
    assert end["turns"][3]["error"] == ("Votre question est trop longue : 60 caractères au plus. Raccourcissez-la, puis réessayez.")
    assert not end["turns"][3]["retry"]  # the same question would be refused again
    assert end["input"] == too_long  # back in the box, to shorten
    assert end["maxLength"] == 60
    assert len(too_long) > 60


async def test_a_fallback_answer_says_so_and_retry_gets_the_model(stack: Stack):
    stack.ollama.script_next(mode="http_500")
    stack.ollama.script("Le potager arrose tout seul [potager].", chunks=2)
    report = await on_page(
        stack,
        [
            *ask(QUESTION, 1),
            {"do": "snapshot", "name": "fallback"},
            {"do": "screenshot", "name": "chat-fallback.png"},
            {"do": "click", "selector": ".grasbot-retry"},
            {"do": "wait", "states": ["done"], "turns": 1},
            {"do": "snapshot", "name": "retried"},
        ],
    )
    fallback = report["snapshots"]["fallback"]["turns"][0]
    assert fallback["status"] == "done"
    assert fallback["notes"] == ["Cette réponse est faite d'extraits des notes, sans le modèle de langue."]
    assert fallback["answer"].strip() and fallback["retry"]
    assert fallback["badge"].startswith("basé sur ")
    retried = report["snapshots"]["retried"]["turns"][0]
    assert retried["notes"] == [] and not retried["retry"]
    assert retried["answer"] == "Le potager arrose tout seul [Potager connecté]."
    assert len(stack.ollama.requests) == 2


async def test_an_answer_from_no_note_shows_no_sources(stack: Stack):
    """The ranking's notes came with an answer that no note grounded, and showed as its
    « Sources » under « Je ne trouve pas… »; a grounded answer counted, and listed, notes whose
    passages the model was never given."""
    sse = {"Content-Type": "text/event-stream"}
    unread = {**SOURCE, "slug": "python", "title": "Python", "url": "/competences/python", "path": "competences/python.md", "passages": []}
    read = {**SOURCE, "passages": [{"heading": ["Le script"], "anchor": "le-script", "url": "/portfolio/potager#le-script", "chars": 120}]}

    def stream(grounded: bool, response: str) -> str:
        sources = [read, unread] if grounded else [unread, {**unread, "slug": "docker", "title": "Docker"}]
        done = {"response": response, "sources": sources, "grounded": grounded, "model": "qwen3:8b", "vault_size": 3, "busy": False, "reused": False}
        events = [("sources", {"sources": sources, "grounded": grounded}), ("token", {"text": response}), ("done", done)]
        return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)

    report = await on_page(
        stack,
        [*ask(QUESTION, 1), *ask(FOLLOWUP, 2), {"do": "snapshot", "name": "after"}],
        routes=[
            {"match": "q=Quel", "times": 1, "body": stream(False, "Je ne trouve pas cette information dans les notes."), "headers": sse},
            {"match": "q=C", "times": 1, "body": stream(True, "Le potager arrose tout seul [potager]."), "headers": sse},
        ],
    )
    general, grounded = report["snapshots"]["after"]["turns"]
    assert general["status"] == "done" and general["badge"] == "réponse généraliste" and general["sources"] == []
    assert grounded["badge"] == "basé sur 1 note" and [c["text"] for c in grounded["sources"]] == ["Potager connecté"]
    assert stack.ollama.requests == []  # both were crafted


SOURCE = {
    "slug": "potager",
    "title": "Potager connecté",
    "type": "projet",
    "score": 9.0,
    "reasons": [],
    "url": "/portfolio/potager",
    "path": "projets/potager.md",
    "passages": [],
}


def crafted_stream(*events: tuple[str, dict], **done: object) -> str:
    """An /ask/stream body as the daemon (with admission control) sends it: `sources`, then
    `events`, then `done` with the answer's payload and `done`'s fields."""
    payload = {
        "response": "Le potager arrose tout seul [potager].",
        "sources": [SOURCE],
        "grounded": True,
        "model": "qwen3:8b",
        "vault_size": 3,
        "busy": False,
        "reused": False,
        **done,
    }
    body = [("sources", {"sources": [SOURCE], "grounded": True}), *events, ("done", payload)]
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in body)


async def test_a_queued_and_a_busy_answer_say_so_a_reused_one_does_not(stack: Stack):
    sse = {"Content-Type": "text/event-stream"}
    tokens = [("token", {"text": "Le potager "}), ("token", {"text": "arrose tout seul [potager]."})]
    queued = crafted_stream(("queue", {"position": 2}), ("queue", {"position": 1}), *tokens)
    busy = crafted_stream(busy=True, model=None, response="Extrait : le potager arrose tout seul [potager].")
    reused = crafted_stream(*tokens, reused=True)
    report = await on_page(
        stack,
        [
            *ask(QUESTION, 1),
            *ask(FOLLOWUP, 2),
            *ask(THIRD, 3),
            {"do": "snapshot", "name": "answers"},
            {"do": "screenshot", "name": "chat-busy.png"},
            {"do": "axe", "name": "busy"},
        ],
        routes=[
            {"match": "q=Quel", "times": 1, "body": queued, "headers": sse},
            {"match": "q=C", "times": 1, "body": busy, "headers": sse},
            {"match": "q=Merci", "times": 1, "body": reused, "headers": sse},
        ],
    )
    snap = report["snapshots"]["answers"]
    waited, busy_turn, reused_turn = snap["turns"]
    assert waited["notes"] == [] and not waited["retry"] and waited["progress"] is None
    assert waited["answer"] == "Le potager arrose tout seul [Potager connecté]."
    said = [a["text"] for a in snap["announcements"] if a["region"] != "announce"]
    assert said[:6] == [  # the first answer's status line, as a screen reader hears it
        "Recherche dans les notes…",
        "Rédaction de la réponse…",  # the sources came
        "Vous êtes en position 2 dans la file d'attente…",
        "Vous êtes le prochain dans la file d'attente…",
        "Rédaction de la réponse…",  # out of the queue, the first token
        "Réponse terminée.",
    ]
    assert busy_turn["notes"] == [
        "Le modèle de langue est occupé par d'autres questions : voici les passages des notes les plus proches. "
        "Réessayez dans un instant pour une réponse rédigée."
    ]
    assert busy_turn["retry"] and busy_turn["answer"].startswith("Extrait : ")
    # `reused: true`, which the daemon never tells a visitor (it would say another asked the
    # same), is no note either: the answer reads as any other
    assert reused_turn["notes"] == [] and not reused_turn["retry"]
    assert stack.ollama.requests == []  # all three were crafted


# ---------------------------------------------------------------- reload, keyboard, small screens


async def test_the_thread_survives_a_reload_mid_conversation(stack: Stack):
    stack.ollama.script_next("Le potager arrose tout seul [potager].", chunks=2)
    stack.ollama.script_next("Sur un Raspberry Pi. " * 30, chunks=40, chunk_delay=0.25)
    stack.ollama.script("Sur un Raspberry Pi [potager].", chunks=2)
    report = await on_page(
        stack,
        [
            *ask(QUESTION, 1),
            {"do": "snapshot", "name": "before"},
            {"do": "ask", "q": FOLLOWUP},
            {"do": "waitText", "text": "Raspberry"},
            {"do": "reload", "waitFor": ".grasbot-turn"},
            {"do": "snapshot", "name": "restored"},
            {"do": "screenshot", "name": "chat-restored.png"},
            {"do": "axe", "name": "restored"},
            {"do": "click", "selector": ".grasbot-retry"},
            {"do": "wait", "states": ["done"], "turns": 2},
            {"do": "snapshot", "name": "retried"},
            {"do": "click", "selector": ".grasbot-new"},
            {"do": "reload", "waitFor": ".grasbot-input"},
            {"do": "snapshot", "name": "new"},
        ],
    )
    before, restored = report["snapshots"]["before"], report["snapshots"]["restored"]
    first, second = restored["turns"]
    unplaced = lambda turn: {k: v for k, v in turn.items() if k != "top"}  # noqa: E731 - where the page scrolled is no content
    assert unplaced(first) == unplaced(before["turns"][0])  # the answered turn, as it was: answer, links, sources
    assert second["status"] == "error" and second["retry"]
    assert second["error"] == "La réponse a été interrompue avant la fin. Réessayez dans un instant."
    # shown again, not announced again: an alert drawn on reload was read out as a new failure
    assert second["errorRole"] is None
    assert second["answer"].startswith("Sur un Raspberry Pi.")  # what was written before the reload, kept
    assert restored["status"] == "Conversation reprise : 2 questions."
    retried = report["snapshots"]["retried"]["turns"]
    assert [t["status"] for t in retried] == ["done", "done"]
    assert retried[1]["answer"] == "Sur un Raspberry Pi [Potager connecté]."
    assert history_sent(stack.ollama.requests[-1])[0]["content"] == QUESTION  # the retry kept the history
    assert report["snapshots"]["new"]["turns"] == []  # "Nouvelle conversation" cleared the kept thread too


async def test_keyboard_only(stack: Stack):
    stack.ollama.script_next("Le potager arrose tout seul [potager].", chunks=2)
    stack.ollama.script("Une réponse longue. " * 40, chunks=60, chunk_delay=0.25)
    report = await on_page(
        stack,
        [
            # the page opens with the focus in the question box
            {"do": "type", "text": "ligne un"},
            {"do": "press", "key": "Shift+Enter"},
            {"do": "type", "text": "ligne deux"},
            {"do": "snapshot", "name": "multiline"},
            {"do": "press", "key": "Control+A"},
            {"do": "type", "text": QUESTION},
            {"do": "press", "key": "Enter"},
            {"do": "wait", "states": ["done"], "turns": 1},
            {"do": "focus", "name": "forward", "count": 6},
            {"do": "focus", "name": "back", "count": 6, "shift": True},
            {"do": "type", "text": FOLLOWUP},
            {"do": "press", "key": "Enter"},
            {"do": "waitText", "text": "longue"},
            {"do": "press", "key": "Escape"},
            {"do": "wait", "states": ["stopped"], "turns": 2},
            {"do": "snapshot", "name": "stopped"},
            # Retry: its button goes with the turn it was in; Escape must still stop the answer
            {"do": "click", "selector": ".grasbot-retry"},
            {"do": "waitText", "text": "longue"},
            {"do": "snapshot", "name": "retried"},
            {"do": "press", "key": "Escape"},
            {"do": "wait", "states": ["stopped"], "turns": 2},
        ],
    )
    multiline = report["snapshots"]["multiline"]
    assert multiline["turns"] == []  # Shift+Enter is a new line, not a question
    assert multiline["input"] == "ligne un\nligne deux"
    forward = report["focus"]["forward"]
    # from the question box: the send button, out of the page (the browser's own controls),
    # then from the top: the toolbar, the answer's citation, its sources and their sections
    assert forward[:4] == [
        "button.grasbot-send:Envoyer",
        "body",
        "button.grasbot-new:Nouvelle conversation",
        "a.grasbot-cite:Potager connecté",
    ]
    assert forward[4].startswith("a.grasbot-source-title:")  # the sources' order is the ranking's
    assert forward[5].startswith("a.grasbot-source-title:") or forward[5] == "a:Le script d'arrosage"
    assert report["focus"]["back"] == [*reversed(forward[:-1]), "textarea.grasbot-input:"]  # Shift+Tab: the same way back
    stopped = report["snapshots"]["stopped"]
    assert stopped["turns"][1]["status"] == "stopped"
    assert stopped["focused"].startswith("textarea.grasbot-input")
    retried = report["snapshots"]["retried"]
    assert retried["state"] == "streaming" and retried["focused"].startswith("button.grasbot-stop"), retried["focused"]


async def test_a_360_px_wide_screen(stack: Stack):
    long_word = "anticonstitutionnellement" * 6
    stack.ollama.script(
        f"Le potager [potager] : {long_word}, example.org/{'x' * 120}\n\n```\n{'python arrosage.py ' * 12}\n```\n\n"
        + "Une phrase de plus sur le potager. " * 30,
        chunks=3,
    )
    report = await on_page(
        stack,
        [*ask(QUESTION, 1), {"do": "snapshot", "name": "narrow"}, {"do": "screenshot", "name": "chat-360px.png"}, {"do": "axe", "name": "narrow"}],
        viewport={"width": 360, "height": 740},
    )
    narrow = report["snapshots"]["narrow"]
    assert narrow["clientWidth"] == 360
    assert narrow["scrollWidth"] <= narrow["clientWidth"], narrow
    assert narrow["turns"][0]["status"] == "done"
    # the answer done, the question is still where the visitor reads (it was scrolled to the form below)
    assert 0 <= narrow["turns"][0]["top"] < narrow["innerHeight"], (narrow["turns"][0]["top"], narrow["innerHeight"])
    assert narrow["turns"][0]["dirs"] == ["auto", "auto"]  # an Arabic question or answer reads right to left
    # the example in the empty box is the chat's muted ink (#545b62, 6.9:1 on white), not the
    # browser's own (Safari's darkGray is 2.3:1, Firefox's ink at 54% 3.6:1)
    assert narrow["placeholder"] == {"color": "rgb(84, 91, 98)", "opacity": "1"}


async def test_the_visitors_default_font_size_applies(stack: Stack):
    """A visitor who set a larger default font size in the browser's settings (WCAG 1.4.4) gets
    the chat in it: a fixed 16px kept every word at 16px for them."""
    steps = [{"do": "waitFor", "selector": ".grasbot-input"}, {"do": "snapshot", "name": "page"}]
    default = await on_page(stack, steps)
    larger = await on_page(stack, steps, fontSize=24)
    assert default["snapshots"]["page"]["fontSizes"] == {"chat": "16px", "hint": "13.6px"}  # the look, unchanged
    assert larger["snapshots"]["page"]["fontSizes"] == {"chat": "24px", "hint": "20.4px"}  # the visitor's 24px, its smaller text in scale


async def test_a_bidi_override_in_a_notes_title_stays_in_it(stack: Stack):
    """A clipped page's title or heading may end in U+202E (right-to-left override, unclosed):
    drawn into the answer as a citation, it turned the rest of the answer's line right to left
    (« pour arroser » read « resorra ruop »), and on a source's card the type after it."""
    sse = {"Content-Type": "text/event-stream"}
    passage = {"heading": ["Le script\u202e", "Capteurs"], "anchor": "capteurs", "url": "/portfolio/potager#capteurs", "chars": 120}
    source = {**SOURCE, "title": "Potager\u202e", "type": "projet\u202e", "passages": [passage]}
    response = "Voir [potager] pour arroser chaque matin."
    body = crafted_stream(response=response, sources=[source])
    report = await on_page(
        stack,
        [*ask(QUESTION, 1), {"do": "snapshot", "name": "after"}],
        routes=[{"match": "q=Quel", "times": 1, "body": body, "headers": sse}],
    )
    (turn,) = report["snapshots"]["after"]["turns"]
    assert turn["answer"] == "Voir [Potager\u202e] pour arroser chaque matin."  # the title as written
    assert turn["sources"][0]["passages"][0]["text"] == "Le script\u202e › Capteurs"
    assert turn["reversed"] == [], turn["reversed"]
