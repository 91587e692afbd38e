"""The pickle scanner's stream machinery (SPEC A7, E5): the inline decoder of the frequent
opcodes, the read window and its edges, text lines and frames, the second walk that reads
a stream the way CPython's file reader does, and the readers that bound and push back
bytes. Each expectation is checked against CPython where it has one: `pickletools.genops`
for the opcodes and their arguments, `pickle.loads` / the pure-Python unpickler for what is
accepted, and a C unpickler whose `find_class` records and refuses for what a reader would
import. Only the tests' own pickles are ever loaded, and the hostile ones never get past
`find_class`."""

from __future__ import annotations

import _compat_pickle
import collections
import io
import pickle
import pickletools
import struct
from typing import IO, Any, cast

import pytest

from gpudecide.artifacts import pickle_scan

from .streams import NoSeek

CHUNK = pickle_scan.CHUNK
MAX_LINE = pickle_scan.MAX_LINE

CONST_OPS = {
    "INT", "BININT", "BININT1", "BININT2", "LONG", "LONG1", "LONG4", "FLOAT", "BINFLOAT",
    "STRING", "BINSTRING", "SHORT_BINSTRING", "UNICODE", "SHORT_BINUNICODE", "BINUNICODE",
    "BINUNICODE8",
}  # fmt: skip


def _q(n: int) -> bytes:
    return struct.pack("<Q", n)


def _typed(values: list[Any]) -> list[tuple[type, Any]]:
    # pickletools reads protocol 0's "I01" as True; the scanner keeps the int 1.
    return [(int if type(v) is bool else type(v), v) for v in values]


class _NoRewind(NoSeek):
    """Tells its position but cannot seek (a socket-backed or forward-only reader)."""

    def tell(self) -> int:
        return self._b.tell()

    def seek(self, *args: Any) -> int:
        raise io.UnsupportedOperation("seek")


class _Recorder(pickle.Unpickler):
    """CPython's C unpickler that records each import it would make and makes none."""

    def __init__(self, file: Any) -> None:
        super().__init__(file)
        self.seen: list[str] = []

    def find_class(self, module: str, name: str) -> Any:
        self.seen.append(f"{module}.{name}")
        raise pickle.UnpicklingError("refused by the test")


# ---- the inline decoder agrees with pickletools ------------------------------------------


class _Harmless:
    pass


