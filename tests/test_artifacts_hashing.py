"""Hashing: plain hashlib digests, sha256sum round trips, nothing skipped silently, and the
OpenSSF model-signing payload compared with the model_signing library's own (SPEC A5, E3)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tracemalloc
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from gpudecide.artifacts import hashing
from gpudecide.artifacts.cli import register
from gpudecide.errors import InputError
from gpudecide.fsutil import CHUNK, sha256_path

SIZES = {
    "empty.bin": 0,
    "one.bin": 1,
    "a/below.bin": CHUNK - 1,
    "a/exact.bin": CHUNK,
    "a/b/above.bin": CHUNK + 1,
    "a/b/c/big.bin": 3 * CHUNK + 5,
    "name with spaces.txt": 10,
    ".hidden": 3,
}


def _tree(root: Path) -> dict[str, bytes]:
    data = {}
    for i, (rel, size) in enumerate(sorted(SIZES.items())):
        body = os.urandom(size) if size else b""
        if size and i % 2:
            body = bytes([i]) * size
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(body)
        data[rel] = body
    return data


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """Test shell."""

    register(app)
    return app


def test_digests_equal_plain_hashlib(tmp_path: Path) -> None:
    data = _tree(tmp_path)
    for workers in (1, 4):
        tree = hashing.hash_tree(tmp_path, workers=workers)
        got = {f.path: (f.size, f.sha256) for f in tree.files}
        want = {rel: (len(b), hashlib.sha256(b).hexdigest()) for rel, b in data.items()}
        assert got == want
        assert tree.skipped == [] and tree.total_bytes == sum(SIZES.values())
    assert [f.path for f in tree.files] == sorted(data, key=hashing.path_key)


def test_single_file_root(tmp_path: Path) -> None:
    p = tmp_path / "w.bin"
    p.write_bytes(b"abc")
    tree = hashing.hash_tree(p)
    assert [(f.path, f.sha256) for f in tree.files] == [
        ("w.bin", hashlib.sha256(b"abc").hexdigest())
    ]


def test_memory_stays_flat_on_a_large_file(tmp_path: Path) -> None:
    big = tmp_path / "big.bin"
    with open(big, "wb") as handle:
        for _ in range(48):
            handle.write(os.urandom(1 << 20))
    tracemalloc.start()
    digest, size = sha256_path(big)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert size == 48 << 20 and digest == hashlib.sha256(big.read_bytes()).hexdigest()
    assert peak < 3 * CHUNK  # one buffer, not the file


def test_links_and_special_files_are_listed_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "w.bin").write_bytes(b"w")
    outside = tmp_path / "secret.txt"
    outside.write_text("outside the root")
    (root / "escape").symlink_to(outside)
    (root / "dirlink").symlink_to(tmp_path)
    os.mkfifo(root / "pipe")
    tree = hashing.hash_tree(root)
    assert [f.path for f in tree.files] == ["w.bin"]
    reasons = {s.path: s.reason for s in tree.skipped}
    assert set(reasons) == {"escape", "dirlink", "pipe"}
    assert "symbolic link" in reasons["escape"] and "not a regular file" in reasons["pipe"]


def test_file_that_cannot_be_read_is_listed_not_fatal(tmp_path: Path) -> None:
    # A file deleted between listing and hashing (or unreadable) is skipped with its reason.
    (tmp_path / "w.bin").write_bytes(b"w")
    items = [("w.bin", tmp_path / "w.bin", 1), ("gone.bin", tmp_path / "gone.bin", 5)]
    digests, skipped, _ = hashing.hash_files(items, workers=2)
    assert [d.path for d in digests] == ["w.bin"]
    assert [(s.path, s.reason.split(":")[0]) for s in skipped] == [("gone.bin", "not readable")]


def test_sha256sum_reads_what_we_write(tmp_path: Path) -> None:
    _tree(tmp_path / "t")
    odd = tmp_path / "t" / "back\\slash\nnewline.bin"
    odd.write_bytes(b"odd")
    tree = hashing.hash_tree(tmp_path / "t")
    sums = tmp_path / "SUMS"
    sums.write_text(hashing.format_sums(tree.files))
    res = subprocess.run(
        ["sha256sum", "--strict", "-c", str(sums)],
        cwd=tmp_path / "t",
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.count(": OK") == len(tree.files)


def test_we_read_what_sha256sum_writes(tmp_path: Path) -> None:
    data = _tree(tmp_path)
    (tmp_path / "back\\slash\nnewline.bin").write_bytes(b"odd")
    names = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    gnu = subprocess.run(["sha256sum", *names], cwd=tmp_path, capture_output=True, text=True).stdout
    bsd = subprocess.run(
        ["sha256sum", "--tag", *names], cwd=tmp_path, capture_output=True, text=True
    ).stdout
    for text in (gnu, bsd):
        entries = hashing.parse_sums(text, "SUMS")
        assert {n for n, _, _ in entries} == set(names)
        tree = hashing.hash_tree(tmp_path)
        check = hashing.check_tree(tree, entries)
        assert check.ok and check.matched == len(data) + 1


def test_check_reports_mismatch_missing_extra_and_refused(tmp_path: Path) -> None:
    _tree(tmp_path)
    tree = hashing.hash_tree(tmp_path)
    expected = [(f.path, f.sha256, i) for i, f in enumerate(tree.files)]
    expected[0] = (expected[0][0], "0" * 64, 1)
    expected.append(("gone.bin", "1" * 64, 99))
    expected.append(("../etc/passwd", "2" * 64, 100))
    expected.append(("/etc/passwd", "2" * 64, 101))
    extra = expected.pop(1)
    check = hashing.check_tree(tree, expected)
    assert not check.ok
    assert [m["path"] for m in check.mismatched] == [expected[0][0]]
    assert check.missing == ["gone.bin"] and check.extra == [extra[0]]
    assert {r["path"] for r in check.refused} == {"../etc/passwd", "/etc/passwd"}


def test_bad_sums_line_names_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(InputError) as exc:
        hashing.parse_sums(f"{'a' * 64}  ok.bin\nnot a checksum\n", tmp_path / "SUMS")
    assert exc.value.line == 2 and "SUMS:2" in exc.value.one_line()


def test_model_signing_payload_matches_the_library(tmp_path: Path) -> None:
    """Per-file digests and the root digest equal OpenSSF model-signing's own serialization."""
    from google.protobuf import json_format
    from model_signing import hashing as ms_hashing
    from model_signing._signing import signing as ms_signing

    root = tmp_path / "model"
    root.mkdir()
    _tree(root)
    (root / "a-b").mkdir()  # 'a-b' sorts before 'a/...' as a string, after it by component
    (root / "a-b" / "x.bin").write_bytes(b"x")
    (root / "a.b").write_bytes(b"dot")
    ours = hashing.model_signing_statement(hashing.hash_tree(root).files, "model")
    manifest = ms_hashing.Config().set_ignored_paths(paths=[], ignore_git_paths=False).hash(root)
    theirs = json_format.MessageToDict(ms_signing.Payload(manifest).statement.pb)
    assert ours["predicateType"] == theirs["predicateType"]
    assert ours["predicate"]["resources"] == theirs["predicate"]["resources"]
    assert ours["subject"] == theirs["subject"]
    assert ours["predicate"]["serialization"]["method"] == "files"
    for r in ours["predicate"]["resources"]:
        assert r["digest"] == hashlib.sha256((root / r["name"]).read_bytes()).hexdigest()


