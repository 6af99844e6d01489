"""A hostile vault (issue #18): what a note's author, or whatever wrote into the folder, can
put there, and what a visitor must still never get. One section per class of problem:
frontmatter that expands, text the author hid, every link syntax, symlinks, files that are
not notes, changes that keep size and mtime."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import threading
import unicodedata
import urllib.parse
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grasbot import GrasBot, Settings
from grasbot._engine import build_snapshot
from grasbot._exceptions import VaultError
from grasbot.answer.fallback import extractive_answer
from grasbot.retrieval import frontmatter as _frontmatter
from grasbot.retrieval import links as _links
from grasbot.retrieval import mentions as _mentions
from grasbot.retrieval import vault as _vault
from grasbot.retrieval import visibility
from grasbot.retrieval.frontmatter import FrontmatterTooLarge, Loader, load_frontmatter
from grasbot.retrieval.index import indexable_body
from grasbot.retrieval.links import link_spans
from grasbot.retrieval.mentions import Mentions
from grasbot.retrieval.semantic import NoteTexts
from grasbot.retrieval.vault import VaultOptions, load_vault, parse_note
from support.bots import OWNER, OWNER_TOKEN, bot_of, make_bot, rpc, write_note
from support.files import unlistable

QUICK = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
SECRET = "zorglubsecret"  # in hidden text and private names: must never come out


def _beside_a_secret(tmp_path, body: str, secret: str = "Le secret du jardin.") -> GrasBot:
    """A vault of a private note, `prive/{SECRET}.md`, and a public one, `pub/accueil.md`,
    whose body is `body`: what the link tests below read a visitor's text of."""
    root = tmp_path / "vault"
    write_note(root, f"prive/{SECRET}.md", "visibility: private", secret)
    write_note(root, "pub/accueil.md", "visibility: public", body)
    return make_bot(root)


def _read_by_a_visitor(bot: GrasBot) -> str:
    """The public note's text as passages, prompts and the notes' extract show it to a visitor."""
    return bot.snapshot.index("visitor").readable_body("pub/accueil.md")


def _read_as_a_link_to_the_secret(bot: GrasBot) -> str:
    """`_read_by_a_visitor`, once the public note is seen to link the private one: the link is
    read as a link (its edge kept for the graph), not left as text that merely lost a path."""
    assert {t for t, _ in bot.snapshot.vault.edges["pub/accueil.md"]} == {f"prive/{SECRET}.md"}
    return _read_by_a_visitor(bot)


def _indexed(bot: GrasBot) -> str:
    """The public note's text as the index counts its words."""
    return indexable_body(bot.snapshot.vault.notes["pub/accueil.md"])


def note(rel: str, text: str, **options) -> _vault.Note:
    return parse_note(rel, text.encode("utf-8"), mtime_ns=0, options=VaultOptions(**options))


def bounded(seconds: float, func, *args):
    """Run `func` in a thread; fail if it has not returned within `seconds` (a hang is the bug)."""
    out: dict = {}

    def run():
        try:
            out["value"] = func(*args)
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"{getattr(func, '__name__', func)} did not return within {seconds} s"
    if "error" in out:
        raise out["error"]
    return out["value"]


def alarmed(seconds: int, func, *args):
    """Run `func`; fail if it has not returned within `seconds`. For a pattern that hangs, which
    `bounded` cannot stop: `re` holds the GIL, the waiting thread never runs, but it checks
    signals."""

    def hang(*_):
        raise AssertionError(f"{getattr(func, '__name__', func)} did not return within {seconds} s")

    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(seconds)
    try:
        return func(*args)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# ---------------------------------------------------------------- frontmatter that expands


def laughs(levels: int, fan: int) -> str:
    """The "billion laughs": each level a list of `fan` aliases to the level below."""
    lines = [f"l0: &l0 [{', '.join(['lol'] * fan)}]"]
    for k in range(1, levels + 1):
        lines.append(f"l{k}: &l{k} [{', '.join([f'*l{k - 1}'] * fan)}]")
    lines.append(f"title: *l{levels}")
    return "\n".join(lines)


@QUICK
@given(levels=st.integers(2, 9), fan=st.integers(2, 12), field=st.sampled_from(["title", "tags", "aliases", "answers", "source"]))
def test_alias_bombs_are_refused_before_they_expand(levels, fan, field):
    """Measured, never expanded: the bound is checked by visiting each node as written (its
    aliases the same node again), and a bomb over it is refused before a value is constructed.
    Counted, not timed: a walk of the expanded graph visits up to 12**10 nodes here."""
    header = laughs(levels, fan).replace("title: ", f"{field}: ")
    sizes = [1 + fan]  # each level's list, its aliases expanded
    for _ in range(levels):
        sizes.append(1 + fan * sizes[-1])
    expanded = 1 + (levels + 2) + sum(sizes) + sizes[-1]  # the mapping, its keys, its values
    as_written = 1 + 2 * (levels + 2) + fan * (levels + 1)  # the mapping, its keys and values, each list's items (an alias once)
    visited, constructed = [], []
    children, construct = _frontmatter._children, Loader.construct_object
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_frontmatter, "_children", lambda node: visited.append(node) or children(node))
        mp.setattr(Loader, "construct_object", lambda self, node, deep=False: constructed.append(node) or construct(self, node, deep))
        if expanded > _frontmatter.MAX_NODES:
            with pytest.raises(ValueError, match="les propriétés se déploient en .* valeurs par leurs alias"):
                note("bombe.md", f"---\n{header}\n---\nTexte.")
            assert constructed == []
        else:  # under the bound it reads as PyYAML reads it
            assert load_frontmatter(header) == yaml.load(header, Loader=Loader)
    assert 0 < len(visited) <= 2 * as_written  # each node entered and left once


@pytest.mark.parametrize(
    "header, reason",
    [
        ("a: &a [*a]", "alias vers la liste ou les champs qui le contiennent"),
        ("a: &a {b: *a}", "alias vers la liste ou les champs qui le contiennent"),
        ("a: " + "[" * 40 + "]" * 40, "sur plus de 32 niveaux"),
        ("a:\n" + "".join("  " * i + "- \n" for i in range(1, 3)) + "b: " + "{x: " * 35 + "1" + "}" * 35, "sur plus de 32 niveaux"),
        ("a: &a " + "x" * 2000 + "\nb: [" + ", ".join(["*a"] * 600) + "]", "caractères par leurs alias"),
    ],
    ids=["self-list", "self-map", "deep-flow", "deep-map", "long-text"],
)
def test_other_frontmatters_over_a_bound(header, reason):
    with pytest.raises(FrontmatterTooLarge, match=reason):
        load_frontmatter(header)


@pytest.mark.parametrize("depth", [400, 5000])
@pytest.mark.parametrize(
    ("name", "header"),
    [("TOML", "+++\ndraft = {open}{close}\n+++\n"), ("JSON", '{{"draft": {open}{close}}}\n')],
    ids=["toml", "json"],
)
def test_a_hugo_front_matter_nested_too_deep_is_reported_and_the_vault_loads(tmp_path, depth, name, header):
    """Hugo's TOML front matter (`+++`) is read with tomllib, which nests without a bound: a
    `draft` of 5,000 nested lists raised RecursionError out of tomllib, one of 400 out of the
    warning's yaml.safe_dump, and the one note took the vault's load down (the daemon did not
    start, every reload failed); a JSON one's 400 lists, which json reads, out of the warning's
    json.dumps. As a YAML frontmatter nested past MAX_DEPTH, the note is left out and named,
    and the others load."""
    (tmp_path / "profond.md").write_text(header.format(open="[" * depth, close="]" * depth) + "Mon code zorglub.", encoding="utf-8")
    (tmp_path / "jardin.md").write_text("Le jardin zorglub.", encoding="utf-8")
    vault = load_vault(tmp_path, VaultOptions(default_public=True))
    assert {rel: n.public for rel, n in vault.notes.items()} == {"jardin.md": True}
    assert [(e.path, e.message) for e in vault.errors] == [
        ("profond.md", f"le front matter {name} imbrique des listes ou des champs sur plus de {_frontmatter.MAX_DEPTH} niveaux : note ignorée")
    ]


@pytest.mark.parametrize(
    "line",
    ["{key} = 1", "[{key}]", "[[ {key} ]]", "x = {{ {key} = 1 }}", '"a" . {key} = 1'],
    ids=["key", "table", "array-of-tables", "inline-table", "quoted-first"],
)
def test_a_hugo_toml_key_of_many_dotted_parts_is_reported_in_linear_time(tmp_path, line):
    """A TOML key of 100,000 dotted parts (`a.a.…a = 1`, 200 KB) nests its tables past
    MAX_DEPTH, as 33 parts do, and tomllib reads one in time quadratic in its parts (its flags
    checked for each prefix: 20,000 parts 5.5 s, 40,000 22 s; this one minutes), in every load of
    the note (`hugo_frontmatter` reads any `+++` block). A key past MAX_DEPTH parts, where TOML
    reads a key, is found before tomllib: the note is left out and named, as any TOML nested too
    deep, and a front matter that says nothing of who reads the note is cut, no fields read."""
    key = ".".join(["a"] * 100_000)
    (tmp_path / "profond.md").write_text(f"+++\ndraft = false\n{line.format(key=key)}\n+++\nMon code zorglub.", encoding="utf-8")
    (tmp_path / "muet.md").write_text(f"+++\ntitle = 'Muet'\n{line.format(key=key)}\n+++\nLe jardin zorglub.", encoding="utf-8")
    vault = load_vault(tmp_path, VaultOptions(default_public=True))
    assert {rel: (n.public, n.title, n.body.strip()) for rel, n in vault.notes.items()} == {"muet.md": (True, "muet", "Le jardin zorglub.")}
    assert [(e.path, e.message) for e in vault.errors] == [
        ("profond.md", f"le front matter TOML imbrique des listes ou des champs sur plus de {_frontmatter.MAX_DEPTH} niveaux : note ignorée")
    ]
    short = ".".join(["a"] * (_frontmatter.MAX_DEPTH - 1))  # within the bound: read
    assert visibility.hugo_frontmatter(f"+++\ntitle = 'Court'\n{line.format(key=short)}\n+++\n").fields["title"] == "Court"


aliased = st.recursive(
    st.sampled_from(["a", "b", "1", "2024-01-01", "oui", "~", "'x y'"]),
    lambda inner: st.lists(inner, max_size=4).map(lambda xs: "[" + ", ".join(xs) + "]"),
    max_leaves=8,
)


@QUICK
@given(values=st.lists(aliased, min_size=1, max_size=5), uses=st.lists(st.integers(0, 4), max_size=6))
def test_small_frontmatters_with_aliases_read_as_pyyaml_reads_them(values, uses):
    """Differential: within the bounds, anchors and aliases give exactly PyYAML's result."""
    lines = [f"k{i}: &a{i} {v}" for i, v in enumerate(values)]
    lines += [f"u{j}: *a{i % len(values)}" for j, i in enumerate(uses)]
    header = "\n".join(lines)
    assert load_frontmatter(header) == yaml.load(header, Loader=Loader)


async def test_a_bomb_in_the_vault_is_reported_by_name_and_the_daemon_serves(start_daemon, tmp_path, capsys):
    vault = tmp_path / "vault"
    write_note(vault, "sain.md", "title: Les abeilles\nvisibility: public", "Les abeilles du jardin.")
    client = await start_daemon(vault, owner_token=OWNER_TOKEN)
    write_note(vault, "bombe.md", laughs(9, 10) + "\nvisibility: public", "Texte.")
    # a hang guard, not a measure: expanded, this bomb's 10**10 values would take hours
    result = (await asyncio.wait_for(rpc(client, "reload", {}, headers=OWNER), 60))["result"]
    assert [e["path"] for e in result["errors"]] == ["bombe.md"]
    assert "par leurs alias" in result["errors"][0]["message"]
    health = await client.get("/health")
    assert (await health.json())["vault_size"] == 1
    from grasbot._cli import main

    assert main(["check", "--vault", str(vault)]) != 0
    out = capsys.readouterr().out
    assert "  bombe.md : les propriétés se déploient en " in out


# ---------------------------------------------------------------- text the author hid

hidden = st.sampled_from(
    [
        f"%%{SECRET}%%",
        f"%% note : {SECRET} %%",
        f"\n%%\n{SECRET}\nsur deux lignes\n%%\n",
        f"<!-- {SECRET} -->",
        f"<!--\n{SECRET}\n-->",
        f"%%[[{SECRET}]] #{SECRET}%%",
        f"<!-- # {SECRET} titre caché -->",
        f"<!-- %% {SECRET} -->",
        f"%% <!-- {SECRET} %%",
    ]
)
unclosed = st.sampled_from(["", f"\n%% jamais fermé {SECRET}", f"\n<!-- jamais fermé {SECRET}", f"%%{SECRET}\n\n# Titre {SECRET}"])
prose = st.sampled_from(["Les abeilles butinent.", "Le jardin est ouvert.", "", "\n\n", "Du miel, du pain."])


@QUICK
@given(parts=st.lists(st.tuples(prose, hidden), min_size=1, max_size=4), tail=prose, end=unclosed)
def test_hidden_text_reaches_no_use_of_the_note(parts, tail, end):
    body = "".join(p + h for p, h in parts) + tail + end
    n = note("pub.md", f"---\nvisibility: public\n---\n{body}")
    for where, text in [
        ("body", n.body),
        ("title", n.title),
        ("tags", " ".join(n.tags)),
        ("links", " ".join(link.target for link in n.links)),
        ("indexed text", indexable_body(n)),
    ]:
        assert SECRET not in text.lower(), (where, text)
    for p in [p for p, _ in parts] + [tail]:  # what was not hidden stays
        if p.strip():
            assert p.strip() in n.body


def test_comments_inside_code_are_code_and_an_unclosed_fence_hides_nothing():
    n = note("pub.md", "Voir `%%pas un commentaire%%` et\n```\n<!-- du code -->\n```\nFin %%caché%% ici.")
    assert "`%%pas un commentaire%%`" in n.body and "<!-- du code -->" in n.body
    assert "caché" not in n.body and "Fin" in n.body and "ici." in n.body
    n = note("pub.md", f"```\ndébut de code jamais fermé\n%%{SECRET}%%\nsuite")
    assert SECRET not in n.body and "suite" in n.body


@pytest.mark.parametrize(
    "body",
    [
        "Tapez \\` puis le texte. %%SECRET%% Les ruches ouvrent le samedi. Voir `ruche`.",  # an escaped backtick opens no code
        "````\n```\n````\n%%SECRET%%\n```",  # a fence of four is closed by four or more, not three
        "```a`b\n%%SECRET%%\n```",  # a backtick in the info string: no fence
        "```python\ndu code\n```python\nencore du code\n```\n%%SECRET%%",  # a closing fence has nothing after it
        "~~~~\n~~~\n~~~~\n%%SECRET%%\n~~~",
        "Un ``double `span` ici`` puis %%SECRET%% et ``fin``.",
    ],
)
def test_code_is_read_as_commonmark_reads_it_so_no_comment_shows(body):
    """Code was found where Obsidian finds none (an escaped backtick, a longer fence closed by
    a shorter one): the comment inside was kept as code, and shown to visitors."""
    n = note("pub.md", body.replace("SECRET", SECRET))
    assert SECRET not in n.body.lower() and SECRET not in indexable_body(n).lower(), n.body


def test_code_keeps_its_comment_markers_as_code():
    n = note("pub.md", "  ```\ncode %%un%%\n  ```\n````md\n```\n%%deux%%\n````\nx ``a`b %%trois%%`` y\n%%caché%%")
    assert all(f"%%{w}%%" in n.body for w in ("un", "deux", "trois")) and "caché" not in n.body


def test_hidden_text_is_not_in_the_prompt_nor_the_fallback(note_writer):
    note_writer(
        "abeilles.md",
        "title: Les abeilles\nvisibility: public",
        f"Les abeilles butinent la lavande du jardin. %%Le code {SECRET} est sous la ruche.%%\n"
        f"<!-- Les abeilles gardent le {SECRET}. -->\nLes abeilles font du miel au jardin.",
    )
    bot = make_bot(note_writer.root)
    index = bot.snapshot.index("visitor")
    assert SECRET not in index.readable_body("abeilles.md")
    assert bot.search(SECRET).sources == ()
    result = bot.search("Que font les abeilles du jardin ?")
    assert result.grounded and result.context  # the passages the prompt and the fallback are made of
    assert all(SECRET not in p.text for p in result.context)
    answer = extractive_answer("abeilles jardin", result.context, index, grounded=True)
    assert "miel" in answer and SECRET not in answer


# ---------------------------------------------------------------- every link syntax


def link(syntax: str, label: str, folder: str = "prive", name: str = f"Note privée (copie) {SECRET}") -> str:
    """A link from `pub/accueil.md` to `{folder}/{name}.md`, in one syntax."""
    encoded = urllib.parse.quote(f"{name}.md")
    return {
        "markdown": f"[{label}](../{folder}/{encoded})",
        "markdown-root": f"[{label}](/{folder}/{encoded})",
        "markdown-angle": f"[{label}](<../{folder}/{name}.md>)",
        "markdown-spaces": f"[{label}](../{folder}/{name}.md)",  # parentheses in the name too
        "markdown-spaces-title": f"[{label}](../{folder}/{name}.md 'titre')",
        "markdown-heading": f'[{label}](../{folder}/{encoded}#Section "titre")',
        "embed": f"![{label}](../{folder}/{encoded})",
        "image-in-link": f"[![{label}](image.png)](../{folder}/{encoded})",
        "angle": f"<../{folder}/{encoded}>",
        "angle-spaces": f"<../{folder}/{name}.md>",
        "reference": f'[{label}][{SECRET}]\n\n[{SECRET}]: ../{folder}/{encoded} "titre"',
        "html": f'<a href="../{folder}/{encoded}">{label}</a>',
        "obsidian-uri": f"[{label}](obsidian://open?vault=V&file={urllib.parse.quote(f'{folder}/{name}', safe='')})",
        "obsidian-bare": f"obsidian://open?vault=V&file={urllib.parse.quote(f'{folder}/{name}', safe='')}",  # « Copy Obsidian URL »
        "obsidian-bare-parenthesis": f"(obsidian://open?vault=V&file={urllib.parse.quote(f'{folder}/{name}', safe='')})",
        "html-iframe": f'<iframe src="../{folder}/{encoded}"></iframe>',
        "html-img": f"<img alt='' src='../{folder}/{encoded}'>",
        "wikilink": f"[[{name}|{label}]]" if label else f"[[{name}]]",
        "wikilink-path": f"[[{folder}/{name}.md|{label}]]" if label else f"[[{folder}/{name}.md]]",
        "wikilink-embed": f"![[{name}]]",
    }[syntax]


