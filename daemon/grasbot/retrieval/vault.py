"""Reading an Obsidian vault from disk: notes, their frontmatter, and which note each link names.

One broken note never stops a load: it is skipped and reported with its path and the reason,
so the author can fix it while every other note keeps serving.
"""

from __future__ import annotations

import codecs
import functools
import hashlib
import os
import re
import stat
import sys
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from pathlib import Path, PurePosixPath
from typing import Any

import frontmatter
import yaml

from .._exceptions import VaultError
from .._urls import Page, own_pages, page_url, site_page, template_for
from .._zones import zone_named
from . import visibility
from .analysis import fold, slugify
from .frontmatter import FIELD_KEY, LINE_START, YAML_BREAKS, FrontmatterTooLarge, load_frontmatter
from .links import Link, links_in, md_links_in
from .markdown import code_dropped, code_in, strip_hidden
from .visibility import FIELDS, READER_KEYS, who_reads

MAX_FOLDER_DEPTH = 64  # folders inside folders: deeper is a mistake (or a loop of copies)
# A note's size: the longest course of the dev vaults is 1.2 MB; a 6 MB note took 1.5 s of the
# first search that reached it, a 50 MB one 11 s, every visitor waiting
MAX_NOTE_BYTES = 5_000_000
RACY_NS = 3_000_000_000  # a file changed this close to its read may change again unseen: see read_note_file
LIST_FIELDS = ("domains", "tags", "aliases", "answers", "linked", "related")
# Obsidian's old singular keys, which Obsidian reads no more (1.9.10) and GrasBot never did:
# an author's `alias: Cuisine du sud` was dropped without a word
_OLD_KEYS = {"alias": "aliases", "tag": "tags"}

_INLINE_TAG = re.compile(r"(?<![\w/&#\[])#([^\W\d][\w/-]*)")


@dataclass(frozen=True)
class Note:
    path: str  # vault-relative, POSIX separators
    slug: str
    title: str
    type: str | None
    source: str | None
    domains: tuple[str, ...]
    tags: tuple[str, ...]
    aliases: tuple[str, ...]
    answers: tuple[str, ...]
    priority: float | None
    updated: str | None
    public: bool
    body: str
    links: tuple[Link, ...]
    mtime_ns: int
    size: int
    digest: str
    warnings: tuple[str, ...] = ()  # kept with the note, so a reload that reuses it reports them again
    # the file's st_ctime_ns when it was read, or -1 when that cannot prove a later reload that
    # nothing changed (see `read_note_file`)
    ctime_ns: int = -1
    # its `slug:` and `url:` front matter as written, for a site generator that names the
    # note's page by them (Hugo); GrasBot's own `slug` above is folded to ASCII
    slug_written: str | None = None
    url_written: str | None = None
    # its `permalink:` and Digital Garden's `dg-permalink:` as written (Jekyll, Eleventy,
    # Quartz, the Digital Garden plugin: the page's whole address), masked in the public notes
    # when the note is not (`_urls.own_pages`)
    permalinks_written: tuple[str, ...] = ()
    # a note without properties: the `slug` and `url` of the Hugo front matter it opens with
    # (TOML, JSON, Org: `visibility.hugo_frontmatter`), as written. Hugo publishes it at them
    # (`published_as`): masked in the public notes and a source's `{hugo}` url, as `slug:` and
    # `url:` are; no source id is made of them, which the plugin (slug.ts) reads from Obsidian's
    # properties alone
    hugo_slug_written: str | None = None
    hugo_url_written: str | None = None
    # its page by GRASBOT_URL_MAP (`VaultOptions.url_map`), as a public note may type it
    # (`_urls.site_page`: `portfolio/plan` for `/portfolio/{slug}`), or None: its type has none
    site_page: str | None = None
    # when its publish or expiry date to come (`_scheduled`) changes whether visitors may read
    # it (a POSIX time), or None: a load after it reads the note again, its file unchanged
    turns: float | None = None

    @functools.cached_property
    def own_pages(self) -> tuple[str, ...]:
        """The pages its own `slug:`, `url:` (a Hugo front matter's too), `permalink:`,
        `dg-permalink:` or Hugo's `aliases:` publish it at, and the page GRASBOT_URL_MAP gives it (`site_page`), that hold a folder
        (`_urls.own_pages`: a page alone is words, masked by nothing). Made once a note, which a
        reload reuses while its file is unchanged: a hidden note's page that went is looked for
        among every note's (`index.former_pages`), 140 ms a reload at 10,000 notes that each
        hold a `slug:`."""
        # Hugo's `aliases:` are the old addresses that redirect to the page, written from the
        # site's root (`/labo/ancien-plan/`); an Obsidian alias that opens on `/` is no name
        addresses = (*self.permalinks_written, *(alias for alias in self.aliases if alias.lstrip().startswith("/")))
        slug, url = self.published_as
        pages = own_pages(self.path, slug, url, addresses) if slug or url or addresses else ()
        if self.site_page and self.site_page not in pages:
            pages = tuple(sorted((*pages, self.site_page)))
        return tuple(page for page in pages if "/" in page)

    @property
    def published_as(self) -> tuple[str | None, str | None]:
        """The `slug` and `url` Hugo publishes the note by, as written: its properties', else its
        Hugo front matter's, which Hugo reads alike (a note has the one or the other)."""
        return self.slug_written or self.hugo_slug_written, self.url_written or self.hugo_url_written

    @property
    def name(self) -> str:
        """PurePosixPath(path).stem, without building a path object (a vault-relative path is
        already normalised)."""
        name = self.path.rpartition("/")[2]
        dot = name.rfind(".")
        return name[:dot] if 0 < dot < len(name) - 1 else name


@dataclass(frozen=True)
class Issue:
    path: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message}


