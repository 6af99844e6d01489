"""GrasBot.answer and answer_events: with the stand-in Ollama, and with nothing listening."""

from __future__ import annotations

import re

import pytest

from grasbot.answer.fallback import INTRO, NOT_FOUND, extract, extractive_answer, sentences
from grasbot.answer.passages import choose_passages
from grasbot.answer.prompt import NO_CONTEXT, SYSTEM_RULES
from support.bots import make_bot

VAULT = {
    "projets/robot.md": (
        "title: Robot suiveur de ligne\nslug: robot-suiveur\ntype: projet\naliases: [robot suiveur]\n"
        'tags: [arduino]\nlinked: ["[[carnet-secret]]"]\nvisibility: public',
        "Le robot suit une ligne noire grâce à deux capteurs infrarouges.\n\n"
        "Il a été construit avec une carte Arduino Uno et deux moteurs.\n\n"
        "Les détails sont dans [[carnet-secret]].",
    ),
    "competences/arduino.md": (
        "title: Arduino\ntype: competence\ntags: [arduino]\nvisibility: public",
        "Programmer des cartes Arduino en C++ pour piloter des moteurs et lire des capteurs.",
    ),
    "prive/carnet-secret.md": (
        "title: Carnet secret\nvisibility: private",
        "Le robot suiveur a coûté trop cher, ne pas le dire.",
    ),
}
QUESTION = "Comment fonctionne le robot suiveur ?"


@pytest.fixture
def vault(note_writer):
    for rel, (fm, body) in VAULT.items():
        note_writer(rel, fm, body)
    return note_writer.root


async def _answer(bot, q=QUESTION, **kw):
    try:
        return await bot.answer(q, **kw)
    finally:
        await bot.aclose()


async def _events(bot, q=QUESTION, **kw):
    try:
        return [event async for event in bot.answer_events(q, **kw)]
    finally:
        await bot.aclose()


# ---------------------------------------------------------------- with the stand-in Ollama


async def test_answer_with_the_llm(vault, standin_ollama):
    standin_ollama.script("Le robot suit une ligne [robot-suiveur].", chunks=3)
    bot = make_bot(vault, standin_ollama.url)
    expected = bot.search(QUESTION).to_dict()
    payload = await _answer(bot)
    assert payload["response"] == "Le robot suit une ligne [robot-suiveur]."
    assert payload["model"] == "qwen3:8b"
    assert "llm_error" not in payload
    assert payload["grounded"] is True
    assert payload["sources"] == expected["results"]
    assert payload["sources"][0]["slug"] == "robot-suiveur"
    assert payload["sources"][0]["url"] == "/portfolio/robot-suiveur"
    assert payload["vault_size"] == 2
    assert set(payload) == {"response", "sources", "grounded", "model", "vault_size", "busy", "reused"}
    assert payload["busy"] is False and payload["reused"] is False


async def test_the_request_that_reaches_ollama(vault, standin_ollama):
    bot = make_bot(vault, standin_ollama.url)
    await _answer(bot)
    (body,) = standin_ollama.requests
    assert body["model"] == "qwen3:8b"
    # streamed: a first question's answer is shared with whoever asks it meanwhile (answer.reuse.Flights)
    assert body["stream"] is True
    assert body["think"] is False
    assert body["options"] == {"temperature": 0.4, "num_predict": 400, "num_ctx": 8192}
    assert body["keep_alive"] == "30m"
    messages = body["messages"]
    assert messages[0] == {"role": "system", "content": SYSTEM_RULES}
    user = messages[-1]["content"]
    assert "### [robot-suiveur] Robot suiveur de ligne" in user
    assert "deux capteurs infrarouges" in user
    assert user.endswith(f"Question : {QUESTION}")


