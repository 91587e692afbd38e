"""Every output option of every artifact command, by class of path (issue 28): `hash --out`,
`manifest create --out`, `manifest provenance --out` (files), `audit --evidence-dir` and the
folder `audit --source` copies into (folders); and the inputs a FIFO, a device or a kernel
file system may stand in for.

Each class is tested on each option: a new name, nested new folders, an existing file, a link
to one (twins that must work), and a folder, a path through a file, a read-only file system,
/proc and /sys, a block device, a character device that is no stream, a socket, a FIFO with
no reader (each exit 2, one line naming the path, nothing written or replaced), and the
streams that take the output as it is: a FIFO with its reader, /dev/null, /dev/full (no
space left: exit 2). A device is never replaced by a regular file. The devices are made with
mknod inside the test's folder (the tests run as root, as the CI container does); without
that right the real /dev/null and /dev/full stand in, which a process that is not root
cannot replace.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType

import pytest
import typer
from typer.testing import CliRunner, Result

from gpudecide import workspace
from gpudecide.artifacts import places
from gpudecide.artifacts.cli import register
from gpudecide.demo import CONFIG_DATA

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """Test shell."""

    register(app)
    return app


APP = _app()


def run(*args: str) -> Result:
    return CliRunner().invoke(APP, list(args))


@pytest.fixture(autouse=True)
def no_hang() -> Iterator[None]:
    """A command that blocks (a FIFO opened for writing without a reader) fails the test
    instead of hanging the suite."""

    def _late(_sig: int, _frame: FrameType | None) -> None:
        raise TimeoutError("the command blocked")

    old = signal.signal(signal.SIGALRM, _late)
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run folder and its manifest, made once."""
    root = tmp_path_factory.mktemp("made")
    (root / "run").mkdir()
    (root / "run" / "config.json").write_text('{"model_type": "llama"}\n')
    (root / "run" / "notes.txt").write_text("run 7\n")
    res = run("manifest", "create", str(root / "run"), "--out", str(root / "m.json"))
    assert res.exit_code == 0, res.output
    return root


