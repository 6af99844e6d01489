"""GrasBot's speed at several vault sizes, and plain BM25 (rank-bm25) on the same corpus.

    .venv/bin/python benchmarks/run.py                 # N = 41 (bundled), 1,000, 10,000, 50,000
    .venv/bin/python benchmarks/run.py --sizes 41,1000 # a quick run
    .venv/bin/python benchmarks/run.py --no-daemon --no-baseline

Each size runs in its own subprocess, so its peak memory (ru_maxrss, the resident set's high
water mark, which includes the interpreter: about 30 MB) is its own. Generated vaults are kept
in --work (default /tmp/grasbot-bench) and regenerated only when missing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "daemon"))


def _pcts(samples: list[float]) -> tuple[float, float]:
    s = sorted(samples)
    return s[len(s) // 2], s[min(len(s) - 1, int(len(s) * 0.95))]


def _cpu_model() -> str:
    """What the CPU calls itself: rounds run on different VMs, and their speeds differ by 2-3x."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            return next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), "unknown CPU")
    except OSError:
        return "unknown CPU"


def _vault_for(n: int, work: Path) -> Path:
    from generate_vault import generate

    if n == 41:
        return REPO / "vault-grasbot"
    root = work / f"vault-{n}"
    if not (root / ".complete").exists():
        generate(root, n, seed=7)
        (root / ".complete").write_text("ok")
    return root


