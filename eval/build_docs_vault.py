#!/usr/bin/env python3
"""Build the "French documentation" evaluation vault from Debian's manpages-fr.

Each chosen French man page is rendered by man-db (`man -l`, no hyphenation, no
justification, very wide lines so that a paragraph comes out on one line), flattened
by `col -bx`, and turned into an Obsidian note:

    ---
    title: "tar — Utilitaire d’archivage"     (the page's own NOM line)
    visibility: public
    ---
    # tar
    ## NOM / ## SYNOPSIS / ## DESCRIPTION / ...   (lines at column 0)
    ### ...                                        (sub-sections, column 3)
    paragraphs as text, tagged paragraphs (options) as bullet items,
    runs of unfilled lines (examples, synopses) as fenced blocks.

Only pages that the manpages-fr package itself installs are used; a page is left out
when it renders larger than MAX_NOTE_BYTES or when too much of it is still English.

Usage: python3 eval/build_docs_vault.py [--out eval/vaults/docs-fr]
Needs: apt-get install -y manpages-fr man-db groff-base
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

PACKAGE = "manpages-fr"
MAN_ROOT = Path("/usr/share/man/fr")
MAX_NOTE_BYTES = 150_000
MAX_ENGLISH_SHARE = 0.15  # share of the prose (in characters) that reads as English

# "section: names": user commands first, then file formats, overviews and admin commands.
PAGES = """
1: at base64 basename bzip2 cat chattr chgrp chmod chown cmp comm cp crontab csplit cut
   date dd df diff dircolors dirname dmesg du echo env expand expr factor fallocate file
   find flock fold getent grep groups gzip head iconv id install ionice join last ldd ln
   locale logger ls lsattr lscpu md5sum mkdir mkfifo mktemp more mountpoint mv namei nano
   nice nl nohup nproc numfmt od paste printenv printf pwd readlink realpath rename.ul
   renice rev rm rmdir script sdiff sed seq setterm sha256sum shred shuf sleep sort split
   stat stty su systemd-analyze tac tail tar taskset tee test time timeout tr tree truncate
   tty uname uniq usb-devices uuidgen wall wc wget whereis who whoami whois xargs xrandr yes
5: at.allow exports group protocols services shells
7: ascii boot credentials environ hier hostname inode locale signal symlink utf-8 xattr
8: agetty atd badblocks blkid blockdev cfdisk cron debugfs dumpe2fs e4defrag fdisk findfs
   fsck fsck.fat fstrim halt invoke-rc.d ld.so lspci lsusb mkfs mkfs.fat mount ping
   resize2fs rtcwake service shutdown swaplabel tune2fs umount update-rc.d
