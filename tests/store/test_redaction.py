"""What a visitor typed about themselves is kept out of the question log; the numbers a
question is about stay as typed."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grasbot.store.redaction import PLACEHOLDER, redact


@pytest.mark.parametrize(
    "typed, kept",
    [
        ("mon mail c'est jean.dupont@gmail.com, vous pouvez me recontacter ?", "mon mail c'est [e-mail], vous pouvez me recontacter ?"),
        ("écrivez à Élodie.Martin+site@exemple-asso.fr.", "écrivez à [e-mail]."),
        ("écrivez à jean.dupont (at) gmail.com, ou Jean [AT] free.fr", "écrivez à [e-mail], ou [e-mail]"),
        ("écrivez à jean@free.fr: merci, ou jean@free.fr. Ou marie@mail.free.fr:", "écrivez à [e-mail]: merci, ou [e-mail]. Ou [e-mail]:"),
        ("mon adresse : jean.dupont arobase laposte.net", "mon adresse : [e-mail]"),
        ("jean.dupont arobase laposte point net, jean [at] free [dot] fr, marie (at) free (dot) fr.", "[e-mail], [e-mail], [e-mail]."),
        ("jean arobase studio point app, marie (at) agence (dot) immo", "[e-mail], [e-mail]"),  # any top-level domain
        ('écrivez à "jean.dupont"@gmail.com', "écrivez à [e-mail]"),
        ("jean.dupont @ gmail.com ou jean @gmail.com, sinon marie@ orange.fr", "[e-mail] ou [e-mail], sinon [e-mail]"),
        ("appelez-moi au 06 12 34 56 78", "appelez-moi au [téléphone]"),
        ("ou au 06.12.34.56.78, 0612345678 ou 01-23-45-67-89", "ou au [téléphone], [téléphone] ou [téléphone]"),
        ("mon fixe : 04\u00a072\u00a012\u00a034\u00a056", "mon fixe : [téléphone]"),
        ("depuis la Belgique +32 470 12 34 56 ou +33 (0)6 12 34 56 78", "depuis la Belgique [téléphone] ou [téléphone]"),
        ("+33612345678, 0033 6 12 34 56 78, +1 (555) 123-4567", "[téléphone], [téléphone], [téléphone]"),
        ("de l'étranger, composez le 00 33 6 12 34 56 78", "de l'étranger, composez le [téléphone]"),
        ("+49 30 12345678, +39 06 1234 5678, +44 (0)20 7946 0958", "[téléphone], [téléphone], [téléphone]"),
        ("mon numéro +33 06 12 34 56 78 ou +20 10 1234 5678", "mon numéro [téléphone] ou [téléphone]"),
        ("rappelez-moi au (+33) 6 12 34 56 78 ou (+32)470123456", "rappelez-moi au [téléphone] ou [téléphone]"),
        ("mon IBAN FR76 3000 6000 0112 3456 7890 189 pour le don", "mon IBAN [IBAN] pour le don"),
        ("virement sur fr7630006000011234567890189 ?", "virement sur [IBAN] ?"),
        ("copié du site : FR76-3000-6000-0112-3456-7890-189", "copié du site : [IBAN]"),
        ("DE89\u00a03704\u00a00044\u00a00532\u00a00130\u00a000", "[IBAN]"),
        ("payé avec 4111 1111 1111 1111, expire 12/27", "payé avec [carte], expire 12/27"),
        ("ma carte 4111.1111.1111.1111. Refusée ?", "ma carte [carte]. Refusée ?"),
        ("Diners 3622 720627 1667, Amex 378282246310005, Visa 4222222222222", "Diners [carte], Amex [carte], Visa [carte]"),
        ("5555-5555-5555-4444 ou 4111111111111111 ou Amex 3782 822463 10005", "[carte] ou [carte] ou Amex [carte]"),
        ("Mastercard 2223 0000 4840 0011 ou 2223000048400011", "Mastercard [carte] ou [carte]"),  # its 2221-2720 series
        ("un IBAN norvégien, le plus court : NO93 8601 1117 947 ou NO9386011117947", "un IBAN norvégien, le plus court : [IBAN] ou [IBAN]"),
        # a SIRET begins as a Diners card may: named so, its SIREN passing Luhn, it is one
        ("ma carte 38347481400019 ou 30569309025904", "ma carte [carte] ou [carte]"),
        ("SIRET 30569309025904 (SIREN faux), siret à la fin. 38347481400019", "SIRET [carte] (SIREN faux), siret à la fin. [carte]"),
        ("mon IP publique 82.64.12.34 ne répond plus, ni 2a01:e0a:1f2:3::1", "mon IP publique [IP] ne répond plus, ni [IP]"),
        ("vu comme ::ffff:5240:c22 ou 64:ff9b::5240:c22", "vu comme [IP] ou [IP]"),
        ("mon n° de sécu 1 85 05 78 006 084 91 pour le dossier", "mon n° de sécu [sécurité sociale] pour le dossier"),
        ("NIR 185057800608491, 1.85.05.2A.006.084.35 ou 2 93 02 2b 123 456 55", "NIR [sécurité sociale], [sécurité sociale] ou [sécurité sociale]"),
        ("née en Guadeloupe : 2 85 05 971 12 084 34, ou 2.85.05.971.12.084.34", "née en Guadeloupe : [sécurité sociale], ou [sécurité sociale]"),
        ("écrivez à jean\uff20exemple.fr ou jean.dupont\uff20gmail\uff0ecom", "écrivez à [e-mail] ou [e-mail]"),
        ("Ｂｏｎｊｏｕｒ, appelez le ０６ １２ ３４ ５６ ７８, ｍｅｒｃｉ", "Ｂｏｎｊｏｕｒ, appelez le [téléphone], ｍｅｒｃｉ"),
        ("écrivez à jose\u0301@gmail.com (accent à part), e\u0301te\u0301 ﬁni", "écrivez à [e-mail] (accent à part), e\u0301te\u0301 ﬁni"),
        ("j'habite au 12 rue des Lilas, 75011 Paris, livrez-moi", "j'habite au [adresse], livrez-moi"),
        ("au 3 bis avenue Foch ou 12, rue de la République 69002 Lyon", "au [adresse] ou [adresse]"),
        ("au 8 boulevard du Général de Gaulle à Nantes, 12 rue des lilas sinon", "au [adresse] à Nantes, [adresse] sinon"),
        ("4 chemin des Vignes, 33000 Bordeaux ou 2 ter place d'Italie", "[adresse] ou [adresse]"),
        ("écrivez à BP 123, 75011 Paris ou B.P. 45", "écrivez à [adresse] ou [adresse]"),
        ("j'habite 12 place de la République, ou 7 Route de Lyon à Vienne", "j'habite [adresse], ou [adresse] à Vienne"),
        ("2 chemin des Vignes, 3 bis cours Mirabeau, 12, cours Mirabeau", "[adresse], [adresse], [adresse]"),
        ("au 12 cours de la Liberté, 5 impasse des Lilas ou 4 quai de Bercy", "au [adresse], [adresse] ou [adresse]"),
        ("8 allée Verte, ou 10 boulevard Voltaire", "[adresse], ou [adresse]"),
        # written as robots are dodged in English, between other brackets, with spaced dots
        ("mon mail : jean.dupont at gmail dot com, ou JEAN AT FREE DOT FR.", "mon mail : [e-mail], ou [e-mail]."),
        ("jean.dupont[@]gmail.com, jean{at}free.fr ou marie (arobase) orange (point) fr", "[e-mail], [e-mail] ou [e-mail]"),
        ("écrivez à jean.dupont @ gmail . com ou marie@orange . fr", "écrivez à [e-mail] ou [e-mail]"),
        # a French number in other groups than pairs, or between slashes
        ("mon portable : 06/12/34/56/78, 0612 345 678 ou 06 123 456 78", "mon portable : [téléphone], [téléphone] ou [téléphone]"),
        ("le fixe 01.4567.8901 ou 061 234 5678", "le fixe [téléphone] ou [téléphone]"),
    ],
)
def test_what_names_a_visitor_becomes_a_placeholder(typed, kept):
    assert redact(typed) == kept


@pytest.mark.parametrize(
    "typed",
    [
        "le 12/03/2024 à 14h30, ou le 01.02.2024 à 14:30:00",
        "en 2024, un disque de 4 To pour 1 299,99 € ?",
        "la version 1.2.3 de Debian 12, le port 8080",
        "version +1.2.3.4.5.6.7, écart +3 1 2 3 4 5 6 7, 00 1 2 3 4 5 6 7",
        "Température +20 00 12 34 56, écart +4 0012345678",
        "chmod 755 script.sh puis chmod -R 0644 dossier",
        "mon serveur 192.168.1.10, la box 10.0.0.1, localhost 127.0.0.1, ::1 et fe80::1",
        "j'ai mis 1.1.1.1 et 8.8.8.8 comme DNS, ou 2606:4700:4700::1111, 9.9.9.9",
        "std::vector et a::b::c",
        "le ratio 1:2:3:4:5:6:7:8, a:b:c:d:e:f:1:2, ::ffff:c0a8:10a (192.168.1.10)",
        "4111 1111 1111 1112 (Luhn faux), 1234567890123, 0000 0000 0000 0000",
        "FR76 3000 6000 0112 3456 7890 188 (clé fausse), FR76-3000-6000-0112-3456-7890-188",
        "FR76 3000 6000 0112 3456 7890 18\u212a et fr7630006000011234567890\u017f89 (Kelvin, s long)",
        "SIRET 732 829 320 00074, ISBN 978-2-07-036822-8",
        "SIRET 73282932000074 ou 55210055400013, n° 8000123456789018 (Luhn juste, nul réseau)",
        "mon SIRET 38347481400019, n° SIRET : 39105241200015 ou siret=38012986600014 ?",
        "pi vaut 3.14159265358979, 1111 2222 3333 4444 5555 6666",
        "4111.1111.1111.1112 (Luhn faux), 1.4111.1111.1111.1111, 4111.1111.1111.1111.1",
        "@jean sur Mastodon, user@host:~$ et a@localhost",
        "git clone git@github.com:moi/depot.git, et git@gitlab.example.org:~/x",
        'le mot "arobase" @ la fin, un "@" seul, "x"@y',
        "rendez-vous at 10.30, look at example.com, le signe arobase.",
        "rdv @ 10.30 ou à 14h@12.45, la page @ 2.0",
        "le 06 est un département, 06 12 le début d'un numéro",
        "clé fausse 1 85 05 78 006 084 92, 185057800608492, 3 85 05 78 006 084 91",
        "la 3e rue à gauche, 3 rue, les 2 rues, en 2024 rue",
        "j'ai suivi 3 cours de Python, il reste 1 place de libre, 2 chemins possibles",
        "3 cours Python, 12 cours Mirabeau, 2 place de parking, il reste 1 place. Paris",
        "le code postal 75011, une agence à 75011 Paris",
        "une BP de 100 Mo, BP 100 Mo, BP 100 Mbits, BP 100 %",
        "４ Ｔｏ, ½ Go, x², ﬁchier",
        "look at the dot com bubble, meet me at home dot com merci",
        "j'ai écrit @marie. Info : la réunion, puis à @bob. Net alors",
        "le 01/02/2024 12 personnes, le 01/02/2024/12, 0.12.345.6789, 06 12/34 56 78, 012 345 67 89 1",
    ],
)
def test_the_numbers_a_question_is_about_stay(typed):
    assert redact(typed) == typed


_PIECES = [*"0123456789 .-+@:()aZ\u00a0é\u202f\n＠０６\u0301ﬁ,", "1 ", "rue ", "bis ", "BP ", "Foch", "75011 ", "Paris", "2A", "de la "]


@given(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join) | st.text(max_size=80))
def test_any_text_is_redacted_without_error_and_once_for_all(text):
    """A question the log cannot make rows of turned the log off for the daemon's life."""
    once = redact(text)
    assert redact(once) == once
    assert PLACEHOLDER.sub("", once).count("@") <= text.count("@")
