"""Words written alike (retrieval.spelling): the pieces' TF-IDF cosine among the first candidates."""

from __future__ import annotations

import math
import re
import threading
import unicodedata
import zlib
from array import array
from collections import Counter

import pytest

from grasbot import GrasBot
from grasbot.retrieval import spelling
from grasbot.retrieval.index import Index
from grasbot.retrieval.search import search
from support.bots import make_bot, settings_for, write_note


def _slow_vector(text: str, df: dict[int, int], n: int) -> dict[int, float]:
    """The measured definition, written plainly: pieces of 3 to 5 letters of each padded folded
    word (a short word is itself, padded, and no longer piece), crc32 buckets, 1 + log tf,
    smooth idf, l2."""
    spelled = text.lower().replace("œ", "oe").replace("æ", "ae")  # as search's words read them
    folded = "".join(c for c in unicodedata.normalize("NFKD", spelled) if not unicodedata.combining(c))
    counts: Counter = Counter()
    for word in re.findall(r"\w+", folded):
        padded = f" {word} "
        for size in (3, 4, 5):
            if len(padded) < size:
                counts[zlib.crc32(padded.encode()) & (spelling.BUCKETS - 1)] += 1
                break
            for i in range(len(padded) - size + 1):
                counts[zlib.crc32(padded[i : i + size].encode()) & (spelling.BUCKETS - 1)] += 1
    weights = {b: (1 + math.log(tf)) * (math.log((1 + n) / (1 + df.get(b, 0))) + 1) for b, tf in counts.items()}
    norm = math.sqrt(sum(v * v for v in weights.values())) or 1.0
    return {b: v / norm for b, v in weights.items()}


def _kernel_vault(note_writer):
    note_writer("systeme/noyau.md", "title: Paramètres du noyau", "Les paramètres du noyau se règlent avec sysctl.\n")
    note_writer("systeme/sysctl-reseau.md", "title: Réseau et sysctl", "Régler le réseau du noyau : sysctl, la pile TCP.\n")
    note_writer("systeme/modules.md", "title: Modules du noyau", "Charger un module du noyau avec modprobe.\n")
    note_writer("cuisine/pain.md", "title: Pain au levain", "Un pain au levain demande du temps.\n")
    return note_writer.root


def test_the_cosine_is_the_plain_tf_idf_of_the_pieces(note_writer):
    bot = make_bot(_kernel_vault(note_writer), default_visibility="public")
    index = bot.snapshot.index("visitor")
    built = spelling.ready(index)
    assert built is not None
    texts = {p: spelling.note_text(index, p) for p in index.notes}
    vectors = {p: _slow_vector(t, {}, 0) for p, t in texts.items()}
    df: Counter = Counter(b for v in vectors.values() for b in v)
    assert {b: int(built.df[b]) for b in df} == dict(df) and int(built.df.sum()) == sum(df.values())
    question = "Comment régler le paramétrage du noyau ?"
    asked = _slow_vector(question, df, len(texts))
    expected = [sum(w * _slow_vector(texts[p], df, len(texts)).get(b, 0.0) for b, w in asked.items()) for p in index.notes]
    assert built.cosines(question, list(index.notes)) == pytest.approx(expected, abs=1e-12)
    assert max(expected) > 0.2


