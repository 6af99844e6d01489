"""The searchable form of a vault, one per audience.

A visitor's index is built from public notes only: a private note is not hidden at query
time, it is simply absent — from the scores, the BM25 statistics, the graph and the counts.
Each note is analysed once (`analyse_note`), and the result is shared by both audiences and
reused by a reload for every note whose bytes did not change.
"""

from __future__ import annotations

import bisect
import functools
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, cast

from .analysis import Terms, body_counts, tokens
from .boilerplate import EMPTY, Boilerplate
from .links import rewrite_links
from .markdown import code_in
from .mentions import Mentions
from .postings import LazyTable, Postings, Union
from .sections import Sections, cut_note
from .vault import LinkResolver, Note, Vault

Labeled = tuple[tuple[str, Terms], ...]  # (the author's text, its stems), empty stems left out


# field_terms()'s codes: each field's (shift, mask) in one int a stem; a field held once (a bit)
# or counted (how many of the note's tags hold the stem, at most the mask)
FIELD_LAYOUT: dict[str, tuple[int, int]] = {
    "alias": (0, 1),
    "title": (1, 1),  # the title or the file name
    "answers": (2, 1),
    "tag": (3, 127),
    "domain": (10, 127),
}

# Okapi BM25 with Lucene's idf, which stays positive and monotonic on a 41-note vault.
K1 = 1.2
B = 0.75
# A note longer than LONG_NOTE stems is scored by its best PASSAGE-long run: a 1 MB course
# holds every word of every question somewhere, and as one document it would outrank the
# short note that is about the question (held-out hit@1 0.775 → 0.875, see README). Mixing in
# the whole text's BM25 was measured: half of each ranked a documentation vault better
# (lexical tune hit@1 0.295 → 0.386) but halved a long note's points, so that a course that
# answers in one section no longer grounded the answer; added to the passage's, it ranked
# long notes above the short ones that are about the question (notes-publiques 0.932 → 0.841).
PASSAGE = 400
LONG_NOTE = 4 * PASSAGE
_PASSAGES = object()  # Index._memo's key for the long notes' passages
_AVG_PASSAGE = object()
_LONG = object()  # ... and for the set of notes longer than LONG_NOTE
_LENGTHS = object()  # ... and for each body part's lengths, boilerplate left out
_HELD = object()  # ... and for the boilerplate's stems of this index's notes
_BOILERPLATE_TERMS = object()  # ... and for every stem of them
_DROPPED = object()  # ... and for {term: how many notes hold it only in boilerplate lines}
_NORMS = object()  # ... and for each note's length normalisation
_NUMBERED_NORMS = object()  # ... and for the same, by note number (`Postings.numbering`)
_VOCABULARY = object()  # ... and for every term of the index, sorted
_MENTIONS = object()  # ... and for the typed paths of the notes outside the audience
_FIELD_HITS = object()  # (_FIELD_HITS, term): the term's FieldHits
_STEM_TEXT = object()  # (_STEM_TEXT, path): the note's stems in order, as one string (stem_text)
_AVG_NOTE = object()  # ... and for the mean length of a note, in stems
_TITLES = object()  # ... and for {path: its title as the audience reads it} (readable_title)
_MEMO_TERMS = 4_096  # terms' impacts and field hits kept at most, then forgotten all at once


class FieldHits(NamedTuple):
    """The notes holding one stem in their frontmatter fields, field by field (field_terms()'s
    codes): what search's bounds read of them, made once per index."""

    paths: Iterable[str]  # every one of them
    held: Mapping[str, Mapping[str, int]]  # FIELD_LAYOUT's name -> {path: 1, or how many of its tags}


def length_norm(length: int, avg: float) -> float:
    """BM25's length normalisation of a text of `length` stems, texts averaging `avg`."""
    return K1 * (1.0 - B + B * length / avg)


Inverted = dict[str, list[tuple[int, int]]]


def inverted(counts: Iterable[Mapping[str, int]]) -> Inverted:
    """{term: [(text number, its count in that text)]} of several texts' stem counts (a long
    note's passages or cuts): `bm25_each` then reads only the texts that hold a question's
    terms, not every text for every term (a 500-character question of common words, 60
    terms, read 1.3 M counts through a long course's cuts: 150 ms a question)."""
    out: Inverted = {}
    for number, found in enumerate(counts):
        for term, tf in found.items():
            out.setdefault(term, []).append((number, tf))
    return out


def bm25_each(postings: Inverted, norms: Sequence[float], weights: Mapping[str, float]) -> list[float]:
    """Each text's BM25 for `weights` ({term: its weight}), texts normalised by `norms`: each
    text's terms summed in the order of `weights`, as a text-at-a-time loop sums them."""
    values = [0.0] * len(norms)
    for term, weight in weights.items():
        for number, tf in postings.get(term, ()):
            values[number] += weight * tf * (K1 + 1.0) / (tf + norms[number])
    return values


@dataclass(frozen=True)
class NoteAnalysis:
    """A note's fields as stems. Depends on the note alone, never on the rest of the vault."""

    aliases: Labeled
    title: Terms
    slug: Terms
    answers: Labeled
    tags: Labeled
    domains: Labeled
    sections: Sections  # the note cut along its headings (`sections`): what a prompt quotes
    body: Mapping[str, int]  # stem -> count

    def field_terms(self) -> dict[str, int]:
        """Every stem of the frontmatter fields: a note that has none of a question's stems here
        or in its body cannot score, which is what lets search skip it.

        Each stem's value says which fields hold it (FIELD_LAYOUT), for search's upper bound
        on a note's points: a bit for a field held at all, a count for tags and domains.
        """
        codes: dict[str, int] = {}
        get = codes.get
        fields: tuple[tuple[str, Iterable[Terms]], ...] = (
            ("alias", (seq for _, seq in self.aliases)),
            ("title", (self.title, self.slug)),
            ("answers", (seq for _, seq in self.answers)),
            ("tag", (seq for _, seq in self.tags)),
            ("domain", (seq for _, seq in self.domains)),
        )
        for name, values in fields:
            shift, mask = FIELD_LAYOUT[name]
            for seq in values:
                for term in set(seq):
                    code = get(term, 0)
                    if mask == 1:
                        codes[term] = code | 1 << shift
                    elif (code >> shift) & mask < mask:
                        codes[term] = code + (1 << shift)
                    else:
                        codes[term] = code
        return codes


def _labeled(values: tuple[str, ...], rel: str = "", hidden: Mentions | None = None) -> Labeled:
    pairs = ((v, tokens(v)) for v in (field_text(v, rel, hidden) for v in values))
    return tuple((v, t) for v, t in pairs if t)


def _hide_targets(target: str) -> bool:
    return False