SHARED = "a shared key"
CORPUS: list[Any] = [
    list(range(-70_000, 70_000, 997)),  # BININT, BININT2 and BININT1
    [i / 7 for i in range(30)] + [-0.0, 1e300],
    {"name": "caf\u00e9", "k" * 300: "v", SHARED: [SHARED, SHARED], "n": None, "t": True},
    ("a", "bb", 2**70, -(2**70), 1.5, b"bytes", bytearray(b"ba"), "\u20ac" * 40),
    ["x" * n for n in (0, 1, 9, 10, 255, 256, 300)],
    [frozenset({1, 2}), {3}, (), (1,), (1, 2), (1, 2, 3), (1, 2, 3, 4)],
    [collections.OrderedDict([("a", 1)]), collections.Counter("ab"), collections.deque([1])],
    [{"a": 1}, {"b": [2]}] * 20,
]


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
@pytest.mark.parametrize("index", range(len(CORPUS)))
def test_opcodes_constants_and_imports_agree_with_cpython(protocol: int, index: int) -> None:
    data = pickle.dumps(CORPUS[index], protocol=protocol)
    ops = list(pickletools.genops(data))
    report = pickle_scan.scan_bytes(data)
    assert (report.problems, report.frame_issues, report.pickles) == ([], [], 1)
    assert report.opcodes == len(ops)
    expected = [arg for op, arg, _ in ops if op.name in CONST_OPS]
    assert _typed(report.constants) == _typed(expected)
    # The imports, in order, are the ones the unpickler asks for (Python 2 names mapped
    # below protocol 3, as `fix_imports` does).
    seen: list[str] = []

    class Names(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            if protocol < 3:
                if (module, name) in _compat_pickle.NAME_MAPPING:
                    module, name = _compat_pickle.NAME_MAPPING[(module, name)]
                elif module in _compat_pickle.IMPORT_MAPPING:
                    module = _compat_pickle.IMPORT_MAPPING[module]
            seen.append(f"{module}.{name}")
            return super().find_class(module, name)

    assert Names(io.BytesIO(data)).load() == CORPUS[index]
    assert [g.dotted for g in report.globals] == list(dict.fromkeys(seen))


def test_memo_reuse_on_the_inline_path_resolves_imports() -> None:
    # 'collections' is memoised with the first import and fetched by BINGET for the
    # second; both imports lie well inside the buffer, so the inline decoder reads them.
    data = pickle.dumps([collections.OrderedDict, collections.Counter] + [0] * 20, protocol=4)
    assert b"h\x01" in data or b"h\x02" in data  # a BINGET really fetches the module name
    report = pickle_scan.scan_bytes(data)
    assert [g.dotted for g in report.globals] == ["collections.OrderedDict", "collections.Counter"]
    recorder = _Recorder(io.BytesIO(data))
    with pytest.raises(pickle.UnpicklingError):
        recorder.load()
    assert recorder.seen == ["collections.OrderedDict"]


PAD = b"N" * 12  # enough opcodes behind a program that the inline decoder reads it


@pytest.mark.parametrize(
    ("data", "dotted"),
    [
        # BINPUT 5 / BINPUT 9 (not the memo's next key), BINGET them back in reverse use.
        (b"\x80\x04\x8c\x06systemq\x05\x8c\x02osq\x09" + PAD + b"h\x09h\x05\x93" + PAD + b".",
         "os.system"),
        # MEMOIZE after a BINPUT 7: the memo holds one key, so MEMOIZE stores at key 1.
        (b"\x80\x04\x8c\x02osq\x07\x8c\x06system\x94" + PAD + b"h\x07h\x01\x93" + PAD + b".",
         "os.system"),
        # BINPUT over a key first stored with an opaque value: the string wins.
        (b"\x80\x04Nq\x03\x8c\x03sysq\x03\x8c\x04exit\x94" + PAD + b"h\x03h\x01\x93" + PAD
         + b".", "sys.exit"),
    ],
)  # fmt: skip
def test_memo_keys_written_and_read_inline(data: bytes, dotted: str) -> None:
    report = pickle_scan.scan_bytes(data)
    assert [g.dotted for g in report.globals] == [dotted] and report.problems == []
    assert report.opcodes == len(list(pickletools.genops(data)))
    recorder = _Recorder(io.BytesIO(data))
    with pytest.raises(pickle.UnpicklingError):
        recorder.load()
    assert recorder.seen == [dotted]


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"\x80\x04\x94" + PAD + b".", "memo store with an empty stack"),
        (b"\x80\x04q\x00" + PAD + b".", "memo store with an empty stack"),
        (b"\x80\x04(q\x00" + PAD + b".", "memo store with an empty stack"),
        (b"\x80\x04h\x04" + PAD + b".", "memo key 4 used before it was stored"),
        (b"\x80\x04N\x94h\x01" + PAD + b".", "memo key 1 used before it was stored"),
        (b"\x80\x04(NNu" + PAD + b".", "unpickling stack underflow"),
        (b"\x80\x04(Ne" + PAD + b".", "unpickling stack underflow"),
        (b"\x80\x04NNs" + PAD + b".", "unpickling stack underflow"),
        (b"\x80\x04N(NNs" + PAD + b".", "unpickling stack underflow"),
        (b"\x80\x04NN(Ns" + PAD + b".", "unpickling stack underflow"),
        (b"\x80\x04Na" + PAD + b".", "unpickling stack underflow"),
        (b"\x80\x04N(Na" + PAD + b".", "unpickling stack underflow"),
        (b"\x80\x04\x8c\x02\xff\xfe" + PAD + b".", "invalid UTF-8 in a string: invalid start byte"),
        (b"\x80\x04\x8c\x03a\xc3(" + PAD + b".",
         "invalid UTF-8 in a string: invalid continuation byte"),
        (b"\x80\x04\x00" + PAD + b".", "invalid load key 0x00 at offset 2"),
        # Bytes next to inline opcodes in the table that are no opcodes at all.
        (b"\x80\x04H" + b"\x00" * 8 + PAD + b".", "invalid load key 0x48 at offset 2"),
        (b"\x80\x04}(NNv" + PAD + b".", "invalid load key 0x76 at offset 6"),
        (b"\x80\x04](Nf" + PAD + b".", "invalid load key 0x66 at offset 5"),
    ],
)  # fmt: skip
def test_refusals_on_the_inline_path(data: bytes, problem: str) -> None:
    report = pickle_scan.scan_bytes(data)
    assert report.problems == [problem] and report.pickles == 0
    with pytest.raises(Exception):  # noqa: B017 - CPython refuses each one too
        pickle.loads(data)


