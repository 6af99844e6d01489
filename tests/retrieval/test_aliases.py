"""Alias suggestions: each source, the filtering, merging, ranking, and the loop from a missed
question to an accepted alias that finds the note first."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grasbot import GrasbotError, QueryError
from grasbot.retrieval.aliases import SOURCE_WEIGHTS, NoteNotFound, NoteText, _Candidate, _flat, _merge, covered, key_phrase, named_in, suggest_aliases
from grasbot.store.questionlog import REOPEN_EVERY, QuestionLog
from support.bots import BUNDLED_VAULT, make_bot

GRASBOT_BODY = """
GrasBot répond aux visiteurs du site à partir des notes du coffre Obsidian.
Le classement des notes combine le texte, les alias et les liens entre notes.
On peut le voir comme un robot qui lit les notes avant de répondre.
"""


def fillers(write) -> None:
    write("cuisine.md", "title: Cuisine", "Recettes : la tarte aux pommes, le pain, les crêpes et la soupe.")
    write("jardin.md", "title: Jardin", "Le potager, les tomates, les semis de printemps et le compost.")
    write("velo.md", "title: Vélo", "Réparer un vélo : la chaîne, les freins, les pneus et le dérailleur.")


@pytest.fixture
def log(tmp_path):
    with QuestionLog(tmp_path / "questions.sqlite3", clock=lambda: datetime.now(UTC)) as log:
        yield log


def owner(bot):
    return bot.snapshot.index("owner")


def aliases(report: dict) -> list[str]:
    return [s["alias"] for s in report["suggestions"]]


def ask(bot, log, question: str, *, followup: bool = False):
    result = bot.search(question, audience="visitor")
    log.record(question, result, followup=followup)
    return result


# ---------------------------------------------------------------- the phrase that matters


@pytest.mark.parametrize(
    "question, phrase",
    [
        ("comment fonctionne le moteur de recherche ?", "moteur de recherche"),
        ("Qu'est-ce que l'apprentissage automatique ?", "apprentissage automatique"),
        ("Comment GrasBot trouve-t-il les notes d'un visiteur ?", "notes d'un visiteur"),
        ("Moteur de recherche", "moteur de recherche"),
        ("parle-moi de C++", "C++"),
        ("Quelle API pour le site ?", "API"),
        ("ici", None),
        ("c'est quoi ?", None),
        # verbs, participles and pronouns are no part of a name
        ("Comment les collisions sont-elles gérées dans le casse-briques ?", "casse-briques"),
        ("Avec quelle technologie le casse-briques est-il programmé ?", "casse-briques"),
        ("GrasBot aura-t-il bientôt une mémoire de conversation ?", "mémoire de conversation"),
        ("Que règlent les paramètres k1 et b de BM25 ?", "paramètres k1"),
        ("comment sont gérées les fautes de frappe ?", "fautes de frappe"),
        ("tu maîtrises typescript ?", "typescript"),
        ("mes questions sont-elles enregistrées ?", "questions"),
    ],
)
def test_key_phrase(question, phrase):
    assert key_phrase(question) == phrase


def test_key_phrase_prefers_the_run_the_note_shares():
    question = "le vélo ou la recette de la tarte ?"
    assert key_phrase(question) == "recette de la tarte"  # knowing nothing of the note: the longest
    assert key_phrase(question, {"velo", "chain"}) == "vélo"


def test_a_link_text_opened_by_a_long_run_of_connectors_is_read_once():
    """A link's text may be as long as its note: 1,200,000 « de » before « moteur de recherche »
    (3.6 MB) took six and a half minutes, each connector dropped from the run's front moving the rest."""
    text = "de " * 1_200_000 + "moteur de recherche"
    assert key_phrase(text) == "moteur de recherche"
    assert key_phrase(text + " de de") == "moteur de recherche"


# ---------------------------------------------------------------- each source


