"""The chat's browser tests' driver and words (tests/e2e/test_chat_page.py, test_widget.py).

`drive()` runs tests/browser/chat_page.mjs in Debian's headless Chromium on a list of steps and
returns its report, having checked what must never happen on any page: a request outside the
expected origins, a script error, a CSP violation, markup from the server made into elements.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile

import pytest

from support.bots import REPO
from support.nginx import IMG_MARKUP

DRIVER = REPO / "tests" / "browser" / "chat_page.mjs"
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = REPO / "test-artifacts"
BROWSER_TIMEOUT = 180.0

#: Alone, it finds nothing in the vault; after QUESTION, it is about the potager.
FOLLOWUP = "C'est robuste ?"
HOSTILE_REPLY = "Voici du code <script>window.__grasbotInjected = 4</script> et " + IMG_MARKUP + " en texte."


def browser_tools() -> tuple[str, str]:
    """node and chromium, or a failure that says how to get them (a skip would pass CI)."""
    node = shutil.which("node")
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail("chromium is not installed: run `bash scripts/setup.sh --test` (it installs Debian's chromium)", pytrace=False)
    for package in ("playwright-core", "axe-core"):
        if not node or not (REPO / "node_modules" / package).is_dir():
            pytest.fail(f"node or {package} is missing: run `npm ci` at the repository root", pytrace=False)
    return node, CHROMIUM


async def drive(url: str, steps: list[dict], *, origins: tuple[str, ...], csp_violations: bool = False, **options) -> dict:
    """Run the driver's steps on `url`; its report, checked for what must never happen: a
    request outside `origins`, a script error, a dialog, a CSP violation (unless a control
    expects `csp_violations`), injected markup, an inline style."""
    node, chromium = browser_tools()
    ARTIFACTS.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="grasbot-chromium-") as profile:
        config = {"url": url, "steps": steps, "userDataDir": profile, "chromium": chromium, "artifacts": str(ARTIFACTS), **options}
        proc = await asyncio.create_subprocess_exec(
            node,
            str(DRIVER),
            json.dumps(config),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=REPO,
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(), BROWSER_TIMEOUT)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    assert proc.returncode == 0, f"the browser driver failed:\n{err.decode(errors='replace')}"
    report = json.loads(out.decode().strip().splitlines()[-1])
    assert report["pageStatus"] == 200, f"GET {url} answered {report['pageStatus']}"
    outside = [u for u in report["requests"] if not u.startswith(tuple(o + "/" for o in origins))]
    assert not outside, f"the page requested something outside {origins}: {outside}"
    assert report["pageErrors"] == [], report["pageErrors"]
    assert report["dialogs"] == []
    for name, snap in report["snapshots"].items():
        if not csp_violations:
            assert snap["cspViolations"] == [], (name, snap["cspViolations"])
            assert snap["styleAttributes"] == 0, (name, snap["styled"])  # no inline style: a strict CSP would block it
        assert snap["injectedGlobal"] is None, name
        assert snap["injectedElements"] == 0, (name, snap["injectedWhat"])
    for name, result in report["axe"].items():
        assert result["violations"] == [], (name, result["violations"])
        assert result["passes"] > 10, name  # axe ran, and found things to check
    return report


def ask(q: str, turns: int, **extra) -> list[dict]:
    return [{"do": "ask", "q": q, **extra}, {"do": "wait", "states": ["done", "error", "stopped"], "turns": turns}]


def history_sent(request: dict) -> list[dict]:
    """The turns before the question in a prompt the stand-in received (system first, question last)."""
    return [{"role": m["role"], "content": m["content"]} for m in request["messages"][1:-1]]
