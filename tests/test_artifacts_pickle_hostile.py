"""Hostile files that used to pass the audit unnamed, each built as bytes and audited through
the CLI (`gpudecide audit DIR --json`): the hazard id, the named global and exit code 1
(SPEC A7, E5). Nothing here is ever unpickled."""

from __future__ import annotations

import io
import json
import os
import pickle
import struct
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gpudecide.artifacts import pickle_scan
from gpudecide.cli import app

# A protocol-0 program: import os.system and call it (never loaded here).
P0_SYSTEM = b"cos\nsystem\n(S'touch /tmp/gpudecide-pwned'\ntR."


class Reduce:
    """Pickles as a call of `func(*args)`."""

    def __init__(self, func: Any, *args: Any) -> None:
        self.func, self.args = func, args

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (self.func, self.args)


def audit(tmp_path: Path, files: dict[str, bytes]) -> tuple[int, list[dict[str, Any]]]:
    """Write the files into a fresh export and run the CLI audit on it."""
    export = tmp_path / "export"
    export.mkdir()
    for name, data in files.items():
        (export / name).parent.mkdir(parents=True, exist_ok=True)
        (export / name).write_bytes(data)
    res = CliRunner().invoke(app, ["audit", str(export), "--json"])
    assert res.exception is None or isinstance(res.exception, SystemExit), res.output
    body = json.loads(res.stdout)
    return res.exit_code, body["hazards"]


def hazard(hazards: list[dict[str, Any]], hid: str, path: str) -> str:
    """The detail of hazard `hid` on `path` (fails when absent)."""
    found = [h["detail"] for h in hazards if h["id"] == hid and h["path"] == path]
    assert found, (hid, path, hazards)
    return str(found[0])


@pytest.fixture(autouse=True)
def _cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # evidence lands under the test's folder


# ---- 1. frame divergence -------------------------------------------------------------------


def frame_divergent() -> bytes:
    """FRAME claims 2 bytes; a BINBYTES inside claims 0x107 bytes, hiding GLOBAL os system.

    pickletools reads the length 0x107 contiguously and swallows the payload as bytes; the C
    unpickler on a BytesIO drops the frame's last byte, reads the length 1 from the frame's
    end and then runs the payload.
    """
    head = b"\x80\x04\x95" + struct.pack("<Q", 2) + b"B\x07" + b"\x01\x00\x00\x00" + b"Z"
    body = head + P0_SYSTEM
    swallowed = len(body) - (2 + 9 + 1 + 4)
    return body + b"\x00" * (0x107 - swallowed) + b"N."


def test_frame_divergence_is_named(tmp_path: Path) -> None:
    data = frame_divergent()
    code, hazards = audit(tmp_path, {"model.pkl": data})
    assert code == 1
    assert "frame" in hazard(hazards, "pickle_frame_mismatch", "model.pkl")
    assert "os.system" in hazard(hazards, "dangerous_pickle", "model.pkl")


def test_well_framed_pickles_have_no_frame_issue() -> None:
    big = {"a": list(range(50_000)), "b": b"x" * 200_000, "s": "y" * 70_000}
    for proto in (4, 5):
        report = pickle_scan.scan_bytes(pickle.dumps(big, protocol=proto))
        assert report.frame_issues == [] and report.problems == [] and report.dangerous == []


def test_frame_boundary_exactly_at_an_opcode_end_is_fine() -> None:
    # FRAME of 3 bytes holding exactly `K\x01` + `.`: the STOP ends on the frame's end.
    data = b"\x80\x04\x95" + struct.pack("<Q", 3) + b"K\x01."
    report = pickle_scan.scan_bytes(data)
    assert report.frame_issues == [] and report.pickles == 1
    # One byte less: the STOP now lies outside the 2-byte frame, which is still fine.
    data = b"\x80\x04\x95" + struct.pack("<Q", 2) + b"K\x01."
    assert pickle_scan.scan_bytes(data).frame_issues == []
    # The BININT1 argument straddling the end of a 1-byte frame is not.
    data = b"\x80\x04\x95" + struct.pack("<Q", 1) + b"K\x01."
    assert pickle_scan.scan_bytes(data).frame_issues


