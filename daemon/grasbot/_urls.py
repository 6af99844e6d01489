"""A note's page on the site: the fields GRASBOT_URL_MAP's templates may hold, one a site
generator's rule from a file's path to its page's path.

`{slug}` is GrasBot's own (lower-case ASCII: a site of your own that routes by it). The others
read the note's vault-relative path as written, so a note in a folder keeps it and `Crème
brûlée.md` keeps its capital and accents, as the generators do. Each is percent-encoded for a
URL's path (`/` between folders kept), so no file name can add a query, a fragment or a scheme.
Hugo's also reads the note's `slug:` and `url:`, as Hugo does. A url is built from its own
note (path, slug, front matter) and nothing else: a private note's name never reaches a visitor
through another note's url.
"""

from __future__ import annotations

import posixpath
import re
import string
import unicodedata
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from typing import NamedTuple

#: The key of the template for notes of any type the map does not name (or of none).
ANY_TYPE = "*"


def _stem(path: str) -> str:
    """The vault-relative path without `.md` (any case: the vault reads `Note.MD` too)."""
    return path[:-3] if path.lower().endswith(".md") else path


def _encoded(path: str, *, space: str = "%20") -> str:
    """Each folder and the name percent-encoded (RFC 3986: all but unreserved characters),
    `/` kept between them; `space` is what a space becomes."""
    return "/".join(urllib.parse.quote(part, safe="").replace("%20", space) for part in path.split("/"))


def quartz_path(path: str) -> str:
    """Quartz v4's page for a file (quartz/util/path.ts, `slugifyFilePath` and `sluggify`): each
    folder and the name with whitespace a hyphen, `&` → `-and-`, `%` → `-percent`, `?` and `#`
    dropped, case and accents kept; `_index` is `index`. `Cuisine/Crème brûlée.md` →
    `Cuisine/Crème-brûlée`. A folder's `index` is the folder's page, `Cuisine/`, the vault's
    own the home page, ``, as Quartz links them (`simplifySlug`). A folder whose name is all
    dropped (`?/`, `#/`) is no folder, as Quartz writes the page (`?/evil.example/x` was
    `//evil.example/x`: another host, for a browser)."""
    parts = [re.sub(r"\s", "-", p).replace("&", "-and-").replace("%", "-percent").replace("?", "").replace("#", "") for p in _stem(path).split("/")]
    if parts[-1] in ("index", "_index"):
        parts[-1] = ""
    return "/".join([p for p in parts[:-1] if p] + parts[-1:])


_DIGIT_OR_MARK = {"Nd", "Mn", "Mc", "Me"}  # Go's unicode.IsDigit and IsMark


def _hugo_part(part: str) -> str:
    """Hugo's `paths.Sanitize` (common/paths/path.go): letters, digits, marks and `._#+~` kept
    (a `%` with two hex digits too), a run of spaces and hyphens one hyphen (none first or
    last), anything else dropped."""
    out: list[str] = []
    hyphen = False
    for i, ch in enumerate(part):
        kept = ch != " " and (ch.isalpha() or unicodedata.category(ch) in _DIGIT_OR_MARK or ch in "._#+~\\")
        kept = kept or (ch == "%" and re.fullmatch(r"[0-9A-Fa-f]{2}", part[i + 1 : i + 3]) is not None)
        if kept:
            out.append("-" if hyphen else "")
            out.append(ch)
            hyphen = False
        elif out and (ch == "-" or ch.isspace()):
            hyphen = True
    return "".join(out)


