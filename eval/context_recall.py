"""`grasbot eval` with context recall: starts the stand-in Ollama, points GrasBot at it, runs.

The stand-in (`tests/support/standin_ollama.py`) speaks Ollama's /api/chat to the real `ollama`
client and keeps every request it received, so what is measured is the prompt as sent over
the wire. Every argument goes to `grasbot eval`:

    .venv/bin/python eval/context_recall.py --questions eval/passages.tune.tsv \\
        --vault ../shared/vaults/notes-publiques --default-visibility public
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    standin = subprocess.Popen([sys.executable, str(ROOT / "tests" / "support" / "standin_ollama.py")], stdout=subprocess.PIPE, text=True)
    try:
        url = standin.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            print(f"context_recall: the stand-in Ollama did not start (said {url!r})", file=sys.stderr)
            return 2
        grasbot = [sys.executable, "-m", "grasbot._cli", "eval", *argv, "--ollama-host", url]
        env = {**os.environ, "GRASBOT_INDEX_CACHE": "off", "GRASBOT_QUESTION_LOG": "off"}
        return subprocess.run(grasbot, check=False, env=env).returncode
    finally:
        standin.terminate()
        standin.wait(timeout=10)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