def test_link_text(note_writer):
    note_writer("grasbot.md", "title: GrasBot\naliases: [assistant du site]", GRASBOT_BODY)
    note_writer("a.md", "title: A", "Voir le [[grasbot|moteur de recherche]] pour le détail.")
    note_writer("b.md", "title: B", "Le [[grasbot|moteur de recherche]] du site, [[grasbot|GrasBot]] et [[grasbot]].")
    note_writer("c.md", "title: C", "Les [[GrasBot|moteurs de recherche]] en général.")  # by file name
    note_writer("d.md", "title: D", "Demandez à l'[[grasbot|assistant du site]].")  # an alias already
    note_writer("e.md", "title: E", "Rien à voir : [[cuisine|recettes]].")
    fillers(note_writer)
    bot = make_bot(note_writer.root)
    assert suggest_aliases("grasbot", owner(bot), None) == {
        "slug": "grasbot",
        "suggestions": [
            {"alias": "moteur de recherche", "source": "link_text", "evidence": ["a", "b", "c"], "score": 3.0},
        ],
    }


def test_visitor_question(note_writer, log):
    note_writer("grasbot.md", "title: GrasBot", GRASBOT_BODY)
    fillers(note_writer)
    bot = make_bot(note_writer.root, default_visibility="public")
    found = ask(bot, log, "comment se fait le classement des notes ?")
    # the premise: found first, grounded, by its text alone
    assert found.grounded and found.sources[0].slug == "grasbot"
    assert {r.signal for r in found.sources[0].reasons} == {"bm25", "pairs"}  # « classement notes » side by side in it
    ask(bot, log, "Comment se fait le classement des notes ?")  # the same visitor again: counts once
    by_title = ask(bot, log, "c'est quoi GrasBot et ses notes ?")  # found by its title: nothing to learn
    assert "title" in {r.signal for r in by_title.sources[0].reasons}
    ask(bot, log, "et les tomates du potager ?", followup=True)  # a follow-up's words did not find it
    assert suggest_aliases("grasbot", owner(bot), log)["suggestions"] == [
        {
            "alias": "classement des notes",
            "source": "visitor_question",
            "evidence": ["Comment se fait le classement des notes ?"],
            "score": SOURCE_WEIGHTS["visitor_question"],
        }
    ]


def test_ungrounded_question(note_writer, log):
    note_writer("grasbot.md", "title: GrasBot", GRASBOT_BODY)
    fillers(note_writer)
    bot = make_bot(note_writer.root, default_visibility="public")
    nearest = ask(bot, log, "comment marche ton robot conversationnel ?")
    assert not nearest.grounded and nearest.sources[0].slug == "grasbot"
    nothing = ask(bot, log, "quel est le prix du billet de train ?")
    assert not nothing.sources  # ungrounded with no nearest note: evidence for no note
    assert suggest_aliases("grasbot", owner(bot), log)["suggestions"] == [
        {
            "alias": "robot conversationnel",
            "source": "ungrounded_question",
            "evidence": ["comment marche ton robot conversationnel ?"],
            "score": SOURCE_WEIGHTS["ungrounded_question"],
        }
    ]
    assert suggest_aliases("cuisine", owner(bot), log)["suggestions"] == []


def test_what_the_log_kept_out_of_a_question_is_never_an_alias(note_writer, log):
    """The log keeps « [e-mail] » for the address a visitor typed: « mail », « téléphone » or
    « carte » were offered as aliases of a contact note, words no visitor had typed."""
    note_writer("contact.md", "title: Contact", "Pour me joindre : un e-mail, un téléphone ou une carte postale. Le mail est lu chaque semaine.")
    fillers(note_writer)
    bot = make_bot(note_writer.root, default_visibility="public")
    for question in (
        "vous pouvez me joindre sur jean.dupont@gmail.com ?",
        "rappelez-moi au 06 12 34 56 78 pour me joindre",
        "ma 4111 1111 1111 1111 est refusée, joindre qui ?",
        "me joindre à l'adresse 82.64.12.34, par e-mail ?",
    ):
        assert ask(bot, log, question).sources[0].slug == "contact"
    assert suggest_aliases("contact", owner(bot), log)["suggestions"] == [
        {
            "alias": "mail",  # the visitor typed « e-mail » here
            "source": "ungrounded_question",
            "evidence": ["me joindre à l'adresse [IP], par e-mail ?"],
            "score": SOURCE_WEIGHTS["ungrounded_question"],
        }
    ]


