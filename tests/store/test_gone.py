"""The hidden notes that went, kept apart from the index cache (`store.gone`): read at every
start whatever the cache, rewritten when they change, forgotten once no public note types them."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from grasbot import GrasBot
from grasbot.retrieval import index as _index
from grasbot.retrieval.vault import load_vault
from grasbot.store import gone as _gone
from grasbot.store import parallel as _parallel
from support.bots import make_bot, write_note


def _vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write_note(root, "prive/plan-rouge.md", "title: Projet Zorglub\nvisibility: private", "Le plan rouge.")
    write_note(root, "jardin.md", "visibility: public", "Le plan est dans prive/plan-rouge.md, voir `[[Projet Zorglub]]`.")
    write_note(root, "potager.md", "visibility: public", "Le potager en mai.")
    return root


def _went(root: Path) -> GrasBot:
    """A bot, without the index cache, that saw the private note go."""
    bot = make_bot(root)
    (root / "prive/plan-rouge.md").unlink()
    bot.reload()
    return bot


SHOWN = "Le plan est dans , voir ``."


def _shown(bot: GrasBot) -> str:
    return bot.snapshot.index("visitor").readable_body("jardin.md").strip()


def test_a_cold_load_on_several_cores_reads_every_public_note_for_what_the_file_keeps(tmp_path, monkeypatch):
    """A cold load's shares hold no masking record: the file's must reach a full read of the
    public notes (one with no masked note would let the quick path read none of them)."""
    root = _vault(tmp_path)
    _went(root)
    monkeypatch.setattr(_parallel, "MIN_NOTES", 1)
    monkeypatch.setattr(_parallel, "can_fork", lambda: True)
    monkeypatch.setattr(_parallel, "cores", lambda: 2)
    shares = []
    real = _parallel.load_shares
    monkeypatch.setattr("grasbot._engine.load_shares", lambda *a, **k: shares.append(real(*a, **k)) or shares[-1])
    restarted = make_bot(root)
    assert shares and shares[0] is not None  # the start did load on several cores
    assert _shown(restarted) == SHOWN
    assert restarted.snapshot.index("visitor").masked == {"jardin.md"}
    assert [s.path for s in restarted.search("rouge").sources] == []


def test_the_file_is_the_owner_s_and_forgotten_once_no_public_note_types_them(tmp_path):
    root = _vault(tmp_path)
    bot = _went(root)
    kept = _gone.default_path(root)
    assert kept.stat().st_mode & 0o777 == 0o600
    assert _gone.load(kept) == _gone.Gone(frozenset({"prive/plan-rouge.md"}), frozenset({("label:projet zorglub", "prive/plan-rouge.md")}))
    assert _shown(make_bot(root)) == SHOWN
    write_note(root, "jardin.md", "visibility: public", "Le plan est ailleurs.")
    bot.reload()
    make_bot(root)  # a start reads every public note: none types them
    assert not kept.exists()
    write_note(root, "jardin.md", "visibility: public", "Le plan est dans prive/plan-rouge.md.")
    assert "prive/plan-rouge.md" in _shown(make_bot(root))  # forgotten: deleting the file does the same


@pytest.mark.parametrize(
    "held",
    [
        b"{not json",
        b'{"format": 1, "paths": "prive/plan-rouge.md", "names": []}',
        b'{"format": 99, "paths": [], "names": []}',
        b'{"format": 3, "paths": [], "names": [], "hidden": {}, "pages": ["labo/zorglub"]}',
    ],
)
def test_a_file_that_cannot_be_read_is_said_and_written_anew(tmp_path, caplog, held):
    root = _vault(tmp_path)
    kept = _gone.default_path(root)
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_bytes(held)
    with caplog.at_level(logging.WARNING, logger="grasbot.gone"):
        bot = make_bot(root)
    assert f"les notes cachées disparues, gardées dans {kept}, n'ont pas pu être lues" in caplog.text
    (root / "prive/plan-rouge.md").unlink()
    bot.reload()
    assert _gone.load(kept).paths == {"prive/plan-rouge.md"}


def test_a_private_note_deleted_while_the_daemon_was_stopped_stays_masked_at_a_start_without_the_cache(tmp_path):
    """The daemon knew the private note as one of its hidden notes, not as one that went: the
    file kept nothing of it, and a start without the index cache (`--no-cache`, a cache
    cleared) showed its path and its title typed in a public note to visitors."""
    root = _vault(tmp_path)
    make_bot(root)  # served, then stopped
    kept = _gone.default_path(root)
    assert kept.stat().st_mode & 0o777 == 0o600
    (root / "prive/plan-rouge.md").unlink()  # while no daemon runs
    restarted = make_bot(root)
    assert _shown(restarted) == SHOWN
    assert restarted.snapshot.index("visitor").masked == {"jardin.md"}
    assert [s.path for s in restarted.search("rouge").sources] == []
    assert _gone.load(kept).paths == {"prive/plan-rouge.md"}  # now one that went, as a reload would have said
    assert _shown(make_bot(root)) == SHOWN  # and at the start after


def test_a_note_made_public_before_it_went_shows_its_path(tmp_path):
    """What the file keeps of the hidden notes follows their visibility: a private note made
    public, then deleted while the daemon was stopped, shows its path as any public note's."""
    root = _vault(tmp_path)
    bot = make_bot(root)
    write_note(root, "prive/plan-rouge.md", "title: Projet Zorglub\nvisibility: public", "Le plan rouge.")
    bot.reload()
    (root / "prive/plan-rouge.md").unlink()
    assert _shown(make_bot(root)) == "Le plan est dans prive/plan-rouge.md, voir `[[Projet Zorglub]]`."
    assert not _gone.default_path(root).exists()  # no hidden note left: nothing to keep