"""

HEADER_FOOTER = re.compile(r"^\S+\(\w+\)")  # "TAR(1)  Manuel de GNU TAR  TAR(1)"
GAP = re.compile(r" {2,}")
NAME_DASH = re.compile(r"\s+[-‐‑−–—]\s+")
BULLETS = {"•", "·", "-", "*", "o", "+"}
TIGHT_TAG = re.compile(r"^[-+/][\w.-]*( [\w.<>\[\]=|-]+)?$|^[a-z]+$")  # "-gid n", "--zero", "search"
TABLE = re.compile(r"[│─┼├┤┬┴]")
ORDINAL = re.compile(r"^\(?(\d{1,2}|[a-z])[.)]$")

EN_WORDS = set(
    "the and of to is are with this that for from be by not which when if it an will can been "
    "has have was were their these those such into than only other also any each used using "
    "does should must may".split()
)
FR_WORDS = set(
    "le la les de des du et est sont avec ce cette pour dans un une par pas qui quand si il ou "
    "sur être peut au aux que ne se sa son ses leur été fichier fichiers".split()
)


def chosen_pages() -> list[tuple[str, str]]:
    pages = []
    for line in PAGES.strip().split("\n"):
        if ":" in line.split()[0]:
            section, line = line.split(":", 1)
        pages += [(name, section.strip()) for name in line.split()]
    return pages


def package_files() -> set[str]:
    listing = subprocess.run(["dpkg", "-L", PACKAGE], capture_output=True, text=True, check=True)
    return set(listing.stdout.split())


def package_version() -> str:
    out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", PACKAGE], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def render(path: Path) -> list[str]:
    """The page as plain text lines: man-db, no hyphenation/justification, one line per paragraph."""
    env = {**os.environ, "MANWIDTH": "5000", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "MAN_KEEP_FORMATTING": ""}
    man = subprocess.run(["man", "--nh", "--nj", "-E", "UTF-8", "-l", str(path)], capture_output=True, env=env, check=True)
    col = subprocess.run(["col", "-bx"], input=man.stdout, capture_output=True, env=env, check=True)
    text = re.sub(r"\\f[BIRP]", "", col.stdout.decode("utf-8", "replace"))  # a few translations leave "\fP"
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    if lines and HEADER_FOOTER.match(lines[0]):
        lines.pop(0)
    if lines and re.search(r"\S+\(\w+\)$", lines[-1]) and not lines[-1].startswith(" "):
        lines.pop()
    return lines


# ---------------------------------------------------------------- Markdown helpers


def escape_inline(text: str) -> str:
    """Keep Obsidian from reading man-page text as markup (emphasis, math, comments, links, HTML)."""
    text = text.replace("\\", "\\\\")
    for ch in "*$`":
        text = text.replace(ch, "\\" + ch)
    text = text.replace("%%", "\\%\\%").replace("[[", "\\[\\[").replace("](", "\\](").replace("==", "\\=\\=")
    return re.sub(r"<(?=[A-Za-z/!?])(?![\w.+-]+@[\w.-]+>|[a-z]+://[^\s<>]*>)", r"\\<", text)


def escape(text: str) -> str:
    """escape_inline, plus what would open a heading, a quote, a list or a table at a line's start."""
    text = escape_inline(text)
    text = re.sub(r"^([#>|]|[-+] |~~~|---|===)", r"\\\1", text)
    return re.sub(r"^(\d+)([.)])(\s)", r"\1\\\2\3", text)


def split_gap(text: str) -> tuple[str, str] | None:
    """ "-c     avec -lt, trier…" -> ("-c", "avec -lt, trier…"): a short tag and its body on one line."""
    parts = GAP.split(text)
    if len(parts) != 2 or len(parts[0]) > 30:
        return None
    return parts[0], parts[1]


def looks_like_tag(text: str) -> bool:
    """A tagged paragraph's tag, not a sentence that an indented example follows."""
    return len(text) <= 100 and not (len(text) > 30 and text[-1] in ".:,")


def english_share(paragraphs: list[str]) -> float:
    english = total = 0
    for paragraph in paragraphs:
        words = re.findall(r"[a-zà-ÿ]+", paragraph.lower())
        if len(words) < 6:
            continue
        en = sum(w in EN_WORDS for w in words)
        fr = sum(w in FR_WORDS for w in words)
        total += len(paragraph)
        if en > fr and en >= 2:
            english += len(paragraph)
    return english / total if total else 0.0