@dataclass
class Vault:
    """A loaded vault. `edges` maps a note's path to the paths it links to, resolved.

    What a reload reuses is public, so the engine, the indexes and the cache read it without
    knowing how the load worked it out: `broken_links` (each note's links that find no loaded
    note: `warnings` leaves out those that find a note --exclude left out, `_dangling`),
    `duplicate_slugs` (the report of notes sharing a slug), and `delta`, what this load changed
    against the vault it was given (`changed_since`, `relinked_since`).
    """

    root: Path
    notes: dict[str, Note]
    options: VaultOptions = field(default_factory=lambda: VaultOptions())
    errors: list[Issue] = field(default_factory=list)  # notes that could not be loaded
    warnings: list[Issue] = field(default_factory=list)  # duplicate slugs, dangling links, odd fields
    edges: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)  # path -> ((target, kind), ...)
    resolver: LinkResolver | None = None
    broken_links: dict[str, tuple[Issue, ...]] = field(default_factory=dict, repr=False, compare=False)
    duplicate_slugs: list[Issue] = field(default_factory=list, repr=False, compare=False)
    delta: VaultDelta | None = field(default=None, repr=False, compare=False)  # None: loaded from nothing
    excluded: frozenset[str] = field(default=frozenset(), repr=False, compare=False)  # the notes --exclude left out (`excluded_notes`)
    # the symbolic links the load's walk left out that lead inside the vault, (link, target):
    # a note a failed reload finds in a folder of --exclude has its paths through them masked
    # too (`Vault.as_found`), where no walk gives them; a start walks, so the cache needs none
    symlinks: tuple[tuple[str, str], ...] = field(default=(), repr=False, compare=False)
    # the notes in `errors` no earlier load knew public: who may read one is unknown (its
    # frontmatter unread), so for a visitor its typed path is masked as a private note's is
    # (`retrieval.mentions`); `unloaded_public`, those an earlier load read public, whose paths
    # visitors read until then: an author's half-typed YAML, at each autosave, changed the
    # hidden notes, and each reload read every public note again (2 s at 10,000 notes)
    unloaded: frozenset[str] = field(default=frozenset(), repr=False, compare=False)
    unloaded_public: frozenset[str] = field(default=frozenset(), repr=False, compare=False)

    def by_slug(self, slug: str) -> Note | None:
        for note in self.notes.values():
            if note.slug == slug:
                return note
        return None

    def changed_since(self, notes: Mapping[str, Note]) -> tuple[str, ...] | None:
        """The notes added or changed since `notes`, if this vault was loaded against those very
        notes (`load_vault(previous=...)`); None if it was not: then any note may differ."""
        delta = self.delta
        return delta.changed if delta is not None and delta.notes_base is notes else None

    def as_found(self, skipped: Iterable[str] = ()) -> Vault:
        """This vault as its notes' own files and dates say now, no folder listed but those of --exclude: a note whose
        file is gone, or is no note now, dropped; one whose file changed, or a date of its came
        (`Note.turns`), read again; one whose file cannot be read, private if its expiry came;
        never a note made public that was private here (a note turned public waits for a good
        load, which also finds the notes added). This very vault when nothing changed, or when
        none of its files is found (the vault gone, not its notes: a drive not mounted).

        What a reload that cannot list the vault (a folder unreadable) still applies: the
        previous vault kept serving, and in it a note its author made private, deleted or moved
        into a folder of --exclude stayed public for as long as the folder stayed so. A stat
        each note (10,000: 60-80 ms, the stats' own time), and the folders of --exclude listed
        (`_excluded_now`: a note moved or written there has its path masked, and its paths
        through the links the last load left out, `symlinks`, never unmasked here, and a
        public note hard-linked there is left out); only the files changed are read,
        those at a path that leads out of the vault or into a folder left out dropped, as the
        walk leaves them out (a note that is a link, or in a folder that is one, read so even
        unchanged: its stat is its target's). `skipped`: the links the failed walk left out in
        the folders it could list (`walk_markdown`), a link made since the last load among them,
        whose paths into a folder of --exclude are masked too (each read once, as a load does)."""
        now = visibility.now()
        notes = dict(self.notes)
        gone: list[str] = []
        unread: list[str] = []  # served as they were, but for their dates
        fresh: list[str] = []
        errors: list[Issue] = []
        real_root: Path | None = None
        linked: dict[str, bool] = {}  # each folder of the notes' paths: whether it is a symbolic link
        unlisted: list[str] = []  # folders of --exclude that cannot be listed
        excluded = self.excluded | _excluded_now(self.root, self.options, unlisted)
        symlinks = tuple(dict.fromkeys((*self.symlinks, *_symlink_targets(self.root, skipped))))  # those of a folder unlisted kept
        excluded |= _through_links(symlinks, excluded)
        left_out = functools.cache(functools.partial(_inodes, self.root, excluded))  # the names listed now too
        linked_out: list[Issue] = []  # hard links to a note --exclude left out, left out too
        for rel, note in self.notes.items():
            path = os.path.join(self.root, rel)
            try:
                st = os.lstat(path)
                behind_link = stat.S_ISLNK(st.st_mode) or _in_linked_folder(self.root, rel, linked)
                if stat.S_ISLNK(st.st_mode):
                    st = os.stat(path)
                if _unchanged(note, st, now) and not behind_link:
                    continue
                real_root = real_root or self.root.resolve()
                real = Path(os.path.realpath(path))
                if not real.is_relative_to(real_root) or _excluded(real.relative_to(real_root).as_posix(), self.options):
                    raise FileNotFoundError(rel)  # as the walk, which leaves it out
                if st.st_nlink > 1 and (why := _unvouched(st, left_out, unlisted)):  # as load_vault leaves it out
                    linked_out.append(Issue(rel, why))
                    gone.append(rel)
                    continue
                found = _read_again(rel, path, st, note, now, self.options)
            except (FileNotFoundError, NotADirectoryError):
                gone.append(rel)
                continue
            except ValueError as exc:
                errors.append(Issue(rel, str(exc)))
                continue
            except OSError:
                unread.append(rel)
                continue
            if found is not note and (note.public or not found.public):
                notes[rel] = found
                fresh.append(rel)
        if gone and len(gone) == len(self.notes):
            unread, gone = unread + gone, []
        for rel in unread:
            note = notes[rel]
            if note.public and note.turns is not None and note.turns <= now:
                notes[rel] = replace(note, public=False)
                fresh.append(rel)
        if not (fresh or gone or errors) and excluded == self.excluded:
            return self
        for rel in (*gone, *(issue.path for issue in errors)):
            del notes[rel]
        excluded |= {issue.path for issue in linked_out}
        vault = Vault(root=self.root, notes=notes, options=self.options, errors=[*self.errors, *errors], excluded=excluded, symlinks=symlinks)
        vault.warnings = [Issue(rel, w) for rel, note in notes.items() for w in note.warnings]
        vault.warnings += [w for w in self.warnings if w.message == NO_SUCH_FOLDER or w.path in self.excluded] + linked_out
        return _linked(vault, self, fresh, [*self.unloaded, *self.unloaded_public, *(issue.path for issue in errors)])

    def relinked_since(self, edges: Mapping[str, tuple]) -> frozenset[str] | None:
        """The notes whose links were resolved again since `edges`, if this vault's links were
        resolved against those very edges; None if not: then any note's links may differ."""
        delta = self.delta
        if delta is None or delta.relinked is None or delta.edges_base is not edges:
            return None
        return delta.relinked


@dataclass(frozen=True)
class VaultDelta:
    """What `load_vault(previous=...)` changed against `previous`: what a reload touches.

    `changed`: the notes that are not `previous`'s own objects (added, or whose file changed);
    a note of `previous` missing from the new vault was removed. `relinked`: the notes whose
    links were resolved again, or None when every note's were (note paths or slugs changed).
    `notes_base` and `edges_base` are `previous`'s notes and edges, so a caller can tell the
    delta is against the state it holds (an identity check, not a comparison).
    """

    notes_base: Mapping[str, Note]
    changed: tuple[str, ...]
    edges_base: Mapping[str, tuple] | None = None
    relinked: frozenset[str] | None = None


@dataclass(frozen=True)
class VaultOptions:
    exclude: tuple[str, ...] = ()  # vault-relative folders the author keeps out
    default_public: bool = False  # `--default-visibility public`
    # GRASBOT_URL_MAP's (type folded, template), sorted: the page the site gives each note
    # (`Note.site_page`), masked in the public notes when the note is not
    url_map: tuple[tuple[str, str], ...] = ()
    # GRASBOT_TIME_ZONE: where a front matter time written without its offset is read, as Hugo
    # reads it in its site's `timeZone` (Etc/UTC unless set); `local`: the machine's
    time_zone: str = "UTC"

    def __post_init__(self) -> None:
        zone_named(self.time_zone)  # a name that is no zone fails here, not at the first dated note


# ---------------------------------------------------------------- walking the folder


def _digest(raw: bytes) -> str:
    return hashlib.blake2b(raw, digest_size=16).hexdigest()


def _hidden(name: str) -> bool:
    """A file or folder Obsidian does not show, so an author never sees it among their notes:
    `.obsidian/`, `.trash/`, `.git/`, but also a sync tool's old versions (`.stversions/`,
    `.sync/`), which may hold a public copy of a note made private since."""
    return name.startswith(".")


def _nfc(text: str) -> str:
    return text if text.isascii() else unicodedata.normalize("NFC", text)


# What `load_vault` says of a folder of --exclude that the vault does not have
NO_SUCH_FOLDER = "exclu par --exclude (GRASBOT_EXCLUDE), mais le coffre n'a pas ce dossier : rien n'est exclu"


def _folder_key(text: str) -> str:
    """A folder's name as --exclude matches it: in any case (`--exclude journal` for `Journal/`:
    a Mac's or Windows' disk opens it by either name, and the folder's notes were served with no
    warning) and with or without its accents, in either Unicode form (`--exclude prive`, typed
    on a keyboard without them or in a unit file, and `Privé` typed as one character, leave out
    the folder a Mac named `Privé` with its accent apart: the folder was read, and with
    --default-visibility public its notes were served)."""
    if text.isascii():
        return text.casefold()
    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c)).casefold()


def _excluded(rel: str, options: VaultOptions) -> bool:
    """Hidden, or below a folder of --exclude (`_folder_key` on both sides)."""
    parts = rel.split("/")
    if any(map(_hidden, parts)):
        return True
    rel = _folder_key(rel)
    return any(rel == ex or rel.startswith(ex.rstrip("/") + "/") for ex in map(_folder_key, options.exclude))


def _excluded_folders(root: Path, options: VaultOptions, unread: list[str] | None = None) -> dict[str, list[str]]:
    """{each folder of --exclude: the vault's folders it names, as the disk names them}, found
    step by step in the folders' listings (`_folder_key`): `--exclude journal` names `Journal/`
    on any disk, and an empty list is a folder the vault does not have. `unread` receives the
    folders on the way that could not be listed (`excluded_notes`)."""
    found: dict[str, list[str]] = {}
    for given in options.exclude:
        level = [""]
        for step in map(_folder_key, given.strip("/").split("/")):
            below: list[str] = []
            for rel in level:
                try:
                    with os.scandir(root / rel if rel else root) as entries:
                        below += [f"{rel}/{e.name}" if rel else e.name for e in entries if _folder_key(e.name) == step and e.is_dir(follow_symlinks=False)]
                except OSError:  # a folder that cannot be listed leaves out nothing below it
                    if unread is not None:
                        unread.append(rel or ".")
                    continue
            level = below
        found[given] = level
    return found


def _scan(root: Path, options: VaultOptions, skipped: list[str] | None = None) -> list[tuple[str, os.DirEntry]]:
    """`walk_markdown`'s walk (os.walk's order: top-down, names sorted), as a list of
    (relative path, os.DirEntry). Symlinks are followed only while they stay inside the vault:
    a link to /etc or to the author's home must not turn it into part of a public site."""
    return list(walk_markdown(root, options, skipped))


