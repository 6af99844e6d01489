"""tokenize_fr: one analysis for notes and questions, so a note's words meet the visitor's."""

from __future__ import annotations

import pytest

from grasbot.retrieval.analysis import STOPWORDS, body_counts, fold, slugify, spelled, tokenize_fr, words


@pytest.mark.parametrize(
    "elided, plain",
    [
        ("l'architecture", "architecture"),
        ("l’architecture", "architecture"),
        ("lʼarchitecture", "architecture"),  # U+02BC, the modifier letter apostrophe
        ("LʼÉCOLE", "école"),
        ("d'Obsidian", "Obsidian"),
        ("d’Obsidian", "Obsidian"),
        ("qu'Ollama", "Ollama"),
        ("qu’Ollama", "Ollama"),
        ("jusqu'Ollama", "Ollama"),
        ("jusqu’Ollama", "Ollama"),
        ("s'installe", "installe"),
        ("n'utilise", "utilise"),
        ("c'est", "est"),
    ],
)
def test_elisions_are_stripped(elided, plain):
    assert tokenize_fr(elided) == tokenize_fr(plain)
    assert words(elided) == words(plain)


def test_elisions_exact_words():
    assert words("l'apprentissage d’une machine jusqu'au bout") == [
        "apprentissage",
        "une",
        "machine",
        "au",
        "bout",
    ]
    # « jusqu'à » leaves only « a », a stopword: nothing of it reaches the index
    assert tokenize_fr("jusqu'à Lyon") == tokenize_fr("Lyon") == ["lyon"]


def test_apostrophe_inside_a_word_that_is_not_an_elision_is_kept_together():
    assert words("aujourd'hui") == ["aujourdhui"]


@pytest.mark.parametrize("a, b", [("données", "donnees"), ("Données", "DONNEES"), ("modèles", "modele"), ("réseau", "reseau")])
def test_accents_fold_to_the_same_stem(a, b):
    assert tokenize_fr(a) == tokenize_fr(b)
    assert len(tokenize_fr(a)) == 1


def test_fold_exact():
    assert fold("Élève À Œuvre Ægis") == "eleve a oeuvre aegis"
    assert tokenize_fr("données") == ["donne"]
    assert tokenize_fr("œuvre") == tokenize_fr("oeuvre") == ["oeuvr"]


@pytest.mark.parametrize(
    "written, plain",
    [
        ("dé\u00adve\u00adlop\u00adpe\u00adment", "développement"),  # soft hyphens, pasted from a web page
        ("multi\u00adplateforme", "multiplateforme"),
        ("Obsi\u200bdian", "Obsidian"),  # a zero-width space
        ("\ufeffPython\u2060", "Python"),  # a byte-order mark, a word joiner
        ("\u200eréseau\u200f", "réseau"),  # direction marks
        ("Java™", "Java"),  # NFKD made it « javatm »
    ],
)
def test_characters_a_reader_does_not_see_leave_the_word_whole(written, plain):
    assert tokenize_fr(written) == tokenize_fr(plain)
    assert len(tokenize_fr(plain)) == 1
    assert body_counts(f"Le {written} ici") == body_counts(f"Le {plain} ici")
    assert slugify(written) == slugify(plain)


def test_cpp_and_friends():
    assert tokenize_fr("c++") == ["cpp"]
    assert tokenize_fr("C++") == ["cpp"]
    assert tokenize_fr("projet en C++ et C#") == tokenize_fr("projet") + ["cpp", "csharp"]
    assert "cpp" in tokenize_fr("Je code en c++.")


def test_hyphens_and_underscores_split():
    assert words("machine-learning") == ["machine", "learning"]
    assert words("snake_case") == ["snake", "case"]
    assert tokenize_fr("grasbot-pipeline") == tokenize_fr("grasbot pipeline") == ["grasbot", "pipelin"]
    assert tokenize_fr("json_rpc") == tokenize_fr("json rpc")


def test_stopwords_are_dropped():
    assert tokenize_fr("le la les de des du et est que qui comment pourquoi") == []
    assert tokenize_fr("Comment fonctionne GrasBot ?") == ["fonction", "grasbot"]
    assert tokenize_fr("Qu’est-ce que GrasBot ?") == ["grasbot"]
    for word in ("le", "de", "et", "comment", "quoi", "pourquoi", "etre"):
        assert word in STOPWORDS


def test_stopwords_typed_in_a_hurry_are_dropped_too():
    """« c koi » is « c'est quoi »: a word no note holds would weigh as much as the rarest one."""
    assert tokenize_fr("c koi une note orpheline stp ?") == tokenize_fr("c'est quoi une note orpheline ?") == ["not", "orphelin"]
    assert tokenize_fr("kel modele tu utilises pk ?") == tokenize_fr("quel modèle tu utilises pourquoi ?")


def test_a_hurried_stopword_written_in_capitals_is_a_name():
    """« QUEST » (a marketing framework, a note's whole title) was read as « quest », typed for
    « qu'est »: neither its title nor its body held a word, and « C'est quoi QUEST ? » found no
    note by its name. In capitals it is a name, in a note and in a question alike."""
    assert tokenize_fr("C'est quoi QUEST ?") == ["quest"]
    assert tokenize_fr("Le framework [[QUEST]], JSP-servlets") == ["framework", "quest", "jsp", "servlet"]
    assert body_counts("QUEST est un framework. QUEST.")["quest"] == 2
    assert spelled("C'est quoi QUEST ?") == {"quest": "QUEST"}
    # typed in a hurry, and « qu'est » written in capitals, they stay stop words
    assert tokenize_fr("quest ce que le DNS ? Quest ce que jsp stp") == tokenize_fr("QU'EST-CE QUE le DNS ?") == ["dn"]


