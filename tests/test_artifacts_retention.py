"""What an audit record says it audited and what the team decided about keeping it (issue 21
items 1 and 5, issue 22: A1 and A8 in the report).

- `retention.yaml` `questions.key_custody` (team | provider | shared | unknown) beside the
  words of `key_access`: every value recorded as `figures["retention"]["key_custody"]` with
  its line, every other value refused by class (exit 2, one line naming file:line:field),
  a note when only one of the two is given, and the decision's key custody contradiction
  found on a real audit record (with its twin that must not trigger).
- `figures["contour"]`: no executor, the storage read (the `--source` URL without its
  credentials, else the folder), `vendor_export` only for an option whose contour is the
  vendor's; the option named must be declared.
- The report: every A1 artifact class with its retention class, lifetime, location,
  encryption, backup and restore-test interval and the lines that say so; every A8 question,
  an open one pointing at the line where it is answered; in ru and kk; a record written
  before these fields still renders.
"""

from __future__ import annotations

import json
import shutil
import string
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner, Result

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.artifacts import audit
from gpudecide.artifacts import retention as ret
from gpudecide.artifacts.cli import register
from gpudecide.artifacts.demo import DATA
from gpudecide.artifacts.figures import figures_of
from gpudecide.artifacts.remote import shown_url
from gpudecide.artifacts.report import audit_section
from gpudecide.artifacts.words import ARTIFACT_CLASS_NAMES, word
from gpudecide.decision.context import RuleContext
from gpudecide.decision.contradictions import contradictions
from gpudecide.demo import CONFIG_DATA
from gpudecide.i18n import speaking
from gpudecide.report.model import Section


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """Test shell."""

    register(app)
    return app


APP = _app()


def run(*args: str) -> Result:
    return CliRunner().invoke(APP, list(args))


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace declaring the demo's options (managed-ft managed, owned-8xh100 owned),
    with the vendor's export of the demo beside it."""
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "ws"
    workspace.init(root)
    shutil.copyfile(CONFIG_DATA, root / workspace.CONFIG_NAME)
    shutil.copytree(DATA / "vendor-run-7", root / "export")
    return root


def _policy(root: Path, **answers: str | None) -> str:
    """The template's retention.yaml with `questions` answered as given (YAML values)."""
    text = workspace.template_files()["retention.yaml"]
    for key, value in answers.items():
        text = text.replace(f"  {key}: null", f"  {key}: {value}")
    (root / "retention.yaml").write_text(text)
    return text


def _line(text: str, start: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if line.startswith(start))


def _audit(root: Path, *extra: str) -> tuple[Result, dict[str, Any]]:
    res = run("audit", str(root / "export"), "-w", str(root), "--json", *extra)
    body = json.loads(res.stdout) if res.stdout.strip().startswith("{") else {}
    return res, body


def _record(body: dict[str, Any]) -> ev.Evidence:
    record = ev.load(Path(body["evidence"]))
    figures = json.loads(json.dumps(record.figures))
    assert figures_of(record).model_dump(mode="json") == figures  # the shape, key for key
    return record


# ---- key custody ----------------------------------------------------------------------------


@pytest.mark.parametrize("custody", ret.KEY_CUSTODY)
def test_every_key_custody_is_recorded_with_its_line(ws: Path, custody: str) -> None:
    text = _policy(ws, key_access='"HSM admins (runbook KM-3)"', key_custody=custody)
    res, body = _audit(ws)
    assert res.exit_code == 1, res.output  # the demo export's hazards
    retention = _record(body).figures["retention"]
    assert retention["key_custody"] == custody
    assert retention["key_custody_source"] == f"retention.yaml:{_line(text, '  key_custody:')}"


def test_no_key_custody_is_none_and_no_policy_is_none(ws: Path) -> None:
    _policy(ws)
    _res, body = _audit(ws)
    retention = _record(body).figures["retention"]
    assert (retention["key_custody"], retention["key_custody_source"]) == (None, None)
    (ws / "retention.yaml").unlink()
    _res, body = _audit(ws)
    retention = _record(body).figures["retention"]
    assert retention["policy"] is None and retention["key_custody"] is None


