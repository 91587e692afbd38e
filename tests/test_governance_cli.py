"""`gpudecide check ...` as users run it on the demo bank's workspace: exit codes, JSON,
one-line errors for bad input, the demo, the decision rules and the report sections."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import typer
from babel.messages.extract import extract_from_dir
from pydantic import BaseModel, ValidationError
from trestle.oscal.assessment_results import AssessmentResults
from typer.testing import CliRunner

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.findings import StopFactor, Suggestion
from gpudecide.governance import checks, demo, rules
from gpudecide.governance.cli import check_app, register
from gpudecide.governance.figures import FIGURES, ResidencyFigures, figures_of
from gpudecide.governance.isolation import IsolationFile
from gpudecide.governance.raci import RaciFile
from gpudecide.governance.report import governance_section
from gpudecide.i18n import Language, catalogue, speaking
from gpudecide.report.model import Section

from .governance_fixtures import demo_workspace
from .test_workspace import _fields


def _app() -> typer.Typer:
    app = typer.Typer(pretty_exceptions_enable=False)

    @app.callback()
    def _root() -> None:
        """Test shell."""

    register(app)
    return app


def _invoke(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(_app(), ["check", *args])
    return res.exit_code, res.output


@pytest.fixture
def ws(tmp_path: Path) -> workspace.Workspace:
    """The demo bank's workspace with its governance inputs copied in."""
    w = demo_workspace(tmp_path / "ws")
    demo.install(w.root)
    return w


def _json(*args: str) -> tuple[int, dict[str, object]]:
    res = CliRunner().invoke(_app(), ["check", *args, "--json"])
    return res.exit_code, json.loads(res.stdout)


def test_check_app_is_the_check_group() -> None:
    import gpudecide.cli  # noqa: F401 (the root app adds `check hybrid` to the group)

    names = {c.name for c in check_app.registered_commands}
    assert names == {"raci", "standard-path", "isolation", "residency", "secrets", "hybrid"}


def test_raci_warns_without_stop(ws: workspace.Workspace) -> None:
    code, body = _json("raci", "-w", str(ws.root))
    assert code == 0 and body["verdict"] == "warn"
    options = {o["option"]: o for o in body["options"]}  # type: ignore[attr-defined]
    assert set(options) == {
        "owned-8xh100",
        "rented-8gpu",
        "kz-rented-2gpu",
        "managed-ft",
        "kz-local",
        "hybrid-kz",
    }
    owned = options["owned-8xh100"]
    # 4 on-call duties: timur does 3 (NCCL, telemetry, node replacement), daniyar restores.
    assert owned["on_call_load"] == {"daniyar": 1, "timur": 3}
    # The leased pool: timur 2 of 4 is exactly the 0.5 limit, which is allowed.
    rented = options["rented-8gpu"]
    assert rented["on_call_load"] == {"daniyar": 1, "timur": 2}
    assert not any(f["id"] == "bus_factor" for f in rented["findings"])
    assert any(f["id"] == "bus_factor" and f["option"] == "owned-8xh100" for f in owned["findings"])
    assert Path(str(body["evidence"])).is_file()


def test_residency_stops_managed_ft(ws: workspace.Workspace) -> None:
    code, out = _invoke("residency", "-w", str(ws.root))
    assert code == 1
    assert "STOP managed-ft: customers' personal data in training sets" in out
    assert "DE Frankfurt (eu-central) (GlobalCloud (fictional))" in out
    code, body = _json("residency", "-w", str(ws.root))
    stopped = {o["option"]: o["stopped"] for o in body["options"]}  # type: ignore[attr-defined]
    assert [k for k, v in stopped.items() if v] == ["managed-ft"]
    assert len(stopped) == 6
    assert body["requirements"][0]["edition"]  # type: ignore[index]


def test_residency_without_requirement_is_info(tmp_path: Path) -> None:
    w = demo_workspace(tmp_path / "ws", residency=False)
    (w.root / "isolation.yaml").unlink()  # the template's, for the template's option ids
    code, body = _json("residency", "-w", str(w.root))
    assert code == 0 and body["verdict"] == "info" and body["findings"] == []


