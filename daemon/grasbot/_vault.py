"""Reading an Obsidian vault from disk: notes, their frontmatter, and the links between them.

One broken note never stops a load: it is skipped and reported with its path and the reason,
so the author can fix it while every other note keeps serving.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from pathlib import Path, PurePosixPath
from typing import Any, Iterable, Iterator, NamedTuple

import frontmatter
import yaml

from ._analysis import slugify
from ._exceptions import VaultError
from ._frontmatter import load_frontmatter

ALWAYS_EXCLUDED = (".obsidian", ".trash", ".git")
LIST_FIELDS = ("domains", "tags", "aliases", "answers", "linked", "related")

_WIKILINK = re.compile(r"(!?)\[\[([^\[\]|#^]*)(?:[#^]([^\[\]|]*))?(?:\|([^\[\]]*))?\]\]")
_HEADING = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)
_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_INLINE_TAG = re.compile(r"(?<![\w/&#\[])#([^\W\d][\w/-]*)")


class Link(NamedTuple):
    """A named tuple, not a dataclass: a start from the cache makes tens of thousands of them
    (40,000 at 10,000 notes: about 0.08 s as frozen dataclasses, 0.04 s as named tuples)."""

    target: str  # as written, without heading or display text
    display: str | None  # the text after `|`, when the author gave one
    kind: str  # "linked", "related", "body" or "embed"


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
    """A loaded vault. `edges` maps a note's path to the paths it links to, resolved."""

    root: Path
    notes: dict[str, Note]
    options: VaultOptions = field(default_factory=lambda: VaultOptions())
    errors: list[Issue] = field(default_factory=list)  # notes that could not be loaded
    warnings: list[Issue] = field(default_factory=list)  # duplicate slugs, dangling links, odd fields
    edges: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)  # path -> ((target, kind), ...)
    resolver: "LinkResolver | None" = None
    # what a reload reuses: each note's broken links, the duplicate-slug report, and which notes'
    # links were resolved again since `_edges_base` (the previous vault's edges; None: all of them)
    _dangling: dict[str, tuple[Issue, ...]] = field(default_factory=dict, repr=False, compare=False)
    _duplicates: list[Issue] = field(default_factory=list, repr=False, compare=False)
    _relinked: set[str] | None = field(default=None, repr=False, compare=False)
    _edges_base: dict | None = field(default=None, repr=False, compare=False)
    # the notes dict load_vault compared the files with (previous.notes), and which notes are not
    # its objects: what the engine and the indexes need to touch on a reload
    _base: dict | None = field(default=None, repr=False, compare=False)
    _fresh: list[str] = field(default_factory=list, repr=False, compare=False)

    def by_slug(self, slug: str) -> Note | None:
        for note in self.notes.values():
            if note.slug == slug:
                return note
        return None


@dataclass(frozen=True)
class VaultOptions:
    exclude: tuple[str, ...] = ()  # vault-relative folders the author keeps out
    default_public: bool = False  # `--default-visibility public`


# ---------------------------------------------------------------- walking the folder


def _digest(raw: bytes) -> str:
    return hashlib.blake2b(raw, digest_size=16).hexdigest()


def _excluded(rel: str, options: VaultOptions) -> bool:
    parts = rel.split("/")
    if any(p in ALWAYS_EXCLUDED for p in parts):
        return True
    return any(rel == ex or rel.startswith(ex.rstrip("/") + "/") for ex in options.exclude)


def iter_markdown(root: Path, options: VaultOptions) -> Iterable[tuple[str, Path]]:
    """Every `.md` file below `root`, as (relative path, absolute path).

    Symlinks are followed only while they stay inside the vault: a link to /etc or to the
    author's home must not turn it into part of a public site.
    """
    for rel, entry in _scan(root, options):
        yield rel, Path(entry.path)


def _scan(root: Path, options: VaultOptions) -> list[tuple[str, os.DirEntry]]:
    """iter_markdown's walk (os.walk's order: top-down, names sorted), as a list of
    (relative path, os.DirEntry)."""
    return list(walk_markdown(root, options))