@pytest.fixture
def here(made: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder of the test's own with the run and its manifest, as the working folder."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(made / "run", tmp_path / "run")
    shutil.copyfile(made / "m.json", tmp_path / "m.json")
    return tmp_path


def _node(path: Path, kind: int, major: int, minor: int, fallback: str | None) -> Path:
    try:
        os.mknod(path, kind | 0o666, os.makedev(major, minor))
    except PermissionError:
        if fallback is None:
            pytest.skip("making a device node needs CAP_MKNOD")
        return Path(fallback)
    return path


def _fingerprint(path: Path) -> tuple[int, int, int]:
    st = os.lstat(path)
    return (stat.S_IFMT(st.st_mode), st.st_rdev, st.st_ino)


# ---- the commands and their output options ------------------------------------------------

# Each: (name, argv with OUT where the output path goes, the output is a file (not a folder)).
FILE_OUTPUTS: list[tuple[str, list[str]]] = [
    ("hash --out", ["hash", "run", "--out", "OUT"]),
    (
        "hash --format model-signing --out",
        ["hash", "run", "--format", "model-signing", "--out", "OUT"],
    ),
    ("hash --json --out", ["hash", "run", "--json", "--out", "OUT"]),
    ("manifest create --out", ["manifest", "create", "run", "--force", "--out", "OUT"]),
    ("manifest provenance --out", ["manifest", "provenance", "m.json", "--out", "OUT"]),
]
FOLDER_OUTPUTS: list[tuple[str, list[str]]] = [
    ("audit --evidence-dir", ["audit", "run", "--evidence-dir", "OUT"]),
    (
        "audit --source (the copy's folder)",
        ["audit", "OUT", "--source", "SRC", "--evidence-dir", "ev"],
    ),
]


def _argv(template: list[str], out: Path, here: Path) -> list[str]:
    return [
        str(out) if a == "OUT" else f"file://{here / 'run'}" if a == "SRC" else a for a in template
    ]


def _one_line_error(res: Result, *parts: str) -> str:
    assert res.exit_code == 2, (res.exit_code, res.output)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert "Traceback" not in res.output
    for part in parts:
        assert part in lines[0], lines[0]
    return lines[0]


def _no_temporaries(folder: Path) -> None:
    assert not [p for p in folder.iterdir() if p.name.startswith(".") and ".tmp" in p.name]


# ---- file outputs: the classes that work ---------------------------------------------------


@pytest.mark.parametrize(("name", "argv"), FILE_OUTPUTS, ids=[n for n, _ in FILE_OUTPUTS])
@pytest.mark.parametrize("where", ["new", "nested", "existing", "link"])
def test_file_output_written_atomically(here: Path, name: str, argv: list[str], where: str) -> None:
    out = here / "out.txt"
    if where == "nested":
        out = here / "a" / "b" / "out.txt"
    elif where == "existing":
        out.write_text("old\n")
    elif where == "link":
        (here / "real.txt").write_text("old\n")
        out.symlink_to("real.txt")
    res = run(*_argv(argv, out, here))
    assert res.exit_code == 0, res.output
    text = (here / "real.txt" if where == "link" else out).read_text()
    assert text and text != "old\n"
    if where == "link":
        assert out.is_symlink()  # written where the link points; the link stays
    _no_temporaries(out.parent)


@pytest.mark.parametrize(("name", "argv"), FILE_OUTPUTS, ids=[n for n, _ in FILE_OUTPUTS])
def test_dev_null_takes_the_output_and_stays_a_device(
    here: Path, name: str, argv: list[str]
) -> None:
    null = _node(here / "null", stat.S_IFCHR, 1, 3, "/dev/null")
    before = _fingerprint(null)
    res = run(*_argv(argv, null, here))
    assert res.exit_code == 0, res.output
    assert _fingerprint(null) == before


@pytest.mark.parametrize(("name", "argv"), FILE_OUTPUTS, ids=[n for n, _ in FILE_OUTPUTS])
def test_a_fifo_with_its_reader_gets_the_output(here: Path, name: str, argv: list[str]) -> None:
    fifo = here / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        res = run(*_argv(argv, fifo, here))
        assert res.exit_code == 0, res.output
        got = os.read(reader, 1 << 20)
    finally:
        os.close(reader)
    assert got.strip()
    if "--json" in argv or "model-signing" in argv or "manifest" in name:
        json.loads(got)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


# ---- file outputs: the classes refused, nothing written -------------------------------------


@pytest.mark.parametrize(("name", "argv"), FILE_OUTPUTS, ids=[n for n, _ in FILE_OUTPUTS])
def test_dev_full_is_exit_2_and_stays_a_device(here: Path, name: str, argv: list[str]) -> None:
    full = _node(here / "full", stat.S_IFCHR, 1, 7, "/dev/full")
    before = _fingerprint(full)
    res = run(*_argv(argv, full, here))
    _one_line_error(res, str(full), "no space left on the device")
    assert _fingerprint(full) == before


def _socket(path: Path) -> Path:
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    sock.close()
    return path


REFUSED: dict[str, tuple[Callable[[Path], Path], tuple[str, ...]]] = {
    "folder": (lambda h: (h / "dir").mkdir() or h / "dir", ("is a folder, not a file",)),
    "through a file": (
        lambda h: (h / "file").write_text("x") and h / "file" / "out.txt",
        ("is a file, not a folder",),
    ),
    "deep through a file": (
        lambda h: (h / "file").write_text("x") and h / "file" / "a" / "b" / "out.txt",
        ("is a file, not a folder",),
    ),
    "FIFO without reader": (
        lambda h: os.mkfifo(h / "fifo") or h / "fifo",
        ("is a FIFO with no reader", "start the reader"),
    ),
    "block device": (
        lambda h: _node(h / "blk", stat.S_IFBLK, 7, 200, None),
        ("is a block device",),
    ),
    "character device": (
        lambda h: _node(h / "random", stat.S_IFCHR, 1, 8, None),  # /dev/random: no stream
        ("is a character device",),
    ),
    "socket": (lambda h: _socket(h / "s.sock"), ("is a socket",)),
    "/proc": (lambda h: Path("/proc/self/gpudecide-out"), ("proc file system",)),
    "/proc file": (lambda h: Path("/proc/self/comm"), ("proc file system",)),
    "/sys": (lambda h: Path("/sys/gpudecide-out"), ("sysfs file system",)),
}


@pytest.mark.parametrize(("name", "argv"), FILE_OUTPUTS, ids=[n for n, _ in FILE_OUTPUTS])
@pytest.mark.parametrize("klass", list(REFUSED))
def test_file_output_refused_by_class(here: Path, name: str, argv: list[str], klass: str) -> None:
    make, words = REFUSED[klass]
    out = make(here)
    before = _fingerprint(out) if os.path.lexists(out) else None
    res = run(*_argv(argv, out, here))
    line = _one_line_error(res, *words)
    assert "'--out'" in line
    if before is not None:
        assert _fingerprint(out) == before
    else:
        assert not os.path.lexists(out)
    _no_temporaries(here)


@pytest.mark.parametrize(("name", "argv"), FILE_OUTPUTS, ids=[n for n, _ in FILE_OUTPUTS])
def test_file_output_refused_as_json(here: Path, name: str, argv: list[str]) -> None:
    (here / "dir").mkdir()
    res = run(*_argv(argv, here / "dir", here), "--json")
    assert res.exit_code == 2
    body = json.loads(res.stdout)
    assert body["path"] == str(here / "dir") and "is a folder" in body["error"]


@pytest.fixture
def mounts() -> Iterator[list[Path]]:
    made: list[Path] = []
    yield made
    for point in reversed(made):
        subprocess.run(["umount", "-l", str(point)], check=False)


def _read_only(folder: Path, mounts: list[Path]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)], check=True)
    mounts.append(folder)
    (folder / "old.txt").write_text("old\n")
    subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
    return folder


