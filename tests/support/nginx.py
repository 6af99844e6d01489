"""nginx in front of `grasbot serve`, for the end-to-end tests (a pytest plugin: the `stack`
fixture; tests/conftest.py registers it).

nginx runs the repository's own deploy/nginx/grasbot.conf, with only the upstream address, the
listen line and the access log's path substituted, on a free loopback port. The daemon is a real
subprocess; its LLM is the stand-in Ollama running in the test's event loop, so a test can hold
the LLM mid-answer.
"""

from __future__ import annotations

import asyncio
import contextlib
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

from grasbot import Settings
from support.bots import REPO, write_note
from support.standin_ollama import StandinOllama

CONF = REPO / "deploy" / "nginx" / "grasbot.conf"
GRASBOT = REPO / ".venv" / "bin" / "grasbot"
UPSTREAM = "127.0.0.1:8765"
LISTEN = "listen 80;"
ACCESS_LOG = "access_log /var/log/nginx/access.log"
ERROR_LOG = "error_log /var/log/nginx/error.log"
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
            "nginx is not installed: run `bash scripts/setup.sh --test` (it installs Debian's nginx and chromium), or `apt-get install -y nginx`",
            pytrace=False,
        )
    return found


# The potager's note is long enough to be cut in sections: a source names the sections sent.
_SEASON = "Les tomates, les courgettes et les haricots poussent sur les planches du potager. " * 12
POTAGER_SECTIONS = "\n\n".join(
    [f"## Saison {i}\n\n{_SEASON}" for i in range(1, 6)]
    + [
        "## Le script d'arrosage\n\nLe projet d'arrosage automatique tient dans un script Python : il lit les "
        "capteurs d'humidité toutes les dix minutes et ouvre l'électrovanne quand la terre est sèche."
    ]
    + [f"## Saison {i}\n\n{_SEASON}" for i in range(6, 9)]
)


def write_vault(root: Path) -> Path:
    """Three public notes (one titled with markup, one without a URL) and one private note."""
    write_note(
        root,
        "projets/potager.md",
        "title: Potager connecté\ntype: projet\nvisibility: public",
        "Un potager avec arrosage automatique : un script Python lit des capteurs d'humidité "
        "et ouvre une électrovanne. Projet d'arrosage automatique en Python sur Raspberry Pi.\n\n" + POTAGER_SECTIONS,
    )
    write_note(
        root,
        "competences/python.md",
        "title: Python\ntype: competence\nvisibility: public",
        "Python sert à l'arrosage automatique du potager, à l'analyse de données et aux scripts.\n",
    )
    write_note(
        root,
        "notes/balise.md",
        f'title: "{SCRIPT_TITLE}"\ntype: note\nvisibility: public',
        f"Une note sur l'arrosage automatique en Python qui contient du HTML : {IMG_MARKUP} et <script>window.__grasbotInjected = 3</script>.\n",
    )
    write_note(
        root,
        "journal.md",
        "title: Journal intime\nvisibility: private",
        "Arrosage automatique Python : canari-prive-7f3a.\n",
    )
    return root