def test_isolation_writes_record_and_oscal(ws: workspace.Workspace) -> None:
    code, body = _json("isolation", "-w", str(ws.root))
    # managed-ft's vendor-managed keys stop it: the provider's side can use them.
    assert code == 1 and body["verdict"] == "fail"
    stops = [(f["option"], f["id"]) for f in body["findings"] if f["stop"]]  # type: ignore[attr-defined]
    assert stops == [("managed-ft", "keys_provider_custody")]
    doc = Path(str(body["oscal"]))
    assert doc.parent == ws.evidence_dir / "oscal"
    ar = AssessmentResults.oscal_read(doc)
    assert ar is not None and len(ar.results[0].findings or []) > 40
    # The export sits beside the record without breaking the evidence folder's reader.
    assert {r.kind for r in ev.load_all(ws.evidence_dir)} == {"isolation"}
    record = ev.load(Path(str(body["evidence"])))
    # The documents the answers cite are inputs of the record (staleness is tracked).
    assert any(i.path == "docs/qazai-offer-qac-2026-112-security.md" for i in record.inputs)


def test_standard_path(ws: workspace.Workspace) -> None:
    code, body = _json("standard-path", "-w", str(ws.root))
    assert code == 0
    ids = {(f["id"], f["option"]) for f in body["findings"]}  # type: ignore[attr-defined]
    assert ("path_mismatch_managed", "managed-ft") in ids
    assert ("ssh_not_control", "owned-8xh100") in ids


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def test_unknown_option_id_names_file_line_field(ws: workspace.Workspace) -> None:
    raci = ws.root / "raci.yaml"
    _edit(
        raci,
        "{options: [managed-ft], responsible: [globalcloud]",
        "{options: [managed-x], responsible: [globalcloud]",
    )
    code, out = _invoke("raci", "-w", str(ws.root))
    assert code == 2 and "Traceback" not in out
    line = _line_of(raci, "managed-x")
    assert f"raci.yaml:{line}: field 'activities.2.assignments.2.options.0'" in out
    assert "unknown option id 'managed-x'" in out


def test_unknown_person(ws: workspace.Workspace) -> None:
    raci = ws.root / "raci.yaml"
    _edit(
        raci,
        "responsible: [saule], accountable: [saule], consulted",
        "responsible: [saul], accountable: [saule], consulted",
    )
    code, out = _invoke("raci", "-w", str(ws.root))
    assert code == 2 and "unknown person or vendor 'saul'" in out


@pytest.mark.parametrize(
    ("file", "old", "new", "field"),
    [
        (
            "raci.yaml",
            "bus_factor_max_share: 0.5",
            "bus_factor_max_share: two",
            "bus_factor_max_share",
        ),
        (
            "raci.yaml",
            "roles: [platform_engineer], on_call: true}",
            "roles: [platform_engineer], on_call: true, pager: 1}",
            "people.0.pager",
        ),
        (
            "isolation.yaml",
            'handling: kept, detail: "container images',
            'handling: wiped, detail: "container images',
            "options.0.residue.2.handling",
        ),
        (
            "isolation.yaml",
            "sharing_mode: exclusive,\n         proof: {test",
            "sharing_mode: shared,\n         proof: {test",
            "options.0.boundaries.0.sharing_mode",
        ),
    ],
)
def test_bad_yaml_value_exit_2_with_field(
    ws: workspace.Workspace, file: str, old: str, new: str, field: str
) -> None:
    _edit(ws.root / file, old, new)
    cmd = "raci" if file == "raci.yaml" else "isolation"
    code, out = _invoke(cmd, "-w", str(ws.root))
    assert code == 2, out
    match = re.search(rf"{file}:(\d+): field '{re.escape(field)}'", out)
    assert match, out
    # The line named is the line of the bad value.
    needle = {"bus_factor_max_share": "two", "people.0.pager": "pager: 1"}.get(
        field, "wiped" if "handling" in field else "sharing_mode: shared"
    )
    assert int(match.group(1)) == _line_of(ws.root / file, needle), out
    assert "Traceback" not in out


def test_broken_yaml_syntax(ws: workspace.Workspace) -> None:
    (ws.root / "isolation.yaml").write_text("version: 1\nassets: [\n")
    code, out = _invoke("isolation", "-w", str(ws.root))
    assert code == 2 and "not valid YAML" in out


def test_excerpt_must_be_in_the_document(ws: workspace.Workspace) -> None:
    _edit(
        ws.root / "isolation.yaml",
        'excerpt: "Jobs run in the Frankfurt (eu-central) region."',
        'excerpt: "Jobs run in Kazakhstan."',
    )
    code, out = _invoke("isolation", "-w", str(ws.root))
    assert code == 2 and "the excerpt is not in docs/globalcloud-security-overview.md" in out