@pytest.mark.parametrize(
    "value",
    ["vendor", "Team", "TEAM", '""', "1", "true", "[team]", "{team: yes}", "1.5", "team provider"],
)
def test_a_key_custody_outside_the_four_is_refused(ws: Path, value: str) -> None:
    text = _policy(ws, key_custody=value)
    res, _body = _audit(ws)
    assert res.exit_code == 2, res.output
    err = json.loads(res.stdout)
    assert err["path"].endswith("retention.yaml")
    assert err["line"] == _line(text, "  key_custody:")
    assert err["field"] == "questions.key_custody"
    assert not (ws / "evidence").exists() or not list((ws / "evidence").glob("audit-*"))


@pytest.mark.parametrize(
    ("answers", "note"),
    [
        ({"key_access": '"HSM admins only"'}, "in words only"),
        ({"key_custody": "team"}, "but not where that is written down"),
        ({"key_access": '"HSM admins only"', "key_custody": "team"}, None),
        ({"key_custody": "unknown"}, None),
        ({}, None),
    ],
)
def test_custody_said_one_way_only_is_a_note(
    ws: Path, answers: dict[str, str], note: str | None
) -> None:
    _policy(ws, **answers)
    _res, body = _audit(ws)
    custody_notes = [n for n in _record(body).notes if "key" in n and "retention.yaml" in n]
    if note is None:
        assert custody_notes == []
    else:
        assert len(custody_notes) == 1 and note in custody_notes[0]


def _isolation(custody: str) -> ev.Evidence:
    figures = {"options": [{"option": "managed-ft", "boundaries": [
        {"boundary": "keys", "status": "claimed", "custody": custody}
    ]}], "assets": []}  # fmt: skip
    return ev.seal(
        ev.Evidence(
            kind="isolation", title="i", spec_ids=[], verdict="info", summary="i", figures=figures
        )
    )


@pytest.mark.parametrize(
    ("policy", "isolation", "found"),
    [
        ("team", "provider", True),  # "the vendor never sees the key" against vendor keys
        ("team", "shared", True),
        ("team", "team", False),  # the twins: the same answer, or no claim of the team's
        ("provider", "provider", False),
        ("unknown", "provider", False),
    ],
)
def test_the_decision_finds_the_key_custody_contradiction_on_a_real_record(
    ws: Path, policy: str, isolation: str, found: bool
) -> None:
    _policy(ws, key_access='"HSM admins only; the vendor never sees the key"', key_custody=policy)
    _res, body = _audit(ws, "--option", "managed-ft")
    record = _record(body)
    loaded = workspace.load(ws)
    checks = {
        ("audit", "managed-ft", None): record,
        ("isolation", "managed-ft", None): _isolation(isolation),
    }
    ctx = RuleContext(loaded.config.options, loaded.config.matrix, checks)
    ids = [(c.id, c.option) for c in contradictions(ctx, {})]
    assert (("key_custody", "managed-ft") in ids) is found


# ---- what was audited -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "artifacts"),
    [("managed-ft", "vendor_export"), ("kz-local", "vendor_export"), ("owned-8xh100",
     "produced_here"), (None, "produced_here")],
)  # fmt: skip
def test_the_contour_says_whose_artifacts_were_audited(
    ws: Path, option: str | None, artifacts: str
) -> None:
    _res, body = _audit(ws, *(["--option", option] if option else []))
    record = _record(body)
    assert record.figures["contour"] == {
        "executor": None,
        "storage": "export",
        "artifacts": artifacts,
    }
    assert record.figures.get("option") == option


def test_the_option_must_be_declared(ws: Path, tmp_path: Path) -> None:
    res, _body = _audit(ws, "--option", "no-such-option")
    assert res.exit_code == 2
    assert json.loads(res.stdout)["field"] == "--option"
    outside = run("audit", str(ws / "export"), "--option", "managed-ft", "--json")
    assert outside.exit_code == 2, outside.output  # no workspace declares it
    err = json.loads(outside.stdout)
    assert err["field"] == "--option" and "no workspace declares" in err["error"]
    assert not (tmp_path / "evidence").exists()
    assert not list((ws / "evidence").glob("audit-*"))


