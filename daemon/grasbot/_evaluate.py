"""Retrieval quality on a file of questions with the notes that answer them, beside the plain
BM25 that GrasBot has to beat (held-out visitor questions are what it is judged on), and, when
the file gives a phrase of each answering passage, whether that phrase reached the prompt sent
to the LLM (context recall) and the extractive fallback."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ._exceptions import ConfigError
from .answer.fallback import sentences
from .retrieval.analysis import tokenize_fr
from .retrieval.vault import Note

HISTORY_SEPARATOR = "||"


@dataclass(frozen=True)
class Case:
    question: str
    expected: frozenset[str]  # vault-relative paths
    line: int
    phrase: str | None = None  # verbatim words of the passage that answers
    history: tuple[str, ...] = ()  # the visitor's earlier questions, for a follow-up

    @property
    def turns(self) -> list[dict]:
        """The history as the daemon takes it (the assistant's replies are not in the file)."""
        return [{"role": "user", "content": q} for q in self.history]

    @property
    def one_text(self) -> str:
        """The earlier questions and this one as one text: what the plain BM25 reads (it has
        no notion of a conversation)."""
        return " ".join([*self.history, self.question])


@dataclass(frozen=True)
class Outcome:
    case: Case
    ranked: tuple[str, ...]  # paths, best first
    in_prompt: bool | None = None  # the phrase was in the prompt the LLM received (None: no phrase)
    in_fallback: bool | None = None  # ... in the extractive answer

    @property
    def rank(self) -> int | None:
        for position, path in enumerate(self.ranked, 1):
            if path in self.case.expected:
                return position
        return None

    def within(self, k: int) -> bool:
        """An expected note among the first `k`."""
        rank = self.rank
        return rank is not None and rank <= k


@dataclass(frozen=True)
class Report:
    outcomes: tuple[Outcome, ...]

    def hit_at(self, k: int) -> float:
        return sum(1 for o in self.outcomes if o.within(k)) / len(self.outcomes)

    def mrr_at(self, k: int) -> float:
        return sum(1 / o.rank for o in self.outcomes if o.rank is not None and o.rank <= k) / len(self.outcomes)

    def recall(self, field: str) -> float | None:
        """The share of the questions with a phrase whose phrase reached `field` (in_prompt, in_fallback)."""
        measured = [getattr(o, field) for o in self.outcomes if getattr(o, field) is not None]
        return sum(measured) / len(measured) if measured else None

    def misses(self, k: int = 1) -> list[Outcome]:
        return [o for o in self.outcomes if not o.within(k)]

    def figures(self) -> dict:
        return {"hit@1": round(self.hit_at(1), 4), "hit@5": round(self.hit_at(5), 4), "mrr@10": round(self.mrr_at(10), 4)}

    def to_dict(self) -> dict:
        data = {
            "questions": len(self.outcomes),
            **self.figures(),
            "misses": [{"question": o.case.question, "expected": sorted(o.case.expected), "rank": o.rank, "got": list(o.ranked[:3])} for o in self.misses()],
        }
        for name, field in (("context_recall", "in_prompt"), ("fallback_recall", "in_fallback")):
            value = self.recall(field)
            if value is not None:
                data[name] = round(value, 4)
        if self.recall("in_prompt") is not None:
            data["context_misses"] = [
                {"question": o.case.question, "expected": sorted(o.case.expected), "phrase": o.case.phrase, "rank": o.rank}
                for o in self.outcomes
                if o.in_prompt is False
            ]
        return data


#: A questions file's line, as `grasbot eval --help` writes it: the refusal of a line said it in
#: English words (`path;path[<TAB>history…`), which the help does not use.
LINE_FORM = "'question<TAB>chemin;chemin[<TAB>question précédente || …[<TAB>phrase]]'"


def read_cases(path: str | Path) -> list[Case]:
    """`question<TAB>path;path[<TAB>earlier question || earlier question[<TAB>phrase]]` lines:
    the third column, which may be empty, holds a follow-up's earlier questions; the fourth,
    verbatim words of the passage that answers. `#` lines and blank lines are comments."""
    cases = []
    for number, line in _question_lines(path, "de questions"):
        question, tab, rest = line.partition("\t")
        paths, _, rest = rest.partition("\t")
        earlier, has_phrase, phrase = rest.partition("\t")
        expected = frozenset(p.strip() for p in paths.split(";") if p.strip())
        if not tab or not question.strip() or not expected or (has_phrase and not phrase.strip()) or "\t" in phrase:  # a fifth column: the phrase's?
            raise ConfigError(f"{path}:{number} : {LINE_FORM} attendu, reçu {line[:60]!r}")
        history = tuple(q.strip() for q in earlier.split(HISTORY_SEPARATOR) if q.strip())
        cases.append(Case(question.strip(), expected, number, phrase.strip() or None, history))
    if not cases:
        raise ConfigError(f"{path} : aucune question dans le fichier")
    return cases


def named_notes(cases: Sequence[Case], notes: Mapping[str, Note]) -> tuple[list[Case], list[tuple[Case, str, tuple[str, ...]]]]:
    """`cases` with each expected note that no path names read as the one note it names
    otherwise: its path without `.md`, its file's name, or its slug (a file written by hand,
    or by a tool that knows the site's pages, names notes so). A name several notes share
    stays as written, a miss, as does one that names no note. Returns the cases and, for the
    caller to say, (case, as written, the notes it names) of each note named otherwise."""
    by_name: dict[str, list[str]] = {}
    by_slug: dict[str, list[str]] = {}
    for path, note in notes.items():
        by_name.setdefault(note.name, []).append(path)
        by_slug.setdefault(note.slug, []).append(path)

    def named(written: str) -> tuple[str, ...]:
        entry = written.replace("\\", "/").removeprefix("./")
        if entry in notes:
            return (entry,)
        bare = entry[:-3] if entry.lower().endswith(".md") else entry
        for found in ([f"{entry}.md"] if f"{entry}.md" in notes else [], by_name.get(bare, []), by_slug.get(bare, [])):
            if found:
                return tuple(sorted(found))
        return ()

    read, said = [], []
    for case in cases:
        expected = set()
        for written in sorted(case.expected):
            found = () if written in notes else named(written)
            if found:
                said.append((case, written, found))
            expected.add(found[0] if len(found) == 1 else written)
        read.append(Case(case.question, frozenset(expected), case.line, case.phrase, case.history) if expected != case.expected else case)
    return read, said


def read_off_topic(path: str | Path) -> list[str]:
    """One question a line that no note of the vault answers (`#` lines and blank lines are
    comments): what GrasBot must admit it does not know, so each one grounded is a failure."""
    questions = [line.strip() for _, line in _question_lines(path, "de questions hors sujet")]
    if not questions:
        raise ConfigError(f"{path} : aucune question dans le fichier")
    tabbed = next((q for q in questions if "\t" in q), None)
    if tabbed is not None:
        raise ConfigError(f"{path} : une question par ligne, sans note attendue, reçu {tabbed[:60]!r}")
    return questions


def _question_lines(path: str | Path, what: str) -> list[tuple[int, str]]:
    """(line number, line) of a questions file, `#` lines and blank lines left out."""
    try:
        lines = Path(path).read_text(encoding="utf-8-sig").splitlines()  # a byte-order mark, as an editor may save it
    except UnicodeDecodeError as exc:  # its own sentence is English: « 'utf-8' codec can't decode byte 0x89 … »
        raise ConfigError(f"impossible de lire le fichier {what} {path} : ce n'est pas du texte UTF-8 (octet {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"impossible de lire le fichier {what} {path} : {exc}") from None
    return [(number, line) for number, line in enumerate(lines, 1) if line.strip() and not line.lstrip().startswith("#")]


_SPACE = re.compile(r"\s+")
_MARKS = re.compile(r"[*_`]+")


def contains(text: str, phrase: str, *, marks: bool = True) -> bool:
    """`phrase` in `text`, whitespace collapsed; with `marks=False`, emphasis and code marks
    dropped from both (the extractive answer drops them)."""
    if not marks:
        text, phrase = _MARKS.sub("", text), _MARKS.sub("", phrase)
    return _SPACE.sub(" ", phrase).strip() in _SPACE.sub(" ", text)


_QUOTED = re.compile(r"^- (.*?)…? \[[a-z0-9][a-z0-9-]*\]$", re.MULTILINE)


def quotes_answer(answer: str, passages: Sequence[str], phrase: str) -> bool:
    """Whether an extractive answer quotes the passage that answers: the phrase itself, or a
    sentence of a passage that holds it."""
    if contains(answer, phrase, marks=False):
        return True
    quoted = _QUOTED.findall(answer)
    for text in passages:
        if contains(text, phrase):
            said = " ".join(sentences(text))
            if any(q and q in said for q in quoted):
                return True
    return False


def evaluate(
    cases: Sequence[Case],
    rank: Callable[[Case], Sequence[str]],
    prompts: Sequence[str] | None = None,
    fallback: Callable[[Case], tuple[str, Sequence[str]]] | None = None,
) -> Report:
    """`rank(case)` returns vault-relative paths, best first (at least the first 10).
    `prompts`: the text the LLM received for each case, in order; `fallback(case)`: the
    extractive answer and the texts of the passages it was made from. Both are measured on
    the cases that have a phrase."""
    outcomes = []
    for i, case in enumerate(cases):
        in_prompt = in_fallback = None
        if case.phrase is not None and prompts is not None:
            in_prompt = contains(prompts[i], case.phrase)
        if case.phrase is not None and fallback is not None:
            in_fallback = quotes_answer(*fallback(case), case.phrase)
        outcomes.append(Outcome(case, tuple(rank(case)), in_prompt, in_fallback))
    return Report(tuple(outcomes))


def after_another_subject(cases: Sequence[Case]) -> list[tuple[Case, Case]]:
    """Each question of `cases` asked without history, and the same question asked after the
    closest earlier one about other notes (wrapping round from the first): a visitor who changes
    the subject should get the new subject's notes, not the conversation's, and the question's
    ranking alone is the yardstick."""
    alone = [c for c in cases if not c.history]
    pairs = []
    for i, case in enumerate(alone):
        earlier = next((c for c in [*alone[:i][::-1], *alone[i + 1 :][::-1]] if not c.expected & case.expected), None)
        if earlier is not None:
            pairs.append((case, Case(case.question, case.expected, case.line, case.phrase, (earlier.question,))))
    return pairs


def sign_test(won: int, lost: int) -> float:
    """The two-sided sign test's p: how likely a split at least this uneven is between the
    questions only one of two rankers gets right, were each as likely as the other to get them.
    The questions both get right, or both miss, say nothing of which is better."""
    n = won + lost
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(won, lost) + 1)) / 2**n
    return min(1.0, 2 * tail)


