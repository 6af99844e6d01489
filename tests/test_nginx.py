"""The public path through a real nginx: deploy/nginx/grasbot.conf in front of `grasbot serve`.

nginx runs the repository's own file, with only the upstream address and the listen line
substituted, on a free loopback port. The daemon is a real subprocess; its LLM is the stand-in
Ollama running in the test's event loop, so a test can hold the LLM mid-answer.
`grasbot_behind_nginx()` is shared with tests/test_chat_page.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from conftest import REPO, write_note
from standin_ollama import StandinOllama

from grasbot import Settings

CONF = REPO / "deploy" / "nginx" / "grasbot.conf"
GRASBOT = REPO / ".venv" / "bin" / "grasbot"
UPSTREAM = "127.0.0.1:8765"
LISTEN = "listen 80;"
OWNER_TOKEN = "test-owner-token-not-secret"
STARTUP_TIMEOUT = 60.0
#: How long a test waits for something that should come at once before it calls it stuck.
STUCK = 20.0

QUESTION = "Quel projet d'arrosage automatique utilise Python ?"
REPLY = "Le Potager connecté arrose tout seul grâce à un script Python qui lit des capteurs d'humidité."
SCRIPT_TITLE = "Balise <script>window.__grasbotInjected = 1</script> dans une note"
IMG_MARKUP = '<img src="x" onerror="window.__grasbotInjected = 2">'


def nginx_binary() -> str:
    """nginx, or a failure that says how to get it: a skip would pass CI without the proxy."""
    found = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.access(p, os.X_OK)), None)
    if not found:
        pytest.fail(
            "nginx is not installed: run `bash scripts/setup.sh --test` (it installs Debian's nginx "
            "and chromium), or `apt-get install -y nginx`",
            pytrace=False,
        )
    return found


# The potager's note is long enough to be cut in sections: a source names the sections sent.
_SEASON = "Les tomates, les courgettes et les haricots poussent sur les planches du potager. " * 12
POTAGER_SECTIONS = "\n\n".join(
    [f"## Saison {i}\n\n{_SEASON}" for i in range(1, 6)]
    + ["## Le script d'arrosage\n\nLe projet d'arrosage automatique tient dans un script Python : il lit les "
       "capteurs d'humidité toutes les dix minutes et ouvre l'électrovanne quand la terre est sèche."]
    + [f"## Saison {i}\n\n{_SEASON}" for i in range(6, 9)]
)


def write_vault(root: Path) -> Path:
    """Three public notes (one titled with markup, one without a URL) and one private note."""
    write_note(
        root, "projets/potager.md",
        "title: Potager connecté\ntype: projet\nvisibility: public",
        "Un potager avec arrosage automatique : un script Python lit des capteurs d'humidité "
        "et ouvre une électrovanne. Projet d'arrosage automatique en Python sur Raspberry Pi.\n\n"
        + POTAGER_SECTIONS,
    )
    write_note(
        root, "competences/python.md",
        "title: Python\ntype: competence\nvisibility: public",
        "Python sert à l'arrosage automatique du potager, à l'analyse de données et aux scripts.\n",
    )
    write_note(
        root, "notes/balise.md",
        f"title: \"{SCRIPT_TITLE}\"\ntype: note\nvisibility: public",
        f"Une note sur l'arrosage automatique en Python qui contient du HTML : {IMG_MARKUP} "
        "et <script>window.__grasbotInjected = 3</script>.\n",
    )
    write_note(
        root, "journal.md",
        "title: Journal intime\nvisibility: private",
        "Arrosage automatique Python : canari-prive-7f3a.\n",
    )
    return root


# ---------------------------------------------------------------- nginx


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def site_conf(upstream: str, port: int) -> str:
    """The repository's file with the test's upstream and listen address, nothing else changed."""
    text = CONF.read_text(encoding="utf-8")
    server = re.compile(rf"^(\s*server\s+){re.escape(UPSTREAM)};", re.M)
    listen = re.compile(rf"^(\s*){re.escape(LISTEN)}", re.M)
    assert len(server.findall(text)) == 1, f"{CONF} should have exactly one `server {UPSTREAM};` line"
    assert len(listen.findall(text)) == 1, f"{CONF} should have exactly one `{LISTEN}` line"
    text = server.sub(lambda m: f"{m.group(1)}{upstream};", text)
    return listen.sub(lambda m: f"{m.group(1)}listen 127.0.0.1:{port};", text)


def main_conf(tmp: Path, site: Path) -> str:
    """A minimal nginx.conf: foreground, everything it writes under `tmp`."""
    temp = "\n".join(f"    {name}_temp_path {tmp / name};" for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    user = "user root;\n" if os.geteuid() == 0 else ""  # workers must read the temp dirs
    return (
        f"{user}daemon off;\nworker_processes 1;\npid {tmp / 'nginx.pid'};\n"
        f"error_log {tmp / 'error.log'} info;\n"
        "events { worker_connections 64; }\n"
        "http {\n"
        f"    access_log {tmp / 'access.log'};\n"
        f"{temp}\n"
        f"    include {site};\n"
        "}\n"
    )


@contextlib.asynccontextmanager
async def running_nginx(tmp: Path, upstream: str) -> AsyncIterator[str]:
    """nginx with deploy/nginx/grasbot.conf in front of `upstream`; yields its base URL."""
    exe = nginx_binary()
    tmp.mkdir(parents=True, exist_ok=True)
    for attempt in range(3):  # the free port can be taken between the check and nginx's bind
        port = free_port()
        site = tmp / "grasbot.conf"
        site.write_text(site_conf(upstream, port), encoding="utf-8")
        conf = tmp / "nginx.conf"
        conf.write_text(main_conf(tmp, site), encoding="utf-8")
        args = [exe, "-p", str(tmp), "-c", str(conf), "-e", str(tmp / "error.log")]
        check = subprocess.run([*args, "-t"], capture_output=True, text=True, timeout=30)
        assert check.returncode == 0, f"nginx rejects the configuration:\n{check.stderr}"
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        try:
            if await _listening(port, proc):
                break
        except BaseException:
            _stop(proc)
            raise
        errors = (tmp / "error.log").read_text(errors="replace") if (tmp / "error.log").exists() else ""
        _stop(proc)
        if "Address already in use" not in errors or attempt == 2:
            pytest.fail(f"nginx did not start:\n{errors}", pytrace=False)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        _stop(proc)


async def _listening(port: int, proc: subprocess.Popen) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + STARTUP_TIMEOUT
    while loop.time() < deadline and proc.poll() is None:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.05)
            continue
        writer.close()
        await writer.wait_closed()
        return True
    return False


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM (nginx's fast shutdown, the daemon's clean stop), then SIGKILL if it lingers."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


# ---------------------------------------------------------------- the daemon


@dataclass
class Stack:
    url: str  # nginx
    daemon_url: str  # the daemon itself, to show what nginx keeps away from it
    ollama: StandinOllama
    daemon_log: Path

    def log_lines(self) -> list[str]:
        return self.daemon_log.read_text(encoding="utf-8", errors="replace").splitlines()


@contextlib.asynccontextmanager
async def running_daemon(
    tmp: Path, vault: Path, ollama_url: str, settings_env: dict[str, str] | None = None
) -> AsyncIterator[tuple[str, Path]]:
    """`grasbot serve --port 0` as a subprocess, with `settings_env` (GRASBOT_… variables) set;
    yields (its URL, its stderr log)."""
    env = {k: v for k, v in os.environ.items() if k not in Settings.ENV}
    env.update(
        OLLAMA_HOST=ollama_url,
        SEARCH_MIN_SCORE="0.5",  # a four-note vault scores low; the answer must still be grounded
        XDG_CONFIG_HOME=str(tmp / "config"),
        XDG_CACHE_HOME=str(tmp / "cache"),
        PYTHONUNBUFFERED="1",
    )
    env.update(settings_env or {})
    tmp.mkdir(parents=True, exist_ok=True)
    log_path = tmp / "daemon.log"
    args = [
        str(GRASBOT), "serve", "--vault", str(vault), "--host", "127.0.0.1", "--port", "0",
        "--ollama-host", ollama_url, "--token", OWNER_TOKEN, "--question-log", "off",
        "--cache-dir", str(tmp / "cache"), "--llm-timeout", "30",
    ]
    with open(log_path, "wb") as log_file:
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=log_file, env=env, cwd=tmp, start_new_session=True)
    try:
        loop = asyncio.get_running_loop()
        line = await asyncio.wait_for(loop.run_in_executor(None, proc.stdout.readline), STARTUP_TIMEOUT)
        found = re.match(r"GrasBot listening on (http://127\.0\.0\.1:\d+) ", line.decode())
        if not found:
            pytest.fail(
                f"grasbot serve did not start (said {line!r}):\n{log_path.read_text(errors='replace')}",
                pytrace=False,
            )
        yield found.group(1), log_path
    finally:
        _stop(proc)


@contextlib.asynccontextmanager
async def grasbot_behind_nginx(tmp: Path, settings_env: dict[str, str] | None = None) -> AsyncIterator[Stack]:
    """The stand-in Ollama, `grasbot serve` on a small vault, and nginx in front of it."""
    nginx_binary()  # fail first, and clearly, when nginx is missing
    vault = write_vault(tmp / "vault")
    async with StandinOllama() as ollama:
        async with running_daemon(tmp / "daemon", vault, ollama.url, settings_env) as (daemon_url, log):
            async with running_nginx(tmp / "nginx", daemon_url.removeprefix("http://")) as url:
                yield Stack(url=url, daemon_url=daemon_url, ollama=ollama, daemon_log=log)


@pytest.fixture
async def stack(tmp_path) -> AsyncIterator[Stack]:
    async with grasbot_behind_nginx(tmp_path) as running:
        yield running


async def read_events(response: aiohttp.ClientResponse) -> AsyncIterator[tuple[str, dict]]:
    """Parse an SSE body as it arrives: (event name, JSON data) per event."""
    buffer = b""
    async for chunk in response.content.iter_any():
        buffer += chunk
        while b"\n\n" in buffer:
            raw, buffer = buffer.split(b"\n\n", 1)
            name, data = "message", []
            for line in raw.decode("utf-8").split("\n"):
                if line.startswith("event:"):
                    name = line[6:].strip()
                elif line.startswith("data:"):
                    data.append(line[5:].removeprefix(" "))
            if data:
                yield name, json.loads("\n".join(data))


async def wait_for_log(stack: Stack, needle: str) -> list[str]:
    """The daemon's log once a line containing `needle` is in it (it is written after the reply)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + STUCK
    while loop.time() < deadline:
        lines = stack.log_lines()
        if any(needle in line for line in lines):
            return lines
        await asyncio.sleep(0.05)
    pytest.fail(f"the daemon never logged {needle!r}:\n" + "\n".join(stack.log_lines()))


