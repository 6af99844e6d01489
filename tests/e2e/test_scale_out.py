"""Scale-out: two real `grasbot serve` daemons on one read-only vault behind a real nginx
(deploy/nginx/grasbot.conf with both in its upstream), one stand-in model host for both.
Visitors are served by both daemons, and one reload asked of one daemon reaches the other
(GRASBOT_PEERS), so every visitor sees the new vault whichever daemon answers."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import aiohttp
import pytest

from grasbot.server.peers import FROM_PEER
from support.bots import OWNER_TOKEN as TEST_OWNER_TOKEN
from support.bots import write_note
from support.nginx import OWNER_TOKEN, STUCK, free_port, nginx_binary, running_daemon, running_nginx, write_vault
from support.standin_ollama import StandinOllama, unused_url

OWNER = {"Authorization": f"Bearer {OWNER_TOKEN}"}
QUESTION = "Quel projet d'arrosage automatique utilise Python ?"
NEW_QUESTION = "Que sait-on du four à pain du jardin ?"


def read_only(root: Path) -> None:
    """The vault as the daemons get it in production: nobody may write it."""
    for path in (root, *root.rglob("*")):
        mode = path.stat().st_mode
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def writable(root: Path) -> None:
    for path in (root, *root.rglob("*")):
        path.chmod(path.stat().st_mode | stat.S_IWUSR)


def log_lines(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8", errors="replace").splitlines()


async def until_logged(log: Path, needle: str) -> None:
    """Until the daemon's log has a line with `needle` (a line is written after its reply)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + STUCK
    while loop.time() < deadline:
        if any(needle in line for line in log_lines(log)):
            return
        await asyncio.sleep(0.05)
    pytest.fail(f"{log} never said {needle!r}:\n" + "\n".join(log_lines(log)))


async def test_two_daemons_behind_nginx_share_visitors_and_reloads(tmp_path):
    nginx_binary()
    vault = write_vault(tmp_path / "vault")
    read_only(vault)
    ports = free_port(), free_port()
    urls = [f"http://127.0.0.1:{p}" for p in ports]
    generous = {"GRASBOT_RATE_PER_MINUTE": "100000", "GRASBOT_RATE_BURST": "100000"}  # one client asks it all
    async with StandinOllama() as ollama:
        ollama.script("Le Potager connecté arrose tout seul [potager].")
        async with (
            running_daemon(tmp_path / "a", vault, ollama.url, generous, flags=("--port", str(ports[0]), "--peers", urls[1])) as (a, a_log),
            running_daemon(tmp_path / "b", vault, ollama.url, generous, flags=("--port", str(ports[1]), "--peers", urls[0])) as (b, b_log),
        ):
            assert [a, b] == urls
            async with running_nginx(tmp_path / "nginx", [u.removeprefix("http://") for u in urls]) as site:
                async with aiohttp.ClientSession() as http:
                    for i in range(6):  # distinct questions: none is a reused answer
                        async with http.get(f"{site}/ask", params={"q": f"{QUESTION} ({i})"}) as response:
                            assert response.status == 200
                            payload = await response.json()
                        assert payload["grounded"] is True and payload["vault_size"] == 3
                    # both daemons answered visitors (each logs what it served)
                    for log in (a_log, b_log):
                        await until_logged(log, "GET /ask 200")
                    # each daemon keeps its own index cache
                    assert all((tmp_path / name / "cache").is_dir() for name in ("a", "b"))

                    writable(vault)
                    write_note(
                        vault,
                        "jardin/four.md",
                        "title: Le four à pain\ntype: projet\nvisibility: public",
                        "Le four à pain du jardin cuit des miches le samedi.\n",
                    )
                    read_only(vault)
                    async with http.post(f"{a}/reload-vault", headers=OWNER) as response:  # one action, on one daemon
                        assert response.status == 200, await response.text()
                        report = await response.json()
                    assert report["added"] == 1 and report["vault_size"] == 5
                    assert report["peers"] == [{"url": b, "ok": True, "vault_size": 5}]
                    for daemon in (a, b):  # the peer reloaded, and did not pass it back
                        async with http.get(f"{daemon}/health") as response:
                            assert (await response.json())["vault_size"] == 4
                    assert sum("POST /reload-vault 200" in line for line in log_lines(b_log)) == 1
                    assert sum("POST /reload-vault 200" in line for line in log_lines(a_log)) == 1
                    ollama.script("Le four à pain cuit des miches le samedi [four].")
                    for i in range(6):
                        async with http.get(f"{site}/ask", params={"q": f"{NEW_QUESTION} ({i})"}) as response:
                            payload = await response.json()
                        assert payload["vault_size"] == 4 and payload["sources"][0]["slug"] == "four", payload
    writable(vault)
    assert os.access(vault, os.W_OK)


async def test_a_peer_that_cannot_reload_is_named_and_the_reload_stands(start_daemon, note_writer):
    note_writer("a.md", "title: Alpha\nvisibility: public", "Une note sur les abeilles.")
    gone = unused_url()
    client = await start_daemon(note_writer.root, owner_token=TEST_OWNER_TOKEN, peers=gone)
    note_writer("b.md", "title: Beta\nvisibility: public", "Une note sur les bourdons.")
    resp = await client.post("/reload-vault", headers={"Authorization": f"Bearer {TEST_OWNER_TOKEN}"})
    report = await resp.json()
    assert resp.status == 200 and report["added"] == 1
    [peer] = report["peers"]
    assert peer["url"] == gone and peer["ok"] is False and "Connect" in peer["error"]
    # a reload passed on by a peer is not passed on again
    resp = await client.post("/reload-vault", headers={"Authorization": f"Bearer {TEST_OWNER_TOKEN}", FROM_PEER: "1"})
    assert resp.status == 200 and "peers" not in await resp.json()
    assert "status" not in peer  # it never answered


async def test_a_peer_holding_another_token_is_said_by_its_status(start_daemon, note_writer):
    """The plugin tells the owner to restart a peer that refuses the token from `status` 401, not
    from the words of `error`, which it shows as they are."""
    note_writer("a.md", "title: Alpha\nvisibility: public", "Une note sur les abeilles.")
    other = await start_daemon(note_writer.root, owner_token="another-owner-token-0123456789")
    peer_url = str(other.make_url("")).rstrip("/")
    client = await start_daemon(note_writer.root, owner_token=TEST_OWNER_TOKEN, peers=peer_url)
    resp = await client.post("/reload-vault", headers={"Authorization": f"Bearer {TEST_OWNER_TOKEN}"})
    assert resp.status == 200
    assert (await resp.json())["peers"] == [{"url": peer_url, "ok": False, "status": 401, "error": "HTTP 401 : jeton du propriétaire requis"}]
