"""The published JSON Schemas match the models and validate what the demo writes (SPEC D3)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from gpudecide import schemas


@pytest.mark.parametrize("name", sorted(schemas.MODELS))
def test_published_schema_is_the_models(name: str) -> None:
    on_disk = (schemas.HERE / name).read_text(encoding="utf-8")
    assert on_disk == schemas.render(name), "run `python -m gpudecide.schemas`"
    jsonschema.Draft202012Validator.check_schema(json.loads(on_disk))


def test_demo_files_validate(demo_workspace: Path) -> None:
    evidence = json.loads((schemas.HERE / "evidence.schema.json").read_text())
    report = json.loads((schemas.HERE / "report.schema.json").read_text())
    records = sorted((demo_workspace / "evidence").glob("*.json"))
    assert {json.loads(p.read_text())["kind"] for p in records} >= {
        "profile",
        "queue",
        "replay",
        "cost",
        "audit",
        "decision",
    }
    for path in records:
        jsonschema.validate(json.loads(path.read_text()), evidence)
    body = json.loads((demo_workspace / "report" / "report.json").read_text())
    jsonschema.validate(body, report)
    assert body["sections"][0]["kind"] == "decision"
    # A record that breaks the schema is caught: the check can fail.
    broken = json.loads(records[0].read_text())
    broken["verdict"] = "maybe"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, evidence)


def test_assess_twice_on_the_demo_gives_the_same_decision(demo_workspace: Path) -> None:
    from .conftest import run_cli

    runs = [run_cli("assess", str(demo_workspace), "--json") for _ in range(2)]
    # The demo's decision is provisional (exit 1): its leader's export was only rehearsed.
    assert [r.returncode for r in runs] == [1, 1], runs[0].stderr
    one, two = (json.loads(r.stdout) for r in runs)
    assert one["evidence"] == two["evidence"]  # same figures and inputs: same record id
    assert one["decision"] == two["decision"] and one["decision"]["status"] == "provisional"
    # A stop factor a reader can trace: its evidence id is a record of the workspace.
    stops = [s for o in one["options"] for s in o["stop_factors"]]
    assert {s["id"] for s in stops} >= {"export_hazard", "residency_violated"}
    on_disk = {p.stem for p in (demo_workspace / "evidence").glob("*.json")}
    assert all(set(s["evidence"]) <= on_disk for s in stops)
