"""GrasBot as one long-lived object: the current vault snapshot and the LLM client.

Every request reads `self._snapshot` once and works on that object to the end, and a reload
builds a whole new snapshot before replacing the reference in one assignment: a request in
flight sees the old vault or the new one, never a mix.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import shlex
import threading
import time
import unicodedata
from collections.abc import AsyncGenerator, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

from ._config import Settings
from ._exceptions import AnswerUnused, EmbeddingError, LLMError, QueryError, VaultError
from ._imports import import_once
from ._terminal import printable
from ._urls import fold_type
from ._version import __version__
from .answer.admission import Admission, Busy, Position, SearchLane
from .answer.fallback import extract
from .answer.language import why_not_french
from .answer.llm import LLMClient
from .answer.passages import choose_passages
from .answer.prompt import CUT_ANSWER, CitationFilter, build_prompt, keep_known_citations
from .answer.reuse import AT_ONCE, AnswerCache, Flight, Flights, replay_pieces, replayed, waited
from .retrieval.index import Index, NoteAnalysis, analyse_note, gone_paths, hidden_pages
from .retrieval.scoring import SEMANTIC_MIN_Z, SEMANTIC_NOTES, declared_information
from .retrieval.search import SearchResult, Semantic, earlier_questions, search, with_history
from .retrieval.semantic import (
    Embedder,
    ForeignVectors,
    NoteTexts,
    OllamaEmbedder,
    Progress,
    QuestionVectors,
    Refused,
    SemanticIndex,
    Texts,
    VectorStore,
    embed_into,
    make_embedder,
    missing,
    semantic_indexes,
)
from .retrieval.spelling import Spelling, adopt, ready, warm
from .retrieval.vault import Issue, LinkResolver, Vault, VaultOptions, load_vault, walk_markdown
from .store import cache as _cache
from .store import gone as _gone
from .store import spellings as _spellings
from .store.cache import default_cache_dir
from .store.parallel import load_shares
from .store.questionlog import QuestionLog

log = logging.getLogger("grasbot.engine")
#: How the cause of an answer a reload made unusable begins (the access log says so, not « no answer »)
RELOADED = "le coffre a été rechargé pendant la réponse"

AUDIENCES = ("visitor", "owner")
QUESTION_WAIT = 5.0  # seconds a visitor's question waits for Ollama to embed it, at most (LLM_TIMEOUT's 30 before)
QUESTION_PAUSE = 10.0  # seconds questions go without meaning after Ollama failed to embed one
EMBED_RETRY = 30.0  # seconds before a pass the backend failed is tried again (Ollama not up yet, a model not pulled yet)
EMBED_INLINE = 64  # notes a reload embeds before swapping in (beyond: in the background, lexical meanwhile)
INLINE_WAIT = 5.0  # seconds a reload waits for Ollama to embed them, at most (then the worker does)
STOP_WAIT = 2.0  # seconds a stop waits for an Ollama call of the worker to end (its timeout: 30 s)
MAX_QUESTION = 500
SEARCH_CACHE = 1024  # results kept per vault version: a public site hears the same questions often


@dataclass(frozen=True)
class Snapshot:
    vault: Vault
    analyses: Mapping[str, NoteAnalysis]
    indexes: Mapping[str, Index]
    loaded_at: float = field(default_factory=time.time)
    # (audience, question, top_k) -> SearchResult: a result belongs to this vault version, so a
    # reload, which makes a new snapshot, forgets them all
    searches: dict = field(default_factory=dict, compare=False, repr=False)
    # the owner's, apart: a visitor's search never reads them (`GrasBot.search`'s `owner`)
    owner_searches: dict = field(default_factory=dict, compare=False, repr=False)
    # the cache folder this snapshot is still to be written to (build_snapshot(write_cache=False))
    unsaved_in: Path | None = field(default=None, compare=False, repr=False)
    # {audience: SemanticIndex}, filled once every note of this version is embedded (the
    # visitor's once the public notes are, while the worker embeds the private ones: `_visitors_first`)
    semantic: dict = field(default_factory=dict, compare=False, repr=False)

    def index(self, audience: str) -> Index:
        return self.indexes[audience]


class _Joined(NamedTuple):
    """An answer being written that a question reads (`GrasBot._flight`)."""

    flight: Flight
    shared: bool  # another question started it: `reused`, and a visitor waits their turn, then is given it at its pace
    reader: AsyncGenerator[object, None]  # this question's `Flight.follow`, once


@dataclass(frozen=True)
class ReloadReport:
    vault_size: int
    added: int
    changed: int
    removed: int
    errors: tuple[Issue, ...]
    took_ms: float

    def to_dict(self) -> dict:
        return {
            "vault_size": self.vault_size,
            "added": self.added,
            "changed": self.changed,
            "removed": self.removed,
            "errors": [e.to_dict() for e in self.errors],
            "took_ms": round(self.took_ms, 3),
        }


@contextlib.contextmanager
def _collector_paused(reload: bool = False):
    """A load makes millions of small, long-lived objects and no reference cycle: the cyclic
    collector's passes over them, triggered by the allocations alone, cost more than the load
    itself. So it is paused, and what the load left is moved out of its reach (`gc.freeze`:
    still freed by reference counting when a later snapshot replaces it), otherwise the first
    collection after the pause would walk all of it at once (about a second at 10,000 notes).
    `reload`: the daemon serves, and its requests leave reference cycles the collector has not
    freed yet; frozen, they were kept for the daemon's life, every reload's (the plugin reloads
    at each save). They are collected first: the objects made since the last freeze, a reload's
    few (0.5 ms at 3,000 notes)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if reload:
            gc.collect()
        gc.freeze()
        if was_on:
            gc.enable()


def build_snapshot(
    settings: Settings,
    previous: Snapshot | None = None,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    scanned: Iterable[tuple[str, os.DirEntry]] | None = None,
    skipped: Iterable[str] | None = None,
    write_cache: bool = True,
    vault: Vault | None = None,
) -> Snapshot:
    """Load the vault; with `previous`, unchanged notes keep their parse, analysis and postings.

    With `cache_dir` and no `previous` (a start), notes and analyses come from the persistent
    cache when the files still match it, and the cache is rewritten if anything was read again:
    here, or with `write_cache=False` by `save_cache` later (the snapshot's `unsaved_in`).
    `scanned`: the vault's files as `vault_files(settings)` walked them (see `load_vault`), and
    `skipped` the symbolic links it left out.
    `vault`: with `previous`, the vault to serve instead of one loaded (`Vault.as_found`).
    """
    with _collector_paused(reload=previous is not None):
        return _build_snapshot(settings, previous, cache_dir, scanned, skipped, write_cache, vault)


def save_cache(snapshot: Snapshot) -> bool:
    """Write the index cache that `build_snapshot(write_cache=False)` left to write; False when
    there was nothing to write or it could not be written (logged: the cache is optional).
    Safe beside requests and reloads: it only reads the snapshot, which never changes."""
    if snapshot.unsaved_in is None:
        return False
    return _cache.save(snapshot.unsaved_in, snapshot.vault, snapshot.analyses, snapshot.indexes)


def _went(snapshot: Snapshot) -> frozenset[str]:
    """The paths of the hidden notes that went, the visitor's index still masks (`gone_paths`)."""
    key = snapshot.index("visitor").hidden_key
    return gone_paths(snapshot.vault, key[0]) if key is not None else frozenset()


def _gone_of(snapshot: Snapshot, before: tuple[Snapshot, _gone.Gone] | None = None) -> _gone.Gone:
    """The hidden notes that went and the names no note holds now, which the visitor's index
    masks, the hidden notes there with the names a link finds them by, and the pages hidden
    notes are published at, there or no longer (`index.former_pages`): what `store.gone`
    keeps for a start without the index cache (one there may go while no daemon runs).
    `before`: a previous snapshot and what this said of it, whose unchanged notes' names are
    taken as they were (1,500 private notes' names took 8 ms of every reload)."""
    key = snapshot.index("visitor").hidden_key
    if key is None:
        return _gone.Gone()
    went, notes = _went(snapshot), snapshot.vault.notes
    old_notes, old_names = (before[0].vault.notes, dict(before[1].hidden)) if before is not None else ({}, {})

    def names(path: str) -> tuple[str, ...]:
        note = notes.get(path)
        if note is None:
            return ()  # left out by --exclude, or not loaded: known by its path alone
        if old_notes.get(path) is note and path in old_names:
            return old_names[path]
        return LinkResolver.names(note)

    public = snapshot.index("visitor").notes
    pages = key[4].union(hidden_pages(notes, public))
    return _gone.Gone(went, key[2], frozenset((path, names(path)) for path in key[0] - went), pages)


