"""A stand-in Ollama server for tests: no model can be pulled here, so this speaks the protocol.

It implements what the `ollama` client uses (POST /api/chat streamed or not, GET /api/tags,
GET /api/version), records every request body, and misbehaves on demand:

    async with StandinOllama() as server:
        server.script("Bonjour !", chunks=3)                  # normal reply in 3 chunks
        server.script("Bonjour", mode="think")                # leaks <think>…</think> first
        server.script(pieces=["<thi", "nk>x</th", "ink>Oui"])  # exact chunks
        server.script("abc", mode="error_line")               # {"error": ...} after 1 chunk
        server.script(mode="http_500")
        server.script("abc", first_delay=5, chunk_delay=1)    # slow
        server.script("abc", chunks=4, mode="drop", drop_after=2)  # connection cut mid-stream
        server.script("abc", chunks=4, mode="end", drop_after=2)   # ended cleanly, without its `done` line
        server.script(mode="flood")                           # a reply line that never ends (16 MiB, then silence)
        server.script("abc", chunks=3, hold_after=1)          # wait for server.release()
        server.script("abc", done_reason="length")            # stopped at num_predict
        server.script_next("Un", mode="http_500")             # the next request only, then `current`

`unused_url()` gives a URL where nothing listens.

POST /api/embed answers for the models in `embed_models` with a deterministic vector of
hashed word counts (`standin_vector`): texts that share words are close, as a real embedding
model would have them; `embed_requests` records every body, `embed_broken` makes it answer
HTTP 500, `embed_held` holds every embedding until `release_embeds()` (an Ollama that
accepts the request and stays silent), `embed_flood` answers a body that never ends (16 MiB
of one line, then silence), and `embed_trickle` one that comes a byte every `trickle_every`
seconds, never ending (each read in time, the whole never). A request with a text that holds one of `embed_nan`
answers HTTP 500 « failed to encode response: json: unsupported value: NaN », as Ollama does
for the few texts bge-m3 turns into NaN (ollama/ollama#15582): the same text, every time.

`GET /standin/requests` answers `{"requests": [...]}`, every /api/chat body received so far:
how `grasbot eval` reads the prompts it sent (context recall). `in_flight` counts the chats
being answered and `max_in_flight` the most at once (what admission control must bound);
`parallel` makes it generate that many at a time and hold the others, as Ollama's
OLLAMA_NUM_PARALLEL does. `GET /standin/stats` answers those counts.

Run as a script, the server listens until stopped and prints its URL:
`python tests/support/standin_ollama.py [--answer-seconds 3 --parallel 2 --chunks 10 --port N]`
(the load benchmark's model: every answer takes that long, spread over its chunks).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import math
import re
import socket
import unicodedata
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest_asyncio
from aiohttp import web

__all__ = ["Script", "StandinOllama", "standin_ollama", "standin_vector", "unused_url"]

MODES = ("reply", "think", "error_line", "http_500", "drop", "end", "flood")
THINK_LEAK = "<think>\nL'utilisateur demande quelque chose. Je réfléchis.\n</think>\n\n"
VERSION = "0.12.6"


@dataclass
class Script:
    """What the next /api/chat requests get. See the module docstring."""

    reply: str = "Bonjour, je suis GrasBot."
    chunks: int = 3
    pieces: list[str] | None = None
    mode: str = "reply"
    error: str = "an error was encountered while running the model: unexpected EOF"
    first_delay: float = 0.0
    chunk_delay: float = 0.0
    drop_after: int = 1
    error_after: int = 1
    hold_after: int | None = None
    #: Why the reply ended, in its final line: "length" is a model stopped at num_predict.
    done_reason: str = "stop"
    #: What mode "flood" sends of its endless line before it falls silent (not closing).
    flood_bytes: int = 16 << 20

    def content(self) -> str:
        return (THINK_LEAK + self.reply) if self.mode == "think" else self.reply

    def split(self) -> list[str]:
        """The reply cut into chunks, in order; joined they give back content()."""
        if self.pieces is not None:
            return list(self.pieces)
        text = self.content()
        n = max(1, min(self.chunks, len(text) or 1))
        size, extra = divmod(len(text), n)
        out, start = [], 0
        for i in range(n):
            end = start + size + (1 if i < extra else 0)
            out.append(text[start:end])
            start = end
        return out


@dataclass
class StandinOllama:
    """The server. `url` once started; `requests` holds every /api/chat body, as received."""

    models: tuple[str, ...] = ("qwen3:8b",)
    current: Script = field(default_factory=Script)
    requests: list[dict] = field(default_factory=list)
    #: (method, path) of every request, chat or not.
    hits: list[tuple[str, str]] = field(default_factory=list)
    #: ("chunk", i) for every chunk written, then ("done", None) after the final one, or
    #: ("disconnected", i) when the client had gone when chunk i was to be written, ("disconnected",
    #: None) when it went while the chat waited or slept (aiohttp cancels the handler, as Ollama stops).
    events: list[tuple[str, int | None]] = field(default_factory=list)
    url: str = ""
    #: When True, /api/tags and /api/version answer HTTP 500 (an Ollama that is up but sick).
    broken: bool = False
    embed_models: tuple[str, ...] = ("bge-m3",)
    #: Every /api/embed body, as received.
    embed_requests: list[dict] = field(default_factory=list)
    embed_broken: bool = False
    embed_held: bool = False
    #: When True, /api/embed answers a body that never ends (16 MiB of one line, then silence).
    embed_flood: bool = False
    #: When True, /api/embed answers a body a byte every `trickle_every` seconds, never ending.
    embed_trickle: bool = False
    trickle_every: float = 1.0
    #: Words that make a text's embedding NaN: its request answers HTTP 500, as Ollama's does.
    embed_nan: tuple[str, ...] = ()
    #: The port to listen on (0: any free one); a test restarts a host where it was.
    port: int = 0
    #: Chats generated at once (None: all); the others wait, as in Ollama's own queue.
    parallel: int | None = None
    in_flight: int = 0
    max_in_flight: int = 0
    chats_done: int = 0
    #: Scripts for the next /api/chat requests, one each, before `current` again (script_next).
    upcoming: list[Script] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._runner: web.AppRunner | None = None
        self._closing = asyncio.Event()
        self._gate = asyncio.Event()
        self._embeds_released = asyncio.Event()
        self.first_chunk_sent = asyncio.Event()
        self._generating = asyncio.Semaphore(self.parallel) if self.parallel else None

    def script(self, reply: str | None = None, **changes) -> Script:
        """Replace the behaviour for the following requests (unset fields take defaults)."""
        if reply is not None:
            changes["reply"] = reply
        mode = changes.get("mode", "reply")
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}, expected one of {MODES}")
        self.current = Script(**changes)
        self._gate.clear()
        self.first_chunk_sent.clear()
        return self.current

    def script_next(self, reply: str | None = None, **changes) -> Script:
        """Queue the behaviour of one coming request (after those already queued)."""
        if reply is not None:
            changes["reply"] = reply
        if changes.get("mode", "reply") not in MODES:
            raise ValueError(f"unknown mode {changes['mode']!r}, expected one of {MODES}")
        self.upcoming.append(Script(**changes))
        return self.upcoming[-1]

    def release(self) -> None:
        """Let a reply held by `hold_after` continue."""
        self._gate.set()

    def release_embeds(self) -> None:
        """Let the embeddings `embed_held` holds be answered, and those that follow."""
        self.embed_held = False
        self._embeds_released.set()

    async def start(self) -> StandinOllama:
        app = web.Application()
        app.router.add_post("/api/chat", self._chat)
        app.router.add_post("/api/embed", self._embed)
        app.router.add_get("/api/tags", self._tags)
        app.router.add_get("/api/version", self._version)
        app.router.add_get("/standin/requests", self._recorded)
        app.router.add_get("/standin/stats", self._stats)
        # a client that goes cancels its chat, as Ollama stops generating for a closed request
        self._runner = web.AppRunner(app, shutdown_timeout=1.0, access_log=None, handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def close(self) -> None:
        self._closing.set()
        self._gate.set()
        self._embeds_released.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> StandinOllama:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # -- handlers ------------------------------------------------------------------------------

    async def _sleep(self, seconds: float) -> bool:
        """Sleep, but wake up when the server closes; True if closing."""
        if seconds <= 0:
            return self._closing.is_set()
        try:
            await asyncio.wait_for(self._closing.wait(), seconds)
        except TimeoutError:
            return False
        return True

    async def _tags(self, request: web.Request) -> web.Response:
        self.hits.append((request.method, request.path))
        if self.broken:
            return web.json_response({"error": "internal error"}, status=500)
        models = [
            {
                "name": name,
                "model": name,
                "modified_at": "2025-10-01T10:00:00.000000000+02:00",
                "size": 5_225_376_047,
                "digest": "0" * 64,
                "details": {
                    "parent_model": "",
                    "format": "gguf",
                    "family": "qwen3",
                    "families": ["qwen3"],
                    "parameter_size": "8.2B",
                    "quantization_level": "Q4_K_M",
                },
            }
            for name in self.models
        ]
        return web.json_response({"models": models})

    async def _version(self, request: web.Request) -> web.Response:
        self.hits.append((request.method, request.path))
        if self.broken:
            return web.json_response({"error": "internal error"}, status=500)
        return web.json_response({"version": VERSION})

    async def _recorded(self, request: web.Request) -> web.Response:
        return web.json_response({"requests": self.requests})

    async def _stats(self, request: web.Request) -> web.Response:
        return web.json_response({"chats": len(self.requests), "done": self.chats_done, "in_flight": self.in_flight, "max_in_flight": self.max_in_flight})

    def _known(self, model: str) -> bool:
        return model in self.models or (":" not in model and f"{model}:latest" in self.models)

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self._generating is None:
                return await self._answer_chat(request)
            async with self._generating:
                return await self._answer_chat(request)
        except asyncio.CancelledError:
            self.events.append(("disconnected", None))  # the client went while its chat was being answered
            raise
        finally:
            self.in_flight -= 1

    async def _answer_chat(self, request: web.Request) -> web.StreamResponse:
        self.hits.append((request.method, request.path))
        try:
            body = await request.json()
        except json.JSONDecodeError:
            return web.json_response({"error": "invalid JSON body"}, status=400)
        self.requests.append(body)
        script = self.upcoming.pop(0) if self.upcoming else self.current
        model = body.get("model", "")
        if not self._known(model):
            return web.json_response({"error": f'model "{model}" not found, try pulling it first'}, status=404)
        if script.mode == "http_500":
            return web.json_response({"error": script.error}, status=500)
        if await self._sleep(script.first_delay):
            return web.Response(status=503)
        pieces = script.split()
        if script.mode == "flood":  # streamed or not: a body whose first line never ends
            flood = web.StreamResponse(headers={"Content-Type": "application/x-ndjson" if body.get("stream", True) else "application/json"})
            await flood.prepare(request)
            try:
                await flood.write(b'{"model": "%s", "message": {"role": "assistant", "content": "' % model.encode())
                for _ in range(script.flood_bytes >> 16):
                    await flood.write(b"a" * (1 << 16))
                await asyncio.sleep(3600)  # cancelled when the client goes
            except ConnectionResetError:
                self.events.append(("disconnected", None))
            return flood
        if not body.get("stream", True):
            if script.mode == "end":  # what had come, without `done: true`
                cut = {**self._final(model, "".join(pieces[: script.drop_after]), script.drop_after), "done": False}
                del cut["done_reason"]
                return web.json_response(cut)
            for _ in pieces[1:]:  # the whole reply takes as long as its chunks would
                if await self._sleep(script.chunk_delay):
                    break
            self.chats_done += 1
            return web.json_response(self._final(model, "".join(pieces), len(pieces), script.done_reason))
        response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        await response.prepare(request)
        i = 0
        try:
            for i, piece in enumerate(pieces):
                if i > 0 and await self._sleep(script.chunk_delay):
                    break
                if script.hold_after is not None and i == script.hold_after:
                    await self._gate.wait()
                if script.mode == "drop" and i == script.drop_after:
                    request.transport.abort()  # type: ignore[union-attr]
                    return response
                if script.mode == "end" and i == script.drop_after:  # a proxy ending the reply on its own timeout
                    await response.write_eof()
                    return response
                if script.mode == "error_line" and i == script.error_after:
                    await self._line(response, {"error": script.error})
                    await response.write_eof()
                    return response
                await self._line(
                    response,
                    {
                        "model": model,
                        "created_at": _now(),
                        "message": {"role": "assistant", "content": piece},
                        "done": False,
                    },
                )
                self.events.append(("chunk", i))
                self.first_chunk_sent.set()
            if script.mode == "drop":  # drop_after past the last chunk: cut before the final
                request.transport.abort()  # type: ignore[union-attr]
                return response
            await self._line(response, self._final(model, "", len(pieces), script.done_reason))
            self.events.append(("done", None))
            self.chats_done += 1
            await response.write_eof()
        except ConnectionResetError:  # the client went away (aiohttp's error subclasses it)
            self.events.append(("disconnected", i))
        return response

    async def _embed(self, request: web.Request) -> web.Response:
        self.hits.append((request.method, request.path))
        body = await request.json()
        self.embed_requests.append(body)
        if self.embed_held:
            await self._embeds_released.wait()
        model = body.get("model", "")
        if not {model, model.removesuffix(":latest"), f"{model}:latest"} & set(self.embed_models):  # « x » is « x:latest »
            return web.json_response({"error": f'model "{model}" not found, try pulling it first'}, status=404)
        if self.embed_broken:
            return web.json_response({"error": "an error was encountered while running the model"}, status=500)
        if self.embed_flood:
            flood = web.StreamResponse(headers={"Content-Type": "application/json"})
            await flood.prepare(request)
            with contextlib.suppress(ConnectionResetError):
                await flood.write(b'{"model": "%s", "embeddings": [[' % model.encode())
                for _ in range(16 << 4):
                    await flood.write(b"0.1," * (1 << 14))
                await asyncio.sleep(3600)  # cancelled when the client goes
            return flood
        if self.embed_trickle:
            trickle = web.StreamResponse(headers={"Content-Type": "application/json"})
            await trickle.prepare(request)
            with contextlib.suppress(ConnectionResetError):
                await trickle.write(b'{"model": "%s", "embeddings": [[' % model.encode())
                while True:  # cancelled when the client goes
                    await asyncio.sleep(self.trickle_every)
                    await trickle.write(b" ")
            return trickle
        texts = body.get("input", "")
        texts = [texts] if isinstance(texts, str) else list(texts)
        if any(word in text for word in self.embed_nan for text in texts):
            return web.json_response({"error": "failed to encode response: json: unsupported value: NaN"}, status=500)
        return web.json_response(
            {
                "model": model,
                "embeddings": [standin_vector(t) for t in texts],
                "total_duration": 14_000_000,
                "load_duration": 1_000_000,
                "prompt_eval_count": sum(len(t.split()) for t in texts),
            }
        )

    @staticmethod
    async def _line(response: web.StreamResponse, obj: dict) -> None:
        await response.write(json.dumps(obj, ensure_ascii=False).encode() + b"\n")

    @staticmethod
    def _final(model: str, content: str, eval_count: int, done_reason: str = "stop") -> dict:
        return {
            "model": model,
            "created_at": _now(),
            "message": {"role": "assistant", "content": content},
            "done": True,
            "done_reason": done_reason,
            "total_duration": 412_345_678,
            "load_duration": 12_345_678,
            "prompt_eval_count": 42,
            "prompt_eval_duration": 100_000_000,
            "eval_count": eval_count,
            "eval_duration": 300_000_000,
        }


STANDIN_DIMENSIONS = 64


def standin_vector(text: str) -> list[float]:
    """Hashed counts of the text's folded words, L2-normalised: deterministic, and close for
    texts that share words (what the tests of the Ollama backend need of an embedding)."""
    folded = unicodedata.normalize("NFKD", text.lower())
    vector = [0.0] * STANDIN_DIMENSIONS
    for word in re.findall(r"[a-z0-9]{3,}", "".join(c for c in folded if not unicodedata.combining(c))):
        vector[int.from_bytes(hashlib.blake2b(word.encode(), digest_size=2).digest(), "big") % STANDIN_DIMENSIONS] += 1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def unused_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (the port was free a moment ago)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


async def _serve_forever(argv: list[str]) -> None:
    import argparse

    parser = argparse.ArgumentParser(description="A stand-in Ollama server.")
    parser.add_argument("--answer-seconds", type=float, default=0.0, help="how long every answer takes")
    parser.add_argument("--chunks", type=int, default=10, help="pieces an answer streams in")
    parser.add_argument("--parallel", type=int, default=None, help="answers generated at once (the others wait)")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--reply", default=Script.reply)
    args = parser.parse_args(argv)
    async with StandinOllama(port=args.port, parallel=args.parallel) as server:
        step = args.answer_seconds / max(1, args.chunks)
        server.script(args.reply, chunks=args.chunks, first_delay=step, chunk_delay=step)
        print(server.url, flush=True)
        await asyncio.Event().wait()


@pytest_asyncio.fixture
async def standin_ollama():
    """A started StandinOllama, closed after the test."""
    async with StandinOllama() as server:
        yield server


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        import sys

        asyncio.run(_serve_forever(sys.argv[1:]))
