"""Reloading the vault while the daemon serves: atomic swaps, edits picked up, failures that keep serving."""

from __future__ import annotations

import asyncio
import gc
import os
import shutil
import threading
import time
import weakref
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from grasbot import _engine
from grasbot.retrieval import vault as _vault
from support.bots import OWNER, OWNER_TOKEN, bot_of, rpc, rpc_result, write_note
from support.files import unlistable

BOUND = 60


def write_version(root: Path, version: int, notes: int = 8) -> None:
    """Every note of version N says so in its title; the padding makes each version's size differ."""
    for i in range(notes):
        text = f"---\ntitle: Ruche {i} v{version}\nvisibility: public\n---\nLes abeilles de la ruche numéro {i} butinent la lavande.\n{'.' * version}\n"
        (root / f"ruche-{i}.md").write_text(text, encoding="utf-8")


async def test_concurrent_searches_see_one_vault_version(start_daemon, tmp_path):
    root = tmp_path / "vault"
    root.mkdir()
    write_version(root, 0)
    # visitors' searches, far beyond the rate limit: test_limits.py is about that
    client = await start_daemon(root, owner_token=OWNER_TOKEN, rate_per_minute=1_000_000, rate_burst=1_000_000)
    versions = 6
    writer_done = asyncio.Event()
    results: list[dict] = []

    async def writer():
        for version in range(1, versions + 1):
            await asyncio.to_thread(write_version, root, version)  # searches go on meanwhile
            # two reloads at once, through both doors: the daemon runs them one after the other
            by_rpc, by_http = await asyncio.gather(rpc(client, "reload", {}, headers=OWNER), client.post("/reload-vault", headers=OWNER))
            assert "result" in by_rpc, by_rpc
            assert by_http.status == 200, await by_http.text()
        writer_done.set()

    async def searcher():
        while not writer_done.is_set() or len(results) < 200:
            wave = await asyncio.gather(*(rpc(client, "search", {"q": "abeilles ruche lavande", "top_k": 10}, id=n) for n in range(10)))
            results.extend(wave)

    await asyncio.wait_for(asyncio.gather(writer(), searcher()), BOUND)

    assert len(results) >= 200
    seen = set()
    for answer in results:
        assert "result" in answer, answer  # none failed
        titles = [s["title"] for s in answer["result"]["results"]]
        assert len(titles) == 8, titles  # never a half-built vault
        versions_in_result = {t.rsplit(" v", 1)[1] for t in titles}
        assert len(versions_in_result) == 1, titles  # never a mix of two vaults
        seen |= versions_in_result
    assert len(seen) >= 3, f"the searches should have run across reloads, saw versions {seen}"
    final = await rpc_result(client, "search", {"q": "abeilles ruche lavande", "top_k": 10})
    assert {s["title"].rsplit(" v", 1)[1] for s in final["results"]} == {str(versions)}


async def test_reload_after_an_edit_changes_the_results(start_daemon, note_writer):
    note_writer("miel.md", "title: Le miel\nvisibility: public", "Le miel de printemps est clair.")
    note_writer("cire.md", "title: La cire\nvisibility: public", "La cire sert aux bougies.")
    client = await start_daemon(note_writer.root, owner_token=OWNER_TOKEN)
    before = await rpc_result(client, "search", {"q": "hydromel fermentation"})
    assert "miel" not in [s["slug"] for s in before["results"]]

    note_writer("miel.md", "title: Le miel\nvisibility: public", "Le miel sert aussi à l'hydromel, par fermentation lente.")
    note_writer("pollen.md", "title: Le pollen\nvisibility: public", "Le pollen nourrit les larves.")
    (note_writer.root / "cire.md").unlink()
    report = await rpc_result(client, "reload", {}, headers=OWNER)
    assert (report["vault_size"], report["added"], report["changed"], report["removed"]) == (2, 1, 1, 1)
    assert report["errors"] == []

    after = await rpc_result(client, "search", {"q": "hydromel fermentation"})
    assert after["results"][0]["slug"] == "miel"
    assert "cire" not in [s["slug"] for s in (await rpc_result(client, "search", {"q": "cire bougies"}))["results"]]


