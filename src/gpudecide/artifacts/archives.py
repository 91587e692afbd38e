"""Containers opened to scan what is inside, by content, never by name (SPEC A7, E5).

* zip (torch.save, Lightning `.ckpt`, numpy `.npz`, any other zip): the central directory
  lists the members; when it is damaged, the members are found from their local headers, so
  a damaged archive still has every readable member scanned. Stored members are read as a
  slice of the file and deflated ones through a streaming inflater, both seekable, so the
  pickle scanner can re-read a member whose frames disagree with its opcodes. A member with
  the "encrypted" flag is scanned as stored bytes when it is stored (the flag alone hides
  nothing); what cannot be read is reported, never raised.
* tar (the legacy torch tar format) and gzip / bz2 / xz / zlib streams (joblib's
  compressors): opened and scanned the same way.
* 7z, RAR, zstd and LZ4 are recognised by their magic and reported as not scanned.

Every member is probed as a pickle and as a `.npy`; what parses is scanned. A pickle found
inside counts when it is complete, when its name says pickle, or when it imports a name on
the deny list (tensor bytes do not parse as pickles, so raw storages stay quiet).
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, cast

from gpudecide.artifacts import numpy_files
from gpudecide.artifacts.pickle_scan import PickleReport, scan_stream
from gpudecide.i18n import N_

__all__ = [
    "CRC_LIMIT",
    "LOCAL",
    "MAX_MEMBERS",
    "PICKLE_NAMES",
    "UNOPENABLE",
    "ArchiveInfo",
    "ZipMember",
    "compression",
    "inspect_compressed",
    "inspect_tar",
    "inspect_zip",
    "is_tar",
    "scan_member",
    "unopenable",
]

LOCAL = b"PK\x03\x04"
PICKLE_NAMES = (".pkl", ".pickle", ".joblib", ".dill", ".sav", ".p")
# The formats by their magic bytes; each name is a msgid, said in the reader's language where
# a finding names it.
UNOPENABLE = {
    b"7z\xbc\xaf\x27\x1c": N_("7z archive"),
    b"Rar!\x1a\x07": N_("RAR archive"),
    b"\x28\xb5\x2f\xfd": N_("zstd stream"),
    b"\x04\x22\x4d\x18": N_("LZ4 frame"),
}
MAX_MEMBERS = 100_000
CRC_LIMIT = 256 << 20
_FIND_CHUNK = 8 << 20


@dataclass
class ArchiveInfo:
    """What was found inside a container."""

    kind: str
    members: list[str] = field(default_factory=list)
    pickle_members: list[str] = field(default_factory=list)
    pickle: PickleReport = field(default_factory=PickleReport)
    damage: list[str] = field(default_factory=list)
    not_scanned: list[str] = field(default_factory=list)
    source: str = "central directory"

    def summary(self) -> dict[str, Any]:
        """Machine form for the audit's `formats`."""
        body: dict[str, Any] = {
            "container": self.kind,
            "members": len(self.members),
            "pickle_members": list(self.pickle_members[:50]),
            "pickle": self.pickle.summary(),
        }
        if self.damage:
            body["damage"] = list(self.damage)
            body["members_read_from"] = self.source
        if self.not_scanned:
            body["not_scanned"] = list(self.not_scanned)
        return body


def unopenable(head: bytes) -> str | None:
    """The name of an archive format this tool cannot open, from its magic bytes."""
    for magic, name in UNOPENABLE.items():
        if head.startswith(magic):
            return name
    return None


def compression(head: bytes) -> str | None:
    """gzip / bz2 / xz / zlib by magic (the compressors joblib writes)."""
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if head.startswith(b"BZh") and head[3:4].isdigit():
        return "bz2"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "xz"
    if len(head) >= 2 and head[0] == 0x78 and (head[0] * 256 + head[1]) % 31 == 0:
        return "zlib"
    return None


def is_tar(head: bytes) -> bool:
    """POSIX / GNU tar (`ustar` at offset 257)."""
    return head[257:262] == b"ustar"


# ---- member streams ----------------------------------------------------------------------


class _Stream(io.RawIOBase):
    """A readable, seekable view over part of an open file; subclasses read and seek."""

    _pos: int

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos


class _Slice(_Stream):
    """A seekable window [start, start+length) of an open file."""

    def __init__(self, handle: IO[bytes], start: int, length: int) -> None:
        self._h, self._start, self._len, self._pos = handle, start, length, 0

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._len}[whence]
        self._pos = max(0, min(base + offset, self._len))
        return self._pos

    def read(self, n: int = -1) -> bytes:
        left = self._len - self._pos
        n = left if n is None or n < 0 else min(n, left)
        if n <= 0:
            return b""
        self._h.seek(self._start + self._pos)
        data = self._h.read(n)
        self._pos += len(data)
        return data


