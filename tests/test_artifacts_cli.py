"""The artifact commands as a user runs them (CliRunner on an app with `register`): the audit's
JSON interface and exit codes, the run manifest's create / lint / verify / provenance, the
retention policy, one-line errors with nothing half-written (SPEC A5, A6, A8, E2, E5)."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml
from typer.testing import CliRunner, Result

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.artifacts import manifest as mf
from gpudecide.artifacts import retention as ret
from gpudecide.artifacts.cli import register
from gpudecide.artifacts.figures import figures_of
from gpudecide.artifacts.report import audit_section

from .test_artifacts_models import build

D = "sha256:" + "ab" * 32
RUN_YAML = f"""\
run_id: ft-2026-07-014
base_model: internal-registry/model-a@{D}
dataset_snapshot: s3://restricted/train/v17/
code_commit: "3f92c1a"
container_digest: {D}
precision: bf16
method: lora
checkpoint_format: safetensors
optimizer_state_exported: true
created_at_utc: 2026-07-27T14:10:00Z
retention_class: regulated-3y
execution:
  driver_version: "550.54.15"
  cuda_version: "12.4"
  libraries: {{torch: "2.13.0", transformers: "5.24.0"}}
provenance:
  evaluation_metrics: {{eval_loss: 3.9}}
"""


@pytest.fixture(scope="module")
def arts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The artifacts built by the real libraries (shared with test_artifacts_models)."""
    return build(tmp_path_factory.mktemp("artifacts"))


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run from an empty folder: no workspace above, evidence lands under it."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """Test shell."""

    register(app)
    return app


def run(*args: str) -> Result:
    return CliRunner().invoke(_app(), list(args))


def _json(res: Result) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(res.stdout)
    return body


def same_shape(record: ev.Evidence) -> None:
    """The typed figures dump to the record's figures key for key (record hashes unchanged)."""
    figures = json.loads(json.dumps(record.figures))
    assert figures_of(record).model_dump(mode="json") == figures


def _one_line_error(res: Result) -> str:
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert "Traceback" not in res.output
    return lines[0]


# ---- audit --------------------------------------------------------------------------------


def test_audit_json_interface(arts: dict[str, Path], here: Path) -> None:
    res = run("audit", str(arts["trainer"]), "--json", "--evidence-dir", str(here / "ev"))
    assert res.exit_code == 0, res.output
    body = _json(res)
    assert body["resumable"] is True
    assert set(body["layers"]) == {"data", "training", "execution", "provenance"}
    for items in body["layers"].values():
        for item in items:
            assert set(item) >= {"name", "status", "path"}
            assert item["status"] in ("found", "missing", "not_applicable")
            if item["status"] == "found":
                assert (arts["trainer"] / item["path"]).exists()
    assert body["formats"]["checkpoint-3/model.safetensors"]["format"] == "safetensors"
    assert body["hazards"] == []
    record = ev.load(Path(body["evidence"]))
    assert record.kind == "audit" and {"E2", "E5", "A2", "A8"} <= set(record.spec_ids)
    ref = next(i for i in record.inputs if i.path.endswith("checkpoint-3/optimizer.pt"))
    opt = (arts["trainer"] / "checkpoint-3" / "optimizer.pt").read_bytes()
    assert ref.sha256 == hashlib.sha256(opt).hexdigest() and ref.size == len(opt)
    state, _ = ev.freshness(record, here)
    assert state is ev.Freshness.FRESH
    same_shape(record)  # no retention policy: every A8 question open
    assert figures_of(record).resumable_from is not None


def test_audit_stop_factor_exits_1_with_hazard_objects(arts: dict[str, Path], here: Path) -> None:
    res = run("audit", str(arts["evil"]), "--json")
    assert res.exit_code == 1
    hazards = _json(res)["hazards"]
    assert {h["id"] for h in hazards} >= {"dangerous_pickle"}
    for h in hazards:
        assert set(h) >= {"id", "path", "detail"}
    assert not arts["evil_marker"].exists()
    assert list((here / "evidence").glob("audit-*.json"))  # default ./evidence outside a workspace


