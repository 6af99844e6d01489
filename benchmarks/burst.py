"""A burst of visitors against `grasbot serve`: admission control, answer reuse, several hosts.

    .venv/bin/python benchmarks/burst.py                       # 100 and 500 visitors, 1 then 2 hosts
    .venv/bin/python benchmarks/burst.py --visitors 100 --hosts 1

The model is the stand-in Ollama (`tests/support/standin_ollama.py`), one process per host: every
answer takes `--answer-seconds` (3 s, in 10 streamed pieces) and it generates 2 at a time,
holding the others as Ollama's own queue does; it counts the most chats it was sent at once.
The daemon is a real `grasbot serve` on the bundled vault with its default admission settings
(2 slots a host, a queue of 32, 20 s at most); its rate limit is raised for the run (all the
visitors come from one address here), the question log is off.

All visitors start at once; each asks two first questions (no history), one of a few questions
every site hears (`POPULAR`) and one nobody asked before, in alternating order, reading the
first answer 5 to 20 s before asking the second; even visitors read `/ask/stream`, odd ones
`/ask`. Per scenario: answers the model wrote, answers reused,
extractive answers because generation was full (busy), LLM fallbacks, errors; time to the
first byte (/ask/stream: the first event, `sources`) and to the last token (the `done` event,
or /ask's whole answer), p50, p95 and max; the targets checked.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PYTHON = REPO / ".venv" / "bin" / "python"
GRASBOT = REPO / ".venv" / "bin" / "grasbot"

POPULAR = [
    "Qui es-tu ?",
    "Comment contacter l'auteur du site ?",
    "Comment fonctionne GrasBot ?",
    "Quels projets en Python ?",
]
NEW = [
    "Quel modèle de langue utilise GrasBot",
    "Qu'est-ce que BM25",
    "Parle-moi du projet de site statique",
    "Comment sont découpées les notes longues",
    "Que fait le cache d'index",
    "Quelles compétences en C",
]
REPLY = "Voici ce que disent les notes de l'auteur à ce sujet, en quelques phrases sobres et citées."
READING = (5, 20)  # seconds a visitor reads an answer before the next question
MAX_WAIT = 20.0  # the daemon's default LLM_MAX_WAIT, which the targets are checked against


def _pcts(samples: list[float]) -> str:
    if not samples:
        return "-"
    s = sorted(samples)
    p50, p95 = s[len(s) // 2], s[min(len(s) - 1, int(len(s) * 0.95))]
    return f"{p50:6.2f} {p95:6.2f} {s[-1]:6.2f}"


def _start(args: list[str], env: dict | None = None) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
    line = proc.stdout.readline()
    return proc, line


def start_standin(answer_seconds: float) -> tuple[subprocess.Popen, str]:
    proc, line = _start(
        [
            str(PYTHON),
            str(REPO / "tests" / "support" / "standin_ollama.py"),
            "--answer-seconds",
            str(answer_seconds),
            "--parallel",
            "2",
            "--chunks",
            "10",
            "--reply",
            REPLY,
        ]
    )
    if not line.startswith("http://"):
        raise SystemExit(f"the stand-in did not start: {line!r}")
    return proc, line.strip()


def start_daemon(hosts: list[str], work: Path, semantic: str) -> tuple[subprocess.Popen, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GRASBOT_", "LLM_", "OLLAMA_", "SEARCH_", "VAULT_DIR"))}
    env.update(GRASBOT_RATE_PER_MINUTE="1000000", GRASBOT_RATE_BURST="1000000", XDG_CACHE_HOME=str(work / "cache"), XDG_CONFIG_HOME=str(work / "config"))
    env.update(GRASBOT_CONCURRENT_ANSWERS="1000000")  # every visitor of the burst asks from one address
    proc, line = _start(
        [
            str(GRASBOT),
            "serve",
            "--port",
            "0",
            "--ollama-host",
            ",".join(hosts),
            "--question-log",
            "off",
            "--token",
            "bench-owner-token",
            "--semantic",
            semantic,
        ],
        env,
    )
    found = re.match(r"GrasBot écoute sur (http://\S+) ", line)
    if not found:
        raise SystemExit(f"grasbot serve did not start: {line!r}")
    return proc, found.group(1)


async def _ask(http, url: str, q: str, stream: bool) -> dict:
    started = time.perf_counter()
    out: dict = {"stream": stream}
    try:
        if not stream:
            async with http.get(f"{url}/ask", params={"q": q}) as response:
                body = await response.read()
                out["first"] = out["last"] = time.perf_counter() - started
                if response.status != 200:
                    return {**out, "error": f"HTTP {response.status}"}
                out["payload"] = json.loads(body)
            return out
        async with http.get(f"{url}/ask/stream", params={"q": q}) as response:
            if response.status != 200:
                return {**out, "error": f"HTTP {response.status}"}
            event = None
            async for raw in response.content:
                line = raw.decode().rstrip("\n")
                if line.startswith("event:"):
                    event = line[6:].strip()
                    out.setdefault("first", time.perf_counter() - started)
                    out.setdefault("first_event", event)
                elif line.startswith("data:") and event == "done":
                    out["last"] = time.perf_counter() - started
                    out["payload"] = json.loads(line[5:])
                elif line.startswith("data:") and event == "error":
                    return {**out, "error": line}
        if "payload" not in out:
            return {**out, "error": "stream ended without done"}
        return out
    except Exception as exc:  # noqa: BLE001 - an error is a result here
        return {**out, "error": f"{type(exc).__name__}: {exc}"}


async def _visitor(http, url: str, i: int) -> list[dict]:
    popular = POPULAR[(i // 2) % len(POPULAR)]
    new = f"{NEW[i % len(NEW)]} (visiteur {i}) ?"
    order = (popular, new) if i % 2 == 0 else (new, popular)
    first = await _ask(http, url, order[0], stream=i % 2 == 0)
    await asyncio.sleep(READING[0] + i % (READING[1] - READING[0] + 1))  # reads the answer, then asks again
    return [first, await _ask(http, url, order[1], stream=i % 2 == 0)]


async def burst(url: str, visitors: int) -> tuple[list[dict], float]:
    import aiohttp

    # A connection per question: a kept-alive one that the daemon closes after its 10 s idle
    # bound (GRASBOT_HEADER_TIMEOUT) while the client reuses it is the client's race, not a burst's.
    connector = aiohttp.TCPConnector(limit=0, force_close=True)
    timeout = aiohttp.ClientTimeout(total=300)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as http:
        started = time.perf_counter()
        results = await asyncio.gather(*(_visitor(http, url, i) for i in range(visitors)))
        return [r for pair in results for r in pair], time.perf_counter() - started


def _until_ready(url: str) -> None:
    """Until the daemon's embedding worker is done: a burst measures answering, not the start."""
    import urllib.request

    for _ in range(600):
        with urllib.request.urlopen(f"{url}/health", timeout=10) as response:
            semantic = json.loads(response.read())["semantic"]
            if semantic["ready"] or semantic["backend"] == "off":
                return
        time.sleep(0.1)
    raise SystemExit("the daemon's semantic signal never got ready")