def test_a_source_url_leaves_its_credentials_out_of_the_record(ws: Path) -> None:
    import fsspec  # type: ignore[import-untyped]

    memory = fsspec.filesystem("memory")
    url = "memory://AKIAABCDEFGHIJKLMNOP:s3cr3tValue@vendor/run-7?X-Amz-Signature=f00d"
    root = url.removeprefix("memory:/")  # the memory driver keeps the whole URL as its path
    for f in (DATA / "vendor-run-7").iterdir():
        memory.pipe(f"{root}/{f.name}", f.read_bytes())
    res = run("audit", str(ws / "copy"), "--source", url, "-w", str(ws), "--json")
    assert res.exit_code == 1, res.output
    body = json.loads(res.stdout)
    record = _record(body)
    text = Path(body["evidence"]).read_text() + res.stdout
    for secret in ("AKIAABCDEFGHIJKLMNOP", "s3cr3tValue", "f00d"):
        assert secret not in text
    assert record.figures["contour"]["storage"] == "memory://vendor/run-7"
    assert record.figures["source"] == record.figures["egress"]["source"] == "memory://vendor/run-7"
    missing = run("audit", str(ws / "copy2"), "--source", url.replace("run-7", "none"), "--json")
    assert missing.exit_code == 2
    assert "s3cr3tValue" not in missing.output and "AKIA" not in missing.output
    memory.rm(root, recursive=True)


_PART = st.text(string.ascii_letters + string.digits + "-._~%!$&'()*+,;=", min_size=3)


@given(
    scheme=st.sampled_from(["s3", "gs", "https", "abfs", "memory", "sftp"]),
    user=_PART,
    password=_PART,
    host=st.from_regex(r"[a-z][a-z0-9-]{0,20}(\.[a-z]{2,5})?", fullmatch=True),
    path=st.text(string.ascii_letters + string.digits + "/-_.", max_size=30),
    query=_PART,
)
def test_shown_url_never_shows_user_information_or_query(
    scheme: str, user: str, password: str, host: str, path: str, query: str
) -> None:
    url = f"{scheme}://{user}:{password}@{host}/{path}?sig={query}#{query}"
    shown = shown_url(url)
    assert shown.startswith(f"{scheme}://{host}")
    assert "@" not in shown and "?" not in shown and "#" not in shown
    assert f"{user}:{password}" not in shown


@given(st.text())
def test_shown_url_takes_any_text(text: str) -> None:
    assert isinstance(shown_url(text), str)


# ---- the report -----------------------------------------------------------------------------


def _section(record: ev.Evidence) -> Section:
    section = Section("audit", "", ev.seal(record), "fresh", "fresh", [])
    audit_section(section)
    return section


def _table(section: Section, caption: str) -> list[list[str]]:
    return next(t.rows for t in section.tables if t.caption == caption)


def test_every_artifact_class_and_its_retention_in_the_report(ws: Path) -> None:
    text = _policy(ws, key_access='"HSM admins (runbook KM-3)"', key_custody="team")
    (ws / "retention.yaml").write_text(text.replace("  tokenizer: regulated-3y\n", ""))
    text = (ws / "retention.yaml").read_text()
    record = audit.run(ws / "export", workspace_root=ws).record
    section = _section(record)
    rows = {r[0]: r for r in _table(section, "Artifact classes and their retention (A1, A3)")}
    assert len(rows) == len(ret.ARTIFACT_CLASSES)
    adapters = rows["adapters"]
    mapped, defined = _line(text, "  adapters:"), _line(text, "  regulated-3y:")
    # the vendor's export holds an adapter: kept 1,095 days, restore-tested every 90
    assert adapters == [
        "adapters",
        "yes",
        "regulated-3y",
        "1,095",
        "90",
        f"retention.yaml:{mapped}",
    ]
    classes = {r[0]: r for r in _table(section, "Retention classes (A3)")}
    assert set(classes) == {"regulated-3y", "research-90d"}
    assert classes["regulated-3y"] == [
        "regulated-3y",
        "1,095",
        "on-prem object store, Almaty DC-1, bucket ml-regulated",
        "SSE with customer-managed key in the bank's HSM",
        "nightly replica to DC-2, 30 daily versions",
        "90",
        f"retention.yaml:{defined}",
    ]
    assert rows["metrics"][1:5] == ["yes", "research-90d", "90", "30"]
    assert rows["base model weights"][1] == "no"
    assert rows["tokenizer"][2] == "no retention decided"
    assert rows["tokenizer"][-1] == "retention.yaml: add it under artifact_classes"


