"""The pickle scanner opcode by opcode, on hand-assembled programs (SPEC A7, E5): what each
import, call and extension opcode reports, word for word; Python 2 names mapped only below
protocol 3; the memo tracked across reused keys; the exact reason a malformed program is
refused; strings kept up to the size bound and skipped past it. Each program is small enough
that the expected report is read off its bytes."""

from __future__ import annotations

import io
import pickle
import struct

import pytest

from gpudecide.artifacts import pickle_scan

from .streams import NoSeek

SYSTEM_REASON = "deny list: os can run commands or touch files and the network"
EVAL_REASON = "deny list: builtins.eval can evaluate code or reach any object"


def _scan(data: bytes, **kwargs: int) -> pickle_scan.PickleReport:
    return pickle_scan.scan_bytes(data, **kwargs)


def _imports(data: bytes) -> list[tuple[str, str]]:
    return [(g.dotted, g.level) for g in _scan(data).globals]


def test_global_call_reports_the_import_once_with_its_reason() -> None:
    # GLOBAL os.system, MARK, STRING 'x', TUPLE, REDUCE, STOP: 6 opcodes, protocol 0.
    report = _scan(b"cos\nsystem\n(S'x'\ntR.")
    assert report.summary() == {
        "pickles": 1,
        "opcodes": 6,
        "protocol": None,
        "imports": [{"name": "os.system", "level": "dangerous", "reason": SYSTEM_REASON}],
        "dangerous": [f"imports os.system ({SYSTEM_REASON})"],
        "problems": [],
    }
    assert report.findings == [] and report.hostile_anywhere()
    assert report.constants == ["x"] and report.strings == ["x"]
    twice = _scan(b"cos\nsystem\ncos\nsystem\n0(S'x'\ntR.")
    assert [g.dotted for g in twice.globals] == ["os.system"]


@pytest.mark.parametrize(
    ("data", "dotted"),
    [
        (b"c__builtin__\neval\n.", "builtins.eval"),  # protocol 0: mapped
        (b"\x80\x02c__builtin__\neval\n.", "builtins.eval"),  # protocol 2: mapped
        (b"\x80\x03c__builtin__\neval\n.", "__builtin__.eval"),  # protocol 3: as written
        (b"\x80\x02cQueue\nQueue\n.", "queue.Queue"),  # module-only mapping
        (b"\x80\x03cQueue\nQueue\n.", "Queue.Queue"),
        (b"\x80\x02cUserDict\nUserDict\n.", "collections.UserDict"),  # name mapping
    ],
)
def test_python2_names_are_mapped_below_protocol_3_only(data: bytes, dotted: str) -> None:
    assert [g.dotted for g in _scan(data).globals] == [dotted]
    # CPython's own unpickler agrees on the name it would import.
    seen: list[str] = []

    class Recorder(pickle._Unpickler):
        def find_class(self, module: str, name: str) -> object:
            if self.proto < 3 and self.fix_imports:
                import _compat_pickle

                if (module, name) in _compat_pickle.NAME_MAPPING:
                    module, name = _compat_pickle.NAME_MAPPING[(module, name)]
                elif module in _compat_pickle.IMPORT_MAPPING:
                    module = _compat_pickle.IMPORT_MAPPING[module]
            seen.append(f"{module}.{name}")
            return None

    Recorder(io.BytesIO(data)).load()
    assert seen == [dotted]


def test_stack_global_from_strings_and_from_computed_operands() -> None:
    assert _imports(b"\x80\x04\x8c\x02os\x8c\x06system\x93.") == [("os.system", "dangerous")]
    computed = _scan(b"\x80\x04K\x01\x8c\x06system\x93.")
    assert computed.globals == []
    assert computed.findings == [
        {
            "what": "STACK_GLOBAL with computed operands",
            "detail": "the imported name is built at load time, so it cannot be vetted",
        }
    ]
    # The name computed, the module a string: still computed.
    assert _scan(b"\x80\x04\x8c\x02osK\x01\x93.").findings[0]["what"] == (
        "STACK_GLOBAL with computed operands"
    )
    assert not computed.hostile_anywhere()  # a finding alone names no importable import