# ---------------------------------------------------------------- nginx


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def site_conf(upstream: str | list[str], port: int, access_log: Path) -> str:
    """The repository's file with the test's upstream (one daemon or several), listen address
    and access and error logs, nothing else changed."""
    servers = [upstream] if isinstance(upstream, str) else upstream
    text = CONF.read_text(encoding="utf-8")
    server = re.compile(rf"^(\s*server\s+){re.escape(UPSTREAM)};", re.M)
    listen = re.compile(rf"^(\s*){re.escape(LISTEN)}", re.M)
    assert len(server.findall(text)) == 1, f"{CONF} should have exactly one `server {UPSTREAM};` line"
    assert len(listen.findall(text)) == 1, f"{CONF} should have exactly one `{LISTEN}` line"
    text = server.sub(lambda m: "\n".join(f"{m.group(1)}{address};" for address in servers), text)
    text = text.replace(ACCESS_LOG, f"access_log {access_log}")
    text = text.replace(ERROR_LOG, f"error_log {access_log.with_name('error.log')}")  # the main one's (main_conf)
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
async def running_nginx(tmp: Path, upstream: str | list[str]) -> AsyncIterator[str]:
    """nginx with deploy/nginx/grasbot.conf in front of `upstream`; yields its base URL."""
    exe = nginx_binary()
    tmp.mkdir(parents=True, exist_ok=True)
    for attempt in range(3):  # the free port can be taken between the check and nginx's bind
        port = free_port()
        site = tmp / "grasbot.conf"
        site.write_text(site_conf(upstream, port, tmp / "access.log"), encoding="utf-8")
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
    tmp: Path, vault: Path, ollama_url: str, settings_env: dict[str, str] | None = None, *, flags: tuple[str, ...] = ()
) -> AsyncIterator[tuple[str, Path]]:
    """`grasbot serve --port 0` as a subprocess, with `settings_env` (GRASBOT_… variables) set
    and `flags` added (they win over the defaults here); yields (its URL, its stderr log)."""
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
        str(GRASBOT),
        "serve",
        "--vault",
        str(vault),
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--ollama-host",
        ollama_url,
        "--token",
        OWNER_TOKEN,
        "--question-log",
        "off",
        "--cache-dir",
        str(tmp / "cache"),
        "--llm-timeout",
        "30",
        *flags,
    ]
    with open(log_path, "wb") as log_file:
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=log_file, env=env, cwd=tmp, start_new_session=True)
    try:
        loop = asyncio.get_running_loop()
        line = await asyncio.wait_for(loop.run_in_executor(None, proc.stdout.readline), STARTUP_TIMEOUT)
        found = re.match(r"GrasBot écoute sur (http://127\.0\.0\.1:\d+) ", line.decode())
        if not found:
            pytest.fail(
                f"grasbot serve did not start (said {line!r}):\n{log_path.read_text(errors='replace')}",
                pytrace=False,
            )
        yield found.group(1), log_path
    finally:
        _stop(proc)


async def meaning_ready(daemon_url: str) -> None:
    """Wait until the daemon's /health says the vault's meaning is embedded: a follow-up such
    as « C'est robuste ? » is grounded by meaning, and is not while the embeddings are pending
    (answered lexically, as they are at a start), so a conversation asked before then depended
    on the machine's load (one CI run's second turn got no note)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + STARTUP_TIMEOUT
    health: dict = {}
    async with aiohttp.ClientSession() as http:
        while loop.time() < deadline:
            async with http.get(f"{daemon_url}/health") as response:
                health = await response.json()
            if health.get("semantic", {}).get("ready", True):
                return
            await asyncio.sleep(0.05)
    pytest.fail(f"the daemon's meaning was not ready after {STARTUP_TIMEOUT:.0f} s: {health.get('semantic')}", pytrace=False)


@contextlib.asynccontextmanager
async def grasbot_behind_nginx(tmp: Path, settings_env: dict[str, str] | None = None) -> AsyncIterator[Stack]:
    """The stand-in Ollama, `grasbot serve` on a small vault, and nginx in front of it."""
    nginx_binary()  # fail first, and clearly, when nginx is missing
    vault = write_vault(tmp / "vault")
    async with StandinOllama() as ollama:
        async with running_daemon(tmp / "daemon", vault, ollama.url, settings_env) as (daemon_url, log):
            await meaning_ready(daemon_url)
            async with running_nginx(tmp / "nginx", daemon_url.removeprefix("http://")) as url:
                yield Stack(url=url, daemon_url=daemon_url, ollama=ollama, daemon_log=log)


@pytest.fixture
async def stack(tmp_path) -> AsyncIterator[Stack]:
    async with grasbot_behind_nginx(tmp_path) as running:
        yield running


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """A failed test's report shows its stack's daemon log: a 500's traceback is only there
    (the one CI run of a race printed « Internal error » and nothing more)."""
    report = yield
    stack = getattr(item, "funcargs", {}).get("stack")
    if report.failed and isinstance(stack, Stack) and stack.daemon_log.exists():
        report.sections.append(("grasbot serve's log", stack.daemon_log.read_text(encoding="utf-8", errors="replace")))
    return report
