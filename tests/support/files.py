"""Files and folders made read-only to the test's process, root included: root passes over
permission bits, not over the immutable attribute (e2fsprogs' chattr)."""

from __future__ import annotations

import contextlib
import os
import subprocess

import pytest


@contextlib.contextmanager
def read_only_folder(folder):
    """`folder` made read-only to this process: nothing can be made in it."""
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i", str(folder)], check=True)
        undo = ["chattr", "-i", str(folder)]
    else:
        mode = folder.stat().st_mode
        folder.chmod(0o555)
        undo = None
    try:
        with pytest.raises(OSError):  # the folder really is read-only, or the test proves nothing
            (folder / "probe").touch()
        yield
    finally:
        if undo:
            subprocess.run(undo, check=True)
        else:
            folder.chmod(mode)


@contextlib.contextmanager
def read_only_file(path):
    """`path` made read-only to this process: opened again, it is opened for reading only."""
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i", str(path)], check=True)
        undo = ["chattr", "-i", str(path)]
    else:
        mode = path.stat().st_mode
        path.chmod(0o444)
        undo = None
    try:
        with pytest.raises(OSError):
            open(path, "r+b").close()
        yield
    finally:
        if undo:
            subprocess.run(undo, check=True)
        else:
            path.chmod(mode)