def test_questions_waiting_for_the_log_file_are_suggested_and_counted_once_written(note_writer, tmp_path):
    """While the log's file was held by another process (or refused writes), the visitors'
    questions waited in memory and the owner's suggestions found none of them."""
    note_writer("grasbot.md", "title: GrasBot", GRASBOT_BODY)
    fillers(note_writer)
    bot = make_bot(note_writer.root, default_visibility="public")
    db = tmp_path / "questions.sqlite3"
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")  # another process holds the file as the daemon starts
    now = [datetime(2025, 3, 1, tzinfo=UTC)]
    with QuestionLog(db, clock=lambda: now[0], batch_wait=60) as log:
        question = "comment se fait le classement des notes ?"
        log.submit(question, bot.search(question, audience="visitor"))
        expected = [{"alias": "classement des notes", "source": "visitor_question", "evidence": [question], "score": SOURCE_WEIGHTS["visitor_question"]}]
        assert log.waiting and suggest_aliases("grasbot", owner(bot), log)["suggestions"] == expected
        other.execute("COMMIT")
        other.close()
        now[0] += REOPEN_EVERY
        assert suggest_aliases("grasbot", owner(bot), log)["suggestions"] == expected and log.enabled


def test_answers(note_writer):
    note_writer(
        "grasbot.md",
        """
        title: GrasBot
        aliases: [assistant du site]
        answers:
          - Qu'est-ce que la recherche hybride ?
          - Quel modèle de langage utilise GrasBot ?
          - Qu'est-ce que l'assistant du site ?
          - C'est quoi GrasBot ?
        """,
        GRASBOT_BODY,
    )
    fillers(note_writer)
    bot = make_bot(note_writer.root)
    report = suggest_aliases("grasbot", owner(bot), None)
    assert report["suggestions"] == [
        {"alias": "modèle de langage", "source": "answers", "evidence": ["Quel modèle de langage utilise GrasBot ?"], "score": SOURCE_WEIGHTS["answers"]},
        {"alias": "recherche hybride", "source": "answers", "evidence": ["Qu'est-ce que la recherche hybride ?"], "score": SOURCE_WEIGHTS["answers"]},
    ]


# ---------------------------------------------------------------- filtering, merging, ranking


def test_phrases_the_note_already_matches_are_left_out(note_writer):
    note_writer("search.md", "title: Moteur de recherche\nslug: grasbot-search\naliases: [assistant du site]", "Le moteur.")
    displays = [
        "moteur de recherche",  # the title
        "le moteur de recherche de GrasBot",  # holds the whole title
        "Grasbot Search",  # the slug
        "assistant du site",  # an alias
        "mon assistant du site web",  # holds an alias
        "assistant",  # only part of an alias: a question saying just this misses the alias
        "recherche",  # only part of the title
    ]
    for i, display in enumerate(displays):
        note_writer(f"n{i}.md", f"title: N{i}", f"Voir [[grasbot-search|{display}]].")
    bot = make_bot(note_writer.root)
    assert sorted(aliases(suggest_aliases("grasbot-search", owner(bot), None))) == ["assistant", "recherche"]
    analysis = owner(bot).analyses["search.md"]
    assert covered(("moteur", "recherch", "grasbot"), analysis)  # the title's stems, all there
    assert not covered(("recherch",), analysis)


def test_near_duplicates_are_merged_into_the_better_phrasing(note_writer, log):
    note_writer("grasbot.md", "title: GrasBot", GRASBOT_BODY + "\nUn moteur de recherche pour les notes.\n")
    note_writer("a.md", "title: A", "Le [[grasbot|moteur de recherche]].")
    note_writer("b.md", "title: B", "Le [[grasbot|moteur de recherche]] encore.")
    note_writer("c.md", "title: C", "Les [[grasbot|Moteurs de recherche]].")  # same stems
    note_writer("d.md", "title: D", "Le [[grasbot|moteur]].")  # stems within the others'
    fillers(note_writer)
    bot = make_bot(note_writer.root, default_visibility="public")
    question = "le moteur de recherche des notes ?"
    found = ask(bot, log, question)
    assert found.grounded and found.sources[0].slug == "grasbot"
    [merged] = suggest_aliases("grasbot", owner(bot), log)["suggestions"]
    assert merged["alias"] == "moteur de recherche"
    assert merged["source"] == "link_text"
    assert sorted(merged["evidence"][:4]) == ["a", "b", "c", "d"] and merged["evidence"][4:] == [question]
    assert merged["score"] == pytest.approx(4 * SOURCE_WEIGHTS["link_text"] + SOURCE_WEIGHTS["visitor_question"])