SYNTAXES = [
    "markdown",
    "markdown-root",
    "markdown-angle",
    "markdown-spaces",
    "markdown-spaces-title",
    "markdown-heading",
    "embed",
    "image-in-link",
    "angle",
    "angle-spaces",
    "reference",
    "html",
    "obsidian-uri",
    "obsidian-bare",
    "obsidian-bare-parenthesis",
    "html-iframe",
    "html-img",
    "wikilink",
    "wikilink-path",
    "wikilink-embed",
]


UNLABELLED = ("angle", "angle-spaces", "wikilink-embed", "obsidian-bare", "obsidian-bare-parenthesis", "html-iframe", "html-img")  # syntaxes without a label


@pytest.fixture(scope="module")
def link_vault(tmp_path_factory):
    root = tmp_path_factory.mktemp("links") / "vault"
    write_note(root, f"prive/Note privée (copie) {SECRET}.md", "title: Secret\nvisibility: private", "Le secret du jardin.")
    write_note(root, "pub/voisin.md", "title: Le voisin\nvisibility: public", "Le voisin du jardin.")
    return root


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(syntaxes=st.lists(st.sampled_from(SYNTAXES), min_size=1, max_size=4), label=st.sampled_from(["", "ce lien", "le jardin"]), around=prose)
def test_links_to_a_private_note_keep_only_their_label(link_vault, syntaxes, label, around):
    body = f"{around}\n" + "\n".join(f"{link(s, label)} et encore" for s in syntaxes) + "\nfin."
    write_note(link_vault, "pub/accueil.md", "title: Accueil\nvisibility: public", body)
    vault = load_vault(link_vault)
    owner = vault.notes["pub/accueil.md"]
    private = f"prive/Note privée (copie) {SECRET}.md"
    # every syntax is a link the graph knows, to the private note
    assert {t for t, _ in vault.edges["pub/accueil.md"]} == {private}, (body, owner.links)
    bot_index = build_snapshot(make_bot(link_vault).settings).index("visitor")
    for text in (bot_index.readable_body("pub/accueil.md"), indexable_body(owner)):
        assert SECRET not in text.lower() and "prive/" not in text, (syntaxes, text)
        if label and not all(s in UNLABELLED for s in syntaxes):
            assert label in text


@pytest.mark.parametrize("syntax", SYNTAXES)
def test_a_link_to_a_public_note_names_it_in_every_syntax(tmp_path, syntax):
    root = tmp_path / "vault"
    name = "Le voisin"
    text = link(syntax, "", "pub", name)
    write_note(root, f"pub/{name}.md", "title: Le voisin\nvisibility: public", "Le voisin du jardin.")
    write_note(root, "pub/accueil.md", "title: Accueil\nvisibility: public", f"Voir {text}\n")
    bot = make_bot(root)
    assert {t for t, _ in bot.snapshot.vault.edges["pub/accueil.md"]} == {f"pub/{name}.md"}, text
    readable = _read_by_a_visitor(bot)
    if syntax != "reference":  # `[][ref]` shows nothing, in Obsidian too
        assert "voisin" in readable.lower(), (text, readable)


@pytest.mark.parametrize("inner", ["![le plan]({dest})", "voir [le plan]({dest})", "<{dest}>"])
def test_a_web_links_label_loses_a_private_notes_path(tmp_path, inner):
    """`[![plan](../prive/note.md)](https://…)`: the web link stays as written, but a note's
    image or link inside its label is read as it is anywhere else; the private path was kept."""
    label = inner.format(dest=f"../prive/{SECRET}.md")
    bot = _beside_a_secret(tmp_path, f"Le jardin : [{label}](https://example.org/jardin), le samedi.\n")
    readable = _read_by_a_visitor(bot)
    assert SECRET not in readable.lower() and "prive/" not in readable, readable
    assert "](https://example.org/jardin), le samedi." in readable
    assert SECRET not in _indexed(bot).lower()


@pytest.mark.parametrize(
    "definition",
    ["[ref]:\n   {dest}", '[ref]:\n   {dest} "Le plan"', '[ref]: {dest}\n   "Le plan"', "[ref]:\n  <{dest}>\n  'Le plan'", "[ref]:\t\n{dest} (Le plan)"],
)
def test_a_reference_definition_over_two_lines_loses_a_private_notes_path(tmp_path, definition):
    """CommonMark lets a definition's destination, and its title, go on the next line
    (`[ref]:` then `   prive/x.md`): that was no link, and visitors read the private note's
    path in passages and answers."""
    dest = definition.format(dest=f"../prive/{SECRET}.md")
    bot = _beside_a_secret(tmp_path, f"Voir [le plan][ref] du jardin.\n\n{dest}\n\nIl date de mai.\n")
    readable = _read_as_a_link_to_the_secret(bot)
    assert readable.split() == "Voir le plan du jardin. Il date de mai.".split(), readable


@pytest.mark.parametrize(
    "body, shown",
    [
        ("> [!note] Le plan\n> Voir [le plan][ref].\n>\n> [ref]: {dest}\n", "> [!note] Le plan > Voir le plan. > >"),
        ("> Voir [le plan][ref].\n> [ref]:\n>   {dest}\n>   'Le plan'\n", "> Voir le plan. >"),
        ("- Voir [le plan][ref].\n- [ref]: {dest}\n", "- Voir le plan. -"),
        ("1. Voir [le plan][ref].\n   - [ref]: <{dest}>\n", "1. Voir le plan. -"),
    ],
)
def test_a_reference_definition_in_a_callout_or_a_list_loses_a_private_notes_path(tmp_path, body, shown):
    """CommonMark reads a definition inside a block quote (so an Obsidian callout) or a list
    item: it was text there, and visitors read the private note's path in passages and answers."""
    bot = _beside_a_secret(tmp_path, body.format(dest=f"../prive/{SECRET}.md") + "\nIl date de mai.\n")
    readable = _read_as_a_link_to_the_secret(bot)
    assert readable.split() == f"{shown} Il date de mai.".split(), readable


@pytest.mark.parametrize(
    "use, shown",
    [
        ("Voir [le plan][Ma  Ref]", "Voir le plan"),
        ("Voir [le plan][MA\nREF]", "Voir le plan"),
        ("Voir [Ma\tref][]", "Voir Ma ref"),
        ("Voir [Ma\nref]", "Voir Ma ref"),
        ("> Voir [le plan][ma\n> ref]", "> Voir le plan"),
        ("Voir [le plan][MA STRASSE REF]", "Voir le plan"),
    ],
)
def test_a_reference_use_matches_its_definition_as_commonmark_does(tmp_path, use, shown):
    """A use's label is its definition's case folded, each run of white space one space
    (`[le plan][Ma  Ref]` uses `[ma ref]:`): it kept its brackets around the label written."""
    label = "ma straße ref" if "STRASSE" in use else "ma ref"
    bot = _beside_a_secret(tmp_path, f"{use} du jardin.\n\n[{label}]: ../prive/{SECRET}.md\n\nIl date de mai.\n")
    readable = _read_as_a_link_to_the_secret(bot)
    assert readable.split() == f"{shown} du jardin. Il date de mai.".split(), readable


@pytest.mark.parametrize(
    "body, shown",
    [
        ("Voir [le plan][ma ref].\n\n[ma\nref]: {dest}\n", "Voir le plan."),
        ("Voir [le plan][ma ref].\n\n[ma\n   ref]:\n  <{dest}> 'Le plan'\n", "Voir le plan."),
        ("> Voir [le plan][ma ref].\n>\n> [ma\n> ref]: {dest}\n", "> Voir le plan. > >"),
    ],
)
def test_a_reference_definition_whose_label_spans_lines_loses_a_private_notes_path(tmp_path, body, shown):
    """CommonMark lets a definition's label go over lines (`[ma` then `ref]: prive/x.md`): that
    was no link, and visitors read the private note's path in passages and answers."""
    bot = _beside_a_secret(tmp_path, body.format(dest=f"../prive/{SECRET}.md") + "\nIl date de mai.\n")
    readable = _read_as_a_link_to_the_secret(bot)
    assert readable.split() == f"{shown} Il date de mai.".split(), readable


@pytest.mark.parametrize(
    "use, label, shown",
    [
        ("Voir [le plan][a\\]b]", "a\\]b", "Voir le plan"),
        ("Voir [le plan][a\\[b]", "A\\[B", "Voir le plan"),
        ("Voir [a\\]b][]", "a\\]b", "Voir a\\]b"),
        ("Voir [a\\]b]", "a\\]b", "Voir a\\]b"),
        ("Voir \\[a\\]b] ou [le plan][a\\]b]", "a\\]b", "Voir \\[a\\]b] ou le plan"),
    ],
)
def test_a_reference_whose_label_holds_an_escaped_bracket_loses_a_private_notes_path(tmp_path, use, label, shown):
    """CommonMark lets a label hold a bracket escaped (`[a\\]b]: prive/x.md`): that definition
    was text, and visitors read the private note's path in passages and answers; an escaped
    `[` opens no use (`\\[a\\]b]` is text)."""
    bot = _beside_a_secret(tmp_path, f"{use} du jardin.\n\n[{label}]: ../prive/{SECRET}.md\n\nIl date de mai.\n")
    readable = _read_as_a_link_to_the_secret(bot)
    assert readable.split() == f"{shown} du jardin. Il date de mai.".split(), readable


@pytest.mark.parametrize(
    "body, shown",
    [
        ("Voir [le plan \\] du jardin]({dest}).", "Voir le plan \\] du jardin."),
        ('Voir [le plan]({dest} "le \\"grand\\" plan").', "Voir le plan."),
        ("Voir [le plan]({dest} 'l\\'ancien').", "Voir le plan."),
        ("Voir [le plan]({dest} (le plan \\(v2\\))).", "Voir le plan."),
        ("Voir [C:\\]({dest}).", "Voir C:\\."),
        ('Voir [le plan][ref].\n\n[ref]: {dest} "le \\"grand\\" plan"', "Voir le plan."),
    ],
)
def test_a_link_whose_text_or_title_holds_an_escaped_bracket_or_quote_loses_a_private_notes_path(tmp_path, body, shown):
    """CommonMark lets a link's text hold an escaped `]` and its title an escaped quote or
    parenthesis (`[le plan](prive/x.md "le \\"grand\\" plan")`): that was no link, and visitors
    read the private note's path in passages and answers (a definition kept the title's end)."""
    bot = _beside_a_secret(tmp_path, body.format(dest=f"../prive/{SECRET}.md") + "\n\nIl date de mai.\n")
    readable = _read_as_a_link_to_the_secret(bot)
    assert readable.split() == f"{shown} Il date de mai.".split(), readable


@pytest.mark.parametrize(
    "name, body",
    [
        ("plan (v2", "Voir [le plan](../prive/plan%20\\(v2.md)."),
        ("plan v2)", "Voir [le plan](../prive/plan%20v2\\).md)."),
        ("plan <v2>", "Voir [le plan](<../prive/plan \\<v2\\>.md>)."),
        ("plan <v2>", "Voir [le plan][ref].\n\n[ref]: <../prive/plan \\<v2\\>.md>"),
    ],
)
def test_a_link_whose_destination_holds_an_escaped_parenthesis_or_angle_bracket_is_a_link_to_it(tmp_path, name, body):
    """CommonMark lets a destination hold an escaped parenthesis or angle bracket
    (`[le plan](prive/plan%20v2\\).md)`): that was no link, or one cut at the `\\`, and visitors
    read the private note's path, or the end of its name, in passages and answers."""
    root = tmp_path / "vault"
    write_note(root, f"prive/{name}.md", "visibility: private", "Le secret du jardin.")
    write_note(root, "pub/accueil.md", "visibility: public", body + "\n\nIl date de mai.\n")
    bot = make_bot(root)
    assert {t for t, _ in bot.snapshot.vault.edges["pub/accueil.md"]} == {f"prive/{name}.md"}
    readable = _read_by_a_visitor(bot)
    assert readable.split() == "Voir le plan. Il date de mai.".split(), readable


def test_a_line_after_a_bare_reference_label_is_prose_unless_it_is_a_destination(tmp_path):
    """`[Note]:` then a sentence is no definition for CommonMark: the sentence stays as written."""
    root = tmp_path / "vault"
    write_note(root, "pub/accueil.md", "visibility: public", '[Important]:\nLe jardin ouvre en mai.\n\n[ref]: jardin.md\n"Le plan" et la carte.\n')
    readable = make_bot(root).snapshot.index("visitor").readable_body("pub/accueil.md")
    assert readable.split() == '[Important]: Le jardin ouvre en mai. "Le plan" et la carte.'.split(), readable


@pytest.mark.parametrize("around", ["({})", '"{}"', "'{}'", "**({})**"])
def test_an_obsidian_uri_in_parentheses_or_quotes_loses_a_private_notes_path(tmp_path, around):
    """« Copy Obsidian URL » pasted in parentheses or quotes is a link as it is bare: it kept
    the private note's path, which visitors read in passages and answers."""
    uri = f"obsidian://open?vault=V&file={urllib.parse.quote(f'prive/{SECRET}', safe='')}"
    bot = _beside_a_secret(tmp_path, f"Le plan du jardin {around.format(uri)} date de mai.\n")
    readable = _read_as_a_link_to_the_secret(bot)
    assert SECRET not in readable.lower() and "date de mai" in readable, readable
    assert SECRET not in _indexed(bot).lower()


@pytest.mark.parametrize("around", ["=={}==", '<span title="{}">le plan</span>', "<span title='{}'>le plan</span>", "<div data-x={}>le plan</div>"])
def test_an_obsidian_uri_after_an_equals_sign_loses_a_private_notes_path(tmp_path, around):
    """A highlight (`==obsidian://…==`) or an attribute other than href and src holds a bare
    URI: it was refused after any `=` (so as not to read `href=` twice), and visitors read
    the private note's path in passages and answers."""
    root = tmp_path / "vault"
    write_note(root, f"prive/{SECRET}.md", "visibility: private", "Le secret du jardin.")
    write_note(root, "pub/voisin.md", "visibility: public", "Le voisin du jardin.")
    uri = f"obsidian://open?vault=V&file={urllib.parse.quote(f'prive/{SECRET}', safe='')}"
    public = "obsidian://open?vault=V&file=pub%2Fvoisin"
    text = f"Le plan du jardin {around.format(uri)} date de mai, et {around.format(public)}.\n"
    write_note(root, "pub/accueil.md", "visibility: public", text)
    bot = make_bot(root)
    assert {t for t, _ in bot.snapshot.vault.edges["pub/accueil.md"]} == {f"prive/{SECRET}.md", "pub/voisin.md"}
    readable = _read_by_a_visitor(bot)
    assert SECRET not in readable.lower() and "prive" not in readable and "date de mai" in readable, readable
    assert around.format("voisin") in readable, readable  # the highlight or the tag around it stays
    assert SECRET not in _indexed(bot).lower()


@pytest.mark.parametrize("around", ["[le plan]({}, date de mai", "le plan]({}) date de mai", "<{} date de mai", "<b>href={}</b> date de mai"])
def test_an_obsidian_uri_no_other_syntax_reads_loses_a_private_notes_path(tmp_path, around):
    """A URI after `](`, `<` or `href=` was left to those syntaxes, and kept as text when they
    read no link there (`[le plan](obsidian://…` with no `)`): visitors read the private note's
    path in passages and answers."""
    uri = f"obsidian://open?vault=V&file={urllib.parse.quote(f'prive/{SECRET}', safe='')}"
    bot = _beside_a_secret(tmp_path, f"Le plan du jardin {around.format(uri)}.\n")
    readable = _read_by_a_visitor(bot)
    assert SECRET not in readable.lower() and "prive" not in readable and "date de mai" in readable, readable
    assert SECRET not in _indexed(bot).lower()
    spans = link_spans(around.format(uri))
    assert any(start <= around.index("{") < end for start, end in spans), spans


@pytest.mark.parametrize(
    "uri",
    [
        "obsidian://vault/V/{folder}%2F{name}",  # Obsidian's shorthand
        "obsidian://vault/V/{folder}/{name}.md",
        "obsidian://adv-uri?vault=V&filepath={folder}%2F{name}.md",  # the Advanced URI plugin
        "obsidian://new?vault=V&name={name}",
        "obsidian:///home/moi/coffre/{folder}/{name}.md",  # the shorthand of a path on disk
        "[le plan](obsidian://vault/V/{folder}%2F{name})",
    ],
)
def test_every_obsidian_uri_that_names_a_note_is_a_link_to_it(tmp_path, uri):
    """Obsidian's shorthand `obsidian://vault/<vault>/<note>`, Advanced URI's `filepath=` and
    `new?name=` name a note as `open?file=` does: they were text, and visitors read the
    private note's path in passages and answers."""
    root = tmp_path / "vault"
    write_note(root, f"prive/{SECRET}.md", "visibility: private", "Le secret du jardin.")
    write_note(root, "pub/voisin.md", "visibility: public", "Le voisin du jardin.")
    text = f"Le plan du jardin {uri.format(folder='prive', name=SECRET)} date de mai, et {uri.format(folder='pub', name='voisin')}.\n"
    write_note(root, "pub/accueil.md", "visibility: public", text)
    bot = make_bot(root)
    assert {t for t, _ in bot.snapshot.vault.edges["pub/accueil.md"]} == {f"prive/{SECRET}.md", "pub/voisin.md"}
    readable = _read_by_a_visitor(bot)
    assert SECRET not in readable.lower() and "prive" not in readable and "date de mai" in readable, readable
    assert "le plan" in readable if uri.startswith("[") else readable.endswith("et voisin.\n"), readable
    assert SECRET not in _indexed(bot).lower()