def test_missing_document(ws: workspace.Workspace) -> None:
    (ws.root / "docs" / "dala-data-flow.md").unlink()
    code, out = _invoke("isolation", "-w", str(ws.root))
    assert code == 2 and "document 'docs/dala-data-flow.md' not found" in out


def test_missing_input_file(tmp_path: Path) -> None:
    w = demo_workspace(tmp_path / "ws")
    (w.root / "raci.yaml").unlink()
    code, out = _invoke("raci", "-w", str(w.root))
    assert code == 2 and "no raci.yaml in the workspace" in out


def test_template_workspace_checks_run(tmp_path: Path) -> None:
    """`gpudecide init` gives raci.yaml and isolation.yaml that load as they are."""
    root = tmp_path / "fresh"
    workspace.init(root)
    for cmd in ("raci", "standard-path", "isolation", "residency"):
        code, out = _invoke(cmd, "-w", str(root))
        assert code in (0, 1), out


@pytest.mark.parametrize("cmd", ["raci", "isolation"])
def test_a_fresh_template_is_not_checked_not_stopped(tmp_path: Path, cmd: str) -> None:
    """An unfilled template is "not checked", never stopped by being empty (it was 74 RACI
    and 36 isolation stop factors): exit 0, no finding, every option not checked, and the
    rules give no score to settle."""
    root = tmp_path / "fresh"
    workspace.init(root)
    code, body = _json(cmd, "-w", str(root))
    assert code == 0, body
    assert body["findings"] == [] and body["verdict"] == "pass"
    assert all(not o["answered"] for o in body["options"])  # type: ignore[attr-defined]
    assert "(4 not checked)" in str(body["summary"])
    assert any("not checked" in n for n in body["notes"])  # type: ignore[attr-defined]
    record = ev.load(Path(str(body["evidence"])))
    assert rules.rules(record) == []
    code, out = _invoke(cmd, "-w", str(root))
    assert code == 0 and "STOP" not in out and "not checked" in out


def test_the_template_owned_option_has_no_vendor_neighbour(tmp_path: Path) -> None:
    """The template's threat model names a vendor's other customers; the owned option is not
    asked to hold against them, and the report says why."""
    root = tmp_path / "fresh"
    workspace.init(root)
    code, body = _json("isolation", "-w", str(root))
    assert code == 0
    owned = next(o for o in body["options"] if o["option"] == "owned-pool")  # type: ignore[attr-defined]
    assert [n["adversary"] for n in owned["not_applied"]] == ["vendor_neighbour"]
    managed = next(o for o in body["options"] if o["option"] == "managed-endpoint")  # type: ignore[attr-defined]
    assert managed["not_applied"] == [] and "residue" in managed["required"]


def test_demo_run_and_rules(ws: workspace.Workspace) -> None:
    written = demo.run(ws)
    records = [ev.load(p) for p in written if p.parent == ws.evidence_dir]
    kinds = {r.kind for r in records}
    assert kinds == {"raci", "standard_path", "isolation", "residency", "secrets"}
    assert any(p.parent.name == "oscal" for p in written)
    outcome = [o for r in records for o in rules.rules(r)]
    stops = {(o.option, o.id) for o in outcome if isinstance(o, StopFactor)}
    # managed-ft: Frankfurt breaks residency, and its vendor-managed keys do not hold against
    # the platform administrator the training set is protected from.
    assert stops == {
        ("managed-ft", "residency_violated"),
        ("managed-ft", "isolation_protection_missing"),
    }
    scores = {(o.option, o.criterion) for o in outcome if isinstance(o, Suggestion)}
    assert ("managed-ft", "isolation") in scores and ("owned-8xh100", "operations") in scores
    iso = next(
        o
        for o in outcome
        if isinstance(o, Suggestion) and o.option == "managed-ft" and o.criterion == "isolation"
    )
    assert iso.score == 1
    isolation_record = next(r for r in records if r.kind == "isolation")
    custody = {
        o["option"]: next(b for b in o["boundaries"] if b["boundary"] == "keys")["custody"]
        for o in isolation_record.figures["options"]
    }
    assert custody == {
        "owned-8xh100": "team",
        "rented-8gpu": "team",
        "kz-rented-2gpu": "team",
        "managed-ft": "provider",
        "kz-local": "shared",
        "hybrid-kz": "team",
    }


