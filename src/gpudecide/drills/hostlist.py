"""Slurm hostlist expressions, expanded as Slurm expands them (SPEC G2; issue 28).

Slurm reads a node argument as a *hostlist*: names separated by commas or white space, each
with optional bracketed ranges, `gpu-[001-064]` for 64 nodes, `a[1-2]b[3-4]` for the
cartesian product, `n[1,3-5]` for a list of ranges. A range is `LO-HI` or one number, digits
only, LO at most HI; every number is padded to the width LO is written in (`[01-10]` gives
`01` ... `10`); at most 65536 hosts per range (Slurm's MAX_RANGE). This is the syntax of
`src/common/hostlist.c` and of `scontrol show hostnames`, which the tests compare it with. Two
forms Slurm 22.05 refuses are read here too (a suffix after brackets, `n[1-2]-ib`, which later
Slurm versions accept); whatever is read counts its nodes, and what cannot be read is an error
the breaker takes at its most cautious.

`gpudecide cordon` never builds a command from a hostlist: a node name from telemetry must be
one node (`nodenames`). The breaker expands what an audit trail line names, so that an
earlier run's command counts as the nodes it really took out.
"""

from __future__ import annotations

import re

__all__ = ["MAX_HOSTS", "MAX_RANGE", "HostlistError", "count", "expand", "is_single"]

# Slurm's MAX_RANGE: a larger range is taken for an error.
MAX_RANGE = 64 * 1024
# Hosts one expression may stand for before expanding it is refused (a count still works).
MAX_HOSTS = 1 << 20
_SEPARATORS = ",  \t\n\r"
_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


class HostlistError(ValueError):
    """Text that is not a hostlist expression Slurm accepts."""


def _tokens(text: str) -> list[str]:
    """The expression's names: split at separators outside brackets (a comma inside brackets
    separates ranges); an unbalanced bracket is an error."""
    out: list[str] = []
    depth = 0
    current: list[str] = []
    for ch in text:
        if ch == "[":
            depth += 1
            if depth > 1:
                raise HostlistError("nested brackets")
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise HostlistError("']' without '['")
        if depth == 0 and ch in _SEPARATORS:
            if current:
                out.append("".join(current))
            current = []
            continue
        current.append(ch)
    if depth:
        raise HostlistError("'[' without ']'")
    if current:
        out.append("".join(current))
    return out


def _ranges(inside: str) -> list[tuple[int, int, int]]:
    """`1-3,05-07` -> [(1, 3, 0), (5, 7, 2)]: low, high and the width of zero padding."""
    found = []
    for part in inside.split(","):
        m = _RANGE.match(part)
        if m is None:
            raise HostlistError(f"invalid range {part!r}")
        lo_text, hi_text = m.group(1), m.group(2) or m.group(1)
        lo, hi = int(lo_text), int(hi_text)
        if lo > hi:
            raise HostlistError(f"invalid range {part!r}")
        if hi - lo + 1 > MAX_RANGE:
            raise HostlistError(f"too many hosts in range {part!r}")
        # Slurm pads every number to the width LO is written in (`[01-10]`: 01 ... 10).
        found.append((lo, hi, len(lo_text)))
    return found


def _pieces(token: str) -> list[str | list[tuple[int, int, int]]]:
    """A name as text pieces and bracketed range lists, in order."""
    pieces: list[str | list[tuple[int, int, int]]] = []
    rest = token
    while "[" in rest:
        head, _, tail = rest.partition("[")
        inside, _, rest = tail.partition("]")
        if head:
            pieces.append(head)
        pieces.append(_ranges(inside))
    if rest:
        pieces.append(rest)
    return pieces


def _count_token(token: str) -> int:
    total = 1
    for piece in _pieces(token):
        if isinstance(piece, list):
            total *= sum(hi - lo + 1 for lo, hi, _w in piece)
    return total


def count(text: str) -> int:
    """How many node names the expression stands for (duplicates counted as Slurm lists
    them); HostlistError when it is not one Slurm accepts."""
    return sum(_count_token(t) for t in _tokens(text))


def expand(text: str) -> list[str]:
    """Every node name of the expression, in Slurm's order; HostlistError when it is not
    one Slurm accepts or stands for more than MAX_HOSTS names."""
    if count(text) > MAX_HOSTS:
        raise HostlistError(f"more than {MAX_HOSTS} hosts")
    names: list[str] = []
    for token in _tokens(text):
        partial = [""]
        for piece in _pieces(token):
            if isinstance(piece, str):
                partial = [p + piece for p in partial]
                continue
            numbers = [str(n).zfill(width) for lo, hi, width in piece for n in range(lo, hi + 1)]
            partial = [p + n for p in partial for n in numbers]
        names.extend(partial)
    return names


def is_single(text: str) -> bool:
    """Whether the text is exactly one node name to Slurm (no separator, no brackets)."""
    try:
        return expand(text) == [text]
    except HostlistError:
        return False