async def test_an_answer_nobody_else_can_share_is_asked_whole(vault, standin_ollama):
    """A follow-up (its answer depends on the conversation) and any question with reuse off
    are one request with `stream` false, as the whole answer is what /ask returns."""
    history = [{"role": "user", "content": "Parle-moi du robot"}, {"role": "assistant", "content": "Un robot suiveur."}]
    await _answer(make_bot(vault, standin_ollama.url), history=history)
    await _answer(make_bot(vault, standin_ollama.url, answer_cache=0))
    assert [body["stream"] for body in standin_ollama.requests] == [False, False]


async def test_a_visitor_prompt_never_names_a_private_note(vault, standin_ollama):
    bot = make_bot(vault, standin_ollama.url)
    payload = await _answer(bot)
    text = repr(standin_ollama.requests[0]["messages"])
    assert "carnet-secret" not in text.lower()
    assert "Carnet secret" not in text
    assert "trop cher" not in text
    assert all(s["path"] != "prive/carnet-secret.md" for s in payload["sources"])


async def test_the_model_setting_reaches_ollama(vault, standin_ollama):
    standin_ollama.models = ("qwen3:8b", "mistral:7b")
    bot = make_bot(vault, standin_ollama.url, llm_model="mistral:7b")
    payload = await _answer(bot)
    assert standin_ollama.requests[0]["model"] == "mistral:7b"
    assert payload["model"] == "mistral:7b"


async def test_think_leak_is_stripped_and_unknown_citations_dropped(vault, standin_ollama):
    standin_ollama.script("Il suit une ligne [robot-suiveur] [carnet-secret].", mode="think")
    payload = await _answer(make_bot(vault, standin_ollama.url))
    assert payload["response"] == "Il suit une ligne [robot-suiveur]."


async def test_ungrounded_question_goes_to_the_llm_without_notes(vault, standin_ollama):
    standin_ollama.script("Je ne trouve pas cette information.")
    payload = await _answer(make_bot(vault, standin_ollama.url), "Quelle est la recette de la bouillabaisse ?")
    assert payload["grounded"] is False
    assert payload["response"] == "Je ne trouve pas cette information."
    user = standin_ollama.requests[0]["messages"][-1]["content"]
    assert user.startswith(NO_CONTEXT)
    assert "###" not in user


async def test_ollama_error_falls_back(vault, standin_ollama):
    standin_ollama.script(mode="http_500")
    payload = await _answer(make_bot(vault, standin_ollama.url))
    assert payload["model"] is None
    assert "HTTP 500" in payload["llm_error"]
    assert payload["response"].startswith(INTRO)


# ---------------------------------------------------------------- with nothing listening


async def test_answer_with_no_ollama_is_extractive(vault):
    bot = make_bot(vault)
    expected = bot.search(QUESTION).to_dict()
    payload = await _answer(bot)
    assert payload["model"] is None
    assert payload["llm_error"].startswith("Impossible de joindre Ollama sur ")
    assert "Traceback" not in payload["llm_error"]
    assert payload["grounded"] is True
    assert payload["sources"] == expected["results"]
    assert payload["vault_size"] == 2
    lines = payload["response"].split("\n")
    assert lines[0] == INTRO
    assert 2 <= len(lines) <= 4
    assert all(re.fullmatch(r"- .+ \[[a-z0-9-]+\]", line) for line in lines[1:])
    assert lines[1] == "- Le robot suit une ligne noire grâce à deux capteurs infrarouges. [robot-suiveur]"
    assert "trop cher" not in payload["response"]
    assert "carnet" not in payload["response"].lower()


async def test_ungrounded_with_no_ollama_says_not_in_the_notes(vault):
    payload = await _answer(make_bot(vault), "Quelle est la recette de la bouillabaisse ?")
    assert payload["grounded"] is False
    assert payload["response"] == NOT_FOUND
    assert payload["model"] is None
    assert payload["llm_error"]