def test_figures_models_hold_each_record_as_written(ws: workspace.Workspace) -> None:
    """Every governance record the demo writes reads back through the model of its kind and
    dumps to the very JSON it holds: the content hash is the one it was sealed with."""
    written = demo.run(ws)
    records = [ev.load(p) for p in written if p.parent == ws.evidence_dir]
    assert {r.kind for r in records} == set(FIGURES)
    for record in records:
        model = figures_of(record)
        assert isinstance(model, FIGURES[record.kind])
        dumped = model.model_dump(mode="json")
        assert dumped == record.figures, record.kind
        again = record.model_copy(update={"figures": dumped})
        assert again.compute_content_sha256() == record.content_sha256
    residency = next(r for r in records if r.kind == "residency")
    figures = figures_of(residency)
    assert isinstance(figures, ResidencyFigures)
    assert [o.option for o in figures.options if o.stopped] == ["managed-ft"]


def test_figures_of_refuses_another_kind_and_another_shape(ws: workspace.Workspace) -> None:
    """Negative: a record of another kind is refused; figures an edit broke name the field."""
    other = ev.Evidence(
        kind="profile", title="t", spec_ids=[], verdict="pass", summary="s", figures={}
    )
    with pytest.raises(LookupError):
        figures_of(other)
    run = checks.run_raci(ws)
    broken = dict(run.record.figures)
    broken["options"] = [{**broken["options"][0], "activities": "many"}]
    with pytest.raises(ValidationError, match=r"options\.0\.activities"):
        figures_of(run.record.model_copy(update={"figures": broken}))


def test_rules_stop_factor_ids() -> None:
    def record(kind: str, fid: str) -> ev.Evidence:
        finding = {"id": fid, "option": "o", "stop": True, "spec": "D5", "text": "t", "params": {}}
        return ev.Evidence(
            kind=kind,
            title="t",
            spec_ids=[],
            verdict="fail",
            summary="s",
            figures={"options": [{"option": "o", "findings": [finding], "boundaries": []}]},
        )

    assert [
        o.id for o in rules.rules(record("raci", "no_on_call")) if isinstance(o, StopFactor)
    ] == ["no_accountable"]
    assert [
        o.id
        for o in rules.rules(record("raci", "no_node_replacement"))
        if isinstance(o, StopFactor)
    ] == ["no_node_replacement"]
    assert [
        o.id
        for o in rules.rules(record("isolation", "protection_missing"))
        if isinstance(o, StopFactor)
    ] == ["isolation_protection_missing"]
    assert rules.rules(record("profile", "no_accountable")) == []


@pytest.mark.parametrize("lang", ["en", "ru", "kk"])
def test_report_sections_in_three_languages(ws: workspace.Workspace, lang: Language) -> None:
    written = demo.run(ws)
    for path in written:
        if path.parent != ws.evidence_dir:
            continue
        record = ev.load(path)
        section = Section(record.kind, "", record, "fresh", "", [])
        with speaking(lang):
            governance_section(section)
        assert section.title and section.tables
        if record.kind == "isolation":
            assert section.charts and section.charts[0].svg.startswith("<svg")
            assert "managed-ft" in section.charts[0].svg
            cells = json.dumps([t.rows for t in section.tables], ensure_ascii=False)
            # The owned pool is not asked to hold against a vendor's other customers: why.
            absent = next(
                t for t in section.tables if t.rows and "(vendor_neighbour)" in t.rows[0][1]
            )
            assert absent.rows[0][0] == "owned-8xh100"
            if lang == "en":
                assert "no vendor" in absent.rows[0][2]
                assert "who can use the keys: the team's key in the provider's KMS" in cells
        if record.kind == "residency":
            findings = section.tables[-1]
            assert findings.rows[0][0] == "managed-ft"
            if lang == "ru":
                assert findings.rows[0][1] == "СТОП"
                assert "разрешает только KZ" in findings.rows[0][2]


@pytest.mark.parametrize("lang", ["ru", "kk"])
def test_catalogue_has_every_string_with_its_placeholders(lang: str) -> None:
    source = Path(__file__).resolve().parent.parent / "src" / "gpudecide" / "governance"
    ids = {m[2] for m in extract_from_dir(str(source), method_map=[("**.py", "python")])}
    translated = catalogue("governance", lang)
    assert ids - set(translated) == set()
    for msgid in ids:
        assert set(re.findall(r"\{[^}]*\}", msgid)) == set(
            re.findall(r"\{[^}]*\}", translated[msgid])
        ), msgid