@pytest.mark.parametrize(
    ("body", "pops"),
    [
        (b"}NNs", 10),  # SETITEM leaves the dict
        (b"]Na", 10),  # APPEND leaves the list
        (b"}(NNNNu", 10),  # SETITEMS leaves the dict, the mark and items gone
        (b"](NNe", 10),
        (b"N(NN1", 10),  # POP_MARK leaves what was below the mark
        (b"(NNNl", 10),  # LIST: one value for the mark and its items
    ],
)
def test_what_each_inline_opcode_leaves_on_the_stack(body: bytes, pops: int) -> None:
    # Ten NONEs pushed after the opcode, then POPs: with exactly as many POPs as values,
    # STOP finds an empty stack; with one POP less it stops on the last value.
    head = b"\x80\x04" + body + b"N" * 10
    fits = pickle_scan.scan_bytes(head + b"0" * pops + b".")
    assert (fits.problems, fits.pickles) == ([], 1)
    over = pickle_scan.scan_bytes(head + b"0" * (pops + 1) + b".")
    assert over.problems == ["unpickling stack underflow"]
    pickle.loads(head + b"0" * pops + b".")
    with pytest.raises(pickle.UnpicklingError):
        pickle.loads(head + b"0" * (pops + 1) + b".")


@pytest.mark.parametrize(("data", "value"), [(b"(}NNsl.", [{None: None}]), (b"(]Nal.", [[None]])])
def test_a_mark_below_the_target_of_setitem_and_append(data: bytes, value: Any) -> None:
    # Short programs (the slow path): the target sits right above the mark, which is fine.
    report = pickle_scan.scan_bytes(data)
    assert (report.problems, report.pickles) == ([], 1)
    assert pickle.loads(data) == value


def test_constants_stop_at_their_bound_on_both_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pickle_scan, "MAX_CONSTANTS", 5)
    ints = b"\x80\x04" + b"K\x01M\x02\x01J\x03\x00\x00\x00K\x04K\x05K\x06" + PAD + b"."
    assert pickle_scan.scan_bytes(ints).constants == [1, 258, 3, 4, 5]
    strings = b"\x80\x04" + b"".join(b"\x8c\x01" + bytes([c]) for c in b"abcdefg") + PAD + b"."
    assert pickle_scan.scan_bytes(strings).constants == ["a", "b", "c", "d", "e"]
    floats = b"\x80\x04" + b"".join(b"G" + struct.pack(">d", k) for k in range(7)) + PAD + b"."
    assert pickle_scan.scan_bytes(floats).constants == [0.0, 1.0, 2.0, 3.0, 4.0]
    # Four read inline, then one on the slow path (the short tail), then none.
    mixed = b"\x80\x04" + b"K\x01" * 4 + PAD + b"I7\nI8\n."
    assert pickle_scan.scan_bytes(mixed).constants == [1, 1, 1, 1, 7]
    # One constant kept on the slow path before the inline decoder starts: four more.
    later = b"\x80\x04I1\n" + b"K\x02" * 8 + PAD + b"."
    assert pickle_scan.scan_bytes(later).constants == [1, 2, 2, 2, 2]
    monkeypatch.setattr(pickle_scan, "MAX_CONSTANTS", 1)
    one = b"\x80\x04" + b"K\x09" * 8 + PAD + b"."
    assert pickle_scan.scan_bytes(one).constants == [9]


def test_stack_bound_stops_where_the_stack_reaches_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pickle_scan, "MAX_STACK", 20)
    report = pickle_scan.scan_bytes(b"\x80\x04" + b"N" * 40 + b".")
    assert report.too_large == "more than 20 values on the stack"
    # PROTO and 20 NONEs were read when the stack first held 20 values.
    assert (report.opcodes, report.pickles) == (21, 0)
    under = pickle_scan.scan_bytes(b"\x80\x04" + b"N" * 19 + b".")
    assert (under.too_large, under.pickles, under.opcodes) == (None, 1, 21)


def test_opcode_limit_on_the_inline_path() -> None:
    data = b"\x80\x04" + b"N" * 31 + b"0" * 30 + b"."  # 63 opcodes, the NONEs read inline
    assert pickle_scan.scan_bytes(data, max_ops=63).pickles == 1
    for limit in (20, 62):
        over = pickle_scan.scan_bytes(data, max_ops=limit)
        assert over.too_large == f"more than {limit} opcodes: not scanned to the end"
        assert (over.opcodes, over.pickles) == (limit + 1, 0)