@pytest.mark.parametrize(
    "link",
    ["[le plan]({url}), en mai.", "<{url}>, en mai.", '<a href="{url}">le plan</a>, en mai.', "[le plan][p], en mai.\n\n[p]: {url}"],
)
def test_a_file_url_to_a_note_is_a_link_to_it(tmp_path, link):
    """`[x](file:///home/moi/coffre/prive/note.md)`, a note's file on the author's disk: it was
    a web address, kept as written, and visitors read the private note's path (and the
    author's home folder) in passages and answers."""
    url = f"file:///home/moi/coffre/prive/{urllib.parse.quote(SECRET)}.md"
    bot = _beside_a_secret(tmp_path, f"Le plan du jardin : {link.format(url=url)}\n")
    readable = _read_as_a_link_to_the_secret(bot)
    assert SECRET not in readable.lower() and "home/moi" not in readable and "en mai" in readable, readable
    assert SECRET not in _indexed(bot).lower()


@pytest.mark.parametrize("link", ["[[{name}|Projet [2023]]]", "[[{name}|a [b] c]]", "![[{name}#Étape [1]]]", "[[{name}#Étape [1]|voir]]"])
def test_a_wikilink_whose_label_or_heading_holds_a_bracket_is_a_link(tmp_path, link):
    """Obsidian reads a wikilink up to its first `]]`, a bracket in its label or heading
    included: GrasBot read no link there, and visitors read the private note's name."""
    bot = _beside_a_secret(tmp_path, f"Le plan du jardin : {link.format(name=SECRET)}, en mai.\n", secret="## Étape [1]\nLe secret du jardin.")
    readable = _read_as_a_link_to_the_secret(bot)
    assert SECRET not in readable.lower() and "en mai" in readable, readable


@pytest.mark.parametrize("link", ["[[{name}|![[photo.png]]]]", "[[{name}|![[photo.png|300]] le plan]]", "[[{name}#Plan|![[photo.png]]]]"])
def test_a_wikilink_around_an_embed_loses_its_target(tmp_path, link):
    """`[[Note|![[photo.png]]]]`, a link Obsidian reads to Note: once the photo's embed was
    read, `[[Note|]]` was left in the text, and a visitor read the private note's name."""
    bot = _beside_a_secret(tmp_path, f"Le plan du jardin : {link.format(name=SECRET)}, en mai.\n", secret="## Plan\nLe secret du jardin.")
    readable = _read_by_a_visitor(bot)
    assert SECRET not in readable.lower() and "en mai" in readable, readable
    assert SECRET not in _indexed(bot).lower()
    found = bot.search("Le plan du jardin en mai")
    assert found.context and all(SECRET not in p.text.lower() for p in found.context)
    said = extractive_answer("plan du jardin", found.context, bot.snapshot.index("visitor"), grounded=True)
    assert "mai" in said and SECRET not in said.lower()


@pytest.mark.parametrize(
    "typed",
    [
        "file:///home/me/Coffre/prive/{name}.md",
        "[le [grand [très]] plan](prive/{name}.md)",
        "[le plan][ref].\n\n[ref] : prive/{name}.md\n",
        '<span title="prive/{name}.md">le plan</span>',
        "[^1].\n\n[^1]: voir prive/{name}.md\n",
        "`cat ../prive/{name}.md`",
        "\n\n```\nopen prive/{name}.md\n```\n",
        "C:\\Users\\me\\Coffre\\prive\\{name}.md",
        "prive%2F{name}%2Emd#Budget",
        "PRIVE/{upper}.MD",
        "{name}.md",
        "voir prive/{name} ici,",
        "(/home/me/Coffre/prive/{name}#Budget)",
        "C:\\Users\\me\\Coffre\\prive\\{name}.",
        "`open prive%2F{name}`",
        "PRIVE/{upper}",
    ],
)
def test_a_private_notes_path_typed_as_text_never_reaches_a_visitor(tmp_path, typed):
    """A private note's path typed where no link syntax reads one (prose, a footnote, an
    attribute, code, an address, a link some syntax reads wrong) went to visitors as written,
    in passages, prompts and answers; the owner still reads it."""
    body = f"Le plan du jardin : {typed.format(name=SECRET, upper=SECRET.upper())} en mai.\n"
    bot = _beside_a_secret(tmp_path, body)
    readable = _read_by_a_visitor(bot)
    assert SECRET not in readable.lower() and "prive" not in readable.lower() and "coffre" not in readable.lower(), readable
    assert "budget" not in readable.lower(), readable  # the private note's heading, after its path
    assert "Le plan du jardin" in readable and "en mai." in readable, readable
    found = bot.search("Le plan du jardin en mai")
    assert found.context and all(SECRET not in p.text.lower() for p in found.context)
    said = extractive_answer("plan du jardin", found.context, bot.snapshot.index("visitor"), grounded=True)
    assert SECRET not in said.lower() and "prive" not in said.lower(), said
    assert SECRET in bot.snapshot.index("owner").readable_body("pub/accueil.md").lower()


def _wide(text: str) -> str:
    """`text` in full-width forms (« ｐｒｉｖｅ／ｐｌａｎ．ｍｄ »), as a Japanese or Chinese keyboard types it."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


@pytest.mark.parametrize(
    "typed",
    [
        _wide(f"prive/{SECRET}") + ".md",
        _wide(f"prive/{SECRET}.md"),
        _wide(f"PRIVE/{SECRET.upper()}.MD"),
        _wide(SECRET) + ".md",
        "prive/" + _wide(SECRET[:4]) + SECRET[4:] + ".md",
        _wide(f"prive/{SECRET}"),
        "prive/\U0001d433\U0001d428\U0001d42b\U0001d420\U0001d425\U0001d42e\U0001d41b" + SECRET[7:] + ".md",  # 𝐳𝐨𝐫𝐠𝐥𝐮𝐛: mathematical bold
    ],
)
def test_a_private_notes_path_typed_in_full_width_or_compatibility_forms_never_reaches_a_visitor(tmp_path, typed):
    """A private note's path typed in full-width or another compatibility form
    (`ｐｒｉｖｅ／Ｐｌａｎ.md`, which NFKC reads `prive/Plan.md`) reached visitors as written,
    where its ASCII form was masked: it goes the same, and the text around it stays as typed,
    its own full-width words and « m² » included."""
    assert f"prive/{SECRET}" in unicodedata.normalize("NFKC", typed).lower() or typed.endswith(".md")  # the guard: NFKC reads the path
    bot = _beside_a_secret(tmp_path, f"Le plan du jardin (m², ｎｏｔｅ) : {typed} en mai.\n")
    assert _read_by_a_visitor(bot).strip() == "Le plan du jardin (m², ｎｏｔｅ) :  en mai."
    assert SECRET in unicodedata.normalize("NFKC", bot.snapshot.index("owner").readable_body("pub/accueil.md")).lower()


@pytest.mark.parametrize(
    "typed",
    [
        f"prive\uff0f{SECRET}.md",  # a full-width solidus
        f"Coffre\uff0fprive\uff0f{SECRET}.md",
        f"Coffre/prive\uff0f{SECRET}.md",
        f"prive\uff3c{SECRET}.md",  # a full-width reverse solidus
        f"C:\uff3cCoffre\uff3cprive\uff3c{SECRET}.md",
    ],
)
def test_a_private_notes_path_typed_with_a_full_width_slash_is_masked_with_its_folders(tmp_path, typed):
    """A private note's path typed with a full-width slash (« prive／zorglubsecret.md », as a
    Japanese or Chinese keyboard types it, or « ＼ ») lost its name only: « prive／ » and the
    folders before it reached visitors, where the same path with `/` or `\\` is masked whole.
    The text was masked as written first, where « ／ » parts no folder, and what was left of it,
    without its name, was no path in its compatibility reading."""
    assert "/" not in typed.replace("Coffre/", "")
    bot = _beside_a_secret(tmp_path, f"Le plan du jardin : {typed} en mai.\n")
    readable = _read_by_a_visitor(bot)
    assert readable.strip() == "Le plan du jardin :  en mai.", readable
    assert SECRET in bot.snapshot.index("owner").readable_body("pub/accueil.md")


@pytest.mark.parametrize(
    ("private", "typed"),
    [
        ("fichiers/Plan.md", "\ufb01chiers/Plan.md"),  # « ﬁ »: NFKC's « fi »
        ("fichiers/Plan.md", "\ufb01chiers/Plan"),
        ("prive/Budget 1\u20442.md", "prive/Budget \u00bd.md"),  # « ½ »: NFKC's « 1⁄2 »
        ("prive/Budget 1\u20442.md", "Budget \u00bd.md"),
        ("prive/e\ufb00et.md", "prive/e\ufb00et.md"),  # the private name holds the ligature itself
        ("prive/effet.md", "prive/e\ufb00et.md"),
        ("prive/\u01c6ungla.md", "prive/d\u017eungla.md"),  # the other way: « ǆ » named, « dž » typed
    ],
)
def test_a_private_notes_path_typed_with_a_form_nfkc_reads_as_several_characters_never_reaches_a_visitor(tmp_path, private, typed):
    """A private note's path typed with a ligature or a vulgar fraction (`ﬁchiers/Plan.md` for
    `fichiers/Plan.md`, `½` for `1⁄2`), which NFKC reads as several characters, reached
    visitors as written where full-width forms were masked: it goes, and the text around it
    stays as typed, its own ligatures and fractions included, at their places."""
    root = tmp_path / "vault"
    write_note(root, private, "visibility: private", "Le secret du plan.")
    around = "Le \ufb01chier (\u00bd page, m², \u01c6) : {} en mai, \ufb03 \ufb01n."
    write_note(root, "pub/accueil.md", "visibility: public", around.format(typed) + "\n")
    assert _read_by_a_visitor(make_bot(root)).strip() == around.format("")


def test_a_text_with_a_form_nfkc_reads_as_several_characters_keeps_its_other_paths_at_their_places(tmp_path):
    """The fold that reads « ﬁ » as two letters moves every character after it by one: what is
    masked after it is the private path, not one character beside it, and a public path stays."""
    root = tmp_path / "vault"
    write_note(root, "prive/profil.md", "visibility: private", "Le secret du profil.")
    write_note(root, "pub/voisin.md", "visibility: public", "Le voisin.")
    body = "\ufb01 \ufb03 \u00bd\u00bd : prive/pro\ufb01l.md, pub/voisin.md, pro\ufb01l.md et prive/pro\ufb01l.mdx.\n"
    write_note(root, "pub/accueil.md", "visibility: public", body)
    readable = _read_by_a_visitor(make_bot(root))
    assert readable.strip() == "\ufb01 \ufb03 \u00bd\u00bd : , pub/voisin.md,  et prive/pro\ufb01l.mdx."


def test_a_word_in_full_width_forms_that_is_no_private_path_stays_as_typed(tmp_path):
    """The fold reads paths, not words: a private note's name in full-width without `.md` nor a
    folder, a longer name and another folder's file stay as typed."""
    body = f"Restent : {_wide(SECRET)}, {_wide(f'prive/{SECRET}s')}, {_wide(f'pub/{SECRET}x.md')}, ＰＲＩＶＥ et m².\n"
    bot = _beside_a_secret(tmp_path, body)
    assert _read_by_a_visitor(bot).strip() == body.strip()


def test_only_a_typed_path_that_names_a_private_note_is_masked(tmp_path):
    """The mask reads paths, not words: a private `Projet.md` leaves « projet », another
    file's name that ends in it, and a public note's path as written."""
    root = tmp_path / "vault"
    write_note(root, "prive/Projet.md", "visibility: private", "Le secret du projet.")
    write_note(root, "pub/voisin.md", "visibility: public", "Le voisin.")
    body = "Le projet avance (voir Projet.md) : leprojet.md, Projet.mdx, pub/voisin.md et notes/projet-v2.md restent.\n"
    write_note(root, "pub/accueil.md", "visibility: public", body)
    readable = _read_by_a_visitor(make_bot(root))
    assert readable.strip() == "Le projet avance (voir ) : leprojet.md, Projet.mdx, pub/voisin.md et notes/projet-v2.md restent."


def test_a_web_sites_address_that_ends_in_a_private_notes_file_name_stays(tmp_path):
    """A private `README.md` or `prive/plan.md` erased every web address ending in that file name,
    with the site before it (« Lire  et le  du projet. »): a site's file is not the vault's note.
    The name typed alone, a local address and a web address holding the note's path still go."""
    root = tmp_path / "vault"
    write_note(root, "README.md", "visibility: private", "Le secret.")
    write_note(root, "prive/plan.md", "visibility: private", "Le secret du plan.")
    body = (
        "Lire https://github.com/psf/black/blob/main/README.md et <http://example.org/docs/plan.md#Budget> ; "
        "partent : README.md, file:///home/me/Coffre/README.md, https://example.org/prive/plan.md.\n"
    )
    write_note(root, "pub/accueil.md", "visibility: public", body)
    readable = _read_by_a_visitor(make_bot(root))
    assert readable.strip() == "Lire https://github.com/psf/black/blob/main/README.md et <http://example.org/docs/plan.md#Budget> ; partent : , , ."


def test_a_private_notes_path_without_md_is_masked_whole(tmp_path):
    """`prive/plan`, a note's path as Obsidian names it, reached visitors as written: it goes,
    whole, with the folders before it; a longer name, another file of that name, a folder
    below it and a word of it stay, and so does a private note's name with no folder."""
    root = tmp_path / "vault"
    write_note(root, "prive/Plan secret.md", "visibility: private", "Le secret du plan.")
    write_note(root, "prive/Plan secret v2.md", "visibility: private", "Le secret du plan.")
    write_note(root, "Projet.md", "visibility: private", "Le secret du projet.")
    body = (
        "Voir prive/Plan secret, prive/Plan secret v2 ou Coffre/prive/plan secret#Budget ; restent : prive/Plan secrets, "
        "prive/Plan secret.pdf, prive/Plan secret/annexe, monprive/Plan secret, le plan secret, le Projet et ./Projet.\n"
    )
    write_note(root, "pub/accueil.md", "visibility: public", body)
    bot = make_bot(root)
    assert _read_by_a_visitor(bot).strip() == (
        "Voir ,  ou  ; restent : prive/Plan secrets, prive/Plan secret.pdf, prive/Plan secret/annexe, "
        "monprive/Plan secret, le plan secret, le Projet et ./Projet."
    )
    assert bot.snapshot.index("owner").readable_body("pub/accueil.md").strip() == body.strip()


def test_a_note_left_out_by_exclude_is_masked_as_a_private_one(tmp_path):
    """A folder of --exclude is one its author keeps out of the site, but its notes were never
    loaded, so their paths typed in a public note, or a link to one in code, reached visitors
    as written; the owner still reads what they typed."""
    root = tmp_path / "vault"
    write_note(root, "Journal/2024/intime.md", "visibility: public", "Mon journal.")
    body = (
        "Le plan : Journal/2024/intime.md, C:\\Coffre\\Journal\\2024\\intime, `cat Journal/2024/intime.md`, "
        "`[[Journal/2024/intime]]`, `[[intime|le jour]]`, intime.md et [[Journal/2024/intime]] ; Journal/2023/autre.md reste.\n"
    )
    write_note(root, "pub/accueil.md", "visibility: public", body)
    bot = make_bot(root, exclude=("Journal",))
    assert sorted(bot.snapshot.vault.notes) == ["pub/accueil.md"]
    assert _read_by_a_visitor(bot).strip() == "Le plan : , , `cat `, ``, `le jour`,  et  ; Journal/2023/autre.md reste."
    assert bot.snapshot.index("owner").readable_body("pub/accueil.md").strip() == body.replace(" et [[Journal/2024/intime]] ;", " et  ;").strip()


def test_a_path_through_a_link_to_an_excluded_folder_typed_in_a_public_note_is_masked(tmp_path):
    """`public/lien` leads to `../prive`, a folder of --exclude: the walk leaves the link out, but
    `public/lien/zorglubsecret` typed in a public note names the excluded note as surely as
    `prive/zorglubsecret` does, which is masked; it reached visitors as written (with `.md`, its
    file name alone was masked and its folders with it). A file link into the folder is one more
    name of its note; the owner reads what they typed."""
    root = tmp_path / "vault"
    write_note(root, f"prive/{SECRET}.md", "visibility: public", "Texte.")
    write_note(root, "prive/sous/plan.md", "visibility: public", "Texte.")
    body = (
        f"Voir public/lien/{SECRET} ; Coffre/public/lien/{SECRET}#Budget ; public/lien/sous/plan ; public/{SECRET}-bis ; "
        f"public/lien/{SECRET}.md ; restent public/lien/autre et public/lien.\n"
    )
    write_note(root, "public/accueil.md", "visibility: public", body)
    (root / "public" / "lien").symlink_to(Path("..") / "prive", target_is_directory=True)
    (root / "public" / f"{SECRET}-bis.md").symlink_to(root / "prive" / f"{SECRET}.md")
    bot = make_bot(root, exclude=("prive",))
    assert sorted(bot.snapshot.vault.notes) == ["public/accueil.md"]
    assert bot.snapshot.vault.excluded == {
        f"prive/{SECRET}.md",
        "prive/sous/plan.md",
        f"public/lien/{SECRET}.md",
        "public/lien/sous/plan.md",
        f"public/{SECRET}-bis.md",
    }
    assert bot.snapshot.index("visitor").readable_body("public/accueil.md").strip() == "Voir  ;  ;  ;  ;  ; restent public/lien/autre et public/lien."
    assert bot.snapshot.index("owner").readable_body("public/accueil.md").strip() == body.strip()


