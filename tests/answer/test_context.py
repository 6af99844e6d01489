"""What reaches the LLM: the sources' passages, chosen by relevance and sharing the budget."""

from __future__ import annotations

import os
import re
import unicodedata

import pytest

from grasbot._config import Settings
from grasbot._engine import build_snapshot
from grasbot.answer.fallback import extractive_answer
from grasbot.answer.passages import CUT_MARK, anchor_of, choose_passages, unique_anchors
from grasbot.answer.prompt import build_prompt
from grasbot.retrieval.sections import WHOLE_NOTE, cut_note
from support.bots import BUNDLED_VAULT, make_bot

# Words no other section of the course uses: each chapter is about its own subject.
SUBJECTS = [
    ("semis", "graines terreau godets germination"),
    ("arrosage", "goutte-à-goutte paillage évaporation tuyau"),
    ("compost", "lombrics déchets fermentation bac"),
    ("taille", "sécateur bourgeons rameaux cicatrisation"),
    ("greffe", "porte-greffe greffon fente ligature"),
    ("potager", "planches rotation légumes buttes"),
    ("verger", "pommiers poiriers pollinisation fruits"),
    ("serre", "chauffage tablettes arrosoir semis"),
    ("maladies", "mildiou oïdium rouille champignons"),
    ("ravageurs", "pucerons coccinelles chenilles filets"),
    ("outils", "bêche grelinette râteau binette"),
    ("sol", "argile limon humus acidité"),
]

# Sentences that answer, each in one chapter's later section, far into the note.
ANSWERS = {
    "greffe": "Une greffe en écusson se fait en été, quand l'écorce se soulève facilement du bois.",
    "serre": "La condensation sur le vitrage se combat en ouvrant les ouvrants deux heures chaque matin.",
    "ravageurs": "Les limaces se piègent avec une planche retournée, relevée chaque matin à la fraîche.",
}


def chapter(number: int, subject: str, words: str) -> str:
    filler = f"Ce paragraphe parle de {subject} avec {words}, et le répète pour remplir le chapitre. "
    parts = [f"## Chapitre {number} — {subject.capitalize()}", (filler * 4).strip()]
    for s in range(4):
        parts += [f"### {number}.{s} Pratique {s} : {subject}", "\n\n".join([(filler * 3).strip()] * 2)]
    if subject in ANSWERS:
        parts += [f"### {number}.9 Le bon moment pour {subject}", f"{(filler * 2).strip()}\n\n{ANSWERS[subject]}"]
    return "\n\n".join(parts)


COURSE = "# Cours de jardinage\n\nUn cours complet de jardinage, chapitre par chapitre.\n\n" + "\n\n".join(
    chapter(i, subject, words) for i, (subject, words) in enumerate(SUBJECTS, 1)
)


@pytest.fixture
def garden(note_writer):
    note_writer("cours/Jardinage.md", "title: Cours de jardinage\ntype: cours\nvisibility: public", COURSE)
    note_writer(
        "notes/greffe.md",
        "title: Greffer un arbre\nvisibility: public",
        "Greffer, c'est unir un greffon à un porte-greffe. Voir le [[Jardinage|cours de jardinage]].",
    )
    note_writer("notes/cuisine.md", "title: Cuisine\nvisibility: public", "Une tarte aux pommes du verger, et rien de plus.")
    return note_writer.root


def garden_bot(root, **settings):
    """The course's questions name no title, alias or tag: their notes score by their text alone."""
    return make_bot(root, search_min_score=1.0, **settings)


def context_of(bot, q, **kw):
    result = bot.search(q, audience="visitor", **kw)
    return result, result.context


def test_the_course_is_long_and_its_answers_deep():
    assert len(COURSE) > 3 * WHOLE_NOTE
    for sentence in ANSWERS.values():
        assert COURSE.index(sentence) > 20_000 or sentence == ANSWERS["greffe"]


@pytest.mark.parametrize(
    "question, subject",
    [
        ("Quand faire une greffe en écusson ?", "greffe"),
        ("Comment combattre la condensation sur le vitrage de la serre ?", "serre"),
        ("Comment piéger les limaces ?", "ravageurs"),
    ],
)
def test_the_answering_passage_reaches_the_prompt(garden, question, subject):
    bot = garden_bot(garden, url_map="cours=/cours/{slug}")
    result, passages = context_of(bot, question)
    assert result.grounded
    assert result.sources[0].path in ("cours/Jardinage.md", "notes/greffe.md")
    prompt = build_prompt(question, passages, grounded=result.grounded)
    user = prompt.messages[-1]["content"]
    assert ANSWERS[subject] in user
    number = [s for s, _ in SUBJECTS].index(subject) + 1
    label = f"### [jardinage] Cours de jardinage › Chapitre {number} — {subject.capitalize()} › {number}.9 Le bon moment pour {subject}\n"
    assert label in user  # slug and heading path name the passage; the title is said once
    sources = {s.path: s for s in result.sources}
    course = sources["cours/Jardinage.md"].to_dict()["passages"]
    anchor = f"{number}-9-le-bon-moment-pour-{subject}"
    assert {
        "heading": ["Cours de jardinage", f"Chapitre {number} — {subject.capitalize()}", f"{number}.9 Le bon moment pour {subject}"],
        "anchor": anchor,
        "url": f"/cours/jardinage#{anchor}",
        "chars": len(f"{(chapter_filler(subject) * 2).strip()}\n\n{ANSWERS[subject]}"),
    } in course
    # ... and the extractive fallback quotes it
    fallback = extractive_answer(question, passages, bot.snapshot.index("visitor"), grounded=True)
    assert f"- {ANSWERS[subject]} [jardinage]" in fallback.split("\n")


def chapter_filler(subject: str) -> str:
    words = dict(SUBJECTS)[subject]
    return f"Ce paragraphe parle de {subject} avec {words}, et le répète pour remplir le chapitre. "


