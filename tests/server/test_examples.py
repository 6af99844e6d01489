"""shared-protocol/examples/ are what the daemon answers: each request is sent to the real
daemon on the bundled vault (lexical, a stand-in Ollama), and its response compared whole,
`took_ms`, `version` and the stand-in's port set aside. Examples whose response holds a -32001
error are sent without the owner token, and the busy answer (the owner has a slot of their
own), the others with it (shared-protocol/README.md).

`GRASBOT_WRITE_EXAMPLES=1 pytest tests/server/test_examples.py` writes the daemon's responses
into the files instead, for a change of the protocol or of the bundled vault: read the diff.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from grasbot._version import __version__
from support.bots import BUNDLED_VAULT, OWNER_TOKEN, rpc_raw, write_note
from support.examples import EXAMPLES, load_example
from support.standin_ollama import unused_url

WRITE = os.environ.get("GRASBOT_WRITE_EXAMPLES") == "1"
PORT = re.compile(r"http://127\.0\.0\.1:\d+")
ANSWER = "Les collisions sont testées à chaque image contre la raquette, les murs et les briques [jeu-casse-briques]."


def normalized(value, written: bool = False):
    """`value` without what changes from run to run: timings, the version, the stand-in's port
    (`written`: as the files hold them, a plausible time and this version)."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key == "took_ms":
                out[key] = 4.2 if written else None
            elif key == "version":
                out[key] = __version__ if written else None
            else:
                out[key] = normalized(item, written)
        return out
    if isinstance(value, list):
        return [normalized(item, written) for item in value]
    if isinstance(value, str):
        return PORT.sub("http://127.0.0.1:11434", value)
    return value


async def _busy(client, standin_ollama) -> list[asyncio.Task]:
    """Every slot taken, the visitors' (by another visitor: one waits for one answer at a time
    here) and the owner's, and no queue: the example's question is answered from the notes."""
    standin_ollama.script(pieces=["Une réponse ", "qui prend son temps."], hold_after=1)
    held = [
        asyncio.ensure_future(client.get("/ask/stream", params={"q": "Comment fonctionne GrasBot ?"}, headers=headers))
        for headers in ({"X-Forwarded-For": "198.51.100.7"}, {"Authorization": f"Bearer {OWNER_TOKEN}"})
    ]
    while standin_ollama.in_flight != 2:
        await asyncio.sleep(0.02)
    return held


def _reload_changes(vault: Path) -> None:
    """One note added, two changed, one that cannot be read: what `reload` reports."""
    write_note(vault, "portfolio/quiz-revision.md", "title: Quiz de révision\ntype: projet\nvisibility: public", "Un quiz pour réviser le code de la route.")
    for rel in ("competences/git.md", "techniques/sqlite.md"):
        path = vault / rel
        path.write_text(path.read_text(encoding="utf-8") + "\nUne ligne ajoutée.\n", encoding="utf-8")
    write_note(vault, "brouillons/casse.md", "title: [pas fermé\nvisibility: private", "Le corps.")


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
async def test_each_example_is_what_the_daemon_answers(start_daemon, standin_ollama, tmp_path, path):
    example = load_example(path)
    request, expected = example["request"], example["response"]
    owner = "-32001" not in json.dumps(expected) and path.stem != "answer-busy"  # the owner has a slot of their own
    vault, settings = BUNDLED_VAULT, {}
    if path.stem == "answer-llm-fallback":
        settings["ollama_url"] = unused_url()
    if path.stem == "answer-busy":
        settings.update(llm_slots=1, llm_queue=0, answer_cache="off")
    if path.stem == "reload":
        vault = tmp_path / "vault"
        shutil.copytree(BUNDLED_VAULT, vault)
    standin_ollama.script(ANSWER)
    client = await start_daemon(vault, settings.pop("ollama_url", standin_ollama.url), owner_token=OWNER_TOKEN, **settings)
    held = await _busy(client, standin_ollama) if path.stem == "answer-busy" else []
    if path.stem == "reload":
        _reload_changes(vault)
    status, answer = await rpc_raw(client, request, {"Authorization": f"Bearer {OWNER_TOKEN}"} if owner else {})
    standin_ollama.release()
    for stream in held:
        await (await stream).read()
    got = None if status == 204 else answer
    if WRITE and path.stem != "rpc-discover":  # that one refers to the document itself
        example["response"] = normalized(got, written=True)
        path.write_text(json.dumps(example, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        return
    assert normalized(got) == normalized(expected)