def test_the_candidates_are_read_together_each_cosine_its_own(note_writer, monkeypatch):
    """`cosines` gathers the pieces of every candidate's words at once (a search compares POOL of
    them: a gather per note cost more in numpy calls than in arithmetic); each cosine is the one
    the note alone gives, a path not built reads 0.0, and one sharing no piece 0.0."""
    bot = make_bot(_kernel_vault(note_writer), default_visibility="public")
    built = spelling.ready(bot.snapshot.index("visitor"))
    assert built is not None
    paths = ["cuisine/pain.md", "systeme/noyau.md", "absente.md", "systeme/modules.md", "systeme/sysctl-reseau.md"]
    question = "Comment régler le paramétrage du noyau ?"
    alone = [built.cosines(question, [p])[0] for p in paths]
    gather, gathered = spelling._pieces, []
    monkeypatch.setattr(spelling, "_pieces", lambda *args: gathered.append(args) or gather(*args))
    assert built.cosines(question, paths) == alone
    assert len(gathered) == 1
    assert alone[2] == 0.0 and alone[1] > alone[3] > 0 and built.cosines("zorglub", paths) == [0.0] * 5
    measured = dict(built._norms)
    built._norms.clear()  # before the worker's keep_norms: each length measured from the pieces gathered
    assert built.cosines(question, paths) == alone and built._norms == measured


def test_a_long_question_whose_buckets_share_a_byte_of_the_marks_counts_each(note_writer):
    """`cosines` finds the question's pieces among the notes' by one bit a bucket: buckets that
    share a byte of those marks (a long question's do) are each counted, at their own place."""
    bot = make_bot(_kernel_vault(note_writer), default_visibility="public")
    index = bot.snapshot.index("visitor")
    built = spelling.ready(index)
    assert built is not None
    texts = {p: spelling.note_text(index, p) for p in index.notes}
    df: Counter = Counter(b for t in texts.values() for b in _slow_vector(t, {}, 0))
    question = " ".join(texts.values()) + " Comment régler le paramétrage du noyau et des modules réseau avec sysctl et modprobe ?"
    asked = _slow_vector(question, df, len(texts))
    assert len({b >> 3 for b in asked}) < len(asked)  # some share a byte
    expected = [sum(w * _slow_vector(texts[p], df, len(texts)).get(b, 0.0) for b, w in asked.items()) for p in index.notes]
    assert built.cosines(question, list(index.notes)) == pytest.approx(expected, abs=1e-12)
    assert not spelling._marks().any()  # left all zero for the next question


def test_a_ligature_is_the_two_letters_a_visitor_types(note_writer):
    note_writer("graphes/noeud.md", "title: Le nœud d'un graphe", "Un nœud relie des arêtes ; le cœur du graphe.\n")
    note_writer("graphes/arete.md", "title: Les arêtes", "Une arête relie deux sommets.\n")
    bot = make_bot(note_writer.root, default_visibility="public")
    index = bot.snapshot.index("visitor")
    built = spelling.ready(index)
    assert built is not None
    typed, written = built.cosines("noeud coeur", list(index.notes)), built.cosines("nœud cœur", list(index.notes))
    assert typed == pytest.approx(written, abs=1e-12)
    assert typed[list(index.notes).index("graphes/noeud.md")] > 0.2


def test_a_misspelt_question_finds_its_note_by_spelling(note_writer):
    note_writer("systeme/parametres.md", "title: Paramètres du noyau", "Les paramètres du noyau se règlent avec sysctl au démarrage.\n")
    for i, subject in enumerate(("réseau", "disque", "mémoire", "processus", "fichiers", "journal", "services", "pilotes")):
        note_writer(f"systeme/noyau-{i}.md", f"title: Le noyau et {subject}", f"Le noyau gère {subject} au démarrage.\n")
    bot = make_bot(note_writer.root, default_visibility="public")
    index = bot.snapshot.index("visitor")
    question = "parametrage du noyau"  # « parametrag » is the stem of no note's word
    with_signal = bot.search(question, audience="visitor")
    first = with_signal.sources[0]
    assert first.path == "systeme/parametres.md"
    assert [r.signal for r in first.reasons].count("spelling") == 1
    assert next(r for r in first.reasons if r.signal == "spelling").detail.startswith("mots écrits de même (cosinus ")
    without = search(question, _cold(index), top_k=5, min_score=bot.settings.search_min_score)
    assert without.sources[0].path != "systeme/parametres.md"
    assert all(r.signal != "spelling" for s in without.sources for r in s.reasons)