def test_budget_is_shared_by_relevance_and_a_weak_source_gives_none(garden):
    bot = make_bot(garden)
    index = bot.snapshot.index("visitor")
    sources = [("cours/Jardinage.md", None), ("notes/cuisine.md", None), ("notes/greffe.md", None)]
    question = "greffe en écusson porte-greffe greffon"
    passages = choose_passages(question, sources, index, budget=4_000)
    by_note = {}
    for p in passages:
        by_note.setdefault(p.path, []).append(p)
    assert "notes/cuisine.md" not in by_note  # shares no word with the question
    assert len(by_note["cours/Jardinage.md"]) >= 3  # a long note gives several passages
    assert all("greffe" in " ".join(p.heading).lower() or p.opening for p in by_note["cours/Jardinage.md"])
    assert [p.whole for p in by_note["notes/greffe.md"]] == [True]  # the short note, whole
    assert sum(len(p.text) for p in passages) <= 4_000
    assert list(dict.fromkeys(p.path for p in passages)) == [p for p, _ in sources if p in by_note]  # in search's order
    starts = [p.start for p in by_note["cours/Jardinage.md"]]
    assert starts == sorted(starts)  # a note's passages in the note's order
    # the course's short opening comes along
    assert by_note["cours/Jardinage.md"][0].opening
    assert by_note["cours/Jardinage.md"][0].text == "Un cours complet de jardinage, chapitre par chapitre."
    # a smaller budget keeps the best of them, and no more than the budget
    less = choose_passages(question, sources, index, budget=2_000)
    assert len([p for p in less if p.path == "cours/Jardinage.md"]) < len(by_note["cours/Jardinage.md"])
    assert any("Le bon moment pour greffe" in p.heading[-1] for p in less)  # the best passage
    assert sum(len(p.text) for p in less) <= 2_000


def test_the_best_source_gives_something_even_when_no_passage_matches(garden):
    bot = make_bot(garden)
    index = bot.snapshot.index("visitor")
    passages = choose_passages("zzz inconnu", [("cours/Jardinage.md", None)], index, budget=12_000)
    assert len(passages) == 1
    assert passages[0].text.startswith("Un cours complet de jardinage")


def test_a_passage_longer_than_the_budget_is_cut_and_says_so(note_writer):
    body = "Une phrase sur les réseaux de neurones et leur entraînement. " * 120  # short enough to be whole
    note_writer("reseaux.md", "title: Réseaux\nvisibility: public", body)
    bot = make_bot(note_writer.root)
    (passage,) = choose_passages("réseaux", [("reseaux.md", None)], bot.snapshot.index("visitor"), budget=1_000)
    kept, total = passage.cut
    assert total == len(body.strip()) and kept <= 1_000 and kept >= 700
    assert passage.text == body.strip()[:kept] + CUT_MARK.format(kept=kept, total=total)
    assert passage.text[:kept].endswith("entraînement.")  # at a sentence end
    assert not passage.whole


def test_short_notes_of_the_bundled_vault_find_their_note_first_and_go_whole():
    bot = make_bot(BUNDLED_VAULT)
    checked = 0
    for path, note in bot.snapshot.vault.notes.items():
        audience = "visitor" if note.public else "owner"
        index = bot.snapshot.index(audience)
        for question in note.answers:
            result = bot.search(question, audience=audience)
            assert result.sources[0].path == path, question
            prompt = build_prompt(question, result.context, grounded=result.grounded)
            assert index.readable_body(path).strip() in prompt.messages[-1]["content"], question
            assert result.sources[0].passages[0].whole
            checked += 1
    assert checked >= 40


@pytest.mark.parametrize(
    "form, expected",
    [
        ("slug", "3-2-la-creme-brulee-a-l-ancienne"),
        ("github", "32-la-crème-brûlée-à-lancienne"),
        ("text", "3.2%20La%20cr%C3%A8me%20br%C3%BBl%C3%A9e%20%C3%A0%20l%E2%80%99ancienne"),
    ],
)
def test_anchor_forms(form, expected):
    assert anchor_of("3.2 La crème brûlée à l’ancienne", form) == expected


@pytest.mark.parametrize("form, first, second", [("slug", "recette", "recette-1"), ("github", "recette", "recette-1"), ("none", None, None)])
def test_anchors_of_repeated_headings_and_the_setting(note_writer, form, first, second):
    body = "\n\n".join(f"## Recette\n\nLa recette numéro {i} parle de {word}. " * 1 + ("Du texte. " * 400) for i, word in ((1, "pommes"), (2, "poires")))
    note_writer("recettes.md", "title: Recettes\ntype: projet\nvisibility: public", body)
    bot = make_bot(note_writer.root, anchors=form)
    index = bot.snapshot.index("visitor")
    for word, anchor in (("pommes", first), ("poires", second)):
        passages = choose_passages(word, [("recettes.md", "/portfolio/recettes")], index, budget=2_000, anchors=form)
        found = [p for p in passages if word in p.text]
        assert found and found[0].anchor == anchor
        assert found[0].url == (f"/portfolio/recettes#{anchor}" if anchor else "/portfolio/recettes")


def test_a_github_anchor_drops_a_no_break_space_and_keeps_an_nfd_accent(note_writer):
    """GitHub's anchor of « Qui suis-je ? » written with French typography's no-break space is
    qui-suis-je (it drops U+00A0 and U+202F), and of a heading whose accents are apart (NFD)
    keeps them: the daemon linked to qui-suis-je- and elephant, anchors no page has."""
    nfd = unicodedata.normalize("NFD", "Éléphant")
    cases = (("pommes", "qui-suis-je", "Qui suis-je\u00a0?"), ("poires", nfd.lower(), nfd), ("prunes", "plan-la-suite", "Plan\u202f: la suite"))
    body = "".join(f"## {heading}\n\nLa section parle de {word}. " + "Du texte. " * 400 + "\n\n" for word, _, heading in cases)
    note_writer("recettes.md", "title: Recettes\ntype: projet\nvisibility: public", body)
    bot = make_bot(note_writer.root, anchors="github")
    index = bot.snapshot.index("visitor")
    for word, anchor, heading in cases:
        found = [p for p in choose_passages(word, [("recettes.md", "/r")], index, budget=2_000, anchors="github") if word in p.text]
        assert found and (found[0].anchor, found[0].heading) == (anchor, (heading,))


