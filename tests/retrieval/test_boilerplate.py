"""Lines many public notes share word for word are read past: a note is ranked as if they were
not in it, a private note never makes a line boilerplate, and a reload equals a fresh build."""

from __future__ import annotations

import math
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grasbot import Settings, build_snapshot, search
from grasbot.answer.passages import choose_passages
from grasbot.retrieval.analysis import tokens
from grasbot.retrieval.boilerplate import MIN_CHARS, LineCounts, Shared, _floor
from grasbot.retrieval.sections import WHOLE_NOTE
from grasbot.retrieval.semantic import NoteTexts, head_text
from support.bots import write_note

LICENCE = "Cette page est distribuée sous licence libre, traduite par une équipe de bénévoles."
TEMPLATE = "Note rédigée avec le modèle standard du carnet de bord."

SUBJECTS = [
    ("tar.md", "tar", "Créer une archive compressée et extraire ses fichiers."),
    ("wc.md", "wc", "Compter les lignes, les mots et les octets d'un fichier."),
    ("find.md", "find", "Chercher des fichiers dans une arborescence de dossiers."),
    ("mount.md", "mount", "Monter un système de fichiers sur un répertoire."),
    ("gpl.md", "Licences", "La licence libre GPL permet de modifier et redistribuer un programme."),
    ("ls.md", "ls", "Lister le contenu d'un répertoire avec ses fichiers cachés."),
]
QUESTIONS = [
    "comment compter les lignes d'un fichier",
    "licence libre modifier un programme",
    "traduite par une équipe de bénévoles",
    "extraire une archive",
    "carnet de bord modèle standard",
    "répertoire fichiers cachés",
    "copie distante traduite par des bénévoles",  # the long note's passages, read without their licence
]


def _vault(root, *, boilerplate: bool, long_note: bool = True):
    for rel, title, text in SUBJECTS:
        body = f"{text}\n\n{LICENCE}\n" if boilerplate else f"{text}\n"
        if boilerplate and rel != "gpl.md":
            body = f"{TEMPLATE}\n{body}"
        write_note(root, rel, f"title: {title}\nvisibility: public", body)
    if long_note:  # scored by its best passage (index.LONG_NOTE), its licence in every passage
        paragraphs = [f"Paragraphe {i} sur les options de rsync, la copie distante numéro {i}." for i in range(400)]
        if boilerplate:
            paragraphs = [p for i, p in enumerate(paragraphs) for p in ((p, LICENCE) if i % 40 == 0 else (p,))]
        write_note(root, "rsync.md", "title: rsync\nvisibility: public", "\n".join(paragraphs) + "\n")
    return build_snapshot(Settings.load(env={}, vault_dir=root))


def _ranked(index, question: str) -> list[tuple[str, float]]:
    return [(s["path"], round(s["score"], 9)) for s in search(question, index, top_k=10, min_score=0.0).to_dict()["results"]]


def _same_ranking(a, b) -> None:
    """Two indexes score every note the same for every question, and their statistics agree."""
    assert a.avg_length() == b.avg_length()
    for question in QUESTIONS:
        terms = set(tokens(question))
        assert {t: a.idf(t) for t in terms} == {t: b.idf(t) for t in terms}, question
        scores_a, scores_b = a.bm25(terms), b.bm25(terms)
        assert scores_a.keys() == scores_b.keys(), question
        assert all(math.isclose(scores_a[p], scores_b[p]) for p in scores_a), question
        assert _ranked(a, question) == _ranked(b, question), question


def test_a_note_is_ranked_as_if_its_boilerplate_lines_were_not_there(tmp_path):
    with_lines = _vault(tmp_path / "a", boilerplate=True)
    without = _vault(tmp_path / "b", boilerplate=False)
    for audience in ("visitor", "owner"):
        index = with_lines.index(audience)
        assert index.boilerplate.held.keys() == {rel for rel, _, _ in SUBJECTS} | {"rsync.md"}
        _same_ranking(index, without.index(audience))
    visitor = with_lines.index("visitor")
    # the one note that speaks of licences in its own words is the only one found by them
    assert [p for p, _ in _ranked(visitor, "licence libre modifier un programme")] == ["gpl.md"]
    assert _ranked(visitor, "traduite par une équipe de bénévoles") == []
    assert not visitor.holds(tokens("bénévoles")[0])
    # without the rule, every note holds the licence's words
    assert len(visitor.body.paths_with(tokens("bénévoles")[0])) == len(SUBJECTS) + 1