def test_extractive_answer_directly(vault):
    bot = make_bot(vault)
    index = bot.snapshot.index("visitor")
    sources = [("projets/robot.md", None), ("competences/arduino.md", None)]
    notes = choose_passages("capteurs Arduino moteurs", sources, index, budget=12_000)
    assert [p.path for p in notes] == [path for path, _ in sources]
    text = extractive_answer("capteurs Arduino moteurs", notes, index, grounded=True)
    lines = text.split("\n")
    assert lines[0] == INTRO
    assert {line.rsplit(" ", 1)[1] for line in lines[1:]} == {"[robot-suiveur]", "[arduino]"}
    assert extractive_answer("x", notes, index, grounded=False) == NOT_FOUND
    assert extractive_answer("x", [], index, grounded=True) == NOT_FOUND


def test_the_extract_tells_the_visitor_why_it_is_one(vault, note_writer):
    """What a visitor reads above the quoted notes, or in their place, as written: the tests
    compared each opening with its own constant, so any wording passed; and the sources it
    names are the notes it quotes, not every passage the model would have read."""
    note_writer("recettes/tarte.md", "title: Tarte\nvisibility: public", "Une pâte brisée, des pommes et du sucre pour la tarte du dimanche.")
    note_writer("notes/bref.md", "title: Bref\nvisibility: public", "Bref.")
    bot = make_bot(vault)
    index = bot.snapshot.index("visitor")
    q = "capteurs Arduino moteurs"
    notes = choose_passages(q, [("projets/robot.md", None), ("competences/arduino.md", None)], index, budget=12_000)
    notes += choose_passages("tarte aux pommes", [("recettes/tarte.md", None)], index, budget=12_000)  # a passage none of whose words is asked
    assert [p.path for p in notes] == ["projets/robot.md", "competences/arduino.md", "recettes/tarte.md"]  # the guard

    def opening(**kw) -> str:
        return extract(q, notes, index, grounded=True, **kw).text.split("\n")[0]

    assert opening() == "Le modèle de langue ne répond pas pour l'instant ; voici ce que disent les notes :"
    assert opening(busy=True) == "Beaucoup de visiteurs posent des questions en ce moment ; en attendant, voici ce que disent les notes :"
    assert opening(unused=True) == "Voici ce que disent les notes :"
    assert sorted(p.path for p in extract(q, notes, index, grounded=True).quoted) == ["competences/arduino.md", "projets/robot.md"]
    busy = "Beaucoup de visiteurs posent des questions en ce moment. Je ne trouve pas cette information dans les notes."
    assert extract(q, notes, index, grounded=False, busy=True).text == f"{busy} Vous pouvez consulter /portfolio, /competences ou /contact."
    not_found = extract(q, notes, index, grounded=False, pages=("/blog", "/contact")).text
    assert not_found == "Je ne trouve pas cette information dans les notes. Vous pouvez consulter /blog ou /contact."
    # no sentence holds a word of the question: the best passage's opening still says what it is about
    said = extract("Quel fonctionnement ?", notes, index, grounded=True).text
    assert said == f"{INTRO}\n- Le robot suit une ligne noire grâce à deux capteurs infrarouges. [robot-suiveur]"
    short = choose_passages("bref", [("notes/bref.md", None)], index, budget=12_000)  # no sentence to quote at all
    assert extract("bref", short, index, grounded=True, busy=True).text == f"{busy} Vous pouvez consulter /portfolio, /competences ou /contact."


# ---------------------------------------------------------------- streaming


async def test_answer_events_order(vault, standin_ollama):
    standin_ollama.script("Le robot suit une ligne noire [robot-suiveur].", chunks=4)
    events = await _events(make_bot(vault, standin_ollama.url))
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "sources" and kinds[-1] == "done"
    assert set(kinds[1:-1]) == {"token"}
    assert len(kinds) >= 3
    sources = events[0][1]
    assert sources["grounded"] is True
    assert sources["sources"][0]["slug"] == "robot-suiveur"
    done = events[-1][1]
    assert "".join(data["text"] for kind, data in events if kind == "token") == done["response"]
    assert done["response"] == "Le robot suit une ligne noire [robot-suiveur]."
    assert done["model"] == "qwen3:8b"
    assert done["sources"] == sources["sources"]
    assert standin_ollama.requests[0]["stream"] is True


