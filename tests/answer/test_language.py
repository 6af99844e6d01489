"""answer.language.why_not_french: an answer the model wrote in English (or in another script)
is told from a French one that quotes English, as GrasBot's answers about code and tools do."""

from __future__ import annotations

import pytest

from grasbot.answer.language import NOT_FRENCH, why_not_french

FRENCH = [
    # commands and code, inline and fenced
    "Pour installer les dépendances, lancez `pip install -r requirements.txt` dans le dossier du projet [python-venv].",
    'Le modèle se lance avec `./main -m ~/mixtral-8x7b-instruct-v0.1.Q4_K_M.gguf -p "[INST] Write a Python function that '
    'downloads a file from a URL [/INST]" --color -c 2048` [llm]. Vous pouvez surveiller la mémoire du GPU avec `watch nvidia-smi`.',
    "La note décrit la compilation de llama.cpp [llm] :\n\n```bash\ngit clone git@github.com:ggerganov/llama.cpp.git\n"
    "cd llama.cpp\n# build it with the CUDA backend, this is the fast path for the GPU\ncmake .. -DLLAMA_CUBLAS=ON\n"
    "cmake --build . --config Release\n```\n\nIl faut ensuite lancer le serveur depuis le dossier `bin` [llm].",
    'Le script commence par `if __name__ == "__main__": main()` et lit ses options avec `argparse` [grasbot-cli]. '
    "Il affiche `Usage: grasbot [-h] {serve,check,ask} ...` quand on le lance sans argument.",
    # quotations of English notes and messages
    "La note cite la documentation : « You can increase -ngl (--gpu-layers) if you can, the more layers on the GPU the faster "
    "it is » [llm]. Autrement dit, plus de couches sur la carte graphique accélèrent la génération.",
    'Git répond "Permission denied (publickey). Please make sure you have the correct access rights and the repository exists." '
    "quand la clé SSH n'est pas ajoutée à l'agent [ssh].",
    "L'auteur retient cette phrase de son cours :\n\n> The best way to predict the future is to invent it, and that is what "
    "we do with these tools.\n\nElle résume sa vision de l'innovation [innovation].",
    "Le message d’erreur “The process cannot access the file because it is being used by another process” vient de Windows, "
    "qui verrouille le fichier ouvert [windows].",
    # English titles, names and products
    "Ses lectures de référence sont The Pragmatic Programmer, The Art of Unix Programming et The Mythical Man-Month [lectures].",
    "Hermes Agent est un agent IA open source développé par Nous Research [hermes-agent]. Il se compare à OpenClaw, "
    "plutôt pensé comme un assistant personnel multi-canal [hermes-agent].",
    "Le cours présente Visual Studio Code, ses extensions Live Share et Remote - SSH, et la palette Command Palette (Ctrl+Shift+P) [visual-studio-code].",
    "Il a présenté « Getting Started with the Obsidian API » au meetup de mars [meetup-2024-03].",
    # addresses and citations
    "Les modèles quantifiés se téléchargent sur https://huggingface.co/TheBloke/Mixtral-8x7B-Instruct-v0.1-GGUF/tree/main "
    "et la discussion sur les grammaires est sur [la pull request 1773](https://github.com/ggerganov/llama.cpp/pull/1773) [llm].",
    "Le pipeline de GrasBot cherche d'abord les notes, puis il les donne au modèle [grasbot-pipeline] [how-to-use-the-api] [what-is-the-index].",
    # short ones, and a French answer with a few English words in its prose
    "Oui [potager].",
    "Non, les notes n'en parlent pas.",
    "Le workflow est simple : un commit, une pull request, puis une review avant le merge [git-flow].",
    "Je ne trouve pas cette information dans les notes. Vous pouvez consulter /portfolio ou /contact.",
    "Le LLM n'est plus seulement une interface : il devient un moteur de raisonnement, de planification et de coordination "
    "[hermes-agent]. C'est le passage d'une IA conversationnelle à une IA outillée (tool use, function calling) [hermes-agent].",
]