def test_inst_imports_and_leaves_one_value() -> None:
    report = _scan(b"(S'true'\nios\nsystem\n.")
    assert [(g.dotted, g.level) for g in report.globals] == [("os.system", "dangerous")]
    assert report.pickles == 1 and report.problems == []
    # INST replaces its mark and the items above it by one value: POP takes that value and
    # STOP finds nothing.
    assert _scan(b"(S'true'\nios\nsystem\n0.").problems == ["unpickling stack underflow"]


@pytest.mark.parametrize(
    ("data", "what"),
    [
        (b"\x80\x02\x82\x07.", "EXT1 extension code 7"),
        (b"\x80\x02\x83\x07\x01.", "EXT2 extension code 263"),
        (b"\x80\x02\x84\x07\x01\x00\x01.", "EXT4 extension code 16777479"),
    ],
)
def test_extension_codes_are_findings(data: bytes, what: str) -> None:
    report = _scan(data)
    assert report.findings == [
        {
            "what": what,
            "detail": "imports a name from the copyreg extension registry, unknown here",
        }
    ]
    assert report.denied == [
        f"{what}: imports a name from the copyreg extension registry, unknown here"
    ]
    assert report.problems == [] and report.pickles == 1


@pytest.mark.parametrize(
    ("data", "opcode"),
    [
        (b"\x80\x02K\x01)R.", "REDUCE"),
        (b"\x80\x02K\x01)\x81.", "NEWOBJ"),
        (b"\x80\x04K\x01)}\x92.", "NEWOBJ_EX"),
        (b"(K\x01o.", "OBJ"),
    ],
)
def test_calls_of_computed_callables_name_their_opcode(data: bytes, opcode: str) -> None:
    report = _scan(data)
    assert report.findings == [
        {
            "what": f"{opcode} of a computed callable",
            "detail": "calls something that is not a plain import (a getattr/attribute chain)",
        }
    ]
    assert report.problems == [] and report.pickles == 1


@pytest.mark.parametrize(
    "data",
    [
        b"\x80\x02cos\nsystem\n)R.",
        b"\x80\x02cos\nsystem\n)\x81.",
        b"\x80\x04cos\nsystem\n)}\x92.",
        b"(cos\nsystem\no.",
    ],
)
def test_calls_of_imports_are_no_extra_finding(data: bytes) -> None:
    report = _scan(data)
    assert report.findings == [] and report.problems == []
    assert [g.dotted for g in report.globals] == ["os.system"]


def test_protocol_is_the_first_one_and_at_most_5() -> None:
    two = _scan(b"\x80\x02N.\x80\x04N.")
    assert (two.protocol, two.pickles, two.problems) == (2, 2, [])
    assert _scan(b"\x80\x05N.").protocol == 5
    assert _scan(b"\x80\x06N.").problems == ["unsupported pickle protocol: 6"]


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"\xff", "invalid load key 0xff at offset 0"),
        (b"NN\xfe", "invalid load key 0xfe at offset 2"),
        (b"N", "pickle ended without STOP (truncated?)"),
        (b"0.", "unpickling stack underflow"),
        (b"2.", "unpickling stack underflow"),
        (b"(2.", "unpickling stack underflow"),
        (b".", "unpickling stack underflow"),
        (b"(.", "unpickling stack underflow"),
        (b")\x81.", "unpickling stack underflow"),
        (b"(o.", "OBJ without a class"),
        (b"NNs.", "unpickling stack underflow"),  # SETITEM takes key and value
        # ...and the target they change, on the short-pickle path too (it took 2 / 1 / 1).
        (b"NNsN.", "unpickling stack underflow"),
        (b"NaN.", "unpickling stack underflow"),
        (b"NbN.", "unpickling stack underflow"),
        (b"(NNsN.", "unpickling stack underflow"),  # the target must be above the mark
        (b"N(NbN.", "unpickling stack underflow"),
        (b"Q.", "unpickling stack underflow"),  # BINPERSID takes the id
        (b"Na.", "unpickling stack underflow"),
        (b"(a.", "unpickling stack underflow"),
        (b"(e.", "unpickling stack underflow"),
        (b"Nt.", "could not find MARK"),
        (b"t.", "could not find MARK"),
        (b"Iabc\n.", "a text opcode's number is not a number"),
        (b"Fx\n.", "a text opcode's number is not a number"),
        (b"Sab\n.", "the STRING opcode argument must be quoted"),
        (b"S'\n.", "the STRING opcode argument must be quoted"),
        (b"S'ab\"\n.", "the STRING opcode argument must be quoted"),
        (b"X\x05\x00\x00\x00ab.", "pickle data was truncated"),
        (b"Xab'\n.", "pickle data was truncated (a length runs past the end)"),
        (b"X\x02\x00\x00\x00\xff\xfe.", "invalid UTF-8 in a string: invalid start byte"),
        (b"T\xff\xff\xff\xff.", "negative length"),
        (b"\x80\x02h\x05.", "memo key 5 used before it was stored"),
        (b"\x80\x02j\x06\x00\x00\x00.", "memo key 6 used before it was stored"),
        (b"g7\n.", "memo key 7 used before it was stored"),
        (b"gx\n.", "a text opcode's number is not a number"),
        (b"q\x00.", "memo store with an empty stack"),
        (b"(p0\n.", "memo store with an empty stack"),
        (b"c\xff\nx\n.", "a GLOBAL name is not UTF-8"),
        (b"\x80\x04\x8e" + (2**62).to_bytes(8, "little") + b"x",
         "pickle data was truncated (a length runs past the end)"),
    ],
)  # fmt: skip
def test_malformed_programs_are_refused_for_their_reason(data: bytes, problem: str) -> None:
    report = _scan(data)
    assert report.problems == [problem]
    assert report.pickles == 0
    # CPython refuses every one of them too.
    with pytest.raises(Exception):  # noqa: B017 - any refusal; the scanner's text is above
        pickle.loads(data)


