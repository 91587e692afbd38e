"""Pickle inspection by opcodes only: nothing is ever unpickled (DESIGN, SPEC A7, E5).

A pickle is a small stack program; loading it imports the names its GLOBAL / STACK_GLOBAL /
INST opcodes name and calls what REDUCE / NEWOBJ / OBJ / INST find on the stack. That is how
a "checkpoint" runs `os.system`. Here the opcodes are read the way CPython's unpickler reads
them, and a small abstract interpreter tracks which values are strings, which are imported
names and which are memoised, so that STACK_GLOBAL operands fetched from the memo are still
resolved (the usual evasion of naive scanners). Nothing is imported, nothing is called.

Frames (protocol 4+): `FRAME n` announces that the next n bytes hold whole opcodes. A
well-formed pickle never lets an opcode straddle a frame's end. A hostile one does, and then
readers disagree: `pickletools` and the C unpickler reading from memory go on contiguously,
while the C unpickler reading a file-like object without `peek` (as `torch.load` does from a
zip member) drops the rest of the frame and reads the opcode's argument from the frame's end
(`_Unpickler_ReadImpl` in CPython's Modules/_pickle.c), so a payload can hide inside what a
contiguous scan takes for a byte string. Every disagreement is reported, and the stream is
then walked a second time the way that file reader would, so the hidden imports are named.

Streaming and bounded: the stream is read through a fixed window; byte payloads are skipped
(seek or discard), never held; strings longer than `MAX_STRING` are skipped as opaque.
Past `MAX_OPS` opcodes the scan stops and says the pickle was not scanned to its end.
A byte string that is no valid pickle gives problems, never an exception.
"""

from __future__ import annotations

import _compat_pickle
import codecs
import io
import struct
from dataclasses import dataclass, field
from typing import IO, Any

from gpudecide.artifacts.pickle_policy import GlobalRef, Level, classify

__all__ = [
    "CHUNK",
    "MARK",
    "MAX_CONSTANTS",
    "MAX_LINE",
    "MAX_MEMO_BITS",
    "MAX_OPS",
    "MAX_PROBLEMS",
    "MAX_STACK",
    "MAX_STRING",
    "OPAQUE",
    "BoundedReader",
    "GlobalRef",
    "Level",
    "PickleReport",
    "Prefixed",
    "classify",
    "scan_all",
    "scan_bytes",
    "scan_following",
    "scan_one",
    "scan_stream",
]

MAX_OPS = 60_000_000
MAX_CONSTANTS = 200_000
MAX_PROBLEMS = 20
MAX_STRING = 1 << 16
MAX_STACK = 5_000_000
MAX_MEMO_BITS = 1 << 27  # keys above live in the dict: a 16 MiB bitmap at most
MAX_LINE = 1 << 20
CHUNK = 1 << 20


@dataclass
class PickleReport:
    """What the opcodes of one or more pickles say."""

    globals: list[GlobalRef] = field(default_factory=list)
    findings: list[dict[str, str]] = field(default_factory=list)
    constants: list[Any] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    frame_issues: list[str] = field(default_factory=list)
    too_large: str | None = None
    pickles: int = 0
    opcodes: int = 0
    protocol: int | None = None
    _seen: set[tuple[str, str]] = field(default_factory=set, repr=False)

    def add_global(self, ref: GlobalRef) -> None:
        """Record an import once."""
        key = (ref.module, ref.name)
        if key not in self._seen:
            self._seen.add(key)
            self.globals.append(ref)

    def add_finding(self, what: str, detail: str) -> None:
        """A dangerous construct that is not a plain import (bounded)."""
        item = {"what": what, "detail": detail}
        if item not in self.findings and len(self.findings) < MAX_PROBLEMS:
            self.findings.append(item)

    def add_problem(self, problem: str) -> None:
        """A reason the stream is not a valid pickle (bounded)."""
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(problem)

    def add_frame_issue(self, issue: str) -> None:
        """A place where frame and opcode boundaries disagree (bounded)."""
        if issue not in self.frame_issues and len(self.frame_issues) < MAX_PROBLEMS:
            self.frame_issues.append(issue)

    def merge(self, other: PickleReport) -> None:
        """Fold another stream's report in (several pickles of one file)."""
        for g in other.globals:
            self.add_global(g)
        for f in other.findings:
            self.add_finding(f["what"], f["detail"])
        room = MAX_CONSTANTS - len(self.constants)
        if room > 0:
            self.constants.extend(other.constants[:room])
        for p in other.problems:
            self.add_problem(p)
        for issue in other.frame_issues:
            self.add_frame_issue(issue)
        self.too_large = self.too_large or other.too_large
        self.pickles += other.pickles
        self.opcodes += other.opcodes
        if self.protocol is None:
            self.protocol = other.protocol

    @property
    def denied(self) -> list[str]:
        """Deny-list imports and constructs: known code execution, one line each."""
        out = [f"imports {g.dotted} ({g.reason})" for g in self.globals if g.level == "dangerous"]
        return out + [f"{f['what']}: {f['detail']}" for f in self.findings]

    @property
    def untrusted(self) -> list[str]:
        """Imports outside the weights-only allow list (loading needs trust in that code)."""
        return [f"imports {g.dotted} ({g.reason})" for g in self.globals if g.level == "untrusted"]

    @property
    def dangerous(self) -> list[str]:
        """Everything that makes loading this pickle unsafe: deny list, then untrusted."""
        return self.denied + self.untrusted

    @property
    def library(self) -> list[str]:
        """Library classes the pickle constructs (listed, not flagged)."""
        return [g.dotted for g in self.globals if g.level == "library"]

    @property
    def strings(self) -> list[str]:
        """String constants, in order (keys and values of the pickled dicts)."""
        return [c for c in self.constants if isinstance(c, str)]

    def value_after(self, key: str) -> Any:
        """The constant that follows `key` (a dict's value when it is a plain constant).

        An opcode-level read, not an evaluation: `{"global_step": 3}` pickles as the string
        then the int, so the constant after the key is its value. None when not found.
        """
        for i, c in enumerate(self.constants[:-1]):
            if c == key and isinstance(c, str):
                return self.constants[i + 1]
        return None

    def summary(self) -> dict[str, Any]:
        """Machine form for the audit's `formats`."""
        body: dict[str, Any] = {
            "pickles": self.pickles,
            "opcodes": self.opcodes,
            "protocol": self.protocol,
            "imports": [
                {"name": g.dotted, "level": g.level, **({"reason": g.reason} if g.reason else {})}
                for g in self.globals
            ],
            "dangerous": self.dangerous,
            "problems": list(self.problems),
        }
        if self.frame_issues:
            body["frame_issues"] = list(self.frame_issues)
        if self.too_large:
            body["too_large"] = self.too_large
        return body

    def hostile_anywhere(self) -> bool:
        """A deny-list import with importable names, or a frame disagreement, was seen."""
        named = any(g.level == "dangerous" and g.importable for g in self.globals)
        return named or bool(self.frame_issues)


