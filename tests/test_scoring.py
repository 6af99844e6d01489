"""score_note: each of the seed's signals alone, with its exact points and its reason."""

from __future__ import annotations

import pytest

from grasbot._index import Index, analyse_note
from grasbot._scoring import BM25_FULL_SHARE, Query, score_note
from grasbot._vault import VaultOptions, load_vault

# Notes whose title, file name and body share no word with the questions below, so that only
# the frontmatter field under test can score.
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


def test_a_note_sharing_nothing_scores_exactly_zero(note_writer):
    index = build(note_writer, {"n.md": ("title: Zzz\ntags: [graph]\npriority: 9\ntype: moc", "rien")})
    s = score(index, "n.md", "recette de gâteau")
    assert s.points == 0
    assert s.reasons == []


def test_an_empty_question_scores_zero(note_writer):
    index = build(note_writer, {"n.md": ("title: Zzz\naliases: [le]", "rien")})
    assert score(index, "n.md", "le la les ?").points == 0


# ---------------------------------------------------------------- alias


def test_alias_match_is_worth_10(note_writer):
    index = build(note_writer, {"n.md": ("title: Zzz\naliases: [moteur grasbot, autre chose]", "rien")})
    s = score(index, "n.md", "Parle-moi du moteur de GrasBot")
    assert reasons(s) == [("alias", 10.0, "alias « moteur grasbot »")]
    assert s.points == 10.0


def test_multi_word_alias_must_appear_as_a_run(note_writer):
    index = build(note_writer, {"n.md": ("title: Zzz\naliases: [moteur grasbot]", "rien")})
    assert score(index, "n.md", "grasbot a un moteur").points == 0
    assert score(index, "n.md", "moteur rapide grasbot").points == 0
    assert score(index, "n.md", "le moteur").points == 0


def test_alias_names_the_longest_matching_alias_and_counts_once(note_writer):
    index = build(note_writer, {"n.md": ("title: Zzz\naliases: [moteur, moteur grasbot]", "rien")})
    s = score(index, "n.md", "moteur grasbot")
    assert reasons(s) == [("alias", 10.0, "alias « moteur grasbot »")]


# ---------------------------------------------------------------- title and slug


def test_title_match_is_worth_8(note_writer):
    index = build(note_writer, {"n.md": ("title: Pipeline de recherche", "rien")})
    s = score(index, "n.md", "Comment marche le pipeline de recherche ?")
    title = [r for r in reasons(s) if r[0] == "title"]
    assert title == [("title", 8.0, "titre « Pipeline de recherche »")]
    # the title is part of the searchable text too, so BM25 adds its share and nothing else does
    assert {r[0] for r in reasons(s)} == {"title", "bm25"}


def test_partial_title_is_pro_rata(note_writer):
    index = build(note_writer, {"n.md": ("title: Pipeline de recherche locale", "rien")})
    s = score(index, "n.md", "le pipeline")
    title = [r for r in reasons(s) if r[0] == "title"]
    # 1 word of 3 named: 8 × 0.5 × 1/3
    assert title == [("title", round(8 * 0.5 / 3, 6), "titre « Pipeline de recherche locale » (33% des mots)")]
    s2 = score(index, "n.md", "pipeline de recherche")
    assert [r for r in reasons(s2) if r[0] == "title"] == [
        ("title", round(8 * 0.5 * 2 / 3, 6), "titre « Pipeline de recherche locale » (67% des mots)")
    ]


def test_a_title_naming_one_common_word_of_a_long_question_weighs_less(note_writer):
    index = build(note_writer, {
        "py.md": ("title: Python", "Python."),
        "p1.md": ("title: Aaa", "python"),
        "p2.md": ("title: Bbb", "python"),
    })
    question = "orchestrer des tâches avec Airflow en python"
    q = Query.parse(question, index)
    (title,) = [r for r in score(index, "py.md", question).reasons if r.signal == "title"]
    expected = 8.0 * q.idf["python"] / (0.5 * q.information)
    assert expected < 4.0
    assert title.points == pytest.approx(expected)
    assert title.detail == "titre « Python »"
    # asked alone, the same title is worth its full 8 points
    (alone,) = [r for r in score(index, "py.md", "python").reasons if r.signal == "title"]
    assert alone.points == 8.0


