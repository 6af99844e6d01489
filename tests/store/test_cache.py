"""The persistent index cache: a restart on an unchanged vault parses nothing; a stale, corrupt or
foreign cache is detected, logged and ignored, never trusted."""

from __future__ import annotations

import logging
import marshal
import time
from dataclasses import replace

import pytest

import grasbot._engine as engine
import grasbot.retrieval.vault as vault_mod
from generate_vault import generate, questions
from grasbot import Settings, build_snapshot, search
from grasbot.retrieval.index import Index
from grasbot.retrieval.vault import VaultOptions
from grasbot.store import cache as _cache
from support.bots import write_note


@pytest.fixture
def parsed(monkeypatch):
    calls: list[str] = []
    real = vault_mod.parse_note

    def parse(rel, *a, **kw):
        calls.append(rel)
        return real(rel, *a, **kw)

    monkeypatch.setattr(vault_mod, "parse_note", parse)
    return calls


@pytest.fixture
def vault(tmp_path):
    root = tmp_path / "vault"
    paths = generate(root, 80, seed=9)
    return root, paths, Settings.load(env={}, vault_dir=root), tmp_path / "cache"


def _answers(snapshot):
    out = []
    for q in questions(snapshot.vault.notes.values(), 40, seed=2):
        r = search(q, snapshot.index("visitor"), top_k=5, min_score=4.0).to_dict()
        r.pop("took_ms")
        out.append(r)
    return out


def test_restart_on_unchanged_vault_parses_nothing(vault, parsed, monkeypatch):
    root, _, settings, cache = vault
    cold = build_snapshot(settings, cache_dir=cache)
    assert len(parsed) == 80 and (cache / _cache.FILENAME).is_file()
    parsed.clear()
    analysed: list[str] = []
    monkeypatch.setattr(engine, "analyse_note", lambda note: analysed.append(note.path))
    warm = build_snapshot(settings, cache_dir=cache)
    assert parsed == [] and analysed == []
    assert warm.vault.notes == cold.vault.notes
    assert warm.analyses == cold.analyses
    assert _answers(warm) == _answers(cold)


def test_stale_entry_is_reparsed_alone(vault, parsed):
    root, paths, settings, cache = vault
    build_snapshot(settings, cache_dir=cache)
    parsed.clear()
    paths[5].write_text(paths[5].read_text(encoding="utf-8") + "\nUne phrase ajoutée.\n", encoding="utf-8")
    warm = build_snapshot(settings, cache_dir=cache)
    assert parsed == [paths[5].relative_to(root).as_posix()]
    assert "Une phrase ajoutée." in warm.vault.notes[parsed[0]].body
    assert _answers(warm) == _answers(build_snapshot(settings))
    parsed.clear()
    build_snapshot(settings, cache_dir=cache)  # the cache was rewritten with the new note
    assert parsed == []


def test_write_left_for_later_is_written_once_by_save_cache(vault, parsed):
    """write_cache=False (the daemon's start): nothing written until save_cache, which writes
    the very cache a synchronous start would have, once."""
    root, paths, settings, cache = vault
    cold = build_snapshot(settings, cache_dir=cache, write_cache=False)
    assert cold.unsaved_in == cache and not (cache / _cache.FILENAME).exists()
    bot = engine.GrasBot(settings, cold)
    assert bot.write_cache() is True and (cache / _cache.FILENAME).is_file()
    assert bot.write_cache() is False  # done: a second call writes nothing
    parsed.clear()
    warm = build_snapshot(settings, cache_dir=cache, write_cache=False)
    assert parsed == [] and warm.unsaved_in is None  # up to date: nothing left to write
    assert _answers(warm) == _answers(cold)
    # one note changed: parsed alone, and the cache is again left to write
    paths[3].write_text(paths[3].read_text(encoding="utf-8") + "\nUne phrase ajoutée.\n", encoding="utf-8")
    changed = build_snapshot(settings, cache_dir=cache, write_cache=False)
    assert parsed == [paths[3].relative_to(root).as_posix()] and changed.unsaved_in == cache
    assert engine.save_cache(changed) is True
    parsed.clear()
    assert build_snapshot(settings, cache_dir=cache).unsaved_in is None and parsed == []


