"""`gpudecide check hybrid` (SPEC H1-H3): each difference between the contours is a finding
on the hybrid option; each finding triggered and cleared."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from gpudecide import workspace
from gpudecide.artifacts.manifest import RunManifest
from gpudecide.cli import app
from gpudecide.decision import hybrid
from gpudecide.errors import InputError

DIGEST = "sha256:" + "a" * 64
TEST_SET = "b" * 64


def _ws(root: Path) -> workspace.Workspace:
    workspace.init(root)
    config = yaml.safe_load((root / workspace.CONFIG_NAME).read_text())
    config["options"] = [
        {"id": "pool", "kind": "owned", "standalone": False},
        {"id": "vendor", "kind": "managed", "standalone": False},
        {"id": "hyb", "kind": "hybrid", "contours": ["pool", "vendor"]},
    ]
    (root / workspace.CONFIG_NAME).write_text(yaml.safe_dump(config))
    return workspace.load(root)


def _manifest(root: Path, name: str, **fields: Any) -> str:
    body = {"container_digest": DIGEST, "checkpoint_format": "safetensors", **fields}
    path = root / "runs" / name / "run-manifest.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(RunManifest(**body).to_json())
    return str(path.relative_to(root))


def _evaluation(**changes: Any) -> dict[str, Any]:
    return {
        "test_set_sha256": TEST_SET,
        "prompt_versions": ["v3"],
        "thresholds": {"mmlu_kk": 0.62},
        "publishing_rule": "ML lead publishes when every threshold holds",
        **changes,
    }


def _spec(root: Path, pool: dict[str, Any], vendor: dict[str, Any], **boundary: Any) -> Path:
    spec = {
        "version": 1,
        "hybrids": [
            {
                "option": "hyb",
                "boundary": {
                    "crosses": ["adapter"],
                    "approved_by": "CISO",
                    "evaluated_on": ["pool"],
                    **boundary,
                },
                "contours": [
                    {
                        "option": "pool",
                        "manifest": _manifest(root, "pool", **pool.get("m", {})),
                        "evaluation": _evaluation(**pool.get("e", {})),
                    },
                    {
                        "option": "vendor",
                        "manifest": _manifest(root, "vendor", **vendor.get("m", {})),
                        "evaluation": _evaluation(**vendor.get("e", {})),
                    },
                ],
            }
        ],
    }
    path = root / hybrid.HYBRID_NAME
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def _ids(root: Path, path: Path) -> list[str]:
    ws = workspace.load(root)
    record = hybrid.check(path, ws.config.options, root)
    return [f["id"] for h in record.figures["hybrids"] for f in h["findings"]]


def test_identical_contours_have_no_findings(tmp_path: Path) -> None:
    _ws(tmp_path)
    assert _ids(tmp_path, _spec(tmp_path, {}, {})) == []


@pytest.mark.parametrize(
    ("vendor", "finding"),
    [
        ({"m": {"container_digest": "sha256:" + "c" * 64}}, "container_digest_differs"),
        ({"m": {"checkpoint_format": "vendor-bundle"}}, "checkpoint_format_differs"),
        ({"m": {"container_digest": None}}, "container_digest_differs"),
        ({"e": {"test_set_sha256": "d" * 64}}, "evaluation_test_set_sha256_differs"),
        ({"e": {"prompt_versions": ["v2"]}}, "evaluation_prompt_versions_differs"),
        ({"e": {"thresholds": {"mmlu_kk": 0.6}}}, "evaluation_thresholds_differs"),
        ({"e": {"publishing_rule": "vendor publishes"}}, "evaluation_publishing_rule_differs"),
    ],
)
def test_each_difference_is_a_finding(tmp_path: Path, vendor: dict[str, Any], finding: str) -> None:
    _ws(tmp_path)
    assert _ids(tmp_path, _spec(tmp_path, {}, vendor)) == [finding]


def test_boundary_must_be_stated_and_approved(tmp_path: Path) -> None:
    _ws(tmp_path)
    path = _spec(tmp_path, {}, {}, crosses=[], approved_by=" ")
    assert _ids(tmp_path, path) == ["boundary_unstated", "boundary_unapproved"]


def test_rules_score_operations_of_the_hybrid(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    clean = hybrid.check(_spec(tmp_path, {}, {}), ws.config.options, tmp_path)
    assert [(s.option, s.criterion, s.score) for s in hybrid.rules(clean)] == [
        ("hyb", "operations", 5)
    ]
    path = _spec(
        tmp_path, {}, {"m": {"checkpoint_format": "x"}, "e": {"prompt_versions": []}}, crosses=[]
    )
    messy = hybrid.check(path, ws.config.options, tmp_path)
    assert [s.score for s in hybrid.rules(messy)] == [1]  # three findings


def test_contour_must_belong_to_the_hybrid(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    path = _spec(tmp_path, {}, {})
    spec = yaml.safe_load(path.read_text())
    spec["hybrids"][0]["contours"][0]["option"] = "elsewhere"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    with pytest.raises(InputError, match="'elsewhere' is not a contour of hyb") as err:
        hybrid.check(path, ws.config.options, tmp_path)
    assert err.value.field == "hybrids.0.contours.0.option" and err.value.line is not None


def test_cli_exit_codes_and_json(tmp_path: Path) -> None:
    _ws(tmp_path)
    _spec(tmp_path, {}, {})
    ok = CliRunner().invoke(app, ["check", "hybrid", "-w", str(tmp_path), "--json"])
    assert ok.exit_code == 0, ok.output
    body = json.loads(ok.stdout)
    assert body["hybrids"][0]["findings"] == [] and Path(body["evidence"]).is_file()
    _spec(tmp_path, {}, {"m": {"checkpoint_format": "x"}})
    bad = CliRunner().invoke(app, ["check", "hybrid", "-w", str(tmp_path)])
    assert bad.exit_code == 1 and "checkpoint_format_differs" in bad.stdout
    (tmp_path / hybrid.HYBRID_NAME).write_text("hybrids:\n  - option: nope\n")
    broken = CliRunner().invoke(app, ["check", "hybrid", "-w", str(tmp_path)])
    assert broken.exit_code == 2


def test_where_the_evaluation_runs_is_stated(tmp_path: Path) -> None:
    """H2: the hybrid names the contour where its evaluation runs; unnamed is a finding."""
    ws = _ws(tmp_path)
    ids = lambda r: [f["id"] for f in r["findings"]]  # noqa: E731
    stated = hybrid.check_spec(
        hybrid.load(_spec(tmp_path, {}, {}), ws.config.options).hybrids[0], tmp_path
    )
    assert "evaluation_place_unstated" not in ids(stated)
    assert [f["option"] for f in stated["facts"]] == ["pool", "vendor"]
    assert stated["facts"][0]["container_digest"] == DIGEST
    unstated = hybrid.load(_spec(tmp_path, {}, {}, evaluated_on=[]), ws.config.options)
    assert "evaluation_place_unstated" in ids(hybrid.check_spec(unstated.hybrids[0], tmp_path))
    with pytest.raises(InputError, match="'elsewhere' is not a contour of hyb") as err:
        hybrid.load(_spec(tmp_path, {}, {}, evaluated_on=["elsewhere"]), ws.config.options)
    assert err.value.field == "hybrids.0.boundary.evaluated_on.0"


def test_a_hybrid_described_twice_is_refused(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    path = _spec(tmp_path, {}, {})
    spec = yaml.safe_load(path.read_text())
    spec["hybrids"].append(json.loads(json.dumps(spec["hybrids"][0])))
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    with pytest.raises(InputError, match="hyb is described twice") as err:
        hybrid.load(path, ws.config.options)
    assert err.value.field == "hybrids.1.option"
    spec["hybrids"] = [spec["hybrids"][0]]
    spec["hybrids"][0]["contours"][1]["option"] = "pool"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    with pytest.raises(InputError, match="different options"):
        hybrid.load(path, ws.config.options)