class _Inflate(_Stream):
    """A deflate (or zlib) stream read on demand; seeking back restarts it."""

    def __init__(self, handle: IO[bytes], start: int, length: int, wbits: int = -15) -> None:
        self._h, self._start, self._clen, self._wbits = handle, start, length, wbits
        self._restart()

    def _restart(self) -> None:
        self._z = zlib.decompressobj(self._wbits)
        self._cpos = 0
        self._pos = 0
        self._pending = b""

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        target = offset if whence == io.SEEK_SET else self._pos + offset
        if whence == io.SEEK_END:
            raise OSError("cannot seek from the end of a deflate stream")
        if target < self._pos:
            self._restart()
        while self._pos < target:
            if not self.read(min(1 << 20, target - self._pos)):
                break
        return self._pos

    def read(self, n: int = -1) -> bytes:
        n = 1 << 30 if n is None or n < 0 else n
        out = bytearray(self._pending[:n])
        self._pending = self._pending[n:]
        while len(out) < n and not self._z.eof:
            if self._cpos >= self._clen and not self._z.unconsumed_tail:
                break
            if self._z.unconsumed_tail:
                chunk = self._z.unconsumed_tail
            else:
                self._h.seek(self._start + self._cpos)
                chunk = self._h.read(min(1 << 18, self._clen - self._cpos))
                if not chunk:
                    break
                self._cpos += len(chunk)
            try:
                out += self._z.decompress(chunk, n - len(out))
            except zlib.error:
                break
        self._pos += len(out)
        return bytes(out)


# ---- zip ---------------------------------------------------------------------------------


@dataclass
class ZipMember:
    """One member as its local header (and central directory entry) describe it."""

    name: str
    flags: int
    method: int
    data_at: int
    csize: int | None
    crc: int | None = None


def _local(handle: IO[bytes], at: int, file_size: int) -> ZipMember | None:
    handle.seek(at)
    head = handle.read(30)
    if len(head) < 30 or not head.startswith(LOCAL):
        return None
    (_sig, _ver, flags, method, _t, _d, crc, csize, _usize, nlen, elen) = struct.unpack(
        "<4sHHHHHIIIHH", head
    )
    name = handle.read(nlen).decode("utf-8", "replace")
    extra = handle.read(elen)
    if csize == 0xFFFFFFFF:  # zip64: the sizes are in the extra field
        csize = _zip64_size(extra) or 0
    data_at = at + 30 + nlen + elen
    known: int | None = csize if csize or not flags & 0x08 else None
    if known is not None and data_at + known > file_size:
        known = max(file_size - data_at, 0)
    return ZipMember(name, flags, method, data_at, known, None if flags & 0x08 else crc)


def _zip64_size(extra: bytes) -> int | None:
    i = 0
    while i + 4 <= len(extra):
        tag, size = struct.unpack_from("<HH", extra, i)
        if tag == 1 and size >= 16:
            return int(struct.unpack_from("<Q", extra, i + 12)[0])
        i += 4 + size
    return None


def _central(path: Path, handle: IO[bytes], size: int) -> list[ZipMember]:
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
    out = []
    for info in infos[:MAX_MEMBERS]:
        member = _local(handle, info.header_offset, size)
        if member is None:
            raise zipfile.BadZipFile(f"no local header for {info.filename!r}")
        member.name, member.flags = info.filename, info.flag_bits
        member.method, member.csize = info.compress_type, info.compress_size
        member.crc = info.CRC
        out.append(member)
    return out


def _scan_locals(handle: IO[bytes], size: int) -> list[ZipMember]:
    """Every local header in the file, found by its signature (damaged archives)."""
    out: list[ZipMember] = []
    offset, carry = 0, b""
    while offset < size and len(out) < MAX_MEMBERS:
        handle.seek(offset)
        block = carry + handle.read(_FIND_CHUNK)
        base = offset - len(carry)
        start = 0
        while (idx := block.find(LOCAL, start)) >= 0:
            member = _local(handle, base + idx, size)
            if member is not None and member.name:
                out.append(member)
            start = idx + 1
        offset += _FIND_CHUNK
        carry = block[-3:]
    return out