def _no_vault_folder(root: Path) -> VaultError:
    """Why `root`, which cannot be listed or resolved, is no vault folder, as its owner reads it."""
    try:
        root.resolve()
    except (OSError, RuntimeError):  # a symbolic link that leads back to itself (RuntimeError before Python 3.13)
        return VaultError(f"le dossier du coffre {root} est une boucle de liens symboliques (réglez --vault ou VAULT_DIR)")
    if root.exists():
        return VaultError(f"le dossier du coffre {root} est un fichier, pas un dossier (réglez --vault ou VAULT_DIR)")
    return VaultError(f"dossier du coffre introuvable : {root} (réglez --vault ou VAULT_DIR)")


def walk_markdown(root: str | os.PathLike[str], options: VaultOptions, skipped: list[str] | None = None) -> Iterator[tuple[str, os.DirEntry]]:
    """`_scan`'s walk, one file at a time: the daemon stats a vault's files on its event loop,
    a few hundred between two turns of requests (`server.methods.reload_vault`).

    Only a symlink needs a system call to learn where it really points: any other entry's real
    path is its real parent's plus its name, so 10,000 files cost no `resolve()` each. What a
    symlink leads to is judged where it leads: out of the vault, or into an excluded or hidden
    folder (`.obsidian/`, `.trash/`, any name that starts with a dot), it is skipped. A folder that cannot be listed, or nested deeper
    than MAX_FOLDER_DEPTH, raises VaultError naming it: a vault read in part must not pass for
    a vault with fewer notes (a reload keeps the previous one). It is raised once the other
    folders are walked, so `skipped` holds their links all the same: the failed reload masks
    the paths through a link made since the last good walk (`Vault.as_found`). The walk keeps
    its own stack, so a deep tree cannot overflow Python's. `skipped` receives the symlinks
    left out (a folder's with a trailing `/`), for `grasbot check` to name.
    """
    root = Path(root)
    try:
        real_root = root.resolve()
    except (OSError, RuntimeError):
        raise _no_vault_folder(root) from None
    seen_dirs: set[str] = set()

    def real_rel(real: str) -> str | None:
        """The vault-relative path `real` stands at, or None outside the vault."""
        path = Path(real)
        if not path.is_relative_to(real_root):
            return None
        rel = path.relative_to(real_root).as_posix()
        return "" if rel == "." else rel

    # (path, real path, rel, real rel, depth): os.walk's order, top-down and names sorted
    stack: list[tuple[str, str, str, str, int]] = [(os.fspath(root), os.fspath(real_root), "", "", 0)]
    failed: VaultError | None = None  # the first folder that could not be walked
    while stack:
        dirpath, real_dir, rel_dir, real_rel_dir, depth = stack.pop()
        if real_dir in seen_dirs:
            continue
        seen_dirs.add(real_dir)
        where = f"le dossier {rel_dir}/ du coffre" if rel_dir else f"le dossier du coffre {root}"
        if depth > MAX_FOLDER_DEPTH:
            deep = f"{where} est imbriqué à plus de {MAX_FOLDER_DEPTH} niveaux de dossiers"
            failed = failed or VaultError(f"{deep} : remontez-le, ou laissez-le de côté avec --exclude")
            continue
        try:
            with os.scandir(dirpath) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            if isinstance(exc, (FileNotFoundError, NotADirectoryError)):
                if not rel_dir:
                    raise _no_vault_folder(root) from None
                failed = failed or VaultError(f"{where} a été déplacé ou supprimé pendant sa lecture : relisez le coffre")
                continue
            if not rel_dir:
                raise VaultError(f"impossible de lire {where} : {exc.strerror or exc} (corrigez ses droits)") from None
            failed = failed or VaultError(f"impossible de lire {where} : {exc.strerror or exc} (corrigez ses droits, ou laissez-le de côté avec --exclude)")
            continue
        prefix = f"{rel_dir}/" if rel_dir else ""
        real_prefix = f"{real_rel_dir}/" if real_rel_dir else ""
        dirs = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                dirs.append(entry)
                continue
            name = entry.name
            if not name.lower().endswith(".md") or _hidden(name):
                continue
            if _is_link(entry):
                target = real_rel(os.path.realpath(entry.path))
                if target is None or _excluded(target, options):
                    if skipped is not None:
                        skipped.append(prefix + name)
                    continue
            # interned: every table keyed by path then holds this one object, and a dict lookup
            # stops at identity (marshal keeps the flag, so the cache and store.parallel load it so)
            yield sys.intern(prefix + name), entry
        below = []
        for entry in dirs:
            rel = prefix + entry.name
            if _excluded(rel, options):
                continue
            if _is_link(entry):
                real = os.path.realpath(entry.path)
                target = real_rel(real)
            else:
                real, target = os.path.join(real_dir, entry.name), real_prefix + entry.name
            if target is None or (target and _excluded(target, options)):
                if skipped is not None:
                    skipped.append(rel + "/")
                continue
            below.append((entry.path, real, rel, target, depth + 1))
        stack.extend(reversed(below))
    if failed is not None:
        raise failed


def excluded_notes(root: Path, folders: Iterable[str], unread: list[str] | None = None) -> frozenset[str]:
    """The vault paths of the notes in `folders`, those --exclude names (`_excluded_folders`),
    which the walk leaves out: the author said not to publish them, so their paths typed in a
    public note are masked as a private note's are (`retrieval.mentions`). Listed only, never
    read; a symlink and a hidden name are passed over, and so is a folder that cannot be listed,
    named in `unread`: its notes' inodes unknown, a hard link to one cannot be told (`_unvouched`)."""
    found: list[str] = []

    def passed_over(exc: OSError) -> None:
        if unread is not None and not isinstance(exc, (FileNotFoundError, NotADirectoryError)):  # gone: nothing there
            unread.append(Path(exc.filename).relative_to(root).as_posix())

    for folder in folders:
        for dirpath, dirnames, filenames in os.walk(root / folder, onerror=passed_over):  # no symlink followed
            rel = Path(dirpath).relative_to(root).as_posix()
            if rel.count("/") >= MAX_FOLDER_DEPTH:
                dirnames.clear()
            dirnames[:] = [d for d in dirnames if not _hidden(d)]
            found += (f"{rel}/{name}" for name in filenames if name.lower().endswith(".md") and not _hidden(name))
    return frozenset(found)


def _is_link(entry: os.DirEntry) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return True  # unknown: take the slow, safe path


def _file_kind(mode: int) -> str:
    for test, kind in (
        (stat.S_ISFIFO, "un tube nommé (FIFO)"),
        (stat.S_ISCHR, "un périphérique caractère"),
        (stat.S_ISBLK, "un périphérique bloc"),
        (stat.S_ISSOCK, "une socket"),
        (stat.S_ISDIR, "un dossier"),
    ):
        if test(mode):
            return kind
    return "d'un type inconnu"


def not_a_note(st: os.stat_result) -> ValueError | None:
    """The error to report for a `*.md` that is not a regular file (reading a FIFO waits for a
    writer forever, a device may never end), or None."""
    if stat.S_ISREG(st.st_mode):
        return None
    return ValueError(f"pas un fichier ordinaire ({_file_kind(st.st_mode)}) : ignoré")


def _mb(size: int, spec: str) -> str:
    """A size in megabytes as a French reader writes it (« 1,7 Mo »)."""
    return f"{format(size / 1e6, spec).replace('.', ',')} Mo"


def _too_large() -> str:
    return f"plus que les {_mb(MAX_NOTE_BYTES, 'g')} qu'une note peut faire : ignorée (découpez-la en plusieurs notes)"


def read_note_file(path: str | os.PathLike[str]) -> tuple[bytes, int, int]:
    """(the file's bytes, its st_mtime_ns, its st_ctime_ns or -1), from one descriptor: the
    stamps are those of what was read. Opened non-blocking and checked before reading, so a
    file swapped for a FIFO since the walk cannot hang the load.

    Size, mtime and ctime prove a file unchanged only if it was last changed well before it was
    read: a change within the same tick of the file system's clock (coarse: milliseconds, or
    2 s on FAT) keeps all three. A file changed less than RACY_NS before its read gets ctime
    -1, so the next reload reads it and compares its hash (git's "racily clean" rule). ctime,
    unlike mtime, cannot be set back by `touch`, `rsync -t` or an editor that restores it."""
    started = time.time_ns()
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))
    with open(fd, "rb") as f:
        st = os.fstat(fd)
        problem = not_a_note(st)
        if problem is not None:
            raise problem
        if st.st_size > MAX_NOTE_BYTES:  # not read at all
            raise ValueError(f"{_mb(st.st_size, '.1f')}, {_too_large()}")
        raw = f.read(MAX_NOTE_BYTES + 1)  # a file growing since fstat is not read past the limit
    if len(raw) > MAX_NOTE_BYTES:
        raise ValueError(_too_large())
    return raw, st.st_mtime_ns, (st.st_ctime_ns if st.st_ctime_ns < started - RACY_NS else -1)


