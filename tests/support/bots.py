"""Building bots and daemons for the tests, and talking to them (a pytest plugin: tests/conftest.py
registers it, so its fixtures need no import; its helpers are imported by name).

One set of test settings (`settings_for`) serves `make_bot` and `start_daemon`: no question log,
no index cache, lexical search (a score is exact), an LLM that answers within 5 s and, unless a
test gives one, listens nowhere. The session's XDG folders are the tests' own.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from grasbot import GrasBot, Settings
from grasbot.server.app import create_app, runner_kwargs
from grasbot.server.protocol import validate_result
from grasbot.server.state import BOT
from support.standin_ollama import unused_url

REPO = Path(__file__).resolve().parents[2]
BUNDLED_VAULT = REPO / "vault-grasbot"
#: The owner token of tests that need owner calls: start_daemon(..., owner_token=OWNER_TOKEN).
OWNER_TOKEN = "test-owner-token-0123456789"
OWNER = {"Authorization": f"Bearer {OWNER_TOKEN}"}
#: The token `serve_process` gives `grasbot serve` unless told otherwise.
SERVE_TOKEN = "test-serve-token-0123456789"


# ---------------------------------------------------------------- vaults and bots


def write_note(root: Path, rel: str, frontmatter: str | None = None, body: str = "") -> Path:
    """Write one note; `frontmatter` is YAML without the fences (None: no frontmatter at all)."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    text = textwrap.dedent(body).lstrip("\n")
    if frontmatter is not None:
        text = f"---\n{textwrap.dedent(frontmatter).strip()}\n---\n{text}"
    path.write_text(text, encoding="utf-8")
    return path


def settings_for(vault: Path, ollama_url: str | None = None, **overrides: Any) -> Settings:
    """The tests' settings on `vault`; `overrides` are Settings.load's keywords."""
    overrides.setdefault("llm_timeout", 5.0)
    overrides.setdefault("question_log", "off")  # tests that want one pass a tmp path
    overrides.setdefault("index_cache", False)  # tests/store/test_cache.py tests the cache on its own
    overrides.setdefault("semantic", "off")  # lexical, so a score is exact; tests/retrieval/test_semantic.py turns it on
    return Settings.load(env={}, vault_dir=vault, ollama_host=ollama_url or unused_url(), **overrides)


def make_bot(vault: Path, ollama_url: str | None = None, **overrides: Any) -> GrasBot:
    """A GrasBot on `vault`; without `ollama_url` its LLM points where nothing listens. Its
    spelling vectors are built, as a daemon's are once it has listened a moment: a score is the
    same whenever a test asks."""
    bot = GrasBot.open(settings_for(vault, ollama_url, **overrides))
    bot.warm_spelling()
    return bot


