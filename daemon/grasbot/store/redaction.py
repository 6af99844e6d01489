"""What a visitor typed about themselves, kept out of what the daemon keeps.

Visitors type their e-mail, phone number, IBAN, card or social security number, or where they
live, into a chat box (« recontactez-moi au 06 12 34 56 78 »). The answer needs the question as typed; the question log, kept 90 days
for the owner, does not (GDPR: data minimisation). `redact` replaces each with a placeholder
before a question is logged. Every pattern is anchored so that it never starts inside a run of
digits or letters (one pass over the text, whatever a visitor sends), and the numbers are
checked (Luhn for a card, ISO 7064 mod 97 for an IBAN, its key for a social security number,
`ipaddress` for an address), so the
numbers questions are about (« 2024 », « 12/03/2024 », « 14h30 », « 4 To », « 1.2.3 »,
« chmod 755 », a LAN address, « 1.1.1.1 ») stay as typed.
"""

from __future__ import annotations

import bisect
import ipaddress
import re
import unicodedata
from collections.abc import Callable

from .._contacts import DOT as _DOT
from .._contacts import EMAIL as _EMAIL
from .._contacts import PHONE as _PHONE
from .._contacts import TLD as _TLD
from .._contacts import LazyPattern

__all__ = ["PLACEHOLDER", "VERSION", "redact"]

_SEP = "[ \u00a0\u202f-]"

#: Raised whenever `redact` finds more than it did: a question log redacted by an older one is
#: read through it again, from its first question (`store.questionlog`).
#: 2: social security numbers, postal addresses, full-width and other compatibility forms; 3: overseas
#: ones; 4: « 12 place de la République »; 5: « jean arobase exemple point fr »; 6: in any
#: top-level domain (« jean arobase studio point app »); 7: « jean at gmail dot com », « jean[@]… »,
#: « jean{at}… », « (arobase) », « (point) », « gmail . com », « 06/12/34/56/78 », « 0612 345 678 »
VERSION = 7

EMAIL, PHONE, IBAN, CARD, ADDRESS = "[e-mail]", "[téléphone]", "[IBAN]", "[carte]", "[IP]"
NIR, POSTAL = "[sécurité sociale]", "[adresse]"
#: Any placeholder `redact` writes, for whoever reads a redacted text back. This module's patterns
#: are compiled by their first use (`LazyPattern`): 7 ms of a daemon's start, for the first question logged.
PLACEHOLDER = LazyPattern("|".join(re.escape(p) for p in (EMAIL, PHONE, IBAN, CARD, ADDRESS, NIR, POSTAL)))