@pytest.mark.parametrize(
    ("data", "constants"),
    [
        (b"I42\n.", [42]),
        (b"I01\n.", [1]),
        (b"L12L\n.", [12]),
        (b"L12\n.", [12]),
        (b"F2.5\n.", [2.5]),
        (b"S'ab'\n.", ["ab"]),
        (b'S"ab"\n.', ["ab"]),
        (b"S'a\\nb'\n.", ["a\nb"]),
        (b"Vcaf\\u00e9\n.", ["caf\u00e9"]),
        (b"S''\n.", [""]),
        (b"X\x03\x00\x00\x00\xed\xa0\x80.", ["\ud800"]),  # a lone surrogate, as CPython reads it
        (b"U\x02\xe9a.", ["\u00e9a"]),
        (b"T\x02\x00\x00\x00\xe9a.", ["\u00e9a"]),
        (b"X\x03\x00\x00\x00\xe2\x82\xac.", ["\u20ac"]),
        (b"\x80\x04\x8d\x02\x00\x00\x00\x00\x00\x00\x00ab.", ["ab"]),
        (b"\x80\x02\x8a\x02\xff\x00.", [255]),
        (b"\x80\x02\x8a\x01\xff.", [-1]),
        (b"\x80\x02\x8a\x00.", [0]),
        (b"\x80\x02\x8b\x02\x00\x00\x00\x00\x01.", [256]),
        (b"K\xff.", [255]),
        (b"M\x01\x02.", [513]),
        (b"J\xff\xff\xff\xff.", [-1]),
        (b"G?\xf8\x00\x00\x00\x00\x00\x00.", [1.5]),
        (b"Pid\n.", []),
        (b"C\x02ab.", []),
    ],
)
def test_constants_read_from_each_opcode(data: bytes, constants: list[object]) -> None:
    report = _scan(data)
    assert report.problems == [] and report.pickles == 1
    assert report.constants == constants
    assert [type(c) for c in report.constants] == [type(c) for c in constants]  # 42, not 42.0
    if constants:
        assert pickle.loads(data, encoding="latin-1") == constants[0]


def test_strings_are_kept_up_to_the_bound_and_skipped_past_it() -> None:
    n = pickle_scan.MAX_STRING

    def program(size: int) -> bytes:
        return b"X" + struct.pack("<I", size) + b"a" * size + b"."

    at = _scan(program(n))
    assert at.constants == ["a" * n] and at.problems == []
    over = _scan(program(n + 1))
    assert over.constants == [] and over.problems == [] and over.pickles == 1


