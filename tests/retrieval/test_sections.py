"""cut_note: a note cut along its headings, long sections in windows, blocks never split."""

from __future__ import annotations

import itertools
import re
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grasbot.retrieval import sections as _sections
from grasbot.retrieval.links import rewrite_links
from grasbot.retrieval.sections import OVERLAP, WHOLE_NOTE, WINDOW, cut_note, heading_path, site_headings


def filler(n: int, word: str = "paragraphe") -> str:
    """At least `n` characters (a paragraph more) of paragraphs of about 400 characters,
    separated by blank lines."""
    sentence = f"Une phrase de {word} qui remplit la note sans rien dire de particulier. "
    paragraph = (sentence * 5).strip()
    return "\n\n".join([paragraph] * (n // (len(paragraph) + 2) + 1))


def texts(body: str):
    sections = cut_note(body)
    return [(heading_path(sections, cut), body[cut[0] : cut[1]]) for cut in sections[1]]


def test_a_short_note_is_one_passage_whole():
    body = "# Titre\n\nUn paragraphe.\n\n## Partie\n\nUn autre."
    assert cut_note(body) == ((), ((0, len(body), -1),))
    assert len(filler(WHOLE_NOTE - 1000)) <= WHOLE_NOTE
    assert len(cut_note(filler(WHOLE_NOTE - 1000))[1]) == 1


def test_headings_and_nested_headings_give_each_section_its_path():
    body = "\n\n".join(
        [
            "Ce cours de cuisine commence par une introduction.",
            "# Recettes",
            filler(300, "recettes"),
            "## Entrées",
            filler(300, "entrées"),
            "## Desserts",
            "### Tarte aux pommes",
            "Des pommes, une pâte brisée, du sucre.",
            "### Crème brûlée ###",
            "Des jaunes d'œufs et de la crème.",
            "# Annexes",
            filler(WHOLE_NOTE, "annexes"),
        ]
    )
    got = texts(body)
    paths = [path for path, _ in got]
    assert paths[0] == ()  # the opening, before any heading
    assert got[0][1] == "Ce cours de cuisine commence par une introduction."
    assert ("Recettes",) in paths and ("Recettes", "Entrées") in paths
    assert ("Recettes", "Desserts", "Tarte aux pommes") in paths
    assert ("Recettes", "Desserts", "Crème brûlée") in paths  # closing #s are not part of the heading
    assert ("Recettes", "Desserts") not in paths  # a heading with nothing under it gives no passage
    tarte = dict(got)[("Recettes", "Desserts", "Tarte aux pommes")]
    assert tarte == "Des pommes, une pâte brisée, du sucre."  # the heading line itself is the path, not the text
    assert all(path == ("Annexes",) for path in paths[paths.index(("Annexes",)) :])


def test_a_long_section_is_windowed_at_paragraphs_with_a_little_overlap():
    body = "# Long\n\n" + filler(WHOLE_NOTE * 2)
    sections = cut_note(body)
    cuts = sections[1]
    assert len(cuts) > 5
    paragraphs = set(body.split("\n\n")[1:])
    for start, end, heading in cuts:
        assert heading == 0
        assert end - start <= WINDOW
        window = body[start:end]
        assert set(window.split("\n\n")) <= paragraphs  # whole paragraphs only
    for (s1, e1, _), (s2, e2, _) in itertools.pairwise(cuts):
        assert s1 < s2 < e1 < e2  # each window starts with its predecessor's last paragraph
        assert e1 - s2 <= OVERLAP
    assert cuts[0][0] == body.index("Une phrase") and cuts[-1][1] == len(body)


def test_code_fences_with_hashes_inside_are_neither_headings_nor_split():
    code = "```bash\n# une ligne de commentaire, pas un titre\n\n" + "echo bonjour\n" * 300 + "## toujours du code\n```"
    body = "# Shell\n\n" + filler(3000) + "\n\n" + code + "\n\n## Suite\n\n" + filler(WHOLE_NOTE)
    sections = cut_note(body)
    assert [text for _, text in sections[0]] == ["Shell", "Suite"]
    whole_code = [body[s:e] for s, e, _ in sections[1] if "echo bonjour" in body[s:e]]
    assert len(whole_code) == 1 and code in whole_code[0]  # longer than a window, and in one piece
    assert len(code) > WINDOW


def test_indented_code_and_code_in_a_list_item_are_not_split_at_their_blank_lines():
    """An indented code block runs on through its blank lines, as a fence in a list item does:
    a long section was cut at one of them, and a passage held half a program, the other half
    in the next one without its start."""
    program = "\n\n".join(f"    def etape_{i}():\n        return {i}  # une ligne de code assez longue pour compter" for i in range(30))
    listed = "1. Lancer :\n\n    ```python\n" + "\n\n".join(f"    print({i})  # une autre ligne de code longue pour compter" for i in range(30)) + "\n    ```"
    body = "# Code\n\n" + filler(1000) + "\n\nLe programme :\n\n" + program + "\n\n" + filler(1000) + "\n\n" + listed + "\n\n" + filler(WHOLE_NOTE)
    pieces = [body[s:e] for s, e, _ in cut_note(body)[1]]
    assert len(program) > WINDOW and len(listed) > WINDOW
    assert sum(program in p for p in pieces) == 1 and not any("etape_" in p and program not in p for p in pieces)
    assert sum(listed.removeprefix("1. Lancer :\n\n") in p for p in pieces) == 1 and not any("print(" in p and "```python" not in p for p in pieces)


def test_tildes_fence_and_longer_closing_fence():
    body = "~~~\n# pas un titre\n~~~~\n\n# Vrai titre\n\n" + filler(WHOLE_NOTE)
    assert [text for _, text in cut_note(body)[0]] == ["Vrai titre"]


def test_an_unclosed_fence_does_not_make_the_rest_of_the_note_one_block():
    """Read as `vault` reads code: a fence never closed is no fence. Read as code to the end, it
    made one block of the rest of a course that no window could split."""
    body = "# Cours\n\n```python\nprint('oubli de fermer')\n\n" + filler(3 * WINDOW) + "\n\n## Suite\n\n" + filler(WHOLE_NOTE)
    sections = cut_note(body)
    assert [text for _, text in sections[0]] == ["Cours", "Suite"]
    assert max(end - start for start, end, _ in sections[1]) <= WINDOW


def test_callouts_and_tables_are_never_split():
    callout = "> [!note] Une remarque\n" + "".join(f"> ligne {i} de la remarque, assez longue pour compter.\n" for i in range(60))
    callout += "> # pas un titre non plus"
    table = "| colonne | valeur |\n|---|---|\n" + "".join(f"| ligne {i} | {i * 7} unités de quelque chose |\n" for i in range(80))
    body = "# Notes\n\n" + filler(2000) + "\n\n" + callout + "\n\n" + filler(2000) + "\n\n" + table.strip() + "\n\n" + filler(WHOLE_NOTE)
    sections = cut_note(body)
    assert [text for _, text in sections[0]] == ["Notes"]
    pieces = [body[s:e] for s, e, _ in sections[1]]
    assert len(callout) > WINDOW and len(table) > WINDOW
    assert sum(callout in p for p in pieces) == 1
    assert sum(table.strip() in p for p in pieces) == 1
    assert not any("ligne 30 de la remarque" in p and "ligne 0 de la remarque" not in p for p in pieces)


def test_a_tag_at_a_line_start_is_not_a_heading():
    body = "#projet #cuisine\n\n# Titre\n\n" + filler(WHOLE_NOTE)
    sections = cut_note(body)
    assert [text for _, text in sections[0]] == ["Titre"]
    assert body[slice(*sections[1][0][:2])] == "#projet #cuisine"


def test_front_matter_is_not_part_of_the_body(note_writer):
    from support.bots import make_bot

    note_writer("Cours.md", "title: Cours\nvisibility: public\ntags: [a]", "# Partie\n\n" + filler(WHOLE_NOTE + 100))
    bot = make_bot(note_writer.root)
    note = bot.snapshot.vault.notes["Cours.md"]
    sections = bot.snapshot.analyses["Cours.md"].sections
    assert sections == cut_note(note.body)
    assert [text for _, text in sections[0]] == ["Partie"]
    assert not any("visibility" in note.body[s:e] for s, e, _ in sections[1])


def test_a_long_note_without_headings_is_windowed():
    body = filler(WHOLE_NOTE * 3)
    sections = cut_note(body)
    assert sections[0] == ()
    assert len(sections[1]) > 10 and all(h == -1 for _, _, h in sections[1])
    assert all(e - s <= WINDOW for s, e, _ in sections[1])


def test_a_paragraph_without_blank_lines_is_cut_at_sentences_never_inside_a_link():
    sentence = "Voir [[Projet très secret]] pour les détails de la suite. "
    body = "# Bloc\n\n" + sentence * (3 * WHOLE_NOTE // len(sentence))
    pieces = [body[s:e] for s, e, _ in cut_note(body)[1]]
    assert len(pieces) > 5
    for piece in pieces:
        assert len(piece) <= WINDOW
        assert piece.count("[[") == piece.count("]]")
        assert piece.endswith("suite.")


def test_a_one_megabyte_note():
    chapters = []
    for c in range(40):
        chapters.append(f"# Chapitre {c}\n\n" + filler(5000, f"chapitre{c}"))
        for s in range(5):
            chapters.append(f"## {c}.{s} Section\n\n" + filler(4000, f"section{c}x{s}"))
    body = "\n\n".join(chapters)
    assert len(body) > 1_000_000
    sections = cut_note(body)
    assert len(sections[0]) == 240
    cuts = sections[1]
    assert all(e - s <= WINDOW for s, e, _ in cuts)
    assert [c[0] for c in cuts] == sorted(c[0] for c in cuts)
    last = cuts[-1]
    assert heading_path(sections, last) == ("Chapitre 39", "39.4 Section")
    covered = set()
    for s, e, _ in cuts:
        covered.update(re.findall(r"section\d+x\d+|chapitre\d+", body[s:e]))
    assert covered == set(re.findall(r"section\d+x\d+|chapitre\d+", body))  # nothing left out


def test_bad_input_is_a_clear_error():
    with pytest.raises(TypeError, match="cut_note: the body must be a string, not bytes"):
        cut_note(b"# titre")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["# A", "## B", "### C", "```", "~~~", "> quote", "| t |", "", "texte [[lien]] fin.", "x" * 900]), max_size=60))
