"""The spelling vectors kept beside the index cache (store.spellings): a restart ranks with them
as soon as its worker read them, never with a file of another vault state."""

from __future__ import annotations

import marshal
import os
import stat

import pytest

from grasbot import GrasBot
from grasbot.retrieval import spelling
from grasbot.store import spellings
from support.bots import settings_for, write_note

QUESTION = "paramétrage du noyau"  # no stem of « paramètres »: the spelling points find it


def _vault(note_writer):
    note_writer("systeme/noyau.md", "title: Paramètres du noyau", "Les paramètres du noyau se règlent avec sysctl.\n")
    note_writer("systeme/sysctl-reseau.md", "title: Réseau et sysctl", "Régler le réseau du noyau : sysctl, la pile TCP.\n")
    note_writer("systeme/modules.md", "title: Modules du noyau", "Charger un module du noyau avec modprobe.\n")
    note_writer("cuisine/pain.md", "title: Pain au levain", "Un pain au levain demande du temps.\n")
    note_writer("prive/zorglub.md", "visibility: private", "Le plan zorglub, secret.\n")
    note_writer("public/voir.md", "title: Une note", "Voir prive/zorglub.md pour la suite, et le jardin.\n")
    return note_writer.root


def _settings(root, tmp_path, **overrides):
    return settings_for(root, default_visibility="public", index_cache=True, cache_dir=tmp_path / "cache", **overrides)


def _worker(bot: GrasBot) -> None:
    """The daemon's spelling worker, started once it listens, until it is done."""
    bot.start_spelling()
    while (worker := bot._spelling_thread) is not None:
        worker.join(10)


def _no_build(monkeypatch) -> list:
    builds: list = []
    real = spelling._build
    monkeypatch.setattr(spelling, "_build", lambda *a: builds.append(a) or real(*a))
    return builds


def _ranked(bot: GrasBot, audience: str = "visitor") -> list:
    result = bot.search(QUESTION, audience=audience)
    return [(s.path, s.score, [(r.signal, r.detail) for r in s.reasons]) for s in result.sources]


async def test_a_restart_ranks_with_spelling_once_the_worker_read_the_file(note_writer, tmp_path, monkeypatch):
    root = _vault(note_writer)
    settings = _settings(root, tmp_path)
    first = GrasBot.open(settings)
    _worker(first)  # builds them, then writes them
    path = tmp_path / "cache" / spellings.FILENAME
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    expected = _ranked(first)
    assert any(signal == "spelling" for _, _, reasons in expected for signal, _ in reasons)

    builds = _no_build(monkeypatch)
    bot = GrasBot.open(settings)
    assert (await bot.health())["spelling"] == {"ready": False}  # listening: the worker has not read them yet
    _worker(bot)
    assert (await bot.health())["spelling"] == {"ready": True}
    assert (await bot.health(owner=True))["spelling"] == {"ready": True}
    assert builds == []  # read, not built
    assert _ranked(bot) == expected and _ranked(bot, "owner") == _ranked(first, "owner")
    for audience in ("visitor", "owner"):
        read, built = spelling.ready(bot.snapshot.index(audience)), spelling.ready(first.snapshot.index(audience))
        paths = sorted(built.notes)
        assert sorted(read.notes) == paths and (read.df == built.df).all() and read.n == built.n
        assert read.cosines("le noyau et sysctl", paths) == built.cosines("le noyau et sysctl", paths)
        assert read._norms == built._norms  # every length known: no question computes one


