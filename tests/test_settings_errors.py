"""A bad setting from gpudecide.yaml is named by its file, line and key, not by a CLI flag
(issue 14 item 14); the same value given as a flag is named by the flag."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from gpudecide.cli import app

LOG = (
    "job_id,gpu_count,state,submit,start,end\n"
    "a,4,COMPLETED,2026-01-05T09:00:00Z,2026-01-05T10:00:00Z,2026-01-05T12:00:00Z\n"
)


def _ws(tmp_path: Path, old: str, new: str) -> Path:
    root = tmp_path / "ws"
    assert CliRunner().invoke(app, ["init", str(root)]).exit_code == 0
    config = root / "gpudecide.yaml"
    text = config.read_text()
    assert old in text
    config.write_text(text.replace(old, new))
    (tmp_path / "jobs.csv").write_text(LOG)
    return root


def _line(path: Path, needle: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if needle in ln)


def test_chain_pattern_from_the_workspace(tmp_path: Path) -> None:
    ws = _ws(tmp_path, "chain_pattern: null", 'chain_pattern: "^(?P<model>x)"')
    res = CliRunner().invoke(app, ["queue", str(tmp_path / "jobs.csv"), "-w", str(ws)])
    line = _line(ws / "gpudecide.yaml", 'chain_pattern: "^(?P<model>x)"')
    assert res.exit_code == 2
    assert f"{ws / 'gpudecide.yaml'}:{line}: field 'queue.chain_pattern'" in res.stderr
    flag = CliRunner().invoke(
        app, ["queue", str(tmp_path / "jobs.csv"), "-w", str(ws), "--chain-pattern", "("]
    )
    assert flag.exit_code == 2 and "field '--chain-pattern'" in flag.stderr


def test_pool_sizes_from_the_workspace(tmp_path: Path) -> None:
    ws = _ws(tmp_path, "  gpus: auto", '  gpus: "8,x"')
    res = CliRunner().invoke(app, ["replay", str(tmp_path / "jobs.csv"), "-w", str(ws)])
    line = _line(ws / "gpudecide.yaml", 'gpus: "8,x"')
    assert res.exit_code == 2
    assert f"{ws / 'gpudecide.yaml'}:{line}: field 'replay.gpus'" in res.stderr
    flag = CliRunner().invoke(
        app, ["replay", str(tmp_path / "jobs.csv"), "-w", str(ws), "--gpus", "0"]
    )
    assert flag.exit_code == 2 and "field '--gpus'" in flag.stderr


def test_a_fifo_as_the_log_is_refused_by_name_whatever_its_format(tmp_path: Path) -> None:
    import os

    for name, extra in (("jobs.log", []), ("jobs.txt", ["--format", "sacct"])):
        fifo = tmp_path / name
        os.mkfifo(fifo)
        res = CliRunner().invoke(app, ["profile", str(fifo), *extra])
        assert res.exit_code == 2
        assert f"{fifo}: is a FIFO (named pipe), not a regular file" in res.stderr
