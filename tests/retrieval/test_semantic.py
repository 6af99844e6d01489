"""The semantic signal: both backends, the worker that embeds while the daemon answers, the
vectors cached by model and re-embedded only where text changed, and the fast path's
exactness with meaning included."""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import random
import threading
import time
from pathlib import Path
from unittest.mock import ANY

import numpy as np
import pytest

import support.standin_ollama as standin_ollama_module
from generate_vault import generate
from grasbot import ConfigError, Settings, build_snapshot, search
from grasbot import _engine as engine
from grasbot import _hosts as hosts
from grasbot._engine import EMBEDDING_FAILED, QUESTION_UNEMBEDDED, GrasBot
from grasbot._exceptions import EmbeddingError
from grasbot.retrieval import semantic
from grasbot.retrieval.scoring import SEMANTIC_MIN_Z, SEMANTIC_NOTES
from grasbot.retrieval.semantic import (
    BUNDLED_MODEL,
    BundledEmbedder,
    NoteTexts,
    OllamaEmbedder,
    QuestionVectors,
    VectorStore,
    asked_texts,
    head_text,
    missing,
    semantic_indexes,
)
from support.bots import BUNDLED_VAULT, OWNER, OWNER_TOKEN, bot_of, make_bot, rpc_result
from support.standin_ollama import StandinOllama, standin_vector, unused_url

# What a timeout test allows past the bound it checks: a 2-core CI machine under load delays a
# thread by seconds; what matters is that the call gave up near its bound, not at the 20 s
# hang guard around it
LOADED = 5.0


class WordsEmbedder:
    """A local embedder with the stand-in's hashed word vectors: deterministic and fast, for
    the properties that do not depend on how good the vectors are (pruning, caching, workers).
    Counts what it is asked to embed; `gate`, when given, holds every call until set."""

    remote = False

    def __init__(self, model: str = "words-test", gate: threading.Event | None = None) -> None:
        self.model = model
        self.calls: list[list[str]] = []
        self.gate = gate

    def load(self) -> None:
        self.loaded = True

    def embed(self, texts):
        if self.gate is not None:
            assert self.gate.wait(10), "the test never released the embedder"
        self.calls.append(list(texts))
        return np.array([standin_vector(t) for t in texts], dtype=np.float32)

    @property
    def embedded(self) -> list[str]:
        return [t for call in self.calls for t in call]


def with_embedder(bot: GrasBot, embedder, cache_dir: Path | None = None) -> GrasBot:
    """The bot with another semantic backend (the settings choose among the real ones)."""
    bot.embedder = embedder
    bot._vectors = VectorStore(embedder.model, cache_dir)
    bot._questions = QuestionVectors(embedder)
    bot._owner_questions = QuestionVectors(embedder)
    return bot


def semantic_reasons(result) -> list[str]:
    return [r.detail for s in result.sources for r in s.reasons if r.signal == "semantic"]


# ---------------------------------------------------------------- settings


def test_the_semantic_setting_is_checked():
    assert Settings.load(env={}).semantic == "bundled"
    assert Settings.load(env={"GRASBOT_SEMANTIC": "off"}).semantic == "off"
    with pytest.raises(ConfigError, match="GRASBOT_SEMANTIC doit être off, bundled ou ollama"):
        Settings.load(env={"GRASBOT_SEMANTIC": "vectors"})
    with pytest.raises(ConfigError, match="GRASBOT_EMBED_MODEL"):
        Settings.load(env={}, embed_model=" ")


# ---------------------------------------------------------------- the bundled encoder


@pytest.fixture(scope="module")
def bundled_bot(tmp_path_factory):
    """The bundled vault with the real bundled encoder, embedded once for this module."""
    settings = Settings.load(
        env={},
        vault_dir=BUNDLED_VAULT,
        semantic="bundled",
        question_log="off",
        cache_dir=tmp_path_factory.mktemp("cache"),
        ollama_host=unused_url(),
    )
    bot = GrasBot.open(settings)
    assert bot.embed_pending() is True
    return bot


def test_the_bundled_encoder_gives_normalised_vectors_close_for_paraphrases():
    encoder = BundledEmbedder()
    vectors = encoder.embed(["Comment te contacter ?", "Quel est ton adresse e-mail ?", "La recette de la tartiflette"])
    assert vectors.shape == (3, 512) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]


@pytest.mark.parametrize(
    ("question", "lexical_first", "expected"),
    [
        ("qui es-tu ?", None, "pages/a-propos.md"),  # no word of it is in any note
        # « jeux » written as the note's « jeu » (spelling) puts it first by words too; meaning is still among its reasons
        ("t'as déjà bossé sur des jeux ?", "portfolio/jeu-casse-briques.md", "portfolio/jeu-casse-briques.md"),
    ],
)
def test_meaning_finds_a_paraphrase_words_miss_and_says_why(bundled_bot, question, lexical_first, expected):
    lexical = bundled_bot.search(question, audience="visitor", lexical=True)
    assert (lexical.sources[0].path if lexical.sources else None) == lexical_first
    assert semantic_reasons(lexical) == []
    top = bundled_bot.search(question, audience="visitor").sources[0]
    assert top.path == expected
    details = [r.detail for r in top.reasons if r.signal == "semantic"]
    assert len(details) == 1 and details[0].startswith("sens proche (cosinus 0.")


def test_a_declared_question_close_in_meaning_brings_its_note_and_is_named(note_writer):
    topics = {
        "contact.md": ("Me joindre", "Comment puis-je te contacter ?", "Écris-moi à l'adresse indiquée en bas de page."),
        "tarte.md": ("Tarte aux pommes", "Quelle est ta recette de tarte ?", "Des pommes, du beurre, une pâte brisée."),
        "velo.md": ("Vélo", "Quel vélo utilises-tu ?", "Un vélo de route en acier, réparé à la main."),
        "jardin.md": ("Potager", "Que cultives-tu au jardin ?", "Des tomates, des courgettes et du basilic."),
        "rust.md": ("Rust", "Pourquoi aimes-tu Rust ?", "Le compilateur vérifie la mémoire sans ramasse-miettes."),
        "voyage.md": ("Voyage au Japon", "Où es-tu allé en voyage ?", "Kyoto, Osaka et les temples en automne."),
    }
    for rel, (title, asked, body) in topics.items():
        note_writer(rel, f"title: {title}\nvisibility: public\nanswers:\n  - {asked}", body)
    bot = make_bot(note_writer.root, semantic="bundled")
    assert bot.embed_pending() is True
    q = "je voudrais t'envoyer un message, tu as un mail ?"  # no word of it in the note
    assert all(s.path != "contact.md" for s in bot.search(q, audience="visitor", lexical=True).sources)
    top = bot.search(q, audience="visitor").sources[0]
    assert top.path == "contact.md"
    (detail,) = [r.detail for r in top.reasons if r.signal == "semantic"]
    assert "question « Comment puis-je te contacter ? » proche (cosinus 0." in detail
    close = bot.snapshot.semantic["visitor"].match(q, SEMANTIC_MIN_Z, SEMANTIC_NOTES)["contact.md"]
    assert close.asked == "Comment puis-je te contacter ?" and close.asked_z >= SEMANTIC_MIN_Z


def test_a_declared_question_asked_as_is_grounds_even_without_a_readable_word(note_writer):
    """« Qui es-tu ? » is all stop words: BM25 reads nothing of it, so a deviation of meaning is
    worth the floor, and the note that declares it could not ground an answer. A declared
    question ASKED_SAME close earns the answers signal's points for that overlap instead."""
    from grasbot.retrieval.scoring import ASKED_SAME, dice_points

    note_writer("bot.md", "title: L'assistant\nvisibility: public\nanswers:\n  - Qui es-tu ?", "Un assistant qui répond depuis les notes.")
    note_writer("auteur.md", "title: L'auteur\nvisibility: public\nanswers:\n  - Qui a écrit ce site ?", "Une développeuse de Lyon.")
    for i, topic in enumerate(("le potager", "le vélo", "la cuisine", "les voyages")):
        note_writer(f"n{i}.md", f"title: Sur {topic}\nvisibility: public\nanswers:\n  - Que fais-tu de {topic} ?", f"Des notes sur {topic}.")
    bot = make_bot(note_writer.root, semantic="bundled")
    assert bot.embed_pending() is True
    result = bot.search("Qui es-tu ?", audience="visitor")
    assert result.query.terms == ()  # nothing lexical to go on
    top = result.sources[0]
    assert top.path == "bot.md" and result.grounded
    (reason,) = [r for r in top.reasons if r.signal == "semantic"]
    assert reason.points == pytest.approx(dice_points(1.0)) and "question « Qui es-tu ? » proche (cosinus 1.00" in reason.detail
    # the same question in other words comes that close too; a question no note declares does not
    closeness = bot.snapshot.semantic["visitor"].match
    assert closeness("t'es qui ?", SEMANTIC_MIN_Z, SEMANTIC_NOTES)["bot.md"].asked_cosine >= ASKED_SAME
    assert bot.search("t'es qui ?", audience="visitor").sources[0].path == "bot.md"
    elsewhere = bot.search("il fait beau aujourd'hui ?", audience="visitor")
    assert all(c.asked_cosine < ASKED_SAME for c in closeness("il fait beau aujourd'hui ?", SEMANTIC_MIN_Z, SEMANTIC_NOTES).values())
    assert not elsewhere.grounded


def test_semantic_off_is_the_lexical_engine_exactly(bundled_bot, tmp_path):
    off = make_bot(BUNDLED_VAULT, semantic="off")
    for q in ("Comment fonctionne GrasBot ?", "tu bosses avec quoi ?", "docker", "et avec quel modèle ?"):
        a = off.search(q, audience="visitor").to_dict()
        b = bundled_bot.search(q, audience="visitor", lexical=True).to_dict()
        a.pop("took_ms"), b.pop("took_ms")
        assert a == b, q
    assert off.embed_pending() is False and off.snapshot.semantic == {}


# ---------------------------------------------------------------- Ollama's /api/embed


async def test_the_ollama_backend_embeds_through_the_standin(standin_ollama, tmp_path):
    bot = make_bot(BUNDLED_VAULT, standin_ollama.url, semantic="ollama", embed_model="bge-m3", cache_dir=tmp_path, index_cache=True)
    assert isinstance(bot.embedder, OllamaEmbedder) and bot.embedder.model == "ollama:bge-m3"
    assert await asyncio.to_thread(bot.embed_pending) is True
    bodies = list(standin_ollama.embed_requests)
    assert bodies and {b["model"] for b in bodies} == {"bge-m3"}
    embedded = [t for b in bodies for t in b["input"]]
    texts = NoteTexts().of(bot.snapshot.indexes)
    assert sorted(embedded) == sorted(texts.keys)
    # a question is embedded off the event loop before the search, and the follow-up's rewriting too
    history = [{"role": "user", "content": "Quel modèle utilise GrasBot ?"}]
    await bot.prepare_question("et il tourne sur quelle carte graphique ?", history)
    asked = [b["input"] for b in standin_ollama.embed_requests[len(bodies) :]]
    assert asked == [["et il tourne sur quelle carte graphique ?"], ["Quel modèle utilise GrasBot ? et il tourne sur quelle carte graphique ?"]]
    result = bot.search("et il tourne sur quelle carte graphique ?", audience="visitor", history=history)
    assert semantic_reasons(result)
    assert len(standin_ollama.embed_requests) == len(bodies) + 2  # both vectors were ready


