"""atomic_write: a cache file is written whole or not at all, and what a killed process left
behind does not pile up."""

from __future__ import annotations

import os
import time

import pytest

from grasbot._files import STALE, atomic_write
from grasbot.store import cache


def test_a_partial_file_a_killed_process_left_is_removed_at_the_next_write(tmp_path):
    """`kill -9` while the index cache was written left a `.notes-*.tmp` of tens of MB; a
    crash loop under systemd added one at each start."""
    old = tmp_path / ".notes-abc123.tmp"
    old.write_bytes(b"x" * 1000)
    os.utime(old, (time.time() - STALE - 60,) * 2)
    writing = tmp_path / ".notes-def456.tmp"  # another daemon's, being written now
    writing.write_bytes(b"y")
    other = tmp_path / ".embeddings-0.tmp.npz"  # not this file's
    other.write_bytes(b"z")
    os.utime(other, (time.time() - STALE - 60,) * 2)
    with atomic_write(tmp_path / cache.FILENAME) as f:
        f.write(b"le cache")
    assert (tmp_path / cache.FILENAME).read_bytes() == b"le cache"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([cache.FILENAME, writing.name, other.name])


def test_a_write_that_fails_leaves_the_previous_file_and_no_partial_one(tmp_path):
    target = tmp_path / "notes.marshal"
    target.write_bytes(b"avant")
    with pytest.raises(OSError), atomic_write(target) as f:
        f.write(b"la moitie")
        raise OSError(28, "No space left on device")
    assert [p.name for p in tmp_path.iterdir()] == ["notes.marshal"] and target.read_bytes() == b"avant"
