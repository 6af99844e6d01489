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
EMAIL = re.compile(rf"{_LOCAL}(?:\s?@\s?|\s?[(\[]at[)\]]\s?|\sarobase\s){_DOMAIN}", re.IGNORECASE)
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
