"""load_vault: every field, every fallback, every way a note can be broken, and reloads."""

from __future__ import annotations

import os
import re
import unicodedata
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grasbot._config import Settings
from grasbot._exceptions import VaultError
from grasbot._zones import zone_named
from grasbot.retrieval import vault as _vault
from grasbot.retrieval import visibility
from grasbot.retrieval.frontmatter import TEXT_FIELDS
from grasbot.retrieval.links import _HTML_LINK, _MD_LINK, rewrite_links
from grasbot.retrieval.markdown import (
    _CODE,
    _HIDDEN,
    FENCED,
    _contained_code,
    code_in,
    fences_read_once,
    strip_hidden,
)
from grasbot.retrieval.sections import cut_note
from grasbot.retrieval.vault import (
    LIST_FIELDS,
    LinkResolver,
    Note,
    Vault,
    VaultOptions,
    load_vault,
    parse_note,
)
from support.bots import make_bot

FULL = """
title: Titre complet
slug: mon-slug
type: projet
source: manual
domains: [ia, web]
tags: [graph, bm25]
aliases: [pipeline grasbot, moteur]
answers: ["Comment ça marche ?", "Qui l'a écrit ?"]
priority: 6
linked: ["[[autre]]"]
related: ["[[sub/profonde|texte]]"]
updated: 2026-04-23
visibility: public
"""


def messages(issues, path):
    return [i.message for i in issues if i.path == path]


def test_every_field_is_parsed(note_writer):
    note_writer("full.md", FULL, "# Un titre de corps\nLe corps de la note.\n")
    note_writer("autre.md", None, "x")
    note_writer("sub/profonde.md", None, "y")
    vault = load_vault(note_writer.root)
    note = vault.notes["full.md"]
    assert isinstance(note, Note)
    assert note.path == "full.md"
    assert note.title == "Titre complet"
    assert note.slug == "mon-slug"
    assert note.type == "projet"
    assert note.source == "manual"
    assert note.domains == ("ia", "web")
    assert note.tags == ("graph", "bm25")
    assert note.aliases == ("pipeline grasbot", "moteur")
    assert note.answers == ("Comment ça marche ?", "Qui l'a écrit ?")
    assert note.priority == 6.0
    assert note.updated == "2026-04-23"
    assert note.public is True
    assert note.body.strip() == "# Un titre de corps\nLe corps de la note."
    assert [(link.target, link.display, link.kind) for link in note.links] == [
        ("autre", None, "linked"),
        ("sub/profonde", "texte", "related"),
    ]
    assert vault.edges["full.md"] == (("autre.md", "linked"), ("sub/profonde.md", "related"))
    assert vault.errors == [] and vault.warnings == []


def test_a_note_without_a_title_is_named_by_its_file_as_obsidian_names_it(note_writer):
    """Not by its first heading: in a personal vault that is often a section's (« Objectif » for
    Docker.md, « Présentation » for Apache.md), and sources showed it as the note's title."""
    note_writer("Docker.md", None, "# Objectif\n\nDes conteneurs.\n\n## Installation\n")
    note_writer("avec-titre.md", "title: Le vrai titre", "# Intro\n")
    vault = load_vault(note_writer.root)
    assert vault.notes["Docker.md"].title == "Docker"
    assert vault.notes["avec-titre.md"].title == "Le vrai titre"


def test_slug_falls_back_to_slugified_file_name(note_writer):
    note_writer("Projets/Mon Projet Été.md", "title: X", "corps")
    note_writer("b.md", "slug: Slug Donné", "corps")
    vault = load_vault(note_writer.root)
    assert vault.notes["Projets/Mon Projet Été.md"].slug == "mon-projet-ete"
    assert vault.notes["b.md"].slug == "slug-donne"


def test_inline_tags_count_but_not_in_code_or_headings(note_writer):
    body = """
    # Titre
    ## Section
    Du texte avec #python et #ia/llm, pas une ancre http://x.org/#frag ni C#.
    `#pasdanslecode` ici.
    ```
    #pasdansunbloc
    ```
    ~~~
    #pasnonplus
    ~~~
    Et #python encore (une seule fois).
    """
    note_writer("n.md", "tags: [graph]", body)
    note = load_vault(note_writer.root).notes["n.md"]
    assert note.tags == ("graph", "python", "ia/llm")


def test_an_indented_code_block_holds_no_tag_and_no_link_as_obsidian_reads_it(note_writer):
    """Four spaces or a tab after a blank line (or a heading, or the note's start) are code, as
    in Obsidian: a C course's `#include` was the tag `include`, a Docker course's shell comments
    (`    #lance le conteneur`) the tags `lance` and `permet`. The same lines in a list item are
    its paragraph, and inside a paragraph its next line: there tags and links count."""
    body = """
        #nontag au début de la note

    Un programme C :

        #include <stdio.h>
        voir [[pas-un-lien]] et [pas un lien](ailleurs.md)

    \t#nonplus avec une tabulation

    # Titre
        #sousuntitre
    Un paragraphe
        #suite de paragraphe [[lien-suite]]

    - une étape

        #item son paragraphe, [[lien-item]]

            #codeitem dans l'item

    1. un

       - deux

         #imbrique [lien](imbrique.md)

    Fin #vrai.
    """
    note_writer("n.md", None, body)
    note = load_vault(note_writer.root).notes["n.md"]
    assert note.tags == ("suite", "item", "imbrique", "vrai")
    assert [(link.target, link.kind) for link in note.links] == [("lien-suite", "body"), ("lien-item", "body"), ("imbrique.md", "body")]


def test_code_in_a_list_item_or_a_quote_holds_no_tag_and_no_link(note_writer):
    """A fence in a list item sits at the item's content, often four spaces in (« 1. » then
    « ```sh » under it), and a callout's code behind its `>`: both are code in Obsidian, as
    four columns more behind a `>` are. They were read as prose: a shell comment was a tag, a
    course's `[[lien]]` a link."""
    body = """
    1. Installer :

        ```sh
        apt install nginx #installe [[pas-un-lien]]
        ```

    - un item
        ~~~
        #pasnonplus
        ~~~

    > [!example] Exemple
    > ```c
    > #include <stdio.h>
    > ```

    > Dans une citation :
    >
    >     #citecode [[pas-non-plus]]

    > [!note]
    > - un item cité
    >     ```
    >     #encore [[toujours-pas]]
    >     ```

    Suite #vrai et [[vrai-lien]].
    """
    note_writer("n.md", None, body)
    note = load_vault(note_writer.root).notes["n.md"]
    assert note.tags == ("vrai",)
    assert [link.target for link in note.links] == ["vrai-lien"]


def test_a_deep_email_quote_and_deep_lists_are_read_in_one_pass(note_writer):
    """A thread pasted from a mail client quotes forty deep (« > > > … »): the spaces between its
    marks could end one mark or begin the next, 2^40 ways to read a line that holds no code,
    and the note never finished loading. Items nested 300 deep were read again at each depth.
    The quote's text still gives its tag, its code none, and the innermost item's code none."""
    deep = "> " * 40
    thread = f"{deep}Réponse #fil [[lien-cite]]\n{deep}\n{deep}    #pascode [[pas-un-lien]]\n" * 3
    items = "".join("  " * i + "- niveau\n" for i in range(300)) + "\n" + "  " * 300 + "      #toujourspas\n"
    note_writer("n.md", None, thread + "\n" + items + "\nFin #vrai")
    note = load_vault(note_writer.root).notes["n.md"]
    assert note.tags == ("fil", "vrai")
    assert [link.target for link in note.links] == ["lien-cite"] * 3


def test_a_comment_mark_in_indented_or_quoted_code_is_code(note_writer):
    """`%%` in a C format is code wherever the code is: it opened a comment that hid the rest of
    the note (an unclosed comment runs to its end) when the code was indented, quoted or in a
    list item."""
    body = """
    Un format :

        printf("%%s", nom);

    Premier paragraphe gardé.

    > ```c
    > printf("%%d", x);
    > ```

    Deuxième paragraphe gardé.

    1. Afficher :

        ```c
        printf("%%i", n);
        ```

    Fin gardée #vrai.
    """
    note_writer("n.md", None, body)
    note = load_vault(note_writer.root).notes["n.md"]
    for kept in ('printf("%%s", nom);', "Premier paragraphe gardé.", '> printf("%%d", x);', "Deuxième paragraphe gardé.", 'printf("%%i", n);', "Fin gardée"):
        assert kept in note.body
    assert note.tags == ("vrai",)


def test_a_string_where_a_list_is_expected_is_one_item(note_writer):
    note_writer(
        "n.md",
        'tags: solo\naliases: "un alias"\nanswers: "Une question ?"\ndomains: web\nlinked: "[[autre]]"',
        "",
    )
    note_writer("autre.md", None, "")
    vault = load_vault(note_writer.root)
    note = vault.notes["n.md"]
    assert note.tags == ("solo",)
    assert note.aliases == ("un alias",)
    assert note.answers == ("Une question ?",)
    assert note.domains == ("web",)
    assert vault.edges["n.md"] == (("autre.md", "linked"),)


def test_aliases_and_tags_given_as_one_string_are_split_on_commas_as_obsidian_reads_them(note_writer):
    """Obsidian offers `Doggo` and `Woofer` apart for `aliases: Doggo, Woofer`, and reads
    `tags: recette, cuisine` as two tags: GrasBot had one alias « Doggo, Woofer »."""
    note_writer("n.md", 'aliases: Doggo, Woofer\ntags: "recette,  cuisine,"\nanswers: Où, quand ?', "")
    note = load_vault(note_writer.root).notes["n.md"]
    assert note.aliases == ("Doggo", "Woofer")
    assert note.tags == ("recette", "cuisine")
    assert note.answers == ("Où, quand ?",)


def test_yes_no_on_off_in_a_text_field_are_the_words_written_as_obsidian_reads_them(note_writer):
    """Obsidian's YAML has two booleans, `true` and `false`: a note titled `No`, or with the
    aliases `Off` and `ON`, was titled « False » and answered to « False » and « True »."""
    note_writer("n.md", "title: No\naliases: [Off, ON]\ntags: [yes]\ntype: on\nanswers:\n  - Oui\n  - no", "")
    note = load_vault(note_writer.root).notes["n.md"]
    assert (note.title, note.aliases, note.tags, note.type, note.answers) == ("No", ("Off", "ON"), ("yes",), "on", ("Oui", "no"))


def test_publish_no_or_off_still_keeps_a_note_private_and_yes_or_on_does_not(note_writer):
    """They are text now, not YAML 1.1's false and true: `_says_no` reads them as before."""
    for name in ("no", "No", "off", "OFF", "n", "yes", "on", "Yes"):
        note_writer(f"{name}-.md", f"visibility: public\npublish: {name}", "Mon texte.")
    vault = load_vault(note_writer.root)
    assert {p for p, n in vault.notes.items() if n.public} == {"yes-.md", "on-.md", "Yes-.md"}
    assert messages(vault.warnings, "No-.md") == ["`publish: No` est lu comme `publish: false` : la note reste privée"]
    public_default = load_vault(note_writer.root, VaultOptions(default_public=True))
    assert {p for p, n in public_default.notes.items() if n.public} == {"yes-.md", "on-.md", "Yes-.md"}


def test_tags_written_as_inline_tags_are_said_to_be_a_yaml_comment(note_writer):
    """`tags: #recette #cuisine` is a YAML comment: Obsidian shows no tag, GrasBot had none,
    and `grasbot check` said nothing of it."""
    note_writer("n.md", "Tags: #recette #cuisine\naliases:\n  - Tian\n  - #legume\ntitle: x # un commentaire", "")
    note_writer("cite.md", "tags: ['#recette']\naliases: Tian # un vrai commentaire", "")
    vault = load_vault(note_writer.root)
    assert (vault.notes["n.md"].tags, vault.notes["n.md"].aliases) == ((), ("Tian",))
    assert messages(vault.warnings, "n.md") == [
        "`tags` : `#recette` y est un commentaire YAML, que ni Obsidian ni GrasBot ne lisent : écrivez `recette` (sans `#`), ou mettez-le entre guillemets",
        "`aliases` : `#legume` y est un commentaire YAML, que ni Obsidian ni GrasBot ne lisent : écrivez `legume` (sans `#`), ou mettez-le entre guillemets",
    ]
    assert vault.notes["cite.md"].tags == ("recette",)
    assert messages(vault.warnings, "cite.md") == []


def test_a_mapping_where_a_list_is_expected_is_ignored_with_a_warning(note_writer):
    note_writer("n.md", "tags: {a: 1}\npriority: haute", "")
    vault = load_vault(note_writer.root)
    assert vault.notes["n.md"].tags == ()
    assert vault.notes["n.md"].priority is None
    found = messages(vault.warnings, "n.md")
    assert any("`tags`" in m for m in found)
    assert any("`priority`" in m for m in found)


def test_a_tag_obsidian_refuses_is_said_and_still_read(note_writer):
    """Obsidian's help: a tag needs a character that is not a digit and holds no space, so
    `1984` and `mon tag` are no tags there, and `grasbot check` said nothing. Their words still
    say what the note is about: GrasBot keeps reading them."""
    note_writer("n.md", "tags: [1984, mon tag, '#2024', y1984, projets/2024, ok]\naliases: [mon alias, 1984]", "")
    vault = load_vault(note_writer.root)
    assert vault.notes["n.md"].tags == ("1984", "mon tag", "2024", "y1984", "projets/2024", "ok")
    assert messages(vault.warnings, "n.md") == [
        "`tags` : `1984` n'est pas un tag pour Obsidian, qui y veut un caractère autre qu'un chiffre (`y1984`)",
        "`tags` : `mon tag` n'est pas un tag pour Obsidian, qui n'en lit aucun avec une espace : écrivez `mon-tag`",
        "`tags` : `2024` n'est pas un tag pour Obsidian, qui y veut un caractère autre qu'un chiffre (`y2024`)",
    ]


def test_the_old_singular_alias_and_tag_keys_are_named_not_dropped_unseen(note_writer):
    """`alias:` and `tag:` were Obsidian's until 1.9.10, which reads `aliases` and `tags` only, as
    GrasBot does: an older note's `alias: Cuisine du sud` counted for nothing, and nobody said so."""
    note_writer("n.md", "alias: Cuisine du sud\ntag: [recette]\naliases: [plats]", "")
    vault = load_vault(note_writer.root)
    assert vault.notes["n.md"].aliases == ("plats",)
    assert messages(vault.warnings, "n.md") == [
        "`alias` n'est lu ni par Obsidian (depuis 1.9.10) ni par GrasBot : écrivez ses valeurs sous `aliases`",
        "`tag` n'est lu ni par Obsidian (depuis 1.9.10) ni par GrasBot : écrivez ses valeurs sous `tags`",
    ]


def test_a_field_is_read_whatever_the_case_of_its_key_as_obsidian_reads_a_property(note_writer):
    """Obsidian reads `Aliases:` and `TAGS:` as its `aliases` and `tags` (a property has one name
    whatever its case): the note's aliases counted for nothing here, and nothing said so."""
    note_writer("n.md", "Aliases: [Cuisine du sud]\nTAGS: [recette]\nTitle: Ratatouille\nAnswers: [Comment la cuire ?]\nPriority: 3\nType: recette", "")
    note_writer("vieux.md", "Alias: Tian\nTag: legume", "")
    vault = load_vault(note_writer.root)
    note = vault.notes["n.md"]
    assert (note.aliases, note.tags, note.title, note.answers, note.priority, note.type) == (
        ("Cuisine du sud",),
        ("recette",),
        "Ratatouille",
        ("Comment la cuire ?",),
        3.0,
        "recette",
    )
    assert messages(vault.warnings, "n.md") == []
    assert vault.notes["vieux.md"].aliases == ()
    assert messages(vault.warnings, "vieux.md") == [
        "`Alias` n'est lu ni par Obsidian (depuis 1.9.10) ni par GrasBot : écrivez ses valeurs sous `aliases`",
        "`Tag` n'est lu ni par Obsidian (depuis 1.9.10) ni par GrasBot : écrivez ses valeurs sous `tags`",
    ]


def test_a_field_written_in_two_cases_is_read_as_obsidian_reads_it_and_said(note_writer):
    note_writer("n.md", "Aliases: [Cuisine du sud]\naliases: [Tian]\ntitle: Ratatouille", "")
    vault = load_vault(note_writer.root)
    assert vault.notes["n.md"].aliases == ("Cuisine du sud",)
    assert messages(vault.warnings, "n.md") == [
        "`Aliases` et `aliases` sont une seule propriété pour Obsidian, qui lit la première, `Aliases` : n'en gardez qu'une"
    ]


def test_visibility_in_two_cases_keeps_the_note_private_whichever_says_public(note_writer):
    """Reading keys whatever their case must never make a private note public."""
    note_writer("a.md", "visibility: private\nVisibility: public\naliases: [secret]", "Texte secret.")
    note_writer("b.md", "VISIBILITY: public\nvisibility: private", "Texte secret.")
    note_writer("c.md", "Visibility: public\nPublish: false", "Texte secret.")
    note_writer("d.md", "Visibility: public\npublish: true\nPUBLISH: false", "Texte secret.")
    for default_public in (False, True):
        vault = load_vault(note_writer.root, VaultOptions(default_public=default_public))
        assert {p for p, n in vault.notes.items() if n.public} == set()
        said = {w.path: w.message for w in vault.warnings}
        assert "plus d'une fois" in said["a.md"] and "plus d'une fois" in said["b.md"]


# ---------------------------------------------------------------- wikilinks


def test_wikilink_forms_resolve_to_paths(note_writer):
    note_writer("cible.md", None, "")
    note_writer("dossier/profonde.md", None, "")
    note_writer("titree.md", None, "")
    note_writer("alias.md", None, "")
    note_writer("image.md", None, "")
    body = "[[cible]] [[alias|un autre texte]] [[titree#Une section]] ![[image]] [[dossier/profonde]]"
    note_writer("source.md", None, body)
    vault = load_vault(note_writer.root)
    kinds = dict(vault.edges["source.md"])
    assert kinds == {
        "cible.md": "body",
        "alias.md": "body",
        "titree.md": "body",
        "image.md": "embed",
        "dossier/profonde.md": "body",
    }
    links = {link.target: link for link in vault.notes["source.md"].links}
    assert links["alias"].display == "un autre texte"
    assert links["titree"].display is None
    assert vault.warnings == []


