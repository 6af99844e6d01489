"""Helpers for the daemon's tests (no tests here): start the real app, call it, read SSE."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, AsyncIterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from grasbot import Settings
from grasbot.server.protocol import validate_result
from grasbot.server.app import create_app, runner_kwargs
from grasbot.server.state import BOT
from standin_ollama import unused_url

REPO = Path(__file__).resolve().parent.parent
BUNDLED_VAULT = REPO / "vault-grasbot"
#: The owner token of tests that need owner calls: start_daemon(..., owner_token=OWNER_TOKEN).
OWNER_TOKEN = "test-owner-token-0123456789"
OWNER = {"Authorization": f"Bearer {OWNER_TOKEN}"}


def daemon_settings(vault: Path, ollama_url: str | None = None, **overrides: Any) -> Settings:
    overrides.setdefault("llm_timeout", 5.0)
    overrides.setdefault("question_log", "off")  # tests that want one pass a tmp path
    overrides.setdefault("index_cache", False)
    overrides.setdefault("semantic", "off")  # lexical, so a score is exact; tests/test_semantic.py turns it on
    return Settings.load(env={}, vault_dir=vault, ollama_host=ollama_url or unused_url(), **overrides)


def server_kwargs(settings: Settings | None = None) -> dict[str, Any]:
    """The runner options `serve()` uses (the test server already cancels handlers)."""
    kwargs = runner_kwargs(settings)
    kwargs.pop("handler_cancellation")
    return kwargs


@pytest.fixture
def start_daemon(aiohttp_client):
    """`await start_daemon(vault, ollama_url, owner_token=None, **settings)` → a TestClient on the real app."""

    async def start(vault: Path = BUNDLED_VAULT, ollama_url: str | None = None, *, owner_token: str | None = None, **overrides):
        settings = daemon_settings(vault, ollama_url, **overrides)
        app = create_app(settings, owner_token=owner_token)
        # TestServer ignores runner options given to its constructor: start it with them.
        server = TestServer(app)
        await server.start_server(**server_kwargs(settings))
        return await aiohttp_client(server)

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
            event = line[len("event:"):].strip()
        elif line.startswith("data:"):
            data.append(line[len("data:"):].lstrip())
    assert event is None and not data, "the stream ended in the middle of an event"