def test_a_line_in_too_few_notes_is_not_boilerplate(tmp_path):
    """Three notes at least, and 5 % of the public notes: in a vault of 80 notes, 4."""
    line = "Un paragraphe recopié dans quelques notes seulement, mot pour mot."
    root = tmp_path / "v"
    for i in range(80):
        write_note(root, f"n{i}.md", f"title: Note {i}\nvisibility: public", f"Texte propre {i}.\n{line if i < 3 else ''}\n")
    assert not build_snapshot(Settings.load(env={}, vault_dir=root)).index("visitor").boilerplate.lines
    write_note(root, "n3.md", "title: Note 3\nvisibility: public", f"Texte propre 3.\n{line}\n")
    index = build_snapshot(Settings.load(env={}, vault_dir=root)).index("visitor")
    assert index.boilerplate.held.keys() == {"n0.md", "n1.md", "n2.md", "n3.md"}
    # a line shorter than MIN_CHARS is never boilerplate, however common
    short = "Voir aussi :"
    assert len(short) < MIN_CHARS
    for i in range(80):
        write_note(root, f"n{i}.md", f"title: Note {i}\nvisibility: public", f"Texte propre {i}.\n{short}\n")
    assert not build_snapshot(Settings.load(env={}, vault_dir=root)).index("visitor").boilerplate.lines


def test_private_notes_never_make_a_line_boilerplate(tmp_path):
    """A line held by two public notes and five private ones is read in the public notes, by
    the visitor and the owner alike: what a visitor's index reads owes nothing to private notes."""
    line = "Compte rendu confidentiel de la réunion budgétaire du comité."
    root = tmp_path / "v"
    for i in range(10):
        write_note(root, f"pub{i}.md", f"title: Publique {i}\nvisibility: public", f"Texte public {i}.\n{line if i < 2 else ''}\n")
    without_private = build_snapshot(Settings.load(env={}, vault_dir=root))
    for i in range(5):
        write_note(root, f"prive{i}.md", f"title: Privée {i}\nvisibility: private", f"Texte privé {i}.\n{line}\n")
    snapshot = build_snapshot(Settings.load(env={}, vault_dir=root))
    for audience in ("visitor", "owner"):
        assert not snapshot.index(audience).boilerplate.lines
    visitor, alone = snapshot.index("visitor"), without_private.index("visitor")
    terms = set(tokens(line))
    assert visitor.bm25(terms) == alone.bm25(terms) and len(visitor.bm25(terms)) == 2
    assert visitor.avg_length() == alone.avg_length()