@pytest.mark.parametrize(
    "heading, expected",
    [
        # github-slugger's own fixtures (test/fixtures.json)
        ("😄 unicode emoji", "-unicode-emoji"),
        ("I ♥ unicode", "i--unicode"),
        ("en–dash", "endash"),
        ("apostrophe’s should be trimmed", "apostrophes-should-be-trimmed"),
        ("exchange.bind_headers(exchange, routing [, bindCallback])", "exchangebind_headersexchange-routing--bindcallback"),
        # its rule (script/generate-regex.mjs) on French headings: marks are kept, the emoji's
        # variation selector too; other numbers (², ₂) are stripped; Alphabetic symbols kept
        ("⚠️ Attention", "\ufe0f-attention"),
        ("Cre\u0300me bru\u0302le\u0301e", "cre\u0300me-bru\u0302le\u0301e"),
        ("Surface en m² et CO₂", "surface-en-m-et-co"),
        ("« Citation » : l’été", "-citation---lété"),
        ("Plan Ⓐ", "plan-ⓐ"),
    ],
)
def test_github_anchors_follow_github_slugger(heading, expected):
    """GitHub and Quartz (rehype-slug) make a heading's id with github-slugger: lower case,
    then every character of the categories its generate-regex.mjs strips is dropped
    (Other_Number, punctuation but `-` and Connector_Punctuation, Symbol, Separator but the
    space, Control, Format, Private_Use, Unassigned; Alphabetic code points kept), and each
    space becomes a hyphen."""
    assert anchor_of(heading, "github") == expected


def test_repeated_anchors_are_numbered_as_github_slugger_numbers_them():
    """github-slugger's fixtures (Repetition, More repetition): a slug already given gets the
    first -N not yet given, a heading that reads « echo 1 » included."""
    assert unique_anchors(["echo", "echo", "echo-1", "echo-1", "echo"], "github") == ["echo", "echo-1", "echo-1-1", "echo-1-2", "echo-2"]
    assert unique_anchors(["foxtrot-1", "foxtrot", "foxtrot"], "github") == ["foxtrot-1", "foxtrot", "foxtrot-2"]
    assert unique_anchors(["recette", "recette"], "text") == ["recette", "recette"]  # Obsidian Publish: the first of that text


@pytest.mark.parametrize("form, expected", [("slug", "recette-2"), ("github", "recette-2")])
def test_a_repeated_heading_after_a_numbered_one_links_to_itself(note_writer, form, expected):
    """« Recette », « Recette 1 », « Recette »: the site's ids are recette, recette-1,
    recette-2 (github-slugger's and Hugo's numbering skip an id already given); the third
    heading's passage linked to recette-1, the second heading's section."""
    sections = [("Recette", "pommes"), ("Recette 1", "poires"), ("Recette", "prunes")]
    body = "\n\n".join(f"## {heading}\n\nLa recette parle de {word}. " + ("Du texte. " * 400) for heading, word in sections)
    note_writer("recettes.md", "title: Recettes\ntype: projet\nvisibility: public", body)
    index = make_bot(note_writer.root, anchors=form).snapshot.index("visitor")
    passages = choose_passages("prunes", [("recettes.md", "/portfolio/recettes")], index, budget=2_000, anchors=form)
    found = [p for p in passages if "prunes" in p.text]
    assert found and found[0].anchor == expected
    assert found[0].url == f"/portfolio/recettes#{expected}"


def test_a_bad_anchor_setting_is_a_clear_error():
    from grasbot._exceptions import ConfigError

    with pytest.raises(ConfigError, match="GRASBOT_ANCHORS doit être l'un de slug, github, quartz, hugo, mkdocs, text, none, pas 'kebab'"):
        Settings.load(env={"GRASBOT_ANCHORS": "kebab"})


def test_a_follow_up_chooses_its_passages_with_the_conversation(garden):
    bot = garden_bot(garden)
    history = [
        {"role": "user", "content": "Parle-moi des limaces au jardin"},
        {"role": "assistant", "content": "Les limaces mangent les semis [jardinage]."},
    ]
    result = bot.search("Et comment les piéger ?", audience="visitor", history=history)
    assert ANSWERS["ravageurs"] in "\n".join(p.text for p in result.context)
    alone = bot.search("Et comment les piéger ?", audience="visitor")
    assert ANSWERS["ravageurs"] not in "\n".join(p.text for p in alone.context)


def test_sections_survive_the_cache_round_trip(garden, tmp_path):
    settings = Settings.load(env={}, vault_dir=garden, question_log="off")
    cache = tmp_path / "cache"
    cold = build_snapshot(settings, cache_dir=cache)
    assert (cache / "notes.marshal").exists()
    warm = build_snapshot(settings, cache_dir=cache)
    for path, note in warm.vault.notes.items():
        assert warm.analyses[path].sections == cut_note(note.body) == cold.analyses[path].sections
    assert len(warm.analyses["cours/Jardinage.md"].sections[1]) > 20


def test_reload_recomputes_the_sections_of_the_changed_long_note_only(garden):
    bot = garden_bot(garden)
    before = bot.snapshot
    new = "La serre se ventile par le faîtage, toujours du côté abrité du vent."
    path = garden / "cours" / "Jardinage.md"
    path.write_text(path.read_text(encoding="utf-8").replace(ANSWERS["serre"], new), encoding="utf-8")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    report = bot.reload()
    assert report.changed == 1
    after = bot.snapshot
    assert after.analyses["notes/greffe.md"] is before.analyses["notes/greffe.md"]  # untouched
    assert after.analyses["cours/Jardinage.md"].sections == cut_note(after.vault.notes["cours/Jardinage.md"].body)
    result = bot.search("Comment ventiler la serre par le faîtage ?", audience="visitor")
    sent = "\n".join(p.text for p in result.context)
    assert new in sent
    assert ANSWERS["serre"] not in sent


async def test_search_and_answer_report_the_same_passages(garden, standin_ollama):
    """Those the model was given (a fallback's are those it quotes: tests/server/test_stream.py)."""
    standin_ollama.script("Des pièges à bière [jardinage].")
    bot = garden_bot(garden, url_map="cours=/cours/{slug}", ollama_url=standin_ollama.url)
    q = "Comment piéger les limaces ?"
    searched = bot.search(q, audience="visitor").to_dict()["results"]
    try:
        answer = await bot.answer(q)
    finally:
        await bot.aclose()
    assert answer["model"] == "qwen3:8b"
    answered = answer["sources"]
    assert [s["passages"] for s in searched] == [s["passages"] for s in answered]
    assert any(p["url"] and re.fullmatch(r"/cours/jardinage#[a-z0-9-]+", p["url"]) for s in answered for p in s["passages"])


def test_choosing_passages_twice_gives_the_same(garden):
    bot = make_bot(garden)
    index = bot.snapshot.index("visitor")
    sources = [("cours/Jardinage.md", None), ("notes/greffe.md", None)]
    first = choose_passages("greffe écusson", sources, index, budget=12_000)
    again = choose_passages("greffe écusson", sources, index, budget=12_000)
    assert again == first and first