def walk_markdown(root: str | os.PathLike[str], options: VaultOptions) -> Iterator[tuple[str, os.DirEntry]]:
    """`_scan`'s walk, one file at a time: the daemon stats a vault's files on its event loop,
    a few hundred between two turns of requests (`_server.reload_vault`).

    Only a symlink needs a system call to learn where it really points: any other entry's real
    path is its real parent's plus its name, so 10,000 files cost no `resolve()` each.
    """
    root = Path(root)
    real_root = root.resolve()
    seen_dirs: set[str] = set()

    def inside(real: str) -> bool:
        return Path(real).is_relative_to(real_root)

    def walk(dirpath: str, real_dir: str, rel_dir: str, linked: bool) -> Iterator[tuple[str, os.DirEntry]]:
        # a folder reached without a symlink is inside its parent, so inside the vault
        if real_dir in seen_dirs or (linked and not inside(real_dir)):
            return
        seen_dirs.add(real_dir)
        try:
            with os.scandir(dirpath) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:  # os.walk skips a folder it cannot list; so do we
            return
        prefix = f"{rel_dir}/" if rel_dir else ""
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
            if not name.lower().endswith(".md"):
                continue
            if _is_link(entry) and not inside(os.path.realpath(entry.path)):
                continue
            # interned: every table keyed by path then holds this one object, and a dict lookup
            # stops at identity (marshal keeps the flag, so the cache and _parallel load it so)
            yield sys.intern(prefix + name), entry
        for entry in dirs:
            rel = prefix + entry.name
            if _excluded(rel, options):
                continue
            linked = _is_link(entry)
            real = os.path.realpath(entry.path) if linked else os.path.join(real_dir, entry.name)
            yield from walk(entry.path, real, rel, linked)

    yield from walk(os.fspath(root), os.fspath(real_root), "", False)


def _is_link(entry: os.DirEntry) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return True  # unknown: take the slow, safe path


# ---------------------------------------------------------------- parsing one note


def _as_list(value: Any, name: str, warnings: list[str]) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, (str, int, float)):
        value = [value]
    if not isinstance(value, list):
        warnings.append(f"`{name}` should be a list, got {type(value).__name__}: ignored")
        return ()
    return tuple(str(v).strip() for v in value if v is not None and str(v).strip())


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    text = str(value).strip()
    return text or None


# _WIKILINK without its leading `(!?)`, so the scan jumps from `[[` to `[[`; the `!` is looked up
# by hand (the character before a `[[` never belongs to the previous link, which ends with `]]`).
_WIKILINK_AT = re.compile(_WIKILINK.pattern.removeprefix("(!?)"))
# _INLINE_TAG without its look-behind, checked by hand: `#` is not in [\w/-], so a refused match
# never hides another one.
_TAG_AT = re.compile(_INLINE_TAG.pattern.removeprefix(r"(?<![\w/&#\[])"))
_TAG_REFUSED = re.compile(r"[\w/&#\[]")


def _links_in(text: str, kind: str) -> list[Link]:
    out = []
    if "[[" not in text:
        return out
    for m in _WIKILINK_AT.finditer(text):
        target = m.group(1).strip()
        if not target:  # [[#heading]] points inside the same note
            continue
        start = m.start()
        embed = start > 0 and text[start - 1] == "!"
        out.append(Link(target, (m.group(3) or "").strip() or None, "embed" if embed else kind))
    return out


def _inline_tags(prose: str) -> list[str]:
    """_INLINE_TAG.findall(prose), scanning from `#` to `#`."""
    if "#" not in prose:
        return []
    return [
        m.group(1)
        for m in _TAG_AT.finditer(prose)
        if m.start() == 0 or not _TAG_REFUSED.match(prose, m.start() - 1)
    ]


