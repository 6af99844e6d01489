"""Files and folders made read-only or unlistable to the test's process, root included: root
passes over permission bits, not over the immutable attribute (e2fsprogs' chattr) nor over a
listing refused by the test itself."""

from __future__ import annotations

import contextlib
import os
import subprocess

import pytest


@contextlib.contextmanager
def _read_only(path, mode: int, refused):
    """`path` made read-only to this process (chmod to `mode`, or chattr +i for root), and
    `refused()` checked to raise OSError: else the test proves nothing."""
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i", str(path)], check=True)
        undo = ["chattr", "-i", str(path)]
    else:
        was = path.stat().st_mode
        path.chmod(mode)
        undo = None
    try:
        with pytest.raises(OSError):
            refused()
        yield
    finally:
        if undo:
            subprocess.run(undo, check=True)
        else:
            path.chmod(was)


def read_only_folder(folder):
    """`folder` made read-only to this process: nothing can be made in it."""
    return _read_only(folder, 0o555, (folder / "probe").touch)


def read_only_file(path):
    """`path` made read-only to this process: opened again, it is opened for reading only."""
    return _read_only(path, 0o444, lambda: open(path, "r+b").close())


def unlistable(monkeypatch, folder) -> None:
    """`folder` cannot be listed, as after a chmod 000 (which root, running the tests, ignores)."""
    blocked, real_scandir = str(folder), os.scandir

    def scandir(path="."):
        if os.fspath(path) == blocked:
            raise PermissionError(13, "Permission denied", blocked)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