def field_text(text: str, rel: str = "", hidden: Mentions | None = None) -> str:
    """A title or a frontmatter field as search reads and shows it to everyone: a link in it may
    name a private note, as one in a body may (`indexable_body`), so only the labels its author
    wrote are kept; `hidden`: the typed paths it must not hold either (`Index.hidden`).
    `Index.readable_field` is what an audience reads of it."""
    text = rewrite_links(text, _hide_targets, rel)
    return text if hidden is None else hidden.masked(text)


_URL = re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.\S+")


def indexable_body(note: Note, hidden: Mentions | None = None) -> str:
    """The body as search reads it. A bare [[link]] shows its target's name, but that name may
    be a private note's: only the labels an author wrote are kept, so no audience can find a
    note by it. Addresses go too: « https://… » in every other note would make « HTTP » a word
    that means nothing."""
    return indexable_text(note.body, note.path, hidden)


def indexable_text(text: str, rel: str = "", hidden: Mentions | None = None) -> str:
    """`indexable_body` of any piece of a note's text (a passage, a heading); `rel`: the note's
    path, against which relative Markdown links resolve. Links are rewritten before the
    addresses go: an address in a link's title (`[x](prive/Zorglub.md "https://a.b")`) took
    its closing `")` with it, and the private note's path stayed as text, in the index.
    `hidden`: the typed paths masked too (`Index.hidden`), before the addresses go, as a
    `file://` address is one of their forms."""
    text = field_text(text, rel, hidden)
    if "://" in text or "www." in text:  # what _URL needs: a substring test spares its scan
        text = _URL.sub(" ", text)
    return text


class NoteCounts(LazyTable):
    """analyse_note(note).body, computed when first read. The index cache keeps the inverted
    index rather than every note's counts, and a start reads almost none of them: only a reload
    that changes the note, or an alias suggestion for it, does."""

    __slots__ = ("_hidden", "_note")

    def __init__(self, note: Note, hidden: Mentions | None = None) -> None:
        self._note = note
        self._hidden = hidden
        self._dict = None

    def _make(self) -> dict[str, int]:
        return body_counts_of(self._note, self._hidden)


def note_head(note: Note, hidden: Mentions | None = None) -> str:
    """What a note says it is about: its title, file name, and the words of its aliases, the
    questions it answers and its tags. They are part of the text BM25 reads, as in one flat
    field, besides the signals of their own (tune sets: +0.05 hit@1 on a curated vault,
    nothing lost on the others, where these fields are empty)."""
    return "\n".join(field_text(text, note.path, hidden) for text in (note.title, note.name, *note.aliases, *note.answers, *note.tags))


def body_counts_of(note: Note, hidden: Mentions | None = None) -> dict[str, int]:
    """A note's body counts: analyse_note's, and NoteCounts' when the cache left them out."""
    return body_counts(f"{note_head(note, hidden)}\n{indexable_body(note, hidden)}")


def _stems_counter(hidden: Mentions, masked: frozenset[str]):
    """What counts a piece of a note's text as its body is (`body_counts_of`): without the
    hidden paths in the notes `masked` (`Index.masked`)."""

    def stems_of(text: str, rel: str) -> Mapping[str, int]:
        return body_counts(indexable_text(text, rel, hidden if rel in masked else None))

    return stems_of


def note_stems(note: Note, boilerplate: Boilerplate = EMPTY, hidden: Mentions | None = None) -> tuple[Terms, Terms]:
    """The stems of the note's head and of its body, in order: the same stems as
    `body_counts_of`, but those of the vault's `boilerplate` lines."""
    return tokens(note_head(note, hidden)), tokens(indexable_text(boilerplate.strip(note.body), note.path, hidden))


def passages_of(note: Note, boilerplate: Boilerplate = EMPTY, hidden: Mentions | None = None) -> list[dict[str, int]]:
    """The note's stems (`note_stems`) cut in PASSAGE-long runs, each led by the note's head
    (what the note is about), as counts."""
    head, body = note_stems(note, boilerplate, hidden)
    return [dict(Counter(head + body[i : i + PASSAGE])) for i in range(0, max(len(body), 1), PASSAGE)]


def analyse_note(note: Note, *, lazy_body: bool = False, hidden: Mentions | None = None) -> NoteAnalysis:
    """`lazy_body`: the body counts made when first read (`NoteCounts`), as a cache loads them;
    `hidden`: the typed paths search must not read (`Index.hidden`), for a note that holds some."""
    return NoteAnalysis(
        aliases=_labeled(note.aliases, note.path, hidden),
        title=tokens(field_text(note.title, note.path, hidden)),
        slug=tokens(note.slug.replace("-", " ")),
        answers=_labeled(note.answers, note.path, hidden),
        tags=_labeled(note.tags, note.path, hidden),
        domains=_labeled(note.domains, note.path, hidden),
        sections=cut_note(note.body),
        body=NoteCounts(note, hidden) if lazy_body else body_counts_of(note, hidden),
    )


def hidden_paths(
    vault: Vault,
    public: Mapping[str, Note],
    gone: frozenset[str] = frozenset(),
    former: Mapping[str, str] | None = None,
    paged: Mapping[str, str] | None = None,
) -> Mentions:
    """The typed paths of the notes a visitor may not read (private, left out by --exclude, or not loaded),
    which no index reads either: search would otherwise find a public note by a private note's
    name typed in it, and a visitor confirm a guessed name. The owner's index shares the public
    notes' postings, so it does not read them either: the owner finds the private note itself.
    `gone`: the paths of hidden notes that went (`gone_paths`), hidden still; `former`: the
    names such notes held (`former_names`), which a link in code may still give; `paged`: the
    pages they were published at (`former_pages`)."""
    resolver, former, paged = vault.resolver, former or {}, paged or {}
    if resolver is None:
        left = vault.excluded | vault.unloaded | gone
        return Mentions(left, lambda target: LinkResolver.named(target, former), former.items(), (), paged.items(), hidden_folders(left, public))
    resolve = resolver.resolve
    hidden = resolver.paths() - public.keys() | vault.excluded | vault.unloaded | gone
    return Mentions(
        hidden,
        (lambda target: resolve(target) or LinkResolver.named(target, former)) if former else resolve,
        former.items(),
        _unpublished([page for page, _ in hidden_pages(vault.notes, public)], public),
        paged.items(),
        hidden_folders(hidden, public),
    )


def hidden_folders(hidden: Iterable[str], public: Iterable[str]) -> frozenset[str]:
    """The folders that hold notes of `hidden` and none of `public`, at any depth: a Dataview
    query names one as its notes (`FROM "prive"`, `file.folder = "prive"`), so its name is
    theirs. A folder holding a public note stays the visitor's to read of (`jardin`)."""

    def with_parents(paths: Iterable[str]) -> set[str]:
        folders: set[str] = set()
        for folder in {path.rpartition("/")[0] for path in paths}:
            while folder and folder not in folders:
                folders.add(folder)
                folder = folder.rpartition("/")[0]
        return folders

    closed = with_parents(hidden)
    return frozenset(closed - with_parents(public)) if closed else frozenset()  # no hidden note in a folder: no public path read