def test_wikilinks_are_case_insensitive_by_name_or_path(note_writer):
    note_writer("Dossier/Ma Note.md", None, "")
    note_writer("s.md", None, "[[ma note]] [[DOSSIER/MA NOTE]] [[Ma Note.md]]")
    vault = load_vault(note_writer.root)
    assert vault.edges["s.md"] == (("Dossier/Ma Note.md", "body"),)
    assert vault.warnings == []


def test_a_link_finds_its_note_whichever_unicode_normalization_each_side_uses(note_writer):
    """A Mac names files with accents apart (NFD: « E » then U+0301), a keyboard types them
    composed (NFC): Obsidian matches them, so must the daemon, and not fall back on the slug
    of another note (« Elephant.md ») or leave the link dangling."""
    nfd, nfc = unicodedata.normalize("NFD", "Éléphant"), unicodedata.normalize("NFC", "Éléphant")
    note_writer(f"Zoo/{nfd}.md", "slug: mammouth", "")
    note_writer("Elephant.md", None, "")
    note_writer(f"Carnet {nfc}.md", None, "")
    note_writer("s.md", None, f"[[{nfc}]] [[zoo/{nfc}.md]] [[Carnet {nfd}]]")
    vault = load_vault(note_writer.root)
    assert vault.edges["s.md"] == ((f"Zoo/{nfd}.md", "body"), (f"Carnet {nfc}.md", "body"))
    assert vault.warnings == []


def test_link_resolver_prefers_the_shortest_path_on_a_name_clash(note_writer):
    note_writer("a/b/note.md", None, "")
    note_writer("c/note.md", None, "")
    resolver = LinkResolver(load_vault(note_writer.root).notes.values())
    assert resolver.resolve("note") == "c/note.md"
    assert resolver.resolve("a/b/note") == "a/b/note.md"
    assert resolver.resolve("nulle-part") is None


def test_links_in_linked_and_related_fields(note_writer):
    note_writer("a.md", 'linked: ["[[b]]", "c"]\nrelated:\n  - "[[d|D]]"', "")
    for name in "bcd":
        note_writer(f"{name}.md", None, "")
    vault = load_vault(note_writer.root)
    assert vault.edges["a.md"] == (("b.md", "linked"), ("c.md", "linked"), ("d.md", "related"))


def test_links_inside_code_are_not_links(note_writer):
    note_writer("a.md", None, "```\n[[nulle-part]]\n```\nEt `[[ailleurs]]`.")
    vault = load_vault(note_writer.root)
    assert vault.notes["a.md"].links == ()
    assert vault.warnings == []


def test_code_is_read_as_comments_are_hidden_whatever_the_fences(note_writer):
    """A fence closes on a run of its own character at least as long, alone on its line: a
    ```` block holds ``` lines, and « ```bash » closes nothing (it did, and paired the next
    fences wrongly: a personal vault's 4,000-line course lost its links, and its shell
    comments became tags)."""
    note_writer("quatre.md", None, "````\n```\n#pasuntag [[pas-un-lien]]\n```\n````\n#vraitag")
    note_writer("bash.md", None, "```\nun\n```bash\n[[pas-un-lien]]\n```\n[[quatre]]\n```")
    vault = load_vault(note_writer.root)
    assert vault.notes["quatre.md"].tags == ("vraitag",)
    assert vault.notes["quatre.md"].links == ()
    assert [link.target for link in vault.notes["bash.md"].links] == ["quatre"]


_LINES = st.lists(
    st.tuples(
        st.sampled_from(["", " ", "    ", "> ", ">     ", "- ", "1. "]),
        st.sampled_from(["", "`", "```", "````", "~~~", "~~~~", "~~~~~"]),
        st.sampled_from(["", "a", "python", " ", "\t", "`x`", "~", "%%", "<!--", "-->", "\\", "#t", "[[x]]"]),
    ).map("".join),
    max_size=12,
).map("\n".join)


@settings(max_examples=2_000, deadline=None)
@given(_LINES)
def test_fences_nothing_closes_are_masked_without_changing_what_is_read(text):
    """`fences_read_once` only spares the patterns their failing tries: the comments hidden, the
    code kept and the fences a long note is not cut inside are what the patterns alone give."""
    code = _contained_code(text, [m.span() for m in FENCED.finditer(text)])  # indented code, read on the text as written
    alone, at, pos = [], 0, 0
    while (m := _HIDDEN.search(text, pos)) is not None:
        inside = [end for start, end in code if start <= m.start() < end]
        if inside:
            pos = inside[0]
            continue
        alone += (text[at : m.start()], m.group(0) if m.group("code") is not None else ("\n" if "\n" in m.group(0) else " "))
        at = pos = m.end()
    assert strip_hidden(text) == "".join(alone) + text[at:]
    assert [m.span() for m in FENCED.finditer(fences_read_once(text))] == [m.span() for m in FENCED.finditer(text)]
    code_read = [(m.span(), m.group("span") is None) for m in _CODE.finditer(fences_read_once(text))]
    assert code_read == [(m.span(), m.group("span") is None) for m in _CODE.finditer(text)]


def test_many_fences_that_nothing_closes_are_read_once(note_writer):
    """« ```python » written to close a fence closes nothing: each such line was tried against the
    rest of the note (10,000 of them, 100 KB: 6.3 s to read, 7.1 s to cut); read once, the comment
    after them is still hidden and the note cut as before."""
    body = "```python\nprint(1)\n" * 10_000 + "%% brouillon secret %%\n#vraitag [[ailleurs]]\n"
    note_writer("cours.md", "visibility: public", body)
    note = load_vault(note_writer.root).notes["cours.md"]
    assert "brouillon secret" not in note.body and note.tags == ("vraitag",)
    assert [link.target for link in note.links] == ["ailleurs"]
    assert max(end - start for start, end, _ in cut_note(note.body)[1]) <= 1_500  # no fence, so windows


def test_tilde_fences_closed_by_a_shorter_run_are_read_once(note_writer):
    """« ~~~~ python » closed by « ~~~ » is read as a run of three and an info string, found after
    trying each longer run against the rest of the note: 20,000 such blocks (600 KB) took about
    four minutes to load. Read at once, their code still holds no tag nor link and the comment
    after them is hidden."""
    body = "~~~~ python\nx = 1  # #pasuntag [[pas-un-lien]]\n~~~\n\n" * 20_000 + "%% brouillon secret %%\n#vraitag [[ailleurs]]\n"
    note_writer("cours.md", "visibility: public", body)
    note = load_vault(note_writer.root).notes["cours.md"]
    assert "brouillon secret" not in note.body and note.tags == ("vraitag",)
    assert [link.target for link in note.links] == ["ailleurs"]
    assert len(code_in(note.body)) == 20_000


def test_a_long_bare_line_of_tildes_is_read_once(note_writer):
    """A line of n tildes was tried as every run from n down to what a line below can close,
    each try reading the rest of its line: 40,000 of them took 3 s to load and 4.6 s to cut,
    200,000 over a minute. Its tildes past what a line above or below can use are read as
    spaces: it still opens the fence the shorter line closes, and the text after it is read."""
    body = "#vraitag\n" + "~" * 200_000 + "\n#pasuntag [[dans-le-code]]\n~~~~~\n%% brouillon secret %%\n[[ailleurs]]\n"
    note_writer("cours.md", "visibility: public", body)
    note = load_vault(note_writer.root).notes["cours.md"]
    assert "brouillon secret" not in note.body and note.tags == ("vraitag",)
    assert [link.target for link in note.links] == ["ailleurs"]
    assert len(code_in(note.body)) == 1
    assert len(cut_note(note.body)[1]) >= 1


def test_dangling_links_are_reported(note_writer):
    note_writer("a.md", 'linked: ["[[fantome]]"]', "Voir [[absente]].")
    vault = load_vault(note_writer.root)
    assert sorted(messages(vault.warnings, "a.md")) == [
        "le lien [[absente]] ne mène à aucune note",
        "le lien [[fantome]] ne mène à aucune note",
    ]
    assert vault.edges["a.md"] == ()


def test_a_missing_note_linked_several_ways_is_reported_once(note_writer):
    """`[[Plan]]`, `![[Plan]]`, `[[Plan#Budget]]` and `[[Plan|le plan]]` were four identical
    lines in `grasbot check`, each counted as a problem."""
    note_writer("a.md", 'linked: ["[[Plan]]"]', "Voir [[Plan]], ![[Plan]], [[Plan#Budget]] et [[Plan|le plan]]; puis [[Autre]].")
    vault = load_vault(note_writer.root)
    assert messages(vault.warnings, "a.md") == ["le lien [[Plan]] ne mène à aucune note", "le lien [[Autre]] ne mène à aucune note"]


def test_an_embedded_attachment_that_exists_is_not_a_dangling_link(note_writer):
    """Obsidian vaults embed images; `grasbot check` must not fail on every one of them."""
    note_writer("a.md", None, "Le schéma : ![[schema.png]], le tableau [[Plan.canvas]] et le dessin ![[Croquis.excalidraw]]")
    for name in ("schema.png", "Plan.canvas", "Croquis.excalidraw"):  # a board and a drawing were dangling links
        (note_writer.root / name).write_bytes(b"{}")
    vault = load_vault(note_writer.root)
    assert messages(vault.warnings, "a.md") == []


# ---------------------------------------------------------------- broken notes


def test_broken_yaml_and_non_utf8_are_skipped_and_reported(note_writer):
    note_writer("bonne.md", "title: Bonne", "ok")
    note_writer("yaml.md", "title: [pas fermé", "corps")
    (note_writer.root / "latin1.md").write_bytes("---\ntitle: x\n---\ncafé crème".encode("latin-1"))
    vault = load_vault(note_writer.root)
    assert set(vault.notes) == {"bonne.md"}
    errors = {e.path: e.message for e in vault.errors}
    assert set(errors) == {"yaml.md", "latin1.md"}
    assert errors["yaml.md"].startswith("propriétés YAML invalides à la ligne")
    assert errors["latin1.md"] == "pas en UTF-8 (octet 20) : enregistrez à nouveau le fichier en UTF-8"
    assert vault.errors[0].to_dict().keys() == {"path", "message"}


def test_a_binary_or_zero_filled_file_is_skipped_and_named_as_such(note_writer):
    """A file of zeros (what a crash can leave of a note being saved) is UTF-8, so it was served
    as a note whose text was NUL bytes, unsaid; an image or a PDF named `.md` was told to be
    « re-saved as UTF-8 ». A note saved as UTF-16 (Notepad's « Unicode ») is still told that."""
    note_writer("bonne.md", "title: Bonne", "ok")
    (note_writer.root / "zeros.md").write_bytes(b"\0" * 4096)
    (note_writer.root / "image.md").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    (note_writer.root / "moitie.md").write_bytes(b"---\ntitle: Moiti\xc3\xa9\n---\nLe miel" + b"\0" * 100)
    (note_writer.root / "unicode.md").write_bytes("---\ntitle: x\n---\ntexte".encode("utf-16"))
    vault = load_vault(note_writer.root)
    assert set(vault.notes) == {"bonne.md"}
    errors = {e.path: e.message for e in vault.errors}
    binary = (
        "contient des octets NUL (dès l'octet {}) : un fichier binaire, ou une note abîmée (un plantage peut laisser des zéros "
        "dans un fichier en cours d'enregistrement) : ignorée (restaurez-la, ou sortez-la du coffre)"
    )
    assert errors == {
        "zeros.md": binary.format(0),
        "image.md": binary.format(8),
        "moitie.md": binary.format(30),
        "unicode.md": "pas en UTF-8 (octet 0) : enregistrez à nouveau le fichier en UTF-8",
    }


def test_a_tab_that_indents_a_frontmatter_line_is_named_as_such(note_writer):
    """A tab typed for an indent breaks YAML: the author read « found character that cannot
    start any token », not what to change."""
    note_writer("liste.md", "visibility: public\naliases:\n\t- Tian", "Texte.")
    note_writer("cle.md", "visibility: public\n\ttitle: Tian", "Texte.")
    note_writer("valeur.md", "visibility: public\ntitle:\tTian", "Texte.")  # a tab after the colon is YAML's
    vault = load_vault(note_writer.root)
    assert list(vault.notes) == ["valeur.md"]
    hint = "une tabulation l'indente, et YAML n'indente qu'avec des espaces : remplacez la tabulation par des espaces"
    assert messages(vault.errors, "liste.md") == [f"propriétés YAML invalides à la ligne 4 : {hint}"]
    assert messages(vault.errors, "cle.md") == [f"propriétés YAML invalides à la ligne 3 : {hint}"]


def test_a_tab_after_a_lists_dash_is_named_as_such(note_writer):
    """`-` then a tab before a list's item breaks YAML too: the author read that a value cannot
    start with @, ` or %, which it did not, and nothing of the tab."""
    note_writer("tiret.md", "visibility: public\naliases:\n  - Tian\n  -\tRatatouille", "Texte.")
    note_writer("arobase.md", "visibility: public\ntitle: @Tian", "Texte.")
    vault = load_vault(note_writer.root)
    assert messages(vault.errors, "tiret.md") == [
        "propriétés YAML invalides à la ligne 5 : une tabulation là où YAML n'en lit pas : remplacez-la par des espaces"
    ]
    assert messages(vault.errors, "arobase.md") == [
        "propriétés YAML invalides à la ligne 3 : une valeur ne peut pas commencer par @, ` ou % en YAML : mettez-la entre guillemets"
    ]


def test_a_value_its_explicit_tag_cannot_make_is_named_with_its_line_and_what_to_write(note_writer):
    """`x: !!bool 0`, `!!int abc`, `!!timestamp bientôt`: PyYAML cannot make the value its tag
    asks for, and the author read « propriétés illisibles : KeyError » or « AttributeError », or
    that a date did not exist where no date was written. The note is still left out."""
    note_writer("booleen.md", "visibility: public\nx: !!bool 0", "Texte.")
    note_writer("entier.md", "visibility: public\nx: !!int abc", "Texte.")
    note_writer("date.md", "visibility: public\ntitle: Plan\npublishDate: !!timestamp bientôt", "Texte.")
    note_writer("liste.md", "visibility: public\nx:\n  - !!float un", "Texte.")
    note_writer("bon.md", "visibility: public\nx: !!int 0x1F", "Texte.")
    vault = load_vault(note_writer.root)
    assert list(vault.notes) == ["bon.md"]
    hint = "enlevez l'étiquette, ou mettez la valeur entre guillemets"
    assert messages(vault.errors, "booleen.md") == [f"propriétés YAML invalides à la ligne 3 : l'étiquette YAML !!bool ne fait pas de valeur de « 0 » : {hint}"]
    assert messages(vault.errors, "entier.md") == [f"propriétés YAML invalides à la ligne 3 : l'étiquette YAML !!int ne fait pas de valeur de « abc » : {hint}"]
    assert messages(vault.errors, "date.md") == [
        f"propriétés YAML invalides à la ligne 4 : l'étiquette YAML !!timestamp ne fait pas de valeur de « bientôt » : {hint}"
    ]
    assert messages(vault.errors, "liste.md") == [f"propriétés YAML invalides à la ligne 4 : l'étiquette YAML !!float ne fait pas de valeur de « un » : {hint}"]


def test_a_number_too_long_for_python_is_named_with_its_line_not_as_a_date(note_writer):
    """`x: 1` and 5,000 zeros: Python's int() refuses more than 4,300 digits (ValueError), and
    `x: 1:59:…:59.5`, a sexagesimal float past a float's range (OverflowError); the author read
    « une date ou une heure des propriétés n'existe pas (Exceeds the limit…) » where no date was
    written, or « propriétés illisibles : OverflowError ». The note is still left out, the
    number shown by its start."""
    note_writer("entier.md", "visibility: public\nx: 1" + "0" * 5_000, "Texte.")
    note_writer("etiquete.md", "visibility: public\ntitle: Plan\nx: !!int 1" + "0" * 5_000, "Texte.")
    note_writer("flottant.md", "visibility: public\nx: 1" + ":59" * 200 + ".5", "Texte.")
    note_writer("bon.md", "visibility: public\nx: 1" + "0" * 4_000, "Texte.")
    vault = load_vault(note_writer.root)
    assert list(vault.notes) == ["bon.md"]
    hint = "trop grand pour être lu : mettez-le entre guillemets"
    assert messages(vault.errors, "entier.md") == [f"propriétés YAML invalides à la ligne 3 : le nombre « 1{'0' * 39}… » est {hint}"]
    assert messages(vault.errors, "etiquete.md") == [f"propriétés YAML invalides à la ligne 4 : le nombre « 1{'0' * 39}… » est {hint}"]
    assert messages(vault.errors, "flottant.md") == [f"propriétés YAML invalides à la ligne 3 : le nombre « 1{':59' * 13}… » est {hint}"]


def test_a_base_60_number_of_thousands_of_parts_is_named_as_too_long_not_computed(note_writer):
    """`x: 1:59:59:…` (YAML 1.1's base 60) of 20,000 parts made PyYAML multiply an ever longer
    int by 60 for each part, quadratic: 212 ms, and a minute for the 333,000 parts a million
    characters of properties hold. Past 2,400 parts (4,200 digits, about int()'s bound on a
    decimal number) it is a number too long to read, as a decimal one of 4,301 digits is."""
    note_writer("long.md", "visibility: public\nx: 1" + ":59" * 20_000, "Texte.")
    note_writer("etiquete.md", "visibility: public\nx: !!int 1" + ":59" * 2_400, "Texte.")
    note_writer("bon.md", "visibility: public\nx: 1" + ":59" * 2_399, "Texte.")
    vault = load_vault(note_writer.root)
    assert list(vault.notes) == ["bon.md"]
    hint = "trop grand pour être lu : mettez-le entre guillemets"
    for rel in ("long.md", "etiquete.md"):
        assert messages(vault.errors, rel) == [f"propriétés YAML invalides à la ligne 3 : le nombre « 1{':59' * 13}… » est {hint}"]