def test_ranked_by_weighted_evidence_and_bounded(note_writer):
    note_writer("grasbot.md", "title: GrasBot\nanswers: [Qu'est-ce que la recherche hybride ?]", GRASBOT_BODY)
    links = {"robot bavard": 3, "assistant virtuel": 2, "chatbot": 1}
    n = 0
    for display, count in links.items():
        for _ in range(count):
            note_writer(f"n{n}.md", f"title: N{n}", f"Voir [[grasbot|{display}]].")
            n += 1
    bot = make_bot(note_writer.root)
    report = suggest_aliases("grasbot", owner(bot), None)
    assert [(s["alias"], s["score"]) for s in report["suggestions"]] == [
        ("robot bavard", 3.0),
        ("assistant virtuel", 2.0),
        ("chatbot", 1.0),
        ("recherche hybride", 0.6),
    ]
    assert aliases(suggest_aliases("grasbot", owner(bot), None, limit=2)) == ["robot bavard", "assistant virtuel"]
    for bad in (0, 51, "3", True):
        with pytest.raises(QueryError, match="limit"):
            suggest_aliases("grasbot", owner(bot), None, limit=bad)


def test_unknown_slug(note_writer):
    note_writer("grasbot.md", "title: GrasBot", GRASBOT_BODY)
    bot = make_bot(note_writer.root)
    with pytest.raises(NoteNotFound) as caught:
        suggest_aliases("push-swp", owner(bot), None)
    assert str(caught.value) == "aucune note n'a le slug « push-swp »" and caught.value.slug == "push-swp"
    assert isinstance(caught.value, GrasbotError) and not isinstance(caught.value, QueryError)


def test_link_text_from_a_private_note_is_suggested_for_private_notes_only(note_writer):
    """A public note's alias is read by visitors once accepted: a draft's words stay out of it."""
    note_writer("grasbot.md", "title: GrasBot\nvisibility: public", GRASBOT_BODY)
    note_writer("plan.md", "title: Plan\nvisibility: private", "Les prochaines étapes du robot.")
    note_writer("journal.md", "title: Journal\nvisibility: private", "Mon [[grasbot|petit robot]] secret, ses [[plan|étapes suivantes]].")
    bot = make_bot(note_writer.root)
    assert aliases(suggest_aliases("grasbot", owner(bot), None)) == []
    assert aliases(suggest_aliases("plan", owner(bot), None)) == ["étapes suivantes"]
    assert aliases(suggest_aliases("grasbot", bot.snapshot.index("visitor"), None)) == []


def test_a_slug_two_notes_share_is_the_note_at_the_path_asked_for(note_writer):
    """A public note and a private draft named alike: the first in sorted order was taken, the
    draft, and the plugin offered on the public note its phrases (its `answers`, a private
    note's link text), which visitors read once accepted as the public note's alias."""
    note_writer("archive/plan.md", "title: Plan\nvisibility: private\nanswers: ['Où est le coffre zorglub ?']", "Le coffre zorglub du jardin.")
    note_writer("brouillon.md", "visibility: private", "Voir [[archive/plan|le coffre zorglub]].")
    note_writer("jardin/plan.md", "title: Plan\nvisibility: public", "Le plan du jardin et des ruches.")
    note_writer("jardin/accueil.md", "visibility: public", "Voir [[jardin/plan|les ruches du jardin]].")
    index = owner(make_bot(note_writer.root))
    public = suggest_aliases("plan", index, None, path="jardin/plan.md")
    assert [(s["alias"], s["evidence"]) for s in public["suggestions"]] == [("ruches du jardin", ["accueil"])]
    assert aliases(suggest_aliases("plan", index, None, path="archive/plan.md")) == ["coffre zorglub"]
    with pytest.raises(QueryError, match=r"`slug` : « plan » est le slug de 2 notes \(archive/plan.md, jardin/plan.md\) ; donnez `path`"):
        suggest_aliases("plan", index, None)
    with pytest.raises(NoteNotFound, match="aucune note au chemin « jardin/planche.md »"):
        suggest_aliases("plan", index, None, path="jardin/planche.md")


