"""The fast path (candidates, pruning, memoised BM25, fast body analysis) changes no result.

The contract of issue 7: for every question, `search()` returns exactly what scoring every
note returns — same notes, same order, same scores, same reasons.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import replace

import pytest

from generate_vault import _typo, generate
from grasbot import Settings, build_snapshot, search, tokenize_fr
from grasbot.retrieval import spelling
from grasbot.retrieval.analysis import body_counts
from support.bots import REPO

PUBLIC_NOTES = REPO.parent / "shared" / "vaults" / "notes-publiques"
# its four long courses, in the repository: the case runs on them when the whole vault is absent
# (a skip would pass CI without this real vault's case)
PUBLIC_COURSES = REPO / "tests" / "data" / "notes-publiques"


@pytest.fixture(scope="module", params=["bundled", "notes-publiques", "generated-300", "generated-120-seed5", "generated-900-seed8"])
def snapshot(request, tmp_path_factory):
    if request.param == "bundled":
        settings = Settings.load(env={}, vault_dir=REPO / "vault-grasbot")
    elif request.param == "notes-publiques":
        vault = PUBLIC_NOTES if PUBLIC_NOTES.is_dir() else PUBLIC_COURSES
        settings = Settings.load(env={}, vault_dir=vault, default_visibility="public")
    else:
        # 900 notes: enough notes share a question's stems for the pruning to skip many
        n, seed = {"generated-300": (300, 7), "generated-120-seed5": (120, 5), "generated-900-seed8": (900, 8)}[request.param]
        root = tmp_path_factory.mktemp("gen") / "vault"
        generate(root, n, seed=seed)
        settings = Settings.load(env={}, vault_dir=root)
    return build_snapshot(settings)


def _questions(snapshot, limit: int = 260) -> list[str]:
    rng = random.Random(3)
    notes = sorted(snapshot.vault.notes.values(), key=lambda n: n.path)
    vocab = sorted({w for n in notes for w in n.body.split()[:60]})
    qs: list[str] = []
    for note in notes:
        qs += list(note.answers[:2]) + [note.title] + list(note.aliases[:1])
        qs.append(_typo(rng, note.answers[0] if note.answers else note.title))
    qs += [" ".join(rng.sample(vocab, rng.randint(1, 7))) for _ in range(60)]
    qs += ["le la les de", "?", "et avec quel modèle ?", "c++ et C# sur .NET"]
    rng.shuffle(qs)
    return qs[:limit]


def _result(q, index, exhaustive, **kw):
    out = search(q, index, min_score=4.0, exhaustive=exhaustive, **kw).to_dict()
    out.pop("took_ms")
    return out


@pytest.mark.parametrize("spelled", [False, True], ids=["unspelled", "spelled"])
@pytest.mark.parametrize("audience", ["visitor", "owner"])
def test_fast_path_equals_exhaustive(snapshot, audience, spelled):
    """`spelled`: the spelling vectors built (a daemon's once its worker is done), whose
    candidates are the first POOL: the fast path must keep that many exact, whatever top_k."""
    index = snapshot.index(audience)
    if spelled:
        index = replace(index, _memo={})  # a copy of its own: the fixture's stays unbuilt
        spelling.warm(index)
    questions = _questions(snapshot)
    assert len(questions) > 50
    nonempty = 0
    for i, q in enumerate(questions):
        top_k = (5, 1, 3, 12)[i % 4]
        history = [{"role": "user", "content": questions[i - 1]}] if i % 7 == 0 or i % 7 == 3 else None
        if i % 7 == 3:
            q = "et " + q  # a follow-up: each note earns its points and the conversation's
        fast = _result(q, index, False, top_k=top_k, history=history)
        slow = _result(q, index, True, top_k=top_k, history=history)
        assert fast == slow, q
        nonempty += bool(fast["results"])
    assert nonempty > len(questions) // 2  # the comparison is about real rankings, not empty lists


def _reference_stems(text: str) -> list[str]:
    """The analysis rules spelled out word by word (_analysis.words, then stopwords, but a
    hurried one written in capitals, then the stemmer): what the fast, table-driven path must give."""
    from grasbot.retrieval.analysis import HURRIED, STOPWORDS, _stem, fold, words

    stems = []
    for written in text.split():  # no word spans a blank
        capitals = {fold(w) for w in re.findall(r"[^\W_]+(?:'[^\W_]+)*", written) if w.isupper()}
        kept = [w for w in words(written) if (w not in STOPWORDS or (w in HURRIED and w in capitals)) and (len(w) > 1 or w.isdigit())]
        stems.extend(map(_stem, kept))
    return stems


def _analysis_texts(snapshot) -> list[str]:
    texts = [f"{n.title}\n{n.name}\n{n.body}" for n in snapshot.vault.notes.values()]
    texts += [t for n in snapshot.vault.notes.values() for t in (n.title, n.slug, *n.aliases, *n.answers, *n.tags)]
    texts += ["L'arbre d''où c++ C# .NET x.net _a_b 'abc a''b œuf ß ﬁn ½ ² 3 l’école j'ai ǅ Ꭰ", "", "''"]
    texts += ["QUEST, quest ce que [[QUEST]] JSP-jsp Koi QUEST-CE pk PK.", "stp STP"]
    return texts


def test_tokens_follow_the_rules_word_by_word(snapshot):
    for text in _analysis_texts(snapshot):
        assert list(tokenize_fr(text)) == _reference_stems(text), text


def test_body_counts_equals_tokens(snapshot):
    for text in _analysis_texts(snapshot):
        assert body_counts(text) == Counter(_reference_stems(text)), text


def test_chunked_analysis_equals_the_rules_on_random_text():
    """body_counts and tokens split on whitespace before folding: random text made of what
    could break that (every kind of space, combining marks, ligatures, apostrophes, the special
    spellings, brackets and punctuation around words) gives the stems of the rules applied to
    the whole text."""
    from grasbot.retrieval import analysis as _analysis

    rng = random.Random(11)
    pieces = [
        "a",
        "e",
        "é",
        "E\u0301",
        "\u0301",
        "œ",
        "ß",
        "ﬁ",
        "½",
        "²",
        "'",
        "’",
        "-",
        "_",
        ".",
        "#",
        "+",
        "c++",
        "C#",
        ".net",
        "x.NET",
        "l'",
        "qu’",
        "d''",
        "1",
        "Ꭰ",
        "ǅ",
        " ",
        "\n",
        "\t",
        "\xa0",
        "\u2007",
        "\u3000",
        "\u200b",
        "\x1c",
        "\x85",
        "mot",
        "données",
        "les",
        # what the one-plain-word path strips around a word, and what it must not take for one
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        "«",
        "»",
        '"',
        ",",
        ";",
        ":",
        "!",
        "?",
        "...",
        "net",
        "C",
    ]
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        if rng.random() < 0.01:  # tables made afresh give the same
            _analysis._CHUNKS.clear()
            _analysis._STEMS.clear()
        expected = _reference_stems(text)
        assert list(tokenize_fr(text)) == expected, repr(text)
        assert body_counts(text) == Counter(expected), repr(text)


def test_rewrite_links_equals_the_regex():
    """rewrite_links scans from each `[[`; _WIKILINK.sub, tried at every position, is the rule."""
    from pathlib import PurePosixPath

    from grasbot.retrieval import links as _links

    def reference(text, keep):
        def plain(m):
            target, label = m.group(2).strip(), (m.group(4) or "").strip()
            if not target:
                return label
            if label:
                return label
            return PurePosixPath(target).name if keep(target) else ""

        return _links._WIKILINK.sub(plain, text)

    rng = random.Random(6)
    alphabet = "ab#[]!|^/&-_ é1\n"
    for i in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        keep = (lambda t: "a" in t) if i % 2 else (lambda t: True)
        assert _links.rewrite_links(text, keep) == reference(text, keep), text


def test_literal_first_scans_equal_the_regexes():
    """links_in and _inline_tags jump from `[[` and `#` instead of trying every position: same
    matches as _WIKILINK and _INLINE_TAG on random text made of the characters that matter."""
    from grasbot.retrieval import links as _links
    from grasbot.retrieval import vault as _vault

    rng = random.Random(5)
    alphabet = "ab#[]!|^/&-_ é1\n"
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        expected = [
            (m.group(2).strip(), (m.group(4) or "").strip() or None, "embed" if m.group(1) else "body")
            for m in _links._WIKILINK.finditer(text)
            if m.group(2).strip()
        ]
        assert [(link.target, link.display, link.kind) for link in _links.links_in(text, "body")] == expected, text
        assert _vault._inline_tags(text) == _vault._INLINE_TAG.findall(text), text


def test_field_bounds_never_below_field_points(snapshot):
    """The pruning's bound on a note's field signals is never below what score_note gives it."""
    from grasbot.retrieval.scoring import SIGNALS, Query, answers_points, score_note
    from grasbot.retrieval.search import _field_bounds

    naming = {name for name, signal in SIGNALS.items() if signal.kind == "naming"}

    index = snapshot.index("owner")
    refined = 0
    for q in _questions(snapshot, 120):
        query = Query.parse(q, index)
        bounds, loose, held = _field_bounds(query, index)
        for path in index.candidates(query.unique):
            score = score_note(path, query, index)
            # the field signals whose field holds none of the question's stems, not looked at: the same score
            assert score_note(path, query, index, held=held) == score, (q, path)
            fields = sum(r.points for r in score.reasons if r.signal in naming)
            if fields:
                assert path in bounds and fields <= bounds[path] + 1e-9, (q, path)
                # and with each loose bound replaced by its signal's exact points (answers' only)
                answers = answers_points(index.analyses[path].answers, query, index)[0]
                refinable = loose.get(path, [])
                assert len(refinable) <= 1 and all(exact(index.analyses[path], query, index) == answers for exact, _ in refinable)
                pooled = sum(bound for _, bound in refinable)
                refined += bool(refinable)
                assert fields <= bounds[path] - pooled + answers + 1e-9, (q, path)
                assert answers <= pooled + 1e-9, (q, path)
                assert all(r.points <= SIGNALS[r.signal].most + 1e-9 for r in score.reasons if r.signal in naming)
        assert all(s >= 0 for s in bounds.values())
    declares = any(a.answers for a in index.analyses.values())
    assert bool(refined) == declares  # a vault that declares questions exercises the refinement


def test_body_only_bounds_are_every_note_s_plain_sum(snapshot):
    """The notes whose body text and meaning alone may reach the floor, with that bound
    (`search._body_only`, made in numpy for the notes without meaning): exactly the plain
    sum over every note of the index, a note in a field left out, one with meaning and no
    word of the question in, for floors from none to the best note's."""
    from grasbot.retrieval.scoring import BONUS_MAX, Query
    from grasbot.retrieval.search import _SLACK, _body_only, _field_bounds

    index = snapshot.index("visitor")
    rng = random.Random(5)
    paths = sorted(index.notes)
    factor, checked = 1.0 + BONUS_MAX, 0
    for q in _questions(snapshot, 80):
        query = Query.parse(q, index)
        fields = _field_bounds(query, index)[0] if query.terms else {}
        semantic = {p: rng.uniform(0.01, 6.0) for p in rng.sample(paths, min(len(paths), 12))}
        raw_bound = query.bm25_unit
        plain = {p: (raw_bound * query.bm25.get(p, 0.0) + semantic.get(p, 0.0)) * factor + _SLACK for p in paths}
        plain = {p: b for p, b in plain.items() if p not in fields and (p in query.bm25 or p in semantic)}
        for last in (-1.0, 0.0, *sorted(plain.values())[-3:]):
            got = _body_only(query.bm25, semantic, fields, raw_bound, factor, last)
            assert got == {p: b for p, b in plain.items() if b >= last}, (q, last)
            checked += len(got)
    assert checked > 1000


def test_every_field_signal_has_a_bound_on_a_field_the_index_encodes():
    """Search's pruning reads the field signals from the registry alone: one that scores a
    frontmatter field without a bound there would be skipped by the fast path."""
    from grasbot.retrieval.index import FIELD_LAYOUT
    from grasbot.retrieval.scoring import FIELD_BOUNDS, SIGNALS

    assert {f.field for f in FIELD_BOUNDS} == set(FIELD_LAYOUT)
    assert {f.signal for f in FIELD_BOUNDS} == {"alias", "title", "answers", "tag", "domain"}
    # the one naming signal without a bound of its own is scored as the better of it and the title
    assert {n for n, s in SIGNALS.items() if s.kind == "naming"} - {f.signal for f in FIELD_BOUNDS} == {"slug"}


def test_field_hits_split_the_codes_and_the_term_memo_stays_bounded(snapshot, monkeypatch):
    """Index.field_hits is the field postings' codes split by field, made once; the terms'
    memo (BM25 impacts and field hits) forgets them past _MEMO_TERMS, never the index-wide
    entries."""
    from grasbot.retrieval import index as _index
    from grasbot.retrieval import search as _search

    index = snapshot.index("owner")
    for term in {t for q in _questions(snapshot, 40) for t in _index.tokens(q)}:
        hits, codes = index.field_hits(term), index.fields.counts(term)
        assert index.field_hits(term) is hits and set(hits.paths) == set(codes)
        for name, (shift, mask) in _index.FIELD_LAYOUT.items():
            assert hits.held[name] == {p: (c >> shift) & mask for p, c in codes.items() if (c >> shift) & mask}
        # the counted fields hold how many of the note's tags (domains) hold the stem
        for path, times in hits.held["tag"].items():
            assert times == sum(term in seq for _, seq in index.analyses[path].tags)
    monkeypatch.setattr(_index, "_MEMO_TERMS", 30)
    _search._shares(index), index._norms()  # index-wide entries
    for i in range(200):
        index.field_hits(f"absent{i}"), index._impacts(f"absent{i}")
    assert len(index._memo) <= 30 + 5
    assert _search._SHARES in index._memo and _index._NORMS in index._memo


def test_packed_posting_lists_round_trip():
    from grasbot.retrieval.postings import Packed, pack, unpack

    counts = {"a.md": 3, "b/c.md": 1, "d.md": 70_000}
    paths = ("d.md", "x.md", "a.md", "b/c.md")
    numbers = {p: i for i, p in enumerate(paths)}
    packed = unpack(pack(counts, numbers), paths)
    assert packed == counts and dict(packed.items()) == counts and list(packed) == list(counts)
    assert len(packed) == 3 and packed["d.md"] == 70_000 and packed.get("x.md") is None and "a.md" in packed
    assert Packed.of(counts).plain() == (tuple(counts), tuple(counts.values()))