def test_a_tag_written_with_its_hash_in_a_list_is_named_with_what_to_write(note_writer):
    """`tags: [#recette]` breaks YAML: the note was skipped with « did not find expected node
    content », at a line past the tag, which did not say what to change."""
    note_writer("seul.md", "visibility: public\ntags: [#recette]", "Texte.")
    note_writer("second.md", "visibility: public\ntitle: Tian\naliases: [Tian, #legume]", "Texte.")
    note_writer("cite.md", "visibility: public\ntags: ['#recette', \"#cuisine\"]", "Texte.")
    vault = load_vault(note_writer.root)
    assert list(vault.notes) == ["cite.md"] and vault.notes["cite.md"].tags == ("recette", "cuisine")
    assert messages(vault.errors, "seul.md") == [
        "propriétés YAML invalides à la ligne 3 : `tags` : `#recette` ne peut pas ouvrir un élément d'une [liste] en YAML : "
        'écrivez `recette` (sans `#`), ou mettez-le entre guillemets, "#recette"'
    ]
    assert messages(vault.errors, "second.md") == [
        "propriétés YAML invalides à la ligne 4 : `aliases` : `#legume` ne peut pas ouvrir un élément d'une [liste] en YAML : "
        'écrivez `legume` (sans `#`), ou mettez-le entre guillemets, "#legume"'
    ]


def test_a_tag_written_with_its_hash_in_a_list_over_lines_is_named_with_what_to_write(note_writer):
    """A flow list written over lines (`tags: [\n  #recette ]`, `tags:\n  [#recette]`) breaks
    YAML as on one line; the hint looked at the key's line alone, and the author read « did not
    find expected node content » at the closing ---."""
    note_writer("ouverte.md", "visibility: public\ntags: [\n  #recette, #cuisine ]", "Texte.")
    note_writer("suite.md", "visibility: public\naliases: [Tian,\n  #legume]\ntitle: Tian", "Texte.")
    note_writer("dessous.md", "visibility: public\ntags:\n  [#recette]", "Texte.")
    note_writer("autre.md", "visibility: public\ntags: [a, b]\nnote: [\n  x: y: z", "Texte.")  # no # to name
    vault = load_vault(note_writer.root)
    hint = 'ne peut pas ouvrir un élément d\'une [liste] en YAML : écrivez `{0}` (sans `#`), ou mettez-le entre guillemets, "#{0}"'
    assert messages(vault.errors, "ouverte.md") == [f"propriétés YAML invalides à la ligne 4 : `tags` : `#recette` {hint.format('recette')}"]
    assert messages(vault.errors, "suite.md") == [f"propriétés YAML invalides à la ligne 4 : `aliases` : `#legume` {hint.format('legume')}"]
    assert messages(vault.errors, "dessous.md") == [f"propriétés YAML invalides à la ligne 4 : `tags` : `#recette` {hint.format('recette')}"]
    assert "ne peut pas ouvrir un élément" not in messages(vault.errors, "autre.md")[0]


def test_a_frontmatter_line_of_many_spaces_is_read_once(note_writer):
    """The keys the tag warnings look for were read lazily, each space of a line read again
    after each of the ones before it: a frontmatter line of 300,000 spaces (a flow list's item,
    or a broken key) took minutes to load, where it takes a moment."""
    item = "b" + " " * 300_000 + "c"
    note_writer("liste.md", f"visibility: public\ntitle: a:b\ntags: [a,\n{item}]\naliases: #legume", "Texte.")
    note_writer("cle.md", f"visibility: public\n{item}: d", "Texte.")
    vault = load_vault(note_writer.root)
    assert vault.notes["liste.md"].tags == ("a", item)
    assert messages(vault.warnings, "liste.md") == [
        f"`tags` : `{item}` n'est pas un tag pour Obsidian, qui n'en lit aucun avec une espace : écrivez `b-c`",
        "`aliases` : `#legume` y est un commentaire YAML, que ni Obsidian ni GrasBot ne lisent : écrivez `legume` (sans `#`), ou mettez-le entre guillemets",
    ]
    assert messages(vault.errors, "cle.md") == [
        "propriétés YAML invalides à la ligne 3 : il manque le « : » après une clé (une valeur sur plusieurs lignes s'écrit entre guillemets)"
    ]


@pytest.mark.parametrize(
    "header, line, problem",
    [
        ("title: Le titre: la suite", 3, "un « : » inattendu (une valeur qui contient « : » s'écrit entre guillemets, ou la ligne est mal indentée)"),
        ("tags: [a, b", 4, "une [liste] n'est pas fermée par « ] », ou il manque une « , » entre deux de ses éléments"),
        (
            'related: "[[a]]" b',
            3,
            "une ligne n'est pas une clé suivie de « : » là où il en faut une (une indentation de trop ou de moins ? "
            "une valeur qui commence par [[ ou par un guillemet s'écrit tout entière entre guillemets)",
        ),
        ('title: "pas fermé', 4, "les propriétés finissent au milieu d'une valeur : un guillemet ouvert n'est pas fermé"),
        ("title: @moi", 3, "une valeur ne peut pas commencer par @, ` ou % en YAML : mettez-la entre guillemets"),
        ("title: *rien", 3, "un * commence un alias YAML, qui ne renvoie ici à aucune ancre & : mettez la valeur entre guillemets"),
        ("tags: - a", 3, "un élément de liste « - » n'est pas permis ici : écrivez-le sur sa propre ligne, sous la clé"),
    ],
    ids=["colon", "list", "link", "quote", "at", "alias", "dash"],
)
def test_a_broken_frontmatter_is_said_in_french_with_what_to_change(note_writer, header, line, problem):
    """The parser's English (« mapping values are not allowed in this context ») told a French
    author neither what was wrong nor what to change."""
    note_writer("n.md", f"visibility: public\n{header}", "Texte.")
    vault = load_vault(note_writer.root)
    assert messages(vault.errors, "n.md") == [f"propriétés YAML invalides à la ligne {line} : {problem}"]


def test_a_frontmatter_never_closed_is_reported_as_such(note_writer):
    (note_writer.root / "ouverte.md").write_text("---\nvisibility: private\ntitle: Carnet\n\nLe corps, sans second ---.\n", encoding="utf-8")
    vault = load_vault(note_writer.root, VaultOptions(default_public=True))
    # still skipped (read as a body, its `visibility: private` would go public), but the author
    # learns why: it was "unreadable frontmatter: ValueError"
    assert vault.notes == {}
    assert messages(vault.errors, "ouverte.md") == ["les propriétés ne sont jamais fermées : ajoutez une ligne --- après leurs champs"]


def test_a_frontmatter_closed_by_dots_is_named_as_obsidian_reads_it(note_writer):
    """`...` ends a YAML document (pandoc writes it), not Obsidian's properties: the note stays
    skipped (its `visibility: private` must not become text), and the author is told which line
    to change, not to add a --- after fields that looked closed."""
    (note_writer.root / "pandoc.md").write_text("---\nvisibility: private\ntitle: Carnet\n...\nLe corps.\n", encoding="utf-8")
    vault = load_vault(note_writer.root, VaultOptions(default_public=True))
    assert vault.notes == {}
    assert messages(vault.errors, "pandoc.md") == [
        "les propriétés ne sont jamais fermées : Obsidian les ferme par --- seulement, pas par le ... de la ligne 4 : écrivez --- à sa place"
    ]


@pytest.mark.parametrize("comment", ["", "# lu par PyYAML\n"])
def test_numbers_in_text_fields_are_the_text_written(note_writer, comment):
    """YAML 1.1 read `title: 1:30` as 90 (base 60), `017` as 15 (octal), `0x1F` as 31: visitors
    read the title « 90 », the aliases « 31 »; a title that is no date (`2024-02-30`) skipped
    the note. `priority` stays a number."""
    note_writer("heure.md", f"{comment}visibility: public\ntitle: 1:30\naliases: [0x1F, 017, 1_000]\ntags:\n  - v2.10\n  - 2.10\npriority: 0x1F", "Texte.")
    note_writer("jour.md", f"{comment}visibility: public\ntitle: 2024-02-30\nslug: 017\nupdated: 2024-01-01 10:00", "Texte.")
    note_writer("Note 017.md", "visibility: public\nlinked: [017]", "Texte.")
    note_writer("017.md", "visibility: public", "Texte.")
    vault = load_vault(note_writer.root)
    heure, jour = vault.notes["heure.md"], vault.notes["jour.md"]
    assert (heure.title, heure.aliases, heure.tags, heure.priority) == ("1:30", ("0x1F", "017", "1_000"), ("v2.10", "2.10"), 31.0)
    assert (jour.title, jour.slug, jour.updated) == ("2024-02-30", "017", "2024-01-01 10:00")
    assert {t for t, _ in vault.edges["Note 017.md"]} == {"017.md"}
    assert set(LIST_FIELDS) <= TEXT_FIELDS


def test_a_date_that_does_not_exist_is_named_as_such(note_writer):
    """YAML reads `2024-02-30` as a date it cannot make: the author read "unreadable
    frontmatter: ValueError" of a field GrasBot does not even use."""
    note_writer("jour.md", "visibility: public\ncreated: 2024-02-30", "Texte.")
    note_writer("heure.md", "visibility: public\nheure: 2024-01-01 25:00:00", "Texte.")
    note_writer("citee.md", "visibility: public\ncreated: '2024-02-30'", "Texte.")
    vault = load_vault(note_writer.root)
    assert list(vault.notes) == ["citee.md"]
    hint = "corrigez-la, ou mettez-la entre guillemets pour la garder comme texte"
    assert messages(vault.errors, "jour.md") == [f"une date ou une heure des propriétés n'existe pas (day is out of range for month) : {hint}"]
    assert messages(vault.errors, "heure.md") == [f"une date ou une heure des propriétés n'existe pas (hour must be in 0..23) : {hint}"]


def test_frontmatter_that_is_not_a_mapping_is_reported(note_writer):
    note_writer("liste.md", "- a\n- b", "corps")
    vault = load_vault(note_writer.root)
    # the engine means to refuse it (parse_note's "not a mapping" check): its fields must not
    # silently vanish while the note loads as if it had none
    assert vault.notes == {}
    assert messages(vault.errors, "liste.md") == ["les propriétés ne sont pas une suite de champs (clé : valeur)"]


def test_a_content_field_does_not_break_loading(note_writer):
    note_writer("c.md", "title: Avec content\ncontent: un champ nommé content", "Le vrai corps.")
    vault = load_vault(note_writer.root)
    assert vault.errors == []
    assert vault.notes["c.md"].title == "Avec content"
    assert vault.notes["c.md"].body.strip() == "Le vrai corps."


def test_utf8_bom_is_accepted(note_writer):
    (note_writer.root / "bom.md").write_bytes("\ufeff---\ntitle: Avec BOM\n---\ncorps".encode("utf-8"))
    vault = load_vault(note_writer.root)
    assert vault.notes["bom.md"].title == "Avec BOM"


def test_duplicate_slugs_are_reported(note_writer):
    note_writer("a.md", "slug: meme", "")
    note_writer("b/c.md", "slug: meme", "")
    vault = load_vault(note_writer.root)
    assert set(vault.notes) == {"a.md", "b/c.md"}
    assert messages(vault.warnings, "b/c.md") == ["slug « meme » en double (déjà celui de a.md)"]


def test_a_reload_says_what_changed_and_what_was_relinked(note_writer):
    """The delta a reload's callers read (the engine, the indexes), against the vault it was given."""
    note_writer("a.md", "title: A", "Vers [[b]].")
    note_writer("b.md", "title: B", "Rien.")
    note_writer("c.md", "title: C", "Rien non plus.")
    first = load_vault(note_writer.root)
    assert first.delta is None and first.changed_since(first.notes) is None  # loaded from nothing

    note_writer("b.md", "title: B", "Autre texte, mêmes liens.")
    note_writer("c.md", "title: C", "Vers [[a]] maintenant.")
    second = load_vault(note_writer.root, previous=first)
    assert second.changed_since(first.notes) == ("b.md", "c.md")
    assert second.relinked_since(first.edges) == {"c.md"}  # b's links did not change
    assert second.edges["c.md"] == (("a.md", "body"),)
    assert second.changed_since(dict(first.notes)) is None  # another dict: no claim about it
    assert second.relinked_since(dict(first.edges)) is None

    note_writer("d.md", "title: D", "Une note de plus.")  # a new name: every link may resolve elsewhere
    third = load_vault(note_writer.root, previous=second)
    assert third.changed_since(second.notes) == ("d.md",)
    assert third.relinked_since(second.edges) is None
    assert load_vault(note_writer.root, VaultOptions(default_public=True), previous=third).delta is None  # other options


def test_missing_vault_folder_is_a_vault_error(tmp_path):
    with pytest.raises(VaultError, match="dossier du coffre introuvable"):
        load_vault(tmp_path / "absent")


# ---------------------------------------------------------------- which files


def test_obsidian_trash_and_excluded_folders_are_ignored(note_writer):
    note_writer("garde.md", None, "")
    note_writer(".obsidian/workspace.md", None, "")
    note_writer(".trash/vieille.md", None, "")
    note_writer("brouillons/b.md", None, "")
    note_writer("brouillons-publics/c.md", None, "")
    note_writer("a/prive/d.md", None, "")
    (note_writer.root / "pas-markdown.txt").write_text("x")
    vault = load_vault(note_writer.root, VaultOptions(exclude=("brouillons", "a/prive")))
    assert set(vault.notes) == {"garde.md", "brouillons-publics/c.md"}
    assert set(load_vault(note_writer.root).notes) == {
        "garde.md",
        "brouillons/b.md",
        "brouillons-publics/c.md",
        "a/prive/d.md",
    }


def test_an_excluded_folder_is_left_out_whichever_unicode_normalization_names_it(note_writer):
    """`--exclude Privé` typed composed (NFC) and a folder a Mac named with its accent apart
    (NFD), synced as it is: its notes were served to visitors under --default-visibility
    public, and the owner told that the vault had no such folder."""
    nfd = unicodedata.normalize("NFD", "Privé")
    note_writer(f"{nfd}/journal.md", None, "Mon journal intime.")
    note_writer(f"Carnets/{nfd}/lettre.md", None, "Une lettre.")
    note_writer("public.md", None, "Bonjour.")
    options = VaultOptions(exclude=(unicodedata.normalize("NFC", "Privé"), unicodedata.normalize("NFC", "Carnets/Privé")), default_public=True)
    vault = load_vault(note_writer.root, options)
    assert list(vault.notes) == ["public.md"]
    assert vault.warnings == []


def test_an_excluded_folder_the_vault_does_not_have_is_said(note_writer):
    """`--exclude Templats` for `templates/`, or a note's name: nothing was left out, unsaid."""
    note_writer("templates/modele.md", None, "")
    note_writer("garde.md", None, "")
    vault = load_vault(note_writer.root, VaultOptions(exclude=("Templats", "garde.md")))
    assert set(vault.notes) == {"templates/modele.md", "garde.md"}
    said = "exclu par --exclude (GRASBOT_EXCLUDE), mais le coffre n'a pas ce dossier : rien n'est exclu"
    assert [(w.path, w.message) for w in vault.warnings] == [("Templats", said), ("garde.md", said)]
    assert Settings.load(env={"GRASBOT_EXCLUDE": "./templates/, brouillons"}).exclude == ("templates", "brouillons")
    assert load_vault(note_writer.root, VaultOptions(exclude=("templates",))).warnings == []


def test_an_excluded_folder_is_left_out_in_any_case(note_writer):
    """`--exclude journal` for `Journal/`: a Mac's or Windows' disk found the folder by that name,
    so nothing was said, and the walk, comparing names exactly, left nothing out: the journal's
    notes were served. On any disk the folder is now left out, and its notes' paths are masked."""
    note_writer("Journal/Intime/secret.md", None, "")
    note_writer("Journal/jour.md", None, "")
    note_writer("garde.md", None, "")
    vault = load_vault(note_writer.root, VaultOptions(exclude=("journal/INTIME", "JOURNAL"), default_public=True))
    assert set(vault.notes) == {"garde.md"}
    assert vault.warnings == []
    assert vault.excluded == {"Journal/Intime/secret.md", "Journal/jour.md"}


def test_an_excluded_folder_is_left_out_named_without_its_accents(note_writer):
    """`--exclude prive` for `Privé/`, as typed on a keyboard without accents or in a unit file:
    the folder was read (only a warning, at INFO in serve's log, said no folder was so named),
    and with the default public its notes were served."""
    note_writer("Privé/budget.md", None, "Mon salaire.")
    note_writer(f"{unicodedata.normalize('NFD', 'Écrits')}/Brouillons Intimes/lettre.md", None, "Une lettre.")
    note_writer("Prives publiques/garde.md", None, "Bonjour.")
    vault = load_vault(note_writer.root, VaultOptions(exclude=("prive", "ecrits/brouillons intimes"), default_public=True))
    assert set(vault.notes) == {"Prives publiques/garde.md"}
    assert vault.warnings == []
    assert vault.excluded == {"Privé/budget.md", f"{unicodedata.normalize('NFD', 'Écrits')}/Brouillons Intimes/lettre.md"}


def test_a_link_to_a_note_of_an_excluded_folder_is_no_dangling_link(note_writer):
    """`--exclude Journal` and a kept note linking into it: each link was « ne mène à aucune
    note », so `grasbot check` failed forever, though the author left the folder out on purpose.
    Found by its vault path (with or without `.md`) or its file name, in any case; a link to a
    note that exists nowhere still warns, and the link stays no edge."""
    note_writer("Journal/Journal du 3 mai.md", None, "Mon journal.")
    note_writer("Journal/2026/2026-05-03.md", None, "Le 3 mai.")
    note_writer(
        "garde.md",
        None,
        "Voir [[Journal du 3 mai]], [[journal/2026/2026-05-03.md|le 3]], [[2026-05-03#Matin]], [[/Journal/Journal du 3 mai]] et [[Nulle part]].",
    )
    vault = load_vault(note_writer.root, VaultOptions(exclude=("journal",), default_public=True))
    assert set(vault.notes) == {"garde.md"}
    assert [(w.path, w.message) for w in vault.warnings] == [("garde.md", "le lien [[Nulle part]] ne mène à aucune note")]
    assert vault.edges["garde.md"] == ()
    unexcluded = load_vault(note_writer.root, VaultOptions(default_public=True))
    assert [w.message for w in unexcluded.warnings] == ["le lien [[Nulle part]] ne mène à aucune note"]


def test_symlink_outside_the_vault_is_not_followed(note_writer, tmp_path):
    outside = tmp_path / "dehors"
    outside.mkdir()
    (outside / "secret.md").write_text("---\nvisibility: public\n---\nsecret", encoding="utf-8")
    (tmp_path / "fichier-secret.md").write_text("secret", encoding="utf-8")
    note_writer("dedans.md", None, "")
    os.symlink(outside, note_writer.root / "lien-dossier")
    os.symlink(tmp_path / "fichier-secret.md", note_writer.root / "lien-fichier.md")
    vault = load_vault(note_writer.root)
    assert set(vault.notes) == {"dedans.md"}