async def test_reload_reports_broken_notes(start_daemon, note_writer):
    note_writer("ok.md", "title: Bon\nvisibility: public", "Une note lisible.")
    client = await start_daemon(note_writer.root, owner_token=OWNER_TOKEN)
    (note_writer.root / "casse.md").write_text("---\ntitle: [pas fermé\n---\ncorps\n", encoding="utf-8")
    report = await rpc_result(client, "reload", {}, headers=OWNER)
    assert report["vault_size"] == 1
    assert [e["path"] for e in report["errors"]] == ["casse.md"]


async def test_a_reload_tells_the_author_in_french_what_is_wrong_with_the_notes(start_daemon, note_writer):
    """The vault's notes are French, and so is their author: the plugin's reload notice lists
    each note skipped as « • chemin : message », its own words French, the daemon's were English
    (« broken YAML frontmatter at line 2: … »). The warnings (`grasbot check` lists them) too."""
    note_writer("ok.md", "title: Bon\nvisibility: public", "Une note lisible.")
    client = await start_daemon(note_writer.root, owner_token=OWNER_TOKEN)
    (note_writer.root / "casse.md").write_text("---\ntitle: [pas fermé\n---\ncorps\n", encoding="utf-8")
    note_writer("lien.md", "title: Lien\nvisibility: public", "Voir [[nulle-part]] et [[casse]].")  # casse.md: said once, not loaded
    note_writer("double.md", "slug: ok\nvisibility: public", "Un doublon.")
    note_writer("champ.md", "title: Champ\nvisibility: public\naliases: {a: 1}", "Un champ de travers.")
    report = await rpc_result(client, "reload", {}, headers=OWNER)
    assert report["errors"] == [
        {
            "path": "casse.md",
            "message": "propriétés YAML invalides à la ligne 3 : une [liste] n'est pas fermée par « ] », ou il manque une « , » entre deux de ses éléments",
        }
    ]
    warnings = [(w.path, w.message) for w in bot_of(client).snapshot.vault.warnings]
    assert sorted(warnings) == [
        ("champ.md", "`aliases` devrait être une liste, pas un ensemble de champs (clé : valeur) : ignoré"),
        ("lien.md", "le lien [[nulle-part]] ne mène à aucune note"),
        ("ok.md", "slug « ok » en double (déjà celui de double.md)"),
    ]


async def test_reload_of_a_vanished_vault_keeps_serving(start_daemon, note_writer):
    note_writer("miel.md", "title: Le miel\nvisibility: public", "Le miel de printemps est clair.")
    client = await start_daemon(note_writer.root, owner_token=OWNER_TOKEN)
    before = await rpc_result(client, "search", {"q": "miel printemps"})
    assert before["results"][0]["slug"] == "miel"

    gone = note_writer.root.with_name("gone")
    note_writer.root.rename(gone)
    answer = await rpc(client, "reload", {}, headers=OWNER)
    assert answer["error"]["code"] == -32004 and answer["error"]["message"] == "Vault reload failed"
    assert "dossier du coffre introuvable" in answer["error"]["data"]
    resp = await client.post("/reload-vault", headers=OWNER)
    assert resp.status == 500
    error = (await resp.json())["error"]
    assert error["code"] == -32004 and error["data"].startswith("le coffre précédent reste servi : dossier du coffre introuvable")

    still = await rpc_result(client, "search", {"q": "miel printemps"})
    assert still["results"] == before["results"]
    assert (await rpc_result(client, "health"))["vault_size"] == 1

    gone.rename(note_writer.root)
    assert (await rpc_result(client, "reload", {}, headers=OWNER))["vault_size"] == 1


