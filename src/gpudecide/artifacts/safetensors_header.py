"""safetensors headers read with every bound the format defines (SPEC A7, E5 corrupt files).

Layout: 8 bytes little-endian header length N, N bytes of JSON, then the byte buffer. The
reference implementation (huggingface/safetensors) refuses a file when N > 100,000,000,
when the header runs past the file, when the JSON does not start with `{`, when a dtype is
unknown, when shape x dtype size differs from the byte range, or when the ranges do not
tile the buffer exactly from 0 to its end. Each of those is a problem here, reported and never
raised: a corrupt file is a finding of the audit, not a crash of the tool.

Only the header is read; tensors are never loaded. Precision is derived from the dtypes,
weighted by bytes.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "DTYPE_BITS",
    "MAX_HEADER",
    "MAX_PROBLEMS",
    "PRECISION_OF",
    "SafetensorsInfo",
    "TensorEntry",
    "check_header",
    "inspect_bytes",
    "inspect_file",
    "inspect_handle",
    "looks_like_safetensors",
    "precision_from_dtypes",
]

MAX_HEADER = 100_000_000
MAX_PROBLEMS = 20

# Bits per element, as the reference implementation's `Dtype::bitsize`.
DTYPE_BITS: dict[str, int] = {
    "BOOL": 8,
    "F4": 4,
    "F6_E2M3": 6,
    "F6_E3M2": 6,
    "U8": 8,
    "I8": 8,
    "F8_E5M2": 8,
    "F8_E4M3": 8,
    "F8_E8M0": 8,
    "I16": 16,
    "U16": 16,
    "F16": 16,
    "BF16": 16,
    "I32": 32,
    "U32": 32,
    "F32": 32,
    "C64": 64,
    "F64": 64,
    "I64": 64,
    "U64": 64,
}

# Name of the training precision each floating dtype implies.
PRECISION_OF: dict[str, str] = {
    "F32": "fp32",
    "F64": "fp64",
    "F16": "fp16",
    "BF16": "bf16",
    "F8_E5M2": "fp8",
    "F8_E4M3": "fp8",
    "F8_E8M0": "fp8",
    "F6_E2M3": "fp6",
    "F6_E3M2": "fp6",
    "F4": "fp4",
}


@dataclass
class TensorEntry:
    """One tensor as the header describes it."""

    name: str
    dtype: str
    shape: list[int]
    begin: int
    end: int


@dataclass
class SafetensorsInfo:
    """What a safetensors header says, and what is wrong with it."""

    header_len: int | None = None
    tensors: list[TensorEntry] = field(default_factory=list)
    metadata: dict[str, str] | None = None
    problems: list[str] = field(default_factory=list)
    file_size: int = 0

    @property
    def ok(self) -> bool:
        """No problem found."""
        return not self.problems

    def bytes_by_dtype(self) -> dict[str, int]:
        """Bytes of tensor data per dtype."""
        out: dict[str, int] = {}
        for t in self.tensors:
            out[t.dtype] = out.get(t.dtype, 0) + (t.end - t.begin)
        return out

    @property
    def precision(self) -> str | None:
        """Training precision implied by the floating dtypes holding most bytes."""
        return precision_from_dtypes(self.bytes_by_dtype())

    def summary(self) -> dict[str, Any]:
        """Machine form for the audit's `formats`."""
        return {
            "header_len": self.header_len,
            "tensors": len(self.tensors),
            "tensor_bytes": sum(t.end - t.begin for t in self.tensors),
            "dtypes": self.bytes_by_dtype(),
            "precision": self.precision,
            "metadata": self.metadata,
            "problems": list(self.problems),
        }

    def add(self, problem: str) -> None:
        """Record a problem (bounded: a hostile header cannot flood the report)."""
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(problem)
        elif len(self.problems) == MAX_PROBLEMS:
            self.problems.append("... more problems not listed")


def precision_from_dtypes(bytes_by_dtype: dict[str, int]) -> str | None:
    """Precision of the floating dtype holding the most bytes (None without floats)."""
    floats: dict[str, int] = {}
    for dtype, n in bytes_by_dtype.items():
        name = PRECISION_OF.get(dtype)
        if name:
            floats[name] = floats.get(name, 0) + n
    if not floats:
        return None
    return max(sorted(floats), key=lambda k: floats[k])


class _Duplicate(ValueError):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Duplicate(key)
        out[key] = value
    return out