def test_standard_path_section_required(ws: workspace.Workspace) -> None:
    raci = ws.root / "raci.yaml"
    text = raci.read_text()
    raci.write_text(text[: text.index("standard_path:")])
    code, out = _invoke("standard-path", "-w", str(ws.root))
    assert code == 2 and "field 'standard_path': no `standard_path` section" in out


def test_file_option_reads_another_table(ws: workspace.Workspace, tmp_path: Path) -> None:
    other = tmp_path / "raci-draft.yaml"
    text = (ws.root / "raci.yaml").read_text()
    # The draft drops the node replacement row: the dedicated options are stopped (D5).
    start = text.index("  - id: replace-failed-node")
    end = text.index("  - id: decommission")
    other.write_text(text[:start] + text[end:])
    code, body = _json("raci", "-w", str(ws.root), "--file", str(other))
    assert code == 1 and body["verdict"] == "fail"
    stopped = {o["option"] for o in body["options"] if o["stopped"]}  # type: ignore[attr-defined]
    assert stopped == {"owned-8xh100", "rented-8gpu", "kz-rented-2gpu", "hybrid-kz"}


@pytest.mark.parametrize(
    ("name", "model"), [("raci.yaml", RaciFile), ("isolation.yaml", IsolationFile)]
)
def test_templates_document_every_field(name: str, model: type[BaseModel]) -> None:
    lines = workspace.template_files()[name].splitlines()
    for dotted in _fields(model):
        key = dotted.split(".")[-1]
        idx = next(
            (i for i, ln in enumerate(lines) if re.match(rf"\s*(- )?(\{{)?{key}:", ln)), None
        )
        assert idx is not None, f"{name}: {dotted} missing from the template"
        assert lines[idx - 1].lstrip().startswith("#"), f"{name}: {dotted} has no comment above"


# --- no credential the team pastes into an input reaches anything archived (issue 28) -------

LEAK = "hf_" + "Zq8vR2mX9kL4pT7wNd3cF6hJaBcDeFgH"


def _set(data: object, path: tuple[object, ...], value: object) -> None:
    for part in path[:-1]:
        data = data[part]  # type: ignore[index]
    data[path[-1]] = value  # type: ignore[index]


@pytest.mark.parametrize(
    ("file", "cmd", "path"),
    [
        ("raci.yaml", "raci", ("people", 0, "name")),
        ("raci.yaml", "raci", ("vendors", 0, "name")),
        ("raci.yaml", "raci", ("activities", 0, "title")),
        ("isolation.yaml", "isolation", ("assets", 0, "name")),
        ("isolation.yaml", "isolation", ("options", 0, "boundaries", 0, "mechanism")),
        ("isolation.yaml", "isolation", ("options", 0, "boundaries", 0, "proof", "test")),
        ("isolation.yaml", "isolation", ("options", 0, "residue", 0, "detail")),
        ("isolation.yaml", "isolation", ("options", 0, "not_applicable")),
        ("isolation.yaml", "isolation", ("options", 0, "boundaries", 1, "proof")),
        ("gpudecide.yaml", "residency", ("matrix", "residency", 0, "basis")),
    ],
    ids=lambda v: ".".join(map(str, v)) if isinstance(v, tuple) else str(v),
)
def test_a_credential_in_any_free_text_field_is_masked_everywhere(
    ws: workspace.Workspace, file: str, cmd: str, path: tuple[object, ...]
) -> None:
    """Every free-text field of raci.yaml, isolation.yaml and the residency requirement, with
    a token pasted in: the command's lines, its JSON, the record, the OSCAL document and the
    report section hold no trace of it."""
    import yaml

    target = ws.root / file
    data = yaml.safe_load(target.read_text())
    text = f"see ticket 7, token={LEAK[3:]} and {LEAK}"
    if path[-1] == "not_applicable":
        value: object = [{"adversary": "contractor", "reason": text}]
    elif path[-1] == "proof":
        (ws.root / "docs" / "leak.md").write_text(f"Keys are rotated; {text}.\n")
        value = {"document": "docs/leak.md", "excerpt": text}
    else:
        value = text
    _set(data, path, value)
    target.write_text(yaml.safe_dump(data, allow_unicode=True))
    code, out = _invoke(cmd, "-w", str(ws.root))
    assert code in (0, 1), out
    res = CliRunner().invoke(_app(), ["check", cmd, "-w", str(ws.root), "--json"])
    body = json.loads(res.stdout)
    shown = [out, res.stdout, Path(body["evidence"]).read_text()]
    if cmd == "isolation":
        shown.append(Path(body["oscal"]).read_text())
    record = ev.load(Path(body["evidence"]))
    section = Section(record.kind, "", record, "fresh", "", [])
    with speaking("ru"):
        governance_section(section)
    shown.append(json.dumps([t.rows for t in section.tables], ensure_ascii=False))
    for said in shown:
        assert LEAK[3:] not in said and LEAK[3:15] not in said


