"""A reload touches only what changed: the other notes are neither re-read, re-parsed nor re-analysed,
and the result equals a build from scratch."""

from __future__ import annotations

import os

import pytest

import grasbot._engine as engine
import grasbot.retrieval.vault as vault_mod
from generate_vault import generate, questions
from grasbot import Settings, build_snapshot, search


@pytest.fixture
def counted(monkeypatch):
    calls = {"parse": [], "analyse": []}
    real_parse, real_analyse = vault_mod.parse_note, engine.analyse_note

    def parse(rel, *a, **kw):
        calls["parse"].append(rel)
        return real_parse(rel, *a, **kw)

    def analyse(note):
        calls["analyse"].append(note.path)
        return real_analyse(note)

    monkeypatch.setattr(vault_mod, "parse_note", parse)
    monkeypatch.setattr(engine, "analyse_note", analyse)
    return calls


def _same(a, b):
    """Two snapshots answer every question identically, and hold identical indexes."""
    for audience in ("visitor", "owner"):
        ia, ib = a.index(audience), b.index(audience)
        assert set(ia.notes) == set(ib.notes)
        assert ia.edges == ib.edges and ia.backlinks == ib.backlinks
        assert {p: ia.body.length(p) for p in ia.notes} == {p: ib.body.length(p) for p in ib.notes}
        for q in questions(b.vault.notes.values(), 60, seed=1):
            ra, rb = (search(q, i, top_k=5, min_score=4.0).to_dict() for i in (ia, ib))
            ra.pop("took_ms"), rb.pop("took_ms")
            assert ra == rb, q


def test_change_add_remove_touch_only_those_notes(tmp_path, counted):
    root = tmp_path / "vault"
    paths = generate(root, 150, seed=2)
    settings = Settings.load(env={}, vault_dir=root)
    first = build_snapshot(settings)
    assert len(counted["parse"]) == 150
    counted["parse"].clear(), counted["analyse"].clear()

    changed, removed = paths[10], paths[20]
    changed.write_text(changed.read_text(encoding="utf-8") + "\nUn paragraphe neuf sur la tokenisation.\n", encoding="utf-8")
    removed.unlink()
    added = root / "notes" / "nouvelle-note.md"
    added.write_text("---\ntitle: Nouvelle note\nvisibility: public\n---\nLe corpus et la tokenisation.\n", encoding="utf-8")
    second = build_snapshot(settings, first)

    rel = lambda p: p.relative_to(root).as_posix()  # noqa: E731
    assert sorted(counted["parse"]) == sorted([rel(changed), rel(added)])
    assert sorted(counted["analyse"]) == sorted([rel(changed), rel(added)])
    assert rel(removed) not in second.vault.notes
    unchanged = rel(paths[30])
    assert second.vault.notes[unchanged] is first.vault.notes[unchanged]
    assert first.index("owner").body.length(rel(changed)) != second.index("owner").body.length(rel(changed))
    _same(second, build_snapshot(settings))


def test_touched_but_identical_file_is_not_reparsed(tmp_path, counted):
    root = tmp_path / "vault"
    paths = generate(root, 40, seed=4)
    settings = Settings.load(env={}, vault_dir=root)
    first = build_snapshot(settings)
    counted["parse"].clear(), counted["analyse"].clear()
    paths[0].write_bytes(paths[0].read_bytes())  # new mtime, same bytes
    second = build_snapshot(settings, first)
    assert counted["parse"] == [] and counted["analyse"] == []
    _same(second, build_snapshot(settings))


