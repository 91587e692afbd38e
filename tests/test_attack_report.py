"""The report's three files are one unit (issue 14 item 12): a full disk or a kill during
`report` leaves the previous set or the new one, never a mix, never a part.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpudecide.cli import app

NAMES = ("index.html", "report.md", "report.json")
LOG = (
    "job_id,gpu_count,state,submit,start,end\n"
    "a,4,COMPLETED,2026-01-05T09:00:00Z,2026-01-05T10:00:00Z,2026-01-05T12:00:00Z\n"
)

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")


@pytest.fixture
def report_fs(tmp_path: Path) -> Iterator[Path]:
    """A workspace with evidence and a 1 MiB tmpfs for the report."""
    ws = tmp_path / "ws"
    assert CliRunner().invoke(app, ["init", str(ws)]).exit_code == 0
    (tmp_path / "jobs.csv").write_text(LOG)
    res = CliRunner().invoke(app, ["profile", str(tmp_path / "jobs.csv"), "-w", str(ws)])
    assert res.exit_code == 0, res.output
    mnt = tmp_path / "out"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], check=True)
    try:
        yield ws
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def _team(ws: Path, name: str) -> None:
    cfg = ws / "gpudecide.yaml"
    lines = [
        f'team: "{name}"' if ln.startswith("team:") else ln for ln in cfg.read_text().splitlines()
    ]
    cfg.write_text("\n".join(lines) + "\n")


def _teams(folder: Path) -> set[str]:
    """Which team each of the three files names: one name when the set is whole."""
    found = set()
    for name in NAMES:
        text = (folder / name).read_text()
        found |= {t for t in ("Team-Alpha", "Team-Beta") if t in text}
    return found


def test_report_on_a_full_disk_keeps_the_previous_set(report_fs: Path) -> None:
    ws = report_fs
    out = ws.parent / "out" / "report"
    _team(ws, "Team-Alpha")
    assert CliRunner().invoke(app, ["report", "-w", str(ws), "--out", str(out)]).exit_code == 0
    sizes = [(out / n).stat().st_size for n in NAMES]
    # Room for the first two files of a new set but not for the third.
    filler = ws.parent / "out" / ".filler"
    with open(filler, "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 4096)
        except OSError:
            pass
    os.truncate(filler, filler.stat().st_size - (sizes[0] + sizes[1] + 16384))
    _team(ws, "Team-Beta")
    res = CliRunner().invoke(app, ["report", "-w", str(ws), "--out", str(out)])
    assert res.exit_code == 2
    assert "no space left on the device" in res.stderr
    assert _teams(out) == {"Team-Alpha"}
    filler.unlink()
    assert CliRunner().invoke(app, ["report", "-w", str(ws), "--out", str(out)]).exit_code == 0
    assert _teams(out) == {"Team-Beta"}


def test_report_killed_at_any_moment_is_old_or_new(report_fs: Path) -> None:
    ws = report_fs
    out = ws.parent / "out" / "report"
    _team(ws, "Team-Alpha")
    assert CliRunner().invoke(app, ["report", "-w", str(ws), "--out", str(out)]).exit_code == 0
    env = dict(os.environ, NO_COLOR="1")
    for i, delay in enumerate((0.8, 1.2, 1.6, 2.0, 2.4, 2.8, 3.2, 4.0)):
        _team(ws, "Team-Beta" if i % 2 == 0 else "Team-Alpha")
        proc = subprocess.Popen(
            [sys.executable, "-m", "gpudecide", "report", "-w", str(ws), "--out", str(out)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert len(_teams(out)) == 1, f"mixed set after a kill at {delay} s"