def test_symlink_inside_the_vault_is_followed_once(note_writer, tmp_path):
    note_writer("docs/guide.md", "title: Guide", "")
    os.symlink(note_writer.root / "docs", note_writer.root / "raccourci")
    os.symlink(note_writer.root / "docs" / "guide.md", note_writer.root / "guide-lien.md")
    vault = load_vault(note_writer.root)
    # the folder is walked once (under one of its two names), the file link is a note of its own
    guides = [p for p in vault.notes if p.endswith("guide.md")]
    assert len(guides) == 1
    assert "guide-lien.md" in vault.notes
    assert vault.notes["guide-lien.md"].title == "Guide"


def test_a_walk_made_elsewhere_loads_the_same_vault(note_writer):
    """load_vault(scanned=...) with the files walked beforehand, as the daemon walks them on its
    event loop, loads what its own walk loads: notes, errors, warnings; links followed once,
    links out of the vault left out, excluded folders skipped, a broken link reported."""
    from grasbot.retrieval.vault import _scan, walk_markdown

    note_writer("docs/guide.md", "title: Guide", "Voir [[absente]].")
    note_writer("a.md", "title: A\ntags: {pas: une liste}", "")
    note_writer(".obsidian/conf.md", None, "")
    note_writer("brouillons/b.md", None, "")
    (note_writer.root / "casse.md").write_text("---\ntitle: [pas fermé\n---\n", encoding="utf-8")
    os.symlink(note_writer.root / "docs", note_writer.root / "raccourci")
    os.symlink(note_writer.root / "supprimee.md", note_writer.root / "lien-mort.md")
    options = VaultOptions(exclude=("brouillons",))
    walked = list(walk_markdown(note_writer.root, options))
    assert [rel for rel, _ in walked] == [rel for rel, _ in _scan(note_writer.root, options)]
    for _, entry in walked:
        try:
            entry.stat()
        except OSError:
            pass
    mine, theirs = load_vault(note_writer.root, options), load_vault(note_writer.root, options, scanned=walked)
    assert mine.notes == theirs.notes and set(mine.notes) == {"a.md", "docs/guide.md"}
    assert (mine.errors, mine.warnings) == (theirs.errors, theirs.warnings)
    assert [e.path for e in theirs.errors] == ["casse.md", "lien-mort.md"]
    assert theirs.warnings


# ---------------------------------------------------------------- visibility


def test_visibility(note_writer):
    note_writer("pub.md", "visibility: public", "")
    note_writer("pub-maj.md", "visibility: Public", "")
    note_writer("priv.md", "visibility: private", "")
    note_writer("autre.md", "visibility: amis", "")
    note_writer("rien.md", "title: x", "")
    note_writer("sans-frontmatter.md", None, "")
    private_default = load_vault(note_writer.root).notes
    assert {p for p, n in private_default.items() if n.public} == {"pub.md", "pub-maj.md"}
    public_default = load_vault(note_writer.root, VaultOptions(default_public=True)).notes
    assert {p for p, n in public_default.items() if n.public} == {
        "pub.md",
        "pub-maj.md",
        "rien.md",
        "sans-frontmatter.md",
    }


@pytest.mark.parametrize(
    ("field", "shown"),
    [
        ("visibility: publique", "visibility: publique"),
        ("visibility: amis", "visibility: amis"),
        # as the author wrote it, not as Python prints what YAML read (`True`, an empty string, `None`, `['public']`)
        ("visibility: true", "visibility: true"),
        ("Visibility: TRUE", "Visibility: TRUE"),
        ("visibility: ''", "visibility: ''"),
        ("visibility:", "visibility:"),
        ("visibility:\n  - public", "visibility: [public]"),
        ("visibility: [public, amis]", "visibility: [public, amis]"),
    ],
)
def test_a_visibility_that_is_neither_public_nor_private_is_said(note_writer, field, shown):
    """Private, as any doubt keeps a note, but not in silence: `grasbot check` says it."""
    note_writer("n.md", field, "")
    vault = load_vault(note_writer.root, VaultOptions(default_public=True))
    assert not vault.notes["n.md"].public
    assert [(w.path, w.message) for w in vault.warnings] == [("n.md", f"`{shown}` n'est ni `public` ni `private` : la note reste privée")]


def test_a_doubtful_visibility_keeps_the_note_private(note_writer):
    """With the default public, a note its author meant private stays so: a key in another
    case, a key written twice (YAML keeps the last), Obsidian Publish's `publish: false`."""
    note_writer("casse.md", "Visibility: private", "")
    note_writer("majuscules.md", "VISIBILITY: private", "")
    note_writer("casse-publique.md", "Visibility: public", "")
    note_writer("deux-fois.md", "visibility: private\nvisibility: public", "")
    note_writer("deux-casses.md", "visibility: public\nVisibility: private", "")
    note_writer("publish.md", "publish: false", "")
    note_writer("publish-public.md", "visibility: public\npublish: false", "")
    note_writer("publish-vrai.md", "publish: true", "")
    vault = load_vault(note_writer.root, VaultOptions(default_public=True))
    assert {p for p, n in vault.notes.items() if n.public} == {"casse-publique.md", "publish-vrai.md"}
    said = {w.path: w.message for w in vault.warnings}
    assert "plus d'une fois" in said["deux-fois.md"] and "plus d'une fois" in said["deux-casses.md"]
    assert "publish: false" in said["publish-public.md"]
    assert "publish.md" not in said  # the default overruled, as the author asked: nothing to say
    private_default = load_vault(note_writer.root).notes
    assert {p for p, n in private_default.items() if n.public} == {"casse-publique.md"}


def test_a_key_meant_as_visibility_keeps_the_note_private_and_is_said(note_writer):
    """`visibilité: privée`, as a French author writes it, or `visiblity: private` mistyped, was
    no field at all: with the default public, the note its author hid was served to visitors,
    and `grasbot check` said nothing. Another word (`visible`, `visibility_note`) is no doubt."""
    note_writer("francais.md", "visibilité: privée", "Mon salaire.")
    note_writer("decompose.md", "Visibilite\u0301: private", "Mon code.")
    note_writer("faute.md", "visiblity: private", "Mon plan.")
    note_writer("faute-publique.md", "visability: public", "Ma recette.")
    note_writer("visible.md", "visible: true", "Un texte.")
    note_writer("note.md", "visibility_note: relire", "Un autre texte.")
    note_writer("les-deux.md", "visibility: public\nvisibilité: public", "Un texte public.")
    vault = load_vault(note_writer.root, VaultOptions(default_public=True))
    assert {p for p, n in vault.notes.items() if n.public} == {"visible.md", "note.md", "les-deux.md"}
    said = {w.path: w.message for w in vault.warnings}
    assert said == {
        "francais.md": "`visibilité: privée` n'est pas `visibility`, le champ que lit GrasBot : la note reste privée",
        "decompose.md": "`Visibilite\u0301: private` n'est pas `visibility`, le champ que lit GrasBot : la note reste privée",
        "faute.md": "`visiblity: private` n'est pas `visibility`, le champ que lit GrasBot : la note reste privée",
        "faute-publique.md": "`visability: public` n'est pas `visibility`, le champ que lit GrasBot : la note reste privée",
    }
    assert not any(n.public for n in load_vault(note_writer.root).notes.values() if n.path != "les-deux.md")


def test_a_key_meant_as_visibility_behind_blank_lines_keeps_the_note_private(note_writer):
    """A frontmatter behind blank lines that says private keeps its note private, and so does
    one that says it with `visibilité`, as the same frontmatter at its place does: it was read as
    a rule and a heading, and with the default public the note's secret was served."""
    root = note_writer.root
    for name, raw in {
        "blanc.md": "\n---\nvisibilité: privée\n---\nMon salaire.",
        "espace.md": " ---\nvisiblity: private\n---\nMon salaire.",
        "casse.md": "\n---\nvisibilité: privée\ntags: [salaire\n---\nMon salaire.",  # and its YAML broken
        "regle.md": "\n---\ninvisible: encre\n---\nUn tour de magie.",  # no key about who reads it: a rule, then text
    }.items():
        (root / name).write_text(raw, encoding="utf-8")
    vault = load_vault(root, VaultOptions(default_public=True))
    assert {p for p, n in vault.notes.items() if n.public} == {"regle.md"}
    assert {w.path for w in vault.warnings} == {"blanc.md", "espace.md", "casse.md"}


def test_publish_false_in_any_form_and_a_frontmatter_out_of_place_keep_a_note_private(note_writer):
    """With the default public, each of these was public: its author meant it private."""
    root = note_writer.root
    for name, raw in {
        "cr.md": b"---\rtitle: Journal\rvisibility: private\r---\rMon code secret.\r",  # CR alone ends lines (old Mac files)
        "blanc.md": b"\n\n---\nvisibility: private\n---\nMon code secret.",  # Obsidian reads no properties there
        "Publish.md": b"---\nPublish: false\n---\nx",
        "chaine.md": b'---\npublish: "false"\n---\nx',
        "zero.md": b"---\npublish: 0\n---\nx",
        "non.md": b"---\npublish: non\n---\nx",
        "regle.md": b"\n---\nUn titre: sous-titre\n---\nUne regle puis un titre, sans champ connu.",
        "blanc-public.md": b"\n---\ntitle: Titre\n---\ntexte",
    }.items():
        (root / name).write_bytes(raw)
    vault = load_vault(root, VaultOptions(default_public=True))
    assert {p for p, n in vault.notes.items() if n.public} == {"regle.md", "blanc-public.md"}
    assert vault.notes["cr.md"].title == "Journal" and vault.notes["cr.md"].body.strip() == "Mon code secret."
    said = {w.path: w.message for w in vault.warnings}
    assert (
        said["blanc.md"]
        == "des lignes vides avant le --- d'ouverture : ses champs sont lus comme du texte, mais ils gardent la note privée (supprimez les lignes vides)"
    )
    assert (
        said["blanc-public.md"]
        == "des lignes vides avant le --- d'ouverture : ses champs sont lus comme du texte, pas comme des propriétés (supprimez les lignes vides)"
    )
    assert said["chaine.md"] == '`publish: "false"` est lu comme `publish: false` : la note reste privée'
    assert said["Publish.md"] == "`Publish: false` est lu comme `publish: false` : la note reste privée"
    assert "cr.md" not in said and "regle.md" not in said


def _served_public(root: Path, files: dict[str, str]) -> Vault:
    """`files` ({name: the file's whole text}) written as they are, the vault loaded with the
    default public (`--default-visibility public`), where a frontmatter out of place matters."""
    for name, raw in files.items():
        (root / name).write_text(raw, encoding="utf-8")
    return load_vault(root, VaultOptions(default_public=True))


def _fields_served_public(root: Path, fields: dict[str, str]) -> Vault:
    """`_served_public` of notes that differ only by their frontmatter ({name: its lines})."""
    return _served_public(root, {name: f"---\n{field}\n---\nMon texte.\n" for name, field in fields.items()})


def test_a_properties_block_lower_in_the_note_that_says_private_keeps_it_private(note_writer):
    """A template inserted at the cursor puts its `---` block in the middle of a note, where
    Obsidian reads it as text (a rule, then a heading): its `visibility: private` or `draft:
    true` was read by nobody, and the note its author saw as theirs was served. Kept private
    when such a block says so (broken YAML that names who may read the note too), and the author
    told; a block inside code is an example, and one that says nothing of who reads is text."""
    top = "---\nvisibility: public\n---\n"
    vault = _served_public(
        note_writer.root,
        {
            "modele.md": f"{top}# Réunion\nLe code zorglub.\n\n---\nvisibility: private\ntags: [réunion]\n---\nSuite.\n",
            "brouillon.md": "Sans propriétés en tête.\n\n---\ndraft: true\n---\n",
            "casse.md": f"{top}Texte.\n---\nvisibility: [private\n---\n",
            "datee.md": f"{top}Texte.\n---\npublishDate: 2999-01-01\n---\n",
            "exemple.md": f"{top}Un exemple :\n\n```yaml\n---\nvisibility: private\n---\n```\n",
            "cite.md": f"{top}Un exemple :\n\n> ---\n> visibility: private\n> ---\n",
            "publique.md": f"{top}Texte.\n\n---\nvisibility: public\n---\n",
            "regles.md": f"{top}Première partie.\n\n---\nauteur: moi\nlieu: Lyon\n---\nSeconde partie.\n",
        },
    )
    assert {p for p, n in vault.notes.items() if n.public} == {"exemple.md", "cite.md", "publique.md", "regles.md"}
    assert messages(vault.warnings, "modele.md") == [
        "un bloc de propriétés plus bas dans la note, qu'Obsidian lit comme du texte, dit `visibility: private` : la note reste privée "
        "(mettez ses champs dans les propriétés en tête de note, ou supprimez le bloc)"
    ]
    assert "`draft: true`" in messages(vault.warnings, "brouillon.md")[0]
    assert "`visibility: [private`" in messages(vault.warnings, "casse.md")[0]
    assert "`publishDate: 2999-01-01`" in messages(vault.warnings, "datee.md")[0]
    assert not messages(vault.warnings, "regles.md") and not messages(vault.warnings, "exemple.md")


def test_a_key_after_one_of_yaml_s_line_breaks_in_a_block_obsidian_shows_as_text_keeps_the_note_private(note_writer):
    """PyYAML ends a line at U+2028, U+2029 and U+0085 too, where the search for a line that names
    who reads the note ended one at a line feed only: a lower, second, late or commented block's
    `x: a\u2028draft: true`, a draft to PyYAML, named only `x` and said nothing, or, as broken
    YAML (`x: 1\u2028  draft: true`), named no key, and the note was served. Kept private, and
    the warning names the line as PyYAML reads it."""
    top = "---\nvisibility: public\n---\n"
    vault = _served_public(
        note_writer.root,
        {
            "bas.md": f'{top}Le code zorglub.\n\n---\nx: a\u2028draft: "oui"\u2028y: 2\n---\nSuite.\n',
            "bas-nel.md": f"{top}Le code zorglub.\n\n---\ntitle: a\u0085visibility: private\n---\nSuite.\n",
            "bas-casse.md": f"{top}Le code zorglub.\n\n---\nx: 1\u2029  publish: false\n---\nSuite.\n",
            "second.md": f"{top}\n---\nx: a\u2029hidden: true\n---\nLe code zorglub.\n",
            "second-casse.md": f"{top}\n---\nx: 1\u2028  draft: true\n---\nLe code zorglub.\n",
            "tard-casse.md": "\n---\nx: 1\u2028  draft: true\n---\nLe code zorglub.\n",
            "commentaire.md": "<!--\n---\nx: 1\u2028  draft: true\u2028z: 3\n---\n-->\nLe code zorglub.\n",
            "ouvert.md": "<!--\n---\nx: a\u2029private: true\n-->\nLe code zorglub.\n",
            "public.md": f"{top}Le texte.\n\n---\nx: a\u2028y: b\n---\nSuite.\n",
        },
    )
    assert {p for p, n in vault.notes.items() if n.public} == {"public.md"}
    assert '`draft: "oui"`' in messages(vault.warnings, "bas.md")[0]
    assert "`visibility: private`" in messages(vault.warnings, "bas-nel.md")[0]
    assert "qui dit qui peut lire la note (`draft: true`)" in messages(vault.warnings, "commentaire.md")[0]
    bot = make_bot(note_writer.root, default_visibility="public")
    assert [s.path for s in bot.search("code zorglub texte").sources] == ["public.md"]


def test_an_expiry_date_in_a_lower_block_or_a_late_frontmatter_takes_the_note_back_when_it_comes(note_writer, monkeypatch):
    """A lower block, or a frontmatter behind a space, whose `expiryDate` is to come left the
    note public, as it should, but gave no instant its dates change that (`Note.turns`): the
    daemon never read it again at that instant, and the note stayed served after it expired,
    until some other reload. Its dates' turn is the note's, as a frontmatter's."""
    monkeypatch.setattr(visibility, "now", lambda: NOW)  # 2026-12-07 12:00 UTC
    soon = datetime(2026, 12, 7, 13, tzinfo=UTC).timestamp()
    vault = _served_public(
        note_writer.root,
        {
            "offre.md": "---\nvisibility: public\n---\nLe code zorglub.\n\n---\nexpiryDate: 2026-12-07T13:00:00Z\n---\n",
            "tardive.md": " ---\nvisibility: public\nexpiryDate: 2026-12-07T13:00:00Z\n---\nLe code zorglub.\n",
        },
    )
    assert [(n.public, n.turns) for n in vault.notes.values()] == [(True, soon), (True, soon)]
    monkeypatch.setattr(visibility, "now", lambda: soon)
    assert not any(n.public for n in _served_public(note_writer.root, {}).notes.values())


def test_a_frontmatter_behind_spaces_or_invisible_characters_keeps_a_note_private(note_writer):
    """With the default public, a frontmatter that says private but opens behind a space
    (` ---`, a thematic break to Obsidian), a zero-width space, a second byte order mark or a
    no-break space pasted before it was no frontmatter: the note was public, its secret served
    to visitors. Kept private, as behind blank lines, and the author told what to remove."""
    vault = _served_public(
        note_writer.root,
        {
            "espace.md": " ---\nvisibility: private\n---\nMon code secret.",
            "zero.md": "\u200b---\nvisibility: private\n---\nMon code secret.",
            "bom.md": "\ufeff\ufeff---\nvisibility: private\n---\nMon code secret.",
            "insecable.md": "\u00a0\n---\nvisibility: private\n---\nMon code secret.",
            "public.md": " ---\nvisibility: public\n---\nUn texte.",
            "regle.md": " ---\nUn titre: sous-titre\n---\nUne regle puis un titre, sans champ connu.",
        },
    )
    assert {p for p, n in vault.notes.items() if n.public} == {"public.md", "regle.md"}
    said = {w.path: w.message for w in vault.warnings}
    kept = (
        "des espaces ou des caractères invisibles avant le --- d'ouverture : "
        "ses champs sont lus comme du texte, mais ils gardent la note privée (supprimez-les)"
    )
    assert [said[p] for p in ("espace.md", "zero.md", "bom.md", "insecable.md")] == [kept] * 4
    assert said["public.md"] == (
        "des espaces ou des caractères invisibles avant le --- d'ouverture : ses champs sont lus comme du texte, pas comme des propriétés (supprimez-les)"
    )
    assert "regle.md" not in said


