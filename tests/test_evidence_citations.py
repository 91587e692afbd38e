"""Evidence an auditor can archive (SPEC D3, issue 10): records cite records by identity,
superseded records are apart and prunable, a moved workspace stays fresh."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpudecide import evidence as ev
from gpudecide.cli import app
from gpudecide.errors import InputError
from gpudecide.message import english

LOG = (
    "job_id,gpu_count,state,submit,start,end\n"
    "a,4,COMPLETED,2026-01-05T09:00:00Z,2026-01-05T10:00:00Z,2026-01-05T12:00:00Z\n"
    "b,2,COMPLETED,2026-01-06T09:00:00Z,2026-01-06T09:30:00Z,2026-01-06T15:00:00Z\n"
)


def _invoke(*args: str) -> dict[str, object]:
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code in (0, 1), result.output
    body: dict[str, object] = json.loads(result.stdout)
    return body


@pytest.fixture
def ws(demo_config_ws: Path) -> Path:
    return demo_config_ws


@pytest.fixture
def demo_config_ws(tmp_path: Path) -> Path:
    """A workspace with the demo's options and costs, a CSV log, profile and cost evidence."""
    from gpudecide.cost.demo import demo_costs_yaml
    from gpudecide.demo import CONFIG_DATA

    root = tmp_path / "ws"
    assert CliRunner().invoke(app, ["init", str(root)]).exit_code == 0
    (root / "gpudecide.yaml").write_bytes(CONFIG_DATA.read_bytes())
    (root / "costs.yaml").write_text(demo_costs_yaml())
    (root / "logs" / "jobs.csv").write_text(LOG)
    _invoke("profile", str(root / "logs" / "jobs.csv"), "-w", str(root), "--pool-gpus", "8")
    _invoke("cost", str(root))
    return root


def _freshness(root: Path) -> dict[str, str]:
    body = _invoke("evidence", "-w", str(root))
    rows = body["records"]
    assert isinstance(rows, list)
    return {r["kind"]: r["freshness"] for r in rows if not r["superseded"]}


def test_cost_cites_the_profile_by_identity(ws: Path) -> None:
    cost = ev.load(next((ws / "evidence").glob("cost-*.json")))
    cited = [i for i in cost.inputs if i.record_id]
    profile = ev.load(next((ws / "evidence").glob("profile-*.json")))
    assert [(i.record_id, i.sha256) for i in cited] == [(profile.id, profile.identity_sha256())]


def test_an_unchanged_rerun_leaves_dependents_fresh(ws: Path) -> None:
    _invoke("profile", str(ws / "logs" / "jobs.csv"), "-w", str(ws), "--pool-gpus", "8")
    assert len(list((ws / "evidence").glob("profile-*.json"))) == 1  # same identity, same file
    assert _freshness(ws) == {"profile": "fresh", "cost": "fresh"}
    result = CliRunner().invoke(app, ["evidence", "-w", str(ws)])
    assert result.exit_code == 0


def test_a_changed_input_marks_dependents_stale(ws: Path) -> None:
    (ws / "logs" / "jobs.csv").write_text(LOG.replace("15:00:00", "16:00:00"))
    states = _freshness(ws)
    assert states == {"profile": "stale", "cost": "stale"}
    body = _invoke("evidence", "-w", str(ws))
    cost_row = next(r for r in body["records"] if r["kind"] == "cost")  # type: ignore[union-attr]
    assert any("cites a record that is stale" in p for p in cost_row["problems"])
    assert CliRunner().invoke(app, ["evidence", "-w", str(ws)]).exit_code == 1


def test_superseded_records_are_apart_and_pruned(ws: Path) -> None:
    (ws / "logs" / "jobs.csv").write_text(LOG.replace("15:00:00", "16:00:00"))
    _invoke("profile", str(ws / "logs" / "jobs.csv"), "-w", str(ws), "--pool-gpus", "8")
    _invoke("cost", str(ws))
    body = _invoke("evidence", "-w", str(ws))
    rows = body["records"]
    assert isinstance(rows, list)
    old = [r for r in rows if r["superseded"]]
    assert {r["kind"] for r in old} == {"profile", "cost"}
    assert all(r["freshness"] == "superseded" for r in old)
    assert [r["superseded"] for r in rows] == sorted(r["superseded"] for r in rows)  # apart
    assert body["all_fresh"] is True
    pruned = _invoke("evidence", "-w", str(ws), "--prune")
    assert len(pruned["pruned"]) == 2  # type: ignore[arg-type]
    assert len(list((ws / "evidence").glob("*.json"))) == 2