def _change(root, change: str) -> None:
    """One of the ways `_vault`'s notes change between two readings."""
    if change == "edited":
        write_note(root, "cuisine/pain.md", "title: Pain au levain", "Une brioche tressée, pétrie la veille.\n")
    elif change == "added":
        write_note(root, "cuisine/brioche.md", "title: Brioche", "Une brioche tressée, pétrie la veille.\n")
    elif change == "deleted":
        (root / "cuisine/pain.md").unlink()
    elif change == "made private":
        write_note(root, "cuisine/pain.md", "title: Pain au levain\nvisibility: private", "Un pain au levain demande du temps.\n")
    elif change == "made public":
        write_note(root, "prive/zorglub.md", "visibility: public", "Le plan zorglub, secret.\n")
    elif change == "hidden note deleted":
        (root / "prive/zorglub.md").unlink()
    else:
        raise ValueError(change)


@pytest.mark.parametrize("change", ["edited", "deleted", "added", "made private"])
def test_a_note_changed_while_stopped_is_read_again_the_others_kept(note_writer, tmp_path, monkeypatch, change):
    root = _vault(note_writer)
    settings = _settings(root, tmp_path)
    _worker(GrasBot.open(settings))
    _change(root, change)
    builds = _no_build(monkeypatch)
    bot = GrasBot.open(settings)
    _worker(bot)
    assert len(builds) == 2  # one an audience, each reusing the file's unchanged notes
    for audience in ("visitor", "owner"):
        index = bot.snapshot.index(audience)
        read, fresh = spelling.ready(index), spelling.build(index)  # from nothing
        assert sorted(read.notes) == sorted(index.notes)
        assert (read.df == fresh.df).all() and read.n == fresh.n
        fresh.keep_norms()
        assert read._norms == fresh._norms  # the file's lengths kept where nothing moved them: exactly
        paths = sorted(fresh.notes)
        for question in ("brioche tressée", "pain au levain", QUESTION):
            assert read.cosines(question, paths) == pytest.approx(fresh.cosines(question, paths), abs=1e-12)
    visitor = spelling.ready(bot.snapshot.index("visitor"))
    if change == "edited":
        assert visitor.notes["cuisine/pain.md"].digest is not None  # its words read again, not the file's
        assert visitor.cosines("demande", ["cuisine/pain.md"]) == [0.0]  # its old body's word
    if change == "made private":
        assert "cuisine/pain.md" not in visitor.notes

    # the file was written again: a third start reads it whole
    builds.clear()
    again = GrasBot.open(settings)
    _worker(again)
    assert builds == [] and _ranked(again) == _ranked(bot)


@pytest.mark.parametrize("change", ["option", "pieces", "version"])
def test_a_file_of_another_option_or_code_is_not_read(note_writer, tmp_path, monkeypatch, caplog, change):
    root = _vault(note_writer)
    settings = _settings(root, tmp_path)
    first = GrasBot.open(settings)
    _worker(first)
    if change == "option":
        settings = _settings(root, tmp_path, exclude=("cuisine",))
    elif change == "pieces":
        monkeypatch.setattr(spelling, "BODY_CAP", spelling.BODY_CAP - 1)
    else:
        monkeypatch.setattr(spellings.cache, "__version__", "0.0.0-other")
    bot = GrasBot.open(settings)
    with caplog.at_level("INFO", logger="grasbot.cache"):
        loaded = spellings.load(tmp_path / "cache", bot.snapshot.vault.root, bot.snapshot.vault.options, bot.snapshot.indexes)
    assert loaded is None
    assert "vecteurs d'orthographe" in caplog.text and "d'une autre version, d'un autre code, coffre ou d'autres options" in caplog.text


