"""safetensors headers: every bound of the format, on files the safetensors library wrote and
on corrupted copies of them; fuzzing never gets a crash, only findings (SPEC A7, E5)."""

from __future__ import annotations

import json
import struct

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from gpudecide.artifacts import safetensors_header as sth

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A file written by the safetensors library: bf16 weights, an f32 norm, an i64 buffer."""
    import torch
    from safetensors.torch import save_file

    path = tmp_path_factory.mktemp("st") / "model.safetensors"
    save_file(
        {
            "embed.weight": torch.zeros((64, 32), dtype=torch.bfloat16),
            "norm.weight": torch.ones(32, dtype=torch.float32),
            "positions": torch.arange(16, dtype=torch.int64),
            "scalar": torch.tensor(1.5, dtype=torch.float16),
        },
        str(path),
        metadata={"format": "pt", "step": "3"},
    )
    return path.read_bytes()


def _split(data: bytes) -> tuple[dict[str, object], bytes]:
    (n,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8 : 8 + n]), data[8 + n :]


def _join(header: dict[str, object] | str, body: bytes) -> bytes:
    raw = header if isinstance(header, str) else json.dumps(header)
    blob = raw.encode()
    return struct.pack("<Q", len(blob)) + blob + body


def test_real_file_parses_with_precision(real: bytes) -> None:
    info = sth.inspect_bytes(real)
    assert info.ok, info.problems
    assert {t.name: t.dtype for t in info.tensors} == {
        "embed.weight": "BF16",
        "norm.weight": "F32",
        "positions": "I64",
        "scalar": "F16",
    }
    assert info.metadata == {"format": "pt", "step": "3"}
    assert info.bytes_by_dtype() == {"BF16": 64 * 32 * 2, "F32": 128, "I64": 128, "F16": 2}
    assert info.precision == "bf16"


def test_header_length_beyond_the_bound(real: bytes) -> None:
    bad = struct.pack("<Q", 100_000_001) + real[8:]
    assert "exceeds the format's bound" in sth.inspect_bytes(bad).problems[0]
    huge = struct.pack("<Q", 2**64 - 1) + real[8:]
    assert "exceeds" in sth.inspect_bytes(huge).problems[0]


def test_header_past_end_of_file(real: bytes) -> None:
    bad = struct.pack("<Q", len(real)) + real[8:]
    assert "runs past the end of the file" in sth.inspect_bytes(bad).problems[0]
    assert "shorter than the 8-byte" in sth.inspect_bytes(b"\x01\x02").problems[0]


def test_overlapping_offsets(real: bytes) -> None:
    header, body = _split(real)
    entry = header["norm.weight"]
    assert isinstance(entry, dict)
    begin, end = entry["data_offsets"]
    entry["data_offsets"] = [begin - 4, end - 4]
    problems = sth.inspect_bytes(_join(header, body)).problems
    assert any("overlap" in p for p in problems)
    assert any("belong to no tensor" in p for p in problems)


def test_truncated_data(real: bytes) -> None:
    problems = sth.inspect_bytes(real[:-10]).problems
    assert any("truncated" in p for p in problems)


def test_duplicate_keys(real: bytes) -> None:
    header, body = _split(real)
    raw = json.dumps(header)
    dup = raw[:-1] + ', "scalar": ' + json.dumps(header["scalar"]) + "}"
    problems = sth.inspect_bytes(_join(dup, body)).problems
    assert problems == ["duplicate key 'scalar' in the header"]


def test_unknown_dtype_and_wrong_size(real: bytes) -> None:
    header, body = _split(real)
    assert isinstance(header["positions"], dict) and isinstance(header["scalar"], dict)
    header["positions"]["dtype"] = "I128"
    header["scalar"]["shape"] = [3]
    problems = sth.inspect_bytes(_join(header, body)).problems
    assert any("unknown dtype 'I128'" in p for p in problems)
    assert any("shape [3] x F16 is 6 bytes but data_offsets span 2" in p for p in problems)


def test_metadata_must_map_strings(real: bytes) -> None:
    header, body = _split(real)
    header["__metadata__"] = {"step": 3}
    problems = sth.inspect_bytes(_join(header, body)).problems
    assert problems == ["__metadata__ must map strings to strings"]


def test_not_json_and_not_an_object(real: bytes) -> None:
    _, body = _split(real)
    assert "does not start with '{'" in sth.inspect_bytes(_join("[1, 2]", body)).problems[0]
    assert "not valid JSON" in sth.inspect_bytes(_join("{nope", body)).problems[0]


def test_trailing_bytes(real: bytes) -> None:
    problems = sth.inspect_bytes(real + b"\x00" * 7).problems
    assert problems == ["7 bytes at the end of the file belong to no tensor"]


def test_header_length_at_the_bound_is_not_refused_for_its_size(real: bytes) -> None:
    # Boundary of the format's limit: N = 100,000,000 is allowed (only N > bound is refused),
    # so this file fails only because the header runs past its end.
    at = sth.inspect_bytes(struct.pack("<Q", sth.MAX_HEADER) + real[8:]).problems
    assert len(at) == 1 and "runs past the end of the file" in at[0]
    over = sth.inspect_bytes(struct.pack("<Q", sth.MAX_HEADER + 1) + real[8:]).problems
    assert len(over) == 1 and "exceeds the format's bound" in over[0]


def test_eight_bytes_is_long_enough_to_read_the_length() -> None:
    # Boundary of "shorter than 8 bytes": 7 bytes is too short, 8 bytes is read (and then
    # the declared header is missing).
    assert "shorter than the 8-byte" in sth.inspect_bytes(b"\x00" * 7).problems[0]
    eight = sth.inspect_bytes(struct.pack("<Q", 2)).problems
    assert eight and "shorter than the 8-byte" not in eight[0]


def _reference_accepts(data: bytes) -> bool:
    """The reference implementation (safetensors' Rust parser) as the independent oracle."""
    from safetensors import _safetensors_rust as reference

    try:
        reference.deserialize(data)
    except Exception:  # any refusal of the reference parser
        return False
    return True


NAMES = st.text(alphabet="abcdefghij._", min_size=1, max_size=6)
CORRUPTIONS = (
    "none",
    "offset",
    "dtype",
    "shape",
    "truncate",
    "append",
    "length",
    "metadata",
    "order",
)


@st.composite
def safetensors_files(draw: st.DrawFn) -> tuple[bytes, str, int]:
    """A file with 1-5 tensors laid out as the format requires, then at most one corruption
    of a known kind. Returns (bytes, corruption, tensors)."""
    names = draw(st.lists(NAMES, min_size=1, max_size=5, unique=True))
    header: dict[str, object] = {}
    pos = 0
    for name in names:
        dtype = draw(st.sampled_from(sorted(sth.DTYPE_BITS)))
        shape = draw(st.lists(st.integers(0, 4), max_size=3))
        numel = 1
        for d in shape:
            numel *= d
        bits = numel * sth.DTYPE_BITS[dtype]
        if bits % 8:  # sub-byte dtypes need whole bytes: pad the shape to a multiple of 8
            shape = [*shape, 8]
            bits *= 8
        size = bits // 8
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [pos, pos + size]}
        pos += size
    if draw(st.booleans()):
        header["__metadata__"] = {"format": "pt"}
    body = bytes(pos)
    kind = draw(st.sampled_from(CORRUPTIONS))
    victim = header[draw(st.sampled_from(names))]
    assert isinstance(victim, dict)
    tail = b""
    length_delta = 0
    if kind == "offset":
        begin, end = victim["data_offsets"]
        victim["data_offsets"] = [begin, end + draw(st.sampled_from([-1, 1, 3]))]
    elif kind == "dtype":
        victim["dtype"] = draw(st.sampled_from(["X8", "f32", "F12"]))
    elif kind == "shape":
        victim["shape"] = [*victim["shape"], 3]  # type: ignore[list-item]
    elif kind == "truncate":
        if pos == 0:
            kind = "none"
        else:
            body = body[: -draw(st.integers(1, pos))]
    elif kind == "append":
        tail = bytes(draw(st.integers(1, 9)))
    elif kind == "length":
        length_delta = draw(st.sampled_from([-3, -1, 1, 2]))
    elif kind == "metadata":
        header["__metadata__"] = {"step": draw(st.integers(0, 9))}
    elif kind == "order":
        victim["data_offsets"] = list(reversed(victim["data_offsets"]))  # type: ignore[arg-type]
        if victim["data_offsets"][0] == victim["data_offsets"][1]:  # type: ignore[index]
            kind = "none"
    blob = json.dumps(header).encode()
    blob += b" " * (-len(blob) % 8)  # the library pads the header to 8 bytes
    data = struct.pack("<Q", len(blob) + length_delta) + blob + body + tail
    return data, kind, len(names)


