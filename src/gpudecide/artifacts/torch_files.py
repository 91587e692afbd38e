"""PyTorch files opened as containers, never loaded (SPEC A7: pickle code never runs).

* zip format (`torch.save` since 1.6, also Lightning `.ckpt`, `optimizer.pt`, DeepSpeed
  `*_states.pt`): a zip whose `<archive>/data.pkl` is the pickle; tensors are separate
  members. Every member is scanned by content (`archives`), from the local headers when
  the central directory is damaged.
* legacy format (`_use_new_zipfile_serialization=False`): consecutive pickles (magic number,
  protocol version, system info, the object, the storage keys) followed by raw storages.
* plain pickle: any other pickle stream.
* torch.distributed.checkpoint `.distcp` data files: tensors plus small `torch.save`
  archives appended one after another; their `data.pkl` members are found by their zip
  local headers and scanned. (DCP itself reads them with `weights_only=True`.)
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from gpudecide.artifacts import archives
from gpudecide.artifacts.pickle_scan import (
    BoundedReader,
    PickleReport,
    scan_following,
    scan_one,
    scan_stream,
)

__all__ = [
    "LEGACY_MAGIC",
    "PICKLE_LIMIT",
    "Container",
    "TorchInfo",
    "from_archive",
    "inspect_distcp",
    "inspect_pickle_file",
    "inspect_zip",
    "is_pickle_head",
]

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
PICKLE_LIMIT = 1 << 40  # the scan streams; time is bounded by pickle_scan.MAX_OPS instead
_LOCAL = b"PK\x03\x04"

Container = Literal["zip", "legacy", "pickle", "distcp"]


@dataclass
class TorchInfo:
    """What a torch file holds, read without loading it."""

    container: Container
    members: list[str] = field(default_factory=list)
    pickle: PickleReport = field(default_factory=PickleReport)
    problems: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """Machine form for the audit's `formats`."""
        body: dict[str, Any] = {"container": self.container}
        if self.members:
            body["members"] = len(self.members)
        body["pickle"] = self.pickle.summary()
        if self.problems:
            body["problems"] = list(self.problems)
        return body


def is_pickle_head(head: bytes) -> bool:
    """A protocol 2-5 pickle starts with PROTO (0x80) and its version."""
    return len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5


def inspect_zip(path: Path) -> TorchInfo:
    """Scan every member of a torch zip archive by content (see `archives.inspect_zip`).

    Damage (a broken central directory, a member that cannot be read) is a problem, never
    an error; the members that can still be read are scanned from their local headers.
    """
    return from_archive(archives.inspect_zip(path))


def from_archive(arc: archives.ArchiveInfo) -> TorchInfo:
    """A torch view of an archive scan: its pickles and its damage."""
    info = TorchInfo("zip" if arc.kind == "zip" else "legacy", members=list(arc.members))
    info.pickle = arc.pickle
    info.problems.extend(arc.damage)
    return info


def inspect_pickle_file(path: Path) -> TorchInfo:
    """A legacy torch file (five pickles then storages) or a plain pickle stream.

    One pass: the first pickle tells which; the rest of the stream is scanned from there.
    """
    size = path.stat().st_size
    with open(path, "rb") as handle:
        stream = BoundedReader(handle, min(size, PICKLE_LIMIT))
        first = PickleReport()
        whole = scan_one(stream, first)
        if whole and first.constants[:1] == [LEGACY_MAGIC]:
            info = TorchInfo("legacy", pickle=first)
            # protocol version, sys info, the object itself, the storage keys
            rest = scan_stream(handle, stream.left, max_pickles=4)
            info.pickle.merge(rest)
            if info.pickle.pickles < 5 and not rest.problems:
                info.problems.append("legacy torch file ends before its five pickles")
            return info
        if whole:
            scan_following(stream, first, 63)
        return TorchInfo("pickle", pickle=first)


def inspect_distcp(path: Path, chunk: int = 8 << 20) -> TorchInfo:
    """Find the `data.pkl` members of the archives inside a DCP data file and scan them."""
    info = TorchInfo("distcp")
    size = path.stat().st_size
    with open(path, "rb") as handle:
        offset = 0
        carry = b""
        while offset < size:
            handle.seek(offset)
            block = carry + handle.read(chunk)
            base = offset - len(carry)
            start = 0
            while True:
                idx = block.find(_LOCAL, start)
                if idx < 0:
                    break
                _scan_local_member(handle, base + idx, size, info)
                start = idx + 1
            offset += chunk
            carry = block[-3:]
    if not info.members:
        info.problems.append("no torch.save archive found inside (tensor data only)")
    return info


def _scan_local_member(handle: Any, at: int, size: int, info: TorchInfo) -> None:
    handle.seek(at)
    header = handle.read(30)
    if len(header) < 30:
        return
    (_sig, _ver, _flags, method, _t, _d, _crc, _csize, _usize, name_len, extra_len) = struct.unpack(
        "<4sHHHHHIIIHH", header
    )
    name = handle.read(name_len)
    if not name.endswith(b"data.pkl"):
        return
    info.members.append(name.decode("utf-8", "replace"))
    if method != 0:
        info.problems.append(f"{name!r} at byte {at} is compressed: not scanned")
        return
    data_at = at + 30 + name_len + extra_len
    handle.seek(data_at)
    report = scan_stream(handle, min(max(size - data_at, 0), PICKLE_LIMIT))
    info.pickle.merge(report)