# ---- the read window's edges ---------------------------------------------------------------


def _up_to(offset: int) -> bytes:
    """PROTO 4 and one BINBYTES8 payload that together end exactly at `offset`."""
    return b"\x80\x04\x8e" + _q(offset - 11) + b"x" * (offset - 11)


@pytest.mark.parametrize(
    ("at", "tail", "constants"),
    [
        (CHUNK, b".", []),  # STOP is the first byte of the second read window
        (CHUNK - 1, b".", []),  # ...the last byte of the first
        (CHUNK - 1, b"K\x07.", [7]),  # BININT1's argument is the next window's first byte
        # BININT across the edge
        (CHUNK - 2, b"J" + struct.pack("<i", -123_456_789) + b".", [-123_456_789]),
        (CHUNK - 3, b"G@\t!\xfbTD-\x18.", [3.141592653589793]),
        (CHUNK - 10, b"\x8c\x14" + b"abcdefghij" * 2 + b".", ["abcdefghij" * 2]),
        (CHUNK - 12, b"\x8c\x14" + b"\x05" * 20 + b".", ["\x05" * 20]),
        (CHUNK - 5, b"Vline across\n.", ["line across"]),
        (CHUNK - 1, b"V\n.", [""]),  # the newline is the next window's first byte
        (CHUNK - 1, b"I5\n.", [5]),
        (CHUNK - 2, b"X\x03\x00\x00\x00abc.", ["abc"]),
    ],
)
def test_opcodes_at_and_across_the_read_window_edge(
    at: int, tail: bytes, constants: list[Any]
) -> None:
    data = _up_to(at) + tail
    ops = list(pickletools.genops(data))
    assert ops[-2][2] == at or ops[-1][2] == at  # the opcode really sits at the edge
    for report in (
        pickle_scan.scan_bytes(data),
        pickle_scan.scan_stream(cast(IO[bytes], NoSeek(data)), len(data)),
    ):
        assert (report.problems, report.frame_issues, report.pickles) == ([], [], 1)
        assert report.constants == constants and report.opcodes == len(ops)
    loaded = pickle.loads(data)
    assert loaded == (constants[0] if constants else b"x" * (at - 11))


def test_offsets_after_two_payloads_larger_than_the_window() -> None:
    n = CHUNK + 5
    payload = b"\x8e" + _q(n) + b"x" * n + b"0"
    framed = b"\x95" + _q(8) + b"\x8c\x02os\x8c\x06sy" + b"stem\x93."
    data = b"\x80\x04" + payload * 2 + framed
    at = 2 + 2 * len(payload)  # the FRAME opcode
    report = pickle_scan.scan_bytes(data)
    assert report.frame_issues == [
        f"the opcode at offset {at + 13} runs past the frame ending at {at + 17}"
    ]
    assert [g.dotted for g in report.globals] == ["os.system"] and report.pickles == 1
    assert _pure_python_refuses(data)


def test_a_truncated_argument_at_the_window_edge_is_refused() -> None:
    for tail, problem in (
        (b"J\x01\x02", "pickle data was truncated"),
        (b"V\x01\x02", "pickle data was truncated inside a text line"),
        (b"", "pickle ended without STOP (truncated?)"),
        (b"V\n", "pickle ended without STOP (truncated?)"),  # the newline is the last byte
    ):
        data = _up_to(CHUNK - 1) + tail
        assert pickle_scan.scan_bytes(data).problems == [problem]


def test_text_lines_are_bounded_by_what_the_window_holds() -> None:
    # A line is refused once more than MAX_LINE bytes are buffered without a newline; a
    # stream that ends first is truncated.
    assert pickle_scan.scan_bytes(b"V" + b"a" * MAX_LINE).problems == [
        "pickle data was truncated inside a text line"
    ]
    assert pickle_scan.scan_bytes(b"V" + b"a" * (MAX_LINE + 1)).problems == [
        "a text opcode's line is longer than 1 MiB"
    ]
    whole = b"V" + b"a" * (MAX_LINE - 1) + b"\n."
    report = pickle_scan.scan_bytes(whole)
    assert report.problems == [] and report.constants == ["a" * (MAX_LINE - 1)]
    assert pickle.loads(whole) == report.constants[0]