def test_a_long_notes_passage_is_found_by_its_meaning_too(garden):
    """A paraphrase sharing no word with its passage (« escargots », « salade » for the slugs
    section): by words alone the course gives only its opening; with its sections' meaning, the
    chapter that answers, and the engine passes that meaning on once it is ready."""
    q = "comment je me débarrasse des escargots qui dévorent ma salade ?"
    assert not set(q.replace("?", " ").split()) & set(COURSE.split())  # not one word in common
    bot = garden_bot(garden, semantic="bundled", prompt_budget=3000)
    assert bot.embed_pending() is True
    index, sections = bot.snapshot.index("visitor"), bot.snapshot.semantic["visitor"]
    course = "cours/Jardinage.md"
    cosines = sections.section_cosines(course, q)
    assert cosines is not None and len(cosines) == len(index.analyses[course].sections[1])
    assert sections.section_cosines("notes/cuisine.md", q) is None  # a short note has no section vectors

    def texts(meaning):
        return " ".join(p.text for p in choose_passages(q, [(course, None)], index, budget=3000, meaning=meaning))

    assert ANSWERS["ravageurs"] not in texts(None)
    assert ANSWERS["ravageurs"] in texts(lambda path: sections.section_cosines(path, q))
    # through the engine: a question that names the chapter, so that search finds the course
    named = "jardinage, les ravageurs : " + q
    with_meaning, lexical = bot.search(named, audience="visitor"), bot.search(named, audience="visitor", lexical=True)
    assert with_meaning.grounded and with_meaning.sources[0].path == course and lexical.sources[0].path == course
    assert ANSWERS["ravageurs"] in " ".join(p.text for p in with_meaning.context)
    assert ANSWERS["ravageurs"] not in " ".join(p.text for p in lexical.context)


def test_an_abbreviation_chooses_the_passage_that_spells_it_out(note_writer, monkeypatch):
    from grasbot.retrieval import scoring

    chapters = [
        ("Réseau", "Le pare-feu filtre les ports entrants ; le routeur distribue les adresses. "),
        ("Sauvegardes", "Chaque nuit, la base PostgreSQL est copiée vers un disque chiffré. "),
        ("Supervision", "Les sondes mesurent la charge et alertent par courriel. "),
    ]
    body = "Un guide d'administration.\n\n" + "\n\n".join(f"## {title}\n\n{text * 120}" for title, text in chapters)
    note_writer("guide.md", "title: Guide\nvisibility: public", body)
    index = make_bot(note_writer.root).snapshot.index("visitor")

    def chosen() -> set[str]:
        passages = choose_passages("et pour postgres ?", [("guide.md", None)], index, budget=3_000)
        return {p.heading[-1] for p in passages if p.heading}

    assert chosen() == {"Sauvegardes"}
    monkeypatch.setattr(scoring, "ABBREVIATION_MIN", 99)
    assert chosen() == set()  # by the word as written no passage matches: only the note's opening goes


def test_a_long_question_reads_a_courses_cuts_by_its_terms_not_each_cut_for_each_term(garden, monkeypatch):
    # A visitor's 500 characters (and a conversation's 4,000) read each cut of a long course
    # for each of their terms: 1.3 M reads, 150 ms an answer. Term by term, a question reads
    # only the cuts that hold its terms, and chooses the passages it chose.
    from grasbot.answer import passages as passages_module

    reads = []

    class Counted(dict):
        def get(self, *args):
            reads.append(args[0])
            return super().get(*args)

    counted = passages_module.body_counts
    monkeypatch.setattr(passages_module, "body_counts", lambda text: Counted(counted(text)))
    bot = garden_bot(garden)
    index = bot.snapshot.index("visitor")
    source = [("cours/Jardinage.md", None)]
    choose_passages("greffe", source, index, budget=3_000)  # the course's cuts are counted once, at its first question
    reads.clear()
    question = " ".join(f"{subject} {words}" for subject, words in SUBJECTS)[:500]
    chosen = choose_passages(question, source, index, budget=3_000)
    assert reads == []  # was every cut × the question's 50 terms
    course = "Cours de jardinage"
    assert [(p.heading[1:], p.score) for p in chosen] == [  # what each cut read for each term chose
        (("Chapitre 2 — Arrosage",), 9.8525),
        *((("Chapitre 2 — Arrosage", f"2.{s} Pratique {s} : arrosage"), 10.0508) for s in range(3)),
        (("Chapitre 10 — Ravageurs", "10.9 Le bon moment pour ravageurs"), 10.6366),
    ]
    assert {p.heading[0] for p in chosen} == {course}


def _github_anchor_of_second_section(note_writer, heading: str) -> str | None:
    """The github anchor of a long note's second section, headed `heading`, as a passage of it carries it."""
    sections = [("Introduction", "pommes"), (heading, "prunes")]
    body = "\n\n".join(f"## {title}\n\nLa recette parle de {word}. " + ("Du texte. " * 400) for title, word in sections)
    note_writer("recettes.md", "title: Recettes\ntype: projet\nvisibility: public", body)
    index = make_bot(note_writer.root, anchors="github").snapshot.index("visitor")
    passages = choose_passages("prunes", [("recettes.md", "/portfolio/recettes")], index, budget=2_000, anchors="github")
    found = [p for p in passages if "prunes" in p.text]
    assert found
    return found[0].anchor


@pytest.mark.parametrize(
    "heading, expected",
    [
        ("La méthode `__init__`", "la-méthode-__init__"),
        ("Le _vrai_ sens", "le-vrai-sens"),
        ("Une variable snake_case", "une-variable-snake_case"),
        # the page's text keeps each space (CommonMark collapses none): GrasBot made one of a run
        ("Recette  rapide", "recette--rapide"),
        ("Recette\trapide", "recetterapide"),  # a tab is a control character, dropped
        ("Voir **la [documentation](https://example.org/doc)**", "voir-la-documentation"),
    ],
)
def test_a_headings_anchor_is_made_from_its_text_as_the_site_renders_it(note_writer, heading, expected):
    """rehype-slug (Quartz) and GitHub slug the heading element's text: a code span's content
    as written, emphasis (`_x_`, CommonMark's underscore at a word's edge) and a link's
    destination gone. `__init__` lost its underscores and `_vrai_` kept its own."""
    assert _github_anchor_of_second_section(note_writer, heading) == expected