async def test_answer_events_when_the_llm_drops_mid_stream(vault, standin_ollama):
    standin_ollama.script("Le robot suit une ligne noire [robot-suiveur].", chunks=4, mode="drop", drop_after=2)
    events = await _events(make_bot(vault, standin_ollama.url))
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "sources" and kinds[-1] == "done"
    assert set(kinds[1:-1]) <= {"token"}
    done = events[-1][1]
    assert done["model"] is None
    assert done["llm_error"]
    assert done["response"].startswith(INTRO)
    assert "[robot-suiveur]" in done["response"]
    assert done["grounded"] is True


async def test_answer_events_with_no_ollama(vault):
    events = await _events(make_bot(vault))
    assert [kind for kind, _ in events] == ["sources", "done"]
    assert events[1][1]["response"].startswith(INTRO)
    assert events[1][1]["model"] is None


def test_a_question_quoted_inside_a_sentence_does_not_end_it():
    """The bundled vault's GrasBot note quotes two questions in guillemets: the extract used to
    be « », « comment te contacter ? » cut out of the middle of its sentence."""
    text = (
        "On lui pose une question en français (« quels projets en Python ? », « comment te contacter ? ») "
        "et il répond en quelques phrases. Pourquoi ce nom ? Parce que le bot est gras. "
        "Il dit « Vraiment ? » puis il repart sans attendre la réponse. Fin. Une dernière phrase assez longue."
    )
    assert sentences(text) == [
        "On lui pose une question en français (« quels projets en Python ? », « comment te contacter ? ») et il répond en quelques phrases.",
        "Parce que le bot est gras.",  # a question that is a sentence of its own still ends there
        "Il dit « Vraiment ? » puis il repart sans attendre la réponse.",
        "Une dernière phrase assez longue.",
    ]


def test_an_extract_keeps_the_no_break_spaces_of_french_typography():
    """A no-break space (U+00A0) or a narrow one (U+202F) before « ? ! : ; » and inside
    guillemets became a plain space: on a phone, a line of the answer began with « ! » or « »»."""
    text = "Il a dit «\u00a0Bonjour à tous\u202f!\u00a0» puis il est parti.\n  Le   projet avance\u202f: la suite\tarrive bientôt."
    assert sentences(text) == [
        "Il a dit «\u00a0Bonjour à tous\u202f!\u00a0» puis il est parti.",
        "Le projet avance\u202f: la suite arrive bientôt.",
    ]