def hugo_link(path: str, slug: str | None = None, url: str | None = None) -> str:
    """Hugo's page for a content file with its defaults (`disablePathToLower: false`,
    `removePathAccents: false`), as its link without the leading `/`: each part sanitized as
    `paths.Sanitize` does, then lower case (`Cuisine/Crème brûlée.md` → `cuisine/crème-brûlée/`).
    The note's front matter counts as Hugo reads it (resources/page/page_paths.go,
    `CreateTargetPaths`): `url:` is the whole path, kept as written on a page (`/Articles/x`
    → `Articles/x/`; one naming a file, `x.html`, has no `/` after it); `slug:`, its `-`
    trimmed, replaces the name. A folder's `index.md` (a leaf bundle) is the folder's page,
    whose name a slug replaces; `_index.md` (a section) is too, and takes no slug; the vault's
    own `_index.md` is the home page, ``, which takes no url either. A part sanitized to nothing
    (`!!!/`, `%/`) is no folder, as Hugo joins the path (`!!!/evil.example/x` was
    `//evil.example/x/`: another host, for a browser)."""
    parts = _stem(path).split("/")
    section = parts[-1] == "_index"
    if section or (parts[-1] == "index" and len(parts) > 1):
        parts.pop()
    if url and parts and not url.startswith(("http://", "https://")):  # Hugo refuses those: the build stops
        kept = [p for p in (posixpath.normpath("/" + url) if ".." in url else url).split("/") if p]
        link = "/".join(filter(None, map(_hugo_part, kept))).lower() if section else "/".join(kept)
        return link if not link or ("." in url and not url.endswith("/")) else link + "/"
    slug = (slug or "").strip("-")
    if slug and parts and not section:
        parts[-1] = slug
    link = "/".join(filter(None, map(_hugo_part, "/".join(parts).split("/")))).lower()
    return link + "/" if link else ""


# another site's address: a scheme, `//` or `www.` opens it (a `://` further on is the query's or the heading's: `/labo/x/?ref=https://…`)
_ELSEWHERE = re.compile(r"\A\s*(?:(?:[a-z][a-z0-9+.-]*:)?//|www\.)", re.IGNORECASE)
_ADDRESS_END = re.compile(r"(?:/index)?\.html?\Z|/+\Z", re.IGNORECASE)  # what a page's address ends with after its name


def own_pages(path: str, slug: str | None, url: str | None, permalinks: Iterable[str] = ()) -> tuple[str, ...]:
    """The pages a note's own front matter publishes it at, where its path alone does not say
    so, without the `/` at either end: Hugo's from its `slug:` and `url:` (`hugo_link`:
    `slug: plan-v2` in `prive/` is `prive/plan-v2`), and each of `slug:`, `url:` and
    `permalinks` (`permalink:`, Digital Garden's `dg-permalink:`) read as the whole address, as
    Jekyll, Eleventy, Astro or Digital Garden publish a page at it (`/labo/x/`,
    `/labo/x.html`: `labo/x`, a heading's `#` left out). A web address (`url:
    https://lemonde.fr/…`, or without its scheme, `//lemonde.fr/…`, `www.lemonde.fr/…`) is
    another site's page, a bookmark, which Hugo refuses: none."""
    slug, url = (value.strip() if value and not _ELSEWHERE.search(value) else None for value in (slug, url))
    pages = {hugo_link(path, slug, url).strip("/")} if slug or url else set()
    written = (slug, url, *(value.strip() for value in permalinks if not _ELSEWHERE.search(value)))
    pages.update(_ADDRESS_END.sub("", value.partition("#")[0].partition("?")[0]).strip("/") for value in written if value)
    return tuple(sorted(page for page in pages if page))


def mkdocs_url(path: str, *, directory_urls: bool = True) -> str:
    """MkDocs' page for a file (mkdocs/structure/files.py, `File._get_dest_path` and `_get_url`):
    with its default `use_directory_urls`, `about/license.md` is `about/license/`, and `index.md`
    or `README.md` (that case only) its folder's page, `about/`, the vault's own the site's home,
    ``; with `use_directory_urls: false` (`directory_urls=False`), `about/license.html`, and
    `index.md` or `README.md` its folder's `about/index.html`, as MkDocs links them."""
    folder, _, name = _stem(path).rpartition("/")
    index = name in ("index", "README")
    if not directory_urls:
        return (folder + "/" if folder else "") + ("index" if index else name) + ".html"
    if index:
        return folder + "/" if folder else ""
    return _stem(path) + "/"


class Page(NamedTuple):
    """What a note's url is made of: its own path, slug and front matter, nothing else."""

    path: str  # vault-relative, as written
    slug: str  # GrasBot's
    slug_written: str | None = None  # its `slug:` front matter as written
    url_written: str | None = None  # its `url:` front matter as written