def test_a_reload_that_changes_the_boilerplate_equals_a_fresh_build(tmp_path):
    root = tmp_path / "v"
    _vault(root, boilerplate=False)
    settings_ = Settings.load(env={}, vault_dir=root)
    snapshot = build_snapshot(settings_)
    steps = [
        # the licence in two notes: not yet boilerplate
        [("tar.md", "tar", f"Créer une archive compressée.\n{LICENCE}\n"), ("wc.md", "wc", f"Compter les lignes.\n{LICENCE}\n")],
        # in a third and a fourth: boilerplate for all four, the unchanged ones included
        [("find.md", "find", f"Chercher des fichiers.\n{LICENCE}\n"), ("mount.md", "mount", f"Monter un disque.\n{LICENCE}\n")],
        # edits that keep the set: the changed notes read again, the others' lines reused
        [("mount.md", "mount", "Monter un disque.\n"), ("ls.md", "ls", "Lister les fichiers cachés d'un répertoire.\n")],
        # back to two: read again everywhere
        [("wc.md", "wc", "Compter les lignes, les mots et les octets.\n")],
    ]
    for step in steps:
        for rel, title, body in step:
            write_note(root, rel, f"title: {title}\nvisibility: public", body)
        snapshot = build_snapshot(settings_, snapshot)
        fresh = build_snapshot(settings_)
        for audience in ("visitor", "owner"):
            reloaded, rebuilt = snapshot.index(audience), fresh.index(audience)
            assert reloaded.boilerplate.lines == rebuilt.boilerplate.lines
            assert reloaded.boilerplate.held == rebuilt.boilerplate.held
            _same_ranking(reloaded, rebuilt)
    # the note removed from the vault leaves the counts too
    (root / "find.md").unlink()
    write_note(root, "wc.md", "title: wc\nvisibility: public", f"Compter les lignes.\n{LICENCE}\n")
    snapshot = build_snapshot(settings_, snapshot)
    assert snapshot.index("visitor").boilerplate.held.keys() == build_snapshot(settings_).index("visitor").boilerplate.held.keys() == set()


def test_a_start_from_the_cache_counts_no_line_and_reads_as_a_fresh_build(tmp_path, monkeypatch):
    """The index cache keeps the boilerplate lines' texts and what each note holds of them: a
    start that finds no note changed counts no note's lines (70 ms at 10,000 notes), and
    ranks as a fresh build; the first reload, which counts them, too."""
    root, cache = tmp_path / "v", tmp_path / "cache"
    _vault(root, boilerplate=True)
    settings_ = Settings.load(env={}, vault_dir=root)
    build_snapshot(settings_, cache_dir=cache)  # written
    fresh = build_snapshot(settings_)
    assert fresh.index("visitor").boilerplate.lines
    with monkeypatch.context() as m:
        m.setattr(LineCounts, "of", classmethod(lambda cls, bodies: pytest.fail("a start counted the notes' lines")))
        started = build_snapshot(settings_, cache_dir=cache)
    for audience in ("visitor", "owner"):
        assert started.index(audience).boilerplate.lines == fresh.index(audience).boilerplate.lines
        assert started.index(audience).boilerplate.held == fresh.index(audience).boilerplate.held
        _same_ranking(started.index(audience), fresh.index(audience))
    # a file touched (read again, the same text) and a private note edited: still no line counted
    (root / "tar.md").write_bytes((root / "tar.md").read_bytes())
    os.utime(root / "tar.md", ns=(1, 1))
    write_note(root, "journal.md", "title: Journal\nvisibility: private", f"Mes notes du jour.\n{LICENCE}\n")
    fresh = build_snapshot(settings_)
    with monkeypatch.context() as m:
        m.setattr(LineCounts, "of", classmethod(lambda cls, bodies: pytest.fail("a start counted the notes' lines")))
        started = build_snapshot(settings_, cache_dir=cache)
    assert "journal.md" in started.index("owner").boilerplate.held
    for audience in ("visitor", "owner"):
        assert started.index(audience).boilerplate.lines == fresh.index(audience).boilerplate.lines
        assert started.index(audience).boilerplate.held == fresh.index(audience).boilerplate.held
        _same_ranking(started.index(audience), fresh.index(audience))
    write_note(root, "ls.md", "title: ls\nvisibility: public", f"Lister les fichiers cachés.\n{TEMPLATE}\n{LICENCE}\n")
    reloaded, fresh = build_snapshot(settings_, started), build_snapshot(settings_)
    for audience in ("visitor", "owner"):
        assert reloaded.index(audience).boilerplate.lines == fresh.index(audience).boilerplate.lines
        assert reloaded.index(audience).boilerplate.held == fresh.index(audience).boilerplate.held
        _same_ranking(reloaded.index(audience), fresh.index(audience))


