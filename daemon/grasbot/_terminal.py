"""Text from outside (a visitor's question, a file's name) as a terminal may show it."""

from __future__ import annotations

import unicodedata


def printable(text: str) -> str:
    """`text` with its control and format characters (escape sequences that retitle or clear a
    terminal, bidi overrides, a newline that forges a line of a report) written as Python
    escapes; a space, even a no-break one, stays."""
    if text.isprintable():
        return text
    return "".join(ascii(c)[1:-1] if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") else c for c in text)