async def test_reload_that_can_read_none_of_the_notes_keeps_serving(start_daemon, note_writer, monkeypatch):
    """Every note unreadable at once (a backup restored as another user, files 0600; a disk
    failing with I/O errors) swapped in an empty vault: every visitor went unanswered until a
    reload could read them again, as a drive not mounted would have, had it been refused."""
    from grasbot.retrieval import vault as _vault

    note_writer("miel.md", "title: Le miel\nvisibility: public", "Le miel de printemps est clair.")
    note_writer("cire.md", "title: La cire\nvisibility: public", "La cire sert aux bougies.")
    client = await start_daemon(note_writer.root, owner_token=OWNER_TOKEN)
    before = await rpc_result(client, "search", {"q": "miel printemps"})
    assert before["results"][0]["slug"] == "miel"

    def refused(path):  # as root, chmod 000 would not stop the daemon
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(_vault, "read_note_file", refused)
    for name in ("miel.md", "cire.md"):
        os.utime(note_writer.root / name, ns=(1, 1))  # changed: read again
    answer = await rpc(client, "reload", {}, headers=OWNER)
    assert answer["error"]["code"] == -32004, answer
    assert answer["error"]["data"] == (
        f"{note_writer.root} ne contient plus aucune note lisible (il en contenait 2 ; 2 n'ont pas pu être lues, la première cire.md : "
        "impossible de lire le fichier : Permission denied) : corrigez-les, puis rechargez. Le coffre précédent reste servi"
    )
    assert (await rpc_result(client, "search", {"q": "miel printemps"}))["results"] == before["results"]
    assert (await rpc_result(client, "health"))["vault_size"] == 2


async def test_reload_of_a_vault_turned_into_a_loop_of_links_keeps_serving(start_daemon, note_writer):
    note_writer("miel.md", "title: Le miel\nvisibility: public", "Le miel de printemps est clair.")
    client = await start_daemon(note_writer.root, owner_token=OWNER_TOKEN)
    before = await rpc_result(client, "search", {"q": "miel printemps"})
    kept = note_writer.root.with_name("kept")
    note_writer.root.rename(kept)
    note_writer.root.symlink_to(note_writer.root)  # the vault's path now leads back to itself
    answer = await rpc(client, "reload", {}, headers=OWNER)  # was -32603, a traceback in the log
    assert answer["error"]["code"] == -32004
    assert answer["error"]["data"] == f"le dossier du coffre {note_writer.root} est une boucle de liens symboliques (réglez --vault ou VAULT_DIR)"
    resp = await client.post("/reload-vault", headers=OWNER)
    assert resp.status == 500 and (await resp.json())["error"]["code"] == -32004
    assert (await rpc_result(client, "search", {"q": "miel printemps"}))["results"] == before["results"]


async def test_reloads_run_off_the_event_loop_one_at_a_time(start_daemon, note_writer):
    note_writer("miel.md", "title: Le miel\nvisibility: public", "Le miel.")
    client = await start_daemon(note_writer.root, owner_token=OWNER_TOKEN)
    bot = bot_of(client)
    original = bot.reload
    gate = threading.Event()
    spans: list[tuple[str, float]] = []

    def slow_reload(scanned=None, skipped=None):
        spans.append(("start", time.monotonic()))
        gate.wait(BOUND)  # blocks its worker thread until the test lets it go
        try:
            return original(scanned, skipped)
        finally:
            spans.append(("end", time.monotonic()))

    bot.reload = slow_reload
    first = asyncio.ensure_future(rpc(client, "reload", {}, headers=OWNER))
    second = asyncio.ensure_future(client.post("/reload-vault", headers=OWNER))

    async def started():
        while not spans:
            await asyncio.sleep(0.01)

    await asyncio.wait_for(started(), BOUND)
    # a reload is blocked in its thread: the loop still answers, and the second reload waits its turn
    health = await asyncio.wait_for(rpc_result(client, "health"), BOUND)
    assert health["vault_size"] == 1
    assert [kind for kind, _ in spans] == ["start"]
    assert not first.done() and not second.done()
    gate.set()
    answer, resp = await asyncio.wait_for(asyncio.gather(first, second), BOUND)
    assert "result" in answer and resp.status == 200
    assert [kind for kind, _ in spans] == ["start", "end", "start", "end"]