@pytest.mark.parametrize("damage", ["truncated", "flipped", "foreign", "malformed"])
def test_a_damaged_file_is_ignored_with_a_log_line_and_built_again(note_writer, tmp_path, monkeypatch, caplog, damage):
    root = _vault(note_writer)
    settings = _settings(root, tmp_path)
    first = GrasBot.open(settings)
    _worker(first)
    path = tmp_path / "cache" / spellings.FILENAME
    raw = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(raw[: len(raw) // 2])
    elif damage == "flipped":
        path.write_bytes(raw[:-10] + bytes([raw[-10] ^ 0xFF]) + raw[-9:])
    elif damage == "foreign":
        path.write_bytes(b"not a spelling file at all")
    else:  # a payload that passes its checksum but whose parts do not fit together
        header, plain, notes = spellings.read_parts(raw)
        ids, counts = bytes(plain.pop("ids")), bytes(plain.pop("counts"))
        plain["offsets"] = plain["offsets"][:-8]  # the vocabulary's last word without its pieces
        head = marshal.dumps((header, plain, notes))
        payload = len(head).to_bytes(8, "big") + head + ids + counts
        path.write_bytes(spellings.MAGIC + spellings.zlib.crc32(payload).to_bytes(4, "big") + payload)
    builds = _no_build(monkeypatch)
    bot = GrasBot.open(settings)
    with caplog.at_level("WARNING", logger="grasbot.cache"):
        _worker(bot)
    assert "vecteurs d'orthographe" in caplog.text and "reconstruits" in caplog.text
    assert len(builds) == 2 and _ranked(bot) == _ranked(first)
    builds.clear()
    again = GrasBot.open(settings)
    _worker(again)  # written again, whole
    assert builds == [] and _ranked(again) == _ranked(first)


def test_the_visitors_part_holds_the_public_notes_alone(note_writer, tmp_path, monkeypatch):
    root = _vault(note_writer)
    settings = _settings(root, tmp_path)
    _worker(GrasBot.open(settings))
    _, plain, notes = spellings.read_parts((tmp_path / "cache" / spellings.FILENAME).read_bytes())
    visitor_paths = plain["audiences"]["visitor"][0]
    assert "prive/zorglub.md" not in visitor_paths and "prive/zorglub.md" in plain["audiences"]["owner"][0]
    builds = _no_build(monkeypatch)
    bot = GrasBot.open(settings)
    _worker(bot)
    assert builds == []
    visitor = bot.snapshot.index("visitor")
    read = spelling.ready(visitor)
    assert set(read.notes) == set(visitor_paths) == set(visitor.notes)
    assert (read.df == spelling.build(visitor).df).all()  # counted over the public notes only
    # the public note that types the private one's path is read without it, and keeps its text's digest
    assert "public/voir.md" in visitor.masked and read.notes["public/voir.md"].digest is not None
    assert read.cosines("zorglub", ["public/voir.md"]) == [0.0]
    assert all(r.signal != "spelling" for s in bot.search("zorglub", audience="visitor").sources for r in s.reasons)


def test_a_reload_after_a_restart_updates_them_as_before(note_writer, tmp_path, monkeypatch):
    root = _vault(note_writer)
    settings = _settings(root, tmp_path)
    _worker(GrasBot.open(settings))
    bot = GrasBot.open(settings)
    _worker(bot)
    before = spelling.ready(bot.snapshot.index("visitor"))
    monkeypatch.setattr(bot, "start_spelling", lambda: None)  # what the reload does itself
    write_note(root, "cuisine/brioche.md", "title: Brioche", "Une brioche au beurre.\n")
    bot.reload()
    after = spelling.ready(bot.snapshot.index("visitor"))
    assert after is not None and after is not before
    for path in ("systeme/noyau.md", "systeme/modules.md", "public/voir.md"):
        assert after.notes[path] is before.notes[path]  # the file's arrays, reused
    fresh = spelling.build(bot.snapshot.index("visitor"))
    assert (after.df == fresh.df).all() and after.n == fresh.n
    paths = sorted(fresh.notes)
    assert after.cosines("brioche au beurre", paths) == pytest.approx(fresh.cosines("brioche au beurre", paths), abs=1e-12)


def test_no_file_without_the_index_cache(note_writer, tmp_path):
    root = _vault(note_writer)
    bot = GrasBot.open(settings_for(root, default_visibility="public", index_cache=False, cache_dir=tmp_path / "cache"))
    _worker(bot)
    assert spelling.ready(bot.snapshot.index("visitor")) is not None
    assert not os.path.exists(tmp_path / "cache" / spellings.FILENAME)


def _file_state(tmp_path) -> dict:
    """Each audience's notes in the file: {path: file digest}."""
    _, plain, notes = spellings.read_parts((tmp_path / "cache" / spellings.FILENAME).read_bytes())
    return {a: dict(zip(plain["audiences"][a][0], notes[a][0], strict=True)) for a in ("visitor", "owner")}


def _served(bot: GrasBot) -> dict:
    return {a: {p: n.digest for p, n in bot.snapshot.index(a).notes.items()} for a in ("visitor", "owner")}


@pytest.mark.parametrize("change", ["edited", "added", "deleted", "made private", "made public", "hidden note deleted"])
def test_written_again_once_the_worker_settled_each_reload(note_writer, tmp_path, monkeypatch, change):
    """The file holds the notes the daemon serves after every reload, once its worker settled
    them: it was written again only with the index cache (a hidden note gone), so a reload that
    made a note private left its words in the visitor's part until the next start, which read
    every changed note again and measured every length again. A restart then reads it whole."""
    root = _vault(note_writer)
    settings = _settings(root, tmp_path)
    bot = GrasBot.open(settings)
    _worker(bot)
    _change(root, change)
    bot.reload()
    _worker(bot)
    assert _file_state(tmp_path) == _served(bot)
    if change == "made private":
        assert "cuisine/pain.md" not in _file_state(tmp_path)["visitor"]
    builds = _no_build(monkeypatch)
    again = GrasBot.open(settings)
    _worker(again)
    assert builds == []  # read whole, with every length: nothing read again, nothing measured again
    assert _ranked(again) == _ranked(bot) and _ranked(again, "owner") == _ranked(bot, "owner")
    for audience in ("visitor", "owner"):
        read, served = spelling.ready(again.snapshot.index(audience)), spelling.ready(bot.snapshot.index(audience))
        assert read._norms == served._norms and (read.df == served.df).all()


def test_a_reload_that_changed_nothing_does_not_write_it(note_writer, tmp_path):
    root = _vault(note_writer)
    bot = GrasBot.open(_settings(root, tmp_path))
    _worker(bot)
    path = tmp_path / "cache" / spellings.FILENAME
    written = path.stat().st_mtime_ns, path.stat().st_ino
    bot.reload()
    _worker(bot)
    assert (path.stat().st_mtime_ns, path.stat().st_ino) == written


@pytest.mark.parametrize("when", ["while stopped", "by a reload"])
def test_an_edit_that_moves_no_piece_keeps_the_other_notes_lengths(note_writer, tmp_path, monkeypatch, when):
    """A note edited where the spelling vectors do not read (a date in its frontmatter) moves no
    piece's document frequency: every other note's length stays exactly what it was, known at
    once, where all of them were measured again (seconds at 10,000 notes)."""
    root = _vault(note_writer)
    settings = _settings(root, tmp_path)
    bot = GrasBot.open(settings)
    _worker(bot)
    write_note(root, "cuisine/pain.md", "title: Pain au levain\ndate: 2026-12-06", "Un pain au levain demande du temps.\n")
    if when == "while stopped":
        bot = GrasBot.open(settings)
        bot.warm_spelling()  # the worker's build, before it measures the lengths
    else:
        monkeypatch.setattr(bot, "start_spelling", lambda: None)  # what the reload does itself
        bot.reload()
    for audience in ("visitor", "owner"):
        index = bot.snapshot.index(audience)
        read, fresh = spelling.ready(index), spelling.build(index)
        fresh.keep_norms()
        # a reload knows the edited note's words too (its text reads the same), a start reads them again
        measured = {"cuisine/pain.md"} if when == "while stopped" else set()
        assert read._norms == {p: length for p, length in fresh._norms.items() if p not in measured}
        read.keep_norms()
        assert read._norms == fresh._norms
