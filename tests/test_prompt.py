"""build_prompt: the seed's five rules, the notes whole under their [slug], and the budget."""

from __future__ import annotations

import re

import pytest

from grasbot._prompt import CUT_MARK, NO_CONTEXT, SYSTEM_RULES, build_prompt, keep_known_citations, share_budget
from grasbot._vault import VaultOptions, parse_note


def note(slug: str, body: str, title: str | None = None):
    fm = f"---\nslug: {slug}\ntitle: {title or slug.capitalize()}\n---\n"
    return parse_note(f"{slug}.md", (fm + body).encode(), mtime_ns=0, options=VaultOptions())


def big_body(size: int, sentence: str = "Une phrase de la longue note sur les réseaux. ") -> str:
    return (sentence * (size // len(sentence) + 1))[:size]


def test_the_five_rules_are_in_the_system_prompt():
    prompt = build_prompt("Q ?", [note("a", "Texte.")], grounded=True, budget=12_000)
    system = prompt.messages[0]
    assert system["role"] == "system"
    assert system["content"] == SYSTEM_RULES
    rules = re.findall(r"^(\d)\. (.+)$", SYSTEM_RULES, re.MULTILINE)
    assert [n for n, _ in rules] == ["1", "2", "3", "4", "5"]
    text = dict(rules)
    assert "français" in text["1"] and "sans emojis" in text["1"]
    assert "entre crochets" in text["2"] and "slug" in text["2"]
    assert all(page in text["3"] for page in ("/portfolio", "/competences", "/contact"))
    assert "trois à six phrases" in text["4"]
    assert "poliment" in text["5"]


def test_notes_are_whole_in_context_under_their_slug():
    a = note("push-swap", "Un algorithme de tri.\n\nDeux piles, A et B.", title="Push swap")
    b = note("ia", "Les notes sur l'intelligence artificielle.")
    prompt = build_prompt("Comment trier ?", [a, b], grounded=True, budget=12_000)
    assert prompt.notes == ("push-swap", "ia")
    assert prompt.truncated == ()
    assert [m["role"] for m in prompt.messages] == ["system", "user"]
    user = prompt.messages[-1]["content"]
    assert "### [push-swap] Push swap\nUn algorithme de tri.\n\nDeux piles, A et B." in user
    assert "### [ia] Ia\nLes notes sur l'intelligence artificielle." in user
    assert user.index("[push-swap]") < user.index("[ia]")
    assert user.endswith("Question : Comment trier ?")
    assert "note tronquée" not in user


def test_share_budget_exact_values():
    assert share_budget([100, 200, 300], 10_000) == [100, 200, 300]
    assert share_budget([100, 1_000_000, 200], 10_000) == [100, 9_700, 200]
    assert share_budget([1_000_000, 1_000_000, 50], 12_000) == [5_975, 5_975, 50]
    assert share_budget([1_000_000, 4_000, 1_000_000, 4_000], 12_000) == [3_000, 3_000, 3_000, 3_000]
    assert share_budget([5_000, 5_000, 5_000], 12_000) == [4_000, 4_000, 4_000]
    assert share_budget([], 12_000) == []
    assert share_budget([0, 10], 4) == [0, 4]


def test_share_budget_short_notes_keep_all_and_never_exceed():
    lengths = [1_000_000, 3_000, 500, 1_000_000, 8_000]
    allowed = share_budget(lengths, 12_000)
    # 500 fits a fifth of the budget and stays whole; 3,000 does not fit a quarter of the rest
    assert allowed == [2_875, 2_875, 500, 2_875, 2_875]
    assert sum(allowed) <= 12_000
    assert all(a <= n for a, n in zip(allowed, lengths))


def test_a_one_megabyte_note_is_cut_fairly_and_says_so():
    huge = note("enorme", big_body(1_000_000))
    short = note("courte", "Une note courte qui reste entière.")
    budget = 12_000
    prompt = build_prompt("réseaux ?", [huge, short], grounded=True, budget=budget)
    assert prompt.truncated == ("enorme",)
    user = prompt.messages[-1]["content"]
    assert "### [courte] Courte\nUne note courte qui reste entière." in user
    block = user.split("### [enorme] Enorme\n", 1)[1].split("\n\n### [courte]", 1)[0]
    mark = re.search(r"\n\[… note tronquée : (\d+) caractères sur (\d+) …\]$", block)
    assert mark, block[-200:]
    kept, total = int(mark.group(1)), int(mark.group(2))
    assert total == 1_000_000
    allowed = share_budget([1_000_000, len("Une note courte qui reste entière.")], budget)[0]
    assert kept <= allowed
    assert kept >= allowed * 0.7
    assert len(block) - len(mark.group(0)) == kept
    # cut on a sentence end, not in the middle of a word
    assert block[:kept].endswith("réseaux.")
    assert len(user) < budget + 1_000


def test_total_stays_within_budget_plus_marks():
    notes = [note(f"n{i}", big_body(200_000 + i)) for i in range(5)]
    budget = 12_000
    prompt = build_prompt("q", notes, grounded=True, budget=budget)
    assert prompt.truncated == tuple(f"n{i}" for i in range(5))
    user = prompt.messages[-1]["content"]
    blocks = user.split("### [")[1:]
    body_chars = 0
    for block in blocks:
        text = block.split("\n", 1)[1]
        text = re.sub(r"\n\[… note tronquée : \d+ caractères sur \d+ …\]", "", text)
        text = text.split("\n\nQuestion : ")[0].rstrip("\n")
        body_chars += len(text)
    assert body_chars <= budget
    assert body_chars >= budget * 0.7
    assert user.count("note tronquée") == 5


def test_cut_mark_format():
    assert CUT_MARK.format(kept=10, total=20) == "\n[… note tronquée : 10 caractères sur 20 …]"


def test_ungrounded_gets_the_no_context_prompt_without_any_note():
    secret = note("secret", "Le code du coffre est 1234.")
    prompt = build_prompt("Quel est le code ?", [secret], grounded=False, budget=12_000)
    assert prompt.notes == () and prompt.truncated == ()
    user = prompt.messages[-1]
    assert user == {"role": "user", "content": f"{NO_CONTEXT}\n\nQuestion : Quel est le code ?"}
    assert all("1234" not in m["content"] and "[secret]" not in m["content"] for m in prompt.messages)
    assert prompt.messages[0]["content"] == SYSTEM_RULES


def test_grounded_without_notes_is_no_context_too():
    prompt = build_prompt("q", [], grounded=True, budget=12_000)
    assert prompt.messages[-1]["content"].startswith(NO_CONTEXT)


def test_history_turns_come_between_the_rules_and_the_question():
    history = [
        {"role": "user", "content": "Parle-moi de GrasBot"},
        {"role": "assistant", "content": "GrasBot est l'assistant du site [grasbot]."},
    ]
    prompt = build_prompt("Et son modèle ?", [note("a", "Qwen3.")], grounded=True, budget=12_000, history=history)
    assert [m["role"] for m in prompt.messages] == ["system", "user", "assistant", "user"]
    assert prompt.messages[1:3] == history
    assert prompt.messages[-1]["content"].endswith("Question : Et son modèle ?")
    ungrounded = build_prompt("Et son modèle ?", [], grounded=False, budget=12_000, history=history)
    assert ungrounded.messages[1:3] == history


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Voir [a] et [b].", "Voir [a] et."),
        ("Un lien [texte](https://x.org) [a]", "Un lien [texte](https://x.org) [a]"),
        ("[B] majuscule", "[B] majuscule"),
    ],
)
def test_keep_known_citations(text, expected):
    assert keep_known_citations(text, ("a",)) == expected