@pytest.mark.parametrize(
    "damage",
    ["truncated", "garbage", "empty", "flipped-byte", "older-layout", "wrong-format", "other-vault", "not-a-tuple"],
)
def test_damaged_or_foreign_cache_is_ignored_and_rebuilt(vault, parsed, caplog, damage):
    root, _, settings, cache = vault
    reference = build_snapshot(settings, cache_dir=cache)
    file = cache / _cache.FILENAME
    raw = file.read_bytes()
    head = _cache.HEAD_SIZE
    if damage == "truncated":
        file.write_bytes(raw[: len(raw) // 2])
    elif damage == "garbage":
        file.write_bytes(b"\x00garbage" * 100)
    elif damage == "empty":
        file.write_bytes(b"")
    elif damage == "flipped-byte":
        file.write_bytes(raw[:-10] + bytes([raw[-10] ^ 0xFF]) + raw[-9:])
    elif damage == "older-layout":  # format 6 and before: another magic line, a blake2b digest
        file.write_bytes(b"GRASBOT-CACHE\n" + bytes(32) + raw[head:])
    else:
        header, entries = marshal.loads(raw[head:])
        if damage == "wrong-format":
            header = {**header, "format": _cache.FORMAT + 1}
        elif damage == "other-vault":
            header = {**header, "vault": "/somewhere/else"}
        payload = marshal.dumps(("not", "a", "tuple", "pair") if damage == "not-a-tuple" else (header, entries))
        file.write_bytes(_cache.seal(payload))
    parsed.clear()
    with caplog.at_level(logging.INFO, logger="grasbot.cache"):
        rebuilt = build_snapshot(settings, cache_dir=cache)
    assert len(parsed) == 80  # nothing was taken from the damaged file
    assert any("cache" in r.getMessage() for r in caplog.records)
    assert _answers(rebuilt) == _answers(reference)
    parsed.clear()
    build_snapshot(settings, cache_dir=cache)  # and a good cache replaced it
    assert parsed == []


@pytest.mark.parametrize(
    ("magic", "said"), [(b"GRASBOT-CACHE\n", "plus ancienne"), (b"GRASBOT-CACHE 6\n", "plus ancienne"), (b"GRASBOT-CACHE 8\n", "plus récente")]
)
def test_a_cache_of_another_layout_says_whether_an_older_or_a_newer_grasbot_wrote_it(vault, caplog, magic, said):
    """A downgrade after a bad upgrade finds the newer one's cache: it was said to be an older GrasBot's."""
    _, _, settings, cache = vault
    build_snapshot(settings, cache_dir=cache)
    file = cache / _cache.FILENAME
    file.write_bytes(magic + file.read_bytes()[len(_cache.MAGIC) :])
    with caplog.at_level(logging.INFO, logger="grasbot.cache"):
        build_snapshot(settings, cache_dir=cache)
    assert f"le cache de l'index {file} a été écrit par une version {said} de GrasBot : reconstruit" in caplog.text


def test_options_change_invalidates(vault, parsed):
    root, _, settings, cache = vault
    build_snapshot(settings, cache_dir=cache)
    parsed.clear()
    public = build_snapshot(settings.with_(default_visibility="public"), cache_dir=cache)
    assert len(parsed) == 80
    assert public.vault.options.default_public
    assert _answers(public) == _answers(build_snapshot(settings.with_(default_visibility="public")))


def test_every_vault_option_is_in_the_header_even_one_added_later(tmp_path):
    """The header reads VaultOptions' fields from the dataclass: an option added later changes
    it without anyone listing it there, so a cache made under other options is never read."""
    import dataclasses

    base = _cache._header(tmp_path, VaultOptions())
    assert _cache._header(tmp_path, VaultOptions(exclude=("brouillons",))) != base
    assert _cache._header(tmp_path, VaultOptions(default_public=True)) != base
    assert _cache._header(tmp_path, VaultOptions(time_zone="Europe/Paris")) != base  # a note's dates read elsewhere
    later = dataclasses.make_dataclass("VaultOptions", [("show_drafts", bool, dataclasses.field(default=False))], bases=(VaultOptions,), frozen=True)
    assert _cache._header(tmp_path, later(show_drafts=True)) != _cache._header(tmp_path, later())
    assert marshal.loads(marshal.dumps(base)) == base  # what load() compares is what save() wrote


def test_a_change_to_any_module_a_note_is_read_by_drops_the_cache(monkeypatch):
    """vault.py reads a note with the retrieval modules it imports (markdown.py, links.py, which
    moved out of it), and mentions.py masks it (the cache keeps the public notes' analyses
    without hidden paths, as it finds them) with what they import, in retrieval or the package
    (`_urls.quartz_path`, a private note's Quartz page): a change to any of them may change a
    Note, so the cache written before it must not be read."""
    import ast
    from pathlib import Path

    retrieval = Path(vault_mod.__file__).parent
    readers, todo = {"vault", "mentions"}, ["vault", "mentions"]
    while todo:
        tree = ast.parse((retrieval / f"{todo.pop()}.py").read_text())
        imported = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level in (1, 2) and n.module]
        found = {n.module for n in imported if n.level == 1} - readers
        readers |= found | {f"../{n.module}" for n in imported if n.level == 2}
        todo += sorted(found)
    assert {"vault", "markdown", "links", "../_urls"} <= readers
    before, real = _cache._code_fingerprint(), Path.read_bytes
    for name in sorted(readers):
        name = name.removeprefix("../")
        monkeypatch.setattr(Path, "read_bytes", lambda self, name=name: real(self) + (b"\n#" if self.name == f"{name}.py" else b""))
        assert _cache._code_fingerprint() != before, f"{name}.py is not in the cache's fingerprint"


def test_write_is_atomic_and_leaves_no_temp_file(vault):
    root, _, settings, cache = vault
    build_snapshot(settings, cache_dir=cache)
    assert [p.name for p in cache.iterdir()] == [_cache.FILENAME]


def test_default_cache_dir(monkeypatch, tmp_path):
    monkeypatch.delenv("GRASBOT_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    a, b = _cache.default_cache_dir(tmp_path / "v1"), _cache.default_cache_dir(tmp_path / "v2")
    assert a.parent == tmp_path / "xdg" / "grasbot" and a != b
    monkeypatch.setenv("GRASBOT_CACHE_DIR", str(tmp_path / "mine"))
    assert _cache.default_cache_dir(tmp_path / "v1") == tmp_path / "mine"
    assert _cache.default_cache_dir(tmp_path / "v1", tmp_path / "flag") == tmp_path / "flag"


def test_start_from_cache_equals_a_fresh_build(vault):
    """What the cache now carries besides the notes (inverted indexes packed, resolved links,
    both audiences' graphs) gives the very indexes a build from the files gives."""
    root, paths, settings, cache = vault
    build_snapshot(settings, cache_dir=cache)
    warm, fresh = build_snapshot(settings, cache_dir=cache), build_snapshot(settings)
    assert [w.to_dict() for w in warm.vault.warnings] == [w.to_dict() for w in fresh.vault.warnings]
    assert warm.vault.edges == fresh.vault.edges
    for audience in ("visitor", "owner"):
        a, b = warm.index(audience), fresh.index(audience)
        assert a.notes.keys() == b.notes.keys()
        assert a.edges == b.edges and a.backlinks == b.backlinks
        assert a.body.total_length == b.body.total_length and len(a.body) == len(b.body)
        terms = {t for p in b.notes for t in b.analyses[p].body}
        for term in sorted(terms)[::7]:
            assert dict(a.body.counts(term).items()) == dict(b.body.counts(term).items()), term
            assert a.body.df(term) == b.body.df(term) and a.idf(term) == b.idf(term)
    assert warm.analyses == fresh.analyses
    assert _answers(warm) == _answers(fresh)
    # then a reload from the cached snapshot (its packed posting lists evolved) stays exact
    paths[3].write_text(paths[3].read_text(encoding="utf-8") + "\nAjout : [[" + paths[4].stem + "]] et la tokenisation.\n", encoding="utf-8")
    assert _answers(build_snapshot(settings, warm)) == _answers(build_snapshot(settings))


def test_a_start_from_cache_warns_of_links_into_an_excluded_folder_as_a_fresh_load(tmp_path):
    """The cache keeps each note's links that find no loaded note; a link to a note --exclude
    left out is no warning, and a start from the cache follows a note that came into or left
    the excluded folder since it was saved, the linking note unchanged."""
    root, cache = tmp_path / "vault", tmp_path / "cache"
    write_note(root, "Journal/3 mai.md", None, "Mon journal.")
    write_note(root, "a.md", "visibility: public", "Voir [[3 mai]], [[Journal/4 mai]] et [[Nulle part]].")
    settings = Settings.load(env={"GRASBOT_EXCLUDE": "journal"}, vault_dir=root)

    def warned(snapshot) -> list[str]:
        said = [w.message for w in snapshot.vault.warnings]
        assert said == [w.message for w in build_snapshot(settings).vault.warnings]
        return said

    dangling = "le lien [[{}]] ne mène à aucune note".format
    assert warned(build_snapshot(settings, cache_dir=cache)) == [dangling("Journal/4 mai"), dangling("Nulle part")]
    assert warned(build_snapshot(settings, cache_dir=cache)) == [dangling("Journal/4 mai"), dangling("Nulle part")]
    write_note(root, "Journal/4 mai.md", None, "Le lendemain.")
    (root / "Journal" / "3 mai.md").unlink()
    assert warned(build_snapshot(settings, cache_dir=cache)) == [dangling("3 mai"), dangling("Nulle part")]


def test_malformed_posting_list_is_refused(vault, parsed, caplog):
    root, _, settings, cache = vault
    build_snapshot(settings, cache_dir=cache)
    file = cache / _cache.FILENAME
    raw = file.read_bytes()
    header, (notes, postings, *rest) = marshal.loads(raw[_cache.HEAD_SIZE :])
    term = next(iter(postings[0][1]))
    postings[0][1][term] = postings[0][1][term][:-1]  # one byte short
    payload = marshal.dumps((header, (notes, postings, *rest)))
    file.write_bytes(_cache.seal(payload))
    parsed.clear()
    with caplog.at_level(logging.WARNING, logger="grasbot.cache"):
        rebuilt = build_snapshot(settings, cache_dir=cache)
    assert len(parsed) == 80 and any("inutilisable" in r.getMessage() for r in caplog.records)
    assert _answers(rebuilt) == _answers(build_snapshot(settings))


def _postings_state(postings) -> tuple:
    """Everything a later reload reads of Postings: each list, each note's counts, the lengths."""
    lists = {t: dict(postings.counts(t)) for t in postings.terms()}
    return lists, {p: dict(d) for p, d in postings._docs.items()}, dict(postings.lengths), postings.total_length


def _index_state(snapshot) -> dict:
    """Both audiences' notes, the hidden paths and the notes read without them, their analyses and postings."""
    out = {}
    for audience in ("visitor", "owner"):
        index = snapshot.index(audience)
        parts = (index.body, index.fields) if audience == "visitor" else (*index.body.parts, *index.fields.parts)
        analyses = {p: (a, dict(a.body)) for p, a in index.analyses.items()}
        out[audience] = (set(index.notes), index.hidden_key, index.masked, analyses, [_postings_state(p) for p in parts])
    return out


def test_a_start_from_cache_makes_the_masks_tables_only_for_a_text_it_masks(tmp_path, monkeypatch):
    """The typed paths of hidden notes are masked by tables of them as a text is written and as
    it reads rendered (`mentions._Reading`): a start whose masked notes are the cache's masks no
    text, and made them all the same (20 ms at 10,000 notes). They are made by the first text
    masked, and mask as before."""
    import grasbot.retrieval.mentions as mentions_mod

    root, cache = tmp_path / "vault", tmp_path / "cache"
    write_note(root, "prive/rachat-acme-2027.md", "visibility: private", "Le rachat d'Acme en 2027.")
    write_note(root, "pub/accueil.md", "visibility: public", "Voir prive/rachat-acme-2027.md pour la suite du jardin.")
    for n in range(4):
        write_note(root, f"pub/note-{n}.md", "visibility: public", f"Le potager du jardin en mai, rang {n}.")
    settings = Settings.load(env={}, vault_dir=root)
    build_snapshot(settings, cache_dir=cache)
    with monkeypatch.context() as m:
        m.setattr(mentions_mod._Reading, "__init__", lambda *a, **kw: pytest.fail("a start made the masks' tables"))
        warm = build_snapshot(settings, cache_dir=cache)
    hidden = warm.index("visitor").hidden
    assert hidden is not None and "rachat" not in hidden.masked("Voir prive/rachat-acme-2027.md pour la suite.")
    assert _index_state(warm) == _index_state(build_snapshot(settings))
    found = [s.path for s in search("rachat acme 2027", warm.index("visitor"), top_k=5, min_score=0.0).sources]
    assert found == []


def test_a_start_from_cache_reads_only_changed_notes_for_hidden_paths_and_stays_exact(tmp_path, monkeypatch):
    """A public note that types a private note's path is searched without it (`mentions_in`);
    a start read every public note for such paths again, as the cache did not say which were
    masked: 10,000 notes took a warm start from 2.4 s to 6 s. The cache keeps them and the
    hidden set they were found for: a start reads only the changed notes, and its indexes
    equal a fresh build's, after a masked note changed, went, or a hidden note became public, and
    a fresh build told the hidden paths of before after a hidden note went."""
    import grasbot.retrieval.index as index_mod

    root, cache = tmp_path / "vault", tmp_path / "cache"
    write_note(root, "prive/rachat-acme-2027.md", "visibility: private", "Le rachat d'Acme en 2027.")
    write_note(root, "prive/budget-zorglub.md", "visibility: private", "Le budget.")
    write_note(root, "pub/accueil.md", "visibility: public", "Voir prive/rachat-acme-2027.md pour la suite du jardin.")
    write_note(root, "pub/liens.md", "visibility: public\naliases: [prive/budget-zorglub.md, Liens utiles]", "Les liens du jardin.")
    for n in range(6):
        write_note(root, f"pub/note-{n}.md", "visibility: public", f"Le potager du jardin en mai, rang {n}.")
    settings = Settings.load(env={}, vault_dir=root)
    read: list[str] = []
    real = index_mod.mentions_in
    monkeypatch.setattr(index_mod, "mentions_in", lambda note, hidden: read.append(note.path) or real(note, hidden))

    def exact(snapshot) -> None:
        assert _index_state(snapshot) == _index_state(build_snapshot(settings))

    cold = build_snapshot(settings, cache_dir=cache)
    assert cold.index("visitor").masked == {"pub/accueil.md", "pub/liens.md"}
    exact(cold)
    read.clear()
    warm = build_snapshot(settings, cache_dir=cache)
    assert read == []
    exact(warm)
    found = lambda question: [s.path for s in search(question, warm.index("visitor"), top_k=5, min_score=0.0).sources]  # noqa: E731
    assert found("rachat acme 2027") == [] and "pub/accueil.md" in found("la suite du jardin")

    write_note(root, "pub/accueil.md", "visibility: public", "Voir prive/rachat-acme-2027.md pour la suite du verger.")
    read.clear()
    changed = build_snapshot(settings, cache_dir=cache)
    assert read == ["pub/accueil.md"]
    exact(changed)
    read.clear()
    again = build_snapshot(settings, cache_dir=cache)  # from the cache that start wrote
    assert read == []
    exact(again)
    write_note(root, "pub/nouvelle.md", "visibility: public", "Une note ajoutée au jardin.")
    read.clear()
    added = build_snapshot(settings, again)  # the links resolved otherwise: a new note's names
    assert read == ["pub/nouvelle.md"]
    exact(added)
    (root / "pub/accueil.md").unlink()
    exact(build_snapshot(settings, changed))  # its masked counts taken out of the lists

    write_note(root, "prive/budget-zorglub.md", "visibility: public", "Le budget.")
    shown = build_snapshot(settings, cache_dir=cache)
    assert shown.index("visitor").masked == frozenset()
    exact(shown)
    write_note(root, "prive/budget-zorglub.md", "visibility: private", "Le budget.")
    exact(build_snapshot(settings, cache_dir=cache))

    def told(snapshot, gone: set[str]) -> None:
        """A fresh build knows no note that went: it equals one told the paths hidden before, as a start's cache tells it."""
        fresh = build_snapshot(settings)
        assert _index_state(snapshot) == _index_state(replace(fresh, indexes=Index.build_all(fresh.vault, fresh.analyses, gone)))

    # a hidden note that went (deleted, moved, renamed): its path typed in a public note stays masked, start after start
    write_note(root, "pub/accueil.md", "visibility: public", "Voir prive/rachat-acme-2027.md pour la suite du jardin.")
    build_snapshot(settings, cache_dir=cache)
    (root / "prive/rachat-acme-2027.md").unlink()
    went = build_snapshot(settings, cache_dir=cache)
    assert went.index("visitor").masked == {"pub/accueil.md", "pub/liens.md"}
    assert "rachat" not in went.index("visitor").readable_body("pub/accueil.md")
    told(went, {"prive/rachat-acme-2027.md"})
    read.clear()
    warm = build_snapshot(settings, cache_dir=cache)  # from the cache that start wrote
    assert read == []
    assert "rachat" not in warm.index("visitor").readable_body("pub/accueil.md")
    told(warm, {"prive/rachat-acme-2027.md"})
    # kept while a public note types it: untyped a moment (a paragraph cut, then pasted), it stays;
    # a reload that reads every public note again (a hidden note came) and finds none typing it forgets it
    write_note(root, "pub/accueil.md", "visibility: public", "Voir la suite du jardin.")
    untyped = build_snapshot(settings, warm)
    assert "prive/rachat-acme-2027.md" in untyped.index("visitor").hidden_key[0]
    (root / "pub/note-0.md").unlink()  # a public note went, whose names lead to no hidden note: no full read
    kept = build_snapshot(settings, untyped)
    assert "prive/rachat-acme-2027.md" in kept.index("visitor").hidden_key[0]
    write_note(root, "prive/autre.md", "visibility: private", "Une autre note.")
    forgotten = build_snapshot(settings, kept)
    assert "prive/rachat-acme-2027.md" not in forgotten.index("visitor").hidden_key[0]
    exact(forgotten)


def fresh_and_cached(vault):
    """(an audience's index built anew, the same read from the cache), for both audiences."""
    _, _, settings, cache = vault
    built = build_snapshot(settings)
    build_snapshot(settings, cache_dir=cache)
    warm = build_snapshot(settings, cache_dir=cache)
    return [(built.index(audience), warm.index(audience)) for audience in ("visitor", "owner")]


def test_a_domain_count_reads_the_cached_field_codes_and_leaves_them_packed(vault):
    """`Index.declared` (what `idf` counts beside the bodies) reads a term's field codes as the
    cache loaded them, without unpacking the list and keeping it: a search, and the worker's
    sums of every declared question's idf, count the same notes as an index built anew."""
    for fresh, cached in fresh_and_cached(vault):
        terms = sorted({t for p in fresh.notes for _, seq in fresh.analyses[p].domains for t in seq})
        counted = [fresh.declared(t) for t in terms]
        assert any(counted) and [cached.declared(t) for t in terms] == counted
        parts = getattr(cached.fields, "parts", (cached.fields,))
        assert all(isinstance(part._postings.get(t, b""), bytes) for part in parts for t in terms)


def test_a_terms_impacts_read_from_a_packed_list_are_the_same_floats_and_leave_it_packed(vault):
    """`Index._impacts` weighs a body list still packed as the cache loaded it in numpy: the
    same notes in the same order, the same floats to the bit, as the dicts of an index built
    anew, for both audiences (the owner's reads two parts), and the list stays packed."""
    for fresh, cached in fresh_and_cached(vault):
        terms = sorted(fresh.body.terms())
        parts = getattr(cached.body, "parts", (cached.body,))
        assert all(isinstance(part._postings[t], bytes) for part in parts for t in terms if t in part._postings)
        assert [list(cached._impacts(t).items()) for t in terms] == [list(fresh._impacts(t).items()) for t in terms]
        assert all(isinstance(part._postings[t], bytes) for part in parts for t in terms if t in part._postings)


def test_a_start_from_cache_works_out_no_hidden_notes_pages_and_masks_them_as_a_fresh_build(tmp_path, monkeypatch):
    """The pages hidden notes are published at (`Note.own_pages`: Hugo's from their `slug:` and
    `url:`, their `permalink:`, GRASBOT_URL_MAP's) were worked out again at every start, one
    character at a time (`_urls.hugo_link`): 1,532 private notes took 0.1-0.2 s of a restart at
    10,000 notes. The cache keeps them with their notes: a start on an unchanged vault works out
    none, and masks the same pages as a build from the files."""
    root, cache = tmp_path / "vault", tmp_path / "cache"
    write_note(root, "prive/plan.md", "visibility: private\nslug: plan-secret-v2", "Le plan du rachat.")
    write_note(root, "prive/labo.md", "visibility: private\npermalink: /labo/rachat-acme/", "Le labo.")
    write_note(root, "prive/projet.md", "visibility: private\ntype: projet\nslug: zorglub", "Le projet Zorglub.")
    write_note(root, "pub/accueil.md", "visibility: public", "Voir prive/plan-secret-v2 et /labo/rachat-acme/ ou /portfolio/zorglub du jardin.")
    for n in range(4):
        write_note(root, f"pub/note-{n}.md", "visibility: public", f"Le potager du jardin en mai, rang {n}.")
    settings = Settings.load(env={}, vault_dir=root)
    cold = build_snapshot(settings, cache_dir=cache)
    assert cold.index("visitor").hidden_key[3] >= {"prive/plan-secret-v2", "labo/rachat-acme", "portfolio/zorglub"}
    with monkeypatch.context() as m:
        m.setattr(vault_mod, "own_pages", lambda *a, **kw: pytest.fail("a start worked out a note's pages again"))
        warm = build_snapshot(settings, cache_dir=cache)
        engine.GrasBot(settings, warm)  # what `store.gone` keeps of it reads them too
    assert _index_state(warm) == _index_state(build_snapshot(settings))
    body = warm.index("visitor").readable_body("pub/accueil.md")
    assert "plan-secret" not in body and "rachat-acme" not in body and "zorglub" not in body
    assert {p: n.own_pages for p, n in warm.vault.notes.items()} == {p: n.own_pages for p, n in build_snapshot(settings).vault.notes.items()}


def test_a_file_rewritten_with_the_same_bytes_is_read_again_at_one_start_only(vault, monkeypatch):
    """A file whose bytes stay the same but whose stamps changed (`touch`, a sync tool, a
    checkout, an editor saving an unchanged note) is read again and hashed at a start, its
    parse and analysis kept. The cache was not written again, nothing having been parsed: every
    later start read that file again, and checked a public one for hidden paths (the masks'
    tables made, 0.16-0.19 s at 10,000 notes). The start that reads it writes the cache with
    its new stamps: the next one reads no file, and serves what a build from the files gives."""
    root, paths, settings, cache = vault
    monkeypatch.setattr(vault_mod, "RACY_NS", 0)  # the files read as old: a racy one is read again by design
    build_snapshot(settings, cache_dir=cache)
    read: list[str] = []
    real = vault_mod.read_note_file
    monkeypatch.setattr(vault_mod, "read_note_file", lambda path: read.append(str(path)) or real(path))
    touched = paths[5]
    touched.write_bytes(touched.read_bytes())  # the same bytes, new stamps
    time.sleep(0.01)
    first = build_snapshot(settings, cache_dir=cache)
    assert read == [str(touched)]
    read.clear()
    again = build_snapshot(settings, cache_dir=cache)
    assert read == []
    fresh = build_snapshot(settings)
    assert _index_state(again) == _index_state(fresh) == _index_state(first)
    assert again.vault.notes == fresh.vault.notes and _answers(again) == _answers(fresh)