@pytest.mark.parametrize("form, expected", [("github", "exemple-1"), ("slug", "exemple-1"), ("text", "Exemple")])
def test_a_heading_inside_a_callout_takes_its_id_before_a_later_one_of_the_same_text(note_writer, form, expected):
    """rehype-slug (Quartz), GitHub and Hugo give every heading an id, one inside a callout
    (a blockquote) too, and number the later ones of the same text past it: the section
    « ## Exemple » after a callout's « > ## Exemple » is exemple-1, not exemple (the callout).
    A line in a quoted code fence is no heading."""
    callout = "> [!tip] Astuce\n> ## Exemple\n> Un exemple de semis.\n> ```bash\n> # Exemple\n> ```"
    body = f"## Semis\n\n{callout}\n\n" + ("Du texte. " * 400) + "\n\n## Exemple\n\nLa recette parle de prunes. " + ("Du texte. " * 400)
    note_writer("recettes.md", "title: Recettes\ntype: projet\nvisibility: public", body)
    index = make_bot(note_writer.root, anchors=form).snapshot.index("visitor")
    passages = choose_passages("prunes", [("recettes.md", "/portfolio/recettes")], index, budget=2_000, anchors=form)
    found = [p for p in passages if "prunes" in p.text]
    assert found and found[0].anchor == expected


@pytest.mark.parametrize(
    "heading, expected",
    [
        ("3.2 La crème brûlée à l’ancienne", "32-la-creme-brulee-a-lancienne"),
        ("L'été : bilan", "lete-bilan"),
        ("⚠️ Attention", "attention"),
        ("Une variable snake_case", "une-variable-snake_case"),
    ],
)
def test_mkdocs_anchors_follow_python_markdown(heading, expected):
    """MkDocs makes heading ids with Python-Markdown's toc extension, `slugify(value, "-")`:
    NFKD then ASCII only, `[^\\w\\s-]` removed, stripped, lower case, each run of `-` and
    spaces one `-`. The `slug` form, an apostrophe or a dot a hyphen, matched none of them."""
    assert anchor_of(heading, "mkdocs") == expected


# Hugo's default ids (markup/goldmark/autoid.go, sanitizeAnchorName with autoHeadingIDType
# github, and idFactory.Generate): letters, Nd digits and `_` kept, lower case, a space or `-`
# a hyphen, all else dropped, marks too; `heading` when nothing is left. The `github` form
# (GitHub's, Quartz's) kept the selector and the combining accent, and gave no anchor at all
# to a heading of an emoji alone: each linked to an id Hugo's page has not.
@pytest.mark.parametrize(
    "heading, expected",
    [
        ("\u26a0\ufe0f Attention", "-attention"),  # ⚠️: the symbol and its variation selector
        ("Cre\u0301me bru\u0302le\u0301e", "creme-brulee"),  # accents written decomposed
        ("🎉", "heading"),
        ("Chapitre \u216b", "chapitre-"),  # Ⅻ, a letter number, not a letter for Go
        ("\u0130stanbul", "istanbul"),  # Go's unicode.ToLower: İ is i
        ("Arrosage du\njardin", "jardin"),  # goldmark reads a Setext heading's last line
    ],
)
def test_hugo_anchors_follow_hugos_sanitize_anchor_name(heading, expected):
    assert anchor_of(heading, "hugo") == expected
    assert anchor_of(heading, "github") != expected


@pytest.mark.parametrize("heading, expected", [("L’été : bilan", "lété--bilan"), ("Une variable snake_case", "une-variable-snake_case")])
def test_hugo_anchors_are_githubs_for_a_heading_of_letters_and_punctuation(heading, expected):
    assert anchor_of(heading, "hugo") == anchor_of(heading, "github") == expected


def test_repeated_hugo_anchors_are_numbered_past_the_ids_already_given():
    """idFactory.Generate: an id taken gets the first of -1, -2 … not taken; `heading` too."""
    ids = [anchor_of(h, "hugo") for h in ("Recette", "Recette 1", "Recette", "🎉", "✨")]
    assert unique_anchors(ids, "hugo") == ["recette", "recette-1", "recette-2", "heading", "heading-1"]


def test_repeated_mkdocs_anchors_are_numbered_as_python_markdown_numbers_them():
    """toc's `unique(id, ids)`: while the id is taken or empty, `_1`, or its own `_N` plus one."""
    assert unique_anchors(["header", "header", "header_1", ""], "mkdocs") == ["header", "header_1", "header_2", "_1"]


@pytest.mark.parametrize(
    "form, expected",
    [("github", "#arrosage-dujardin"), ("hugo", "#jardin"), ("slug", "#arrosage-du-jardin"), ("text", "#Arrosage%20du%20jardin"), ("mkdocs", "")],
)
def test_a_setext_heading_over_two_lines_links_where_the_site_puts_it(note_writer, form, expected):
    """A Setext heading's text keeps its newline (CommonMark 4.3): GitHub and rehype-slug
    (Quartz) drop it as a control character, « Arrosage du » then « jardin » is
    arrosage-dujardin; GrasBot made arrosage-du-jardin, an id the page has not. Hugo (goldmark's
    generateAutoHeadingID) names it by its last line alone, jardin. Python-Markdown
    (MkDocs) reads no heading there, only a paragraph: no anchor at all."""
    watering = "\n\nArrosage du\njardin\n--------\n\nLa recette parle de prunes. "
    body = "## Semis\n\nLa recette parle de pommes. " + ("Du texte. " * 400) + watering + ("Du texte. " * 400)
    note_writer("recettes.md", "title: Recettes\ntype: projet\nvisibility: public", body)
    index = make_bot(note_writer.root, anchors=form).snapshot.index("visitor")
    passages = choose_passages("prunes", [("recettes.md", "/portfolio/recettes")], index, budget=2_000, anchors=form)
    found = [p for p in passages if "prunes" in p.text]
    assert [(p.heading, p.url) for p in found] == [(("Arrosage du jardin",), "/portfolio/recettes" + expected)]


