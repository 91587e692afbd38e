"""`gpudecide status` (issue 27): what is filled, what is not, the evidence on file and what
the decision lacks most, each with its command or file; nothing is written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import run_cli
from tests.english import english_lines

SACCT = Path(__file__).parent / "fixtures" / "sacct" / "scenario.utc.txt"


def _init(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    args = ["--option", "kz-cloud:managed", "--option", "rent-a:rented"]
    assert run_cli("init", str(root), *args).returncode == 0
    return root


def test_a_fresh_workspace_says_what_to_fill_and_run_first(tmp_path: Path) -> None:
    root = _init(tmp_path)
    before = sorted(p.name for p in (root / "evidence").iterdir())
    run = run_cli("status", "--json", cwd=root)
    assert run.returncode == 0, run.stderr
    body = json.loads(run.stdout)
    states = {row["file"]: row["state"] for row in body["inputs"]}
    assert states["slo.yaml"] == "template" and states["costs.yaml"] == "to_fill"
    costs = next(row for row in body["inputs"] if row["file"] == "costs.yaml")
    assert costs["placeholders"] > 0
    assert body["logs"] == [
        {"setting": "logs.0.path", "path": "logs/sacct-8w.txt", "present": False, "option": None}
    ]
    assert [a["kind"] for a in body["not_run"]][:4] == ["profile", "queue", "replay", "cost"]
    assert body["not_run"][0]["command"] == "gpudecide profile"
    assert body["decision"] in ("tie", "provisional", "no_option_passes")
    assert sorted(p.name for p in (root / "evidence").iterdir()) == before  # nothing written


def test_status_follows_the_evidence_as_it_arrives(tmp_path: Path) -> None:
    """Twin: with the log in place and profiled, the log is there and profile is done."""
    root = _init(tmp_path)
    shutil.copyfile(SACCT, root / "logs" / "sacct-8w.txt")
    assert run_cli("profile", cwd=root).returncode == 0
    body = json.loads(run_cli("status", "--json", cwd=root).stdout)
    assert body["logs"][0]["present"] is True
    assert "profile" not in {a["kind"] for a in body["not_run"]}
    assert body["evidence"].get("fresh", 0) >= 1


def test_status_speaks_the_readers_language(tmp_path: Path) -> None:
    root = _init(tmp_path)
    for lang, word in (
        ("ru", "далее: gpudecide profile"),
        ("kk", "келесі қадам: gpudecide profile"),
    ):
        run = run_cli("--lang", lang, "status", cwd=root)
        assert run.returncode == 0, run.stderr
        assert word in run.stdout, run.stdout
        assert english_lines(run.stdout, root, ["export_test"]) == [], lang