def _unpublished(pages: list[str], public: Mapping[str, Note]) -> list[str]:
    """`pages` but those a public note is published at too, which lead to it: its path's page,
    the page GRASBOT_URL_MAP gives it (`Note.site_page`: a public note and a private one that
    share a slug share `/portfolio/{slug}`), or its own `url:` (a Hugo front matter's `url`
    too), `permalink:` or `dg-permalink:` as written (a private draft that keeps
    the `url:` of the public note it was copied from: masked as the draft's, the public note's
    url became its path's, a page the site does not have). Not its `slug:`, which Hugo reads as
    a name in the note's folder: `slug: labo/plan` in `jardin/` is a page of its own, and a
    private note's `labo/plan/` stays masked in it. A look-up a public note: `Note.own_pages`
    of 10,000 took 0.1 s."""
    if not pages:
        return pages
    wanted = {page.lower() for page in pages}
    claimed = {page.lower() for page in pages if f"{page}.md" in public}
    for note in public.values():
        if note.url_written or note.hugo_url_written or note.permalinks_written:
            written = (note.url_written or note.hugo_url_written, *note.permalinks_written)
            claimed.update(page for value in written if value and (page := value.strip().strip("/").lower()) in wanted)
        if note.site_page and note.site_page.lower() in wanted:  # the page GRASBOT_URL_MAP gives it
            claimed.add(note.site_page.lower())
    return [page for page in pages if page.lower() not in claimed] if claimed else pages


def hidden_pages(notes: Mapping[str, Note], public: Mapping[str, Note]) -> Iterator[tuple[str, str]]:
    """(page, path) of the pages the hidden notes of `notes` publish themselves at (`Note.own_pages`)."""
    for path, note in notes.items():
        if path not in public:
            for page in note.own_pages:
                yield page, path


def gone_paths(vault: Vault, was_hidden: Iterable[str]) -> frozenset[str]:
    """The paths hidden before (`Mentions.key`, kept by the index cache) that name no note now:
    a private note deleted (Obsidian moves it to `.trash/`, which is not read), moved or renamed
    leaves its old path typed in public notes, which must not show it then. A note back at that
    path shows or not as its visibility says: made public, it is the author's choice to show it."""
    return frozenset(p for p in was_hidden if p not in vault.notes and p not in vault.excluded and p not in vault.unloaded)


def former_names(vault: Vault, before: Mapping[str, Note], was_hidden: Iterable[str], was_named: Iterable[tuple[str, str]], hidden: Mentions) -> dict[str, str]:
    """{name: path} of the names that led a link to a note hidden before (`LinkResolver.names`;
    `was_named`, kept by the index cache, and those of `before`'s notes) and lead to no note now:
    the note went or dropped that alias. A link by one, left in a public note's code, stays
    masked as a gone path does; a name a note holds now shows or not as that note's visibility
    says, and one whose note is no longer hidden (made public) goes."""
    resolve = vault.resolver.resolve if vault.resolver is not None else (lambda target: None)
    now_hidden = hidden.key[0]
    candidates = dict(was_named)
    for path in was_hidden:
        old = before.get(path)
        if old is not None and vault.notes.get(path) is not old:  # an unchanged note holds the same names
            candidates.update((name, path) for name in LinkResolver.names(old))
    return {name: path for name, path in candidates.items() if path in now_hidden and resolve(name.partition(":")[2]) is None}


def former_pages(vault: Vault, before: Mapping[str, Note], was_hidden: Iterable[str], was_paged: Iterable[tuple[str, str]], hidden: Mentions) -> dict[str, str]:
    """{page: path} of the pages a note hidden before published itself at (`hidden_pages`;
    `was_paged`, kept by the index cache and `store.gone`, and those of `before`'s notes) that no
    note publishes itself at now: the note went or changed its `permalink:`. Typed in a public
    note, one stays masked as a gone path does; one whose note is no longer hidden (made
    public) goes, and one a note holds now (its own, or its path's) shows or not as that
    note's visibility says: a hidden note's stays masked as its own, a public note's shows only
    when `_unpublished` counts it as the note's (not by its `slug:`, which kept the page
    masked while the hidden note was there: it showed once the note went)."""
    now_hidden = hidden.key[0]
    candidates = {page: path for page, path in was_paged if path in now_hidden}
    for path in was_hidden:
        old = before.get(path)
        if old is not None and path in now_hidden and vault.notes.get(path) is not old:  # an unchanged note holds the same pages
            candidates.update((page, path) for page in old.own_pages)
    if not candidates:
        return {}
    held = {page for path, note in vault.notes.items() if path in now_hidden for page in note.own_pages}
    public = {path: note for path, note in vault.notes.items() if path not in now_hidden}
    return {page: candidates[page] for page in _unpublished([page for page in candidates if page not in held], public)}