def test_new_frame_inside_a_frame_is_a_mismatch() -> None:
    inner = b"\x95" + struct.pack("<Q", 2) + b"N."
    data = b"\x80\x04\x95" + struct.pack("<Q", 20) + inner + b"\x00" * 20
    assert pickle_scan.scan_bytes(data).frame_issues


# ---- 2. numpy object arrays ----------------------------------------------------------------


def npy(descr: str, payload: bytes, shape: str = "(1,)") -> bytes:
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}".encode()
    header += b" " * (63 - (len(header) + 10) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + payload


def test_npy_and_npz_object_arrays_are_scanned(tmp_path: Path) -> None:
    evil = pickle.dumps(Reduce(os.system, "true"), protocol=3)
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("arr_0.npy", npy("|O", evil))
    code, hazards = audit(tmp_path, {"x.npy": npy("|O", evil), "y.npz": inner.getvalue()})
    assert code == 1
    assert "system" in hazard(hazards, "dangerous_pickle", "x.npy")
    assert "system" in hazard(hazards, "dangerous_pickle", "y.npz")


def test_plain_npy_is_not_a_hazard(tmp_path: Path) -> None:
    _code, hazards = audit(tmp_path, {"x.npy": npy("<f4", b"\x00" * 16, "(4,)")})
    assert [h for h in hazards if h["path"] == "x.npy"] == []


# ---- 3. pickles recognised by parsing, whatever the name -----------------------------------


@pytest.mark.parametrize(
    "name", ["model.joblib", "checkpoint.pth.tar", "model.dill", "model.sav", "notes.txt"]
)
def test_protocol0_pickle_under_any_name(tmp_path: Path, name: str) -> None:
    code, hazards = audit(tmp_path, {name: P0_SYSTEM})
    assert code == 1
    assert "os.system" in hazard(hazards, "dangerous_pickle", name)


@pytest.mark.parametrize("first", [b"Vhello\n0", b"S'hello'\n0"])
def test_pickles_starting_with_text_opcodes(tmp_path: Path, first: bytes) -> None:
    code, hazards = audit(tmp_path, {"model.pt": first + P0_SYSTEM})
    assert code == 1
    assert "os.system" in hazard(hazards, "dangerous_pickle", "model.pt")


def test_text_that_is_no_pickle_stays_text(tmp_path: Path) -> None:
    _code, hazards = audit(tmp_path, {"notes.txt": b"I like pickles\ncos is a function\n"})
    assert [h for h in hazards if h["path"] == "notes.txt"] == []


def test_truncated_after_reduce_is_still_named(tmp_path: Path) -> None:
    code, hazards = audit(tmp_path, {"blob.dat": P0_SYSTEM[:-1]})
    assert code == 1
    assert "os.system" in hazard(hazards, "dangerous_pickle", "blob.dat")


# ---- 4. hostile content behind a damaged container -----------------------------------------


def torch_like_zip(member: str = "archive/data.pkl", payload: bytes | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/version", b"3\n")
        z.writestr(member, payload or pickle.dumps(Reduce(eval, "1"), protocol=2))
        z.writestr("archive/data/0", b"\x00" * 64)
    return buf.getvalue()


def test_damaged_central_directory_still_scans_members(tmp_path: Path) -> None:
    data = torch_like_zip()
    cut = data[: data.rindex(b"PK\x01\x02")]  # central directory gone
    code, hazards = audit(tmp_path, {"model.pt": cut})
    assert code == 1
    assert "damaged zip" in hazard(hazards, "corrupt_file", "model.pt")
    assert "builtins.eval" in hazard(hazards, "dangerous_pickle", "model.pt")


def test_bad_crc_is_damage_and_the_payload_is_named(tmp_path: Path) -> None:
    data = bytearray(torch_like_zip())
    entry = data.index(b"PK\x01\x02", data.index(b"PK\x01\x02"))
    while data[entry + 46 : entry + 46 + 16] != b"archive/data.pkl":
        entry = data.index(b"PK\x01\x02", entry + 4)
    data[entry + 16] ^= 0xFF  # the pickle's CRC-32 in the central directory
    code, hazards = audit(tmp_path, {"model.pt": bytes(data)})
    assert code == 1
    assert "CRC" in hazard(hazards, "corrupt_file", "model.pt")
    assert "builtins.eval" in hazard(hazards, "dangerous_pickle", "model.pt")


@pytest.mark.parametrize("member", ["model/config.pkl", "data.txt"])
def test_zip_member_found_by_content(tmp_path: Path, member: str) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("README", b"weights inside")
        z.writestr(member, P0_SYSTEM)
    code, hazards = audit(tmp_path, {"bundle.zip": buf.getvalue()})
    assert code == 1
    assert "os.system" in hazard(hazards, "dangerous_pickle", "bundle.zip")
    assert not [h for h in hazards if h["id"] == "unknown_format"]


def test_7z_archive_is_its_own_hazard(tmp_path: Path) -> None:
    data = b"7z\xbc\xaf\x27\x1c\x00\x04" + bytes(range(64))
    code, hazards = audit(tmp_path, {"model.7z": data})
    assert code == 1
    assert "7z archive" in hazard(hazards, "archive_not_scanned", "model.7z")


# ---- 5. size limits that hide --------------------------------------------------------------


def many_ops(n: int) -> bytes:
    return pickle.dumps(list(range(256, 256 + n)), protocol=2)


def test_too_large_is_a_hazard_and_the_limit_is_inclusive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = many_ops(3000)
    ops = pickle_scan.scan_bytes(data).opcodes
    monkeypatch.setattr(pickle_scan, "MAX_OPS", ops)
    assert pickle_scan.scan_bytes(data).too_large is None  # exactly at the limit: scanned
    monkeypatch.setattr(pickle_scan, "MAX_OPS", ops - 1)
    code, hazards = audit(tmp_path, {"big.pkl": data})
    assert code == 1
    assert "not scanned: too large" in hazard(hazards, "pickle_not_scanned_too_large", "big.pkl")
    assert not [h for h in hazards if h["id"] == "corrupt_file"]


# ---- 6. an encrypted flag must not crash ---------------------------------------------------


def _set_encrypted(data: bytes, name: bytes) -> bytes:
    out = bytearray(data)
    pos = 0
    while (pos := out.find(b"PK\x03\x04", pos)) >= 0:
        nlen = struct.unpack_from("<H", out, pos + 26)[0]
        if out[pos + 30 : pos + 30 + nlen] == name:
            out[pos + 6] |= 0x01
        pos += 4
    pos = 0
    while (pos := out.find(b"PK\x01\x02", pos)) >= 0:
        nlen = struct.unpack_from("<H", out, pos + 28)[0]
        if out[pos + 46 : pos + 46 + nlen] == name:
            out[pos + 8] |= 0x01
        pos += 4
    return bytes(out)


def test_encrypted_flag_on_data_pkl_does_not_crash(tmp_path: Path) -> None:
    data = _set_encrypted(torch_like_zip(), b"archive/data.pkl")
    code, hazards = audit(tmp_path, {"model.pt": data})
    assert code == 1
    # Stored bytes under an "encrypted" flag are still read: the flag hides nothing.
    assert "builtins.eval" in hazard(hazards, "dangerous_pickle", "model.pt")


def test_encrypted_deflated_member_is_not_scanned_hazard(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("secret.bin", os.urandom(256))
    data = _set_encrypted(buf.getvalue(), b"secret.bin")
    code, hazards = audit(tmp_path, {"bundle.zip": data})
    assert code == 1
    assert "secret.bin: encrypted" in hazard(hazards, "archive_not_scanned", "bundle.zip")


# ---- severity: deny list vs outside the weights-only allow list -----------------------------


def test_two_severities(tmp_path: Path) -> None:
    import ast

    import torch

    whole = io.BytesIO()
    torch.save(torch.nn.Linear(2, 2), whole)
    files = {
        "whole_model.pt": whole.getvalue(),
        "len.pkl": pickle.dumps(Reduce(len, [1]), protocol=2),
        "ast.pkl": pickle.dumps(Reduce(ast.parse, "1"), protocol=2),
        "evil.pkl": pickle.dumps(Reduce(os.system, "true"), protocol=2),
    }
    code, hazards = audit(tmp_path, files)
    assert code == 1
    linear = hazard(hazards, "untrusted_pickle_import", "whole_model.pt")
    assert "torch.nn.modules.linear.Linear" in linear and "weights-only" in linear
    assert "builtins.len" in hazard(hazards, "untrusted_pickle_import", "len.pkl")
    assert "ast.parse" in hazard(hazards, "untrusted_pickle_import", "ast.pkl")
    assert "system" in hazard(hazards, "dangerous_pickle", "evil.pkl")
    denied = {h["path"] for h in hazards if h["id"] == "dangerous_pickle"}
    assert denied == {"evil.pkl"}


def test_every_global_is_named(tmp_path: Path) -> None:
    payload = b"(cos\nsystem\nS'a'\ncsubprocess\nPopen\nS'b'\ncbuiltins\nexec\nS'c'\nl."
    code, hazards = audit(tmp_path, {"m.pkl": payload})
    detail = hazard(hazards, "dangerous_pickle", "m.pkl")
    assert code == 1
    for name in ("os.system", "subprocess.Popen", "builtins.exec"):
        assert name in detail


def test_weights_only_checkpoint_is_clean(tmp_path: Path) -> None:
    import torch

    buf = io.BytesIO()
    torch.save({"w": torch.zeros(2, 2), "step": 3}, buf)
    _code, hazards = audit(tmp_path, {"weights.pt": buf.getvalue()})
    assert [h for h in hazards if h["path"] == "weights.pt"] == []


# ---- formats that are pickles underneath: legacy tar, joblib compression -------------------


def test_legacy_tar_checkpoint_members_are_scanned(tmp_path: Path) -> None:
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in (("sys_info", pickle.dumps({"protocol_version": 1000})),
                           ("pickle", P0_SYSTEM), ("storages", b"\x00" * 32)):  # fmt: skip
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    code, hazards = audit(tmp_path, {"model.pt": buf.getvalue()})
    assert code == 1
    assert "os.system" in hazard(hazards, "dangerous_pickle", "model.pt")


@pytest.mark.parametrize("kind", ["zlib", "gzip", "bz2", "xz"])
def test_compressed_joblib_is_scanned(tmp_path: Path, kind: str) -> None:
    import bz2
    import gzip
    import lzma
    import zlib

    packed: dict[str, bytes] = {
        "zlib": zlib.compress(P0_SYSTEM),
        "gzip": gzip.compress(P0_SYSTEM),
        "bz2": bz2.compress(P0_SYSTEM),
        "xz": lzma.compress(P0_SYSTEM),
    }
    code, hazards = audit(tmp_path, {"model.joblib": packed[kind]})
    assert code == 1
    assert "os.system" in hazard(hazards, "dangerous_pickle", "model.joblib")


def test_compressed_benign_pickle_is_clean(tmp_path: Path) -> None:
    import gzip

    data = gzip.compress(pickle.dumps({"coef": [1.0, 2.0], "n": 3}, protocol=4))
    _code, hazards = audit(tmp_path, {"model.joblib": data})
    assert [h for h in hazards if h["path"] == "model.joblib"] == []


@pytest.mark.parametrize("method", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_frame_divergence_inside_a_torch_zip(tmp_path: Path, method: int) -> None:
    # torch.load reads data.pkl through a BytesIO: the reader that drops the frame's rest.
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        z.writestr("archive/data.pkl", frame_divergent())
        z.writestr("archive/version", b"3\n")
    code, hazards = audit(tmp_path, {"model.pt": buf.getvalue()})
    assert code == 1
    assert hazard(hazards, "pickle_frame_mismatch", "model.pt")
    assert "os.system" in hazard(hazards, "dangerous_pickle", "model.pt")


# ---- damaged input never crashes the scan --------------------------------------------------


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.data())
def test_fuzz_mutated_archives_and_frames_never_crash(tmp_path: Path, data: st.DataObject) -> None:
    from gpudecide.artifacts import formats

    base = data.draw(st.sampled_from([torch_like_zip(), frame_divergent(), npy("|O", P0_SYSTEM)]))
    blob = bytearray(base)
    for _ in range(data.draw(st.integers(1, 6))):
        blob[data.draw(st.integers(0, len(blob) - 1))] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(1, len(blob)))
    (tmp_path / "f.bin").write_bytes(bytes(blob[:cut]))
    report = formats.inspect_file(tmp_path, "f.bin", cut)
    assert all(f.id for f in report.findings)
    json.dumps(report.as_dict())
