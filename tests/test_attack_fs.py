"""File-system faults and non-regular files through the real CLI (issue 14 items 5-7, 12).

Disk full and read-only file systems are real kernel errors: a 64 KiB tmpfs mounted for the
test, remounted read-only where needed (the tests run as root, as the CI container does).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest
from typer.testing import CliRunner

from gpudecide import workspace
from gpudecide.cli import app
from gpudecide.errors import InputError
from gpudecide.fsutil import atomic_write_set, atomic_write_text

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")

LOG = (
    "job_id,gpu_count,state,submit,start,end\n"
    "a,4,COMPLETED,2026-01-05T09:00:00Z,2026-01-05T10:00:00Z,2026-01-05T12:00:00Z\n"
)


def _mount(target: Path, size: str = "64k") -> None:
    target.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(target)], check=True)


@pytest.fixture
def mounts() -> Iterator[list[Path]]:
    """Mount points made by a test; unmounted afterwards whatever happened."""
    made: list[Path] = []
    yield made
    for point in reversed(made):
        subprocess.run(["umount", "-l", str(point)], check=False)


def _fill(directory: Path, leave: int = 0) -> Path:
    """Fill a file system until ENOSPC, then free `leave` bytes again."""
    filler = directory / ".filler"
    with open(filler, "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 4096)
        except OSError:
            pass
    if leave:
        size = filler.stat().st_size
        os.truncate(filler, max(0, size - leave))
    return filler


def _one_line(res: object, *parts: str) -> str:
    stderr = res.stderr  # type: ignore[attr-defined]
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: ")
    for part in parts:
        assert part in lines[0], lines[0]
    return lines[0]


def _ws(tmp_path: Path) -> Path:
    res = CliRunner().invoke(app, ["init", str(tmp_path / "ws")])
    assert res.exit_code == 0, res.output
    (tmp_path / "jobs.csv").write_text(LOG)
    return tmp_path / "ws"


# ---- disk full, read-only, a file in the way ------------------------------------------------


@needs_root
def test_init_on_a_full_disk_leaves_no_empty_file_and_reruns(
    tmp_path: Path, mounts: list[Path]
) -> None:
    small = tmp_path / "small"
    _mount(small, "512k")
    mounts.append(small)
    files = workspace.template_files()
    # Room for about half of the template: init fails in the middle of its writes.
    filler = _fill(small, leave=sum(len(t) for t in files.values()) // 2)
    res = CliRunner().invoke(app, ["init", str(small / "ws")])
    assert res.exit_code == 2
    _one_line(res, str(small / "ws"), "no space left on the device", "free some space")
    assert 0 < sum((small / "ws" / rel).exists() for rel in files) < len(files)
    for rel, text in files.items():
        p = small / "ws" / rel
        if p.exists():
            assert p.read_text() == text, f"{rel} is partial"  # never 0-byte, never half
    assert not list((small / "ws").rglob(".*.tmp"))
    filler.unlink()
    res = CliRunner().invoke(app, ["init", str(small / "ws")])  # no --force needed
    assert res.exit_code == 0, res.output
    for rel, text in files.items():
        assert (small / "ws" / rel).read_text() == text


@needs_root
def test_evidence_on_a_full_disk(tmp_path: Path, mounts: list[Path]) -> None:
    ws = _ws(tmp_path)
    _mount(ws / "evidence", "16k")
    mounts.append(ws / "evidence")
    _fill(ws / "evidence")
    res = CliRunner().invoke(app, ["profile", str(tmp_path / "jobs.csv"), "-w", str(ws)])
    assert res.exit_code == 2
    _one_line(res, f"{ws / 'evidence'}/profile-", "no space left on the device")
    assert [p.name for p in (ws / "evidence").iterdir()] == [".filler"]


@needs_root
def test_evidence_on_a_read_only_file_system(tmp_path: Path, mounts: list[Path]) -> None:
    ws = _ws(tmp_path)
    _mount(ws / "evidence")
    mounts.append(ws / "evidence")
    subprocess.run(["mount", "-o", "remount,ro", str(ws / "evidence")], check=True)
    res = CliRunner().invoke(app, ["profile", str(tmp_path / "jobs.csv"), "-w", str(ws)])
    assert res.exit_code == 2
    _one_line(res, str(ws / "evidence"), "read-only file system", "writable")


@needs_root
def test_hash_out_on_a_read_only_file_system(tmp_path: Path, mounts: list[Path]) -> None:
    ro = tmp_path / "ro"
    _mount(ro)
    mounts.append(ro)
    subprocess.run(["mount", "-o", "remount,ro", str(ro)], check=True)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "w.bin").write_bytes(b"x")
    res = CliRunner().invoke(app, ["hash", str(tmp_path / "data"), "--out", str(ro / "SUMS")])
    assert res.exit_code == 2
    _one_line(res, str(ro / "SUMS"), "read-only file system")


def test_evidence_folder_that_is_a_file(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    (ws / "evidence").rmdir()
    (ws / "evidence").write_text("not a folder")
    res = CliRunner().invoke(app, ["profile", str(tmp_path / "jobs.csv"), "-w", str(ws)])
    assert res.exit_code == 2
    _one_line(res, str(ws / "evidence"), "is a file, not a folder")
    assert (ws / "evidence").read_text() == "not a folder"


def test_write_under_a_file_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(InputError) as info:
        atomic_write_text(tmp_path / "f" / "evidence" / "r.json", "{}")
    assert info.value.path == str(tmp_path / "f") and "is a file" in info.value.message


def test_report_out_onto_a_file(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    target = tmp_path / "report.txt"
    target.write_text("keep")
    res = CliRunner().invoke(app, ["report", "-w", str(ws), "--out", str(target)])
    assert res.exit_code == 2
    _one_line(res, str(target))
    assert target.read_text() == "keep"


def test_init_under_a_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    res = CliRunner().invoke(app, ["init", str(tmp_path / "f" / "ws")])
    assert res.exit_code == 2
    _one_line(res, "is a file")


def test_stdout_to_dev_full_is_one_line() -> None:
    code = (
        "import sys; sys.argv = ['gpudecide', 'columns'];"
        "from gpudecide.cli import app; from gpudecide.console import run_app; run_app(app)"
    )
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-c", code], stdout=full, stderr=subprocess.PIPE, text=True
        )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert lines == [
        "error: <stdout>: no space left on the device (free some space or write somewhere else)"
    ], proc.stderr


def test_usage_error_is_one_line() -> None:
    code = (
        "import sys; sys.argv = ['gpudecide', 'profile', '--weeks', 'many'];"
        "from gpudecide.cli import app; from gpudecide.console import run_app; run_app(app)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "'--weeks'" in lines[0] and "--help" in lines[0], proc.stderr


# ---- FIFOs and devices: refused by name, never a hang -------------------------------------


class _Hang(Exception):
    pass


@pytest.fixture
def no_hang() -> Iterator[None]:
    def alarm(_sig: int, _frame: FrameType | None) -> None:
        raise _Hang("the command blocked on a non-regular file")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(10)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


@pytest.mark.usefixtures("no_hang")
@pytest.mark.parametrize("name", ["jobs.csv", "jobs.jsonl", "pods.json"])
def test_fifo_as_a_log(tmp_path: Path, name: str) -> None:
    ws = _ws(tmp_path)
    (tmp_path / "in").mkdir()
    fifo = _fifo(tmp_path / "in" / name)
    res = CliRunner().invoke(app, ["profile", str(fifo), "-w", str(ws)])
    assert res.exit_code == 2
    _one_line(res, str(fifo), "is a FIFO (named pipe), not a regular file")


@pytest.mark.usefixtures("no_hang")
def test_character_device_as_a_log(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    res = CliRunner().invoke(app, ["profile", "/dev/zero", "--format", "csv", "-w", str(ws)])
    assert res.exit_code == 2
    _one_line(res, "/dev/zero", "is a character device")


@pytest.mark.usefixtures("no_hang")
def test_fifo_as_each_other_input(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    fifo = _fifo(tmp_path / "in.yaml")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "w.bin").write_bytes(b"x")
    cases = [
        ["queue", str(tmp_path / "jobs.csv"), "-w", str(ws), "--slo", str(fifo)],
        ["cost", str(fifo), "--profile", str(fifo)],
        ["manifest", "lint", str(fifo)],
        ["manifest", "provenance", str(fifo)],
        ["manifest", "verify", str(tmp_path / "run"), str(fifo)],
        ["manifest", "create", str(tmp_path / "run"), "--from", str(fifo)],
        ["audit", str(tmp_path / "run"), "--expect", str(fifo)],
    ]
    for args in cases:
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 2, (args, res.output)
        _one_line(res, str(fifo), "FIFO")
    fifo.unlink()
    (tmp_path / "in.yaml").symlink_to("/dev/zero")
    res = CliRunner().invoke(app, ["manifest", "lint", str(tmp_path / "in.yaml")])
    assert res.exit_code == 2
    _one_line(res, "character device")


@pytest.mark.usefixtures("no_hang")
def test_evidence_input_replaced_by_fifo_device_or_folder(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    log = tmp_path / "jobs.csv"
    res = CliRunner().invoke(app, ["profile", str(log), "-w", str(ws)])
    assert res.exit_code == 0, res.output
    for replace in ("fifo", "device", "folder"):
        log.unlink() if log.is_file() or log.is_symlink() or log.is_fifo() else log.rmdir()
        if replace == "fifo":
            os.mkfifo(log)
        elif replace == "device":
            log.symlink_to("/dev/zero")
        else:
            log.mkdir()
        res = CliRunner().invoke(app, ["evidence", "-w", str(ws), "--json"])
        assert res.exit_code == 1, res.output
        assert '"freshness": "bad_input"' in res.stdout
        assert "bad input" in res.stdout


# ---- symbolic links as the root ------------------------------------------------------------


@pytest.mark.parametrize("command", ["hash", "audit"])
def test_symlink_root_is_refused_never_followed(tmp_path: Path, command: str) -> None:
    target = tmp_path / "real"
    target.mkdir()
    (target / "secret.txt").write_text("x")
    link = tmp_path / "link"
    link.symlink_to(target)
    res = CliRunner().invoke(app, [command, str(link), "--json"])
    assert res.exit_code == 2
    _one_line(res, str(link), "symbolic link", "never followed")
    assert "secret.txt" not in res.stdout


# ---- the report's files as one unit --------------------------------------------------------


def _set(gen: int) -> dict[str, bytes]:
    return {n: (f"{gen}:" * 2000).encode() for n in ("index.html", "report.md", "report.json")}


def _generations(folder: Path) -> set[str]:
    """Generations of the three files as one reader sees them: through one folder handle."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        gens = set()
        for name in _set(0):
            with open(name, "rb", opener=lambda p, f: os.open(p, f, dir_fd=fd)) as handle:
                gens.add(handle.read().split(b":")[0].decode())
        return gens
    finally:
        os.close(fd)