class BoundedReader:
    """A read-only view of a stream that never reads past `limit` bytes.

    A hostile BINBYTES8 may claim 2**63 bytes; reads and skips are clamped to what is
    really left, so nothing allocates or seeks by what the stream claims.
    """

    def __init__(self, raw: Any, limit: int) -> None:
        self._raw = raw
        self._left = max(limit, 0)
        self._pos = 0
        try:
            self._seekable = bool(raw.seekable())
        except (AttributeError, OSError, ValueError):
            self._seekable = False

    def read(self, n: int = -1) -> bytes:
        """Read at most `n` bytes (all that is left when negative), clamped to the limit."""
        if n is None or n < 0 or n > self._left:
            n = self._left
        data: bytes = self._raw.read(n) if n > 0 else b""
        self._left -= len(data)
        self._pos += len(data)
        return data

    def skip(self, n: int) -> int:
        """Move `n` bytes on without keeping them; the count really skipped."""
        n = min(n, self._left)
        if self._seekable and n > CHUNK:
            before = self._raw.tell()
            done = int(self._raw.seek(n, io.SEEK_CUR)) - int(before)  # a slice clamps
        else:
            done = 0
            while done < n:
                got = len(self._raw.read(min(CHUNK, n - done)))
                if not got:
                    break
                done += got
        self._left -= done
        self._pos += done
        return done

    def readline(self, size: int = -1) -> bytes:
        """One line, clamped to the limit (and to 1 MiB: no text opcode needs more)."""
        cap = min(self._left, MAX_LINE)
        if size is not None and 0 <= size < cap:
            cap = size
        data: bytes = self._raw.readline(cap)
        self._left -= len(data)
        self._pos += len(data)
        return data

    def tell(self) -> int:
        """Bytes consumed so far."""
        return self._pos

    @property
    def left(self) -> int:
        """Bytes that may still be read."""
        return self._left


class _Malformed(Exception):
    pass


class _Stop(Exception):
    pass