def test_bundled_vault_answers_give_names_an_author_accepts():
    """The bundled vault's `answers` gave « elles gérées », « programmé », « auteur maîtrise »."""
    index = make_bot(BUNDLED_VAULT).snapshot.index("owner")
    got = {slug: aliases(suggest_aliases(slug, index, None, 50)) for slug in ("jeu-casse-briques", "python", "docker", "supervision-homelab", "bm25")}
    assert got == {
        "jeu-casse-briques": ["collisions", "jeu vidéo", "technologie"],
        "python": [],  # « L'auteur maîtrise-t-il Python ? »: nothing but the title and « auteur », in 33 notes of 48
        "docker": ["conteneurs"],
        "supervision-homelab": ["outils", "serveurs personnels"],
        "bm25": ["documents", "paramètres k1"],
    }


def test_no_suggestion_names_another_note_or_repeats_an_alias_spelled_otherwise(note_writer):
    note_writer("typescript.md", "title: TypeScript", "Le typage statique de JavaScript.")
    note_writer("python.md", "title: Python\naliases: [adresse e-mail]\nanswers: [Python ou TypeScript ?]", "Des scripts en Python.")
    note_writer("a.md", "title: A", "Voir [[python|Adresses email]] et [[python|TypeScript]].")
    fillers(note_writer)
    bot = make_bot(note_writer.root, default_visibility="public")
    assert aliases(suggest_aliases("python", owner(bot), None)) == []


def test_an_unanswered_question_gives_no_phrase_its_nearest_note_never_uses(note_writer, log):
    note_writer("typescript.md", "title: TypeScript", "Ce que l'on connaît du typage statique de JavaScript.")
    fillers(note_writer)
    bot = make_bot(note_writer.root, default_visibility="public")
    missed = ask(bot, log, "tu connais django ?")
    assert not missed.grounded and missed.sources[0].slug == "typescript"
    assert aliases(suggest_aliases("typescript", owner(bot), log)) == []


# ---------------------------------------------------------------- the loop from the issue


def test_a_missed_question_finds_its_note_first_once_the_alias_is_accepted(note_writer, log):
    fillers(note_writer)
    note_writer("grasbot.md", "title: GrasBot", GRASBOT_BODY)
    bot = make_bot(note_writer.root, default_visibility="public")
    question = "comment marche ton robot conversationnel ?"

    missed = ask(bot, log, question)
    assert not missed.grounded and missed.sources[0].slug == "grasbot"

    [suggestion] = suggest_aliases("grasbot", owner(bot), log)["suggestions"]
    assert suggestion["alias"] == "robot conversationnel"

    # the author accepts it: the plugin writes it into the frontmatter
    note_writer("grasbot.md", f"title: GrasBot\naliases:\n  - {suggestion['alias']}", GRASBOT_BODY)
    report = bot.reload()
    assert report.changed == 1 and not report.errors

    found = bot.search(question, audience="visitor")
    assert found.grounded and found.sources[0].slug == "grasbot"
    assert [(r.signal, r.detail) for r in found.sources[0].reasons if r.signal == "alias"] == [("alias", "alias « robot conversationnel »")]
    assert suggest_aliases("grasbot", owner(bot), log)["suggestions"] == []  # nothing left to suggest


def test_the_phrases_of_a_long_question_log_are_merged_at_once():
    """One candidate per distinct question: 100,000 of them were compared pair by pair (more
    than two and a half minutes). Each phrase still joins the one whose stems hold its own, under the broader."""
    candidates = []
    for i in range(50_000):
        candidates += [_Candidate(f"mot{i} rouge", frozenset({f"mot{i}", "roug"})), _Candidate(f"mot{i}", frozenset({f"mot{i}"}))]
    for c in candidates:
        c.add("visitor_question", c.alias + " ?")
    merged = _merge(candidates)
    assert len(merged) == 50_000
    assert (merged[7].alias, merged[7].evidence) == ("mot7", {"visitor_question": ["mot7 ?", "mot7 rouge ?"]})