async def test_an_ollama_that_fails_leaves_the_lexical_answer(standin_ollama, tmp_path, caplog):
    bot = make_bot(BUNDLED_VAULT, standin_ollama.url, semantic="ollama", embed_model="absent-model")
    assert await asyncio.to_thread(bot.embed_pending) is False
    status = bot.semantic_status()
    assert status["ready"] is False and 'model "absent-model" not found' in status["error"]
    told = (await bot.health(owner=False))["semantic"]["error"]  # a visitor learns it failed, not why
    assert told == EMBEDDING_FAILED and "absent-model" not in told and standin_ollama.url.split("//")[1] not in told
    assert (await bot.health(owner=True))["semantic"]["error"] == status["error"]
    assert bot.search("Comment fonctionne GrasBot ?", audience="visitor").sources  # lexical, no error

    ready = make_bot(BUNDLED_VAULT, standin_ollama.url, semantic="ollama")
    assert await asyncio.to_thread(ready.embed_pending) is True
    standin_ollama.embed_broken = True  # Ollama falls sick after the vault was embedded
    result = ready.search("une question jamais posée sur le daemon", audience="visitor")
    assert result.sources and semantic_reasons(result) == []
    assert "une question a été classée sans le signal du sens" in caplog.text


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (lambda v: [math.nan, *v[1:]], "pas des nombres finis"),
        (lambda v: v[:-1], "des vecteurs de 63 et 64 nombres"),
        (lambda v: [], "des vecteurs de 0 nombres"),
    ],
    ids=["NaN", "two widths", "empty"],
)
async def test_vectors_ollama_should_not_give_are_refused_with_a_clear_error(standin_ollama, monkeypatch, caplog, damage, said):
    """One NaN made every question's closeness NaN (meaning silently off, /health "ready");
    rows of two widths raised a numpy error that named neither Ollama nor the model. The notes
    whose texts they were are ranked by words, named with why; the others by meaning too."""
    sane = standin_ollama_module.standin_vector
    monkeypatch.setattr(standin_ollama_module, "standin_vector", lambda text: damage(sane(text)) if "Docker" in text else sane(text))
    bot = make_bot(BUNDLED_VAULT, standin_ollama.url, semantic="ollama")
    assert await asyncio.to_thread(bot.embed_pending) is True
    status = bot.semantic_status()
    assert status["ready"] is True and "competences/docker.md" in status["unembedded"] and "grasbot/grasbot.md" not in status["unembedded"]
    told = [r.getMessage() for r in caplog.records if "competences/docker.md" in r.getMessage()]
    assert told and said in told[0] and "bge-m3" in told[0]
    assert bot.search("Comment fonctionne GrasBot ?", audience="visitor").sources


async def test_a_text_ollama_cannot_embed_leaves_its_note_to_words_and_the_vault_its_meaning(standin_ollama, tmp_path, caplog):
    """bge-m3 turns a few texts into NaN, and Ollama answers them HTTP 500, the same text every
    time (ollama/ollama#15582): the batch that held one failed the pass, the whole vault was
    ranked by words for the daemon's life, and the batch was sent again every 30 s."""
    standin_ollama.embed_nan = ("conteneurisation",)  # an alias of competences/docker.md, its head's text
    bot = make_bot(BUNDLED_VAULT, standin_ollama.url, semantic="ollama", cache_dir=tmp_path, index_cache=True)
    assert await asyncio.to_thread(bot.embed_pending) is True
    status = bot.semantic_status()
    assert status["ready"] is True and "error" not in status
    assert status["embedded"] == status["total"]
    assert status["unembedded"] == ["competences/docker.md"]  # the owner's view names it
    assert "unembedded" not in bot.semantic_status(owner=False)
    assert "competences/docker.md" in caplog.text and "unsupported value: NaN" in caplog.text
    await bot.prepare_question("qui es-tu ?")
    assert semantic_reasons(bot.search("qui es-tu ?", audience="visitor"))  # meaning ranks the others
    docker = bot.search("Docker et conteneurs", audience="visitor")
    assert docker.sources[0].path == "competences/docker.md"  # by its words
    # not kept as embedded: a restart asks again (the model may have been updated), once
    again = make_bot(BUNDLED_VAULT, standin_ollama.url, semantic="ollama", cache_dir=tmp_path, index_cache=True)
    before = len(standin_ollama.embed_requests)
    assert await asyncio.to_thread(again.embed_pending) is True
    asked = [t for b in standin_ollama.embed_requests[before:] for t in b["input"]]
    assert asked and all("conteneurisation" in t for t in asked if t != semantic.PROBE)
    assert again.semantic_status()["unembedded"] == ["competences/docker.md"]


async def test_the_owners_question_ollama_refuses_is_no_visitors_question_error(standin_ollama):
    """`question_error` says why a visitor's last question went without meaning: the owner's
    questions set it and cleared it too, so a visitor's /health read when the owner had asked one."""
    bot = make_bot(BUNDLED_VAULT, standin_ollama.url, semantic="ollama")
    assert await asyncio.to_thread(bot.embed_pending) is True
    standin_ollama.embed_nan = ("zqxw",)
    await bot.prepare_question("zqxw ?", owner=True)
    assert "question_error" not in bot.semantic_status(owner=False)
    await bot.prepare_question("zqxw encore ?")
    assert bot.semantic_status(owner=False)["question_error"] == QUESTION_UNEMBEDDED
    await bot.prepare_question("qui es-tu ?", owner=True)  # embedded: a visitor's error stays theirs
    assert bot.semantic_status(owner=False)["question_error"] == QUESTION_UNEMBEDDED


async def test_an_ollama_that_refuses_every_text_is_not_read_as_refusing_each_note(standin_ollama):
    """An Ollama failing every request (its runner crashed) fails the pass, as before: each of
    its texts is not taken for one it cannot embed, and meaning is not ready without vectors."""
    standin_ollama.embed_broken = True
    bot = make_bot(BUNDLED_VAULT, standin_ollama.url, semantic="ollama")
    assert await asyncio.to_thread(bot.embed_pending) is False
    status = bot.semantic_status()
    assert status["ready"] is False and "error was encountered while running the model" in status["error"]
    assert [b["input"] for b in standin_ollama.embed_requests[1:]] == [[semantic.PROBE]]  # the batch, then one probe


async def test_an_embedding_reply_that_never_ends_is_read_no_further_than_a_batch_takes(standin_ollama):
    """With `--semantic ollama`, a host that sent an endless reply to /api/embed was read into
    memory by the worker's client, whatever its timeout (each read came in time): the bytes a
    batch's vectors may take end it, the pass fails with a word of why, and words rank meanwhile."""
    standin_ollama.embed_flood = True
    bot = make_bot(BUNDLED_VAULT, standin_ollama.url, semantic="ollama")
    assert await asyncio.wait_for(asyncio.to_thread(bot.embed_pending), 30) is False
    error = bot.semantic_status()["error"]
    assert f"une réponse de plus de {semantic.EMBED_REPLY_BYTES} octets, plus qu'aucun lot de 32 vecteurs n'en prend" in error, error
    assert bot.search("Comment fonctionne GrasBot ?", audience="visitor").sources


async def test_an_embedding_reply_that_trickles_is_given_up_at_the_calls_time(standin_ollama):
    """A host that sent its /api/embed reply a byte a second, never ending, held a visitor's
    question and the worker's batch for as long as it went on: each read came within the
    client's timeout, and the size bound is days away at that pace. A question's embedding gives
    up at QUESTION_WAIT (the search goes by words, said in `question_error`), a batch at its
    timeout, each with a word of why; and the daemon's threads are not held."""
    bot = make_bot(BUNDLED_VAULT, standin_ollama.url, semantic="ollama", llm_timeout=3.0)
    assert await asyncio.to_thread(bot.embed_pending) is True
    standin_ollama.embed_trickle = True
    started = time.monotonic()
    await asyncio.wait_for(bot.prepare_question("une question jamais posée sur le potager"), 20)
    assert time.monotonic() - started < 3.0 + LOADED
    said = bot.semantic_status(owner=True)["question_error"]
    assert "n'a pas calculé de sens avec « bge-m3 » : une réponse encore incomplète après 3 s : abandonnée là" in said, said
    assert bot.search("une question jamais posée sur le potager", audience="visitor") is not None
    # the worker's batch: the pass given up at the call's timeout
    fresh = make_bot(BUNDLED_VAULT, standin_ollama.url, semantic="ollama", llm_timeout=3.0)
    started = time.monotonic()
    assert await asyncio.wait_for(asyncio.to_thread(fresh.embed_pending), 20) is False
    assert time.monotonic() - started < 3.0 + LOADED
    assert "une réponse encore incomplète après 3 s" in fresh.semantic_status(owner=True)["error"]


