"""The paths and names of the hidden notes, those that went and those there, kept apart from
the index cache.

A private note deleted, moved or renamed leaves its old path (and the names it held) typed in
public notes, which must stay masked for visitors (`retrieval.index.gone_paths`,
`former_names`). The index cache holds them too, but a start without it (`--no-cache`, a cache
of another version or options, its file deleted) knew nothing of them and showed them. This
file, in the vault's state folder beside its question log, is read at every start and
rewritten whenever they change; it holds those that went only while a public note still types
them. It holds the hidden notes there too (their paths and link names): one deleted while the
daemon was stopped is known as hidden by the next start, which finds it gone, as the index
cache would. It holds the pages hidden notes are published at (their own `slug:`, `url:`,
`permalink:`, `dg-permalink:`, `index.hidden_pages`) with their paths, those there and those no
note holds now (the note went or changed its `permalink:`: `index.former_pages`) while a public
note still types them, which stay masked as their paths are. A note made public leaves it at
the next reload or start. Each path is written once, without indentation: about 150 bytes a
hidden note. Written whole or not at all (`_files.atomic_write`), readable by its owner only
(0600).

The state folder is named by the vault's path, so a vault moved or renamed finds no file at its
new place (nor its index cache): the file of a vault no longer where it was (`vault-path`,
beside it, says where), whose hidden notes there are mostly notes of this vault, is read as
this vault's at its first start (`of_a_vault_moved`), and said. Reading another vault's could
only mask more: a path no note of this vault has, typed in one of its public notes.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from pathlib import Path
from typing import NamedTuple

from .._config import default_state_dir
from .._files import atomic_write
from .._terminal import printable
from .questionlog import files_of_vaults_gone, note_the_vault

log = logging.getLogger("grasbot.gone")

FILENAME = "hidden-gone.json"
FORMAT = 3
#: The formats read: 1 held no hidden note there (`Gone.hidden`), 1 and 2 no page (`Gone.pages`).
READ = (1, 2, FORMAT)


class Gone(NamedTuple):
    """The paths of hidden notes that went, the (name, path) of names no note holds now, the
    hidden notes there: (path, the names a link finds it by, `LinkResolver.names`), and the
    (page, path) of the pages hidden notes are published at, there or no longer."""

    paths: frozenset[str] = frozenset()
    names: frozenset[tuple[str, str]] = frozenset()
    hidden: frozenset[tuple[str, tuple[str, ...]]] = frozenset()
    pages: frozenset[tuple[str, str]] = frozenset()

    def was_hidden(self) -> frozenset[str]:
        """Every path hidden when it was written: those of `hidden` no note has now went."""
        return self.paths.union(path for path, _ in self.hidden)

    def was_named(self) -> frozenset[tuple[str, str]]:
        """Every (name, path) of a hidden note when it was written (`index.former_names` keeps
        those that lead to no note now)."""
        return self.names.union((name, path) for path, names in self.hidden for name in names)

    def __bool__(self) -> bool:
        return bool(self.paths or self.names or self.hidden or self.pages)


def default_path(vault: str | os.PathLike[str]) -> Path:
    return default_state_dir(vault=vault) / FILENAME


def _pairs(data: dict, field: str, missing: list | None) -> frozenset[tuple[str, str]]:
    """The [name or page, path] pairs the file's `field` holds; `missing`: what a file without it
    holds (an older format's pages: none), None when it must have it."""
    pairs = data.get(field, missing)
    if not isinstance(pairs, list) or not all(isinstance(n, list) and len(n) == 2 and all(isinstance(part, str) for part in n) for n in pairs):
        raise ValueError(f"{field}: not a list of [{field[:-1]}, path]")
    return frozenset((first, where) for first, where in pairs)


def _read(path: Path) -> Gone:
    """What the file holds (FileNotFoundError, OSError or ValueError when it holds nothing usable)."""
    data = json.loads(path.read_bytes())
    if not isinstance(data, dict) or data.get("format") not in READ:
        raise ValueError("not in a form this GrasBot reads")
    paths, hidden = data.get("paths"), data.get("hidden", {})
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise ValueError("paths: not a list of paths")
    names, pages = _pairs(data, "names", None), _pairs(data, "pages", [])
    if not isinstance(hidden, dict) or not all(isinstance(n, list) and all(isinstance(name, str) for name in n) for n in hidden.values()):
        raise ValueError("hidden: not an object of {path: [name, …]}")
    return Gone(frozenset(paths), names, frozenset((path, tuple(n)) for path, n in hidden.items()), pages)


def load(path: Path) -> Gone:
    """What the file holds; nothing when it is missing, or unusable (logged: the owner learns
    that the paths it held may show)."""
    try:
        return _read(path)
    except FileNotFoundError:
        return Gone()
    except (OSError, ValueError) as exc:
        log.warning(
            "les notes cachées disparues, gardées dans %s, n'ont pas pu être lues (%s) : leurs chemins écrits dans des notes publiques peuvent se montrer",
            path,
            exc,
        )
        return Gone()


def of_a_vault_moved(path: Path, vault: str | os.PathLike[str]) -> Gone:
    """For a vault with no file at `path`: what the files of vaults no longer where they were
    hold, when at least half of their hidden notes there are notes of `vault` now (it is that
    vault, moved or renamed). Each is said; nothing when none is (never raises)."""
    merged = Gone()
    for was, other in files_of_vaults_gone(path):
        try:
            held = _read(other)
        except (OSError, ValueError):
            continue
        there = [where for where, _ in held.hidden]
        if not there or 2 * sum(os.path.isfile(os.path.join(vault, where)) for where in there) < len(there):
            continue
        log.warning(
            "les notes cachées gardées pour le coffre qui était à %s, et n'y est plus, sont lues comme celles de ce coffre (il contient leurs notes) : "
            "leurs chemins écrits dans des notes publiques restent masqués (%s)",
            printable(was),
            other,
        )
        merged = Gone(merged.paths | held.paths, merged.names | held.names, merged.hidden | held.hidden, merged.pages | held.pages)
    return merged


def keep(path: Path, gone: Gone, vault: str | os.PathLike[str] | None = None) -> bool:
    """Write `gone` unless the file holds it already (whether it changed); none left deletes
    the file. Never raises (logged): serving goes on, and the index cache may still know them.
    `vault`: noted beside it (`questionlog.note_the_vault`), for `of_a_vault_moved`."""
    if vault is not None and gone:
        note_the_vault(path, Path(vault))
    held = None
    with contextlib.suppress(OSError, ValueError):  # missing or unusable: written anew
        held = _read(path)
    if held == gone or (held is None and not gone and not path.exists()):
        return False
    try:
        if not gone:
            path.unlink(missing_ok=True)
            return True
        hidden = dict(sorted((where, list(names)) for where, names in gone.hidden))
        data = {"format": FORMAT, "paths": sorted(gone.paths), "names": sorted(map(list, gone.names)), "hidden": hidden, "pages": sorted(map(list, gone.pages))}
        with atomic_write(path) as f:
            f.write(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode())
        return True
    except OSError as exc:
        log.warning(
            "les notes cachées disparues n'ont pas pu être gardées dans %s (%s) : un démarrage sans le cache de l'index montrerait leurs chemins", path, exc
        )
        return False
