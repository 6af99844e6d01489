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

`run` ranks as `grasbot eval` does (a visitor, the first ten, a follow-up with its earlier
questions), meaning included. The personal vault is `../shared/vaults/notes-publiques` beside
the checkout; its sets are left out, and said so, when it is absent.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from grasbot import GrasBot, Settings
from grasbot._evaluate import Case, evaluate, read_cases, sign_test

ROOT = Path(__file__).resolve().parents[1]
EVAL = ROOT / "eval"
# vault -> (its folder, or None for the bundled one; default visibility; the question files' stems)
VAULTS: dict[str, tuple[Path | None, str | None, tuple[str, ...]]] = {
    "curated": (None, None, ("grasbot",)),
    "personal": (ROOT.parent / "shared" / "vaults" / "notes-publiques", "public", ("notes-publiques", "passages")),
    "documentation": (EVAL / "vaults" / "docs-fr", "public", ("docs-fr",)),
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
    """{"file:line": {vault, set, part, follow_up, rank}} for each question of `files`; rank
    None when no expected note is in the first ten."""

    def ranked(case: Case) -> list[str]:
        return [s.path for s in bot.search(case.question, top_k=10, audience="visitor", history=case.turns).sources]

    ranks = {}
    for path, part in files:
        family = "long notes" if path.name.startswith("passages") else vault
        for outcome in evaluate(read_cases(path), ranked).outcomes:
            case = outcome.case
            ranks[f"{path.name}:{case.line}"] = {"vault": vault, "set": family, "part": part, "follow_up": bool(case.history), "rank": outcome.rank}
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
    args = parser.parse_args(argv)
    if args.command == "run":
        return run(args.out)
    for row in compare(_read(args.before), _read(args.after)):
        (b1, a1), (b5, a5) = row["hit@1"], row["hit@5"]
        print(
            f"{row['set']:>13} {row['part']:<4} {row['questions']:4} questions  hit@1 {b1:4} → {a1:4} "
            f"(+{row['won']} / −{row['lost']}, p {row['p']:.3f})  hit@5 {b5:4} → {a5:4}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