# ---- frames: what the inline path leaves to the slow one, and text lines -----------------


def _framed(body: bytes, length: int) -> bytes:
    return b"\x80\x04\x95" + _q(length) + body


def _pure_python_refuses(data: bytes) -> bool:
    try:
        pickle._loads(data)  # type: ignore[attr-defined]
    except pickle.UnpicklingError as exc:
        assert str(exc) == "pickle exhausted before end of frame"
        return True
    return False


@pytest.mark.parametrize(
    ("body", "frame", "issue", "constants"),
    [
        # A SHORT_BINUNICODE of 30 bytes starting 20 bytes before the frame ends, with
        # enough bytes in the buffer after it: read on contiguously, the crossing named.
        (b"K\x03\x8c\x1e" + b"\x05" * 30 + b"N" * 20 + b".", 2 + 2 + 18,
         "the opcode at offset 13 runs past the frame ending at 33", [3, "\x05" * 30]),
        (b"N" * 12 + b"\x8c\x10" + b"abcdefgh" * 2 + b"N" * 20 + b".", 12 + 2 + 15,
         "the opcode at offset 23 runs past the frame ending at 40", ["abcdefgh" * 2]),
        # ...and one ending exactly on the frame's end is inside it.
        (b"N" * 12 + b"\x8c\x10" + b"abcdefgh" * 2 + b"N" * 20 + b".", 12 + 2 + 16,
         None, ["abcdefgh" * 2]),
        # Text lines: the newline on the frame's last byte, one past it, two past it; the
        # opcode the frame's last byte and its line wholly after it (read from the stream
        # by every reader: no disagreement).
        (b"I12\n" + b".", 4, None, [12]),
        (b"I12\n" + b".", 3, "the opcode at offset 11 runs past the frame ending at 14", [12]),
        (b"I12\n" + b".", 2, "the opcode at offset 11 runs past the frame ending at 13", [12]),
        (b"I12\n" + b".", 1, None, [12]),
        # A newline earlier in the buffer is not this line's.
        (b"I1\nI12\n.", 6, "the opcode at offset 14 runs past the frame ending at 17", [1, 12]),
        (b"N" * 12 + b"Vab\n" + b"N" * 12 + b".", 12 + 4 + 13, None, ["ab"]),
        (b"N" * 12 + b"Vab\n" + b"N" * 12 + b".", 12 + 3,
         "the opcode at offset 23 runs past the frame ending at 26", ["ab"]),
    ],
)  # fmt: skip
def test_opcodes_against_the_frame_end(
    body: bytes, frame: int, issue: str | None, constants: list[Any]
) -> None:
    data = _framed(body, frame)
    report = pickle_scan.scan_bytes(data)
    assert report.frame_issues == ([issue] if issue else [])
    assert (report.constants, report.problems, report.pickles) == (constants, [], 1)
    assert _pure_python_refuses(data) == (issue is not None)
    assert report.opcodes == len(list(pickletools.genops(data)))


def test_a_global_whose_first_line_ends_the_frame() -> None:
    # The module line ends exactly on the frame's end; the name line follows outside any
    # frame: the pure-Python unpickler reads it from the stream, no disagreement.
    data = _framed(b"cbuiltins\n", 10) + b"int\n."
    report = pickle_scan.scan_bytes(data)
    assert (report.frame_issues, report.problems) == ([], [])
    assert [g.dotted for g in report.globals] == ["builtins.int"]
    assert pickle._loads(data) is int  # type: ignore[attr-defined]
    # One byte shorter, the module line itself runs past the frame.
    short = _framed(b"cbuiltins\n", 9) + b"int\n."
    assert pickle_scan.scan_bytes(short).frame_issues == [
        "the opcode at offset 11 runs past the frame ending at 20"
    ]
    assert _pure_python_refuses(short)


def test_a_text_opcode_on_the_last_byte_of_a_framed_window() -> None:
    # One frame spans the first read window's end; UNICODE is that window's last byte and
    # its (empty) line starts the next one. Inside the frame: no disagreement.
    payload = CHUNK - 21
    body = b"\x8e" + _q(payload) + b"x" * payload + b"V\n" + b"."
    data = _framed(body, len(body))
    assert data.index(b"V\n", CHUNK - 2) == CHUNK - 1
    report = pickle_scan.scan_bytes(data)
    assert (report.frame_issues, report.problems, report.constants) == ([], [], [""])
    assert pickle._loads(data) == ""  # type: ignore[attr-defined]
    # The frame ending on UNICODE itself: its line lies wholly after the frame, where every
    # reader reads it from the stream.
    cut = _framed(body, len(body) - 2)
    assert (pickle_scan.scan_bytes(cut).frame_issues, _pure_python_refuses(cut)) == ([], False)


