"""`gpudecide export-test` as a user runs it, its inputs, the Kubernetes dry run, the decision
rules and the report section of `export_test` evidence (SPEC E1-E4, D5)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml
from typer.testing import CliRunner

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.findings import StopFactor, Suggestion
from gpudecide.i18n import speaking
from gpudecide.portability.cli import register
from gpudecide.portability.executors import k8s_job, validate_k8s_job
from gpudecide.portability.figures import figures_of
from gpudecide.portability.plan import ExportTestPlan
from gpudecide.portability.report import export_test_section
from gpudecide.portability.rules import rules
from gpudecide.portability.throughput import significant, throughput_figures

runner = CliRunner()


def _app() -> typer.Typer:
    app = typer.Typer()
    register(app)

    @app.command("noop")
    def _noop() -> None:  # a second command keeps typer from flattening export-test
        pass

    return app


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "ws"
    workspace.init(root)
    monkeypatch.chdir(root)
    return root


def test_no_flags_in_a_fresh_workspace(ws: Path) -> None:
    """The template's plan, local executor, local storage, a new interpreter per job."""
    res = runner.invoke(_app(), ["export-test", "--json"])
    assert res.exit_code == 0, res.output
    body = json.loads(res.stdout)
    for key in (
        "verdict", "plan_sha256", "checkpoint_step", "resumed_at_step", "final_metrics",
        "reference_metrics", "tolerance", "steps", "bytes_exported", "export_gbps",
        "restore_gbps", "manual_actions",
    ):  # fmt: skip
        assert key in body, key
    # The template leaves code commit and container digest empty: the manifest lint says so.
    assert body["verdict"] == "warn"
    export = next(s for s in body["steps"] if s["name"] == "export")
    assert export["status"] == "warn" and "code_commit" in export["detail"]
    assert body["checkpoint_step"] == body["resumed_at_step"] == 12
    assert body["final_metrics"] == body["reference_metrics"]
    assert body["option"] == "owned-pool"
    for s in body["steps"]:
        assert {"name", "status", "started_at", "finished_at", "detail"} <= set(s)
    record = ev.load(Path(body["evidence"]))
    assert record.kind == "export_test" and record.figures["option"] == "owned-pool"
    assert ev.freshness(record, ws)[0] is ev.Freshness.FRESH
    (ws / "export-test.yaml").write_text((ws / "export-test.yaml").read_text() + "\n# edited\n")
    assert ev.freshness(record, ws)[0] is ev.Freshness.STALE  # the plan changed after the run
    assert (ws / "exports" / "export-test" / body["run_id"] / "run-manifest.json").is_file()
    assert not (ws / ".export-test-work" / body["run_id"]).exists()


def _plan(ws: Path, text: str) -> None:
    (ws / "export-test.yaml").write_text(text)


def test_unknown_option_is_one_line_exit_2(ws: Path) -> None:
    _plan(ws, "version: 1\n# the option\noption: no-such-pool\n")
    res = runner.invoke(_app(), ["export-test"])
    assert res.exit_code == 2
    assert "export-test.yaml:3: field 'option': unknown option id 'no-such-pool'" in res.stderr
    assert "owned-pool" in res.stderr and "Traceback" not in res.output
    assert not (ws / "evidence").exists() or not list((ws / "evidence").glob("export_test-*"))


def test_checkpoint_after_last_step_is_bad_input(ws: Path) -> None:
    _plan(ws, "option: owned-pool\nmodel:\n  steps: 10\n  checkpoint_step: 10\n")
    res = runner.invoke(_app(), ["export-test"])
    assert res.exit_code == 2
    assert "export-test.yaml:3: field 'model'" in res.stderr
    assert "checkpoint_step 10 must be before the last step 10" in res.stderr