# An IBAN as written on a RIB: compact, or in groups of four (the last one shorter) between
# spaces or dashes, as a bank's web page may copy it. ASCII letters only, written out: case
# folding would let in the letters that fold to them (« K », the Kelvin sign), which no base
# 36 digit is.
_IBAN = LazyPattern(rf"(?<![^\W_])[A-Za-z]{{2}}[0-9]{{2}}(?:[A-Za-z0-9]{{11,30}}|(?:{_SEP}[A-Za-z0-9]{{4}}){{2,7}}(?:{_SEP}[A-Za-z0-9]{{1,4}})?)(?![^\W_])")
# As a card is printed: 13 to 19 digits, or groups of four (4-6-5 and 4-6-4 for Amex and
# Diners) with one space, dash or dot between them; not inside a longer run of digits.
_CARD = LazyPattern(
    rf"(?<!\d)(?<!\d{_DOT})(?:\d{{13,19}}|\d{{4}}(?:{_DOT}\d{{4}}){{2,3}}(?:{_DOT}\d{{1,3}})?|\d{{4}}{_DOT}\d{{6}}{_DOT}\d{{4,5}})(?!{_DOT}?\d)"
)
# A French social security number (NIR): sex, year, month, department (« 2A », « 2B » for
# Corsica), commune, order, then the two-digit key `_nir_valid` checks; run together or in its
# card's groups (« 1 85 05 78 006 084 91 »; overseas, a department of three digits and a
# commune of two: « 2 85 05 971 12 084 34 »). Without its key it is a 13-digit number like any other.
_NIR = LazyPattern(
    rf"(?<![\w+])(?<!\d{_DOT})[12]{_DOT}?\d{{2}}{_DOT}?\d{{2}}{_DOT}?(?:(?:\d{{2}}|2[ABab]){_DOT}?\d{{3}}|9[78]\d{_DOT}?\d{{2}})"
    rf"{_DOT}?\d{{3}}{_DOT}?\d{{2}}(?!{_DOT}?\d)(?![^\W_])"
)
# A French street address: a number (« 3 bis », « 12, »), the kind of street, its name (a first
# word, then capitalised words, « avenue du Général de Gaulle »), then its postcode and town if
# given. « rue », « avenue », « boulevard » and the like after a number are a street; « place »,
# « chemin », « route » and the like are one with a postcode after it, « bis », or a name in
# capitals (« 12 place de la République », « 2 route de Lyon »): « 1 place de libre », « 2 place
# de parking » stay. « Cours » is a lesson too, singular or plural: without « bis » or a postcode
# it is a street only before « du », « de la », « de l' » or « des » and a capital (« 12 cours de
# la Liberté »), so « 3 cours de Python », « 3 cours Python » stay, and so does « 12 cours
# Mirabeau » (written « 12, cours Mirabeau », « 12 bis » or with its postcode, it goes). A
# postcode and town alone (« 75011 Paris ») name a town, nobody in it, and stay; so does « la 3e rue ».
_PARTICLES = r"(?i:(?:de|du|des|la|le|les|aux|au|et|sur|sous|en)\s+|[ld]['’])"
_WORD = r"[\w'’-]{0,40}"
_STREET_NAME = rf"{_PARTICLES}{{0,3}}[^\W_]{_WORD}(?:\s+{_PARTICLES}{{0,3}}[A-ZÀ-ÖØ-Þ\d]{_WORD}){{0,5}}"
_TOWN = rf",?\s+\d{{5}}\s+{_PARTICLES}{{0,2}}[^\W\d_]{_WORD}(?:\s+(?i:cedex)(?:\s+\d{{1,2}})?)?"
_NUMBER = r"(?<![\w,.])\d{1,4}"
_SUFFIX = r"\s?(?i:bis|ter|quater)(?!\w)"
_STREET = r"(?i:rue|avenue|av\.|boulevard|bd|blvd|impasse|allée|quai|lieu-dit|faubourg|chaussée)"
_WAY = r"(?i:place|cours|chemin|route|passage|square|résidence|cité|sentier|villa|hameau|promenade|esplanade|voie|rond-point)"
_NAMED = r"[A-ZÀ-ÖØ-Þ]" + _WORD + r"(?:\s+" + _PARTICLES + r"{0,3}[A-ZÀ-ÖØ-Þ\d]" + _WORD + r"){0,5}"
_NAMED_WAY = (
    rf"(?:(?i:place|chemin|route|passage|square|résidence|cité|sentier|villa|hameau|promenade|esplanade|voie|rond-point)\s+{_PARTICLES}{{0,3}}"
    rf"|(?i:cours)\s+(?i:du\s+|de\s+la\s+|de\s+l['’]|des\s+)){_NAMED}"
)
_END = r"(?![\w'’-])"
_POSTAL = LazyPattern(
    rf"{_NUMBER}(?:{_SUFFIX}|\s?[A-Da-d](?!\w))?,?\s+{_STREET}\s+{_STREET_NAME}(?:{_TOWN})?{_END}"
    rf"|{_NUMBER}{_SUFFIX},?\s+{_WAY}\s+{_STREET_NAME}(?:{_TOWN})?{_END}"
    rf"|{_NUMBER}(?:\s?[A-Da-d](?!\w))?,?\s+{_WAY}\s+{_STREET_NAME}{_TOWN}{_END}"
    rf"|{_NUMBER}(?:\s?[A-Da-d](?!\w))?,?\s+{_NAMED_WAY}(?:{_TOWN})?{_END}"
    rf"|{_NUMBER},\s+(?i:cours)\s+{_NAMED}(?:{_TOWN})?{_END}"
    rf"|(?<![\w.])(?:BP|B\.P\.|[Bb]oîte postale)\s?\d{{1,5}}(?!{_DOT}?\d)(?![\w.])(?!\s?(?:[kKMGT]i?[bBo]|[kKmMgG]?bits?|%)(?!\w))(?:{_TOWN})?{_END}"
)
# An e-mail address as `_contacts.EMAIL` does not read it: its @ between other brackets
# (« jean[@]gmail.com », « jean{at}free.fr », « marie (arobase) orange (point) fr »), its dots
# spaced before (« jean @ gmail . com »; a full stop and a space end a sentence: « écrit
# @marie. Info : » stays) or spelled in parentheses, or in English words (« jean.dupont
# at gmail dot com »), these only with a dot spelled and nothing but punctuation or the end after
# it: « look at the dot com bubble » stays, as « look at example.com » does.
_LOCAL_PART = r"(?<![\w.%+-])[\w.%+-]{1,64}"
_DOT_SPELLED = r"(?:\s?[(\[{](?:dot|point|\.)[)\]}]\s?|\s(?:dot|point)\s|\s\.\s?)"
_DOT_ANY = rf"(?:\.|{_DOT_SPELLED})"
_LABELS = rf"[^\W_][\w-]{{0,62}}(?:{_DOT_ANY}[\w-]{{1,63}}){{0,4}}?"
_EMAIL_MORE = LazyPattern(
    rf"{_LOCAL_PART}(?:\s?[(\[{{<]\s?(?:@|at|arobase)\s?[)\]}}>]\s?|\s?@\s?|\s?[(\[]at[)\]]\s?|\sarobase\s)"
    rf"{_LABELS}{_DOT_ANY}(?:{_TLD})(?![\w-]|\.[\w-]|:[\w~/.-])"
    rf"|{_LOCAL_PART}\sat\s{_LABELS}{_DOT_SPELLED}(?:{_TLD})(?=\s*(?:[,;:!?)\]]|\.(?!\w)|\Z))",
    re.IGNORECASE,
)
# A French number of ten digits from 0 in other groups than `_contacts.PHONE`'s pairs (« 0612 345
# 678 », « 06 123 456 78 »), or in pairs between slashes (« 06/12/34/56/78 »): one separator
# throughout, groups of two to five digits, pairs between slashes (`_ten_digits` counts them).
_PHONE_GROUPED = LazyPattern(
    r"(?<![\w+/.-])(?<!\d[ \u00a0\u202f])0[1-9]\d{0,3}(?P<sep>[ \u00a0\u202f./-])\d{2,5}(?:(?P=sep)\d{2,5}){0,3}(?![\w/]|[ \u00a0\u202f.-]\d)"
)
_IPV4 = LazyPattern(r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?![\w]|\.\d)")
_IPV6 = LazyPattern(r"(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])")