def test_an_excluded_notes_common_file_name_typed_alone_is_masked_until_a_loaded_note_has_it(tmp_path):
    """Decided, not an accident: an excluded `Modèles/README.md` masks « README.md » typed alone
    in a public note, as a private `README.md` does. --exclude says who may read a folder no
    more than `visibility` left unknown does, and every doubt keeps a note private; typed alone,
    a name no loaded note has leads where Obsidian's `[[README]]` leads, to that note, and code
    cannot tell a common name from a telling one (« rachat-acme-2027.md »). A public note's
    « README.md » comes back once a loaded note has that name: the word then names that one."""
    root = tmp_path / "vault"
    write_note(root, "Modèles/README.md", "visibility: public", "Comment remplir les modèles.")
    body = "Créez un README.md à la racine du dépôt.\n"
    write_note(root, "pub/git.md", "visibility: public", body)
    bot = make_bot(root, exclude=("Modèles",))
    assert bot.snapshot.index("visitor").readable_body("pub/git.md").strip() == "Créez un  à la racine du dépôt."
    assert bot.snapshot.index("owner").readable_body("pub/git.md").strip() == body.strip()
    write_note(root, "pub/README.md", "visibility: public", "Ce site.")
    bot.reload()
    assert bot.snapshot.index("visitor").readable_body("pub/git.md").strip() == body.strip()


def test_a_private_note_read_empty_just_after_a_change_stays_private_until_read_again(tmp_path, monkeypatch):
    """An editor that truncates a note, then writes it, caught in between by a reload: read as
    it was, a file of no bytes, the private note had no frontmatter and took the vault's default
    visibility, public, its path and title shown to visitors until the next reload."""
    root = tmp_path / "vault"
    write_note(root, f"prive/{SECRET}.md", "visibility: private", "Le secret du jardin.")
    write_note(root, "pub/accueil.md", "", "Le jardin fleurit en mai.")
    bot = make_bot(root, default_visibility="public")
    (root / "prive" / f"{SECRET}.md").write_bytes(b"")
    bot.reload()
    assert [s.path for s in bot.search(SECRET, audience="visitor").sources] == []
    assert not bot.snapshot.vault.notes[f"prive/{SECRET}.md"].public
    assert bot.snapshot.vault.errors == []
    monkeypatch.setattr(_vault, "RACY_NS", -(10**12))  # read later, still empty: an empty note, the vault's default
    bot.reload()
    assert bot.snapshot.vault.notes[f"prive/{SECRET}.md"].public
    assert [s.path for s in bot.search(SECRET, audience="visitor").sources] == [f"prive/{SECRET}.md"]


def test_a_note_growing_past_the_size_limit_while_it_is_read_is_not_read_past_it(tmp_path, monkeypatch):
    """The size is checked before reading: a file written to meanwhile was read whole, past it."""
    path = tmp_path / "note.md"
    path.write_bytes(b"x" * 100)
    monkeypatch.setattr(_vault, "MAX_NOTE_BYTES", 10)
    real_fstat = os.fstat

    class AsChecked:  # what fstat saw, before the file grew
        def __init__(self, st):
            self._st = st

        def __getattr__(self, name):
            return 5 if name == "st_size" else getattr(self._st, name)

    monkeypatch.setattr(_vault.os, "fstat", lambda fd: AsChecked(real_fstat(fd)))
    with pytest.raises(ValueError, match="qu'une note peut faire"):
        _vault.read_note_file(path)


@pytest.mark.parametrize(
    "unreadable",
    [
        b"---\nvisibility: priv",  # Obsidian saving it at the moment of the reload: half written
        b"---\nvisibility: private\ntags: [jardin\n---\nLe secret.",  # broken YAML
        b"\xff\xfe---\nvisibility: private\n---\n",  # saved as UTF-16 by another editor
    ],
)
def test_a_private_note_that_cannot_be_read_keeps_its_path_masked(tmp_path, unreadable):
    """A private note a reload could not read (caught half saved, broken YAML, not UTF-8,
    unreadable) was no note of the vault any more, so its path typed in a public note reached
    visitors as written until the next reload: its visibility is not known, so it stays hidden."""
    bot = _beside_a_secret(tmp_path, f"Le plan : prive/{SECRET}.md, {SECRET}.md et C:\\Coffre\\prive\\{SECRET} en mai.\n")
    assert _read_by_a_visitor(bot).strip() == "Le plan : ,  et  en mai."
    (tmp_path / "vault" / "prive" / f"{SECRET}.md").write_bytes(unreadable)
    bot.reload()
    assert [i.path for i in bot.snapshot.vault.errors] == [f"prive/{SECRET}.md"]
    assert _read_by_a_visitor(bot).strip() == "Le plan : ,  et  en mai."
    assert SECRET in bot.snapshot.index("owner").readable_body("pub/accueil.md")


@pytest.mark.parametrize(
    "code, shown",
    [
        ("`[[{name}]]` et `![[{name}|300]]`", "`` et ``"),
        ("`[[{name}#Plan|le plan]]`", "`le plan`"),
        ("\n\n```\n[[prive/{name}]]\n```\n\n", "\n\n```\n\n```\n\n"),
        ("`obsidian://open?vault=Coffre&file=prive%2F{name}`", "``"),
        ("`[[accueil]]`, `[[Une note à venir]]`", "`[[accueil]]`, `[[Une note à venir]]`"),
    ],
)
def test_a_link_to_a_private_note_in_code_never_reaches_a_visitor(tmp_path, code, shown):
    """A link in code is code, shown as written: `[[prive-note]]` in a code span reached
    visitors with the private note's name; a link in code to a note they may read, or to none,
    stays as written (an Obsidian course's examples)."""
    bot = _beside_a_secret(tmp_path, f"Le plan du jardin : {code.format(name=SECRET)} en mai.\n")
    assert _read_by_a_visitor(bot).strip() == f"Le plan du jardin : {shown} en mai.".strip()
    assert bot.snapshot.index("owner").readable_body("pub/accueil.md").strip() == f"Le plan du jardin : {code.format(name=SECRET)} en mai.".strip()


def test_a_piece_cut_inside_a_private_path_is_widened_to_all_of_it_on_either_side():
    """`Mentions.around`: a passage cut at the space of `prive/Rachat Acme.md` is widened, at its
    start or at its end, to hold the whole path, so that masking the piece leaves neither half
    (« Acme.md » alone names no hidden note: masked alone, it reached the reader)."""
    mentions = Mentions(["prive/Rachat Acme.md"], lambda target: None)
    text = "Les abeilles butinent la lavande, voir prive/Rachat Acme.md pour le reste du jardin."
    cut = text.index(" Acme.md")
    start, end = mentions.around(text, cut + 1, len(text))
    assert start <= text.index("prive/")
    assert "acme" not in mentions.masked(text[start:end]).lower()
    start, end = mentions.around(text, 0, cut)
    assert start == 0 and end >= text.index(" pour")
    assert "rachat" not in mentions.masked(text[start:end]).lower()


def test_a_long_passage_is_read_once_for_the_paths_it_may_hold(monkeypatch):
    """Each place a path may end (`.md`, `%2Emd`, a `/` before a hidden name's first word) read
    again up to 9 characters for each of the longest hidden path's: 40 KB of percent-encoded
    addresses took 5 s to mask, at each question that quoted the passage. It is read once."""
    folder = "Archives/Projets clients/2023/Dossier confidentiel de la société/"
    mentions = Mentions([f"{folder}Réunion {i} du comité.md" for i in range(300)] + ["prive/plan.md"], lambda target: None)
    text = "%2Emd " * 500 + "/%41" * 500 + "a.md " * 500 + "/plan " * 500 + "fin : prive%2Fplan%2Emd et prive/plan."
    mentions.masked("x")  # its tables made (by the first text masked): what is counted below is the text's reading
    read = 0
    folded = _mentions._folded

    def counted(text: str) -> str:
        nonlocal read
        read += len(text)
        return folded(text)

    monkeypatch.setattr(_mentions, "_folded", counted)
    assert mentions.masked(text) == text.removesuffix("prive%2Fplan%2Emd et prive/plan.") + " et ."
    assert read <= 5 * len(text), read  # twice per phase: once whole, once as it is decoded


ODD_PATHS = [None, "prive/mon_plan.md", "prive/pl*an*.md", "prive/pl\u200ban.md", "prive/a%2Fb.md", "prive/İle.md", "prive/deux  blancs.md", "prive/a&amp;b.md"]


@pytest.mark.parametrize("odd", ODD_PATHS)
def test_the_rendered_reading_is_made_as_the_written_one_when_no_path_holds_what_rendering_hides(odd):
    """Most vaults' paths hold nothing rendering hides: the rendered reading then shares the
    written one's tables instead of making them again (a start that masks a changed note made
    both, 29 ms at 10,000 notes); with a path that does, its own, as every key was read before."""
    paths = [f"cours/{i:03}/séance-{i}.md" for i in range(50)] + ([odd] if odd else [])
    mentions = Mentions(paths, lambda target: None)
    written, rendered = mentions._readings()
    shown = {_mentions._normalized(key, rendered=True)[0] for key in mentions._typed}

    def tables(reading) -> dict:
        return {k: vars(v) if isinstance(v, _mentions._Paths) else v for k, v in vars(reading).items()}

    assert tables(rendered) == tables(_mentions._Reading(shown, rendered=True))
    assert rendered._rendered and not written._rendered
    assert (rendered._paths is written._paths) == (shown == mentions._keys)
    if odd in (None, "prive/pl*an*.md"):  # a vault's paths; one a page shows as « prive/plan.md »
        assert (rendered._paths is written._paths) == (odd is None)
    assert all(p.removesuffix(".md") not in mentions.masked(f"voir {p} ici, ou {p.removesuffix('.md')}.") for p in paths[:50])


def test_links_nested_in_labels_are_read_once_and_lose_their_targets(tmp_path):
    """Wikilinks were read again as long as one inside another's label was, a pass per level:
    40,000 links each in the next one's label (240 KB) took minutes to load, and seconds for
    each visitor's passage of them. Past a few levels, what is left loses its targets."""
    bot = _beside_a_secret(tmp_path, f"Le plan du jardin : {f'[[{SECRET}|' * 40_000}en mai{']]' * 40_000}.\n")
    readable = _read_by_a_visitor(bot)
    assert SECRET not in readable.lower() and readable.strip().startswith("Le plan du jardin : en mai]]"), readable[:100]
    assert SECRET not in _indexed(bot).lower()


def test_links_to_thousands_of_missing_notes_are_each_said_once_without_comparing_every_pair(tmp_path, monkeypatch):
    """A note of links to notes not written yet (an import from Roam or Logseq): each missing
    note was looked for among those already said, every pair of them compared, 7 s to load a
    note of 10,000 and hours for the 400,000 a note may hold. Each is said once, in order."""
    root = tmp_path / "vault"
    write_note(root, "pub/index.md", "visibility: public", " ".join(f"[[Page {i}]] ![[Page {i}]]" for i in range(2_000)))
    compared = 0
    equal = _vault.Issue.__eq__

    def counted(self, other):
        nonlocal compared
        compared += 1
        return equal(self, other)

    monkeypatch.setattr(_vault.Issue, "__eq__", counted)
    vault = load_vault(root)
    monkeypatch.undo()
    said = [w.message for w in vault.warnings if w.path == "pub/index.md"]
    assert said == [f"le lien [[Page {i}]] ne mène à aucune note" for i in range(2_000)]
    assert compared < 4_000, compared  # one note missing, one look; not 2,000 × 2,000 / 2


@pytest.mark.parametrize("line", ["{{< ref " + "a" * 400_000, "{{< ref " + "path=a " * 60_000, "{{% relref " + 'path="a" ' * 45_000])
def test_a_hugo_ref_left_open_is_read_in_linear_time(line):
    """A `ref` shortcode never closed, its target a long word or many `path=`: each length of the
    word, each `path=`, was read again to the line's end, 3 s for 10,000 characters, 32 s for
    40,000, hours for a note's million, every load. The link after it is still read."""
    text = f'{line}\nVoir {{{{< ref "plan" >}}}}.\n'
    found = alarmed(30, _links.md_links_in, text, "pub/n.md", "link")
    assert [link.target for link in found] == ["plan"]
    assert alarmed(30, _links.rewrite_links, text, lambda t: False, "pub/n.md").endswith(
        "\nVoir .\n"
    )  # a link to a note the reader may not see, without a label: nothing


@pytest.mark.parametrize("blanks", [" " * 100_000, "\t" * 100_000, " \t" * 50_000])
def test_a_markdown_link_opened_before_a_long_run_of_blanks_is_read_in_linear_time(blanks):
    """`[a](` then blanks: the destination that ends in `.md` could start with a blank the
    `\\s*` before it gave back, so each length of that `\\s*` read the rest of the line again,
    0.5 s for 4,000 blanks, minutes for 100,000, every load and every passage. The link after it
    is still read."""
    text = f"[a]({blanks}\nVoir [le plan](prive/plan.md).\n"
    found = alarmed(30, _links.md_links_in, text, "pub/n.md", "link")
    assert [link.target for link in found] == ["pub/prive/plan.md"]
    assert alarmed(30, _links.rewrite_links, text, lambda t: False, "pub/n.md").endswith("\nVoir le plan.\n")


class _Asked(str):
    """A text that keeps what is looked for in it with `in`."""

    asked: list[str]

    def __contains__(self, needle: str) -> bool:
        self.asked.append(needle)
        return super().__contains__(needle)


def _asked(text: str) -> _Asked:
    asked = _Asked(text)
    asked.asked = []
    return asked


SITE_OPENINGS = {"{{", "{%", "page(", "ink("}


@pytest.mark.parametrize(
    "read",
    [
        _links.may_hold_site_links,
        _links.link_spans,
        lambda text: _links.rewrite_links(text, lambda t: False, "pub/n.md"),
        lambda text: _links.unreadable_links_dropped(text, lambda t: True),
    ],
    ids=["may_hold_site_links", "link_spans", "rewrite_links", "unreadable_links_dropped"],
)
def test_a_passage_without_a_brace_or_a_parenthesis_is_not_searched_for_site_links(read):
    """A pair of characters is looked for by a two-way search, ten times slower than one
    character by `memchr` (1.3 against 0.13 µs over 1 KB): `{{`, `{%`, `page(` and `ink(` looked
    for in each passage made building the prompt 40–50 µs slower. Without `{` nor `(` in it,
    none is looked for."""
    text = _asked("Les abeilles butinent la lavande, voir [le plan] et <b>ici</b> : https://ex.org. " * 20)
    read(text)
    assert text.asked and not SITE_OPENINGS & set(text.asked), text.asked


@pytest.mark.parametrize(
    ("text", "may"),
    [
        ('Voir {{< ref "plan" >}}.', True),
        ("Voir {% post_url 2024-05-01-plan %}.", True),
        ('`$= dv.page("plan").prix`', True),
        ('`dv.fileLink("plan")`', True),
        ('LIST WHERE contains(file.outlinks, link("plan"))', True),
        ("Un ensemble {1, 2} et une accolade { seule.", False),
        ("Une parenthèse (ici) et une page (la suivante).", False),
        ("Une accolade { et une parenthèse ( sans lien.", False),
        ("Du texte sans rien.", False),
        ("", False),
    ],
)
def test_the_site_links_guard_says_which_texts_may_hold_one(text, may):
    """What `may_hold_site_links` answers, each opening with and without what precedes it."""
    assert _links.may_hold_site_links(text) is may


def test_an_html_tag_that_names_no_note_stays_as_written():
    """An HTML course's examples are its text: only a tag that names a note is a link."""
    text = 'Une image : `<img src="photo.jpg" alt="Une photo">`, une vidéo <video src="film.mp4"></video>, <script src="https://x.org/a.js"></script>.'
    assert _links.rewrite_links(text, lambda t: False, "cours/HTML.md") == text


def test_web_links_stay_as_written():
    text = "Voir [le site](https://example.org/a.md) et [courriel](mailto:x@example.org) et [ici](#titre)."
    assert _links.rewrite_links(text, lambda t: False, "a/b.md") == text


# ---------------------------------------------------------------- symlinks


def symlinked_vault(root: Path) -> Path:
    write_note(root, "pub/sain.md", "title: Sain\nvisibility: public", "Les abeilles du jardin.")
    for folder in ("exclu", ".trash", ".obsidian"):
        write_note(root, f"{folder}/{SECRET}-{folder.strip('.')}.md", "visibility: public", f"Texte {SECRET}.")
    outside = root.parent / "dehors"
    write_note(outside, f"{SECRET}-dehors.md", "visibility: public", f"Texte {SECRET}.")
    (root / "pub" / "vers-exclu").symlink_to(root / "exclu", target_is_directory=True)
    (root / "pub" / "vers-corbeille").symlink_to(Path("..") / ".trash", target_is_directory=True)
    (root / "pub" / "vers-obsidian").symlink_to(root / ".obsidian", target_is_directory=True)
    (root / "pub" / "vers-dehors").symlink_to(outside, target_is_directory=True)
    (root / "pub" / "note-exclue.md").symlink_to(root / "exclu" / f"{SECRET}-exclu.md")
    (root / "pub" / "note-corbeille.md").symlink_to(root / ".trash" / f"{SECRET}-trash.md")
    (root / "pub" / "note-dehors.md").symlink_to(outside / f"{SECRET}-dehors.md")
    (root / "pub" / "vers-pub").symlink_to(root / "pub", target_is_directory=True)  # a loop
    return root