def test_a_frontmatter_whose_opening_line_ends_in_an_invisible_character_keeps_a_note_private(note_writer):
    """With the default public, a frontmatter that says private but whose opening `---` is
    followed by a zero-width space, a byte order mark or a word joiner pasted there was no
    frontmatter, and, unlike one behind such a character, nothing read it as saying private: the
    note was public, its secret served to visitors. Kept private, and the author told."""
    vault = _served_public(
        note_writer.root,
        {
            "zero.md": "---\u200b\nvisibility: private\n---\nMon code zorglub.",
            "bom.md": "---\ufeff\nvisibility: private\n---\nMon code zorglub.",
            "joint.md": "---\u2060 \nvisibility: private\n---\nMon code zorglub.",
            # a form feed or a line separator there: a frontmatter, to GrasBot's reader
            "saut.md": "---\f\nvisibility: private\n---\nMon code zorglub.",
            "ligne.md": "---\u2028\nvisibility: private\n---\nMon code zorglub.",
            "public.md": "---\u200b\nvisibility: public\n---\nUn texte.",
        },
    )
    assert {p for p, n in vault.notes.items() if n.public} == {"public.md"}
    said = {w.path: w.message for w in vault.warnings}
    kept = "des caractères invisibles après le --- d'ouverture : ses champs sont lus comme du texte, mais ils gardent la note privée (supprimez-les)"
    assert [said[p] for p in ("zero.md", "bom.md", "joint.md")] == [kept] * 3
    bot = make_bot(note_writer.root, default_visibility="public")
    assert [s.path for s in bot.search("code zorglub texte").sources] == ["public.md"]


def test_a_second_frontmatter_that_says_private_keeps_a_note_private(note_writer):
    """A template inserted into a note that had its own properties leaves a second block below
    the first, which Obsidian shows as text: one that said `visibility: private` (or
    `publish: false`) counted for nothing, and the note, public by its first block or by the
    default, was served to visitors. Kept private, and the author told to merge the blocks; a
    second block that says nothing of who reads the note changes nothing."""
    vault = _served_public(
        note_writer.root,
        {
            "modele.md": "---\ntitle: Réunion\n---\n---\nvisibility: private\n---\nMon code zorglub.",
            "vide.md": "---\n---\n\n---\nvisibility: private\ntags: [perso]\n---\nMon code zorglub.",
            "publique.md": "---\nvisibility: public\n---\n---\npublish: false\n---\nMon code zorglub.",
            "titre.md": "---\nvisibility: public\n---\n---\ntitle: Autre\n---\nUn texte.",
            "regle.md": "---\nvisibility: public\n---\n---\nvisibility: public\n---\nUn texte.",
        },
    )
    assert {p for p, n in vault.notes.items() if n.public} == {"titre.md", "regle.md"}
    said = {w.path: w.message for w in vault.warnings}
    kept = (
        "un second bloc de propriétés après le premier, qu'Obsidian ne lit pas : "
        "ses champs sont lus comme du texte, mais ils gardent la note privée (réunissez-les en un seul bloc)"
    )
    assert [said[p] for p in ("modele.md", "vide.md", "publique.md")] == [kept] * 3
    assert "titre.md" not in said
    bot = make_bot(note_writer.root, default_visibility="public")
    assert {s.path for s in bot.search("code zorglub texte").sources} == {"regle.md", "titre.md"}


def test_a_frontmatter_out_of_place_with_broken_yaml_that_names_visibility_keeps_a_note_private(note_writer):
    """With the default public, a frontmatter behind a blank line whose YAML is broken (a `#`
    opening a list's item, a tab) was read as text, and its note served to visitors, where the
    same frontmatter at its place skips the note: one that says who may read the note keeps it
    private; one that does not stays text, as Obsidian shows it."""
    vault = _served_public(
        note_writer.root,
        {
            "diese.md": "\n---\nvisibility: private\ntags: [#secret]\n---\nMon code secret.",
            "tab.md": "\n---\nPublish: false\n\ttags: x\n---\nMon code secret.",
            "texte.md": "\n---\ntags: [#recette]\n---\nUne recette.",
        },
    )
    assert {p for p, n in vault.notes.items() if n.public} == {"texte.md"}
    said = {w.path: w.message for w in vault.warnings}
    kept = (
        "des lignes vides avant le --- d'ouverture, et un YAML invalide : ses champs sont lus comme du texte, mais ils disent "
        "qui peut lire la note, ce qui la garde privée (supprimez les lignes vides, puis corrigez le YAML)"
    )
    assert said["diese.md"] == said["tab.md"] == kept
    assert "texte.md" not in said


def test_a_hugo_toml_front_matter_that_withholds_the_note_keeps_it_private(note_writer):
    """Hugo's TOML front matter (`+++`, `draft = true`, `+++`), which Obsidian shows as text,
    was no frontmatter to the daemon either: with the default public, the draft Hugo leaves
    unpublished was served. It is read for the same keys; one that withholds the note, or names
    such a key in TOML that does not parse, keeps it private, with a warning; one that says
    nothing of who reads the note changes nothing, without a word."""
    vault = _served_public(
        note_writer.root,
        {
            "brouillon.md": '+++\ntitle = "Projet"\ndraft = true\n+++\nMon code zorglub.',
            "expire.md": "+++\nexpiryDate = 2020-05-01T09:00:00Z\n+++\nMon code zorglub.",
            "casse.md": "+++\ntitle = Projet\npublish = false\n+++\nMon code zorglub.",
            "publie.md": '+++\ntitle = "Projet"\ndraft = false\n+++\nLe jardin zorglub.',
            "params.md": "+++\n[params]\ndraft = true\n+++\nLe jardin zorglub.",
        },
    )
    assert {p for p, n in vault.notes.items() if n.public} == {"publie.md", "params.md"}
    said = {w.path: w.message for w in vault.warnings}
    assert said["brouillon.md"] == (
        "un front matter TOML (entre deux +++), qu'Obsidian lit comme du texte, dit `draft = true` : la note reste privée"
        " (mettez ses champs en YAML dans les propriétés de la note)"
    )
    assert said["expire.md"].startswith("un front matter TOML (entre deux +++), qu'Obsidian lit comme du texte, dit `expiryDate = 2020-05-01T09:00:00Z`")
    assert said["casse.md"] == (
        "un front matter TOML (entre deux +++) invalide, qui dit qui peut lire la note (`publish = false`) : la note reste privée"
        " (mettez ses champs en YAML dans les propriétés de la note)"
    )
    assert "publie.md" not in said and "params.md" not in said


def test_a_hugo_front_matter_that_says_nothing_of_who_reads_the_note_is_no_text_of_it(note_writer):
    """A Hugo front matter (TOML between `+++`, a JSON object, Org `#+` lines) that says nothing of
    who reads the note left it public with the whole block in its body: indexed as words, quoted
    to the model and in visitors' excerpts, where Hugo shows none of it. It is the note's fields:
    out of its body, its `title`, `tags` and `aliases` read as the properties' are; text a comment
    that opens inside it hides stays hidden (the block is then left as Obsidian shows it), and
    what only looks like one (`{` opening a sentence) stays text."""
    vault = _served_public(
        note_writer.root,
        {
            "toml.md": '+++\ntitle = "Mon projet"\ntags = ["jardin", "potager"]\naliases = ["Le projet"]\n+++\nLe jardin zorglub.',
            "json.md": '{\n  "title": "Mon projet",\n  "tags": ["jardin"],\n  "description": "brouillon interne"\n}\nLe jardin zorglub.',
            "org.md": "#+title: Mon projet\n#+tags[]: jardin potager\n#+description: brouillon interne\n\nLe jardin zorglub.",
            "casse.md": "+++\ntitle = Mon projet\n+++\nLe jardin zorglub.",
            "accolade.md": "{Note} de bas de page : le jardin zorglub.",
            "cache.md": '+++\ntitle = "50 %% de remise"\n+++\nLe jardin zorglub. %% secret %%',
        },
    )
    notes = vault.notes
    assert all(n.public for n in notes.values())
    for name in ("toml.md", "json.md", "org.md", "casse.md"):
        assert notes[name].body.split() == ["Le", "jardin", "zorglub."], name
    assert [notes[n].title for n in ("toml.md", "json.md", "org.md", "casse.md")] == ["Mon projet", "Mon projet", "Mon projet", "casse"]
    assert notes["toml.md"].tags == notes["org.md"].tags == ("jardin", "potager") and notes["json.md"].tags == ("jardin",)
    assert notes["toml.md"].aliases == ("Le projet",)
    assert notes["accolade.md"].body == "{Note} de bas de page : le jardin zorglub."
    assert "zorglub" not in notes["cache.md"].body  # hidden by the `%%` the title opens, as Obsidian hides it
    assert not vault.warnings


@pytest.mark.parametrize(
    "raw",
    [
        '+++\ntitle = "Mon projet"\ndraft = false\n+++\nCorps.',
        '{\n  "title": "Mon projet",\n  "draft": false\n}\nCorps.',
        "#+title: Mon projet\n#+draft: false\n\nCorps.",
    ],
    ids=["toml", "json", "org"],
)
def test_a_hugo_front_matter_is_read_once_for_who_reads_the_note_and_for_its_fields(raw, monkeypatch):
    """A Hugo front matter that names who reads the note (`draft = false`) was read twice a load:
    by `who_reads` for the verdict, then by `hugo_frontmatter` for where it ends and its fields
    (tomllib, json, the Org lines each time). Once now, for the same verdict and fields."""
    import json
    import tomllib

    reads: list[str] = []
    for module, name in ((tomllib, "loads"), (json, "loads"), (visibility, "_org_fields")):
        read = getattr(module, name)
        monkeypatch.setattr(module, name, lambda given, *args, _read=read, **kwargs: (reads.append(str(given)), _read(given, *args, **kwargs))[1])
    note = parse_note("n.md", raw.encode(), mtime_ns=0, options=VaultOptions(default_public=True))
    assert (note.public, note.title, note.body.strip()) == (True, "Mon projet", "Corps.")
    assert len([given for given in reads if "Mon projet" in given]) == 1, reads  # not a key's escapes, read alone


def test_a_toml_render_that_is_a_time_of_day_keeps_the_note_private_and_the_vault_loads(note_writer):
    """TOML has a time of day (`render = 07:32:00`), which YAML has not: its warning's
    `build.render: …` was written with yaml.safe_dump, which cannot write a time and raised,
    and the one note took the whole vault's load down (the daemon did not start, a reload
    failed). The note stays private, as any render neither `always` nor `never`, the others load."""
    vault = _served_public(
        note_writer.root,
        {
            "heure.md": "+++\nbuild.render = 07:32:00\n+++\nMon code zorglub.",
            "table.md": "+++\n[_build]\nrender = 07:32:00.5\n+++\nMon code zorglub.",
            "jardin.md": "Le jardin zorglub.",
        },
    )
    assert {p: n.public for p, n in vault.notes.items()} == {"heure.md": False, "table.md": False, "jardin.md": True}
    assert {w.path for w in vault.warnings} == {"heure.md", "table.md"}


def test_a_page_its_publisher_does_not_write_stays_private(note_writer):
    """Hugo's `build: {render: never}` (or `link`, `_build` before 0.65) and Eleventy's
    `permalink: false` write no page of the note, and with the default public it was served.
    They keep it private, as `draft: true` does, with a warning when the value is unclear or
    the note says `visibility: public` too; `permalink: false` is no page address either.
    `build: {list: never}` alone, Eleventy's `eleventyExcludeFromCollections: true` and Hugo's
    `headless: true` outside a leaf bundle's `index.md` leave the page on the site: they change
    nothing."""
    vault = _fields_served_public(
        note_writer.root,
        {
            "jamais.md": "build:\n  list: never\n  render: never",
            "lien.md": "_build:\n  render: link",
            "parfois.md": "build:\n  render: parfois",
            "visible.md": "visibility: public\npermalink: false",
            "texte.md": 'permalink: "false"',
            "liste.md": "build:\n  list: never",
            "version.md": "build: 1.2.3",
            "adresse.md": "permalink: /notes/plan/",
            "hors.md": "eleventyExcludeFromCollections: true\nheadless: true",
        },
    )
    assert {p for p, n in vault.notes.items() if n.public} == {"liste.md", "version.md", "adresse.md", "hors.md"}
    said = {w.path: w.message for w in vault.warnings}
    assert said == {
        "parfois.md": "`build.render: parfois` n'est ni `always`, ni `link`, ni `never` : la note reste privée",
        "visible.md": "`permalink: false` garde la note privée, quelle que soit sa `visibility`",
        "texte.md": '`permalink: "false"` est lu comme `permalink: false` : la note reste privée',
    }
    assert vault.notes["visible.md"].permalinks_written == () and vault.notes["visible.md"].own_pages == ()
    assert vault.notes["adresse.md"].permalinks_written == ("/notes/plan/",)


def test_a_hugo_json_front_matter_that_withholds_the_note_keeps_it_private(note_writer):
    """Hugo's JSON front matter (an object, `{` … `}`, at the top of the note), which Obsidian
    shows as text, was no frontmatter to the daemon: with the default public, the draft Hugo
    leaves unpublished was served. It is read for the same keys; one that withholds the note, a
    key that says who reads it given twice, or JSON that does not parse and names such a key,
    keeps it private, with a warning; one that says nothing of who reads the note changes
    nothing, without a word."""
    vault = _served_public(
        note_writer.root,
        {
            "brouillon.md": '{\n  "draft": true,\n  "title": "x"\n}\nMon code zorglub.',
            "rendu.md": '{"build": {"render": "never"}}\nMon code zorglub.',
            "casse.md": '{\n  title: "Projet",\n  "publish": false\n}\nMon code zorglub.',
            "deux.md": '{\n  "draft": true,\n  "draft": false\n}\nMon code zorglub.',
            "publie.md": '{\n  "title": "Projet } ouvert",\n  "draft": false\n}\nLe jardin zorglub.',
            "params.md": '{\n  "params": {"draft": true}\n}\nLe jardin zorglub.',
        },
    )
    assert {p for p, n in vault.notes.items() if n.public} == {"publie.md", "params.md"}
    said = {w.path: w.message for w in vault.warnings}
    assert said["brouillon.md"] == (
        'un front matter JSON (un objet { … } en tête de note), qu\'Obsidian lit comme du texte, dit `"draft": true` : la note reste privée'
        " (mettez ses champs en YAML dans les propriétés de la note)"
    )
    assert said["rendu.md"].endswith('dit `"build": {"render": "never"}` : la note reste privée (mettez ses champs en YAML dans les propriétés de la note)')
    assert said["casse.md"] == (
        'un front matter JSON (un objet { … } en tête de note) invalide, qui dit qui peut lire la note (`"publish": false`) : la note reste privée'
        " (mettez ses champs en YAML dans les propriétés de la note)"
    )
    assert said["deux.md"] == (
        "un front matter JSON (un objet { … } en tête de note) donne `draft` plus d'une fois : la note reste privée"
        " (mettez ses champs en YAML dans les propriétés de la note)"
    )
    assert "publie.md" not in said and "params.md" not in said


def test_a_hugo_org_front_matter_that_withholds_the_note_keeps_it_private(note_writer):
    """Hugo reads a content file that opens with `#+key: value` lines as Org front matter (its
    lexer, for Markdown too: `#+draft: true`), which Obsidian shows as text: with the default
    public, the draft Hugo leaves unpublished was served. Its lines are read as Hugo reads them
    (values as text, a key given twice a list, `<2020-05-01 Fri>` a date), for the same keys;
    one that withholds the note, or a line that names such a key in a form Hugo does not read
    (`#+draft:true`, no space), keeps it private, with a warning; one that says nothing of who
    reads the note changes nothing, without a word."""
    vault = _served_public(
        note_writer.root,
        {
            "brouillon.md": "#+title: Projet\n#+draft: true\n\nMon code zorglub.",
            "expire.md": "#+EXPIRYDATE: <2020-05-01 Fri>\nMon code zorglub.",
            "colle.md": "#+title: Projet\n#+publish:false\nMon code zorglub.",
            "publie.md": "#+title: Projet\n#+draft: false\nLe jardin zorglub.",
            "plus-bas.md": "#+title: Projet\n\n#+draft: true\nLe jardin zorglub.",
        },
    )
    assert {p for p, n in vault.notes.items() if n.public} == {"publie.md", "plus-bas.md"}
    said = {w.path: w.message for w in vault.warnings}
    assert said["brouillon.md"] == (
        "un front matter Org (des lignes #+clé: valeur en tête de note), qu'Obsidian lit comme du texte, dit `#+draft: true` : la note reste privée"
        " (mettez ses champs en YAML dans les propriétés de la note)"
    )
    assert said["expire.md"].endswith("dit `#+EXPIRYDATE: <2020-05-01 Fri>` : la note reste privée (mettez ses champs en YAML dans les propriétés de la note)")
    assert said["colle.md"] == (
        "un front matter Org (des lignes #+clé: valeur en tête de note) dont Hugo ne lit pas une ligne qui dit qui peut lire la note"
        " (`#+publish:false`) : la note reste privée (écrivez-la `#+clé: valeur`, ou mettez ses champs en YAML dans les propriétés de la note)"
    )
    assert "publie.md" not in said and "plus-bas.md" not in said


def test_a_lone_surrogate_in_a_hugo_json_front_matter_is_read_as_go_reads_it():
    """A JSON front matter's `\\ud800`, a half of a pair alone, was read by json as a lone
    surrogate, which UTF-8 cannot encode, into the note's title, aliases and tags (YAML and
    TOML refuse it): the prompt that quotes the title could not be sent to the model (httpx
    encodes its JSON in UTF-8: UnicodeEncodeError). Hugo's reader (Go's encoding/json) reads it
    as U+FFFD, and so does this one; a pair, or `\\\\ud800` (a backslash, then text), as before."""
    raw = '{"title": "\\ud800 Projet", "aliases": ["x\\udc00", "\\ud83d\\ude00 ok", "\\\\ud800"], "tags": ["a\\udbff\\ud800b"]}\nCorps.'
    note = parse_note("n.md", raw.encode(), mtime_ns=0, options=VaultOptions(default_public=True))
    assert (note.title, note.aliases, note.tags) == ("\ufffd Projet", ("x\ufffd", "\U0001f600 ok", "\\ud800"), ("a\ufffd\ufffdb",))
    assert note.body.strip() == "Corps."