@pytest.fixture(autouse=True, scope="session")
def _xdg_folders_of_the_tests(tmp_path_factory):
    """The daemon keeps its index caches, question log and token in the XDG folders: during the
    tests, folders of their own, never the home of whoever runs them (a run of the suite left
    hundreds of index caches in ~/.cache/grasbot). Daemons the tests start inherit them."""
    base = tmp_path_factory.mktemp("xdg")
    patch = pytest.MonkeyPatch()
    for var in ("XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        patch.setenv(var, str(base / var.lower()))
    yield base
    patch.undo()


@pytest.fixture
def note_writer(tmp_path):
    """`note_writer(rel, frontmatter, body)` writes a note into a fresh vault, `note_writer.root`."""
    root = tmp_path / "vault"
    root.mkdir()

    def write(rel: str, frontmatter: str | None = None, body: str = "") -> Path:
        return write_note(root, rel, frontmatter, body)

    write.root = root
    return write


@pytest.fixture
def bundled_bot():
    return make_bot(BUNDLED_VAULT)


# ---------------------------------------------------------------- daemons


def serve_process(*args: str, env: Mapping[str, str] | None = None, token: str | None = SERVE_TOKEN, script: Path | None = None) -> subprocess.Popen:
    """`grasbot serve *args` in a new process, stdout and stderr piped. Its environment is the
    tests' (the session's XDG folders) without any GRASBOT_* or VAULT_DIR of whoever runs them,
    Ollama where nothing listens, `token` as GRASBOT_TOKEN (None: serve reads or creates its
    token file), then `env`. `script`: a Python file run instead of the CLI, with the same
    arguments (one that patches the daemon, then runs `grasbot._cli.main`)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("GRASBOT_") and k != "VAULT_DIR"}
    environ.update({"OLLAMA_HOST": unused_url(), "PYTHONUNBUFFERED": "1"})
    if token is not None:
        environ["GRASBOT_TOKEN"] = token
    environ.update(env or {})
    return subprocess.Popen(
        [sys.executable, *([str(script)] if script is not None else ["-m", "grasbot._cli"]), "serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environ,
    )


def serve_refused(*args: str, **kwargs: Any) -> tuple[str, str]:
    """`grasbot serve *args` (`serve_process`'s arguments) that must stop at start, exit 2,
    within 30 s: what it printed, (stdout, stderr)."""
    proc = serve_process(*args, **kwargs)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    assert proc.returncode == 2, err
    return out, err


def server_kwargs(settings: Settings | None = None) -> dict[str, Any]:
    """The runner options `serve()` uses (the test server already cancels handlers)."""
    kwargs = runner_kwargs(settings)
    kwargs.pop("handler_cancellation")
    return kwargs


@pytest.fixture
def start_daemon(aiohttp_client):
    """`await start_daemon(vault, ollama_url, owner_token=None, **settings)` → a TestClient on the real app."""

    async def start(vault: Path = BUNDLED_VAULT, ollama_url: str | None = None, *, owner_token: str | None = None, **overrides):
        settings = settings_for(vault, ollama_url, **overrides)
        app = create_app(settings, owner_token=owner_token)
        # TestServer ignores runner options given to its constructor: start it with them.
        server = TestServer(app)
        await server.start_server(**server_kwargs(settings))
        client = await aiohttp_client(server)
        await asyncio.to_thread(client.server.app[BOT].warm_spelling)  # its worker's, done: scores as at rest
        return client

    return start


def bot_of(client):
    app: web.Application = client.server.app
    return app[BOT]


async def rpc_raw(client, body: Any, headers: dict | None = None):
    """POST a body (a JSON value, or a str sent as is); returns (status, parsed answer or None)."""
    data = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
    resp = await client.post("/rpc", data=data.encode(), headers={"Content-Type": "application/json", **(headers or {})})
    text = await resp.text()
    if resp.status == 204:
        assert text == ""
        return 204, None
    assert resp.status == 200, text
    assert resp.content_type == "application/json"
    answer = json.loads(text)
    for member in answer if isinstance(answer, list) else [answer]:
        check_response(member, body)
    return resp.status, answer


def check_response(member: dict, body: Any) -> None:
    """Every response we see must be a JSON-RPC 2.0 response, and results must match the document."""
    assert member["jsonrpc"] == "2.0"
    assert ("result" in member) != ("error" in member), member
    if "result" in member:
        requests = body if isinstance(body, list) else [body]
        method = next(r["method"] for r in requests if isinstance(r, dict) and r.get("id") == member["id"])
        validate_result(method, member["result"])
    else:
        assert isinstance(member["error"]["code"], int) and isinstance(member["error"]["message"], str)


async def rpc(client, method: str, params: dict | None = None, *, id: Any = 1, headers: dict | None = None) -> dict:
    """One call; returns the whole response object (result validated against the document)."""
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "id": id}
    if params is not None:
        body["params"] = params
    _, answer = await rpc_raw(client, body, headers)
    assert answer["id"] == id
    return answer


async def rpc_result(client, method: str, params: dict | None = None, **kwargs) -> dict:
    answer = await rpc(client, method, params, **kwargs)
    assert "result" in answer, answer
    return answer["result"]


async def sse_events(resp) -> AsyncIterator[tuple[str, Any]]:
    """Parse a text/event-stream body as it arrives: (event, JSON data) per event."""
    event, data = None, []
    async for raw in resp.content:
        line = raw.decode("utf-8").rstrip("\r\n")
        if not line:
            if event is not None:
                yield event, json.loads("\n".join(data))
            event, data = None, []
        elif line.startswith(":"):
            continue
        elif line.startswith("event:"):
            event = line[len("event:") :].strip()
        elif line.startswith("data:"):
            data.append(line[len("data:") :].lstrip())
    assert event is None and not data, "the stream ended in the middle of an event"