async def test_a_reload_walks_the_vault_on_the_event_loop_between_requests(start_daemon, note_writer, monkeypatch):
    """The files are walked and stat()ed on the event loop, a few at a time (a worker thread
    that stats them waits for the GIL at every file while the loop is busy: 4.2 s instead of
    165 ms for 10,000 notes under load); the thread's load_vault walks nothing itself."""
    from grasbot.retrieval import vault as _vault
    from grasbot.server import methods

    for i in range(7):
        note_writer(f"ruche-{i}.md", f"title: Ruche {i}\nvisibility: public", "Les abeilles butinent.")
    client = await start_daemon(note_writer.root, owner_token=OWNER_TOKEN)
    turns = []
    walk = _vault.walk_markdown

    def walked(root, options, skipped=None):
        for rel, entry in walk(root, options, skipped):
            turns.append((rel, ticks))  # how many turns other tasks had had by then
            yield rel, entry

    monkeypatch.setattr(methods, "STATS_PER_TURN", 2)
    monkeypatch.setattr("grasbot._engine.walk_markdown", walked)

    def no_walk_here(*args, **kwargs):
        raise AssertionError("load_vault walked the vault itself")

    monkeypatch.setattr(_vault, "_scan", no_walk_here)
    ticks = 0

    async def ticker():
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    ticking = asyncio.ensure_future(ticker())
    note_writer("ruche-3.md", "title: Ruche 3 bis\nvisibility: public", "Les abeilles dorment.")
    report = await rpc_result(client, "reload", {}, headers=OWNER)
    ticking.cancel()
    assert (report["vault_size"], report["changed"], report["errors"]) == (7, 1, [])
    assert [rel for rel, _ in turns] == [f"ruche-{i}.md" for i in range(7)]
    seen = [tick for _, tick in turns]  # 2 files a turn, other tasks running between two turns
    assert seen[0] == seen[1] < seen[2] == seen[3] < seen[4] == seen[5] < seen[6], seen
    top = await rpc_result(client, "search", {"q": "abeilles dorment"})
    assert top["results"][0]["title"] == "Ruche 3 bis"


class _Cycle:
    """What a request may leave behind: objects that refer to each other, freed only by the
    cyclic collector (an exception and the frame of its traceback, a task and its callbacks)."""

    def __init__(self) -> None:
        self.itself = self


async def test_reloads_leave_no_request_garbage_behind_for_the_daemon_s_life(start_daemon, tmp_path):
    """A load freezes what it made out of the collector's reach (`gc.freeze`), and froze with it
    every reference cycle the daemon's requests had left and the collector had not freed yet:
    kept for the daemon's life, at every reload. 200 reloads, 20 cycles left before each: none
    is kept once collected."""
    root = tmp_path / "vault"
    root.mkdir()
    write_version(root, 0)
    client = await start_daemon(root, owner_token=OWNER_TOKEN)
    left: list[weakref.ref] = []
    for version in range(1, 201):
        for _ in range(20):
            left.append(weakref.ref(_Cycle()))
        write_version(root, version % 2)
        response = await client.post("/reload-vault", headers=OWNER)
        assert response.status == 200, await response.text()
    gc.collect()
    assert sum(ref() is not None for ref in left) == 0
    assert (await rpc_result(client, "search", {"q": "lavande"}))["results"]  # and it serves


async def test_a_note_whose_expiry_date_comes_leaves_the_visitors_answers_without_a_reload(start_daemon, tmp_path):
    """A note whose `expiryDate` came was still served, to every visitor, until its owner
    reloaded the vault: the daemon reloads it at that instant itself, and a note whose
    `publishDate` came is served then."""
    root = tmp_path / "vault"
    root.mkdir()
    turn = datetime.now(UTC) + timedelta(seconds=2)
    (root / "offre.md").write_text(f"---\nvisibility: public\nexpiryDate: {turn.isoformat()}\n---\nL'offre zorglub du rucher.\n", encoding="utf-8")
    (root / "billet.md").write_text(f"---\nvisibility: public\npublishDate: {turn.isoformat()}\n---\nLe billet grumpf du rucher.\n", encoding="utf-8")
    client = await start_daemon(root, rate_per_minute=1_000_000, rate_burst=1_000_000)
    assert [r["path"] for r in (await rpc_result(client, "search", {"q": "zorglub"}))["results"]] == ["offre.md"]
    assert (await rpc_result(client, "search", {"q": "grumpf"}))["results"] == []
    deadline = time.monotonic() + 20
    while (await rpc_result(client, "search", {"q": "zorglub"}))["results"] and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    assert (await rpc_result(client, "search", {"q": "zorglub"}))["results"] == []
    assert [r["path"] for r in (await rpc_result(client, "search", {"q": "grumpf"}))["results"]] == ["billet.md"]