def test_every_a8_question_points_at_its_line(ws: Path) -> None:
    text = _policy(ws, retention_owner='"Head of ML platform (RB-12)"', key_custody="provider")
    record = audit.run(ws / "export", workspace_root=ws).record
    rows = {r[0]: r for r in _table(_section(record), "Retention questions (A8)")}
    owner = rows["Who sets retention?"]
    assert owner[1:] == [
        "answered",
        "Head of ML platform (RB-12)",
        f"retention.yaml:{_line(text, '  retention_owner:')}",
    ]
    hold = rows["Is a legal hold possible, and who places it?"]
    assert hold[1:] == ["open", "", f"answer it at retention.yaml:{_line(text, '  legal_hold:')}"]
    custody = rows["Who holds the keys (key_custody)"]
    assert custody[1:3] == ["answered", "the provider"]
    assert custody[3] == f"retention.yaml:{_line(text, '  key_custody:')}"


def test_without_a_policy_the_report_says_where_to_start(ws: Path) -> None:
    (ws / "retention.yaml").unlink()
    record = audit.run(ws / "export", workspace_root=ws).record
    section = _section(record)
    classes = _table(section, "Artifact classes and their retention (A1, A3)")
    assert {r[2] for r in classes} == {"no retention decided"}
    assert {r[-1] for r in classes} == {"no retention.yaml: gpudecide init writes one"}
    questions = _table(section, "Retention questions (A8)")
    assert {r[1] for r in questions} == {"open"}
    assert {r[3] for r in questions} == {"no retention.yaml: gpudecide init writes one"}


@pytest.mark.parametrize("lang", ["ru", "kk"])
def test_the_retention_tables_speak_the_language(ws: Path, lang: str) -> None:
    shutil.copyfile(DATA / "retention.yaml", ws / "retention.yaml")
    record = audit.run(
        ws / "export", workspace_root=ws, option="managed-ft", from_vendor=True
    ).record
    english = _section(record)
    with speaking(lang):
        said = _section(record)
    assert len(english.tables) == len(said.tables)
    for index in (0, -3, -2, -1):  # what was audited, the two class tables, the A8 questions
        en, tr = english.tables[index], said.tables[index]
        assert tr.caption != en.caption
        assert all(a != b for a, b in zip(en.headers, tr.headers, strict=True))
        if index != -2:  # the retention classes are named by the team, as written
            assert all(a[0] != b[0] for a, b in zip(en.rows, tr.rows, strict=True))
    en_classes = _table(english, "Artifact classes and their retention (A1, A3)")
    tr_classes = said.tables[-3].rows
    assert [r[0] for r in tr_classes] != [r[0] for r in en_classes]
    assert [r[2] for r in tr_classes] == [r[2] for r in en_classes]  # class names as written
    assert tr_classes[0][3] == "1\xa0095" and en_classes[0][3] == "1,095"  # the reader's signs
    en_defined, tr_defined = english.tables[-2].rows, said.tables[-2].rows
    # the team's own words and the lines stay as written
    assert [r[2:5] + r[6:] for r in tr_defined] == [r[2:5] + r[6:] for r in en_defined]
    audited = said.tables[0].rows
    assert audited[0][1] == "export" and audited[2][1] == "managed-ft"


def test_a_record_written_before_these_fields_still_renders(ws: Path) -> None:
    _policy(ws, key_access='"HSM admins"', key_custody="team")
    record = audit.run(ws / "export", workspace_root=ws).record
    older = json.loads(json.dumps(record.figures))
    older.pop("contour")
    for key in ("key_custody", "key_custody_source", "artifact_classes", "retention_classes"):
        older["retention"].pop(key)
    for q in older["retention"]["questions"]:
        q.pop("asked_at")
    old = record.model_copy(update={"figures": older})
    section = _section(old)
    assert "What was audited" not in [t.caption for t in section.tables]
    classes = _table(section, "Artifact classes and their retention (A1, A3)")
    present = figures_of(old).retention.artifact_classes_present
    assert [r[0] for r in classes] == [word(ARTIFACT_CLASS_NAMES, c) for c in present]
    assert all(r[2] == "regulated-3y" or r[0] == "metrics" for r in classes)


def test_the_template_documents_key_custody() -> None:
    text = workspace.template_files()["retention.yaml"]
    doc = yaml.safe_load(text)
    assert doc["questions"]["key_custody"] is None
    lines = text.splitlines()
    idx = next(i for i, line in enumerate(lines) if line.startswith("  key_custody:"))
    comment = " ".join(line.strip("# ") for line in lines[idx - 4 : idx])
    for value in ret.KEY_CUSTODY:
        assert value in comment
    demo = yaml.safe_load((DATA / "retention.yaml").read_text())
    assert demo["questions"]["key_custody"] == "team"
    assert "the vendor never sees the key" in demo["questions"]["key_access"]
