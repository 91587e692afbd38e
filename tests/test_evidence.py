"""Evidence records: content hash, atomic write, staleness when an input changes."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from gpudecide import evidence as ev
from gpudecide.errors import InputError
from gpudecide.message import english


def _record(tmp_path: Path) -> tuple[ev.Evidence, Path]:
    src = tmp_path / "log.txt"
    src.write_text("JobID|State\n")
    rec = ev.Evidence(
        kind="profile",
        title="t",
        spec_ids=["F1"],
        verdict="info",
        summary="s",
        figures={"jobs_total": 3},
        inputs=[ev.input_ref(src, tmp_path)],
    )
    return rec, src


def test_inputs_are_hashed_relative_to_the_workspace(tmp_path: Path) -> None:
    rec, src = _record(tmp_path)
    ref = rec.inputs[0]
    assert ref.path == "log.txt"
    assert ref.sha256 == hashlib.sha256(src.read_bytes()).hexdigest()
    assert ref.size == len(src.read_bytes())


def test_write_is_content_addressed_and_fresh(tmp_path: Path) -> None:
    rec, _ = _record(tmp_path)
    path = ev.write(rec, tmp_path / "evidence")
    loaded = ev.load(path)
    assert path.name == f"{loaded.id}.json" and loaded.id.startswith("profile-")
    assert loaded.content_sha256 == loaded.compute_content_sha256()
    assert ev.freshness(loaded, tmp_path) == (ev.Freshness.FRESH, [])
    # the same analysis of the same inputs gets the same id
    assert ev.write(rec, tmp_path / "evidence") == path
    assert not list((tmp_path / "evidence").glob(".*.tmp"))


def test_changed_missing_and_tampered(tmp_path: Path) -> None:
    rec, src = _record(tmp_path)
    path = ev.write(rec, tmp_path / "evidence")
    src.write_text("JobID|State\n1|COMPLETED\n")
    state, problems = ev.freshness(ev.load(path), tmp_path)
    assert state is ev.Freshness.STALE and "changed" in english(problems[0])
    src.unlink()
    assert ev.freshness(ev.load(path), tmp_path)[0] is ev.Freshness.MISSING_INPUT
    body = json.loads(path.read_text())
    body["figures"]["jobs_total"] = 1
    path.write_text(json.dumps(body))
    assert ev.freshness(ev.load(path), tmp_path)[0] is ev.Freshness.TAMPERED


def test_not_a_record(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text('{"kind": 1}')
    with pytest.raises(InputError) as exc:
        ev.load(bad)
    assert exc.value.path == str(bad)


def test_latest_of_a_kind(tmp_path: Path) -> None:
    rec, src = _record(tmp_path)
    first = ev.write(rec, tmp_path / "e")
    src.write_text("changed")
    second_rec = rec.model_copy(update={"inputs": [ev.input_ref(src, tmp_path)]})
    second = ev.write(second_rec, tmp_path / "e")
    assert first != second
    records = ev.load_all(tmp_path / "e")
    assert len(records) == 2
    latest = ev.latest(records, "profile")
    assert latest is not None and latest.inputs[0].sha256 == second_rec.inputs[0].sha256