@pytest.mark.parametrize("fails", ["folder", "unmounted"])
async def test_a_note_whose_expiry_date_comes_while_the_vault_cannot_be_read_leaves_the_visitors_answers(start_daemon, tmp_path, monkeypatch, fails):
    """A note whose `expiryDate` came while a reload could not read the vault (a folder made
    unreadable, a drive not mounted) was served, to every visitor, for as long as the vault
    stayed so: the reload at its date failed, and the previous vault, the note public in it,
    kept serving. Its own dates say it is private: the daemon withdraws it all the same."""
    root = tmp_path / "vault"
    turn = datetime.now(UTC) + timedelta(seconds=2)
    write_note(root, "offre.md", f"visibility: public\nexpiryDate: {turn.isoformat()}", "L'offre zorglub du rucher.")
    write_note(root, "sous/ruche.md", "visibility: public", "La ruche du rucher.")
    client = await start_daemon(root, rate_per_minute=1_000_000, rate_burst=1_000_000)
    assert [r["path"] for r in (await rpc_result(client, "search", {"q": "zorglub"}))["results"]] == ["offre.md"]
    if fails == "folder":
        blocked, real_scandir = str(root / "sous"), os.scandir

        def scandir(path="."):
            if os.fspath(path) == blocked:  # as root, chmod 000 would not stop the test itself
                raise PermissionError(13, "Permission denied", blocked)
            return real_scandir(path)

        monkeypatch.setattr(os, "scandir", scandir)
    else:
        moved = shutil.move(root, tmp_path / "ailleurs")
        root.mkdir()
    deadline = time.monotonic() + 20
    while (await rpc_result(client, "search", {"q": "zorglub"}))["results"] and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    assert (await rpc_result(client, "search", {"q": "zorglub"}))["results"] == []
    assert [r["path"] for r in (await rpc_result(client, "search", {"q": "ruche rucher"}))["results"]] == ["sous/ruche.md"]
    assert (await (await client.get("/health")).json())["vault_size"] == 1
    if fails == "unmounted":
        root.rmdir()
        shutil.move(moved, root)