def test_the_hidden_notes_of_a_large_vault_are_kept_in_a_small_file(tmp_path):
    """Every hidden note's path and names are kept, once each, written compactly."""
    root = tmp_path / "vault"
    for i in range(2000):
        write_note(root, f"prive/carnet/note-{i:04}.md", "visibility: private", "Un secret.")
    write_note(root, "jardin.md", "visibility: public", "Le jardin.")
    make_bot(root)
    kept = _gone.default_path(root)
    assert len(_gone.load(kept).hidden) == 2000
    assert kept.stat().st_size < 2000 * 120


def test_a_file_an_older_grasbot_wrote_is_read(tmp_path):
    """An upgrade keeps what the previous version knew: its file held no hidden note there."""
    root = _vault(tmp_path)
    (root / "prive/plan-rouge.md").unlink()
    kept = _gone.default_path(root)
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_text('{"format": 1, "paths": ["prive/plan-rouge.md"], "names": [["label:projet zorglub", "prive/plan-rouge.md"]]}')
    assert _shown(make_bot(root)) == SHOWN
    assert _gone.load(kept).paths == {"prive/plan-rouge.md"}


def test_a_vault_moved_keeps_what_was_hidden_at_its_old_place(tmp_path, monkeypatch, caplog):
    """The state folder is named by the vault's path: a vault moved or renamed found no file,
    and a start (its index cache lost too) showed the paths of the private notes that went,
    before the move or while it was stopped. The file of a vault no longer where it was, whose
    hidden notes are this vault's notes, is read as this one's at its first start."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # no other test's vault
    root = _vault(tmp_path)
    write_note(root, "prive/budget.md", "visibility: private", "Le budget.")
    write_note(root, "prive/carnet.md", "visibility: private", "Le carnet.")
    write_note(root, "potager.md", "visibility: public", "Le potager en mai, voir prive/budget.md.")
    _went(root)
    moved = root.rename(tmp_path / "Coffre")
    (moved / "prive/budget.md").unlink()  # while it was stopped
    with caplog.at_level(logging.WARNING, logger="grasbot.gone"):
        restarted = make_bot(moved)
    assert _shown(restarted) == SHOWN
    assert restarted.snapshot.index("visitor").readable_body("potager.md").strip() == "Le potager en mai, voir ."
    assert f"les notes cachées gardées pour le coffre qui était à {root}" in caplog.text
    assert _gone.load(_gone.default_path(moved)).paths == {"prive/plan-rouge.md", "prive/budget.md"}


def test_the_file_of_another_vault_gone_is_not_read(tmp_path, monkeypatch):
    """Only a vault that holds the hidden notes of a vault gone is that vault moved."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    other = tmp_path / "autre"
    write_note(other, "secret/carnet.md", "visibility: private", "Le carnet.")
    write_note(other, "accueil.md", "visibility: public", "Bienvenue.")
    make_bot(other)
    other.rename(tmp_path / "ailleurs")
    (tmp_path / "ailleurs/secret/carnet.md").unlink()
    root = tmp_path / "vault"
    write_note(root, "jardin.md", "visibility: public", "Voir secret/carnet.md.")
    assert "secret/carnet.md" in _shown(make_bot(root))