def _counted(monkeypatch, root, cache, *, counts: bool):
    """A start from the cache, with `LineCounts.of` failing the test unless `counts`; and
    whether it was called."""
    called = []
    real = LineCounts.of.__func__

    def of(cls, bodies):
        if not counts:
            pytest.fail("a start counted every note's lines")
        called.append(True)
        return real(cls, bodies)

    with monkeypatch.context() as m:
        m.setattr(LineCounts, "of", classmethod(of))
        started = build_snapshot(Settings.load(env={}, vault_dir=root), cache_dir=cache)
    return started, bool(called)


def _same_boilerplate(a, b) -> None:
    for audience in ("visitor", "owner"):
        assert a.index(audience).boilerplate.lines == b.index(audience).boilerplate.lines
        assert a.index(audience).boilerplate.held == b.index(audience).boilerplate.held
        _same_ranking(a.index(audience), b.index(audience))


def test_a_start_after_public_notes_changed_counts_their_lines_alone_and_reads_as_a_fresh_build(tmp_path, monkeypatch):
    """The index cache keeps the lines public notes share, with their counts (`Shared`): a start
    that finds a public note's text changed counts that note's lines, not every note's (70 ms of
    a restart at 10,000 notes), and ranks as a fresh build, whether the boilerplate lines stay,
    grow or shrink, a note added or removed; the counts it evolved are written, and the next
    start reads them."""
    root, cache = tmp_path / "v", tmp_path / "cache"
    _vault(root, boilerplate=True)
    two = "Une phrase que deux notes tiennent mot pour mot, pas plus."
    write_note(root, "ls.md", "title: ls\nvisibility: public", f"Lister les fichiers cachés.\n{two}\n{TEMPLATE}\n{LICENCE}\n")
    write_note(root, "gpl.md", "title: Licences\nvisibility: public", f"La licence GPL.\n{two}\n{LICENCE}\n")
    settings_ = Settings.load(env={}, vault_dir=root)
    build_snapshot(settings_, cache_dir=cache)  # written
    steps = [
        # a line added to a note: the same boilerplate lines
        [("ls.md", "ls", f"Lister les fichiers cachés.\n{two}\nUne ligne ajoutée avant un redémarrage, ici.\n{TEMPLATE}\n{LICENCE}\n")],
        # the line two notes held in a third: boilerplate now, in every note that holds it; a note added
        [("tar.md", "tar", f"Créer une archive.\n{two}\n{LICENCE}\n"), ("new.md", "new", "Une note nouvelle.\n")],
        # the template in two notes only: no longer boilerplate; a note removed
        [("find.md", "find", f"Chercher.\n{LICENCE}\n"), ("mount.md", "mount", f"Monter.\n{LICENCE}\n"), ("new.md", None, None)],
    ]
    for step in steps:
        for rel, title, body in step:
            if title is None:
                (root / rel).unlink()
            else:
                write_note(root, rel, f"title: {title}\nvisibility: public", body)
        fresh = build_snapshot(settings_)
        started, counted = _counted(monkeypatch, root, cache, counts=False)
        assert not counted
        _same_boilerplate(started, fresh)
        assert started.unsaved_in is None  # written: the next start begins from these counts
        assert (hash(two) in fresh.index("visitor").boilerplate.lines) == (step is not steps[0])
        assert (hash(TEMPLATE) in fresh.index("visitor").boilerplate.lines) == (step is not steps[-1])


def test_a_start_counts_every_note_when_the_changed_notes_may_make_an_uncounted_line_boilerplate(tmp_path, monkeypatch):
    """A line one note held is not among the counts the cache keeps: two changed notes that take
    it may make three holding it (the floor of a small vault), which only a count of every note
    tells; that start counts them all, and reads as a fresh build."""
    root, cache = tmp_path / "v", tmp_path / "cache"
    _vault(root, boilerplate=True)
    line = "Une phrase qu'une seule note tenait jusqu'ici, longue assez."
    write_note(root, "ls.md", "title: ls\nvisibility: public", f"Lister.\n{line}\n{LICENCE}\n")
    settings_ = Settings.load(env={}, vault_dir=root)
    build_snapshot(settings_, cache_dir=cache)
    for rel, title in (("tar.md", "tar"), ("wc.md", "wc")):
        write_note(root, rel, f"title: {title}\nvisibility: public", f"Autre chose.\n{line}\n{LICENCE}\n")
    started, counted = _counted(monkeypatch, root, cache, counts=True)
    assert counted
    fresh = build_snapshot(settings_)
    assert hash(line) in fresh.index("visitor").boilerplate.lines
    _same_boilerplate(started, fresh)