# ---------------------------------------------------------------- parsing one note

# What a frontmatter value is when it is not what its field takes, as an author reads it
_KINDS = {"dict": "un ensemble de champs (clé : valeur)", "list": "une liste", "date": "une date", "datetime": "une date et une heure", "time": "une heure"}


def _kind(value: Any) -> str:
    name = type(value).__name__
    return _KINDS.get(name, f"une valeur de type {name}")


def _as_list(value: Any, name: str, warnings: list[str]) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, (str, int, float)):
        value = [value]
    if not isinstance(value, list):
        warnings.append(f"`{name}` devrait être une liste, pas {_kind(value)} : ignoré")
        return ()
    items = []
    for v in value:
        if isinstance(v, list) and len(v) == 1 and isinstance(v[0], str):  # `- [[note]]` unquoted: YAML's list in a list
            warnings.append(f'`{name}` : [[{v[0]}]] sans guillemets est une liste en YAML, lue comme le lien ; écrivez "[[{v[0]}]]"')
            v = f"[[{v[0]}]]"
        elif isinstance(v, (list, dict)):
            warnings.append(f"`{name}` : un de ses éléments est {_kind(v)} : ignoré")
            continue
        if v is not None and str(v).strip():
            items.append(str(v).strip())
    return tuple(items)


# Obsidian's own list properties, which it reads from one string as items between commas
_COMMA_LISTS = ("aliases", "tags")


def _split_obsidian(name: str, value: Any) -> Any:
    """`aliases: Doggo, Woofer` is two aliases to Obsidian (its quick switcher offers each) and
    `tags: recette, cuisine` two tags (its help on tags): read as one, the note answered to
    neither name. Other fields' strings stay whole (a question in `answers` has commas)."""
    if name in _COMMA_LISTS and isinstance(value, str):
        return value.split(",")
    return value


def _as_text(value: Any, name: str, warnings: list[str]) -> str | None:
    if value is None:
        return None
    if isinstance(value, (list, dict)):  # `title: [un, deux]` was shown as « ['un', 'deux'] »
        warnings.append(f"`{name}` devrait être un texte, pas {_kind(value)} : ignoré")
        return None
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    text = str(value).strip()
    return text or None


def _shown_text(text: str | None) -> str | None:
    """A frontmatter field without hidden comments (fail closed: a field is text a reader may see)."""
    if text is None or ("%%" not in text and "<!--" not in text):
        return text
    return " ".join(strip_hidden(text).split()) or None


def _same(text: str | None) -> str | None:
    return text


# _INLINE_TAG without its look-behind, checked by hand: `#` is not in [\w/-], so a refused match
# never hides another one.
_TAG_AT = re.compile(_INLINE_TAG.pattern.removeprefix(r"(?<![\w/&#\[])"))
_TAG_REFUSED = re.compile(r"[\w/&#\[]")


def _inline_tags(prose: str) -> list[str]:
    """_INLINE_TAG.findall(prose), scanning from `#` to `#`."""
    if "#" not in prose:
        return []
    return [m.group(1) for m in _TAG_AT.finditer(prose) if m.start() == 0 or not _TAG_REFUSED.match(prose, m.start() - 1)]


# A key's line, where PyYAML starts one: after U+2028, U+2029, U+0085 or a lone `\r` too, or
# a key given twice after one was kept without a word
_FIELD_LINE = re.compile(rf"{LINE_START}({FIELD_KEY})[ \t]*+:(?:[ \t]|(?=[\n{YAML_BREAKS}])|\Z)")


# A `slug:` that links to a note or names one's file (`[[prive/Plan]]`, `prive/Plan.md`), read
# folded (`_not_a_slug`): the slug made of it was every visitor's name for this public note, a
# private note's name; a file name with what a link writes after it too (`Plan.md#budget`,
# `Plan.md?vue=1`, `<Plan.md>`), but not a word that goes on (`guide.md-et-plus`); Hugo's `ref`
# and `relref` shortcodes (`{{< ref "Plan" >}}`) and Jekyll's `post_url` and `link` tags
# (`{% post_url 2024-05-01-plan %}`), which name a note by its file name
_NOT_A_SLUG = re.compile(r"\[\[|\]\(|<a\s|\.md(?=[\s#?>)\]|\"'`]|$)|\{\{[<%]\s*(?:rel)?ref(?![\w-])|\{%-?\s*(?:post_url|link)(?![\w-])")
_DOT_ENCODED = re.compile(r"%(?:25)?2e")  # `Plan%2Emd`, percent-encoded once or twice, folded


def _not_a_slug(written: str) -> bool:
    """Whether a `slug:` links to a note or names one's file (`_NOT_A_SLUG`), read as search
    reads words (`fold`): a zero-width space inside `.md` dropped, a full-width letter its own,
    and a dot percent-encoded read as one (`Plan%2Emd`)."""
    return _NOT_A_SLUG.search(_DOT_ENCODED.sub(".", fold(written))) is not None


# a `slug:` that holds a folder (`labo/plan`, `/` at its ends aside) is an address, which may be
# a private note's page (`_urls.own_pages`): GrasBot's own slug, every visitor's source id, is
# then the file name's, and a site's url reads it only as the audience may (`search._as_read`)
_SLUG_FOLDER = re.compile(r"[^/\\\s]\s*[/\\]+\s*[^/\\\s]")


# A Hugo front matter's fields read as the properties' are (`visibility.hugo_frontmatter`): the
# note's names. Its `slug` and `url` are not: they make the note's source id, which the plugin
# (slug.ts `noteSlug`) reads from Obsidian's properties alone, and the two would disagree; they
# are read for the page Hugo publishes the note at (_HUGO_ADDRESS: `Note.published_as`) alone
_HUGO_FIELDS = frozenset({"title", "tags", "aliases"})
_HUGO_ADDRESS = frozenset({"slug", "url"})


def _by_lower_key(meta: dict, warnings: list[str]) -> dict[str, Any]:
    """The fields by their key in lower case: Obsidian reads a property whatever its case
    (`Aliases:`, `TAGS:`, one property in its list of all of them), so an author's `Aliases:`
    must not count for nothing here. A key written in two cases is read as Obsidian reads it,
    the first one, with a warning; the keys that say who reads a note (`visibility.READER_KEYS`) are its own, which
    reads every case of them and keeps such a note private."""
    fields: dict[str, Any] = {}
    written: dict[str, list[str]] = {}
    for key, value in meta.items():
        if not isinstance(key, str):
            continue
        low = key.lower()
        written.setdefault(low, []).append(key)
        fields.setdefault(low, value)
    for low, keys in written.items():
        if len(keys) > 1 and low in FIELDS | {"url"} and low not in READER_KEYS:
            shown = " et ".join(f"`{k}`" for k in keys)
            warnings.append(f"{shown} sont une seule propriété pour Obsidian, qui lit la première, `{keys[0]}` : n'en gardez qu'une")
    return fields


# `tags: #recette`, or `- #recette` in a list: a `#` after a blank starts a YAML comment
_TAG_AS_COMMENT = re.compile(rf"^(?:{FIELD_KEY}[ \t]*+:|[ \t]*+-)[ \t]+#([^\s#]\S*)")
_YAML_LINE_BREAK = re.compile(f"[\n{YAML_BREAKS}]")  # where PyYAML ends a line: U+2028 and the like too


def _commented_out(header: str) -> dict[str, str]:
    """The `tags` and `aliases` an author wrote as inline tags (`tags: #recette #cuisine`), each
    with the first word lost: YAML reads a comment there, so neither Obsidian nor GrasBot has
    them, and nothing said so."""
    found: dict[str, str] = {}
    key = ""
    for line in _YAML_LINE_BREAK.split(header):
        if line[:1] not in ("", " ", "\t", "-"):
            key = line.split(":", 1)[0].strip().lower()
        m = _TAG_AS_COMMENT.match(line)
        if m is not None and key in _COMMA_LISTS:
            found.setdefault(key, m.group(1))
    return found


# `tags: [#recette]` or `[cuisine, #recette]`: a `#` opening a flow list's item, which YAML
# cannot read (no plain item starts with `#`, and after a blank it starts a comment). The list
# may go over lines (`tags: [\n  #recette ]`, `tags:\n  [#recette]`): its items are read to its
# `]`, or to the next `[` at most, so a key's search stops where another list opens. A key's
# line starts where PyYAML starts one (`frontmatter.LINE_START`).
_TAG_IN_FLOW = re.compile(rf"{LINE_START}({FIELD_KEY})[ \t]*+:\s*+\[(?:[^\]\[#,]*+,)*+\s*+#([^\s#,\[\]]+)")


