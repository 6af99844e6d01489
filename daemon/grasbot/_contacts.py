"""E-mail addresses and phone numbers as people write them: the question log redacts a
visitor's (`store.redaction`), and an answer gives only those its notes hold (`answer.addresses`).
Each is anchored so that it never starts inside a run of digits or letters."""

from __future__ import annotations

import re

SPACE = "[ \u00a0\u202f]"  # French typography groups digits with (narrow) no-break spaces
DOT = "[ \u00a0\u202f.-]"

# With @ (spaced or not), or as written to dodge spam robots: « jean (at) gmail.com », « jean
# arobase gmail.com ». The last label holds a letter, as every top-level domain does: « rdv @
# 10.30 » is a time. The part before @ may be quoted (`"jean"@gmail.com`), as RFC 5322 allows.
# A host followed by a colon and a path is git's SSH address (« git@github.com:moi/depot.git »).
_LOCAL = r"(?<![\w.%+-])(?:[\w.%+-]{1,64}|\"[^\"\s@]{1,62}\")"
_DOMAIN = r"[^\W_](?:[\w-]{0,62})(?:\.[\w-]{1,63})*\.(?=[\w-]{0,62}[^\W\d_])[\w-]{1,63}(?![\w-]|\.[\w-]|:[\w~/.-])"
#: The top-level domains a name is read as a host by: every country's, and the generic ones
#: seen most (RFC 2606's `example` too). A country's that is a file's common extension too
#: (`.md`, `.py`, `.sh`, `.pl`, C++'s `.cc`, Illustrator's `.ai`, Qt's `.pro`, CUDA's `.cu`) is in
#: `FILE_EXTENSIONS`: « README.md », « install.sh », « main.cc » are files.
TLDS = frozenset(
    (
        "ac ad ae af ag ai al am ao aq ar as at au aw ax az ba bb bd be bf bg bh bi bj bm bn bo br bs bt bv bw by bz ca cc cd cf cg ch"
        " ci ck cl cm cn co cr cu cv cw cx cy cz de dj dk dm do dz ec ee eg er es et eu fi fj fk fm fo fr ga gb gd ge gf gg gh gi gl gm"
        " gn gp gq gr gs gt gu gw gy hk hm hn hr ht hu id ie il im in io iq ir is it je jm jo jp ke kg kh ki km kn kp kr kw ky kz la lb"
        " lc li lk lr ls lt lu lv ly ma mc md me mg mh mk ml mm mn mo mp mq mr ms mt mu mv mw mx my mz na nc ne nf ng ni nl no np nr nu"
        " nz om pa pe pf pg ph pk pl pm pn pr ps pt pw py qa re ro rs ru rw sa sb sc sd se sg sh si sj sk sl sm sn so sr ss st su sv sx"
        " sy sz tc td tf tg th tj tk tl tm tn to tr tt tv tw tz ua ug uk us uy uz va vc ve vg vi vn vu wf ws ye yt za zm zw"
        " com net org info biz edu gov mil int xyz online site shop store tech website space fun icu top vip club live cloud blog pro"
        " email support dev mobi asia museum travel jobs coop aero paris bzh alsace corsica eus quebec agency studio digital news world"
        " bank security buzz rest sbs cfd cyou monster bond lol example"
    ).split()
)
FILE_EXTENSIONS = frozenset("md py sh rs pl pm ps so mo in am ac mk ml tf zip mov cc mm ai gd cl ly sv nu re sc cr tk gs as st pro cu".split())
#: A top-level domain that code names an attribute by far more often than a site is (`user.id`,
#: Django's `obj.pk`, pandas' `df.at[0]`, `args.lr`, matplotlib's `self.ax`, `np.int`,
#: `request.user.email`): read as code, not as a host.
CODE_ATTRIBUTES = frozenset("id pk at lr ax int email".split())
#: A top-level domain that code or a product's name writes with a capital after a name
#: (`System.Net`, .NET's `ASP.NET`, `System.IO`, `Socket.IO`, Kotlin's `Dispatchers.IO`,
#: `logging.INFO`, Android's `Gravity.TOP`, `Mode.DEV`, `Vuex.Store`, Unity's `KeyCode.Space`,
#: `System.Security`, `Google.Cloud`): so written, without a hyphen or a path, it is no host.
CODE_NAMES = frozenset("net io info top dev store space security cloud".split())
_TLD = "|".join(sorted(TLDS, key=len, reverse=True))
# « exemple [dot] fr », « evil point com »: a dot spelled out, after an @ spelled or not
_SPELLED_DOT = r"(?:\s?[(\[]dot[)\]]\s?|\s(?:point|dot)\s)"
_SPELLED_DOMAIN = rf"[^\W_][\w-]{{0,62}}(?:(?:\.|{_SPELLED_DOT})[\w-]{{1,63}}){{0,4}}?{_SPELLED_DOT}(?:{_TLD})(?![\w-]|\.[\w-])"
_AT = r"(?:\s?@\s?|\s?[(\[]at[)\]]\s?|\sarobase\s)"
EMAIL = re.compile(rf"{_LOCAL}{_AT}(?:{_DOMAIN}|{_SPELLED_DOMAIN})", re.IGNORECASE)
#: An e-mail address spaced or spelled out as an answer reads one (« jean @ evil.fr », « jean
#: arobase evil point com »): its domain ends in a known top-level domain, for code spaces an @
#: too: « x @ self.weight » is Python's product of matrices, « avec @functools.cache » a
#: decorator. `local@domain` is `MAILBOX`'s, whatever its domain.
SPELLED_EMAIL = re.compile(
    rf"{_LOCAL}{_AT}[^\W_][\w-]{{0,62}}(?:(?:\.|{_SPELLED_DOT})[\w-]{{1,63}}){{0,4}}?(?:\.|{_SPELLED_DOT})(?:{_TLD})(?![\w-]|\.[\w-])",
    re.IGNORECASE,
)