def _merge_pair_by_pair(candidates):
    """Groups of phrases whose stems are equal or one within the other, as `_merge` read them."""
    groups: list[list[int]] = []
    for j, b in enumerate(candidates):
        joined = [g for g in groups if any(candidates[i].stems <= b.stems or b.stems <= candidates[i].stems for i in g)]
        groups = [g for g in groups if g not in joined] + [sorted([j, *(i for g in joined for i in g)])]
    return sorted(groups)


_ALIASES = st.sampled_from(["vélo", "Vélo", "velo rouge", "tarte"])
_ROWS = st.tuples(_ALIASES, st.frozensets(st.sampled_from("abcd"), max_size=4), st.sampled_from(sorted(SOURCE_WEIGHTS)))


@settings(max_examples=500, deadline=None)
@given(st.lists(_ROWS, max_size=12))
def test_phrases_merge_as_when_compared_pair_by_pair(rows):
    """The groups, each group's phrasing and its evidence, are those of every pair compared."""
    candidates = [_Candidate(alias, stems) for alias, stems, _ in rows]
    for n, (c, (_, _, source)) in enumerate(zip(candidates, rows, strict=True)):
        c.add(source, f"question {n}")
    expected = []
    for group in _merge_pair_by_pair(candidates):
        members = [candidates[i] for i in group]
        keep = max(members, key=_Candidate.phrasing_rank)
        evidence: dict[str, list[str]] = {}
        for member in sorted(members, key=_Candidate.phrasing_rank, reverse=True):
            for source, items in member.evidence.items():
                evidence.setdefault(source, []).extend(i for i in items if i not in evidence.get(source, []))
        expected.append((keep.alias, keep.stems, evidence))
    assert [(c.alias, c.stems, c.evidence) for c in _merge(candidates)] == expected


def test_a_long_note_is_read_once_for_a_long_question_log(note_writer):
    """Each run and verb-like word of each logged question searched the note's whole text: a
    note of 1 MB and 2,000 questions took minutes. The phrases are still cut before a verb the
    note never uses as a noun, and kept whole where the note writes them so."""
    note_writer("assistant.md", "title: Assistant", "Le chatbot du site répond. La recherche plein texte trouve les notes. " * 14_000)
    fillers(note_writer)
    bot = make_bot(note_writer.root, default_visibility="public")
    first = SimpleNamespace(signals=())
    for question, expected in [
        ("Pourquoi le chatbot {} répondait si vite ?", ["chatbot 0", "chatbot 1", "chatbot 10"]),  # « répondait »: no noun there
        (
            "Où est la recherche plein texte numéro {} ?",
            ["recherche plein texte numéro 0", "recherche plein texte numéro 1", "recherche plein texte numéro 10"],
        ),
    ]:
        logged = [SimpleNamespace(first=first, followup=False, grounded=True, question=question.format(i), typed=question.format(i)) for i in range(1_000)]
        report = suggest_aliases("assistant", owner(bot), SimpleNamespace(questions_ending_on=lambda slug, logged=logged: logged), limit=3)
        assert aliases(report) == expected


@settings(max_examples=3_000, deadline=None)
@given(
    st.lists(
        st.sampled_from(["le ", "la ", "l'", "les ", "des ", "api", "API", "c++", "c#", " ", "base", "de", "données", "-", "’", ",", "x", "lesx"]), max_size=12
    ).map("".join),
    st.lists(st.sampled_from(["le ", "l'", "api", "API", "c++", " ", "base", "de", "données", "-", "’", ",", "x", "lesx"]), min_size=1, max_size=4).map(
        "".join
    ),
)
def test_a_note_read_once_holds_and_names_what_its_text_does(text, phrase):
    """What the note's text read once says of a phrase is what a search of it says."""
    known = NoteText(_flat(text))
    assert known.names(phrase) == named_in(phrase, known.text)
    if _flat(phrase):
        assert known.holds(_flat(phrase)) == (f" {_flat(phrase)} " in f" {known.text} ")
