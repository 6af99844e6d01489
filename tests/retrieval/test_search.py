"""search: ranking, top_k, grounded, urls, paths, audiences, history, and the fast path."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from grasbot._config import Settings
from grasbot.retrieval.scoring import Reason, Score
from grasbot.retrieval.search import NEW_SUBJECT_DISCOUNT, opens_as_follow_up, search, with_conversation
from grasbot.store.questionlog import QuestionLog
from support.bots import BUNDLED_VAULT, make_bot

VAULT = {
    "projets/robot.md": (
        "title: Robot suiveur de ligne\nslug: robot-suiveur\ntype: projet\naliases: [robot suiveur]\ntags: [arduino]\nvisibility: public",
        "Un robot Arduino qui suit une ligne noire avec deux capteurs infrarouges.",
    ),
    "competences/arduino.md": (
        "title: Arduino\ntype: competence\ntags: [arduino, electronique]\nvisibility: public",
        "Programmer des cartes Arduino en C++ pour des robots et des capteurs.",
    ),
    "notes/capteurs.md": (
        "title: Capteurs infrarouges\ntype: technique\nvisibility: public",
        "Un capteur infrarouge mesure la lumière réfléchie par le sol.",
    ),
    "notes/journal.md": (
        "title: Journal\ntype: journal\nvisibility: public",
        "Aujourd'hui j'ai jardiné et cuisiné une tarte aux pommes.",
    ),
    "prive/salaire.md": (
        "title: Négociation salariale\ntype: projet\naliases: [salaire robot]\nvisibility: private",
        "Le robot m'a rapporté une prime. Arduino aussi.",
    ),
    "prive/sans-champ.md": ("title: Brouillon robot", "Une idée de robot."),
}


@pytest.fixture
def vault(note_writer):
    for rel, (fm, body) in VAULT.items():
        note_writer(rel, fm, body)
    return note_writer.root


def test_ranking_order_scores_and_paths(vault):
    bot = make_bot(vault)
    result = bot.search("Comment marche le robot suiveur ?", audience="visitor")
    paths = [s.path for s in result.sources]
    assert paths[0] == "projets/robot.md"
    scores = [s.score for s in result.sources]
    assert scores == sorted(scores, reverse=True)
    top = result.sources[0]
    assert top.slug == "robot-suiveur"
    assert top.title == "Robot suiveur de ligne"
    assert top.type == "projet"
    # the slug is named whole, the title only 2 words of 3: the slug is the one that counts
    # « robot suiveur » side by side in its text; its words written as the question's, among the first found
    assert [r.signal for r in top.reasons] == ["alias", "slug", "bm25", "spelling", "pairs"]
    # the alias says two of the question's three stems: its share of the question's idf, on 10
    q = result.query
    assert top.reasons[0].points == pytest.approx(10 * (q.idf["robot"] + q.idf["suiveur"]) / q.information)
    assert 0 < top.reasons[1].points <= 8.0
    assert top.score == pytest.approx(sum(r.points for r in top.reasons))
    assert result.grounded is True


def test_the_question_s_words_side_by_side_order_the_notes_found(note_writer):
    """A note that says the question's words together (« espace disque libre ») comes before
    one that holds them more often but apart; the pairs are its reason, and its score is the
    sum of its reasons."""
    note_writer("outil.md", "title: Un outil\nvisibility: public", "La commande df affiche l'espace disque libre de chaque partition montée sur la machine.")
    note_writer(
        "bureau.md",
        "title: Ranger\nvisibility: public",
        "Faire de l'espace au bureau, trier chaque disque vinyle : libre à vous. Un espace rangé, un disque propre, un esprit libre.",
    )
    note_writer("cuisine.md", "title: Cuisine\nvisibility: public", "Une recette de gâteau au chocolat.")
    result = make_bot(note_writer.root).search("il me reste combien d'espace disque libre ?", audience="visitor")
    outil, bureau = result.sources
    assert (outil.path, bureau.path) == ("outil.md", "bureau.md")
    pairs = [r for r in outil.reasons if r.signal == "pairs"]
    assert [r.detail for r in pairs] == ["mots côte à côte : « espace disque », « disque libre »"]
    assert "pairs" not in {r.signal for r in bureau.reasons}
    # by its words alone, the note that scatters them would be first
    assert outil.score - pairs[0].points < bureau.score < outil.score
    assert outil.score == pytest.approx(sum(r.points for r in outil.reasons))


def test_top_k(vault):
    bot = make_bot(vault)
    q = "robot arduino capteurs infrarouges"
    assert len(bot.search(q, top_k=1, audience="owner").sources) == 1
    assert len(bot.search(q, top_k=2, audience="owner").sources) == 2
    full = bot.search(q, top_k=10, audience="owner").sources
    assert [s.path for s in bot.search(q, top_k=3, audience="owner").sources] == [s.path for s in full[:3]]


@pytest.mark.parametrize("audience", ["visitor", "owner"])
def test_the_first_notes_are_the_same_whatever_top_k(bundled_bot, audience):
    """One ranking, cut where the caller asks: the pairs signal orders the first PAIRS_POOL
    notes whatever top_k is, so the note a caller asking for 3 sees first is the one the daemon's
    5 and `grasbot eval`'s 10 put first. It ordered the first top_k: « …ta petite fenetre de
    chat, il se passe quoi avant que la reponse s'affiche ? » was answered from
    `techniques/obsidian.md` with 3 or 5 notes and from `grasbot-plugin-obsidian.md` with 10."""
    questions = [
        "salut ! concretement quand je tape un truc dans ta petite fenetre de chat, il se passe quoi avant que la reponse s'affiche ?",
        "tu t'y connais en admin serveur sous debian ? genre ecrire des services, securiser ssh, pare-feu, tout ça",
        *_questions(bundled_bot),
    ]
    history = [{"role": "user", "content": "Parle-moi de GrasBot"}]
    for i, q in enumerate(questions):
        turns = history if i % 5 == 4 else None
        ranking = bundled_bot.search(q, top_k=50, audience=audience, history=turns).sources
        for k in (1, 3, 5, 10):
            cut = bundled_bot.search(q, top_k=k, audience=audience, history=turns).sources
            assert [(s.path, s.score, s.reasons) for s in cut] == [(s.path, s.score, s.reasons) for s in ranking[:k]], (q, k)


def test_default_top_k_comes_from_settings(vault):
    bot = make_bot(vault, search_top_k=2)
    assert len(bot.search("robot arduino capteurs infrarouges", audience="owner").sources) == 2


def test_grounded_threshold(vault):
    bot = make_bot(vault)  # SEARCH_MIN_SCORE 3
    assert bot.settings.search_min_score == 3.0
    off_topic = bot.search("recette de la bouillabaisse marseillaise", audience="visitor")
    assert off_topic.grounded is False
    assert all(s.score < 3.0 for s in off_topic.sources)
    # the same question grounded or not, depending only on the threshold
    q = "une tarte aux pommes"
    best = bot.search(q, audience="visitor").sources[0]
    assert best.path == "notes/journal.md"
    assert make_bot(vault, search_min_score=best.score).search(q, audience="visitor").grounded is True
    assert make_bot(vault, search_min_score=best.score + 0.01).search(q, audience="visitor").grounded is False


def test_nothing_found_is_not_grounded(vault):
    result = make_bot(vault).search("bouillabaisse", audience="visitor")
    assert result.sources == ()
    assert result.grounded is False


def test_url_from_type(vault):
    bot = make_bot(vault)
    urls = {s.path: s.url for s in bot.search("robot arduino capteurs infrarouges tarte", top_k=10, audience="visitor").sources}
    assert urls["projets/robot.md"] == "/portfolio/robot-suiveur"
    assert urls["competences/arduino.md"] == "/competences/arduino"
    assert urls["notes/capteurs.md"] is None
    assert urls["notes/journal.md"] is None


def test_url_map_is_configurable(vault):
    bot = make_bot(vault, url_map="projet=/realisations/{slug},technique=/savoir/{slug}")
    urls = {s.path: s.url for s in bot.search("robot arduino capteurs infrarouges", top_k=10, audience="visitor").sources}
    assert urls["projets/robot.md"] == "/realisations/robot-suiveur"
    assert urls["notes/capteurs.md"] == "/savoir/capteurs"
    assert urls["competences/arduino.md"] is None
    assert Settings.load(env={"GRASBOT_URL_MAP": "projet=/p/{slug}"}).url_for("Projet", "x") == "/p/x"


def test_a_notes_own_slug_and_url_reach_its_hugo_page(tmp_path):
    """Hugo names a page by the note's `slug:` or `url:` (front matter); the source's url follows."""
    (tmp_path / "Recettes").mkdir()
    (tmp_path / "Recettes" / "Crème brûlée.md").write_text("---\nvisibility: public\nslug: Creme-Brulee\n---\nLa crème brûlée au sucre.\n")
    (tmp_path / "Recettes" / "Tarte.md").write_text("---\nvisibility: public\nurl: /desserts/tarte-tatin/\n---\nLa tarte tatin au sucre.\n")
    bot = make_bot(tmp_path, url_map="*=/{hugo}/")
    urls = {s.path: s.url for s in bot.search("sucre", top_k=10, audience="visitor").sources}
    assert urls == {"Recettes/Crème brûlée.md": "/recettes/creme-brulee/", "Recettes/Tarte.md": "/desserts/tarte-tatin/"}


def test_a_hugo_front_matters_slug_and_url_reach_its_hugo_page(tmp_path):
    """Hugo names a page by the `slug` or `url` of a TOML, JSON or Org front matter as by the
    properties' `slug:` or `url:`: the source's url followed the properties' alone, and sent a
    Hugo site's visitor to a page its site does not have (`/recettes/creme-brulee/` for
    `slug = "flan"`). The source id stays the file's (the plugin reads the properties alone)."""
    (tmp_path / "Recettes").mkdir()
    notes = {
        "Crème brûlée.md": '+++\ntitle = "Crème brûlée"\nslug = "flan-au-sucre"\n+++\nLa crème brûlée au sucre.\n',
        "Tarte.md": '+++\ntitle = "Tarte"\nurl = "/desserts/tarte-tatin/"\n+++\nLa tarte tatin au sucre.\n',
        "Gaufre.md": '{\n  "title": "Gaufre",\n  "url": "/desserts/gaufre/"\n}\nLa gaufre au sucre.\n',
        "Crêpe.md": "#+title: Crêpe\n#+slug: crepe-sucree\n\nLa crêpe au sucre.\n",
        "Flan.md": "La flan au sucre, sans front matter.\n",
    }
    for name, text in notes.items():
        (tmp_path / "Recettes" / name).write_text(text)
    bot = make_bot(tmp_path, url_map="*=/{hugo}/", default_visibility="public")
    found = bot.search("sucre", top_k=10, audience="visitor").sources
    assert {s.path: s.url for s in found} == {
        "Recettes/Crème brûlée.md": "/recettes/flan-au-sucre/",
        "Recettes/Tarte.md": "/desserts/tarte-tatin/",
        "Recettes/Gaufre.md": "/desserts/gaufre/",
        "Recettes/Crêpe.md": "/recettes/crepe-sucree/",
        "Recettes/Flan.md": "/recettes/flan/",
    }
    assert {s.path: s.slug for s in found}["Recettes/Crème brûlée.md"] == "creme-brulee"