#: The first digits the card networks issue at each length (ISO/IEC 7812 numbers): Visa at 13;
#: Diners Club at 14 (30, 36, 38, 39); American Express (34, 37) and UATP (1) at 15; from 16 to
#: 19, Mastercard (2221-2720, 51-55), Mir (2200-2204), JCB (35), Visa (4), Discover, UnionPay
#: and Maestro (6). A SIRET (14 digits, every one of which passes Luhn) or another long number
#: that begins otherwise is no card. Maestro's rare 13 to 15 digit numbers are left out: 50 and
#: 56 to 69 at 14 digits would take back one SIRET in six.
_ISSUERS = {13: ("4",), 14: ("30", "36", "38", "39"), 15: ("1", "34", "37")} | dict.fromkeys(range(16, 20), ("2", "3", "4", "5", "6"))


# « SIRET », « n° SIREN : » just before a number: what the visitor says it is.
_SIRET_SAID = LazyPattern(r"\bsire[nt]\b[^\d.!?\n]{0,20}\Z", re.IGNORECASE)


def _luhn(digits: list[int]) -> bool:
    return sum(d if i % 2 == 0 else d * 2 - 9 * (d > 4) for i, d in enumerate(reversed(digits))) % 10 == 0


def _card_valid(match: re.Match[str]) -> bool:
    """A network's first digits for the length, and Luhn's check, which every card number
    passes and nine in ten other numbers fail. A company's SIRET that begins as Diners Club's
    cards do (30, 36, 38, 39) is no card when the visitor names it so and its first nine digits
    (the SIREN) pass Luhn too: it is in a public register, a card is the visitor's own. Named
    nothing, it may be a card: it is redacted."""
    digits = [int(c) for c in match.group() if c.isdecimal()]
    if not "".join(map(str, digits)).startswith(_ISSUERS.get(len(digits), ())):
        return False
    if len(digits) == 14 and _luhn(digits[:9]) and _SIRET_SAID.search(match.string, 0, match.start()):
        return False
    return _luhn(digits) and len(set(digits)) > 1  # « 0000 0000 0000 0000 » passes Luhn