class _Window:
    """The stream seen through a read window, with the unpickler's frame bookkeeping.

    Offsets are absolute from the stream's start. `frame_end` is the end of the current
    frame (-1: none). In `discard` mode a read that does not fit in the rest of the frame
    drops that rest and reads from the frame's end, as the C unpickler does on a file
    without `peek`; in contiguous mode it reads on, as `pickletools` and `pickle.loads` do.
    Both modes record the disagreement.
    """

    def __init__(self, reader: BoundedReader, report: PickleReport, discard: bool) -> None:
        self.reader = reader
        self.report = report
        self.discard = discard
        self.buf = b""
        self.i = 0
        self.base = 0  # absolute offset of buf[0]
        self.frame_end = -1
        self.op_start = 0

    @property
    def pos(self) -> int:
        return self.base + self.i

    def limit(self) -> int:
        """Index in `buf` up to which bytes lie inside the buffer and the current frame."""
        n = len(self.buf)
        if self.frame_end >= 0:
            end = self.frame_end - self.base
            return end if end < n else n
        return n

    def _fill(self, n: int) -> bool:
        """Make at least `n` bytes available from `i`; False when the stream ends first."""
        have = len(self.buf) - self.i
        if have >= n:
            return True
        more = self.reader.read(max(CHUNK, n - have))
        self.base += self.i
        self.buf = self.buf[self.i :] + more
        self.i = 0
        return len(self.buf) >= n

    def _frame_check(self, n: int) -> None:
        """Before a read of n bytes: apply and record what the frame says about it."""
        end = self.frame_end
        if end < 0:
            return
        pos = self.pos
        if pos + n <= end:
            return
        self.frame_end = -1
        if pos >= end and self.op_start >= end:
            return  # this opcode began after the frame: nothing to disagree about
        self.report.add_frame_issue(
            f"the opcode at offset {self.op_start} runs past the frame ending at {end}"
        )
        if self.discard and pos < end:
            self.skip(end - pos)

    def read(self, n: int) -> bytes:
        """`_Unpickler_Read`: n bytes, frame rules applied."""
        self._frame_check(n)
        if not self._fill(n):
            raise _Malformed("pickle data was truncated")
        data = self.buf[self.i : self.i + n]
        self.i += n
        return data

    def byte(self) -> int:
        """One opcode byte; -1 at the end of the stream."""
        self.op_start = self.pos
        if self.frame_end >= 0 and self.op_start >= self.frame_end:
            self.frame_end = -1
        if self.i >= len(self.buf) and not self._fill(1):
            return -1
        b = self.buf[self.i]
        self.i += 1
        return b

    def readline(self) -> bytes:
        """`_Unpickler_Readline`: up to and including the newline, frame rules applied."""
        end = self.frame_end
        if end >= 0:
            pos = self.pos
            if pos >= end:
                self.frame_end = -1
            else:
                look = min(end - pos, MAX_LINE + 1)
                self._fill(look)
                if self.buf.find(b"\n", self.i, self.i + look) < 0:
                    # No newline in the frame's rest, or none within the longest line read
                    # (then the file reader may find it elsewhere): a disagreement either way.
                    self._frame_check(end - pos + 1)
        while True:
            stop = self.buf.find(b"\n", self.i)
            if stop >= 0:
                line = self.buf[self.i : stop + 1]
                self.i = stop + 1
                return line
            have = len(self.buf) - self.i
            if have > MAX_LINE:
                raise _Malformed("a text opcode's line is longer than 1 MiB")
            if not self._fill(have + 1):
                raise _Malformed("pickle data was truncated inside a text line")

    def read_or_skip(self, n: int) -> bytes | None:
        """A counted string read with `_Unpickler_Read`: kept when short, else skipped."""
        if n <= MAX_STRING:
            return self.read(n)
        self._frame_check(n)
        self.skip(n)
        return None

    def payload(self, n: int) -> None:
        """`_Unpickler_ReadInto` (byte payloads): skipped; contiguous in the C unpickler.

        A payload that runs out of its frame is still a disagreement: the pure-Python
        unpickler refuses it ("pickle exhausted before end of frame").
        """
        end = self.frame_end
        if end >= 0 and self.pos + n > end:
            self.frame_end = -1
            self.report.add_frame_issue(
                f"the payload of the opcode at offset {self.op_start} runs past the frame "
                f"ending at {end}"
            )
        self.skip(n)

    def skip(self, n: int) -> None:
        have = len(self.buf) - self.i
        if n <= have:
            self.i += n
            return
        rest = n - have
        self.base += len(self.buf)
        self.buf, self.i = b"", 0
        if self.reader.skip(rest) < rest:
            raise _Malformed("pickle data was truncated (a length runs past the end)")
        self.base += rest


class _Mark:
    __slots__ = ()


class _Opaque:
    __slots__ = ()


MARK = _Mark()
OPAQUE = _Opaque()

# Opcode groups (dispatch ids) and their fixed argument sizes.
(
    _G_PUSH, _G_POP_PUSH, _G_MARK_PUSH, _G_MARK_POP, _G_CONST_FIXED, _G_STR_COUNTED,
    _G_BYTES_COUNTED, _G_MEMO_PUT, _G_MEMO_GET, _G_CALL, _G_SPECIAL,
) = range(11)  # fmt: skip

_FIXED_INT = {0x4A: ("<i", 4), 0x4B: ("<B", 1), 0x4D: ("<H", 2)}