def test_vault_size_and_results_per_audience(vault):
    bot = make_bot(vault)
    visitor = bot.search("salaire robot", top_k=10, audience="visitor")
    owner = bot.search("salaire robot", top_k=10, audience="owner")
    assert visitor.vault_size == 4
    assert owner.vault_size == 6
    assert bot.vault_size("visitor") == 4 and bot.vault_size("owner") == 6
    assert not {s.path for s in visitor.sources} & {"prive/salaire.md", "prive/sans-champ.md"}
    assert owner.sources[0].path == "prive/salaire.md"
    assert make_bot(vault, default_visibility="public").search("robot", audience="visitor").vault_size == 5


def test_to_dict_shape(vault):
    data = make_bot(vault).search("robot suiveur", audience="visitor").to_dict()
    assert set(data) == {"results", "grounded", "vault_size", "took_ms"}
    first = data["results"][0]
    assert set(first) == {"slug", "title", "type", "score", "reasons", "url", "path", "passages"}
    assert first["path"] == "projets/robot.md"
    assert first["url"] == "/portfolio/robot-suiveur"
    assert set(first["reasons"][0]) == {"signal", "points", "detail"}
    # a short note goes whole: one passage, no heading, the note's own url
    assert first["passages"] == [{"heading": [], "anchor": None, "url": "/portfolio/robot-suiveur", "chars": first["passages"][0]["chars"]}]


