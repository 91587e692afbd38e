"""`gpudecide drill` under attack (issue 28): every storage URL form, drills.yaml numbers and
files that are not files, a drill stopped by a signal, a mount an earlier killed run left.

Each rule beside a twin that must not trigger; S3 is a real S3 API (moto_server on
127.0.0.1); the mounts are real tmpfs mounts where this machine allows them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from gpudecide import workspace
from gpudecide.drills import drill_run, faults, storage_url
from gpudecide.drills.cli import register
from gpudecide.errors import InputError


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """The root app, as the main CLI builds it."""

    register(app)
    return app


@pytest.fixture
def ws_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "ws"
    workspace.init(root)
    monkeypatch.chdir(root)
    return root


def _no_records(root: Path) -> bool:
    return not list((root / "evidence").glob("*.json")) and not (root / "drills").exists()


# --- every storage URL form ---

KEY_ID, SECRET = "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (None, None),
        ("node", "node"),
        ("s3://ckpt-bucket/team/ft", "s3://ckpt-bucket/team/ft"),
        ("s3://ckpt-bucket", "s3://ckpt-bucket"),
        ("s3://ckpt-bucket/", "s3://ckpt-bucket"),
        ("s3://a.b-c1/x//y/", "s3://a.b-c1/x//y"),
    ],
)
def test_storage_forms_that_are_storage(given: str | None, expected: str | None) -> None:
    assert storage_url.check(given, field="--storage") == expected


def test_folders_that_are_storage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder, one to be made, a relative one (made absolute), file:// and /dev/shm (a
    tmpfs, a real file system)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "there").mkdir()
    assert storage_url.check("there", field="--storage") == str(tmp_path / "there")
    assert storage_url.check(str(tmp_path / "new/deep"), field="--storage") == str(
        tmp_path / "new/deep"
    )
    assert storage_url.check(f"file://{tmp_path}/there", field="--storage") == str(
        tmp_path / "there"
    )
    if Path("/dev/shm").is_dir():
        assert (
            storage_url.check("/dev/shm/gpudecide-x", field="--storage") == "/dev/shm/gpudecide-x"
        )


def _bad_forms(tmp_path: Path) -> list[tuple[str, str]]:
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    return [
        (str(a_file), "is not a folder"),
        (str(fifo), "is not a folder"),
        ("/dev/null", "file system|is not a folder"),
        ("/proc", "proc file system"),
        ("/proc/self/fd", "proc file system"),
        ("/sys/kernel/new-folder", "sysfs file system"),
        ("/dev/gpudecide-ckpt", "devtmpfs file system"),
        (f"file://{a_file}", "is not a folder"),
        ("file://other-host/x", "another host"),
        (f"s3://{KEY_ID}:{SECRET}@ckpt-bucket/ft", "credentials"),
        (f"s3://{KEY_ID}@ckpt-bucket/ft", "credentials"),
        ("s3://Ckpt_Bucket/ft", "bucket name"),
        ("s3://ab/ft", "bucket name"),
        ("s3://192.168.1.10/ft", "bucket name"),
        ("s3://a..b/ft", "bucket name"),
        ("s3://-bucket/ft", "bucket name"),
        ("s3:///ft", "bucket name"),
        ("s3://ckpt-bucket/ft?versionId=1", "query"),
        ("gs://ckpt/ft", "scheme gs://"),
        ("http://127.0.0.1:9000/ckpt", "scheme http://"),
        ("ftp://host/x", "scheme ftp://"),
        ("memory://x", "scheme memory://"),
        ("", "empty"),
        ("   ", "empty"),
    ]


def test_every_storage_form_that_is_no_storage(tmp_path: Path) -> None:
    """One line naming the field; credentials in the URL never repeated, not even the key
    id or the bucket's spelling around them."""
    for given, said in _bad_forms(tmp_path):
        if "devtmpfs" in said and storage_url.filesystem_type(Path("/dev")) != "devtmpfs":
            continue
        with pytest.raises(InputError) as exc:
            storage_url.check(given, field="--storage")
        line = exc.value.one_line()
        assert exc.value.field == "--storage", (given, line)
        assert any(part in line for part in said.split("|")), (given, line)
        assert KEY_ID not in line and SECRET not in line and "\n" not in line