def _table() -> dict[int, tuple[int, int, int]]:
    """opcode -> (group, pops, pushes) for the generic groups; arguments are read per op."""
    t: dict[int, tuple[int, int, int]] = {}
    for c in b"}])\x8f\x88\x89N\x97":  # EMPTY_DICT/LIST/TUPLE/SET, TRUE, FALSE, NONE, NEXT_BUFFER
        t[c] = (_G_PUSH, 0, 1)
    for c, pops, pushes in (
        (0x85, 1, 1), (0x86, 2, 1), (0x87, 3, 1),  # TUPLE1/2/3
        (ord("a"), 1, 0), (ord("s"), 2, 0), (ord("b"), 1, 0),  # APPEND, SETITEM, BUILD
        (ord("Q"), 1, 1), (0x98, 1, 1),  # BINPERSID, READONLY_BUFFER
    ):  # fmt: skip
        t[c] = (_G_POP_PUSH, pops, pushes)
    for c in b"dlt\x91":  # DICT, LIST, TUPLE, FROZENSET: items from the mark -> one value
        t[c] = (_G_MARK_PUSH, 0, 1)
    for c in b"eu\x901":  # APPENDS, SETITEMS, ADDITEMS, POP_MARK: items into what is below
        t[c] = (_G_MARK_POP, 0, 0)
    for c in (0x4A, 0x4B, 0x4D, ord("G")):
        t[c] = (_G_CONST_FIXED, 0, 1)
    for c in (ord("T"), ord("U"), ord("X"), 0x8C, 0x8D):
        t[c] = (_G_STR_COUNTED, 0, 1)
    for c in (ord("B"), ord("C"), 0x8E, 0x96, 0x8A, 0x8B):
        t[c] = (_G_BYTES_COUNTED, 0, 1)
    for c in (ord("q"), ord("r"), 0x94, ord("p")):
        t[c] = (_G_MEMO_PUT, 0, 0)
    for c in (ord("h"), ord("j"), ord("g")):
        t[c] = (_G_MEMO_GET, 0, 1)
    for c in (ord("R"), 0x81, 0x92, ord("o")):
        t[c] = (_G_CALL, 0, 1)
    for c in b"(.02FILSVPci\x80\x82\x83\x84\x93\x95":
        t[c] = (_G_SPECIAL, 0, 0)
    return t


_TABLE = _table()
_COUNT_SIZE = {
    ord("T"): ("<i", 4), ord("U"): ("<B", 1), ord("X"): ("<I", 4), 0x8C: ("<B", 1),
    0x8D: ("<Q", 8), ord("B"): ("<I", 4), ord("C"): ("<B", 1), 0x8E: ("<Q", 8),
    0x96: ("<Q", 8), 0x8A: ("<B", 1), 0x8B: ("<i", 4),
}  # fmt: skip
_OP_NAMES = {0x52: "REDUCE", 0x81: "NEWOBJ", 0x92: "NEWOBJ_EX", 0x6F: "OBJ"}
_PUSH_ONLY = frozenset(c for c, (group, _, _) in _TABLE.items() if group == _G_PUSH)


class _Memo:
    """The unpickler's memo, in bounded memory.

    Only values that matter (strings, imports, marks) are kept by key; keys whose value is
    opaque are one bit each in a bitmap, so a pickle that memoises millions of objects costs
    a few megabytes. `count` is the number of distinct keys (MEMOIZE's next key), as in the
    C unpickler's `memo_len`.
    """

    __slots__ = ("bits", "count", "values")

    def __init__(self) -> None:
        self.values: dict[int, Any] = {}
        self.bits = bytearray()
        self.count = 0

    def put(self, key: int, value: Any) -> None:
        byte, bit = key >> 3, 1 << (key & 7)
        opaque_before = byte < len(self.bits) and self.bits[byte] & bit
        if not opaque_before and key not in self.values:
            self.count += 1
        if value is OPAQUE and key < MAX_MEMO_BITS:
            if byte >= len(self.bits):
                self.bits.extend(bytes(max(byte + 1 - len(self.bits), len(self.bits))))
            self.bits[byte] |= bit
            self.values.pop(key, None)
        else:
            if opaque_before:
                self.bits[byte] &= ~bit & 0xFF
            self.values[key] = value

    def get(self, key: int) -> Any:
        value = self.values.get(key, self)
        if value is not self:
            return value
        byte = key >> 3
        if byte < len(self.bits) and self.bits[byte] & (1 << (key & 7)):
            return OPAQUE
        raise _Malformed(f"memo key {key!r} used before it was stored")