@pytest.mark.parametrize("form, expected", [("github", "#arrosage"), ("mkdocs", "#arrosage"), ("text", "#Arrosage")])
def test_a_setext_headings_section_links_to_its_own_id(note_writer, form, expected):
    """« Arrosage » underlined with `---` is an h2 for CommonMark (4.3, Setext headings), hence
    for GitHub, Quartz (remark), Hugo (goldmark), MkDocs (Python-Markdown's setext) and
    Obsidian, each giving it its id. GrasBot cut no section there: a passage about watering
    linked to « Semis », the ATX section above it."""
    body = "## Semis\n\nLa recette parle de pommes. " + ("Du texte. " * 400) + "\n\nArrosage\n--------\n\nLa recette parle de prunes. " + ("Du texte. " * 400)
    note_writer("recettes.md", "title: Recettes\ntype: projet\nvisibility: public", body)
    index = make_bot(note_writer.root, anchors=form).snapshot.index("visitor")
    passages = choose_passages("prunes", [("recettes.md", "/portfolio/recettes")], index, budget=2_000, anchors=form)
    found = [p for p in passages if "prunes" in p.text]
    assert [(p.heading, p.url) for p in found] == [(("Arrosage",), "/portfolio/recettes" + expected)]
    assert "--------" not in found[0].text  # the underline is the heading's, not the passage's


def test_the_mkdocs_form_links_a_repeated_heading_to_its_own_id(note_writer):
    sections = [("Recette", "pommes"), ("Recette", "prunes")]
    body = "\n\n".join(f"## {heading}\n\nLa recette parle de {word}. " + ("Du texte. " * 400) for heading, word in sections)
    note_writer("recettes.md", "title: Recettes\ntype: projet\nvisibility: public", body)
    bot = make_bot(note_writer.root, anchors="mkdocs")
    passages = choose_passages("prunes", [("recettes.md", "/portfolio/recettes")], bot.snapshot.index("visitor"), budget=2_000, anchors="mkdocs")
    found = [p for p in passages if "prunes" in p.text]
    assert found and found[0].url == "/portfolio/recettes#recette_1"


def test_a_url_that_holds_a_fragment_is_not_given_a_second_one(note_writer):
    """A site routed by its fragment (GRASBOT_URL_MAP projet=/#/portfolio/{slug}) reads
    everything after `#` as the page: /#/portfolio/recettes#recette named no page."""
    body = "## Recette\n\nLa recette parle de prunes. " + ("Du texte. " * 900)
    note_writer("recettes.md", "title: Recettes\ntype: projet\nvisibility: public", body)
    index = make_bot(note_writer.root, anchors="github").snapshot.index("visitor")
    passages = choose_passages("prunes", [("recettes.md", "/#/portfolio/recettes")], index, budget=2_000, anchors="github")
    assert passages and passages[0].anchor == "recette"
    assert passages[0].url == "/#/portfolio/recettes"


def test_a_sources_url_is_its_own_notes_page_and_names_no_private_note(note_writer):
    """GRASBOT_URL_MAP's fields read the note's own path: `Cuisine/Crème brûlée.md` on a Quartz
    site is /Cuisine/Crème-brûlée (the slug, /creme-brulee, was a 404), `type: compétence` finds
    the map's `competence`, and a url never holds another note's path: a private note beside it,
    on the same subject and with the same slug, reaches the visitor by no url."""
    words = "La crème brûlée se caramélise au chalumeau avec du sucre roux."
    note_writer("Cuisine/Crème brûlée.md", "type: Recette\nvisibility: public", f"## Caramel\n\n{words}")
    note_writer("Cuisine/Brouillons/Salaire Dupont.md", "slug: creme-brulee\ntype: recette\nvisibility: private", f"{words} Salaire Dupont.")
    note_writer("Pâtisserie.md", "type: compétence\nvisibility: public", "Je fais la crème brûlée au chalumeau depuis dix ans.")
    bot = make_bot(note_writer.root, url_map="recette=/{quartz},competence=/competences/{slug}")
    result = bot.search("crème brûlée au chalumeau", audience="visitor")
    urls = {s.path: s.url for s in result.sources}
    assert urls == {"Cuisine/Crème brûlée.md": "/Cuisine/Cr%C3%A8me-br%C3%BBl%C3%A9e", "Pâtisserie.md": "/competences/patisserie"}
    shown = repr(result.to_dict())
    assert not any(word in shown for word in ("Brouillons", "Salaire", "Dupont"))
    owners = {s.path: s.url for s in bot.search("crème brûlée au chalumeau", audience="owner").sources}
    assert owners["Cuisine/Brouillons/Salaire Dupont.md"] == "/Cuisine/Brouillons/Salaire-Dupont"  # the owner's own view


@pytest.mark.parametrize(
    "heading, expected",
    [
        ("`" * 6_000 + " Les prunes", "-les-prunes"),  # a run of backticks no run closes: no code span
        ("[" * 20_000 + " Les prunes", "-les-prunes"),  # brackets no `]` closes: no link
        ("Sur [0, 1[ " * 2_000 + "les prunes", "sur-0-1-" * 2_000 + "les-prunes"),
        ("Le `a``b` et [c [d](e)", "le-ab-et-c-d"),  # CommonMark's spans: `a``b` is one, [d](e) the link
    ],
)
def test_a_heading_of_unclosed_marks_is_read_once(note_writer, heading, expected):
    """A heading's code spans and links were tried from every backtick and `[` to the line's
    end, each backtick for each run length: 6,000 backticks took 2.2 s to anchor, 20,000 `[`
    1.1 s, for each passage of the note a visitor's question reached."""
    assert _github_anchor_of_second_section(note_writer, heading) == expected


def _anchor_of_second_section(note_writer, heading: str, form: str) -> str | None:
    """The `form` anchor of a long note's second section, headed `heading`."""
    sections = [("Introduction", "pommes"), (heading, "prunes")]
    body = "\n\n".join(f"## {title}\n\nLa recette parle de {word}. " + ("Du texte. " * 400) for title, word in sections)
    note_writer("recettes.md", "title: Recettes\ntype: projet\nvisibility: public", body)
    index = make_bot(note_writer.root, anchors=form).snapshot.index("visitor")
    found = [p for p in choose_passages("prunes", [("recettes.md", "/r")], index, budget=2_000, anchors=form) if "prunes" in p.text]
    assert found
    return found[0].anchor


