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


def _json_escape(c: str) -> str:
    """`c` as JSON's \\u escape (a surrogate pair beyond U+FFFF, as JSON writes them)."""
    n = ord(c)
    if n > 0xFFFF:
        n -= 0x10000
        return f"\\u{0xD800 + (n >> 10):04x}\\u{0xDC00 + (n & 0x3FF):04x}"
    return f"\\u{n:04x}"


def printable_json(text: str) -> str:
    """JSON (`json.dumps(..., ensure_ascii=False)`) as a terminal may show it: the control and
    format characters JSON leaves raw (DEL, C1 controls such as U+009B, the CSI of 8-bit escape
    sequences, bidi overrides, line separators) written as its \\u escapes, which read back the
    same; its own newlines (indent) and every other character stay."""
    if text.isascii() and "\x7f" not in text:
        return text
    return "".join(_json_escape(c) if c != "\n" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") else c for c in text)


def counted(count: int, *words: str) -> str:
    """`count` and its words, each plural past one, as French counts (0 and 1 are singular):
    « 1 note chargée », « 2 notes chargées », « 0 publique »."""
    plural = "s" if count > 1 else ""
    return " ".join([str(count), *(word + plural for word in words)])
