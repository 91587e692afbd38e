"""Published JSON Schemas of what gpudecide writes: the evidence record and report.json.

The files beside this module are generated from the pydantic models that write them
(`python -m gpudecide.schemas` rewrites them); a test fails when they drift apart.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from gpudecide.evidence import Evidence
from gpudecide.report.render import JsonReport

HERE = Path(__file__).parent
MODELS: dict[str, type[BaseModel]] = {
    "evidence.schema.json": Evidence,
    "report.schema.json": JsonReport,
}


def schema(name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one published file, from its model."""
    body = MODELS[name].model_json_schema(mode="serialization")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **body}


def render(name: str) -> str:
    """The schema file's text."""
    return json.dumps(schema(name), indent=2, sort_keys=True) + "\n"


def main() -> None:
    """Rewrite every schema file from its model."""
    for name in MODELS:
        (HERE / name).write_text(render(name), encoding="utf-8")
        print(f"wrote {HERE / name}")


if __name__ == "__main__":
    main()
