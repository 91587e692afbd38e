"""Checkpoint I/O (issue 25): the streamed safetensors writer and the reader that verifies the
SHA-256 while reading. Files stay valid safetensors for the reference loader, every digest is
hashlib's SHA-256 of the file's bytes, and read_checkpoint reads the weights once."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

from gpudecide.artifacts.hashing import FileDigest
from gpudecide.fsutil import sha256_path
from gpudecide.portability import checkpoint as ck


def _tensors() -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(1)
    out = {
        "big": torch.randn(300_000, generator=gen),  # ~1.2 MB: several slices at SLICE=64 KiB
        "a": torch.randn(3, 5, generator=gen),
        "b": torch.arange(7, dtype=torch.int64),
        "c": torch.randn(4, generator=gen).to(torch.bfloat16),
        "d": torch.tensor(2.5, dtype=torch.float64),
        "e": torch.tensor([True, False, True]),
        "f": torch.randn(2, 3, generator=gen).to(torch.float16),
        "g": torch.tensor([-3, 4], dtype=torch.int8),
        "empty": torch.empty(0, 4),
    }
    # many small tensors, as the biases and norms of a real model: gathered into batches,
    # more of them than one writev takes
    out |= {f"layers.{i}.bias": torch.full((i % 5 + 1,), float(i)) for i in range(1200)}
    return out


@pytest.fixture(autouse=True)
def small_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    # Small slices so that a test-sized file crosses every boundary the batching has:
    # tensors cut in slices, small ones gathered, batches capped at the writev limit.
    monkeypatch.setattr(ck, "SLICE", 64 << 10)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_written_file_is_safetensors_and_digest_is_of_its_bytes(tmp_path: Path) -> None:
    tensors = _tensors()
    path = tmp_path / "model.safetensors"
    digest = ck.write_safetensors(tensors, path, {"format": "pt"})
    assert digest.sha256 == _sha(path)
    assert digest.size == path.stat().st_size
    assert digest.path == path.name
    back = load_file(str(path))  # the reference loader accepts the file
    assert back.keys() == tensors.keys()
    for name, t in tensors.items():
        assert back[name].dtype == t.dtype and back[name].shape == t.shape
        assert torch.equal(back[name], t)
    with safe_open(str(path), framework="pt") as f:
        assert f.metadata() == {"format": "pt"}


def test_unsynced_write_has_the_same_bytes(tmp_path: Path) -> None:
    tensors = _tensors()
    a = ck.write_safetensors(tensors, tmp_path / "a.safetensors", fsync=True)
    b = ck.write_safetensors(tensors, tmp_path / "b.safetensors", fsync=False)
    assert a.sha256 == b.sha256 == _sha(tmp_path / "b.safetensors")


def test_short_writes_and_reads_are_completed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A write or read may move fewer bytes than asked; the loops finish the job.
    tensors = _tensors()
    reference = ck.write_safetensors(tensors, tmp_path / "ref.safetensors")
    writev, readv = os.writev, os.readv

    def short_writev(fd: int, parts: list[memoryview]) -> int:
        return writev(fd, [parts[0][:1000]])

    def short_readv(fd: int, parts: list[memoryview]) -> int:
        return readv(fd, [parts[0][:777]])

    monkeypatch.setattr(os, "writev", short_writev)
    digest = ck.write_safetensors(tensors, tmp_path / "short.safetensors")
    monkeypatch.setattr(os, "writev", writev)
    assert (tmp_path / "short.safetensors").read_bytes() == (
        tmp_path / "ref.safetensors"
    ).read_bytes()
    assert digest == FileDigest("short.safetensors", reference.size, reference.sha256)
    monkeypatch.setattr(os, "readv", short_readv)
    back = ck.read_safetensors(tmp_path / "short.safetensors", digest.sha256)
    assert all(torch.equal(back[k], v) for k, v in tensors.items())


def test_reader_matches_the_reference_loader(tmp_path: Path) -> None:
    tensors = _tensors()
    tensors |= {
        "u16": torch.tensor([1, 65535], dtype=torch.uint16),
        "c64": torch.tensor([1 + 2j], dtype=torch.complex64),
        "f8": torch.tensor([0.5, -2.0]).to(torch.float8_e4m3fn),
    }
    path = tmp_path / "ref.safetensors"
    save_file(tensors, str(path), {"k": "v"})  # written by safetensors itself
    ref = load_file(str(path))
    back = ck.read_safetensors(path, _sha(path))
    assert list(back) == list(ref)  # same order: the file's
    for name, t in ref.items():
        assert back[name].dtype == t.dtype and back[name].shape == t.shape
        assert torch.equal(
            back[name].reshape(-1).view(torch.uint8), t.reshape(-1).view(torch.uint8)
        )
    # each tensor owns its memory, as safetensors' tensors do: none shares another's storage
    pointers = [t.untyped_storage().data_ptr() for t in back.values() if t.numel()]
    assert len(set(pointers)) == len(pointers)


def test_reader_refuses_a_digest_that_differs(tmp_path: Path) -> None:
    path = tmp_path / "model.safetensors"
    digest = ck.write_safetensors(_tensors(), path)
    with pytest.raises(ck.CheckpointError) as info:
        ck.read_safetensors(path, "0" * 64)
    assert info.value.reason == "hash_mismatch" and "nothing was loaded" in info.value.message
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(ck.CheckpointError) as info:
        ck.read_safetensors(path, digest.sha256)
    assert info.value.reason == "hash_mismatch"


def _header_file(path: Path, header: dict[str, object], data: bytes) -> str:
    blob = json.dumps(header).encode()
    path.write_bytes(len(blob).to_bytes(8, "little") + blob + data)
    return _sha(path)


@pytest.mark.parametrize(
    ("header", "data", "why"),
    [
        ({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 4, "truncated"),
        ({"x": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\0" * 8, "span"),
        ({"x": {"dtype": "Q7", "shape": [1], "data_offsets": [0, 1]}}, b"\0", "unknown dtype"),
        ({"x": {"dtype": "F8_E8M0", "shape": [1], "data_offsets": [0, 1]}}, b"\0", "torch"),
    ],
)
def test_reader_refuses_what_the_format_refuses(
    tmp_path: Path, header: dict[str, object], data: bytes, why: str
) -> None:
    path = tmp_path / "bad.safetensors"
    sha = _header_file(path, header, data)
    with pytest.raises(ck.CheckpointError) as info:
        ck.read_safetensors(path, sha)
    assert info.value.reason == "unreadable" and why in info.value.message


def _checkpoint(root: Path, tensors: dict[str, torch.Tensor]) -> Path:
    with ck.CheckpointWriter(root, 3) as w:
        w.tensors(ck.WEIGHTS, tensors, {"format": "pt"})
        w.json(ck.TRAINER_STATE, {"global_step": 3, "epoch": 0.5, "format": ck.FORMAT})
        w.json(ck.CONFIG, {"seed": 1})
        info = w.commit()
    for f in info.files:
        assert (
            f.sha256 == _sha(info.path / f.path) and f.size == (info.path / f.path).stat().st_size
        )
    return info.path


def test_read_checkpoint_reads_the_weights_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tensors = _tensors()
    folder = _checkpoint(tmp_path, tensors)
    hashed: list[str] = []

    def recording(path: Path) -> tuple[str, int]:
        hashed.append(Path(path).name)
        return sha256_path(path)

    monkeypatch.setattr("gpudecide.portability.checkpoint.sha256_path", recording)
    state = ck.read_checkpoint(folder)
    assert ck.WEIGHTS not in hashed  # hashed while read into the tensors, no second pass
    assert sorted(hashed) == sorted([ck.CONFIG, ck.TRAINER_STATE])
    assert state.step == 3 and state.config == {"seed": 1}
    assert all(torch.equal(state.weights[k], v) for k, v in tensors.items())
    weights = next(f for f in state.files if f.path == ck.WEIGHTS)
    assert weights.sha256 == _sha(folder / ck.WEIGHTS)
    assert state.files == ck.verify_checkpoint(folder)


def test_read_checkpoint_tells_tampered_from_corrupt_weights(tmp_path: Path) -> None:
    folder = _checkpoint(tmp_path, {"w": torch.ones(4)})
    weights = folder / ck.WEIGHTS
    good = weights.read_bytes()
    # a header broken after the sums were written: the digest differs, so hash_mismatch
    weights.write_bytes(good[:8] + b"[" + good[9:])
    with pytest.raises(ck.CheckpointError) as info:
        ck.read_checkpoint(folder)
    assert info.value.reason == "hash_mismatch" and info.value.path == str(weights)
    # the same broken file with sums that match it: the file is read, and refused as such
    sums = (folder / ck.SUMS).read_text().replace(hashlib.sha256(good).hexdigest(), _sha(weights))
    (folder / ck.SUMS).write_text(sums)
    with pytest.raises(ck.CheckpointError) as info:
        ck.read_checkpoint(folder)
    assert (
        info.value.reason == "unreadable" and "not a valid safetensors file" in info.value.message
    )
    assert info.value.path == str(folder)
