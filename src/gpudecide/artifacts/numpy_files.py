"""numpy `.npy` headers, and the pickle behind an object array (SPEC A7).

Layout: magic `\\x93NUMPY`, major and minor version, a 2-byte (v1) or 4-byte (v2, v3) header
length, then a Python dict literal (`descr`, `fortran_order`, `shape`). A plain array's bytes
follow. An array whose dtype holds Python objects (`descr` with an `O`) is written as a
pickle instead, and `numpy.load(allow_pickle=True)` runs it: that pickle is scanned like any
other. The header literal is parsed with `ast.literal_eval`, which evaluates no code.
"""

from __future__ import annotations

import ast
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from gpudecide.artifacts.pickle_scan import PickleReport, scan_stream

__all__ = [
    "MAGIC",
    "MAX_HEADER",
    "NpyInfo",
    "inspect_file",
    "inspect_stream",
]

MAGIC = b"\x93NUMPY"
MAX_HEADER = 1 << 16


@dataclass
class NpyInfo:
    """What an `.npy` header says; `pickle` is set for object arrays."""

    descr: Any = None
    shape: Any = None
    problems: list[str] = field(default_factory=list)
    pickle: PickleReport | None = None

    def summary(self) -> dict[str, Any]:
        """Machine form for the audit's `formats`."""
        body: dict[str, Any] = {"descr": str(self.descr), "shape": str(self.shape)}
        if self.problems:
            body["problems"] = list(self.problems)
        if self.pickle is not None:
            body["object_dtype"] = True
            body["pickle"] = self.pickle.summary()
        return body


def _has_objects(descr: Any) -> bool:
    if isinstance(descr, str):
        return "O" in descr
    if isinstance(descr, list | tuple):
        return any(_has_objects(part) for part in descr)
    return False


def inspect_stream(stream: IO[bytes], name: str = "") -> NpyInfo:
    """Read an `.npy` header from the stream's start; scan the pickle of an object array."""
    info = NpyInfo()
    head = stream.read(10)
    if len(head) < 10 or not head.startswith(MAGIC):
        info.problems.append("not an .npy header")
        return info
    major = head[6]
    if major == 1:
        (length,) = struct.unpack("<H", head[8:10])
    else:
        length = struct.unpack("<I", head[8:10] + stream.read(2))[0]
    if length > MAX_HEADER:
        info.problems.append(f".npy header claims {length} bytes")
        return info
    text = stream.read(length)
    try:
        meta = ast.literal_eval(text.decode("latin-1"))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        info.problems.append(".npy header is not a dict literal")
        return info
    if not isinstance(meta, dict):
        info.problems.append(".npy header is not a dict literal")
        return info
    info.descr, info.shape = meta.get("descr"), meta.get("shape")
    if _has_objects(info.descr):
        info.pickle = scan_stream(stream, 1 << 62)
    return info


def inspect_file(path: Path) -> NpyInfo:
    """An `.npy` file on disk."""
    with open(path, "rb") as handle:
        return inspect_stream(handle, path.name)