def _stats(url: str) -> dict:
    import urllib.request

    with urllib.request.urlopen(f"{url}/standin/stats", timeout=10) as response:
        return json.loads(response.read())


def scenario(hosts: int, visitors: int, answer_seconds: float, work: Path, semantic: str) -> dict:
    standins = [start_standin(answer_seconds) for _ in range(hosts)]
    daemon = None
    try:
        daemon = start_daemon([u for _, u in standins], work, semantic)
        _until_ready(daemon[1])
        results, took = asyncio.run(burst(daemon[1], visitors))
        stats = [_stats(u) for _, u in standins]
    finally:
        for proc, _ in ([daemon] if daemon else []) + standins:
            proc.terminate()
            proc.wait(timeout=10)
    ok = [r for r in results if "error" not in r]
    kinds = {"model": 0, "reused": 0, "busy": 0, "fallback": 0}
    for r in ok:
        p = r["payload"]
        kind = "reused" if p["reused"] else "busy" if p["busy"] else "fallback" if "llm_error" in p else "model"
        kinds[kind] += 1
        r["kind"] = kind
    asks = [r for r in ok if not r["stream"]]
    streams = [r for r in ok if r["stream"]]
    return {
        "hosts": hosts,
        "visitors": visitors,
        "semantic": semantic,
        "requests": len(results),
        "took_s": took,
        **kinds,
        "errors": len(results) - len(ok),
        "error_kinds": sorted({r["error"][:80] for r in results if "error" in r}),
        "ask_last": [r["last"] for r in asks],
        "ask_model_last": [r["last"] for r in asks if r["kind"] == "model"],
        "stream_first": [r["first"] for r in streams],
        "stream_last": [r["last"] for r in streams],
        "first_events": sorted({r.get("first_event", "?") for r in streams}),
        "max_in_flight": [s["max_in_flight"] for s in stats],
        "chats": [s["chats"] for s in stats],
    }