def measure(n: int, work: Path, n_questions: int, baseline: bool) -> dict:
    """Runs inside the per-size subprocess."""
    from generate_vault import questions
    from grasbot import Settings, build_snapshot, search

    root = _vault_for(n, work)
    settings = Settings.load(env={}, vault_dir=root)
    out: dict = {"n": n}
    t, c = time.perf_counter(), time.process_time()
    snap = build_snapshot(settings)
    out["cold_s"], out["cold_cpu_s"] = time.perf_counter() - t, time.process_time() - c
    out["notes"] = len(snap.vault.notes)
    cache = work / f"cache-{n}"
    shutil.rmtree(cache, ignore_errors=True)
    t = time.perf_counter()
    build_snapshot(settings, cache_dir=cache)
    out["cold_with_cache_write_s"] = time.perf_counter() - t
    t, c = time.perf_counter(), time.process_time()
    warm = build_snapshot(settings, cache_dir=cache)
    out["warm_s"], out["warm_cpu_s"] = time.perf_counter() - t, time.process_time() - c
    assert len(warm.vault.notes) == out["notes"]
    del warm

    index = snap.index("visitor")
    t = time.perf_counter()
    index.completions("zzzzz")  # the first abbreviation a question has sorts the index's terms, once
    out["vocabulary_ms"], out["vocabulary_terms"] = (time.perf_counter() - t) * 1000, len(index.completions(""))
    qs = questions(snap.vault.notes.values(), n_questions, seed=11)
    for q in qs[:20]:  # warm the stemmer and BM25 memo as a running daemon would be
        search(q, index, top_k=5, min_score=4.0)
    times, cpu = [], []
    for q in qs:
        t, c = time.perf_counter(), time.process_time()
        search(q, index, top_k=5, min_score=4.0)
        times.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    out["search_p50_ms"], out["search_p95_ms"] = _pcts(times)
    out["search_cpu_p50_ms"], out["search_cpu_p95_ms"] = _pcts(cpu)
    out["search_questions"] = len(qs)
    out.update(_prompt_building(index, qs))

    # one changed note, then reload (the daemon's path: build_snapshot with the previous snapshot)
    target = sorted(p for p in snap.vault.notes)[len(snap.vault.notes) // 2]
    path = root / target
    original = path.read_bytes()
    reloads, reload_cpu = [], []
    try:
        for i in range(5):
            path.write_bytes(original + f"\nUne ligne modifiée numéro {i}.\n".encode())
            t, c = time.perf_counter(), time.process_time()
            snap = build_snapshot(settings, snap)
            reloads.append((time.perf_counter() - t) * 1000)
            reload_cpu.append((time.process_time() - c) * 1000)
    finally:
        path.write_bytes(original)
    out["reload_one_ms"], out["reload_one_cpu_ms"] = statistics.median(reloads), statistics.median(reload_cpu)

    if baseline:
        from rank_bm25 import BM25Okapi

        from grasbot import tokenize_fr

        notes = [index.notes[p] for p in sorted(index.notes)]
        corpus = [tokenize_fr(f"{n.title}\n{n.name}\n{n.body}") for n in notes]
        bm = BM25Okapi(corpus)
        times = []  # the same questions as GrasBot's search above, so the ratio compares like with like
        for q in qs:
            terms = tokenize_fr(q)
            t = time.perf_counter()
            bm.get_scores(terms)
            times.append((time.perf_counter() - t) * 1000)
        out["rank_bm25_p50_ms"], out["rank_bm25_p95_ms"] = _pcts(times)
        out["rank_bm25_questions"] = len(qs)
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def measure_semantic(n: int, work: Path, n_questions: int) -> dict:
    """The semantic signal with the bundled encoder, in its own subprocess: the vault embedded
    from nothing (what the daemon's worker does after a first start), its vectors read back from
    the cache (a restart), then searches with meaning, each question's embedding included."""
    from generate_vault import questions
    from grasbot import Settings, build_snapshot
    from grasbot._engine import GrasBot

    root = _vault_for(n, work)
    cache = work / f"semantic-cache-{n}"
    shutil.rmtree(cache, ignore_errors=True)
    settings = Settings.load(env={}, vault_dir=root, cache_dir=cache, question_log="off", semantic="bundled")
    snap = build_snapshot(settings)
    out: dict = {"n": len(snap.vault.notes)}
    bot = GrasBot(settings, snap)
    t = time.perf_counter()
    bot.settle_spelling()  # what the daemon's spelling worker does after a start, both audiences
    out["spelling_s"] = time.perf_counter() - t
    t, c = time.perf_counter(), time.process_time()
    assert bot.embed_pending()
    out["embed_s"], out["embed_cpu_s"] = time.perf_counter() - t, time.process_time() - c
    again = GrasBot(settings, build_snapshot(settings))
    again.settle_spelling()  # timed above: this is the vectors' read alone
    t = time.perf_counter()
    assert again.embed_pending()
    out["vectors_from_cache_s"] = time.perf_counter() - t
    qs = questions(snap.vault.notes.values(), n_questions, seed=11)
    for q in qs[:20]:  # the encoder and the BM25 memo warm, as in a running daemon
        bot.search(q)
    embedder, embedded = bot.embedder, []
    assert embedder is not None
    embed = embedder.embed

    def timed(texts):  # what each search spends embedding its question, inside the search
        t = time.perf_counter()
        vectors = embed(texts)
        embedded.append((time.perf_counter() - t) * 1000)
        return vectors

    embedder.embed = timed  # type: ignore[method-assign]
    times = []
    for q in qs[20:]:  # not asked before: each one embedded
        t = time.perf_counter()
        bot.search(q, top_k=5)
        times.append((time.perf_counter() - t) * 1000)
    embedder.embed = embed  # type: ignore[method-assign]
    out["search_p50_ms"], out["search_p95_ms"] = _pcts(times)
    out["search_questions"] = len(times)
    out["search_embed_p50_ms"], out["search_embed_p95_ms"] = _pcts(embedded)
    # the same questions embedded one after the other (the encoder's weights stay in the caches),
    # then searched again with their vectors known (results not kept: each search is made again)
    times = []
    for q in qs[20:]:
        t = time.perf_counter()
        embed([q])
        times.append((time.perf_counter() - t) * 1000)
    out["embed_alone_p50_ms"], out["embed_alone_p95_ms"] = _pcts(times)
    bot.snapshot.searches.clear()
    times = []
    for q in qs[20:]:
        t = time.perf_counter()
        bot.search(q, top_k=5)
        times.append((time.perf_counter() - t) * 1000)
    out["search_known_p50_ms"], out["search_known_p95_ms"] = _pcts(times)
    # what choosing passages by meaning too adds to a search (it is part of the times above):
    # the same grounded results' passages, with the sections' cosines and by words alone
    index, sections = bot.snapshot.index("visitor"), bot.snapshot.semantic["visitor"]
    grounded = [(q, r) for q in qs[20:] if (r := bot.search(q, top_k=5)).grounded]
    for label, semantic in (("passages_meaning", sections), ("passages_words", None)):
        times = []
        for q, r in grounded:
            t = time.perf_counter()
            bot._with_passages(q, r, index, None, semantic, None)  # the index's own question vectors, as a visitor's search reads
            times.append((time.perf_counter() - t) * 1000)
        out[f"{label}_p50_ms"], out[f"{label}_p95_ms"] = _pcts(times)
    out["passages_questions"] = len(grounded)
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out  # the cache stays: daemon_semantic_memory starts from it


def daemon_semantic_memory(n: int, work: Path) -> dict:
    """A daemon's peak RSS with meaning on, alone in its process: a restart (index and vectors
    from the cache measure_semantic left), the spelling worker as a daemon runs it (it reads the
    spelling file a run before wrote, or builds and writes it), 100 searches with meaning, one
    reload."""
    from generate_vault import questions
    from grasbot import Settings
    from grasbot._engine import GrasBot
    from grasbot.store import spellings

    importlib.import_module("grasbot.server.app")  # a daemon's own code, in its memory (the package imports on first use)
    root = _vault_for(n, work)
    settings = Settings.load(env={}, vault_dir=root, cache_dir=work / f"semantic-cache-{n}", question_log="off")
    bot = GrasBot.open(settings)
    spelling_file = work / f"semantic-cache-{n}" / spellings.FILENAME
    read_file = spelling_file.exists()
    t = time.perf_counter()
    bot.start_spelling()  # the daemon's worker: both audiences, then the file written if it read none
    while bot._spelling_thread is not None:
        time.sleep(0.01)
    spelled = time.perf_counter() - t
    t = time.perf_counter()
    assert bot.embed_pending()
    ready = time.perf_counter() - t
    for q in questions(bot.snapshot.vault.notes.values(), 100, seed=13):
        bot.search(q)
    bot.reload()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"peak_rss_mb": peak, "vectors_ready_s": ready, "spelling_s": spelled, "spelling_read_from_file": read_file}