def _nir_valid(match: re.Match[str]) -> bool:
    """The key is 97 less the thirteen digits mod 97 (Corsica's « 2A » and « 2B » read as 19 and 18):
    one 15-digit number in 97 passes by chance."""
    compact = "".join(c for c in match.group() if c.isalnum()).upper()
    body = int(compact[:5] + {"2A": "19", "2B": "18"}.get(compact[5:7], compact[5:7]) + compact[7:13])
    return int(compact[13:]) == 97 - body % 97


def _iban_valid(match: re.Match[str]) -> bool:
    """ISO 13616's check: the four first characters moved to the end, letters as 10 to 35, mod 97 is 1."""
    compact = "".join(c for c in match.group() if c.isalnum()).upper()
    moved = compact[4:] + compact[:4]
    return 15 <= len(compact) <= 34 and int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


#: The public DNS resolvers a self-hosting question names (« j'ai mis 1.1.1.1 comme DNS »):
#: Cloudflare's, Google's, Quad9's and OpenDNS's, each anyone's and no visitor's.
_RESOLVERS = frozenset(
    map(
        ipaddress.ip_address,
        (
            *("1.1.1.1", "1.0.0.1", "2606:4700:4700::1111", "2606:4700:4700::1001"),
            *("8.8.8.8", "8.8.4.4", "2001:4860:4860::8888", "2001:4860:4860::8844"),
            *("9.9.9.9", "149.112.112.112", "2620:fe::fe", "2620:fe::9"),
            *("208.67.222.222", "208.67.220.220"),
        ),
    )
)


#: Every IPv6 block IANA has handed out to networks (RFC 4291's global unicast), and the
#: prefix that carries an IPv4 address across NAT64 (RFC 6052).
_UNICAST, _NAT64 = ipaddress.ip_network("2000::/3"), ipaddress.ip_network("64:ff9b::/96")


def _global_address(match: re.Match[str]) -> bool:
    """A public address may name a visitor's home or phone; a LAN, loopback or documentation
    one (« 192.168.1.10 », « ::1 ») or a public resolver is what a self-hosting question is
    about, and names nobody."""
    try:
        address = ipaddress.ip_address(match.group())
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address not in _UNICAST:
        # outside 2000::/3, an address is an IPv4 one written in IPv6, or names no network
        # (« 1:2:3:4:5:6:7:8 », the ratios or counters a question is about)
        if address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        elif address in _NAT64:
            address = ipaddress.IPv4Address(address.packed[-4:])
        else:
            return False
    return address.is_global and address not in _RESOLVERS