def test_history_gives_a_follow_up_its_subject(note_writer):
    note_writer("grasbot.md", "title: GrasBot\nvisibility: public", "GrasBot utilise le modèle Qwen3 de taille 8B.")
    note_writer("voiture.md", "title: Voiture\nvisibility: public", "Ma voiture a un modèle de moteur diesel.")
    note_writer("jardin.md", "title: Jardin\nvisibility: public", "Tomates et courgettes.")
    bot = make_bot(note_writer.root)
    follow_up = "Et quel modèle ?"
    alone = bot.search(follow_up, audience="visitor")
    assert {s.path for s in alone.sources} == {"grasbot.md", "voiture.md"}
    history = [
        {"role": "user", "content": "Parle-moi de GrasBot"},
        {"role": "assistant", "content": "GrasBot est l'assistant du site. Voiture voiture voiture."},
    ]
    with_history = bot.search(follow_up, audience="visitor", history=history)
    first = with_history.sources[0]
    assert first.path == "grasbot.md"
    assert any("(avec la conversation)" in r.detail for r in first.reasons)
    assert first.score > alone.sources[[s.path for s in alone.sources].index("grasbot.md")].score
    # the assistant's words are not the visitor's subject
    assert with_history.sources[1].path == "voiture.md"


def test_blank_turns_are_no_conversation(note_writer, tmp_path):
    """A history of blank questions (or of answers alone) gives a follow-up no subject: it is
    searched, ranked, grounded and logged as the question alone (its points were doubled, a
    question no note answers grounded on one, and its log row told it found its notes through
    a conversation)."""
    note_writer("cuisine.md", "title: Cuisine\nvisibility: public", "La cuisine au beurre, les sauces et les desserts.")
    note_writer("jardin.md", "title: Jardin\nvisibility: public", "Tomates et courgettes du potager.")
    bot = make_bot(note_writer.root)
    bot.question_log = QuestionLog(tmp_path / "q.sqlite3")
    question = "et la cuisine ?"
    alone = bot.search(question, audience="visitor")
    for history in ([{"role": "user", "content": ""}], [{"role": "user", "content": " \n "}], [{"role": "assistant", "content": "Bonjour."}]):
        asked = bot.search(question, audience="visitor", history=history)
        assert [(s.path, s.score) for s in asked.sources] == [(s.path, s.score) for s in alone.sources]
        assert asked.grounded == alone.grounded
        assert not any("(avec la conversation)" in r.detail for s in asked.sources for r in s.reasons)
        bot.record(question, asked, history)
    bot.record(question, alone, [{"role": "user", "content": "Parle-moi du jardin"}])
    with bot.question_log as log:
        assert [q.followup for q in log.questions_ending_on("cuisine")] == [True, False, False, False]


