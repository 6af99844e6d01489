"""Start the real GrasBot daemon on a copy of the bundled vault, with the stand-in Ollama.

For tests written in another language (the Obsidian plugin's contract and browser tests):
they spawn `.venv/bin/python tests/support/run_stack.py [--cors-origin ORIGIN]...`, read one
JSON line on stdout, drive the daemon over HTTP, and end it with SIGTERM or by closing stdin.

    {"daemon": "http://127.0.0.1:PORT", "ollama": "http://127.0.0.1:PORT",
     "token": "...", "vault": "/tmp/.../vault", "reply": "...", "question": "..."}

`vault` is a temporary copy the test may edit (then call `reload`). While it runs, the
launcher reads JSON commands on stdin, one a line, and answers each with one JSON line:

    {"cmd": "script", "args": {"first_delay": 30}}   -> StandinOllama.script(**args)
    {"cmd": "script"}                                -> back to the default reply
    (a script is a new model: the daemon forgets the answers it kept for reuse)
    {"cmd": "release"}                               -> StandinOllama.release()

Both servers bind 127.0.0.1 on a free port; everything temporary is removed on exit.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import shutil
import signal
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))  # the tests' support package

try:
    from aiohttp import web

    from grasbot import Settings
    from grasbot.server.app import create_app, runner_kwargs
    from grasbot.server.state import BOT
    from support.standin_ollama import StandinOllama
except ImportError as exc:  # pragma: no cover - a setup problem, said plainly
    print(f"run_stack: {exc}; run `bash scripts/setup.sh --test` first", file=sys.stderr, flush=True)
    sys.exit(3)

#: A question the bundled vault answers, and the stand-in's reply to it: it cites the note
#: the search puts first, so the daemon keeps the citation.
QUESTION = "Comment fonctionne GrasBot ?"
REPLY = "GrasBot cherche d'abord les notes qui répondent à la question, puis le modèle rédige la réponse à partir de ces notes [grasbot-pipeline]."
CHUNKS = 5


def default_script(ollama: StandinOllama, **args) -> None:
    if args:
        args.setdefault("reply", REPLY)
        args.setdefault("chunks", CHUNKS)
        ollama.script(**args)
    else:
        ollama.script(REPLY, chunks=CHUNKS)


async def commands(ollama: StandinOllama, app: web.Application, stop: asyncio.Event) -> None:
    """Serve stdin commands until stdin closes, then ask for the stop."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        try:
            command = json.loads(line)
            if command.get("cmd") == "script":
                default_script(ollama, **command.get("args", {}))
                bot = app[BOT]
                bot.answers.forget(bot.snapshot)
            elif command.get("cmd") == "release":
                ollama.release()
            else:
                raise ValueError(f"unknown command {command.get('cmd')!r}")
            answer = {"ok": True}
        except Exception as exc:  # noqa: BLE001 - a bad command is reported, not fatal
            answer = {"ok": False, "error": str(exc)}
        print(json.dumps(answer), flush=True)
    stop.set()


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cors-origin", action="append", default=[], help="an origin the daemon allows (repeatable)")
    parser.add_argument("--token", default=None, help="the owner token (default: a random one)")
    options = parser.parse_args(argv)

    workdir = Path(tempfile.mkdtemp(prefix="grasbot-stack-"))
    for var in ("XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):  # the hidden notes' file among them: never the home of whoever runs the tests
        os.environ[var] = str(workdir / var.lower())
    vault = workdir / "vault"
    shutil.copytree(REPO / "vault-grasbot", vault)
    token = options.token or secrets.token_urlsafe(24)
    origins = ["app://obsidian.md", *options.cors_origin]

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)

    ollama = StandinOllama()
    runner: web.AppRunner | None = None
    try:
        await ollama.start()
        default_script(ollama)
        settings = Settings.load(
            env={},
            vault_dir=vault,
            ollama_host=ollama.url,
            llm_timeout=10.0,
            question_log="off",
            cache_dir=workdir / "cache",
            token=token,
            token_file=workdir / "token",
            cors_origins=",".join(origins),
            rate_per_minute=100_000.0,  # a test asks more than a visitor may
            rate_burst=10_000,
            concurrent_answers=10_000,
            llm_slots=16,  # one visitor waits for fewer answers than the slots (`Settings.answers_per_visitor`)
            host="127.0.0.1",
            port=0,
        )
        app = create_app(settings, owner_token=token)
        runner = web.AppRunner(app, **runner_kwargs(settings))
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        port = runner.addresses[0][1]
        ready = {
            "daemon": f"http://127.0.0.1:{port}",
            "ollama": ollama.url,
            "token": token,
            "vault": str(vault),
            "question": QUESTION,
            "reply": REPLY,
            "cors_origins": origins,
        }
        print(json.dumps(ready, ensure_ascii=False), flush=True)
        listener = asyncio.create_task(commands(ollama, app, stop))
        await stop.wait()
        listener.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await listener
    finally:
        if runner is not None:
            await runner.cleanup()
        await ollama.close()
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
