"""Damaged evidence, edited records, echoed secrets, markup in messages, BOM logs
(issue 14 items 8, 9, 13, 14)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpudecide import evidence as ev
from gpudecide.cli import app
from gpudecide.errors import InputError, excerpt
from gpudecide.jobs.tabular import read_tabular

LOG = (
    "job_id,gpu_count,state,submit,start,end\n"
    "a,4,COMPLETED,2026-01-05T09:00:00Z,2026-01-05T10:00:00Z,2026-01-05T12:00:00Z\n"
)
SHADOW = (
    "root:$6$Zq8Xb1cd$Hk2v0wLh6c3QyE9r7Yx1uVnB5sT0aP4dF8gJ2kM6nR9tW3zC1xE7vL5qO0iU2yH4:"
    "19000:0:99999:7:::\n"
    "daemon:*:19000:0:99999:7:::\n"
)
SECRET_PARTS = ("$6$", "Zq8Xb1cd", "Hk2v0wLh6c3Q", "19000:0:99999")


def _ws_with_profile(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    assert CliRunner().invoke(app, ["init", str(ws)]).exit_code == 0
    (tmp_path / "jobs.csv").write_text(LOG)
    res = CliRunner().invoke(app, ["profile", str(tmp_path / "jobs.csv"), "-w", str(ws)])
    assert res.exit_code == 0, res.output
    return ws


# ---- class 13: damaged records --------------------------------------------------------------


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: len(text) // 2],  # truncated
        lambda text: "\x00\x89PNG\r\n\x1a\n" + text,  # binary
        lambda text: text.replace('"figures": {', '"figures": {"a": NaN, ', 1),
        lambda text: "[" * 10_000 + "]" * 10_000,  # nested beyond the bound
    ],
)
def test_damaged_record_is_listed_and_the_rest_go_on(tmp_path: Path, damage: object) -> None:
    ws = _ws_with_profile(tmp_path)
    good = next((ws / "evidence").glob("profile-*.json"))
    broken = ws / "evidence" / "queue-0000000000000000.json"
    broken.write_bytes(damage(good.read_text()).encode("utf-8", "surrogatepass"))  # type: ignore[operator]
    records, damaged = ev.scan(ws / "evidence")
    assert [r.id for r in records] == [good.stem]
    assert [d.path for d in damaged] == [broken]
    assert str(broken) in damaged[0].reason and "\n" not in damaged[0].reason
    assert [r.id for r in ev.load_all(ws / "evidence")] == [good.stem]  # old callers go on
    res = CliRunner().invoke(app, ["report", "-w", str(ws)])
    assert res.exit_code == 0, res.output
    assert good.stem in (ws / "report" / "report.json").read_text()


def test_fifo_among_records_is_damaged_not_a_hang(tmp_path: Path) -> None:
    import os

    ws = _ws_with_profile(tmp_path)
    os.mkfifo(ws / "evidence" / "replay-1111111111111111.json")
    records, damaged = ev.scan(ws / "evidence")
    assert len(records) == 1 and len(damaged) == 1 and "FIFO" in damaged[0].reason


def test_edited_record_is_refused_as_an_input(tmp_path: Path) -> None:
    ws = _ws_with_profile(tmp_path)
    path = next((ws / "evidence").glob("profile-*.json"))
    body = json.loads(path.read_text())
    body["figures"]["gpu_hours_total"] = 1.0
    path.write_text(json.dumps(body, indent=2))
    assert ev.load(path).figures["gpu_hours_total"] == 1.0  # reading for a listing works
    with pytest.raises(InputError, match="edited after it was written") as info:
        ev.load(path, verify=True)
    assert info.value.path == str(path) and info.value.field == "content_sha256"
    state, _ = ev.freshness(ev.load(path), ws)
    assert state is ev.Freshness.TAMPERED


def test_record_over_the_size_bound_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _ws_with_profile(tmp_path)
    monkeypatch.setattr(ev, "MAX_RECORD_BYTES", 100)
    records, damaged = ev.scan(ws / "evidence")
    assert records == [] and "larger than" in damaged[0].reason


# ---- class 8: no content echoed ------------------------------------------------------------


@pytest.mark.parametrize("name", ["jobs.csv", "jobs.jsonl", "jobs.json"])
def test_a_secret_file_given_as_a_log_is_not_echoed(tmp_path: Path, name: str) -> None:
    ws = tmp_path / "ws"
    assert CliRunner().invoke(app, ["init", str(ws)]).exit_code == 0
    path = tmp_path / name
    path.write_text(SHADOW)
    res = CliRunner().invoke(app, ["profile", str(path), "-w", str(ws), "--skip-bad-rows"])
    assert res.exit_code == 2
    assert str(path) in res.stderr
    for part in SECRET_PARTS:
        assert part not in res.output, res.output


def test_a_secret_file_given_as_yaml_is_not_echoed(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    assert CliRunner().invoke(app, ["init", str(ws)]).exit_code == 0
    (ws / "gpudecide.yaml").write_text(SHADOW)
    res = CliRunner().invoke(app, ["evidence", "-w", str(ws)])
    assert res.exit_code == 2
    for part in SECRET_PARTS:
        assert part not in res.output, res.output


def test_field_values_are_quoted_short_and_masked(tmp_path: Path) -> None:
    path = tmp_path / "jobs.csv"
    path.write_text("job_id,gpu_count,state\na,4,$6$Zq8Xb1cd$Hk2v0wLh6c3QyE9r7Yx1\n")
    with pytest.raises(InputError) as info:
        read_tabular(path, fmt="csv")
    text = info.value.one_line()
    assert "'?6?Zq8Xb1cd?…'" in text and "Hk2v0" not in text
    assert excerpt("x" * 100) == "'" + "x" * 12 + "…'"


# ---- class 9: markup and emoji codes in user text ------------------------------------------


def test_markup_and_emoji_codes_in_paths_print_verbatim(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    assert CliRunner().invoke(app, ["init", str(ws)]).exit_code == 0
    folder = tmp_path / "[bold red]x"
    folder.mkdir()
    path = folder / "file:100:.csv"
    path.write_text(LOG + "b,4,COMPLETED,2026-01-05T09:00:00Z,x,\n")
    res = CliRunner().invoke(app, ["profile", str(path), "-w", str(ws)])
    assert res.exit_code == 2
    assert f"{path}:3: field 'start'" in res.stderr, res.stderr
    assert "\U0001f4af" not in res.stderr  # the :100: emoji


# ---- class 14: logs with a byte-order mark -------------------------------------------------


def test_csv_and_jsonl_with_a_bom_are_read(tmp_path: Path) -> None:
    csv_path = tmp_path / "jobs.csv"
    csv_path.write_bytes(b"\xef\xbb\xbf" + LOG.encode())
    assert read_tabular(csv_path, fmt="csv").table.num_rows == 1
    row = {"job_id": "a", "gpu_count": 4, "state": "completed"}
    jsonl = tmp_path / "jobs.jsonl"
    jsonl.write_bytes(b"\xef\xbb\xbf" + json.dumps(row).encode() + b"\n")
    assert read_tabular(jsonl, fmt="jsonl").table.num_rows == 1
    pods = tmp_path / "pods.json"
    pods.write_bytes(b"\xef\xbb\xbf" + b'{"kind": "PodList", "items": []}')
    from gpudecide.jsonio import read_json

    assert read_json(pods) == {"kind": "PodList", "items": []}


def test_evidence_command_lists_a_damaged_record_and_the_rest(tmp_path: Path) -> None:
    ws = _ws_with_profile(tmp_path)
    good = next((ws / "evidence").glob("profile-*.json"))
    broken = ws / "evidence" / "queue-0000000000000000.json"
    broken.write_text(good.read_text()[:100])
    res = CliRunner().invoke(app, ["evidence", "-w", str(ws), "--json"])
    assert res.exit_code == 1
    assert good.stem in res.stdout and broken.name in res.stdout


def test_cost_refuses_an_edited_profile_record(tmp_path: Path) -> None:
    ws = _ws_with_profile(tmp_path)
    path = next((ws / "evidence").glob("profile-*.json"))
    body = json.loads(path.read_text())
    body["figures"]["gpu_hours_total"] = 1.0
    path.write_text(json.dumps(body, indent=2))
    res = CliRunner().invoke(app, ["cost", str(ws), "--profile", str(path)])
    assert res.exit_code == 2
    assert "edited after it was written" in res.stderr and str(path) in res.stderr
    assert not list((ws / "evidence").glob("cost-*.json"))