def parse_note(rel: str, raw: bytes, *, mtime_ns: int, options: VaultOptions) -> Note:
    """Parse one note; raises ValueError with a reader-facing reason when it cannot be used."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 (byte {exc.start}): re-save the file as UTF-8") from None
    handler = frontmatter.YAMLHandler()
    meta: Any = {}
    body = text
    try:
        # split + load, not frontmatter.loads(): loads() breaks on a field named `content`, and
        # parse() silently turns a frontmatter that is a list into no frontmatter at all.
        if handler.detect(text):
            header, body = handler.split(text)
            meta = load_frontmatter(header)
            meta = {} if meta is None else meta
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" at line {where.line + 1}" if where is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise ValueError(f"broken YAML frontmatter{line}: {problem}") from None
    except Exception as exc:  # odd headers make python-frontmatter raise plain errors
        raise ValueError(f"unreadable frontmatter: {type(exc).__name__}") from None
    if not isinstance(meta, dict):
        raise ValueError("frontmatter is not a mapping of fields")
    warnings: list[str] = []
    stem = PurePosixPath(rel).stem

    prose = body
    if "```" in prose or "~~~" in prose:  # each regex needs its literal: skip the scan without it
        prose = _FENCE.sub(" ", prose)
    if "`" in prose:
        prose = _INLINE_CODE.sub(" ", prose)
    title = _as_text(meta.get("title"))
    if title is None:
        heading = _HEADING.search(prose)
        title = heading.group(1).strip() if heading else stem
    slug = slugify(_as_text(meta.get("slug")) or "") or slugify(stem) or hashlib.sha1(rel.encode()).hexdigest()[:8]

    lists = {name: _as_list(meta.get(name), name, warnings) for name in LIST_FIELDS}
    inline_tags = [t.strip("/") for t in _inline_tags(prose)]
    tags = tuple(dict.fromkeys(t.lstrip("#") for t in (*lists["tags"], *inline_tags) if t.lstrip("#")))

    priority = meta.get("priority")
    if priority is not None and (isinstance(priority, bool) or not isinstance(priority, (int, float))):
        warnings.append(f"`priority` should be a number, got {priority!r}: ignored")
        priority = None

    links = []
    for kind in ("linked", "related"):
        for item in lists[kind]:
            found = _links_in(item, kind)
            links.extend(found or [Link(item.strip(), None, kind)])
    links.extend(_links_in(prose, "body"))

    visibility = meta.get("visibility")
    public = options.default_public if visibility is None else str(visibility).strip().lower() == "public"

    note = Note(
        path=rel,
        slug=slug,
        title=title,
        type=_as_text(meta.get("type")),
        source=_as_text(meta.get("source")),
        domains=lists["domains"],
        tags=tags,
        aliases=lists["aliases"],
        answers=lists["answers"],
        priority=float(priority) if priority is not None else None,
        updated=_as_text(meta.get("updated")),
        public=public,
        body=body,
        links=tuple(links),
        mtime_ns=mtime_ns,
        size=len(raw),
        digest=_digest(raw),
        warnings=tuple(warnings),
    )
    return note


# ---------------------------------------------------------------- links between notes


def rewrite_links(text: str, keep) -> str:
    """`text` with every wikilink turned into plain words: its label, or its target's name when
    `keep(target)` says the reader may see that note; a link to a note the reader may not see
    keeps only the label the author wrote in this note, or nothing. (`_WIKILINK.sub`, scanned
    from each `[[` like `_links_in`: a pattern that starts with `(!?)` is tried at every
    position of every body.)"""
    if "[[" not in text:  # no wikilink without it: spare the scan
        return text
    out: list[str] = []
    last = 0
    for m in _WIKILINK_AT.finditer(text):
        start = m.start()
        if start > last and text[start - 1] == "!":  # an embed's `!` goes with it
            start -= 1
        out.append(text[last:start])
        target, label = m.group(1).strip(), (m.group(3) or "").strip()
        if label or not target:
            out.append(label)
        elif keep(target):
            out.append(PurePosixPath(target).name)
        last = m.end()
    out.append(text[last:])
    return "".join(out)


class LinkResolver:
    """Resolves `[[target]]` the way Obsidian does: by path or by file name, ignoring case.

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
        for note in sorted(notes, key=lambda n: (n.path.count("/"), len(n.path), n.path)):
            lower = note.path.lower()
            self._by_path[lower] = note.path
            self._by_path[lower[:-3]] = note.path
            self._by_name.setdefault(note.name.lower(), note.path)
            self._by_slug.setdefault(note.slug, note.path)
            for label in (note.title, *note.aliases):
                self._by_label.setdefault(label.strip().lower(), note.path)

    @staticmethod
    def reads(note: Note) -> tuple:
        """Everything __init__ reads of a note (its path aside): a reload whose notes all give
        the same as before keeps the resolver and every unchanged note's resolved links.
        Keep it in step with __init__."""
        return note.slug, note.title, note.aliases

    def resolve(self, target: str) -> str | None:
        key = target.strip().lower().lstrip("/")
        if key.endswith(".md"):
            key = key[:-3]
        return (
            self._by_path.get(key)
            or self._by_name.get(key.rsplit("/", 1)[-1])
            or self._by_slug.get(slugify(key))
            or self._by_label.get(target.strip().lower())
        )


_ATTACHMENT = re.compile(r"\.(?!md$)[A-Za-z][A-Za-z0-9]{0,4}$")


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


