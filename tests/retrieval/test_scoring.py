"""score_note: each signal alone, with its exact points and its reason.

Every field signal is evidence on one scale: the idf its words share with the question, as a
share of all the question says, times the signal's weight (10 points: says everything)."""

from __future__ import annotations

import math

import pytest

from grasbot import tokenize_fr
from grasbot.retrieval import scoring as _scoring
from grasbot.retrieval.analysis import tokens
from grasbot.retrieval.index import Index, analyse_note
from grasbot.retrieval.scoring import SIGNALS, Query, score_note
from grasbot.retrieval.semantic import Closeness
from grasbot.retrieval.vault import VaultOptions, load_vault
from support.bots import make_bot

# Notes whose title, file name and body share no word with the questions below, so that only
# the note under test can score.
FILLERS = {
    "f1.md": ("title: Cuisine", "Une recette de gâteau au chocolat."),
    "f2.md": ("title: Jardin", "Tailler les rosiers en automne."),
    "f3.md": ("title: Voyage", "Un itinéraire à vélo le long de la Loire."),
}


def build(note_writer, notes: dict[str, tuple[str | None, str]], audience="owner", **options) -> Index:
    for rel, (fm, body) in {**FILLERS, **notes}.items():
        note_writer(rel, fm, body)
    vault = load_vault(note_writer.root, VaultOptions(**options))
    return Index.build(vault, audience, {p: analyse_note(n) for p, n in vault.notes.items()})


def score(index: Index, path: str, question: str):
    return score_note(path, Query.parse(question, index), index)


def reasons(s) -> list[tuple[str, float, str]]:
    return [(r.signal, round(r.points, 6), r.detail) for r in s.reasons]


def fields(s) -> list[tuple[str, float, str]]:
    """The field signals alone: a field's words are also text BM25 reads (one flat field)."""
    return [r for r in reasons(s) if r[0] != "bm25"]


def share(index: Index, question: str, *words: str) -> float:
    """The share of the question's idf that `words` carry."""
    q = Query.parse(question, index)
    return sum(q.idf[t] for t in set(tokenize_fr(" ".join(words)))) / q.information


def test_a_note_sharing_nothing_scores_exactly_zero(note_writer):
    index = build(note_writer, {"n.md": ("title: Zzz\ntags: [graph]\npriority: 9\ntype: moc", "rien")})
    s = score(index, "n.md", "recette de gâteau")
    assert s.points == 0
    assert s.reasons == []


def test_an_empty_question_scores_zero(note_writer):
    index = build(note_writer, {"n.md": ("title: Zzz\naliases: [le]", "rien")})
    assert score(index, "n.md", "le la les ?").points == 0


def test_the_registry_names_every_signal_score_note_gives(note_writer):
    index = build(
        note_writer,
        {
            "n.md": ('title: Moteur\naliases: [moteur]\ntags: [moteur]\ndomains: [moteur]\npriority: 5\ntype: moc\nanswers: ["Le moteur ?"]', "moteur"),
        },
    )
    given = {r.signal for r in score(index, "n.md", "moteur").reasons}
    assert given == {"alias", "title", "answers", "tag", "domain", "bm25", "priority", "hub"}
    assert given <= set(SIGNALS)
    assert _scoring.WEAK_SIGNALS == {"bm25", "pairs", "semantic", "spelling", "graph"}
    assert _scoring.BOOST_SIGNALS == {"priority", "hub"}


# ---------------------------------------------------------------- alias


def test_an_alias_is_worth_the_share_of_the_question_it_says(note_writer):
    index = build(note_writer, {"n.md": ("title: Zzz\naliases: [moteur grasbot, autre chose]", "rien")})
    s = score(index, "n.md", "Parle-moi du moteur de GrasBot")
    expected = 10 * share(index, "Parle-moi du moteur de GrasBot", "moteur", "grasbot")
    assert fields(s) == [("alias", round(expected, 6), "alias « moteur grasbot »")]
    assert 5.0 < expected < 10.0  # « parle » is said too
    assert fields(score(index, "n.md", "moteur grasbot")) == [("alias", 10.0, "alias « moteur grasbot »")]


def test_multi_word_alias_must_appear_as_a_run(note_writer):
    index = build(note_writer, {"n.md": ("title: Zzz\naliases: [moteur grasbot]", "rien")})
    assert fields(score(index, "n.md", "grasbot a un moteur")) == []
    assert fields(score(index, "n.md", "moteur rapide grasbot")) == []
    assert fields(score(index, "n.md", "le moteur")) == []