def paired(ours: Report, theirs: Report, k: int = 1) -> dict:
    """Two rankings of the same questions at hit@k: the questions `ours` has within k and
    `theirs` not (won), the reverse (lost), and the sign test's p. A difference of one or two
    questions in fifteen is what chance alone gives; this says when a difference is more."""
    if [o.case for o in ours.outcomes] != [o.case for o in theirs.outcomes]:
        raise ValueError("paired rankings must be of the same questions, in the same order")
    pairs = [(a.within(k), b.within(k)) for a, b in zip(ours.outcomes, theirs.outcomes, strict=True)]
    won = sum(1 for a, b in pairs if a and not b)
    lost = sum(1 for a, b in pairs if b and not a)
    return {"won": won, "lost": lost, "p": round(sign_test(won, lost), 4)}


class PlainBM25:
    """The baseline: Okapi BM25 (Lucene's idf, k1 1.2, b 0.75) over each whole note as one flat
    field — title, file name, every frontmatter text field and the body — with GrasBot's own
    French analysis. No passages, no graph, no weights: what a plain search engine gives."""

    K1, B = 1.2, 0.75

    def __init__(self, notes: Mapping[str, Note], body: Callable[[str], str] | None = None) -> None:
        """`body(path)`: the note's text as the audience reads it (links to hidden notes keep their
        label only); the raw body when omitted."""
        read = body or (lambda path: notes[path].body)
        self._counts = {path: Counter(tokenize_fr(_flat_text(note, read(path)))) for path, note in notes.items()}
        self._lengths = {path: sum(c.values()) for path, c in self._counts.items()}
        self._avg = (sum(self._lengths.values()) / len(self._lengths)) if self._lengths else 1.0
        self._df: Counter[str] = Counter()
        for counts in self._counts.values():
            self._df.update(counts.keys())

    def rank(self, question: str, k: int = 10) -> list[str]:
        n, terms = len(self._counts), set(tokenize_fr(question))
        idf = {t: math.log(1 + (n - self._df[t] + 0.5) / (self._df[t] + 0.5)) for t in terms if self._df[t]}
        scores = {}
        for path, counts in self._counts.items():
            norm = self.K1 * (1 - self.B + self.B * self._lengths[path] / self._avg)
            score = sum(idf[t] * counts[t] * (self.K1 + 1) / (counts[t] + norm) for t in idf if t in counts)
            if score > 0:
                scores[path] = score
        return sorted(scores, key=lambda p: (-scores[p], p))[:k]


def _flat_text(note: Note, body: str) -> str:
    fields = (note.title, note.name, *note.aliases, *note.answers, *note.tags, *note.domains, body)
    return "\n".join(f for f in fields if f)