# ---------------------------------------------------------------- tests


async def test_ask_answers_through_nginx(stack: Stack):
    stack.ollama.script(REPLY, chunks=3)
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{stack.url}/ask", params={"q": QUESTION}) as response:
            assert response.status == 200, await response.text()
            payload = await response.json()
        async with http.get(f"{stack.url}/health") as response:
            assert response.status == 200
            health = await response.json()
    assert REPLY in payload["response"]
    assert payload["grounded"] is True
    assert "llm_error" not in payload
    by_slug = {s["slug"]: s for s in payload["sources"]}
    assert by_slug["potager"]["url"] == "/portfolio/potager"
    assert "journal" not in by_slug
    assert payload["vault_size"] == 3 and health["vault_size"] == 3
    # what reached the LLM went through nginx and the daemon, with the visitor's question
    assert any(QUESTION in m["content"] for m in stack.ollama.requests[-1]["messages"])
    assert all("canari-prive-7f3a" not in m["content"] for m in stack.ollama.requests[-1]["messages"])


async def test_stream_arrives_event_by_event(stack: Stack):
    """The first tokens reach the client while the LLM is still held: nginx does not buffer."""
    # The daemon holds back the first 64 characters (to spot a leaked `</think>`): the text
    # before the hold is longer than that.
    pieces = [
        "Le Potager connecté est un projet de jardin où tout se fait automatiquement, ",
        "il arrose tout seul ",
        "grâce à un script Python ",
        "et des capteurs d'humidité.",
    ]
    stack.ollama.script(pieces=pieces, hold_after=2)
    seen: list[str] = []
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{stack.url}/ask/stream", params={"q": QUESTION}) as response:
            assert response.status == 200, await response.text()
            assert response.headers["Content-Type"].startswith("text/event-stream")
            events = read_events(response)
            tokens = ""
            # Until released, the stand-in has sent two chunks and waits: if nginx buffered the
            # stream, nothing would arrive and this would be cut short by wait_for.
            while "arrose" not in tokens:
                name, data = await asyncio.wait_for(anext(events), STUCK)
                seen.append(name)
                if name == "token":
                    tokens += data["text"]
            assert seen[0] == "sources"
            assert "done" not in seen
            assert ("done", None) not in stack.ollama.events  # the LLM is still mid-answer
            stack.ollama.release()
            async for name, data in events:
                seen.append(name)
                if name == "token":
                    tokens += data["text"]
                elif name == "done":
                    done = data
    assert seen[-1] == "done" and seen.count("done") == 1
    assert tokens == "".join(pieces)
    assert done["response"] == "".join(pieces).strip()
    assert done["grounded"] is True