@pytest.mark.parametrize("leaves", ["private", "deleted", "excluded"])
async def test_a_note_taken_from_visitors_while_another_folder_cannot_be_read_leaves_their_answers(start_daemon, tmp_path, monkeypatch, caplog, leaves):
    """The author marks a note private (or deletes it, or moves it into a folder of --exclude)
    while another folder of the vault cannot be listed: every reload failed, and the previous
    vault, the note public in it, kept serving it to every visitor, in search, answers and
    /health's count, for as long as that folder stayed so. A failed reload now reads again the
    files of the notes it knows (no folder listed): the note leaves the visitors' answers, a
    public note edited serves its new text, and a note turned public waits for a good reload;
    the owner still hears the reload's error, and the log says what was applied."""
    root = tmp_path / "vault"
    write_note(root, "offre.md", "visibility: public", "L'offre zorglub du rucher.")
    write_note(root, "cire.md", "visibility: public", "La cire du rucher.")
    write_note(root, "miel.md", "visibility: private", "Le miel grumpf du rucher.")
    write_note(root, "sous/ruche.md", "visibility: public", "La ruche pollinix du rucher.")
    (root / "archives").mkdir()
    client = await start_daemon(root, owner_token=OWNER_TOKEN, exclude="archives", rate_per_minute=1_000_000, rate_burst=1_000_000)
    assert [r["path"] for r in (await rpc_result(client, "search", {"q": "zorglub"}))["results"]] == ["offre.md"]
    assert (await rpc_result(client, "health"))["vault_size"] == 3

    unlistable(monkeypatch, root / "sous")
    if leaves == "private":
        write_note(root, "offre.md", "visibility: private", "L'offre zorglub du rucher.")
    elif leaves == "deleted":
        (root / "offre.md").unlink()
    else:
        shutil.move(root / "offre.md", root / "archives" / "offre.md")
    write_note(root, "cire.md", "visibility: public", "La cire gloubi du rucher.")
    write_note(root, "miel.md", "visibility: public", "Le miel grumpf du rucher.")
    with caplog.at_level("WARNING", logger="grasbot"):
        answer = await rpc(client, "reload", {}, headers=OWNER)
    assert answer["error"]["code"] == -32004, answer
    assert "impossible de lire le dossier sous/ du coffre" in answer["error"]["data"]

    assert (await rpc_result(client, "search", {"q": "zorglub"}))["results"] == []
    said = await rpc_result(client, "answer", {"q": "Quelle est l'offre zorglub ?"})
    assert "offre" not in [s["slug"] for s in said["sources"]] and "zorglub" not in said["response"]
    assert [r["path"] for r in (await rpc_result(client, "search", {"q": "gloubi"}))["results"]] == ["cire.md"]
    assert (await rpc_result(client, "search", {"q": "grumpf"}))["results"] == []  # turned public: waits
    assert [r["path"] for r in (await rpc_result(client, "search", {"q": "pollinix"}))["results"]] == ["sous/ruche.md"]
    assert (await rpc_result(client, "health"))["vault_size"] == 2
    applied = [r.getMessage() for r in caplog.records if "notes déjà chargées" in r.getMessage()]
    assert len(applied) == 1 and "visiteurs : 3 → 2" in applied[0], applied

    monkeypatch.undo()  # the folder readable again: a good reload serves the note turned public
    report = await rpc_result(client, "reload", {}, headers=OWNER)
    assert report["errors"] == []
    assert [r["path"] for r in (await rpc_result(client, "search", {"q": "grumpf"}))["results"]] == ["miel.md"]
    assert (await rpc_result(client, "search", {"q": "zorglub"}))["results"] == []
    assert (await rpc_result(client, "health"))["vault_size"] == 3


async def test_a_failed_reload_reads_no_file_a_note_s_link_now_leads_to_out_of_the_vault(start_daemon, tmp_path, monkeypatch):
    """A failed reload reads again the notes whose files changed, by their paths alone: a note
    that is a symbolic link, pointed since at a file out of the vault, is dropped as the walk
    leaves it out, never served from there."""
    root, outside = tmp_path / "vault", tmp_path / "ailleurs.md"
    write_note(root, "vrai/lien.md", "visibility: public", "Le lien du rucher, version une.")
    write_note(root, "sous/ruche.md", "visibility: public", "La ruche pollinix du rucher.")
    write_note(tmp_path, "ailleurs.md", "visibility: public", "Le secret zorglub de la maison.")
    (root / "lien.md").symlink_to(root / "vrai" / "lien.md")
    client = await start_daemon(root, owner_token=OWNER_TOKEN, rate_per_minute=1_000_000, rate_burst=1_000_000)
    assert (await rpc_result(client, "health"))["vault_size"] == 3

    unlistable(monkeypatch, root / "sous")
    (root / "lien.md").unlink()
    (root / "lien.md").symlink_to(outside)
    assert (await rpc(client, "reload", {}, headers=OWNER))["error"]["code"] == -32004
    assert (await rpc_result(client, "search", {"q": "zorglub"}))["results"] == []
    assert [r["path"] for r in (await rpc_result(client, "search", {"q": "pollinix"}))["results"]] == ["sous/ruche.md"]
    assert (await rpc_result(client, "health"))["vault_size"] == 2