def test_cuts_are_ordered_inside_the_body_and_never_split_a_link(lines):
    body = "\n".join(lines) * 3
    sections = cut_note(body)
    for start, end, heading in sections[1]:
        assert 0 <= start < end <= len(body) or (start, end) == (0, len(body))
        assert -1 <= heading < len(sections[0])
        piece = body[start:end]
        assert piece.count("[[") == piece.count("]]") or len(body) <= WHOLE_NOTE


# Links to a private note in every syntax, their labels holding sentence ends and spaces where
# a hard-wrapping editor breaks lines.
PRIVATE_LINKS = [
    "[le dossier médical de M. Dupont](../prive/Zorglub.md)",
    "[voir le dossier. De M. Dupont](<../prive/Zorglub.md>)",
    "![le plan du terrain. Voir](../prive/Zorglub.md#Parcelles 'le plan')",
    '<a href="../prive/Zorglub.md">le dossier. De Dupont</a>',
    "[[prive/Zorglub|le dossier. Voir la suite]]",
    "<obsidian://open?vault=v&file=prive%2FZorglub>",
]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from(["Les abeilles butinent.", "la lavande du jardin", "puis le miel mûrit !", *PRIVATE_LINKS]), min_size=20, max_size=60),
    st.integers(min_value=30, max_value=200),
)
def test_no_cut_leaves_half_a_link_of_any_syntax(words, width):
    """A passage's links are rewritten for its reader in that passage alone: a cut inside a
    Markdown link's label (wrapped over lines, or holding a sentence end) left its tail,
    `](../prive/Zorglub.md)`, unread as a link, and a private note's path reached visitors."""
    paragraph = textwrap.fill(" ".join(words), width, break_long_words=False, break_on_hyphens=False)  # one block: cut at lines, sentences, spaces
    body = "# Le rucher\n\n" + "\n".join([paragraph] * (3 * WHOLE_NOTE // len(paragraph) + 1))
    hide = lambda target: False  # noqa: E731 - the reader sees no linked note
    assert "Zorglub" not in rewrite_links(body, hide, "pub/rucher.md")  # the guard: whole, every link is read
    pieces = [body[s:e] for s, e, _ in cut_note(body)[1]]
    assert len(pieces) > 5
    for piece in pieces:
        shown = rewrite_links(piece, hide, "pub/rucher.md")
        assert "Zorglub" not in shown and "prive" not in shown, piece


def test_setext_headings_start_sections_where_commonmark_and_obsidian_read_one():
    """A paragraph underlined with `===` (h1) or `---` (h2) is a heading (CommonMark 4.3); a
    `---` after a blank line, a list item or a quote is a rule (4.1), and nothing inside
    Obsidian's `$$` math or a code fence is a heading (« C_{MHA} » underlined with `=` in a
    formula, as a personal vault writes it)."""
    body = "\n\n".join(
        [
            "Recettes\n========",
            filler(3000, "intro"),
            "Les tartes\nde saison\n----------",
            filler(3000, "tartes"),
            "Une phrase.\n\n---",
            "- un point\n---",
            "> une citation\n---",
            "$$\nC_{MHA}\n=======\n\nO(n)\n=\n$$",
            "```\ncode\n---\n```",
            filler(3000, "fin"),
        ]
    )
    assert cut_note(body)[0] == ((1, "Recettes"), (2, "Les tartes de saison"))
    assert {path for path, _ in texts(body)} == {("Recettes",), ("Recettes", "Les tartes de saison")}


def test_a_heading_line_padded_with_spaces_is_read_once():
    """A heading whose line a generated table padded with spaces before its last word: from each
    space, the end of its text was looked for by reading every space after it, each way (120,000
    spaces took four and a half minutes to cut). Its text is still all of it."""
    body = "# Titre" + " " * 120_000 + "fin\n\nTexte.\n\n> # Cité" + "\t" * 120_000 + "fin ##\n"
    assert cut_note(body)[0] == ((1, "Titre" + " " * 120_000 + "fin"),)
    assert site_headings(body) == (("Titre" + " " * 120_000 + "fin", True), ("Cité" + "\t" * 120_000 + "fin", False))


_HEADING_AS_WRITTEN = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")  # before it was read once


@settings(max_examples=3_000, deadline=None)
@given(st.lists(st.sampled_from(["#", "##", " ", "  ", "\t", "a", "é", "\u00a0", "# ", " #", "\\#"]), max_size=12).map("".join))
def test_a_heading_reads_as_it_did_before_it_was_read_once(line):
    read = _sections._HEADING.match(line)
    before = _HEADING_AS_WRITTEN.match(line)
    assert (read and (read.span(), read.groups())) == (before and (before.span(), before.groups()))
