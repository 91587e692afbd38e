"""GGUF headers (llama.cpp's single-file format): magic, version, counts, metadata keys.

Read with bounds: every length is checked against the bytes left in the file before it is
used, so a damaged or hostile header gives problems, never a huge allocation or a crash.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "FILE_TYPES",
    "MAX_KV",
    "MAX_STRING",
    "GgufInfo",
    "inspect_file",
    "inspect_handle",
]

MAX_KV = 100_000
MAX_STRING = 1 << 24

# general.file_type (llama_ftype) -> what the weights are stored as.
FILE_TYPES = {
    0: "fp32",
    1: "fp16",
    2: "q4_0",
    3: "q4_1",
    7: "q8_0",
    8: "q5_0",
    9: "q5_1",
    10: "q2_k",
    11: "q3_k_s",
    12: "q3_k_m",
    13: "q3_k_l",
    14: "q4_k_s",
    15: "q4_k_m",
    16: "q5_k_s",
    17: "q5_k_m",
    18: "q6_k",
    32: "bf16",
}

_SCALARS = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
_STRING, _ARRAY = 8, 9
_WANTED = {
    "general.architecture",
    "general.name",
    "general.file_type",
    "general.quantization_version",
}


@dataclass
class GgufInfo:
    """What a GGUF header says."""

    version: int | None = None
    tensor_count: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    kv_count: int | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def precision(self) -> str | None:
        """Storage type named by general.file_type."""
        ft = self.metadata.get("general.file_type")
        if isinstance(ft, int):
            return FILE_TYPES.get(ft, f"file_type {ft}")
        return None

    def summary(self) -> dict[str, Any]:
        """Machine form."""
        return {
            "version": self.version,
            "tensor_count": self.tensor_count,
            "kv_count": self.kv_count,
            "metadata": self.metadata,
            "precision": self.precision,
            "problems": list(self.problems),
        }


class _Short(Exception):
    pass


class _Reader:
    def __init__(self, handle: Any, size: int) -> None:
        self.h = handle
        self.left = size

    def take(self, n: int) -> bytes:
        if n < 0 or n > self.left:
            raise _Short(f"needs {n} bytes but only {self.left} are left")
        data: bytes = self.h.read(n)
        if len(data) != n:
            raise _Short("file ended early")
        self.left -= n
        return data

    def skip(self, n: int) -> None:
        if n < 0 or n > self.left:
            raise _Short(f"needs {n} bytes but only {self.left} are left")
        self.h.seek(n, 1)
        self.left -= n

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self, len_fmt: str) -> str:
        n = self.unpack(len_fmt)
        if n > MAX_STRING:
            raise _Short(f"string of {n} bytes is beyond any real header")
        return self.take(n).decode("utf-8", "replace")

    def value(self, vtype: int, len_fmt: str, keep: bool) -> Any:
        if vtype in _SCALARS:
            return self.unpack(_SCALARS[vtype])
        if vtype == _STRING:
            if keep:
                return self.string(len_fmt)
            self.skip(self.unpack(len_fmt))
            return None
        if vtype == _ARRAY:
            item_type = self.unpack("<I")
            count = self.unpack(len_fmt)
            if item_type in _SCALARS:
                self.skip(count * struct.calcsize(_SCALARS[item_type]))
            elif item_type == _STRING:
                if count > self.left:
                    raise _Short(f"array of {count} strings cannot fit")
                for _ in range(count):
                    self.skip(self.unpack(len_fmt))
            else:
                raise _Short(f"array of unsupported type {item_type}")
            return None
        raise _Short(f"unknown value type {vtype}")


def inspect_file(path: Path) -> GgufInfo:
    """Read the header and metadata of a GGUF file (tensor data is never read)."""
    with open(path, "rb") as handle:
        handle.seek(0, 2)
        size = handle.tell()
        handle.seek(0)
        return inspect_handle(handle, size)


def inspect_handle(handle: Any, size: int) -> GgufInfo:
    """Same over an open binary handle."""
    info = GgufInfo()
    r = _Reader(handle, size)
    try:
        if r.take(4) != b"GGUF":
            info.problems.append("no GGUF magic")
            return info
        info.version = r.unpack("<I")
        if info.version not in (1, 2, 3):
            info.problems.append(f"unknown GGUF version {info.version}")
            return info
        count_fmt = "<I" if info.version == 1 else "<Q"
        info.tensor_count = r.unpack(count_fmt)
        info.kv_count = r.unpack(count_fmt)
        if info.kv_count > MAX_KV:
            info.problems.append(f"{info.kv_count} metadata entries is beyond any real header")
            return info
        for _ in range(info.kv_count):
            key = r.string(count_fmt)
            vtype = r.unpack("<I")
            value = r.value(vtype, count_fmt, keep=key in _WANTED)
            if key in _WANTED:
                info.metadata[key] = value
    except _Short as exc:
        info.problems.append(f"header damaged: {exc}")
    return info