def _keep_gone(settings: Settings, snapshot: Snapshot, gone: _gone.Gone) -> None:
    """Write `gone` (what `_gone_of` says of the snapshot) if the file holds something else;
    not for a vault with no note (a drive not mounted), which would forget them all."""
    if snapshot.vault.notes:
        _gone.keep(_gone.default_path(settings.vault_dir), gone, settings.vault_dir)


def vault_options(settings: Settings) -> VaultOptions:
    url_map = tuple(sorted({fold_type(kind): template for kind, template in settings.url_map.items()}.items()))
    return VaultOptions(exclude=settings.exclude, default_public=settings.default_visibility == "public", url_map=url_map, time_zone=settings.time_zone)


def vault_files(settings: Settings, skipped: list[str] | None = None) -> Iterator[tuple[str, os.DirEntry]]:
    """The vault's note files, walked one at a time, as `build_snapshot` would walk them;
    `skipped` receives the symbolic links left out (`walk_markdown`)."""
    return walk_markdown(settings.vault_dir, vault_options(settings), skipped)


def _build_snapshot(settings: Settings, previous: Snapshot | None, cache_dir, scanned, skipped, write_cache: bool, given: Vault | None = None) -> Snapshot:
    options = vault_options(settings)
    seed_vault, seed_analyses = (previous.vault, previous.analyses) if previous else (None, {})
    seed_indexes = previous.indexes if previous is not None and previous.vault.options == options else None
    saved = False  # whether the cache holds this vault as the files now say
    remembered = _gone.Gone()
    if previous is None:
        kept = _gone.default_path(settings.vault_dir)
        remembered = _gone.load(kept)  # the cache may not know them (--no-cache)
        if not remembered and not kept.exists():  # a vault moved or renamed: its state folder is another
            remembered = _gone.of_a_vault_moved(kept, settings.vault_dir)
        cached = _cache.load(Path(cache_dir), Path(settings.vault_dir), options) if cache_dir is not None else None
        saved = cached is not None
        if cached is None:  # a cold load: on every core when it pays
            if scanned is None:
                skipped = []
                scanned = vault_files(settings, skipped)
            scanned = list(scanned)  # one walk: shares, then check
            cached = load_shares(settings.vault_dir, options, scanned=scanned)
        if cached is not None:  # a snapshot as saved, or as the workers made it: evolved below like a reload's
            seed_vault = Vault(root=Path(settings.vault_dir), notes=cached.notes, options=options)
            if cached.links is not None:
                seed_vault.resolver, seed_vault.edges, seed_vault.broken_links, seed_vault.duplicate_slugs = cached.links
            seed_analyses = cached.analyses
            if cached.postings is not None:
                graph = (cached.graphs, seed_vault.edges) if cached.graphs is not None else None
                pub_body, pub_fields, priv_body, priv_fields = cached.postings
                seed_indexes = Index.from_postings(
                    cached.notes,
                    cached.analyses,
                    pub_body,
                    pub_fields,
                    priv_body,
                    priv_fields,
                    graph=graph,
                    masks=cached.masks,
                    resolver=seed_vault.resolver,
                    boilerplate=cached.boilerplate,
                )
    vault = (
        given if given is not None and previous is not None else load_vault(settings.vault_dir, options, previous=seed_vault, scanned=scanned, skipped=skipped)
    )
    old_notes = seed_vault.notes if seed_vault is not None and seed_vault.options == options else {}
    fresh = 0
    changed = vault.changed_since(old_notes) if old_notes else None
    if changed is not None:  # load_vault says which notes are new objects
        analyses = dict(seed_analyses)
        for path in seed_analyses.keys() - vault.notes.keys():
            del analyses[path]
        touched: Iterable[str] = changed
    else:
        analyses = {}
        touched = vault.notes.keys()
    for path in touched:
        note = vault.notes[path]
        old = old_notes.get(path)
        if old is not None and (old is note or old.digest == note.digest):  # same bytes, same analysis
            analyses[path] = seed_analyses[path]
        else:
            analyses[path] = analyse_note(note)
            fresh += 1
    if seed_indexes is not None:
        indexes = Index.evolve_all(seed_indexes, vault, analyses, remembered.was_hidden(), remembered.was_named(), remembered.pages)
    else:  # other options: the paths of the hidden notes that went stay hidden all the same
        key = previous.index("visitor").hidden_key if previous is not None else None
        was_hidden, was_named, was_paged = (key[0], key[2], key[4]) if key is not None else (remembered.was_hidden(), remembered.was_named(), remembered.pages)
        indexes = Index.build_all(vault, analyses, was_hidden, was_named, previous.vault.notes if previous is not None else None, was_paged)
    snapshot = Snapshot(vault, analyses, indexes)
    # a file read again for its new stamps, its bytes the same (`touch`, a sync tool), is no
    # parse, but the cache must learn its stamps: every later start read it again, and checked
    # a public one for hidden paths (the masks' tables made: 0.16-0.19 s at 10,000 notes)
    if previous is None and cache_dir is not None and (not saved or fresh or changed or len(old_notes) != len(vault.notes)):
        snapshot = replace(snapshot, unsaved_in=Path(cache_dir))
        if write_cache:
            save_cache(snapshot)
            snapshot = replace(snapshot, unsaved_in=None)
    return snapshot


def _usable(text: str) -> str:
    """The LLM's answer, or AnswerUnused when nothing is left of it (reasoning that never closed,
    citations of notes it was not shown) or it is not in French (answer.language): the visitor
    gets the notes' own sentences instead, on /ask and /ask/stream alike, and it is not kept for
    reuse. An answer cut before its first word is as empty."""
    if not text.strip().removesuffix(CUT_ANSWER.strip()).strip():
        raise AnswerUnused("la réponse du modèle était vide une fois retirés son raisonnement et ses citations de notes inconnues")
    if (why := why_not_french(text)) is not None:
        raise AnswerUnused(why)
    return text


#: What a visitor's /health says of meaning that failed, the cause (a host, a model) the owner's alone.
EMBEDDING_FAILED = "le calcul du sens a échoué : les notes ne sont classées que par leurs mots jusqu'à ce qu'il réussisse de nouveau"
QUESTION_UNEMBEDDED = "le sens de la dernière question n'a pas pu être calculé : seuls ses mots l'ont classée"

#: What `grasbot check` and `grasbot serve` say of a vault whose notes are all private.
NO_PUBLIC_NOTE = (
    "aucune note n'est publique : les visiteurs n'ont pas de réponse (marquez des notes `visibility: public`, ou lancez avec --default-visibility public)"
)
#: The same, under `--default-visibility public`: the advice to launch with it would send the author in a circle.
NO_PUBLIC_NOTE_ALL_KEPT = (
    "aucune note n'est publique : le frontmatter de chacune la garde privée (`visibility`, `publish`, `draft`, `private`, `hidden`…) "
    "et les visiteurs n'ont pas de réponse"
)


#: The same to a visitor's /health (a monitor without the token): the fact, no advice, which
#: would say how the daemon was launched (its default visibility is the owner's to read).
NO_PUBLIC_NOTE_FOR_VISITORS = "aucune note n'est publique : les visiteurs n'ont pas de réponse"


def no_public_note(vault: Vault) -> str:
    """What is said of a vault none of whose notes is public: under --default-visibility public,
    that their front matter keeps them private, not to launch with the option it was launched with."""
    return NO_PUBLIC_NOTE_ALL_KEPT if vault.options.default_public else NO_PUBLIC_NOTE


def vault_wide_warnings(vault: Vault, public: int) -> list[str]:
    """What `grasbot check` and `grasbot serve` say of the vault as a whole. A folder with no
    note at all is a wrong --vault, not notes to mark public; so is a folder that is not an
    Obsidian vault (no `.obsidian/`) but holds one: its notes are read under that vault's folder
    name, paths the plugin (which names a note from inside its vault) and `{path}` URLs never
    match, and the alias suggestions say nothing."""
    if not vault.notes and not vault.errors:
        return [
            f"aucune note trouvée dans {vault.root} : il ne contient aucune note Markdown (.md) hors des dossiers cachés ou exclus ; "
            "--vault est-il bien le dossier de votre coffre ?"
        ]
    said = [] if public else [no_public_note(vault)]
    if not (vault.root / ".obsidian").is_dir():
        folders: set[str] = set()
        for path in vault.notes:  # each note's folders, as strings: Path.parents of 10,000 notes took 0.16 s of a start
            folder = path.rpartition("/")[0]
            while folder and folder not in folders:
                folders.add(folder)
                folder = folder.rpartition("/")[0]
        for folder in sorted(f for f in folders if (vault.root / f / ".obsidian").is_dir()):
            given = shlex.quote(str(vault.root / folder))
            said.append(
                f"{folder}/ est un coffre Obsidian (il contient .obsidian/), mais pas {vault.root} : ses notes sont lues sous "
                f"{folder}/…, des chemins que le plugin Obsidian et les URL en {{path}} ne nomment pas ; lancez avec --vault {given} si c'est votre coffre"
            )
    return said