async def test_an_embedding_reply_whose_headers_trickle_is_given_up_at_the_calls_time():
    """The same bound before the body: headers sent a byte at a time (each read in time) end
    at the call's timeout as a host silent that long does, « timed out », the host not skipped."""

    async def trickle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1 << 16)
        writer.write(b"HTTP/1.1 200 OK\r\nX-Lent: ")
        with contextlib.suppress(ConnectionError):
            while True:
                await asyncio.sleep(0.3)
                writer.write(b"a")
                await writer.drain()

    server = await asyncio.start_server(trickle, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    try:
        embedder = OllamaEmbedder("bge-m3", hosts.Failover([url]), timeout=1.5)
        started = time.monotonic()
        with pytest.raises(EmbeddingError, match="timed out"):
            await asyncio.wait_for(asyncio.to_thread(embedder.embed, ["une question"]), 20)
        assert time.monotonic() - started < 1.5 + LOADED
        assert embedder.hosts.hosts[0].state(time.monotonic()) == "up"  # reached: slow, not down
    finally:
        server.close()


async def test_a_question_searched_while_ollama_could_not_embed_it_is_not_kept_as_meanings(standin_ollama):
    """Ollama failed for a moment: the question's words-only ranking, and its answer, were kept
    as if meaning had ranked them, and asking it again gave them until the next reload."""
    bot = make_bot(BUNDLED_VAULT, standin_ollama.url, semantic="ollama")
    assert await asyncio.to_thread(bot.embed_pending) is True
    question = "une question jamais posée sur le daemon"
    standin_ollama.embed_broken = True
    await bot.prepare_question(question)
    first = bot.search(question, audience="visitor")
    assert first.unembedded and semantic_reasons(first) == []
    assert (await bot.answer(question))["reused"] is False
    standin_ollama.embed_broken = False  # Ollama is back
    bot._questions_paused_until = 0.0
    await bot.prepare_question(question)
    again = bot.search(question, audience="visitor")
    assert not again.unembedded and semantic_reasons(again)
    assert (await bot.answer(question))["reused"] is False  # not the words-only answer


async def test_a_question_ollama_does_not_embed_in_time_is_searched_by_words_without_waiting_again(standin_ollama):
    """Ollama accepts the question's embedding and stays silent: the visitor waited LLM_TIMEOUT
    (30 s at most) for it, then the search asked Ollama again on the event loop, every visitor
    of the site frozen that long (and again for each long note's passages)."""
    assert make_bot(BUNDLED_VAULT, standin_ollama.url, semantic="ollama", llm_timeout=60.0)._questions.embedder._timeout == 5.0
    bot = make_bot(BUNDLED_VAULT, standin_ollama.url, semantic="ollama", llm_timeout=0.5)
    assert await asyncio.to_thread(bot.embed_pending) is True
    asked: list[list[str]] = []
    embed = bot._questions.embedder.embed
    bot._questions.embedder.embed = lambda texts: (asked.append(list(texts)), embed(texts))[1]
    standin_ollama.embed_held = True
    await bot.prepare_question("une question neuve sur docker")  # gives up after its timeout
    assert asked == [["une question neuve sur docker"]]
    result = bot.search("une question neuve sur docker", audience="visitor")
    assert result.sources and semantic_reasons(result) == [] and result.unembedded
    assert len(asked) == 1  # the search did not ask Ollama again, on the event loop
    await bot.prepare_question("une autre question sur docker")  # Ollama just failed: not asked
    assert len(asked) == 1
    owner, visitor = (await bot.health(owner=True))["semantic"], (await bot.health(owner=False))["semantic"]
    assert "timed out" in owner["question_error"] and "bge-m3" in owner["question_error"]
    assert visitor["question_error"] == QUESTION_UNEMBEDDED and "bge-m3" not in visitor["question_error"]
    assert 0 < owner["questions_paused_for"] <= engine.QUESTION_PAUSE and "questions_paused_for" not in visitor
    standin_ollama.release_embeds()
    bot._questions_paused_until = 0.0  # the pause is over
    assert (await bot.health(owner=True))["semantic"]["questions_paused_for"] is None
    await bot.prepare_question("une question neuve sur docker")
    assert semantic_reasons(bot.search("une question neuve sur docker", audience="visitor"))
    assert "question_error" not in (await bot.health(owner=True))["semantic"]


async def test_the_owner_reads_how_long_meaning_is_paused_for_visitors_questions(standin_ollama, monkeypatch):
    """/health gave the error of the last question Ollama did not embed, not whether the 10 s
    pause was on: the owner could not tell Ollama down from one question it refused."""
    bot = make_bot(BUNDLED_VAULT, standin_ollama.url, semantic="ollama")
    assert await asyncio.to_thread(bot.embed_pending) is True
    standin_ollama.embed_broken = True
    await bot.prepare_question("une question neuve sur docker")
    monkeypatch.setattr(engine, "time", type("Clock", (), {"monotonic": staticmethod(lambda: bot._questions_paused_until - 3.24)}))
    assert bot.semantic_status()["questions_paused_for"] == 3.2
    assert "questions_paused_for" not in bot.semantic_status(owner=False)


async def test_a_question_ollama_refuses_does_not_turn_meaning_off_for_the_next_visitors(standin_ollama):
    """Ollama answered one visitor's question HTTP 500 (bge-m3 turned it into NaN): every
    question of the next 10 s went without meaning, as if Ollama were down; a visitor who sent
    such a question every few seconds kept meaning off for the whole site."""
    bot = make_bot(BUNDLED_VAULT, standin_ollama.url, semantic="ollama")
    assert await asyncio.to_thread(bot.embed_pending) is True
    standin_ollama.embed_nan = ("zorglub",)
    await bot.prepare_question("zorglub zorglub ?")
    refused = bot.search("zorglub zorglub ?", audience="visitor")
    assert refused.unembedded and semantic_reasons(refused) == []
    assert "unsupported value: NaN" in bot.semantic_status()["question_error"]
    # meaning is not paused, said (null), not left out as an older daemon does
    assert bot.semantic_status()["questions_paused_for"] is None
    await bot.prepare_question("qui es-tu ?")  # the next visitor's
    assert standin_ollama.embed_requests[-1]["input"] == ["qui es-tu ?"]
    answered = bot.search("qui es-tu ?", audience="visitor")
    assert not answered.unembedded and semantic_reasons(answered)
    assert "question_error" not in bot.semantic_status()


async def test_embeddings_go_to_the_next_ollama_host_as_answers_do(standin_ollama):
    """OLLAMA_HOST lists a host that is down, then one that works: answers went to the second,
    embeddings only to the first, /health saying "cannot reach Ollama" for ever."""
    dead = unused_url()
    bot = make_bot(BUNDLED_VAULT, f"{dead},{standin_ollama.url}", semantic="ollama")
    assert await asyncio.to_thread(bot.embed_pending) is True
    assert bot.semantic_status()["ready"] and "error" not in bot.semantic_status()
    await bot.prepare_question("une question neuve sur docker")
    assert standin_ollama.embed_requests[-1]["input"] == ["une question neuve sur docker"]
    result = bot.search("une question neuve sur docker", audience="visitor")
    assert semantic_reasons(result) and not result.unembedded


async def test_embeddings_go_past_a_host_without_the_model(standin_ollama):
    """The model pulled on the second host only: the first's "not found" ended every pass, and
    meaning stayed off though a host could embed."""
    async with StandinOllama(embed_models=()) as bare:
        bot = make_bot(BUNDLED_VAULT, f"{bare.url},{standin_ollama.url}", semantic="ollama")
        assert await asyncio.to_thread(bot.embed_pending) is True
        assert bot.semantic_status()["ready"] and "error" not in bot.semantic_status()
        assert len(bare.embed_requests) == 1  # tried once, then skipped


async def test_the_host_that_embedded_last_is_asked_first(monkeypatch):
    """A host that could not be reached is tried again after RETRY_AFTER: a question sent to it
    first would wait on it again each time it is still down; the host that embedded last is
    asked first, the others when it cannot be reached."""
    monkeypatch.setattr(hosts, "RETRY_AFTER", 0.0)  # the first host is tried again at once
    first = StandinOllama(port=int(unused_url().rsplit(":", 1)[1]))
    async with StandinOllama() as second:
        bot = make_bot(BUNDLED_VAULT, f"http://127.0.0.1:{first.port},{second.url}", semantic="ollama")
        assert await asyncio.to_thread(bot.embed_pending) is True  # the first is down: the second embeds
        await first.start()
        try:
            await bot.prepare_question("une question neuve sur docker")
            assert first.embed_requests == [] and second.embed_requests[-1]["input"] == ["une question neuve sur docker"]
            await second.close()  # the second goes down: the first embeds the next question
            await bot.prepare_question("une autre question sur docker")
            assert [b["input"] for b in first.embed_requests] == [["une autre question sur docker"]]
            assert semantic_reasons(bot.search("une autre question sur docker", audience="visitor"))
        finally:
            await first.close()


async def test_a_question_waits_its_bound_in_all_not_at_each_host(standin_ollama, monkeypatch):
    """A question waits QUESTION_WAIT in all: a first host that took it all leaves none for the
    next (five seconds a dead host would have made it ten with two)."""
    bot = make_bot(BUNDLED_VAULT, f"{unused_url()},{standin_ollama.url}", semantic="ollama")
    asker = bot._questions.embedder
    readings = iter([100.0, 100.0])  # the call's start, and the first host's turn; then its bound is spent

    monkeypatch.setattr(semantic, "time", type("Clock", (), {"monotonic": staticmethod(lambda: next(readings, 100.0 + engine.QUESTION_WAIT))}))
    with pytest.raises(EmbeddingError, match="impossible de joindre Ollama sur http://127.0.0.1:.* pour calculer le sens avec « bge-m3 »"):
        await asyncio.to_thread(asker.embed, ["une question neuve sur docker"])
    assert standin_ollama.embed_requests == []  # no time was left for the second host


async def until(condition, what: str) -> None:
    """Wait for the embedding worker (a thread) to make `condition` true, the event loop free
    for the stand-in meanwhile."""
    for _ in range(2_000):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never {what}")


@pytest.mark.parametrize("late", ["the model is pulled", "Ollama starts"])
async def test_embedding_resumes_once_ollama_can_embed_without_a_restart(tmp_path, monkeypatch, late):
    """Ollama started after the daemon (a boot's order), or the author pulls the model after
    reading /health's error: the vault stayed lexical until a reload or a restart."""
    monkeypatch.setattr(engine, "EMBED_RETRY", 0.05)
    monkeypatch.setattr(hosts, "RETRY_AFTER", 0.05)  # a host that could not be reached is skipped that long
    port = int(unused_url().rsplit(":", 1)[1])
    server = StandinOllama(port=port, embed_models=() if late == "the model is pulled" else ("bge-m3",))
    if late == "the model is pulled":
        await server.start()
    bot = make_bot(BUNDLED_VAULT, f"http://127.0.0.1:{port}", semantic="ollama")
    try:
        bot.start_embedding()
        await until(lambda: "error" in bot.semantic_status(), "failed")
        error = bot.semantic_status()["error"]
        assert "bge-m3" in error and ("not found" in error if late == "the model is pulled" else "impossible de joindre Ollama" in error)
        if late == "the model is pulled":
            server.embed_models = ("bge-m3",)
        else:
            await server.start()
        await until(lambda: bot.semantic_status()["ready"], "embedded")
        assert "error" not in bot.semantic_status()
        assert semantic_reasons(await asyncio.to_thread(bot.search, "qui es-tu ?", audience="visitor"))
    finally:
        await asyncio.to_thread(bot.stop_embedding)
        await server.close()


async def test_a_stop_does_not_wait_on_a_silent_ollama_and_keeps_what_was_embedded(standin_ollama, tmp_path, caplog):
    """Ollama accepted a batch and stayed silent: the daemon's stop (a restart's) waited the
    call's whole timeout (30 s), the site down meanwhile, then logged "semantic signal off"."""
    bot = make_bot(BUNDLED_VAULT, standin_ollama.url, semantic="ollama", llm_timeout=30.0, cache_dir=tmp_path, index_cache=True)
    embed = bot.embedder.embed

    def first_batch_then_silence(texts):
        out = embed(texts)
        standin_ollama.embed_held = True  # the next batch is held
        return out

    bot.embedder.embed = first_batch_then_silence
    bot.start_embedding()
    await until(lambda: len(standin_ollama.embed_requests) == 2, "held")
    worker = bot._embed_thread
    await asyncio.to_thread(bot.stop_embedding)
    try:
        assert worker is not None and worker.is_alive()  # returned while the call waits on Ollama
        assert len(VectorStore(bot.embedder.model, tmp_path)) == semantic.BATCH  # the first batch, on disk
    finally:
        standin_ollama.release_embeds()
        await asyncio.to_thread(worker.join, 10)
    assert not worker.is_alive()
    assert "signal du sens coupé" not in caplog.text and "error" not in bot.semantic_status()


# ---------------------------------------------------------------- the cache, keyed by model


def test_vectors_are_cached_by_model_and_reused_by_a_restart(tmp_path):
    first = with_embedder(make_bot(BUNDLED_VAULT), WordsEmbedder("words-a"), tmp_path)
    assert first.embed_pending() is True
    count = len(first.embedder.embedded)
    notes = first.snapshot.vault.notes.values()  # the owner's notes include every visitor's
    assert count == len({*(head_text(n) for n in notes), *(q for n in notes for q in asked_texts(n))})
    assert count > len(notes)  # the bundled vault's notes declare questions: embedded too
    assert (tmp_path / "embeddings-words-a.npz").exists()

    again = with_embedder(make_bot(BUNDLED_VAULT), WordsEmbedder("words-a"), tmp_path)
    assert again.embed_pending() is True and again.embedder.embedded == []
    assert again.search("docker", audience="visitor").to_dict()["results"] == first.search("docker", audience="visitor").to_dict()["results"]

    other = with_embedder(make_bot(BUNDLED_VAULT), WordsEmbedder("words-b"), tmp_path)
    assert other.embed_pending() is True and len(other.embedder.embedded) == count
    assert (tmp_path / "embeddings-words-b.npz").exists()
    # two models whose names make one file name: the file says whose vectors it holds, and
    # neither model reads the other's
    for model in ("words_c", "words/c"):
        named = with_embedder(make_bot(BUNDLED_VAULT), WordsEmbedder(model), tmp_path)
        assert named._vectors.path == tmp_path / "embeddings-words_c.npz"
        assert named.embed_pending() is True and len(named.embedder.embedded) == count, model


async def test_a_model_named_with_its_latest_tag_reads_the_vectors_of_its_bare_name(standin_ollama, tmp_path):
    """`ollama list` names bge-m3 « bge-m3:latest »: written so in GRASBOT_EMBED_MODEL after
    « bge-m3 » (the same model, for Ollama), a restart embedded the whole vault again."""
    first = make_bot(BUNDLED_VAULT, standin_ollama.url, semantic="ollama", embed_model="bge-m3", cache_dir=tmp_path, index_cache=True)
    assert await asyncio.to_thread(first.embed_pending) is True
    before = len(standin_ollama.embed_requests)
    tagged = make_bot(BUNDLED_VAULT, standin_ollama.url, semantic="ollama", embed_model="bge-m3:latest", cache_dir=tmp_path, index_cache=True)
    assert await asyncio.to_thread(tagged.embed_pending) is True
    assert len(standin_ollama.embed_requests) == before  # every vector read from the cache
    assert tagged.semantic_status()["model"] == "ollama:bge-m3"
    await tagged.prepare_question("qui es-tu ?")
    assert standin_ollama.embed_requests[-1] == {**standin_ollama.embed_requests[-1], "model": "bge-m3:latest"}  # asked as written


def file_keys(path: Path) -> set[bytes]:
    with np.load(path) as data:
        raw = data["keys"].tobytes()
    return {raw[i : i + semantic.KEY_BYTES] for i in range(0, len(raw), semantic.KEY_BYTES)}


def test_a_start_that_finds_a_note_gone_drops_its_vectors_from_the_file(note_writer, tmp_path):
    """A note deleted while the daemon was stopped: the start embeds nothing (every other
    vector is cached) and wrote nothing, so its vector stayed in the cache file until some
    other note was edited; a vault only pruned kept it for ever."""
    note_writer("miel.md", "title: Miel\nvisibility: public", "Le miel de printemps est clair.")
    note_writer("secret.md", "title: Rachat Acme\nvisibility: private", "Le rachat d'Acme se signe en mars.")
    cache = tmp_path / "cache"
    first = with_embedder(make_bot(note_writer.root), WordsEmbedder("words-a"), cache)
    assert first.embed_pending() is True
    texts = NoteTexts().of(first.snapshot.indexes)
    gone = {texts.keys[t] for t in texts.by_path["secret.md"]}
    assert gone <= file_keys(cache / "embeddings-words-a.npz")

    (note_writer.root / "secret.md").unlink()
    again = with_embedder(make_bot(note_writer.root), WordsEmbedder("words-a"), cache)
    assert again.embed_pending() is True and again.embedder.embedded == []
    held = file_keys(cache / "embeddings-words-a.npz")
    assert not gone & held
    assert held == set(NoteTexts().of(again.snapshot.indexes).keys.values())
    written = os.stat(cache / "embeddings-words-a.npz").st_ino
    # nothing gone since: a start leaves the file as it is (a write replaces it)
    assert with_embedder(make_bot(note_writer.root), WordsEmbedder("words-a"), cache).embed_pending() is True
    assert os.stat(cache / "embeddings-words-a.npz").st_ino == written


def test_what_was_embedded_before_the_backend_failed_is_kept_by_a_restart(tmp_path):
    """Ollama went down halfway through a large vault: the vectors it had given were kept in
    memory only, and a restart embedded them all again (hours, on a large vault and a CPU)."""

    class FailingAfterOne(WordsEmbedder):
        def embed(self, texts):
            if self.calls:
                raise EmbeddingError("impossible de joindre Ollama pour calculer le sens avec « bge-m3 » : connection refused")
            return super().embed(texts)

    first = with_embedder(make_bot(BUNDLED_VAULT), FailingAfterOne("words-a"), tmp_path)
    assert first.embed_pending() is False and "connection refused" in first.semantic_status()["error"]
    done = first.embedder.embedded
    again = with_embedder(make_bot(BUNDLED_VAULT), WordsEmbedder("words-a"), tmp_path)
    assert again.embed_pending() is True
    assert len(done) == semantic.BATCH and again.embedder.embedded and not set(done) & set(again.embedder.embedded)


def test_the_encoder_is_loaded_before_meaning_is_ready_even_when_the_cache_holds_every_vector(tmp_path):
    first = with_embedder(make_bot(BUNDLED_VAULT), BundledEmbedder(), tmp_path)
    assert first.embed_pending() is True
    again = with_embedder(make_bot(BUNDLED_VAULT), BundledEmbedder(), tmp_path)
    assert again._vectors is not None and not missing(NoteTexts().of(again.snapshot.indexes), again._vectors)
    assert again.embedder._encoder is None  # every vector is in the cache: nothing to embed
    assert again.embed_pending() is True
    # loaded in the embedding worker, not by the first visitor's question on the event loop
    assert again.embedder._encoder is not None


def test_other_models_vectors_unused_for_a_month_are_deleted_when_the_cache_is_written(tmp_path):
    """Each model an author tried left its vectors in the cache folder for ever. Used (read or
    written) within UNUSED_DAYS, they stay; the bundled encoder's stay always."""

    def days_ago(days: int) -> float:
        return time.time() - days * 86_400

    files = {
        "embeddings-ollama_paraphrase-multilingual.npz": 40,
        "embeddings-ollama_nomic-embed-text.npz": 10,
        f"embeddings-{BUNDLED_MODEL}.npz": 400,
        "index.cache": 400,  # not vectors: never touched
    }
    for name, days in files.items():
        (tmp_path / name).write_bytes(b"PK\x03\x04")
        os.utime(tmp_path / name, (days_ago(days), days_ago(days)))
    assert with_embedder(make_bot(BUNDLED_VAULT), WordsEmbedder("words-a"), tmp_path).embed_pending() is True
    os.utime(tmp_path / "embeddings-words-a.npz", (days_ago(40), days_ago(40)))
    assert with_embedder(make_bot(BUNDLED_VAULT), WordsEmbedder("words-a"), tmp_path).embed_pending() is True  # read: used
    assert with_embedder(make_bot(BUNDLED_VAULT), WordsEmbedder("words-b"), tmp_path).embed_pending() is True  # written
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["embeddings-ollama_nomic-embed-text.npz", f"embeddings-{BUNDLED_MODEL}.npz", "index.cache", "embeddings-words-a.npz", "embeddings-words-b.npz"]
    )