def test_audit_human_output(arts: dict[str, Path], here: Path) -> None:
    res = run("audit", str(arts["adapter_local"]))
    assert res.exit_code == 1
    assert "HAZARD adapter_base_revision_missing: adapter_config.json" in res.stdout
    assert "open (A8): Who sets retention?" in res.stdout


@pytest.mark.parametrize(
    ("plan", "line", "field"),
    [
        ("version: 1\nrun_size_gb: -3\n", 2, "run_size_gb"),
        ("version: 1\n\nresumable_requird: false\n", 3, "resumable_requird"),
        ("expected_files: [a\n", None, None),
    ],
)
def test_bad_plan_is_one_line_and_writes_nothing(
    arts: dict[str, Path], here: Path, plan: str, line: int | None, field: str | None
) -> None:
    (here / "plan.yaml").write_text(plan)
    res = run("audit", str(arts["trainer"]), "--expect", "plan.yaml", "--json")
    assert res.exit_code == 2
    err = _json(res)
    assert err["path"] == "plan.yaml" and err["field"] == field
    if line is not None:
        assert err["line"] == line
    _one_line_error(res)
    assert not (here / "evidence").exists()


def test_figures_of_refuses_another_kind_and_another_shape(arts: dict[str, Path]) -> None:
    from pydantic import ValidationError

    from gpudecide.artifacts import audit

    record = audit.run(arts["adapter_local"]).record
    with pytest.raises(LookupError):
        figures_of(record.model_copy(update={"kind": "cost"}))
    hazard = {k: v for k, v in record.figures["hazards"][0].items() if k != "message"}
    older = {**record.figures, "hazards": [hazard]}  # a hazard without its message
    with pytest.raises(ValidationError, match="message"):
        figures_of(record.model_copy(update={"figures": older}))


def test_missing_export_dir_is_exit_2(here: Path) -> None:
    res = run("audit", str(here / "nope"))
    assert res.exit_code == 2
    assert "no such directory" in _one_line_error(res)
    assert not (here / "evidence").exists()


def test_plan_declared_artifacts_and_retention_from_the_workspace(
    arts: dict[str, Path], here: Path
) -> None:
    workspace.init(here / "ws")
    policy = here / "ws" / "retention.yaml"
    text = policy.read_text().replace(
        "retention_owner: null", "retention_owner: Head of ML platform (runbook RB-12)"
    )
    policy.write_text(text)
    (here / "plan.yaml").write_text('expected_files: ["checkpoint-*/optimizer.pt", "*.gguf"]\n')
    res = run(
        "audit", str(arts["trainer"]), "--expect", "plan.yaml", "-w", str(here / "ws"), "--json"
    )
    assert res.exit_code == 1
    body = _json(res)
    assert [(h["id"], h["path"]) for h in body["hazards"]] == [
        ("declared_artifact_missing", "*.gguf")
    ]
    questions = {q["id"]: q for q in body["retention"]["questions"]}
    owner = questions["retention_owner"]
    line = text.splitlines().index("  retention_owner: Head of ML platform (runbook RB-12)") + 1
    assert owner["status"] == "answered" and owner["source"].endswith(f"retention.yaml:{line}")
    assert questions["legal_hold"]["status"] == "open"
    assert body["retention"]["classes"]["optimizer_state"]["lifetime_days"] == 1095
    assert Path(body["evidence"]).parent == here / "ws" / "evidence"
    record = ev.load(Path(body["evidence"]))
    same_shape(record)  # the workspace's policy, a hazard
    assert figures_of(record).retention.classes["optimizer_state"].lifetime_days == 1095


# ---- manifest -----------------------------------------------------------------------------


@pytest.fixture
def run_dir(arts: dict[str, Path], here: Path) -> Path:
    target = here / "run"
    shutil.copytree(arts["trainer"], target)
    (here / "run.yaml").write_text(RUN_YAML)
    return target