#: Each field a template may hold: what it is made of, from the note's Page.
FIELDS: Mapping[str, Callable[[Page], str]] = {
    # GrasBot's slug (lower-case ASCII): a site of your own that routes by it
    "slug": lambda page: page.slug,
    # the vault-relative path without .md, as written: a static server (`/{path}.html`)
    "path": lambda page: _encoded(_stem(page.path)),
    # the file name without .md, as written (a site that flattens folders)
    "name": lambda page: _encoded(_stem(page.path).rpartition("/")[2]),
    # Quartz v4
    "quartz": lambda page: _encoded(quartz_path(page.path)),
    # Obsidian Publish: the path as written, a space a `+` (publish.obsidian.md/help/Advanced+topics/…)
    "publish": lambda page: _encoded(_stem(page.path), space="+"),
    # Hugo, as `/{hugo}/`: its page without the `/` at either end (see page_url)
    "hugo": lambda page: _encoded(hugo_link(page.path, page.slug_written, page.url_written).rstrip("/")),
    # MkDocs' page, with its `/` (use_directory_urls): `/{mkdocs}`
    "mkdocs": lambda page: _encoded(mkdocs_url(page.path)),
    # MkDocs' page with `use_directory_urls: false`, its `.html` included: `/{mkdocs_html}`
    "mkdocs_html": lambda page: _encoded(mkdocs_url(page.path, directory_urls=False)),
}


def fold_type(kind: str) -> str:
    """A type as the map's keys are matched: case and accents folded, so `type: Compétence`
    finds `competence` (NFKD, combining marks dropped)."""
    decomposed = unicodedata.normalize("NFKD", kind.strip().casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def template_for(templates: Mapping[str, str], note_type: str | None) -> str | None:
    """The template of `templates` (GRASBOT_URL_MAP's, each type folded: `fold_type`) a note of
    `note_type` is given (`Compétence` finds `competence`), else that of notes without a type
    (key ``) for a note that has none, else the catch-all (`*`); None when none applies."""
    kind = fold_type(note_type or "")
    return templates.get(kind) or (templates.get("") if not kind else None) or templates.get(ANY_TYPE)


def site_page(url: str) -> str:
    """The page a url `page_url` gave stands for on its site, as a public note may type it: its
    path without the site's address, its `/` at either end or its `.html`
    (`https://monsite.fr/portfolio/plan/` → `portfolio/plan`), a route after `#` its own
    (`/#/portfolio/plan`), percent-encoding read."""
    parts = urllib.parse.urlsplit(url)
    page = parts.fragment if parts.fragment.startswith("/") else parts.path
    return urllib.parse.unquote(_ADDRESS_END.sub("", page)).strip("/")


def template_problem(template: str) -> str | None:
    """Why `page_url` could not fill `template`, or None: it must hold at least one field, each
    one of FIELDS, with no format spec, conversion or attribute (a stray brace, `{page}` or
    `{slug.attr}` would fail, or worse, answer, at every question)."""
    try:
        parsed = [(name, spec, conversion) for _, name, spec, conversion in string.Formatter().parse(template) if name is not None]
    except ValueError as exc:
        return f"ses accolades ne se lisent pas ({exc}) ; écrivez une accolade littérale {{{{ ou }}}}"
    if not parsed:
        return "elle ne contient aucun champ : toutes les notes mèneraient à une même page"
    for name, spec, conversion in parsed:
        if name not in FIELDS or spec or conversion:
            written = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
            return f"{written} n'est pas un champ (un champ s'écrit nu, comme {{path}})"
    return None


def page_url(template: str, page: Page) -> str:
    """`template` filled from one note's own Page. Hugo's page with no `/` after it (the home
    page, a `url:` naming a file) takes none from the template's `{hugo}/` either."""
    if "{hugo}/" in template and not hugo_link(page.path, page.slug_written, page.url_written).endswith("/"):
        template = template.replace("{hugo}/", "{hugo}")
    return template.format_map({name: make(page) for name, make in FIELDS.items() if "{" + name + "}" in template})