def test_a_line_running_past_a_long_frame() -> None:
    # The rest of the frame after UNICODE is exactly MAX_LINE bytes with no newline.
    body = b"V" + b"a" * MAX_LINE
    data = _framed(body, len(body)) + b"\n."
    report = pickle_scan.scan_bytes(data)
    assert report.frame_issues == [
        f"the opcode at offset 11 runs past the frame ending at {11 + len(body)}"
    ]
    assert report.constants == ["a" * MAX_LINE] and report.problems == []
    assert _pure_python_refuses(data)


def test_a_long_string_past_the_frame_end_is_skipped_and_named() -> None:
    # BINUNICODE longer than the string bound (skipped, not kept) crossing the frame end.
    n = pickle_scan.MAX_STRING + 10
    body = b"X" + struct.pack("<I", n) + b"s" * n
    data = _framed(body, 5 + n - 3) + b"."
    report = pickle_scan.scan_bytes(data)
    assert report.frame_issues == [
        f"the opcode at offset 11 runs past the frame ending at {11 + 5 + n - 3}"
    ]
    assert (report.constants, report.problems, report.pickles) == ([], [], 1)
    assert _pure_python_refuses(data)


# ---- the second walk: what CPython's file reader would run -------------------------------


def _hidden_behind(hidden_len: int) -> bytes:
    """A pickle whose 2-byte frame ends inside a BINBYTES length (see the module docstring).

    Read contiguously (pickletools, pickle.loads): BINBYTES of 0x107 bytes, NONE, STOP.
    Read as CPython reads a file without `peek`: the frame's last byte dropped, BINBYTES
    of 1 byte ('Z'), then a BINBYTES whose payload covers the rest of this pickle, so the
    next opcode that reader runs is the first byte after it.
    """
    skip = 281 - 23
    body = b"B\x07\x01\x00\x00\x00Z" + b"B" + struct.pack("<I", skip) + b"f" * 256 + b"N."
    data = _framed(body, 2)
    assert len(data) == 281 and hidden_len >= 0
    return data


HIDDEN_IMPORT = b"cos\nsystem\n."


def _file_reader_imports(data: bytes) -> list[str]:
    recorder = _Recorder(NoSeek(data))
    with pytest.raises(pickle.UnpicklingError):
        recorder.load()
    return recorder.seen


def test_the_file_reader_runs_what_follows_the_pickle() -> None:
    first = _hidden_behind(len(HIDDEN_IMPORT))
    ops = [op.name for op, _, _ in pickletools.genops(first)]
    assert ops == ["PROTO", "FRAME", "BINBYTES", "NONE", "STOP"]
    assert pickle.loads(first) is None  # contiguous: harmless
    data = first + HIDDEN_IMPORT
    assert _file_reader_imports(data) == ["os.system"]
    report = pickle_scan.scan_stream(io.BytesIO(data), len(data))
    assert report.frame_issues == ["the opcode at offset 11 runs past the frame ending at 13"]
    assert [g.dotted for g in report.globals] == ["os.system"]
    assert (report.pickles, report.opcodes, report.problems) == (1, 5, [])


def test_the_second_walk_stays_within_the_limit() -> None:
    first = _hidden_behind(len(HIDDEN_IMPORT))
    data = first + HIDDEN_IMPORT
    # Limited to the first pickle, neither walk reads the import after it.
    report = pickle_scan.scan_stream(io.BytesIO(data), len(first))
    assert report.globals == [] and report.frame_issues
    assert (report.pickles, report.problems) == (1, [])
    # CPython's file reader limited the same way is truncated before any import.
    recorder = _Recorder(NoSeek(first))
    with pytest.raises((pickle.UnpicklingError, EOFError)):
        recorder.load()
    assert recorder.seen == []