def test_visibility_change_moves_a_note_between_audiences(tmp_path, counted):
    root = tmp_path / "vault"
    paths = generate(root, 60, seed=6)
    settings = Settings.load(env={}, vault_dir=root)
    first = build_snapshot(settings)
    public = next(p for p in paths if "visibility: public" in p.read_text(encoding="utf-8"))
    public.write_text(public.read_text(encoding="utf-8").replace("visibility: public", "visibility: private"), encoding="utf-8")
    second = build_snapshot(settings, first)
    rel = public.relative_to(root).as_posix()
    assert rel in first.index("visitor").notes and rel not in second.index("visitor").notes
    assert rel in second.index("owner").notes
    _same(second, build_snapshot(settings))


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_changed_links_and_names_update_the_graph(tmp_path, counted):
    """A reload re-resolves only what can have changed, yet equals a build from scratch: a note
    whose links changed, and every link when a title (which `[[Un titre]]` may name) changed."""
    root = tmp_path / "vault"
    _write(root / "a.md", "---\ntitle: Alpha\nvisibility: public\n---\nVoir [[b]] et [[Le Gamma]].\n")
    _write(root / "b.md", "---\ntitle: Beta\nvisibility: public\n---\nRetour vers [[a]].\n")
    _write(root / "c.md", "---\ntitle: Gamma\nvisibility: public\n---\nSeul, sans lien.\n")
    _write(root / "d.md", "---\ntitle: Delta\nvisibility: private\n---\nLien privé vers [[c]].\n")
    settings = Settings.load(env={}, vault_dir=root)
    first = build_snapshot(settings)
    assert any("Le Gamma" in w.message for w in first.vault.warnings)  # dangling for now

    _write(root / "b.md", "---\ntitle: Beta\nvisibility: public\n---\nRetour vers [[a]] et [[c]].\n")
    second = build_snapshot(settings, first)
    assert ("b.md", "body") in second.index("visitor").backlinks["c.md"]
    _same(second, build_snapshot(settings))
    assert [w.message for w in second.vault.warnings] == [w.message for w in build_snapshot(settings).vault.warnings]

    _write(root / "c.md", "---\ntitle: Le Gamma\nvisibility: public\n---\nSeul, sans lien.\n")
    third = build_snapshot(settings, second)
    assert dict(third.vault.edges["a.md"]).get("c.md") == "body"  # [[Le Gamma]] now names c.md
    assert not any("Le Gamma" in w.message for w in third.vault.warnings)
    _same(third, build_snapshot(settings))

    _write(root / "b.md", "---\ntitle: Beta\nvisibility: public\n---\nPlus aucun lien.\n")
    (root / "d.md").unlink()
    fourth = build_snapshot(settings, third)
    assert "b.md" not in dict(fourth.index("owner").backlinks.get("c.md", ()))
    _same(fourth, build_snapshot(settings))


def test_links_into_an_excluded_folder_warn_as_a_fresh_load_says(tmp_path):
    """A link to a note of a folder --exclude left out is no dangling link; a reload, whether
    the linking note changed or a note came into or left the excluded folder (the linking note
    unchanged), warns exactly as a build from scratch."""
    root = tmp_path / "vault"
    _write(root / "Journal" / "3 mai.md", "Mon journal.\n")
    _write(root / "a.md", "---\nvisibility: public\n---\nVoir [[3 mai]] et [[Nulle part]].\n")
    _write(root / "b.md", "---\nvisibility: public\n---\nRetour vers [[a]].\n")
    settings = Settings.load(env={"GRASBOT_EXCLUDE": "Journal"}, vault_dir=root)

    def warned(snapshot) -> list[str]:
        said = [w.message for w in snapshot.vault.warnings]
        assert said == [w.message for w in build_snapshot(settings).vault.warnings]
        return said

    nowhere = "le lien [[Nulle part]] ne mène à aucune note"
    fourth_may = "le lien [[Journal/4 mai]] ne mène à aucune note"
    first = build_snapshot(settings)
    assert warned(first) == [nowhere]
    _write(root / "a.md", "---\nvisibility: public\n---\nVoir [[3 mai]], [[Journal/4 mai]] et [[Nulle part]].\n")
    second = build_snapshot(settings, first)
    assert warned(second) == [fourth_may, nowhere]
    _write(root / "Journal" / "4 mai.md", "Le lendemain.\n")
    third = build_snapshot(settings, second)
    assert warned(third) == [nowhere]
    (root / "Journal" / "3 mai.md").unlink()
    fourth = build_snapshot(settings, third)
    assert warned(fourth) == ["le lien [[3 mai]] ne mène à aucune note", nowhere]
    _same(fourth, build_snapshot(settings))