def _pages_still_typed(paged: Mapping[str, str], notes: Iterable[Note]) -> dict[str, str]:
    """The pages of `paged` some of `notes` (the masked public notes) still type: only those
    are kept, as `_still_typed` keeps paths. Read for halves of the pages, each half by the
    notes that typed some of the whole: a note that types none is read once, not once a page
    (300 pages no note typed any more, each read in 2,000 masked notes, took 17 s of a reload)."""

    def typed(pages: list[str], notes: list[Note]) -> Iterator[str]:
        mask = Mentions((), lambda target: None, pages=pages)
        notes = [note for note in notes if mentions_in(note, mask)]
        if notes and len(pages) == 1:
            yield pages[0]
        elif notes:
            yield from typed(pages[: len(pages) // 2], notes)
            yield from typed(pages[len(pages) // 2 :], notes)

    return {page: paged[page] for page in typed(sorted(paged), list(notes))}


def _still_typed(gone: frozenset[str], notes: Iterable[Note], resolver: LinkResolver | None) -> frozenset[str]:
    """The paths of `gone` that some of `notes` (the masked public notes: no other types a hidden
    path) still type: only those are kept, so the set is bounded by what the vault says, and a
    path no note types any more masks nothing when dropped."""
    resolve = resolver.resolve if resolver is not None else (lambda target: None)
    notes = list(notes)
    return frozenset(path for path in gone if any(mentions_in(note, Mentions((path,), resolve)) for note in notes))


def _names_still_typed(former: Mapping[str, str], notes: Iterable[Note]) -> dict[str, str]:
    """The names of `former` some of `notes` (every public note: a link in code is no typed path
    for search, so `masked` does not list them) still give a link by: a name no note gives any
    more masks nothing when dropped (its path typed is masked by the path)."""
    fields = ((note.body, note.title, *note.aliases, *note.answers, *note.tags, *note.domains) for note in notes)
    texts = [text for held in fields for text in held if "[[" in text or "://" in text]  # what a link in code needs
    kept = {}
    for name, path in former.items():
        path_alone = Mentions((path,), lambda target: None)
        named = Mentions((path,), functools.partial(LinkResolver.named, names={name: path}))
        if any(named.masked(text) != path_alone.masked(text) for text in texts):
            kept[name] = path
    return kept


def _read_all(
    vault: Vault, public: Mapping[str, Note], hidden: Mentions, gone: frozenset[str], former: Mapping[str, str], paged: Mapping[str, str]
) -> tuple[Mentions, frozenset[str]]:
    """Every public note read for the typed paths `hidden` masks: (what masks them, the notes
    that type some). The paths of `gone` (`gone_paths`), the names of `former`
    (`former_names`) and the pages of `paged` (`former_pages`) that no note types any more are
    dropped: they mask nothing, and the sets stay bounded by what the vault says."""
    masked = frozenset(p for p, n in public.items() if mentions_in(n, hidden))
    typed = _still_typed(gone, (public[p] for p in masked), vault.resolver) if gone else gone
    named = _names_still_typed(former, public.values()) if former else former
    pages = _pages_still_typed(paged, (public[p] for p in masked)) if paged else paged
    typed |= gone.intersection((*named.values(), *pages.values()))  # a name or page masks only while its path is hidden
    if typed != gone or named != former or pages != paged:
        hidden = hidden_paths(vault, public, typed, named, pages)  # masks as much: no public note types the others
    return hidden, masked


def mentions_in(note: Note, hidden: Mentions) -> bool:
    """Whether `hidden` masks something of the note's text or fields as search reads them
    (`field_text`): only then is its analysis made again with them masked. Read as written
    first, which most notes pass at once; a link to a hidden note is masked there, but search
    reads links without their targets already: in the benchmark's vault, whose bodies link
    private notes, 1,900 of 8,468 public notes were analysed again for nothing (a cold start
    1.5 s longer, and their counts held twice)."""
    for text in (note.body, note.title, *note.aliases, *note.answers, *note.tags, *note.domains):
        if hidden.masked(text) != text and hidden.masked(searched := field_text(text, note.path)) != searched:
            return True
    return False


def _names_moved(before: Mapping[str, Note], now: Mapping[str, Note], changed: Iterable[str], gone: Iterable[str], vault: Vault, hidden: frozenset) -> bool:
    """Whether a link may now resolve to a hidden note it did not resolve to: a hidden note's
    names changed (`LinkResolver.reads`), or a note that went or changed its names freed one that
    now leads to a hidden note. A new note only takes names another held (the shortest path
    wins), so a link in code that named a hidden note and now names the new one stays masked
    until the next full check: more masked, never less. Adding a note to 10,000, or a public
    note's YAML broken a moment (it goes from the notes), then reads no other note."""
    resolve = vault.resolver.resolve if vault.resolver is not None else (lambda target: None)
    for path in (*gone, *changed):
        old, new = before.get(path), now.get(path)
        if old is None or (new is not None and LinkResolver.reads(old) == LinkResolver.reads(new)):
            continue  # a new note, or the same names
        if new is not None and path in hidden:
            return True
        if any(resolve(name) in hidden for name in (old.path, old.name, old.slug, old.title, *old.aliases)):
            return True
    return False


@dataclass(frozen=True)
class Index:
    """Everything search needs for one audience. Immutable: a reload makes a new one."""

    audience: str
    notes: Mapping[str, Note]
    analyses: Mapping[str, NoteAnalysis]
    body: Postings | Union  # BM25 over note bodies
    fields: Postings | Union  # which notes carry a stem in their frontmatter fields
    edges: Mapping[str, tuple[tuple[str, str], ...]]  # only between notes of this audience
    backlinks: Mapping[str, tuple[tuple[str, str], ...]]
    resolver: LinkResolver | None = None
    boilerplate: Boilerplate = field(default=EMPTY, compare=False)  # lines search reads past, with what each note holds of them
    _memo: dict = field(default_factory=dict, compare=False, repr=False)  # term -> BM25 impacts
    _raw_edges: Mapping | None = field(default=None, compare=False, repr=False)  # the vault's, to spot changed links
    excluded: frozenset[str] = field(default=frozenset(), compare=False, repr=False)  # notes --exclude left out or not loaded, masked for visitors
    # the typed paths no search reads (`hidden_paths`); None: not made yet (the cache's seed)
    hidden: Mentions | None = field(default=None, compare=False, repr=False)
    masked: frozenset[str] = field(default=frozenset(), compare=False, repr=False)  # the public notes that hold some, analysed without them
    # `hidden`'s key (`Mentions.key`), what `masked` was found for: a cache's seed knows it without `hidden`
    hidden_key: tuple | None = field(default=None, compare=False, repr=False)

    def __len__(self) -> int:
        return len(self.notes)

    def readable_body(self, path: str) -> str:
        """The note's body as this audience may read it: links become words, and a link to a
        note outside the audience (a private one, for a visitor) or to no loaded note loses its
        target's name, keeping only the label its author wrote here."""
        return self.readable_text(self.notes[path].body, path)

    def readable_text(self, text: str, rel: str = "", code: Sequence[tuple[int, ...]] | None = None) -> str:
        """`readable_body` of a piece of a note (a passage, a heading); `rel`: the note's path,
        against which relative Markdown links resolve; `code`: where the piece holds code, as the
        whole note reads it (a list above the piece makes its indented lines prose), else as
        `code_in` reads the piece alone. Code reaches the reader as written, but for the path of
        a note outside the audience, typed anywhere (`mentions`), which no link syntax reads."""
        return self._mentions().masked(rewrite_links(text, self.may_read, rel, code_in(text) if code is None else code))

    def uncut(self, path: str, start: int, end: int) -> tuple[int, int]:
        """A piece `start:end` of the note at `path`'s body, widened so that no typed path this
        audience may not read crosses its ends (`Mentions.around`): `readable_text` masks a
        piece alone, and half a path is no path it knows."""
        return self._mentions().around(self.notes[path].body, start, end)

    def _mentions(self) -> Mentions:
        """What masks the typed paths of the vault's notes outside this audience, and of the notes
        --exclude left out or that could not be loaded (`excluded`): none for the owner."""
        resolver = self.resolver
        if self.audience == "visitor" and self.hidden is not None:
            return self.hidden
        if resolver is None:
            return self.derived(_MENTIONS, lambda: Mentions(self.excluded, lambda target: None))
        return self.derived(_MENTIONS, lambda: Mentions(resolver.paths() - self.notes.keys() | self.excluded, resolver.resolve))

    def hidden_in(self, path: str) -> Mentions | None:
        """What search reads of the note at `path` must leave out (`hidden_paths`): None but for
        the public notes that type a hidden note's path."""
        return self.hidden if path in self.masked else None

    def searchable_text(self, text: str, path: str) -> str:
        """`indexable_text` of a piece of the note at `path`, as this index's words were counted."""
        return indexable_text(text, path, self.hidden_in(path))

    def may_read(self, target: str) -> bool:
        """Whether a link's target is a note of this audience's (a dangling link may name an
        excluded note): only then may its name be shown."""
        resolved = self.resolver.resolve(target) if self.resolver else None
        return resolved is not None and resolved in self.notes

    def readable_field(self, text: str | None, path: str) -> str | None:
        """A title or frontmatter field of the note at `path` as this audience may read it: its
        links as `readable_text` turns a body's (a private note's name is left out); None when
        nothing is left of it."""
        if text is None:
            return None
        shown = self.readable_text(text, path)
        return text if shown == text else " ".join(shown.split()) or None

    def readable_title(self, path: str) -> str:
        """The note's title as this audience may read it (`readable_field`), or its file name;
        kept once read: a search names some 28 candidates' titles (a title reason, the sources,
        their passages), and reading one (its links, the typed paths it may not show) took 6 µs."""
        titles = self.derived(_TITLES, dict)
        title = titles.get(path)
        if title is None:
            note = self.notes[path]
            title = titles[path] = self.readable_field(note.title, path) or note.name
        return title

    def derived(self, key: object, make):
        """An index-wide value another module derives from this index (`answer.passages`' passage
        counts, search's tie-breakers), made once by `make()` and kept as long as the index (a reload makes a new
        one). `key` is an `object()` of that module's, as the index's own entries are: the
        terms' memo, when forgotten, keeps those."""
        value = self._memo.get(key)
        if value is None:
            value = self._memo[key] = make()
        return value

    def made(self, key: object):
        """What `derived` made for `key`, or None before: for a value built off a search's path
        (`spelling.warm`), which a search uses once it is there and never waits for."""
        return self._memo.get(key)

    # ---- BM25 statistics

    def idf(self, term: str) -> float:
        """How rare `term` is among this index's notes (Lucene's idf), every signal's weight for
        it: counted over the notes whose body holds it (`df`) or whose `domains` name it
        (`declared`), the more of the two. A domain is the author saying what a note is about,
        but it is no text BM25 reads (`note_head`): in the bundled vault 14 of the 43 public notes are
        `domains: [ia]` and only the map of those notes writes « intelligence artificielle », so
        a visitor's « IA » weighed as the vault's rarest word, and its declared question, its
        slug and its text brought the map first for questions about the model or the bot.
        `eval/dev_ranks.py`: hit@1 tune 764 → 765 (curated +1 / −0), test 367 → 368 (curated
        +1 / −0), hit@5 983 → 983 and 484 → 485; the other vaults declare no domains. Read as
        text instead (domains in `note_head`): curated tune +3 / −0 but hit@5 −1 (eval/JOURNAL.md)."""
        n, df = len(self.body), max(self.df(term), self.declared(term))
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def declared(self, term: str) -> int:
        """How many of this index's notes name `term` in their `domains` (a multi-word domain
        names each of its words): what `idf` counts beside the bodies. Read from the field
        codes when the term's `field_hits` are not kept: `idf` is asked of every stem of the
        declared questions a search scores, and remembering a FieldHits for each (27,000 over
        380 generated questions at 10,000 notes) filled the memo every 50 questions, which then
        forgot the question terms' impacts too. The codes alone are read (`Postings.tallies`):
        unpacked and kept, the lists of the 12,000 declared questions' stems held 4.5 MB more."""
        hits = self._memo.get((_FIELD_HITS, term))
        if hits is not None:
            return len(hits.held["domain"])
        shift, mask = FIELD_LAYOUT["domain"]
        return sum(1 for code in self.fields.tallies(term) if (code >> shift) & mask)

    def df(self, term: str) -> int:
        """How many notes' bodies hold `term`, outside boilerplate lines: what BM25 counts."""
        df = self.body.df(term)
        return df - self._dropped().get(term, 0) if self.boilerplate.held else df

    def bm25(self, terms: Iterable[str]) -> dict[str, float]:
        """Okapi BM25 of every note holding at least one of `terms`, term at a time; a note
        longer than LONG_NOTE stems scores as its best passage."""
        scores: dict[str, float] = {}
        if not len(self.body):
            return scores
        unique = sorted(set(terms))  # summed in one order whatever the process's string hashes
        for term in unique:
            impacts = self._impacts(term)
            if not scores:
                scores.update(impacts)  # 0.0 + x is x: same floats as adding one by one
                continue
            get = scores.get
            for path, value in impacts.items():
                scores[path] = get(path, 0.0) + value
        long = self._long_notes().intersection(scores)  # in C: most notes are short
        if long:
            idf = {t: self.idf(t) for t in unique}
            for path in long:
                scores[path] = self._best_passage(path, idf)
        return scores

    def scored_by_passage(self, path: str) -> bool:
        """Whether the note is longer than LONG_NOTE stems, so that `bm25` scores it as its best
        passage, where the words of its subject may be rare."""
        return path in self._long_notes()

    def impacts(self, term: str) -> Mapping[str, float]:
        """{path: the term's share of the note's BM25}, what `bm25` sums: for a caller that
        weighs the terms itself (`answer.passages`, for the notes it sends whole)."""
        return self._impacts(term)

    def avg_length(self) -> float:
        """BM25's yardstick for a long or a short text (`_avg_passage`), for `answer.passages`."""
        return self._avg_passage() if len(self.body) else 1.0

    def _body_parts(self) -> tuple[Postings, ...]:
        """The body's postings, one object or the owner's two (public notes', private notes')."""
        return self.body.parts if isinstance(self.body, Union) else (self.body,)

    def _held(self) -> Mapping[str, Mapping[str, int]]:
        """{path: the stems of its boilerplate lines} for this index's notes that hold some
        (the boilerplate's `held` covers every note of the vault, the private ones too)."""
        held = self._memo.get(_HELD)
        if held is None:
            every = self.boilerplate.held
            held = self._memo[_HELD] = every if every.keys() <= self.notes.keys() else {p: c for p, c in every.items() if p in self.notes}
        return held

    def _boilerplate_terms(self) -> frozenset[str]:
        """Every stem of some boilerplate line: the only terms whose counts need correcting."""
        terms = self._memo.get(_BOILERPLATE_TERMS)
        if terms is None:
            terms = self._memo[_BOILERPLATE_TERMS] = frozenset().union(*self._held().values())
        return terms

    def _dropped(self) -> Mapping[str, int]:
        """{term: how many of this index's notes hold it in boilerplate lines only}: their
        document frequency without the boilerplate, as if those lines were not there."""
        dropped = self._memo.get(_DROPPED)
        if dropped is None:
            dropped = self._memo[_DROPPED] = Counter()
            for path, stems in self._held().items():
                for term, times in stems.items():
                    if self.body.tf(term, path) <= times:
                        dropped[term] += 1
        return dropped

    def _lengths(self) -> list[Mapping[str, int]]:
        """Each body part's {path: length}, a note's boilerplate lines not counted."""
        lengths = self._memo.get(_LENGTHS)
        if lengths is None:
            held = self._held()
            lengths = self._memo[_LENGTHS] = [
                {p: max(n - sum(held[p].values()), 0) if p in held else n for p, n in part.lengths.items()} if held else part.lengths
                for part in self._body_parts()
            ]
        return lengths

    def _long_notes(self) -> frozenset[str]:
        long = self._memo.get(_LONG)
        if long is None:
            long = self._memo[_LONG] = frozenset(p for lengths in self._lengths() for p, n in lengths.items() if n > LONG_NOTE)
        return long

    def _avg_passage(self) -> float:
        """Mean passage length, every note cut as `passages_of` cuts it: BM25's yardstick for
        what a long or a short stretch of text is."""
        avg = self._memo.get(_AVG_PASSAGE)
        if avg is None:
            count = total = 0
            for lengths in self._lengths():
                count += sum(-(-length // PASSAGE) if length > LONG_NOTE else 1 for length in lengths.values())
                total += sum(lengths.values())
            avg = self._memo[_AVG_PASSAGE] = max(total, 1) / count
        return avg

    def _best_passage(self, path: str, idf: Mapping[str, float]) -> float:
        """The best BM25 of the note's passages for the terms of `idf` (term -> its idf)."""
        cache = self._memo.setdefault(_PASSAGES, {})
        passages = cache.get(path)
        if passages is None:  # the passages' counts, inverted, and their length normalisations, made once
            avg = self._avg_passage()
            every = passages_of(self.notes[path], self.boilerplate, self.hidden_in(path))
            passages = cache[path] = (inverted(every), [length_norm(sum(counts.values()), avg) for counts in every])
        postings, norms = passages
        return max(bm25_each(postings, norms, idf), default=0.0)

    def _norms(self) -> list[dict[str, float]]:
        """Each body part's {path: BM25's length normalisation}: made once, not once a posting."""
        norms = self._memo.get(_NORMS)
        if norms is None:
            avg = self._avg_passage()
            norms = self._memo[_NORMS] = [{path: length_norm(length, avg) for path, length in lengths.items()} for lengths in self._lengths()]
        return norms

    def _numbered_norms(self) -> list:
        """Each body part's BM25 length normalisations as a numpy array by note number (its
        `numbering`; None for a part without one): what `_impacts` reads a packed list with."""
        arrays = self._memo.get(_NUMBERED_NORMS)
        if arrays is None:
            import numpy as np

            arrays = self._memo[_NUMBERED_NORMS] = [
                None if (paths := part.numbering) is None else np.array([norms.get(p, math.nan) for p in paths], dtype=np.float64)
                for part, norms in zip(self._body_parts(), self._norms(), strict=True)
            ]
        return arrays

    def _impacts(self, term: str) -> Mapping[str, float]:
        """{path: one term's BM25 share}, computed once per index: an Index never changes. A
        list still packed is weighed in numpy, the same arithmetic in the same order (the same
        floats), its notes' paths read by number: at 10,000 generated notes, the terms first
        met by 400 questions held 1,100 notes a question."""
        impacts = self._memo.get(term)
        if impacts is None:
            idf = self.idf(term)
            impacts = {}
            held = self._held() if term in self._boilerplate_terms() else None
            for part, norms, norms_by_number in zip(self._body_parts(), self._norms(), self._numbered_norms(), strict=True):
                found = part.numbered(term) if norms_by_number is not None and not held else None
                if found is not None:
                    paths, numbers, tf = found
                    tf = tf.astype(float)
                    values = idf * tf * (K1 + 1.0) / (tf + norms_by_number[numbers])
                    impacts.update(zip(map(paths.__getitem__, numbers.tolist()), values.tolist(), strict=True))
                    continue
                counts = part.counts(term)
                if held:  # as if the boilerplate lines were not there
                    counts = {p: n for p, tf in counts.items() if (n := tf - held[p].get(term, 0) if p in held else tf) > 0}
                impacts.update({path: idf * tf * (K1 + 1.0) / (tf + norms[path]) for path, tf in counts.items()})
            self._remember(term, impacts)
        return impacts

    def stem_text(self, path: str) -> str:
        """The note's stems in order, as search reads it (its head, then its body without
        boilerplate lines), joined by spaces with one at each end: `scoring.pair_points` counts
        the question's words side by side in it with `str.count`, in C even through a 1 MB
        course. Made when a question first needs it, kept as a term's impacts are."""
        key = (_STEM_TEXT, path)
        text = self._memo.get(key)
        if text is None:
            head, body = note_stems(self.notes[path], self.boilerplate, self.hidden_in(path))
            text = f" {' '.join(head + body)} "
            self._remember(key, text)
        return text

    def note_norm(self, path: str) -> float:
        """BM25's length normalisation of the whole note against the mean note (its stems,
        boilerplate left out): what `stem_text` is counted in, where a long note's words are
        scored by passage (`bm25`)."""
        avg = self._memo.get(_AVG_NOTE)
        if avg is None:
            every = [n for lengths in self._lengths() for n in lengths.values()]
            avg = self._memo[_AVG_NOTE] = max(sum(every) / max(len(every), 1), 1.0)
        length = next((lengths[path] for lengths in self._lengths() if path in lengths), 0)
        return length_norm(length, avg)

    def field_hits(self, term: str) -> FieldHits:
        """Which notes hold `term` in which frontmatter field, computed once per index."""
        key = (_FIELD_HITS, term)
        hits = self._memo.get(key)
        if hits is None:
            codes = self.fields.counts(term)
            held: dict[str, dict[str, int]] = {name: {} for name in FIELD_LAYOUT}
            for path, code in codes.items():
                for name, (shift, mask) in FIELD_LAYOUT.items():
                    times = (code >> shift) & mask
                    if times:
                        held[name][path] = times
            hits = FieldHits(codes.keys(), held)
            self._remember(key, hits)
        return hits

    def _remember(self, key, value) -> None:
        """Keep a term's impacts or field hits; past _MEMO_TERMS of them, forget them all (the
        index-wide entries stay): a daemon hears new words for ever."""
        memo = self._memo
        if len(memo) >= _MEMO_TERMS:  # the index-wide entries (sentinel keys) stay, whatever a worker adds meanwhile
            for term in [k for k in list(memo) if type(k) is not object]:
                memo.pop(term, None)
        memo[key] = value

    def bm25_ceiling(self, terms: Iterable[str]) -> float:
        """What a note would score if it held every term infinitely often: the yardstick that
        turns a raw BM25 score into the share of the question a note covers."""
        return math.fsum(self.idf(t) * (K1 + 1.0) for t in terms)

    def candidates(self, terms: Iterable[str]) -> set[str]:
        """Notes holding at least one of `terms` in a field or in the body: the only ones that
        can score. Every other note scores 0 whatever the weights."""
        out: set[str] = set()
        for term in terms:
            out.update(self.fields.paths_with(term))
            out.update(self.body.paths_with(term))
        return out

    def holds(self, term: str) -> bool:
        """Whether some note of the index has `term`, in its body or in a field."""
        return bool(self.df(term) or self.fields.df(term))

    def completions(self, prefix: str) -> list[str]:
        """The index's terms that begin with `prefix` and are longer, in alphabetical order:
        what an abbreviated word of a question may stand for."""
        vocabulary = self._memo.get(_VOCABULARY)
        if vocabulary is None:
            vocabulary = self._memo[_VOCABULARY] = sorted({*self.body.terms(), *self.fields.terms()})
        return vocabulary[bisect.bisect_right(vocabulary, prefix) : bisect.bisect_left(vocabulary, prefix + "\U0010ffff")]

    # ---- building

    @classmethod
    def build(cls, vault: Vault, audience: str, analyses: Mapping[str, NoteAnalysis]) -> Index:
        """One audience's index, from scratch (`analyses` holds every note of the vault)."""
        return cls.build_all(vault, analyses)[audience]

    @classmethod
    def build_all(
        cls,
        vault: Vault,
        analyses: Mapping[str, NoteAnalysis],
        was_hidden: Iterable[str] = (),
        was_named: Iterable[tuple[str, str]] = (),
        before: Mapping[str, Note] | None = None,
        was_paged: Iterable[tuple[str, str]] = (),
    ) -> dict[str, Index]:
        """Both audiences' indexes, inverting the vault once: the visitor's postings hold the
        public notes only, and the owner's read them together with the private notes' own.
        `was_hidden`, `was_named`, `was_paged`: the paths hidden before (`gone_paths`), the
        names gone notes held (`former_names`) and the pages hidden notes held
        (`former_pages`), when they are known; `before`: the notes of then."""
        public = {p: n for p, n in vault.notes.items() if n.public}
        private = [p for p, n in vault.notes.items() if not n.public]
        was_hidden = frozenset(was_hidden)
        gone = gone_paths(vault, was_hidden)
        hidden = hidden_paths(vault, public, gone)
        former = former_names(vault, before or {}, was_hidden, was_named, hidden)
        paged = former_pages(vault, before or {}, was_hidden, was_paged, hidden)
        hidden, masked = _read_all(vault, public, hidden_paths(vault, public, gone, former, paged) if former or paged else hidden, gone, former, paged)
        analyses = {**analyses, **{p: analyse_note(public[p], hidden=hidden) for p in masked}}
        pub_body = Postings.from_docs({p: analyses[p].body for p in public})
        pub_fields = Postings.from_docs({p: analyses[p].field_terms() for p in public})
        priv_body = Postings.from_docs({p: analyses[p].body for p in private})
        priv_fields = Postings.from_docs({p: analyses[p].field_terms() for p in private})
        boilerplate = Boilerplate.of(vault.notes, public, _stems_counter(hidden, masked))
        return cls._pair(vault, analyses, public, (pub_body, pub_fields), (priv_body, priv_fields), None, boilerplate, hidden, masked)

    @classmethod
    def from_postings(
        cls, notes, analyses, pub_body, pub_fields, priv_body, priv_fields, graph=None, masks=None, resolver=None, boilerplate=None
    ) -> dict[str, Index]:
        """Indexes over `notes` from postings already inverted (the cache's): a seed for
        `evolve_all`. `graph`: ({audience: (edges, backlinks)}, the vault edges they were made
        from), or None and evolve_all rebuilds the graph. `masks`: (`Mentions.key` of the hidden
        notes, {path: analysis} of the public notes analysed without their paths, as the
        postings counted them), or None and evolve_all reads every public note for them;
        `resolver`: the one they were found with (the cache's); `boilerplate`: the lines the
        notes share as the cache kept them (`Boilerplate.kept`), or None and evolve_all counts them."""
        boilerplate = boilerplate if boilerplate is not None else EMPTY
        public = {p: n for p, n in notes.items() if n.public}
        graphs, raw = graph if graph is not None else ({"visitor": ({}, {}), "owner": ({}, {})}, None)
        (visitor_edges, visitor_back), (owner_edges, owner_back) = graphs["visitor"], graphs["owner"]
        hidden_key, masked_analyses = masks if masks is not None else (None, {})
        analyses = {**analyses, **masked_analyses}
        masked = frozenset(masked_analyses)
        return {
            "visitor": cls(
                "visitor",
                public,
                analyses,
                pub_body,
                pub_fields,
                visitor_edges,
                visitor_back,
                resolver,
                boilerplate,
                _raw_edges=raw,
                masked=masked,
                hidden_key=hidden_key,
            ),
            "owner": cls(
                "owner",
                notes,
                analyses,
                Union(pub_body, priv_body),
                Union(pub_fields, priv_fields),
                owner_edges,
                owner_back,
                resolver,
                boilerplate,
                _raw_edges=raw,
                masked=masked,
                hidden_key=hidden_key,
            ),
        }

    @classmethod
    def evolve_all(
        cls,
        previous: Mapping[str, Index],
        vault: Vault,
        analyses: Mapping[str, NoteAnalysis],
        was_hidden: Iterable[str] = (),
        was_named: Iterable[tuple[str, str]] = (),
        was_paged: Iterable[tuple[str, str]] = (),
    ) -> dict[str, Index]:
        """`build_all(vault, analyses)`, reusing `previous`'s postings and graph for every
        unchanged note: only the changed notes' terms and links are touched. `was_hidden`,
        `was_named`, `was_paged`: gone paths, names and pages known beside `previous`'s own (a
        start's, kept apart from the index cache), which a cold load's seed does not know at all."""
        visitor, owner = previous["visitor"], previous["owner"]
        notes = vault.notes
        gone = owner.notes.keys() - notes.keys()
        changed: Sequence[str] | None = vault.changed_since(owner.notes)  # None: not loaded against these notes
        if changed is None:
            changed = [p for p, n in notes.items() if owner.notes.get(p) is not n]
        if not gone and all(p in owner.notes and owner.notes[p].public == notes[p].public for p in changed):
            public = dict(visitor.notes)  # same notes, same visibility: only the changed ones differ
            public.update((p, notes[p]) for p in changed if notes[p].public)
        else:
            public = {p: n for p, n in notes.items() if n.public}
        fresh = set(changed)
        known = visitor.hidden_key is not None
        if visitor.hidden_key is not None:
            key = visitor.hidden_key
            was_hidden, was_named, was_paged = key[0].union(was_hidden), key[2].union(was_named), key[4].union(was_paged)
        else:  # a cold load's seed: what was hidden is only what the caller remembers
            was_hidden, was_named, was_paged = frozenset(was_hidden), frozenset(was_named), frozenset(was_paged)
        went = gone_paths(vault, was_hidden)  # hidden notes gone, theirs with them
        hidden = hidden_paths(vault, public, went)
        former = former_names(vault, owner.notes, was_hidden, was_named, hidden) if was_hidden else {}
        paged = former_pages(vault, owner.notes, was_hidden, was_paged, hidden) if was_hidden else {}
        if former or paged:
            hidden = hidden_paths(vault, public, went, former, paged)
        # and no link resolving to a hidden note it did not (its new alias may name it in an unchanged note's code)
        same_links = vault.resolver is visitor.resolver or not _names_moved(owner.notes, notes, changed, gone, vault, hidden.key[0])
        if known and hidden.key == visitor.hidden_key and same_links:  # only the changed notes may hold other paths
            if visitor.hidden is not None:
                hidden = visitor.hidden  # the same object: what was made of it (the semantic texts) still holds
            # a gone path untyped a moment (a paragraph cut, then pasted) stays: no full read drops it
            masked = visitor.masked - fresh - gone | {p for p in changed if p in public and mentions_in(public[p], hidden)}
            again: list[str] = []
        else:  # other hidden notes, or not known (a cold load's workers: masked not at all)
            hidden, masked = _read_all(vault, public, hidden, went, former, paged)
            again = [p for p in visitor.masked | masked if p in public and p not in fresh]
        kept = visitor.masked - fresh if known and not again else frozenset()
        analyses = {**analyses, **{p: visitor.analyses[p] if p in kept else analyse_note(public[p], hidden=hidden) for p in masked}}
        changed = [*changed, *again]  # their words counted again, with or without the paths
        parts = []
        # the visitor's postings are public notes' alone, the owner's a Union of (public, private)
        owner_body, owner_fields = cast(Union, owner.body), cast(Union, owner.fields)
        for old_body, old_fields, mine in (
            (cast(Postings, visitor.body), cast(Postings, visitor.fields), lambda p: p in public),
            (owner_body.parts[1], owner_fields.parts[1], lambda p: p in notes and p not in public),
        ):
            removed = [p for p in (*gone, *changed) if p in old_body and not mine(p)]
            added = [p for p in changed if mine(p)]
            parts.append(
                (
                    old_body.evolved(removed, {p: analyses[p].body for p in added}),
                    old_fields.evolved(removed, {p: analyses[p].field_terms() for p in added}),
                )
            )
        boilerplate = visitor.boilerplate.evolved(notes, visitor.notes, public, changed, gone, _stems_counter(hidden, masked))
        return cls._pair(vault, analyses, public, parts[0], parts[1], previous, boilerplate, hidden, masked)

    @classmethod
    def _pair(cls, vault, analyses, public, pub, priv, previous, boilerplate: Boilerplate, hidden: Mentions, masked: frozenset[str]) -> dict[str, Index]:
        out = {}
        for audience, notes, body, fields in (
            ("visitor", public, pub[0], pub[1]),
            ("owner", vault.notes, Union(pub[0], priv[0]), Union(pub[1], priv[1])),
        ):
            picked = dict(zip(notes, map(analyses.__getitem__, notes), strict=True))
            edges, backlinks = _graph(notes, vault, previous[audience] if previous else None)
            excluded = vault.excluded | vault.unloaded if audience == "visitor" else frozenset()  # the owner reads what they typed
            out[audience] = cls(
                audience,
                notes,
                picked,
                body,
                fields,
                edges,
                backlinks,
                vault.resolver,
                boilerplate,
                _raw_edges=vault.edges,
                excluded=excluded,
                hidden=hidden,
                masked=masked,
                hidden_key=hidden.key,
            )
        return out


Edges = Mapping[str, tuple[tuple[str, str], ...]]


def _kept(edges: tuple, notes: Mapping[str, Note]) -> tuple:
    """`edges` without those to notes outside `notes`; the same tuple when all are inside (the
    owner's graph shares the vault's tuples, and the cache writes a shared tuple once)."""
    for target, _ in edges:
        if target not in notes:
            return tuple((t, k) for t, k in edges if t in notes)
    return edges


def _graph(notes: Mapping[str, Note], vault: Vault, previous: Index | None) -> tuple[Edges, Edges]:
    """Edges between `notes` (links to notes outside them dropped) and the backlinks, each
    target's in the order of `notes`. With `previous` over the same notes, only the notes whose
    resolved links changed (`raw[p]` is a new tuple) are filtered again, and only their
    targets' backlinks are rebuilt."""
    raw = vault.edges
    if previous is None or previous._raw_edges is None or previous.notes.keys() != notes.keys():
        edges = {p: _kept(raw.get(p, ()), notes) for p in notes}
        back: dict[str, list[tuple[str, str]]] = {}
        for source, targets in edges.items():
            for target, kind in targets:
                back.setdefault(target, []).append((source, kind))
        return edges, {p: tuple(v) for p, v in back.items()}
    old_raw, old_edges = previous._raw_edges, previous.edges
    moved = []
    relinked = vault.relinked_since(old_raw)
    if relinked is not None:  # the vault says what changed
        edges = dict(old_edges)
        candidates = [p for p in relinked if p in notes]
    else:
        edges = {}
        candidates = []
        for p in notes:
            if old_raw.get(p, ()) is raw.get(p, ()):
                edges[p] = old_edges[p]
            else:
                candidates.append(p)
    for p in candidates:
        edges[p] = kept = _kept(raw.get(p, ()), notes)
        if kept != old_edges[p]:
            moved.append(p)
    if not moved:
        return edges, previous.backlinks
    moved_set = set(moved)
    affected = {t for p in moved for t, _ in (*old_edges[p], *edges[p])}
    position = {p: i for i, p in enumerate(notes)}
    backlinks = dict(previous.backlinks)
    for target in affected:
        entries = [e for e in previous.backlinks.get(target, ()) if e[0] not in moved_set]
        entries += [(s, k) for s in moved for t, k in edges[s] if t == target]
        entries.sort(key=lambda e: position[e[0]])
        if entries:
            backlinks[target] = tuple(entries)
        else:
            backlinks.pop(target, None)
    return edges, backlinks