def _cold(index):
    """The same index, its spelling vectors not built (a fresh memo)."""
    from dataclasses import replace

    return replace(index, _memo={})


def test_a_visitor_reads_no_private_path_in_a_note(note_writer):
    note_writer("prive/zorglub.md", "visibility: private", "Le plan secret.\n")
    note_writer("public/voir.md", "title: Une note", "Voir prive/zorglub.md pour la suite, et le jardin.\n")
    note_writer("public/jardin.md", "title: Le jardin", "Le jardin au printemps.\n")
    note_writer("public/autre.md", "title: Autre chose", "Rien à voir avec le jardin.\n")
    bot = make_bot(note_writer.root, default_visibility="public")
    visitor = bot.snapshot.index("visitor")
    assert "zorglub" not in spelling.note_text(visitor, "public/voir.md")
    built = spelling.ready(visitor)
    assert built is not None
    word = built.vocabulary.ids.get("zorglub")  # the owner's build, sharing the vocabulary, may hold it
    assert all(word not in w.ids for w in built.notes.values())
    assert built.cosines("zorglub", list(visitor.notes)) == [0.0, 0.0, 0.0]
    found = bot.search("zorglub", audience="visitor")
    assert all(r.signal != "spelling" for s in found.sources for r in s.reasons)
    owner = spelling.ready(bot.snapshot.index("owner"))
    # the owner's reads the public note as search does (`Index.searchable_text`), and finds the private note itself
    assert owner is not None and owner.cosines("zorglub", ["public/voir.md", "prive/zorglub.md"])[1] > 0.5


def test_a_reload_reuses_the_unchanged_notes_and_counts_again(note_writer):
    root = _kernel_vault(note_writer)
    bot = make_bot(root, default_visibility="public")
    before = spelling.ready(bot.snapshot.index("visitor"))
    assert before is not None
    write_note(root, "cuisine/pain.md", "title: Pain au levain", "Un pain de campagne, pétri la veille.\n")
    write_note(root, "cuisine/brioche.md", "title: Brioche", "Une brioche au beurre.\n")
    bot.reload()
    after = spelling.ready(bot.snapshot.index("visitor"))
    assert after is not None and after is not before
    for path in ("systeme/noyau.md", "systeme/sysctl-reseau.md", "systeme/modules.md"):
        assert after.notes[path] is before.notes[path]  # the same arrays
    assert after.notes["cuisine/pain.md"] is not before.notes["cuisine/pain.md"]
    fresh = spelling.build(bot.snapshot.index("visitor"))  # from nothing
    assert (after.df == fresh.df).all() and after.n == fresh.n == 5
    question = "le pain pétri"
    assert after.cosines(question, sorted(after.notes)) == pytest.approx(fresh.cosines(question, sorted(fresh.notes)), abs=1e-12)


def test_searches_before_the_build_give_no_spelling_points_and_do_not_wait(note_writer, monkeypatch):
    root = _kernel_vault(note_writer)
    bot = GrasBot.open(settings_for(root, default_visibility="public"))
    index = bot.snapshot.index("visitor")
    assert spelling.ready(index) is None
    building = []
    monkeypatch.setattr(spelling, "_build", lambda *a: building.append(a) or pytest.fail("a search built the vectors"))
    result = bot.search("paramétrage du noyau", audience="visitor")
    assert result.sources and all(r.signal != "spelling" for s in result.sources for r in s.reasons)
    assert building == [] and spelling.ready(index) is None
    monkeypatch.undo()
    bot.warm_spelling()
    again = bot.search("paramétrage du noyau", audience="visitor")  # not the result kept before the build
    assert any(r.signal == "spelling" for s in again.sources for r in s.reasons)