def test_fuzz_structured_files_against_the_reference_parser() -> None:
    """Near-valid files: the reader accepts exactly what the reference accepts, and on the
    files it accepts it lists every tensor with its own offsets."""
    reached: dict[str, int] = {}

    @FUZZ
    @given(safetensors_files())
    def check(case: tuple[bytes, str, int]) -> None:
        data, kind, n = case
        info = sth.inspect_bytes(data)
        want = _reference_accepts(data)
        assert info.ok == want, (kind, info.problems)
        if kind == "none":
            assert info.ok, info.problems
        if info.ok:
            assert len(info.tensors) == n and info.header_len is not None
            pos = 0
            for t in sorted(info.tensors, key=lambda t: (t.begin, t.end)):
                assert t.begin == pos and t.end >= t.begin
                pos = t.end
            assert pos == len(data) - 8 - info.header_len
        else:
            assert info.problems and all(isinstance(p, str) and p for p in info.problems)
        outcome = f"{kind}: {'parsed' if info.ok else 'refused'}"
        event(outcome)
        reached[outcome] = reached.get(outcome, 0) + 1

    check()
    # The strategy reaches the tensor checks: parsed files with tensors, and each corruption.
    assert reached.get("none: parsed", 0) >= 10, reached
    for kind in ("offset", "dtype", "shape", "truncate", "append", "length", "metadata"):
        assert reached.get(f"{kind}: refused", 0) >= 1, (kind, reached)


