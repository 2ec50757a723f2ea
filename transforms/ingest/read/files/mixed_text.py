"""A UTF-8 file with a few lines in another encoding (spec section 1): those lines decoded in it
and named, never the whole file (``Café`` must not become ``CafÃ©``)."""

from __future__ import annotations

import codecs


def decode_mixed(data: bytes, fallbacks: list[str]) -> tuple[str, str] | None:
    """(text, what it was read as) of a file that is not valid UTF-8 as a whole but whose lines
    with other than ASCII are UTF-8 but a few: each line that is not valid UTF-8 decoded in the
    first of ``fallbacks`` that reads it (``"utf-8, line(s) 7 as cp1252"``). None when no line is
    UTF-8 beyond ASCII (the file is wholly in another encoding: decoded whole in it, as before)
    or a line is in none of the encodings. Lines are the csv module's physical lines (LF, CRLF, CR)."""
    singles = [f for f in fallbacks if _known(f) and _known(f) not in ("utf-8", "utf-8-sig", "utf-16")]
    if not singles:
        return None
    out: list[str] = []
    other: list[int] = []
    utf8_beyond_ascii = False
    used = singles[0]
    for n, line in enumerate(data.splitlines(keepends=True), start=1):
        try:
            out.append(line.decode("utf-8"))
            utf8_beyond_ascii = utf8_beyond_ascii or not line.isascii()
            continue
        except UnicodeDecodeError:
            pass
        for enc in singles:
            try:
                out.append(line.decode(enc))
            except UnicodeDecodeError:
                continue
            other.append(n)
            used = enc if len(other) == 1 else used
            break
        else:
            return None
    if not utf8_beyond_ascii or not other:
        return None
    shown = ", ".join(map(str, other[:6])) + (f" and {len(other) - 6} more" if len(other) > 6 else "")
    return "".join(out), f"utf-8, line{'s' if len(other) > 1 else ''} {shown} as {used} (not valid UTF-8)"


def _known(enc: str) -> str | None:
    try:
        return codecs.lookup(enc).name
    except LookupError:
        return None