def test_a_bad_storage_from_drills_yaml_names_its_line(ws_root: Path) -> None:
    (ws_root / "drills.yaml").write_text("version: 1\nstorage: /proc/ckpt\n")
    r = CliRunner().invoke(_app(), ["drill", "gpu-delay"])
    assert r.exit_code == 2 and "drills.yaml:2: field 'storage'" in r.output, r.output
    assert _no_records(ws_root)


@pytest.mark.parametrize("given", ["/proc", "gs://x/y", f"s3://{KEY_ID}:{SECRET}@b-ucket/x"])
def test_a_bad_storage_flag_is_exit_2_with_no_record(ws_root: Path, given: str) -> None:
    r = CliRunner().invoke(_app(), ["drill", "node-loss", "--storage", given])
    assert r.exit_code == 2, r.output
    assert "field '--storage'" in r.output and len(r.output.strip().splitlines()) == 1
    assert KEY_ID not in r.output and SECRET not in r.output
    assert _no_records(ws_root)


# --- S3 for real: a moto_server on loopback ---


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    """A moto_server without authentication, with one bucket."""
    exe = Path(sys.executable).parent / "moto_server"
    if not exe.exists():
        pytest.skip("moto_server is not installed")
    port = _free_port()
    proc = subprocess.Popen(
        [str(exe), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"{url}/moto-api/", timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "moto_server did not start"
                time.sleep(0.1)
        req = urllib.request.Request(f"{url}/drill-ckpt", method="PUT")
        urllib.request.urlopen(req).close()
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _s3_env(monkeypatch: pytest.MonkeyPatch, endpoint: str, *, keys: bool = True) -> None:
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    if keys:
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    else:
        monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
        monkeypatch.delenv("AWS_SECRET_ACCESS_KEY", raising=False)


def test_s3_that_answers_is_storage(s3_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _s3_env(monkeypatch, s3_endpoint)
    storage_url.probe_s3("s3://drill-ckpt/ft", field="--storage")
    storage_url.probe_s3("s3://drill-ckpt", field="--storage")


def test_s3_that_does_not_answer_is_one_line(
    s3_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A closed port, no credentials, a bucket that is not there: each one line naming the
    endpoint (never a key), in seconds."""
    _s3_env(monkeypatch, f"http://127.0.0.1:{_free_port()}")
    started = time.monotonic()
    with pytest.raises(InputError, match=r"cannot reach s3://drill-ckpt at http://127\.0\.0\.1:"):
        storage_url.probe_s3("s3://drill-ckpt/ft", field="--storage")
    assert time.monotonic() - started < 20
    _s3_env(monkeypatch, s3_endpoint, keys=False)
    with pytest.raises(InputError, match="no credentials for s3://drill-ckpt"):
        storage_url.probe_s3("s3://drill-ckpt/ft", field="--storage")
    _s3_env(monkeypatch, s3_endpoint)
    with pytest.raises(InputError, match="no bucket not-a-bucket"):
        storage_url.probe_s3("s3://not-a-bucket", field="--storage")


def test_a_drill_on_s3_that_does_not_answer_writes_nothing(
    ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _s3_env(monkeypatch, f"http://127.0.0.1:{_free_port()}")
    r = CliRunner().invoke(_app(), ["drill", "node-loss", "--storage", "s3://drill-ckpt/ft"])
    assert r.exit_code == 2 and "cannot reach" in r.output and "Traceback" not in r.output
    assert _no_records(ws_root)


def test_node_loss_on_real_s3_resumes_and_states_the_bucket(
    ws_root: Path, s3_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The drill on the bucket itself: checkpoints under its own prefix of the storage, the
    record's contour naming the s3:// URL (the option's declared storage can match it)."""
    _s3_env(monkeypatch, s3_endpoint)
    run = drill_run.run_drills(
        "node-loss", ws=workspace.load(ws_root), storage="s3://drill-ckpt/ft"
    )
    result = run.results[0]
    assert result.verdict == "pass", result.status
    record = json.loads(run.evidence[0].read_text())
    stored = record["figures"]["contour"]["storage"]
    assert stored.startswith("s3://drill-ckpt/ft/") and stored.endswith("/node-loss")
    assert record["figures"]["external_storage"] == stored


# --- drills.yaml: every number field, and files that are not files ---


@pytest.mark.parametrize("value", ["-1", "0", "1e20", "true", ".nan", ".inf", "'120'", "[]"])
def test_every_drills_yaml_number_that_cannot_be(ws_root: Path, value: str) -> None:
    (ws_root / "drills.yaml").write_text(f"version: 1\ntimeout_s: {value}\n")
    with pytest.raises(InputError) as exc:
        drill_run.load_config(workspace.load(ws_root))
    assert exc.value.line == 2
    # .nan and .inf are refused by the YAML reader itself, before any field is known.
    assert exc.value.field == ("timeout_s" if value not in (".nan", ".inf") else None)


def test_drills_yaml_numbers_that_can_be(ws_root: Path) -> None:
    for value in ("1", "0.5", "86400"):
        (ws_root / "drills.yaml").write_text(f"version: 1\ntimeout_s: {value}\n")
        assert drill_run.load_config(workspace.load(ws_root))[0].timeout_s == float(value)


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_drills_yaml_that_is_no_regular_file_is_bad_input(ws_root: Path, kind: str) -> None:
    """A FIFO, a device or a folder named drills.yaml is refused by name: the drills never
    run on defaults instead (issue 28)."""
    target = ws_root / "drills.yaml"
    target.unlink()
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "device":
        target.symlink_to("/dev/zero")
    else:
        target.mkdir()
    r = CliRunner().invoke(_app(), ["drill", "gpu-delay"])
    assert r.exit_code == 2 and "drills.yaml" in r.output and "Traceback" not in r.output
    assert _no_records(ws_root)


# --- the disk-full drill's mount: never left behind ---


def _can_mount(tmp_path: Path) -> bool:
    probe = tmp_path / "probe-mount"
    probe.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe)], capture_output=True
    )
    if done.returncode == 0:
        subprocess.run(["umount", str(probe)], check=False)
    return done.returncode == 0


def _mounted_under(root: Path) -> list[Path]:
    return faults.stale_mounts(root)


def test_a_stale_mount_of_a_killed_run_is_found_and_removed(tmp_path: Path) -> None:
    """SIGKILL runs no handler: the next disk-full drill finds the small filesystem under the
    drills' folder and unmounts it (and its loop image); a mount elsewhere is left alone."""
    if not _can_mount(tmp_path):
        pytest.skip("mount is not allowed here")
    drills = tmp_path / "drills"
    stale = drills / "20260101T000000000000Z" / "disk-full" / faults.MOUNT_NAME
    elsewhere = tmp_path / "other" / faults.MOUNT_NAME
    for point in (stale, elsewhere):
        point.mkdir(parents=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(point)], check=True)
    image = stale.with_name(stale.name + ".img")
    image.write_bytes(b"x")
    try:
        assert _mounted_under(drills) == [stale]
        found = faults.clear_stale(drills)
        assert found == [faults.Stale(str(stale), True, None)]
        assert _mounted_under(drills) == [] and not image.exists()
        assert _mounted_under(tmp_path / "other") == [elsewhere]  # twin: not ours, kept
    finally:
        for point in (stale, elsewhere):
            subprocess.run(["umount", "-l", str(point)], check=False, capture_output=True)