def test_alias_names_the_longest_matching_alias_and_counts_once(note_writer):
    index = build(note_writer, {"n.md": ("title: Zzz\naliases: [moteur, moteur grasbot]", "rien")})
    s = score(index, "n.md", "moteur grasbot")
    assert fields(s) == [("alias", 10.0, "alias « moteur grasbot »")]


# ---------------------------------------------------------------- title and slug


def test_title_match_is_worth_8(note_writer):
    index = build(note_writer, {"n.md": ("title: Pipeline de recherche locale rapide", "rien")})
    s = score(index, "n.md", "Comment marche le pipeline de recherche locale rapide ?")
    assert fields(s) == [("title", 8.0, "titre « Pipeline de recherche locale rapide »")]
    # the title is part of the searchable text too, so BM25 adds its share and nothing else does
    assert {r[0] for r in reasons(s)} == {"title", "bm25"}


def test_partial_title_is_pro_rata(note_writer):
    index = build(note_writer, {"n.md": ("title: Pipeline de recherche locale rapide", "rien")})
    s = score(index, "n.md", "le pipeline")
    # 1 word of 4 named: 8 × 0.5 × 1/4
    assert fields(s) == [("title", round(8 * 0.5 / 4, 6), "titre « Pipeline de recherche locale rapide » (25% des mots)")]
    s2 = score(index, "n.md", "pipeline de recherche")
    assert fields(s2) == [("title", round(8 * 0.5 * 2 / 4, 6), "titre « Pipeline de recherche locale rapide » (50% des mots)")]


def test_a_short_title_earns_its_share_of_four_words(note_writer):
    """« sudo » names a broad subject, which a question names before asking about one part of
    it: a title of one to three words earns that many quarters of its points, and its reason
    says so; a title of four words or more, all of them."""
    index = build(note_writer, {"a.md": ("title: Sudo", "rien"), "b.md": ("title: Configuration de sudo", "rien")})
    question = "sudo configuration"
    q = Query.parse(question, index)
    held = min(1.0, q.idf["sudo"] / (0.5 * q.information))
    (title,) = [r for r in score(index, "a.md", question).reasons if r.signal == "title"]
    assert (title.points, title.detail) == (pytest.approx(8.0 * held / 4), "titre « Sudo » (court : 1/4 de ses points)")
    longer = "configuration de sudo pour un groupe"
    (part,) = [r for r in score(index, "b.md", longer).reasons if r.signal == "title"]
    said = min(1.0, share(index, longer, "configuration", "sudo") / 0.5)
    assert (part.points, part.detail) == (pytest.approx(8.0 * said * 2 / 4), "titre « Configuration de sudo » (court : 2/4 de ses points)")
    assert fields(score(index, "b.md", "sudo")) == [("title", 1.0, "titre « Configuration de sudo » (50% des mots, court : 2/4 de ses points)")]


def test_a_question_that_is_a_short_title_earns_all_its_points(note_writer):
    """A visitor who types a note's title, and nothing else, names that note, not a broad
    subject before one part of it: its title earns all its points, as a long note's does.
    « Mermaid pour Obsidian » earned half of them, and came second to the long course
    « Obsidian » in a real vault (17 of its 207 titles asked alone were not first; 11 now)."""
    course = " ".join(f"Chapitre {i} : les notes, les liens et les graphes d'Obsidian." for i in range(400)) + " Mermaid dessine des schémas."
    index = build(note_writer, {"o.md": ("title: Obsidian", course), "m.md": ("title: Mermaid pour Obsidian", "Des schémas dans les notes.")})
    title = "Mermaid pour Obsidian"
    assert fields(score(index, "m.md", title)) == [("title", 8.0, "titre « Mermaid pour Obsidian »")]
    # a question that says more than the title keeps the short title's share
    question = "mermaid obsidian plantuml"
    said = share(index, question, "mermaid", "obsidian")
    (part,) = [r for r in score(index, "m.md", question).reasons if r.signal == "title"]
    assert (part.points, part.detail) == (pytest.approx(8.0 * min(1.0, said / 0.5) * 2 / 4), "titre « Mermaid pour Obsidian » (court : 2/4 de ses points)")