# The YAML parser's problems an author meets, said in French with what to change: the
# parser's own English (« did not find expected key ») is kept for any other
_YAML_PROBLEMS = (
    (
        ("mapping values are not allowed",),
        "un « : » inattendu (une valeur qui contient « : » s'écrit entre guillemets, ou la ligne est mal indentée)",
    ),
    (("did not find expected ',' or ']'", "expected ',' or ']'"), "une [liste] n'est pas fermée par « ] », ou il manque une « , » entre deux de ses éléments"),
    (("did not find expected ',' or '}'", "expected ',' or '}'"), "des {champs} ne sont pas fermés par « } », ou il manque une « , » entre deux d'entre eux"),
    (
        ("did not find expected key", "expected <block end>"),
        "une ligne n'est pas une clé suivie de « : » là où il en faut une (une indentation de trop ou de moins ? "
        "une valeur qui commence par [[ ou par un guillemet s'écrit tout entière entre guillemets)",
    ),
    (("found unexpected end of stream",), "les propriétés finissent au milieu d'une valeur : un guillemet ouvert n'est pas fermé"),
    (("found character",), "une valeur ne peut pas commencer par @, ` ou % en YAML : mettez-la entre guillemets"),
    (("found a tab character",), "une tabulation là où YAML n'en lit pas : remplacez-la par des espaces"),
    (("found undefined alias",), "un * commence un alias YAML, qui ne renvoie ici à aucune ancre & : mettez la valeur entre guillemets"),
    (
        ("found unknown escape character",),
        "un \\ entre guillemets doubles ouvre une séquence d'échappement inconnue : écrivez \\\\, ou mettez la valeur entre guillemets simples",
    ),
    (("block sequence entries are not allowed",), "un élément de liste « - » n'est pas permis ici : écrivez-le sur sa propre ligne, sous la clé"),
    (("did not find expected '-' indicator",), "une ligne sous une liste « - » n'en est pas un élément : vérifiez l'indentation"),
    (("found unhashable key",), "une clé est une liste ou des champs ([ ] ou { }) : mettez la valeur entre guillemets"),
    (("second occurrence", "found duplicate anchor"), "une ancre & est donnée deux fois : renommez l'une d'elles"),
    (("could not find expected ':'",), "il manque le « : » après une clé (une valeur sur plusieurs lignes s'écrit entre guillemets)"),
    (("did not find expected node content", "expected the node content"), "une valeur manque là où YAML en attend une"),
    (("could not determine a constructor",), "une étiquette YAML (!!…) que GrasBot ne lit pas : mettez la valeur entre guillemets"),
)


def _yaml_problem(problem: str) -> str:
    """The parser's problem in French (`_YAML_PROBLEMS`), or as it said it."""
    for starts, said in _YAML_PROBLEMS:
        if problem.startswith(starts):
            return said
    return problem


def _tag_in_flow_list(header: str) -> tuple[int, str, str] | None:
    """The line (from 0) of the first `[#word]` in the header, its key and word, for a YAML error
    PyYAML names as « did not find expected node content », which told the author nothing."""
    m = _TAG_IN_FLOW.search(header)
    if m is None:
        return None
    return header.count("\n", 0, m.start(2)), m.group(1), m.group(2)


# Embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), left open in a clipped
# page: quoted in an answer, one drew the rest of its line right to left, a citation included
# (and hides code's real order: « Trojan Source »). French needs none; a browser orders the text.
# Read out before anything else: one inside a private note's path typed in a public note
# (« prive/rachat\u202e-acme.md ») kept `mentions` from masking it, and search read its words.
_BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")

_DOTS_LINE = re.compile(r"^\.\.\.[ \t]*$", re.MULTILINE)


def _tags_obsidian_refuses(tags: tuple[str, ...]) -> list[str]:
    """The `tags` Obsidian's help calls no tag (a number alone, `1984`, or words with a space):
    Obsidian lists and searches none of them, and nothing told the author. GrasBot still reads
    their words, as it reads the rest of the field: they say what the note is about, and the
    fixes named here (`mon-tag`, `mon_tag`) read the same to it."""
    said = []
    for tag in tags:
        word = tag.lstrip("#")
        if any(c.isspace() for c in word):
            joined = "-".join(word.split())
            said.append(f"`tags` : `{word}` n'est pas un tag pour Obsidian, qui n'en lit aucun avec une espace : écrivez `{joined}`")
        elif word.strip("/").replace("/", "").isdigit():
            said.append(f"`tags` : `{word}` n'est pas un tag pour Obsidian, qui y veut un caractère autre qu'un chiffre (`y{word}`)")
    return said


def _line(text: str, number: int) -> str:
    """The line of that number (from 0), empty past the text's end."""
    return (text.split("\n")[number : number + 1] or [""])[0]


def _indent(text: str, number: int) -> str:
    """The blanks the line of that number (from 0) starts with, none past the text's end."""
    line = _line(text, number)
    return line[: len(line) - len(line.lstrip(" \t"))]