def test_the_counts_keep_the_lines_notes_share_and_the_cache_writer_counts_none(tmp_path, monkeypatch):
    """A count of every note, and each reload's evolved counts, keep the lines public notes
    share by their text (`Shared`): exactly what a count of them gives, so the index cache's
    writer reads them there instead of counting every note again (at 10,000 notes, 12 MB more
    of a first start's peak, with the text of every line)."""
    root, cache = tmp_path / "v", tmp_path / "cache"
    _vault(root, boilerplate=True)
    settings_ = Settings.load(env={}, vault_dir=root)

    def exact(snapshot) -> Shared:
        return Shared.of(note.body for note in snapshot.vault.notes.values() if note.public)

    snapshot = build_snapshot(settings_)
    assert snapshot.index("visitor").boilerplate.shared == exact(snapshot) and exact(snapshot).counts
    steps = [
        [("tar.md", "tar", "Créer une archive compressée.\n")],  # the template in fewer notes
        [("gpl.md", "Licences", f"La GPL.\n{TEMPLATE}\nUne ligne de plus, assez longue pour compter.\n")],
        [(rel, rel.removesuffix(".md"), "Lister.\nUne ligne de plus, assez longue pour compter.\n") for rel in ("ls.md", "wc.md")],
    ]
    for step in steps:
        for rel, title, body in step:
            write_note(root, rel, f"title: {title}\nvisibility: public", body)
        snapshot = build_snapshot(settings_, snapshot)
        assert snapshot.index("visitor").boilerplate.shared == exact(snapshot)
    monkeypatch.setattr(Shared, "of", classmethod(lambda cls, bodies: pytest.fail("the writer counted every note's lines")))
    written = build_snapshot(settings_, cache_dir=cache)  # a first start: counted, then written
    assert written.unsaved_in is None and (cache / "notes.marshal").exists()


def test_a_note_is_embedded_without_its_boilerplate_lines(tmp_path):
    snapshot = _vault(tmp_path / "v", boilerplate=True, long_note=False)
    texts = NoteTexts().of(snapshot.indexes)
    for rel, _, text in SUBJECTS:
        (head,) = texts.by_path[rel]
        assert text in head and LICENCE not in head and TEMPLATE not in head
        assert LICENCE in head_text(snapshot.vault.notes[rel])  # the rule is the vault's, not the note's


lines = st.sampled_from([f"Ligne commune numéro {i} du pied de page." for i in range(6)] + ["court"])
bodies = st.lists(lines, max_size=6).map("\n".join)


@settings(max_examples=60, deadline=None)
@given(first=st.lists(bodies, min_size=1, max_size=12), removed=st.data(), added=st.lists(bodies, max_size=6))
def test_line_counts_after_changes_equal_a_recount(first, removed, added):
    gone = removed.draw(st.lists(st.sampled_from(range(len(first))), unique=True))
    kept = [b for i, b in enumerate(first) if i not in gone]
    evolved = LineCounts.of(first).evolved([first[i] for i in gone], added)
    recount = LineCounts.of(kept + added)
    assert evolved.as_dict() == recount.as_dict()
    assert evolved.notes == recount.notes == len(kept) + len(added)
    assert evolved.common() == recount.common()


