"""deploy/systemd/grasbot.service, the user unit the deployment guide ships: systemd reads it
without a complaint (`systemd-analyze verify`, which also checks that ExecStart is an
executable), and its ExecStart, run as systemd would run it, serves the vault it names, reloads
it on its ExecReload (`systemctl reload`, which the deployment guide names) and stops cleanly on
the SIGTERM `systemctl stop` sends, within the unit's TimeoutStopSec."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import urllib.request
from pathlib import Path

from grasbot import Settings, build_snapshot
from support.bots import BUNDLED_VAULT, REPO
from support.standin_ollama import unused_url

UNIT = REPO / "deploy" / "systemd" / "grasbot.service"


def unit_for(home: Path) -> str:
    """The unit as systemd reads it for a user whose home is `home` (%h), with the checkout
    and the vault where its comments say to put them."""
    (home / "grasbot").symlink_to(REPO)
    (home / "notes").symlink_to(BUNDLED_VAULT)
    return UNIT.read_text(encoding="utf-8").replace("%h", str(home))


def directive(unit: str, name: str) -> str:
    values = [line.split("=", 1)[1] for line in unit.splitlines() if line.startswith(f"{name}=")]
    assert len(values) == 1, (name, values)
    return values[0]


def test_systemd_reads_the_unit_without_a_complaint(tmp_path):
    analyze = shutil.which("systemd-analyze")
    assert analyze, "systemd-analyze is missing: bash scripts/setup.sh --test installs it (Debian's systemd)"
    unit = tmp_path / "grasbot.service"
    unit.write_text(unit_for(tmp_path), encoding="utf-8")
    done = subprocess.run([analyze, "verify", "--man=no", str(unit)], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    broken = tmp_path / "broken.service"  # the guard: a unit whose ExecStart is no executable is refused
    broken.write_text(unit.read_text(encoding="utf-8").replace("/.venv/bin/grasbot", "/.venv/bin/grasbott"), encoding="utf-8")
    assert subprocess.run([analyze, "verify", "--man=no", str(broken)], capture_output=True, timeout=60).returncode != 0


def test_its_exec_start_serves_the_vault_reloads_on_exec_reload_and_stops_cleanly_on_sigterm(tmp_path):
    unit = unit_for(tmp_path)
    command = shlex.split(directive(unit, "ExecStart"))
    assert Path(command[0]).resolve() == (REPO / ".venv" / "bin" / "grasbot").resolve() and command[1] == "serve"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRASBOT_") and k != "VAULT_DIR"}
    env.update(dict(line.split("=", 1)[1].split("=", 1) for line in unit.splitlines() if line.startswith("Environment=")))
    env.update({"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_CACHE_HOME": str(tmp_path / "cache")})
    env.update({"XDG_STATE_HOME": str(tmp_path / "state"), "OLLAMA_HOST": unused_url()})
    # the unit's own port (8765) may be taken on a test machine: any free one
    proc = subprocess.Popen([*command, "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        assert line.startswith("GrasBot écoute sur "), proc.stderr.read() if not line else line
        with urllib.request.urlopen(f"{line.split()[3]}/health", timeout=30) as resp:
            health = json.load(resp)
        public = len(build_snapshot(Settings.load(env={}, vault_dir=BUNDLED_VAULT, semantic="off")).index("visitor"))
        assert health["status"] == "ok" and health["vault_size"] == public > 0
        reload = shlex.split(directive(unit, "ExecReload").replace("$MAINPID", str(proc.pid)))  # what `systemctl --user reload grasbot` runs
        subprocess.run([shutil.which(reload[0]) or reload[0], *reload[1:]], check=True, timeout=30)
        said = next(
            (line for line in iter(proc.stderr.readline, "") if "SIGHUP : " in line and "rechargement du coffre" not in line), ""
        )  # "": the daemon ended
        assert "SIGHUP : coffre rechargé : " in said, said or "the daemon ended on SIGHUP"
        proc.send_signal(signal.SIGTERM)  # what `systemctl --user stop grasbot` sends first
        assert proc.wait(int(directive(unit, "TimeoutStopSec").removesuffix("s"))) == 0  # else systemd kills it
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(15)
    token = tmp_path / "config" / "grasbot" / "token"
    assert token.is_file() and oct(token.stat().st_mode & 0o777) == "0o600"