def parse_note(rel: str, raw: bytes, *, mtime_ns: int, options: VaultOptions, ctime_ns: int = -1) -> Note:
    """Parse one note; raises ValueError with a reader-facing reason when it cannot be used.
    The body is kept without the text its author hid (`strip_hidden`) and without a Hugo front
    matter (`visibility.hugo_frontmatter`): every later use of it (the index, the prompt, the
    extractive fallback, titles, tags and links) sees none of it."""
    nul = raw.find(b"\0")  # no text note holds one: an image, a PDF, zeros a crash left
    if nul >= 0 and not raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):  # UTF-16 text holds NULs too
        raise ValueError(
            f"contient des octets NUL (dès l'octet {nul}) : un fichier binaire, ou une note abîmée (un plantage peut laisser des zéros "
            "dans un fichier en cours d'enregistrement) : ignorée (restaurez-la, ou sortez-la du coffre)"
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"pas en UTF-8 (octet {exc.start}) : enregistrez à nouveau le fichier en UTF-8") from None
    text = _BIDI_CONTROLS.sub("", text)
    if "\r" in text:  # CR alone ends lines too, as in Obsidian's editor: its frontmatter was not seen
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    handler = frontmatter.YAMLHandler()
    meta: Any = {}
    body = text
    header = ""
    # split + load, not frontmatter.loads(): loads() breaks on a field named `content`, and
    # parse() silently turns a frontmatter that is a list into no frontmatter at all.
    detected = handler.detect(text)
    if detected:
        try:
            header, body = handler.split(text)
        except ValueError:  # the opening --- and no other: split has nothing to unpack
            # still skipped, not read as a body: its `visibility: private` would count for nothing
            dots = _DOTS_LINE.search(text)
            if dots is not None:  # YAML's and pandoc's end of a document, which Obsidian does not read
                number = text.count("\n", 0, dots.start()) + 1
                raise ValueError(
                    "les propriétés ne sont jamais fermées : Obsidian les ferme par --- seulement, "
                    f"pas par le ... de la ligne {number} : écrivez --- à sa place"
                ) from None
            raise ValueError("les propriétés ne sont jamais fermées : ajoutez une ligne --- après leurs champs") from None
    try:
        if detected:
            meta = load_frontmatter(header)
            meta = {} if meta is None else meta
    except FrontmatterTooLarge as exc:
        raise ValueError(f"{exc} : note ignorée") from None
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" à la ligne {where.line + 1}" if where is not None else ""
        problem = _yaml_problem(getattr(exc, "problem", None) or type(exc).__name__)
        if where is not None and "\t" in _indent(header, where.line):
            # a tab typed for an indent, as in a note's body: PyYAML's « found character '\t'
            # that cannot start any token » did not tell the author what to change
            problem = "une tabulation l'indente, et YAML n'indente qu'avec des espaces : remplacez la tabulation par des espaces"
        elif where is not None and _line(header, where.line)[where.column : where.column + 1] == "\t":
            problem = _yaml_problem("found a tab character")  # `-\tTian`: « found character » said @, ` or %, not the tab
        elif (tag := _tag_in_flow_list(header)) is not None:
            number, key, word = tag
            line = f" à la ligne {number + 1}"
            problem = (
                f"`{key}` : `#{word}` ne peut pas ouvrir un élément d'une [liste] en YAML : "
                f'écrivez `{word}` (sans `#`), ou mettez-le entre guillemets, "#{word}"'
            )
        raise ValueError(f"propriétés YAML invalides{line} : {problem}") from None
    except ValueError as exc:  # YAML reads `2024-02-30` or `25:00:00` as a date or time, then cannot make it
        raise ValueError(
            f"une date ou une heure des propriétés n'existe pas ({exc}) : corrigez-la, ou mettez-la entre guillemets pour la garder comme texte"
        ) from None
    except Exception as exc:  # anything else the YAML loader may raise on an odd header
        raise ValueError(f"propriétés illisibles : {type(exc).__name__}") from None
    if not isinstance(meta, dict):
        raise ValueError("les propriétés ne sont pas une suite de champs (clé : valeur)")
    if detected and (folded := visibility.folded_reader(header, meta)) is not None:
        # PyYAML's reading, where Obsidian's refuses the properties and the plugin says the note left out
        raise ValueError(
            f"propriétés YAML invalides : la ligne `{folded}` continue la valeur d'un champ plus haut, un guillemet ou un "
            "crochet resté ouvert, où YAML la lit comme du texte, pas comme un champ : fermez-le, ou indentez la ligne si elle en fait partie"
        )
    warnings: list[str] = []
    body = strip_hidden(body)
    prose, _ = code_dropped(body, code_in(body))
    shown_as = (body, prose)  # the text Obsidian shows, which who_reads reads, as « Tester cette note » does
    published: dict[str, Any] = {}
    hugo_written: dict[str, str] = {}
    hugo = None if detected else visibility.hugo_frontmatter(text)  # read once: who_reads judges the same reading
    if hugo is not None:
        end, published = hugo.end, hugo.fields
        # where Hugo publishes the note, cut or not: masked, and in doubt masked
        written = {key.lower(): value.strip() for key, value in published.items() if isinstance(key, str) and isinstance(value, str)}
        hugo_written = {key: value for key, value in written.items() if key in _HUGO_ADDRESS and value}
        if end and body.startswith(text[:end]):  # else a comment that opens in it hides text below it: left as shown
            body = body[end:]
            prose, _ = code_dropped(body, code_in(body))
        else:
            published = {}
    fields = _by_lower_key(meta if detected else {k: v for k, v in published.items() if isinstance(k, str) and k.lower() in _HUGO_FIELDS}, warnings)
    stem = PurePosixPath(rel).stem
    shown = _shown_text if "%%" in header or "<!--" in header else _same  # fields with comments: rare
    # Obsidian names a note by its file; a first heading is often a section's (« Objectif »,
    # « Présentation », 125 of a personal vault's 209 notes), which sources showed as the title
    title = shown(_as_text(fields.get("title"), "title", warnings)) or _BIDI_CONTROLS.sub("", stem)
    slug_written = _as_text(fields.get("slug"), "slug", warnings)
    if slug_written is not None and _not_a_slug(slug_written):  # `slug: "[[prive/Plan]]"` named a private note to visitors
        warnings.append(f"`slug: {slug_written}` est un lien ou le chemin d'une note, pas un slug : ignoré")
        slug_written = None
    slug_name = slug_written if slug_written is not None and _SLUG_FOLDER.search(slug_written) is None else ""
    slug = slugify(slug_name) or slugify(stem) or hashlib.sha1(rel.encode()).hexdigest()[:8]
    url = fields.get("url")  # often a bookmark's link, for a site that does not read it: no warning
    url_written = url.strip() or None if isinstance(url, str) else None
    permalinks_written = tuple(value.strip() for value in (fields.get("permalink"), fields.get("dg-permalink")) if isinstance(value, str) and value.strip())

    lists = {name: _as_list(_split_obsidian(name, fields.get(name)), name, warnings) for name in LIST_FIELDS}
    if shown is _shown_text:
        lists = {name: tuple(t for t in map(_shown_text, values) if t) for name, values in lists.items()}
    old_keys = [(written, _OLD_KEYS[written.lower()]) for written in meta if isinstance(written, str) and written.lower() in _OLD_KEYS]
    warnings.extend(f"`{old}` n'est lu ni par Obsidian (depuis 1.9.10) ni par GrasBot : écrivez ses valeurs sous `{key}`" for old, key in old_keys)
    inline_tags = [t.strip("/") for t in _inline_tags(prose)]
    tags = tuple(dict.fromkeys(t.lstrip("#") for t in (*lists["tags"], *inline_tags) if t.lstrip("#")))
    warnings.extend(_tags_obsidian_refuses(lists["tags"]))

    priority = fields.get("priority")
    if priority is not None and (isinstance(priority, bool) or not isinstance(priority, (int, float))):
        warnings.append(f"`priority` devrait être un nombre, pas {priority!r} : ignoré")
        priority = None

    links = []
    for kind in ("linked", "related"):
        for item in lists[kind]:
            found = links_in(item, kind) or md_links_in(item, rel, kind)
            links.extend(found or [Link(item.strip(), None, kind)])
    links.extend(links_in(prose, "body"))
    links.extend(md_links_in(prose, rel, "body"))

    readers = who_reads(
        meta, header, text, *shown_as, detected=detected, default_public=options.default_public, zone=options.time_zone, warnings=warnings, hugo=hugo
    )
    if "#" in header:
        warnings.extend(
            f"`{name}` : `#{word}` y est un commentaire YAML, que ni Obsidian ni GrasBot ne lisent : écrivez `{word}` (sans `#`), ou mettez-le entre guillemets"
            for name, word in _commented_out(header).items()
        )
    if header.count(":") > len(meta):  # a field written twice: YAML keeps the last one, without a word
        named = Counter(m.group(1) for m in _FIELD_LINE.finditer(header))
        warnings.extend(f"`{key}` est écrit {n} fois : seul le dernier compte" for key, n in named.items() if n > 1 and key.lower() not in READER_KEYS)

    note_type = shown(_as_text(fields.get("type"), "type", warnings))
    template = template_for(dict(options.url_map), note_type) if options.url_map else None
    published_as = (slug_written or hugo_written.get("slug"), url_written or hugo_written.get("url"))  # as Note.published_as
    page = site_page(page_url(template, Page(rel, slug, *published_as))) if template else None
    note = Note(
        path=rel,
        slug=slug,
        title=title,
        type=note_type,
        source=shown(_as_text(fields.get("source"), "source", warnings)),
        domains=lists["domains"],
        tags=tags,
        aliases=lists["aliases"],
        answers=lists["answers"],
        priority=float(priority) if priority is not None else None,
        updated=_as_text(fields.get("updated"), "updated", warnings),
        public=readers.public,
        body=body,
        links=tuple(links),
        mtime_ns=mtime_ns,
        size=len(raw),
        digest=_digest(raw),
        warnings=tuple(warnings),
        ctime_ns=ctime_ns,
        slug_written=slug_written,
        url_written=url_written,
        permalinks_written=permalinks_written,
        hugo_slug_written=hugo_written.get("slug"),
        hugo_url_written=hugo_written.get("url"),
        site_page=page or None,
        turns=readers.turn,
    )
    return note


# ---------------------------------------------------------------- links between notes


def _shortest_first(path: str) -> tuple[int, int, str]:
    """When two files share a name, Obsidian's link finds the one with the shortest path."""
    return path.count("/"), len(path), path


def _link_key(text: str) -> str:
    """A path, name or label as links are matched: case ignored, and composed (NFC), so that a
    link typed « Éléphant » finds a file a Mac named with « E » and its accent apart (NFD)."""
    return _nfc(text).lower()