async def test_owner_endpoints_are_refused_by_nginx(stack: Stack):
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "reload", "params": {}}
    owner = {"Authorization": f"Bearer {OWNER_TOKEN}"}  # even the right token does not pass
    async with aiohttp.ClientSession() as http:
        refused = [
            await http.post(f"{stack.url}/rpc", json=rpc, headers=owner),
            await http.post(f"{stack.url}/rpc", json={**rpc, "method": "search", "params": {"q": "x"}}),
            await http.get(f"{stack.url}/rpc"),
            await http.post(f"{stack.url}/reload-vault", headers=owner),
            await http.get(f"{stack.url}/reload-vault"),
            await http.post(f"{stack.url}/ask", params={"q": QUESTION}),
            await http.get(f"{stack.url}/ask/../rpc"),
            await http.get(f"{stack.url}/health/../reload-vault"),
            await http.get(f"{stack.url}/anything-else"),
        ]
        for response in refused:
            assert response.status in (403, 404), (response.method, response.url, response.status)
            assert response.headers.get("Server", "").startswith("nginx")
            response.release()
        # control: the daemon's log shows what reached it, and these reach it
        async with http.get(f"{stack.url}/health") as response:
            assert response.status == 200
        async with http.post(f"{stack.daemon_url}/rpc", json={**rpc, "method": "health"}) as response:
            assert response.status == 200
    lines = await wait_for_log(stack, "POST /rpc")
    await wait_for_log(stack, "GET /health")
    reached = [line for line in lines if re.search(r"\b(GET|POST|OPTIONS) /(rpc|reload-vault|anything)", line)]
    assert len(reached) == 1, reached  # only the direct call, none of the ones sent through nginx