@pytest.mark.parametrize("moved", ["note", "folder"])
async def test_a_note_moved_into_a_folder_left_out_with_a_link_left_behind_leaves_the_visitors_answers_while_another_folder_cannot_be_read(
    start_daemon, tmp_path, monkeypatch, moved
):
    """The author moves a note (or its folder) into a folder of --exclude and leaves a symbolic
    link at its old place, while another folder cannot be listed: the walk leaves such a link
    out, but the failed reload's stat followed it to the very file, unchanged (a rename touches
    neither the file's times nor, for a folder, its notes'), judged it unmoved and kept the
    note public, where it read the path's real place only for a file changed."""
    monkeypatch.setattr(_vault, "RACY_NS", 0)  # the files read as old, as a note written long before
    root = tmp_path / "vault"
    write_note(root, "offre.md", "visibility: public", "L'offre zorglub du rucher.")
    write_note(root, "plans/plan.md", "visibility: public", "Le plan gloubi du rucher.")
    write_note(root, "sous/ruche.md", "visibility: public", "La ruche pollinix du rucher.")
    (root / "archives").mkdir()
    client = await start_daemon(root, owner_token=OWNER_TOKEN, exclude="archives", rate_per_minute=1_000_000, rate_burst=1_000_000)
    assert (await rpc_result(client, "health"))["vault_size"] == 3

    unlistable(monkeypatch, root / "sous")
    which, word = ("offre.md", "zorglub") if moved == "note" else ("plans", "gloubi")
    (root / which).rename(root / "archives" / which)
    (root / which).symlink_to(root / "archives" / which)
    assert (await rpc(client, "reload", {}, headers=OWNER))["error"]["code"] == -32004
    assert (await rpc_result(client, "search", {"q": word}))["results"] == []
    assert [r["path"] for r in (await rpc_result(client, "search", {"q": "pollinix"}))["results"]] == ["sous/ruche.md"]
    assert (await rpc_result(client, "health"))["vault_size"] == 2


async def test_a_path_through_a_link_made_to_an_excluded_folder_is_masked_after_a_reload(start_daemon, tmp_path):
    """The author links `public/lien` to `../prive`, a folder of --exclude, and reloads: the
    daemon's reload walks the vault itself (`methods.reload_vault`), and the links that walk left
    out reach the load, which masks `public/lien/zorglub` typed in a public note as `prive/zorglub`."""
    root = tmp_path / "vault"
    write_note(root, "prive/zorglub.md", "visibility: public", "Le plan.")
    write_note(root, "public/accueil.md", "visibility: public", "Les ruches ; voir public/lien/zorglub.")
    client = await start_daemon(root, owner_token=OWNER_TOKEN, exclude="prive", rate_per_minute=1_000_000, rate_burst=1_000_000)
    assert [r["path"] for r in (await rpc_result(client, "search", {"q": "zorglub"}))["results"]] == ["public/accueil.md"]
    (root / "public" / "lien").symlink_to(Path("..") / "prive", target_is_directory=True)
    assert (await rpc_result(client, "reload", {}, headers=OWNER))["errors"] == []
    assert (await rpc_result(client, "search", {"q": "zorglub"}))["results"] == []
    assert "zorglub" not in bot_of(client).snapshot.index("visitor").readable_body("public/accueil.md")