def test_symlinks_are_judged_by_where_they_lead(tmp_path):
    root = symlinked_vault(tmp_path / "vault")
    vault = load_vault(root, VaultOptions(exclude=("exclu",), default_public=True))
    assert sorted(vault.notes) == ["pub/sain.md"], sorted(vault.notes)


def test_hidden_files_and_folders_are_no_notes(tmp_path):
    """Obsidian shows no file or folder whose name starts with a dot: a sync tool's old versions
    (`.stversions/`) may hold a public copy of a note its author has made private since."""
    root = tmp_path / "vault"
    write_note(root, "salaire.md", "visibility: private", f"Mon salaire {SECRET}.")
    write_note(root, ".stversions/salaire~20240101.md", "visibility: public", f"Mon salaire {SECRET}.")
    write_note(root, "notes/.brouillon.md", "visibility: public", f"Brouillon {SECRET}.")
    write_note(root, "notes/.sync/copie.md", "visibility: public", f"Copie {SECRET}.")
    write_note(root, "notes/vraie.md", "visibility: public", "Les abeilles.")
    (root / "notes" / "lien.md").symlink_to(root / ".stversions" / "salaire~20240101.md")
    assert sorted(load_vault(root).notes) == ["notes/vraie.md", "salaire.md"]
    assert SECRET not in json.dumps(make_bot(root).search(f"salaire {SECRET}", audience="visitor").to_dict())


def test_a_symlink_to_an_allowed_note_serves_it(tmp_path):
    root = tmp_path / "vault"
    write_note(root, "a/vraie.md", "title: Vraie\nvisibility: public", "Les abeilles.")
    (root / "b").mkdir()
    (root / "b" / "lien.md").symlink_to(root / "a" / "vraie.md")
    (root / "c").symlink_to(root / "a", target_is_directory=True)
    assert sorted(load_vault(root).notes) == ["a/vraie.md", "b/lien.md"]  # c/ is a/ again: walked once


def test_a_hard_link_to_a_note_of_an_excluded_folder_is_left_out_and_masked(tmp_path):
    """`ln exclu/secret.md pub/copie.md`: the same file, its bytes and its inode, under a public
    path the walk reads as any note, served to visitors (`default_visibility public`) though its
    author left its folder out; a symbolic link there is judged where it leads, a hard link
    leads nowhere else: it is left out as the excluded file it is, its path masked, by a load
    and by a reload that cannot list a folder (`Vault.as_found`)."""
    root = tmp_path / "vault"
    write_note(root, f"exclu/{SECRET}.md", "visibility: public", f"Texte {SECRET}.")
    write_note(root, "pub/sain.md", "visibility: public", "Les abeilles du jardin. Voir pub/copie.md.")
    write_note(root, "pub/double.md", "visibility: public", "Les ruches.")
    os.link(root / "exclu" / f"{SECRET}.md", root / "pub" / "copie.md")
    os.link(root / "pub" / "double.md", root / "pub" / "double-bis.md")  # two public names: both served
    vault = load_vault(root, VaultOptions(exclude=("exclu",), default_public=True))
    assert sorted(vault.notes) == ["pub/double-bis.md", "pub/double.md", "pub/sain.md"]
    assert vault.excluded == {f"exclu/{SECRET}.md", "pub/copie.md"}
    told = f"même fichier que exclu/{SECRET}.md (un lien physique), d'un dossier exclu par --exclude : laissé de côté"
    assert [(w.path, w.message) for w in vault.warnings] == [("pub/copie.md", told)]
    (root / "pub" / "double.md").unlink()  # a reload that cannot list a folder reads the known notes alone
    os.link(root / "exclu" / f"{SECRET}.md", root / "pub" / "double.md")
    found = vault.as_found()
    assert sorted(found.notes) == ["pub/double-bis.md", "pub/sain.md"]
    assert found.excluded == {f"exclu/{SECRET}.md", "pub/copie.md", "pub/double.md"}
    assert sorted(w.path for w in found.warnings) == ["pub/copie.md", "pub/double.md"]
    (root / "pub" / "double.md").unlink()
    bot = make_bot(root, exclude=("exclu",), default_visibility="public")
    assert SECRET not in json.dumps(bot.search(f"texte {SECRET}", audience="visitor").to_dict())
    assert "copie" not in bot.snapshot.index("visitor").readable_body("pub/sain.md")


def test_a_public_note_hard_linked_into_an_excluded_folder_leaves_the_site_while_a_folder_cannot_be_listed(tmp_path):
    """`ln pub/plan.md exclu/plan.md` while a reload cannot list a folder: a good load leaves the
    public note out (an excluded file is left out under every name), but `Vault.as_found`
    compared its inode with the excluded notes the last good load had found, where the new name
    was not: the note stayed served until a reload succeeded."""
    root = tmp_path / "vault"
    write_note(root, "pub/plan.md", "visibility: public", f"Le plan {SECRET}.")
    write_note(root, "pub/sain.md", "visibility: public", "Les abeilles du jardin.")
    (root / "exclu").mkdir()
    options = VaultOptions(exclude=("exclu",))
    vault = load_vault(root, options)
    os.link(root / "pub" / "plan.md", root / "exclu" / "plan.md")
    found = vault.as_found()
    assert sorted(found.notes) == sorted(load_vault(root, options).notes) == ["pub/sain.md"]
    assert found.excluded == {"exclu/plan.md", "pub/plan.md"}
    told = "même fichier que exclu/plan.md (un lien physique), d'un dossier exclu par --exclude : laissé de côté"
    assert [(w.path, w.message) for w in found.warnings] == [("pub/plan.md", told)]


@pytest.mark.parametrize("load", ["failed-reload", "good-load"])
def test_a_note_with_another_name_is_left_out_while_an_excluded_folder_cannot_be_listed(tmp_path, monkeypatch, load):
    """`ln pub/plan.md exclu/plan.md` while `exclu/`, a folder of --exclude, cannot be listed: the
    daemon cannot find the excluded name, so no inode to compare with, and the note, now an
    excluded file, stayed served under its public name (by a failed reload, `Vault.as_found`,
    and by a good load, whose walk never lists `exclu/`). Decided: while a folder of --exclude
    cannot be listed, a note whose file has more than one name is left out (read again, for a
    failed reload; a note unchanged since the last good load has no new name), its path masked,
    and the author told why; a note of one name is served as before."""
    root = tmp_path / "vault"
    write_note(root, "pub/plan.md", "visibility: public", f"Le plan {SECRET}.")
    write_note(root, "pub/sain.md", "visibility: public", "Les abeilles du jardin.")
    write_note(root, "exclu/vieux.md", "visibility: public", "Texte.")
    options = VaultOptions(exclude=("exclu",))
    vault = load_vault(root, options)
    unlistable(monkeypatch, root / "exclu")
    os.link(root / "pub" / "plan.md", root / "exclu" / "plan.md")
    found = vault.as_found() if load == "failed-reload" else load_vault(root, options)
    assert sorted(found.notes) == ["pub/sain.md"]
    assert "pub/plan.md" in found.excluded
    told = "a plusieurs noms (liens physiques) et exclu/, exclu par --exclude, ne peut pas être lu : laissé de côté, ce pourrait être une de ses notes"
    assert [(w.path, w.message) for w in found.warnings] == [("pub/plan.md", told)]
    monkeypatch.undo()  # listed again: the excluded name found, as before
    assert sorted(load_vault(root, options).notes) == ["pub/sain.md"]


def test_paths_through_many_links_to_an_excluded_folder_are_found_in_time_linear_in_links_and_notes(tmp_path):
    """50 links to `prive/`, a folder of --exclude of 2,000 notes: `_through_links` tried every
    excluded path against each link, and a failed reload (`Vault.as_found`) handed it the paths
    the links had given too (102,000), 5 million comparisons, seconds each time a reload
    failed. The same paths, in one pass over the excluded paths and their folders."""
    root = tmp_path / "vault"
    write_note(root, "pub/accueil.md", "visibility: public", "Voir pub/lien07/12/n3.")
    for i in range(2000):
        folder = root / "prive" / f"{i % 40:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"n{i}.md").write_text("Texte.\n", encoding="utf-8")
    for i in range(50):
        (root / "pub" / f"lien{i:02d}").symlink_to(Path("..") / "prive", target_is_directory=True)
    (root / "pub" / "sous").symlink_to(Path("..") / "prive" / "12", target_is_directory=True)
    vault = load_vault(root, VaultOptions(exclude=("prive",)))
    assert len(vault.excluded) == 2000 + 50 * 2000 + 50
    assert {"prive/12/n12.md", "pub/lien07/12/n12.md", "pub/lien49/00/n0.md", "pub/sous/n52.md"} <= vault.excluded
    assert vault.as_found().excluded == vault.excluded  # nothing changed: the same paths found again

    class Walked(frozenset):
        """The excluded paths, counting the passes over them."""

        passes = 0

        def __iter__(self):
            Walked.passes += 1
            return super().__iter__()

    assert _vault._through_links(vault.symlinks, Walked(vault.excluded)) == vault.excluded - {path for path in vault.excluded if path.startswith("prive/")}
    assert Walked.passes == 1  # one pass over 102,050 paths, not one a link


# ---------------------------------------------------------------- files that are not notes

KINDS = ["note", "fifo", "folder.md", "socket", "broken-link", "link-to-fifo"]


def make_kind(root: Path, kind: str, i: int) -> str:
    rel = f"d{i % 3}/{kind}-{i}.md"
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "note":
        path.write_text(f"---\nvisibility: public\n---\nLes abeilles {i}.", encoding="utf-8")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder.md":
        path.mkdir()
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        try:
            sock.bind(str(path))
        except OSError:  # a path too long for AF_UNIX: a FIFO stands in
            os.mkfifo(path)
        finally:
            sock.close()
    elif kind == "broken-link":
        path.symlink_to(root / "nulle-part.md")
    elif kind == "link-to-fifo":
        fifo = root / f"tube-{i}"
        os.mkfifo(fifo)
        path.symlink_to(fifo)
    return rel


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kinds=st.lists(st.sampled_from(KINDS), min_size=1, max_size=8))
def test_files_that_are_not_notes_are_reported_and_never_hang(tmp_path_factory, kinds):
    root = tmp_path_factory.mktemp("kinds")
    made = {make_kind(root, kind, i): kind for i, kind in enumerate(kinds)}
    vault = bounded(10, load_vault, root)
    notes = {rel for rel, kind in made.items() if kind == "note"}
    assert set(vault.notes) == notes
    reported = {e.path: e.message for e in vault.errors}
    for rel, kind in made.items():
        if kind in ("fifo", "socket", "link-to-fifo"):
            assert "pas un fichier ordinaire" in reported[rel], (rel, reported)
        elif kind == "broken-link":
            assert reported[rel].startswith("impossible de lire le fichier : ")
    # the parallel loader's workers open what the walk found: the same files, never a hang
    from grasbot.store.parallel import _share

    parsed, _, _ = bounded(10, _share, 0, [(rel, str(root / rel)) for rel in made if made[rel] != "folder.md"], VaultOptions())
    assert set(parsed) == notes


def test_a_file_name_that_is_not_utf8_is_reported(tmp_path):
    root = tmp_path / "vault"
    write_note(root, "sain.md", "visibility: public", "Les abeilles.")
    with open(os.path.join(os.fsencode(root), b"nom-\xff.md"), "wb") as f:
        f.write(b"---\nvisibility: public\n---\nTexte.")
    vault = load_vault(root)
    assert sorted(vault.notes) == ["sain.md"]
    (error,) = vault.errors
    assert error.path == "nom-\ufffd.md" and error.message == "le nom du fichier (ou de son dossier) n'est pas en UTF-8 : renommez-le"
    error.path.encode("utf-8")  # the report itself can be sent


@pytest.mark.parametrize("where", ["root", "sub"])
async def test_an_unreadable_folder_fails_the_reload_and_the_old_index_serves(start_daemon, tmp_path, monkeypatch, where):
    vault = tmp_path / "vault"
    write_note(vault, "a.md", "visibility: public", "Les abeilles.")
    write_note(vault, "sous/b.md", "visibility: public", "Le miel.")
    client = await start_daemon(vault, owner_token=OWNER_TOKEN)
    assert len(bot_of(client).snapshot.vault.notes) == 2
    blocked = str(vault if where == "root" else vault / "sous")
    real_scandir = os.scandir

    def scandir(path="."):
        if os.fspath(path) == blocked:  # as root, chmod 000 would not stop the test itself
            raise PermissionError(13, "Permission denied", blocked)
        return real_scandir(path)

    monkeypatch.setattr(_vault.os, "scandir", scandir)
    answer = await rpc(client, "reload", {}, headers=OWNER)
    assert answer["error"]["code"] == -32004
    assert "Permission denied" in answer["error"]["data"]
    assert ("sous/" in answer["error"]["data"]) == (where == "sub")
    assert len(bot_of(client).snapshot.vault.notes) == 2
    assert (await (await client.get("/health")).json())["vault_size"] == 2
    resp = await client.post("/reload-vault", headers=OWNER)
    assert resp.status == 500 and "le coffre précédent reste servi" in (await resp.json())["error"]["data"]


@pytest.mark.parametrize("depth", [_vault.MAX_FOLDER_DEPTH + 1, 1_100])  # 1,100: past Python's recursion limit
def test_a_very_deep_tree_is_reported_not_a_crash(tmp_path, depth):
    root = tmp_path / "vault"
    write_note(root, "a.md", "visibility: public", "Les abeilles.")
    deep = root
    for _ in range(depth):  # one by one: pathlib's mkdir(parents=True) recurses too
        deep = deep / "d"
        deep.mkdir()
    (deep / "fond.md").write_text("---\nvisibility: public\n---\nAu fond.", encoding="utf-8")
    try:
        with pytest.raises(VaultError, match=r"imbriqué à plus de 64 niveaux de dossiers"):
            load_vault(root)
    finally:  # one by one again: pytest's own clean-up of old temporary folders recurses
        (deep / "fond.md").unlink()
        for _ in range(depth):
            deep.rmdir()
            deep = deep.parent
    within = tmp_path / "ok"
    write_note(within.joinpath(*["d"] * _vault.MAX_FOLDER_DEPTH), "fond.md", "visibility: public", "Au fond.")
    assert len(load_vault(within).notes) == 1


# ---------------------------------------------------------------- changes that keep size and mtime