def test_the_second_walk_names_findings_and_frame_issues_only_it_sees() -> None:
    # Behind the pickle: EXT1 7, then a 1-byte FRAME whose BININT1 argument runs past it.
    hidden = b"\x82\x07" + b"\x95" + _q(1) + b"K\x07" + b"."
    data = _hidden_behind(len(hidden)) + hidden
    report = pickle_scan.scan_stream(io.BytesIO(data), len(data))
    assert report.findings == [
        {
            "what": "EXT1 extension code 7",
            "detail": "imports a name from the copyreg extension registry, unknown here",
        }
    ]
    assert report.frame_issues == [
        "the opcode at offset 11 runs past the frame ending at 13",
        "the opcode at offset 292 runs past the frame ending at 293",
    ]
    assert (report.globals, report.problems, report.pickles) == ([], [], 1)


def test_pickles_after_one_walked_twice_are_read_from_its_end() -> None:
    # The second walk reads past the first pickle's end; the scan of what follows starts
    # where the first pickle really ends: the import, then an EXT1 pickle.
    ext = b"\x80\x02\x82\x09."
    data = _hidden_behind(len(HIDDEN_IMPORT)) + HIDDEN_IMPORT + ext
    for report in (
        pickle_scan.scan_bytes(data),
        pickle_scan.scan_all(io.BytesIO(data), len(data)),
        pickle_scan.scan_stream(io.BytesIO(data), len(data), max_pickles=5),
    ):
        assert (report.pickles, report.opcodes, report.problems) == (3, 5 + 2 + 3, [])
        assert [g.dotted for g in report.globals] == ["os.system"]
        assert [f["what"] for f in report.findings] == ["EXT1 extension code 9"]


def test_a_stream_that_cannot_rewind_says_so() -> None:
    data = _hidden_behind(len(HIDDEN_IMPORT)) + HIDDEN_IMPORT
    report = pickle_scan.scan_stream(cast(IO[bytes], _NoRewind(data)), len(data))
    assert report.problems == ["frames disagree with opcodes; the stream cannot be re-read"]
    assert report.frame_issues and report.globals == [] and report.pickles == 1


def test_a_stream_that_cannot_tell_is_walked_once() -> None:
    # With no position to come back to, the disagreement is named and the pickle is read
    # once, contiguously.
    data = _hidden_behind(len(HIDDEN_IMPORT)) + HIDDEN_IMPORT
    report = pickle_scan.scan_stream(cast(IO[bytes], NoSeek(data)), len(data))
    assert report.frame_issues == ["the opcode at offset 11 runs past the frame ending at 13"]
    assert (report.pickles, report.opcodes, report.globals) == (1, 5, [])
    assert report.hostile_anywhere()


@pytest.mark.parametrize(
    ("data", "whole"),
    [(b"NNN00.", True), (b"NNN0t.", False), (b"NNN\xff.", False), (b"N" * 9 + b".", False)],
)
def test_scan_one_says_whether_the_pickle_ended_with_stop(data: bytes, whole: bool) -> None:
    report = pickle_scan.PickleReport()
    stream = pickle_scan.BoundedReader(io.BytesIO(data + b"\x80\x02\x82\x01."), 100)
    assert pickle_scan.scan_one(stream, report, max_ops=8) is whole
    assert report.pickles == int(whole) and report.findings == []


def test_scan_one_leaves_the_stream_at_the_pickle_end() -> None:
    first, second = b"\x80\x04" + b"N" * 20 + b".", b"\x80\x02K\x05."
    for raw in (io.BytesIO(first + second), NoSeek(first + second)):
        stream = pickle_scan.BoundedReader(raw, len(first + second))
        report = pickle_scan.PickleReport()
        assert pickle_scan.scan_one(stream, report)
        assert (stream.tell(), stream.left) == (len(first), len(second))
        assert stream.read(len(second)) == second and stream.left == 0
    oracle = io.BytesIO(first + second)
    pickle.load(oracle)
    assert oracle.tell() == len(first)


# ---- scan_stream ---------------------------------------------------------------------------


