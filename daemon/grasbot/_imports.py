"""The packages a daemon imports after it listens, imported by one thread at a time.

`grasbot serve` listens before it imports numpy, jsonschema, jsonrpcserver and ollama (half a
second of a start), then imports them in worker threads while requests may come. CPython
imports a package whose modules import each other wrongly when two threads import it at once:
jsonschema was left half made (« cannot import name 'Draft3Validator' from partially
initialized module 'jsonschema.validators' ») and every later question that validated its
parameters failed. Threads that may meet import these here, under one lock, and requests
wait for the server's imports (`server.middleware.after_imports`).
"""

from __future__ import annotations

import importlib
import logging
import threading

__all__ = ["import_once"]

log = logging.getLogger("grasbot")

_lock = threading.Lock()


def import_once(*names: str) -> None:
    """Import `names` in order, no other thread importing through here meanwhile. One that
    cannot be imported is logged and left to the call that needs it, which says what is wrong."""
    with _lock:
        for name in names:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - a start must not fail on what an answer needs
                log.exception("le paquet %s ne peut pas être importé", name)