async def test_an_answer_kept_before_the_build_is_not_given_once_it_is(note_writer, standin_ollama):
    """A daemon answers before its spelling vectors are built (its first seconds): the answer
    it kept then was ranked without them, and is written again once they are."""
    standin_ollama.script("Les paramètres du noyau se règlent avec sysctl [noyau].")
    bot = GrasBot.open(settings_for(_kernel_vault(note_writer), standin_ollama.url, default_visibility="public"))
    question = "paramétrage du noyau"
    assert (await bot.answer(question))["reused"] is False
    assert (await bot.answer(question))["reused"] is True  # kept, while nothing changed
    bot.warm_spelling()
    assert (await bot.answer(question))["reused"] is False
    assert len(standin_ollama.requests) == 2


def test_a_vocabulary_outgrown_by_edits_is_built_anew(note_writer, monkeypatch):
    """Ids are never dropped (an older Spelling reads them): the words of edited notes pile up,
    until they pass the notes' own, and the next build starts from the words held now."""
    root = _kernel_vault(note_writer)
    bot = make_bot(root, default_visibility="public")
    first = spelling.ready(bot.snapshot.index("visitor"))
    assert first is not None and not bot.spelling_outgrown()
    monkeypatch.setattr(spelling.Vocabulary, "outgrown", lambda self: len(self.ids) > self.first)  # the rule's threshold, small
    write_note(root, "cuisine/pain.md", "title: Pain au levain", "Un pain de campagne, pétri la veille.\n")
    monkeypatch.setattr(bot, "start_spelling", lambda: None)  # the worker's build, below, when the test says
    bot.reload()  # built as before; its new words outgrow the vocabulary
    assert spelling.ready(bot.snapshot.index("visitor")).vocabulary is first.vocabulary and bot.spelling_outgrown()
    write_note(root, "cuisine/brioche.md", "title: Brioche", "Une brioche au beurre.\n")
    bot.reload()  # the next reload does not wait for a build anew
    assert spelling.ready(bot.snapshot.index("visitor")) is None
    bot.warm_spelling()  # the worker's
    anew = spelling.ready(bot.snapshot.index("visitor"))
    assert anew is not None and anew.vocabulary is not first.vocabulary
    assert {"levain", "brioche", "sysctl", "veille"} <= anew.vocabulary.ids.keys()
    assert "demande" in first.vocabulary.ids and "demande" not in anew.vocabulary.ids  # the edit took it out
    assert spelling.ready(bot.snapshot.index("owner")).vocabulary is anew.vocabulary
    assert not bot.spelling_outgrown()


def test_a_reload_during_a_build_does_not_wait_for_it(note_writer, monkeypatch):
    """The start's build takes seconds at 10,000 notes: an author's save meanwhile is reloaded at
    once, without spelling points until the worker builds its version."""
    root = _kernel_vault(note_writer)
    bot = make_bot(root, default_visibility="public")
    monkeypatch.setattr(bot, "start_spelling", lambda: None)  # the worker, below, when the test says
    write_note(root, "cuisine/brioche.md", "title: Brioche", "Une brioche au beurre.\n")
    with bot._spelling_lock:  # a build under way
        reloading = threading.Thread(target=bot.reload)
        reloading.start()
        reloading.join(10)
        assert not reloading.is_alive()  # it did not wait
    assert "cuisine/brioche.md" in bot.snapshot.vault.notes and spelling.ready(bot.snapshot.index("visitor")) is None
    bot.warm_spelling()
    assert spelling.ready(bot.snapshot.index("visitor")) is not None