def test_scan_stream_reads_up_to_its_count_and_stops_at_the_end_or_a_failure() -> None:
    empty = pickle_scan.scan_stream(io.BytesIO(b""), 0)
    assert (empty.pickles, empty.problems) == (0, ["pickle ended without STOP (truncated?)"])
    two = b"\x80\x04N.\x80\x02K\x01."
    exact = pickle_scan.scan_stream(io.BytesIO(two), len(two), max_pickles=5)
    assert (exact.pickles, exact.opcodes, exact.problems) == (2, 6, [])
    assert pickle_scan.scan_stream(io.BytesIO(two), len(two)).pickles == 1
    # Nothing left after the last pickle: no attempt at another.
    one = pickle_scan.scan_stream(io.BytesIO(two[:4]), 4, max_pickles=2)
    assert (one.pickles, one.problems) == (1, [])
    assert pickle_scan.scan_stream(io.BytesIO(two), len(two), max_pickles=2).pickles == 2
    limited = pickle_scan.scan_stream(io.BytesIO(b"NNN00."), 6, max_ops=5)
    assert limited.too_large == "more than 5 opcodes: not scanned to the end"
    # A failure stops the scan: one problem, the pickle after it is not read.
    broken = b"\x80\x04N." + b"\xff" + b"\x80\x02\x82\x01."
    stopped = pickle_scan.scan_stream(io.BytesIO(broken), len(broken), max_pickles=5)
    assert stopped.problems == ["invalid load key 0xff at offset 0"]
    assert (stopped.pickles, stopped.findings) == (1, [])
    # One byte left after a pickle is still read (and is no pickle).
    tail = b"\x80\x04N.0"
    assert pickle_scan.scan_stream(io.BytesIO(tail), len(tail), max_pickles=2).problems == [
        "unpickling stack underflow"
    ]


# ---- the readers ---------------------------------------------------------------------------


def test_bounded_reader_reads_and_lines_within_its_limit() -> None:
    data = b"ab\ncdef\ngh"
    r = pickle_scan.BoundedReader(io.BytesIO(data), 7)
    assert (r.read(0), r.read(2), r.left, r.tell()) == (b"", b"ab", 5, 2)
    assert (r.readline(), r.readline(), r.readline()) == (b"\n", b"cdef", b"")
    assert (r.left, r.tell(), r.read(5), r.read(-1)) == (0, 7, b"", b"")
    r = pickle_scan.BoundedReader(io.BytesIO(data), 100)
    assert (r.readline(0), r.readline(1), r.readline(5), r.read(None)) == (  # type: ignore[arg-type]
        b"",
        b"a",
        b"b\n",
        b"cdef\ngh",
    )
    assert (r.left, r.tell()) == (100 - len(data), len(data))
    assert pickle_scan.BoundedReader(io.BytesIO(data), 6).read() == b"ab\ncde"
    for limit in (0, -5):
        none = pickle_scan.BoundedReader(io.BytesIO(data), limit)
        assert (none.read(), none.readline(), none.skip(3), none.left) == (b"", b"", 0, 0)
    long = b"y" * (MAX_LINE + 10) + b"\n"
    r = pickle_scan.BoundedReader(io.BytesIO(long), len(long))
    assert len(r.readline()) == MAX_LINE and r.tell() == MAX_LINE


@pytest.mark.parametrize("head", [b"", b"ab", b"ab\ncd", b"\n", b"abc\n", b"a\nb\ncd"])
def test_pushed_back_bytes_read_like_one_stream(head: bytes) -> None:
    tail = b"ef\ngh\nij"
    plan: list[tuple[str, int]] = [
        ("read", 0), ("read", 1), ("readline", -1), ("read", 3), ("readline", -1),
        ("read", -1), ("read", 4), ("readline", -1),
    ]  # fmt: skip
    pushed = pickle_scan.Prefixed(head, io.BytesIO(tail))
    oracle = io.BytesIO(head + tail)
    for method, n in plan:
        got = getattr(pushed, method)(n) if method == "read" else pushed.readline()
        want = getattr(oracle, method)(n) if method == "read" else oracle.readline()
        assert (method, n, got) == (method, n, want)
        assert type(got) is bytes
    assert pushed.seekable() is False
    lines = pickle_scan.Prefixed(head, io.BytesIO(tail))
    assert b"".join(iter(lines.readline, b"")) == head + tail
    whole = pickle_scan.Prefixed(head, io.BytesIO(tail))
    assert whole.read(None) == head + tail  # type: ignore[arg-type]
    assert (whole.read(2), whole.readline()) == (b"", b"")
    rest = pickle_scan.Prefixed(head, io.BytesIO(tail))
    assert (rest.read(-1), rest.read(2), rest.readline()) == (head + tail, b"", b"")


def test_a_bounded_line_from_a_stream_behind_pushed_back_bytes() -> None:
    # Once the pushed-back bytes are read, a line read through the bounded reader still
    # stops at its limit.
    pushed = pickle_scan.Prefixed(b"", io.BytesIO(b"abcdef\ngh"))
    reader = pickle_scan.BoundedReader(pushed, 3)
    assert (reader.readline(), reader.left, reader.readline()) == (b"abc", 0, b"")
