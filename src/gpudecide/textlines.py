"""The lines of a text file as line-oriented tools count them.

`wc -l`, `sed -n Np`, sha256sum, syslog and JSON Lines end a line at "\\n" only. Python's
`str.splitlines` also ends one at "\\r", "\\v", "\\f", "\\x1c"-"\\x1e", "\\x85", "\\u2028" and
"\\u2029", which a JSON string, a file name or a kernel message may hold: it would cut such
a line in two and shift the number of every line after it, so an error would name the
wrong line.
"""

from __future__ import annotations

__all__ = ["split_lines"]


def split_lines(text: str) -> list[str]:
    """`text` cut at each "\\n", a "\\r" before it dropped (a CRLF file), no empty last line
    after a final "\\n": what `str.splitlines` gives for plain text, without its other
    separators."""
    out = text.split("\n")
    if out[-1] == "":
        out.pop()
    return [line[:-1] if line.endswith("\r") else line for line in out]
