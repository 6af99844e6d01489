"""What GrasBot writes for a terminal: text from outside (a visitor's question, a file's name)
as a terminal may show it, and counts as French says them."""

from __future__ import annotations

import unicodedata


def printable(text: str) -> str:
    """`text` with its control and format characters (escape sequences that retitle or clear a
    terminal, bidi overrides, a newline that forges a line of a report) written as Python
    escapes; a space, even a no-break one, stays."""
    if text.isprintable():
        return text
    return "".join(ascii(c)[1:-1] if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") else c for c in text)


def counted(count: int, *words: str) -> str:
    """`count` and its words, each plural past one, as French counts (0 and 1 are singular):
    « 1 note chargée », « 2 notes chargées », « 0 publique »."""
    plural = "s" if count > 1 else ""
    return " ".join([str(count), *(word + plural for word in words)])
