"""The packages `grasbot serve` imports once listening (`grasbot._imports`) are imported by one
thread at a time, whatever comes meanwhile: a question asked while a worker imported
jsonrpcserver made its handler import jsonschema beside it, which could leave the package half
made, and every question after that was answered -32603."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import aiohttp

from support.nginx import QUESTION, REPLY, running_daemon, write_vault
from support.standin_ollama import StandinOllama

HOOK = Path(__file__).resolve().parent.parent / "support" / "import_watch"
WATCHED = ("numpy", "jsonschema", "jsonrpcserver", "ollama", "pydantic", "httpx")


def spans(lines: list[str]) -> list[tuple[str, str, float, float]]:
    """[(thread, package, began, ended)]: each time a thread ran watched modules, from the
    first begun to the last ended (`support/import_watch`'s lines)."""
    depth: dict[str, int] = {}
    began: dict[str, tuple[str, float]] = {}
    out = []
    for line in lines:
        package, thread, what, at = line.split("\t")
        if what == "begin":
            depth[thread] = depth.get(thread, 0) + 1
            began.setdefault(thread, (package, float(at)))
        else:
            depth[thread] -= 1
            if not depth[thread]:
                first, start = began.pop(thread)
                out.append((thread, first, start, float(at)))
    return out


def at_once(runs: list[tuple[str, str, float, float]]) -> list[str]:
    """Two threads importing watched packages at the same time (one package needs another:
    jsonrpcserver imports jsonschema)."""
    return [f"{a[0]} ({a[1]}) and {b[0]} ({b[1]})" for i, a in enumerate(runs) for b in runs[i + 1 :] if a[0] != b[0] and a[2] < b[3] and b[2] < a[3]]


async def test_a_question_at_start_waits_for_the_imports(tmp_path):
    watch = tmp_path / "imports.log"
    env = {
        "PYTHONPATH": os.pathsep.join(filter(None, (str(HOOK), os.environ.get("PYTHONPATH")))),
        "IMPORT_WATCH_LOG": str(watch),
        "IMPORT_WATCH_PACKAGES": ",".join(WATCHED),
        "IMPORT_WATCH_DELAY": "0.005",  # each module a worker imports: some 2 s for them all
    }
    history = json.dumps([{"role": "user", "content": "Tu as des projets ?"}, {"role": "assistant", "content": "Oui."}])
    async with StandinOllama() as ollama:
        ollama.script(REPLY)
        async with running_daemon(tmp_path / "daemon", write_vault(tmp_path / "vault"), ollama.url, env) as (url, log):
            asked = time.monotonic()  # the system's clock, as the daemon's
            async with aiohttp.ClientSession() as http:
                async with http.get(f"{url}/ask", params={"q": QUESTION, "history": history}) as response:
                    assert response.status == 200, await response.text() + log.read_text()
                    assert REPLY in (await response.json())["response"]
                search = {"jsonrpc": "2.0", "id": 1, "method": "search", "params": {"q": QUESTION}}
                async with http.post(f"{url}/rpc", json=search) as response:
                    found = await response.json()
            assert [s["slug"] for s in found["result"]["results"]][:1] == ["potager"], found
    runs = spans(watch.read_text(encoding="utf-8").splitlines())
    # the question came while a worker imported: else this proves nothing
    assert any(thread != "MainThread" and ended > asked for thread, _, _, ended in runs), runs
    assert at_once(runs) == []
