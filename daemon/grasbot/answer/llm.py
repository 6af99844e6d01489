"""GrasBot's only door to Ollama.

Every way a call can go wrong (nothing listening, a broken connection, a slow model, an error
from Ollama, a payload we cannot read) comes out as one of LLMUnavailable, LLMTimeout or
LLMFailed, so the caller has a single `except LLMError` to fall back to plain extraction.
Reasoning that a model leaks into its answer (`<think>…</think>`) never reaches the visitor,
and its text is read as a visitor sees it (`addresses.as_shown`, a stream's pieces by
`addresses.AsShown`), so no address it disguises gets past the answer's filters.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import re
from collections.abc import AsyncIterator

from .._exceptions import LLMError, LLMFailed, LLMTimeout, LLMUnavailable
from .._hosts import CONNECT_TIMEOUT, bounded_transport, host_url, model_missing
from .addresses import AsShown, as_shown
from .prompt import CUT_ANSWER

__all__ = ["LLMClient", "ThinkStripper", "strip_think", "load_ollama"]

log = logging.getLogger("grasbot.llm")

# A reasoning tag as models write them: `<think>`, `</think>`, `<Think>`, `<thinking>`, `< /think >`.
_TAG = re.compile(r"<[ \t]?(/?)[ \t]?think(?:ing)?[ \t]?>", re.IGNORECASE)
_MAX_TAG = len("< / thinking >")


def _partial_tag_len(text: str) -> int:
    """Length of the suffix of `text` that could be the start of a reasoning tag: that much
    must be held back, the rest of the tag may come in the next chunk."""
    i = text.rfind("<", max(0, len(text) - _MAX_TAG))
    if i == -1:
        return 0
    tail = text[i:]
    if ">" in tail:
        return 0
    letters = "".join(c for c in tail[1:] if c not in " \t/").lower()
    return len(tail) if "thinking".startswith(letters) else 0


def _find(buf: str, closing: bool | None = None) -> re.Match | None:
    """The first reasoning tag in `buf` (only closing ones with `closing=True`)."""
    for m in _TAG.finditer(buf):
        if closing is None or bool(m.group(1)) == closing:
            return m
    return None


class ThinkStripper:
    """Removes reasoning from text that arrives in pieces.

    Rules, the same whether the text comes whole or in chunks of any size (they depend only on
    where the tags stand in the text, so `/ask` and `/ask/stream` say the same):
    - a `<think>…</think>` block is dropped, wherever it is (any case, `<thinking>` too); an
      unclosed one runs to the end;
    - an orphan `</think>` (no `<think>` before it) that starts within the first `holdback`
      characters means everything before it was reasoning; later, a stray `</think>` is only a
      tag and is removed alone;
    - leading whitespace of the answer is dropped.

    An orphan `</think>` can only be recognised after the text before it has arrived, so the
    opening of a stream is held back until a tag shows up, or `holdback` characters (and room
    for a whole tag) have gone by with none: what was yielded cannot be taken back. The
    window is small on purpose: the orphans seen in practice are short (`\n\n</think>` when
    the template opened the block in the prompt), while every character held back delays the
    visitor's first words; long leaked reasoning starts with `<think>` and costs no delay.
    What is left may be empty (reasoning that never closed): the caller falls back then.
    """

    def __init__(self, holdback: int = 64) -> None:
        self._holdback = holdback
        self._state = "open"  # open: undecided; out: answer text; in: inside a think block
        self._buf = ""
        self._started = False  # has any non-whitespace text been emitted yet?

    def feed(self, text: str) -> str:
        """Take the next piece; return the visible text that can be released now."""
        self._buf += text
        return self._emit(self._run(final=False))

    def finish(self) -> str:
        """End of text: release what was held back (a dangling tag prefix is plain text)."""
        out = self._run(final=True)
        if self._state == "out":
            out += self._buf
        self._buf = ""
        return self._emit(out)

    def _emit(self, out: str) -> str:
        if not self._started:
            out = out.lstrip()
            self._started = bool(out)
        return out

    def _run(self, final: bool) -> str:
        out: list[str] = []
        while True:
            buf = self._buf
            if self._state == "open":  # nothing emitted yet: buf is the text from its start
                m = _find(buf)
                if not final and self._holdback > 0 and (m is None or (m.group(1) and m.start() >= self._holdback)):
                    # undecided while the window is not full, or while a tag that starts inside
                    # it may still be arriving
                    i = buf.rfind("<", 0, self._holdback)
                    if len(buf) < self._holdback or (i != -1 and _partial_tag_len(buf[i:]) == len(buf) - i):
                        return "".join(out)
                if m is not None and m.group(1) and m.start() < self._holdback:
                    self._buf, self._state = buf[m.end() :], "out"  # an orphan: reasoning before it
                elif m is not None and not m.group(1):
                    out.append(buf[: m.start()])
                    self._buf, self._state = buf[m.end() :], "in"
                else:
                    self._state = "out"
            elif self._state == "in":
                m = _find(buf, closing=True)
                if m is None:
                    # Keep only what could be the start of `</think>`; the rest is reasoning.
                    keep = 0 if final else _partial_tag_len(buf)
                    self._buf = buf[len(buf) - keep :] if keep else ""
                    return "".join(out)
                self._buf, self._state = buf[m.end() :], "out"
            else:  # out
                m = _find(buf)
                if m is not None and m.group(1):
                    # A stray tag once the answer has begun: only the tag goes.
                    log.debug("dropping a stray </think> inside the answer")
                    out.append(buf[: m.start()])
                    self._buf = buf[m.end() :]
                elif m is not None:
                    out.append(buf[: m.start()])
                    self._buf, self._state = buf[m.end() :], "in"
                else:
                    keep = 0 if final else _partial_tag_len(buf)
                    out.append(buf[: len(buf) - keep])
                    self._buf = buf[len(buf) - keep :]
                    return "".join(out)


def strip_think(text: str) -> str:
    """The answer without its reasoning, trimmed."""
    stripper = ThinkStripper()
    return (stripper.feed(text) + stripper.finish()).strip()


def load_ollama():
    """The ollama package, imported on first use: with pydantic it costs 0.36 s, a third of a
    daemon's start, and a daemon that has not answered yet does not need it. A server imports
    it in a worker thread once listening, so that its first answer does not wait either."""
    import ollama

    return ollama


class LLMClient:
    """One Ollama model behind one HTTP connection pool, made at the first call."""

    #: Characters held back at the start of a stream to recognise an orphan `</think>`.
    orphan_holdback: int = 64
    #: Characters a token may take, at most, in an answer: one of `max_tokens` tokens longer than
    #: this (an Ollama that does not honour num_predict) ends the answer there. A French token
    #: takes about 4.
    chars_per_token: int = 16
    #: Seconds `reachable()` waits before answering False.
    reachable_timeout: float = 2.0
    #: Seconds a probe's answer is given again by `reachable()` without asking the host.
    reachable_for: float = 2.0
    #: Seconds to open a connection: a host that takes longer is down (skipped for the next),
    #: not a slow model; a machine on the same network answers in milliseconds.
    connect_timeout: float = CONNECT_TIMEOUT

    def __init__(
        self,
        host: str | None,
        model: str = "qwen3:8b",
        timeout: float = 60.0,
        temperature: float = 0.4,
        keep_alive: str = "30m",
        max_tokens: int = 400,
        deadline: float = 90.0,
        context: int = 8_192,
    ) -> None:
        self.host = host_url(host)
        self.model = model
        self.timeout = timeout  # between two pieces of the reply (httpx's read timeout)
        self.temperature = temperature
        # seconds as a number: Ollama reads a string with Go's ParseDuration, which wants a unit
        self.keep_alive: str | int = int(keep_alive) if keep_alive.lstrip("-").isdigit() else keep_alive
        self.max_tokens = max_tokens  # Ollama's num_predict: the answer stops there
        self.context = context  # Ollama's num_ctx, the same at every call: another value reloads the model
        self.deadline = deadline  # the whole answer, first word to last
        self._host_given = host  # None: the ollama client's own default, as OLLAMA_HOST says
        self._made = None
        self._probe: asyncio.Task[bool] | None = None  # the last probe of the host, maybe in flight
        self._probed_at = -math.inf  # when it answered (loop time)

    @property
    def _client(self):
        if self._made is None:
            import httpx  # ollama's own transport, imported with it

            timeout = httpx.Timeout(self.timeout, connect=min(self.timeout, self.connect_timeout))
            transport = bounded_transport(self.max_reply_bytes, self._too_long, asynchronous=True)
            self._made = load_ollama().AsyncClient(host=self._host_given, timeout=timeout, transport=transport)
        return self._made

    @property
    def max_reply_bytes(self) -> int:
        """The bytes one reply of the host may take: a streamed one spends a line of about 200
        bytes on each piece, and a piece may be a single character of `max_chars`; 1 MiB more
        for what is not the answer (a host's list of models, an error page)."""
        return (1 << 20) + self.max_chars * 256

    def _too_long(self) -> LLMFailed:
        return LLMFailed(
            f"Ollama sur {self.host} (OLLAMA_HOST) a envoyé pour le modèle « {self.model} » une réponse de plus de {self.max_reply_bytes} octets,"
            f" plus qu'aucune réponse de LLM_MAX_TOKENS ({self.max_tokens}) jetons n'en prend : abandonnée là"
        )

    def __repr__(self) -> str:
        return f"LLMClient(host={self.host!r}, model={self.model!r})"

    def _chat_kwargs(self, messages: list[dict], stream: bool) -> dict:
        return {
            "model": self.model,
            "messages": messages,
            "stream": stream,
            "think": False,
            "options": {"temperature": self.temperature, "num_predict": self.max_tokens, "num_ctx": self.context},
            "keep_alive": self.keep_alive,
        }

    async def generate(self, messages: list[dict]) -> str:
        """The whole answer in one call, reasoning stripped (possibly empty: see ThinkStripper)."""
        with self._translate_errors(), self._within_deadline():
            async with asyncio.timeout(self.deadline):
                response = await self._client.chat(**self._chat_kwargs(messages, stream=False))
            content = response.message.content or ""
        if not response.done:
            raise self._ended_early()
        text = strip_think(as_shown(content))  # an address the model disguises, read as shown: answer.addresses
        said = self._capped(text)
        return said + CUT_ANSWER if said and (len(said) < len(text) or response.done_reason == "length") else said

    @property
    def max_chars(self) -> int:
        return self.max_tokens * self.chars_per_token

    def _capped(self, text: str, left: int | None = None) -> str:
        """`text` within the `left` characters the answer may still take (all of `max_chars`)."""
        left = self.max_chars if left is None else left
        if len(text) <= left:
            return text
        said = "Ollama (%s) a envoyé une réponse de plus de %d caractères, plus que LLM_MAX_TOKENS (%d) ne le permet : coupée là"
        log.warning(said, self.host, self.max_chars, self.max_tokens)
        return text[:left]

    async def stream(self, messages: list[dict]) -> AsyncIterator[str]:
        """The answer piece by piece, as Ollama produces it, reasoning stripped; LLMTimeout once
        `deadline` seconds have gone by since the call, however steadily the pieces come. An
        answer stopped before its end (`max_tokens` reached: Ollama's done_reason "length", or
        cut here) ends with CUT_ANSWER, as `generate`'s does: it broke off mid-word."""
        stripper, shown = ThinkStripper(self.orphan_holdback), AsShown()
        ends = asyncio.get_running_loop().time() + self.deadline
        # Each wait is bounded alone, never a `yield`: a timeout that fired while the consumer
        # runs would cancel the consumer's own work.
        with self._translate_errors(), self._within_deadline():
            async with asyncio.timeout_at(ends):
                chunks = await self._client.chat(**self._chat_kwargs(messages, stream=True))
        left = self.max_chars  # what the answer may still take (`_capped`)
        said = stopped = done = False  # anything shown yet; Ollama stopped the model at num_predict; its last line came
        # aclosing: a consumer that stops early must release the HTTP connection at once.
        async with contextlib.aclosing(chunks):
            while True:
                with self._translate_errors(), self._within_deadline():
                    try:
                        async with asyncio.timeout_at(ends):
                            chunk = await chunks.__anext__()
                    except StopAsyncIteration:
                        break
                    piece = stripper.feed(shown.feed(chunk.message.content or ""))  # as `generate` reads it
                    stopped = stopped or chunk.done_reason == "length"
                    done = done or bool(chunk.done)
                if len(piece) > left:
                    if piece := self._capped(piece, left):
                        yield piece
                    if said or piece:
                        yield CUT_ANSWER
                    return  # the request is closed (aclosing): nothing more is read
                left -= len(piece)
                if piece:
                    said = True
                    yield piece
        if not done:
            raise self._ended_early()
        rest = stripper.finish().rstrip()
        if tail := self._capped(rest, left):
            said = True
            yield tail
        if said and (stopped or len(tail) < len(rest)):
            yield CUT_ANSWER

    def _ended_early(self) -> LLMUnavailable:
        """A reply that stopped before Ollama's last line (`done: true`), which ends every answer:
        a proxy in front of Ollama that ended it on its own timeout, a host that closed cleanly
        mid-answer. It is a broken connection, not an answer that was whole."""
        return LLMUnavailable(
            f"La connexion à Ollama sur {self.host} (OLLAMA_HOST) a été coupée pendant que le modèle « {self.model} » répondait :"
            " sa réponse s'est arrêtée sans sa dernière ligne (done)."
        )

    @contextlib.contextmanager
    def _within_deadline(self):
        """asyncio's TimeoutError from `deadline` as LLMTimeout, naming the setting."""
        try:
            yield
        except TimeoutError:
            raise LLMTimeout(
                f"Ollama sur {self.host} (OLLAMA_HOST) n'a pas fini sa réponse en {self.deadline:g} s (LLM_DEADLINE) avec le modèle « {self.model} »."
            ) from None

    async def reachable(self) -> bool:
        """Does something that speaks Ollama answer at the host? Never raises. The callers at one
        time share one probe, and its answer stands `reachable_for` seconds: /health is free to
        any visitor, and each call (or each `health` of a 20-call batch) sent the host a request."""
        loop = asyncio.get_running_loop()
        probe = self._probe
        if probe is None or probe.get_loop() is not loop or (probe.done() and loop.time() - self._probed_at >= self.reachable_for):
            probe = self._probe = loop.create_task(self._probe_host())
        return await asyncio.shield(probe)  # a caller that goes (its client left) cuts no one else's

    async def _probe_host(self) -> bool:
        try:
            # The client first: its first use imports ollama, seconds on a cold start (or waiting
            # for the server's worker importing it), and that says nothing of the host.
            client = self._client
            async with asyncio.timeout(min(self.reachable_timeout, self.timeout)):
                await client.list()
        except Exception:  # noqa: BLE001 - any failure means "not reachable"
            return False
        finally:
            self._probed_at = asyncio.get_running_loop().time()
        return True

    async def aclose(self) -> None:
        if self._probe is not None and not self._probe.done():
            self._probe.cancel()
        if self._made is not None:
            await self._made.close()

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    @contextlib.contextmanager
    def _translate_errors(self):
        """Turn whatever ollama/httpx raise into our three exceptions."""
        where = f"Ollama sur {self.host} (OLLAMA_HOST)"
        ollama = load_ollama()
        import httpx  # ollama's own transport, imported with it

        try:
            yield
        except LLMError:
            raise
        except ollama.ResponseError as exc:
            if model_missing(exc):  # the next host is tried, where the model may be
                raise LLMUnavailable(
                    f"{where} n'a pas le modèle « {self.model} » : {exc.error}. Lancez `ollama pull {self.model}` sur cette machine."
                ) from None
            status = f"HTTP {exc.status_code}" if exc.status_code > 0 else "une erreur dans le flux"
            raise LLMFailed(f"{where} a répondu par {status} pour le modèle « {self.model} » : {exc.error}") from None
        except httpx.ConnectTimeout:  # a TimeoutException, but the host is unreachable, not slow: the next one is tried
            within = min(self.timeout, self.connect_timeout)
            raise LLMUnavailable(f"Impossible de joindre {where} en {within:g} s : cette machine est-elle allumée, et son port ouvert ?") from None
        except httpx.TimeoutException as exc:
            kind = type(exc).__name__
            raise LLMTimeout(f"{where} n'a pas répondu en {self.timeout:g} s pour le modèle « {self.model} » ({kind}).") from None
        except (ConnectionError, httpx.ConnectError):
            # ollama's own message only says "Failed to connect"; the host is what helps.
            raise LLMUnavailable(f"Impossible de joindre {where} : `ollama serve` y tourne-t-il ?") from None
        except (httpx.TransportError, OSError) as exc:
            raise LLMUnavailable(
                f"La connexion à {where} a été coupée pendant que le modèle « {self.model} » répondait ({type(exc).__name__} : {_short(exc)})."
            ) from None
        except ollama.RequestError as exc:
            raise LLMFailed(f"Requête refusée par {where} : {exc.error}") from None
        except Exception as exc:  # noqa: BLE001 - bad JSON, a payload that fails validation...
            raise LLMFailed(
                f"{where} a envoyé pour le modèle « {self.model} » une réponse que GrasBot ne sait pas lire ({type(exc).__name__} : {_short(exc)})."
            ) from None


def _short(exc: BaseException, limit: int = 200) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"