def test_other_models_vectors_unused_for_a_month_are_deleted_by_a_start_that_writes_nothing(tmp_path):
    """A vault no one edits: every start finds its vectors cached and writes none, so a model
    tried and left (bge-m3's 4 KB a text) kept its file for ever; the start's read prunes too."""
    assert with_embedder(make_bot(BUNDLED_VAULT), WordsEmbedder("words-a"), tmp_path).embed_pending() is True
    tried = tmp_path / "embeddings-ollama_bge-m3.npz"
    tried.write_bytes(b"PK\x03\x04")
    month = time.time() - 31 * 86_400
    os.utime(tried, (month, month))
    written = os.stat(tmp_path / "embeddings-words-a.npz").st_ino
    again = with_embedder(make_bot(BUNDLED_VAULT), WordsEmbedder("words-a"), tmp_path)
    assert again.embed_pending() is True and again.embedder.embedded == []
    assert os.stat(tmp_path / "embeddings-words-a.npz").st_ino == written  # not written: read only
    assert not tried.exists()


def test_a_torn_cache_file_is_embedded_again(tmp_path, caplog):
    (tmp_path / "embeddings-words-a.npz").write_bytes(b"not a numpy file")
    bot = with_embedder(make_bot(BUNDLED_VAULT), WordsEmbedder("words-a"), tmp_path)
    assert bot.embed_pending() is True and bot.embedder.embedded
    assert "cache des vecteurs de sens" in caplog.text and "ignoré : " in caplog.text  # read by the pass, not before serving
    assert "pickle" not in caplog.text  # numpy's advice to load a file of random bytes unsafely


def test_a_cache_file_of_random_bytes_is_said_not_to_be_one(tmp_path, caplog):
    """numpy reads a file that is not .npz as a pickle, and refusing it, advised the owner to
    load it "unsafely using the allow_pickle= keyword argument"."""
    (tmp_path / "embeddings-words-a.npz").write_bytes(bytes(range(256)) * 4)
    bot = with_embedder(make_bot(BUNDLED_VAULT), WordsEmbedder("words-a"), tmp_path)
    assert bot.embed_pending() is True and bot.embedder.embedded
    assert "cache des vecteurs de sens" in caplog.text and "ignoré : " in caplog.text and "not a .npz file" in caplog.text
    assert "pickle" not in caplog.text


@pytest.mark.parametrize("damage", ["another width", "not finite", "one number a text"])
def test_a_cache_of_vectors_the_model_does_not_give_is_embedded_again(tmp_path, caplog, damage):
    """A file under this model's name whose vectors another model made (a tag pointed at
    another model, another version) or that hold NaN: every visitor got a 500 (a matrix
    product of two widths), or meaning silently found nothing, and the file was kept."""
    first = with_embedder(make_bot(BUNDLED_VAULT), WordsEmbedder("words-a"), tmp_path)
    assert first.embed_pending() is True
    path = tmp_path / "embeddings-words-a.npz"
    with np.load(path) as data:
        saved = dict(data)
    vectors = saved["vectors"]
    saved["vectors"] = {
        "another width": np.hstack([vectors, vectors]) / np.sqrt(2),
        "not finite": np.full_like(vectors, np.nan),
        "one number a text": vectors[:, 0],
    }[damage]
    np.savez(path, **saved)
    expected = {q: first.search(q, audience="visitor").to_dict()["results"] for q in ("docker", "qui es-tu ?")}

    again = with_embedder(make_bot(BUNDLED_VAULT), WordsEmbedder("words-a"), tmp_path)
    assert again.embed_pending() is True
    for q in expected:
        again.search(q, audience="visitor")  # answered, never an error
    assert again.search("docker", audience="visitor").sources
    if again._embed_thread is not None:  # the vectors found foreign at a question: embedded again
        again._embed_thread.join(10)
    assert again.snapshot.semantic
    for q, results in expected.items():
        assert again.search(q, audience="visitor").to_dict()["results"] == results
    with np.load(path) as data:  # the file on disk is the model's again
        assert data["vectors"].shape == vectors.shape and np.isfinite(data["vectors"]).all()
    assert "cache des vecteurs de sens" in caplog.text


def test_a_cache_folder_that_cannot_be_read_leaves_meaning_on(tmp_path, monkeypatch, caplog):
    """A folder its user may not enter (chmod 000): `Path.exists` raised PermissionError, so
    meaning was off for the daemon's life ("embedding failed") and `grasbot search` died with a
    traceback, where the notes could be embedded in memory. (The tests run as root, whom
    chmod does not stop: the folder refuses as it would refuse another user.)"""
    import builtins
    import pathlib

    folder = tmp_path / "cache"
    first = with_embedder(make_bot(BUNDLED_VAULT), WordsEmbedder("words-a"), folder)
    assert first.embed_pending() is True
    inside = str(folder) + os.sep

    def refused(path) -> bool:
        return os.fspath(path).startswith(inside)

    stat, opened = pathlib.Path.stat, builtins.open

    def no_stat(self, *args, **kwargs):
        if refused(self):
            raise PermissionError(13, "Permission denied", str(self))
        return stat(self, *args, **kwargs)

    def no_open(file, *args, **kwargs):
        if isinstance(file, str | os.PathLike) and refused(file):
            raise PermissionError(13, "Permission denied", os.fspath(file))
        return opened(file, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "stat", no_stat)
    monkeypatch.setattr(builtins, "open", no_open)
    again = with_embedder(make_bot(BUNDLED_VAULT), WordsEmbedder("words-a"), folder)
    assert again.embed_pending() is True
    assert again.search("docker", audience="visitor").to_dict()["results"] == first.search("docker", audience="visitor").to_dict()["results"]
    assert "cache des vecteurs de sens" in caplog.text and "ignoré : " in caplog.text and "Permission denied" in caplog.text


def test_a_reload_embeds_only_the_changed_note(note_writer, tmp_path):
    for i in range(6):
        note_writer(f"n{i}.md", f"title: Note {i}\nvisibility: public", f"Texte numéro {i} sur les jardins partagés.")
    bot = with_embedder(make_bot(note_writer.root), WordsEmbedder())
    assert bot.embed_pending() is True
    before = len(bot.embedder.embedded)
    note_writer("n3.md", "title: Note 3\nvisibility: public", "Un texte tout neuf sur la mécanique des fluides.")
    bot.reload()
    assert bot.embedder.embedded[before:] == [head_text(bot.snapshot.vault.notes["n3.md"])]
    assert bot.snapshot.semantic  # embedded before the swap: meaning never dropped out
    result = bot.search("mécanique des fluides", audience="visitor")
    assert result.sources[0].path == "n3.md"


def test_a_note_edited_for_months_keeps_the_vectors_held_bounded(note_writer):
    """Each edit of a note is a new text, with a vector of its own: a daemon that ran for months
    held every version of every note it had ever embedded (2 KB each with the bundled encoder),
    the deleted notes' too. Of the texts no note holds now, the newest VECTORS_SPARE are kept:
    an edit undone is not embedded again."""
    for i in range(5):
        note_writer(f"n{i}.md", f"title: Note {i}\nvisibility: public", f"Texte numéro {i} sur les jardins partagés.")
    bot = with_embedder(make_bot(note_writer.root), WordsEmbedder())
    assert bot.embed_pending() is True
    edits = semantic.VECTORS_SPARE + 500
    for k in range(edits):
        note_writer("n3.md", "title: Note 3\nvisibility: public", f"Version {k} : la mécanique des fluides{' encore' * (k % 3)}.")
        (note_writer.root / f"passe-{k - 1}.md").unlink(missing_ok=True)
        note_writer(f"passe-{k}.md", "title: Passage\nvisibility: private", f"Une note de passage, numéro {k}.")
        bot.reload()
    texts = 6  # one head a note, none of them long or with declared questions
    assert len(bot._vectors) == texts + semantic.VECTORS_SPARE
    assert bot.search("mécanique des fluides", audience="visitor").sources[0].path == "n3.md"  # meaning still has the notes of now
    before = len(bot.embedder.embedded)
    note_writer("n3.md", "title: Note 3\nvisibility: public", f"Version {edits - 2} : la mécanique des fluides{' encore' * ((edits - 2) % 3)}.")
    bot.reload()
    assert bot.embedder.embedded[before:] == []  # the edit undone: its vector was kept