def _prompt_building(index, qs: list[str]) -> dict:
    """What answering adds to a search: choosing the sources' passages under the default budget
    and writing the prompt (`GrasBot._with_passages` then `build_prompt`), per grounded question,
    after 20 warm-up questions; a note's first time as a source (its passages' stems counted
    once) falls in the timed ones, as in a daemon."""
    from grasbot import Settings, search
    from grasbot.answer.passages import choose_passages
    from grasbot.answer.prompt import build_prompt

    budget = Settings().prompt_budget
    results = [(q, search(q, index, top_k=5, min_score=4.0)) for q in qs]
    grounded = [(q, [(s.path, s.url) for s in r.sources]) for q, r in results if r.grounded]

    def build(q, sources) -> None:
        build_prompt(q, choose_passages(q, sources, index, budget=budget), grounded=True)

    for q, sources in grounded[:20]:
        build(q, sources)
    out = {"prompt_questions": len(grounded)}
    for run in ("prompt", "prompt_again"):  # again: every source's passage stems already counted
        times = []
        for q, sources in grounded:
            t = time.perf_counter()
            build(q, sources)
            times.append((time.perf_counter() - t) * 1000)
        out[f"{run}_p50_ms"], out[f"{run}_p95_ms"] = _pcts(times)
        out[f"{run}_max_ms"] = max(times)
    return out