class _Interpreter:
    """Abstract stack machine: strings and imports are tracked, everything else is opaque."""

    def __init__(self, report: PickleReport, window: _Window) -> None:
        self.report = report
        self.w = window
        self.stack: list[Any] = []
        self.memo = _Memo()

    # -- stack helpers (C unpickler semantics: underflow stops the load) ------------------
    def pop(self) -> Any:
        if not self.stack or self.stack[-1] is MARK:
            raise _Malformed("unpickling stack underflow")
        return self.stack.pop()

    def pop_to_mark(self) -> list[Any]:
        stack = self.stack
        for k in range(len(stack) - 1, -1, -1):
            if stack[k] is MARK:
                items = stack[k + 1 :]
                del stack[k:]
                return items
        raise _Malformed("could not find MARK")

    def note_import(self, module: str, name: str) -> GlobalRef:
        if self.report.protocol is None or self.report.protocol < 3:
            # Protocols 0-2 carry Python 2 names; the unpickler maps them (fix_imports).
            if (module, name) in _compat_pickle.NAME_MAPPING:
                module, name = _compat_pickle.NAME_MAPPING[(module, name)]
            elif module in _compat_pickle.IMPORT_MAPPING:
                module = _compat_pickle.IMPORT_MAPPING[module]
        level, reason = classify(module, name)
        ref = GlobalRef(module, name, level, reason)
        self.report.add_global(ref)
        return ref

    def call(self, func: Any, opcode: str) -> None:
        if isinstance(func, GlobalRef):
            return  # the import itself was classified when it was pushed
        self.report.add_finding(
            f"{opcode} of a computed callable",
            "calls something that is not a plain import (a getattr/attribute chain)",
        )

    def const(self, value: Any) -> None:
        if len(self.report.constants) < MAX_CONSTANTS:
            self.report.constants.append(value)

    # -- the walk ------------------------------------------------------------------------
    def run(self, max_ops: int) -> bool:
        """Interpret opcodes up to STOP; True at STOP. Raises _Malformed on invalid input.

        The frequent opcodes are decoded by `fast` straight from the window's buffer;
        the others go through `slow_op` and the window's read methods (frame rules).
        """
        w, report = self.w, self.report
        ops = report.opcodes
        try:
            while True:
                ops = self.fast(ops, max_ops)
                if len(self.stack) >= MAX_STACK:
                    report.too_large = f"more than {MAX_STACK:,} values on the stack"
                    raise _Stop
                ops += 1
                if ops > max_ops:
                    report.too_large = f"more than {max_ops:,} opcodes: not scanned to the end"
                    raise _Stop
                code = w.byte()
                if code < 0:
                    raise _Malformed("pickle ended without STOP (truncated?)")
                if self.slow_op(code, ops):
                    return True
        finally:
            report.opcodes = ops

    def fast(self, ops: int, max_ops: int) -> int:
        """Decode frequent opcodes inline while each lies inside the buffer and the frame.

        No frame rule can apply to an opcode wholly inside the current frame, so these need
        no bookkeeping beyond the stack and memo. Returns the opcode count; stops at the
        first opcode that needs the slow path (or at the opcode limit).
        """
        w, stack, memo = self.w, self.stack, self.memo
        consts = self.report.constants
        room = MAX_CONSTANTS - len(consts)
        push, from_bytes, unpack_from = stack.append, int.from_bytes, struct.unpack_from
        buf, i, lim = w.buf, w.i, w.limit()
        try:
            while i + 10 <= lim and ops < max_ops and len(stack) < MAX_STACK:
                code = buf[i]
                ops += 1
                if code == 0x71 or code == 0x94:  # BINPUT, MEMOIZE
                    if not stack or stack[-1] is MARK:
                        raise _Malformed("memo store with an empty stack")
                    memo.put(buf[i + 1] if code == 0x71 else memo.count, stack[-1])
                    i += 2 if code == 0x71 else 1
                    continue
                if code == 0x68:  # BINGET
                    push(memo.get(buf[i + 1]))
                    i += 2
                    continue
                if code == 0x4B or code == 0x4D or code == 0x4A:  # BININT1/2, BININT
                    size = 1 if code == 0x4B else (2 if code == 0x4D else 4)
                    push(OPAQUE)
                    if room > 0:
                        room -= 1
                        consts.append(
                            from_bytes(buf[i + 1 : i + 1 + size], "little", signed=size == 4)
                        )
                    i += 1 + size
                    continue
                if code == 0x8C and i + 2 + buf[i + 1] <= lim:  # SHORT_BINUNICODE
                    n = buf[i + 1]
                    try:
                        text = buf[i + 2 : i + 2 + n].decode("utf-8", "surrogatepass")
                    except UnicodeDecodeError as exc:
                        raise _Malformed(f"invalid UTF-8 in a string: {exc.reason}") from exc
                    push(text)
                    if room > 0:
                        room -= 1
                        consts.append(text)
                    i += 2 + n
                    continue
                if code == 0x28:  # MARK
                    push(MARK)
                    i += 1
                    continue
                if code == 0x47:  # BINFLOAT
                    push(OPAQUE)
                    if room > 0:
                        room -= 1
                        consts.append(unpack_from(">d", buf, i + 1)[0])
                    i += 9
                    continue
                if code == 0x75 or code == 0x65:  # SETITEMS, APPENDS
                    self.pop_to_mark()
                    if not stack:
                        raise _Malformed("unpickling stack underflow")
                    i += 1
                    continue
                if code == 0x73 or code == 0x61:  # SETITEM, APPEND
                    k = 3 if code == 0x73 else 2
                    if len(stack) < k or MARK in stack[-k:]:
                        raise _Malformed("unpickling stack underflow")
                    del stack[1 - k :]
                    i += 1
                    continue
                if code in _PUSH_ONLY:
                    push(OPAQUE)
                    i += 1
                    continue
                ops -= 1  # not a fast opcode: the slow path counts it
                break
        finally:
            w.i = i
        return ops

    def slow_op(self, code: int, ops: int) -> bool:
        """One opcode through the window's read methods; True at STOP."""
        w, stack = self.w, self.stack
        entry = _TABLE.get(code)
        if entry is None:
            raise _Malformed(f"invalid load key {code:#04x} at offset {w.pos - 1}")
        group = entry[0]
        if group == _G_PUSH:
            stack.append(OPAQUE)
        elif group == _G_CONST_FIXED:
            if code == 0x47:  # BINFLOAT
                value: Any = struct.unpack(">d", w.read(8))[0]
            else:
                fmt, size = _FIXED_INT[code]
                value = struct.unpack(fmt, w.read(size))[0]
            stack.append(OPAQUE)
            self.const(value)
        elif group == _G_MEMO_PUT:
            self.memo_put(code)
        elif group == _G_MARK_POP:
            self.pop_to_mark()
            if code != 0x31 and not stack:  # APPENDS/SETITEMS need their target
                raise _Malformed("unpickling stack underflow")
        elif group == _G_POP_PUSH:
            pops = entry[1]
            # SETITEM, APPEND and BUILD also need the object they change, above the mark (as
            # the fast path and CPython's unpickler check).
            if code in (0x73, 0x61, 0x62) and (len(stack) <= pops or MARK in stack[-pops - 1 :]):
                raise _Malformed("unpickling stack underflow")
            for _ in range(pops):
                self.pop()
            if entry[2]:
                stack.append(OPAQUE)
        elif group == _G_STR_COUNTED:
            self.push_string(w.read_or_skip(self.count(code)), code)
        elif group == _G_BYTES_COUNTED:
            n = self.count(code)
            if code in (0x8A, 0x8B):  # LONG1 / LONG4 use Read
                data = w.read_or_skip(n)
                stack.append(OPAQUE)
                self.const(int.from_bytes(data, "little", signed=True) if data else 0)
            else:
                w.payload(n)
                stack.append(OPAQUE)
        elif group == _G_MEMO_GET:
            self.memo_get(code)
        elif group == _G_MARK_PUSH:
            self.pop_to_mark()
            stack.append(OPAQUE)
        elif group == _G_CALL:
            self.reduce(code)
        else:
            return self.special(code)
        return False

    def count(self, code: int) -> int:
        fmt, size = _COUNT_SIZE[code]
        n: int = struct.unpack(fmt, self.w.read(size))[0]
        if n < 0:
            raise _Malformed("negative length")
        return n

    def push_string(self, raw: bytes | None, code: int) -> None:
        if raw is None:
            self.stack.append(OPAQUE)
            return
        if code in (0x54, 0x55):
            value = raw.decode("latin-1")
        else:
            try:
                value = raw.decode("utf-8", "surrogatepass")
            except UnicodeDecodeError as exc:
                raise _Malformed(f"invalid UTF-8 in a string: {exc.reason}") from exc
        self.stack.append(value)
        self.const(value)

    def memo_put(self, code: int) -> None:
        w = self.w
        if code == 0x71:
            key = w.read(1)[0]
        elif code == 0x72:
            key = struct.unpack("<I", w.read(4))[0]
        elif code == 0x94:
            key = self.memo.count
        else:
            key = self.int_line(w.readline())
            if key < 0:  # only a text key can be negative; CPython refuses it
                raise _Malformed("negative PUT argument")
        if not self.stack or self.stack[-1] is MARK:
            raise _Malformed("memo store with an empty stack")
        self.memo.put(key, self.stack[-1])

    def memo_get(self, code: int) -> None:
        w = self.w
        if code == 0x68:
            key = w.read(1)[0]
        elif code == 0x6A:
            key = struct.unpack("<I", w.read(4))[0]
        else:
            key = self.int_line(w.readline())
            if key < 0:
                raise _Malformed(f"memo key {key!r} used before it was stored")
        self.stack.append(self.memo.get(key))

    @staticmethod
    def int_line(line: bytes) -> int:
        try:
            return int(line[:-1])
        except ValueError as exc:
            raise _Malformed("a text opcode's number is not a number") from exc

    def reduce(self, code: int) -> None:
        name = _OP_NAMES[code]
        if code == 0x6F:  # OBJ
            items = self.pop_to_mark()
            if not items:
                raise _Malformed("OBJ without a class")
            self.call(items[0], name)
        else:
            self.pop()
            if code == 0x92:
                self.pop()
            self.call(self.pop(), name)
        self.stack.append(OPAQUE)

    def text_const(self, code: int, line: bytes) -> Any:
        body = line[:-1]
        try:
            if code == 0x49:  # INT: "00"/"01" are the protocol-0 booleans
                return int(body)
            if code == 0x4C:
                return int(body[:-1] if body.endswith(b"L") else body)
            return float(body)
        except ValueError as exc:
            raise _Malformed("a text opcode's number is not a number") from exc

    def text_string(self, code: int, line: bytes) -> str:
        body = line[:-1]
        if code == 0x56:  # UNICODE
            return body.decode("raw-unicode-escape")
        if len(body) < 2 or body[:1] != body[-1:] or body[:1] not in (b"'", b'"'):
            raise _Malformed("the STRING opcode argument must be quoted")
        decoded: bytes = codecs.escape_decode(body[1:-1])[0]
        return decoded.decode("latin-1")

    def global_names(self) -> tuple[str, str]:
        try:
            module = self.w.readline()[:-1].decode("utf-8")
            name = self.w.readline()[:-1].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _Malformed("a GLOBAL name is not UTF-8") from exc
        return module, name

    def special(self, code: int) -> bool:
        """The opcodes with their own rules; True at STOP."""
        stack, w = self.stack, self.w
        if code == 0x28:  # MARK
            stack.append(MARK)
        elif code == 0x2E:  # STOP
            self.pop()
            return True
        elif code == 0x30:  # POP: the C unpickler pops a MARK too
            if not stack:
                raise _Malformed("unpickling stack underflow")
            stack.pop()
        elif code == 0x32:  # DUP
            if not stack or stack[-1] is MARK:
                raise _Malformed("unpickling stack underflow")
            stack.append(stack[-1])
        elif code in (0x46, 0x49, 0x4C):  # FLOAT, INT, LONG
            stack.append(OPAQUE)
            self.const(self.text_const(code, w.readline()))
        elif code in (0x53, 0x56):  # STRING, UNICODE
            try:
                value = self.text_string(code, w.readline())
            except (UnicodeDecodeError, ValueError) as exc:
                raise _Malformed(f"a text string does not decode: {str(exc)[:80]}") from exc
            stack.append(value)
            self.const(value)
        elif code == 0x50:  # PERSID
            w.readline()
            stack.append(OPAQUE)
        elif code == 0x63:  # GLOBAL
            stack.append(self.note_import(*self.global_names()))
        elif code == 0x69:  # INST: import, then call it with the items above the mark
            module, name = self.global_names()
            self.note_import(module, name)
            self.pop_to_mark()
            stack.append(OPAQUE)
        elif code == 0x93:  # STACK_GLOBAL
            gname, module = self.pop(), self.pop()
            if isinstance(module, str) and isinstance(gname, str):
                stack.append(self.note_import(module, gname))
            else:
                self.report.add_finding(
                    "STACK_GLOBAL with computed operands",
                    "the imported name is built at load time, so it cannot be vetted",
                )
                stack.append(OPAQUE)
        elif code == 0x80:  # PROTO
            proto = w.read(1)[0]
            if proto > 5:
                raise _Malformed(f"unsupported pickle protocol: {proto}")
            if self.report.protocol is None:
                self.report.protocol = proto
        elif code == 0x95:  # FRAME
            self.frame()
        else:  # EXT1/2/4
            size = {0x82: 1, 0x83: 2, 0x84: 4}[code]
            ext = int.from_bytes(w.read(size), "little")
            self.report.add_finding(
                f"EXT{size} extension code {ext}",
                "imports a name from the copyreg extension registry, unknown here",
            )
            stack.append(OPAQUE)
        return False

    def frame(self) -> None:
        """FRAME: in the C unpickler a frame is its input buffer (see the module docstring)."""
        w = self.w
        at = w.pos - 1
        (length,) = struct.unpack("<Q", w.read(8))
        start = w.pos
        if w.frame_end >= 0 and start < w.frame_end:
            left = w.frame_end - start
            w.report.add_frame_issue(
                f"FRAME at offset {at} begins {left} byte(s) before the frame it is in ends"
            )
            if w.discard:
                if length <= left:
                    return  # served from the buffer: the old frame's end still holds
                w.skip(left)  # the rest is dropped; the new frame is read from its end
                start = w.pos
        if length > w.reader.left + (len(w.buf) - w.i):
            # The unpickler reads the whole frame before running any of it: it would stop
            # here with "truncated", so nothing inside runs. Scanned on anyway.
            w.report.add_problem(f"FRAME at offset {at} claims {length} bytes past the end")
            w.frame_end = -1
            return
        w.frame_end = start + length