def test_a_drill_killed_with_sigterm_leaves_no_mount(ws_root: Path) -> None:
    """`kill` (SIGTERM) while the disk-full drill has its small filesystem mounted: the
    rollback unmounts it before the process ends (exit 130, as for Ctrl-C), and no record is
    written for a drill that did not finish. The real command, a real signal."""
    sig = signal.SIGTERM
    if not _can_mount(ws_root):
        pytest.skip("mount is not allowed here")
    env = {k: v for k, v in os.environ.items() if k != "GPUDECIDE_LANG"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpudecide", "drill", "disk-full"],
        cwd=ws_root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not _mounted_under(ws_root / "drills"):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the drill never mounted its filesystem"
            time.sleep(0.05)
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        for point in _mounted_under(ws_root / "drills"):
            subprocess.run(["umount", "-l", str(point)], check=False)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert _mounted_under(ws_root / "drills") == []
    journals = list((ws_root / "drills").glob("*/disk-full/journal.json"))
    assert not list((ws_root / "evidence").glob("*.json"))
    assert journals == [] or all(json.loads(j.read_text()) for j in journals)


_UNDER_NOHUP = """
import os, signal, time
from gpudecide.drills.journal import stopped_by_signals
try:
    with stopped_by_signals():
        os.kill(os.getpid(), signal.SIGHUP)
        time.sleep(0.2)
        print("hangup ignored", flush=True)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
        print("SIGTERM did not stop it", flush=True)
except KeyboardInterrupt as exc:
    print(f"stopped by {exc}", flush=True)
"""


def test_a_game_day_under_nohup_survives_a_hangup_and_still_stops_on_sigterm() -> None:
    """`nohup gpudecide drill all`: the hangup the person asked to ignore stays ignored (a
    closed terminal does not end the game day); `kill` still unwinds it. A real nohup, real
    signals."""
    done = subprocess.run(
        ["nohup", sys.executable, "-c", _UNDER_NOHUP],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.splitlines() == ["hangup ignored", "stopped by SIGTERM"], done.stderr
    assert done.returncode == 0


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_every_stop_signal_runs_the_rollback(tmp_path: Path, sig: signal.Signals) -> None:
    """In this process: the signal arrives while the filesystem is mounted; the drill unwinds
    as Ctrl-C does and its rollback unmounts before the KeyboardInterrupt leaves it."""
    import threading

    from gpudecide.drills import disk_full
    from gpudecide.drills.journal import stopped_by_signals
    from gpudecide.drills.runner import DrillContext

    if not _can_mount(tmp_path):
        pytest.skip("mount is not allowed here")
    drills = tmp_path / "drills"
    seen: list[bool] = []

    def stop_when_mounted() -> None:
        deadline = time.monotonic() + 60
        while not faults.stale_mounts(drills) and time.monotonic() < deadline:
            time.sleep(0.01)
        seen.append(bool(faults.stale_mounts(drills)))
        if seen[-1]:  # never a stray SIGTERM to a process whose drill is over
            os.kill(os.getpid(), sig)

    # A signal the process inherited as ignored stays ignored (the nohup test): a suite
    # started in the background (`pytest &` ignores SIGINT, `nohup` SIGHUP) would see no
    # stop at all. This test is about a process that was not told to ignore them.
    default = signal.default_int_handler if sig is signal.SIGINT else signal.SIG_DFL
    inherited = signal.signal(sig, default)
    watcher = threading.Thread(target=stop_when_mounted, daemon=True)
    watcher.start()
    try:
        raised = False
        try:
            with stopped_by_signals():
                disk_full.run(DrillContext(root=drills / "d", timeout_s=60))
        except KeyboardInterrupt:
            raised = True
        watcher.join(5)
        state = {
            "seen": seen,
            "handler": signal.getsignal(sig),
            "blocked": signal.pthread_sigmask(signal.SIG_BLOCK, []),
            "pending": signal.sigpending(),
            "threads": [t.name for t in threading.enumerate()],
        }
        assert raised and seen == [True], state
        assert faults.stale_mounts(drills) == []
    finally:
        signal.signal(sig, inherited)
        faults.clear_stale(drills)  # a failing run leaves nothing mounted behind


def test_an_evidence_folder_that_cannot_be_kept_stops_before_the_first_drill(
    ws_root: Path,
) -> None:
    """A file where the evidence folder should be: exit 2 before any job runs, so no drill
    happens whose record would be lost."""
    blocked = ws_root / "not-a-folder"
    blocked.write_text("x")
    r = CliRunner().invoke(_app(), ["drill", "gpu-delay", "--evidence-dir", str(blocked)])
    assert r.exit_code == 2 and "evidence folder" in r.output, r.output
    assert not (ws_root / "drills").exists()