def _resolve_one(path: str, note: Note, resolver: LinkResolver, memo: dict) -> tuple[tuple, tuple]:
    edges: dict[str, str] = {}
    found: list[Issue] = []
    for link in note.links:
        if link.target in memo:
            target = memo[link.target]
        else:
            target = memo[link.target] = resolver.resolve(link.target)
        if target is None and _is_attachment(link.target):
            continue  # an image or a PDF: not a note, so neither an edge nor a broken link
        if target is None:
            found.append(Issue(path, f"link [[{link.target}]] points to no note"))
        elif target != path and target not in edges:
            edges[target] = link.kind
    return tuple(edges.items()), tuple(found)


def resolve_links(vault: Vault, previous: Vault | None = None, fresh: Iterable[str] | None = None) -> None:
    """Fill `vault.edges` and report links that point nowhere.

    With `previous` holding the same note paths and slugs, a link resolves as it did then: only
    the `fresh` notes (every note not identical to `previous`'s, by default) whose links changed
    are resolved again, the others keep their edge tuples, and `vault._relinked` names the
    notes resolved again, so an index can update its graph for those alone.
    """
    if fresh is None:
        fresh = [p for p, n in vault.notes.items() if previous is None or previous.notes.get(p) is not n]
    memo: dict[str, str | None] = {}
    if _same_names(vault, previous, fresh):
        resolver = vault.resolver = previous.resolver
        vault.edges, dangling = dict(previous.edges), dict(previous._dangling)
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
        vault._dangling, vault._relinked, vault._edges_base = dangling, relinked, previous.edges
    else:
        resolver = vault.resolver = LinkResolver(vault.notes.values())
        vault.edges, vault._dangling = {}, {}
        for path, note in vault.notes.items():
            vault.edges[path], found = _resolve_one(path, note, resolver, memo)
            if found:
                vault._dangling[path] = found
        vault._relinked, vault._edges_base = None, None
    for found in vault._dangling.values():
        vault.warnings.extend(found)


def _report_duplicates(vault: Vault, previous: Vault | None = None) -> None:
    """Notes sharing a slug; with `previous` under the same names (`_same_names`), its report."""
    if previous is not None:
        vault._duplicates = previous._duplicates
    else:
        first: dict[str, str] = {}
        vault._duplicates = []
        for path in sorted(vault.notes):
            slug = vault.notes[path].slug
            if slug in first:
                vault._duplicates.append(Issue(path, f"duplicate slug '{slug}' (also used by {first[slug]})"))
            else:
                first[slug] = path
    vault.warnings.extend(vault._duplicates)


# ---------------------------------------------------------------- loading


def load_vault(
    root: str | os.PathLike[str],
    options: VaultOptions | None = None,
    *,
    previous: Vault | None = None,
    scanned: Iterable[tuple[str, os.DirEntry]] | None = None,
) -> Vault:
    """Load every note below `root`.

    With `previous`, a file whose size and mtime are unchanged is not read again, and one whose
    bytes hash the same is not parsed again: that is what makes a reload cheap. `scanned`:
    `walk_markdown(root, options)` as a caller ran it, each entry's stat made and kept by the
    entry (a walk made on the daemon's event loop); by default the walk is made here.
    """
    options = options or VaultOptions()
    root = Path(root)
    if not root.is_dir():
        raise VaultError(f"vault folder not found: {root} (set --vault or VAULT_DIR)")
    reusable = previous is not None and previous.root == root and previous.options == options
    old = previous.notes if reusable else {}
    vault = Vault(root=root, notes={}, options=options)
    fresh: list[str] = []  # notes that are not `previous`'s own objects
    for rel, entry in _scan(root, options) if scanned is None else scanned:
        try:
            st = entry.stat()  # follows a symlink, as os.stat does; cached by the entry
            known = note = old.get(rel)
            if note is None or note.mtime_ns != st.st_mtime_ns or note.size != st.st_size:
                with open(entry.path, "rb") as f:
                    raw = f.read()
                if note is not None and note.digest == _digest(raw):
                    note = replace(note, mtime_ns=st.st_mtime_ns)
                else:
                    note = parse_note(rel, raw, mtime_ns=st.st_mtime_ns, options=options)
        except ValueError as exc:
            vault.errors.append(Issue(rel, str(exc)))
            continue
        except OSError as exc:
            vault.errors.append(Issue(rel, f"cannot read the file: {exc.strerror or exc}"))
            continue
        vault.notes[rel] = note
        if note is not known:
            fresh.append(rel)
        if note.warnings:
            vault.warnings.extend(Issue(rel, w) for w in note.warnings)
    previous = previous if reusable else None
    vault._base, vault._fresh = (old if previous is not None else None), fresh
    _report_duplicates(vault, previous if _same_names(vault, previous, fresh) else None)
    resolve_links(vault, previous, fresh)
    return vault