def test_a_link_to_a_note_that_failed_to_load_is_said_once_as_its_failure(tmp_path):
    """A note that could not be loaded (broken YAML, not a regular file) is reported as such:
    a link to it is no dangling link too, which told the author twice, and wrongly, that no
    note was there. A reload that breaks, mends or deletes it warns as a fresh load does."""
    root = tmp_path / "vault"
    _write(root / "Projets" / "plan.md", "---\ntitle: [pas fermé\n---\nLe plan.\n")
    _write(root / "a.md", "---\nvisibility: public\n---\nVoir [[plan]], [[Projets/plan|le plan]] et [[tube]].\n")
    os.mkfifo(root / "tube.md")
    settings = Settings.load(env={}, vault_dir=root)

    def said(snapshot) -> tuple[list[str], list[str]]:
        errors, warnings = [e.path for e in snapshot.vault.errors], [w.message for w in snapshot.vault.warnings]
        fresh = build_snapshot(settings).vault
        assert (errors, warnings) == ([e.path for e in fresh.errors], [w.message for w in fresh.warnings])
        return sorted(errors), warnings

    first = build_snapshot(settings)
    assert said(first) == (["Projets/plan.md", "tube.md"], [])
    _write(root / "Projets" / "plan.md", "---\ntitle: Le plan\n---\nLe plan.\n")
    second = build_snapshot(settings, first)
    assert said(second) == (["tube.md"], [])
    _write(root / "Projets" / "plan.md", "---\ntitle: [encore\n---\nLe plan.\n")
    third = build_snapshot(settings, second)
    assert said(third) == (["Projets/plan.md", "tube.md"], [])
    (root / "Projets" / "plan.md").unlink()
    fourth = build_snapshot(settings, third)
    assert said(fourth) == (["tube.md"], ["le lien [[plan]] ne mène à aucune note", "le lien [[Projets/plan]] ne mène à aucune note"])


def test_evolved_postings_equal_a_fresh_inversion():
    """Postings.evolved (copy-on-write, unchanged counts left in place, packed lists from the
    cache unpacked on write) ends where inverting the final documents from scratch ends."""
    import random

    from grasbot.retrieval.postings import Postings

    rng = random.Random(4)
    vocabulary = [f"t{i}" for i in range(30)]

    def doc():
        return {t: rng.randint(1, 3) for t in rng.sample(vocabulary, rng.randint(1, 8))}

    def same(a: Postings, b: Postings) -> None:
        assert a._lengths == b._lengths and a.total_length == b.total_length and len(a) == len(b)
        for term in vocabulary:
            assert dict(a.counts(term).items()) == dict(b.counts(term).items()), term
            assert a.df(term) == b.df(term)

    docs = {f"n{i}.md": doc() for i in range(40)}
    packed_paths, packed = Postings.from_docs(docs).packed()
    current = Postings.from_packed(packed_paths, packed, dict(docs), Postings.from_docs(docs)._lengths, Postings.from_docs(docs).total_length)
    for _ in range(60):
        removed = rng.sample(sorted(docs), rng.randint(0, 3))
        added = {p: doc() for p in rng.sample(sorted(docs), rng.randint(0, 3))}
        if rng.random() < 0.3:
            p = next(iter(added), None)
            if p:  # an edit that keeps most counts
                added[p] = {**docs.get(p, {}), rng.choice(vocabulary): 9}
        added.update({f"new{rng.randint(0, 999)}.md": doc() for _ in range(rng.randint(0, 2))})
        before = {t: dict(current.counts(t).items()) for t in vocabulary}
        nxt = current.evolved(removed, added)
        assert {t: dict(current.counts(t).items()) for t in vocabulary} == before  # the old one is untouched
        for p in removed:
            docs.pop(p, None)
        docs.update(added)
        same(nxt, Postings.from_docs(docs))
        current = nxt


def test_pack_all_gives_the_bytes_of_an_inversion_then_pack():
    """pack_all (a cold load's workers) == Postings.from_docs(docs).packed(numbers): the same
    terms in the same order, the same bytes, with notes numbered as a share of a larger vault
    (first number not 0, numbers past 2**16) and notes with no term at all."""
    import random

    from grasbot.retrieval.postings import Postings, pack_all, unpack

    rng = random.Random(9)
    vocabulary = [f"t{i}" for i in range(50)]
    for trial in range(30):
        docs = {f"n{i}.md": {t: rng.randint(1, 70_000) for t in rng.sample(vocabulary, rng.randint(0, 12))} for i in range(rng.randint(0, 60))}
        start = rng.choice([0, 7, 70_000])
        numbers = {p: start + i for i, p in enumerate(docs)}
        expected = Postings.from_docs(docs).packed(numbers)[1]
        got = pack_all(docs, numbers)
        assert list(got) == list(expected), trial  # term order
        assert got == expected, trial
        paths = tuple(f"x{i}" for i in range(start)) + tuple(docs)
        for term, blob in got.items():  # and what they hold, read back
            assert dict(unpack(blob, paths).items()) == {p: c[term] for p, c in docs.items() if term in c}