@needs_root
def test_set_write_on_a_full_disk_keeps_the_old_set(tmp_path: Path, mounts: list[Path]) -> None:
    small = tmp_path / "small"
    _mount(small)
    mounts.append(small)
    atomic_write_set(small / "report", _set(1))
    _fill(small, leave=8192)
    with pytest.raises(OSError):
        atomic_write_set(small / "report", _set(2))
    assert _generations(small / "report") == {"1"}
    assert sorted(p.name for p in small.iterdir()) == [".filler", "report"]


def test_set_write_killed_at_any_moment_shows_old_or_new(tmp_path: Path) -> None:
    folder = tmp_path / "report"
    atomic_write_set(folder, _set(0))
    child = (
        "import sys; from pathlib import Path; from gpudecide.fsutil import atomic_write_set\n"
        "names = ('index.html', 'report.md', 'report.json')\n"
        "for gen in range(1, 100000):\n"
        "    atomic_write_set(Path(sys.argv[1]), {n: (f'{gen}:' * 2000).encode() for n in names})\n"
    )
    seen: set[str] = set()
    for delay in (0.05, 0.11, 0.17, 0.23, 0.31, 0.37, 0.41, 0.53):
        proc = subprocess.Popen([sys.executable, "-c", child, str(folder)])
        time.sleep(delay + 0.3)  # interpreter start-up, then writes in flight
        for _ in range(20):  # a reader while the writer runs
            try:
                gens = _generations(folder)
            except FileNotFoundError:
                continue  # an old set being removed after the swap: gone, never mixed
            assert len(gens) == 1, gens
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        gens = _generations(folder)
        assert len(gens) == 1, gens
        seen |= gens
    assert len(seen) > 1  # the writer did replace the set between kills