def _crc_ok(stream: IO[bytes], member: ZipMember) -> bool:
    """A scanned member's CRC-32 (members up to CRC_LIMIT; the rest are taken as they are)."""
    if member.crc is None or member.flags & 0x01 or (member.csize or 0) > CRC_LIMIT:
        return True
    stream.seek(0)
    crc = 0
    while chunk := stream.read(1 << 20):
        crc = zlib.crc32(chunk, crc)
    return crc == member.crc


def _member_stream(handle: IO[bytes], member: ZipMember, size: int) -> IO[bytes] | None:
    length = member.csize if member.csize is not None else size - member.data_at
    if member.method == zipfile.ZIP_STORED:
        return cast(IO[bytes], _Slice(handle, member.data_at, length))
    if member.method == zipfile.ZIP_DEFLATED and not member.flags & 0x01:
        return cast(IO[bytes], _Inflate(handle, member.data_at, length))
    return None


def inspect_zip(path: Path) -> ArchiveInfo:
    """Scan every member of a zip by content; damage is reported, never raised."""
    info = ArchiveInfo("zip")
    size = path.stat().st_size
    with open(path, "rb") as handle:
        try:
            members = _central(path, handle, size)
        except (zipfile.BadZipFile, EOFError, ValueError, OSError, struct.error) as exc:
            info.damage.append(f"damaged zip archive: {exc}")
            info.source = "local headers"
            members = _scan_locals(handle, size)
        for member in members:
            info.members.append(member.name)
            stream = _member_stream(handle, member, size)
            if stream is None:
                why = "encrypted" if member.flags & 0x01 else f"compression method {member.method}"
                info.not_scanned.append(f"{member.name}: {why}, cannot be read")
                continue
            found = scan_member(stream, member.name, info)
            if not found and member.flags & 0x01:
                info.not_scanned.append(f"{member.name}: encrypted, cannot be read")
            elif found and not _crc_ok(stream, member):
                info.damage.append(f"{member.name}: CRC-32 does not match its contents")
    return info


# ---- tar and compressed streams ----------------------------------------------------------


def inspect_tar(path: Path) -> ArchiveInfo:
    """Scan the regular members of a tar (legacy torch files) by content."""
    info = ArchiveInfo("tar", source="tar headers")
    try:
        with tarfile.open(path, "r:") as archive:
            for count, member in enumerate(_tar_members(archive)):
                if count >= MAX_MEMBERS:
                    break
                info.members.append(member.name)
                handle = archive.extractfile(member)
                if handle is not None:
                    scan_member(handle, member.name, info)
    except (tarfile.TarError, EOFError, OSError) as exc:
        info.damage.append(f"damaged tar archive: {exc}")
    return info


def _tar_members(archive: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    while (member := archive.next()) is not None:
        if member.isfile():
            yield member


def inspect_compressed(path: Path, kind: str) -> ArchiveInfo:
    """Decompress a gzip / bz2 / xz / zlib stream on the fly and scan what it holds."""
    info = ArchiveInfo(kind, source="stream")
    name = path.name
    try:
        with open(path, "rb") as raw, _decompressor(raw, kind, path.stat().st_size) as stream:
            info.members.append(name)
            scan_member(stream, name, info)
    except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:
        info.damage.append(f"damaged {kind} stream: {exc}")
    return info


def _decompressor(raw: IO[bytes], kind: str, size: int) -> IO[bytes]:
    if kind == "gzip":
        return cast(IO[bytes], gzip.GzipFile(fileobj=raw))
    if kind == "bz2":
        return bz2.BZ2File(raw)
    if kind == "xz":
        return lzma.LZMAFile(raw)
    return cast(IO[bytes], _Inflate(raw, 0, size, wbits=15))


# ---- one member, by content --------------------------------------------------------------


def scan_member(stream: IO[bytes], name: str, info: ArchiveInfo) -> bool:
    """Probe one member as `.npy` and as a pickle; merge what counts. True when scanned."""
    head = stream.read(16)
    if not head:
        return False
    if head.startswith(numpy_files.MAGIC):
        stream.seek(0)
        npy = numpy_files.inspect_stream(stream, name)
        if npy.pickle is not None:
            info.pickle_members.append(name)
            info.pickle.merge(npy.pickle)
        return True
    stream.seek(0)
    report = scan_stream(stream, 1 << 62)
    named = name.lower().endswith(PICKLE_NAMES) or name.endswith("data.pkl")
    if report.pickles or named or report.hostile_anywhere():
        info.pickle_members.append(name)
        if not report.pickles and not named:
            report.add_problem(f"{name}: an incomplete pickle")
        info.pickle.merge(report)
        return True
    return False