def test_a_long_notes_short_title_keeps_its_points(note_writer):
    """A long note's body counts as its best passage, where its subject's words may be rare:
    its title is what says the whole note is about them."""
    course = " ".join(f"Chapitre {i} : les têtes d'attention, les couches et leurs poids." for i in range(400))
    index = build(note_writer, {"t.md": ("title: Transformers", course), "s.md": ("title: Tokenizers", "Des morceaux de mots.")})
    assert index.scored_by_passage("t.md") and not index.scored_by_passage("s.md")
    assert fields(score(index, "t.md", "transformers")) == [("title", 8.0, "titre « Transformers »")]
    assert fields(score(index, "s.md", "tokenizers")) == [("title", 8.0, "titre « Tokenizers »")]  # the question is the title
    assert fields(score(index, "s.md", "tokenizers transformers")) == [("title", 2.0, "titre « Tokenizers » (court : 1/4 de ses points)")]


def test_a_title_naming_one_common_word_of_a_long_question_weighs_less(note_writer):
    index = build(
        note_writer,
        {
            "py.md": ("title: Python", "Python."),
            "p1.md": ("title: Aaa", "python"),
            "p2.md": ("title: Bbb", "python"),
        },
    )
    question = "orchestrer des tâches avec Airflow en python"
    q = Query.parse(question, index)
    (title,) = [r for r in score(index, "py.md", question).reasons if r.signal == "title"]
    expected = 8.0 * q.idf["python"] / (0.5 * q.information) / 4  # and a word of four: a short title
    assert expected < 1.0
    assert title.points == pytest.approx(expected)
    assert title.detail == "titre « Python » (court : 1/4 de ses points)"
    # asked alone, the question is the title: all its points
    (alone,) = [r for r in score(index, "py.md", "python").reasons if r.signal == "title"]
    assert alone.points == 8.0


def test_slug_match_is_worth_8(note_writer):
    index = build(note_writer, {"n.md": ("title: Zzz\nslug: moteur-recherche-local-rapide", "rien")})
    s = score(index, "n.md", "le moteur de recherche local rapide")
    assert reasons(s) == [("slug", 8.0, "slug « moteur-recherche-local-rapide »")]


def test_title_and_slug_count_once_the_best_of_both(note_writer):
    index = build(note_writer, {"n.md": ("title: Moteur\nslug: moteur-recherche", "rien")})
    s = score(index, "n.md", "moteur")
    # the title: the whole question, 8; the slug: half its two words, 8 × 0.5 × 1/2 × 2/4
    assert fields(s) == [("title", 8.0, "titre « Moteur »")]


# ---------------------------------------------------------------- answers


ANSWER = 'title: Zzz\nanswers: ["Quel modèle utilise GrasBot ?", "Autre chose ?"]'


def idf_dice(index: Index, question: str, declared: str) -> float:
    q = Query.parse(question, index)
    asked, declared_stems = set(q.unique), set(Query.parse(declared, index).unique)
    shared = sum(q.idf[t] for t in asked & declared_stems)
    return 2 * shared / (q.information + sum(index.idf(t) for t in declared_stems))


def test_answers_identical_question_is_worth_12(note_writer):
    index = build(note_writer, {"n.md": (ANSWER, "rien")})
    s = score(index, "n.md", "Quel modèle utilise GrasBot ?")
    assert fields(s) == [("answers", 12.0, "question « Quel modèle utilise GrasBot ? »")]


def test_answers_grow_with_an_idf_weighted_overlap(note_writer):
    index = build(note_writer, {"n.md": (ANSWER, "rien")})
    declared = "Quel modèle utilise GrasBot ?"
    for question in ("GrasBot ?", "le modèle de GrasBot"):
        dice = idf_dice(index, question, declared)
        assert _scoring.ANSWERS_THRESHOLD <= dice < 1
        assert fields(score(index, "n.md", question)) == [("answers", round(12 * dice, 6), f"question « {declared} »")]
    assert idf_dice(index, "le modèle de GrasBot", declared) > idf_dice(index, "GrasBot ?", declared)


def test_a_declared_question_s_idf_is_summed_once_an_index(note_writer, monkeypatch):
    """What a declared question's Dice overlap divides by (the idf of its stems) is the same for
    every visitor's question: summed the first time, read after; the points are the same."""
    index = build(note_writer, {"n.md": (ANSWER, "rien")})
    declared = "Quel modèle utilise GrasBot ?"
    score(index, "n.md", "le modèle de GrasBot")
    asked: list[str] = []
    idf = Index.idf
    monkeypatch.setattr(Index, "idf", lambda self, term: asked.append(term) or idf(self, term))
    s = score(index, "n.md", "GrasBot ?")
    assert set(asked) == set(tokenize_fr("GrasBot ?"))  # the question's own stems, none of the declared question's others
    assert fields(s) == [("answers", round(12 * idf_dice(index, "GrasBot ?", declared), 6), f"question « {declared} »")]