def daemon_memory(n: int, work: Path, warm: bool) -> dict:
    """A daemon's peak RSS, alone in its process: start (from the cache when `warm`, which
    measure() wrote), 100 searches, one reload. Nothing else lives here, no baseline."""
    from generate_vault import questions
    from grasbot import Settings, build_snapshot, search

    importlib.import_module("grasbot.server.app")  # a daemon's own code, in its memory (the package imports on first use)
    root = _vault_for(n, work)
    settings = Settings.load(env={}, vault_dir=root)
    snap = build_snapshot(settings, cache_dir=work / f"cache-{n}" if warm else None)
    index = snap.index("visitor")
    for q in questions(snap.vault.notes.values(), 100, seed=11):
        search(q, index, top_k=5, min_score=4.0)
    snap = build_snapshot(settings, snap)
    return {
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        # a cold start of a large vault forks workers (grasbot.store.parallel): the largest one's peak
        "workers_peak_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    }


def serve_start(n: int, work: Path) -> dict:
    """What an author waits for: `grasbot serve` launched until it prints that it listens (the
    imports, the token, the load, the app), on a first start (no cache), a restart on the
    unchanged vault, and a restart after one note changed; plus how long the daemon, already
    serving, then took to write the index cache (its log line)."""
    import signal

    root = _vault_for(n, work)
    if n == 41:  # a note is changed below: a copy, never the repository's own vault
        root = Path(shutil.copytree(root, work / "vault-41-copy", dirs_exist_ok=True))
    cache = work / f"serve-cache-{n}"
    shutil.rmtree(cache, ignore_errors=True)
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO / "daemon"),
        "GRASBOT_TOKEN": "b" * 32,
        "GRASBOT_CACHE_DIR": str(cache),
        "GRASBOT_QUESTION_LOG": "off",
        "OLLAMA_HOST": "http://127.0.0.1:9",
    }

    def start() -> tuple[float, float | None]:
        t = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "grasbot._cli", "serve", "--port", "0", "--vault", str(root)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        line = proc.stdout.readline()
        ready = time.perf_counter() - t
        if not line.startswith("GrasBot écoute sur"):
            proc.kill()
            raise SystemExit(f"grasbot serve did not start: {line!r} {proc.stderr.read()}")
        time.sleep(1.0)  # serving: the cache, if any, is written meanwhile; SIGTERM waits for it
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
        written = [ln.split("cache de l'index écrit en ")[1].split()[0] for ln in err.splitlines() if "cache de l'index écrit en " in ln]
        return ready, float(written[0]) if written else None

    out: dict = {}
    out["serve_cold_s"], out["serve_cold_write_s"] = start()
    out["serve_warm_s"], _ = start()
    path = root / sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md"))[n // 3]
    original = path.read_bytes()
    try:
        path.write_bytes(original + "\nUne ligne ajoutée avant un redémarrage.\n".encode())
        out["serve_changed_s"], out["serve_changed_write_s"] = start()
    finally:
        path.write_bytes(original)
    shutil.rmtree(cache, ignore_errors=True)
    return out


def _bundled_questions(mode: str) -> list[str]:
    """The questions the clients ask of the bundled vault. "repeated": 400 questions drawn again
    and again (a site whose visitors ask the same things: the daemon's kept results answer them);
    "new": every call a question not asked before in the run."""
    from generate_vault import questions
    from grasbot import Settings, build_snapshot

    notes = build_snapshot(Settings.load(env={})).index("visitor").notes.values()
    if mode == "repeated":
        return questions(notes, 400, seed=11)
    return [q for q in dict.fromkeys(questions(notes, 60_000, seed=12)) if len(q) <= 500]


async def _load_clients(url: str, seconds: float, clients: int, mode: str) -> dict:
    """`clients` concurrent keep-alive connections calling `search` for `seconds`."""
    import aiohttp

    asked = _bundled_questions(mode)
    fresh = iter(asked)
    done = errors = 0
    stop = time.perf_counter() + seconds

    async def client(k: int) -> None:
        nonlocal done, errors
        rng = random.Random(k)
        async with aiohttp.ClientSession() as session:
            i = 0
            while time.perf_counter() < stop:
                q = rng.choice(asked) if mode == "repeated" else next(fresh, None)
                if q is None:
                    raise SystemExit(f"only {len(asked)} new questions: lengthen the list")
                body = {"jsonrpc": "2.0", "id": i, "method": "search", "params": {"q": q}}
                async with session.post(url, json=body) as resp:
                    payload = await resp.json()
                    if "result" in payload:
                        done += 1
                    else:
                        errors += 1
                i += 1

    t = time.perf_counter()
    await asyncio.gather(*(client(k) for k in range(clients)))
    return {"clients": clients, "calls": done, "errors": errors, "elapsed": time.perf_counter() - t, "questions": len(asked)}


def _wrk_bodies(mode: str, work: Path) -> tuple[Path, int]:
    """The calls' bodies for search.lua, one a line, written before the daemon's CPU is counted."""
    bodies = work / f"bodies-{mode}.jsonl"
    asked = _bundled_questions(mode)
    bodies.write_text(
        "".join(json.dumps({"jsonrpc": "2.0", "id": i, "method": "search", "params": {"q": q}}, ensure_ascii=False) + "\n" for i, q in enumerate(asked)),
        encoding="utf-8",
    )
    return bodies, len(asked)


