"""Sequential reads ask the kernel to read ahead (posix_fadvise), and the advice never
changes what is read: a handle in mid-file, a pipe, a BytesIO, a file longer than the
read-ahead window all hash as hashlib hashes their bytes."""

from __future__ import annotations

import hashlib
import io
import os
import threading
from pathlib import Path

import pytest
import torch

from gpudecide import fsutil
from gpudecide.fsutil import AHEAD, open_regular_raw, prefetch, sha256_handle, sha256_path
from gpudecide.portability import checkpoint as ck

needs_fadvise = pytest.mark.skipif(not hasattr(os, "posix_fadvise"), reason="no posix_fadvise")


def _advice(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int, int]]:
    """Record every posix_fadvise call (offset, length, advice) and still make it."""
    calls: list[tuple[int, int, int]] = []
    real = os.posix_fadvise

    def spy(fd: int, offset: int, length: int, advice: int) -> None:
        calls.append((offset, length, advice))
        real(fd, offset, length, advice)

    monkeypatch.setattr(fsutil.os, "posix_fadvise", spy)
    return calls


def test_a_file_longer_than_the_window_hashes_whole(tmp_path: Path) -> None:
    data = os.urandom(1 << 20) * (AHEAD // (1 << 20) + 9)  # the window, and 9 MiB more
    path = tmp_path / "big.bin"
    path.write_bytes(data)
    assert sha256_path(path) == (hashlib.sha256(data).hexdigest(), len(data))


def test_a_handle_in_mid_file_hashes_the_rest(tmp_path: Path) -> None:
    data = os.urandom(3 << 20)
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    with open_regular_raw(path) as handle:
        handle.seek(12345)
        got = sha256_handle(handle)
    assert got == (hashlib.sha256(data[12345:]).hexdigest(), len(data) - 12345)


def test_a_pipe_and_a_bytesio_hash_as_hashlib() -> None:
    data = os.urandom((2 << 20) + 17)
    assert sha256_handle(io.BytesIO(data)) == (hashlib.sha256(data).hexdigest(), len(data))
    read_end, write_end = os.pipe()

    def feed() -> None:
        with os.fdopen(write_end, "wb") as out:
            out.write(data)

    writer = threading.Thread(target=feed)
    writer.start()
    with os.fdopen(read_end, "rb", buffering=0) as handle:
        got = sha256_handle(handle)
    writer.join()
    assert got == (hashlib.sha256(data).hexdigest(), len(data))


@needs_fadvise
def test_prefetch_is_advice_only() -> None:
    read_end, write_end = os.pipe()
    try:
        prefetch(read_end, 0, AHEAD)  # ESPIPE from the kernel: ignored
    finally:
        os.close(read_end)
        os.close(write_end)
    prefetch(read_end, 0, AHEAD)  # a closed descriptor (EBADF): ignored as well


@needs_fadvise
def test_a_streamed_hash_reads_ahead_over_the_whole_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    size = 2 * AHEAD + (5 << 20)
    path = tmp_path / "big.bin"
    path.write_bytes(os.urandom(1 << 20) * (size >> 20))
    calls = _advice(monkeypatch)
    sha256_path(path)
    assert calls[0] == (0, 0, os.POSIX_FADV_SEQUENTIAL)
    asked = [(off, n) for off, n, advice in calls if advice == os.POSIX_FADV_WILLNEED]
    # windows one after the other, from the start to past the end
    assert asked == [(k * AHEAD, AHEAD) for k in range(len(asked))]
    assert asked[-1][0] + AHEAD >= size


@needs_fadvise
def test_the_verified_load_asks_for_each_slice_before_reading_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = {"a": torch.arange(3 * ck.SLICE // 4, dtype=torch.float32), "b": torch.ones(7)}
    path = tmp_path / "model.safetensors"
    digest = ck.write_safetensors(state, path)
    calls = _advice(monkeypatch)
    loaded = ck.read_safetensors(path, digest.sha256)
    assert all(torch.equal(loaded[k], v) for k, v in state.items())
    header = len(ck.safetensors_header(state))
    asked = [off for off, n, advice in calls if advice == os.POSIX_FADV_WILLNEED and n == AHEAD]
    # `a` is three slices, `b` a batch of its own after them
    assert asked == [header + k * ck.SLICE for k in range(4)]