def test_memo_keys_reused_keep_the_last_value_and_count_once() -> None:
    # BINPUT 0 with an opaque value, then BINPUT 0 with 'os': key 0 holds 'os' and the memo
    # has one key, so MEMOIZE stores 'system' at key 1.
    program = (
        b"\x80\x04Nq\x000\x8c\x02osq\x000\x8c\x06system\x940h\x00h\x01\x93."
    )  # fmt: skip
    assert _imports(program) == [("os.system", "dangerous")]
    # The other way round: 'os' overwritten by an opaque value is no longer a string.
    back = _scan(b"\x80\x04\x8c\x02osq\x000Nq\x000\x8c\x06systemq\x010h\x00h\x01\x93.")
    assert back.globals == []
    assert back.findings[0]["what"] == "STACK_GLOBAL with computed operands"


def test_memo_by_long_and_text_keys() -> None:
    # LONG_BINPUT 5 and 256, LONG_BINGET them back; PUT/GET 12 and 13 as text lines.
    long_keys = (
        b"\x80\x04\x8c\x02osr\x05\x00\x00\x000\x8c\x06systemr\x00\x01\x00\x000"
        b"j\x05\x00\x00\x00j\x00\x01\x00\x00\x93."
    )
    assert _imports(long_keys) == [("os.system", "dangerous")]
    text_keys = b"\x80\x04S'os'\np12\n0S'system'\np13\n0g12\ng13\n\x93."
    assert _imports(text_keys) == [("os.system", "dangerous")]


def test_pickles_after_the_first_are_scanned_up_to_the_limit() -> None:
    one = b"\x80\x04\x8c\x02os\x8c\x06system\x93."
    plain = b"\x80\x04N."
    both = _scan(plain + one)
    assert (both.pickles, [g.dotted for g in both.globals]) == (2, ["os.system"])
    capped = _scan(plain + plain + one, max_pickles=2)
    assert (capped.pickles, capped.globals, capped.problems) == (2, [], [])
    assert _scan(plain + plain + one, max_pickles=3).pickles == 3
    trailing = _scan(plain + b"cos\nsystem\n")
    assert trailing.problems == ["bytes after the first pickle are not a complete pickle"]
    assert [g.dotted for g in trailing.globals] == ["os.system"] and trailing.pickles == 1
    # A first pickle that is not whole stops the scan there.
    broken = _scan(b"\xff" + one)
    assert broken.pickles == 0 and broken.globals == []


def test_frame_claiming_more_than_the_stream_is_a_problem_and_scanned_on() -> None:
    data = b"\x80\x04\x95" + struct.pack("<Q", 100) + b"\x8c\x02os\x8c\x06system\x93."
    report = _scan(data)
    assert report.problems == ["FRAME at offset 2 claims 100 bytes past the end"]
    assert [g.dotted for g in report.globals] == ["os.system"]
    body = b"\x8c\x02os\x8c\x06system\x93."  # 14 bytes
    exact = b"\x80\x04\x95" + struct.pack("<Q", 14) + body
    assert _scan(exact).problems == [] and _scan(exact).frame_issues == []
    one_more = b"\x80\x04\x95" + struct.pack("<Q", 15) + body
    assert _scan(one_more).problems == ["FRAME at offset 2 claims 15 bytes past the end"]
    # A length with its top bit set is a huge unsigned count, not a negative one.
    top = b"\x80\x04\x95" + struct.pack("<Q", 2**63) + body
    assert _scan(top).problems == [
        "FRAME at offset 2 claims 9223372036854775808 bytes past the end"
    ]


def test_opcode_limit_is_inclusive() -> None:
    data = b"NNN00."  # NONE x3, POP x2, STOP: 6 opcodes
    assert _scan(data, max_ops=6).too_large is None and _scan(data, max_ops=6).pickles == 1
    over = _scan(data, max_ops=5)
    assert over.too_large == "more than 5 opcodes: not scanned to the end"
    assert over.summary()["too_large"] == over.too_large