def test_slug_match_is_worth_8(note_writer):
    index = build(note_writer, {"n.md": ("title: Zzz\nslug: moteur-recherche", "rien")})
    s = score(index, "n.md", "le moteur de recherche")
    assert reasons(s) == [("slug", 8.0, "slug « moteur-recherche »")]


def test_title_and_slug_count_once_the_best_of_both(note_writer):
    index = build(note_writer, {"n.md": ("title: Moteur\nslug: moteur-recherche", "rien")})
    s = score(index, "n.md", "moteur")
    assert [r for r in reasons(s) if r[0] in ("title", "slug")] == [("title", 8.0, "titre « Moteur »")]


# ---------------------------------------------------------------- answers


ANSWER = 'title: Zzz\nanswers: ["Quel modèle utilise GrasBot ?", "Autre chose ?"]'


def test_answers_identical_question_is_worth_12(note_writer):
    index = build(note_writer, {"n.md": (ANSWER, "rien")})
    s = score(index, "n.md", "Quel modèle utilise GrasBot ?")
    assert reasons(s) == [("answers", 12.0, "question « Quel modèle utilise GrasBot ? »")]


def test_answers_threshold_is_worth_5(note_writer):
    index = build(note_writer, {"n.md": (ANSWER, "rien")})
    # stems {grasbot} against {model, utilis, grasbot}: Dice 2·1/(1+3) = 0.5, the threshold
    assert reasons(score(index, "n.md", "GrasBot ?")) == [("answers", 5.0, "question « Quel modèle utilise GrasBot ? »")]


def test_answers_in_between_is_linear(note_writer):
    index = build(note_writer, {"n.md": (ANSWER, "rien")})
    # {model, grasbot} vs {model, utilis, grasbot}: Dice 0.8 → 5 + 7 × 0.6 = 9.2
    assert reasons(score(index, "n.md", "le modèle de GrasBot")) == [
        ("answers", 9.2, "question « Quel modèle utilise GrasBot ? »")
    ]


def test_answers_below_threshold_give_nothing(note_writer):
    index = build(note_writer, {"n.md": (ANSWER, "rien")})
    # Dice 2·1/(3+2) = 0.4
    assert score(index, "n.md", "GrasBot cuisine").points == 0
    assert score(index, "n.md", "GrasBot bateau").points == 0


# ---------------------------------------------------------------- tags and domains


def test_tag_is_worth_4_and_a_multi_word_tag_5(note_writer):
    index = build(note_writer, {"n.md": ("title: Zzz\ntags: [ollama, machine-learning]", "rien")})
    assert reasons(score(index, "n.md", "ollama")) == [("tag", 4.0, "tag #ollama")]
    assert reasons(score(index, "n.md", "le machine learning")) == [("tag", 5.0, "tag #machine-learning")]
    assert score(index, "n.md", "machine").points == 0  # every word of the tag must be asked


def test_domain_is_worth_3(note_writer):
    index = build(note_writer, {"n.md": ("title: Zzz\ndomains: [web, ia]", "rien")})
    assert reasons(score(index, "n.md", "le web")) == [("domain", 3.0, "domaine web")]
    assert reasons(score(index, "n.md", "web et ia")) == [
        ("domain", 3.0, "domaine web"), ("domain", 3.0, "domaine ia"),
    ]


def test_inline_tags_score_like_frontmatter_tags(note_writer):
    index = build(note_writer, {"n.md": ("title: Zzz", "rien #ollama")})
    tag = [r for r in reasons(score(index, "n.md", "ollama")) if r[0] == "tag"]
    assert tag == [("tag", 4.0, "tag #ollama")]