def _walk(reader: BoundedReader, report: PickleReport, discard: bool, max_ops: int) -> bool:
    """One pickle from the reader's position; True when it ended with STOP."""
    window = _Window(reader, report, discard)
    interp = _Interpreter(report, window)
    try:
        done = interp.run(max_ops)
    except _Stop:
        return False
    except _Malformed as exc:
        report.add_problem(str(exc))
        return False
    except (MemoryError, OverflowError, struct.error, ValueError, IndexError) as exc:
        report.add_problem(f"not a valid pickle: {str(exc)[:160]}")
        return False
    # Bytes read ahead into the window belong to what follows this pickle: give them back.
    _push_back(reader, window)
    if done:
        report.pickles += 1
    return done


def _push_back(reader: BoundedReader, window: _Window) -> None:
    extra = len(window.buf) - window.i
    if extra <= 0:
        return
    raw = reader._raw
    try:
        raw.seek(-extra, io.SEEK_CUR)
    except (AttributeError, OSError, ValueError):
        reader._raw = Prefixed(window.buf[window.i :], raw)
    reader._left += extra
    reader._pos -= extra


def scan_one(stream: BoundedReader, report: PickleReport, max_ops: int | None = None) -> bool:
    """Scan one pickle from the stream's position; True when it ended with STOP.

    When frame and opcode boundaries disagree, the same pickle is walked again the way the
    C unpickler reads a file-like object (the rest of a frame dropped), when the stream
    can be rewound, so what that reader would import is named too.
    """
    limit = MAX_OPS if max_ops is None else max_ops  # read at call time (tests lower it)
    start = _tell(stream)
    ok = _walk(stream, report, discard=False, max_ops=limit)
    if report.frame_issues:
        end = _tell(stream)
        try:
            if start is None:
                raise OSError("the stream cannot tell its position")
            stream._raw.seek(start[0])
        except (AttributeError, OSError, ValueError):
            report.add_problem("frames disagree with opcodes; the stream cannot be re-read")
            return ok
        replay = BoundedReader(stream._raw, start[1])
        second = PickleReport()
        _walk(replay, second, discard=True, max_ops=limit)
        for g in second.globals:
            report.add_global(g)
        for f in second.findings:
            report.add_finding(f["what"], f["detail"])
        for issue in second.frame_issues:
            report.add_frame_issue(issue)
        if end is not None:
            stream._raw.seek(end[0])
    return ok


