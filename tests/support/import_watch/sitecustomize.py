"""Put on PYTHONPATH by tests/e2e/test_start_imports.py: a `grasbot serve` that writes, for
each module of the packages it imports after listening, when each thread began and ended
running it, in the file IMPORT_WATCH_LOG names; a thread other than the main one waits
IMPORT_WATCH_DELAY seconds before each, so that those imports last long enough for a request
to come while they run."""

import os
import threading
import time
from importlib.machinery import SourceFileLoader

_WATCHED = frozenset(os.environ.get("IMPORT_WATCH_PACKAGES", "").split(","))
_LOG = os.environ.get("IMPORT_WATCH_LOG")
_DELAY = float(os.environ.get("IMPORT_WATCH_DELAY", "0"))
_run = SourceFileLoader.exec_module


def _watched(self, module):
    package = module.__name__.partition(".")[0]
    if _LOG is None or package not in _WATCHED:
        return _run(self, module)
    thread = threading.current_thread()
    if thread is not threading.main_thread():
        time.sleep(_DELAY)
    with open(_LOG, "a", encoding="utf-8") as log:
        log.write(f"{package}\t{thread.name}\tbegin\t{time.monotonic()}\n")
    try:
        return _run(self, module)
    finally:
        with open(_LOG, "a", encoding="utf-8") as log:
            log.write(f"{package}\t{thread.name}\tend\t{time.monotonic()}\n")


SourceFileLoader.exec_module = _watched