@pytest.mark.parametrize("flood", ["[", "[[", "![["])
def test_a_run_of_unclosed_brackets_is_quoted_as_written(flood):
    """Each link pattern was tried from every `[` of a run none closes, to its end: 50,000 of
    them took a minute of CPU each time a visitor got the extract (2,000 took 121 ms)."""
    text = flood * (50_000 // len(flood)) + "\n\nUne phrase assez longue pour être citée."
    assert sentences(text) == [(flood * 320)[:319] + "…", "Une phrase assez longue pour être citée."]


def test_a_course_full_of_half_open_intervals_is_read_line_by_line():
    """French notes write « [0, 1[ »: 20,000 of them, and no `]` after, took half a minute of CPU."""
    text = "Sur [0, 1[ la fonction f croît, puis elle décroît.\n" * 10_000 + "Voir [[Analyse#Limites|le cours]] pour les limites."
    found = sentences(text)
    assert found == ["Sur [0, 1[ la fonction f croît, puis elle décroît."] * 10_000 + ["Voir le cours pour les limites."]


def test_blank_lines_before_a_heading_leave_the_heading_out():
    """A heading's pattern ran across every blank line from each of them: 100,000 took seconds."""
    text = "\n" * 50_000 + "# Installer\n" + " \n" * 50_000 + "Une phrase assez longue pour compter ici.\n#Pas un titre, un mot-clé écrit en tête."
    assert sentences(text) == ["Une phrase assez longue pour compter ici.", "#Pas un titre, un mot-clé écrit en tête."]


def test_a_link_whose_address_holds_brackets_leaves_its_label_only():
    """« un lien) » was left of `[un lien](javascript:alert('c'))`: the address ended at its first `)`."""
    text = "Voici [un lien](javascript:alert('c')) et [un autre](https://fr.wikipedia.org/wiki/Python_(langage)) dans une phrase assez longue."
    assert sentences(text) == ["Voici un lien et un autre dans une phrase assez longue."]


def test_an_extract_keeps_identifiers_and_reads_obsidian_syntax_as_a_reader_does():
    """`pyramid_tm` was quoted « pyramidtm », `\\_dmarc` « \\dmarc »; a table row kept its bars,
    a callout its `[!info]`, a task its box, a block its `^id`; a line that opens a list was
    quoted alone (« Quelques sous-commandes suffisent : »), each item half a sentence."""
    text = (
        "Le module pyramid_tm gère access_token et OPT_X_TLS_CACERTDIR, puis \\_dmarc et d_k ici.\n"
        "Du texte en **gras**, en _italique_ et `du_code` dans une phrase.\n"
        "| Jour | Horaires |\n|---|:---:|\n| Samedi | Le jardin partagé ouvre de 9 h à 18 h |\n"
        "Ouverture:: le samedi matin, à partir de neuf heures.\n"
        "> [!info] Le jardin est fermé en août pour les congés.\n"
        "- [ ] Arroser les tomates du jardin partagé chaque soir.\n"
        "Le jardin partagé accueille des ruches au printemps. ^abc123\n"
        "Quelques sous-commandes suffisent :\n\n- backup : sauvegarde tout ;\n- restore : restaure ;\n\nLa suite du texte est ici, assez longue.\n"
        "Les abeilles[^1] butinent au printemps.\n\n[^1]: Apis mellifera, les abeilles domestiques."
    )
    assert sentences(text) == [
        "Le module pyramid_tm gère access_token et OPT_X_TLS_CACERTDIR, puis _dmarc et d_k ici.",
        "Du texte en gras, en italique et du_code dans une phrase.",
        "Samedi — Le jardin partagé ouvre de 9 h à 18 h",
        "Ouverture : le samedi matin, à partir de neuf heures.",
        "Le jardin est fermé en août pour les congés.",
        "Arroser les tomates du jardin partagé chaque soir.",
        "Le jardin partagé accueille des ruches au printemps.",
        "Quelques sous-commandes suffisent : backup : sauvegarde tout ; restore : restaure.",
        "La suite du texte est ici, assez longue.",
        "Les abeilles butinent au printemps.",
        "Apis mellifera, les abeilles domestiques.",
    ]


def test_an_extract_reads_code_as_tags_and_links_are_read():
    """The extract had a code rule of its own (« ``` » to the next « ``` », wherever they were):
    a fence of four backticks showing one of three left the fence's name and code as sentences,
    « ``` » written in a sentence swallowed the text up to the next fence, an indented block
    was quoted as prose, and a code span lost its link's brackets and its `**`."""
    text = (
        "Pour un bloc de code, on écrit ```` ``` ```` puis le nom du langage.\n\n"
        "````md\n```python\nprint('une ligne de code assez longue pour être citée')\n```\n````\n\n"
        "Pour lancer le conteneur en mode détaché :\n\n"
        "    docker run -tid -p 8080:80 --name web nginx:latest\n\n"
        "Un lien s'écrit `[[Nom de la note]]` dans le texte d'une note.\n"
        "Une fonction reçoit ses arguments nommés dans `**kwargs` en Python."
    )
    assert sentences(text) == [
        "Pour un bloc de code, on écrit ``` puis le nom du langage.",
        "Pour lancer le conteneur en mode détaché :",
        "Un lien s'écrit [[Nom de la note]] dans le texte d'une note.",
        "Une fonction reçoit ses arguments nommés dans **kwargs en Python.",
    ]