def test_a_vault_mostly_private_is_not_outgrown_at_its_first_build(note_writer, monkeypatch):
    """The owner's build adds the private notes' words to the vocabulary the visitor's build
    began: a vault whose private notes hold 10,000 words more than its public ones was found
    outgrown as soon as it was built, and every save then waited for a build anew (searches
    without spelling points meanwhile) instead of reading again the notes that changed."""
    root = _kernel_vault(note_writer)
    for i in range(15):  # each read up to BODY_CAP characters: 900 words
        words = " ".join(f"prive{i}x{j}" for j in range(1_000))
        note_writer(f"journal/jour-{i}.md", "visibility: private", f"{words}\n")
    bot = make_bot(root, default_visibility="public")
    owner = spelling.ready(bot.snapshot.index("owner"))
    assert owner is not None and len(owner.vocabulary.ids) > 12_000
    assert not bot.spelling_outgrown()
    monkeypatch.setattr(bot, "start_spelling", lambda: None)  # no worker: what the reload did itself
    write_note(root, "cuisine/pain.md", "title: Pain au levain", "Un pain de campagne, pétri la veille.\n")
    bot.reload()
    after = spelling.ready(bot.snapshot.index("visitor"))
    assert after is not None and after.vocabulary is owner.vocabulary


def test_a_restart_from_the_index_cache_reads_no_private_path_in_a_note(note_writer, tmp_path, monkeypatch):
    """The cache's seed index knows which public notes type a hidden path (`masked`) but not
    what masks them (`hidden` None): the index served after a warm start must read them masked."""
    note_writer("prive/zorglub.md", "visibility: private", "Le plan secret.\n")
    note_writer("public/voir.md", "title: Une note", "Voir prive/zorglub.md pour la suite, et le jardin.\n")
    note_writer("public/jardin.md", "title: Le jardin", "Le jardin au printemps.\n")
    note_writer("public/autre.md", "title: Autre chose", "Rien à voir avec le jardin.\n")
    settings = settings_for(note_writer.root, default_visibility="public", index_cache=True, cache_dir=tmp_path / "cache")
    GrasBot.open(settings)  # writes the cache
    seeds = []
    monkeypatch.setattr(Index, "from_postings", (lambda real: lambda *a, **k: seeds.append(real(*a, **k)) or seeds[-1])(Index.from_postings))
    bot = GrasBot.open(settings)
    assert seeds and seeds[0]["visitor"].hidden is None and seeds[0]["visitor"].masked == {"public/voir.md"}  # restarted from the cache
    bot.warm_spelling()
    for audience in ("visitor", "owner"):
        index = bot.snapshot.index(audience)
        assert "zorglub" not in spelling.note_text(index, "public/voir.md")
        assert spelling.ready(index).cosines("zorglub", ["public/voir.md"]) == [0.0]
    assert all(r.signal != "spelling" for s in bot.search("zorglub", audience="visitor").sources for r in s.reasons)


class _RaceBeforeTaking:
    """The engine's worker lock, but the spelling worker's first wait for it lets `race` run
    first: a reload that comes just as the worker has built the version it read."""

    def __init__(self, lock, race) -> None:
        self.lock, self.race = lock, race

    def __enter__(self):
        if threading.current_thread().name == "grasbot-spelling" and self.race is not None:
            race, self.race = self.race, None
            race()
        return self.lock.__enter__()

    def __exit__(self, *exc):
        return self.lock.__exit__(*exc)


def test_a_reload_as_the_worker_ends_is_built_all_the_same(note_writer):
    """The reload did not build its version (the worker held the build) and found the worker
    still running, so it left the build to it; the worker, having found its own version
    serving a moment before, ended: the new version served without spelling points until the
    next save."""
    root = _kernel_vault(note_writer)
    bot = GrasBot.open(settings_for(root, default_visibility="public"))

    def reload_meanwhile() -> None:
        write_note(root, "cuisine/brioche.md", "title: Brioche", "Une brioche au beurre.\n")
        with bot._spelling_lock:  # the reload comes while the build holds it
            reloading = threading.Thread(target=bot.reload)
            reloading.start()
            reloading.join(10)

    bot._worker_lock = _RaceBeforeTaking(bot._worker_lock, reload_meanwhile)
    bot.start_spelling()
    while (worker := bot._spelling_thread) is not None:
        worker.join(10)
    assert "cuisine/brioche.md" in bot.snapshot.vault.notes
    assert spelling.ready(bot.snapshot.index("visitor")) is not None
    assert spelling.ready(bot.snapshot.index("owner")) is not None