@needs_root
def test_download_onto_a_full_disk_names_the_local_folder(
    tmp_path: Path, mounts: list[Path]
) -> None:
    from gpudecide.artifacts import remote

    source = tmp_path / "bucket"
    source.mkdir()
    (source / "weights.bin").write_bytes(os.urandom(200_000))
    small = tmp_path / "small"
    _mount(small)
    mounts.append(small)
    with pytest.raises(InputError) as info:
        remote.fetch(f"file://{source}", small / "copy", {})
    assert info.value.path == str(small / "copy")
    assert "no space left on the device" in info.value.one_line()
    assert list(small.iterdir()) == []  # the partial copy is gone


# ---- interrupted at every write ------------------------------------------------------------


def _fail_at(monkeypatch: pytest.MonkeyPatch, module: object, name: str, k: int) -> None:
    """Make the k-th call of module.name raise ENOSPC (a full disk at that very write)."""
    real = getattr(module, name)
    calls = {"n": 0}

    def failing(*args: object, **kwargs: object) -> object:
        calls["n"] += 1
        if calls["n"] == k:
            raise OSError(28, "No space left on device", str(args[0]) if args else None)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, failing)


def test_init_interrupted_at_every_write_can_be_rerun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpudecide import workspace as ws_mod

    files = workspace.template_files()
    for k in range(1, len(files) + 1):
        root = tmp_path / f"ws{k}"
        with monkeypatch.context() as m:
            _fail_at(m, ws_mod, "atomic_write_text", k)
            res = CliRunner().invoke(app, ["init", str(root)])
        assert res.exit_code == 2
        _one_line(res, "no space left on the device")
        present = [rel for rel in files if (root / rel).exists()]
        assert len(present) == k - 1  # every file before the fault, whole; none after
        for rel in present:
            assert (root / rel).read_text() == files[rel]
        res = CliRunner().invoke(app, ["init", str(root)])
        assert res.exit_code == 0, res.output
        assert all((root / rel).read_text() == text for rel, text in files.items())