def test_manifest_create_lint_verify(run_dir: Path, here: Path) -> None:
    res = run("manifest", "create", str(run_dir), "--from", "run.yaml", "--json")
    assert res.exit_code == 0, res.output
    body = _json(res)
    path = run_dir / mf.DEFAULT_NAME
    assert body["manifest"] == str(path)
    data = json.loads(path.read_text())
    assert list(data)[:12] == ["run_id", *mf.A5_FIELDS[1:], "schema"]
    assert data["created_at_utc"] == "2026-07-27T14:10:00Z" and data["code_commit"] == "3f92c1a"
    files = {f["path"]: f for f in data["files"]}
    assert mf.DEFAULT_NAME not in files
    opt = (run_dir / "checkpoint-3" / "optimizer.pt").read_bytes()
    assert files["checkpoint-3/optimizer.pt"]["sha256"] == hashlib.sha256(opt).hexdigest()
    env = data["environment"]
    assert "checkpoint-3/optimizer.pt" in env["training"]["optimizer_state"]
    assert env["training"]["seed"] == 7 and env["training"]["step"] == 3
    assert env["execution"]["driver_version"] == "550.54.15"
    # lint: the article's example passes; the abbreviated commit is a warning only
    policy = here / "retention.yaml"
    policy.write_text(workspace.template_files()["retention.yaml"])
    lint = run("manifest", "lint", str(path), "--retention", str(policy), "--json")
    assert lint.exit_code == 0, lint.output
    findings = _json(lint)["findings"]
    assert [(f["field"], f["severity"]) for f in findings] == [("code_commit", "warning")]
    assert findings[0]["line"] == 5
    assert run("manifest", "verify", str(run_dir), str(path)).exit_code == 0
    # the audit now finds the execution and provenance layers in the manifest
    audit = _json(run("audit", str(run_dir), "--retention", str(policy), "--json"))
    prov = {i["name"]: i for i in audit["layers"]["provenance"]}
    assert prov["dataset_snapshot"]["path"] == mf.DEFAULT_NAME
    assert prov["base_model_revision"]["status"] == "found"
    exe = {i["name"]: i for i in audit["layers"]["execution"]}
    assert exe["container_digest"]["status"] == exe["driver_version"]["status"] == "found"
    assert audit["retention"]["manifest_class_defined"] is True


def test_manifest_verify_finds_changed_missing_and_extra(run_dir: Path) -> None:
    assert run("manifest", "create", str(run_dir), "--from", "run.yaml").exit_code == 0
    path = run_dir / mf.DEFAULT_NAME
    (run_dir / "checkpoint-2" / "scheduler.pt").write_bytes(b"tampered")
    (run_dir / "checkpoint-2" / "rng_state.pth").unlink()
    (run_dir / "notes.txt").write_text("added later")
    res = run("manifest", "verify", str(run_dir), str(path), "--json")
    assert res.exit_code == 1
    body = _json(res)
    assert [m["path"] for m in body["mismatched"]] == ["checkpoint-2/scheduler.pt"]
    assert body["missing"] == ["checkpoint-2/rng_state.pth"] and body["extra"] == ["notes.txt"]


def test_manifest_create_refuses_to_overwrite(run_dir: Path) -> None:
    assert run("manifest", "create", str(run_dir)).exit_code == 0
    res = run("manifest", "create", str(run_dir))
    assert res.exit_code == 2 and "exists already" in _one_line_error(res)
    assert run("manifest", "create", str(run_dir), "--force").exit_code == 0


def test_unquoted_numeric_commit_in_run_yaml_is_refused(run_dir: Path, here: Path) -> None:
    (here / "run.yaml").write_text(
        RUN_YAML.replace('code_commit: "3f92c1a"', "code_commit: 0123456")
    )
    res = run("manifest", "create", str(run_dir), "--from", "run.yaml", "--json")
    assert res.exit_code == 2
    err = _json(res)
    assert err["field"] == "code_commit" and err["line"] == 4 and "quote it" in err["error"]
    assert not (run_dir / mf.DEFAULT_NAME).exists()


