#!/usr/bin/env python3
"""Build a second French documentation vault from Debian's `debian-reference-fr`.

The documentation vault of `build_docs_vault.py` is man pages: one command a note, a NOM line
that says what it does. A site's documentation is more often a book cut into pages of prose,
with headings, tables and commands among sentences: the « Référence Debian » (Osamu Aoki),
one note a subsection (« 1.2.3. Permissions du système de fichiers »), or a section without
subsections, of its chapters that are translated (a paragraph that reads as English is left
out, and a chapter mostly in English with it):

    ---
    title: "Permissions du système de fichiers"   (the heading, its number left out)
    visibility: public
    ---
    # Permissions du système de fichiers
    paragraphs as text, listings and screens as fenced blocks, list items and table rows as
    bullets, a link to another section as a wikilink to its note.

Usage: python3 eval/build_reference_vault.py --html DIR [--out eval/vaults/reference-fr]
DIR: usr/share/debian-reference of the package (`apt-get download debian-reference-fr &&
dpkg-deb -x debian-reference-fr_*.deb tree`).
"""

from __future__ import annotations

import argparse
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

_BLOCKS = {"p", "div", "li", "dt", "dd", "tr", "table", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "dl", "br"}
_NUMBER = re.compile(r"^(?:Chapitre\s+\d+\.|Annexe\s+\w\.|[\dA-Z]+(?:\.\d+)*\.)\s+")


