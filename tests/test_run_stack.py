"""The stack the plugin's TypeScript tests start (`support/run_stack.py`) leaves nothing behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_the_stack_leaves_nothing_in_the_home_of_whoever_runs_it(tmp_path):
    """Each run of the browser tests left a folder of the daemon's state (the hidden notes'
    file) in ~/.local/state/grasbot, and every later start of a moved vault read them all."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env["HOME"] = str(home)
    stack = subprocess.Popen(
        [sys.executable, str(REPO / "tests" / "support" / "run_stack.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert stack.stdout is not None and stack.stdin is not None
        ready = json.loads(stack.stdout.readline())
        vault = Path(ready["vault"])
        assert vault.is_dir()
        stack.stdin.close()  # ends it
        assert stack.wait(60) == 0
    finally:
        if stack.poll() is None:
            stack.kill()
    assert not vault.parent.exists()  # its temporary folder removed
    assert [p for p in home.rglob("*")] == []  # nothing written under the home: no state, cache or config folder