ENGLISH = [
    "The garden is watered by a script that runs on a Raspberry Pi [potager].",
    "I don't know: the notes don't say anything about it.",
    "It's in the notes: the robot follows a black line with two infrared sensors [robot-suiveur].",
    "Hermes Agent is an open source AI agent developed by Nous Research [hermes-agent]. It is designed for long-running "
    "automation, with a memory that persists between sessions and skills that can be reused [hermes-agent]. Unlike OpenClaw, "
    "which is more of a multi-channel personal assistant, it targets development and system administration workflows.",
    "To build llama.cpp with CUDA, clone the repository and run:\n\n```bash\ncmake .. -DLLAMA_CUBLAS=ON\ncmake --build . "
    "--config Release\n```\n\nThen start the server from the `bin` folder [llm]. You can watch the GPU memory with "
    "`watch nvidia-smi` while it is running.",
    "GrasBot first searches the notes, then it gives the best passages to the model, which writes the answer [grasbot-pipeline].",
    "I can't find this information in the public notes. You could have a look at /portfolio or /contact instead.",
    "According to the notes, the author worked on these projects: the line-following robot [robot-suiveur], the "
    "connected garden [potager] and the Obsidian plugin [grasbot]. They are described on the portfolio page.",
]


@pytest.mark.parametrize("answer", FRENCH)
def test_a_french_answer_that_quotes_english_is_french(answer):
    assert why_not_french(answer) is None


@pytest.mark.parametrize("answer", ENGLISH)
def test_an_english_answer_is_told(answer):
    why = why_not_french(answer)
    assert why is not None and why.startswith(f"{NOT_FRENCH}anglais, pas en français (")


def test_the_reason_counts_the_words_it_read():
    """Code, the citation and the capitalised « It » are not counted: is, on… the reason says so."""
    assert why_not_french("It is watered by the script `in the`, [in-the] which runs at night.") == (
        "le modèle a répondu en anglais, pas en français (4 mots-outils anglais pour 0 français)"
    )


@pytest.mark.parametrize(
    "answer",
    [
        "Yes, in 2021 [potager].",  # one English word: too short to say
        "The garden is watered [potager].",  # « The » is a capital, « is » alone
        "Thanks!",
    ],
)
def test_an_answer_too_short_to_say_is_left_as_written(answer):
    assert why_not_french(answer) is None


def test_french_words_around_english_ones_keep_an_answer_french():
    """Four English function words, but as many French ones: French prose that says English terms."""
    answer = "Le mode read-only est activé par défaut, et le flag « force » is not needed for the dry run [sync]."
    assert why_not_french(answer) is None


def test_a_french_word_counts_at_a_sentence_start_and_an_english_one_does_not():
    """« Les » opens a French sentence (French whatever its case), « The » a title as often as a
    sentence: the English copied after a French opening is not the whole answer."""
    assert why_not_french("Les journaux le disent : the service has been restarted by the timer [grasbot-systemd].") is None
    assert why_not_french("The Art of Unix Programming, The Pragmatic Programmer, The Mythical Man-Month [lectures].") is None


def test_an_answer_in_chinese_is_not_french():
    why = why_not_french("花园由树莓派上运行的脚本自动浇水，每天早上检查土壤湿度 [potager]。")
    assert why is not None and why.startswith(f"{NOT_FRENCH}écriture chinoise (idéogrammes CJK), pas en français (")


def test_the_script_an_answer_drifts_into_is_named_in_french():
    """The author reads the reason in the plugin and the log: « écriture Cyrillic » was English in a French sentence."""
    assert why_not_french("Сад поливается каждое утро скриптом на Raspberry Pi [potager].") == (
        f"{NOT_FRENCH}écriture cyrillique, pas en français (33 lettres d'autres écritures pour 11 latines)"
    )
    # a script without a French name here: Unicode's, quoted
    assert why_not_french("ᚠᚢᚦᚨᚱᚲᚷᚹᚺᚾᛁᛃ [potager]").startswith(f"{NOT_FRENCH}écriture « Runic », pas en français (")


def test_an_answer_that_drifts_into_chinese_halfway_is_not_french():
    answer = "Le potager est arrosé par un script [potager]. 这个脚本每天早上运行，检查土壤的湿度，然后决定是否需要浇水。"
    assert why_not_french(answer) is not None


def test_a_french_answer_that_writes_a_few_characters_of_another_script_is_french():
    answer = (
        "Les hiragana (あいうえお) s'apprennent avant les kanji comme 木 et 水 : la note conseille dix caractères par jour "
        "et une révision le dimanche [japonais]. Le cyrillique se lit ensuite, à partir de мир [langues]."
    )
    assert why_not_french(answer) is None


@pytest.mark.parametrize(
    "answer",
    [
        "Der Garten wird jeden Morgen von einem Skript auf einem Raspberry Pi bewässert, das die Feuchtigkeit misst [potager].",
        "El jardín se riega cada mañana con un script que mide la humedad del suelo [potager].",
    ],
)
def test_another_language_in_latin_letters_is_left_as_written(answer):
    """Its function words are French's or English's (« die », « la », « que »): not judged."""
    assert why_not_french(answer) is None
