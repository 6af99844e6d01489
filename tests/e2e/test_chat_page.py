"""The chat page in a real browser, through the real proxy.

Headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core from
tests/browser/chat_page.mjs) loads `/` through nginx in front of `grasbot serve`, asks a
question, and reports what is on screen; the stand-in Ollama writes the answer.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile

import pytest

from support.bots import REPO
from support.nginx import IMG_MARKUP, QUESTION, SCRIPT_TITLE, Stack

DRIVER = REPO / "tests" / "browser" / "chat_page.mjs"
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = REPO / "test-artifacts"
BROWSER_TIMEOUT = 120.0

REPLY = "Le Potager connecté arrose le jardin tout seul : un script Python lit des capteurs d'humidité. "


def browser_tools() -> tuple[str, str]:
    """node and chromium, or a failure that says how to get them (a skip would pass CI)."""
    node = shutil.which("node")
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail("chromium is not installed: run `bash scripts/setup.sh --test` (it installs Debian's chromium)", pytrace=False)
    if not node or not (REPO / "node_modules" / "playwright-core").is_dir():
        pytest.fail("node or playwright-core is missing: run `npm ci` at the repository root", pytrace=False)
    return node, CHROMIUM


async def run_browser(stack: Stack, question: str, **options) -> dict:
    """Run the driver against the page behind nginx; its report of what is on screen."""
    node, chromium = browser_tools()
    with tempfile.TemporaryDirectory(prefix="grasbot-chromium-") as profile:
        config = {"url": f"{stack.url}/", "question": question, "userDataDir": profile, "chromium": chromium, **options}
        proc = await asyncio.create_subprocess_exec(
            node,
            str(DRIVER),
            json.dumps(config),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=REPO,
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(), BROWSER_TIMEOUT)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    assert proc.returncode == 0, f"the browser driver failed:\n{err.decode(errors='replace')}"
    report = json.loads(out.decode().strip().splitlines()[-1])
    assert report["pageStatus"] == 200, f"GET / through nginx answered {report['pageStatus']}: does the daemon serve the page?"
    origin = stack.url + "/"
    outside = [url for url in report["requests"] if not url.startswith(origin)]
    assert not outside, f"the page requested something outside its origin: {outside}"
    assert report["pageErrors"] == [], report["pageErrors"]
    assert report["dialogs"] == []
    return report


async def test_chat_page_shows_a_streamed_answer_with_its_sources(stack: Stack):
    stack.ollama.script(REPLY + IMG_MARKUP, chunks=6, chunk_delay=0.05)
    ARTIFACTS.mkdir(exist_ok=True)
    screenshot = ARTIFACTS / "chat-page.png"
    screenshot.unlink(missing_ok=True)

    report = await run_browser(stack, QUESTION, screenshot=str(screenshot))

    assert report["pageStatus"] == 200
    assert report["title"].startswith("GrasBot")
    assert report["scripts"] == ["static/chat.js"]  # relative: works behind the proxy at /
    assert report["state"] == "done", report
    assert report["error"] is None
    assert report["answer"].startswith(REPLY.strip())
    assert report["llmNote"] is None
    cards = {card["text"]: card for card in report["sources"]}
    assert report["badge"] == f"basé sur {len(cards)} notes"
    assert cards["Potager connecté"]["href"] == f"{stack.url}/portfolio/potager"
    # the long note's sections sent to the model, each a link to that section of its page
    sections = {p["text"]: p for p in cards["Potager connecté"]["passages"]}
    assert sections["Le script d'arrosage"]["href"] == f"{stack.url}/portfolio/potager#le-script-d-arrosage"
    assert all(p["visible"] for p in sections.values())
    assert not any(p["text"].startswith("Saison") for p in sections.values())  # they say nothing of the question
    assert all(card["passages"] == [] for name, card in cards.items() if name != "Potager connecté")  # short notes: whole
    assert cards["Python"]["href"] == f"{stack.url}/competences/python"
    assert cards[SCRIPT_TITLE]["href"] is None  # type `note` has no URL: a title, no link
    assert all(card["visible"] for card in cards.values())
    assert "Journal intime" not in cards
    # markup in a note's title and in the answer shows as text and never runs
    assert IMG_MARKUP in report["answer"]
    assert report["injectedElements"] == 0
    assert report["injectedGlobal"] is None
    # exactly one question reached the LLM: no EventSource reconnection asked it again
    assert len(stack.ollama.requests) == 1
    assert screenshot.stat().st_size > 10_000


async def test_chat_page_labels_an_extractive_answer(stack: Stack):
    stack.ollama.script(mode="http_500")
    report = await run_browser(stack, QUESTION)
    assert report["state"] == "done", report
    assert report["llmNote"] == "réponse extraite des notes, le modèle est indisponible"
    assert report["answer"].strip()  # the notes' own sentences
    assert report["badge"].startswith("basé sur ")
    assert report["error"] is None


async def test_chat_page_says_when_the_stream_fails(stack: Stack):
    report = await run_browser(stack, QUESTION, failStream=True)
    assert report["state"] == "error", report
    assert report["error"].startswith("La réponse n'a pas pu être obtenue")
    assert report["answer"] == ""
    assert report["badge"] is None
    assert stack.ollama.requests == []