def test_a_reload_embeds_only_the_declared_question_that_changed(note_writer):
    for i in range(4):
        note_writer(f"n{i}.md", f"title: Note {i}\nanswers:\n  - Que dit la note {i} ?\n  - Pourquoi la note {i} ?", f"Texte {i}.")
    bot = with_embedder(make_bot(note_writer.root), WordsEmbedder())
    assert bot.embed_pending() is True
    before = len(bot.embedder.embedded)
    note_writer("n2.md", "title: Note 2\nanswers:\n  - Que dit la note 2 ?\n  - Comment lire la note 2 ?", "Texte 2.")
    bot.reload()
    note = bot.snapshot.vault.notes["n2.md"]
    # the head holds the declared questions, so it changed too; the question kept is not embedded again
    assert sorted(bot.embedder.embedded[before:]) == sorted([head_text(note), "Comment lire la note 2 ?"])
    assert "Comment lire la note 2 ?" in bot.snapshot.semantic["owner"].asked[3]
    assert "Pourquoi la note 2 ?" not in bot.snapshot.semantic["owner"].asked[3]


# ---------------------------------------------------------------- the worker


async def test_the_daemon_answers_lexically_until_the_worker_is_done(start_daemon):
    gate = threading.Event()
    client = await start_daemon(BUNDLED_VAULT)
    bot = bot_of(client)
    bot.stop_embedding()  # the daemon started with semantic off: give it a held backend
    with_embedder(bot, WordsEmbedder(gate=gate))
    bot.start_embedding()
    resp = await client.get("/health")
    semantic = (await resp.json())["semantic"]
    assert semantic["ready"] is False and semantic["embedded"] == 0
    pending = await rpc_result(client, "search", {"q": "Comment fonctionne GrasBot ?"})
    assert pending["results"] and all(r["signal"] != "semantic" for s in pending["results"] for r in s["reasons"])
    gate.set()
    for _ in range(200):
        if "owner" in bot.snapshot.semantic:  # the visitor's index comes first
            break
        await asyncio.sleep(0.05)
    semantic = (await (await client.get("/health")).json())["semantic"]
    assert semantic["ready"] is True and semantic["embedded"] == semantic["total"] > 40
    ready = await rpc_result(client, "search", {"q": "Comment fonctionne GrasBot ?"})
    assert any(r["signal"] == "semantic" for s in ready["results"] for r in s["reasons"])


async def test_the_daemon_embeds_with_the_bundled_encoder_by_default(start_daemon):
    client = await start_daemon(BUNDLED_VAULT, semantic="bundled")
    bot = bot_of(client)
    for _ in range(600):
        if "owner" in bot.snapshot.semantic:  # the visitor's index comes first
            break
        await asyncio.sleep(0.05)
    health = await (await client.get("/health")).json()
    assert health["semantic"] == {
        "backend": "bundled",
        "model": BUNDLED_MODEL,
        "ready": True,
        "embedded": health["semantic"]["total"],
        "total": health["semantic"]["total"],
    }


def test_a_reload_that_changes_many_notes_embeds_in_the_background(note_writer, monkeypatch):
    import grasbot._engine as engine

    for i in range(8):
        note_writer(f"n{i}.md", f"title: Note {i}\nvisibility: public", f"Texte {i}.")
    gate = threading.Event()
    bot = with_embedder(make_bot(note_writer.root), WordsEmbedder())
    assert bot.embed_pending() is True
    monkeypatch.setattr(engine, "EMBED_INLINE", 2)
    for i in range(5):
        note_writer(f"n{i}.md", f"title: Note {i}\nvisibility: public", f"Un autre texte {i} sur la voile.")
    bot.embedder.gate = gate
    bot.reload()
    # meanwhile the three notes left as they were keep their meaning, the five edited go by words
    assert bot.snapshot.semantic and bot.semantic_status()["embedded"] < bot.semantic_status()["total"]
    gate.set()
    bot._embed_thread.join(10) if bot._embed_thread else None
    assert bot.snapshot.semantic and bot.semantic_status()["embedded"] == bot.semantic_status()["total"]


async def test_a_reload_does_not_wait_on_an_ollama_that_just_failed(note_writer):
    """The worker waited to try a silent Ollama again: a reload embedded its few notes first,
    each batch waiting the full timeout (30 s), the new notes unserved meanwhile."""
    note_writer("a.md", "title: Le jardin\nvisibility: public", "Des tomates et des courges.")
    note_writer("b.md", "title: La cuisine\nvisibility: public", "Des recettes de soupe.")
    async with StandinOllama() as server:
        bot = make_bot(note_writer.root, server.url, semantic="ollama", llm_timeout=0.3)
        server.embed_held = True  # Ollama accepts and stays silent
        assert await asyncio.to_thread(bot.embed_pending) is False and "timed out" in bot.semantic_status()["error"]
        asked = len(server.embed_requests)
        woken: list[bool] = []
        bot.start_embedding = lambda: woken.append(True)  # the worker's retry, told to go now
        note_writer("c.md", "title: La voile\nvisibility: public", "Un bateau sur la mer.")
        report = await asyncio.to_thread(bot.reload)
        assert report.added == 1 and len(server.embed_requests) == asked and woken == [True]
        assert bot.search("bateau sur la mer", audience="visitor").sources[0].path == "c.md"  # by words, at once
        assert "timed out" in bot.semantic_status()["error"]  # still what the worker says
        server.release_embeds()


async def test_a_reload_waits_for_a_silent_ollama_a_few_seconds_then_leaves_its_notes_to_the_worker(note_writer, monkeypatch):
    """Ollama fell silent since its last pass: a reload waited the full timeout for each batch
    of its notes (30 s) before serving them; it waits INLINE_WAIT, then the worker embeds them
    and meaning comes back."""
    monkeypatch.setattr(engine, "INLINE_WAIT", 0.2)
    note_writer("a.md", "title: Le jardin\nvisibility: public", "Des tomates et des courges.")
    note_writer("b.md", "title: La cuisine\nvisibility: public", "Des recettes de soupe.")
    async with StandinOllama() as server:
        bot = make_bot(note_writer.root, server.url, semantic="ollama", llm_timeout=120.0)  # a batch: 30 s
        assert await asyncio.to_thread(bot.embed_pending) is True
        server.embed_held = True
        note_writer("c.md", "title: La voile\nvisibility: public", "Un bateau sur la mer.")
        reloading = asyncio.ensure_future(asyncio.to_thread(bot.reload))
        try:
            await until(reloading.done, "reloaded while Ollama stayed silent")
            assert reloading.result().added == 1 and bot.semantic_status()["embedded"] == 2  # the new note by words meanwhile
            assert bot.search("bateau sur la mer", audience="visitor").sources[0].path == "c.md"
            assert "error" not in bot.semantic_status()  # slow, not failed: the worker says if it fails
            server.release_embeds()
            await until(lambda: bot.semantic_status()["embedded"] == 3, "embedded by the worker")
            await bot.prepare_question("un bateau sur la mer ?")
            assert semantic_reasons(bot.search("un bateau sur la mer ?", audience="visitor"))
        finally:
            server.release_embeds()
            await reloading
            await asyncio.to_thread(bot.stop_embedding)


async def test_a_reload_while_ollama_is_down_keeps_the_meaning_of_the_notes_left_as_they_were(note_writer):
    """One note edited while Ollama was down took meaning from the whole vault, until Ollama
    came back and the worker embedded it: the notes left as they were keep their vectors, the
    edited one is ranked by its words meanwhile, and /health says how many are embedded."""
    note_writer("a.md", "title: Le jardin\nvisibility: public", "Des tomates et des courges au potager.")
    note_writer("b.md", "title: La cuisine\nvisibility: public", "Des recettes de soupe et de gratin.")
    note_writer("c.md", "title: La voile\nvisibility: public", "Un bateau sur la mer, des régates.")
    async with StandinOllama() as server:
        bot = make_bot(note_writer.root, server.url, semantic="ollama", llm_timeout=0.5)
        assert await asyncio.to_thread(bot.embed_pending) is True
        q = "les régates en mer"
        await bot.prepare_question(q)  # the question's vector, kept

        def by_meaning() -> list[str]:
            return [s.path for s in bot.search(q, audience="visitor").sources if any(r.signal == "semantic" for r in s.reasons)]

        assert by_meaning() == ["c.md"]
        server.embed_broken = True
        woken: list[bool] = []
        bot.start_embedding = lambda: woken.append(True)  # the worker's retry, run by hand below
        note_writer("b.md", "title: La cuisine\nvisibility: public", "Des recettes de soupe, de gratin et de tarte.")
        assert (await asyncio.to_thread(bot.reload)).changed == 1 and woken == [True]
        assert await asyncio.to_thread(bot.embed_pending, background=True) is False  # Ollama still down
        status = bot.semantic_status()
        assert (status["ready"], status["embedded"], status["total"]) == (True, 2, 3) and "error" in status
        assert by_meaning() == ["c.md"]  # the notes left as they were keep their meaning
        server.embed_broken = False
        assert await asyncio.to_thread(bot.embed_pending, background=True) is True
        assert bot.semantic_status()["embedded"] == 3 and bot._partial is None


def test_a_reload_still_tries_the_bundled_encoder_again_before_the_swap(note_writer):
    """The local encoder is quick: a reload embeds a small edit before the swap even after a
    failed pass, so its meaning is there at once."""
    note_writer("a.md", "title: Le jardin\nvisibility: public", "Des tomates et des courges.")
    note_writer("b.md", "title: La cuisine\nvisibility: public", "Des recettes de soupe.")
    bot = with_embedder(make_bot(note_writer.root), WordsEmbedder())
    bot._embed_error = "the encoder failed once"
    note_writer("c.md", "title: La voile\nvisibility: public", "Un bateau sur la mer.")
    bot.reload()
    assert bot.snapshot.semantic and "error" not in bot.semantic_status()


# ---------------------------------------------------------------- privacy


def test_a_visitor_is_never_brought_a_private_note_by_meaning(note_writer):
    note_writer("public.md", "title: Le jardin\nvisibility: public", "Des tomates. Voir [[Projet Zeta confidentiel]].")
    note_writer(
        "Projet Zeta confidentiel.md",
        "title: Projet Zeta confidentiel\nvisibility: private\nanswers:\n  - Combien gagne le projet Zeta ?",
        "Le projet Zeta, salaire et contrat.",
    )
    note_writer("autre.md", "title: Vélo\nvisibility: public", "Un itinéraire à vélo.")
    bot = with_embedder(make_bot(note_writer.root), WordsEmbedder())
    assert bot.embed_pending() is True
    assert set(bot.snapshot.semantic["visitor"].paths) == {"public.md", "autre.md"}
    assert "Zeta" not in head_text(bot.snapshot.vault.notes["public.md"])  # a hidden link keeps no name
    assert bot.snapshot.semantic["visitor"].asked is None  # the private note's declared question is not the visitor's
    assert bot.snapshot.semantic["owner"].asked[3] == ("Combien gagne le projet Zeta ?",)
    for q in ("le projet Zeta confidentiel", "salaire et contrat du projet", "Zeta", "Combien gagne le projet Zeta ?"):
        assert all(s.path != "Projet Zeta confidentiel.md" for s in bot.search(q, audience="visitor").sources)
    assert bot.search("le projet Zeta confidentiel", audience="owner").sources[0].path == "Projet Zeta confidentiel.md"