async def _wrk_clients(url: str, seconds: float, clients: int, mode: str, bodies: tuple[Path, int]) -> dict:
    """The same calls as `_load_clients`, made by wrk (a load generator in C, scripted by
    search.lua): one wrk thread, `clients` keep-alive connections."""
    bodies, asked = bodies
    proc = await asyncio.create_subprocess_exec(
        "wrk",
        "-t1",
        f"-c{clients}",
        f"-d{seconds:g}s",
        "-s",
        str(HERE / "search.lua"),
        url,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "GRASBOT_BODIES": str(bodies), "GRASBOT_MODE": mode},
    )
    out, _ = await proc.communicate()
    line = next((ln for ln in out.decode().splitlines() if ln.startswith("GRASBOT ")), None)
    if proc.returncode or line is None:
        raise SystemExit(f"wrk failed (exit {proc.returncode}):\n{out.decode()}")
    r = json.loads(line.removeprefix("GRASBOT "))
    if r["exhausted"]:
        raise SystemExit(f"only {asked} new questions: lengthen the list")
    return {"clients": clients, "calls": r["calls"], "errors": r["errors"] + r["socket_errors"], "elapsed": r["elapsed"], "questions": asked}


async def _daemon_throughput(seconds: float, clients: int, question_log: Path | None, mode: str, *, wrk: Path | None = None, semantic: str = "bundled") -> dict:
    """`search` calls a second over loopback: the daemon in this process, the clients in
    another (on one process they would share its core and measure themselves as much).
    `question_log`: where visitors' questions are logged (a fresh file), or None for no log;
    `mode`: which questions (`_bundled_questions`); `wrk`: a folder for wrk's files, wrk making
    the calls, or None for the Python clients (aiohttp), which cost as much CPU as the daemon."""
    import logging

    from aiohttp import web

    from grasbot import Settings
    from grasbot.server.app import create_app, runner_kwargs

    bodies = _wrk_bodies(mode, wrk) if wrk is not None else None
    # as `grasbot serve` runs: its access log on (one INFO line a request), written to /dev/null
    logging.basicConfig(level=logging.INFO, stream=open(os.devnull, "w"), force=True)
    settings = Settings.load(env={}, port=0, question_log=question_log if question_log else "off", semantic=semantic)
    app = create_app(settings)
    runner = web.AppRunner(app, **runner_kwargs())
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    from grasbot.server.state import BOT

    for _ in range(1200):  # measured once the worker has embedded the vault: searches with meaning
        if semantic == "off" or app[BOT].snapshot.semantic:
            break
        await asyncio.sleep(0.05)
    port = site._server.sockets[0].getsockname()[1]
    url = f"http://127.0.0.1:{port}/rpc"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = time.process_time()
    if wrk is not None:
        r = await _wrk_clients(url, seconds, clients, mode, bodies)
    else:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--_clients",
            url,
            "--clients",
            str(clients),
            "--_seconds",
            str(seconds),
            "--_mode",
            mode,
            stdout=asyncio.subprocess.PIPE,
        )
        out, _ = await proc.communicate()
        r = json.loads(out)
    cpu = time.process_time() - cpu  # the daemon's own CPU (threads included), clients excluded
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    logged = None
    if question_log is not None:  # read apart, so as not to make the log write out its queue
        import sqlite3

        with contextlib.closing(sqlite3.connect(question_log)) as conn:
            logged = conn.execute("SELECT COUNT(*) FROM questions").fetchone()[0]
    await runner.cleanup()
    calls = max(1, r["calls"])
    return {
        "clients": clients,
        "calls_per_s": r["calls"] / r["elapsed"],
        "errors": r["errors"],
        "server_cpu_ms_per_call": cpu * 1000 / calls,
        "client_cpu_ms_per_call": (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000 / calls,
        "logged_when_calls_ended": logged,
        "questions": r["questions"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="GrasBot benchmarks (not part of the test suite).")
    parser.add_argument("--sizes", default="41,1000,10000,50000", help="comma-separated vault sizes; 41 is the bundled vault")
    parser.add_argument("--questions", type=int, default=400)
    parser.add_argument("--work", type=Path, default=Path("/tmp/grasbot-bench"))
    parser.add_argument("--no-baseline", action="store_true", help="skip rank-bm25")
    parser.add_argument("--no-daemon", action="store_true", help="skip the loopback throughput")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument(
        "--python-clients",
        action="store_true",
        help="make the daemon's calls with aiohttp clients even when wrk is installed (they cost about as much CPU as the daemon)",
    )
    parser.add_argument("--semantic-sizes", default="41,1000,10000", help="sizes at which the semantic signal is measured ('' for none)")
    parser.add_argument("--_one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--_semantic", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--_semantic_memory", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--_memory", help=argparse.SUPPRESS)  # "N,cold" or "N,warm"
    parser.add_argument("--no-serve", action="store_true", help="skip timing `grasbot serve` until it listens")
    parser.add_argument("--_clients", help=argparse.SUPPRESS)
    parser.add_argument("--seconds", type=float, default=5.0, help="how long each daemon run lasts")
    parser.add_argument("--_seconds", type=float, default=5.0, help=argparse.SUPPRESS)
    parser.add_argument("--_mode", default="repeated", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args._clients:
        print(json.dumps(asyncio.run(_load_clients(args._clients, args._seconds, args.clients, args._mode))))
        return
    args.work.mkdir(parents=True, exist_ok=True)
    if args._one is not None:
        print(json.dumps(measure(args._one, args.work, args.questions, not args.no_baseline)))
        return
    if args._semantic is not None:
        print(json.dumps(measure_semantic(args._semantic, args.work, args.questions)))
        return
    if args._semantic_memory is not None:
        print(json.dumps(daemon_semantic_memory(args._semantic_memory, args.work)))
        return
    if args._memory:
        n, how = args._memory.split(",")
        print(json.dumps(daemon_memory(int(n), args.work, how == "warm")))
        return
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores ({_cpu_model()}), load average {os.getloadavg()[0]:.1f}", flush=True)
    for n in [int(s) for s in args.sizes.split(",") if s.strip()]:
        cmd = [sys.executable, __file__, "--_one", str(n), "--questions", str(args.questions), "--work", str(args.work)]
        if args.no_baseline:
            cmd.append("--no-baseline")
        r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        for how in ("cold", "warm"):
            mem = [sys.executable, __file__, "--_memory", f"{n},{how}", "--work", str(args.work)]
            used = json.loads(subprocess.run(mem, check=True, capture_output=True, text=True).stdout)
            r[f"daemon_{how}_rss_mb"], r[f"workers_{how}_rss_mb"] = used["peak_rss_mb"], used["workers_peak_rss_mb"]
        if not args.no_serve:
            r.update(serve_start(n, args.work))
        line = (
            f"N={r['notes']:>6}: cold {r['cold_s']:.2f} s (CPU {r['cold_cpu_s']:.2f} s; with cache write "
            f"{r['cold_with_cache_write_s']:.2f} s), warm {r['warm_s']:.2f} s (CPU {r['warm_cpu_s']:.2f} s), "
            f"search ({r['search_questions']} q) p50 {r['search_p50_ms']:.2f} ms p95 {r['search_p95_ms']:.2f} ms "
            f"(CPU p50 {r['search_cpu_p50_ms']:.2f} ms p95 {r['search_cpu_p95_ms']:.2f} ms), "
            f"building the prompt ({r['prompt_questions']} grounded q) p50 {r['prompt_p50_ms']:.2f} ms "
            f"p95 {r['prompt_p95_ms']:.2f} ms max {r['prompt_max_ms']:.2f} ms (asked again: p50 "
            f"{r['prompt_again_p50_ms']:.2f} ms p95 {r['prompt_again_p95_ms']:.2f} ms max {r['prompt_again_max_ms']:.2f} ms), "
            f"reload one note {r['reload_one_ms']:.0f} ms (CPU {r['reload_one_cpu_ms']:.0f} ms), "
            f"the first abbreviation's lookup {r['vocabulary_ms']:.1f} ms ({r['vocabulary_terms']} terms sorted, once an index), "
            f"daemon peak RSS {r['daemon_cold_rss_mb']:.0f} MB (cold start) / {r['daemon_warm_rss_mb']:.0f} MB "
            f"(start from the cache), its load workers' peak {r['workers_cold_rss_mb']:.0f} MB each (cold start), "
            f"this benchmark process's {r['peak_rss_mb']:.0f} MB"
        )
        if "rank_bm25_p50_ms" in r:
            line += (
                f" | rank-bm25 get_scores p50 {r['rank_bm25_p50_ms']:.2f} ms p95 {r['rank_bm25_p95_ms']:.2f} ms "
                f"({r['rank_bm25_questions']} q), ratio p50 {r['rank_bm25_p50_ms'] / r['search_p50_ms']:.1f}x"
            )
        print(line, flush=True)
        if not args.no_serve:

            def then(key: str, r: dict = r) -> str:
                return f" (then the cache written while serving: {r[key]:.2f} s)" if r[key] is not None else ""

            print(
                f"N={r['notes']:>6}: grasbot serve listening after {r['serve_cold_s']:.2f} s on a first start"
                f"{then('serve_cold_write_s')}, {r['serve_warm_s']:.2f} s on a restart, "
                f"{r['serve_changed_s']:.2f} s on a restart after one note changed{then('serve_changed_write_s')}",
                flush=True,
            )
    from grasbot.store import spellings

    for n in [int(s) for s in args.semantic_sizes.split(",") if s.strip()]:
        cmd = [sys.executable, __file__, "--_semantic", str(n), "--questions", str(args.questions), "--work", str(args.work)]
        r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        mem = [sys.executable, __file__, "--_semantic_memory", str(n), "--work", str(args.work)]
        (args.work / f"semantic-cache-{n}" / spellings.FILENAME).unlink(missing_ok=True)
        daemon = json.loads(subprocess.run(mem, check=True, capture_output=True, text=True).stdout)  # builds, writes
        again = json.loads(subprocess.run(mem, check=True, capture_output=True, text=True).stdout)  # reads the file
        print(
            f"N={r['n']:>6}, semantic (bundled encoder): spelling vectors built in {r['spelling_s']:.1f} s (both audiences, "
            f"lengths included), vault embedded in {r['embed_s']:.1f} s (CPU {r['embed_cpu_s']:.1f} s), "
            f"vectors read from the cache in {r['vectors_from_cache_s']:.2f} s; search with meaning ({r['search_questions']} new q, "
            f"each embedded) p50 {r['search_p50_ms']:.2f} ms p95 {r['search_p95_ms']:.2f} ms, of which embedding the question "
            f"p50 {r['search_embed_p50_ms']:.2f} ms p95 {r['search_embed_p95_ms']:.2f} ms (the same questions embedded one after "
            f"the other: p50 {r['embed_alone_p50_ms']:.2f} ms p95 {r['embed_alone_p95_ms']:.2f} ms; searched again, their vectors known: "
            f"p50 {r['search_known_p50_ms']:.2f} ms p95 {r['search_known_p95_ms']:.2f} ms); daemon peak RSS "
            f"{daemon['peak_rss_mb']:.0f} MB (a restart: spelling built and written in {daemon['spelling_s']:.1f} s, then vectors "
            f"ready {daemon['vectors_ready_s']:.2f} s after, 100 searches, a reload), {again['peak_rss_mb']:.0f} MB at the next "
            f"restart (spelling read in {again['spelling_s']:.2f} s); this benchmark process's {r['peak_rss_mb']:.0f} MB; of a search, its passages "
            f"({r['passages_questions']} grounded q) chosen by meaning too p50 {r['passages_meaning_p50_ms']:.2f} ms "
            f"p95 {r['passages_meaning_p95_ms']:.2f} ms, by words alone p50 {r['passages_words_p50_ms']:.2f} ms "
            f"p95 {r['passages_words_p95_ms']:.2f} ms",
            flush=True,
        )
    if not args.no_daemon:
        log = args.work / "questions.sqlite3"
        wrk = None if args.python_clients or shutil.which("wrk") is None else args.work
        caller = "wrk (one thread)" if wrk else "aiohttp clients (install wrk: they are lighter)"
        for what, path, semantic in (
            ("question log on", log, "bundled"),
            ("question log on, semantic off", log, "off"),
            ("question log off", None, "bundled"),
        ):
            for mode in ("repeated", "new"):
                for stale in args.work.glob("questions.sqlite3*"):
                    stale.unlink()
                r = asyncio.run(_daemon_throughput(args.seconds, args.clients, path, mode, wrk=wrk, semantic=semantic))
                asked = "400 questions asked again and again" if mode == "repeated" else "every question new"
                print(
                    f"daemon, bundled vault, loopback, {what}, {asked}: {r['calls_per_s']:.0f} search calls/s "
                    f"with {r['clients']} connections from {caller} in another process ({r['errors']} errors); "
                    f"daemon CPU {r['server_cpu_ms_per_call']:.2f} ms a call, i.e. "
                    f"{1000 / r['server_cpu_ms_per_call']:.0f} calls/s for one core; clients' CPU "
                    f"{r['client_cpu_ms_per_call']:.2f} ms a call; "
                    + (f"questions in the log when the calls ended: {r['logged_when_calls_ended']}; " if path else "")
                    + f"load average {os.getloadavg()[0]:.1f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