@FUZZ
@given(st.binary(max_size=512))
def test_fuzz_arbitrary_bytes(data: bytes) -> None:
    info = sth.inspect_bytes(data)
    assert info.ok == _reference_accepts(data)
    assert all(isinstance(p, str) and p for p in info.problems)
    assert len(info.problems) <= sth.MAX_PROBLEMS + 1
    event("refused" if info.problems else "parsed")


def test_fuzz_mutated_real_file(real: bytes) -> None:
    """Bytes of a real file changed and the file cut: the reader agrees with the reference."""
    seen: set[bool] = set()

    @FUZZ
    @given(st.data())
    def check(data: st.DataObject) -> None:
        blob = bytearray(real)
        for _ in range(data.draw(st.integers(1, 6))):
            pos = data.draw(st.integers(0, len(blob) - 1))
            blob[pos] = data.draw(st.integers(0, 255))
        # Whole files half of the time: bytes changed in the tensor data leave a valid file.
        cut = data.draw(st.one_of(st.just(len(blob)), st.integers(0, len(blob))))
        mutated = bytes(blob[:cut])
        info = sth.inspect_bytes(mutated)
        assert info.ok == _reference_accepts(mutated), info.problems
        for t in info.tensors:
            assert 0 <= t.begin <= t.end
        if info.ok:
            assert sum(t.end - t.begin for t in info.tensors) == cut - 8 - (info.header_len or 0)
        event(f"tensors listed: {min(len(info.tensors), 1)}; ok: {info.ok}")
        seen.add(info.ok)

    check()
    assert seen == {True, False}  # it reached both valid and refused files