def test_cuda_absent_is_exit_2(ws: Path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the error path cannot happen here")
    res = runner.invoke(_app(), ["export-test", "--device", "cuda", "--json"])
    assert res.exit_code == 2
    assert json.loads(res.stdout)["field"] == "device"
    assert "CUDA was asked for but torch sees no CUDA device" in res.stderr
    assert not list(ws.glob(".export-test-work/*"))  # nothing started


def test_k8s_needs_dry_run_and_a_pinned_image(ws: Path) -> None:
    res = runner.invoke(_app(), ["export-test", "--executor", "k8s"])
    assert res.exit_code == 2 and "--dry-run" in res.stderr
    res = runner.invoke(_app(), ["export-test", "--executor", "k8s", "--dry-run"])
    assert res.exit_code == 2 and "pinned by digest" in res.stderr


def test_k8s_dry_run_writes_valid_jobs(ws: Path) -> None:
    image = "registry.example/train@sha256:" + "ab" * 32
    res = runner.invoke(
        _app(),
        ["export-test", "--executor", "k8s", "--dry-run", "--image", image,
         "--storage", "s3://ml-exports/tests", "--json"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    body = json.loads(res.stdout)
    assert body["valid"] is True and body["errors"] == {}
    docs = list(yaml.safe_load_all(Path(body["manifests"]).read_text()))
    assert [d["metadata"]["labels"]["step"] for d in docs] == ["train", "resume"]
    for doc in docs:
        assert validate_k8s_job(doc) == []
        container = doc["spec"]["template"]["spec"]["containers"][0]
        assert container["image"] == image
        spec = json.loads(container["env"][0]["value"])
        assert spec["action"] in ("train", "resume")
    resume = json.loads(docs[1]["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"])
    assert resume["storage"] == "s3://ml-exports/tests" and resume["checkpoint"] == "checkpoint-12"


def test_k8s_schema_refuses_what_the_api_server_refuses() -> None:
    job = k8s_job({"action": "train"}, "x", "img@sha256:" + "0" * 64, gpu=False)
    assert validate_k8s_job(job) == []
    bad: dict[str, Any] = json.loads(json.dumps(job))
    bad["spec"]["template"]["spec"]["restartPolicy"] = "Always"  # not allowed for a Job
    bad["metadata"]["name"] = "Not_A_DNS_Name"
    del bad["spec"]["template"]["spec"]["containers"][0]["name"]
    bad["spec"]["template"]["spec"]["containers"][0]["imagePulPolicy"] = "Always"  # typo
    errors = "\n".join(validate_k8s_job(bad))
    assert "restartPolicy: 'Always' is not one of ['Never', 'OnFailure']" in errors
    assert "metadata/name" in errors
    assert "'name' is a required property" in errors
    assert "imagePulPolicy" in errors


def _record(verdict: str, **figures: Any) -> ev.Evidence:
    body = {
        "option": "owned-pool",
        "verdict": verdict,
        "checkpoint_step": 12,
        "steps": [{"name": "export", "status": "warn" if verdict == "warn" else "pass"}],
        "reasons": ["resume: cannot resume: optimizer_state_missing: ..."]
        if verdict == "fail"
        else [],
        **figures,
    }
    return ev.seal(
        ev.Evidence(
            kind="export_test",
            title="t",
            spec_ids=["E3"],
            verdict=verdict,  # type: ignore[arg-type]
            summary="s",
            figures=body,
        )
    )


def test_rules_fail_is_a_stop_factor_pass_scores_artifacts() -> None:
    (stop,) = rules(_record("fail"))
    assert isinstance(stop, StopFactor)
    assert (stop.option, stop.id) == ("owned-pool", "export_test_failed")
    assert "optimizer_state_missing" in stop.rule and stop.evidence
    (good,) = rules(_record("pass"))
    assert isinstance(good, Suggestion)
    assert (good.criterion, good.score) == ("artifacts", 5)
    (warned,) = rules(_record("warn"))
    assert isinstance(warned, Suggestion) and warned.score == 4 and "export" in warned.rule
    assert rules(_record("pass", option=None)) == []
    other = _record("fail").model_copy(update={"kind": "audit"})
    assert rules(other) == []
    with pytest.raises(LookupError, match="'audit' is not an export_test record"):
        figures_of(other)


def test_report_section_tables_and_chart() -> None:
    from gpudecide.report.model import Section

    curve = [{"step": i, "loss": 5.0 - i / 10} for i in range(1, 9)]
    rec = _record(
        "fail",
        tolerance={"relative": 0.02, "absolute": None},
        metric_comparison=[
            {"metric": "loss", "reference": 4.2, "resumed": 4.5, "rel_diff": 0.07, "within": False}
        ],
        throughput={"export": None, "restore": None},
        reference_curve=curve,
        resumed_curve=curve[4:],
        manual_actions=["ticket 4471"],
        closed_formats=["vendor_state.vpk"],
        restored_by_hand=[],
        steps=[{"name": "plan", "status": "pass", "started_at": "a", "finished_at": "b",
                "detail": "d"}],
    )  # fmt: skip
    section = Section("export_test", "", rec, "fresh", "fresh", [])
    export_test_section(section)
    assert "owned-pool" in section.title and "fail" in section.title
    captions = [t.caption for t in section.tables]
    assert any("Steps of the test" in c for c in captions)
    assert any(c.startswith("Why it failed") for c in captions)
    manual = next(t for t in section.tables if "by hand" in t.caption)
    assert ["closed format", "vendor_state.vpk"] in manual.rows
    assert section.charts and section.charts[0].svg.startswith("<svg")
    ru = Section("export_test", "", rec, "fresh", "fresh", [])
    with speaking("ru"):
        export_test_section(ru)
    assert ru.tables[0].caption != section.tables[0].caption  # translated


def test_throughput_never_extrapolates_from_a_small_sample() -> None:
    plan = ExportTestPlan(option="x", run_size_gb=120)
    small = throughput_figures({"bytes": 21_907, "seconds": 0.002}, 256_000_000, plan)
    assert small is not None
    assert small["migration_window_hours"] is None and "under the" in small["note"]
    assert small["significant_digits"] == 1 and small["gbps"] == 0.01
    big = throughput_figures({"bytes": 300_000_000, "seconds": 0.5}, 256_000_000, plan)
    assert big is not None and big["gbps"] == 0.6 and big["significant_digits"] == 3
    assert big["migration_window_hours"] == significant(120e9 / 6e8 / 3600, 3) == 0.0556
    # At the floor exactly: extrapolated
    edge = throughput_figures({"bytes": 256_000_000, "seconds": 1.0}, 256_000_000, plan)
    assert edge is not None and edge["migration_window_hours"] is not None
    assert throughput_figures(None, 1, plan) is None
    assert big["range_gbps"] is None  # no per-file timings given: no range claimed


def test_throughput_range_from_files_of_at_least_1_mb() -> None:
    plan = ExportTestPlan(option="x")
    per_file = [
        {"path": "a", "bytes": 2_000_000, "seconds": 0.004},  # 0.5 GB/s
        {"path": "b", "bytes": 1_000_000, "seconds": 0.004},  # 0.25 GB/s, at the 1 MB bound
        {"path": "c", "bytes": 999_999, "seconds": 1.0},  # too small to count
    ]
    t = {"bytes": 3_999_999, "seconds": 1.008, "per_file": per_file}
    fig = throughput_figures(t, 256_000_000, plan)
    assert fig is not None and fig["range_gbps"] == [0.25, 0.5]
    one = throughput_figures({**t, "per_file": per_file[:1]}, 256_000_000, plan)
    assert one is not None and one["range_gbps"] is None


def test_plan_template_documents_every_field() -> None:
    import re

    from .test_workspace import _fields as fields

    text = workspace.template_files()["export-test.yaml"]
    lines = text.splitlines()
    for dotted in fields(ExportTestPlan):
        key = dotted.split(".")[-1]
        idx = next((i for i, ln in enumerate(lines) if re.match(rf"\s*{key}:", ln)), None)
        assert idx is not None, f"{dotted} missing from the template"
        assert lines[idx - 1].lstrip().startswith("#"), f"{dotted} has no comment above it"
    plan = ExportTestPlan.model_validate(yaml.safe_load(text))
    assert plan.option == "owned-pool" and plan.model.checkpoint_step < plan.model.steps


def test_from_export_names_the_option_whose_export_it_is(ws: Path) -> None:
    """`--from-export DIR --option ID`: the record is about ID (not the plan's option), the
    vendor's own artifacts (contour `vendor_export`), and the plan's option keeps its record."""
    from gpudecide.portability.demo import DATA, KZ_LOCAL_EXPORT

    _plan(ws, "option: owned-pool\nmodel:\n  steps: 8\n  checkpoint_step: 4\n")
    export = DATA / KZ_LOCAL_EXPORT
    args = ["export-test", "--from-export", str(export), "--option", "managed-endpoint", "--json"]
    res = runner.invoke(_app(), args)
    assert res.exit_code == 0, res.output
    body = json.loads(res.stdout)
    assert body["option"] == "managed-endpoint" and body["verdict"] == "pass", body["reasons"]
    assert body["contour"]["artifacts"] == "vendor_export"
    assert body["contour"]["storage"] == str(export)
    assert [r["within"] for r in body["metric_comparison"]] == [True, True]
    record = ev.load(Path(body["evidence"]))
    assert ev.subject(record) == ("export_test", "managed-endpoint")
    assert record.title.endswith("managed-endpoint (given export)")
    assert not list(ws.glob(".export-test-work/*"))