async def test_a_visitor_has_meaning_once_the_public_notes_are_embedded_whatever_the_private_ones_hold(start_daemon, note_writer):
    """A visitor's /health said `ready`, and a visitor's search had meaning, only once the
    private notes were embedded too: its wait after `embedded` reached `total` timed how much
    text the private notes hold. The worker embeds the visitor's notes first, in batches of
    their own, and gives them their index then; the owner's view counts the whole vault."""
    for rel, title, body in (
        ("jardin.md", "Le jardin", "Des tomates et des courges au potager."),
        ("voile.md", "La voile", "Un bateau sur la mer, des régates au large."),
        ("cuisine.md", "La cuisine", "Des recettes de soupe et de gratin."),
        ("velo.md", "Le vélo", "Un itinéraire à vélo le long du canal."),
    ):
        note_writer(rel, f"title: {title}\nvisibility: public", body)
    note_writer("zeta.md", "title: Projet Zeta\nvisibility: private\nanswers: [Combien gagne Zeta ?]", "Le salaire confidentiel du projet Zeta.")
    client = await start_daemon(note_writer.root, owner_token=OWNER_TOKEN)
    bot = bot_of(client)
    bot.stop_embedding()  # the daemon started with semantic off: give it a backend that holds the private texts
    holding, gate = threading.Event(), threading.Event()

    class PrivateHeld(WordsEmbedder):
        def embed(self, texts):
            if any("Zeta" in t for t in texts):
                holding.set()
                assert gate.wait(10), "the test never released the embedder"
            return super().embed(texts)

    with_embedder(bot, PrivateHeld())
    bot.start_embedding()
    try:
        assert await asyncio.to_thread(holding.wait, 10)  # the worker is embedding the private note's texts
        public = len(NoteTexts().of({"visitor": bot.snapshot.index("visitor")}).keys)
        every = len(NoteTexts().of(bot.snapshot.indexes).keys)
        assert every > public
        visitor = (await (await client.get("/health")).json())["semantic"]
        assert (visitor["ready"], visitor["embedded"], visitor["total"]) == (True, public, public)
        owner = (await (await client.get("/health", headers=OWNER)).json())["semantic"]
        assert (owner["ready"], owner["visitors_ready"], owner["embedded"], owner["total"]) == (False, True, public, every)
        found = await rpc_result(client, "search", {"q": "un bateau sur la mer", "audience": "visitor"})
        assert any(r["signal"] == "semantic" for s in found["results"] for r in s["reasons"])
    finally:
        gate.set()
    for _ in range(200):
        if "owner" in bot.snapshot.semantic:
            break
        await asyncio.sleep(0.05)
    assert (await (await client.get("/health")).json())["semantic"] == visitor  # nothing a visitor reads moved
    owner = (await (await client.get("/health", headers=OWNER)).json())["semantic"]
    assert (owner["ready"], owner["visitors_ready"], owner["embedded"], owner["total"]) == (True, True, every, every)
    assert np.shares_memory(bot.snapshot.semantic["visitor"].matrix.codes, bot.snapshot.semantic["owner"].matrix.codes)


class FailingOn(WordsEmbedder):
    """Fails every batch holding `failing`, as Ollama does when it goes down halfway."""

    def __init__(self, failing: str) -> None:
        super().__init__()
        self.failing = failing

    def embed(self, texts):
        if any(self.failing in t for t in texts):
            raise EmbeddingError("Ollama ne répond plus")
        return super().embed(texts)


def private_notes_failed(note_writer) -> tuple[GrasBot, FailingOn]:
    """Three public notes and a private one, whose embedding failed after the public ones'."""
    for rel, title, body in (
        ("jardin.md", "Le jardin", "Des tomates et des courges au potager."),
        ("voile.md", "La voile", "Un bateau sur la mer, des régates au large."),
        ("cuisine.md", "La cuisine", "Des recettes de soupe et de gratin."),
    ):
        note_writer(rel, f"title: {title}\nvisibility: public", body)
    note_writer("zeta.md", "title: Projet Zeta\nvisibility: private", "Le salaire confidentiel du projet Zeta.")
    embedder = FailingOn("Zeta")
    bot = with_embedder(make_bot(note_writer.root), embedder)
    assert bot.embed_pending(background=True) is False
    return bot, embedder


def test_a_visitor_is_not_told_meaning_failed_when_only_the_private_notes_failed(note_writer):
    """Ollama failed (down, or a batch past its timeout) while the worker embedded the private
    notes, the visitor's already embedded and indexed: a visitor's /health said « le calcul du
    sens a échoué : les notes ne sont classées que par leurs mots », untrue of its search, which
    has meaning, and telling that texts beyond the public notes were being embedded. The owner
    reads the failure; a visitor reads it while its own notes lack meaning."""
    bot, embedder = private_notes_failed(note_writer)
    visitor, owner = bot.semantic_status(owner=False), bot.semantic_status(owner=True)
    assert (visitor["ready"], visitor["embedded"], visitor["total"], "error" in visitor) == (True, 3, 3, False)
    assert (owner["ready"], owner["visitors_ready"], owner["error"]) == (True, True, "Ollama ne répond plus")  # the private note's, meanwhile
    found = bot.search("un bateau sur la mer", audience="visitor")
    assert any(r.signal == "semantic" for s in found.sources for r in s.reasons)
    embedder.failing = "régates"  # a visitor's note: its visitors lack meaning, and read so
    bot._vectors = VectorStore(embedder.model, None)
    bot.snapshot.semantic.clear()
    assert bot.embed_pending(background=True) is False
    assert bot.semantic_status(owner=False)["error"] == EMBEDDING_FAILED


def test_a_visitors_search_is_kept_while_only_the_private_notes_wait_for_meaning(note_writer):
    """Ollama failed while the worker embedded the private notes, the visitor's already
    embedded: until the worker succeeded, no search was kept, so every visitor's question was
    searched again although its ranking was final (its notes all embedded). A visitor's is kept;
    the owner's, whose private note a zero vector stands in for, is not."""
    bot, _ = private_notes_failed(note_writer)
    held = bot.snapshot.semantic
    assert (held["visitor"].waiting, held["owner"].waiting) == (None, 3)  # the private note is the owner's fourth
    found = bot.search("un bateau sur la mer", audience="visitor")
    assert any(r.signal == "semantic" for s in found.sources for r in s.reasons)
    assert [key[:2] for key in bot.snapshot.searches] == [("visitor", "un bateau sur la mer")]
    bot.search("un bateau sur la mer", audience="owner", owner=True)
    assert not bot.snapshot.owner_searches
    assert [key[0] for key in bot.snapshot.searches] == ["visitor"]  # nor among the visitors'


async def test_a_visitors_search_reads_nothing_the_owners_search_kept(start_daemon, note_writer, monkeypatch):
    """The owner's search (a preview of a visitor's too) kept its result and its question's
    vector where a visitor's search of the same question found them: a visitor timing the
    search (`took_ms`) read whether the owner had asked it. The owner's are kept apart."""
    for rel, title, body in (
        ("jardin.md", "Le jardin", "Des tomates et des courges au potager."),
        ("voile.md", "La voile", "Un bateau sur la mer, des régates au large."),
        ("cuisine.md", "La cuisine", "Des recettes de soupe et de gratin."),
    ):
        note_writer(rel, f"title: {title}\nvisibility: public", body)
    client = await start_daemon(note_writer.root, owner_token=OWNER_TOKEN)
    bot = bot_of(client)
    bot.stop_embedding()  # the daemon started with semantic off: give it a backend that counts what it embeds
    with_embedder(bot, WordsEmbedder())
    assert await asyncio.to_thread(bot.embed_pending) is True
    searched, real = [], engine.search
    monkeypatch.setattr(engine, "search", lambda *args, **kwargs: searched.append(args[0]) or real(*args, **kwargs))
    q = "un bateau sur la mer"
    for audience in ("visitor", "owner", "visitor"):
        await rpc_result(client, "search", {"q": q, "audience": audience}, headers=OWNER)
    assert searched == [q, q] and bot.embedder.embedded.count(q) == 1  # the owner's kept: searched once an audience, embedded once
    visitor = await rpc_result(client, "search", {"q": q})
    assert any(r["signal"] == "semantic" for s in visitor["results"] for r in s["reasons"])
    assert searched == [q, q, q] and bot.embedder.embedded.count(q) == 2  # searched and embedded anew for the visitor
    assert await rpc_result(client, "search", {"q": q}) == {**visitor, "took_ms": ANY}  # the visitor's own, kept
    assert searched == [q, q, q] and bot.embedder.embedded.count(q) == 2
    await rpc_result(client, "search", {"q": "des régates au large"})  # a visitor's first ...
    await rpc_result(client, "search", {"q": "des régates au large"}, headers=OWNER)  # ... read by the owner's preview
    assert searched == [q, q, q, "des régates au large"]


def test_the_visitor_reads_a_prefix_of_the_owner_matrices_and_matches_as_if_alone(note_writer):
    words = "serre compost limace semis verger abeille ruche taille greffe purin paillage tomate".split()
    public = set()
    for i in range(12):  # private and public names interleaved: the owner's rows put the public first
        visibility = "public" if i % 3 else "private"
        rel = f"n{i:02}.md"
        public |= {rel} if visibility == "public" else set()
        asked = "" if i % 4 == 1 else f"\nanswers:\n  - Que faire de la {words[i]} ?\n  - Et la {words[i - 1]} ?"
        note_writer(rel, f"title: Note {i}\nvisibility: {visibility}{asked}", f"La {words[i]} et le {words[(i + 5) % 12]}.")
    bot = with_embedder(make_bot(note_writer.root), WordsEmbedder())
    assert bot.embed_pending() is True
    visitor, owner = bot.snapshot.semantic["visitor"], bot.snapshot.semantic["owner"]
    assert np.shares_memory(visitor.matrix.codes, owner.matrix.codes) and np.shares_memory(visitor.asked[0].codes, owner.asked[0].codes)
    assert visitor.paths == tuple(sorted(public)) and len(owner.paths) == 12
    declared = {q for p in public for q in bot.snapshot.vault.notes[p].answers}
    assert set(visitor.asked[3]) == declared and len(visitor.asked[3]) < len(owner.asked[3])
    texts = NoteTexts().of(bot.snapshot.indexes)
    alone = semantic_indexes({"visitor": bot.snapshot.index("visitor")}, texts, bot._vectors, QuestionVectors(bot.embedder))["visitor"]
    assert not np.shares_memory(alone.matrix.codes, owner.matrix.codes)
    matched = 0
    for q in [f"que faire de la {w}" for w in words] + ["le compost et la ruche", "tomate"]:
        assert visitor.match(q, SEMANTIC_MIN_Z, SEMANTIC_NOTES) == alone.match(q, SEMANTIC_MIN_Z, SEMANTIC_NOTES), q
        matched += any(c.asked for c in visitor.match(q, SEMANTIC_MIN_Z, SEMANTIC_NOTES).values())
    assert matched > 3  # the comparison covers declared questions


# ---------------------------------------------------------------- the fast path, meaning included


def write_long_notes(root: Path, count: int, seed: int) -> None:
    """Notes past _sections.WHOLE_NOTE, with headings: each gets a vector a section."""
    rng = random.Random(seed)
    words = "serre compost limace semis verger abeille ruche taille greffe purin paillage tomate".split()
    for i in range(count):
        parts = [f"## Partie {j}\n\n" + " ".join(rng.choice(words) for _ in range(220)) + "." for j in range(8)]
        (root / f"cours-{i}.md").write_text(f"---\ntitle: Cours {i}\n---\n" + "\n\n".join(parts), encoding="utf-8")