def test_the_worker_sums_every_declared_question_s_idf_before_any_question(note_writer, monkeypatch):
    """`declared_information` (the spelling worker's, `GrasBot.settle_spelling`) sums each
    declared question's idf as `answers_points` would: a first question then counts none of
    them, and scores the same."""
    notes = {"n.md": (ANSWER, "rien"), "m.md": ('title: Yyy\nanswers: ["Comment cuire une galette ?"]', "rien")}
    fresh, settled = build(note_writer, notes), build(note_writer, notes)
    _scoring.declared_information(settled)
    asked: list[str] = []
    idf = Index.idf
    monkeypatch.setattr(Index, "idf", lambda self, term: asked.append(term) or idf(self, term))
    question, declared = "GrasBot ?", "Quel modèle utilise GrasBot ?"
    s = score(settled, "n.md", question)
    assert set(asked) == set(tokenize_fr(question))  # the question's own stems, no declared question's
    expected = [("answers", round(12 * idf_dice(fresh, question, declared), 6), f"question « {declared} »")]
    assert fields(s) == fields(score(fresh, "n.md", question)) == expected
    said, summed = (index.derived(_scoring._DECLARED_INFORMATION, dict) for index in (settled, fresh))
    assert len(said) == 3 and len(summed) == 1 and summed.items() <= said.items()  # every one, each the same float


def test_the_spelling_worker_settles_the_declared_questions_idf(note_writer):
    note_writer("n.md", ANSWER, "rien\n")
    bot = make_bot(note_writer.root, default_visibility="public")
    bot.settle_spelling()
    for audience in ("visitor", "owner"):
        index = bot.snapshot.index(audience)
        seqs = [seq for _, seq in index.analyses["n.md"].answers]
        assert index.derived(_scoring._DECLARED_INFORMATION, dict) == {seq: sum(index.idf(t) for t in set(seq)) for seq in seqs}


def test_answers_below_threshold_give_nothing(note_writer):
    index = build(note_writer, {"n.md": (ANSWER, "rien"), "g.md": ("title: Galette", "galette bateau cuisine")})
    question = "GrasBot cuisine bateau galette"
    assert idf_dice(index, question, "Quel modèle utilise GrasBot ?") < _scoring.ANSWERS_THRESHOLD
    assert [r for r in fields(score(index, "n.md", question)) if r[0] == "answers"] == []


def test_a_generic_word_overlap_no_longer_beats_the_subjects_note(note_writer):
    """A declared question that shares only words every note has (« déjà », « projet ») with
    the visitor's must not outrank the note about what the visitor asks (issue 17)."""
    from grasbot.retrieval.search import search

    notes = {f"p{i}.md": (f"title: Projet {i}", f"J'ai déjà mené ce projet numéro {i}.") for i in range(12)}
    notes["generic.md"] = ('title: Docker\nanswers: ["Tu as déjà utilisé Docker en projet ?"]', "Docker en projet.")
    notes["kube.md"] = ("title: Orchestration", "Kubernetes orchestre des conteneurs sur plusieurs machines.")
    index = build(note_writer, notes)
    question = "tu as déjà déployé kubernetes en projet ?"
    # the seed's flat Dice on stems was 2·2/(4+4) = 0.5, its threshold: +5, as much as the best BM25
    dice = idf_dice(index, question, "Tu as déjà utilisé Docker en projet ?")
    assert dice < _scoring.ANSWERS_THRESHOLD
    ranked = [s.path for s in search(question, index, top_k=3, min_score=4.0).sources]
    assert ranked[0] == "kube.md"


# ---------------------------------------------------------------- tags and domains


def test_a_tag_is_worth_half_the_share_it_says_and_a_multi_word_tag_more(note_writer):
    index = build(note_writer, {"n.md": ("title: Zzz\ntags: [ollama, machine-learning]", "rien")})
    assert fields(score(index, "n.md", "ollama")) == [("tag", 5.0, "tag #ollama")]
    assert fields(score(index, "n.md", "le machine learning")) == [("tag", 6.0, "tag #machine-learning")]
    assert fields(score(index, "n.md", "ollama local")) == [("tag", round(5.0 * share(index, "ollama local", "ollama"), 6), "tag #ollama")]
    assert fields(score(index, "n.md", "machine")) == []  # every word of the tag must be asked