@pytest.mark.parametrize(
    "form, heading, expected",
    [
        # Quartz parses inline HTML (ofm.ts: rehype-raw) before rehype-slug, which slugs the
        # heading element's text (hast-util-to-string): tags gone, entities read; GitHub slugs
        # the rendered heading's text alike
        ("github", "Le <code>ls</code> &amp; co", "le-ls--co"),
        ("github", "Café&nbsp;noir", "cafénoir"),  # U+00A0, a separator github-slugger strips
        ("github", "L&#233;t&#xE9;", "lété"),
        ("github", "Le `&amp;` et `<b>`", "le-amp-et-b"),  # a code span's text is as written
        # Python-Markdown's toc: slugify(html.unescape(strip_tags(inner html))); NFKD makes
        # the no-break space a space
        ("mkdocs", "Le <code>ls</code> &amp; co", "le-ls-co"),
        ("mkdocs", "Café&nbsp;noir", "cafe-noir"),
        ("mkdocs", "L&#233;t&#xE9;", "lete"),
        # Hugo's render.TextPlain: raw HTML stripped, then util.ResolveEntityNames (named
        # entities only, code spans included)
        ("hugo", "Le <code>ls</code> &amp; co", "le-ls--co"),
        ("hugo", "Café&nbsp;noir", "cafénoir"),
        ("hugo", "Le `&amp;` code", "le--code"),
        ("hugo", "L&#233;t&#xE9;", "l233txe9"),
    ],
)
def test_a_headings_html_and_entities_are_read_as_the_site_renders_them(note_writer, form, heading, expected):
    """A heading's inline HTML and character references are markup, not text: GrasBot slugged
    them as written (`le-codelscode-amp-co`, `cafénbspnoir`), ids no page has."""
    assert _anchor_of_second_section(note_writer, heading, form) == expected


@pytest.mark.parametrize(
    "heading, expected",
    [
        ("Installer {#install}", "install"),
        ("Installer {.important #install}", "install"),
        ("Installer {id=install}", "install"),
        ("Installer {.important}", "installer"),  # an attribute list without id: no part of the text
        ("Installer {#a/b}", "installer-ab"),  # `/` ends an id and starts no attribute: text
        ("Voir [docs](https://x.org)", "voir-docs"),  # Hugo 0.144+ (#13405): the link's text only
    ],
)
def test_a_hugo_heading_takes_its_own_id(note_writer, heading, expected):
    """Hugo reads `{#id}` closing a heading as its id (goldmark's parseLastLineAttributes, on by
    default: markup.goldmark.parser.attribute.title) and shows it nowhere: GrasBot linked
    `## Installer {#install}` to installer-install, an id Hugo's page has not."""
    assert _anchor_of_second_section(note_writer, heading, "hugo") == expected


def test_a_hugo_headings_own_id_is_taken_from_the_later_ones():
    """idFactory `Put`: a given id is kept as written and the auto ids after it skip it."""
    assert unique_anchors(["recette", "recette", "recette"], "hugo", fixed=[True, False, False]) == ["recette", "recette-1", "recette-2"]
    assert unique_anchors(["recette-1", "recette", "recette"], "hugo", fixed=[True, False, False]) == ["recette-1", "recette", "recette-2"]


@pytest.mark.parametrize(
    "heading, expected",
    [
        # goldmark's typographer (extension/typographer.go, on in Hugo by default:
        # markup.goldmark.extensions.typographer.disable false) makes `--` an ast.String
        # `&ndash;` and `---` one `&mdash;`; Hugo's id is sanitizeAnchorName of
        # render.TextPlain, which writes that string and resolves it (ResolveEntityNames) to –
        # or —, a dash the id drops where `-` is a hyphen
        ("Recette -- rapide", "recette--rapide"),
        ("Recette --- rapide", "recette--rapide"),
        ("Avant----après", "avant-après"),  # `---` then a lone `-`
        ("Saint-Étienne", "saint-étienne"),  # a lone hyphen is text
        ("Le `a--b` code", "le-a--b-code"),  # no typographer inside a code span
    ],
)
def test_a_hugo_id_drops_the_dashes_the_typographer_made(note_writer, heading, expected):
    """GrasBot kept each hyphen of `--` and `---` (`recette----rapide`), an id Hugo's page has not."""
    assert _anchor_of_second_section(note_writer, heading, "hugo") == expected


def _anchor_among_notes(note_writer, heading: str, form: str) -> str | None:
    """`_anchor_of_second_section` in a vault that also holds Note (a section Sec), Dossier/Autre
    and Secret, a private note."""
    note_writer("Note.md", "title: Note\nvisibility: public", "## Sec\n\nUne section.")
    note_writer("Dossier/Autre.md", "title: Autre\nvisibility: public", "Une autre note.")
    note_writer("Secret.md", "title: Secret\nvisibility: private", "Une note privée.")
    return _anchor_of_second_section(note_writer, heading, form)


@pytest.mark.parametrize(
    "form, heading, expected",
    [
        # Quartz (quartz/plugins/transformers/ofm.ts): textTransform rewrites [[Note#Sec]] to
        # [[Note#sec|Sec]], then the link's text is `alias ?? fp`: its label, else its section
        # (a block's with its ^), else its note as written, folders included
        ("quartz", "Voir [[Note#Sec]]", "voir-sec"),
        ("quartz", "Voir [[Note#^bloc]]", "voir-bloc"),
        ("quartz", "Voir [[Dossier/Autre]]", "voir-dossierautre"),
        ("quartz", "Voir [[Note#Sec|Lire]]", "voir-lire"),
        ("quartz", "Voir [[Note]]", "voir-note"),
        # GitHub (cmark-gfm), Hugo (goldmark) and MkDocs (Python-Markdown) read no wikilink: its
        # brackets are text, and every character the id keeps of what is written stays
        ("github", "Voir [[Note#Sec]]", "voir-notesec"),
        ("github", "Voir [[Note|Lire]]", "voir-notelire"),
        ("github", "Voir [[Dossier/Autre]]", "voir-dossierautre"),
        ("hugo", "Voir [[Note#Sec|Lire]]", "voir-noteseclire"),
        ("mkdocs", "Voir [[Note#Sec]]", "voir-notesec"),
        ("quartz", "Voir `[[Note#Sec]]`", "voir-notesec"),  # a code span: as written
    ],
)
def test_a_wikilink_in_a_heading_is_anchored_as_its_site_shows_it(note_writer, form, heading, expected):
    """GrasBot read every wikilink as its label or its note's name, as Obsidian shows it:
    `## Voir [[Note#Sec]]` linked to voir-note on a Quartz site (voir-sec) and on GitHub (voir-notesec)."""
    assert _anchor_among_notes(note_writer, heading, form) == expected


@pytest.mark.parametrize("form", ["quartz", "github", "hugo", "mkdocs"])
def test_a_wikilink_to_a_private_note_never_names_it_in_an_anchor(note_writer, form):
    """The site may show the link, but GrasBot's answer names no note the visitor may not read."""
    anchor = _anchor_among_notes(note_writer, "Voir [[Secret#Sec]]", form)
    assert "secret" not in (anchor or "").lower()