@pytest.fixture(scope="module", params=["bundled", "generated-600", "long-notes"])
def semantic_snapshot(request, tmp_path_factory):
    if request.param == "bundled":
        settings = Settings.load(env={}, vault_dir=BUNDLED_VAULT)
    elif request.param == "long-notes":
        root = tmp_path_factory.mktemp("long") / "vault"
        generate(root, 120, seed=4)
        write_long_notes(root, 25, seed=4)
        settings = Settings.load(env={}, vault_dir=root)
    else:
        root = tmp_path_factory.mktemp("gen") / "vault"
        generate(root, 600, seed=11)
        settings = Settings.load(env={}, vault_dir=root)
    snapshot = build_snapshot(settings)
    embedder = WordsEmbedder()
    store = VectorStore(embedder.model, None)
    texts = NoteTexts().of(snapshot.indexes)
    todo = sorted(texts.keys)
    store.put([texts.keys[t] for t in todo], embedder.embed(todo))
    if request.param == "long-notes":  # the case is about notes with several vectors
        assert sum(len(t) > 1 for t in texts.by_path.values()) >= 25
    return snapshot, semantic_indexes(snapshot.indexes, texts, store, QuestionVectors(embedder))


@pytest.mark.parametrize("audience", ["visitor", "owner"])
def test_fast_path_equals_exhaustive_with_meaning(semantic_snapshot, audience):
    snapshot, semantic = semantic_snapshot
    index, meaning = snapshot.index(audience), semantic[audience]
    rng = random.Random(5)
    notes = sorted(index.notes.values(), key=lambda n: n.path)
    vocab = sorted({w for n in notes for w in n.body.split()[:40]})
    questions = [n.title for n in notes[:80]] + [" ".join(rng.sample(vocab, rng.randint(1, 6))) for _ in range(80)]
    questions += ["?", "le la les", "zzz qqq"]
    with_meaning = 0
    for i, q in enumerate(questions):
        top_k = (5, 1, 3, 12)[i % 4]
        history = [{"role": "user", "content": questions[i - 1]}] if i % 7 == 0 else None
        kwargs = dict(top_k=top_k, min_score=3.0, history=history, semantic=lambda text: meaning.match(text, SEMANTIC_MIN_Z, SEMANTIC_NOTES))
        fast = search(q, index, exhaustive=False, **kwargs).to_dict()
        slow = search(q, index, exhaustive=True, **kwargs).to_dict()
        fast.pop("took_ms"), slow.pop("took_ms")
        assert fast == slow, q
        with_meaning += any(r["signal"] == "semantic" for s in fast["results"] for r in s["reasons"])
    assert with_meaning > len(questions) // 2  # the comparison is about rankings that meaning shaped