def test_set_write_fails_at_every_step_keeps_the_old_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpudecide import fsutil

    folder = tmp_path / "report"
    atomic_write_set(folder, _set(1))
    (folder / "notes.txt").write_text("kept")  # a file of the user's in a shared --out folder
    steps = [("_write_synced", k) for k in (1, 2, 3)] + [("_fsync_dir", 1), ("_exchange", 1)]
    for name, k in steps:
        with monkeypatch.context() as m:
            _fail_at(m, fsutil, name, k)
            with pytest.raises(OSError):
                atomic_write_set(folder, _set(2))
        assert _generations(folder) == {"1"}, name
        assert (folder / "notes.txt").read_text() == "kept"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["report"], name
    atomic_write_set(folder, _set(3))
    assert _generations(folder) == {"3"} and (folder / "notes.txt").read_text() == "kept"


def test_init_killed_at_any_moment(tmp_path: Path) -> None:
    files = workspace.template_files()
    child = "import sys; from pathlib import Path; from gpudecide import workspace\n" + (
        "workspace.init(Path(sys.argv[1]))\n"
    )
    for i, delay in enumerate((0.2, 0.3, 0.4, 0.5, 0.6, 0.8)):
        root = tmp_path / f"ws{i}"
        proc = subprocess.Popen([sys.executable, "-c", child, str(root)])
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        for rel, text in files.items():
            if (root / rel).exists():
                assert (root / rel).read_text() == text  # whole or absent
        res = CliRunner().invoke(app, ["init", str(root)])
        complete = all((root / rel).exists() for rel in files)
        assert res.exit_code == 0 or (complete and "would overwrite" in res.stderr), res.output


@pytest.mark.usefixtures("no_hang")
def test_fifo_as_hash_verify(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "w.bin").write_bytes(b"x")
    fifo = _fifo(tmp_path / "SUMS")
    res = CliRunner().invoke(app, ["hash", str(tmp_path / "data"), "--verify", str(fifo)])
    assert res.exit_code == 2
    _one_line(res, str(fifo), "FIFO")


def test_set_write_removes_what_a_killed_run_left_only(tmp_path: Path) -> None:
    old = tmp_path / ".report.set-killed"
    old.mkdir()
    (old / "index.html").write_text("half")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    busy = tmp_path / ".report.set-writing"  # another run's staging folder, still fresh
    busy.mkdir()
    atomic_write_set(tmp_path / "report", _set(1))
    assert not old.exists() and busy.exists()
    assert _generations(tmp_path / "report") == {"1"}