def test_a_spelling_build_that_fails_does_not_fail_the_reload(note_writer, monkeypatch, caplog):
    """Spelling points are a signal among others: a reload whose build of them raised (memory
    short at 10,000 notes) serves the new notes all the same, without them, and says why."""
    root = _kernel_vault(note_writer)
    bot = make_bot(root, default_visibility="public")
    monkeypatch.setattr(bot, "start_spelling", lambda: None)  # the worker's retry, not this test's
    monkeypatch.setattr(spelling, "_build", lambda *a: (_ for _ in ()).throw(MemoryError()))
    write_note(root, "cuisine/brioche.md", "title: Brioche", "Une brioche au beurre.\n")
    report = bot.reload()
    assert report.added == 1 and "cuisine/brioche.md" in bot.snapshot.index("visitor").notes
    assert spelling.ready(bot.snapshot.index("visitor")) is None
    assert "vecteurs d'orthographe" in caplog.text


def test_a_first_build_that_failed_is_tried_again_at_the_next_reload(note_writer, monkeypatch):
    """The worker's first build raised (memory short): spelling stayed off until a restart."""
    root = _kernel_vault(note_writer)
    bot = GrasBot.open(settings_for(root, default_visibility="public"))
    real = spelling._build
    monkeypatch.setattr(spelling, "_build", lambda *a: (_ for _ in ()).throw(MemoryError()))
    bot.start_spelling()
    worker = bot._spelling_thread
    if worker is not None:
        worker.join(10)
    assert spelling.ready(bot.snapshot.index("visitor")) is None
    monkeypatch.setattr(spelling, "_build", real)
    write_note(root, "cuisine/brioche.md", "title: Brioche", "Une brioche au beurre.\n")
    bot.reload()
    worker = bot._spelling_thread
    if worker is not None:
        worker.join(10)
    assert spelling.ready(bot.snapshot.index("visitor")) is not None


async def test_health_says_whether_the_spelling_vectors_are_built(note_writer):
    """The owner could not tell a daemon ranking without them (its first seconds) from one with them."""
    bot = GrasBot.open(settings_for(_kernel_vault(note_writer), default_visibility="public"))
    assert (await bot.health())["spelling"] == {"ready": False}
    assert (await bot.health(owner=True))["spelling"] == {"ready": False}
    bot.warm_spelling()
    assert (await bot.health())["spelling"] == {"ready": True}
    assert (await bot.health(owner=True))["spelling"] == {"ready": True}


def test_a_reload_left_to_a_worker_whose_build_fails_is_built_all_the_same(note_writer, monkeypatch, caplog):
    """The reload came while the worker built (memory short at 10,000 notes, its build raised):
    it left its version to the worker, which it found running; the worker, failing the version
    before, ended, and the new one served without spelling points until the next save."""
    root = _kernel_vault(note_writer)
    bot = GrasBot.open(settings_for(root, default_visibility="public"))
    real = spelling._build
    failed = []

    def fails_once_a_reload_came(index, previous):
        if not failed:
            failed.append(index)
            write_note(root, "cuisine/brioche.md", "title: Brioche", "Une brioche au beurre.\n")
            reloading = threading.Thread(target=bot.reload)  # the worker holds the build: the reload leaves it
            reloading.start()
            reloading.join(10)
            assert not reloading.is_alive()
            raise MemoryError
        return real(index, previous)

    monkeypatch.setattr(spelling, "_build", fails_once_a_reload_came)
    bot.start_spelling()
    while (worker := bot._spelling_thread) is not None:
        worker.join(10)
    assert failed and "cuisine/brioche.md" in bot.snapshot.vault.notes
    assert "vecteurs d'orthographe n'ont pas pu être construits" in caplog.text
    assert spelling.ready(bot.snapshot.index("visitor")) is not None
    assert spelling.ready(bot.snapshot.index("owner")) is not None


