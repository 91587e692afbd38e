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
        "profile", "queue", "replay", "cost", "audit", "decision"
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
