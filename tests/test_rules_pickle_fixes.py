"""Pickle-scanner faults that mutation testing found, each pinned against CPython (SPEC A7, E5).

A text line running past a long frame: CPython's file reader drops the frame's rest and
reads the line from the frame's end, so what it imports must be named (`_Window.readline`
must check the frame for every line with no newline in reach). A stream that cannot tell
its position cannot be walked a second time, and the report must say so, as it does for
one that cannot seek (`scan_one`). A negative text memo key is refused, as CPython does.
Pushed-back bytes honour a line size (`Prefixed.readline`)."""

from __future__ import annotations

import io
import pickle
import struct
from typing import Any

import pytest

from gpudecide.artifacts import pickle_scan

from .streams import NoSeek


@pytest.mark.parametrize("over", [0, 1, 2, 1000, 3 * pickle_scan.MAX_LINE])
def test_a_global_line_past_a_long_frame_is_named(over: int) -> None:
    rest = pickle_scan.MAX_LINE + over  # frame bytes after GLOBAL, none a newline
    data = b"\x80\x04\x95" + struct.pack("<Q", 1 + rest) + b"c" + b"a" * rest
    data += b"os\nsystem\n."
    seen: list[str] = []

    class Recorder(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            seen.append(f"{module}.{name}")
            raise pickle.UnpicklingError("refused by the test")

    with pytest.raises(pickle.UnpicklingError):
        Recorder(NoSeek(data)).load()
    assert seen == ["os.system"]  # what torch.load's zip-member reader would import
    report = pickle_scan.scan_bytes(data)
    assert report.frame_issues == [
        f"the opcode at offset 11 runs past the frame ending at {12 + rest}"
    ]
    assert "os.system" in [g.dotted for g in report.globals]
    assert report.hostile_anywhere()


def test_a_stream_that_cannot_tell_says_it_was_not_re_read() -> None:
    head = b"\x80\x04\x95" + struct.pack("<Q", 2) + b"B\x07\x01\x00\x00\x00Z"
    data = head + b"B" + struct.pack("<I", 258) + b"f" * 256 + b"N." + b"cos\nsystem\n."
    report = pickle_scan.scan_stream(NoSeek(data), len(data))  # type: ignore[arg-type]
    assert report.frame_issues == ["the opcode at offset 11 runs past the frame ending at 13"]
    assert report.problems == ["frames disagree with opcodes; the stream cannot be re-read"]


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"Np-1\n.", "negative PUT argument"),
        # A negative key would set the bit of key 7 in the bitmap: GET 7 then resolves.
        (b"Np0\n0Np-1\n0g7\n.", "negative PUT argument"),
        # ...or find the bit of key 7 when asked for key -1.
        (b"Np7\n0Np0\n0g-1\n.", "memo key -1 used before it was stored"),
    ],
)
def test_negative_text_memo_keys_are_refused_as_cpython_does(data: bytes, problem: str) -> None:
    report = pickle_scan.scan_bytes(data)
    assert (report.problems, report.pickles) == ([problem], 0)
    with pytest.raises((ValueError, pickle.UnpicklingError)):
        pickle.loads(data)


@pytest.mark.parametrize(
    ("head", "size"), [(b"ab", 4), (b"abc\n", 2), (b"abcdef", 3), (b"ab", 2), (b"", 3)]
)
def test_pushed_back_bytes_honour_a_line_size(head: bytes, size: int) -> None:
    tail = b"cdef\ngh"
    pushed = pickle_scan.Prefixed(head, io.BytesIO(tail))
    oracle = io.BytesIO(head + tail)
    for _ in range(4):
        assert pushed.readline(size) == oracle.readline(size)
    assert pushed.read(-1) == oracle.read(-1)


@pytest.mark.parametrize("size", [-1, None, 0, 1])
@pytest.mark.parametrize("head", [b"\n", b"\nab", b"a\n", b"ab"])
def test_pushed_back_lines_read_as_one_stream_reads_them(head: bytes, size: int | None) -> None:
    """A newline first in the pushed-back bytes, a size of 0, `None` (boundaries of the
    rewritten `Prefixed.readline`): the same lines as one `BytesIO` of both parts."""
    tail = b"cd\nef"
    pushed = pickle_scan.Prefixed(head, io.BytesIO(tail))
    oracle = io.BytesIO(head + tail)
    for _ in range(4):
        assert pushed.readline(size) == oracle.readline(size)  # type: ignore[arg-type]


def test_text_memo_key_zero_is_a_key() -> None:
    """Key 0 stored and read by text opcodes (the boundary of the negative-key refusal)."""
    data = b"Np0\n0g0\n."
    assert pickle.loads(data) is None
    report = pickle_scan.scan_bytes(data)
    assert (report.problems, report.pickles) == ([], 1)


def test_a_text_line_of_the_longest_length_inside_a_frame_is_no_frame_issue() -> None:
    """A GLOBAL line of exactly MAX_LINE bytes (newline included) wholly inside its frame:
    the newline is in reach, so the frame and the opcodes agree."""
    line = b"a" * (pickle_scan.MAX_LINE - 1) + b"\n"
    body = b"c" + line + b"b\n."
    data = b"\x80\x04\x95" + struct.pack("<Q", len(body)) + body
    report = pickle_scan.scan_bytes(data)
    assert report.frame_issues == []
    assert report.problems == []
    assert [g.dotted for g in report.globals] == ["a" * (pickle_scan.MAX_LINE - 1) + ".b"]