def test_a_word_whose_cut_fails_leaves_the_next_words_their_own_pieces():
    """Memory short while a word is cut (its pieces kept, its length not): every word cut after
    it was read with another's pieces, in a vocabulary the next builds share until a restart."""

    class _FailsOnce(array):
        failed = False

        def append(self, value) -> None:
            if not _FailsOnce.failed:
                _FailsOnce.failed = True
                raise MemoryError
            super().append(value)

    vocabulary = spelling.Vocabulary()
    vocabulary.id_of("noyau")
    vocabulary._lengths = _FailsOnce("i", vocabulary._lengths)
    with pytest.raises(MemoryError):
        vocabulary.id_of("parametres")
    for word in ("sysctl", "parametres", "reseau"):
        vocabulary.id_of(word)
    vocabulary.commit()
    assert len(vocabulary.offsets) == len(vocabulary.ids) + 1 == 5
    for word, got in vocabulary.ids.items():
        cut = vocabulary.buckets[vocabulary.offsets[got] : vocabulary.offsets[got + 1]].tolist()
        assert cut == spelling.word_buckets(word), word


def test_a_commit_that_fails_leaves_the_words_to_the_next(monkeypatch):
    """Memory short as the words cut are let go, once the arrays are extended by them: the next
    commit extended them by the same words again, and every later word read another's pieces."""
    vocabulary = spelling.Vocabulary()
    for word in ("noyau", "parametres"):
        vocabulary.id_of(word)
    made = []
    monkeypatch.setattr(spelling, "array", lambda *a: made.append(a) or (_ for _ in ()).throw(MemoryError()))
    with pytest.raises(MemoryError):
        vocabulary.commit()
    monkeypatch.undo()
    assert made
    vocabulary.id_of("sysctl")
    vocabulary.commit()
    assert len(vocabulary.offsets) == len(vocabulary.ids) + 1 == 4
    for word, got in vocabulary.ids.items():
        assert vocabulary.buckets[vocabulary.offsets[got] : vocabulary.offsets[got + 1]].tolist() == spelling.word_buckets(word), word


def test_the_spelling_points_count_in_the_unit_meaning_measured_once(note_writer, monkeypatch):
    """A search with meaning measures its unit (a deviation of the notes' BM25, `semantic_unit`)
    once, as the notes close in meaning are read; the spelling signal counts in that same unit."""
    from grasbot.retrieval import scoring
    from grasbot.retrieval import search as searching
    from grasbot.retrieval.semantic import Closeness

    note_writer("systeme/parametres.md", "title: Paramètres du noyau", "Les paramètres du noyau se règlent avec sysctl au démarrage.\n")
    for i, subject in enumerate(("réseau", "disque", "mémoire", "processus", "fichiers", "journal", "services", "pilotes")):
        note_writer(f"systeme/noyau-{i}.md", f"title: Le noyau et {subject}", f"Le noyau gère {subject} au démarrage.\n")
    bot = make_bot(note_writer.root, default_visibility="public")
    index = bot.snapshot.index("visitor")
    question = "parametrage du noyau"
    close = {"systeme/noyau-1.md": Closeness(cosine=0.5, z=2.0)}
    units: list[float] = []
    measure = scoring.semantic_unit

    def counted(*args):
        units.append(measure(*args))
        return units[-1]

    monkeypatch.setattr(scoring, "semantic_unit", counted)
    monkeypatch.setattr(searching, "semantic_unit", counted)
    given: list[float] = []
    points = spelling.Spelling.points
    monkeypatch.setattr(spelling.Spelling, "points", lambda self, text, paths, unit: given.append(unit) or points(self, text, paths, unit))
    found = search(question, index, top_k=5, min_score=bot.settings.search_min_score, semantic=lambda text: close)
    assert len(units) == 1 and given == [max(units[0], scoring.SEMANTIC_FLOOR)]
    assert any(r.signal == "spelling" for s in found.sources for r in s.reasons)
