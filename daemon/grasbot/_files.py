"""Writing a file whole or not at all: the index cache and the embeddings cache are rewritten
while the daemon serves, and a process may be killed at any moment."""

from __future__ import annotations

import contextlib
import glob
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

#: Seconds after which a partial file is one a killed process left (a write takes seconds).
STALE = 3600.0


@contextlib.contextmanager
def atomic_write(path: Path, suffix: str = ".tmp") -> Iterator[BinaryIO]:
    """A file whose bytes replace `path` when the block ends, and are removed if it fails (a
    full disk is not left fuller). Its name is its own (two daemons on one cache folder may
    share a pid, in containers). Partial files of `path` older than STALE, which a process
    killed while writing left, are removed first: a crash loop would pile them up."""
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True)
    prefix = f".{path.stem}-"
    now = time.time()
    for leftover in folder.glob(f"{glob.escape(prefix)}*{glob.escape(suffix)}"):
        with contextlib.suppress(OSError):
            if now - leftover.stat().st_mtime > STALE:
                leftover.unlink()
    fd, partial = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=suffix)
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
        os.replace(partial, path)
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise
