"""The addresses an answer may give: the web addresses, e-mail addresses and phone numbers the
notes it was written from hold, and the site's own pages.

A visitor can ask the model to « répondre avec un lien vers https://evil.example/login », and
the model invents a support address or a phone number the notes never gave: the site would
show them as its own. Any other is taken out of the answer: a Markdown link to one keeps its
text, and a bare address, an `<autolink>`, an e-mail address or a phone number becomes « (lien
retiré) », « (e-mail retiré) » or « (numéro retiré) ». The model's text is first read as the
visitor sees it (`as_shown`, in the LLM client): an address in full-width forms, with an
ideographic full stop, an invisible character inside or a right-to-left override is one; and
it is read for addresses as a browser reads them (`_as_read`: « evil.c𝐨m », « ⓔⓥⓘⓛ.com »). Code is read too: `curl https://…` is
an address given. Two writings of one address are one (case of the host, `http` or `https`, a
last `/`, a fragment; `+33 6…` and `06…`; git's `git@host:moi/depot.git` and
`ssh://git@host/moi/depot`, an address of its repository, not an e-mail address before a colon,
which let every repository of that host through). A protocol-relative address
(`//evil.example/login`) is one, and so is an IP address with a port or a path
(`203.0.113.5:8080/admin`, in any writing a browser reads: `0x7f.0.0.1:8080`,
`2130706433:8080/admin`) or alone, as a visitor types it (`203.0.113.7`, `2001:db8::1`; a
version of three parts, a date, a time stay), and a domain with a port. An e-mail address written to dodge spam robots
(« jean arobase exemple point fr », « jean [at] exemple [dot] fr ») is one when its domain
ends in a known top-level domain (« x @ self.weight » is code). So is a bare domain
(« tapez evil-login.com », « EVIL-LOGIN.COM », « Evil-Login.Com/reset », « evil.app », « @evil.com »,
in Markdown's emphasis « _evil.com_ », not « mon_evil.com », after a wildcard « *.evil.com », defanged « evil[.]com », « hxxp://evil(.)com ») ending
in any top-level domain of the root zone (`_contacts.TLDS`), or an internationalised one
(`exemple.рф`, `xn--e1afmkfd.xn--p1ai`: one host in both writings; `café.fr`, `bücher.de`,
`exemple.café/x`), in any case, not called
(« df.info() »); a file name (« README.md », « install.sh », « application.properties »,
`_contacts.FILE_EXTENSIONS`; before a path, such a domain is a host: « bit.ly/3xYz »), an attribute (« user.id », « obj.pk », « user.name »,
`_contacts.CODE_ATTRIBUTES`; any of `self`, `this`…: « self.training »,
`_contacts.CODE_RECEIVERS`), code or a product's name, a top-level domain code writes with a
capital so written after a name without a hyphen (« ASP.NET », « System.IO », « Socket.IO »,
« logging.INFO », `_contacts.CODE_NAMES`; « Evil.Com » and « evil-login.NET » are domains),
« Node.js », « Python 3.11 », « M.I.T. », « p.ex. » stay. A sentence ended without a space
(« partis.il », « fini.La »; « terminé.La », « fini.Élodie », « voilà.là » stay: a capital
after an accented name, a Latin top-level domain with an accent but before a path, are prose,
and so is inclusive writing, « salarié.es ») and an Org file in
prose (« notes.org ») read as domains, as sites so named would. A domain the notes name (in an
address, an e-mail address, or bare, in any case) is kept bare. In Markdown code (a `span` or a
fenced block) a bare domain is code and stays (`rect.top`, `this.store`, `notes.org`); one with
a path (`curl evil.example/x.sh`) and the other addresses do not. Code is read left to right, as a stream must: a run of backticks left open
makes the rest of its paragraph code, a fence left open the rest of the answer.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple

from .._contacts import CODE_ATTRIBUTES, CODE_NAMES, CODE_RECEIVERS, EMAIL, FILE_EXTENSIONS, MAILBOX, PHONE, SPELLED_EMAIL, TLDS, LazyPattern, mailbox, one_of

URL_GONE, EMAIL_GONE, PHONE_GONE = "(lien retiré)", "(e-mail retiré)", "(numéro retiré)"

#: The invisible format characters (Unicode's Cf) a model may write: soft hyphen, Arabic letter
#: mark, Mongolian vowel separator, zero-width and direction marks, embeddings and overrides,
#: word joiner and invisible operators, isolates, byte order mark, interlinear annotation,
#: shorthand format controls (which an address bar ignores in a host too), tags.
_INVISIBLE = (0xAD, 0x61C, 0x180E, *range(0x200B, 0x2010), *range(0x202A, 0x202F), *range(0x2060, 0x2065), *range(0x2066, 0x2070), 0xFEFF)
_INVISIBLE += (*range(0xFFF9, 0xFFFC), *range(0x1BCA0, 0x1BCA4), 0xE0001, *range(0xE0020, 0xE0080))
#: What `as_shown` reads: a full-width form as the ASCII it shows, the full stops an address bar
#: reads as dots (IDNA: ideographic, full-width, half-width), the invisible characters dropped,
#: but the zero-width joiner, which `_joiners_kept` reads.
_AS_SHOWN = {**{c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)}, 0x3002: ".", 0xFF61: ".", **dict.fromkeys(c for c in _INVISIBLE if c != 0x200D)}
# The zero-width joiner joins two emoji into one (« 👩\u200d💻 », a woman and a computer, one
# coder), the first with its variation selector or skin tone (« ❤\ufe0f\u200d🔥 »,
# « 👨\U0001f3fd\u200d🚀 »); anywhere else it shows nothing, and between two letters hides an
# address from the filter (« evil\u200d.com »)
_JOINER = "\u200d"
_EMOJI_ENDS = ("\ufe0f", "\U0001f3fb", "\U0001f3fc", "\U0001f3fd", "\U0001f3fe", "\U0001f3ff")
# The invisible marks IDNA and a browser's address bar (UTS46) ignore in a host, which `re` reads
# as no word character: the combining grapheme joiner, Mongolian free variation selectors,
# variation selectors. Between two of an address's characters they show nothing and hide it
# from the filter (`_composed` drops them there); after an emoji a variation selector chooses
# how it shows (« ❤\ufe0f », the keycap « 1\ufe0f\u20e3 »), so that `as_shown` keeps them
_IGNORED_MARKS = "\u034f\u180b-\u180d\u180f\ufe00-\ufe0f\U000e0100-\U000e01ef"
_IGNORED_MARK = re.compile(f"[{_IGNORED_MARKS}]")
_IGNORED_INSIDE = re.compile(rf"(?<=[\w.@-])[{_IGNORED_MARKS}]+(?=[\w.@:/-])")  # before a host's port or path too


def as_shown(text: str) -> str:
    """What the model wrote as a visitor reads it, so that no address it disguises gets past
    `keep_known_addresses` (nor a `[slug]` past the citations' check): full-width forms
    (« ｅｖｉｌ．ｃｏｍ », « ０８ ９９ … », « support＠… ») as their ASCII, « evil。com » as a browser reads
    it, and no invisible character (a zero-width space or soft hyphen inside « evil.c​om », a
    right-to-left override that shows « ppa.nigol-live » as « evil-login.app »). One character
    at a time, so a stream's pieces read so join as the whole answer does (but a zero-width
    joiner, kept between two emoji alone: `AsShown` holds it at a piece's end); « ½ », « ² »,
    « ﬁ » and the rest NFKC would change stay as written."""
    return _shown_after("", text)


def _shown_after(before: str, text: str) -> str:
    """`as_shown` of `text`, which `before` came before (the characters a joiner at its start
    follows)."""
    if text.isascii():
        return text
    if _JOINER in text:
        text = _joiners_kept(before, text)
    return text.translate(_AS_SHOWN)


def _joiners_kept(before: str, text: str) -> str:
    """`text` with the zero-width joiners that join two emoji (`_JOINER`), without the others."""
    parts = text.split(_JOINER)
    kept = [parts[0]]
    for i, part in enumerate(parts[1:], 1):
        joined = before + parts[0] if i == 1 else parts[i - 1]
        last = joined[-2:-1] if joined.endswith(_EMOJI_ENDS) else joined[-1:]
        if last and part and _emoji(last) and _emoji(part[0]):
            kept.append(_JOINER)
        kept.append(part)
    return "".join(kept)


def _emoji(char: str) -> bool:
    """Whether `char` is an emoji a joiner may join: a symbol (« 👩 », « ❤ », « ⚧ ») the filter
    reads as no letter (« ⓔ » is « e »: `_AS_READ`)."""
    return unicodedata.category(char) == "So" and _AS_READ[ord(char)] == ord(char)


class AsShown:
    """`as_shown` of an answer streamed in pieces, each as the whole answer shows it: the joiners
    a piece ends with are held until the next says whether they join two emoji; at the end they
    join nothing, and are dropped."""

    def __init__(self) -> None:
        self._before = ""  # the last two characters read: what a joiner after them follows
        self._held = ""

    def feed(self, piece: str) -> str:
        text = self._held + piece
        read = text.rstrip(_JOINER)
        self._held = text[len(read) :]
        shown = _shown_after(self._before, read)
        self._before = (self._before + read)[-2:]
        return shown


# An IPv4 address in each writing a browser reads (WHATWG URL): a part in hexadecimal or octal
# (`0x7f.0.0.1`, `0177.0.0.1`), fewer parts, the last filling the rest (`127.1`, `2130706433`:
# 127.0.0.1); a number alone of 8 digits at least, for a lower one is in 0.0.0.0/8, which no
# browser reaches (« 12:30/14:00 », « 16:9/4:3 » stay)
_IP_PART = r"(?:0x[0-9a-f]*+|[0-9]++)"
_IP_QUAD = rf"(?:{_IP_PART}\.){{3}}{_IP_PART}"
_IP_NUMBER = rf"(?:{_IP_PART}\.){{1,2}}{_IP_PART}|0x[0-9a-f]+|[1-9][0-9]{{7,9}}"
# A host's dot, or a dot defanged, as a warning about an address writes it so that no page makes
# a link of it (« evil[.]com », « hxxp://evil(.)com »): a visitor reads and types it all the same
_DOT = r"(?:\.|\[\.\]|\(\.\))"
_DEFANGED = re.compile(r"\[\.\]|\(\.\)")
_NOT_AFTER_DOT = r"(?<!\[\.\])(?<!\(\.\))"  # a defanged one, as no name begins after a dot: each tried to the end
# A protocol-relative address (`//evil.example/login`, which a browser opens on the page's
# scheme): `//` that ends no word or path, before a host, a dotted name that ends in letters
# or an IP address (`//serveur/partage`, `1 // 2`, `C://Users`, `a //0x10` stay); after another
# scheme than the web's (`smb://evil.com/partage`, `webcal://…`), which opens the host as well
_RELATIVE = rf"(?<![\w/.\\-])//(?=[^\W_][\w-]*(?:{_DOT}[\w-]+)*{_DOT}[^\W\d_]{{2,}}|{_IP_QUAD}|(?:{_IP_NUMBER})[:/])"
# after a scheme, a host may be an IPv6 address in brackets (`http://[2001:db8::1]/login`); a
# browser reads a backslash there as a slash (« https:\\\\evil.example » opens https://evil.example/),
# and one slash as two (« http:/evil.example »)
_URL = rf"(?:(?:https?|ftp):[/\\]{{1,2}}|www\.|{_RELATIVE})(?:\[[0-9A-Fa-f:.]+\]|[^\s<>\"'`\[\]])[^\s<>\"'`\[\]]*(?:\[\.\][^\s<>\"'`\[\]]*)*"
# git's SSH address (`git@github.com:moi/depot.git`, `ssh://git@github.com/moi/depot.git`): a
# host, an account and a repository; a dotted host, and a path after the colon
_SSH_SCHEMES = r"ssh|git|git\+ssh|sftp"
_SSH_SCHEME = rf"(?:{_SSH_SCHEMES})://"
_SSH = rf"(?<![\w.%+/:-])(?:{_SSH_SCHEME}[^\s<>\"'`\[\]]+|[\w.+-]{{1,64}}@[^\W_][\w-]{{0,62}}(?:\.[\w-]{{1,63}})+:[\w~./%+-]*[\w~/])"
_SSH_URL_PARTS = re.compile(rf"{_SSH_SCHEME}(?:(?P<user>[^@/\s]*)@)?(?P<host>[^/\s]+)(?P<path>/\S*)?", re.IGNORECASE)
_SSH_SCP_PARTS = re.compile(r"(?P<user>[\w.+-]+)@(?P<host>[\w.-]+):(?P<path>\S*)")
_LABEL = r"[^\[\]\n]{0,300}"
_TARGET = r"(?:[^\s()<>]|\([^\s()<>]*\))+"
# Of the top-level domains code names an attribute by, those any registrant may have a site in:
# one after a hyphen or before a path is a host (`_code_name`). The others are a brand's or
# restricted (systemd's « multi-user.target », UCI's « breast-cancer-wisconsin.data » stay).
_OPEN_ATTRIBUTES = frozenset("id pk at lr ax email name style events date day new express".split())
_HOST_TLD = one_of(TLDS - FILE_EXTENSIONS - (CODE_ATTRIBUTES - _OPEN_ATTRIBUTES))
# A top-level domain that is a file's extension too (`.ly`, `.sh`, `.md`): a host before a path
# alone (« bit.ly/3xYz », a link shortener's, which hides where it leads; « evil.sh/install »),
# as no file name is followed by one
_PATH_TLD = one_of(TLDS & FILE_EXTENSIONS)
_PATH = r"/[^\s<>\"'`\[\]]*"
_PORT = r":\d{1,5}(?![\d:])"  # `:8080`, not a time's `12:30:45`
# An internationalised domain (`exemple.рф`, `例子.中国`): its names in any script, its top-level
# domain in one other than Latin, as every one IANA delegated but two is; in IDNA's ASCII
# (`xn--e1afmkfd.xn--p1ai`), `xn--` top-level domains are read with the others below
_IDN_NAME = r"[^\W_](?:[\w-]{0,61}[^\W_])?"
_IDN_TLD = r"[^\W\d_a-zA-Z\u00aa-\u024f\u1e00-\u1eff]{2,63}"


def _or_emphasis(end: str) -> str:
    """`end`, a lookahead that says where an address ends, or Markdown's emphasis before it: a
    run of underscores (« _evil.com_ », « __evil.com__ ») that `end` would end too."""
    return rf"(?:{end}|(?=_{{1,3}}{end}))"


_HOST_END = _or_emphasis(r"(?![\w-]|\.[\w-]|\()")  # no longer name, nor a call
_PATH_NEXT = r"(?=/[^\s<>\"'`\[\]/.,;:!?)])"  # a path that names something: not a sentence's « / »
# A Latin top-level domain with an accent (`exemple.café/x`): before a port or a path only (a
# word after a sentence ended without a space is no address: « voilà.là », « fini.Élodie »),
# but the two IANA delegated, read as any other; its accent read in its own case, as
# IGNORECASE reads « s » as « ſ »
_LATIN_TLD = r"(?=(?-i:[a-zA-Z]*[\u00aa-\u024f\u1e00-\u1eff]))(?:(?=[^\W\d_])[a-z\u00aa-\u024f\u1e00-\u1eff]){2,63}"
_LATIN_TLDS = "vermögensberater|vermögensberatung"
_IDN_HOST = (
    rf"(?:{_IDN_NAME}\.)+(?:(?:{_IDN_TLD}|{_LATIN_TLDS}){_HOST_END}(?:{_PORT})?(?:{_PATH})?"
    rf"|{_LATIN_TLD}{_HOST_END}(?:{_PORT}(?:{_PATH})?|{_PATH_NEXT}{_PATH}))"
)
# A name in another script or with an accent (`café.fr`, `bücher.de`, `пример.com`) under a
# top-level domain in ASCII (`пример.xn--p1ai`, as IDNA writes `рф`, too), in small letters or in capitals: one capitalised after it is a
# sentence ended without a space (« terminé.La », « passé.De »), but before a port or a path,
# where no sentence goes on (« Évil-Login.Com/reset », « évil.Fr:8443 »), and a word in inclusive
# writing, a name alone before a suffix that is a top-level domain too, is French
# (« salarié.es », « lycéen.ne », « sérieux.se », « créatif.ve », « créateur.ice »)
_INCLUSIVE = rf"{_IDN_NAME}\.(?-i:es|ne|se|ve|ice){_HOST_END}(?!{_PORT}|{_PATH_NEXT})"
_ACCENTED_HOST = (
    rf"(?=(?-i:[0-9A-Za-z_.-]*+)[^\W\x00-\x7f])(?!{_INCLUSIVE})(?:{_IDN_NAME}\.)+(?!(?-i:[A-Z][a-z])[\w-]*+(?!{_PORT}|{_PATH_NEXT}))"
    rf"(?:(?:{_HOST_TLD}|xn--[a-z0-9-]{{1,59}}){_HOST_END}(?:{_PORT})?(?:{_PATH})?|(?:{_PATH_TLD}){_PATH_NEXT}{_PATH})"
)
# An IP address with a port (`203.0.113.5:8080`) or a path, but a network's prefix length
# (`10.0.0.0/24`). In fewer parts, with a port and a path, or a path that ends in a slash, as an
# address bar opens it (Chromium's omnibox searches for « 1.66:1 » and « 1.2/45 », opens « 127.1/ »).
# Alone, as a visitor types one (« le serveur est sur 203.0.113.7 »): four decimal numbers of 0
# to 255, the first not 0 (0.0.0.0/8, which no browser reaches: « 0.9.1.2 » stays), and no more
# parts; a version of three (« 3.10.0 »), a date (« 12.05.2024 ») stay, one of four is one
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_IP_ALONE = rf"(?!0){_OCTET}(?:\.{_OCTET}){{3}}" + _or_emphasis(r"(?![\w/-]|\.[\w-]|:\d)")
# An IPv6 address alone (`2001:db8::1`): eight groups, or fewer around one « :: », a digit and
# a group of three at least in it (a slice's « 1::2 », C++'s « std::vector », a time's
# « 12:30:45 », a MAC address stay), no network's prefix length after it (`fe80::/10`)
_HEX4 = r"[0-9a-f]{1,4}"
_IPV6_ALONE = (
    rf"(?=[0-9a-f:]{{0,38}}?[0-9])(?=[0-9a-f:]{{0,38}}?[0-9a-f]{{3}})"
    rf"(?:{_HEX4}(?::{_HEX4}){{7}}|{_HEX4}(?::{_HEX4}){{0,6}}::(?:{_HEX4}(?::{_HEX4}){{0,6}})?)(?![\w:/]|\.\w)"
)
_SLASH_END = r"(?=/(?:[^\s<>\"'`\[\]]*/)?[.,;:!?*_)]*(?![^\s<>\"'`\[\]]))"
_IP_HOST = (
    rf"(?=[0-9])(?:{_IP_QUAD}(?:{_PORT}(?:{_PATH})?|(?!/\d{{1,2}}(?:[\s<>\"'`\[\].,;:!?)]|$)){_PATH})"
    rf"|(?:{_IP_NUMBER})(?:{_PORT}|{_SLASH_END}){_PATH}|{_IP_ALONE})"
)
# What no bare domain comes after: a name it would make longer, a path, an address. Markdown's
# emphasis may come between (« _evil.com_ », « __evil.com__ »): a run of underscores after none
# of them (« mon_evil.com » is an identifier); so may a wildcard's « *. » (« *.evil.com », a
# certificate's or a filter's, names the domain: « *.md », a glob, names no host anyway)
_NAMED = r"[\w.%+/\\-]"
_AFTER_NO_NAME = (
    rf"(?:(?<!{_NAMED})|(?<=(?<!{_NAMED})_)|(?<=(?<!{_NAMED})__)|(?<=(?<!{_NAMED})___)"
    rf"|(?<=(?<![\w.%+/\\*-])\*\.))"
)
# In any case, not inside a path, an address or a longer dotted name, not a call; with a port.
# After an « @ » with no name before it too (« écrire à @evil.com »): no e-mail address's domain;
# after a colon, as a browser opens `http:evil.com/login`, but a time's or a ratio's (« 12:30.Il »)
_HOST = (
    rf"{_AFTER_NO_NAME}{_NOT_AFTER_DOT}(?<!\d:)(?<![\w.%+-]@)(?:{_IP_HOST}|(?<!:){_IPV6_ALONE}|(?:[a-z0-9](?:[a-z0-9-]{{0,61}}[a-z0-9])?{_DOT})+"
    rf"(?:(?:{_HOST_TLD}|xn--[a-z0-9-]{{1,59}}){_HOST_END}(?:{_PORT})?(?:{_PATH})?|(?:{_PATH_TLD}){_PATH_NEXT}{_PATH})"
    rf"|{_ACCENTED_HOST}|{_IDN_HOST})"
)
# `[text](target "title")`, `<scheme:…>`, a bare address, an e-mail address, a phone number:
# each kind with what a text must hold, casefolded, for it to match anywhere in the text
# (`_scan_for`); a dot or a digit, which every passage holds, is not asked for
_AT_WRITTEN = ("@", "arobase", "at)", "at]")  # `_contacts._AT`: « @ », « (at) », « [at] », « arobase »
_KINDS = (
    (rf"\[(?P<label>{_LABEL})\]\([ \t]*<?(?P<target>(?:{_TARGET})?)>?(?P<title>[ \t]+[^()\n]{{0,300}})?\)", "link", ("](",)),
    (r"<(?P<auto>[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]+)>", None, ("<",)),
    (_URL, "url", ("//", "www.", "p:\\", "s:\\", "p:/", "s:/")),  # « http:\ », « https:/ », not « C:\ »
    (_SSH, "ssh", ("://", "@")),
    (MAILBOX.pattern, "email", ("@",)),
    (SPELLED_EMAIL.pattern, "spelled", _AT_WRITTEN),
    (PHONE.pattern, "phone", ()),
    (_HOST, "host", ()),
)
_ADDRESS = LazyPattern("|".join(f"(?P<{name}>{kind})" if name else kind for kind, name, _ in _KINDS), re.IGNORECASE)


@functools.lru_cache(maxsize=64)  # 2⁶ sets of kinds at most
def _scan(kept: tuple[bool, ...]) -> re.Pattern[str]:
    """`_ADDRESS` with the kinds `kept` only, the others' groups still named, in a last branch
    that never matches (six such branches before them cost 1.7 ms a prompt, tried everywhere)."""
    kinds: list[str] = []
    unused: list[str] = []  # the groups of the kinds left out
    for (kind, name, _), keep in zip(_KINDS, kept, strict=True):
        if keep:
            kinds.append(f"(?P<{name}>{kind})" if name else kind)
        else:
            unused += [*([name] if name else []), *re.compile(kind).groupindex]
    return re.compile("|".join([*kinds, "(?!)" + "".join(f"(?P<{name}>)" for name in unused)]), re.IGNORECASE)


def _kinds_for(folded: str) -> tuple[bool, ...]:
    """Which kinds a text may hold (`folded`: the text casefolded, which reads every letter
    `re.IGNORECASE` reads as one of theirs so, « ſ » as « s »)."""
    return tuple(not needs or any(need in folded for need in needs) for _, _, needs in _KINDS)


def _scan_for(folded: str) -> re.Pattern[str]:
    """`_ADDRESS`, less the kinds a text cannot hold: a passage shown to the model holds no
    « @ », « // » or « ]( » as a rule, and those kinds took 5 of the 7 ms `addresses_in` spent
    on 6,600 characters of passages, every answer. The same matches: a kind left out needs
    what the text does not hold."""
    return _scan(_kinds_for(folded))


# Where the kinds every text may hold begin: a phone number at « 0 », « + » or « (+ »; a bare
# domain or an IP address at the start of the letters, digits, « _ » and « - » its first dot
# ends or after the underscores they begin with (Markdown's emphasis: « _evil.com_ »), or a
# colon or a slash after a digit (`2130706433:8080/x`, `2130706433/x/`), or a colon between
# two of an IPv6 address's groups (`abcd:ef01::1`, `fe80::1`), for its lookbehind allows none
# of them before it
_BEGUN_AT = frozenset(("phone", "host"))
_MAY_BEGIN = re.compile(r"[0+(.:/]")
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def _found(text: str, folded: str) -> Iterator[re.Match[str]]:
    """`_scan_for(folded).finditer(text)`. A text that may hold phone numbers and bare domains
    only (a passage, as a rule) has their pattern tried only where one may begin, not at each
    character, which took 1.6 ms of a prompt's 3.5: the same matches, leftmost first, none
    overlapping, their lookbehinds reading the text before them."""
    kinds = _kinds_for(folded)
    scan = _scan(kinds)
    if any(kept and name not in _BEGUN_AT for kept, (_, name, _) in zip(kinds, _KINDS, strict=True)):
        return scan.finditer(text)
    return _tried_at(scan, text, _may_begin(text))


def _may_begin(text: str) -> list[int]:
    """Where a phone number or a bare domain may begin in `text`, in order."""
    starts = set()
    for m in _MAY_BEGIN.finditer(text):
        start = at = m.start()
        if text[at] not in ".:/":
            starts.add(at)
            continue
        # a colon or a slash ends a number's host only (`2130706433/x/`), or an IPv6 address's group
        if text[at] in ":/" and not text[at - 1 : at].isdigit() and not _between_groups(text, at):
            continue
        if at and text[at - 1 : at + 2] in ("[.]", "(.)"):  # a defanged dot: « evil[.]com »
            start = at = at - 1
        while start and (text[start - 1].isalnum() or text[start - 1] in "_-"):  # `[\w-]`, as `re` reads `\w`
            start -= 1
        if start < at:
            starts.add(start)
            starts.add(start + len(text[start:at]) - len(text[start:at].lstrip("_")))  # after emphasis: « _evil.com_ »
    return sorted(starts)


def _between_groups(text: str, at: int) -> bool:
    """Whether the colon at `at` may be an IPv6 address's, between two hexadecimal digits or
    before a second colon (`abcd:ef01`, `abcd::1`)."""
    return text[at] == ":" and at > 0 and text[at - 1] in _HEX_DIGITS and at + 1 < len(text) and (text[at + 1] in _HEX_DIGITS or text[at + 1] == ":")


def _tried_at(scan: re.Pattern[str], text: str, starts: Iterable[int]) -> Iterator[re.Match[str]]:
    """`scan.finditer(text)` where no match begins but at `starts` (none is empty)."""
    end = 0
    for start in starts:
        if start >= end and (m := scan.match(text, start)) is not None:
            yield m
            end = m.end()


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:|//|www\.", re.IGNORECASE)
_TRAILING = ".,;:!?*_'\""  # what ends a sentence, or emphasis, after a bare address

# What a stream holds back, for its next piece may make it an address or change one: a link
# not closed yet, a run of digits and separators (a phone number goes on), and what ends the
# text as an address or its beginning (`https:/`, `www.ex`, `jean@exem`, `<`). An address that
# runs on past what is held is held whole (`AddressFilter`). Prose is not held: a word may
# still become an e-mail address (`posée` → `posée@x.fr`), a comma may not.
_OPEN_LINK = re.compile(rf"\[{_LABEL}(?:\](?:\((?:[^()\n]|\([^()\n]*+\)?)*+)?)?\Z")
_DIGITS = re.compile(r"(?:[+(]|\b00|\d)[\d \u00a0\u202f.()+-]{0,48}\Z")  # a number is shorter: what comes before is decided
_DIGITS_HELD = 50  # its longest match: looked for in the text's end alone
_STARTED = re.compile(
    rf"(?:(?:https?|ftp|{_SSH_SCHEMES}):[/\\]{{0,2}}|www\.|<)\S*\Z|(?:(?<![\w.%+{_IGNORED_MARKS}-])[\w.%+{_IGNORED_MARKS}-]+|\"[^\"\s@]*\"?)(?:@[\w.{_IGNORED_MARKS}-]*(?::[\w~./%+-]*)?)?\Z",
    re.IGNORECASE,
)
# A host's or an IP address's port and its path (`203.0.113.5:80`, `evil.example:8443/log`),
# a protocol-relative address (`//`, `//evil.exa`), an IPv6 address's groups (`2001:db8::`):
# shown at once, `203.0.113.5:` or `//` stayed on the page when the rest of the address came
# and was taken out
_PORTED = re.compile(
    rf"(?<![\w.-])[\w.-]+:\d{{0,5}}(?:/\S*)?\Z|(?<![\w:/.\\-])//?\S*\Z|\b(?i:{_IP_PART})(?:\.(?i:{_IP_PART})){{0,2}}/\S*\Z"
    r"|(?<![\w:.-])(?i:[0-9a-f]{1,4}(?::[0-9a-f]{0,4}){1,7})\Z"
)
_TO_LAST_SPACE = re.compile(r".*\s", re.DOTALL)
# An e-mail address being spelled out (« jean (a », « jean arobase evil poi », « … point » and
# its space, or a colon that may begin git's SSH path: « jean arobase exemple.fr: »), a bare
# domain's path (its dots defanged too: « evil[.]com/login »)
_SPELLING = re.compile(
    rf"(?<![\w-])(?<![\w-]\.){_NOT_AFTER_DOT}[\w-]+(?:{_DOT}[\w-]+)+/\S*\Z|"
    r"(?<![\w.%+-])[\w.%+-]+(?:\s?[(\[](?:a|at)?|\s(?:a|ar|aro|arob|aroba|arobas|arobase)?"
    r"|(?:\s?[(\[]at[)\]]\s?|\sarobase\s|\s?@\s?)(?:[\w-]+(?:(?:\.|\s?[(\[]dot[)\]]\s?|\s(?:point|dot)\s)[\w-]+)*"
    r"(?:\.|\s?[(\[](?:d|do|dot)?[)\]]?\s?|\s(?:p|po|poi|poin|d|do|(?:point|dot)\s?)?|:)?)?)\Z",
    re.IGNORECASE,
)


_PROSE, _SPAN, _FENCE, _OPENED, _CLOSING = range(5)
_CODE_TOKEN = re.compile(r"\n|`+|~+|[^`~\n]+")


class _Code(NamedTuple):
    """Where an answer read so far stands in code: `mode`, the run that opened it (`char` ×
    `length`), and whether only indentation or `>` came since the line's start."""

    mode: int = _PROSE  # _OPENED: a fence's opening or a span's, told at the line's end; _CLOSING: a fence's close, if nothing follows
    char: str = ""
    length: int = 0
    line_start: bool = True


_TEXT_START = _Code()


def _read_code(text: str, code: _Code = _TEXT_START) -> tuple[bytearray, _Code]:
    """Which characters of `text` (going on from `code`) are code, and where it leaves code.
    CommonMark's rules, as far as no character is read again: a span closes at a run of its
    length (a blank line ends it unclosed), a fence (3 or more backticks or tildes, a backtick
    fence's line holding no other backtick) at a line of its character as long or longer."""
    flags = bytearray(len(text))
    mode, char, length, line_start = code
    for m in _CODE_TOKEN.finditer(text):
        token = m.group()
        if mode != _PROSE:
            flags[m.start() : m.end()] = b"\1" * len(token)
        if token == "\n":
            if mode == _OPENED:
                mode = _FENCE
            elif mode == _CLOSING or (mode == _SPAN and line_start):  # a fence closed; a blank line
                mode = _PROSE
            line_start = True
            continue
        run = token[0] in "`~" and token == token[0] * len(token)
        if not run:
            if mode == _CLOSING and token.strip(" \t"):
                mode = _FENCE
        elif mode == _PROSE and line_start and len(token) >= 3:
            mode, char, length = _OPENED if token[0] == "`" else _FENCE, token[0], len(token)
        elif mode == _PROSE and token[0] == "`":
            mode, char, length = _SPAN, "`", len(token)
        elif mode in (_SPAN, _OPENED) and token[0] == "`":  # a backtick after a fence's opening: a span's
            mode = _PROSE if len(token) == length else _SPAN
        elif mode == _FENCE and line_start and token[0] == char and len(token) >= length:
            mode = _CLOSING
        elif mode == _CLOSING:
            mode = _FENCE
        line_start = line_start and not token.strip(" \t>")
    return flags, _Code(mode, char, length, line_start)


def _url_end(text: str) -> int:
    """Where a bare address ends: not on the sentence's full stop, nor on a `)` it did not open."""
    end = len(text)
    while end and (text[end - 1] in _TRAILING or (text[end - 1] == ")" and text[:end].count("(") < text[:end].count(")"))):
        end -= 1
    return end


def _phone_key(text: str) -> str:
    digits = "".join(c for c in text if c.isdigit())
    if text.lstrip().startswith(("+", "(+")) or digits.startswith("00"):
        digits = digits.removeprefix("00")
        if digits.startswith("33"):  # France: +33 6… is 06…
            digits = "0" + digits[2:].removeprefix("0")
    return "tel:" + digits


def address_key(text: str) -> str | None:
    """One key for every writing of an address (a URL, `mailto:`, `tel:`, an e-mail address, a
    phone number); None for what is none (a path of the site, `#top`)."""
    text = text.strip()
    if (m := _SSH_URL_PARTS.fullmatch(text) or _SSH_SCP_PARTS.fullmatch(text)) is not None:
        return _ssh_key(m)
    if (m := MAILBOX.fullmatch(text.removeprefix("mailto:").split("?")[0])) is not None:
        return "mailto:" + m.group().casefold()
    if text.lower().startswith("tel:") or PHONE.fullmatch(text):
        return _phone_key(text.removeprefix("tel:").removeprefix("TEL:"))
    if not _SCHEME.match(text):
        return None
    rest = re.sub(r"^(?:(?:https?|ftp):)?//|^(?:https?|ftp):[/\\]{1,2}|^www\.", "", text, flags=re.IGNORECASE).split("#")[0]
    rest = re.sub(r"^www\.", "", rest, flags=re.IGNORECASE)
    host, _, path = rest.partition("/")
    return "url:" + (_ascii_host(host) + "/" + path).rstrip("/")


def _ascii_host(host: str) -> str:
    """A host in small letters, an internationalised one as IDNA writes it in ASCII
    (`пример.рф` is `xn--e1afmkfd.xn--p1ai`, as a browser's address bar reads it): two
    writings of one host are one address. As written if IDNA cannot read it. An IPv6 address,
    with its port or not, in brackets and as `ipaddress` compresses it: `2001:DB8:0::1`, alone,
    is the host of `http://[2001:db8::1]:8080/`. A defanged dot is a dot (« evil[.]com »)."""
    host = _DEFANGED.sub(".", host.lower())
    if host.count(":") > 1:
        address, _, port = host.removeprefix("[").partition("]")
        try:
            return f"[{ipaddress.IPv6Address(address).compressed}]{port}"
        except ValueError:
            pass
    if host.isascii():
        return host
    name, colon, port = host.partition(":")
    try:
        return name.encode("idna").decode("ascii") + colon + port
    except UnicodeError:
        return host


def _ssh_key(m: re.Match) -> str:
    """One key for git's two writings of an SSH address: `ssh:git@github.com/moi/depot`, the
    host in small letters, without `.git` or the `/` and `~/` around the path."""
    user, host, path = m.group("user", "host", "path")
    path = (path or "").strip("/").removeprefix("~/").removesuffix(".git").rstrip("/")
    return f"ssh:{user or ''}@{host.lower()}/{path}"


def _composed(text: str) -> str:
    """`text` as NFC reads it, as IDNA does: an accent typed as a letter and a combining mark
    (NFD, « e » and U+0301) is no word character to `re`, so a host that holds one was read as
    none (« café.fr/menu ») or cut at it (« bü » shown, « cher.de » taken out). Without the
    invisible marks IDNA ignores between two of an address's characters (`_IGNORED_INSIDE`),
    for the same reason: « evil.c\u034fom » shows, and opens, « evil.com »."""
    if text.isascii():
        return text
    if _IGNORED_MARK.search(text) is not None:
        text = _IGNORED_INSIDE.sub("", unicodedata.normalize("NFC", text))
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


_MARKS_AT_END = re.compile(f"(?<![{_IGNORED_MARKS}])[{_IGNORED_MARKS}]+\\Z")  # from a run's start alone


def _composed_after(before: str, text: str) -> str:
    """`_composed` of `text`, which `before` (already shown) came before: a mark IDNA ignores
    just after it (« @\u034fevil.com ») is dropped as in the whole answer, where
    `_IGNORED_INSIDE` reads the character before it."""
    if before and _IGNORED_MARK.match(text) is not None:
        composed = _composed(before[-1] + text)
        if composed[:1] == before[-1]:
            return composed[1:]
    return _composed(text)


class _AsRead(dict[int, int]):
    """A `str.translate` table: each character NFKC reads as one ASCII letter, digit or hyphen as
    that one (« 𝐨 », « ᶜ », « ⓔ », « ⅽ », « ² »), as a browser's address bar does (UTS46: the
    same thousand characters), each other as itself. One character for one: a match in the
    reading is where the typed text shows it. Each character looked up once."""

    def __missing__(self, code: int) -> int:
        read = unicodedata.normalize("NFKC", chr(code))
        self[code] = ord(read) if len(read) == 1 and read.isascii() and (read.isalnum() or read == "-") else code
        return self[code]


_AS_READ = _AsRead()
# What NFKC changes in most French texts, which `_AS_READ` leaves as it is: the no-break spaces, « … »
_USUAL = ("\u00a0", "\u202f", "\u2026")


def _as_read(text: str) -> str:
    """`text` as a browser reads an address in it (`_AS_READ`): « evil.c𝐨m », « evil.ᶜOM »,
    « ⓔⓥⓘⓛ.com » open « evil.com », where the patterns read a top-level domain of ASCII letters
    or of none, and a letter in a circle as no letter. At once the text itself when NFKC
    changes nothing in it but `_USUAL`, as in most notes and answers."""
    if text.isascii():
        return text
    plain = text
    for usual in _USUAL:
        plain = plain.replace(usual, " ")
    if unicodedata.is_normalized("NFKC", plain):
        return text
    for char in {char for char in set(text) if _AS_READ[ord(char)] != ord(char)}:  # a few: `translate` read each character, 0.3 ms a prompt
        text = text.replace(char, chr(_AS_READ[ord(char)]))
    return text


def addresses_in(texts: Iterable[str | None]) -> frozenset[str]:
    """The keys of every address the texts hold (the passages the model is shown, the site's pages)."""
    found: set[str] = set()
    for text in texts:
        if not text:
            continue
        text = _as_read(_composed(text))
        folded = text.casefold()
        if any(need in folded for need in _AT_WRITTEN):
            for m in EMAIL.finditer(text):  # as written to dodge spam robots: « jean arobase exemple.fr »
                if (key := address_key(mailbox(m.group()))) is not None:
                    found |= {key, "host:" + key.partition("@")[2]}
        for m in _found(text, folded):
            if m.group("link"):
                found |= addresses_in([m.group("label")])
            said = _said(m)
            if said is not None and (key := _key(m, said)) is not None:
                found |= {key, *_host_of(key)}
        if (key := address_key(text)) is not None:  # a page given whole: `https://site.example/contact`
            found |= {key, *_host_of(key)}
    return frozenset(found)


def _host_of(key: str) -> tuple[str, ...]:
    """The domain an address's key names, as a bare domain is allowed by: `host:exemple.fr`."""
    if key.startswith("url:"):
        host = key[4:].partition("/")[0]
        return ("host:" + (host.partition("]")[0] + "]" if host.startswith("[") else host.partition(":")[0]),)
    if key.startswith("mailto:"):
        return ("host:" + key.partition("@")[2],)
    if key.startswith("ssh:"):
        return ("host:" + key.partition("@")[2].partition("/")[0].partition(":")[0],)
    return ()


def _key(m: re.Match, said: str) -> str | None:
    """`address_key` of what a match gives: a bare domain is an address without its scheme."""
    return address_key("//" + said if m.group("host") else mailbox(said) if m.group("spelled") else said)


def _said(m: re.Match) -> str | None:
    """The address a match gives."""
    if m.group("link"):
        return m.group("target")
    if m.group("url") or m.group("ssh"):
        return m.group()[: _url_end(m.group())]
    if m.group("host"):
        return m.group("host")[: _url_end(m.group("host"))]
    return m.group("auto") or m.group("email") or m.group("spelled") or m.group("phone")


def keep_known_addresses(text: str, allowed: frozenset[str]) -> str:
    """`text` with every address that `allowed` (`addresses_in` of the notes) does not hold taken
    out, read as NFC reads it (`_composed`)."""
    text = _composed(text)
    return _kept_in(text, allowed, _read_code(text)[0])


def _kept_in(text: str, allowed: frozenset[str], code: Sequence[int]) -> str:
    """`keep_known_addresses` where `code` says which characters of `text` are code."""
    out, at = [], 0
    for m in _ADDRESS.finditer(_as_read(text)):
        out += [text[at : m.start()], _kept(m, text, allowed, code)]
        at = m.end()
    out.append(text[at:])
    return "".join(out)


def _kept(m: re.Match, typed: str, allowed: frozenset[str], code: Sequence[int]) -> str:
    """What is shown for `m`, a match in `typed` as read (`_as_read`): what `typed` holds there,
    or what takes its place."""
    if m.group("link"):
        label = _kept_in(typed[m.start("label") : m.end("label")], allowed, code[m.start("label") : m.end("label")])
        key = address_key(m.group("target"))
        if key is None or key in allowed:  # its title too is read: a Markdown page shows it on hover
            title = _kept_in(typed[m.start("title") : m.end("title")], allowed, code[m.start("title") : m.end("title")]) if m.group("title") else ""
            target = typed[m.end("label") : m.start("title") if m.group("title") else m.end() - 1]  # `](<target>`
            return f"[{label}{target}{title})"
        return label
    said = _said(m)
    assert said is not None
    key = _key(m, said)
    bare = m.group("host") and "/" not in said  # a bare domain: code, a domain the notes name, or a name code gives
    if key is None or key in allowed or (bare and (code[m.start()] or f"host:{_ascii_host(said)}" in allowed or _code_name(said))):
        return typed[m.start() : m.end()]
    gone = PHONE_GONE if m.group("phone") else EMAIL_GONE if m.group("email") or key.startswith("mailto:") else URL_GONE
    return gone + typed[m.start() + len(said) : m.end()] if m.group("url") or m.group("ssh") or m.group("host") else gone


def _code_name(host: str) -> bool:
    """Whether a bare domain is code or a product's name: its top-level domain one code names
    an attribute by (`CODE_ATTRIBUTES`) after a name without a hyphen (`user.name`; not
    `evil-login.events`), or one code writes with a capital (`CODE_NAMES`), so written, after a
    name without a hyphen (`System.IO`, `ASP.NET`, `logging.INFO`; not `evil-login.NET`), or
    an attribute of `self`, `this`… (`CODE_RECEIVERS`: `self.training`, `this.page`; not
    `self.evil-login.app`, a host of the domain after it)."""
    name, _, tld = host.rpartition(".")
    if tld.lower() in CODE_ATTRIBUTES:  # `user.name`, `el.style`: an identifier holds no hyphen (`evil-login.events` is a site)
        return "-" not in name
    return (tld != tld.lower() and tld.lower() in CODE_NAMES and "-" not in name) or name in CODE_RECEIVERS


def held_from(text: str) -> int:
    """Where what a stream must hold back of `text` starts: what follows may make it an address."""
    starts = [len(text)]
    for pattern, at in ((_OPEN_LINK, 0), (_DIGITS, len(text) - _DIGITS_HELD), (_SPELLING, 0)):
        if (m := pattern.search(text, max(at, 0))) is not None:
            starts.append(m.start())
    # what holds no white space is looked for in the last word alone, not again from each
    # character of a long run before a space (1/1/1/… 1/x)
    word = m.end() if (m := _TO_LAST_SPACE.match(text)) is not None else 0
    if (m := _STARTED.search(text, word)) is not None:
        starts.append(m.start())
    if ("/" in text or ":" in text) and (m := _PORTED.search(text, word)) is not None:  # substring tests are C: most pieces hold neither
        starts.append(m.start())
    cut = min(starts)
    if cut < len(text):  # back to its word's start: an address a run of digits or a `[` ends (« https://06 12 »)
        cut = m.end() if (m := _TO_LAST_SPACE.match(text, 0, cut)) is not None else 0
    return cut


# What is held is read again with each piece up to this length; past it, once the pieces that
# came since make as much again (`AddressFilter.feed`)
_READ_AT_EACH_PIECE = 64


class AddressFilter:
    """`keep_known_addresses` over an answer that arrives in pieces: what a stream shows is what
    its final answer says, an address split across pieces included, however it is cut. What is
    held back (`held_from`) is read again with the next piece, and so is an address that runs
    into it; a long text held (a word with no space, a link left open) is read again only once
    the pieces after it double it: read at each piece, it took time quadratic in its length."""

    def __init__(self, allowed: frozenset[str]) -> None:
        self._allowed = allowed
        self._held = ""
        self._waiting: list[str] = []  # the pieces come since `_held` was last read
        self._waited = 0  # their length
        self._before = ""  # the last characters shown, as the model wrote them: the patterns look behind
        self._code = _TEXT_START  # where what was shown leaves code

    def feed(self, piece: str) -> str:
        self._waiting.append(piece)
        self._waited += len(piece)
        if len(self._held) > _READ_AT_EACH_PIECE and self._waited < len(self._held):
            return ""  # shown later, as if it had come in one piece with the next ones
        return self._shown(final=False)

    def finish(self) -> str:
        return self._shown(final=True)

    def _shown(self, *, final: bool) -> str:
        text = _composed_after(self._before, self._held + "".join(self._waiting))  # a combining mark joins the letter held before it: a word is held whole
        whole, at = self._before + text, len(self._before)
        read = _as_read(whole)  # where the addresses are looked for; `whole` is what is shown
        # marks IDNA ignores that end it are held: what they follow is read as if they were not there yet
        end = len(read) if (m := _MARKS_AT_END.search(read, at)) is None else m.start()
        cut = len(whole) if final else at + held_from(read[at:end])
        if not final and whole[-1:] in ("`", "~"):  # a last run the next piece may make longer: another code
            cut = min(cut, max(at, len(whole.rstrip(whole[-1]))))
        code = bytes(at) + _read_code(text, self._code)[0]
        matches = []
        for m in _ADDRESS.finditer(read, at) if cut > at else ():  # none begins before a cut where it starts
            if m.start() >= cut:
                break
            if m.end() > cut:  # an address that runs into what is held (« 01 23 45 67 89 » before « 9 »)
                cut = m.start()
                break
            matches.append(m)
        out = []
        self._code = _read_code(whole[at:cut], self._code)[1]
        for m in matches:
            out += [whole[at : m.start()], _kept(m, whole, self._allowed, code)]
            at = m.end()
        out.append(whole[at:cut])
        self._held, self._waiting, self._waited = whole[cut:], [], 0
        self._before = whole[:cut][-8:]
        return "".join(out)