def test_a_new_subject_is_not_pulled_back_to_the_conversation(note_writer):
    """A question that does not open as a follow-up may change the subject: the conversation's
    note keeps NEW_SUBJECT_DISCOUNT of its points, and the note the question is about comes
    first. Said as a follow-up, the conversation's note keeps all its points, and the note
    both the question and the conversation point to still comes first."""
    note_writer("grasbot.md", "title: GrasBot\nvisibility: public", "GrasBot, l'assistant du site, utilise le modèle de langage Qwen3 en local avec Ollama.")
    note_writer("voiture.md", "title: Voiture\nvisibility: public", "Ma voiture, une vieille Clio diesel, est une citadine.")
    note_writer("jardin.md", "title: Jardin\nvisibility: public", "Tomates et courgettes.")
    bot = make_bot(note_writer.root)
    history = [{"role": "user", "content": "GrasBot, l'assistant du site, utilise quel modèle de langage Qwen3 en local avec Ollama ?"}]
    question = "Tu roules en quoi comme voiture, une citadine ou un break familial ?"
    alone = bot.search(question, audience="visitor").sources
    assert [s.path for s in alone] == ["voiture.md"]
    in_conversation = bot.search(history[0]["content"] + " " + question, audience="visitor").sources
    # its points as the conversation finds it: the phrase order (`pairs`) reads a question's own words only
    # and the words written alike are compared once, on the conversation's text, after it (`by_spelling`)
    through_it = sum(r.points for r in next(s for s in in_conversation if s.path == "grasbot.md").reasons if r.signal not in ("pairs", "spelling"))

    changed = bot.search(question, audience="visitor", history=history).sources
    assert [s.path for s in changed] == ["voiture.md", "grasbot.md"]
    assert changed[0].score == alone[0].score
    spelt = sum(r.points for r in changed[1].reasons if r.signal == "spelling")
    assert changed[1].score == pytest.approx(NEW_SUBJECT_DISCOUNT * through_it + spelt)
    assert through_it > alone[0].score  # the better of the two would have put GrasBot first
    assert all(r.detail.endswith("(avec la conversation)") for r in changed[1].reasons if r.signal != "spelling")

    # the same question said as a follow-up carries the conversation on: the question alone
    # finds nothing in GrasBot's note, so its points are all the conversation's, while the car's
    # note earns its own points and the conversation's
    follow_up = bot.search("Et " + question[0].lower() + question[1:], audience="visitor", history=history).sources
    assert [s.path for s in follow_up] == ["voiture.md", "grasbot.md"]
    assert follow_up[1].score == pytest.approx(through_it + sum(r.points for r in follow_up[1].reasons if r.signal == "spelling"))
    assert {r.signal for r in follow_up[0].reasons if not r.detail.endswith("(avec la conversation)")} >= {"bm25"}
    assert any(r.detail.endswith("(avec la conversation)") for r in follow_up[0].reasons)