def test_a_private_note_made_after_the_cache_was_written_and_deleted_while_stopped_stays_masked(tmp_path):
    """The index cache is written at a start (and when a hidden note goes): a private note made
    while the daemon ran, typed in a public note, then deleted while it was stopped, was known
    neither to the cache nor to the file, and a start with the cache showed its path."""
    root = _vault(tmp_path)
    cached = {"index_cache": True, "cache_dir": str(tmp_path / "cache")}
    bot = make_bot(root, **cached)
    write_note(root, "prive/budget.md", "visibility: private", "Le budget.")
    write_note(root, "potager.md", "visibility: public", "Le potager en mai, voir prive/budget.md.")
    bot.reload()
    (root / "prive/budget.md").unlink()
    restarted = make_bot(root, **cached)
    assert restarted.snapshot.index("visitor").readable_body("potager.md").strip() == "Le potager en mai, voir ."


def _addressed(tmp_path: Path, field: str = "permalink: /labo/zorglub/") -> Path:
    """A private note whose own front matter gives its page (`field`), and a public note that
    types that address alone, not the note's path nor its name."""
    root = tmp_path / "vault"
    write_note(root, "prive/plan-rouge.md", f"title: Le plan\nvisibility: private\n{field}", "Le plan rouge.")
    write_note(root, "jardin.md", "visibility: public", "Le plan est sur https://monsite.fr/labo/zorglub/ en ce moment.")
    write_note(root, "potager.md", "visibility: public", "Le potager en mai.")
    return root


ADDRESS_SHOWN = "Le plan est sur  en ce moment."


def _address_masked(bot: GrasBot) -> bool:
    """Whether the visitor reads the public note without the private note's address, and
    search finds it by none of its words."""
    return _shown(bot) == ADDRESS_SHOWN and [s.path for s in bot.search("zorglub").sources] == []


@pytest.mark.parametrize("field", ["permalink: /labo/zorglub/", "url: /labo/zorglub/", "slug: labo/zorglub", "dg-permalink: labo/zorglub"])
def test_a_private_notes_own_address_stays_masked_once_it_went(tmp_path, field):
    """A private note's own page (`permalink:`, `url:`, `slug:`, Digital Garden's
    `dg-permalink:`) typed in a public note was masked while the note was there, then shown to
    visitors once it was deleted (a reload), and at every start after (with the index cache or
    without it), where its old path stayed masked."""
    root = _addressed(tmp_path, field)
    cached = {"index_cache": True, "cache_dir": str(tmp_path / "cache")}
    bot = make_bot(root, **cached)
    assert _address_masked(bot)
    (root / "prive/plan-rouge.md").unlink()
    bot.reload()
    assert _address_masked(bot)
    assert ("labo/zorglub", "prive/plan-rouge.md") in _gone.load(_gone.default_path(root)).pages
    assert _address_masked(make_bot(root, **cached))  # a restart with the cache
    assert _address_masked(make_bot(root))  # and without it
    write_note(root, "jardin.md", "visibility: public", "Le plan est ailleurs.")
    bot.reload()
    make_bot(root)
    assert not _gone.default_path(root).exists()  # no public note types it: forgotten


@pytest.mark.parametrize("cache", [True, False])
def test_a_private_notes_own_address_stays_masked_once_it_went_while_the_daemon_was_stopped(tmp_path, cache):
    """The file keeps the hidden notes' own pages as it keeps their names: a private note deleted
    while no daemon ran showed its address typed in a public note at the next start."""
    root = _addressed(tmp_path)
    cached = {"index_cache": True, "cache_dir": str(tmp_path / "cache")} if cache else {}
    make_bot(root, **cached)  # served, then stopped
    (root / "prive/plan-rouge.md").unlink()
    assert _address_masked(make_bot(root, **cached))
    assert _address_masked(make_bot(root))  # and at a start after, without the cache