async def test_forwarded_headers_are_nginx_own(tmp_path):
    """X-Forwarded-For, X-Real-IP are overwritten and a visitor's Authorization never passes."""
    seen: list[dict[str, str]] = []

    async def echo(request: web.Request) -> web.Response:
        seen.append(dict(request.headers))
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_get("/{tail:.*}", echo)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    upstream = f"127.0.0.1:{runner.addresses[0][1]}"
    forged = {
        "X-Forwarded-For": "203.0.113.9, 198.51.100.7",
        "X-Real-IP": "203.0.113.9",
        "Authorization": f"Bearer {OWNER_TOKEN}",
        "Cookie": "session=abc",
    }
    try:
        async with running_nginx(tmp_path / "nginx", upstream) as url:
            async with aiohttp.ClientSession() as http:
                for path in ("/ask", "/ask/stream", "/health", "/"):
                    async with http.get(f"{url}{path}", params={"q": "x"}, headers=forged) as response:
                        assert response.status == 200, path
    finally:
        await runner.cleanup()
    assert len(seen) == 4
    for headers in seen:
        assert headers["X-Forwarded-For"] == "127.0.0.1"
        assert headers["X-Real-IP"] == "127.0.0.1"
        assert headers["Host"] == "127.0.0.1"
        assert "Authorization" not in headers
        assert "Cookie" not in headers