@pytest.mark.parametrize(
    ("question", "follows"),
    [
        ("Et quel modèle ?", True),
        ("et dovecot il joue lequel de ces rôles ?", True),
        ("ok et en python ?", True),
        ("Mais ça marche sur mobile ?", True),
        ("d’accord, et tu prends combien ?", True),
        ("dʼaccord, et ses projets ?", True),  # a phone's apostrophe (U+02BC)
        ("Merci ! Et pour le site ?", True),
        ("« Du coup » c'est gratuit ?", True),
        ("Étienne t'as fait quoi ?", False),
        ("Etienne, t'as fait quoi ?", False),
        ("non-violence, t'en penses quoi ?", False),
        ("okapi ?", False),
        ("Quel modèle utilises-tu ?", False),
        ("ça marche sur mobile ?", False),
    ],
)
def test_a_follow_up_is_read_from_how_it_opens(question, follows):
    assert opens_as_follow_up(question) is follows


def test_a_follow_up_ranks_first_the_note_both_it_and_the_conversation_point_to():
    """The conversation's best note (« backup ») beats the follow-up's own best (« cron ») on
    either side alone; the note both name (« rsync ») comes first only when both count."""

    def score(points: float) -> Score:
        return Score(points, [Reason("bm25", points, "texte de la note")])

    own = {"cron.md": score(5.0), "rsync.md": score(4.0)}
    in_context = {"backup.md": score(6.0), "rsync.md": score(5.0)}
    follow_up = with_conversation(own, in_context, follows=True)
    assert sorted(follow_up, key=lambda p: -follow_up[p].points) == ["rsync.md", "backup.md", "cron.md"]
    assert follow_up["rsync.md"].points == 9.0
    assert [r.detail for r in follow_up["rsync.md"].reasons] == ["texte de la note", "texte de la note (avec la conversation)"]

    new_subject = with_conversation(own, in_context, follows=False)
    assert {p: s.points for p, s in new_subject.items()} == {"cron.md": 5.0, "rsync.md": 4.0, "backup.md": pytest.approx(6.0 * NEW_SUBJECT_DISCOUNT)}


def test_a_visitors_shorthand_finds_the_note_that_spells_it_out(note_writer):
    note_writer("sqlite.md", "title: SQLite\nvisibility: public", "La base de données du site : un seul fichier, sauvegardé chaque nuit.")
    note_writer("site.md", "title: Le site\nvisibility: public", "Le site est servi par nginx et son chatbot.")
    note_writer("ia.md", "title: Outils\nvisibility: public", "L'IA du chatbot tourne en local.")
    bot = make_bot(note_writer.root)
    first = bot.search("t'utilises quelle bdd pour ton chatbot ?", audience="visitor").sources[0]
    assert first.path == "sqlite.md"
    assert any(r.signal == "bm25" for r in first.reasons)
    assert bot.search("ton intelligence artificielle tourne où ?", audience="visitor").sources[0].path == "ia.md"


def test_search_function_directly(vault):
    bot = make_bot(vault)
    index = bot.snapshot.index("visitor")
    result = search("robot suiveur", index, top_k=2, min_score=100.0)
    assert result.grounded is False
    assert [s.url for s in result.sources] == [None, None]  # no url_for given
    assert result.query.terms == ("robot", "suiveur")


# ---------------------------------------------------------------- the candidate fast path