def test_inspect_file_reads_the_same_as_bytes(
    real: bytes, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("files")
    whole = folder / "m.safetensors"
    whole.write_bytes(real)
    info = sth.inspect_file(whole)
    assert info.ok and info.summary() == sth.inspect_bytes(real).summary()
    (header_len,) = struct.unpack("<Q", real[:8])
    assert info.summary() == {
        "header_len": header_len,
        "tensors": 4,
        "tensor_bytes": 64 * 32 * 2 + 128 + 128 + 2,
        "dtypes": {"BF16": 4096, "F32": 128, "I64": 128, "F16": 2},
        "precision": "bf16",
        "metadata": {"format": "pt", "step": "3"},
        "problems": [],
    }
    for data, words in [
        (b"\x00" * 7, "file is 7 bytes, shorter than the 8-byte header length"),
        (struct.pack("<Q", sth.MAX_HEADER + 1) + b"{}", "header length 100000001 exceeds the "
         "format's bound of 100000000 bytes"),
        (struct.pack("<Q", 50) + b"{}", "header length 50 runs past the end of the file (10 "
         "bytes)"),
    ]:  # fmt: skip
        bad = folder / "bad.safetensors"
        bad.write_bytes(data)
        assert sth.inspect_file(bad).problems == [words]


def test_sniffing_a_safetensors_file(real: bytes) -> None:
    assert sth.looks_like_safetensors(real[:64], len(real))
    (n,) = struct.unpack("<Q", real[:8])
    # The header must fit the file: exactly fitting is plausible, one byte short is not.
    assert sth.looks_like_safetensors(real[:64], n + 8)
    assert not sth.looks_like_safetensors(real[:64], n + 7)
    assert not sth.looks_like_safetensors(real[:8], len(real))  # no byte after the length
    assert not sth.looks_like_safetensors(struct.pack("<Q", 2) + b"{}", 9)  # under 10 bytes
    assert sth.looks_like_safetensors(struct.pack("<Q", 2) + b"{}", 10)
    assert not sth.looks_like_safetensors(struct.pack("<Q", 1) + b"{}", 10)  # n >= 2
    assert not sth.looks_like_safetensors(struct.pack("<Q", 2) + b"[]", 10)


def test_problems_are_capped_with_a_note() -> None:
    header = {f"t{i}": {"dtype": "X", "shape": [1], "data_offsets": [0, 1]} for i in range(30)}
    problems = sth.inspect_bytes(_join(header, b"\x00")).problems
    assert len(problems) == sth.MAX_PROBLEMS + 1
    assert problems[-1] == "... more problems not listed"
    assert all(p.startswith("tensor 't") for p in problems[:-1])
    # A few problems: no note.
    few = {f"t{i}": {"dtype": "X", "shape": [1], "data_offsets": [0, 1]} for i in range(2)}
    assert "... more problems not listed" not in sth.inspect_bytes(_join(few, b"\x00")).problems


def test_precision_adds_dtypes_of_one_precision_and_needs_a_float() -> None:
    # Two fp8 kinds (10 + 10 bytes) outweigh bf16 (15 bytes) together, not one by one.
    assert sth.precision_from_dtypes({"F8_E5M2": 10, "F8_E4M3": 10, "BF16": 15}) == "fp8"
    assert sth.precision_from_dtypes({"F8_E5M2": 10, "BF16": 15}) == "bf16"
    # Integers and booleans imply no training precision.
    assert sth.precision_from_dtypes({"I64": 800, "BOOL": 8}) is None
    assert sth.precision_from_dtypes({}) is None
    # A tie goes to the name first in sorted order, whatever the dict order.
    assert sth.precision_from_dtypes({"F16": 8, "BF16": 8}) == "bf16"


def _one(entry: object, body: bytes = b"\x00" * 4) -> sth.SafetensorsInfo:
    return sth.inspect_bytes(_join({"w": entry}, body))


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ([1, 2], "tensor 'w': not an object"),
        ({"dtype": "F32", "shape": [True], "data_offsets": [0, 4]},
         "tensor 'w': shape must be a list of non-negative integers"),
        ({"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]},
         "tensor 'w': shape must be a list of non-negative integers"),
        ({"dtype": "F32", "shape": [1.0], "data_offsets": [0, 4]},
         "tensor 'w': shape must be a list of non-negative integers"),
        ({"dtype": "F32", "shape": 1, "data_offsets": [0, 4]},
         "tensor 'w': shape must be a list of non-negative integers"),
        ({"dtype": "F32", "shape": [1], "data_offsets": [0, 4, 8]},
         "tensor 'w': data_offsets must be two non-negative integers"),
        ({"dtype": "F32", "shape": [1], "data_offsets": [0]},
         "tensor 'w': data_offsets must be two non-negative integers"),
        ({"dtype": "F32", "shape": [1], "data_offsets": [False, 4]},
         "tensor 'w': data_offsets must be two non-negative integers"),
        ({"dtype": "F32", "shape": [1], "data_offsets": [-1, 3]},
         "tensor 'w': data_offsets must be two non-negative integers"),
        ({"dtype": "F32", "shape": [1], "data_offsets": "0,4"},
         "tensor 'w': data_offsets must be two non-negative integers"),
        ({"dtype": "F32", "shape": [1], "data_offsets": [4, 0]},
         "tensor 'w': data_offsets begin 4 > end 0"),
        ({"dtype": 32, "shape": [1], "data_offsets": [0, 4]}, "tensor 'w': unknown dtype 32"),
        ({"dtype": "f32", "shape": [1], "data_offsets": [0, 4]},
         "tensor 'w': unknown dtype 'f32'"),
        ({"dtype": "F4", "shape": [3], "data_offsets": [0, 4]},
         "tensor 'w': 3 x F4 is not a whole number of bytes"),
        ({"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 4]},
         "tensor 'w': shape [2, 3] x F32 is 24 bytes but data_offsets span 4"),
    ],
)  # fmt: skip
def test_each_bad_tensor_entry_is_named_exactly(entry: object, problem: str) -> None:
    info = _one(entry)
    assert info.problems[0] == problem
    assert info.tensors == []


def test_good_entries_keep_their_shape_and_offsets() -> None:
    # F4 x 2 is one whole byte; a zero-sized tensor spans nothing; shape [] is a scalar.
    header = {
        "a": {"dtype": "F4", "shape": [2], "data_offsets": [0, 1]},
        "b": {"dtype": "F32", "shape": [0, 5], "data_offsets": [1, 1]},
        "c": {"dtype": "I16", "shape": [], "data_offsets": [1, 3]},
    }
    info = sth.inspect_bytes(_join(header, b"\x00" * 3))
    assert info.ok, info.problems
    assert [(t.name, t.dtype, t.shape, t.begin, t.end) for t in info.tensors] == [
        ("a", "F4", [2], 0, 1),
        ("b", "F32", [0, 5], 1, 1),
        ("c", "I16", [], 1, 3),
    ]
    assert info.bytes_by_dtype() == {"F4": 1, "F32": 0, "I16": 2}
    assert info.precision == "fp4"


def test_header_problems_are_named_exactly() -> None:
    def problems(header: bytes) -> list[str]:
        return sth.inspect_bytes(struct.pack("<Q", len(header)) + header).problems

    assert problems(b"[]") == ["header does not start with '{'"]
    assert problems(b" {}") == ["header does not start with '{'"]
    assert problems(b"{\xff}") == ["header is not UTF-8 (byte 1)"]
    assert problems(b"{bad}") == [
        "header is not valid JSON: Expecting property name enclosed in double quotes: "
        "line 1 column 2 (char 1)"
    ]
    assert problems(b'{"a": 1, "a": 2}') == ["duplicate key 'a' in the header"]
    assert problems(b'{"__metadata__": {"k": 1}}') == ["__metadata__ must map strings to strings"]
    assert problems(b'{"__metadata__": ["k"]}') == ["__metadata__ must map strings to strings"]
    assert problems(b"{}") == []


def test_tiling_problems_name_their_byte_counts() -> None:
    gap = {
        "a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
        "b": {"dtype": "U8", "shape": [4], "data_offsets": [8, 12]},
    }
    assert sth.inspect_bytes(_join(gap, b"\x00" * 12)).problems == [
        "tensor 'b': 4 bytes before it belong to no tensor"
    ]
    first = {"a": {"dtype": "U8", "shape": [2], "data_offsets": [3, 5]}}
    assert sth.inspect_bytes(_join(first, b"\x00" * 5)).problems == [
        "tensor 'a': 3 bytes before it belong to no tensor"
    ]
    overlap = {
        "a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
        "b": {"dtype": "U8", "shape": [2], "data_offsets": [2, 4]},
    }
    assert sth.inspect_bytes(_join(overlap, b"\x00" * 4)).problems == [
        "tensor 'b': bytes 2-4 overlap the previous tensor"
    ]
    # Nothing after the header at all: the file holds 0 bytes of data.
    one = {"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]}}
    assert sth.inspect_bytes(_join(one, b"")).problems == [
        "tensor data needs 4 bytes but the file holds 0 after the header (truncated?)"
    ]
    assert sth.inspect_bytes(_join(one, b"\x00" * 3)).problems == [
        "tensor data needs 4 bytes but the file holds 3 after the header (truncated?)"
    ]
    assert sth.inspect_bytes(_join(one, b"\x00" * 6)).problems == [
        "2 bytes at the end of the file belong to no tensor"
    ]
    assert sth.inspect_bytes(_join(one, b"\x00" * 4)).ok


def test_every_early_refusal_keeps_the_sizes_it_read() -> None:
    short = sth.inspect_bytes(b"\x00" * 7)
    assert (short.header_len, short.file_size) == (None, 7)
    over = sth.inspect_bytes(struct.pack("<Q", sth.MAX_HEADER + 1) + b"{}")
    assert (over.header_len, over.file_size) == (sth.MAX_HEADER + 1, 10)
    past = sth.inspect_bytes(struct.pack("<Q", 3) + b"{}")
    assert (past.header_len, past.file_size) == (3, 10)
    assert past.problems == ["header length 3 runs past the end of the file (10 bytes)"]
    exact = sth.inspect_bytes(struct.pack("<Q", 2) + b"{}")
    assert (exact.header_len, exact.file_size, exact.problems) == (2, 10, [])
    checked = sth.check_header(b"{}", 10, 2)
    assert (checked.header_len, checked.file_size, checked.ok) == (2, 10, True)


def test_bytes_of_one_dtype_are_added_over_tensors() -> None:
    header = {
        "a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
        "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]},
        "c": {"dtype": "U8", "shape": [3], "data_offsets": [12, 15]},
    }
    info = sth.inspect_bytes(_join(header, b"\x00" * 15))
    assert info.ok and info.bytes_by_dtype() == {"F32": 12, "U8": 3}


def test_sniffing_needs_nine_bytes_of_head() -> None:
    # Exactly the length and the opening brace: enough to recognise the file.
    assert sth.looks_like_safetensors(struct.pack("<Q", 2) + b"{", 10)
    # Fewer than 8 bytes cannot even hold the length: no, and no exception.
    assert not sth.looks_like_safetensors(b"\x02\x00", 100)
    assert not sth.looks_like_safetensors(b"", 100)