@settings(max_examples=80, deadline=None)
@given(first=st.lists(bodies, min_size=1, max_size=12), changes=st.data())
def test_shared_lines_after_changes_hold_the_exact_counts_and_bound_the_others(first, changes):
    """`Shared` evolved by notes changed, added and removed, again and again: the lines it
    counts hold their exact counts, every other line held by two notes or more by `most`'s count at most, and its
    boilerplate lines, when it can tell them, are a recount's."""
    now = dict(enumerate(first))
    shared = Shared.of(now.values())
    for _ in range(changes.draw(st.integers(1, 3))):
        touched = changes.draw(st.lists(st.integers(0, 15), unique=True, max_size=5))
        after = {i: changes.draw(st.one_of(st.none(), bodies)) for i in touched}
        shared = shared.evolved((now.get(i), after[i]) for i in touched)
        for i, body in after.items():
            if body is None:
                now.pop(i, None)
            else:
                now[i] = body
        recount = LineCounts.of(now.values())
        exact = {line: n for line, n in Shared.of(now.values()).counts.items()}
        assert all(exact.get(line, 1) == n for line, n in shared.counts.items())
        assert all(line in shared.counts or n <= shared.most[line] for line, n in exact.items())
        common = shared.common(len(now))
        assert common is None or frozenset(map(hash, common)) == recount.common()
        assert common is not None or max(shared.most.values()) >= _floor(len(now))


def test_a_long_notes_passages_are_chosen_without_its_boilerplate(tmp_path):
    """Every section of a long note ends with the licence: a question that names it and the
    subject of one section gets that section alone, not every section for the licence's words."""
    root = tmp_path / "v"
    for rel, title, text in SUBJECTS[:3]:
        write_note(root, rel, f"title: {title}\nvisibility: public", f"{text}\n{LICENCE}\n")
    subjects = ["semis", "arrosage", "greffage", "taille"]
    sections = [f"## Le {word}\n" + f"Des conseils détaillés sur le {word} des arbres fruitiers au verger. " * 40 + f"\n{LICENCE}\n" for word in subjects]
    write_note(root, "verger.md", "title: Le verger\nvisibility: public", "\n".join(sections))
    assert len((root / "verger.md").read_text(encoding="utf-8")) > WHOLE_NOTE
    index = build_snapshot(Settings.load(env={}, vault_dir=root)).index("visitor")
    assert "verger.md" in index.boilerplate.held
    passages = choose_passages("le greffage traduit par des bénévoles", [("verger.md", None)], index, budget=20_000)
    assert {p.heading for p in passages if p.score > 0} == {("Le greffage",)}


def test_a_reload_that_makes_a_line_boilerplate_embeds_the_unchanged_notes_again(tmp_path):
    root = tmp_path / "v"
    for rel, title, text in SUBJECTS[:3]:
        write_note(root, rel, f"title: {title}\nvisibility: public", f"{text}\n{LICENCE if rel != 'find.md' else ''}\n")
    settings_ = Settings.load(env={}, vault_dir=root)
    made = NoteTexts()
    snapshot = build_snapshot(settings_)
    assert LICENCE in made.of(snapshot.indexes).by_path["tar.md"][0]  # two notes: not boilerplate
    write_note(root, "find.md", "title: find\nvisibility: public", f"{SUBJECTS[2][2]}\n{LICENCE}\n")
    snapshot = build_snapshot(settings_, snapshot)
    assert LICENCE not in made.of(snapshot.indexes).by_path["tar.md"][0]  # tar.md did not change, its head did


def test_two_reloads_from_one_snapshot_both_equal_a_fresh_build(tmp_path):
    """A reload hands the line counts on rather than copying them: a second reload from the same
    snapshot (one that failed and is retried) counts the lines again instead of reusing spent ones."""
    root = tmp_path / "v"
    _vault(root, boilerplate=True, long_note=False)
    settings_ = Settings.load(env={}, vault_dir=root)
    first = build_snapshot(settings_)
    write_note(root, "tar.md", "title: tar\nvisibility: public", "Créer une archive compressée.\n")
    once = build_snapshot(settings_, first)
    assert first.index("visitor").boilerplate.counts.spent
    twice = build_snapshot(settings_, first)
    fresh = build_snapshot(settings_)
    for snapshot in (once, twice):
        for audience in ("visitor", "owner"):
            assert snapshot.index(audience).boilerplate.held == fresh.index(audience).boilerplate.held
            _same_ranking(snapshot.index(audience), fresh.index(audience))