def test_a_visibility_change_that_keeps_size_and_mtime_is_seen(tmp_path):
    root = tmp_path / "vault"
    path = write_note(root, "n.md", "visibility: public", f"Le code {SECRET}.")
    bot = make_bot(root)
    assert len(bot.snapshot.index("visitor")) == 1
    st = path.stat()
    path.write_bytes(path.read_bytes().replace(b"visibility: public", b"visibility: xublic"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # rsync -t, an editor that restores mtime
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    bot.reload()
    assert len(bot.snapshot.index("visitor")) == 0
    assert bot.search(SECRET).sources == ()


def test_a_file_read_just_after_its_change_is_hashed_again_then_trusted(tmp_path, monkeypatch):
    root = tmp_path / "vault"
    write_note(root, "n.md", "visibility: public", "Les abeilles.")
    write_note(root, "m.md", "visibility: public", "Le miel.")
    reads = []
    real = _vault.read_note_file
    monkeypatch.setattr(_vault, "read_note_file", lambda path: reads.append(Path(path).name) or real(path))
    vault = load_vault(root)
    assert {n.ctime_ns for n in vault.notes.values()} == {-1}  # just written: stamps prove nothing
    reads.clear()
    again = load_vault(root, previous=vault)
    assert sorted(reads) == ["m.md", "n.md"]  # read and hashed again...
    assert all(again.notes[p] is vault.notes[p] for p in vault.notes)  # ...and not parsed again
    monkeypatch.setattr(_vault, "RACY_NS", 0)  # as if the files were old
    trusted = load_vault(root, previous=again)
    assert all(n.ctime_ns == os.stat(root / p).st_ctime_ns for p, n in trusted.notes.items())
    reads.clear()
    load_vault(root, previous=trusted)
    assert reads == []  # size, mtime and ctime prove them unchanged


def test_frontmatter_fields_lose_hidden_comments_too():
    n = note("pub.md", f'---\ntitle: Le jardin %%{SECRET}%%\naliases: ["<!-- {SECRET} -->", "potager"]\ntags: [abeilles, "%%{SECRET}%%"]\n---\nTexte.')
    assert (n.title, n.aliases, n.tags) == ("Le jardin", ("potager",), ("abeilles",))


def test_a_note_too_large_is_skipped_and_reported_unread(tmp_path, monkeypatch):
    """A 50 MB note (a log pasted, a drawing) made the first search that reached it take 11 s,
    every visitor waiting: it is left out, as a frontmatter too large is."""
    monkeypatch.setattr(_vault, "MAX_NOTE_BYTES", 1_000_000)
    write_note(tmp_path, "petite.md", "visibility: public", "Le jardin.")
    write_note(tmp_path, "enorme.md", "visibility: public", "Le jardin. " * 150_000)
    vault = load_vault(tmp_path)
    assert set(vault.notes) == {"petite.md"}
    assert [(e.path, e.message) for e in vault.errors] == [
        ("enorme.md", "1,7 Mo, plus que les 1 Mo qu'une note peut faire : ignorée (découpez-la en plusieurs notes)")
    ]


@pytest.mark.parametrize(
    "fails, error, message",
    [
        ("sous", FileNotFoundError(2, "No such file"), "le dossier sous/ du coffre a été déplacé ou supprimé pendant sa lecture : relisez le coffre"),
        (
            "sous",
            PermissionError(13, "Denied"),
            "impossible de lire le dossier sous/ du coffre : Denied (corrigez ses droits, ou laissez-le de côté avec --exclude)",
        ),
        ("", PermissionError(13, "Denied"), "impossible de lire le dossier du coffre {root} : Denied (corrigez ses droits)"),
    ],
)
def test_a_folder_that_cannot_be_read_is_named_with_what_to_do(tmp_path, monkeypatch, fails, error, message):
    """A folder renamed during a reload was said to need its permissions fixed; the vault's
    own folder, to be left out with --exclude."""
    write_note(tmp_path, "sous/note.md", "visibility: public", "Le jardin.")
    scandir = os.scandir
    failing = os.fspath(tmp_path / fails) if fails else os.fspath(tmp_path)

    def scan(path):
        if os.fspath(path).rstrip("/") == failing.rstrip("/"):
            raise error
        return scandir(path)

    monkeypatch.setattr(_vault.os, "scandir", scan)
    with pytest.raises(VaultError) as info:
        load_vault(tmp_path)
    assert str(info.value) == message.format(root=tmp_path)


def _found_by(bot: GrasBot, question: str, audience: str = "visitor") -> list[str]:
    return [s.path for s in bot.search(question, audience=audience).sources]


def _masked_and_unsearchable(bot: GrasBot, typed: str, words: str, kept: str | None = None) -> None:
    """The private path `typed` in the public note: gone for a visitor (a word typed after it,
    « et », stays), its `words` finding nothing, and `kept` (`typed`, as written) in the
    owner's text."""
    assert _read_by_a_visitor(bot).strip() == f"Le jardin : voir {' et' if typed.endswith(' et') else ''} en mai."
    assert _found_by(bot, words) == []
    assert (typed if kept is None else kept) in bot.snapshot.index("owner").readable_body("pub/accueil.md")


def test_a_hugo_front_matter_is_neither_searched_nor_quoted_to_a_visitor(tmp_path):
    """A public note's Hugo TOML front matter that says nothing of who reads it (`+++`, a title,
    a description Hugo shows no one) was its text: search found the note by the description's
    words, and its passages quoted `+++` and `description = …` to the model and to the visitor.
    Neither now; its title is the note's."""
    root = tmp_path / "vault"
    root.mkdir()
    toml = '+++\ntitle = "Mon projet"\ndescription = "brouillon interne zorglub"\n+++\n'
    (root / "projet.md").write_text(f"{toml}Le potager du jardin en mai.\n", encoding="utf-8")
    (root / "jardin.md").write_text("Le jardin en mai, sans potager.\n", encoding="utf-8")
    bot = make_bot(root, default_visibility="public")
    assert _found_by(bot, "brouillon interne zorglub") == []
    assert bot.snapshot.index("visitor").readable_body("projet.md").split() == ["Le", "potager", "du", "jardin", "en", "mai."]
    found = next(s for s in bot.search("potager du jardin").sources if s.path == "projet.md")
    assert found.title == "Mon projet"
    quoted = " ".join(p.text for p in found.passages)
    assert "potager" in quoted and "+++" not in quoted and "description" not in quoted


def test_search_does_not_find_a_public_note_by_a_private_path_typed_in_it(tmp_path):
    """A visitor read a private path typed in a public note masked, but search still counted its
    words: « rachat acme 2027 » found that note first, so a visitor could confirm a guessed
    private name. Its words are not searched, by either audience (the owner finds the private
    note itself), nor embedded; a reload that hides or shows the note follows."""
    root = tmp_path / "vault"
    write_note(root, "prive/rachat-acme-2027.md", "visibility: private", "Le rachat d'Acme en 2027.")
    write_note(root, "pub/accueil.md", "visibility: public", "Voir prive/rachat-acme-2027.md pour la suite du jardin.")
    write_note(root, "pub/potager.md", "visibility: public", "Le potager du jardin en mai.")
    bot = make_bot(root)
    assert _found_by(bot, "rachat acme 2027") == []
    assert _found_by(bot, "rachat acme 2027", "owner")[0] == "prive/rachat-acme-2027.md"
    assert "pub/accueil.md" in _found_by(bot, "la suite du jardin")
    texts = NoteTexts().of(bot.snapshot.indexes)
    assert not any("acme" in t.lower() for t in texts.by_path["pub/accueil.md"]), texts.by_path["pub/accueil.md"]
    write_note(root, "prive/rachat-acme-2027.md", "visibility: public", "Le rachat d'Acme en 2027.")
    bot.reload()
    assert "pub/accueil.md" in _found_by(bot, "rachat acme 2027")  # a public note's path is a word like any
    write_note(root, "prive/rachat-acme-2027.md", "visibility: private", "Le rachat d'Acme en 2027.")
    bot.reload()
    assert _found_by(bot, "rachat acme 2027") == []
    for _ in range(2):  # the index cache written, then read
        assert _found_by(make_bot(root, index_cache=True, cache_dir=str(tmp_path / "cache")), "rachat acme 2027") == []


@pytest.mark.parametrize("goes", [".trash/plan-rouge.md", "archives/plan-rouge.md", "prive/plan-vert.md", None])
def test_a_private_note_s_path_typed_in_a_public_note_stays_masked_once_the_note_went(tmp_path, goes):
    """A private note deleted (Obsidian moves it to `.trash/`, which is not read), moved or
    renamed left « prive/plan-rouge.md » typed in a public note naming no note: a reload showed
    it to visitors and search found the note by its words, and so did every start after. It stays
    masked across reloads and starts; only the note back at its path, public, shows it."""
    root = tmp_path / "vault"
    write_note(root, "prive/plan-rouge.md", "visibility: private", "Le plan.")
    write_note(root, "jardin.md", "visibility: public", "Le plan est dans prive/plan-rouge.md pour le potager.")
    write_note(root, "potager.md", "visibility: public", "Le potager en mai.")
    cached = {"index_cache": True, "cache_dir": str(tmp_path / "cache")}
    bot = make_bot(root, **cached)
    if goes is None:
        (root / "prive/plan-rouge.md").unlink()
    else:
        (root / goes).parent.mkdir(exist_ok=True)
        (root / "prive/plan-rouge.md").rename(root / goes)
    bot.reload()
    for served in (bot, make_bot(root, **cached), make_bot(root, **cached)):  # the cache the first start wrote, then the one a start wrote
        index = served.snapshot.index("visitor")
        assert "plan-rouge" not in index.readable_body("jardin.md")
        assert _found_by(served, "rouge") == []
        assert not any("rouge" in t.lower() for t in NoteTexts().of(served.snapshot.indexes).by_path["jardin.md"])
    other = build_snapshot(Settings.load(env={}, vault_dir=root, exclude=("brouillons",)), bot.snapshot)  # other options: built anew
    assert "plan-rouge" not in other.index("visitor").readable_body("jardin.md")
    write_note(root, "prive/plan-rouge.md", "visibility: public", "Le plan, public.")  # the author's choice to show it
    bot.reload()
    assert "prive/plan-rouge.md" in bot.snapshot.index("visitor").readable_body("jardin.md")
    assert "jardin.md" in _found_by(bot, "rouge")


def test_a_private_note_made_and_deleted_while_the_daemon_serves_stays_masked_after_a_restart(tmp_path):
    """The index cache, which alone tells a start which hidden notes went, was written at starts
    only: a private note written, typed in a public note, then deleted while the daemon served
    was unknown to the next start, which showed « prive/plan-rouge.md » to visitors. The reload
    that sees a hidden note go writes the cache."""
    root = tmp_path / "vault"
    cached = {"index_cache": True, "cache_dir": str(tmp_path / "cache")}
    write_note(root, "jardin.md", "visibility: public", "Le potager.")
    write_note(root, "potager.md", "visibility: public", "Le potager en mai.")
    bot = make_bot(root, **cached)
    write_note(root, "prive/plan-rouge.md", "visibility: private", "Le plan.")
    write_note(root, "jardin.md", "visibility: public", "Le plan est dans prive/plan-rouge.md pour le potager.")
    bot.reload()
    (root / "prive/plan-rouge.md").unlink()
    bot.reload()
    restarted = make_bot(root, **cached)
    assert restarted.snapshot.index("visitor").readable_body("jardin.md").strip() == "Le plan est dans  pour le potager."
    assert _found_by(restarted, "rouge") == []


def _beside_a_deal(tmp_path, typed: str) -> GrasBot:
    """A private `prive/rachat-acme-2027.md` and a public note that types `typed` in prose."""
    root = tmp_path / "vault"
    write_note(root, "prive/rachat-acme-2027.md", "visibility: private", "Le rachat d'Acme en 2027.")
    write_note(root, "pub/accueil.md", "visibility: public", f"Le jardin : voir {typed} en mai.")
    return make_bot(root)


@pytest.mark.parametrize(
    "typed",
    [
        "prive%252Frachat-acme-2027.md",
        "Coffre%252Fprive%252Frachat-acme-2027%252Emd",
        "prive%25252Frachat-acme-2027",
        "C:%255CCoffre%255Cprive%255Crachat-acme-2027.md",
    ],
)
def test_a_private_path_encoded_twice_is_masked(tmp_path, typed):
    """An address a browser encoded twice (`%252F`: the `%` of `%2F` encoded again) reached
    visitors as written, « rachat-acme-2027.md » readable in it, and search found the public
    note by « rachat acme 2027 »: each `%25` is read as the `%` it stands for."""
    bot = _beside_a_deal(tmp_path, typed)
    assert _read_by_a_visitor(bot).strip().replace("*", "") == "Le jardin : voir  en mai."  # an emphasis's `*` may stay, alone
    assert _found_by(bot, "rachat acme 2027") == []
    assert typed in bot.snapshot.index("owner").readable_body("pub/accueil.md")


@pytest.mark.parametrize(
    "typed",
    [
        "prive/rachat-a\u200bcme-2027.md",  # a zero-width space
        "prive/rachat-acme\u2060-2027.md",  # a word joiner
        "prive/\ufeffrachat-acme-2027.md",  # a byte order mark
        "prive/ra\u00adchat-acme-2027.md",  # a soft hyphen
        "prive/rachat-acme-2027\u202a.md",  # a bidirectional control, which visitors' text loses after
        "prive/rachat-acme-2027.m\u200dd",
        "prive%2Frachat-a%E2%80%8Bcme-2027.md",
        "Coffre/prive/rachat-acme\u00ad-2027 et",  # without `.md`
    ],
)
def test_a_private_path_with_an_invisible_character_in_it_is_masked(tmp_path, typed):
    """A character that shows nothing, pasted from a web page inside a private note's path,
    kept the path from being read as one: visitors read « prive/rachat-acme-2027.md » as
    written, and search found the public note by « rachat acme 2027 »."""
    bot = _beside_a_deal(tmp_path, typed)
    _masked_and_unsearchable(bot, typed, "rachat acme 2027", kept="2027")


@pytest.mark.parametrize(
    "typed",
    [
        "prive/rachat-a\u034fcme-2027.md",  # a combining grapheme joiner
        "prive/rachat-ac\ufe0fme-2027.md",  # a variation selector
        "prive/rachat-acme-2027.m\ufe00d",
        "prive/rachat-a\u180bcme-2027.md",  # a Mongolian free variation selector
        "prive/rachat-a\u180ecme-2027.md",  # the Mongolian vowel separator
        "prive/ra\u061cchat-acme-2027.md",  # the Arabic letter mark
        "Coffre/prive/rachat-ac\ufe0fme-2027 et",  # without `.md`
    ],
)
def test_a_private_path_with_a_mark_or_a_format_character_that_shows_nothing_in_it_is_masked(tmp_path, typed):
    """A combining grapheme joiner, a variation selector, a Mongolian one, the Mongolian vowel
    separator or the Arabic letter mark shows nothing inside a private note's path, as a
    zero-width space does, but the rendered reading did not drop them: visitors read
    « prive/rachat-acme-2027.md » and search found the public note by « rachat acme 2027 »."""
    bot = _beside_a_deal(tmp_path, typed)
    _masked_and_unsearchable(bot, typed, "rachat acme 2027", kept="2027")


@pytest.mark.parametrize(
    "typed",
    [
        "prive/rachat\U000e0041-acme-2027.md",  # a tag character
        "prive/rachat-acme-2027.m\U000e007fd",  # the cancel tag
        "prive/rachat-ac\U000e0100me-2027.md",  # a variation selector of the supplement
        "prive/rachat-acme-2027.\U000e01efmd",
        "prive/rachat-a\U0001bca0cme-2027.md",  # a shorthand format control
        "prive/ra\U000e0020chat-acme-2027\U0001bca3.md",
        "Coffre/prive/rachat-ac\U000e0041me-2027 et",  # without `.md`
        "Coffre/prive/\U000e0041rachat-acme-2027.md",
        "prive/rachat%F3%A0%81%81-acme-2027.md",  # percent-encoded, as a browser's address writes it
        "prive/rachat-acme-2027%f3%a0%84%80.md",
        "prive%252Frachat-a%25F0%259B%25B2%25A0cme-2027",  # encoded twice, without `.md`
        "prive/rachat&#xE0041;-acme-2027.md",  # an HTML character reference
    ],
)
def test_a_private_path_with_an_invisible_character_outside_the_bmp_in_it_is_masked(tmp_path, typed):
    """A tag character, a variation selector of the supplement or a shorthand format control
    shows nothing inside a private note's path, as a zero-width space does, but the rendered
    reading read none of them: visitors read « prive/rachat-acme-2027.md »."""
    bot = _beside_a_deal(tmp_path, typed)
    _masked_and_unsearchable(bot, typed, "rachat acme 2027")


def test_a_flag_s_tag_characters_beside_a_private_path_stay(tmp_path):
    """The tag characters that write a flag (« 🏴 » then « gbsct » in tags: Scotland's), and a
    variation selector of the supplement, are kept where no private path is masked."""
    scotland = "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"
    bot = _beside_a_deal(tmp_path, f"{scotland} prive/rachat-acme-2027.md \u845b\U000e0100 {scotland}")
    assert _read_by_a_visitor(bot).strip() == f"Le jardin : voir {scotland}  \u845b\U000e0100 {scotland} en mai."


def test_an_emoji_s_variation_selector_beside_a_private_path_stays(tmp_path):
    """The variation selector that shows an emoji as one (« ❤\ufe0f », « 1\ufe0f\u20e3 ») is kept
    where no private path is masked."""
    bot = _beside_a_deal(tmp_path, "\u2764\ufe0f prive/rachat-acme-2027.md 1\ufe0f\u20e3")
    assert _read_by_a_visitor(bot).strip() == "Le jardin : voir \u2764\ufe0f  1\ufe0f\u20e3 en mai."


@pytest.mark.parametrize(
    "typed",
    [
        "prive/İzmir rachat-acme.md",  # as the file is named
        "Coffre/prive/İzmir rachat-acme.md",
        "İzmir rachat-acme.md",  # its name alone
        "prive/İzmir rachat-acme",  # without `.md`
        "prive/izmir rachat-acme.md",  # another case, as Obsidian reads a link
    ],
)
def test_a_private_path_with_a_dotted_capital_i_is_masked(tmp_path, typed):
    """« İ » (U+0130) is the one character whose lower case is two (« i » and a combining dot):
    the hidden paths were lowered whole and the text one character for one, so a private
    note whose name holds one was never masked, typed exactly as its file is named, and
    search found the public note by the name's words."""
    root = tmp_path / "vault"
    write_note(root, "prive/İzmir rachat-acme.md", "visibility: private", "Le rachat d'Acme.")
    write_note(root, "pub/accueil.md", "visibility: public", f"Le jardin : voir {typed} en mai.")
    bot = make_bot(root)
    _masked_and_unsearchable(bot, typed, "rachat acme")


@pytest.mark.parametrize(
    ("named", "typed"),
    [
        ("prive/Rachat Acme.md", "prive/Rachat\u00a0Acme.md"),  # a no-break space, as a French keyboard types one
        ("prive/Rachat Acme.md", "prive/Rachat\u202fAcme.md"),  # a narrow one, as before « : »
        ("prive/Rachat Acme.md", "prive/Rachat\u2009Acme.md"),  # a thin space
        ("prive/Rachat Acme.md", "prive/Rachat\u3000Acme.md"),  # an ideographic one
        ("prive/Rachat Acme.md", "prive/Rachat\nAcme.md"),  # a line break, which a page shows as a space
        ("prive/Rachat Acme.md", "prive/Rachat\tAcme"),  # without `.md`
        ("prive/Rachat Acme.md", "Rachat\u00a0Acme.md"),  # the name alone
        ("prive/Rachat\u00a0Acme.md", "prive/Rachat Acme.md"),  # the file's name holds the other
        ("prive/Rachat Acme.md", "prive/Rachat  Acme.md"),  # two spaces, which a page shows as one
        ("prive/Rachat Acme.md", "prive/Rachat \n Acme.md"),
        ("prive/Rachat  Acme.md", "prive/Rachat Acme.md"),  # the file's name holds the two
    ],
)
def test_a_private_path_typed_with_another_white_space_is_masked(tmp_path, named, typed):
    """A private note's name holds a space, its path is typed with a no-break space (or the
    file's name holds the no-break space, and the text a space): a reader sees the same path,
    but a path was compared character for character, so visitors read it whole and search
    found the public note by its words. Any white space reads as a space, and a run of it as one
    where a page shows one (a path with `.md`)."""
    root = tmp_path / "vault"
    write_note(root, named, "visibility: private", "Le montant.")
    write_note(root, "pub/accueil.md", "visibility: public", f"Le jardin : voir {typed} en mai.")
    bot = make_bot(root)
    _masked_and_unsearchable(bot, typed, "rachat acme")


@pytest.mark.parametrize(
    ("named", "typed"),
    [
        ("prive/L'offre d'Acme.md", "prive/L\u2019offre d\u2019Acme.md"),  # the apostrophe a French keyboard or a phone types
        ("prive/L'offre d'Acme.md", "L\u2019offre d\u2019Acme.md"),  # the name alone
        ("prive/L'offre d'Acme.md", "prive/L\u2019offre d\u2019Acme"),  # without `.md`
        ("prive/L'offre d'Acme.md", "prive/L\u2018offre d\u02bcAcme.md"),
        ("prive/L\u2019offre d\u2019Acme.md", "prive/L'offre d'Acme.md"),  # the file's name holds the other
    ],
)
def test_a_private_path_typed_with_another_apostrophe_is_masked(tmp_path, named, typed):
    """A private note named with a straight apostrophe, its path typed with the typographic one
    (« ’ », as a French keyboard, a phone or a word processor writes it), or the other way
    round: a reader sees the same path, but it was compared character for character, so
    visitors read it whole and search found the public note by its words."""
    root = tmp_path / "vault"
    write_note(root, named, "visibility: private", "Le montant.")
    write_note(root, "pub/accueil.md", "visibility: public", f"Le jardin : voir {typed} en mai.")
    bot = make_bot(root)
    _masked_and_unsearchable(bot, typed, "offre acme")


@pytest.mark.parametrize("hyphen", ["\u2011", "\u2010"])  # a non-breaking hyphen, the Unicode hyphen
def test_a_private_path_typed_with_another_hyphen_is_masked(tmp_path, hyphen):
    """A hyphen a page shows as `-`, which a word processor or a pasted page may put in a private
    note's typed path: visitors read « prive/rachat‑acme‑2027.md » whole, and search found the
    public note by its words."""
    typed = f"prive/rachat{hyphen}acme{hyphen}2027.md"
    bot = _beside_a_deal(tmp_path, typed)
    _masked_and_unsearchable(bot, typed, "rachat acme 2027")


@pytest.mark.parametrize("elsewhere", ["", "un *miel* doux", "un miel à 100%25", "<b>miel</b>", "miel &amp; pain", "\u200bmiel", "mon_miel_"])
def test_a_private_path_typed_among_runs_of_spaces_is_masked_whatever_else_the_note_holds(tmp_path, elsewhere):
    """Spaces in runs all over a note (two after each word, paragraphs): a page shows each run
    as one space, and the rendered reading reads them so whether the note holds nothing else
    a page hides, or an emphasis, a percent-encoded address, a tag, a character reference, an
    invisible character, a name's `_` (each read its own way beside the runs)."""
    root = tmp_path / "vault"
    write_note(root, "prive/Rachat Acme.md", "visibility: private", "Le montant.")
    words = "Le  jardin  :  voir  prive/Rachat  Acme.md  en  mai.  \n\nEt  prive/Rachat Acme  aussi.  \n"
    write_note(root, "pub/accueil.md", "visibility: public", f"{elsewhere}  \n\n{words}")
    bot = make_bot(root)
    read = _read_by_a_visitor(bot)
    assert "Rachat" not in read and "Acme" not in read and "jardin" in read
    assert _found_by(bot, "rachat acme") == []


def test_a_word_with_an_invisible_character_before_a_private_notes_name_stays_as_before(tmp_path):
    """The text as written is read first, as before: an invisible character before a private
    file name still ends a word (« mon\u200brachat.md » loses « rachat.md »), and another
    name with an invisible character in it stays."""
    root = tmp_path / "vault"
    write_note(root, "prive/rachat.md", "visibility: private", "Le rachat.")
    write_note(root, "pub/accueil.md", "visibility: public", "Voir mon\u200brachat.md, rachats\u200b.md et ra\u200bchat.mdx.")
    assert _read_by_a_visitor(make_bot(root)).strip() == "Voir mon\u200b, rachats\u200b.md et ra\u200bchat.mdx."


@pytest.mark.parametrize(
    "typed",
    [
        "prive/*rachat-acme-2027*.md",
        "prive/rachat-**acme**-2027.md",
        "prive/_rachat-acme-2027_.md",
        "_prive/rachat-acme-2027.md_",  # a path in italics, the usual way
        "__Coffre/prive/rachat-acme-2027.md__",
        "prive/rachat\\-acme\\-2027.md",  # escaped hyphens, as a web clipper writes them
    ],
)
def test_a_private_path_written_with_markdown_emphasis_or_escapes_is_masked(tmp_path, typed):
    """A rendered answer or extract shows « prive/rachat-acme-2027.md » for each of these, but
    the path was read as written, where an emphasis's `*` or `_` or an escape's `\\` broke it:
    visitors read it, and search found the public note by « rachat acme 2027 »."""
    bot = _beside_a_deal(tmp_path, typed)
    assert "acme" not in _read_by_a_visitor(bot).lower(), _read_by_a_visitor(bot)
    assert _read_by_a_visitor(bot).strip().startswith("Le jardin : voir ") and _read_by_a_visitor(bot).strip().endswith(" en mai.")
    assert _found_by(bot, "rachat acme 2027") == []
    assert typed in bot.snapshot.index("owner").readable_body("pub/accueil.md")


@pytest.mark.parametrize(
    "typed",
    [
        "prive/==rachat-acme-2027==.md",  # an Obsidian highlight
        "prive/~~rachat~~-acme-2027.md",  # a strikethrough
        "prive/<b>rachat</b>-acme-2027.md",
        "prive/rachat<wbr>-acme-2027.md",
        "prive/rachat-a&#8203;cme-2027.md",  # a zero-width space as an HTML reference
        "prive/ra&shy;chat-acme-2027.md",
        "prive/rachat-&#x61;cme-2027.md",  # an « a »
        "Coffre/prive/rachat-a&shy;cme-2027 et",  # without `.md`
        "Coffre/prive/ra\u200bchat-acme-2027 et",  # an invisible character in the name's first word
    ],
)
def test_a_private_path_written_with_html_highlight_or_strikethrough_is_masked(tmp_path, typed):
    """A rendered page shows « prive/rachat-acme-2027.md » for each of these, as for an emphasis:
    visitors read it, and search found the public note by « rachat acme 2027 »."""
    bot = _beside_a_deal(tmp_path, typed)
    _masked_and_unsearchable(bot, typed, "rachat acme 2027")


async def _served_beside_a_deal(start_daemon, tmp_path, private: str, typed: str) -> GrasBot:
    """A daemon on a private deal note and a public note typing its path as `typed`, checked
    as a visitor reaches it: search does not find the public note by the deal's words, the
    passages sent to the model and /ask's answer hold none of them; the owner reads `typed`."""
    root = tmp_path / "vault"
    write_note(root, private, "visibility: private", "Le rachat d'Acme en 2027.")
    write_note(root, "pub/accueil.md", "visibility: public", f"Le jardin fleuri : voir {typed} en mai.")
    client = await start_daemon(root)
    bot = bot_of(client)
    assert (await rpc(client, "search", {"q": "rachat acme 2027"}))["result"]["results"] == []
    found = bot.search("jardin fleuri", audience="visitor")
    assert [p.text for p in found.context] and not [p.text for p in found.context if "rachat" in p.text]
    asked = await client.get("/ask", params={"q": "Que dit le jardin fleuri ?"})
    said = await asked.text()
    assert asked.status == 200 and "pub/accueil.md" in said and "rachat" not in said.lower(), said
    assert typed in bot.snapshot.index("owner").readable_body("pub/accueil.md")
    return bot


@pytest.mark.parametrize(
    ("private", "typed"),
    [
        ("prive/rachat-acme-2027.md", "Coffre/prive/==rachat-acme-2027=="),  # an Obsidian highlight, without `.md`
        ("prive/rachat-acme-2027.md", "prive/~~rachat-acme-2027~~"),
        ("prive/rachat-acme-2027.md", "prive/<b>rachat-acme-2027</b>"),
        ("rachat-acme-2027.md", "rachat-acme-2027&#46;md"),  # a root-level note, its dot an HTML reference
        ("rachat-acme-2027.md", "rachat-acme-2027&period;md"),
    ],
)
async def test_a_private_path_rendered_apart_without_md_or_with_its_dot_as_a_reference_reaches_no_visitor(start_daemon, tmp_path, private, typed):
    """A page shows « prive/rachat-acme-2027 » or « rachat-acme-2027.md » for each of these: a
    highlight, a strikethrough or a tag in a path without `.md` was left as written, and the dot
    of `.md` as an HTML reference ended no path. Visitors read the path in the passages sent to
    the model and in /ask's sources, and search found the public note by « rachat acme 2027 »."""
    bot = await _served_beside_a_deal(start_daemon, tmp_path, private, typed)
    assert _read_by_a_visitor(bot).strip() == "Le jardin fleuri : voir  en mai."


@pytest.mark.parametrize(
    ("private", "typed"),
    [
        ("prive/rachat acme 2027.md", "prive/rachat\u00a0acme\u202f2027.md"),  # no-break spaces
        ("prive/rachat d'acme-2027.md", "prive/rachat d\u2019acme\u20112027.md"),  # « ’ » and a non-breaking hyphen
        ("prive/rachat İzmir acme 2027.md", "prive/rachat İzmir acme\n2027"),  # « İ », a line break, no `.md`
    ],
)
async def test_a_private_path_typed_with_characters_that_look_the_same_reaches_no_visitor(start_daemon, tmp_path, private, typed):
    """The typed path, its white space, apostrophe, hyphen or « İ » not the file name's, reaches
    no visitor by the daemon: not in the passages sent to the model, nor in /ask's answer and
    sources, and search does not find the public note by the name's words."""
    await _served_beside_a_deal(start_daemon, tmp_path, private, typed)


def test_html_and_highlights_beside_a_private_name_stay_as_written(tmp_path):
    """What renders as another name stays: `&lscr;` is « ℓ », a tag or a highlight around a
    whole word of prose is no path, an emphasis that renders another name is another name."""
    root = tmp_path / "vault"
    write_note(root, "prive/plan.md", "visibility: private", "Le plan.")
    body = "Voir prive/p&lscr;an.md, ==le plan== <b>a &amp; b</b>, a == b, plan&#46;mdx, prive/*plan*s, prive/_plan_ning et/ou *plan*."
    write_note(root, "pub/accueil.md", "visibility: public", body)
    assert _read_by_a_visitor(make_bot(root)).strip() == body


@pytest.mark.parametrize(
    "typed",
    [
        "prive/*rachat-acme-2027*",
        "Coffre/prive/**rachat-acme-2027**",
        "prive/_rachat-acme-2027_",
        "prive/rachat-*acme*-2027",
        "prive/*rachat*-acme-2027",
        "*prive*/rachat-acme-2027",
        "prive/***rachat-acme-2027***",
    ],
)
def test_a_private_path_without_md_written_with_an_emphasis_is_masked(tmp_path, typed):
    """A rendered answer or extract shows « prive/rachat-acme-2027 », as Obsidian names the note,
    for each of these: an emphasis in a path without `.md` was left as written, so visitors
    read the private note's folder and name, and search found the public note by its words."""
    bot = _beside_a_deal(tmp_path, typed)
    assert _read_by_a_visitor(bot).strip().replace("*", "") == "Le jardin : voir  en mai."  # an emphasis's `*` may stay, alone
    assert _found_by(bot, "rachat acme 2027") == []
    assert typed in bot.snapshot.index("owner").readable_body("pub/accueil.md")


def test_an_escaped_underscore_in_a_private_name_is_masked_and_other_names_stay(tmp_path):
    """`mon\\_plan.md`, a private `mon_plan.md` as a web clipper escapes it, is masked, and so is
    a Windows path through an `_archive` folder, read as written; an escape shows what it
    escapes, so `pl\\_an.md` is another name, and so are Hugo's `_index.md` and `plan_v2.md`."""
    root = tmp_path / "vault"
    write_note(root, "prive/mon_plan.md", "visibility: private", "Le plan.")
    write_note(root, "Coffre/_archive/index.md", "visibility: private", "L'archive.")
    write_note(root, "prive/plan.md", "visibility: private", "Le plan.")
    body = "Voir prive/mon\\_plan.md, C:\\Coffre\\_archive\\index.md ; restent prive/pl\\_an.md, _index.md, plan_v2.md et mon\\_plans.md."
    write_note(root, "pub/accueil.md", "visibility: public", body)
    assert _read_by_a_visitor(make_bot(root)).strip() == "Voir ,  ; restent prive/pl\\_an.md, _index.md, plan_v2.md et mon\\_plans.md."


def test_a_private_note_s_new_alias_typed_in_code_is_masked_after_a_reload_or_a_start(tmp_path):
    """A reload or a start kept what masked the typed paths while no hidden note came or went,
    resolving links with the resolver of before: a private note that gained the alias « Zorglub
    Secret » left `` `[[Zorglub Secret]]` `` in a public note's code shown to visitors, which a
    fresh load masks. A change of what links resolve to reads every public note again."""
    root = tmp_path / "vault"
    write_note(root, "prive/plan.md", "visibility: private\ntitle: Ancien", "Le plan.")
    write_note(root, "pub/a.md", "visibility: public", "Le code : `[[Zorglub Secret]]` dans le jardin.")
    settings = Settings.load(env={}, vault_dir=root)
    cache = tmp_path / "cache"
    first = build_snapshot(settings)
    build_snapshot(settings, cache_dir=cache)
    write_note(root, "prive/plan.md", "visibility: private\ntitle: Ancien\naliases: [Zorglub Secret]", "Le plan.")
    fresh = build_snapshot(settings).index("visitor")
    # search reads a link in code without its target already: the note is not analysed again
    assert "Zorglub" not in fresh.readable_body("pub/a.md") and fresh.masked == frozenset()
    for snapshot in (build_snapshot(settings, first), build_snapshot(settings, cache_dir=cache)):
        visitor = snapshot.index("visitor")
        assert visitor.readable_body("pub/a.md") == fresh.readable_body("pub/a.md")
        assert visitor.masked == fresh.masked


def test_a_private_notes_new_permalink_typed_in_a_public_note_is_masked_after_a_reload_or_a_start(tmp_path):
    """A private note that gains `permalink: /labo/zorglub/`, the address an unchanged public
    note types: a reload or a start that kept what masked before, as no hidden note came or
    went, showed « zorglub » to visitors and let search find the note by it. The pages the
    hidden notes' front matter gives are part of what masks: a change of them reads every
    public note again."""
    root = tmp_path / "vault"
    write_note(root, "prive/plan.md", "visibility: private", "Le plan.")
    write_note(root, "pub/a.md", "visibility: public", "Le jardin, voir /labo/zorglub/ pour la suite.")
    settings = Settings.load(env={}, vault_dir=root)
    cache = tmp_path / "cache"
    first = build_snapshot(settings)
    build_snapshot(settings, cache_dir=cache)
    assert "zorglub" in first.index("visitor").readable_body("pub/a.md")  # the guard: no note's address yet
    write_note(root, "prive/plan.md", "visibility: private\npermalink: /labo/zorglub/", "Le plan.")
    for snapshot in (build_snapshot(settings), build_snapshot(settings, first), build_snapshot(settings, cache_dir=cache)):
        visitor = snapshot.index("visitor")
        assert visitor.readable_body("pub/a.md").strip() == "Le jardin, voir  pour la suite."
        assert visitor.masked == {"pub/a.md"}


@pytest.mark.parametrize(
    ("front", "typed"),
    [
        ('+++\ntitle = "Le plan"\nurl = "/labo/zorglub/"\n+++\n', "/labo/zorglub/"),
        ('+++\ndraft = true\nurl = "/labo/zorglub/"\n+++\n', "https://example.org/labo/zorglub/#le-plan"),
        ('+++\nURL = "/labo/zorglub.html"\n+++\n', "https://example.org/labo/zorglub.html"),  # Hugo reads a key in any case
        ('+++\nslug = "zorglub-outil"\n+++\n', "/prive/zorglub-outil/"),  # the slug names the page in the note's folder
        ('+++\ndraft = true\nslug = "Zorglub -- Outil"\n+++\n', "https://example.org/prive/zorglub-outil/"),
        ('+++\naliases = ["/labo/ancien-zorglub/"]\n+++\n', "/labo/ancien-zorglub/"),
        ('{\n  "title": "Le plan",\n  "url": "/labo/zorglub/"\n}\n', "/labo/zorglub/"),
        ('{\n  "draft": true,\n  "slug": "zorglub-outil"\n}\n', "prive/zorglub-outil"),
        ("#+title: Le plan\n#+url: /labo/zorglub/\n", "https://example.org/labo/zorglub/"),
        ("#+draft: true\n#+slug: zorglub-outil\n", "/prive/zorglub-outil/"),
        ('+++\nurl = "/labo/zorglub/" # %% brouillon %%\n+++\n', "/labo/zorglub/"),  # left in the body, as Obsidian shows it
    ],
)
def test_a_private_notes_address_in_its_hugo_front_matter_typed_in_a_public_note_is_masked(tmp_path, front, typed):
    """A private note whose Hugo front matter (TOML, JSON, Org) gives its page's address
    (`url`, `slug`): typed in a public note, the address was shown to visitors and found the
    public note by its words, where the same `url:` in YAML properties is masked. It is masked
    now, at a start from the index cache too, and the note's source id stays its file's name's,
    as the plugin's slug.ts makes it from Obsidian's properties alone."""
    root = tmp_path / "vault"
    (root / "prive").mkdir(parents=True)
    (root / "prive" / "Plan.md").write_text(f"{front}Le prix du rachat d'Acme.\n", encoding="utf-8")
    write_note(root, "pub/a.md", "visibility: public", f"Le jardin, voir {typed} pour la suite.")
    settings = Settings.load(env={}, vault_dir=root)
    cache = tmp_path / "cache"
    build_snapshot(settings, cache_dir=cache)
    for snapshot in (build_snapshot(settings), build_snapshot(settings, cache_dir=cache)):
        assert snapshot.vault.notes["prive/Plan.md"].slug == "plan"
        visitor = snapshot.index("visitor")
        assert "prive/Plan.md" not in visitor.notes
        assert visitor.readable_body("pub/a.md").strip() == "Le jardin, voir  pour la suite."
        assert "zorglub" in snapshot.index("owner").readable_body("pub/a.md")


@pytest.mark.parametrize("front", ['+++\nurl = "/blog/annonce-2025/"\n+++\n', '{"url": "/blog/annonce-2025/"}\n', "#+url: /blog/annonce-2025/\n"])
def test_a_public_note_published_by_its_hugo_front_matter_at_a_private_drafts_address_keeps_it_shown(tmp_path, front):
    """A public note whose Hugo front matter's `url` is the address a private draft's `url:`
    keeps: the page is the public note's, as with the same `url:` in its properties, and
    another public note's mention of it shows; an address no public note has stays masked."""
    root = tmp_path / "vault"
    (root / "blog").mkdir(parents=True)
    (root / "blog" / "annonce.md").write_text(f"{front}Nous annonçons la fête des abeilles.\n", encoding="utf-8")
    write_note(root, "brouillons/annonce.md", "visibility: private\nurl: /Blog/Annonce-2025/", "Le brouillon de l'annonce.")
    write_note(root, "brouillons/labo.md", "visibility: private\nurl: /labo/zorglub/", "Le labo.")
    write_note(root, "pub/a.md", None, "Le jardin, voir https://monsite.fr/blog/annonce-2025/ pour la fête, et /labo/zorglub/ pour le reste.")
    snapshot = build_snapshot(Settings.load(env={"GRASBOT_DEFAULT_VISIBILITY": "public"}, vault_dir=root))
    visitor = snapshot.index("visitor")
    assert "blog/annonce.md" in visitor.notes and "brouillons/annonce.md" not in visitor.notes
    assert visitor.readable_body("pub/a.md").strip() == "Le jardin, voir https://monsite.fr/blog/annonce-2025/ pour la fête, et  pour le reste."


def test_a_private_draft_that_keeps_its_public_copys_address_changes_neither_its_url_nor_its_mentions(tmp_path):
    """A private draft (`brouillons/annonce.md`) that keeps the `url:` of the public note it was
    copied from: the address is the public note's page, which visitors are given anyway. It was
    masked as the draft's own: the public note's url became its path's (`/blog/annonce/`, a
    page the site does not have) and another public note's mention of the page went; an
    address no public note has (`/labo/zorglub/`) is still masked."""
    root = tmp_path / "vault"
    write_note(root, "blog/annonce.md", "title: Annonce\nvisibility: public\nurl: /blog/annonce-2025/", "Nous annonçons la fête des abeilles.")
    write_note(root, "brouillons/annonce.md", "visibility: private\nurl: /Blog/Annonce-2025/", "Le brouillon de l'annonce.")
    write_note(root, "brouillons/labo.md", "visibility: private\npermalink: /labo/zorglub/", "Le labo.")
    write_note(root, "pub/a.md", "visibility: public", "Le jardin, voir https://monsite.fr/blog/annonce-2025/ pour la fête, et /labo/zorglub/ pour le reste.")
    bot = GrasBot.open(Settings.load(env={"GRASBOT_URL_MAP": "*=/{hugo}/"}, vault_dir=root))
    found = {source.path: source.url for source in bot.search("la fête des abeilles", audience="visitor").sources}
    assert found["blog/annonce.md"] == "/blog/annonce-2025/", found
    body = bot.snapshot.index("visitor").readable_body("pub/a.md").strip()
    assert body == "Le jardin, voir https://monsite.fr/blog/annonce-2025/ pour la fête, et  pour le reste."
    # the public note moves: the address is the draft's alone, masked after a reload as at a start
    write_note(root, "blog/annonce.md", "title: Annonce\nvisibility: public\nurl: /blog/annonce-2026/", "Nous annonçons la fête des abeilles.")
    settings = Settings.load(env={}, vault_dir=root)
    for snapshot in (build_snapshot(settings, bot.snapshot), build_snapshot(settings)):
        assert snapshot.index("visitor").readable_body("pub/a.md").strip() == "Le jardin, voir  pour la fête, et  pour le reste."


def test_a_bidi_control_left_open_in_a_note_reaches_no_visitor_text(tmp_path):
    """A right-to-left override a clipped page left open (U+202E) or an isolate (U+2066), quoted
    in an answer, drew the rest of its line right to left, a citation included: the passages,
    the prompt, the notes' extract and the titles read none."""
    root = tmp_path / "vault"
    write_note(root, "potager.md", "visibility: public\ntitle: Potager\u202e", "Le potager\u202e arrose seul chaque matin, `pompe\u2066 on` en mai.")
    bot = make_bot(root)
    index = bot.snapshot.index("visitor")
    found = bot.search("arrose le potager", audience="visitor")
    said = extractive_answer("arrose le potager", found.context, index, grounded=True)
    shown = [index.readable_body("potager.md"), index.readable_title("potager.md"), said]
    shown += [*(p.text for p in found.context), *(s.title for s in found.sources)]
    assert "arrose seul chaque matin, `pompe on` en mai." in shown[0]
    assert shown[1] == "Potager"
    assert "arrose seul" in said
    assert not [t for t in shown if any(c in t for c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")]


@pytest.mark.parametrize("control", ["\u202e", "\u202c", "\u2066"])
def test_a_private_path_typed_with_a_bidi_control_in_it_is_masked_for_visitors(tmp_path, control):
    """A bidirectional control inside a private note's typed path (pasted from a clipped page)
    kept it from being masked, and the control was then taken out of what a visitor reads:
    the path came out whole, and search found the public note by its words."""
    root = tmp_path / "vault"
    write_note(root, "prive/rachat-acme.md", "visibility: private", "Le montant.")
    write_note(root, "pub/accueil.md", "visibility: public", f"Voir prive/rachat{control}-acme.md et `prive/rachat-acme{control}.md` pour le jardin.")
    bot = make_bot(root)
    shown = bot.snapshot.index("visitor").readable_body("pub/accueil.md")
    assert "jardin" in shown
    assert "rachat" not in shown and "acme" not in shown
    assert not bot.search("rachat acme", audience="visitor").sources


def test_a_public_note_saved_with_broken_yaml_keeps_the_hidden_notes_and_the_reload_cheap(tmp_path, monkeypatch):
    """An author's half-typed YAML in a public note, reloaded at each autosave: a note that
    cannot be loaded has its path masked as a private one's, so every such reload changed the
    hidden notes and read every public note again for typed paths (2 s at 10,000 notes). A note
    an earlier load read public keeps its path shown (visitors read it until then); a private
    one's stays masked, and a note never loaded is masked (who may read it is unknown)."""
    import grasbot.retrieval.index as index_mod

    root = tmp_path / "vault"
    write_note(root, f"prive/{SECRET}.md", "visibility: private", "Le secret du jardin.")
    write_note(root, "pub/recettes.md", "visibility: public", "Les recettes du jardin.")
    write_note(root, "pub/accueil.md", "visibility: public", f"Voir pub/recettes.md et prive/{SECRET}.md en mai.")
    for n in range(4):
        write_note(root, f"pub/note-{n}.md", "visibility: public", f"Le potager en mai, rang {n}.")
    bot = make_bot(root)
    read: list[str] = []
    real = index_mod.mentions_in
    monkeypatch.setattr(index_mod, "mentions_in", lambda note, hidden: read.append(note.path) or real(note, hidden))
    for broken in ("visibility: public\ntags: [jardin", "visibility: public\ntags: [jardin, pot"):  # two autosaves
        (root / "pub" / "recettes.md").write_text(f"---\n{broken}\n---\nLes recettes du jardin.\n", encoding="utf-8")
        bot.reload()
        assert [i.path for i in bot.snapshot.vault.errors] == ["pub/recettes.md"]
        assert read == []
        assert _read_by_a_visitor(bot).strip() == "Voir pub/recettes.md et  en mai."
    (root / "prive" / f"{SECRET}.md").write_text("---\nvisibility: private\ntags: [x\n---\nLe secret.\n", encoding="utf-8")
    bot.reload()
    assert _read_by_a_visitor(bot).strip() == "Voir pub/recettes.md et  en mai."
    write_note(root, "pub/nouvelle.md", "visibility: public\ntags: [x", "Jamais lue.")
    write_note(root, "pub/accueil.md", "visibility: public", "Voir pub/nouvelle.md en mai.")
    bot.reload()
    assert _read_by_a_visitor(bot).strip() == "Voir  en mai."


def test_a_hidden_note_gone_while_the_start_s_cache_is_written_stays_masked_after_a_restart(tmp_path, monkeypatch):
    """`write_cache` wrote the start's snapshot outside the reload lock: a reload that saw a
    private note go wrote the cache meanwhile, then the start's older snapshot replaced it, and
    the next start showed « prive/plan-rouge.md » to visitors."""
    from grasbot import _engine
    from grasbot._engine import GrasBot
    from support.bots import settings_for

    root = tmp_path / "vault"
    cached = {"index_cache": True, "cache_dir": str(tmp_path / "cache")}
    write_note(root, "jardin.md", "visibility: public", "Le potager.")
    write_note(root, "potager.md", "visibility: public", "Le potager en mai.")
    bot = GrasBot.open(settings_for(root, **cached), write_cache=False)
    write_note(root, "prive/plan-rouge.md", "visibility: private", "Le plan.")
    write_note(root, "jardin.md", "visibility: public", "Le plan est dans prive/plan-rouge.md pour le potager.")
    bot.reload()
    (root / "prive/plan-rouge.md").unlink()
    real = _engine.save_cache
    calls: list[int] = []

    def save_while_a_reload_comes(snapshot):
        calls.append(1)
        if len(calls) == 1:  # the start's snapshot: a reload arrives while it is written
            reloading = threading.Thread(target=bot.reload)
            reloading.start()
            reloading.join(2)  # it waits for this write (the fix), or is done before it
            done.append(reloading)
        return real(snapshot)

    done: list[threading.Thread] = []
    monkeypatch.setattr(_engine, "save_cache", save_while_a_reload_comes)
    assert bot.write_cache()
    done[0].join()
    restarted = make_bot(root, **cached)
    assert restarted.snapshot.index("visitor").readable_body("jardin.md").strip() == "Le plan est dans  pour le potager."


def test_a_public_note_that_links_a_private_one_is_not_analysed_again_for_search(tmp_path):
    """Search reads a link without its target: a public note that links a private note holds
    none of its path for search, and was analysed again for nothing (in the benchmark's vault,
    1,900 of 8,468 public notes: a cold start 1.5 s longer, their counts held twice). One that
    types the path as text is, and search finds it by its own words, not the path's."""
    root = tmp_path / "vault"
    write_note(root, f"prive/{SECRET}.md", "visibility: private", "Le secret du jardin.")
    write_note(root, "pub/lien.md", "visibility: public", f"Voir [[{SECRET}]] et [le plan](prive/{SECRET}.md) en mai.")
    write_note(root, "pub/texte.md", "visibility: public", f"Voir prive/{SECRET}.md en juin.")
    bot = make_bot(root)
    visitor = bot.snapshot.index("visitor")
    assert visitor.masked == {"pub/texte.md"}
    assert visitor.analyses["pub/lien.md"] is bot.snapshot.analyses["pub/lien.md"]
    assert [s.path for s in bot.search(SECRET, audience="visitor").sources] == []
    assert SECRET not in visitor.readable_body("pub/lien.md") + visitor.readable_body("pub/texte.md")


@pytest.mark.parametrize("how", ["deleted", "alias dropped"])
def test_a_private_note_s_name_in_a_public_note_s_code_stays_masked_after_it_went_and_a_restart(tmp_path, how):
    """A private note's alias or title in a public note's code (`` `[[Zorglub Secret]]` ``) is
    masked while the note leads a link there; once the note was deleted (or the alias dropped)
    a reload still masked it, but the index cache kept the note's old path alone, not its names,
    and the next start showed « Zorglub Secret » to visitors. The names are kept as the paths
    are, as long as a public note types them; a note that takes the name shows it or not as its
    visibility says."""
    root = tmp_path / "vault"
    cached = {"index_cache": True, "cache_dir": str(tmp_path / "cache")}
    write_note(root, "prive/plan.md", "visibility: private\ntitle: Ancien Projet\naliases: [Zorglub Secret]", "Le plan.")
    write_note(root, "pub/a.md", "visibility: public", "Le code : `[[Zorglub Secret]]` et `[[Ancien Projet]]` dans le jardin.")
    write_note(root, "pub/b.md", "visibility: public", "Le potager en mai.")
    bot = make_bot(root, **cached)
    shown = "Le code : `` et `` dans le jardin."
    assert _read_visitor_text(bot, "pub/a.md") == shown
    if how == "deleted":
        (root / "prive/plan.md").unlink()
    else:
        write_note(root, "prive/plan.md", "visibility: private\ntitle: Nouveau", "Le plan.")
    bot.reload()
    for served in (bot, make_bot(root, **cached), make_bot(root, **cached)):
        assert _read_visitor_text(served, "pub/a.md") == shown
    write_note(root, "pub/zorglub.md", "visibility: public\naliases: [Zorglub Secret]", "Zorglub, public.")
    bot.reload()
    assert _read_visitor_text(bot, "pub/a.md") == "Le code : `[[Zorglub Secret]]` et `` dans le jardin."
    write_note(root, "pub/a.md", "visibility: public", "Le code dans le jardin.")
    bot.reload()
    other = build_snapshot(Settings.load(env={}, vault_dir=root, exclude=("brouillons",)), bot.snapshot)  # a full read
    assert other.index("visitor").hidden_key[2] == frozenset()  # no public note gives them: forgotten


def _read_visitor_text(bot: GrasBot, path: str) -> str:
    return bot.snapshot.index("visitor").readable_body(path).strip()


@pytest.mark.parametrize(
    ("typed", "shown"),
    [
        ("prive/Rachat  Acme", "Voir  pour le reste."),  # both readings: the written one took `prive/Rachat` alone, « Acme » stayed
        ("prive/Rachat \u00a0Acme", "Voir  pour le reste."),
        ("prive/Rachat Acme", "Voir  pour le reste."),
        ("Zed/Plan\u200bprive/Acme", "Voir \u200b pour le reste."),  # `prive/*Acme*` as shown, after `Zed/Plan` the written reading took
    ],
)
def test_a_path_without_md_is_masked_whole_beside_a_hidden_name_that_starts_it(tmp_path, typed, shown):
    """A hidden note's path typed without `.md`, where another hidden note's name is its start
    (`prive/Rachat` of `prive/Rachat  Acme`) or glued to it: no part of either reaches a visitor."""
    root = tmp_path / "vault"
    for path in ("prive/Rachat Acme.md", "prive/Rachat.md", "Zed/Plan.md", "prive/*Acme*.md"):
        write_note(root, path, "visibility: private", "Le secret.")
    write_note(root, "pub/a.md", "visibility: public", f"Voir {typed} pour le reste.")
    assert _read_visitor_text(make_bot(root), "pub/a.md") == shown


@pytest.mark.parametrize(
    "typed",
    ["/prive/Zorglub/index.html", "https://monsite.fr/prive/zorglub/index.htm#plan", "prive/Zorglub.html", "/prive/rachat-acme.html"],
)
def test_a_private_notes_page_file_typed_in_a_public_note_is_masked(tmp_path, typed):
    """A private note's page as a static site writes its file (`prive/zorglub/index.html`,
    `prive/zorglub.html`): « zorglub » reached visitors, where `/prive/zorglub/` was masked."""
    root = tmp_path / "vault"
    for path in ("prive/Zorglub.md", "prive/Rachat Acme.md"):
        write_note(root, path, "visibility: private", "Le secret.")
    write_note(root, "pub/a.md", "visibility: public", f"Voir {typed} pour le reste, ou prive/zorglub/annexe.html.")
    assert _read_visitor_text(make_bot(root), "pub/a.md") == "Voir  pour le reste, ou prive/zorglub/annexe.html."


@pytest.mark.parametrize(
    ("private", "typed"),
    [
        ("prive/Rachat - Acme.md", "https://monsite.fr/prive/Rachat---Acme"),  # Quartz: each space a hyphen
        ("prive/R&D Acme.md", "/prive/R-and-D-Acme"),  # Quartz's `&`
        ("prive/Rachat Acme.md", "https://publish.obsidian.md/monsite/prive/Rachat+Acme"),  # Obsidian Publish: a space a `+`
        ("Mes notes/Rachat Acme.md", "/Mes+notes/Rachat+Acme#plan"),
        ("prive/Rachat - Acme.md", "/prive/rachat-acme/"),  # Hugo: the run one hyphen
        ("prive/L’offre (Acme).md", "https://monsite.fr/prive/loffre-acme/"),  # and what it does not keep dropped
    ],
)
def test_a_private_notes_page_as_each_site_generator_writes_it_is_masked(tmp_path, private, typed):
    """A private note's page address as Quartz and Obsidian Publish write it, the generators
    GRASBOT_URL_MAP names (`{quartz}`, `{publish}`), as well as Hugo's: only Hugo's hyphen was
    read, and « Acme » of `prive/Rachat---Acme` or `prive/Rachat+Acme` reached visitors."""
    root = tmp_path / "vault"
    write_note(root, private, "visibility: private", "Le secret.")
    write_note(root, "pub/a.md", "visibility: public", f"Voir {typed} pour le reste, ou prive/Rachat+Acme+2.")
    assert _read_visitor_text(make_bot(root), "pub/a.md") == "Voir  pour le reste, ou prive/Rachat+Acme+2."


def test_a_value_with_a_long_run_of_blanks_inside_is_named_in_its_warning_at_once():
    """The warning that names a field as written (`draft: x … y`, neither a yes nor a no) read
    its value by a lazy group then the line's blanks: each length tried the blanks again, and
    the note took 5 s to load with 20,000 of them, minutes with these 100,000. The line read
    whole and its blanks stripped after: milliseconds."""
    read = alarmed(30, note, "n.md", "---\nvisibility: public\ndraft: x" + " " * 100_000 + "y\n---\nCorps.\n")
    assert not read.public
    assert read.warnings[0].startswith("`draft: x ") and read.warnings[0].endswith(" y` n'est ni un oui ni un non (`true` ou `false`) : la note reste privée")