def _worst(late: list[float]) -> str:
    return f" (max {max(late):.2f} s)" if late else ""


def report(rows: list[dict], answer_seconds: float) -> None:
    print(
        f"\n{'semantic':>8} {'hosts':>5} {'visitors':>8} {'requests':>8} {'model':>6} {'reused':>6} {'busy':>5} {'fallbk':>6} {'errors':>6}"
        f"  {'/ask last p50 p95 max':>22}  {'stream first p50 p95 max':>25}  {'stream last p50 p95 max':>24}  model max at once"
    )
    for r in rows:
        print(
            f"{r['semantic']:>8} {r['hosts']:>5} {r['visitors']:>8} {r['requests']:>8} {r['model']:>6} {r['reused']:>6} {r['busy']:>5} "
            f"{r['fallback']:>6} {r['errors']:>6}  {_pcts(r['ask_last']):>22}  {_pcts(r['stream_first']):>25}  "
            f"{_pcts(r['stream_last']):>24}  {r['max_in_flight']} (chats {r['chats']})"
        )
    print("\nTargets:")
    for r in rows:
        where = f"{r['hosts']} host(s), {r['visitors']} visitors, semantic {r['semantic']}"
        bound = MAX_WAIT + answer_seconds + 1.0  # the wait, the answer, a second for the rest
        slow_asks = [t for t in r["ask_last"] if t > bound]
        late_first = [t for t in r["stream_first"] if t > 1.0]
        print(
            f"  {where}: errors {r['errors']} {r['error_kinds'] or ''}; /ask over {bound:g} s: {len(slow_asks)}"
            f"{_worst(slow_asks)}; stream first event over 1 s: {len(late_first)}"
            f"{_worst(late_first)} (first events: {', '.join(r['first_events'])}); "
            f"model at once {r['max_in_flight']} (slots 2 a host); run {r['took_s']:.1f} s"
        )
    for visitors in sorted({r["visitors"] for r in rows}):
        by_hosts = {r["hosts"]: r for r in rows if r["visitors"] == visitors and r["semantic"] == rows[0]["semantic"]}
        if 1 in by_hosts and 2 in by_hosts:
            one, two = by_hosts[1]["model"], by_hosts[2]["model"]
            rate_one, rate_two = one / by_hosts[1]["took_s"], two / by_hosts[2]["took_s"]
            print(
                f"  {visitors} visitors: model answers with 2 hosts / 1 host = {two} / {one} = {two / max(one, 1):.2f};"
                f" a second of the run: {rate_two:.2f} / {rate_one:.2f} = {rate_two / max(rate_one, 1e-9):.2f}"
                " (a burst that no longer fills 2 hosts to its end ends sooner)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--visitors", default="100,500", help="comma-separated numbers of concurrent visitors")
    parser.add_argument("--hosts", default="1,2", help="comma-separated numbers of model hosts")
    parser.add_argument("--answer-seconds", type=float, default=3.0)
    parser.add_argument("--work", type=Path, default=Path("/tmp/grasbot-burst"))
    parser.add_argument("--semantic", default="bundled", help="the daemon's GRASBOT_SEMANTIC: bundled (the default) or off")
    parser.add_argument("--also-lexical", default="", help="visitor counts to run again with --semantic off (1 host)")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    rows = []
    for visitors in (int(v) for v in args.visitors.split(",")):
        for hosts in (int(h) for h in args.hosts.split(",")):
            print(f"-- {hosts} host(s), {visitors} visitors", file=sys.stderr, flush=True)
            rows.append(scenario(hosts, visitors, args.answer_seconds, args.work, args.semantic))
    for visitors in (int(v) for v in args.also_lexical.split(",") if v):
        print(f"-- 1 host, {visitors} visitors, semantic off", file=sys.stderr, flush=True)
        rows.append(scenario(1, visitors, args.answer_seconds, args.work, "off"))
    report(rows, args.answer_seconds)


if __name__ == "__main__":
    main()