def test_report_levels_and_merge() -> None:
    safe = pickle_scan.GlobalRef("collections", "OrderedDict", "safe")
    lib = pickle_scan.GlobalRef("numpy.core.multiarray", "_reconstruct", "library", "r1")
    untrusted = pickle_scan.GlobalRef("mypkg", "Load", "untrusted", "r2")
    bad = pickle_scan.GlobalRef("os", "system", "dangerous", "r3")
    odd = pickle_scan.GlobalRef("os", "not an identifier", "dangerous", "r4")
    a = pickle_scan.PickleReport(protocol=None, pickles=1, opcodes=3)
    for g in (safe, lib, untrusted):
        a.add_global(g)
    assert (a.denied, a.untrusted, a.library) == (
        [],
        ["imports mypkg.Load (r2)"],
        ["numpy.core.multiarray._reconstruct"],
    )
    assert not a.hostile_anywhere()
    b = pickle_scan.PickleReport(protocol=4, pickles=2, opcodes=5, constants=["k", 1])
    b.add_global(odd)
    assert b.denied == ["imports os.not an identifier (r4)"] and not b.hostile_anywhere()
    b.add_global(bad)
    b.add_global(safe)
    b.add_finding("w", "d")
    b.add_problem("p")
    b.add_frame_issue("f")
    a.merge(b)
    assert [g.dotted for g in a.globals] == [
        "collections.OrderedDict",
        "numpy.core.multiarray._reconstruct",
        "mypkg.Load",
        "os.not an identifier",
        "os.system",
    ]
    assert (a.pickles, a.opcodes, a.protocol, a.constants) == (3, 8, 4, ["k", 1])
    assert a.findings == [{"what": "w", "detail": "d"}]
    assert (a.problems, a.frame_issues) == (["p"], ["f"])
    assert a.dangerous == [
        "imports os.not an identifier (r4)",
        "imports os.system (r3)",
        "w: d",
        "imports mypkg.Load (r2)",
    ]
    assert a.hostile_anywhere()
    only_frames = pickle_scan.PickleReport(frame_issues=["x"])
    assert only_frames.hostile_anywhere()
    s = a.summary()
    assert s["frame_issues"] == ["f"] and "too_large" not in s
    assert s["imports"][0] == {"name": "collections.OrderedDict", "level": "safe"}
    assert s["imports"][1] == {
        "name": "numpy.core.multiarray._reconstruct",
        "level": "library",
        "reason": "r1",
    }
    assert "frame_issues" not in pickle_scan.PickleReport().summary()


def test_value_after_a_key() -> None:
    r = pickle_scan.PickleReport(constants=["a", 1, "step", 7, 3, "last"])
    assert r.value_after("step") == 7 and r.value_after("a") == 1
    assert r.value_after("last") is None and r.value_after("missing") is None
    assert pickle_scan.PickleReport(constants=[7, 8]).value_after("7") is None


def test_a_frame_ending_inside_a_string_is_read_on_contiguously() -> None:
    # The frame (offsets 11-18) ends two bytes into 'system': pickle.loads reads the string on
    # and imports os.system; the file reader that drops the frame's rest reads 'stem...'.
    data = b"\x80\x04\x95" + struct.pack("<Q", 8) + b"\x8c\x02os\x8c\x06sy" + b"stem\x93."
    report = _scan(data)
    assert [g.dotted for g in report.globals] == ["os.system"]
    assert report.frame_issues == ["the opcode at offset 15 runs past the frame ending at 19"]
    assert (report.pickles, report.problems) == (1, [])


def test_a_length_crossing_the_frame_end_is_one_issue() -> None:
    # BINBYTES at offset 11: its 4-byte length straddles the frame's end at 14; the 2-byte
    # payload after it lies outside any frame, so it is no second issue.
    data = b"\x80\x04\x95" + struct.pack("<Q", 3) + b"B\x02\x00" + b"\x00\x00ab."
    report = _scan(data)
    assert report.frame_issues == ["the opcode at offset 11 runs past the frame ending at 14"]
    assert (report.pickles, report.opcodes, report.problems) == (1, 4, [])


def test_a_frame_opened_where_the_previous_one_ends_is_fine() -> None:
    # The outer frame (10 bytes) ends exactly after the inner FRAME's length field.
    data = b"\x80\x04\x95" + struct.pack("<Q", 10) + b"N\x95" + struct.pack("<Q", 1) + b"."
    report = _scan(data)
    assert (report.frame_issues, report.problems, report.pickles) == ([], [], 1)
    assert pickle.loads(data) is None
    # Two bytes later: the inner frame begins 2 bytes before the outer one ends.
    inside = b"\x80\x04\x95" + struct.pack("<Q", 12) + b"N\x95" + struct.pack("<Q", 2) + b"N."
    assert _scan(inside).frame_issues == [
        "FRAME at offset 12 begins 2 byte(s) before the frame it is in ends"
    ]


def test_dup_copies_the_top_value() -> None:
    # 'os', DUP, STACK_GLOBAL: module and name are both the string 'os'.
    assert _imports(b"\x80\x04\x8c\x02os2\x93.") == [("os.os", "dangerous")]