def test_taxonomy_is_capped_at_10(note_writer):
    index = build(note_writer, {"n.md": ("title: Zzz\ntags: [alpha, beta, gamma]\ndomains: [delta]", "rien")})
    s = score(index, "n.md", "alpha beta gamma delta")
    assert reasons(s) == [("tag", 4.0, "tag #alpha"), ("tag", 4.0, "tag #beta"), ("tag", 2.0, "tag #gamma")]
    assert s.points == 10.0


# ---------------------------------------------------------------- BM25


BODIES = {
    "a.md": ("title: Zzz", "La compilation du noyau demande du temps. Compilation, compilation et noyau."),
    "b.md": ("title: Yyy", "Le noyau du système."),
    "c.md": ("title: Xxx", "Une note sur autre chose."),
}


def test_bm25_best_note_gets_5_when_it_covers_the_question(note_writer):
    index = build(note_writer, BODIES)
    a = score(index, "a.md", "compilation du noyau")
    b = score(index, "b.md", "compilation du noyau")
    (ra,) = a.reasons
    assert (ra.signal, round(ra.points, 6)) == ("bm25", 5.0)
    assert ra.detail.startswith("texte de la note (BM25 ")
    (rb,) = b.reasons
    assert rb.signal == "bm25" and 0 < rb.points < 5.0
    q = Query.parse("compilation du noyau", index)
    assert rb.points == pytest.approx(5.0 * q.bm25["b.md"] / q.bm25["a.md"])


def test_bm25_shrinks_when_the_vault_barely_covers_the_question(note_writer):
    index = build(note_writer, BODIES)
    question = "noyau quantique interstellaire photonique supraconducteur"
    q = Query.parse(question, index)
    best = max(q.bm25.values())
    assert best < BM25_FULL_SHARE * index.bm25_ceiling(q.unique)
    a = score(index, "a.md", question)
    (r,) = a.reasons
    assert r.signal == "bm25"
    assert r.points == pytest.approx(5.0 * q.bm25["a.md"] / (BM25_FULL_SHARE * index.bm25_ceiling(q.unique)))
    assert 0 < r.points < 2.0


def test_bm25_stays_within_0_and_5(note_writer):
    index = build(note_writer, BODIES)
    for question in ("noyau", "compilation", "système noyau", "autre chose", "gâteau chocolat rosiers"):
        q = Query.parse(question, index)
        for path in index.notes:
            for r in score_note(path, q, index).reasons:
                if r.signal == "bm25":
                    assert 0 < r.points <= 5.0 + 1e-9


# ---------------------------------------------------------------- priority and hub


def test_priority_and_hub_only_when_already_scored(note_writer):
    index = build(note_writer, {
        "moc.md": ("title: Zzz\ntype: moc\npriority: 7\ntags: [ollama]", "rien"),
        "p.md": ("title: Www\npriority: 25\ntags: [ollama]", "rien"),
    })
    assert score(index, "moc.md", "recette inconnue").points == 0
    s = score(index, "moc.md", "ollama")
    assert reasons(s) == [
        ("tag", 4.0, "tag #ollama"),
        ("priority", 0.7, "priorité 7"),
        ("hub", 0.3, "note carrefour (MOC)"),
    ]
    assert s.points == pytest.approx(5.0)
    # priority is capped at 10 → +1.0; with the hub bonus the extra never exceeds 1.3
    assert [r for r in reasons(score(index, "p.md", "ollama")) if r[0] == "priority"] == [("priority", 1.0, "priorité 25")]


def test_reason_to_dict_shape(note_writer):
    index = build(note_writer, {"n.md": ("title: Zzz\ntags: [ollama]", "rien")})
    (r,) = score(index, "n.md", "ollama").reasons
    assert r.to_dict() == {"signal": "tag", "points": 4.0, "detail": "tag #ollama"}