def _tell(stream: BoundedReader) -> tuple[int, int] | None:
    try:
        return int(stream._raw.tell()), stream.left
    except (AttributeError, OSError, ValueError):
        return None


def scan_stream(
    raw: IO[bytes], limit: int, *, max_pickles: int = 1, max_ops: int | None = None
) -> PickleReport:
    """Scan up to `max_pickles` consecutive pickles from a stream, reading at most `limit`."""
    report = PickleReport()
    stream = BoundedReader(raw, limit)
    for index in range(max_pickles):
        if index > 0 and stream.left <= 0:
            break
        if not scan_one(stream, report, max_ops):
            break
    return report


def scan_all(
    raw: IO[bytes], limit: int, max_pickles: int = 64, max_ops: int | None = None
) -> PickleReport:
    """Scan a raw pickle file: the first pickle must be whole; more may follow it.

    `pickle.load` reads only the first, but a loader may call it again, so every pickle that
    follows is scanned too (as picklescan does). Bytes after the last pickle that are not
    a pickle are a problem, and what they import is still named.
    """
    report = PickleReport()
    stream = BoundedReader(raw, limit)
    if scan_one(stream, report, max_ops):
        scan_following(stream, report, max_pickles - 1, max_ops)
    return report


def scan_following(
    stream: BoundedReader, report: PickleReport, max_pickles: int, max_ops: int | None = None
) -> None:
    """After a whole pickle: scan the pickles that follow it, up to `max_pickles` more."""
    for _ in range(max_pickles):
        if stream.left <= 0:
            break
        rest = PickleReport()
        ok = scan_one(stream, rest, max_ops)
        for g in rest.globals:
            report.add_global(g)
        for f in rest.findings:
            report.add_finding(f["what"], f["detail"])
        for issue in rest.frame_issues:
            report.add_frame_issue(issue)
        report.too_large = report.too_large or rest.too_large
        if not ok:
            if not rest.too_large:
                report.add_problem("bytes after the first pickle are not a complete pickle")
            break
        report.pickles += rest.pickles
        report.opcodes += rest.opcodes