class LinkResolver:
    """Resolves `[[target]]` the way Obsidian does: by path or by file name, ignoring case and
    Unicode normalization.

    When two files share a name, Obsidian picks the one with the shortest path; so do we.
    The note's slug is tried next, so vaults written in the seed's style (`[[slug]]`) work too,
    then its title and aliases: Obsidian leaves `[[Un titre]]` dangling, but GrasBot must still
    know which note it means, or a private note's title would pass for plain text.
    """

    def __init__(self, notes: Iterable[Note]):
        self._by_path: dict[str, str] = {}
        self._by_name: dict[str, str] = {}
        self._by_slug: dict[str, str] = {}
        self._by_label: dict[str, str] = {}
        for note in sorted(notes, key=lambda n: _shortest_first(n.path)):
            self._add_path(note.path, note.name)
            self._by_slug.setdefault(note.slug, note.path)
            for label in (note.title, *note.aliases):
                self._by_label.setdefault(_link_key(label.strip()), note.path)

    @classmethod
    def by_path_alone(cls, paths: Iterable[str]) -> LinkResolver:
        """Finds the notes at `paths` by their path or file name only, as Obsidian finds a note
        whose front matter it has not read: those --exclude left out (`_dangling`)."""
        resolver = cls(())
        for path in sorted(paths, key=_shortest_first):
            resolver._add_path(path, PurePosixPath(path).stem)
        return resolver

    def _add_path(self, path: str, name: str) -> None:
        lower = _link_key(path)
        self._by_path[lower] = path
        self._by_path[lower[:-3]] = path
        self._by_name.setdefault(_link_key(name), path)

    @staticmethod
    def reads(note: Note) -> tuple:
        """Everything __init__ reads of a note (its path aside): a reload whose notes all give
        the same as before keeps the resolver and every unchanged note's resolved links.
        Keep it in step with __init__."""
        return note.slug, note.title, note.aliases

    @staticmethod
    def names(note: Note) -> tuple[str, ...]:
        """The names besides its path and file name a link finds `note` by, as `resolve` reads
        them (its slug, title and aliases): a hidden note that went, or dropped one, leaves them
        in public notes' code, masked as its path is (`retrieval.index`)."""
        return (f"slug:{note.slug}", *(f"label:{_link_key(label.strip())}" for label in (note.title, *note.aliases)))

    @staticmethod
    def named(target: str, names: Mapping[str, str]) -> str | None:
        """The path `names` ({`LinkResolver.names`' name: its note's path}) gives a link's
        `target`, as `resolve` would have when that note held them."""
        key = _link_key(target.strip()).lstrip("/")
        return names.get(f"slug:{slugify(key.removesuffix('.md'))}") or names.get(f"label:{_link_key(target.strip())}")

    def paths(self) -> set[str]:
        """Every note's vault path, whichever audience may read it."""
        return set(self._by_path.values())

    def resolve(self, target: str) -> str | None:
        key = _link_key(target.strip()).lstrip("/")
        if key.endswith(".md"):
            key = key[:-3]
        return (
            self._by_path.get(key)
            or self._by_name.get(key.rsplit("/", 1)[-1])
            or self._by_slug.get(slugify(key))
            or self._by_label.get(_link_key(target.strip()))
        )


_ATTACHMENT = re.compile(r"\.(?:(?!md$)[A-Za-z][A-Za-z0-9]{0,4}|canvas|excalidraw)$", re.IGNORECASE)  # Obsidian's boards and drawings too


def _is_attachment(target: str) -> bool:
    return bool(_ATTACHMENT.search(target.strip()))


def _same_names(vault: Vault, previous: Vault | None, fresh: Iterable[str]) -> bool:
    """Whether every link resolves as in `previous`: same note paths, and the same of what the
    resolver reads for the `fresh` notes (those that are not `previous`'s own objects)."""
    reads = LinkResolver.reads
    return (
        previous is not None
        and previous.resolver is not None
        and previous.notes.keys() == vault.notes.keys()
        and all(reads(previous.notes[p]) == reads(vault.notes[p]) for p in fresh)
    )


def _dangling_issue(path: str, target: str) -> Issue:
    return Issue(path, f"le lien [[{target}]] ne mène à aucune note")


def _dangling(vault: Vault) -> Iterator[Issue]:
    """The warnings of `vault.broken_links`: a link to a note of a folder --exclude left out is
    none (the author chose to leave it out), though no loaded note holds it; nor is a link to a
    note that could not be loaded (`vault.errors` says it once: « leads to no note » too sent
    the author looking for a missing note). Worked out from `vault.excluded` and the notes not
    loaded at each load, so a reload, and a start from the index cache, which keep
    `broken_links`, follow a note added to or removed from such a folder, or mended."""
    unread = vault.excluded | vault.unloaded | vault.unloaded_public
    left_out = LinkResolver.by_path_alone(unread) if unread and vault.broken_links else None
    for path, found in vault.broken_links.items():
        if left_out is not None:
            chosen = {_dangling_issue(path, link.target) for link in vault.notes[path].links if left_out.resolve(link.target) is not None}
            found = tuple(issue for issue in found if issue not in chosen)
        yield from found


def _resolve_one(path: str, note: Note, resolver: LinkResolver, memo: dict) -> tuple[tuple, tuple]:
    edges: dict[str, str] = {}
    found: list[Issue] = []
    said: set[str] = set()  # the missing notes reported: a list searched each time took 7 s for 10,000 of them
    for link in note.links:
        if link.target in memo:
            target = memo[link.target]
        else:
            target = memo[link.target] = resolver.resolve(link.target)
        if target is None and _is_attachment(link.target):
            continue  # an image or a PDF: not a note, so neither an edge nor a broken link
        if target is None:
            if link.target not in said:  # `[[Plan]]`, `![[Plan]]` and `[[Plan#Budget]]`: one note missing, said once
                said.add(link.target)
                found.append(_dangling_issue(path, link.target))
        elif target != path and target not in edges:
            edges[target] = link.kind
    return tuple(edges.items()), tuple(found)


def resolve_links(vault: Vault, previous: Vault | None = None, fresh: Iterable[str] | None = None) -> set[str] | None:
    """Fill `vault.edges` and report links that point nowhere.

    With `previous` holding the same note paths and slugs, a link resolves as it did then: only
    the `fresh` notes (every note not identical to `previous`'s, by default) whose links changed
    are resolved again, the others keep their edge tuples, and the notes resolved again are
    returned, so an index can update its graph for those alone. None: every note was resolved.
    """
    if fresh is None:
        fresh = [p for p, n in vault.notes.items() if previous is None or previous.notes.get(p) is not n]
    memo: dict[str, str | None] = {}
    if _same_names(vault, previous, fresh):
        assert previous is not None and previous.resolver is not None  # what _same_names checked
        resolver = vault.resolver = previous.resolver
        vault.edges, dangling = dict(previous.edges), dict(previous.broken_links)
        relinked = set()
        reorder = False
        for path in fresh:
            note = vault.notes[path]
            if note.links == previous.notes[path].links:
                continue
            relinked.add(path)
            vault.edges[path], found = _resolve_one(path, note, resolver, memo)
            if found:
                reorder |= path not in dangling
                dangling[path] = found
            else:
                dangling.pop(path, None)
        if reorder:  # warnings come in the notes' order
            dangling = {p: dangling[p] for p in vault.notes if p in dangling}
        vault.broken_links = dangling
    else:
        resolver = vault.resolver = LinkResolver(vault.notes.values())
        vault.edges, vault.broken_links = {}, {}
        for path, note in vault.notes.items():
            vault.edges[path], found = _resolve_one(path, note, resolver, memo)
            if found:
                vault.broken_links[path] = found
        relinked = None
    vault.warnings.extend(_dangling(vault))
    return relinked


def _report_duplicates(vault: Vault, previous: Vault | None = None) -> None:
    """Notes sharing a slug; with `previous` under the same names (`_same_names`), its report."""
    if previous is not None:
        vault.duplicate_slugs = previous.duplicate_slugs
    else:
        first: dict[str, str] = {}
        vault.duplicate_slugs = []
        for path in sorted(vault.notes):
            slug = vault.notes[path].slug
            if slug in first:
                vault.duplicate_slugs.append(Issue(path, f"slug « {slug} » en double (déjà celui de {first[slug]})"))
            else:
                first[slug] = path
    vault.warnings.extend(vault.duplicate_slugs)


# ---------------------------------------------------------------- loading