@pytest.mark.parametrize("where", ["sites", "residency"])
@pytest.mark.parametrize("code", ["kz", "Kz", "xx", "ZZ", "KAZ", "K", "", " KZ", "K1"])
def test_a_bad_country_code_is_bad_input(tmp_path: Path, where: str, code: str) -> None:
    """Residency reads country codes from the options' sites and from the requirement: a
    lower-case, unknown or malformed code is exit 2 naming the field, never a verdict; the
    twin, KZ, is read."""
    import yaml

    w = demo_workspace(tmp_path / "ws")
    (w.root / "isolation.yaml").unlink()
    config = w.root / workspace.CONFIG_NAME
    data = yaml.safe_load(config.read_text())
    if where == "sites":
        data["options"][0]["sites"][0]["country"] = code
    else:
        data["matrix"]["residency"][0]["countries"] = [code]
    config.write_text(yaml.safe_dump(data, allow_unicode=True))
    exit_code, out = _invoke("residency", "-w", str(w.root))
    assert exit_code == 2, out
    assert "country" in out or "countries" in out
    assert "Traceback" not in out
    if where == "sites":
        data["options"][0]["sites"][0]["country"] = "KZ"
    else:
        data["matrix"]["residency"][0]["countries"] = ["KZ"]
    config.write_text(yaml.safe_dump(data, allow_unicode=True))
    exit_code, out = _invoke("residency", "-w", str(w.root))
    assert exit_code in (0, 1), out


@pytest.mark.parametrize("cmd", ["raci", "standard-path", "isolation"])
@pytest.mark.parametrize("kind", ["folder", "fifo", "device", "missing"])
def test_file_that_is_not_a_file_is_refused_at_once(
    ws: workspace.Workspace, tmp_path: Path, cmd: str, kind: str
) -> None:
    """`--file` naming a folder, a FIFO, /dev/zero or nothing: exit 2 naming the path and
    `--file`, before anything reads it (a FIFO would hang)."""
    import os

    target = {"folder": tmp_path, "device": Path("/dev/zero")}.get(kind, tmp_path / "in.yaml")
    if kind == "fifo":
        os.mkfifo(target)
    code, out = _invoke(cmd, "-w", str(ws.root), "--file", str(target))
    assert code == 2, out
    assert "--file" in out and "Traceback" not in out
    assert ("no such file" if kind == "missing" else "not a regular file") in out


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf", "true", "0", "-0.5", "1.5", "'half'"])
def test_bus_factor_share_of_another_kind_is_bad_input(ws: workspace.Workspace, value: str) -> None:
    _edit(ws.root / "raci.yaml", "bus_factor_max_share: 0.5", f"bus_factor_max_share: {value}")
    code, out = _invoke("raci", "-w", str(ws.root))
    assert code == 2, out
    # The line of the value, and the field where the schema names it (a NaN is refused by
    # the reader before any field is known).
    line = _line_of(ws.root / "raci.yaml", "bus_factor_max_share")
    assert f"raci.yaml:{line}:" in out and "Traceback" not in out


def test_a_fresh_standard_path_is_not_checked(tmp_path: Path) -> None:
    """The template's standard path states nothing: no missing control, no score."""
    root = tmp_path / "fresh"
    workspace.init(root)
    code, body = _json("standard-path", "-w", str(root))
    assert code == 0, body
    assert {f["id"] for f in body["findings"]} == {"path_unanswered"}  # type: ignore[attr-defined]
    assert rules.rules(ev.load(Path(str(body["evidence"])))) == []