def test_an_org_date_never_closed_is_read_in_linear_time():
    """An Org date key's value of many `<2020-01-01 ` and no `>` or `]` was searched again from
    each `<` to the end of the line (the pattern's `.*`, then backtracking): 240 KB took 100 s,
    this 600 KB note most of an hour, in every load of a note that opens with `#+` lines. The
    day is the first date a `>` or `]` closes further on, as before."""
    opened = "<2020-01-01 " * 50_000
    assert visibility.hugo_frontmatter(f"#+date: {opened}\nCorps.").fields == {"date": opened.strip()}
    assert visibility.hugo_frontmatter(f"#+date: {opened}]\nCorps.").fields == {"date": "2020-01-01"}
    assert visibility.hugo_frontmatter("#+date: x <2020-01-01 <2021-02-03 Wed> y\n").fields == {"date": "2020-01-01"}
    assert visibility.hugo_frontmatter("#+date: ] <2020-01-01 \n").fields == {"date": "] <2020-01-01"}


def test_a_hugo_front_matter_in_an_html_comment_that_withholds_the_note_keeps_it_private(note_writer):
    """Hugo reads a front matter wrapped in an HTML comment at the top of a content file (its
    lexer: `<!--`, the rest of that line skipped, then YAML, TOML, JSON or Org front matter as at
    the top), which Obsidian hides: the author saw no properties, and with the default public
    the draft Hugo leaves unpublished was served. Its fields count as the properties' do, only
    to keep the note private, with a warning that says to take them out of the comment; a
    comment that opens with text, or comes after the note's text, holds no front matter."""
    vault = _served_public(
        note_writer.root,
        {
            "yaml.md": "<!--\n---\ntitle: Projet\ndraft: true\n---\n-->\nMon code zorglub.",
            "toml.md": "<!--\n+++\ndraft = true\n+++\n-->\nMon code zorglub.",
            "json.md": '<!--\n{ "publish": false }\n-->\nMon code zorglub.',
            "org.md": "<!--\n#+expirydate: <2020-05-01 Fri>\n-->\nMon code zorglub.",
            "casse.md": "<!--\n---\ndraft: [true\n---\n-->\nMon code zorglub.",
            "publie.md": "<!--\n---\ndraft: false\n---\n-->\nLe jardin zorglub.",
            "texte.md": "<!-- Brouillon ?\nÀ revoir.\n---\ndraft: true\n---\n-->\nLe jardin zorglub.",
            "plus-bas.md": "Le jardin zorglub.\n<!--\n---\ndraft: true\n---\n-->\n",
        },
    )
    assert {p for p, n in vault.notes.items() if n.public} == {"publie.md", "texte.md", "plus-bas.md"}
    said = {w.path: w.message for w in vault.warnings}
    out = "sortez ses champs du commentaire et mettez-les en YAML dans les propriétés de la note"
    hidden = "dans un commentaire HTML (<!-- … -->) qu'Obsidian cache mais que Hugo lit"
    assert said["yaml.md"] == f"un front matter YAML (entre deux ---), {hidden}, dit `draft: true` : la note reste privée ({out})"
    assert said["toml.md"] == f"un front matter TOML (entre deux +++), {hidden}, dit `draft = true` : la note reste privée ({out})"
    assert said["json.md"].endswith(f'{hidden}, dit `"publish": false` : la note reste privée ({out})')
    assert said["org.md"].endswith(f"{hidden}, dit `#+expirydate: <2020-05-01 Fri>` : la note reste privée ({out})")
    assert said["casse.md"] == (
        f"un front matter YAML (entre deux ---) invalide, {hidden}, qui dit qui peut lire la note (`draft: [true`) : la note reste privée ({out})"
    )
    assert not {"publie.md", "texte.md", "plus-bas.md"} & set(said)
    assert vault.notes["publie.md"].body.split() == ["Le", "jardin", "zorglub."]  # the comment, hidden, is no text of the note


def test_a_publish_value_that_is_no_yes_keeps_a_note_private(note_writer):
    """With the default public, `publish: private` (or a draft, a list) was read as no
    `publish: false`, so the note its author meant to withhold was served to visitors."""
    root = note_writer.root
    vault = _fields_served_public(
        root,
        {
            "prive.md": "publish: private",
            "brouillon.md": "publish: draft",
            "liste.md": "publish: [false]",
            "lettre.md": "publish: n",
            "nan.md": "publish: .nan",
            "oui.md": "publish: oui",
            "vrai.md": "publish: true",
            "un.md": "publish: 1",
            "vide.md": "publish:",
        },
    )
    assert {p for p, n in vault.notes.items() if n.public} == {"oui.md", "vrai.md", "un.md", "vide.md"}
    said = {w.path: w.message for w in vault.warnings}
    assert said["prive.md"] == "`publish: private` est lu comme `publish: false` : la note reste privée"


def test_a_draft_is_private_whatever_its_visibility(note_writer):
    """Quartz, Hugo, Jekyll, Eleventy and Astro publish no page marked `draft: true`: with the
    default public, such a note was served to visitors. A yes keeps it private, a no or a blank
    does not, and anything else keeps it private too (in doubt, private), each said."""
    root = note_writer.root
    fields = {
        "vrai.md": "draft: true",
        "vrai-public.md": "visibility: public\ndraft: true",
        "chaine.md": 'draft: "true"',
        "oui.md": "draft: oui",
        "yes.md": "draft: yes",
        "un.md": "draft: 1",
        "majuscule.md": "visibility: public\nDraft: true",
        "deux-casses.md": "visibility: public\ndraft: false\nDRAFT: on",
        "doute.md": "draft: peut-être",
        "liste.md": "draft: [false]",
        "nan.md": "draft: .nan",
        "faux.md": "draft: false",
        "faux-public.md": "visibility: public\ndraft: false",
        "chaine-faux.md": 'draft: "false"',
        "non.md": "draft: non",
        "no.md": "draft: no",
        "zero.md": "draft: 0",
        "vide.md": "draft:",
        "null.md": "draft: null",
    }
    vault = _fields_served_public(root, fields)
    public = {"faux.md", "faux-public.md", "chaine-faux.md", "non.md", "no.md", "zero.md", "vide.md", "null.md"}
    assert {p for p, n in vault.notes.items() if n.public} == public
    assert {w.path: w.message for w in vault.warnings} == {
        "vrai-public.md": "`draft: true` garde la note privée, quelle que soit sa `visibility`",
        "chaine.md": '`draft: "true"` est lu comme `draft: true` : la note reste privée',
        "oui.md": "`draft: oui` est lu comme `draft: true` : la note reste privée",
        "yes.md": "`draft: yes` est lu comme `draft: true` : la note reste privée",
        "un.md": "`draft: 1` est lu comme `draft: true` : la note reste privée",
        "majuscule.md": "`Draft: true` est lu comme `draft: true` : la note reste privée",
        "deux-casses.md": "`DRAFT: on` est lu comme `draft: true` : la note reste privée",
        "doute.md": "`draft: peut-être` n'est ni un oui ni un non (`true` ou `false`) : la note reste privée",
        "liste.md": "`draft: [false]` n'est ni un oui ni un non (`true` ou `false`) : la note reste privée",
        "nan.md": "`draft: .nan` n'est ni un oui ni un non (`true` ou `false`) : la note reste privée",
    }
    private_default = load_vault(root)
    assert {p for p, n in private_default.notes.items() if n.public} == {"faux-public.md"}
    assert {w.path for w in private_default.warnings} == {"vrai-public.md", "majuscule.md", "deux-casses.md"}  # the others are private anyway


def test_private_hidden_and_dg_publish_keep_a_note_private_as_draft_and_publish_do(note_writer):
    """`private: true` (the sites that filter on it), Hexo's `hidden: true` (hexo-hide-posts)
    and the Digital Garden plugin's `dg-publish: false`: with the default public, such a note
    was served to visitors. `private` and `hidden` are read as `draft` is (a yes keeps the note
    private, a no or a blank does not, anything else does), `dg-publish` as `publish` is (any
    value but a yes or a blank keeps it private), each said in French."""
    root = note_writer.root
    fields = {
        "prive.md": "private: true",
        "prive-public.md": "visibility: public\nprivate: true",
        "prive-oui.md": "private: oui",
        "prive-majuscule.md": "Private: yes",
        "prive-doute.md": "private: peut-être",
        "prive-non.md": "private: false",
        "prive-vide.md": "private:",
        "cache.md": "hidden: true",
        "cache-un.md": "hidden: 1",
        "cache-liste.md": "hidden: [true]",
        "cache-non.md": "hidden: non",
        "jardin.md": "dg-publish: false",
        "jardin-public.md": "visibility: public\ndg-publish: false",
        "jardin-non.md": "dg-publish: non",
        "jardin-oui.md": "dg-publish: true",
        "jardin-vide.md": "dg-publish:",
    }
    vault = _fields_served_public(root, fields)
    assert {p for p, n in vault.notes.items() if n.public} == {"prive-non.md", "prive-vide.md", "cache-non.md", "jardin-oui.md", "jardin-vide.md"}
    assert {w.path: w.message for w in vault.warnings} == {
        "prive-public.md": "`private: true` garde la note privée, quelle que soit sa `visibility`",
        "prive-oui.md": "`private: oui` est lu comme `private: true` : la note reste privée",
        "prive-majuscule.md": "`Private: yes` est lu comme `private: true` : la note reste privée",
        "prive-doute.md": "`private: peut-être` n'est ni un oui ni un non (`true` ou `false`) : la note reste privée",
        "cache-un.md": "`hidden: 1` est lu comme `hidden: true` : la note reste privée",
        "cache-liste.md": "`hidden: [true]` n'est ni un oui ni un non (`true` ou `false`) : la note reste privée",
        "jardin-public.md": "`dg-publish: false` garde la note privée, quelle que soit sa `visibility`",
        "jardin-non.md": "`dg-publish: non` est lu comme `dg-publish: false` : la note reste privée",
    }


def test_a_slug_that_links_to_a_note_or_names_its_file_is_ignored(note_writer):
    """`slug: "[[prive/Plan]]"` or `slug: prive/Plan.md` made the public note's slug, every
    visitor's name for it, of a private note's name: ignored, said in French."""
    root = note_writer.root
    vault = _fields_served_public(root, {"a.md": 'slug: "[[prive/Plan]]"', "b.md": "slug: prive/Plan.MD", "c.md": "slug: Mon plan"})
    assert {p: n.slug for p, n in vault.notes.items()} == {"a.md": "a", "b.md": "b", "c.md": "mon-plan"}
    assert [(w.path, w.message) for w in vault.warnings] == [
        ("a.md", "`slug: [[prive/Plan]]` est un lien ou le chemin d'une note, pas un slug : ignoré"),
        ("b.md", "`slug: prive/Plan.MD` est un lien ou le chemin d'une note, pas un slug : ignoré"),
    ]


def test_a_slug_that_names_a_notes_file_with_more_after_it_is_ignored(note_writer):
    """A note's file name with a heading, a query or a link's brackets after it
    (`slug: "Zorglub.md#plan"`, `<Zorglub.md>`), an invisible character inside `.md` or its dot
    percent-encoded is a note's file name too: the public note's slug, every visitor's name for
    it (sources, the prompt's `[slug]`, a `/{slug}` url), held the private note's name, which
    its title or any other field written so does not show."""
    root = note_writer.root
    written = {
        "a.md": 'slug: "Zorglub.md#plan"',
        "b.md": 'slug: "<Zorglub.md>"',
        "c.md": 'slug: "Zorglub.md?vue=1"',
        "d.md": 'slug: "Zorglub.m\u200bd"',
        "e.md": 'slug: "Zorglub%2Emd"',
        "f.md": 'slug: "Zorglub.mdx"',  # another extension: a slug
    }
    vault = _fields_served_public(root, written)
    assert {p: n.slug for p, n in vault.notes.items()} == {"a.md": "a", "b.md": "b", "c.md": "c", "d.md": "d", "e.md": "e", "f.md": "zorglub-mdx"}
    assert {w.path for w in vault.warnings} == {"a.md", "b.md", "c.md", "d.md", "e.md"}
    (root / "f.md").unlink()
    (root / "prive").mkdir()
    (root / "prive" / "Zorglub.md").write_text("---\nvisibility: private\n---\nLe plan secret.\n", encoding="utf-8")
    bot = make_bot(root, default_visibility="public", url_map="*=/notes/{slug}")
    sources = bot.search("Mon texte").sources
    assert {s.path for s in sources} == {"a.md", "b.md", "c.md", "d.md", "e.md"}
    assert not [(s.slug, s.url) for s in sources if "zorglub" in f"{s.slug} {s.url}"]


def test_jekyll_published_false_keeps_a_note_private_as_publish_false_does(note_writer):
    """Jekyll leaves a page whose frontmatter says `published: false` unpublished: with the
    default public (or `visibility: public`), such a note was served to visitors. It is read as
    `publish` is, in every case of the key and every value but a yes or a blank, each said with
    the key as its author wrote it."""
    root = note_writer.root
    fields = {
        "faux.md": "published: false",
        "faux-public.md": "visibility: public\npublished: false",
        "majuscule.md": "visibility: public\nPublished: false",
        "deux-casses.md": "visibility: public\npublished: true\nPUBLISHED: no",
        "chaine.md": 'published: "false"',
        "zero.md": "published: 0",
        "non.md": "published: non",
        "prive.md": "published: private",
        "liste.md": "published: [false]",
        "vrai.md": "published: true",
        "vrai-public.md": "visibility: public\npublished: true",
        "oui.md": "published: oui",
        "un.md": "published: 1",
        "vide.md": "published:",
    }
    vault = _fields_served_public(root, fields)
    assert {p for p, n in vault.notes.items() if n.public} == {"vrai.md", "vrai-public.md", "oui.md", "un.md", "vide.md"}
    assert {w.path: w.message for w in vault.warnings} == {
        "faux-public.md": "`published: false` garde la note privée, quelle que soit sa `visibility`",
        "majuscule.md": "`Published: false` est lu comme `published: false` : la note reste privée",
        "deux-casses.md": "`PUBLISHED: no` est lu comme `published: false` : la note reste privée",
        "chaine.md": '`published: "false"` est lu comme `published: false` : la note reste privée',
        "zero.md": "`published: 0` est lu comme `published: false` : la note reste privée",
        "non.md": "`published: non` est lu comme `published: false` : la note reste privée",
        "prive.md": "`published: private` est lu comme `published: false` : la note reste privée",
        "liste.md": "`published: [false]` est lu comme `published: false` : la note reste privée",
    }
    private_default = load_vault(root)
    assert {p for p, n in private_default.notes.items() if n.public} == {"vrai-public.md"}
    assert {w.path for w in private_default.warnings} == {"faux-public.md", "majuscule.md", "deux-casses.md"}  # the others are private anyway


@pytest.mark.parametrize(("key", "withheld", "withheld_too", "served"), [("draft", "true", "oui", "false"), ("published", "false", "no", "true")])
def test_a_draft_or_published_false_in_a_frontmatter_out_of_place_keeps_a_note_private(note_writer, key, withheld, withheld_too, served):
    """With the default public, a frontmatter behind a blank line that says `draft: true` or
    Jekyll's `published: false` (in YAML, or in broken YAML) keeps its note private, as one
    that says `visibility: private`; the value that publishes leaves it public."""
    vault = _served_public(
        note_writer.root,
        {
            "blanc.md": f"\n---\n{key}: {withheld}\n---\nMon texte secret.",
            "casse.md": f" ---\n{key.capitalize()}: {withheld_too}\n---\nMon texte secret.",
            "tab.md": f"\n---\n{key}: {withheld}\n\ttags: x\n---\nMon texte secret.",
            "servi.md": f"\n---\n{key}: {served}\n---\nUn texte.",
        },
    )
    assert {p for p, n in vault.notes.items() if n.public} == {"servi.md"}
    said = {w.path: w.message for w in vault.warnings}
    assert said["blanc.md"] == (
        "des lignes vides avant le --- d'ouverture : ses champs sont lus comme du texte, mais ils gardent la note privée (supprimez les lignes vides)"
    )
    assert said["casse.md"] == (
        "des espaces ou des caractères invisibles avant le --- d'ouverture : "
        "ses champs sont lus comme du texte, mais ils gardent la note privée (supprimez-les)"
    )
    assert "disent qui peut lire la note, ce qui la garde privée" in said["tab.md"]
    assert said["servi.md"] == (
        "des lignes vides avant le --- d'ouverture : ses champs sont lus comme du texte, pas comme des propriétés (supprimez les lignes vides)"
    )