class Converter:
    """Turns rendered man text into Markdown, keeping a stack of open option items."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.stack: list[tuple[int, int]] = []  # (tag indent, body indent) of each open item
        self.prose: list[str] = []
        self.sections: dict[str, list[str]] = {}
        self.current: str | None = None
        self.last_item: tuple[int, int] | None = None  # the item closed last
        self.bare_item: str | None = None  # separator, when the last line is an item still without text

    # -- output
    def emit(self, text: str) -> None:
        if self.out and self.out[-1] != "":
            self.out.append("")
        self.out.append(text)
        self.bare_item = None

    def prefix(self) -> str:
        return "  " * len(self.stack)

    def paragraph(self, text: str) -> None:
        self.prose.append(text)
        if self.current is not None:
            self.sections[self.current].append(text)
        if self.bare_item is not None:  # "- **-a, --all** : inclure les entrées…"
            self.out[-1] += self.bare_item + escape_inline(text)
            self.bare_item = None
        else:
            self.emit(self.prefix() + escape(text))

    def item(self, tag: str, indent: int, body_indent: int, body: str | None = None) -> None:
        if tag in BULLETS:
            head = "- "
        elif ORDINAL.match(tag):
            head = re.sub(r"\W", "", tag) + ". "
        else:
            head = f"- **{escape_inline(tag)}**" + (" : " if body else "")
        self.emit(self.prefix() + head + (escape_inline(body) if body else ""))
        if not body:  # its text is the next paragraph
            self.bare_item = " : " if head.endswith("**") else ""
        else:
            self.prose.append(body)
            if self.current is not None:
                self.sections[self.current].append(body)
        self.stack.append((indent, body_indent))

    def code(self, lines: list[tuple[int, str]]) -> None:
        base = min(indent for indent, _ in lines)
        pre = self.prefix()
        block = [pre + "```"] + [pre + " " * (indent - base) + text for indent, text in lines] + [pre + "```"]
        if self.out and self.out[-1].endswith("\n" + pre + "```") and self.bare_item is None:
            self.out[-1] = "\n".join([self.out[-1][: -len(pre + "```")] + pre, *block[1:]])  # one block, not two
        else:
            self.emit("\n".join(block))
        if self.current is not None:
            self.sections[self.current].extend(text for _, text in lines)

    def close_items(self, indent: int) -> None:
        while self.stack and indent <= self.stack[-1][0]:
            self.last_item = self.stack.pop()

    def tight_tag(self, indent: int, text: str) -> tuple[str, str] | None:
        """ "--zero terminer chaque ligne…": a tag that filled its column, one space before its text."""
        if not self.last_item or self.last_item[0] != indent:
            return None
        width = self.last_item[1] - indent
        tag, space, body = text[: width - 1], text[width - 1 : width], text[width:]
        if space == " " and body and TIGHT_TAG.match(tag):
            return tag, body
        return None

    # -- input
    def heading(self, text: str, level: int) -> None:
        self.stack.clear()
        self.last_item = None
        self.emit("#" * level + " " + text.strip())
        if level == 2:
            self.current = text.strip()
            self.sections.setdefault(self.current, [])

    def block(self, lines: list[tuple[int, str]]) -> None:
        """A run of non-blank lines between two blank lines."""
        if any(TABLE.search(text) or (len(GAP.findall(text)) > 1 and len(text) < 200) for _, text in lines):
            self.close_items(lines[0][0])
            self.code(lines)  # a table (tbl): keep its columns as they are
            return
        i = 0
        while i < len(lines):
            indent, text = lines[i]
            self.close_items(indent)
            j = i
            while j < len(lines) and lines[j][0] == indent:
                j += 1
            run = lines[i:j]
            if j < len(lines) and lines[j][0] > indent and looks_like_tag(run[-1][1]):  # tag(s), deeper body
                if len(run) > 3:
                    self.code(run[:-1])
                    run = run[-1:]
                self.item(", ".join(t for _, t in run), indent, lines[j][0])
                i = j
                continue
            gaps = [split_gap(t) for _, t in run]
            if all(gaps) and (len(run) == 1 or all(len(GAP.findall(t)) == 1 for _, t in run)):
                for (ind, t), (tag, body) in zip(run, gaps, strict=True):
                    self.close_items(ind)
                    self.item(tag, ind, ind + len(t) - len(body), body)
            elif len(run) == 1 and (tight := self.tight_tag(indent, text)):
                self.item(tight[0], indent, self.last_item[1], tight[1])
            elif len(run) == 1 and (not GAP.search(text) or len(text) > 120):
                self.paragraph(GAP.sub(" ", text))
            else:
                self.code(run)
            i = j

    def convert(self, lines: list[str]) -> None:
        pieces: list[tuple[int, str] | list[tuple[int, str]]] = []  # headings (level, text) and blocks
        group: list[tuple[int, str]] = []
        for line in lines + [""]:
            indent = len(line) - len(line.lstrip(" "))
            if group and (not line.strip() or indent == 0):
                pieces.append(group)
                group = []
            if not line.strip():
                continue
            if indent == 0:
                pieces.append((2, line))
            elif indent < 5 and len(line) < 120 and not group:
                pieces.append((3, line))
            else:
                group.append((indent, line.strip()))
        for piece, after in zip(pieces, pieces[1:] + [None], strict=True):
            if isinstance(piece, tuple):
                self.heading(piece[1], piece[0])
            elif isinstance(after, list) and self.lone_tag(piece, after):  # .HP tag, blank line, .IP text
                self.close_items(piece[0][0])
                self.item(piece[0][1], piece[0][0], after[0][0])
            else:
                self.block(piece)

    @staticmethod
    def lone_tag(block: list[tuple[int, str]], after: list[tuple[int, str]]) -> bool:
        ((indent, text),) = block if len(block) == 1 else [(0, "")]
        return bool(text) and after[0][0] > indent and len(text) <= 60 and not GAP.search(text) and text[-1] not in ".:,"


def yaml_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def note_for(name: str, lines: list[str]) -> tuple[str, float]:
    conv = Converter()
    conv.convert(lines)
    nom = (conv.sections.get("NOM") or [name])[0]  # its first line: bzip2(1) names three programs
    title = NAME_DASH.sub(" — ", nom, count=1)
    head = ["---", f"title: {yaml_quote(title)}", "visibility: public", "---", f"# {name}", "", ""]
    body = "\n".join(conv.out).rstrip() + "\n"
    return "\n".join(head) + body, english_share(conv.prose)


def write_source(out: Path, version: str, kept: list[str]) -> None:
    (out / "SOURCE.txt").write_text(
        f"""French documentation vault for GrasBot's evaluation.