@pytest.mark.parametrize(
    "form, heading, expected",
    [
        # ofm.ts arrowRegex (parseArrows, on by default): -> is an HTML → github-slugger drops
        ("quartz", "Entrée -> sortie", "entrée--sortie"),
        ("quartz", "Retour <-- fin", "retour--fin"),
        ("quartz", "Le `->` code", "le---code"),  # no arrow inside a code span
        ("github", "Entrée -> sortie", "entrée---sortie"),  # GitHub keeps the hyphen
    ],
)
def test_a_quartz_anchor_drops_the_arrows_quartz_draws(note_writer, form, heading, expected):
    """Quartz draws `->` as an arrow, which its id drops; GitHub keeps the hyphen: one form could not match both."""
    assert _anchor_of_second_section(note_writer, heading, form) == expected


def test_the_best_sources_closest_cut_in_meaning_goes_whatever_its_words(garden):
    """A paraphrase shares too few words with its passage for it to pass the floor, however
    close its meaning: the best source's cut closest to the question is sent all the same,
    right after its best passage (« jokers » for « caractères génériques », round 39)."""
    bot = make_bot(garden)
    index = bot.snapshot.index("visitor")
    course = "cours/Jardinage.md"
    cuts = index.analyses[course].sections[1]
    body = index.notes[course].body
    answer = next(n for n, (start, end, _) in enumerate(cuts) if ANSWERS["ravageurs"] in body[start:end])
    # every cut's meaning spread alike, the slugs' section a little closer than the rest
    cosines = [0.3 if n % 2 else 0.5 for n in range(len(cuts))]
    cosines[answer] = 0.55

    def chosen(meaning):
        return choose_passages("greffe en écusson porte-greffe greffon", [(course, None), ("notes/greffe.md", None)], index, budget=4_000, meaning=meaning)

    words_only = chosen(None)
    assert ANSWERS["ravageurs"] not in " ".join(p.text for p in words_only)
    passages = chosen(lambda path: cosines if path == course else None)
    sent = [p for p in passages if ANSWERS["ravageurs"] in p.text]
    assert [(p.path, p.heading[-1]) for p in sent] == [(course, "10.9 Le bon moment pour ravageurs")]
    # the words still choose the rest: the grafting chapter's best passage, and the short note whole
    assert any(p.heading and p.heading[-1] == "5.9 Le bon moment pour greffe" for p in passages)
    assert [p.whole for p in passages if p.path == "notes/greffe.md"] == [True]
    assert sum(len(p.text) for p in passages) <= 4_000


ROSES = "Un rosier grimpant se taille après sa floraison, en gardant les longues tiges souples."


def roses_course(note_writer) -> str:
    """A course whose chapter on climbing roses holds, after its best passage, a 1,300-character
    cut that says the question's words three times among sentences about something else, and a
    190-character cut that answers, saying them once."""
    other = " ".join(["Tailler un rosier grimpant demande des gants."] * 3 + ["Il aime le soleil, un sol profond et un support solide pour s'accrocher."] * 16)
    body = ["# Cours de jardinage", "Un cours complet de jardinage, chapitre par chapitre."]
    for number, (subject, _) in enumerate(SUBJECTS[:9], 1):
        body += [f"## Chapitre {number} — {subject.capitalize()}", " ".join([f"Ce paragraphe parle de {subject} et le répète pour remplir le chapitre."] * 12)]
    body += [
        "## Chapitre 10 — Rosiers",
        "### 10.1 Tailler un rosier grimpant",
        " ".join(["Tailler un rosier grimpant : la taille du rosier grimpant."] * 4),
        "### 10.2 Au mur",
        other,
        "### 10.3 Le bon moment",
        ROSES + " Les tiges de l'année portent les fleurs de l'an prochain : les garder longues, c'est garder ces fleurs.",
    ]
    note_writer("notes/cuisine.md", "title: Cuisine\nvisibility: public", "Une tarte aux pommes du verger, et rien de plus.")
    note_writer("cours/Jardinage.md", "title: Cours de jardinage\nvisibility: public", "\n\n".join(body))
    return "cours/Jardinage.md"


def test_the_room_goes_first_to_the_cuts_that_say_most_for_their_length(note_writer, monkeypatch):
    """Over the floor, a long window that says the question's words among others no longer takes
    the room of a short cut that answers, which it outscores: each is taken in the order of its
    score over its length (at least `passages.ROOM_LENGTH` characters)."""
    course = roses_course(note_writer)
    index = make_bot(note_writer.root).snapshot.index("visitor")
    best, window, answer = (end - start for start, end, _ in index.analyses[course].sections[1][-3:])
    assert window > 1_200 and answer < 200
    question, budget = "comment tailler mon rosier grimpant ?", best + window + answer // 2  # the best passage, then the window or the answer

    def sent() -> list[str]:
        return [p.heading[-1] for p in choose_passages(question, [(course, None)], index, budget=budget)]

    assert sent() == ["Cours de jardinage", "10.1 Tailler un rosier grimpant", "10.3 Le bon moment"]  # the opening, the best, the answer
    monkeypatch.setattr("grasbot.answer.passages.ROOM_POWER", 0)  # by score alone: the window, over the floor too, and no room left
    assert sent() == ["Cours de jardinage", "10.1 Tailler un rosier grimpant", "10.2 Au mur"]


def test_a_note_sent_whole_pays_nothing_for_its_length(note_writer):
    """A short note is its own passage, however long: charged its length, it would lose the room
    to a long note's short cut it outscores (the right note reached the prompt 21 times less
    often on the documentation vault's tune parts)."""
    course = roses_course(note_writer)
    said = ["Tailler mon rosier grimpant : je taille le rosier grimpant du garage en mars."]
    filler = ["Il aime le soleil, un sol profond et un support solide pour s'accrocher."] * 16
    note_writer("notes/rosiers.md", "title: Mes rosiers\nvisibility: public", " ".join(said + filler))
    index = make_bot(note_writer.root).snapshot.index("visitor")
    whole = len(index.notes["notes/rosiers.md"].body)
    best = next(end - start for start, end, _ in index.analyses[course].sections[1][-3:])
    assert whole > 1_200
    passages = choose_passages("comment tailler mon rosier grimpant ?", [(course, None), ("notes/rosiers.md", None)], index, budget=best + whole + 100)
    assert [p.whole for p in passages if p.path == "notes/rosiers.md"] == [True]
    assert ROSES not in " ".join(p.text for p in passages)  # the course's answer scores less than the note