def test_incremental_reload_reuses_unchanged_notes(note_writer):
    a = note_writer("a.md", "title: A", "premier")
    note_writer("b.md", "title: B", "inchangé")
    first = load_vault(note_writer.root)
    a.write_text("---\ntitle: A modifiée\n---\ndeuxième version, plus longue", encoding="utf-8")
    st = a.stat()
    os.utime(a, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    note_writer("c.md", "title: C", "nouvelle")
    second = load_vault(note_writer.root, previous=first)
    assert second.notes["b.md"] is first.notes["b.md"]
    assert second.notes["a.md"] is not first.notes["a.md"]
    assert second.notes["a.md"].title == "A modifiée"
    assert second.notes["c.md"].title == "C"
    (note_writer.root / "b.md").unlink()
    third = load_vault(note_writer.root, previous=second)
    assert set(third.notes) == {"a.md", "c.md"}
    assert third.notes["a.md"] is second.notes["a.md"]


def test_reload_with_a_touched_but_identical_file_keeps_the_parse(note_writer):
    a = note_writer("a.md", "title: A", "corps")
    first = load_vault(note_writer.root)
    st = a.stat()
    os.utime(a, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    second = load_vault(note_writer.root, previous=first)
    assert second.notes["a.md"].digest == first.notes["a.md"].digest
    assert second.notes["a.md"].mtime_ns == st.st_mtime_ns + 5_000_000_000
    assert second.notes["a.md"].links is first.notes["a.md"].links


def test_reload_reports_warnings_of_reused_notes_again(note_writer):
    note_writer("a.md", "priority: haute", "[[absente]]")
    first = load_vault(note_writer.root)
    second = load_vault(note_writer.root, previous=first)
    assert second.notes["a.md"] is first.notes["a.md"]
    assert [w.message for w in second.warnings] == [w.message for w in first.warnings]
    assert len(second.warnings) == 2


def test_parse_note_directly():
    raw = b"---\ntitle: T\ntags: x\n---\ncorps #y"
    note = parse_note("d/n.md", raw, mtime_ns=7, options=VaultOptions())
    assert (note.path, note.name, note.title, note.slug, note.tags, note.size, note.mtime_ns) == (
        "d/n.md",
        "n",
        "T",
        "n",
        ("x", "y"),
        len(raw),
        7,
    )
    with pytest.raises(ValueError, match="pas en UTF-8"):
        parse_note("x.md", b"\xff\xfe\xfa", mtime_ns=0, options=VaultOptions())


def test_a_field_of_the_wrong_shape_is_said_and_ignored(note_writer):
    """`title: [un, deux]` was the title « ['un', 'deux'] », an alias `{nom: truc}` the alias
    « {'nom': 'truc'} », without a word; `linked: [[autre]]`, unquoted, is YAML's list in a list."""
    note_writer("t.md", "title: [un, deux]\ntype: {x: 1}\nslug: [a, b]\nvisibility: public", "# Le vrai titre\nT.")
    note_writer("a.md", "aliases:\n  - {nom: truc}\n  - [a, b]\n  - bon alias\nlinked: [[t]]\nvisibility: public", "A.")
    vault = load_vault(note_writer.root)
    t, a = vault.notes["t.md"], vault.notes["a.md"]
    assert (t.title, t.slug, t.type) == ("t", "t", None)  # the file names it
    assert a.aliases == ("bon alias",) and vault.edges["a.md"] and {target for target, _ in vault.edges["a.md"]} == {"t.md"}
    assert sorted((w.path, w.message) for w in vault.warnings) == [
        ("a.md", "`aliases` : un de ses éléments est un ensemble de champs (clé : valeur) : ignoré"),
        ("a.md", "`aliases` : un de ses éléments est une liste : ignoré"),
        ("a.md", '`linked` : [[t]] sans guillemets est une liste en YAML, lue comme le lien ; écrivez "[[t]]"'),
        ("t.md", "`slug` devrait être un texte, pas une liste : ignoré"),
        ("t.md", "`title` devrait être un texte, pas une liste : ignoré"),
        ("t.md", "`type` devrait être un texte, pas un ensemble de champs (clé : valeur) : ignoré"),
    ]


def test_a_field_written_twice_is_said(note_writer):
    """YAML keeps the last one without a word: the author meant one of them."""
    note_writer("t.md", "title: Un\nslug: un\ntitle: Deux\nurl: https://x.fr/a:b\nvisibility: public", "T.")
    note_writer("ok.md", "title: Seul\nsource: https://x.fr\nvisibility: public", "T.")
    vault = load_vault(note_writer.root)
    assert vault.notes["t.md"].title == "Deux"
    assert [(w.path, w.message) for w in vault.warnings] == [("t.md", "`title` est écrit 2 fois : seul le dernier compte")]


def test_a_field_written_twice_after_yamls_other_line_breaks_is_said(note_writer):
    """PyYAML starts a line at U+2028, U+2029, U+0085 and a lone `\r` too, and keeps the last
    `title`; the warning's search started lines at `\n` only and said nothing."""
    for n, brk in enumerate(("\u2028", "\u2029", "\x85", "\r")):
        note_writer(f"t{n}.md", f"title: Un{brk}slug: un{n}{brk}title: Deux\nvisibility: public", "T.")
    vault = load_vault(note_writer.root)
    assert [vault.notes[f"t{n}.md"].title for n in range(4)] == ["Deux"] * 4
    assert sorted((w.path, w.message) for w in vault.warnings) == [(f"t{n}.md", "`title` est écrit 2 fois : seul le dernier compte") for n in range(4)]


def test_a_tag_in_a_flow_list_after_yamls_other_line_breaks_is_named(note_writer):
    """`a: 1` U+2028 `tags: [#recette]`: the key after the break was not found, and the author
    read PyYAML's « did not find expected node content »."""
    note_writer("t.md", "a: 1\u2028tags: [#recette]\nvisibility: public", "T.")
    vault = load_vault(note_writer.root)
    assert "t.md" not in vault.notes
    assert [e.message for e in vault.errors] == [
        "propriétés YAML invalides à la ligne 2 : `tags` : `#recette` ne peut pas ouvrir un élément d'une [liste] en YAML : "
        'écrivez `recette` (sans `#`), ou mettez-le entre guillemets, "#recette"'
    ]


def test_a_tag_written_as_a_comment_after_yamls_other_line_breaks_is_said(note_writer):
    """`a: 1` U+2028 `tags: #recette`: YAML reads a comment after the break, and the warning's
    lines, split at `\n` only, never saw the key."""
    note_writer("t.md", "a: 1\u2028tags: #recette #cuisine\u2029aliases:\x85  - #legume\nvisibility: public", "T.")
    vault = load_vault(note_writer.root)
    assert vault.notes["t.md"].tags == () and vault.notes["t.md"].aliases == ()
    assert [w.message for w in vault.warnings] == [
        f"`{key}` : `#{word}` y est un commentaire YAML, que ni Obsidian ni GrasBot ne lisent : écrivez `{word}` (sans `#`), ou mettez-le entre guillemets"
        for key, word in (("tags", "recette"), ("aliases", "legume"))
    ]


def test_a_footnote_is_no_link(note_writer):
    """`[^1]: Apis mellifera…` was read as a reference to the note `Apis`: a dangling link in
    `grasbot check`, an edge to any note of that name, and the footnote's first word gone."""
    note_writer("Apis.md", "visibility: public", "Une note qui s'appelle Apis.")
    note_writer("Jardin.md", "visibility: public", "Les abeilles[^1] butinent au jardin.\n\n[^1]: Apis mellifera, les abeilles domestiques.\n")
    vault = load_vault(note_writer.root)
    assert vault.notes["Jardin.md"].links == () and vault.edges.get("Jardin.md", ()) == ()
    assert "[^1]: Apis mellifera, les abeilles domestiques." in rewrite_links(vault.notes["Jardin.md"].body, lambda target: True, "Jardin.md")


def test_an_embeds_size_is_not_its_label():
    """`![[photo.png|300]]` was read « 300 », and `![[photo.png|Les ruches|400]]` « Les ruches|400 »."""
    cases = {
        "a ![[photo-jardin.png|300]] b": "a  b",
        "a ![[photo-jardin.png|Les ruches au printemps|400x300]] b": "a Les ruches au printemps b",
        "a ![[Carnet secret#^bloc|300]] b": "a  b",
        "a [[Note|2024]] b": "a 2024 b",  # a link's label may be a number
    }
    assert {text: rewrite_links(text, lambda target: False) for text in cases} == cases


def test_the_shared_slug_cases():
    """shared-protocol/cases/slugs.json: the plugin works a note's slug out on its own (to ask
    for its alias suggestions), and runs the same cases (obsidian-plugin/tests/noteTest.test.ts)."""
    import json
    from pathlib import Path

    import yaml

    cases = json.loads((Path(__file__).resolve().parents[2] / "shared-protocol" / "cases" / "slugs.json").read_text(encoding="utf-8"))["cases"]
    got = []
    for case in cases:
        fields = case["frontmatter"]
        raw = f"---\n{yaml.safe_dump(fields, allow_unicode=True)}---\nx" if fields else "x"
        got.append(parse_note(case["path"], raw.encode(), mtime_ns=0, options=VaultOptions()).slug)
    assert got == [case["slug"] for case in cases]


def test_a_reader_key_yaml_reads_into_another_fields_value_keeps_a_block_shown_as_text_private(note_writer):
    """`x: "a` then `draft: true"` lower in a note: PyYAML reads one text, `x`, and the note was
    served, where its author reads a `draft: true` line and the plugin's YAML refuses the block
    (private to it). In doubt, private, with the line as written; indented, it is the text's."""
    note_writer("bas.md", "visibility: public", 'Corps.\n\n---\nx: "a\ndraft: true"\n---\n')
    note_writer("html.md", None, "<!--\n---\nx: [a,\u2028draft: true]\n---\n-->\nCorps.\n")
    note_writer("texte.md", "visibility: public", 'Corps.\n\n---\nx: "a\n  draft: true"\n---\n')
    vault = load_vault(note_writer.root, VaultOptions(default_public=True))
    assert {path: note.public for path, note in vault.notes.items()} == {"bas.md": False, "html.md": False, "texte.md": True}
    said = {w.path: w.message for w in vault.warnings}
    assert '`draft: true"`' in said["bas.md"] and "la note reste privée" in said["bas.md"]
    assert "dit `draft: true]` dans la valeur d'un autre champ : la note reste privée" in said["html.md"]
    assert "texte.md" not in said


def test_properties_whose_reader_key_yaml_reads_into_another_fields_value_leave_the_note_out(note_writer):
    """`x: "a` U+2028 `draft: true"` in the properties: PyYAML reads one text and the note was
    served, where Obsidian's YAML refuses the properties and the plugin says the note left out.
    Left out, the line named; indented, the line is the value's text."""
    note_writer("plie.md", 'visibility: public\nx: "a\u2028draft: true"', "Corps.")
    note_writer("texte.md", 'visibility: public\nx: "a\n  draft: true"', "Corps.")
    vault = load_vault(note_writer.root)
    assert list(vault.notes) == ["texte.md"] and vault.notes["texte.md"].public
    assert [(e.path, e.message) for e in vault.errors] == [
        (
            "plie.md",
            "propriétés YAML invalides : la ligne `draft: true\"` continue la valeur d'un champ plus haut, un guillemet ou un crochet "
            "resté ouvert, où YAML la lit comme du texte, pas comme un champ : fermez-le, ou indentez la ligne si elle en fait partie",
        )
    ]


def test_the_shared_visibility_cases():
    """shared-protocol/cases/visibility.json: the plugin's « Tester cette note » says why a note
    is private on its own, and runs the same cases (obsidian-plugin/tests/noteTest.test.ts); a
    `left_out` case is a note the daemon does not load at all, which the plugin says so."""
    import json
    from pathlib import Path

    import yaml

    cases = json.loads((Path(__file__).resolve().parents[2] / "shared-protocol" / "cases" / "visibility.json").read_text(encoding="utf-8"))["cases"]

    def verdict(case: dict) -> bool | str:  # a case's `text` is the note as written (a frontmatter after blank lines)
        raw = case.get("text") or f"---\n{yaml.safe_dump(case['frontmatter'], allow_unicode=True)}---\nx"
        try:
            return parse_note("n.md", raw.encode(), mtime_ns=0, options=VaultOptions(default_public=case["default_public"])).public
        except ValueError:  # a note the daemon cannot load: no visitor sees it
            return "left out"

    assert [verdict(case) for case in cases] == ["left out" if case.get("left_out") else case["public"] for case in cases]


@pytest.mark.parametrize(
    ("header", "key"),
    [
        ('publish: false\n"publish": true', "publish"),  # a key quoted, as JSON writes it: YAML keeps the yes
        ("draft: true\n'draft': false", "draft"),
        ('dg-publish: false\n"dg-publis\\x68": true', "dg-publish"),  # a key escaped
        ("hidden: true\n? hidden\n: false", "hidden"),  # a key written as YAML's explicit key
        ("{published: false, published: true}", "published"),  # a flow mapping
        ("  private: true\n  private: false", "private"),  # the whole frontmatter indented
        ('publish: true\n"publish": false', "publish"),  # the no last: private already, never a word
        ("draft: false\ndraft: true", "draft"),  # two lines: « seul le dernier compte » was said
    ],
)
def test_a_publish_or_draft_written_twice_in_any_yaml_form_keeps_the_note_private(note_writer, header, key):
    """`publish: false` (or `draft: true`), then the same key quoted, escaped, explicit, in a flow
    mapping or indented, saying the opposite: YAML keeps the last, so a note its author kept off
    the site first reached every visitor, without a word (a line that starts `publish:` was the
    only form counted, and said « seul le dernier compte »). As `visibility` written twice: the
    note stays private, and `grasbot check` says so, whichever value comes last."""
    note_writer("prive/deux-fois.md", header, "Le code zorglub du coffre.")
    note_writer("public.md", "visibility: public", "Le coffre du jardin.")
    vault = load_vault(note_writer.root, VaultOptions(default_public=True))
    assert not vault.notes["prive/deux-fois.md"].public
    assert messages(vault.warnings, "prive/deux-fois.md") == [f"`{key}` est donné plus d'une fois : la note reste privée"]
    bot = make_bot(note_writer.root, default_visibility="public")
    assert [s.path for s in bot.search("zorglub coffre").sources] == ["public.md"]


@pytest.mark.parametrize(
    ("header", "key"),
    [
        # YAML's merge keys: the spec and js-yaml (Obsidian's) read the first mapping's, PyYAML the last's
        ("<<: [{visibility: private}, {visibility: public}]", "visibility"),
        ("prive: &p {visibility: private}\nouvert: &o {visibility: public}\n<<: [*p, *o]", "visibility"),
        # given as a field and by a merge: the field wins in both readers, the author wrote private too
        ("visibility: public\n<<: {visibility: private}", "visibility"),
        ("base: &b {visibility: private}\nvisibility: public\n<<: *b", "visibility"),
        ("publish: true\n<<: {publish: false}\nvisibility: public", "publish"),
        ("<<: [{draft: true}, {draft: false}]\nvisibility: public", "draft"),
        ("<<: {<<: {hidden: true}, hidden: false}\nvisibility: public", "hidden"),  # a merge within a merge
    ],
)
def test_a_visibility_given_again_by_a_yaml_merge_key_keeps_the_note_private(note_writer, header, key):
    """`<<: [{visibility: private}, {visibility: public}]`: YAML's merge key takes the first
    mapping's value (its spec, and js-yaml, which Obsidian reads properties with), PyYAML the
    last's, so the note Obsidian showed private reached every visitor. A field that says who
    reads a note, given more than once through merge keys or beside them, is given twice: the
    note stays private, and `grasbot check` says so."""
    note_writer("prive/fusion.md", header, "Le code zorglub du coffre.")
    note_writer("public.md", "visibility: public", "Le coffre du jardin.")
    note_writer("fusion-seule.md", "base: &b {visibility: public}\n<<: *b", "Une fusion qui le dit une fois.")
    vault = load_vault(note_writer.root, VaultOptions(default_public=True))
    assert not vault.notes["prive/fusion.md"].public
    assert messages(vault.warnings, "prive/fusion.md") == [f"`{key}` est donné plus d'une fois : la note reste privée"]
    assert vault.notes["fusion-seule.md"].public and messages(vault.warnings, "fusion-seule.md") == []
    bot = make_bot(note_writer.root, default_visibility="public")
    assert [s.path for s in bot.search("zorglub coffre").sources] == ["public.md"]


def test_a_course_of_unclosed_html_links_is_read_once():
    """An HTML course's `<a href="…">` that no `</a>` follows was scanned to the note's end from
    each of them: 100 KB of them took 30 s of a load, and as long again to cut into passages."""
    from grasbot.retrieval.sections import cut_note

    examples = '<a href="page.html">' * 8_000  # 160 KB, none closed
    raw = f'Voir <a href="Autre.md">la note</a> et <a href="prive/Zorglub.md">le dossier</a>.\n\n{examples}\n'
    note = parse_note("cours/html.md", raw.encode(), mtime_ns=0, options=VaultOptions(default_public=True))
    assert [(link.target, link.display) for link in note.links] == [("cours/Autre.md", "la note"), ("cours/prive/Zorglub.md", "le dossier")]
    shown = rewrite_links(note.body, lambda target: target == "cours/Autre.md", "cours/html.md")
    assert shown == f"Voir la note et le dossier.\n\n{examples}\n"
    pieces = [note.body[start:end] for start, end, _ in cut_note(note.body)[1]]
    assert pieces[0] == raw.split("\n")[0] and "".join(pieces[1:]) == examples  # no link to keep whole among the examples


def test_a_course_of_html_tags_written_without_their_end_is_read_once():
    """« La balise <a » written in prose opens no link: from each of them the pattern looked for
    an href up to the next `>`, here the end of the note: 20,000 of them (720 KB) took nine and a
    half minutes to load. A link written before them is still read, and their text is kept."""
    prose = "La balise <a ouvre un lien, #balise\n" * 20_000
    raw = f'Voir <a href="Autre.md">la note</a>.\n\n{prose}'
    note = parse_note("cours/html.md", raw.encode(), mtime_ns=0, options=VaultOptions(default_public=True))
    assert [(link.target, link.display) for link in note.links] == [("cours/Autre.md", "la note")]
    assert note.tags == ("balise",)
    assert rewrite_links(note.body, lambda target: True, "cours/html.md") == f"Voir la note.\n\n{prose}"


_HTML_BEFORE_SKIP = re.compile(_HTML_LINK.pattern.removesuffix(r"|<a\s[^>]*"), re.IGNORECASE | re.DOTALL)


@settings(max_examples=2_000, deadline=None)
@given(st.lists(st.sampled_from(["<a ", "<A\t", " ", "\n", "href=", 'href="x.md"', "'y.md'", "z.md", ">", "</a>", "<", '"', "lien"]), max_size=14).map("".join))
def test_a_tag_that_is_no_link_is_skipped_without_changing_the_links_read(text):
    """The links `_HTML_LINK` reads, and where, are those it read before it skipped a `<a ` that
    is no link up to the next `>`; what its readers leave of the text is the same too."""

    def read(pattern):
        links = [(m.span(), m.groups()) for m in pattern.finditer(text) if m.group(4) is not None]
        return links, pattern.sub(lambda m: m.group(0) if m.group(4) is None else " ", text)

    assert _HTML_BEFORE_SKIP.pattern != _HTML_LINK.pattern
    assert read(_HTML_LINK) == read(_HTML_BEFORE_SKIP)


def test_a_fragment_padded_with_spaces_is_read_once():
    """`[a](x.md#` then 200,000 spaces and no `)` is no link: from each space the pattern read
    the rest of them again to see whether a `)` or a title followed (over three minutes). A
    link before it, and a fragment padded with spaces before its title, are still read."""
    raw = 'Voir [la note](Autre.md) et [la recette](Recette.md#Pâte   "titre").\n\n[a](x.md#' + " " * 200_000 + "y\n"
    note = parse_note("cours/liens.md", raw.encode(), mtime_ns=0, options=VaultOptions(default_public=True))
    assert [(link.target, link.display) for link in note.links] == [
        ("cours/Autre.md", "la note"),
        ("cours/Recette.md", "la recette"),
    ]


# `_MD_LINK` before a fragment's end was kept off a space another space follows.
_MD_BEFORE_FRAGMENT = re.compile(
    r"(!?)\[((?:[^\[\]]|\[[^\[\]]*\])*)\]"
    r"\(\s*(<[^<>\n]*>|(?:[^()<>\n]|\([^()<>\n]*\))+?\.md(?:#[^()\n]*)?(?=\s*\)|\s+[\"'(])|(?:[^\s()<>]|\([^\s()]*\))+)"
    r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^()]*\)))?\s*\)",
    re.IGNORECASE,
)
_MD_PIECES = ["[a](", "![b](", "](", "[", "]", "x.md", ".MD", "#", "#s", " ", "  ", "\t", "\u00a0", "\n", "(", ")"]
_MD_PIECES += ['"t"', "'t'", "(t)", '"', "'", "<", ">", "y"]