Text: French translations of man pages, as installed by the Debian package
{PACKAGE} {version} (source package manpages-l10n,
https://manpages-l10n-team.pages.debian.net/manpages-l10n/), rendered with man-db and
converted to Markdown by eval/build_docs_vault.py. One note per page: NAME.SECTION.md.
{len(kept)} pages; only pages installed by {PACKAGE} itself are used.

Licence: the French translations are distributed under the GNU General Public License,
version 3 or later (GPL-3+), as stated in /usr/share/doc/{PACKAGE}/copyright, copied
beside this file as LICENSE.txt. The text is a derived work of the original (English)
man pages of each program, whose own licences are those of the programs' documentation
(see each page's COPYRIGHT / "DROITS D'AUTEUR" section, kept in its note).

Regenerate (Debian, as root for the install):
    apt-get install -y {PACKAGE} man-db groff-base
    python3 eval/build_docs_vault.py --out eval/vaults/docs-fr
""",
        encoding="utf-8",
    )
    shutil.copyfile(f"/usr/share/doc/{PACKAGE}/copyright", out / "LICENSE.txt")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "vaults" / "docs-fr")
    args = parser.parse_args()

    owned = package_files()
    out: Path = args.out
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    kept, dropped = [], []
    for name, section in chosen_pages():
        path = MAN_ROOT / f"man{section}" / f"{name}.{section}.gz"
        if str(path) not in owned or path.is_symlink():
            dropped.append(f"{name}.{section}: not a page of {PACKAGE}")
            continue
        note, english = note_for(name, render(path))
        size = len(note.encode("utf-8"))
        if size > MAX_NOTE_BYTES:
            dropped.append(f"{name}.{section}: {size} bytes")
        elif english > MAX_ENGLISH_SHARE:
            dropped.append(f"{name}.{section}: {english:.0%} English")
        else:
            (out / f"{name}.{section}.md").write_text(note, encoding="utf-8")
            kept.append(f"{name}.{section}")
    write_source(out, package_version(), kept)
    total = sum(p.stat().st_size for p in out.iterdir())
    print(f"{len(kept)} notes written to {out} ({total / 1e6:.2f} MB with SOURCE.txt and LICENSE.txt)")
    for line in dropped:
        print("dropped", line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