def check_question(q: object, *, max_chars: int = MAX_QUESTION) -> str:
    if not isinstance(q, str):
        raise QueryError("`q` : la question doit être un texte")
    q = q.strip()
    if not q:
        raise QueryError("`q` : la question est vide")
    if not any(map(str.isalnum, q)) and not any(unicodedata.category(c)[0] in "PS" for c in q):
        # zero-width spaces, a byte-order mark, NULs: answered, then logged as an empty line
        raise QueryError("`q` : la question est vide (elle ne contient que des caractères invisibles)")
    if len(q) > max_chars:
        raise QueryError(f"`q` : doit compter au plus {max_chars} caractères (longueur reçue : {len(q)})")
    if not q.isascii():
        try:
            q.encode("utf-8")  # the LLM's client, the question log and every print need it
        except UnicodeEncodeError:
            raise QueryError(
                "`q` : doit être du texte Unicode (elle contient une moitié de paire de substitution UTF-16 seule, comme \\ud800, "
                "ou un octet qui n'est pas de l'UTF-8)"
            ) from None
    return q


def check_audience(audience: object) -> str:
    if audience not in AUDIENCES:
        raise QueryError(f"`audience` : doit être 'visitor' ou 'owner', pas {audience!r}")
    return audience


class GrasBot:
    def __init__(self, settings: Settings, snapshot: Snapshot, llm: LLMClient | None = None):
        self.settings = settings
        self._snapshot = snapshot
        self._unsaved = snapshot if snapshot.unsaved_in is not None else None  # see write_cache
        self._gone = _gone_of(snapshot)  # what `store.gone` keeps of the snapshot served
        self.question_log: QuestionLog | None = None  # set by the daemon; visitors' questions go there
        self._reload_lock = threading.Lock()
        clients = (
            [llm]
            if llm is not None
            else [
                LLMClient(
                    host,
                    model=settings.llm_model,
                    timeout=settings.llm_timeout,
                    temperature=settings.llm_temperature,
                    keep_alive=settings.llm_keep_alive,
                    max_tokens=settings.llm_max_tokens,
                    deadline=settings.llm_deadline,
                    context=settings.llm_context,
                )
                for host in settings.ollama_hosts
            ]
        )
        self.llm = clients[0]
        self.admission = Admission(clients, slots=settings.llm_slots, queue_limit=settings.llm_queue, max_wait=settings.llm_max_wait)
        self.answers = AnswerCache(settings.answer_cache, shape=answer_shape(settings))
        self.flights = Flights()  # answers being written, shared by whoever asks the same meanwhile
        self.lane = SearchLane()
        self.answers.forget(snapshot)
        self.embedder = make_embedder(settings.semantic, model=settings.embed_model, hosts=settings.ollama_hosts, timeout=min(settings.llm_timeout, 30.0))
        self._question_error: str | None = None  # why Ollama did not embed the last question it was asked
        self._questions_paused_until = 0.0  # monotonic time before which no question is sent to it
        self._embedding = threading.Lock()  # one embedding pass at a time
        self._embed_stop = threading.Event()
        self._embed_wake = threading.Event()  # set by a reload or a stop: a worker waiting to try again goes now
        self._generation = 0  # bumped by every pass that is not in the background
        self._embed_thread: threading.Thread | None = None
        self._worker_lock = threading.Lock()
        self._embed_again = False
        self._progress = Progress(0, 0)  # the visitor's notes' texts: what a visitor's /health says
        self._whole = Progress(0, 0)  # every note's texts: what the owner's says
        self._texts = NoteTexts()
        self._embed_error: str | None = None
        self._partial: Snapshot | None = None  # its semantic indexes lack the texts not embedded yet (zero vectors)
        self._unembedded: tuple[str, ...] = ()  # notes with a text the model would not embed: ranked by words
        self._spelled: dict[str, Spelling] = {}  # each audience's last Spelling built: the next version reuses its notes'
        self._spelling_wanted = False  # its worker was started (a daemon's): a reload builds, or starts it again
        self._spelling_lock = threading.Lock()
        self._spelling_thread: threading.Thread | None = None
        # the index cache's folder, None without it; the spelling vectors kept there (`store.spellings`)
        # are read by the first build, written by the worker once it settled a version the file does not hold
        self._cache_folder = default_cache_dir(settings.vault_dir, settings.cache_dir) if settings.index_cache else None
        self._spelling_read = False
        self._spelling_written: dict | None = None  # what the file holds of its notes (`spellings.state`), None: unknown
        if self.embedder is not None:
            self._vectors: VectorStore | None = VectorStore(self.embedder.model, self._cache_folder)
            asker: Embedder = self.embedder
            if isinstance(self.embedder, OllamaEmbedder):  # a question waits QUESTION_WAIT in all, the notes' batches their full timeout
                asker = self.embedder.within(min(settings.llm_timeout, QUESTION_WAIT))
            self._questions: QuestionVectors | None = QuestionVectors(asker)
            # the owner's questions' vectors, apart: a visitor's search that found its question's
            # kept (quicker, `took_ms`) would tell that the owner had asked it
            self._owner_questions: QuestionVectors | None = QuestionVectors(asker)
        else:
            self._vectors = self._questions = self._owner_questions = None

    @classmethod
    def open(cls, settings: Settings, llm: LLMClient | None = None, *, write_cache: bool = True) -> GrasBot:
        """Load the vault (blocking: call it from a worker thread inside a server), through the
        index cache when it is on, so a restart on an unchanged vault parses nothing.
        `write_cache=False`: a cache to rewrite is left to `write_cache()`, so that a daemon
        serves first (at 10,000 notes the write takes 0.7-1 s, after a cold start or after a
        restart that found one note changed)."""
        cache_dir = default_cache_dir(settings.vault_dir, settings.cache_dir) if settings.index_cache else None
        snapshot = build_snapshot(settings, cache_dir=cache_dir, write_cache=write_cache)
        bot = cls(settings, snapshot, llm)
        _keep_gone(settings, snapshot, bot._gone)  # a full read may have dropped some, a cold one found them
        return bot

    def write_cache(self) -> bool:
        """Write the index cache `open(write_cache=False)` left to write, once (blocking: call
        it from a worker thread); False when there is nothing to write or it failed (logged).
        A reload since then does not matter: a start checks every file against the cache. One
        waits for the write, though: a reload that saw a hidden note go writes the cache too
        (the gone path, which only the cache keeps), and this older snapshot, written after it,
        lost it: a restart showed the path typed in a public note."""
        with self._reload_lock:  # the snapshot to write, taken once: a second call finds it done
            snapshot, self._unsaved = self._unsaved, None
            return snapshot is not None and save_cache(snapshot)

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    def vault_size(self, audience: str = "visitor") -> int:
        return len(self._snapshot.index(check_audience(audience)))

    def next_turn(self) -> float | None:
        """When a note's publish or expiry date next changes whether visitors may read it (the
        earliest `Note.turns`, a POSIX time), or None: a reload then reads that note again."""
        return min((note.turns for note in self._snapshot.vault.notes.values() if note.turns is not None), default=None)

    # ---- retrieval

    def search(
        self,
        q: str,
        *,
        top_k: int | None = None,
        audience: str = "visitor",
        history: Sequence[dict] | None = None,
        snapshot: Snapshot | None = None,
        lexical: bool = False,
        owner: bool = False,
    ) -> SearchResult:
        """`lexical`: without the semantic signal even when it is ready (`grasbot eval` shows both).
        `owner`: the owner asks (a preview of a visitor's search too): the results and question
        vectors it keeps are the owner's own, which no visitor's search reads (a visitor timing
        a search, `took_ms`, read whether the owner had asked the question); it reads the
        results kept for visitors too."""
        q, audience = check_question(q), check_audience(audience)
        snapshot = snapshot or self._snapshot
        top_k = top_k or self.settings.search_top_k
        unembedded: list[EmbeddingError] = []  # the question's embedding failed: words alone ranked it
        questions = self._question_vectors(owner)
        semantic_index = None if lexical else snapshot.semantic.get(audience)  # read once: the worker may replace it meanwhile
        semantic = None if semantic_index is None else self._semantic(snapshot, semantic_index, unembedded, questions)
        index = snapshot.index(audience)
        # a lexical result is not kept once meaning is ready, nor one without spelling once it is built
        key = (audience, q, top_k, semantic is not None, ready(index) is not None)
        kept = snapshot.owner_searches if owner else snapshot.searches
        if not history:  # a follow-up's results depend on the conversation: never kept
            started = time.perf_counter()
            known = kept.get(key)
            if known is None and owner:
                known = snapshot.searches.get(key)
            if known is not None:
                return replace(known, took_ms=(time.perf_counter() - started) * 1000)
        result = search(
            q,
            index,
            top_k=top_k,
            min_score=self.settings.search_min_score,
            url_for=self.settings.url_for,
            history=history,
            semantic=semantic,
        )
        result = self._with_passages(q, result, index, history, semantic_index, questions)
        if unembedded:
            result = replace(result, unembedded=True)
        # meaning dropped meanwhile, some of the audience's notes not embedded yet, or the
        # question not embedded: not kept as if meaning ranked it (a visitor's search is kept
        # once the visitor's notes are, while the private notes' failed: `_meaning_meanwhile`)
        if not history and not unembedded and (semantic_index is None or (semantic_index.waiting is None and audience in snapshot.semantic)):
            if len(kept) >= SEARCH_CACHE:
                with contextlib.suppress(KeyError, RuntimeError, StopIteration):
                    del kept[next(iter(kept))]  # the oldest
            kept[key] = result
        return result

    def _question_vectors(self, owner: bool) -> QuestionVectors | None:
        """Where the caller's questions' vectors are kept: the owner's apart from the visitors'."""
        return self._owner_questions if owner else self._questions

    def _semantic(self, snapshot: Snapshot, index: SemanticIndex, failed: list[EmbeddingError], questions: QuestionVectors | None) -> Semantic:
        """The notes of `index` (an audience's, of this version) close in meaning to a text, the
        text's vector kept in `questions` (the caller's); a question the backend cannot embed is
        answered lexically (logged, its error put in `failed`)."""

        def close(text: str):
            try:
                return index.match(text, SEMANTIC_MIN_Z, SEMANTIC_NOTES, questions)
            except ForeignVectors as exc:
                self._embed_again_all(snapshot, exc)
                failed.append(exc)  # ranked by words: not kept as meaning's, which the worker may bring back before the search ends
                return {}
            except EmbeddingError as exc:
                log.warning("une question a été classée sans le signal du sens : %s", exc)
                failed.append(exc)
                return {}

        return close

    def _embed_again_all(self, snapshot: Snapshot, why: ForeignVectors) -> None:
        """The cache gave another model's vectors (every one of them: there was nothing to
        embed): lexical until the worker has embedded every note again, and saved them."""
        if snapshot.semantic and self._vectors is not None:
            log.warning("le cache des vecteurs de sens %s : %s ; le sens de chaque note est calculé à nouveau", self._vectors.path, why)
            snapshot.semantic.clear()
            self._vectors.clear()
            self.start_embedding()

    async def prepare_question(self, q: str, history: Sequence[dict] | None = None, *, owner: bool = False) -> None:
        """Embed the question (and its follow-up rewriting) off the event loop when the backend
        waits on the network, so the search that follows finds the vectors ready (it never
        waits on Ollama itself). Once Ollama failed to, questions go without meaning for
        QUESTION_PAUSE seconds: each visitor would wait QUESTION_WAIT on a silent server. One it
        answered with an error (bge-m3's NaN for this text) is that question's alone: no pause.
        `owner`: the owner asks, as `search`'s; its outcome is not the visitors' `question_error`
        (a pause it finds Ollama down for is everyone's)."""
        questions = self._question_vectors(owner)
        if questions is None or not self.embedder or not self.embedder.remote or not self._snapshot.semantic:
            return
        rewritten = with_history(q.strip(), history)
        for text in (q.strip(), *([rewritten] if rewritten is not None else [])):
            if questions.known(text):
                continue
            if time.monotonic() < self._questions_paused_until:
                return
            try:
                await asyncio.to_thread(questions.vector, text)
            except Refused as exc:
                if not owner:
                    self._question_error = str(exc)
                log.warning("une question a été cherchée sans le sens : %s", exc)
                return
            except EmbeddingError as exc:
                if not owner:
                    self._question_error = str(exc)
                self._questions_paused_until = time.monotonic() + QUESTION_PAUSE
                log.warning("les questions sont cherchées sans le sens pendant %d s : %s", QUESTION_PAUSE, exc)
                return
            if not owner:
                self._question_error = None

    # ---- meaning

    def warm_spelling(self, snapshot: Snapshot | None = None, *, wait: bool = True) -> None:
        """Build the snapshot's spelling vectors (`retrieval.spelling`) for both audiences, if
        not yet, reusing the last ones built for every note whose text is the same (blocking: a
        worker thread's, a reload's, or the command line's); searches give no spelling points
        until then, and do not wait. `wait=False`: nothing while another build runs (a reload
        during the start's build, seconds at 10,000 notes: the worker builds its version next)."""
        snapshot = snapshot or self._snapshot
        if not self._spelling_lock.acquire(blocking=wait):
            return
        try:
            if not self._spelling_read:
                self._spelling_read = True
                self._read_spellings(snapshot)
            fresh = self.spelling_outgrown()  # built anew, on a vocabulary of the words the notes hold now
            for audience in AUDIENCES:
                last = None if fresh else self._spelled.get(audience)
                visitor = ready(snapshot.index("visitor")) if audience == "owner" else None
                self._spelled[audience] = warm(snapshot.index(audience), [s for s in (last, visitor) if s is not None])
        finally:
            self._spelling_lock.release()

    def _read_spellings(self, snapshot: Snapshot) -> None:
        """Take the spelling vectors the file beside the index cache holds (`store.spellings`): an
        audience whose notes all read as they did gets them as they are, with their lengths
        (under a second at 10,000 notes, against some ten for a build); the others reuse the
        words of the notes that read the same, as a reload does. Under `_spelling_lock`."""
        if self._cache_folder is None:
            return
        started = time.perf_counter()
        loaded = _spellings.load(self._cache_folder, snapshot.vault.root, snapshot.vault.options, snapshot.indexes)
        if loaded is None:
            return
        for audience, spelling in loaded.spellings.items():
            if audience in loaded.exact:
                adopt(snapshot.index(audience), spelling)
            self._spelled[audience] = spelling
        if loaded.exact == set(AUDIENCES):
            self._spelling_written = _spellings.state(snapshot.indexes)  # the file holds this version already
        took = time.perf_counter() - started
        log.info("vecteurs d'orthographe lus en %.2f s (gardés tels quels : %s)", took, " et ".join(sorted(loaded.exact)) or "aucun public")

    def spelling_outgrown(self) -> bool:
        """Whether the words edits left in the spelling vocabulary (`Vocabulary.outgrown`) call
        for a build anew: a worker's, seconds at 10,000 notes, which a reload does not wait for."""
        last = self._spelled.get("owner")
        return last is not None and last.vocabulary.outgrown()

    def start_spelling(self) -> None:
        """Build the spelling vectors in a worker thread, once the daemon listens, then every
        note's length (`Spelling.keep_norms`): at 10,000 notes it takes seconds, which a start
        to listening must not wait for. The worker goes on until the version serving has them
        (a reload came meanwhile)."""
        with self._worker_lock:
            self._spelling_wanted = True
            if self._spelling_thread is not None:
                return
            self._spelling_thread = threading.Thread(target=self._spelling_worker, name="grasbot-spelling", daemon=True)
            self._spelling_thread.start()

    def settle_spelling(self, snapshot: Snapshot | None = None) -> None:
        """`warm_spelling`, then every note's length (`Spelling.keep_norms`), every declared
        question's idf sum (`scoring.declared_information`) and every note's readable title
        (`Index.readable_title`), which questions would pay for: what the worker leaves,
        blocking (the worker's, the command line's)."""
        snapshot = snapshot or self._snapshot
        self.warm_spelling(snapshot)
        for audience in AUDIENCES:
            index = snapshot.index(audience)
            built = ready(index)
            if built is not None:
                built.keep_norms()
            declared_information(index)
            for path in index.notes:
                index.readable_title(path)

    def _spelling_worker(self) -> None:
        """Settle the serving version until it is the one settled. Whether to end is decided
        under the worker lock: a reload that swaps in after that finds the worker gone and
        starts another; one that swapped in before is seen, and built. A build that fails
        (memory short) ends the worker only when its version is still serving: a reload that
        came meanwhile left its own build to this worker, which tries it."""
        import_once("numpy")  # beside the embedding worker's and the server's (`grasbot._imports`)
        try:
            while True:
                snapshot = self._snapshot
                try:
                    self.settle_spelling(snapshot)
                    # written at a start, and after each reload that changed what it holds: a
                    # restart then reads it whole (a note made private left its words in the
                    # visitor's part until then, the changed notes were read and every length
                    # measured again)
                    if self._cache_folder is not None and snapshot is self._snapshot:
                        wanted = _spellings.state(snapshot.indexes)
                        if wanted != self._spelling_written:
                            started = time.perf_counter()
                            if _spellings.save(self._cache_folder, snapshot.vault.root, snapshot.vault.options, snapshot.indexes):
                                self._spelling_written = wanted
                                log.info("vecteurs d'orthographe écrits en %.2f s", time.perf_counter() - started)
                except Exception:  # noqa: BLE001 - a worker must not die silently; words and meaning still rank
                    log.exception("les vecteurs d'orthographe n'ont pas pu être construits : les recherches s'en passent")
                with self._worker_lock:
                    if self._snapshot is snapshot:  # else a reload came meanwhile
                        self._spelling_thread = None
                        return
        finally:
            with self._worker_lock:
                if self._spelling_thread is threading.current_thread():  # not the one a reload started since
                    self._spelling_thread = None

    def _backend_failing(self) -> bool:
        """Whether the backend failed lately: a pass (the worker waits to try again) or a question."""
        return self._embed_error is not None or time.monotonic() < self._questions_paused_until

    def embed_pending(
        self,
        snapshot: Snapshot | None = None,
        *,
        background: bool = False,
        at_most: int | None = None,
        within: float | None = None,
        announce: Callable[[int], None] | None = None,
    ) -> bool:
        """Embed what the snapshot's notes still lack, then give it its semantic indexes (blocking:
        a worker thread's, or the command line's). False when there is no semantic backend, the
        pass was stopped, the backend failed (the reason is in `semantic_status`), or more than
        `at_most` texts are missing (nothing is embedded then: a reload leaves them to the worker).
        `background`: the pass gives way (stops between two batches) to a reload or a stop.
        `within`: seconds the pass may take, another pass's batch waited for included; past
        them, or when Ollama fails, it stops and says nothing (what it embedded is kept): a
        reload's, which leaves the rest to the worker.
        `announce(n)`: told how many texts are to embed, before it starts, when some are.
        Called in the foreground for every note (the command line, the dev sets' runner), it
        builds the spelling vectors first (`settle_spelling`), meaning or none: they rank as a
        daemon does once its workers are done."""
        snapshot = snapshot or self._snapshot
        if not background and at_most is None:
            self.settle_spelling(snapshot)
        if self.embedder is None or self._vectors is None or self._questions is None:
            return False
        store, embedder = self._vectors, self.embedder
        if not background:
            self._generation += 1  # a background pass for an older version gives way
        generation = self._generation
        if within is not None and isinstance(embedder, OllamaEmbedder):
            embedder = embedder.until(time.monotonic() + within)
        with _holding(self._embedding, -1 if within is None else within) as held:  # a pass's batch on a slow Ollama
            if not held:
                return False
            texts = self._texts.of(snapshot.indexes)
            todo = missing(texts, store)
            # what a visitor's /health says: the visitor's notes' texts alone (how many the
            # private notes have is no visitor's to know), embedded first so that their count
            # moves first; the owner's counts every text. Counted of this version even when its
            # texts are left to the worker (a note made private leaves the count as the reload returns)
            public = {texts.keys[t] for p in snapshot.index("visitor").notes for t in (*texts.by_path[p], *texts.asked[p])}
            every = len(texts.keys)  # one key a text
            shown = sum(1 for key, _ in todo if key in public)
            if background and generation != self._generation:
                return False  # a newer version is counted already
            self._progress = Progress(len(public) - shown, len(public))
            self._whole = Progress(every - len(todo), every)
            if at_most is not None and len(todo) > at_most:
                self._meaning_meanwhile(snapshot, texts)
                return False
            todo.sort(key=lambda item: item[0] not in public)
            if todo and announce is not None:
                announce(len(todo))
            embedded = 0  # this pass's, so far

            def progressed(done: int) -> None:
                nonlocal embedded
                embedded = done
                if background and (self._embed_stop.is_set() or generation != self._generation):
                    raise _Superseded  # an older version's count never overwrites the newer's
                self._progress = Progress(len(public) - shown + min(done, shown), len(public))
                self._whole = Progress(every - len(todo) + done, every)

            def refused(text: str, why: EmbeddingError) -> None:
                named = ", ".join(map(printable, texts.holding({text})))
                log.warning(
                    "%s : le sens d'un de ses textes n'a pas été calculé, il est classé par ses mots seuls jusqu'au prochain démarrage : %s",
                    named,
                    printable(str(why)),
                )

            try:
                if background and shown < len(todo):
                    # the worker's pass with private texts to embed: the visitor's first, in batches
                    # of their own, then their index; visitors get meaning once their notes are
                    # embedded, not once every private note is (which they could time)
                    embed_into(store, embedder, todo[:shown], progressed, refused)
                    self._visitors_first(snapshot, texts, public)
                    embed_into(store, embedder, todo[shown:], lambda done: progressed(shown + done), refused)
                else:
                    embed_into(store, embedder, todo, progressed, refused)
                if todo:  # the cache's vectors of another width were dropped: embed those too
                    embed_into(store, embedder, missing(texts, store), refused=refused)
                embedder.load()  # here, off the event loop, even when every vector came from the cache
                snapshot.semantic.update(semantic_indexes(snapshot.indexes, texts, store, self._questions))
                if self._partial is snapshot:
                    self._partial = None
                store.trim(texts.keys.values())  # the matrices are built: a version no note holds may go
            except _Superseded:  # what was embedded is kept: a stop at minute 4 of 5 loses nothing
                if embedded:
                    store.save(texts.keys.values())
                return False
            except EmbeddingError as exc:
                if embedded:  # Ollama went down halfway: a restart embeds only the rest
                    store.save(texts.keys.values())
                if not (background and self._embed_stop.is_set()):
                    self._meaning_meanwhile(snapshot, texts)
                if background and self._embed_stop.is_set():
                    return False  # a call the stop did not wait for: the daemon is gone, nothing to say
                if within is not None:  # slow, or down: the worker tries with its full timeout, and says
                    log.info("le sens des notes d'un rechargement est laissé au calcul en tâche de fond : %s", exc)
                    return False
                if str(exc) != self._embed_error:  # not again each EMBED_RETRY while Ollama stays down
                    log.warning("signal du sens coupé, nouvel essai dans %d s : %s", EMBED_RETRY, exc)
                self._embed_error = str(exc)
                return False
            self._embed_error = None
            if store.refused:
                refusals = {text for text, key in texts.keys.items() if key in store.refused}
                self._unembedded = tuple(texts.holding(refusals))
            else:
                self._unembedded = ()
            if todo or store.holds_others(texts.keys.values()):  # a note gone: its vectors leave the file too
                store.save(texts.keys.values())
            return True

    def _visitors_first(self, snapshot: Snapshot, texts: Texts, public: set[bytes]) -> None:
        """Give the visitor's notes their semantic index while the worker still embeds the
        private notes' texts (the owner's index comes once every text is, and the visitor's is
        then read from it, as `semantic_indexes` shares them): what a visitor reads of meaning,
        `ready` in /health and how a search ranks, moves with the visitor's notes alone."""
        store = self._vectors
        if store is None or self._questions is None or not all(key in store for key in public):
            return  # another model's vectors of another width were dropped meanwhile: the pass's end builds both
        visitor = {"visitor": snapshot.index("visitor")}
        snapshot.semantic.update(semantic_indexes(visitor, texts, store, self._questions))

    def _meaning_meanwhile(self, snapshot: Snapshot, texts: Texts) -> None:
        """Give a version whose edited notes are not embedded yet (Ollama down or slow at a
        reload, many notes changed) the vectors its other notes have, the edited ones ranked by
        their words until the worker embeds them: one edit took meaning from the whole vault
        until then, however long Ollama stayed down. Not for a version that has none yet."""
        store = self._vectors
        if "owner" in snapshot.semantic or store is None or self._questions is None:
            return  # every audience has meaning (the visitor's alone: `_visitors_first`, the owner's to come)
        held = [vector for vector in map(store.get, texts.keys.values()) if vector is not None]
        if not held:
            return
        self._partial = snapshot
        snapshot.semantic.update(semantic_indexes(snapshot.indexes, texts, store, self._questions, absent=held[0][0].size))

    def start_embedding(self) -> None:
        """Embed in a worker thread, while the daemon answers lexically; `stop_embedding` ends it.
        Called again while the worker runs (a reload), the worker goes round once more. The
        spelling vectors' worker starts here too, with or without meaning."""
        self.start_spelling()
        if self.embedder is None:
            return
        with self._worker_lock:
            self._embed_again = True
            self._embed_wake.set()
            if self._embed_thread is not None:
                return
            self._embed_stop.clear()
            self._embed_thread = threading.Thread(target=self._embed_worker, name="grasbot-embed", daemon=True)
            self._embed_thread.start()

    def _embed_worker(self) -> None:
        """Embed until this version is, going round again for a newer one; a pass the backend
        failed (Ollama started after the daemon, down for a while, a model not pulled yet) is
        tried again every EMBED_RETRY seconds, what it had embedded kept: it stayed lexical
        until a reload or a restart."""
        import_once("numpy", *(("ollama",) if self.embedder is not None and self.embedder.remote else ()))  # `grasbot._imports`
        while True:
            with self._worker_lock:
                if not self._embed_again or self._embed_stop.is_set():
                    self._embed_thread = None
                    return
                self._embed_again = False
                self._embed_wake.clear()
            failed = False
            try:
                failed = not self.embed_pending(self._snapshot, background=True) and self._embed_error is not None
            except Exception:  # noqa: BLE001 - a worker must not die silently
                log.exception("le calcul du sens a échoué")
                self._embed_error = "le calcul du sens a échoué (voir le journal du démon)"
            if failed:
                self._embed_wake.wait(EMBED_RETRY)
            with self._worker_lock:
                if ("owner" not in self._snapshot.semantic or self._partial is self._snapshot) and (failed or not self._embed_error):
                    self._embed_again = True  # given way to a newer version, or failed: go again

    def stop_embedding(self) -> None:
        """End the worker, which gives way between two batches. An Ollama call is waited for
        STOP_WAIT at most (a stop or a restart waited its full timeout, the site down): what the
        pass embedded is saved here then, the call left to end with the process."""
        self._embed_stop.set()
        self._embed_wake.set()
        self._generation += 1
        with self._worker_lock:
            thread = self._embed_thread
        if thread is None:
            return
        remote = self.embedder is not None and self.embedder.remote
        thread.join(STOP_WAIT if remote else None)
        if thread.is_alive() and self._vectors is not None:
            log.info("arrêt sans attendre la réponse d'Ollama à un calcul du sens ; ce qui a été calculé est gardé")
            self._vectors.save(self._texts.of(self._snapshot.indexes).keys.values())

    def semantic_status(self, owner: bool = True) -> dict:
        """What /health says of the semantic signal: a visitor's view speaks of the visitor's
        notes alone (`ready` once they are embedded, their texts counted: nothing there moves
        with the private notes), the owner's of the whole vault, and says whether visitors have
        meaning already (`visitors_ready`: their notes are embedded first). A visitor reads that
        embedding failed, not why: the backend's error may name the embedding server's address
        or model. The owner reads too how long visitors' questions still go without meaning
        (Ollama down or silent), null when they do not: an older daemon said nothing then, and a
        plugin could not tell it from one that does not say."""
        if self.embedder is None:
            return {"backend": "off", "ready": False}
        semantic = self._snapshot.semantic
        progress = self._whole if owner else self._progress
        status = {
            "backend": self.settings.semantic,
            "model": self.embedder.model,
            "ready": ("owner" if owner else "visitor") in semantic,
            "embedded": progress.embedded,
            "total": progress.total,
        }
        if owner:
            status["visitors_ready"] = "visitor" in semantic
        # a visitor whose notes are all embedded and indexed has meaning: a failure then is the
        # private notes' (`_visitors_first`), untrue of a visitor's search and no visitor's to know
        if self._embed_error and (owner or not (status["ready"] and progress.embedded >= progress.total)):
            status["error"] = self._embed_error if owner else EMBEDDING_FAILED
        if owner and self._unembedded and status["ready"]:  # paths: private notes' among them
            status["unembedded"] = list(self._unembedded)
        asking = bool(semantic) if owner else status["ready"]  # questions are embedded: the visitors' at least
        if self._question_error and asking:
            status["question_error"] = self._question_error if owner else QUESTION_UNEMBEDDED
        paused = self._questions_paused_until - time.monotonic()
        if owner and asking:  # tells a down Ollama from one question it refused
            status["questions_paused_for"] = round(max(paused, 0.1), 1) if paused > 0 else None
        return status

    def _with_passages(
        self, q: str, result: SearchResult, index: Index, history: Sequence[dict] | None, sections: SemanticIndex | None, questions: QuestionVectors | None
    ) -> SearchResult:
        """`result` with each source's passages, those the prompt quotes (none when the
        question is not grounded: the prompt then quotes nothing). `sections`: the audience's
        semantic index, when meaning is ready, so a long note's passages are chosen by their
        meaning too (the question as search embedded it, in the caller's `questions`: a
        follow-up with its conversation)."""
        if not result.grounded:
            return result
        meaning = None
        if sections is not None:
            text = with_history(q, history) or q

            def meaning(path: str):
                try:
                    return sections.section_cosines(path, text, questions)
                except EmbeddingError:
                    return None

        passages = choose_passages(
            q,
            [(s.path, s.url) for s in result.sources],
            index,
            budget=self.settings.prompt_budget,
            anchors=self.settings.anchors,
            history=history or (),
            meaning=meaning,
        )
        return replace(result, sources=tuple(replace(s, passages=tuple(p for p in passages if p.path == s.path)) for s in result.sources), context=passages)

    def record(self, q: str, result: SearchResult, history: Sequence[dict] | None = None) -> None:
        """Log a visitor's question for alias suggestions; never raises. `submit` only queues
        the rows (microseconds): the log's writer thread writes them in batches."""
        if self.question_log is not None:
            self.question_log.submit(q.strip(), result, followup=bool(earlier_questions(history)))

    # ---- answering

    async def _prepare(self, q: str, history: Sequence[dict] | None, audience: str, record: bool, owner: bool):
        await self.prepare_question(q, history, owner=owner)  # a remote embedder's wait, outside the lane
        async with self.lane.turn():
            snapshot = self._snapshot
            spelled = ready(snapshot.index(audience)) is not None  # before: a search may find it built, never unbuilt
            result = self.search(q, audience=audience, history=history, snapshot=snapshot, owner=owner)
        if record and audience == "visitor":
            self.record(q, result, history)
        index = snapshot.index(audience)
        # Only what this audience may read reaches the LLM or the fallback: the passages are
        # the audience's readable text (links to notes outside it lose their target's name).
        prompt = build_prompt(
            q.strip(), result.context, grounded=result.grounded, history=history or (), room=self.settings.prompt_room, pages=self.settings.site_pages
        )
        if prompt.dropped:  # the owner sees from the log that conversations outgrow the model's window
            log.info(
                "conversation coupée pour tenir dans LLM_CONTEXT (%d tokens) : ses %d plus anciens tours laissés de côté",
                self.settings.llm_context,
                prompt.dropped,
            )
        # reuse: first questions only (a follow-up's answer depends on the conversation)
        held = snapshot.semantic.get(audience)
        meaning = not result.unembedded and held is not None and held.waiting is None  # every note it reads embedded
        key = None if history else self.answers.key(q, audience, (meaning, spelled))
        return result, index, prompt, snapshot, key

    def _payload(self, result: SearchResult, response: str, model: str | None, error: str | None, busy: bool = False) -> dict:
        payload = {
            "response": response,
            "sources": [s.to_dict() for s in result.sources],
            "grounded": result.grounded,
            "model": model,
            "vault_size": result.vault_size,
            "busy": busy,
            "reused": False,
        }
        if error is not None:
            payload["llm_error"] = error
        return payload

    async def answer(
        self,
        q: str,
        *,
        history: Sequence[dict] | None = None,
        audience: str = "visitor",
        record: bool = False,
        owner: bool = False,
    ) -> dict:
        """The seed's response: never raises for an LLM failure, answers from the notes instead.
        `record`: a visitor's question (not the owner previewing one) goes to the question log.
        `owner`: the owner asks, and takes the owner's slot (answer.admission)."""
        result, index, prompt, snapshot, key = await self._prepare(q, history, audience, record, owner)
        kept = self.answers.get(snapshot, key, owner=owner) if key is not None else None
        joined = None
        try:
            if kept is not None:
                if not owner:  # its turn, then as late as its writing came: a visitor given it at once knew it had been asked
                    async for _ in self.admission.turn():
                        pass
                    await waited(kept.payload["response"], kept.pace)
                    self._check_current(snapshot, result, audience)  # a reload meanwhile took a note it quotes: as a written one
                return {**kept.payload, "reused": True}
            joined = self._flight(prompt, snapshot, key, owner)
            if joined is not None:
                said = "".join([piece async for piece in joined.reader if isinstance(piece, str)]).strip()
            else:
                said = await self.admission.generate(prompt.messages, owner=owner)
            self._check_current(snapshot, result, audience)
            text = _usable(keep_known_citations(said, prompt.notes, prompt.addresses))
        except (Busy, LLMError) as exc:
            return await self._from_current_notes(q, result, index, snapshot, history, audience, owner, exc)
        return self._written(result, text, snapshot, key, owner, joined)

    async def answer_events(
        self,
        q: str,
        *,
        history: Sequence[dict] | None = None,
        audience: str = "visitor",
        record: bool = False,
        owner: bool = False,
    ) -> AsyncGenerator[tuple[str, dict], None]:
        """`sources` first (after a `queue` `{position}` when other questions are being searched
        ahead of this one), then `queue` `{position}` while the question waits for a slot, then
        `token`s as the LLM writes, then `done` with the whole payload. A reused answer is
        replayed in the same shape, one being written for the same question read from its
        first piece (answer.reuse.Flights); a busy one is `done` at once.

        If the LLM fails, even halfway, `done` carries the extractive answer and `llm_error`.
        """
        if self.lane.waiting:  # others' questions are searched first: say where this one stands
            yield "queue", {"position": self.lane.waiting + 1}
        result, index, prompt, snapshot, key = await self._prepare(q, history, audience, record, owner)
        kept = self.answers.get(snapshot, key, owner=owner) if key is not None else None
        if kept is not None:
            yield "sources", {"sources": kept.payload["sources"], "grounded": kept.payload["grounded"]}
            if owner:  # the owner's preview, at once
                for text in replay_pieces(kept.payload["response"]):
                    yield "token", {"text": text}
                yield "done", {**kept.payload, "reused": True}
                return
            shown = CitationFilter(prompt.notes, prompt.addresses)  # what its writing showed: the same tokens, the same pauses
            checked = snapshot
            try:
                async with contextlib.aclosing(self.admission.turn()) as places:
                    async for place in places:
                        yield "queue", {"position": place.position}
                async with contextlib.aclosing(replayed(kept.payload["response"], kept.pace)) as replay:
                    async for part in replay:
                        # a reload since that took a note it quotes: seconds of its replay, as of a writing, reached its visitor
                        checked = self._check_current(snapshot, result, audience, checked)
                        if visible := shown.feed(part):
                            yield "token", {"text": visible}
                self._check_current(snapshot, result, audience, checked)
            except (Busy, LLMError) as exc:  # as a written one would be
                yield "done", await self._from_current_notes(q, result, index, snapshot, history, audience, owner, exc)
                return
            if visible := shown.finish():
                yield "token", {"text": visible}
            yield "done", {**kept.payload, "reused": True}
            return
        yield "sources", {"sources": [s.to_dict() for s in result.sources], "grounded": result.grounded}
        pieces: list[str] = []
        shown = CitationFilter(prompt.notes, prompt.addresses)  # the tokens say what `done` will: no slug nor address it drops
        checked = snapshot  # the vault version the answer was last found to quote as it reads
        joined = self._flight(prompt, snapshot, key, owner)
        source = joined.reader if joined is not None else self.admission.stream(prompt.messages, owner=owner)
        try:
            async with contextlib.aclosing(source) as items:
                async for piece in items:
                    if not isinstance(piece, str):
                        if isinstance(piece, Position):
                            yield "queue", {"position": piece.position}
                        continue  # Granted: its slot held
                    checked = self._check_current(snapshot, result, audience, checked)  # before any word of it is shown
                    pieces.append(piece)
                    if visible := shown.feed(piece):
                        yield "token", {"text": visible}
            self._check_current(snapshot, result, audience, checked)
            if visible := shown.finish():
                yield "token", {"text": visible}
            text = _usable(keep_known_citations("".join(pieces).strip(), prompt.notes, prompt.addresses))
        except (Busy, LLMError) as exc:
            yield "done", await self._from_current_notes(q, result, index, snapshot, history, audience, owner, exc)
            return
        yield "done", self._written(result, text, snapshot, key, owner, joined)

    def _flight(self, prompt, snapshot: Snapshot, key: tuple | None, owner: bool) -> _Joined | None:
        """A first question's answer, shared with whoever asks it meanwhile (answer.reuse.Flights):
        the flight, whether another visitor's question started it, and this question's reader of
        it (a visitor who joined it waits their own turn, then is given it paced). None when it
        is not shared: a follow-up (`key` None), or reuse off."""
        if key is None or self.answers.size <= 0:
            return None
        asker = "owner" if owner else key[1]  # what /health counts it under
        flight, started = self.flights.join((key, owner), snapshot, lambda: self.admission.stream(prompt.messages, owner=owner), audience=asker)
        return _Joined(flight, not started, flight.follow(None if started or owner else self.admission.turn()))

    def _check_current(self, snapshot: Snapshot, result: SearchResult, audience: str, checked: Snapshot | None = None) -> Snapshot:
        """Raise _Outdated when a reload since `snapshot` took a note from the audience (made
        private, excluded, deleted) or changed one the answer quotes: a question that waited
        for a slot (LLM_MAX_WAIT) while the owner reloaded was written after the reload from
        the old passages, and the note made private reached its visitor. Returns the vault
        version checked, which a stream gives back as `checked`: each of its pieces then costs
        an identity test until the next reload, not a look at every note."""
        current = self._snapshot
        if current is snapshot or current is checked:
            return current
        before, now = snapshot.index(audience).notes, current.index(audience).notes
        if before.keys() <= now.keys() and all((note := now.get(p.path)) is not None and note.digest == before[p.path].digest for p in result.context):
            return current
        raise _Outdated(f"{RELOADED} et une note qu'elle cite a changé ou n'est plus lisible : réponse tirée des notes de la nouvelle version")

    async def _from_current_notes(
        self, q: str, result: SearchResult, index: Index, snapshot: Snapshot, history: Sequence[dict] | None, audience: str, owner: bool, why: Exception
    ) -> dict:
        """`_from_notes`, from the vault served now when a reload since `snapshot` changed what the
        answer would quote (`_check_current`): searched again there, not logged again."""
        try:
            self._check_current(snapshot, result, audience)
        except _Outdated:
            result, index, *_ = await self._prepare(q, history, audience, False, owner)
        return self._from_notes(q, result, index, history, why)

    def _from_notes(self, q: str, result: SearchResult, index: Index, history: Sequence[dict] | None, why: Exception) -> dict:
        """The extractive answer: generation was full (Busy: `busy`, and it says so), or the
        LLM failed (`llm_error`). Its sources' passages are those it quotes, as a written
        answer's are those the model read: the chat's « basé sur N notes » and its cards."""
        busy = isinstance(why, Busy)
        if busy:  # the access log says « busy »; which limit, only this says (an owner tunes LLM_QUEUE, LLM_MAX_WAIT)
            log.info("réponse tirée des notes, sans le modèle : %s", why)
        unused = isinstance(why, AnswerUnused)  # it answered: in English, or nothing left to show
        said = extract(q, result.context, index, grounded=result.grounded, history=history or (), busy=busy, unused=unused, pages=self.settings.site_pages)
        quoted = replace(result, sources=tuple(replace(s, passages=tuple(p for p in s.passages if p in said.quoted)) for s in result.sources))
        return self._payload(quoted, said.text, None, None if busy else str(why), busy=busy)

    def _written(self, result: SearchResult, text: str, snapshot: Snapshot, key: tuple | None, owner: bool, joined: _Joined | None) -> dict:
        """The model's answer, kept for reuse when it answers a first question (among the
        owner's answers when the owner asked), with the pace its flight was written at.
        `joined` (`_flight`): shared, it was being written for another visitor asking the
        same (`reused`, as a kept one)."""
        payload = self._payload(result, text, self.settings.llm_model, None)
        if key is not None:
            self.answers.put(snapshot, key, payload, owner=owner, pace=joined.flight.pace if joined is not None else AT_ONCE)
        return {**payload, "reused": True} if joined is not None and joined.shared else payload

    # ---- the vault's life

    def reload(
        self, scanned: Iterable[tuple[str, os.DirEntry]] | None = None, skipped: Iterable[str] | None = None, *, known_only: bool = False
    ) -> ReloadReport:
        """Re-read what changed on disk and swap it in; on failure the old vault keeps serving.
        `scanned`: the files as `vault_files` walked them, if the caller walked them, and
        `skipped` the symbolic links it left out.
        `known_only`: no folder listed but those of --exclude, the served notes as their own
        files and dates say now (`Vault.as_found`: none made public), what a reload that failed still applies
        (`server.methods.reload_vault`), logged; nothing when nothing changed. With it, `skipped`
        the links its failed walk left out, which paths into a folder of --exclude it masks."""
        started = time.perf_counter()
        with self._reload_lock:
            old = self._snapshot
            given = old.vault.as_found(skipped or ()) if known_only else None
            if given is old.vault:
                return ReloadReport(len(old.vault.notes), 0, 0, 0, (), (time.perf_counter() - started) * 1000)
            new = build_snapshot(self.settings, old, scanned=scanned, skipped=skipped, vault=given)
            if old.vault.notes and not new.vault.notes and not new.vault.errors:
                # a drive not mounted, a sync that emptied the folder: a site that answered
                # from N notes would answer from none, and say nothing
                raise VaultError(
                    f"{self.settings.vault_dir} ne contient plus aucune note (il en contenait {len(old.vault.notes)}) : son disque est-il monté ? "
                    "Le coffre précédent reste servi ; redémarrez le démon pour servir un coffre vide"
                )
            if old.vault.notes and not new.vault.notes:
                # every note unreadable at once (a backup restored as another user, a failing
                # disk): not an author's edit, and a site that answered would answer from none
                first = new.vault.errors[0]
                raise VaultError(
                    f"{self.settings.vault_dir} ne contient plus aucune note lisible (il en contenait {len(old.vault.notes)} ; "
                    f"{len(new.vault.errors)} n'ont pas pu être lues, la première {printable(first.path)} : {printable(first.message)}) : "
                    "corrigez-les, puis rechargez. "
                    "Le coffre précédent reste servi"
                )
            if self._spelled and not self.spelling_outgrown():  # the notes that read the same keep theirs: a few edits cost little
                try:
                    self.warm_spelling(new, wait=False)
                except Exception:  # noqa: BLE001 - one signal among others: the edits are served all the same
                    log.exception(
                        "les vecteurs d'orthographe de la nouvelle version n'ont pas pu être construits : "
                        "la tâche de fond réessaie, les recherches s'en passent en attendant"
                    )
            # a few edited notes: embedded before the swap, so meaning never drops out. Ollama is
            # given INLINE_WAIT, and nothing when it failed lately (the worker's retry, woken
            # below, embeds them): each batch waited its full timeout, the new notes unserved
            # meanwhile. The bundled encoder, quick, is tried again here when it failed.
            if self.embedder is not None and self.embedder.remote:
                inline = self.embed_pending(new, at_most=0 if self._backend_failing() else EMBED_INLINE, within=INLINE_WAIT)
            else:
                self._embed_error = None
                inline = self.embed_pending(new, at_most=EMBED_INLINE)
            self._snapshot = new
            self.answers.forget(new)
            if known_only:
                log.warning(
                    "le coffre n'a pas pu être relu ; appliqué d'après les fichiers des notes déjà chargées (seuls les dossiers exclus listés) : "
                    "%d notes retirées, %d changées ; notes lisibles par les visiteurs : %d → %d",
                    len(old.vault.notes.keys() - new.vault.notes.keys()),
                    len(new.vault.changed_since(old.vault.notes) or ()),
                    len(old.index("visitor")),
                    len(new.index("visitor")),
                )
            gone = _gone_of(new, (old, self._gone))
            if gone != self._gone:
                _keep_gone(self.settings, new, gone)
            self._gone = gone
            if self.settings.index_cache and _went(new) - _went(old):
                # a start knows the hidden notes that went from the cache alone, which only a start
                # wrote: a private note made and deleted since showed its typed path after a restart
                self._unsaved = None  # an older snapshot left to write would lose it
                save_cache(replace(new, unsaved_in=self._cache_folder))
        if not inline and self.embedder is not None:
            self.start_embedding()  # a backend that failed again is tried again there
        if self._spelled or self._spelling_wanted:  # a first build that failed is tried again
            self.start_spelling()  # the new version's lengths (`keep_norms`), off the reload's path
        before, after = old.vault.notes, new.vault.notes
        return ReloadReport(
            vault_size=len(after),
            added=sum(1 for p in after if p not in before),
            changed=sum(1 for p, n in after.items() if p in before and before[p] is not n and before[p].digest != n.digest),
            removed=sum(1 for p in before if p not in after),
            errors=tuple(new.vault.errors),
            took_ms=(time.perf_counter() - started) * 1000,
        )

    async def health(self, owner: bool = False) -> dict:
        """`owner`: the owner's view, which names the model hosts and counts the answers kept
        and reused, the generations in flight and the queue. A visitor's has none of these
        counts: they moved, or not, when a visitor asked a question, telling whether another
        visitor had asked it before (`Admission.view`)."""
        hosts = [h.llm for h in self.admission.hosts]
        generation = self.admission.view(owner=owner)
        if owner:
            kept, hits = self.answers.counts(None)
            generation["reused"] = {"kept": kept, "hits": hits, "shared": self.flights.shared(None)}
        public = self.vault_size("visitor")
        # what the start's log and `grasbot check` say of the vault as a whole: a monitor reading
        # /health saw « ok » while every visitor was answered from no note; a visitor's view
        # names no folder (the owner's may: a --vault that holds the vault) nor how the daemon was launched
        warnings = vault_wide_warnings(self._snapshot.vault, public) if owner else [] if public else [NO_PUBLIC_NOTE_FOR_VISITORS]
        return {
            "status": "ok",
            "vault_size": public,
            **({"vault_warnings": warnings} if warnings else {}),
            "model": self.settings.llm_model,
            "llm_reachable": any(await asyncio.gather(*(llm.reachable() for llm in hosts))),
            "semantic": self.semantic_status(owner),
            "spelling": {"ready": ready(self._snapshot.index("owner" if owner else "visitor")) is not None},
            "generation": generation,
            **({"question_log": self.question_log.status()} if owner and self.question_log is not None else {}),
            # what a note without `visibility` is: the plugin says whether visitors see one
            **({"default_visibility": self.settings.default_visibility} if owner else {}),
            # where a time without its offset is read: the plugin reads a note's dates as the daemon does
            **({"time_zone": self.settings.time_zone} if owner else {}),
            "version": __version__,
        }

    async def aclose(self) -> None:
        await asyncio.to_thread(self.stop_embedding)
        for host in self.admission.hosts:
            await host.llm.aclose()


def answer_shape(settings: Settings) -> tuple:
    """The settings an answer depends on, beside the question, audience and vault version."""
    return (
        settings.llm_model,
        settings.llm_temperature,
        settings.llm_max_tokens,
        settings.llm_context,
        settings.search_top_k,
        settings.search_min_score,
        settings.prompt_budget,
        settings.anchors,
        tuple(sorted(settings.url_map.items())),
        settings.site_pages,
        settings.semantic,
        settings.embed_model,
        settings.default_visibility,
        settings.time_zone,
        settings.exclude,
    )


@contextlib.contextmanager
def _holding(lock: threading.Lock, timeout: float) -> Iterator[bool]:
    """`lock` held for the block if it could be taken within `timeout` seconds (-1: however long)."""
    if not lock.acquire(timeout=timeout):
        yield False
        return
    try:
        yield True
    finally:
        lock.release()


class _Outdated(AnswerUnused):
    """A reload swapped in a vault that no longer reads as the answer being written quotes it:
    the model answered, but its answer is not shown (the notes' extract is, from the new vault)."""


class _Superseded(Exception):
    """An embedding pass stopped: the daemon stops, or a newer vault version replaced it."""