@settings(max_examples=3_000, deadline=None)
@given(st.lists(st.sampled_from(_MD_PIECES), max_size=16).map("".join))
def test_a_fragment_kept_off_its_padding_reads_the_same_links(text):
    """The Markdown links read, where, with which target, label and title, and what a reader
    leaves of the text, are those of the pattern before a fragment stopped ending on padding."""

    def read(pattern):
        return [(m.span(), m.groups()) for m in pattern.finditer(text)], pattern.sub("|", text)

    assert _MD_BEFORE_FRAGMENT.pattern != _MD_LINK.pattern
    assert read(_MD_LINK) == read(_MD_BEFORE_FRAGMENT)


# `_MD_LINK` before a `.md#` that ended no link made its path read on past its fragment.
_MD_BEFORE_FRAGMENT_SKIP = re.compile(
    r"(!?)\[((?:[^\[\]]|\[[^\[\]]*\])*)\]"
    r"\(\s*(<[^<>\n]*>|(?:[^()<>\n]|\([^()<>\n]*\))+?\.md(?:#[^()\n]*(?![^\S\n]\s))?(?=\s*\)|\s+[\"'(])|(?:[^\s()<>]|\([^\s()]*\))+)"
    r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^()]*\)))?\s*\)",
    re.IGNORECASE,
)
_MD_PATH_PIECES = _MD_PIECES + [".md#", "x.md#", ".Md#y", "a.md#b.md", "(a.md#)", ".m", "d"]


@settings(max_examples=5_000, deadline=None)
@given(st.lists(st.sampled_from(_MD_PATH_PIECES), max_size=18).map("".join))
def test_a_path_read_past_a_fragment_reads_the_same_links(text):
    """The Markdown links read, where, with which target, label and title, and what a reader
    leaves of the text, are those of the pattern before a path read past a failed fragment."""

    def read(pattern):
        return [(m.span(), m.groups()) for m in pattern.finditer(text)], pattern.sub("|", text)

    assert _MD_BEFORE_FRAGMENT_SKIP.pattern != _MD_LINK.pattern
    assert read(_MD_LINK) == read(_MD_BEFORE_FRAGMENT_SKIP)


def test_a_path_of_fragments_that_ends_no_link_is_read_once():
    """`[a](` then `x.md#` 40,000 times (200 KB) is no link: from each `.md#` the pattern read
    the rest of the line as its fragment (4,000 of them: two seconds; these, over three
    minutes). A link on the next line is still read, with its fragment."""
    raw = "[a](" + "x.md#" * 40_000 + "\n\nVoir [la recette](Recette.md#Pâte.md#Cuisson) et [b](c.md#d (e)).\n"
    note = parse_note("cours/liens.md", raw.encode(), mtime_ns=0, options=VaultOptions(default_public=True))
    assert [(link.target, link.display) for link in note.links] == [
        ("cours/Recette.md", "la recette"),
        ("cours/c.md", "b"),
    ]


def test_a_date_in_published_publishes_the_note(note_writer):
    """Some themes name a post's date `published` (Astro's Fuwari: `published: 2024-05-01`):
    read as Jekyll's `published: false`, every such note of a vault served public by default
    went private, each with a warning. A date is the day it came out; a no still withholds it."""
    note_writer("date.md", "published: 2024-05-01", "Un billet.")
    note_writer("heure.md", "published: 2024-05-01T10:30:00", "Un autre billet.")
    note_writer("texte.md", 'published: "2024-05-01"', "Un troisième.")
    note_writer("non.md", "published: false", "Un brouillon.")
    note_writer("publish-date.md", "publish: 2024-05-01", "Obsidian Publish lit un oui ou un non.")
    vault = load_vault(note_writer.root, VaultOptions(default_public=True))
    assert {p for p, n in vault.notes.items() if n.public} == {"date.md", "heure.md", "texte.md"}
    assert {w.path for w in vault.warnings} == {"publish-date.md"}


#: The instant the scheduling tests below read as now: 7 December 2026, noon UTC.
NOW = datetime(2026, 12, 7, 12, tzinfo=UTC).timestamp()


def test_a_publish_date_to_come_or_an_expiry_date_past_keeps_a_note_private(note_writer, monkeypatch):
    """Hugo publishes no page whose publish date (`publishDate`, `publishdate`, `pubdate`, a
    date in `published`) is to come, nor one whose expiry date (`expiryDate`, `unpublishdate`)
    is past: such a note, scheduled by its author, reached visitors before its date and after
    it. Read at load, in any case of the key; a date that cannot be read keeps the note
    private, with a warning; a blank is no date, and `date:` (an event's, a meeting's in a
    vault) is not read as one."""
    monkeypatch.setattr(visibility, "now", lambda: NOW)
    fields = {
        "a-venir.md": "publishDate: 2027-01-01",
        "minuscule.md": "publishdate: 2027-01-01",
        "pubdate.md": "pubdate: 2026-12-07T13:30:00+01:00",
        "published.md": "published: 2027-01-01",
        "texte.md": 'PublishDate: "2027-01-01T09:00:00Z"',
        "passe.md": "publishDate: 2026-01-01",
        "expire.md": "expiryDate: 2026-12-01",
        "unpublish.md": "unpublishdate: 2026-12-07T11:00:00Z",
        "expirera.md": "expiryDate: 2027-06-01",
        "les-deux.md": "publishDate: 2026-01-01\nexpiryDate: 2027-01-01",
        "date.md": "date: 2027-01-01",
        "vide.md": "publishDate:",
        "illisible.md": "publishDate: bientôt",
        "liste.md": "expiryDate: [2027-01-01]",
        "mois.md": 'publishDate: "2026-13-01"',  # unquoted, YAML refuses it: the note is not loaded
    }
    vault = _fields_served_public(note_writer.root, fields)
    assert {p for p, n in vault.notes.items() if n.public} == {"passe.md", "expirera.md", "les-deux.md", "date.md", "vide.md"}
    assert {w.path: w.message for w in vault.warnings} == {
        "illisible.md": "`publishDate: bientôt` n'est pas une date (2026-05-01, 2026-05-01T09:00:00+02:00) : la note reste privée",
        "liste.md": "`expiryDate: [2027-01-01]` n'est pas une date (2026-05-01, 2026-05-01T09:00:00+02:00) : la note reste privée",
        "mois.md": '`publishDate: "2026-13-01"` n\'est pas une date (2026-05-01, 2026-05-01T09:00:00+02:00) : la note reste privée',
    }
    midnight = datetime(2027, 1, 1, tzinfo=UTC).timestamp()  # a date alone: its midnight, in UTC as Hugo reads it
    assert vault.notes["a-venir.md"].turns == midnight and vault.notes["les-deux.md"].turns == midnight
    assert vault.notes["texte.md"].turns == datetime(2027, 1, 1, 9, tzinfo=UTC).timestamp()
    assert vault.notes["passe.md"].turns is None and vault.notes["expire.md"].turns is None and vault.notes["date.md"].turns is None


def test_a_scheduled_note_is_read_again_once_its_date_is_past_though_its_file_is_unchanged(note_writer, monkeypatch):
    """A reload reuses a note whose file is unchanged, so a note whose publish date came stayed
    private, and one whose expiry date came stayed public, until its file changed: a note whose
    dates turned since it was read is read again."""
    now = [NOW]
    monkeypatch.setattr(visibility, "now", lambda: now[0])
    fields = {"billet.md": "publishDate: 2026-12-07T13:00:00Z", "offre.md": "expiryDate: 2026-12-07T13:00:00Z", "stable.md": "visibility: public"}
    vault = _fields_served_public(note_writer.root, fields)
    assert {p for p, n in vault.notes.items() if n.public} == {"offre.md", "stable.md"}
    again = load_vault(note_writer.root, VaultOptions(default_public=True), previous=vault)
    assert again.notes["billet.md"] is vault.notes["billet.md"]  # before its date: reused
    now[0] = NOW + 2 * 3600
    later = load_vault(note_writer.root, VaultOptions(default_public=True), previous=again)
    assert {p for p, n in later.notes.items() if n.public} == {"billet.md", "stable.md"}
    assert later.notes["stable.md"] is vault.notes["stable.md"]
    assert later.notes["billet.md"].turns is None and later.notes["offre.md"].turns is None


def test_a_time_without_its_offset_is_read_in_the_sites_time_zone(note_writer, monkeypatch):
    """Hugo reads a date alone, or a time without its offset, in its site's `timeZone` (UTC
    unless set); GrasBot read it where the daemon ran, so a note an author scheduled for 12:30
    in Paris reached visitors an hour early on a server in UTC, or a note expired at 12:30 an
    hour late. Read in GRASBOT_TIME_ZONE: UTC as Hugo by default, the site's zone when named;
    an offset written is read as written."""
    monkeypatch.setattr(visibility, "now", lambda: NOW)  # 12:00 UTC, 13:00 in Paris
    fields = {
        "billet.md": "publishDate: 2026-12-07T12:30:00",  # 11:30 UTC in Paris: published
        "offre.md": "expiryDate: 2026-12-07 12:30:00",  # a YAML timestamp: 11:30 UTC in Paris, expired
        "demain.md": "publishDate: 2026-12-08",  # midnight in Paris: 23:00 UTC the day before
        "decale.md": "publishDate: 2026-12-07T12:30:00+00:00",  # its offset: 12:30 UTC, whatever the zone
    }
    for name, header in fields.items():
        note_writer(name, header, "Mon texte.")
    in_utc = load_vault(note_writer.root, VaultOptions(default_public=True))
    in_paris = load_vault(note_writer.root, VaultOptions(default_public=True, time_zone="Europe/Paris"))
    assert {p for p, n in in_utc.notes.items() if n.public} == {"offre.md"}
    assert {p for p, n in in_paris.notes.items() if n.public} == {"billet.md"}
    assert in_paris.notes["demain.md"].turns == datetime(2026, 12, 7, 23, tzinfo=UTC).timestamp()
    assert in_utc.notes["demain.md"].turns == datetime(2026, 12, 8, tzinfo=UTC).timestamp()
    assert in_paris.notes["decale.md"].turns == in_utc.notes["decale.md"].turns == datetime(2026, 12, 7, 12, 30, tzinfo=UTC).timestamp()
    assert not in_utc.warnings and not in_paris.warnings


@pytest.fixture
def machine_zone(monkeypatch):
    """Sets the machine's zone (TZ) for a test, and sets it back after."""
    import time

    def set_zone(name: str) -> None:
        monkeypatch.setenv("TZ", name)
        time.tzset()

    yield set_zone
    monkeypatch.undo()
    time.tzset()


def test_a_time_zone_said_local_reads_dates_where_the_machine_is(note_writer, monkeypatch, machine_zone):
    """GRASBOT_TIME_ZONE=local keeps 3.5.0's reading: a time without its offset where the
    daemon runs, for a site built on this machine with Hugo's `timeZone = "Local"`."""
    machine_zone("America/New_York")
    monkeypatch.setattr(visibility, "now", lambda: NOW)  # 12:00 UTC, 07:00 in New York
    note_writer("billet.md", "publishDate: 2026-12-07T08:00:00", "Mon texte.")
    local = load_vault(note_writer.root, VaultOptions(default_public=True, time_zone="local"))
    assert not local.notes["billet.md"].public
    assert local.notes["billet.md"].turns == datetime(2026, 12, 7, 13, tzinfo=UTC).timestamp()
    assert load_vault(note_writer.root, VaultOptions(default_public=True)).notes["billet.md"].public


def test_a_time_the_clock_repeats_or_skips_is_read_as_hugo_reads_it(note_writer, monkeypatch):
    """At a change of clock, Hugo (Go's time.Date) reads a time without its offset at the
    offset the instant it gives falls under: 02:30 on Paris's autumn night is 01:30 UTC, the
    second 02:30; zoneinfo's first reading, 00:30 UTC, served the note an hour before Hugo
    published it (and the plugin, which reads it as Hugo, said it was not yet public)."""
    monkeypatch.setattr(visibility, "now", lambda: datetime(2026, 10, 25, 1, tzinfo=UTC).timestamp())
    note_writer("billet.md", "publishDate: 2026-10-25T02:30:00", "Mon texte.")
    note = load_vault(note_writer.root, VaultOptions(default_public=True, time_zone="Europe/Paris")).notes["billet.md"]
    assert not note.public
    assert note.turns == datetime(2026, 10, 25, 1, 30, tzinfo=UTC).timestamp()
    new_york = _vault.zone_named("America/New_York")
    assert visibility._instant("2026-03-08T02:30:00", new_york) == datetime(2026, 3, 8, 6, 30, tzinfo=UTC).timestamp()  # skipped: Hugo's 03:30 EDT
    assert visibility._instant("2026-11-01T01:30:00", new_york) == datetime(2026, 11, 1, 5, 30, tzinfo=UTC).timestamp()  # repeated: the first, as Hugo


@pytest.mark.parametrize("zone", ["Europe/Paris", "America/New_York", "Pacific/Kiritimati", "local"])
def test_a_date_at_either_end_of_the_calendar_is_read_in_any_zone(note_writer, zone):
    """« never expires » written `9999-12-31T23:59:59`, or Go's zero date `0001-01-01` (what a
    Hugo template prints for none), read in a zone: the instant a clock change is looked for
    around fell outside Python's calendar, and OverflowError stopped the whole vault's load;
    read where the machine is (`local`), the note was left out, « year 0 is out of range »
    its only word."""
    note_writer("toujours.md", 'visibility: public\nexpiryDate: "9999-12-31T23:59:59"', "Mon texte.")
    note_writer("zero.md", "visibility: public\npublishDate: 0001-01-01", "Mon texte.")
    vault = load_vault(note_writer.root, VaultOptions(time_zone=zone))
    assert [n.public for n in vault.notes.values()] == [True, True]
    assert not vault.warnings and not vault.errors


def test_the_shared_date_cases():
    """shared-protocol/cases/dates.json: the instant a note's date falls in each zone, which the
    plugin's « Tester cette note » works out on its own (obsidian-plugin/tests/noteTest.test.ts)."""
    import json

    cases = json.loads((Path(__file__).resolve().parents[2] / "shared-protocol" / "cases" / "dates.json").read_text(encoding="utf-8"))["cases"]
    got = [visibility._instant(case["value"], zone_named(case["zone"])) for case in cases]
    assert got == [None if case["utc"] is None else datetime.fromisoformat(case["utc"]).timestamp() for case in cases]


@pytest.mark.parametrize("name", ["Europe/Pari", "Mars/Olympus", "../etc/passwd", "+02:00"])
def test_a_time_zone_this_machine_does_not_know_stops_the_daemon_naming_it(name):
    """A zone misspelt was found at the first note with a date, or never: refused at start."""
    from grasbot._exceptions import ConfigError

    with pytest.raises(ConfigError, match=re.escape(f"GRASBOT_TIME_ZONE : {name!r} n'est pas un fuseau horaire")):
        Settings.load(env={"GRASBOT_TIME_ZONE": name})
    with pytest.raises((ValueError, KeyError)):
        VaultOptions(time_zone=name)
    assert Settings.load(env={"GRASBOT_TIME_ZONE": " Europe/Paris "}).time_zone == "Europe/Paris"
    assert Settings.load(env={"GRASBOT_TIME_ZONE": "local"}).time_zone == "local"
    assert Settings.load(env={}).time_zone == "UTC"


@pytest.mark.parametrize(
    ("name", "instead"),
    [
        ("posix/Europe/Paris", "Europe/Paris"),
        ("right/Europe/Paris", "Europe/Paris"),  # a clock that counts leap seconds, 27 s behind
        ("posix/UTC", "UTC"),
        ("Factory", None),
        ("localtime", None),
        ("posixrules", None),
    ],
)
def test_a_zone_file_that_is_no_iana_name_stops_the_daemon_naming_it(name, instead):
    """Python reads every file of the machine's zone database, Intl (where « Tester cette note »
    reads a note's dates, in the zone the owner's /health gives) IANA's names only: with
    `posix/Europe/Paris` the daemon read dates in Paris and the plugin read none, telling the
    author of every dated note that it was private. Refused at start, the name to write said."""
    from grasbot._exceptions import ConfigError

    if instead is None:
        said = "UTC, local ou un nom IANA comme Europe/Paris"
    else:
        said = f"écrivez {instead}"
    with pytest.raises(ConfigError, match=re.escape(f"GRASBOT_TIME_ZONE : {name!r} n'est pas un nom IANA")) as refused:
        Settings.load(env={"GRASBOT_TIME_ZONE": name})
    assert said in str(refused.value)
    with pytest.raises(ValueError):
        VaultOptions(time_zone=name)


@pytest.mark.parametrize(
    "header",
    [
        'visibility: private\n"visibility": public',  # a key quoted, as JSON writes it
        "visibility: private\n'visibility': public",
        'visibility: private\n"visibilit\\x79": public',  # a key escaped
        "visibility: private\n? visibility\n: public",  # a key written as YAML's explicit key
        "{visibility: private, visibility: public}",  # a flow mapping
        "  visibility: private\n  visibility: public",  # the whole frontmatter indented
    ],
)
def test_a_visibility_written_twice_in_any_yaml_form_keeps_the_note_private(note_writer, header):
    """`visibility: private`, then the same key quoted, escaped, explicit, in a flow mapping or
    indented, saying `public`: YAML keeps the last, and only a line that starts `visibility:`
    was counted, so the note its author marked private first reached every visitor, without a
    word. Written twice in any form, it stays private, and `grasbot check` says so."""
    note_writer("prive/deux-fois.md", header, "Le code zorglub du coffre.")
    note_writer("public.md", "visibility: public", "Le coffre du jardin.")
    vault = load_vault(note_writer.root, VaultOptions(default_public=True))
    assert not vault.notes["prive/deux-fois.md"].public
    assert "plus d'une fois" in messages(vault.warnings, "prive/deux-fois.md")[0]
    bot = make_bot(note_writer.root, default_visibility="public")
    assert [s.path for s in bot.search("zorglub coffre").sources] == ["public.md"]