class Prefixed:
    """A stream with a few bytes pushed back in front of it."""

    def __init__(self, head: bytes, tail: Any) -> None:
        self._head = head
        self._tail = tail

    def read(self, n: int = -1) -> bytes:
        if self._head:
            if n is None or n < 0:
                data, self._head = self._head + self._tail.read(), b""
                return bytes(data)
            data, self._head = self._head[:n], self._head[n:]
            if len(data) < n:
                data += self._tail.read(n - len(data))
            return bytes(data)
        return bytes(self._tail.read(n))

    def readline(self, size: int = -1) -> bytes:
        if self._head:
            whole = size is None or size < 0
            cut = len(self._head) if whole else min(size, len(self._head))
            end = self._head.find(b"\n", 0, cut)
            if end >= 0:
                cut = end + 1
            data, self._head = self._head[:cut], self._head[cut:]
            if end >= 0 or self._head or (not whole and len(data) >= size):
                return bytes(data)
            return bytes(data) + bytes(self._tail.readline(-1 if whole else size - len(data)))
        return bytes(self._tail.readline(size))

    def seekable(self) -> bool:
        return False


def scan_bytes(data: bytes, max_pickles: int = 64, max_ops: int | None = None) -> PickleReport:
    """Scan pickle bytes held in memory (tests, fuzzing)."""
    return scan_all(io.BytesIO(data), len(data), max_pickles, max_ops)