def test_a_private_notes_old_address_stays_masked_once_its_permalink_changed(tmp_path):
    """A private note given another `permalink:` leaves its old address typed in a public note,
    masked afterwards as a deleted note's, while the daemon runs and at the starts after."""
    root = _addressed(tmp_path)
    cached = {"index_cache": True, "cache_dir": str(tmp_path / "cache")}
    bot = make_bot(root, **cached)
    write_note(root, "prive/plan-rouge.md", "title: Le plan\nvisibility: private\npermalink: /labo/autre/", "Le plan rouge.")
    bot.reload()
    assert _address_masked(bot)
    assert _address_masked(make_bot(root, **cached))
    assert _address_masked(make_bot(root))
    write_note(root, "prive/plan-rouge.md", "title: Le plan\nvisibility: private\npermalink: /labo/encore/", "Le plan rouge.")
    assert _address_masked(make_bot(root))  # changed while no daemon ran


def test_a_note_made_public_shows_its_old_address(tmp_path):
    """A private note made public takes its old addresses with it, as its path: they show."""
    root = _addressed(tmp_path)
    bot = make_bot(root)
    write_note(root, "prive/plan-rouge.md", "title: Le plan\nvisibility: public\npermalink: /labo/autre/", "Le plan rouge.")
    bot.reload()
    assert "https://monsite.fr/labo/zorglub/" in _shown(bot)
    assert "https://monsite.fr/labo/zorglub/" in _shown(make_bot(root))


def test_a_file_of_the_previous_format_is_read(tmp_path):
    """A file written before it kept the pages (format 2) is read: its paths and names stay
    masked, and it is written in this format once there is a page to keep."""
    root = _vault(tmp_path)
    (root / "prive/plan-rouge.md").unlink()
    kept = _gone.default_path(root)
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_text('{"format": 2, "paths": ["prive/plan-rouge.md"], "names": [["label:projet zorglub", "prive/plan-rouge.md"]], "hidden": {}}')
    bot = make_bot(root)
    assert _shown(bot) == SHOWN
    write_note(root, "prive/budget.md", "visibility: private\npermalink: /labo/budget/", "Le budget.")
    bot.reload()
    held = _gone.load(kept)
    assert (held.paths, held.names) == ({"prive/plan-rouge.md"}, {("label:projet zorglub", "prive/plan-rouge.md")})
    assert held.pages == {("labo/budget", "prive/budget.md")}
    assert '"format":3' in kept.read_text()


@pytest.mark.parametrize("restart", [False, True])
def test_a_gone_private_notes_address_a_public_notes_slug_holds_stays_masked(tmp_path, restart):
    """A public note's `slug: labo/zorglub` is no claim to the page (Hugo reads it in the note's
    folder): a private note's `/labo/zorglub/` stays masked beside it, and stayed so only while
    the private note was there: once deleted, the public note's slug counted as holding the
    page, and the address showed after the reload and at the starts after."""
    root = _addressed(tmp_path)
    write_note(root, "notes/autre.md", "visibility: public\nslug: labo/zorglub", "Autre chose.")
    bot = make_bot(root)
    assert _address_masked(bot)
    (root / "prive/plan-rouge.md").unlink()
    if restart:
        bot = make_bot(root)
    else:
        bot.reload()
    assert _address_masked(bot)


def test_the_pages_no_public_note_types_any_more_are_read_once_a_note_not_once_a_page(tmp_path, monkeypatch):
    """A reload keeps the old pages some masked public note still types (`_pages_still_typed`):
    each page was looked for in each note apart, 300 pages × 2,000 notes read 600,000 times
    (17 s of a reload). A note that types none is read once now; what is kept is the same."""
    root = tmp_path / "vault"
    for i in range(30):
        write_note(root, f"pub/n{i}.md", "visibility: public", f"La note {i}." + (" Voir /labo/page-7/." if i == 12 else ""))
    notes = list(load_vault(root).notes.values())
    paged = {f"labo/page-{i}": f"prive/p{i}.md" for i in range(40)}
    reads = []
    real = _index.mentions_in
    monkeypatch.setattr(_index, "mentions_in", lambda note, hidden: reads.append(note.path) or real(note, hidden))
    assert _index._pages_still_typed(paged, notes) == {"labo/page-7": "prive/p7.md"}
    assert len(reads) < 2 * len(notes)  # 1,200 before