def test_stopwords_match_after_folding():
    # « été », « être » and « très » are in the list folded: the accented forms go too
    assert tokenize_fr("été être très") == []


def test_plural_s_on_borrowed_words():
    assert tokenize_fr("transformers") == tokenize_fr("transformer") == ["transform"]
    assert tokenize_fr("Transformers") == tokenize_fr("transformer")
    assert tokenize_fr("embeddings") == tokenize_fr("embedding")
    assert tokenize_fr("notes") == tokenize_fr("note")


def test_s_endings_that_are_not_plurals_are_kept():
    # -ss, -us, -is are not plurals: stripping them would merge unrelated words
    assert tokenize_fr("class") == ["class"]
    assert tokenize_fr("status") == ["status"]


@pytest.mark.parametrize("hyphenated, glued", [("UTF-8", "utf8"), ("latin-1", "Latin1"), ("SHA-256", "sha256"), ("FAT-32", "fat32")])
def test_a_hyphenated_name_and_number_meets_its_glued_spelling(hyphenated, glued):
    joined = tokenize_fr(glued)
    assert len(joined) == 1 and joined[0] in tokenize_fr(f"encodé en {hyphenated} ici")
    assert joined[0] in tokenize_fr(f"({hyphenated}),")  # punctuation around
    assert body_counts(f"Le fichier est en ({hyphenated}), ici.")[joined[0]] == 1  # a note's body, read chunk by chunk


def test_a_hyphenated_name_and_number_keeps_its_parts():
    assert tokenize_fr("gpt-4") == ["gpt", "4", "gpt4"]  # « gpt » still meets « gpt-4 »
    assert tokenize_fr("iso-8859-1") == ["iso", "8859", "1"]  # a longer chain is not a name and a number
    assert tokenize_fr("x86-64") == ["x86", "64"]
    assert tokenize_fr("mise-à-jour") == ["mis", "jour"]


@pytest.mark.parametrize("hyphenated, glued", [("e-mail", "email"), ("E-commerce", "ecommerce"), ("t-shirt", "tshirt")])
def test_a_letter_hyphen_word_meets_its_glued_spelling(hyphenated, glued):
    """« adresse email ? » found nothing in a note that writes « adresse e-mail »: the « e »
    alone is dropped, and « mail » is not « email »."""
    (joined,) = tokenize_fr(glued)
    assert joined in tokenize_fr(f"mon adresse {hyphenated}.")
    assert body_counts(f"Écrivez à mon adresse {hyphenated}, merci.")[joined] == 1
    assert tokenize_fr("a-t-il") == [] and tokenize_fr("peut-être") == tokenize_fr("peut être")  # no letter-hyphen-word there


def test_numbers_kept_single_letters_dropped():
    assert tokenize_fr("python 3 x") == ["python", "3"]
    assert tokenize_fr("2024") == ["2024"]


def test_order_and_duplicates_are_kept_for_bm25():
    assert tokenize_fr("chats chat graphe") == ["chat", "chat", "graph"]


def test_same_stems_for_a_note_and_a_question():
    note = "GrasBot répond à partir des notes Obsidian de l'auteur, grâce au modèle Qwen3."
    question = "Sur quelles NOTES obsidian GrasBot repond-il ? Quel modele ?"
    assert {"grasbot", "obsidian", "model"} <= set(tokenize_fr(note)) & set(tokenize_fr(question))
    assert set(tokenize_fr("les bases de données relationnelles")) == set(tokenize_fr("Base de donnees relationnelle ?"))


@pytest.mark.parametrize(
    "short, long",
    [
        ("bdd", "base de données"),
        ("BDD", "bases de données"),
        ("l'IA", "l'intelligence artificielle"),
        ("une maj", "une mise à jour"),
        ("mon mdp", "mon mot de passe"),
        ("les distribs", "les distributions"),
        ("pb-config", "problème de configuration"),
        ("pousser en prod", "pousser en production"),
    ],
)
def test_a_shorthand_reads_as_the_words_it_stands_for(short, long):
    """On both sides: a question's « bdd » meets a note's « base de données », and a note's
    « IA » a question's « intelligence artificielle »."""
    assert tokenize_fr(short) == tokenize_fr(long)


def test_words_that_only_look_like_shorthands_are_left_alone():
    assert tokenize_fr("une info, un tel projet, la doc") == ["info", "tel", "projet", "doc"]
    assert tokenize_fr("bddx iaa") == ["bddx", "iaa"]


def test_empty_and_punctuation():
    assert tokenize_fr("") == []
    assert tokenize_fr("?!… — «»") == []


def test_slugify():
    assert slugify("Mon Projet Été !") == "mon-projet-ete"
    assert slugify("  Déjà_vu  ") == "deja-vu"
    assert slugify("C'est l'été") == "c-est-l-ete"


def test_a_stem_is_spelled_as_the_question_wrote_it():
    """What a reason shows of the question's words (`scoring.question_pairs`): the word as
    typed, accents and all, without its elided article."""
    written = spelled("Bloqué au menu de démarrage, l’espace disque d'aujourd'hui ? la bdd")
    assert written[tokenize_fr("démarrage")[0]] == "démarrage"
    assert written[tokenize_fr("bloqué")[0]] == "Bloqué"  # its capital too
    assert written[tokenize_fr("espace")[0]] == "espace"  # « l’espace »
    assert spelled("lʼécole") == {tokenize_fr("école")[0]: "école"}  # U+02BC
    assert written[tokenize_fr("aujourd'hui")[0]] == "aujourd'hui"  # no elision in it
    assert {written[t] for t in tokenize_fr("bdd")} == {"bdd"}  # a shorthand's words, as typed
    assert set(written) == set(tokenize_fr("Bloqué au menu de démarrage, l’espace disque d'aujourd'hui ? la bdd"))