def _always(match: re.Match[str]) -> bool:
    return True


def _ten_digits(match: re.Match[str]) -> bool:
    """Ten digits, in pairs when between slashes: « 01/02/2024/12 » is a date and more."""
    groups = re.split(r"\D", match.group())
    return sum(map(len, groups)) == 10 and ("/" not in match.group() or all(len(g) == 2 for g in groups))


_RULES: tuple[tuple[re.Pattern[str] | LazyPattern, str, Callable[[re.Match[str]], bool]], ...] = (
    (_EMAIL, EMAIL, _always),
    (_EMAIL_MORE, EMAIL, _always),
    (_IBAN, IBAN, _iban_valid),
    (_NIR, NIR, _nir_valid),
    (_CARD, CARD, _card_valid),
    (_PHONE, PHONE, _always),
    (_PHONE_GROUPED, PHONE, _ten_digits),
    (_POSTAL, POSTAL, _always),
    (_IPV4, ADDRESS, _global_address),
    (_IPV6, ADDRESS, _global_address),
)


def redact(text: str) -> str:
    """`text` with e-mail addresses, phone numbers, IBANs, social security and card numbers,
    street addresses and public IP addresses replaced by a placeholder (« [e-mail] »,
    « [téléphone] », « [IBAN] », « [sécurité sociale] », « [carte] », « [adresse] », « [IP] »).
    Read in NFKC, as a phone's keyboard or a copy from a PDF may type them (« jean＠exemple.fr »,
    full-width digits); what is not replaced stays as typed."""
    if unicodedata.is_normalized("NFKC", text):
        for pattern, placeholder, valid in _RULES:
            text = pattern.sub(_replacer(placeholder, valid), text)
        return text
    folded = _Folded(text)
    for pattern, placeholder, valid in _RULES:
        if (replaced := folded.sub(pattern, placeholder, valid)) != folded.text:
            folded = _Folded(replaced)
    return folded.text


class _Folded:
    """A text read in NFKC, each base character folded with the marks that follow it, so a
    match starts and ends on whole characters as typed (« ﬁ » is one, « e » and its accent are
    one), and what a match did not read stays as typed."""

    def __init__(self, text: str):
        self.text = text
        self.starts = [i for i, c in enumerate(text) if i == 0 or not unicodedata.category(c).startswith("M")]
        self.ends = [*self.starts[1:], len(text)]
        parts = [unicodedata.normalize("NFKC", text[s:e]) for s, e in zip(self.starts, self.ends, strict=True)]
        self.offsets, at = [], 0
        for part in parts:
            self.offsets.append(at)
            at += len(part)
        self.folded = "".join(parts)

    def sub(self, pattern: re.Pattern[str] | LazyPattern, placeholder: str, valid: Callable[[re.Match[str]], bool]) -> str:
        """`pattern.sub` matched on the folded text, each match replacing the characters it was read from."""
        spans: list[tuple[int, int]] = []
        for match in pattern.finditer(self.folded):
            if match.end() > match.start() and valid(match):
                first = bisect.bisect_right(self.offsets, match.start()) - 1
                last = bisect.bisect_right(self.offsets, match.end() - 1) - 1
                if spans and self.starts[first] < spans[-1][1]:  # two matches in one character as typed
                    spans[-1] = (spans[-1][0], self.ends[last])
                else:
                    spans.append((self.starts[first], self.ends[last]))
        kept, at = [], 0
        for start, end in spans:
            kept += [self.text[at:start], placeholder]
            at = end
        return "".join([*kept, self.text[at:]])


def _replacer(placeholder: str, valid: Callable[[re.Match[str]], bool]) -> Callable[[re.Match[str]], str]:
    return lambda match: placeholder if valid(match) else match.group()