class _Page(HTMLParser):
    """The page's text as Markdown blocks; the navigation, banner and index anchors left out."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title = ""
        self.blocks: list[str] = []
        self._line: list[str] = []
        self._skip = 0  # depth inside something left out
        self._stack: list[tuple[str, bool]] = []
        self._pre = 0
        self._heading = 0
        self._in_title = False
        self._first_heading: int | None = None
        self._href: str | None = None
        self._link_text: list[str] = []

    def _flush(self, prefix: str = "") -> None:
        text = "".join(self._line)
        self._line = []
        if self._pre:
            return
        text = re.sub(r"\s+", " ", text).strip()
        if text:
            self.blocks.append(prefix + text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = a.get("class") or ""
        skip = self._skip > 0 or (tag == "ul" and "docnav" in cls) or a.get("id") in ("banner", "title") or "indexterm" in cls or tag in ("script", "style")
        skip = skip or (tag == "div" and cls in ("toc", "legalnotice")) or (tag == "p" and a.get("id") == "title")
        self._stack.append((tag, skip))
        if skip:
            self._skip += 1
            return
        if tag == "title":
            self._in_title = True
        if tag in _BLOCKS and not self._pre:
            self._flush()
        if tag == "pre":
            self._pre += 1
            self._line = []
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._heading = int(tag[1])
        elif tag == "code" and not self._pre:
            self._line.append("`")
        elif tag == "a" and (a.get("href") or "").split("#")[0].endswith(".html") and "://" not in (a.get("href") or ""):
            self._href = a["href"].split("#")[0]
            self._link_text = []

    def handle_endtag(self, tag):
        while self._stack:
            open_tag, skip = self._stack.pop()
            if skip:
                self._skip -= 1
            if open_tag == tag:
                break
        else:
            return
        if skip or self._skip:
            return
        if tag == "title":
            self._in_title = False
        elif tag == "pre":
            text = "".join(self._line).strip("\n")
            self._line = []
            self._pre -= 1
            if text.strip():
                self.blocks.append("```\n" + text + "\n```")
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            text = _NUMBER.sub("", re.sub(r"\s+", " ", "".join(self._line)).strip().replace("`", ""))
            self._line = []
            level = int(tag[1])
            if self._first_heading is None:
                self._first_heading = level
            depth = max(1, level - self._first_heading + 1)
            if text:
                self.blocks.append("#" * depth + " " + text)
            self._heading = 0
        elif tag == "code" and not self._pre:
            self._line.append("`")
        elif tag == "a" and self._href is not None:
            text = re.sub(r"\s+", " ", "".join(self._link_text)).strip().replace("`", "").replace("|", "-").replace("]", ")").replace("[", "(")
            target = self._href[: -len(".html")]
            # the link's words were written to the line as they came: put the wikilink in their place
            joined = "".join(self._line)
            if text and joined.rstrip().endswith("".join(self._link_text).rstrip()):
                cut = len(joined.rstrip()) - len("".join(self._link_text).rstrip())
                self._line = [joined[:cut], f"[[{target}|{_NUMBER.sub('', text)}]]"]
            self._href = None
        elif tag == "li":
            self._flush("- ")
        elif tag in _BLOCKS:
            self._flush()

    def handle_data(self, data):
        if self._skip:
            return
        if self._in_title:
            self.title += data
            return
        self._line.append(data)
        if self._href is not None:
            self._link_text.append(data)


EN = frozenset("the and of to is are with this that for you which be can it by on as an not will from".split())
FR = frozenset("le la les des et est un une du pour dans qui que sur pas par au aux avec ce il sont".split())
CHAPTERS = ("ch01", "ch02", "ch04", "ch05", "ch09", "ch10", "ch11")  # at most a quarter of their prose in English


def english(block: str) -> bool:
    words = re.findall(r"[a-zA-Zéèàùçêâîôû']+", block.lower())
    return sum(w in EN for w in words) > sum(w in FR for w in words)


def sections(path: Path) -> list[tuple[str, list[str]]]:
    """(title, blocks) of each subsection of a chapter, or section without subsections."""
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    page._flush()
    out: list[tuple[str, list[str]]] = []
    current: tuple[str, list[str]] | None = None
    for block in page.blocks:
        level = len(block) - len(block.lstrip("#")) if block.startswith("#") and not block.startswith("#!") else 0
        if 1 < level <= 3 and block[level : level + 1] == " ":
            current = (block[level + 1 :].strip(), [])
            out.append(current)
        elif level == 1:
            current = None
        elif current is not None and block.strip() not in ("Précédent", "Suivant", "Sommaire") and (block.startswith("```") or not english(block)):
            current[1].append("#" * (level - 2) + block[level:] if level > 3 else block)
    return [(title, blocks) for title, blocks in out if sum(len(b) for b in blocks if not b.startswith("```")) >= 200]


def file_name(title: str) -> str:
    return re.sub(r"[\\/:*?\"<>|#^\[\]]", "", title).strip()[:80].rstrip(". ")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "vaults" / "reference-fr")
    args = parser.parse_args()
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    chosen = [section for chapter in CHAPTERS for section in sections(args.html / f"{chapter}.fr.html")]
    notes = {file_name(title) for title, _ in chosen}

    def crossref(match: re.Match) -> str:  # « Section 1.4.5, « Le visualisateur de fichiers » »: to its note, if chosen
        said = match.group(1)
        quoted = re.search(r"«\s*(.+?)\s*»\s*$", said)
        name = file_name(quoted.group(1)) if quoted else ""
        return f"[[{name}|{said}]]" if name in notes else said

    names: set[str] = set()
    count = 0
    for title, blocks in chosen:
        blocks = [re.sub(r"\[\[ch\d+\.fr\|([^\]]*)\]\]", crossref, b) if not b.startswith("```") else b for b in blocks]
        name = file_name(title)
        while name.casefold() in names:
            name += " (suite)"
        names.add(name.casefold())
        escaped = title.replace("\\", "\\\\").replace('"', '\\"')
        body = "\n\n".join([f"# {title}", *blocks]).replace("``", "") + "\n"
        (args.out / f"{name}.md").write_text(f'---\ntitle: "{escaped}"\nvisibility: public\n---\n{body}', encoding="utf-8")
        count += 1
    (args.out / "SOURCE.txt").write_text(
        "« Référence Debian » (Debian Reference), Osamu Aoki, French translation, from Debian's\n"
        "debian-reference-fr package, version 2.100, chapters 1, 2, 4, 5, 9, 10 and 11, converted by\n"
        "eval/build_reference_vault.py. Licence: GPL-2+ (the package's copyright file).\n",
        encoding="utf-8",
    )
    print(f"{count} notes in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