def test_hash_cli_round_trip(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    _tree(root)
    runner = CliRunner()
    app = _app()
    res = runner.invoke(app, ["hash", str(root), "--out", str(root / "SHA256SUMS")])
    assert res.exit_code == 0, res.output
    ok = runner.invoke(app, ["hash", str(root), "--verify", str(root / "SHA256SUMS"), "--json"])
    body = json.loads(ok.stdout)
    assert ok.exit_code == 0 and body["ok"] and body["matched"] == len(SIZES)
    (root / "one.bin").write_bytes(b"changed")
    (root / "new.bin").write_bytes(b"new")
    bad = runner.invoke(app, ["hash", str(root), "--verify", str(root / "SHA256SUMS"), "--json"])
    body = json.loads(bad.stdout)
    assert bad.exit_code == 1
    assert [m["path"] for m in body["mismatched"]] == ["one.bin"] and body["extra"] == ["new.bin"]
    js = runner.invoke(app, ["hash", str(root), "--json"])
    assert {f["path"] for f in json.loads(js.stdout)["files"]} >= {"new.bin", "SHA256SUMS"}
    ms = runner.invoke(app, ["hash", str(root), "--format", "model-signing"])
    assert json.loads(ms.stdout)["predicateType"] == hashing.MODEL_SIGNING_PREDICATE


def test_hash_cli_bad_input_is_one_line_exit_2(tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(_app(), ["hash", str(tmp_path / "nope")])
    assert res.exit_code == 2
    assert res.stderr.strip().count("\n") == 0 and "no such file" in res.stderr
    sums = tmp_path / "SUMS"
    sums.write_text("garbage\n")
    res = runner.invoke(_app(), ["hash", str(tmp_path), "--verify", str(sums), "--json"])
    assert res.exit_code == 2 and json.loads(res.stdout)["line"] == 1