def test_domain_is_worth_less_than_a_tag(note_writer):
    index = build(note_writer, {"n.md": ("title: Zzz\ndomains: [web, ia]", "rien")})
    assert reasons(score(index, "n.md", "le web")) == [("domain", 3.0, "domaine web")]
    both = "web et ia"
    assert reasons(score(index, "n.md", both)) == [
        ("domain", round(3.0 * share(index, both, "web"), 6), "domaine web"),
        ("domain", round(3.0 * share(index, both, "ia"), 6), "domaine ia"),
    ]


def test_inline_tags_score_like_frontmatter_tags(note_writer):
    index = build(note_writer, {"n.md": ("title: Zzz", "rien #ollama")})
    tag = [r for r in reasons(score(index, "n.md", "ollama")) if r[0] == "tag"]
    assert tag == [("tag", 5.0, "tag #ollama")]


def test_taxonomy_is_capped_at_10(note_writer, monkeypatch):
    monkeypatch.setattr(_scoring, "TAG_WEIGHT", 0.4)
    index = build(note_writer, {"n.md": ("title: Zzz\ntags: [alpha, beta, gamma]\ndomains: [delta]", "rien")})
    monkeypatch.setattr(_scoring, "TAXONOMY_CAP", 3.0)
    s = score(index, "n.md", "alpha")
    assert fields(s) == [("tag", 3.0, "tag #alpha")]  # 4 points, capped at 3
    s = score(index, "n.md", "alpha beta gamma delta")
    taxonomy = [r for r in fields(s) if r[0] in ("tag", "domain")]
    assert sum(r[1] for r in taxonomy) == pytest.approx(3.0)


def test_a_word_many_notes_declare_as_their_domain_is_common_however_few_bodies_write_it(note_writer):
    """`domains: [ia]` on most notes says « IA » is what they are about, though only their map
    writes « intelligence artificielle »: the word weighs as common as the domain is, and a
    question about one of them (« quelle IA rédige les réponses ? ») finds the note that answers,
    not the map that alone spells the word out (the bundled vault's « moc-ia »)."""
    from grasbot.retrieval.search import search

    notes = {f"m{i}.md": (f"title: Modèle {i}\ndomains: [ia]", f"Le modèle numéro {i} tourne sur la machine.") for i in range(4)}
    notes["carte.md"] = ("title: Carte des notes\ndomains: [ia]", "Les notes sur l'intelligence artificielle, de la recherche aux réponses.")
    notes["qwen.md"] = ("title: Qwen\ndomains: [ia]", "Qwen rédige les réponses du site.")
    index = build(note_writer, notes)
    n = len(index.notes)
    for term in tokens("IA"):  # « intelligence artificielle »: two stems
        assert (index.df(term), index.declared(term)) == (1, 6)
        assert index.idf(term) == pytest.approx(math.log(1.0 + (n - 6 + 0.5) / (6 + 0.5)))
    assert index.declared("redig") == 0 and index.idf("redig") == pytest.approx(math.log(1.0 + (n - 1 + 0.5) / (1 + 0.5)))
    ranked = [s.path for s in search("quelle IA rédige les réponses ?", index, top_k=3, min_score=1.0).sources]
    assert ranked[:2] == ["qwen.md", "carte.md"]


