#!/usr/bin/env python3
"""Every dev question of every vault ranked by the code as it stands, saved; two saved runs compared.

A change to ranking is judged on all the dev sets at once, question by question: the
questions it puts first that the code before did not, and the reverse, on each vault's tune
parts (what a change may be chosen on) and test parts (never tuned on), apart. A difference
of one to three questions on a part is what chance alone gives; the sign test says when it
is more. Run it on the code before and after the change:

    .venv/bin/python eval/dev_ranks.py run before.json
    .venv/bin/python eval/dev_ranks.py run after.json      # the code changed
    .venv/bin/python eval/dev_ranks.py compare before.json after.json
    .venv/bin/python eval/dev_ranks.py pooled after.json     # every set together, beside plain BM25

`run` ranks as `grasbot eval` does (a visitor, the first ten, a follow-up with its earlier
questions), meaning included, and the plain BM25 beside it on the same questions; `pooled`
says how the two do on each vault's tune and test parts over every set, and on which set's
part GrasBot ranks the right note first less often than the plain BM25. The personal vault
is `../shared/vaults/notes-publiques` beside the checkout; its sets are left out, and said
so, when it is absent.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from grasbot import GrasBot, Settings
from grasbot._evaluate import Case, PlainBM25, evaluate, read_cases, sign_test

ROOT = Path(__file__).resolve().parents[1]
EVAL = ROOT / "eval"
# vault -> (its folder, or None for the bundled one; default visibility; the question files' stems)
VAULTS: dict[str, tuple[Path | None, str | None, tuple[str, ...]]] = {
    "curated": (None, None, ("grasbot",)),
    "personal": (ROOT.parent / "shared" / "vaults" / "notes-publiques", "public", ("notes-publiques", "passages")),
    "documentation": (EVAL / "vaults" / "docs-fr", "public", ("docs-fr",)),
    "reference": (EVAL / "vaults" / "reference-fr", "public", ("reference-fr",)),
}
PARTS = ("tune", "test")


def question_files(stems: Iterable[str], folder: Path = EVAL) -> list[tuple[Path, str]]:
    """(file, part) of every tune and test file of these stems: `grasbot.tune.tsv`,
    `grasbot.set2.test.tsv`, `passages3.tune.tsv`…"""
    found = []
    for stem in stems:
        for part in PARTS:
            found += [(path, part) for path in sorted(folder.glob(f"{stem}*.{part}.tsv")) if re.fullmatch(rf"{re.escape(stem)}\d*", path.name.split(".")[0])]
    return found


def rank_files(bot: GrasBot, vault: str, files: Iterable[tuple[Path, str]]) -> dict[str, dict]:
    """{"file:line": {vault, set, part, follow_up, rank, plain}} for each question of `files`:
    the rank of its first expected note by GrasBot and by the plain BM25 over the visitor's
    notes (`grasbot eval`'s), None when it is not in the first ten."""

    def ranked(case: Case) -> list[str]:
        return [s.path for s in bot.search(case.question, top_k=10, audience="visitor", history=case.turns).sources]

    index = bot.snapshot.index("visitor")
    plain = PlainBM25(index.notes, index.readable_body)
    ranks = {}
    for path, part in files:
        family = "long notes" if path.name.startswith("passages") else vault
        cases = read_cases(path)
        baseline = evaluate(cases, lambda case: plain.rank(case.one_text)).outcomes
        for outcome, other in zip(evaluate(cases, ranked).outcomes, baseline, strict=True):
            case = outcome.case
            row = {"vault": vault, "set": family, "part": part, "follow_up": bool(case.history)}
            ranks[f"{path.name}:{case.line}"] = {**row, "rank": outcome.rank, "plain": other.rank}
    return ranks


def run(out: Path) -> int:
    ranks: dict[str, dict] = {}
    for vault, (folder, visibility, stems) in VAULTS.items():
        if folder is not None and not folder.is_dir():
            print(f"dev_ranks: {folder} is absent, its questions are left out", file=sys.stderr)
            continue
        options = {"vault_dir": folder, "default_visibility": visibility} if folder is not None else {}
        bot = GrasBot.open(Settings.load(**options))
        bot.embed_pending()  # meaning beside words, as the daemon has it once its worker is done
        ranks.update(rank_files(bot, vault, question_files(stems)))
    out.write_text(json.dumps(ranks, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"{len(ranks)} questions ranked, in {out}")
    return 0


def _within(rank: int | None, k: int) -> bool:
    return rank is not None and rank <= k


def compare(before: Mapping[str, dict], after: Mapping[str, dict]) -> list[dict]:
    """For each set and part, then each part over all sets: the questions both runs ranked,
    hit@1 and hit@5 before and after, the questions first after and not before (won), the
    reverse (lost), and the sign test's p on those."""
    shared = [key for key in before if key in after]
    groups: dict[tuple[str, str], list[str]] = {}
    for key in shared:
        row = before[key]
        groups.setdefault((row["set"], row["part"]), []).append(key)
        groups.setdefault(("all", row["part"]), []).append(key)
    order = sorted(groups, key=lambda g: (g[0] == "all", g[0], PARTS.index(g[1])))
    rows = []
    for name, part in order:
        keys = groups[(name, part)]
        was = [before[k]["rank"] for k in keys]
        now = [after[k]["rank"] for k in keys]
        firsts = [(_within(a, 1), _within(b, 1)) for a, b in zip(was, now, strict=True)]
        won = sum(1 for a, b in firsts if b and not a)
        lost = sum(1 for a, b in firsts if a and not b)
        rows.append(
            {
                "set": name,
                "part": part,
                "questions": len(keys),
                "hit@1": (sum(_within(r, 1) for r in was), sum(_within(r, 1) for r in now)),
                "hit@5": (sum(_within(r, 5) for r in was), sum(_within(r, 5) for r in now)),
                "won": won,
                "lost": lost,
                "p": round(sign_test(won, lost), 4),
            }
        )
    return rows


def pooled(ranks: Mapping[str, dict]) -> tuple[list[dict], list[dict]]:
    """Each vault's tune and test parts over every set: questions, hit@1 and hit@5 of GrasBot
    and of the plain BM25. Then the same for each set's part (its file without `.tune.tsv`):
    the issue's bar is GrasBot first at least as often on every one."""
    if any("plain" not in row for row in ranks.values()):
        raise SystemExit("dev_ranks: these ranks have no plain BM25 beside them (saved by an older `run`): run it again")
    totals: dict[tuple[str, str], list[dict]] = {}
    parts: dict[tuple[str, str], list[dict]] = {}
    for key, row in ranks.items():
        totals.setdefault((row["set"], row["part"]), []).append(row)
        parts.setdefault((key.rsplit(":", 1)[0].removesuffix(f".{row['part']}.tsv"), row["part"]), []).append(row)

    def figures(rows: list[dict]) -> dict:
        return {
            "questions": len(rows),
            "hit@1": sum(_within(r["rank"], 1) for r in rows),
            "hit@5": sum(_within(r["rank"], 5) for r in rows),
            "plain hit@1": sum(_within(r["plain"], 1) for r in rows),
            "plain hit@5": sum(_within(r["plain"], 5) for r in rows),
        }

    order = sorted(totals, key=lambda g: (g[0], PARTS.index(g[1])))
    overall = [{"set": name, "part": part, **figures(totals[(name, part)])} for name, part in order]
    return overall, [{"file": name, "part": part, **figures(rows)} for (name, part), rows in sorted(parts.items())]


def _read(path: Path) -> dict[str, dict]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"dev_ranks: cannot read {path}: {exc}") from exc


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("run", help="rank every dev question, save the ranks").add_argument("out", type=Path)
    both = commands.add_parser("compare", help="two saved runs, question by question")
    both.add_argument("before", type=Path)
    both.add_argument("after", type=Path)
    commands.add_parser("pooled", help="one saved run, every set together, beside the plain BM25").add_argument("ranks", type=Path)
    args = parser.parse_args(argv)
    if args.command == "run":
        return run(args.out)
    if args.command == "pooled":
        overall, parts = pooled(_read(args.ranks))
        behind = [row for row in parts if row["hit@1"] < row["plain hit@1"]]
        for row in overall:
            n = row["questions"]
            print(
                f"{row['set']:>13} {row['part']:<4} {n:4} questions  hit@1 {row['hit@1'] / n:.3f} hit@5 {row['hit@5'] / n:.3f}"
                f"  (plain BM25 {row['plain hit@1'] / n:.3f} / {row['plain hit@5'] / n:.3f})"
            )
        print(f"first less often than the plain BM25 on {len(behind)} of {len(parts)} set parts" + (":" if behind else ""))
        for row in behind:
            print(f"  {row['file']} {row['part']}: {row['hit@1']} against {row['plain hit@1']} of {row['questions']}")
        return 0
    for row in compare(_read(args.before), _read(args.after)):
        (b1, a1), (b5, a5) = row["hit@1"], row["hit@5"]
        print(
            f"{row['set']:>13} {row['part']:<4} {row['questions']:4} questions  hit@1 {b1:4} → {a1:4} "
            f"(+{row['won']} / −{row['lost']}, p {row['p']:.3f})  hit@5 {b5:4} → {a5:4}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