def mailbox(written: str) -> str:
    """An e-mail address written to dodge spam robots (« jean arobase exemple point fr ») as a
    mail client reads it (`jean@exemple.fr`)."""
    return re.sub(rf"\s*{_AT}\s*", "@", re.sub(rf"\s*{_SPELLED_DOT}\s*", ".", written, flags=re.IGNORECASE), flags=re.IGNORECASE)


#: An e-mail address as a mail client or a link reads one: `local@domain`, no space in it.
MAILBOX = re.compile(rf"{_LOCAL}@{_DOMAIN}", re.IGNORECASE)
# French: ten digits from 0 in pairs (spaces, dots, dashes or none). International: + or 00
# (« 00 33 », as a French visitor dials from abroad), the country's code (or « (+33) », as French
# sites print it), an optional (0) or (area), then 6 to 13 digits: in one run, or in groups of
# two or more after the first (« +33 6 12 34 56 78 », « +1 555 123-4567 »); digits one by one
# are a version (« +1.2.3.4.5.6.7 »). No national number begins with 00, the international
# prefix: « +20 00 12 34 56 » is a temperature and a time.
PHONE = re.compile(
    rf"(?<![\w+])(?<!\d{SPACE})(?<!\d[.-])"
    rf"(?:0[1-9](?:{DOT}?\d{{2}}){{4}}"
    rf"|(?:\(\+{SPACE}?[1-9]\d{{0,2}}\)|(?:\+|00){SPACE}?[1-9]\d{{0,2}})(?:{DOT}?\(\d{{1,4}}\))?{DOT}?(?!0{DOT}?0)"
    rf"(?=(?:{DOT}?\d){{6,13}}(?!{DOT}?\d))(?:\d+|\d{{1,4}}(?:{DOT}\d{{2,}})+))"
    rf"(?!{DOT}?\d)"
)
