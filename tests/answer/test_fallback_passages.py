"""The extractive fallback quotes the passage that answers, deep inside a real long course.

Questions of `eval/passages.tune.tsv` on four courses of the notes-publiques vault, copied into
`tests/data/notes-publiques/` (CC BY-SA 4.0, see its SOURCE.txt): each answering phrase lies
past the course's first 20,000 characters, where 3.1's fallback, which read notes from their
first line, never reached (issue 16)."""

from __future__ import annotations

import pytest

from grasbot._evaluate import quotes_answer, read_cases
from grasbot.answer.fallback import extractive_answer
from support.bots import REPO, make_bot

COURSES = REPO / "tests" / "data" / "notes-publiques"
QUESTIONS = (
    "Quels sont les défauts d'une architecture en couches ?",
    "Comment on fait pour résorber la dette technique d'un logiciel ?",
    "Qui fait partie du comité d'architecture et il sert à quoi ?",
    "Est-ce que je peux garder mes tokens dans le localStorage du navigateur ?",
    "Quelle est la différence entre un bearer token et un jeton JWT ?",
)
CASES = {c.question: c for c in read_cases(REPO / "eval" / "passages.tune.tsv") if c.question in QUESTIONS}


@pytest.fixture(scope="module")
def bot():
    return make_bot(COURSES, default_visibility="public")


def test_the_cases_are_the_dev_sets_and_lie_deep():
    assert set(CASES) == set(QUESTIONS)
    for case in CASES.values():
        (path,) = case.expected
        text = (COURSES / path).read_text(encoding="utf-8")
        assert text.find(case.phrase) > 20_000, case.question


@pytest.mark.parametrize("question", QUESTIONS)
def test_the_fallback_quotes_the_answering_passage(bot, question):
    case = CASES[question]
    result = bot.search(question, audience="visitor")
    assert result.grounded and result.sources[0].path in case.expected
    index = bot.snapshot.index("visitor")
    answer = extractive_answer(question, result.context, index, grounded=True)
    assert quotes_answer(answer, [p.text for p in result.context], case.phrase), answer
    # and from the answering passage, cited by its note's slug
    assert f"[{index.notes[next(iter(case.expected))].slug}]" in answer
    # 3.1 quoted the notes from their first line: the phrase was never within its reach
    (path,) = case.expected
    opening = index.readable_body(path)[:12_000]
    assert case.phrase not in opening