BAD_MANIFEST = f"""\
run_id: ft-2026-07-015
base_model: internal-registry/model-a:latest
dataset_snapshot: s3://restricted/train/
code_commit: 3f92
container_digest: registry/trainer:v2
precision: bf16
method: lora
checkpoint_format: safetensors
optimizer_state_exported: true
created_at_utc: "2026-07-27T17:10:00+03:00"
retention_class: forever
files:
  - {{path: model.safetensors, size: 3, sha256: "{"0" * 64}"}}
"""


def test_lint_flags_every_a6_problem_with_its_line(here: Path) -> None:
    (here / "m.yaml").write_text(BAD_MANIFEST)
    policy = here / "retention.yaml"
    policy.write_text(workspace.template_files()["retention.yaml"])
    res = run("manifest", "lint", "m.yaml", "--retention", str(policy), "--json")
    assert res.exit_code == 1
    errors = {(f["field"], f["line"]) for f in _json(res)["findings"] if f["severity"] == "error"}
    assert errors >= {
        ("base_model", 2),
        ("dataset_snapshot", 3),
        ("code_commit", 4),
        ("container_digest", 5),
        ("optimizer_state_exported", 9),
        ("created_at_utc", 10),
        ("retention_class", 11),
    }
    text = run("manifest", "lint", "m.yaml", "--retention", str(policy)).stdout
    assert "m.yaml:2: error: base_model:" in text and "moving tag" in text


@pytest.mark.parametrize(
    ("field", "value", "ok"),
    [
        ("dataset_snapshot", "s3://restricted/train/v17/", True),
        ("dataset_snapshot", "s3://b/train/snapshot=2026-07-01/", True),
        ("dataset_snapshot", "hf://datasets/org/set@3f92c1a5", True),
        ("dataset_snapshot", "s3://b/train/latest/", False),
        ("dataset_snapshot", "/data/train", False),
        ("base_model", f"org/model@{D}", True),
        ("base_model", "org/model:v3", False),
        ("created_at_utc", "2026-07-27T14:10:00Z", True),
        ("created_at_utc", "2026-07-27T14:10:00", False),
        ("created_at_utc", "27/07/2026 14:10", False),
        ("code_commit", "3f92c1a" * 5 + "3f92c", True),
        ("code_commit", "xyz1234", False),
    ],
)
def test_lint_rules(field: str, value: str, ok: bool) -> None:
    base = {k: v for k, v in yaml.safe_load(RUN_YAML).items() if k in mf.A5_FIELDS}
    m = mf.RunManifest.model_validate(base | {field: value})
    errors = [f.field for f in mf.lint(m, None) if f.severity == "error"]
    assert (field not in errors) is ok, errors


def test_provenance_statement(run_dir: Path) -> None:
    assert run("manifest", "create", str(run_dir), "--from", "run.yaml").exit_code == 0
    res = run("manifest", "provenance", str(run_dir / mf.DEFAULT_NAME))
    statement = json.loads(res.stdout)
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    assert statement["predicateType"] == "https://slsa.dev/provenance/v1"
    manifest = json.loads((run_dir / mf.DEFAULT_NAME).read_text())
    assert statement["subject"] == [
        {"name": f["path"], "digest": {"sha256": f["sha256"]}} for f in manifest["files"]
    ]
    build_def = statement["predicate"]["buildDefinition"]
    deps = {d["name"]: d for d in build_def["resolvedDependencies"]}
    assert deps["base_model"] == {
        "name": "base_model",
        "uri": "internal-registry/model-a",
        "digest": {"sha256": "ab" * 32},
    }
    assert deps["code"]["annotations"]["abbreviated"] is True
    run_details = statement["predicate"]["runDetails"]
    assert run_details["builder"]["id"] == mf.SELF_DECLARED_BUILDER
    assert run_details["metadata"]["invocationId"] == "ft-2026-07-014"


# ---- retention policy ---------------------------------------------------------------------


