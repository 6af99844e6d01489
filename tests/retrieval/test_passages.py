"""A long note scores by its best passage; addresses in the text are not words."""

from __future__ import annotations

import pytest

from grasbot.retrieval.index import PASSAGE, passages_of
from support.bots import make_bot


def _filler(n: int, word: str = "jardinage") -> str:
    return " ".join(f"{word} arrosage{i % 7} semis{i % 11}" for i in range(n // 3))


def test_long_note_is_cut_into_passages_led_by_its_title(note_writer):
    note_writer("Cours complet.md", "visibility: public", _filler(3 * PASSAGE))
    bot = make_bot(note_writer.root)
    note = bot.snapshot.vault.notes["Cours complet.md"]
    passages = passages_of(note)
    assert len(passages) == 3
    for counts in passages:
        assert counts["cour"] == 2 and counts["complet"] == 2  # title and file name lead each passage
        assert sum(counts.values()) <= PASSAGE + 4


def test_words_scattered_over_a_huge_note_lose_to_a_short_note_about_them(note_writer):
    # The long course says « compost » and « lombric » once each, thousands of words apart;
    # the short note is about both.
    scattered = f"compost {_filler(6 * PASSAGE)} lombric {_filler(6 * PASSAGE, 'botanique')} compost lombric"
    note_writer("Cours de jardinage.md", "visibility: public", scattered)
    note_writer(
        "Lombricompostage.md",
        "visibility: public",
        "Le lombricompostage : des vers dans un bac, le compost mûrit vite. Un lombric "
        "mange la moitié de son poids par jour ; le compost obtenu nourrit le potager.",
    )
    for i in range(10):  # a vault's ordinary notes: the yardstick of a note's length for the words side by side
        note_writer(f"note{i}.md", "visibility: public", f"Note {i} sur la cuisine, le vélo et les voyages, courte comme la plupart.")
    bot = make_bot(note_writer.root)
    result = bot.search("compost lombric", audience="visitor")
    ranked = [s.path for s in result.sources]
    assert ranked[:2] == ["Lombricompostage.md", "Cours de jardinage.md"]
    short, long_ = result.query.bm25["Lombricompostage.md"], result.query.bm25["Cours de jardinage.md"]
    assert short > long_ > 0


def test_fast_path_equals_exhaustive_with_long_notes(note_writer):
    from grasbot.retrieval.search import search

    note_writer("Long.md", "visibility: public", "compost " + _filler(5 * PASSAGE) + " lombric semis2")
    note_writer("Court.md", "visibility: public", "compost lombric semis2 arrosage3")
    bot = make_bot(note_writer.root)
    index = bot.snapshot.index("visitor")
    for q in ("compost", "lombric semis2", "arrosage3 jardinage", "cours long"):
        fast = search(q, index, top_k=5, min_score=4)
        slow = search(q, index, top_k=5, min_score=4, exhaustive=True)
        assert [(s.path, s.score, s.reasons) for s in fast.sources] == [(s.path, s.score, s.reasons) for s in slow.sources]


def test_addresses_are_not_indexed(note_writer):
    note_writer("Liens.md", "visibility: public", "Voir https://exemple.org/python/guide et www.serpent.fr pour plus.")
    note_writer("Python.md", "visibility: public", "Python est un langage de programmation.")
    bot = make_bot(note_writer.root)
    analysis = bot.snapshot.analyses["Liens.md"]
    assert not {"python", "http", "exempl", "serpent", "guid"} & set(analysis.body)
    assert [s.path for s in bot.search("python", audience="visitor").sources] == ["Python.md"]


def test_a_link_across_a_blank_line_is_sent_whole_to_a_visitor(note_writer):
    """Blocks are cut at blank lines, and `[label](path)` read as a link even when its label
    holds one: the second half, `](../prive/Zorglub.md)`, was sent as it stands."""
    from grasbot.retrieval.sections import cut_note

    filler = "Les abeilles du rucher butinent la lavande du jardin. "
    first = filler * 24 + "Les hippocampes nagent, voir [le dossier"
    second = "médical de Dupont](../prive/Zorglub.md) et les mandragores poussent. " + filler * 24
    body = "# Le rucher\n\n" + "\n\n".join([first, second, *[filler * 24] * 8])
    note_writer("pub/rucher.md", "visibility: public", body)
    note_writer("prive/Zorglub.md", "visibility: private", "Le dossier médical.")
    cuts = cut_note(body)[1]
    link = body.index("[le dossier")
    assert any(link < end < body.index("Zorglub") for _, end, _ in cuts)  # the guard: a cut falls inside the link
    bot = make_bot(note_writer.root)
    result = bot.search("hippocampes et mandragores", audience="visitor")
    texts = [p.text for p in result.context if p.path == "pub/rucher.md"]
    assert any("hippocampes" in t for t in texts) and any("mandragores" in t for t in texts)
    assert not any("Zorglub" in t or "prive" in t or "](" in t for t in texts), texts


class _ReadCounts(dict):
    """A passage's stem counts that count how often a question reads them."""

    reads = 0

    def get(self, *args):
        _ReadCounts.reads += 1
        return super().get(*args)

    def __getitem__(self, key):
        _ReadCounts.reads += 1
        return super().__getitem__(key)


def test_a_long_question_reads_a_long_notes_passages_by_its_terms_not_each_passage_for_each_term(note_writer, monkeypatch):
    # A visitor's 500 characters of common words (60 terms) read each of a 1 MB course's
    # passages for each term: 150 ms a question. Scored term by term, a question reads only
    # the passages holding its terms, and scores each as the passage-by-passage sum did.
    from grasbot.retrieval import index as index_module

    words = [f"terme{chr(97 + i % 26)}{chr(97 + i // 26)}" for i in range(60)]
    body = " ".join(f"{words[i % 60]} {words[(i * 7) % 60]} arrosage{i % 13}" for i in range(80 * PASSAGE // 3))
    note_writer("Cours.md", "visibility: public", body)
    note_writer("Court.md", "visibility: public", "arrosage1 " + " ".join(words[:3]))
    made = index_module.passages_of
    monkeypatch.setattr(index_module, "passages_of", lambda *a: [_ReadCounts(c) for c in made(*a)])
    bot = make_bot(note_writer.root)
    index = bot.snapshot.index("visitor")
    index.bm25({"arrosage1"})  # the course's passages are read once, when it first scores
    _ReadCounts.reads = 0
    question = {index_module.tokens(w)[0] for w in words}
    scores = index.bm25(question)
    assert _ReadCounts.reads == 0  # was 80 passages × 60 terms
    idf = {t: index.idf(t) for t in question}
    passages = made(bot.snapshot.vault.notes["Cours.md"])
    avg = index.avg_length()
    expected = max(
        sum(idf[t] * c[t] * (index_module.K1 + 1.0) / (c[t] + index_module.length_norm(sum(c.values()), avg)) for t in idf if t in c) for c in passages
    )
    assert len(passages) >= 80 and expected > 0 and scores["Cours.md"] == pytest.approx(expected, rel=1e-12)


def test_code_reaches_the_reader_as_written_and_a_list_items_paragraph_is_no_code(note_writer):
    """A course on Obsidian writes its link syntax as code: `[[Nom de la note]]` was sent to the
    LLM as « `Nom de la note` », the brackets it was about gone, and a fence's `[lien](Autre.md)`
    as « lien ». A list item's indented paragraph is prose, whose link to a private note still
    loses its name."""
    body = (
        "Pour créer un lien, on écrit `[[Nom de la note]]` ou `[texte](Autre.md)` ; voir [[Markdown]].\n\n"
        "```\n[[Une note]] et [lien](Autre.md)\n```\n\n"
        "    ![[schema.png]] [[Autre]]\n\n"
        "- Une étape du cours\n\n    suite de l'étape, voir [[Prive]] ici\n"
    )
    note_writer("Obsidian.md", "visibility: public", body)
    note_writer("Markdown.md", "visibility: public", "La syntaxe Markdown.")
    note_writer("Autre.md", "visibility: public", "Une autre note.")
    note_writer("Prive.md", "visibility: private", "Un journal.")
    bot = make_bot(note_writer.root)
    [passage] = [p for p in bot.search("créer un lien obsidian", audience="visitor").context if p.path == "Obsidian.md"]
    assert passage.text == (
        "Pour créer un lien, on écrit `[[Nom de la note]]` ou `[texte](Autre.md)` ; voir Markdown.\n\n"
        "```\n[[Une note]] et [lien](Autre.md)\n```\n\n"
        "    ![[schema.png]] [[Autre]]\n\n"
        "- Une étape du cours\n\n    suite de l'étape, voir  ici"
    )


def test_a_long_notes_window_that_opens_on_a_list_items_paragraph_reads_it_as_the_note_does(note_writer):
    """Read alone, a window that starts with a list item's indented paragraph would take it for
    code, and leave its link to a private note as written: the code is read on the whole note."""
    filler = "Les abeilles du rucher butinent la lavande du jardin. "
    item = "    Les hippocampes nagent " + filler * 26 + "voir [[Zorglub]] pour la suite des travaux du rucher."
    body = "# Le rucher\n\n- Première étape du rucher.\n\n" + item + "\n\n" + "\n\n".join([filler * 24] * 8)
    note_writer("rucher.md", "visibility: public", body)
    note_writer("Zorglub.md", "visibility: private", "Le dossier médical.")
    bot = make_bot(note_writer.root)
    texts = [p.text for p in bot.search("hippocampes", audience="visitor").context if p.path == "rucher.md"]
    assert any(t.startswith("Les hippocampes nagent") for t in texts), texts  # the guard: a window opens on the paragraph
    assert not any("Zorglub" in t for t in texts), texts


def test_an_address_in_a_links_title_leaves_no_private_path_in_the_index(note_writer):
    """Addresses were dropped before links were read: the one in the title took the link's
    closing `")`, so `prive/Zorglub.md` stayed as text and a visitor asking « zorglub »
    found the public note, learning that a note of that name is linked from it."""
    note_writer("pub/rucher.md", "visibility: public", 'Les abeilles du rucher, voir [le carnet](../prive/Zorglub.md "https://exemple.org/carnet").')
    note_writer("prive/Zorglub.md", "visibility: private", "Le dossier médical.")
    bot = make_bot(note_writer.root)
    assert [s.path for s in bot.search("abeilles du rucher", audience="visitor").sources] == ["pub/rucher.md"]  # the guard
    assert bot.search("zorglub prive", audience="visitor").sources == ()
    assert "zorglub" not in bot.snapshot.analyses["pub/rucher.md"].body