def test_match_keeps_the_closest_notes_above_the_spread_within_its_limit():
    rng = np.random.default_rng(3)
    matrix = rng.normal(size=(200, 8)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    question = matrix[0] + 0.1 * matrix[1]

    class Fixed:
        model, remote = "fixed", False

        def embed(self, texts):
            return np.array([question / np.linalg.norm(question)] * len(texts), dtype=np.float32)

    from grasbot.retrieval.semantic import SemanticIndex

    index = SemanticIndex([f"p{i:03}.md" for i in range(200)], matrix, np.arange(200), QuestionVectors(Fixed()))
    cosines = matrix @ (question / np.linalg.norm(question))
    z = (cosines - cosines.mean()) / cosines.std()
    every = index.match("q", 1.0, 1_000)
    assert set(every) == {f"p{i:03}.md" for i in np.flatnonzero(z >= 1.0)} and len(every) > 12
    top = index.match("q", 1.0, 12)
    assert set(top) == {f"p{i:03}.md" for i in np.argsort(-cosines)[:12]}
    assert all(c.z >= 1.0 and abs(c.cosine - cosines[int(p[1:4])]) < 0.01 for p, c in top.items())  # int8 rows (below)
    assert index.match("   ", 1.0, 12) == {}


def test_the_rows_that_stand_out_are_read_as_python_numbers_equal_to_the_bit():
    """`_standing_out`'s (row, cosine, z), read from numpy at once: Python numbers, the row's
    own float64 cosine and (cosine − mean) / deviation with numpy's mean and std, to the bit."""
    cosines = np.random.default_rng(5).normal(size=500)
    found = semantic._standing_out(cosines, 0.5, 40)
    mean, deviation = float(cosines.mean()), float(cosines.std())
    assert len(found) == 40
    for i, c, z in found:
        assert (type(i), type(c), type(z)) == (int, float, float)
        assert c == float(cosines[i]) and z == (float(cosines[i]) - mean) / deviation and z >= 0.5


def test_a_head_reads_the_start_of_a_note_and_never_cuts_a_link_in_two(note_writer):
    from grasbot.retrieval.semantic import HEAD_CHARS

    note_writer("secret.md", "title: Secret privé\nvisibility: private", "rien")
    # the link starts within the head's text yet its raw markup runs past the characters read
    # (2 × HEAD_CHARS): cut there, it would be left as « [[Secret privé#hhh… », the name shown
    body = "x" * 1_900 + " [[Secret privé#" + "h" * 2_300 + "|le lien]] suite\n" + "fin " * 5_000
    assert body.index("[[") < 2 * HEAD_CHARS < body.index("]]")
    note_writer("long.md", "title: Long\nvisibility: public", body)
    bot = make_bot(note_writer.root)
    head = head_text(bot.snapshot.vault.notes["long.md"])
    assert head.split() == ["Long", "x" * 1_900, "le", "lien", "suite"]  # the whole link, as its label
    assert "Secret" not in head and "[[" not in head and "fin" not in head  # the rest unread


def test_note_texts_are_made_once_per_note_bytes(note_writer):
    note_writer("a.md", "title: A\nvisibility: public", "Texte a.")
    note_writer("b.md", "title: B\nvisibility: public", "Texte b.")
    bot = make_bot(note_writer.root)
    made = NoteTexts()
    first = made.of(bot.snapshot.indexes)
    note_writer("b.md", "title: B\nvisibility: public", "Texte b, changé.")
    bot.reload()
    second = made.of(bot.snapshot.indexes)
    assert second.by_path["a.md"] is first.by_path["a.md"]  # not read again
    assert second.by_path["b.md"] != first.by_path["b.md"] and "changé" in second.by_path["b.md"][0]
    assert set(second.keys) == {t for texts in second.by_path.values() for t in texts}


def test_a_long_note_gets_a_vector_for_each_section_under_its_heading_path(note_writer):
    from grasbot.retrieval.sections import WHOLE_NOTE

    body = "Intro.\n\n## Serre\n\n" + "La serre et sa buée. " * 300 + "\n\n## Limaces\n\nUne planche retournée les piège. " + "x " * 2000
    assert len(body) > WHOLE_NOTE
    note_writer("cours.md", "title: Cours de jardinage\nvisibility: public", body)
    note_writer("court.md", "title: Court\nvisibility: public", "Une note courte.")
    bot = make_bot(note_writer.root)
    texts = NoteTexts().of(bot.snapshot.indexes).by_path
    assert len(texts["court.md"]) == 1
    long = texts["cours.md"]
    assert long[0] == head_text(bot.snapshot.vault.notes["cours.md"]) and len(long) >= 3
    assert any(t.startswith("Cours de jardinage › Limaces\n") and "planche retournée" in t for t in long[1:])


def test_int8_rows_give_the_float_cosines_within_rounding():
    """A search reads the vectors as int8 with a scale a row: the cosines of 512-wide unit
    vectors within 0.003 of float32's (the benchmark's 29,080 vectors: 0.0023 at worst), a
    text's cosine with itself never past 1, and a slice a view, not a copy."""
    from grasbot.retrieval.semantic import Rows

    rng = np.random.default_rng(3)
    matrix = rng.normal(size=(2_000, 512)).astype(np.float32)
    matrix[:1_000] *= rng.uniform(0.05, 3.0, size=(1_000, 512)).astype(np.float32)  # uneven rows too
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    rows = Rows.of(matrix)
    assert rows.codes.dtype == np.int8 and rows.codes.nbytes * 4 == matrix.nbytes and rows.width == 512
    worst = 0.0
    for i in range(0, 2_000, 97):
        question = matrix[i] + 0.8 * matrix[(i * 7 + 1) % 2_000]
        question /= np.linalg.norm(question)
        cosines = rows.cosines(Rows.of(question[None]))
        worst = max(worst, float(np.abs(cosines - matrix @ question).max()))
        assert cosines.max() <= 1.0
    assert 0 < worst < 0.003
    itself = [float(rows.cosines(Rows.of(matrix[i][None]))[i]) for i in range(0, 2_000, 7)]
    assert min(itself) > 0.997 and max(itself) == 1.0  # rounded past 1 for some, and kept at 1
    part = rows[100:200]
    assert np.shares_memory(part.codes, rows.codes) and len(part) == 100
    assert np.array_equal(part.cosines(Rows.of(matrix[150][None])), rows.cosines(Rows.of(matrix[150][None]))[100:200])
    assert len(Rows.of(np.zeros((0, 512), dtype=np.float32)).cosines(Rows.of(matrix[:1]))) == 0
    assert not np.isnan(Rows.of(np.zeros((3, 512), dtype=np.float32)).cosines(Rows.of(matrix[:1]))).any()  # a zero row: cosine 0


def test_a_note_of_many_sections_is_not_closer_by_chance_alone():
    """The best of k section vectors is lowered by σ·√(2 ln k) before it competes with a head."""
    from grasbot.retrieval.semantic import SemanticIndex

    rng = np.random.default_rng(8)
    question = np.zeros(16, dtype=np.float32)
    question[0] = 1.0
    rows, starts = [], []
    for i in range(40):  # 40 short notes: a head each, cosine about 0.1-0.3
        starts.append(len(rows))
        rows.append(_unit(rng, 0.1 + 0.005 * i))
    starts.append(len(rows))  # a course of 300 sections of noise, whose best reaches by chance
    rows.append(_unit(rng, 0.1))
    rows.extend(_unit(rng, abs(rng.normal(0.15, 0.08))) for _ in range(300))
    matrix = np.stack(rows)

    class Fixed:
        model, remote = "fixed", False

        def embed(self, texts):
            return np.stack([question] * len(texts))

    paths = [f"n{i:02}.md" for i in range(40)] + ["course.md"]
    index = SemanticIndex(paths, matrix, np.array(starts), QuestionVectors(Fixed()))
    raw_best = float((matrix[starts[-1] + 1 :] @ question).max())
    assert raw_best > float((matrix[: starts[-1]] @ question).max())  # by raw max it would win
    close = index.match("q", -10.0, 100)
    assert close["course.md"].cosine < raw_best - 0.05
    assert max(close, key=lambda p: close[p].cosine) != "course.md"
    # a section that really says it wins
    rows[-1] = question.copy()
    index = SemanticIndex(paths, np.stack(rows), np.array(starts), QuestionVectors(Fixed()))
    close = index.match("q", -10.0, 100)
    assert max(close, key=lambda p: close[p].cosine) == "course.md"


def _unit(rng, cosine: float) -> np.ndarray:
    """A unit vector at `cosine` with the first axis."""
    other = rng.normal(size=15)
    other /= np.linalg.norm(other)
    return np.concatenate([[cosine], np.sqrt(max(0.0, 1 - cosine * cosine)) * other]).astype(np.float32)


def test_the_store_keeps_keys_that_end_in_zero_bytes(tmp_path):
    """numpy's fixed bytes type drops trailing NULs: one key in 256 came back shorter, and its
    note was embedded again at every start."""
    store = VectorStore("words-test", tmp_path)
    keys = [b"\x01" * 15 + b"\x00", b"\x00" * 16, b"\x02" * 16]
    store.put(keys, np.eye(3, 8, dtype=np.float32))
    assert store.save(keys)
    again = VectorStore("words-test", tmp_path)
    assert all(k in again for k in keys) and len(again) == 3
    codes, _ = again.get(keys[1])
    assert np.array_equal(codes, semantic.Rows.of(np.eye(3, 8, dtype=np.float32)).codes[1])


def test_the_store_holds_int8_rows_and_its_file_the_models_vectors_exactly(tmp_path):
    """In memory, each vector as a search reads it (`Rows`: int8 and a scale, a quarter of the
    float32 bytes: 60 MB of a daemon's peak at 10,000 notes); the file keeps what the model
    gave, the vectors a start read back from it as they were when it writes new ones."""
    rng = np.random.default_rng(5)
    given = rng.standard_normal((3, 8)).astype(np.float32)
    keys = [b"\x01" * 16, b"\x02" * 16, b"\x03" * 16]
    store = VectorStore("words-test", tmp_path)
    store.put(keys[:2], given[:2])
    assert store.save(keys[:2])
    again = VectorStore("words-test", tmp_path)
    again.put(keys[2:], given[2:])
    assert again.save(keys)
    rows = semantic.Rows.of(given)
    for i, key in enumerate(keys):
        codes, scale = again.get(key)
        assert codes.dtype == np.int8 and np.array_equal(codes, rows.codes[i]) and np.float32(scale) == rows.scales[i]
    with np.load(tmp_path / semantic.vectors_file("words-test")) as data:
        assert data["keys"].tobytes() == b"".join(keys)
        assert data["vectors"].dtype == np.float32 and np.array_equal(data["vectors"], given)  # bit for bit, not the int8 rows


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_start_reads_the_file_a_chunk_at_a_time_into_the_same_rows(tmp_path, monkeypatch, dtype):
    """A start reads the file a few rows at a time (the float32 matrix of them all took 60 MB
    at 10,000 notes): every row held as `Rows.of` the whole matrix makes it, whatever chunk it
    fell in, and a file of float64 (as `np.savez` would write it) read as well."""
    monkeypatch.setattr(semantic, "_ROWS_READ", 3)
    rng = np.random.default_rng(7)
    given = rng.standard_normal((8, 5)).astype(dtype)
    keys = [bytes([i + 1]) * 16 for i in range(8)]
    np.savez(
        tmp_path / semantic.vectors_file("words-test"),
        model=np.array("words-test"),
        keys=np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(-1, 16),
        vectors=given,
    )
    store = VectorStore("words-test", tmp_path)
    assert len(store) == 8
    rows = semantic.Rows.of(given.astype(np.float32))
    for i, key in enumerate(keys):
        codes, scale = store.get(key)
        assert np.array_equal(codes, rows.codes[i]) and np.float32(scale) == rows.scales[i]


def test_a_file_of_another_model_is_started_over_without_a_warning(tmp_path, caplog):
    """A colliding file name holding another model's vectors: nothing held, nothing said."""
    np.savez(
        tmp_path / semantic.vectors_file("words-test"),
        model=np.array("words-other"),
        keys=np.ones((1, 16), dtype=np.uint8),
        vectors=np.ones((1, 4), dtype=np.float32),
    )
    store = VectorStore("words-test", tmp_path)
    assert len(store) == 0 and "cache des vecteurs de sens" not in caplog.text


def _two_saved_then_read(tmp_path, given):
    """Three keys; the first two's vectors of `given` saved, then read by a new store: (keys,
    that store, the file)."""
    keys = [b"\x01" * 16, b"\x02" * 16, b"\x03" * 16]
    store = VectorStore("words-test", tmp_path)
    store.put(keys[:2], given[:2])
    assert store.save(keys[:2])
    again = VectorStore("words-test", tmp_path)
    assert len(again) == 2
    return keys, again, tmp_path / semantic.vectors_file("words-test")


def test_a_file_torn_since_it_was_read_still_takes_the_vectors_given_since(tmp_path, caplog):
    """A write copies the vectors it does not hold as given from the file: a file torn since the
    start read it gives none of them, and the new vectors are written alone (the others are
    embedded again by the next start)."""
    given = np.eye(3, 8, dtype=np.float32) * np.float32(0.5)
    keys, again, path = _two_saved_then_read(tmp_path, given)
    path.write_bytes(path.read_bytes()[:300])
    again.put(keys[2:], given[2:])
    assert again.save(keys)
    assert "n'a pas pu être relu" in caplog.text
    with np.load(path) as data:
        assert data["keys"].tobytes() == keys[2] and np.array_equal(data["vectors"], given[2:])


def test_a_vector_given_again_while_a_save_writes_reaches_the_file(tmp_path, monkeypatch):
    """A save writes the vectors given before it began; one given again meanwhile (the store
    cleared, another model's, then the text embedded anew) was forgotten as written: the next
    save copied the file's older vector, and a restart read it."""
    key = b"\x01" * 16
    older, newer = np.eye(1, 8, dtype=np.float32), np.eye(1, 8, 1, dtype=np.float32)
    store = VectorStore("words-test", tmp_path)
    store.put([key], older)
    write = semantic._write_vectors

    def given_again_meanwhile(*args, **kwargs):
        store.clear()
        store.put([key], newer)
        write(*args, **kwargs)

    monkeypatch.setattr(semantic, "_write_vectors", given_again_meanwhile)
    assert store.save([key])
    monkeypatch.setattr(semantic, "_write_vectors", write)
    assert store.save([key])
    with np.load(tmp_path / semantic.vectors_file("words-test")) as data:
        assert np.array_equal(data["vectors"], newer)
    codes, _ = VectorStore("words-test", tmp_path).get(key)
    assert np.array_equal(codes, semantic.Rows.of(newer).codes[0])


def test_a_save_the_store_is_cleared_under_writes_what_it_was_given(tmp_path):
    """The vectors' width was read from the store after its lock was let go: the store cleared
    then (another model's, from a search's thread) made the save raise KeyError, on the worker's
    or the stop's path."""
    keys = [b"\x01" * 16, b"\x02" * 16]
    store = VectorStore("words-test", tmp_path)
    store.put(keys, np.eye(2, 8, dtype=np.float32))

    class ClearedOnRelease:
        def __init__(self) -> None:
            self.lock, self.armed = threading.Lock(), True

        def __enter__(self) -> None:
            self.lock.acquire()

        def __exit__(self, *exc: object) -> None:
            self.lock.release()
            if self.armed:
                self.armed = False
                store.clear()

    store._lock = ClearedOnRelease()
    assert store.save(keys)
    with np.load(tmp_path / semantic.vectors_file("words-test")) as data:
        assert data["keys"].tobytes() == b"".join(keys) and np.array_equal(data["vectors"], np.eye(2, 8, dtype=np.float32))


def test_a_file_cut_short_while_it_is_copied_still_takes_the_vectors_given_since(tmp_path, monkeypatch, caplog):
    """The file cut short in place while a save reads its vectors back: zipfile raises EOFError,
    which the save did not catch (a crash, the new vectors not written)."""
    given = np.eye(3, 4_096, dtype=np.float32)  # more than zipfile reads ahead when the file is opened
    keys, again, path = _two_saved_then_read(tmp_path, given)
    write = semantic._write_vectors

    def cut_short_meanwhile(*args, **kwargs):
        with open(path, "r+b") as f:
            f.truncate(300)
        write(*args, **kwargs)

    monkeypatch.setattr(semantic, "_write_vectors", cut_short_meanwhile)
    again.put(keys[2:], given[2:])
    assert again.save(keys)
    assert "n'a pas pu être relu" in caplog.text
    with np.load(path) as data:
        assert data["keys"].tobytes() == keys[2] and np.array_equal(data["vectors"], given[2:])


def test_a_full_disk_keeps_the_previous_vectors_and_leaves_no_partial_file(tmp_path, monkeypatch, caplog):
    """ENOSPC halfway through the write: the partial `.tmp.npz` was left behind (a new one at
    each start, its name holds the pid), keeping the disk full."""
    import errno

    store = VectorStore("words-test", tmp_path)
    keys = [b"\x01" * 16, b"\x02" * 16]
    store.put(keys, np.eye(2, 8, dtype=np.float32))
    assert store.save(keys)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    def half_then_full(file, *args, **kwargs):
        if isinstance(file, str | os.PathLike):
            with open(file, "wb") as f:
                f.write(b"PK\x03\x04 half a zip")
        else:
            file.write(b"PK\x03\x04 half a zip")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(np.lib.format, "write_array", half_then_full)
    store.put([b"\x03" * 16], np.eye(1, 8, dtype=np.float32))
    assert store.save([*keys, b"\x03" * 16]) is False
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    assert "No space left on device" in caplog.text


def test_a_stopped_worker_keeps_what_it_embedded(note_writer, tmp_path):
    for i in range(80):
        note_writer(f"n{i}.md", f"title: Note {i}\nvisibility: public", f"Texte {i} sur la voile et le vent numéro {i}.")
    gate = threading.Event()
    embedder = WordsEmbedder(gate=gate)
    bot = with_embedder(make_bot(note_writer.root), embedder, tmp_path)
    calls = []
    original = embedder.embed

    def embed_then_stop(texts):
        out = original(texts)
        calls.append(len(texts))
        if len(calls) == 2:
            bot._embed_stop.set()  # the daemon stops while the worker is at its second batch
            bot._generation += 1
        return out

    embedder.embed = embed_then_stop
    gate.set()
    bot.start_embedding()
    bot._embed_thread.join(10) if bot._embed_thread else None
    assert bot.snapshot.semantic == {} and len(calls) == 2
    kept = VectorStore(embedder.model, tmp_path)
    assert len(kept) == sum(calls) > 0  # on disk: the next start embeds only the rest
    restarted = with_embedder(make_bot(note_writer.root), WordsEmbedder(), tmp_path)
    assert restarted.embed_pending() is True
    assert len(restarted.embedder.embedded) == len(bot.snapshot.vault.notes) - sum(calls)


def test_a_notes_head_never_ends_inside_a_link_to_a_private_note(note_writer):
    """The head's text ends at the first line past 2 * HEAD_CHARS; a link's title going on
    over that line was cut in two, and the half left (`[x](prive/Zorglub.md "un titre`) is
    no link to rewrite: the private note's path was embedded with the public note."""
    from grasbot.retrieval.vault import load_vault

    urls = " ".join(f"[a](https://exemple.org/{'x' * 120}/{i})" for i in range(26))  # dropped by search's reading: the rest fits the head
    start = ' voir [x](prive/Zorglub.md "un titre'
    line = urls + " " + "c" * (2 * semantic.HEAD_CHARS + 1 - len(urls) - 1 - len(start))
    note_writer("Public.md", "visibility: public", line + start + '\nsur deux lignes") fin.\n' + "La suite du jardin.\n" * 50)
    note_writer("prive/Zorglub.md", "visibility: private", "Le secret.")
    note = load_vault(note_writer.root).notes["Public.md"]
    assert note.body.index("Zorglub") < note.body.find("\n", 2 * semantic.HEAD_CHARS) < note.body.index("lignes")  # the guard: the cut falls in the link
    assert "voir x" in head_text(note) and "zorglub" not in head_text(note).lower()


def test_a_store_asked_while_its_file_is_read_waits_for_the_file(tmp_path):
    """The first use reads the file; a second thread asking meanwhile (a search, while the
    worker reads) found the store empty, and a `put` meanwhile was undone by the read."""
    keys = [b"\x01" * 16, b"\x02" * 16]
    given = np.eye(2, 8, dtype=np.float32)
    first = VectorStore("words-test", tmp_path)
    first.put(keys[:1], given[:1])
    assert first.save(keys[:1])
    store = VectorStore("words-test", tmp_path)
    entered, release = threading.Event(), threading.Event()
    read = store._read

    def slow_read():
        entered.set()
        assert release.wait(30)
        read()

    store._read = slow_read
    found: dict[str, object] = {}
    reader = threading.Thread(target=lambda: found.setdefault("reader", store.get(keys[0])))
    reader.start()
    assert entered.wait(30)
    asker = threading.Thread(target=lambda: (store.put(keys[1:], given[1:]), found.setdefault("asker", store.get(keys[0]))))
    asker.start()
    asker.join(0.5)  # without the wait, it has found the store empty by now
    release.set()
    reader.join(30)
    asker.join(30)
    assert found["reader"] is not None and found["asker"] is not None
    assert keys[1] in store and len(store) == 2


def test_a_text_refused_once_then_embedded_is_saved(tmp_path):
    """A text the model refused alone (a zero vector, never saved) and embedded later, by a
    batch or another attempt, is saved as any other: it stayed out of the file for ever."""
    key = b"\x07" * 16
    store = VectorStore("words-test", tmp_path)
    store.refuse(key, 8)
    store.put([key], np.eye(1, 8, dtype=np.float32))
    assert store.save([key])
    with np.load(tmp_path / semantic.vectors_file("words-test")) as data:
        assert data["keys"].tobytes() == key
