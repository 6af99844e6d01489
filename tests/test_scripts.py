"""What the README's two commands (`bash scripts/run.sh`, `bash scripts/test.sh`) print of their
own, beside the tools they run, is French."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from support.bots import REPO


def test_test_sh_says_each_step_in_french(tmp_path):
    """« ==> Python lint and format… » were the only English lines of the command."""
    root = tmp_path / "checkout"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "test.sh", root / "scripts" / "test.sh")
    (root / "scripts" / "setup.sh").write_text("true\n", encoding="utf-8")
    tools = root / ".venv" / "bin"
    tools.mkdir(parents=True)
    for tool in ("ruff", "mypy", "python", "npm"):  # each step a no-op
        (tools / tool).write_text("#!/bin/sh\ntrue\n", encoding="utf-8")
        (tools / tool).chmod(0o755)
    done = subprocess.run(["bash", "scripts/test.sh"], cwd=root, env={"PATH": f"{tools}:/usr/bin:/bin"}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "==> Python : lint et mise en forme (ruff : le paquet, les benchmarks, les scripts d'eval, ceux du dépôt et les tests)",
        "==> Python : vérification des types (mypy : le paquet)",
        "==> Python : tests",
        "==> TypeScript : tests",
    ]


@pytest.mark.parametrize(
    "bundle, said, code",
    [
        ('require("obsidian");' + " " * 1516, "main.js OK : 1,5 Kio, requiert obsidian", 0),
        ('require("obsidian"); require("left-pad");', 'main.js requiert "left-pad", qui n\'est pas un module externe', 1),
    ],
)
def test_the_plugins_bundle_check_speaks_french(tmp_path: Path, bundle, said, code):
    """`npm run build` (both commands run it) ended on « main.js OK: 67.9 KiB, requires obsidian »."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(REPO / "obsidian-plugin" / "scripts" / "check-bundle.mjs", tmp_path / "scripts")
    (tmp_path / "main.js").write_text(bundle, encoding="utf-8")
    done = subprocess.run(["node", str(tmp_path / "scripts" / "check-bundle.mjs")], capture_output=True, text=True, timeout=60)
    assert done.returncode == code
    assert (done.stdout + done.stderr).strip() == said