def test_the_declared_questions_idf_leaves_the_question_terms_impacts_kept(note_writer, monkeypatch):
    """`idf` is asked of every stem of the declared questions a search scores; counting their
    domains must not fill the index's memo of terms (`_MEMO_TERMS`), which then forgot the
    question's own impacts and made them again (seven times over 380 generated questions at
    10,000 notes). The count is the same either way."""
    from grasbot.retrieval import index as _index

    monkeypatch.setattr(_index, "_MEMO_TERMS", 16)
    declared = ", ".join(f'"Le moteur {word} ?"' for word in ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"))
    index = build(
        note_writer,
        {
            "n.md": (f"title: Zzz\nanswers: [{declared}]\ndomains: [moteur, alpha]", "Un moteur."),
            "m.md": ("title: Yyy\ndomains: [moteur]", "Un autre moteur."),
        },
    )
    kept = index.impacts("moteur")
    s = score(index, "n.md", "le moteur")
    assert [r[0] for r in reasons(s)] == ["answers", "domain", "bm25"]
    assert index.impacts("moteur") is kept
    assert [index.declared(t) for t in ("moteur", "alpha", "beta")] == [2, 1, 0]
    index.field_hits("moteur")  # kept by a search's bounds: read from them
    assert index.declared("moteur") == 2


# ---------------------------------------------------------------- BM25


BODIES = {
    "a.md": ("title: Zzz", "La compilation du noyau demande du temps. Compilation, compilation et noyau."),
    "b.md": ("title: Yyy", "Le noyau du système."),
    "c.md": ("title: Xxx", "Une note sur autre chose."),
}


def test_bm25_points_are_the_share_of_the_questions_ceiling(note_writer):
    index = build(note_writer, BODIES)
    q = Query.parse("compilation du noyau", index)
    (ra,) = score(index, "a.md", "compilation du noyau").reasons
    assert ra.signal == "bm25" and ra.detail.startswith("texte de la note (BM25 ")
    assert ra.points == pytest.approx(10 * q.bm25["a.md"] / index.bm25_ceiling(q.unique))
    (rb,) = score(index, "b.md", "compilation du noyau").reasons
    assert 0 < rb.points < ra.points


def test_bm25_shrinks_when_the_vault_barely_covers_the_question(note_writer):
    index = build(note_writer, BODIES)
    narrow = score(index, "a.md", "noyau").points
    wide = score(index, "a.md", "noyau quantique interstellaire photonique supraconducteur").points
    assert 0 < wide < narrow / 3


def test_bm25_stays_within_0_and_10(note_writer):
    index = build(note_writer, BODIES)
    seen = []
    for question in ("noyau", "compilation", "système noyau", "autre chose", "gâteau chocolat rosiers"):
        q = Query.parse(question, index)
        for path in index.notes:
            seen += [r.points for r in score_note(path, q, index).reasons if r.signal == "bm25"]
    assert len(seen) >= 8  # the bound is checked on real points, not on an empty loop
    assert all(0 < points <= 10.0 + 1e-9 for points in seen)
    assert max(seen) > 5.0


# ---------------------------------------------------------------- priority and hub


def test_priority_and_hub_are_shares_of_the_evidence_only_when_already_scored(note_writer):
    index = build(
        note_writer,
        {
            "moc.md": ("title: Zzz\ntype: moc\npriority: 7\ntags: [ollama]", "rien"),
            "p.md": ("title: Www\npriority: 25\ntags: [ollama]", "rien"),
        },
    )
    assert score(index, "moc.md", "recette inconnue").points == 0
    s = score(index, "moc.md", "ollama")
    evidence = sum(r.points for r in s.reasons if r.signal not in ("priority", "hub"))
    assert reasons(s)[-2:] == [
        ("priority", round(0.014 * evidence, 6), "priorité 7"),
        ("hub", round(0.01 * evidence, 6), "note carrefour (MOC)"),
    ]
    assert s.points == pytest.approx(evidence * 1.024)
    # priority is capped at 10: 2 %
    p = score(index, "p.md", "ollama")
    (priority,) = [r for r in p.reasons if r.signal == "priority"]
    assert priority.points == pytest.approx(0.02 * sum(r.points for r in p.reasons if r.signal != "priority"))


def test_priority_reorders_close_notes_but_never_lifts_a_clearly_weaker_one(note_writer):
    from grasbot.retrieval.search import search

    index = build(
        note_writer,
        {
            "twin-a.md": ("title: Aaa", "Le protocole gopher sert des menus."),
            "twin-b.md": ("title: Bbb\npriority: 10", "Le protocole gopher sert des menus."),
            "strong.md": ("title: Ccc", "Gopher, gopher : le protocole gopher et ses menus gopher."),
            "weak.md": ("title: Ddd\npriority: 10\ntype: moc", "Un mot sur gopher, entre mille autres choses dites ici."),
        },
    )
    ranked = {s.path: s for s in search("le protocole gopher", index, top_k=4, min_score=0.0).sources}
    # identical evidence: the priority decides
    assert ranked["twin-b.md"].score > ranked["twin-a.md"].score
    # the weak note with every tie-breaker stays below the note that is clearly the answer
    assert ranked["strong.md"].score > ranked["weak.md"].score
    weak_evidence = sum(r.points for r in ranked["weak.md"].reasons if r.signal not in ("priority", "hub"))
    assert ranked["weak.md"].score <= weak_evidence * (1 + _scoring.BONUS_MAX) + 1e-9


def test_reason_to_dict_shape(note_writer):
    index = build(note_writer, {"n.md": ("title: Zzz\ntags: [ollama]", "rien")})
    r = score(index, "n.md", "ollama").reasons[0]
    assert r.to_dict() == {"signal": "tag", "points": 5.0, "detail": "tag #ollama"}


def test_an_abbreviation_is_read_as_the_vault_word_it_begins(note_writer, monkeypatch):
    index = build(note_writer, {"sql.md": ("title: Bases de données", "J'administre des serveurs PostgreSQL.")})
    query = Query.parse("tu connais postgres ?", index)
    assert "postgresql" in query.unique and "postgr" not in query.unique
    assert query.read == {"postgr": "postgresql"}  # what `grasbot search` shows
    assert score(index, "sql.md", "tu connais postgres ?").points > 0
    monkeypatch.setattr(_scoring, "ABBREVIATION_MIN", 99)  # without the rule the note is out of reach
    assert score(index, "sql.md", "tu connais postgres ?").points == 0


def test_an_abbreviation_reads_as_its_most_common_completion(note_writer):
    index = build(
        note_writer,
        {
            "a.md": ("title: Aaa", "La configuration du serveur."),
            "b.md": ("title: Bbb", "Une configuration minimale."),
            "c.md": ("title: Ccc", "Le programme configwizard."),
        },
    )
    assert Query.parse("la config ?", index).unique == {"configur"}  # 2 notes against 1 (« configwizard » sorts after)


def test_an_abbreviation_never_reads_as_a_word_only_boilerplate_lines_hold(note_writer):
    """A word every page's licence line holds is the vault's commonest by its raw count, but
    search reads past those lines: « commu » must read as the word a note's text holds."""
    footer = "Cette page fait partie du manuel communautaire traduit par des bénévoles."
    pages = {f"page{i}.md": (f"title: Page {i}\nvisibility: public", f"Sujet numéro {i}.\n\n{footer}\n") for i in range(4)}
    services = ("title: Services\nvisibility: public", "La communication entre les services.")
    index = build(note_writer, {**pages, "services.md": services}, audience="visitor")
    (boilerplate_word,), (text_word,) = tokens("communautaire"), tokens("communication")
    assert index.body.df(boilerplate_word) == 4 and index.df(boilerplate_word) == 0  # a boilerplate-only word
    assert index.body.df(text_word) == 1 and index.df(text_word) == 1
    assert Query.parse("commu ?", index).unique == {text_word}
    assert score(index, "services.md", "commu ?").points > 0


def test_words_the_vault_holds_and_short_stems_are_read_as_written(note_writer):
    index = build(note_writer, {"n.md": ("title: Photo", "La photographie, le trucage et la version 2024beta.")})
    assert Query.parse("une photo", index).unique == {"photo"}  # held: never replaced by « photograph »
    assert Query.parse("un truc", index).unique == {"truc"}  # 4 letters begin too many words
    assert Query.parse("la 2024b", index).unique == {"2024b"}  # not a word: never read as « 2024beta »


def test_a_visitor_question_never_completes_to_a_private_word(note_writer):
    visitor = build(
        note_writer,
        {
            "pub.md": ("title: Aaa\nvisibility: public", "Une page publique."),
            "secret.md": ("title: Ccc\nvisibility: private", "Notre serveur PostgreSQL interne."),
        },
        audience="visitor",
    )
    owner = build(note_writer, {}, audience="owner")
    assert "postgr" in Query.parse("postgres ?", visitor).unique
    assert "postgresql" in Query.parse("postgres ?", owner).unique


def test_meaning_counts_from_half_a_deviation_its_z_in_units():
    """A note half a deviation closer than the mean already earns its z in units of the body's
    spread (from one deviation, the documentation tune part lost a question at hit@5)."""
    meaning_points = _scoring.meaning_points
    assert meaning_points(Closeness(cosine=0.2, z=0.7), 2.0) == pytest.approx(1.4)
    assert meaning_points(Closeness(cosine=0.2, z=0.45), 2.0) == 0.0
    # a declared question standing out adds half its own z, from the same threshold
    close = Closeness(cosine=0.2, z=0.45, asked="Qui es-tu ?", asked_cosine=0.5, asked_z=0.6)
    assert meaning_points(close, 2.0) == pytest.approx(2.0 * 0.5 * 0.6)


def test_a_deviation_of_meaning_is_worth_a_deviation_of_the_body_points(note_writer):
    """The semantic signal's unit is the spread (population standard deviation) of the body's
    BM25 points over every note of the audience, a note without the question's words counting
    0 (issue 17's z-score fusion); SEMANTIC_FLOOR when the body's points barely vary."""
    import statistics

    index = build(note_writer, BODIES)
    question = "compilation du noyau"
    lexical = Query.parse(question, index)
    body_points = [sum(r.points for r in score_note(p, lexical, index).reasons if r.signal == "bm25") for p in index.notes]
    assert len(body_points) == 6 and sum(p > 0 for p in body_points) == 2  # the fillers and c.md count as 0
    unit = statistics.pstdev(body_points)
    assert unit > 0.5  # above the floor
    close = {"c.md": Closeness(cosine=0.4, z=1.5), "b.md": Closeness(cosine=0.3, z=0.8)}
    query = Query.parse(question, index, close)
    assert query.semantic == pytest.approx({"c.md": 1.5 * unit, "b.md": 0.8 * unit})
    (meaning,) = [r for r in score_note("c.md", query, index).reasons if r.signal == "semantic"]
    assert meaning.points == pytest.approx(1.5 * unit)
    assert meaning.detail == "sens proche (cosinus 0.40, 1.5 écarts-types)"
    # no word of the question in any note: the body's points do not vary, the floor is the unit
    nothing = Query.parse("photosynthèse", index, {"c.md": Closeness(cosine=0.4, z=1.5)})
    assert nothing.bm25 == {} and nothing.semantic == pytest.approx({"c.md": 1.5 * 0.5})


def test_a_declared_question_sharing_less_than_half_is_not_the_visitors(note_writer):
    """« tu connais kubernetes ? » shares only « connaître » with « L'auteur connaît-il
    TypeScript ? », and Kubernetes is in no note: from 0.4, that overlap gave the TypeScript
    note 5.3 points and grounded the answer (curated off-topic tune part: 3 of 13 grounded,
    2 of 13 from 0.5; no ranking of any tune set changed)."""
    notes = {"ts.md": ('title: TypeScript\nanswers: ["L\'auteur connaît-il TypeScript ?"]', "Du TypeScript côté client.")}
    notes.update({f"outil{i}.md": (f"title: Outil {i}", "On y écrit du TypeScript.") for i in range(5)})  # a common word here
    index = build(note_writer, notes)
    question, declared = "tu connais kubernetes ?", "L'auteur connaît-il TypeScript ?"
    dice = idf_dice(index, question, declared)
    assert 0.4 <= dice < _scoring.ANSWERS_THRESHOLD
    assert [r for r in fields(score(index, "ts.md", question)) if r[0] == "answers"] == []
    named = dict((r[0], r[1]) for r in fields(score(index, "ts.md", "tu connais typescript ?")))
    assert named["answers"] > 6  # the subject named: the note's own question, more than half of it


# ---------------------------------------------------------------- words side by side


def test_a_question_pairs_its_neighbouring_words_once_and_shows_them_as_written(note_writer):
    index = build(note_writer, {"n.md": ("title: Disques", "L'espace disque libre se lit avec df. Le disque, son espace.")})
    query = Query.parse("Comment voir l'espace disque libre, l'espace disque ?", index)
    pairs = _scoring.question_pairs(query, index)
    # « voir » is no note's word: it pairs with nothing; stop words and commas are not there
    label = _scoring.pair_labels(query)
    assert [(p.a, p.b, label(p)) for p in pairs] == [("espac", "disqu", "espace disque"), ("disqu", "libr", "disque libre"), ("libr", "espac", "libre espace")]
    assert pairs[0].weight == pytest.approx(query.idf["espac"] + query.idf["disqu"])


def test_words_side_by_side_earn_points_the_same_words_apart_do_not(note_writer):
    index = build(
        note_writer,
        {
            "ensemble.md": ("title: A", "Pour voir l'espace disque libre, df suffit."),
            "epars.md": ("title: B", "L'espace de travail est propre. Le disque dur est neuf."),
            "ailleurs.md": ("title: C", "Rien sur le sujet, sinon un disque vinyle."),
        },
    )
    query = Query.parse("espace disque", index)
    pairs = _scoring.question_pairs(query, index)
    points = _scoring.pair_points(["epars.md", "ensemble.md", "ailleurs.md"], pairs, index)
    assert points.keys() == {"ensemble.md"}
    gained, found = points["ensemble.md"]
    assert [_scoring.pair_labels(query)(p) for p in found] == ["espace disque"]
    norm = index.note_norm("ensemble.md")
    # the only pair found is the yardstick: once, saturated as a word's count is, of 10 × 0.2
    assert gained == pytest.approx(10 * 0.2 * 1 / (1 + norm))
    # a pair no note of those ranked holds side by side gives nothing to anyone
    assert _scoring.pair_points(["epars.md", "ailleurs.md"], pairs, index) == {}