def _questions(bot) -> list[str]:
    index = bot.snapshot.index("owner")
    questions = [
        "Comment fonctionne GrasBot ?",
        "Quel modèle utilise GrasBot ?",
        "c++",
        "docker compose",
        "Qu'est-ce que BM25 ?",
        "projets de l'auteur",
        "contact",
        "recette de cuisine",
        "Comment le chatbot trouve-t-il ses réponses ?",
        "serveur nginx https",
        "base de données",
        "notes privées",
        "je veux embaucher quelqu'un",
        "typescript et tests",
        "météo",
    ]
    for note in index.notes.values():
        questions.extend(note.answers)
        questions.append(note.title)
        questions.extend(note.aliases[:1])
    return questions


@pytest.mark.parametrize("audience", ["visitor", "owner"])
def test_fast_path_equals_exhaustive_on_the_bundled_vault(bundled_bot, audience):
    index = bundled_bot.snapshot.index(audience)
    questions = _questions(bundled_bot)
    assert len(questions) > 100
    history = [{"role": "user", "content": "Parle-moi de GrasBot"}]
    for i, q in enumerate(questions):
        kwargs = dict(top_k=50, min_score=4.0, history=history if i % 5 == 0 else None)
        fast = search(q, index, **kwargs)
        slow = search(q, index, exhaustive=True, **kwargs)
        assert [(s.path, s.score, s.reasons) for s in fast.sources] == [(s.path, s.score, s.reasons) for s in slow.sources], q
        assert fast.grounded == slow.grounded


_SCORES_OF = """
import sys
from grasbot import GrasBot, Settings
bot = GrasBot.open(Settings.load(env={}, vault_dir=sys.argv[1], semantic="off", index_cache=False, question_log="off"))
bot.warm_spelling()
for q in sys.stdin.read().splitlines():
    for s in bot.search(q, top_k=10, audience="visitor").sources:
        print(q, s.path, repr(s.score), *(f"{r.signal} {r.points!r} {r.detail}" for r in s.reasons), sep=" | ")
"""