def test_a_moved_workspace_stays_fresh(ws: Path, tmp_path: Path) -> None:
    moved = tmp_path / "elsewhere" / "ws"
    shutil.copytree(ws, moved)
    shutil.rmtree(ws)
    assert _freshness(moved) == {"profile": "fresh", "cost": "fresh"}
    for path in (moved / "evidence").glob("*.json"):
        assert str(tmp_path) not in path.read_text()


def test_an_edited_cited_record_is_refused_and_reported(ws: Path) -> None:
    path = next((ws / "evidence").glob("profile-*.json"))
    body = json.loads(path.read_text())
    body["figures"]["gpu_hours_total"] = 1.0
    path.write_text(json.dumps(body))
    states = _freshness(ws)
    assert states["profile"] == "tampered" and states["cost"] == "bad_input"


def test_one_snapshot_reads_each_input_once(
    demo_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ledger of the demo hashes each input file and reads each cited record once,
    however many records cite it, and says what checking each record alone says; a file
    changed after one snapshot is seen by the next (nothing is kept across snapshots)."""
    from gpudecide import ledger, workspace

    ws = workspace.load(demo_copy)
    records, damaged = ev.scan(ws.evidence_dir)
    alone = {r.id: ev.freshness(r, demo_copy) for r in records}
    hashed: list[Path] = []
    loaded: list[Path] = []
    real_hash, real_load = ev.sha256_path, ev.load

    def counting_hash(p: Path, *a: object, **k: object) -> tuple[str, int]:
        hashed.append(Path(p))
        return real_hash(p, *a, **k)  # type: ignore[arg-type]

    def counting_load(p: Path, **k: bool) -> ev.Evidence:
        loaded.append(Path(p))
        return real_load(p, **k)

    monkeypatch.setattr(ev, "sha256_path", counting_hash)
    monkeypatch.setattr(ev, "load", counting_load)
    rows = ledger.ledger_rows(records, damaged, demo_copy, ws.config.options)
    assert len(hashed) == len(set(hashed)) > 5
    assert len(loaded) == len(set(loaded)) > 3
    cited = sum(1 for r in records for ref in r.inputs if ref.record_id is not None)
    assert cited > len(loaded)  # some records are cited more than once: read once all the same
    by_id = {row["id"]: row for row in rows}
    for rid, (state, problems) in alone.items():
        if by_id[rid]["freshness"] != "superseded":
            assert by_id[rid]["freshness"] == state.value
        assert by_id[rid]["problems"] == [english(p) for p in problems]
    log = next(p for p in hashed if p.suffix == ".txt")
    log.write_text(log.read_text() + "\n")
    again = ledger.ledger_rows(records, damaged, demo_copy, ws.config.options)
    assert any(row["freshness"] == "stale" for row in again)


def test_a_scanned_snapshot_reads_each_record_file_once(
    demo_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A listing from `Snapshot.scan` loads every record file exactly once: the records
    citing one take it from the scan, and say what a fresh read of each says."""
    from gpudecide import ledger, workspace

    ws = workspace.load(demo_copy)
    files = sorted((ws.evidence_dir).glob("*.json"))
    records, damaged = ev.scan(ws.evidence_dir)
    alone = {
        row["id"]: row for row in ledger.ledger_rows(records, damaged, demo_copy, ws.config.options)
    }
    loaded: list[Path] = []
    real_load = ev.load

    def counting_load(p: Path, **k: bool) -> ev.Evidence:
        loaded.append(Path(p).resolve())
        return real_load(p, **k)

    monkeypatch.setattr(ev, "load", counting_load)
    snapshot = ev.Snapshot(demo_copy)
    scanned, damaged = snapshot.scan(ws.evidence_dir)
    rows = ledger.ledger_rows(scanned, damaged, demo_copy, ws.config.options, snapshot)
    assert sorted(loaded) == sorted(p.resolve() for p in files) and len(files) > 5
    assert {row["id"]: row for row in rows} == alone


def test_an_edited_record_is_tampered_through_a_scanned_snapshot(ws: Path) -> None:
    """The scan keeps a record as read, seal unchecked: a profile edited before the scan is
    still tampered, and the cost citing it still refused (twin of the test above)."""
    from gpudecide import ledger, workspace

    path = next((ws / "evidence").glob("profile-*.json"))
    body = json.loads(path.read_text())
    body["figures"]["gpu_hours_total"] = 1.0
    path.write_text(json.dumps(body))
    config = workspace.load(ws)
    snapshot = ev.Snapshot(ws)
    records, damaged = snapshot.scan(config.evidence_dir)
    rows = ledger.ledger_rows(records, damaged, ws, config.config.options, snapshot)
    states = {row["kind"]: row["freshness"] for row in rows}
    assert states == {"profile": "tampered", "cost": "bad_input"}
    with pytest.raises(InputError, match="edited after it was written"):
        ev.record_ref(path, ws, snapshot)