def test_appends_need_a_target_and_pop_mark_does_not() -> None:
    assert _scan(b"(eN.").problems == ["unpickling stack underflow"]
    assert _scan(b"(uN.").problems == ["unpickling stack underflow"]
    pop_mark = _scan(b"(1N.")
    assert (pop_mark.problems, pop_mark.pickles) == ([], 1)


def test_a_long_past_the_string_bound_is_skipped_as_zero() -> None:
    n = pickle_scan.MAX_STRING + 1
    data = b"\x80\x02\x8b" + struct.pack("<i", n) + b"\x01" * n + b"."
    report = _scan(data)
    assert (report.problems, report.pickles, report.constants) == ([], 1, [0])


def test_text_string_decode_errors_are_named() -> None:
    assert _scan(b"S'\\x'\n.").problems == [
        "a text string does not decode: invalid \\x escape at position 0"
    ]
    assert _scan(b"V\\u12\n.").problems == [
        "a text string does not decode: 'rawunicodeescape' codec can't decode bytes in "
        "position 0-3: truncated \\uXXXX es"
    ]


def test_memo_bitmap_keeps_each_key_apart() -> None:
    # Opaque values memoised at keys 0 and 1; key 0 then overwritten by 'os'. Key 1 is still
    # an opaque value, key 3 was never stored.
    head = b"\x80\x04N\x940N\x940\x8c\x02osq\x000"
    assert _scan(head + b"h\x01.").problems == []
    assert _scan(head + b"h\x03.").problems == ["memo key 3 used before it was stored"]
    assert _scan(b"\x80\x04N\x940h\x03.").problems == ["memo key 3 used before it was stored"]
    # Keys count once: 'x' goes to key 2 and 'system' to key 3 after the overwrite.
    program = head + b"\x8c\x01x\x940\x8c\x06system\x940h\x00h\x03\x93."
    assert _imports(program) == [("os.system", "dangerous")]


def test_long_memo_keys_are_unsigned() -> None:
    # LONG_BINPUT / LONG_BINGET with key 2**31: one key, not a negative one.
    data = b"\x80\x04\x8c\x02osr\x00\x00\x00\x800j\x00\x00\x00\x80\x8c\x06system\x93."
    assert _imports(data) == [("os.system", "dangerous")]
    opaque = b"\x80\x04Nr\x00\x00\x00\x800j\x00\x00\x00\x80."
    assert (_scan(opaque).problems, _scan(opaque).pickles) == ([], 1)


def test_following_pickles_carry_their_findings_issues_and_limits() -> None:
    plain = b"\x80\x04N."
    ext = _scan(plain + b"\x80\x02\x82\x07.")
    assert ext.findings == [
        {
            "what": "EXT1 extension code 7",
            "detail": "imports a name from the copyreg extension registry, unknown here",
        }
    ]
    framed = b"\x80\x04\x95" + struct.pack("<Q", 12) + b"N\x95" + struct.pack("<Q", 2) + b"N."
    after = _scan(plain + framed)
    # Offsets count from the start of the pickle the issue is in.
    assert after.frame_issues == [
        "FRAME at offset 12 begins 2 byte(s) before the frame it is in ends"
    ]
    assert (after.pickles, after.opcodes) == (2, 3 + 6)
    assert _scan(plain + plain + plain).opcodes == 9
    # The opcode limit holds for the pickles that follow too.
    limited = _scan(plain + b"NNNNN0000.", max_ops=6)
    assert limited.too_large == "more than 6 opcodes: not scanned to the end"
    assert (limited.pickles, limited.problems) == (1, [])
    # One byte after the first pickle is still looked at.
    assert _scan(plain + b".").problems == [
        "bytes after the first pickle are not a complete pickle"
    ]


def test_scan_all_reads_64_pickles_by_default() -> None:
    many = b"\x80\x04N." * 65
    assert pickle_scan.scan_all(io.BytesIO(many), len(many)).pickles == 64
    assert pickle_scan.scan_bytes(many).pickles == 64


