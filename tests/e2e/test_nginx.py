"""The public path through a real nginx: deploy/nginx/grasbot.conf in front of `grasbot serve`
(the stack itself, shared with test_chat_page.py, is tests/support/nginx.py)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web

from support.nginx import OWNER_TOKEN, QUESTION, REPLY, STUCK, Stack, free_port, grasbot_behind_nginx, running_nginx


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


async def test_nginx_logs_no_question_beside_the_visitor_address(stack: Stack, tmp_path):
    """A question and its conversation are in /ask's query string; nginx's log has the visitor's
    address and browser: the daemon keeps questions without them, nginx must not join them."""
    history = json.dumps([{"role": "user", "content": "Mon numéro zygomatique-4412 ?"}, {"role": "assistant", "content": "Non."}])
    stack.ollama.script(REPLY)
    async with aiohttp.ClientSession() as http:
        for path in ("/ask", "/ask/stream"):
            async with http.get(f"{stack.url}{path}", params={"q": "Et le zygomatique-9931 ?", "history": history}) as response:
                assert response.status == 200, await response.text()
                await response.read()
    log = tmp_path / "nginx" / "access.log"
    deadline = asyncio.get_running_loop().time() + STUCK
    while True:  # nginx writes a line once its response has ended
        lines = log.read_text(encoding="utf-8").splitlines()
        asked = [line for line in lines if '"GET /ask' in line]
        if len(asked) == 2 or asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.05)
    assert len(asked) == 2, lines
    assert '"GET /ask HTTP/1.1" 200 ' in asked[0] and '"GET /ask/stream HTTP/1.1" 200 ' in asked[1]
    assert not any("zygomatique" in line or "q=" in line or "history" in line for line in lines), lines


async def test_nginx_logs_no_question_when_the_daemon_cannot_answer(tmp_path):
    """nginx's error log names the request, its query string included, beside the visitor's
    address: each question asked while the daemon could not answer (down for a restart or a
    deploy, too slow, cut mid-answer) was kept there as typed, with the e-mail addresses and
    phone numbers the question log redacts and the conversation before it, as long as the owner
    keeps that log. The daemon being unreachable is still logged, by /health and the chat page."""
    asked = {"q": "Rappelez-moi : zygomatique.dupont@exemple.fr", "history": json.dumps([{"role": "user", "content": "zygomatique-4412"}])}
    async with running_nginx(tmp_path / "nginx", f"127.0.0.1:{free_port()}") as url:  # nothing listens there
        async with aiohttp.ClientSession() as http:
            for path in ("/ask", "/ask/stream", "/health", "/"):
                async with http.get(f"{url}{path}", params=asked if path.startswith("/ask") else None) as response:
                    assert response.status == 502, path
            async with http.post(f"{url}/ask", params=asked) as response:  # refused by nginx: logged too
                assert response.status == 403
    errors = (tmp_path / "nginx" / "error.log").read_text(encoding="utf-8", errors="replace")
    assert "zygomatique" not in errors and "/ask" not in errors, errors
    assert re.search(r"connect\(\) failed .* request: \"GET /health HTTP/1.1\"", errors), errors


async def test_forwarded_headers_are_nginx_own(tmp_path):
    """X-Forwarded-For, X-Real-IP are overwritten and a visitor's Forwarded and Authorization
    never pass."""
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
        "Forwarded": "for=203.0.113.9;proto=https",
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
        assert "Forwarded" not in headers


async def test_a_forged_forwarded_header_keeps_the_visitor_own_bucket(tmp_path):
    """A visitor's own `Forwarded: for=` must not reach the daemon: it would contradict nginx's
    X-Forwarded-For, and the daemon would count the question against nginx's address, one bucket
    shared by every visitor who sends one. Visitors here come from 127.0.0.2 and 127.0.0.3."""
    limits = {"GRASBOT_RATE_BURST": "1", "GRASBOT_RATE_PER_MINUTE": "1", "GRASBOT_TRUSTED_PROXIES": "127.0.0.1"}

    async def ask(stack: Stack, visitor: str, forged: str | None) -> int:
        headers = {"Forwarded": forged} if forged else {}
        connector = aiohttp.TCPConnector(local_addr=(visitor, 0))
        async with aiohttp.ClientSession(connector=connector) as http:
            async with http.get(f"{stack.url}/ask", params={"q": QUESTION}, headers=headers) as response:
                await response.read()
                return response.status

    async with grasbot_behind_nginx(tmp_path, limits) as stack:
        stack.ollama.script(REPLY)
        assert await ask(stack, "127.0.0.2", "for=198.51.100.1") == 200
        # a new forged address each time is no new bucket: the visitor's own is spent
        assert await ask(stack, "127.0.0.2", "for=198.51.100.2") == 429
        assert await ask(stack, "127.0.0.2", None) == 429
        # another visitor who forges one too has a bucket of their own, not nginx's shared one
        assert await ask(stack, "127.0.0.3", 'for="198.51.100.3"') == 200


async def test_the_chat_page_cannot_be_framed(stack: Stack):
    """Another site must not show the chat page in a frame (clickjacking): `frame-ancestors`
    works only in a Content-Security-Policy header, never in the page's <meta> policy."""
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{stack.url}/") as response:
            assert response.status == 200
            page = await response.text()
            policies = response.headers.getall("Content-Security-Policy", [])
    assert 'http-equiv="Content-Security-Policy"' in page  # the page's own policy, which cannot say it
    assert any("frame-ancestors 'none'" in policy for policy in policies), dict(response.headers)


async def test_every_file_of_the_chat_is_served_nosniff(stack: Stack):
    """The page and the widget load chat.js, page.js and chat.css: each is served with its type
    and `X-Content-Type-Options: nosniff`, as the page and widget.js themselves are."""
    async with aiohttp.ClientSession() as http:
        for path in ("/", "/widget.js", "/static/chat.js", "/static/page.js", "/static/chat.css"):
            async with http.get(f"{stack.url}{path}") as response:
                assert response.status == 200, path
                assert response.headers.get("X-Content-Type-Options") == "nosniff", (path, dict(response.headers))


async def test_a_question_too_long_for_an_8_kib_request_line_gets_the_daemons_french_error(stack: Stack):
    """nginx refused a request line over 8 KiB (its `large_client_header_buffers` by default)
    with its own HTML `414`, so a visitor's question far over the daemon's limit never got the
    daemon's French refusal: nginx reads a line as long as the daemon does."""
    question = "é" * 3000  # 18,000 bytes percent-encoded
    said = {"reason": "`q` : doit compter au plus 500 caractères (longueur reçue : 3000)", "param": "q", "max_question": 500}
    async with aiohttp.ClientSession() as http:
        for path in ("/ask", "/ask/stream"):
            async with http.get(f"{stack.url}{path}", params={"q": question}) as response:
                assert response.status == 400 and response.content_type == "application/json", await response.text()
                assert await response.json() == {"error": {"code": -32602, "message": "Invalid params", "data": said}}