def test_retention_template_is_valid_and_documents_every_field(tmp_path: Path) -> None:
    text = workspace.template_files()["retention.yaml"]
    (tmp_path / "retention.yaml").write_text(text)
    loaded = ret.load(tmp_path / "retention.yaml")
    assert set(loaded.policy.artifact_classes) == set(ret.ARTIFACT_CLASSES)
    lines = text.splitlines()
    keys = {
        *ret.RetentionPolicy.model_fields,
        *ret.RetentionClass.model_fields,
        *ret.RetentionQuestions.model_fields,
        *ret.ARTIFACT_CLASSES,
    }
    for key in keys:
        idx = next(i for i, line in enumerate(lines) if re.match(rf"\s*{key}:", line))
        assert lines[idx - 1].strip().startswith("#"), f"{key} has no comment above it"


def test_retention_undefined_class_names_line_and_field(tmp_path: Path) -> None:
    text = workspace.template_files()["retention.yaml"].replace(
        "  metrics: research-90d", "  metrics: research-30d"
    )
    (tmp_path / "retention.yaml").write_text(text)
    with pytest.raises(Exception) as exc:
        ret.load(tmp_path / "retention.yaml")
    line = text.splitlines().index("  metrics: research-30d") + 1
    assert f"retention.yaml:{line}: field 'artifact_classes.metrics'" in str(exc.value)


# ---- report section -----------------------------------------------------------------------


def test_audit_section_builds_tables(arts: dict[str, Path], here: Path) -> None:
    from gpudecide.artifacts import audit
    from gpudecide.i18n import speaking
    from gpudecide.report.model import Section

    result = audit.run(arts["adapter_local"])
    section = Section("audit", "", ev.seal(result.record), "fresh", "fresh", [])
    with speaking("ru"):
        audit_section(section)
    assert section.title.startswith("Аудит экспорта")
    captions = [t.caption for t in section.tables]
    assert captions == [
        "Что проверено аудитом",
        "Четыре слоя экспорта (E2)",
        "Чекпойнты: можно продолжить обучение или только веса (A2)",
        "Риски привязки к поставщику (E5): каждый — стоп-фактор",
        "Классы артефактов и их хранение (A1, A3)",
        "Вопросы хранения (A8)",
    ]
    hazards = section.tables[3].rows
    assert hazards[0][:2] == ["adapter_base_revision_missing", "adapter_config.json"]


def test_demo_export_audit_in_the_report(here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpudecide.artifacts import demo
    from gpudecide.demo import CONFIG_DATA
    from gpudecide.report import render
    from gpudecide.sections import SECTIONS

    workspace.init(here / "ws")
    shutil.copyfile(CONFIG_DATA, here / "ws" / workspace.CONFIG_NAME)  # declares managed-ft
    ws = workspace.load(here / "ws")
    path = demo.run(ws)
    record = ev.load(path)
    hazards = {(h["id"], h["path"]) for h in record.figures["hazards"]}
    assert hazards == {
        ("adapter_base_revision_missing", "adapter_config.json"),
        ("weights_without_optimizer_state", "adapter_model.safetensors"),
        ("unknown_format", "vendor_state.vpk"),
    }
    assert record.verdict == "fail"
    same_shape(record)  # the demo's record, with its option
    assert figures_of(record).option == "managed-ft"
    # what it audited: the vendor's own export, read from the workspace's folder
    assert record.figures["contour"] == {
        "executor": None,
        "storage": "exports/vendor-run-7",
        "artifacts": "vendor_export",
    }
    # "Bank HSM admins only; the vendor never sees the key": the decision reads this key
    assert record.figures["retention"]["key_custody"] == "team"
    assert record.figures["retention"]["key_custody_source"].startswith("retention.yaml:")
    questions = {q["id"]: q["status"] for q in record.figures["retention"]["questions"]}
    assert sorted(k for k, v in questions.items() if v == "answered") == [
        "key_access",
        "retention_owner",
    ]
    details = record.figures["formats"]["adapter_model.safetensors"]["details"]
    assert details["precision"] == "bf16" and details["problems"] == []
    report = render.build(ev.load_all(ws.evidence_dir), ws.root, SECTIONS)
    html = render.to_html(report)
    assert "Four layers of the export (E2)" in html and "vendor_state.vpk" in html
    assert ev.freshness(record, ws.root)[0] is ev.Freshness.FRESH