def _is_uint(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _parse_header(header: bytes, info: SafetensorsInfo) -> dict[str, Any] | None:
    """The header's JSON object, or None with the reason recorded in `info`."""
    if not header.startswith(b"{"):
        info.add("header does not start with '{'")
        return None
    try:
        text = header.decode("utf-8")
    except UnicodeDecodeError as exc:
        info.add(f"header is not UTF-8 (byte {exc.start})")
        return None
    try:
        parsed = json.loads(text, object_pairs_hook=_pairs)
    except _Duplicate as exc:
        info.add(f"duplicate key {str(exc)!r} in the header")
        return None
    except (ValueError, RecursionError) as exc:
        info.add(f"header is not valid JSON: {str(exc)[:120]}")
        return None
    if not isinstance(parsed, dict):
        info.add("header is not a JSON object")
        return None
    return parsed


def _tensor_entry(name: str, entry: Any) -> TensorEntry | str:
    """One tensor's entry, or the problem that makes it unusable."""
    where = f"tensor {name!r}"
    if not isinstance(entry, dict):
        return f"{where}: not an object"
    dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
    if not isinstance(dtype, str) or dtype not in DTYPE_BITS:
        return f"{where}: unknown dtype {dtype!r}"
    if not isinstance(shape, list) or not all(_is_uint(d) for d in shape):
        return f"{where}: shape must be a list of non-negative integers"
    if not isinstance(offsets, list) or len(offsets) != 2 or not all(_is_uint(o) for o in offsets):
        return f"{where}: data_offsets must be two non-negative integers"
    begin, end = offsets
    if begin > end:
        return f"{where}: data_offsets begin {begin} > end {end}"
    count = 1
    for dim in shape:
        count *= dim
    bits = count * DTYPE_BITS[dtype]
    if bits % 8:
        return f"{where}: {count} x {dtype} is not a whole number of bytes"
    if bits // 8 != end - begin:
        return (
            f"{where}: shape {shape} x {dtype} is {bits // 8} bytes but data_offsets "
            f"span {end - begin}"
        )
    return TensorEntry(name, dtype, list(shape), begin, end)


def _check_tiling(info: SafetensorsInfo, buffer_len: int) -> None:
    # The ranges must tile [0, buffer_len) exactly: contiguous, non-overlapping, no slack.
    expected = 0
    for t in sorted(info.tensors, key=lambda t: (t.begin, t.end)):
        if t.begin < expected:
            info.add(f"tensor {t.name!r}: bytes {t.begin}-{t.end} overlap the previous tensor")
        elif t.begin > expected:
            info.add(f"tensor {t.name!r}: {t.begin - expected} bytes before it belong to no tensor")
        expected = max(expected, t.end)
    if expected > buffer_len:
        info.add(
            f"tensor data needs {expected} bytes but the file holds {max(buffer_len, 0)} "
            "after the header (truncated?)"
        )
    elif expected < buffer_len:
        info.add(f"{buffer_len - expected} bytes at the end of the file belong to no tensor")


def check_header(header: bytes, file_size: int, header_len: int) -> SafetensorsInfo:
    """Validate a header's JSON against the buffer it describes (never raises)."""
    info = SafetensorsInfo(header_len=header_len, file_size=file_size)
    parsed = _parse_header(header, info)
    if parsed is None:
        return info
    for name, entry in parsed.items():
        if name == "__metadata__":
            if not isinstance(entry, dict) or not all(isinstance(v, str) for v in entry.values()):
                info.add("__metadata__ must map strings to strings")
            else:
                info.metadata = dict(entry)
            continue
        tensor = _tensor_entry(name, entry)
        if isinstance(tensor, str):
            info.add(tensor)
        else:
            info.tensors.append(tensor)
    _check_tiling(info, file_size - 8 - header_len)
    return info


def inspect_file(path: Path) -> SafetensorsInfo:
    """Read and check the header of one file; an unreadable file raises OSError."""
    with open(path, "rb") as handle:
        handle.seek(0, 2)
        size = handle.tell()
        handle.seek(0)
        return inspect_handle(handle, size)


def inspect_handle(handle: Any, size: int) -> SafetensorsInfo:
    """Same as `inspect_file` over an open binary handle of known size."""
    if size < 8:
        info = SafetensorsInfo(file_size=size)
        info.add(f"file is {size} bytes, shorter than the 8-byte header length")
        return info
    (header_len,) = struct.unpack("<Q", handle.read(8))
    if header_len > MAX_HEADER:
        info = SafetensorsInfo(header_len=header_len, file_size=size)
        info.add(f"header length {header_len} exceeds the format's bound of {MAX_HEADER} bytes")
        return info
    if 8 + header_len > size:
        info = SafetensorsInfo(header_len=header_len, file_size=size)
        info.add(f"header length {header_len} runs past the end of the file ({size} bytes)")
        return info
    header = handle.read(header_len)
    return check_header(header, size, header_len)


def inspect_bytes(data: bytes) -> SafetensorsInfo:
    """Check a whole file held in memory (tests, fuzzing)."""
    import io

    return inspect_handle(io.BytesIO(data), len(data))


def looks_like_safetensors(head: bytes, size: int) -> bool:
    """Sniff: a plausible header length followed by a JSON object."""
    if len(head) < 9 or size < 10:
        return False
    (n,) = struct.unpack("<Q", head[:8])
    return 2 <= n <= min(MAX_HEADER, size - 8) and head[8:9] == b"{"
