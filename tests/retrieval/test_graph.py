"""expand_by_graph: neighbours of the best notes come in with a share of their score."""

from __future__ import annotations

import pytest

from grasbot.retrieval.graph import expand_by_graph
from grasbot.retrieval.index import Index, analyse_note
from grasbot.retrieval.scoring import Query, score_note
from grasbot.retrieval.search import score_all
from grasbot.retrieval.vault import VaultOptions, load_vault


def build(note_writer, notes, audience="owner", **options) -> Index:
    for rel, (fm, body) in notes.items():
        note_writer(rel, fm, body)
    vault = load_vault(note_writer.root, VaultOptions(**options))
    return Index.build(vault, audience, {p: analyse_note(n) for p, n in vault.notes.items()})


GRAPH = {
    "seed.md": (
        'title: Zzz\naliases: [moteur grasbot]\nlinked: ["[[lie]]"]\nrelated: ["[[voisin]]"]\nvisibility: public',
        "Voir aussi [[corps]] et ![[schema]].",
    ),
    "lie.md": ("title: Aaa\nvisibility: public", "rien"),
    "voisin.md": ("title: Bbb\nvisibility: public", "rien"),
    "corps.md": ("title: Ccc\nvisibility: public", "rien"),
    "schema.md": ("title: Ddd\nvisibility: public", "rien"),
    "fan.md": ("title: Eee\nvisibility: public", "Je renvoie à [[seed]]."),
    "isole.md": ("title: Fff\nvisibility: public", "rien"),
}


def expand(index, question, min_seed=4.0):
    scores = score_all(Query.parse(question, index), index)
    return scores, expand_by_graph(scores, index, min_seed)


def graph_reasons(score):
    return [(r.signal, round(r.points, 6), r.detail) for r in score.reasons]


def test_neighbours_get_a_share_of_the_seed_score_with_a_graph_reason(note_writer):
    index = build(note_writer, GRAPH)
    scores, expanded = expand(index, "moteur grasbot")
    assert set(scores) == {"seed.md"}
    seed = scores["seed.md"].points
    assert graph_reasons(scores["seed.md"])[0] == ("alias", 10.0, "alias « moteur grasbot »")
    linked, body = round(0.3 * seed, 6), round(0.2 * seed, 6)
    assert graph_reasons(expanded["lie.md"]) == [("graph", linked, "lien depuis [seed] (linked)")]
    assert graph_reasons(expanded["voisin.md"]) == [("graph", linked, "lien depuis [seed] (related)")]
    assert graph_reasons(expanded["corps.md"]) == [("graph", body, "lien depuis [seed] (body)")]
    assert graph_reasons(expanded["schema.md"]) == [("graph", body, "lien depuis [seed] (embed)")]
    assert graph_reasons(expanded["fan.md"]) == [("graph", body, "cité par [seed] (body)")]
    assert "isole.md" not in expanded
    assert expanded["seed.md"] is scores["seed.md"]
    for path, s in expanded.items():
        assert s.points <= expanded["seed.md"].points
        if path != "seed.md":
            assert s.points < expanded["seed.md"].points


def test_expansion_leaves_its_input_alone(note_writer):
    index = build(note_writer, GRAPH)
    scores, expanded = expand(index, "moteur grasbot")
    assert set(scores) == {"seed.md"}
    assert expanded is not scores


def test_a_seed_below_the_threshold_lends_nothing(note_writer):
    index = build(note_writer, GRAPH)
    seed = expand(index, "moteur grasbot")[0]["seed.md"].points
    scores, expanded = expand(index, "moteur grasbot", min_seed=seed + 0.5)
    assert expanded == scores
    assert len(expand(index, "moteur grasbot", min_seed=seed)[1]) > len(scores)


def test_a_note_already_scored_keeps_its_own_score(note_writer):
    notes = dict(GRAPH)
    notes["lie.md"] = ("title: Aaa\ntags: [grasbot]\nvisibility: public", "rien")
    index = build(note_writer, notes)
    scores, expanded = expand(index, "moteur grasbot")
    assert [r.signal for r in expanded["lie.md"].reasons] == ["tag", "bm25"]  # a tag's words are text too
    assert expanded["lie.md"] is scores["lie.md"]
    assert expanded["lie.md"].points < 0.3 * scores["seed.md"].points  # it kept its own, lower, score


def test_a_neighbour_of_two_seeds_takes_the_better_share(note_writer):
    index = build(
        note_writer,
        {
            "a.md": ('title: Zzz\naliases: [alpha]\nlinked: ["[[commun]]"]', ""),
            "b.md": ("title: Yyy\ntags: [alpha]", "[[commun]]"),
            "commun.md": ("title: Xxx", ""),
        },
    )
    scores, expanded = expand(index, "alpha", min_seed=0.0)
    a, b = scores["a.md"].points, scores["b.md"].points
    assert 0.3 * a > 0.2 * b
    assert graph_reasons(expanded["commun.md"]) == [("graph", round(0.3 * a, 6), "lien depuis [a] (linked)")]


def test_only_the_three_best_seeds_lend(note_writer):
    notes = {}
    for i, pts in enumerate(["alpha", "alpha beta", "alpha beta gamma", "alpha beta gamma delta"]):
        tags = ", ".join(pts.split())
        notes[f"s{i}.md"] = (f"title: T{i}\ntags: [{tags}]", f"[[voisin{i}]]")
        notes[f"voisin{i}.md"] = (f"title: V{i}", "")
    index = build(note_writer, notes)
    scores, expanded = expand(index, "alpha beta gamma delta", min_seed=0.0)
    # each tag says a quarter of the question: s3 has the most evidence, then s2, s1; s0 is fourth
    ranked = sorted(scores, key=lambda p: -scores[p].points)
    assert ranked[:4] == ["s3.md", "s2.md", "s1.md", "s0.md"]
    assert "voisin0.md" not in expanded
    assert {"voisin1.md", "voisin2.md", "voisin3.md"} <= set(expanded)


def test_visitor_graph_never_reaches_a_private_note(note_writer):
    notes = {
        "public.md": (
            'title: Zzz\naliases: [moteur grasbot]\nlinked: ["[[secret]]"]\nvisibility: public',
            "Et [[secret-corps]].",
        ),
        "secret.md": ("title: Secret\nvisibility: private", "mot de passe"),
        "secret-corps.md": ("title: Secret corps", "rien"),  # no field: private by default
        "fan-prive.md": ("title: Fan", "[[public]]"),
        "ami.md": ("title: Ami\nvisibility: public", "[[public]]"),
    }
    visitor = build(note_writer, notes, audience="visitor")
    _, expanded = expand(visitor, "moteur grasbot")
    assert set(expanded) == {"public.md", "ami.md"}
    assert set(visitor.notes) == {"public.md", "ami.md"}
    owner = Index.build(
        load_vault(note_writer.root),
        "owner",
        {p: analyse_note(n) for p, n in load_vault(note_writer.root).notes.items()},
    )
    _, expanded_owner = expand(owner, "moteur grasbot")
    assert set(expanded_owner) == {"public.md", "secret.md", "secret-corps.md", "fan-prive.md", "ami.md"}


def test_graph_scores_pass_through_score_note_unchanged(note_writer):
    index = build(note_writer, GRAPH)
    q = Query.parse("moteur grasbot", index)
    assert score_note("lie.md", q, index).points == 0  # it is the walk, not the note, that brings it
    scores, expanded = expand(index, "moteur grasbot")
    assert expanded["lie.md"].points == pytest.approx(0.3 * scores["seed.md"].points)