@needs_root
@pytest.mark.parametrize(("name", "argv"), FILE_OUTPUTS, ids=[n for n, _ in FILE_OUTPUTS])
@pytest.mark.parametrize("target", ["new.txt", "old.txt", "sub/new.txt"])
def test_file_output_on_a_read_only_file_system(
    here: Path, mounts: list[Path], name: str, argv: list[str], target: str
) -> None:
    ro = _read_only(here / "ro", mounts)
    res = run(*_argv(argv, ro / target, here))
    _one_line_error(res, "read-only file system")
    assert sorted(p.name for p in ro.iterdir()) == ["old.txt"]
    assert (ro / "old.txt").read_text() == "old\n"


@needs_root
@pytest.mark.parametrize(("name", "argv"), FILE_OUTPUTS, ids=[n for n, _ in FILE_OUTPUTS])
def test_a_full_disk_leaves_the_old_file(
    here: Path, mounts: list[Path], name: str, argv: list[str]
) -> None:
    """A real full disk (a tmpfs filled up): the old file stays whole, no temporary left."""
    small = here / "small"
    small.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(small)], check=True)
    mounts.append(small)
    out = small / "out.txt"
    out.write_text("old\n")
    with open(small / ".filler", "wb", buffering=0) as handle:
        for chunk in (4096, 1):
            try:
                while True:
                    handle.write(b"\0" * chunk)
            except OSError:
                pass
    res = run(*_argv(argv, out, here))
    _one_line_error(res, "no space left on the device")
    assert out.read_text() == "old\n"
    assert sorted(p.name for p in small.iterdir()) == [".filler", "out.txt"]


# ---- folder outputs -----------------------------------------------------------------------


def _ws(here: Path) -> None:
    workspace.init(here / "ws")
    shutil.copyfile(CONFIG_DATA, here / "ws" / workspace.CONFIG_NAME)


@pytest.mark.parametrize(("name", "argv"), FOLDER_OUTPUTS, ids=[n for n, _ in FOLDER_OUTPUTS])
@pytest.mark.parametrize("where", ["new", "nested", "empty"])
def test_folder_output_that_works(here: Path, name: str, argv: list[str], where: str) -> None:
    out = here / ("a/b/out" if where == "nested" else "out")
    if where == "empty":
        out.mkdir()
    res = run(*_argv(argv, out, here))
    assert res.exit_code == 0, res.output
    assert any(out.iterdir())


FOLDER_REFUSED: dict[str, tuple[Callable[[Path], Path], tuple[str, ...]]] = {
    "a file": (lambda h: (h / "file").write_text("x") and h / "file", ()),
    "through a file": (
        lambda h: (h / "file").write_text("x") and h / "file" / "out",
        ("is a file, not a folder",),
    ),
    "FIFO": (lambda h: os.mkfifo(h / "fifo") or h / "fifo", ()),
    "character device": (lambda h: _node(h / "null", stat.S_IFCHR, 1, 3, "/dev/null"), ()),
    "/proc": (lambda h: Path("/proc/self/gpudecide-ev"), ("proc file system",)),
    "/sys": (lambda h: Path("/sys/gpudecide-ev"), ("sysfs file system",)),
}


@pytest.mark.parametrize(("name", "argv"), FOLDER_OUTPUTS, ids=[n for n, _ in FOLDER_OUTPUTS])
@pytest.mark.parametrize("klass", list(FOLDER_REFUSED))
def test_folder_output_refused_by_class(here: Path, name: str, argv: list[str], klass: str) -> None:
    make, words = FOLDER_REFUSED[klass]
    out = make(here)
    before = _fingerprint(out) if os.path.lexists(out) else None
    res = run(*_argv(argv, out, here))
    _one_line_error(res, *words)
    if before is not None:
        assert _fingerprint(out) == before
    assert not (here / "evidence").exists() and not (here / "ev").exists()
    assert not [p for p in here.iterdir() if ".partial-" in p.name]  # no copy begun


@needs_root
@pytest.mark.parametrize(("name", "argv"), FOLDER_OUTPUTS, ids=[n for n, _ in FOLDER_OUTPUTS])
@pytest.mark.parametrize("target", ["", "sub"])
def test_folder_output_on_a_read_only_file_system(
    here: Path, mounts: list[Path], name: str, argv: list[str], target: str
) -> None:
    ro = _read_only(here / "ro", mounts)
    out = ro / target if target else ro
    if "--source" in argv and not target:
        out = ro / "copy"
    res = run(*_argv(argv, out, here))
    _one_line_error(res, "read-only file system")
    assert sorted(p.name for p in ro.iterdir()) == ["old.txt"]
    assert not (here / "ev").exists()


