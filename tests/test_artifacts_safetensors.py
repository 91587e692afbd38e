"""safetensors headers: every bound of the format, on files the safetensors library wrote and
on corrupted copies of them; fuzzing never gets a crash, only findings (SPEC A7, E5)."""

from __future__ import annotations

import json
import struct

import pytest
from hypothesis import HealthCheck, given, settings
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


@FUZZ
@given(st.binary(max_size=512))
def test_fuzz_arbitrary_bytes(data: bytes) -> None:
    info = sth.inspect_bytes(data)
    assert isinstance(info.problems, list)
    if info.ok:
        assert len(data) >= 8


@FUZZ
@given(st.data())
def test_fuzz_mutated_real_file(real: bytes, data: st.DataObject) -> None:
    blob = bytearray(real)
    for _ in range(data.draw(st.integers(1, 6))):
        pos = data.draw(st.integers(0, len(blob) - 1))
        blob[pos] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(blob)))
    info = sth.inspect_bytes(bytes(blob[:cut]))
    for t in info.tensors:
        assert 0 <= t.begin <= t.end
    if info.ok:
        assert sum(t.end - t.begin for t in info.tensors) == cut - 8 - (info.header_len or 0)


@FUZZ
@given(
    st.dictionaries(
        st.text(max_size=8),
        st.fixed_dictionaries(
            {
                "dtype": st.sampled_from([*sth.DTYPE_BITS, "X", 3]),
                "shape": st.lists(st.integers(-2, 6), max_size=3),
                "data_offsets": st.lists(st.integers(-2, 64), min_size=0, max_size=3),
            }
        ),
        max_size=4,
    ),
    st.integers(0, 80),
)
def test_fuzz_structured_headers(header: dict[str, object], body_len: int) -> None:
    info = sth.inspect_bytes(_join(header, b"\x00" * body_len))
    if info.ok:
        covered = sorted((t.begin, t.end) for t in info.tensors)
        pos = 0
        for begin, end in covered:
            assert begin == pos
            pos = end
        assert pos == body_len