def _not_utf8(name: str) -> bool:
    """A name os.scandir decoded with surrogate escapes: its bytes are not UTF-8, and no JSON
    answer, SQLite row or log line could carry it."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _printable(name: str) -> str:
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def load_vault(
    root: str | os.PathLike[str],
    options: VaultOptions | None = None,
    *,
    previous: Vault | None = None,
    scanned: Iterable[tuple[str, os.DirEntry]] | None = None,
    skipped: Iterable[str] | None = None,
) -> Vault:
    """Load every note below `root`.

    With `previous`, a file whose size, mtime and ctime are unchanged (and were read well after
    its last change: `read_note_file`) is not read again, and one whose bytes hash the same is
    not parsed again: that is what makes a reload cheap. A note whose publish or expiry date
    came since it was read (`Note.turns`) is read again all the same. `scanned`:
    `walk_markdown(root, options)` as a caller ran it, each entry's stat made and kept by the
    entry (a walk made on the daemon's event loop); by default the walk is made here.
    `skipped`: the symbolic links that walk left out (`walk_markdown`), read once it is done.
    """
    options = options or VaultOptions()
    root = Path(root)
    if not root.is_dir():
        raise _no_vault_folder(root)
    reusable = previous is not None and previous.root == root and previous.options == options
    old = previous.notes if previous is not None and reusable else {}
    vault = Vault(root=root, notes={}, options=options)
    fresh: list[str] = []  # notes that are not `previous`'s own objects
    unloaded: list[str] = []
    now = visibility.now()
    unread: list[str] = []  # folders of --exclude that cannot be listed
    excluded = _excluded_folders(root, options, unread)
    for folder, named in excluded.items():  # `Templats` for `Templates/`: nothing would be left out, unsaid
        if not named:
            vault.warnings.append(Issue(folder, NO_SUCH_FOLDER))
    vault.excluded = excluded_notes(root, _named(excluded), unread)
    left_out = functools.cache(lambda: _inodes(root, vault.excluded))
    linked_out: list[str] = []
    if scanned is None:
        skipped = []
        scanned = _scan(root, options, skipped)
    for rel, entry in scanned:
        if not rel.isascii() and _not_utf8(rel):
            vault.errors.append(Issue(_printable(rel), "le nom du fichier (ou de son dossier) n'est pas en UTF-8 : renommez-le"))
            continue
        try:
            st = entry.stat()  # follows a symlink, as os.stat does; cached by the entry
            if st.st_nlink > 1 and (why := _unvouched(st, left_out, unread)):
                vault.warnings.append(Issue(rel, why))
                linked_out.append(rel)
                continue
            known = old.get(rel)
            note = known if known is not None and _unchanged(known, st, now) else _read_again(rel, entry.path, st, known, now, options)
        except ValueError as exc:
            vault.errors.append(Issue(rel, str(exc)))
            unloaded.append(rel)
            continue
        except OSError as exc:
            vault.errors.append(Issue(rel, f"impossible de lire le fichier : {exc.strerror or exc}"))
            unloaded.append(rel)
            continue
        vault.notes[rel] = note
        if note.warnings:
            vault.warnings.extend(Issue(rel, w) for w in note.warnings)
        if note is not known:
            fresh.append(rel)
    vault.excluded |= frozenset(linked_out)
    vault.symlinks = _symlink_targets(root, skipped or ())
    vault.excluded |= _through_links(vault.symlinks, vault.excluded)
    return _linked(vault, previous if reusable else None, fresh, unloaded)


def _named(excluded: dict[str, list[str]]) -> Iterator[str]:
    return (folder for named in excluded.values() for folder in named)


def _excluded_now(root: Path, options: VaultOptions, unread: list[str]) -> frozenset[str]:
    """The notes the folders of --exclude hold now, listed alone (`Vault.as_found`): a public
    note moved into one while another folder cannot be listed left the site, but its new path,
    typed in a public note, reached visitors until a reload succeeded. A folder that cannot be
    listed gives nothing (the paths known before stay masked), and is named in `unread`."""
    return excluded_notes(root, _named(_excluded_folders(root, options, unread)), unread) if options.exclude else frozenset()


def _unvouched(st: os.stat_result, left_out: Callable[[], dict[tuple[int, int], str]], unread: list[str]) -> str | None:
    """Why a note whose file has more than one name (`st`) is left out, if it is: the same file
    as an excluded note (`left_out`, `_inodes`), or perhaps so, a folder of --exclude that cannot
    be listed (`unread`) hiding the other name, which no inode found can rule out. None: served."""
    if (st.st_dev, st.st_ino) in left_out():
        return _hard_linked(left_out()[st.st_dev, st.st_ino])
    if unread:
        said = f"{unread[0]}/, exclu par --exclude, ne peut pas être lu"
        return f"a plusieurs noms (liens physiques) et {said} : laissé de côté, ce pourrait être une de ses notes"
    return None


def _inodes(root: Path, paths: Iterable[str]) -> dict[tuple[int, int], str]:
    """{(st_dev, st_ino): path} of the files at `paths`, those --exclude left out: a hard link
    to one elsewhere in the vault is the same file under a public name, which no path tells
    (a symbolic link's target does). Asked only of a note whose file has more than one name,
    so a vault without hard links stats none of them."""
    found: dict[tuple[int, int], str] = {}
    for rel in paths:
        try:
            st = os.lstat(os.path.join(root, rel))
        except OSError:
            continue
        found[st.st_dev, st.st_ino] = rel
    return found


def _symlink_targets(root: Path, skipped: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """(link, target) of the symbolic links the walk left out that lead inside the vault (into
    a folder of --exclude, a hidden one, or to a note left out), each read once (realpath); none
    for a vault without them."""
    found: list[tuple[str, str]] = []
    real_root: Path | None = None
    for rel in skipped:
        real_root = real_root or root.resolve()
        real = Path(os.path.realpath(root / rel))
        if real.is_relative_to(real_root):
            found.append((rel, real.relative_to(real_root).as_posix()))
    return tuple(found)


def _through_links(links: Iterable[tuple[str, str]], excluded: frozenset[str]) -> frozenset[str]:
    """The excluded notes' paths through `links` (`_symlink_targets`): `public/lien/secret.md` for
    `prive/secret.md`, `public/lien` leading to `prive/`. Typed in a public note, such a path
    names the excluded note as its own does, and is masked as it is. Each excluded path's
    folders are looked up among the links' targets: time in the paths and the paths found, where
    trying each path against each link took seconds for a failed reload, which hands over the
    paths the links gave too (50 links, 10,000 notes)."""
    found: list[str] = []
    into: dict[str, list[str]] = {}  # a folder: the folder links that lead to it
    for rel, target in links:
        if rel.endswith("/"):
            into.setdefault(target, []).append(rel)
        elif target in excluded:
            found.append(rel)
    if into:
        for path in excluded:
            cut = path.rfind("/")
            while cut > 0:
                if (folder := path[:cut]) in into:
                    found += [rel + path[cut + 1 :] for rel in into[folder]]
                cut = path.rfind("/", 0, cut)
    return frozenset(found)


def _hard_linked(excluded: str) -> str:
    return f"même fichier que {excluded} (un lien physique), d'un dossier exclu par --exclude : laissé de côté"


def _in_linked_folder(root: Path, rel: str, linked: dict[str, bool]) -> bool:
    """Whether a folder on the way to `rel` is a symbolic link, each asked once (`linked`): the
    stat of a note there says nothing of where it is, a folder moved into one of --exclude with
    a link left at its old place kept its notes' times (`Vault.as_found` reads its real path)."""
    parts = rel.split("/")[:-1]
    for i in range(1, len(parts) + 1):
        folder = "/".join(parts[:i])
        if folder not in linked:
            linked[folder] = os.path.islink(os.path.join(root, folder))
        if linked[folder]:
            return True
    return False


def _unchanged(note: Note, st: os.stat_result, now: float) -> bool:
    """Whether `note` still reads as its file, of stat `st`, says now: a regular file (else
    `_read_again` says what it is) of the same size, mtime and ctime (-1, changed just before
    its read, never is: `read_note_file`), and no publish or expiry date of its come since
    (`Note.turns`)."""
    return (
        stat.S_ISREG(st.st_mode)
        and (note.turns is None or note.turns > now)
        and note.mtime_ns == st.st_mtime_ns
        and note.size == st.st_size
        and note.ctime_ns == st.st_ctime_ns
    )


def _read_again(rel: str, path: str, st: os.stat_result, known: Note | None, now: float, options: VaultOptions) -> Note:
    """The note at `rel` as its file, of stat `st`, says now; `known`, the note read before,
    kept (its stamps renewed) when its bytes hash the same and no date of its came. Raises
    ValueError (no note: not a regular file, too large, unreadable front matter) or OSError."""
    problem = not_a_note(st)
    if problem is not None:
        raise problem
    raw, mtime_ns, ctime_ns = read_note_file(path)
    if known is None or (known.turns is not None and known.turns <= now):
        return parse_note(rel, raw, mtime_ns=mtime_ns, ctime_ns=ctime_ns, options=options)
    if not raw and not known.public and ctime_ns == -1:
        # emptied just before this read: an editor that truncates a file, then writes it, caught
        # in between; read as is, the note was public (no frontmatter) until the next reload.
        # Kept as it was, to be read again at the next reload (-1)
        return replace(known, ctime_ns=-1)
    if known.digest == _digest(raw):
        return known if (known.mtime_ns, known.ctime_ns) == (mtime_ns, ctime_ns) else replace(known, mtime_ns=mtime_ns, ctime_ns=ctime_ns)
    return parse_note(rel, raw, mtime_ns=mtime_ns, ctime_ns=ctime_ns, options=options)


def _linked(vault: Vault, previous: Vault | None, fresh: list[str], unloaded: Iterable[str]) -> Vault:
    """A load's end, once its notes are read: the notes not loaded that visitors read until
    then (`Vault.unloaded_public`), the slugs shared, the links resolved, and the delta against
    `previous` (of the same root and options, or None). `fresh`: the notes that are not
    `previous`'s own objects."""
    old = previous.notes if previous is not None else {}
    was_public = previous.unloaded_public if previous is not None else frozenset()
    known_public = frozenset(p for p in unloaded if p in was_public or (p in old and old[p].public))
    vault.unloaded = frozenset(unloaded) - known_public
    vault.unloaded_public = known_public
    _report_duplicates(vault, previous if _same_names(vault, previous, fresh) else None)
    relinked = resolve_links(vault, previous, fresh)
    if previous is not None:
        vault.delta = VaultDelta(old, tuple(fresh), previous.edges if relinked is not None else None, None if relinked is None else frozenset(relinked))
    return vault