def test_report_bounds_and_duplicates() -> None:
    r = pickle_scan.PickleReport()
    r.add_finding("w", "d")
    r.add_finding("w", "d")
    r.add_frame_issue("f")
    r.add_frame_issue("f")
    assert (r.findings, r.frame_issues) == ([{"what": "w", "detail": "d"}], ["f"])
    for i in range(30):
        r.add_finding(f"w{i}", "d")
        r.add_problem(f"p{i}")
        r.add_frame_issue(f"f{i}")
    assert len(r.findings) == len(r.problems) == len(r.frame_issues) == pickle_scan.MAX_PROBLEMS
    assert r.problems[-1] == "p19" and r.frame_issues[-1] == "f18"


def test_merge_keeps_constants_within_the_bound_and_the_first_limit_hit() -> None:
    full = pickle_scan.PickleReport(constants=[0] * (pickle_scan.MAX_CONSTANTS - 1))
    full.merge(pickle_scan.PickleReport(constants=[1, 2], too_large="stopped"))
    assert len(full.constants) == pickle_scan.MAX_CONSTANTS and full.constants[-1] == 1
    assert full.too_large == "stopped"
    full.merge(pickle_scan.PickleReport(constants=[3], too_large="later"))
    assert len(full.constants) == pickle_scan.MAX_CONSTANTS and full.too_large == "stopped"


def test_a_frame_inside_a_frame_read_the_way_a_file_reader_reads_it() -> None:
    # The inner FRAME (offset 12) begins 2 bytes before the outer frame ends. Longer than
    # those 2 bytes, the file reader drops them and reads the inner frame from the outer
    # one's end: "N0." there, a whole pickle both ways.
    longer = b"\x80\x04\x95" + struct.pack("<Q", 12) + b"N\x95" + struct.pack("<Q", 3)
    report = _scan(longer + b"N0" + b"N0.")
    assert (report.pickles, report.problems) == (1, [])
    assert report.frame_issues == [
        "FRAME at offset 12 begins 2 byte(s) before the frame it is in ends"
    ]
    # Exactly those 2 bytes long, the inner frame is served from the outer one's buffer:
    # both readers read SHORT_BINUNICODE and then 13 bytes that are no UTF-8, so neither
    # imports the os.system those bytes would spell as opcodes.
    hidden = b"\x8c\x02os\x8c\x06system\x93"
    exact = b"\x80\x04\x95" + struct.pack("<Q", 12) + b"N\x95" + struct.pack("<Q", 2)
    report = _scan(exact + b"\x8c" + bytes([len(hidden)]) + hidden + b".")
    assert report.globals == [] and report.pickles == 0
    assert report.problems == ["invalid UTF-8 in a string: invalid start byte"]


def test_pickles_one_after_another_on_a_stream_that_cannot_rewind() -> None:
    # The bytes read ahead past each STOP are handed back in front of the stream; the second
    # pickle is protocol 0, read line by line from those bytes.
    plain = b"\x80\x04N."
    data = plain + b"cos\nsystem\n." + plain
    for report in (
        pickle_scan.scan_stream(NoSeek(data), len(data), max_pickles=3),
        pickle_scan.scan_all(NoSeek(data), len(data)),
        pickle_scan.scan_bytes(data),
    ):
        assert (report.pickles, report.opcodes, report.problems) == (3, 3 + 2 + 3, [])
        assert [g.dotted for g in report.globals] == ["os.system"]
    first = pickle_scan.scan_stream(NoSeek(data), len(data))
    assert (first.pickles, first.globals) == (1, [])


def test_payloads_larger_than_the_read_window_are_skipped() -> None:
    n = 3 * pickle_scan.CHUNK
    big = b"\x80\x04\x8e" + struct.pack("<Q", n) + b"x" * n + b"."
    for report in (pickle_scan.scan_bytes(big), pickle_scan.scan_stream(NoSeek(big), len(big))):
        assert (report.pickles, report.opcodes, report.problems) == (1, 3, [])
    cut = big[: -pickle_scan.CHUNK]
    assert pickle_scan.scan_bytes(cut).problems == [
        "pickle data was truncated (a length runs past the end)"
    ]
    assert pickle_scan.scan_stream(NoSeek(cut), len(cut)).problems == [
        "pickle data was truncated (a length runs past the end)"
    ]