def test_a_score_is_the_same_in_every_process(bundled_bot):
    """Deterministic to the last digit: two daemons, whose strings hash differently (Python
    draws a seed a process), give every note the same score and reasons. The question's words
    were summed in the order of a set, so the title's, the pairs' and BM25's points differed in
    their last digits from one start to the next, enough to swap two notes that tie."""
    questions = "\n".join(_questions(bundled_bot))
    runs = [
        subprocess.run(
            [sys.executable, "-c", _SCORES_OF, str(BUNDLED_VAULT)],
            input=questions,
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2", "3")
    ]
    assert runs[0].count("\n") > 500
    assert runs[1] == runs[0]
    assert runs[2] == runs[0]


def test_exhaustive_really_scores_every_note(bundled_bot, monkeypatch):
    """The reference every fast-path test compares with: if `exhaustive` took the fast path
    too, those tests would compare the code with itself and could not fail."""
    from grasbot.retrieval import search as _search
    from grasbot.retrieval.scoring import Query, score_note
    from grasbot.retrieval.search import score_all

    index = bundled_bot.snapshot.index("owner")
    question = "Comment fonctionne GrasBot ?"
    q = Query.parse(question, index)
    candidates = index.candidates(q.unique)
    assert len(candidates) < len(index)
    every = {p: s for p in index.notes if (s := score_note(p, q, index)).points > 0}
    assert every and set(every) <= candidates
    assert score_all(q, index, exhaustive=True) == every
    assert score_all(q, index) == every
    assert all(isinstance(s, Score) and s.points > 0 for s in every.values())
    # search(exhaustive=True) scores every note; the fast path, with its pruning, does not
    scored: list[str] = []
    monkeypatch.setattr(_search, "score_note", lambda path, *a, **kw: scored.append(path) or score_note(path, *a, **kw))
    slow = search(question, index, top_k=5, min_score=4.0, exhaustive=True)
    assert set(scored) == set(index.notes)
    scored.clear()
    fast = search(question, index, top_k=5, min_score=4.0)
    assert scored and set(scored) < set(index.notes)
    assert slow.sources == fast.sources and slow.sources


# ---------------------------------------------------------------- results kept per vault version


def test_a_repeated_question_is_answered_from_this_vault_versions_results(note_writer, monkeypatch):
    import grasbot._engine as engine

    note_writer("robot.md", "title: Robot suiveur\nvisibility: public", "Un robot Arduino qui suit une ligne.")
    note_writer("secret.md", "title: Robot secret\nvisibility: private", "Le robot secret du garage.")
    bot = make_bot(note_writer.root)
    calls = []
    real = engine.search
    monkeypatch.setattr(engine, "search", lambda q, index, **kw: calls.append((q, index.audience)) or real(q, index, **kw))

    first = bot.search("robot", audience="visitor")
    again = bot.search("robot", audience="visitor")
    assert calls == [("robot", "visitor")]
    assert again.sources == first.sources and again.grounded == first.grounded
    assert [s.slug for s in again.sources] == ["robot"]

    # the owner's results are the owner's: never served to a visitor, nor the other way round
    owner = bot.search("robot", audience="owner")
    assert {s.slug for s in owner.sources} == {"robot", "secret"}
    assert [s.slug for s in bot.search("robot", audience="visitor").sources] == ["robot"]
    assert calls == [("robot", "visitor"), ("robot", "owner")]

    # other top_k, or a follow-up with a conversation: searched, a follow-up never kept
    bot.search("robot", audience="visitor", top_k=1)
    history = [{"role": "user", "content": "Parle-moi du garage"}]
    bot.search("robot", audience="visitor", history=history)
    bot.search("robot", audience="visitor", history=history)
    assert len(calls) == 5

    # a reload makes a new vault version, which knows nothing of the old results
    note_writer("robot.md", "title: Robot suiveur\nvisibility: private", "Un robot Arduino qui suit une ligne.")
    bot.reload()
    assert bot.search("robot", audience="visitor").sources == ()
    assert len(calls) == 6


def test_the_kept_results_are_bounded(note_writer, monkeypatch):
    import grasbot._engine as engine

    note_writer("robot.md", "title: Robot suiveur\nvisibility: public", "Un robot Arduino qui suit une ligne.")
    bot = make_bot(note_writer.root)
    monkeypatch.setattr(engine, "SEARCH_CACHE", 3)
    for q in ("robot", "ligne", "arduino", "suiveur", "robot ligne"):
        bot.search(q, audience="visitor")
    kept = bot.snapshot.searches
    assert list(kept) == [("visitor", q, 5, False, True) for q in ("arduino", "suiveur", "robot ligne")]


def test_a_note_named_in_capitals_as_a_hurried_stopword_is_found_by_its_name(note_writer):
    """A note whose whole title is « QUEST » (its file name) had no title for search: « quest »
    is what a visitor types for « qu'est », and « C'est quoi QUEST ? » asked for nothing."""
    note_writer("concepts/QUEST.md", "visibility: public", "QUEST est une démarche de marketing de l'innovation en cinq étapes.")
    note_writer("concepts/PASTOR.md", "visibility: public", "PASTOR est une démarche de rédaction pour le marketing.")
    bot = make_bot(note_writer.root)
    top = bot.search("C'est quoi QUEST ?", audience="visitor").sources[0]
    assert top.path == "concepts/QUEST.md"
    assert [(r.signal, r.detail) for r in top.reasons][0] == ("title", "titre « QUEST »")
    assert bot.search("quest ce que le marketing ?", audience="visitor").query.terms == ("marketing",)


def test_titles_read_once_by_the_worker_are_each_audience_s_own(note_writer, monkeypatch):
    """`Index.readable_title` is kept once read, and the spelling worker reads every note's
    (`GrasBot.settle_spelling`): a search then reads none anew, and a title that links a private
    note still does not name it to a visitor."""
    from grasbot.retrieval.index import Index

    note_writer("prive/zorglub.md", "visibility: private\ntitle: Zorglub", "Le plan secret.\n")
    note_writer("pub/plan.md", "visibility: public\ntitle: Le plan de [[Zorglub]]", "Le plan du jardin potager.\n")
    bot = make_bot(note_writer.root)
    bot.settle_spelling()
    read: list[str | None] = []
    field = Index.readable_field
    monkeypatch.setattr(Index, "readable_field", lambda self, text, path: read.append(text) or field(self, text, path))
    titles = {audience: [s.title for s in bot.search("plan jardin", audience=audience).sources] for audience in ("visitor", "owner")}
    assert titles["visitor"] == ["Le plan de"] and titles["owner"][0] == "Le plan de Zorglub"
    assert "Le plan de [[Zorglub]]" not in read and "Zorglub" not in read