def test_workspace_evidence_folder_refused_before_the_copy(here: Path) -> None:
    """The workspace's own evidence folder is checked before anything is copied."""
    _ws(here)
    shutil.rmtree(here / "ws" / "evidence")
    (here / "ws" / "evidence").write_text("in the way")
    res = run("audit", "copy", "--source", str(here / "run"), "-w", str(here / "ws"))
    _one_line_error(res, str(here / "ws" / "evidence"), "is not a folder")
    assert not (here / "copy").exists()


# ---- inputs: FIFOs, devices and kernel file systems ----------------------------------------

INPUTS: dict[str, Callable[[Path], Path]] = {
    "FIFO": lambda h: os.mkfifo(h / "fifo") or h / "fifo",
    "character device": lambda h: _node(h / "zero", stat.S_IFCHR, 1, 5, "/dev/zero"),
    "/proc": lambda h: Path("/proc"),
    "/proc/self": lambda h: Path("/proc/self"),
    "/proc file": lambda h: Path("/proc/self/status"),
    "/proc/kmsg": lambda h: Path("/proc/kmsg"),
    "/sys": lambda h: Path("/sys/kernel"),
}


@pytest.mark.parametrize("klass", list(INPUTS))
@pytest.mark.parametrize(
    "argv",
    [
        ["audit", "IN", "--evidence-dir", "ev"],
        ["audit", "copy", "--source", "IN", "--evidence-dir", "ev"],
        ["audit", "copy", "--source", "file://IN", "--evidence-dir", "ev"],
        ["hash", "IN"],
        ["hash", "run", "--verify", "IN"],
        ["manifest", "create", "IN", "--out", "m2.json"],
        ["manifest", "verify", "IN", "m.json"],
        ["manifest", "verify", "run", "IN"],
        ["manifest", "lint", "IN"],
        ["manifest", "provenance", "IN"],
        ["audit", "run", "--expect", "IN", "--evidence-dir", "ev"],
        ["audit", "run", "--retention", "IN", "--evidence-dir", "ev"],
    ],
    ids=lambda a: " ".join(a) if isinstance(a, list) else a,
)
def test_an_input_that_is_no_file_is_refused_without_hanging(
    here: Path, argv: list[str], klass: str
) -> None:
    given = INPUTS[klass](here)
    args = [a.replace("IN", str(given)) for a in argv]
    res = run(*args)
    _one_line_error(res)
    assert not (here / "ev").exists() and not (here / "copy").exists()
    assert not (here / "m2.json").exists()


def test_a_local_source_lists_what_it_does_not_copy(here: Path) -> None:
    """Links, FIFOs and devices inside a local --source are skipped with the reason, never
    read (a FIFO would block, a link may point anywhere)."""
    src = here / "run"
    os.mkfifo(src / "pipe")
    (src / "passwd").symlink_to("/etc/passwd")
    _node(src / "zero", stat.S_IFCHR, 1, 5, None)
    res = run("audit", "copy", "--source", str(src), "--evidence-dir", "ev", "--json")
    assert res.exit_code == 0, res.output
    body = json.loads(res.stdout)
    skipped = {s["path"]: s["reason"] for s in body["skipped"]}
    assert set(skipped) == {"pipe", "passwd", "zero"}
    assert "links are not followed" in skipped["passwd"]
    assert sorted(p.name for p in (here / "copy").iterdir()) == ["config.json", "notes.txt"]


@needs_root
def test_a_kernel_file_system_inside_a_tree_is_skipped(here: Path, mounts: list[Path]) -> None:
    """/proc bound inside the folder hashed: listed as skipped, never walked."""
    inside = here / "run" / "p"
    inside.mkdir()
    subprocess.run(["mount", "--bind", "/proc", str(inside)], check=True)
    mounts.append(inside)
    res = run("hash", "run", "--json")
    assert res.exit_code == 0, res.output
    body = json.loads(res.stdout)
    assert [s["path"] for s in body["skipped"]] == ["p/"]
    assert "proc file system" in body["skipped"][0]["reason"]
    assert {f["path"] for f in body["files"]} == {"config.json", "notes.txt"}


def test_special_filesystem_names_the_kind() -> None:
    assert places.special_filesystem(Path("/proc/self/status")) == "proc"
    assert places.special_filesystem(Path("/sys/kernel")) == "sysfs"
    assert places.special_filesystem(Path("/proc/no/such/file")) == "proc"
    assert places.special_filesystem(Path.cwd()) is None
    assert places.special_filesystem(Path("/tmp/not-there/x")) is None