@pytest.mark.parametrize("seekable", [True, False])
def test_bounded_reader_skips_within_its_limit(seekable: bool) -> None:
    chunk = pickle_scan.CHUNK
    data = b"x" * (3 * chunk)
    raw = io.BytesIO(data) if seekable else NoSeek(data)
    reader = pickle_scan.BoundedReader(raw, 3 * chunk - 5)
    assert reader.skip(2 * chunk) == 2 * chunk
    assert (reader.left, reader.tell()) == (chunk - 5, 2 * chunk)
    assert reader.skip(chunk) == chunk - 5  # clamped to the limit
    assert (reader.left, reader.tell(), reader.read(1)) == (0, 3 * chunk - 5, b"")
    short = pickle_scan.BoundedReader(NoSeek(b"x" * 10), 100)
    assert (short.skip(50), short.left, short.tell()) == (10, 90, 10)


def test_a_payload_crossing_the_frame_end_is_named_and_one_ending_on_it_is_not() -> None:
    # BINBYTES at offset 11 with a 2-byte payload; the frame ends after its first byte (17)
    # or exactly after it (18). The pure-Python unpickler refuses the first.
    head = b"\x80\x04\x95"
    crossing = _scan(head + struct.pack("<Q", 6) + b"B\x02\x00\x00\x00a" + b"b.")
    assert crossing.frame_issues == [
        "the payload of the opcode at offset 11 runs past the frame ending at 17"
    ]
    assert (crossing.pickles, crossing.problems) == (1, [])
    ending = _scan(head + struct.pack("<Q", 7) + b"B\x02\x00\x00\x00ab" + b".")
    assert (ending.frame_issues, ending.pickles) == ([], 1)


def test_frames_past_the_first_read_window() -> None:
    # A 2 MiB payload first, so the frame lies in a later read window: its end is still
    # where the frame says, and 'system' straddling it is still named.
    n = 2 * pickle_scan.CHUNK
    payload = b"\x80\x04\x8e" + struct.pack("<Q", n) + b"x" * n + b"0N"
    framed = b"\x95" + struct.pack("<Q", 8) + b"\x8c\x02os\x8c\x06sy" + b"stem\x93."
    report = _scan(payload + framed + b"\x80\x04N." * 3)
    assert report.frame_issues == [
        f"the opcode at offset {n + 26} runs past the frame ending at {n + 30}"
    ]
    assert [g.dotted for g in report.globals] == ["os.system"] and report.pickles == 4
    # A frame longer than one read window is read window by window.
    k = pickle_scan.CHUNK + 100
    long_frame = b"\x80\x04\x95" + struct.pack("<Q", k + 1) + b"N" * k + b"."
    report = _scan(long_frame)
    assert (report.pickles, report.opcodes, report.problems, report.frame_issues) == (
        1,
        k + 3,
        [],
        [],
    )


def test_pickles_after_a_large_one_on_a_stream_that_cannot_rewind() -> None:
    # The bytes read ahead after the first pickle are less than what follows: the rest comes
    # from the stream behind them, by reads and by text lines.
    n = 2 * pickle_scan.CHUNK
    big = b"\x80\x04\x8e" + struct.pack("<Q", n) + b"x" * n + b"."
    data = b"\x80\x04N." + big + b"cos\nsystem\n." + b"\x80\x04N."
    report = pickle_scan.scan_all(NoSeek(data), len(data))
    assert (report.pickles, report.opcodes, report.problems) == (4, 3 + 3 + 2 + 3, [])
    assert [g.dotted for g in report.globals] == ["os.system"]
    assert report.summary() == pickle_scan.scan_bytes(data).summary()


def test_constants_of_a_real_pickle_read_on_the_fast_path() -> None:
    # Long enough that the frequent opcodes are decoded inline (BININT1/2/4, BINFLOAT,
    # SHORT_BINUNICODE, MEMOIZE): every constant comes back in order, with its type.
    values = [255, 513, -2, 70000, 1.5, "caf\u00e9", "\ud800", "xxx", True, None, 2**40]
    report = _scan(pickle.dumps(values, protocol=4))
    expected = [255, 513, -2, 70000, 1.5, "caf\u00e9", "\ud800", "xxx", 2**40]
    assert report.constants == expected and report.problems == []
    assert [type(c) for c in report.constants] == [type(c) for c in expected]
    # MEMOIZE right after MARK, with more opcodes behind it: refused on the fast path too.
    marked = b"\x80\x04(\x94" + b"N" * 10 + b"."
    assert _scan(marked).problems == ["memo store with an empty stack"]
    with pytest.raises(pickle.UnpicklingError):
        pickle.loads(marked)