@pytest.mark.parametrize(("typed", "start"), [("prive/zorglub", "cold"), ("pub/lien/zorglub", "cold"), ("pub/lien/zorglub", "warm")])
@pytest.mark.parametrize("how", ["moved", "written"])
async def test_a_note_moved_into_an_excluded_folder_while_another_folder_cannot_be_read_has_its_new_path_masked(
    start_daemon, tmp_path, monkeypatch, how, typed, start
):
    """The author moves a public note into a folder of --exclude, renamed (or writes a note there), while
    another folder cannot be listed: the failed reload dropped the note, but listed no folder,
    so its new path, `prive/zorglub` typed in a public note, reached visitors, and search found
    the public note by the name, until a reload succeeded; `prive/zorglub` written before the
    folder went unreadable was masked. Its path through `pub/lien`, a link to `../prive` since
    before the daemon started (from the index cache, or not), reached them too once the failed
    reload listed the folder: the links the last walk left out were load_vault's alone."""
    root = tmp_path / "vault"
    write_note(root, "pub/plan.md", "visibility: public", "Le plan du rucher.")
    write_note(root, "pub/accueil.md", "visibility: public", f"Les ruches ; voir {typed}.")
    write_note(root, "sous/ruche.md", "visibility: public", "La ruche pollinix du rucher.")
    (root / "prive").mkdir()
    if typed.startswith("pub/lien/"):
        (root / "pub" / "lien").symlink_to(Path("..") / "prive", target_is_directory=True)
    settings = {"exclude": "prive", "rate_per_minute": 1_000_000, "rate_burst": 1_000_000}
    if start == "warm":
        settings |= {"index_cache": True, "cache_dir": str(tmp_path / "cache")}
        await start_daemon(root, owner_token=OWNER_TOKEN, **settings)  # which writes the cache once serving
        monkeypatch.setattr(_engine, "load_shares", None)  # the next start reads the cache, not the notes
    client = await start_daemon(root, owner_token=OWNER_TOKEN, **settings)
    assert (await rpc_result(client, "health"))["vault_size"] == 3

    unlistable(monkeypatch, root / "sous")
    if how == "moved":
        (root / "pub" / "plan.md").rename(root / "prive" / "zorglub.md")
    else:
        write_note(root, "prive/zorglub.md", "visibility: private", "Le plan du rucher.")
    assert (await rpc(client, "reload", {}, headers=OWNER))["error"]["code"] == -32004
    assert (await rpc_result(client, "search", {"q": "zorglub"}))["results"] == []
    assert "zorglub" not in bot_of(client).snapshot.index("visitor").readable_body("pub/accueil.md")
    assert [r["path"] for r in (await rpc_result(client, "search", {"q": "pollinix"}))["results"]] == ["sous/ruche.md"]
    monkeypatch.undo()  # as a reload that succeeds masks it
    assert (await rpc_result(client, "reload", {}, headers=OWNER))["errors"] == []
    assert (await rpc_result(client, "search", {"q": "zorglub"}))["results"] == []


@pytest.mark.parametrize("unlisted", ["archives", "sous"])  # walked before the link's folder, or after it
async def test_a_symbolic_link_made_into_an_excluded_folder_while_another_folder_cannot_be_read_has_its_paths_masked(
    start_daemon, tmp_path, monkeypatch, unlisted
):
    """`public/lien` → `../prive`, a folder of --exclude, made while another folder cannot be
    listed: the failed reload knew the links of the last good walk alone (`Vault.symlinks`), so
    `public/lien/zorglub`, typed in a public note, now the path of the excluded
    `prive/zorglub.md`, reached visitors, and search found the public note by the name, until a
    reload succeeded."""
    root = tmp_path / "vault"
    write_note(root, "prive/zorglub.md", "visibility: public", "Le plan du rucher.")
    write_note(root, "public/accueil.md", "visibility: public", "Les ruches ; voir public/lien/zorglub.")
    write_note(root, f"{unlisted}/ruche.md", "visibility: public", "La ruche pollinix du rucher.")
    client = await start_daemon(root, owner_token=OWNER_TOKEN, exclude="prive", rate_per_minute=1_000_000, rate_burst=1_000_000)
    assert (await rpc_result(client, "health"))["vault_size"] == 2

    unlistable(monkeypatch, root / unlisted)
    (root / "public" / "lien").symlink_to(Path("..") / "prive", target_is_directory=True)
    answer = await rpc(client, "reload", {}, headers=OWNER)
    assert answer["error"]["code"] == -32004
    assert f"impossible de lire le dossier {unlisted}/ du coffre" in answer["error"]["data"]
    assert (await rpc_result(client, "search", {"q": "zorglub"}))["results"] == []
    assert "zorglub" not in bot_of(client).snapshot.index("visitor").readable_body("public/accueil.md")
    assert [r["path"] for r in (await rpc_result(client, "search", {"q": "pollinix"}))["results"]] == [f"{unlisted}/ruche.md"]
    monkeypatch.undo()  # as a reload that succeeds masks it
    assert (await rpc_result(client, "reload", {}, headers=OWNER))["errors"] == []
    assert "zorglub" not in bot_of(client).snapshot.index("visitor").readable_body("public/accueil.md")
