"""Malformed and hostile inputs through the real CLI: one line naming file/line/field, exit 2,
nothing written (issue 14 items 1-4, 10). Each input is made the way an attacker would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field
from typer.testing import CliRunner

from gpudecide.cli import app
from gpudecide.errors import InputError

GOOD = {
    "job_id": "a",
    "gpu_count": 4,
    "state": "completed",
    "submit": "2026-01-05T09:00:00Z",
    "start": "2026-01-05T10:00:00Z",
    "end": "2026-01-05T12:00:00Z",
}


def _ws(tmp_path: Path) -> Path:
    res = CliRunner().invoke(app, ["init", str(tmp_path / "ws")])
    assert res.exit_code == 0, res.output
    return tmp_path / "ws"


def _evidence(ws: Path) -> list[Path]:
    return sorted((ws / "evidence").glob("*"))


def _one_line_error(res: object, *parts: str) -> str:
    stderr = res.stderr  # type: ignore[attr-defined]
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in res.output  # type: ignore[attr-defined]
    for part in parts:
        assert part in lines[0], lines[0]
    return lines[0]


def _jsonl(path: Path, *rows: dict[str, object] | str) -> Path:
    text = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)
    path.write_text(text)
    return path


# ---- classes 1 and 2: out-of-range and impossible values -----------------------------------

IMPOSSIBLE_JSONL = [
    ('"gpu_count": 3e9', "gpu_count", "above 100000"),
    ('"gpu_count": 3000000000', "gpu_count", "above 100000"),
    ('"gpu_count": -4', "gpu_count", "below 0"),
    ('"gpu_count": Infinity', None, "finite"),
    ('"gpu_count": NaN', None, "finite"),
    ('"gpu_count": 1e400', None, "finite"),
    ('"start": "9999-01-05T10:00:00Z"', "start", "outside 2000-2099"),
    ('"start": "0001-01-01T00:00:00+05:00"', "start", "not an ISO 8601 time"),
    ('"end": "2200-01-05T10:00:00Z"', "end", "outside 2000-2099"),
    ('"end": "2026-01-05T09:30:00Z"', "end", "before start"),
    ('"end": "2099-01-05T09:30:00Z"', "end", "400 days"),
    ('"priority": ' + "9" * 400, None, "more than 19 digits"),
]


@pytest.mark.parametrize(("patch", "field", "reason"), IMPOSSIBLE_JSONL)
def test_impossible_jsonl_value_is_a_row_error(
    tmp_path: Path, patch: str, field: str | None, reason: str
) -> None:
    ws = _ws(tmp_path)
    key = patch.split(":")[0].strip('"')
    bad = json.dumps({k: v for k, v in GOOD.items() if k != key}).rstrip("}") + ", " + patch + "}"
    log = _jsonl(tmp_path / "jobs.jsonl", GOOD, bad)
    res = CliRunner().invoke(app, ["profile", str(log), "-w", str(ws)])
    assert res.exit_code == 2
    line = _one_line_error(res, f"{log}:2", reason)
    if field:
        assert f"field '{field}'" in line
    assert _evidence(ws) == []
    # --skip-bad-rows: the row is counted and listed with its reason, the good one is kept.
    res = CliRunner().invoke(app, ["profile", str(log), "-w", str(ws), "--skip-bad-rows", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    figures = out.get("figures", out)
    assert figures["skipped_rows"] == 1
    assert figures["jobs_total"] == 1


def test_impossible_csv_values(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    log = tmp_path / "jobs.csv"
    log.write_text(
        "job_id,gpu_count,state,start,end\n"
        "a,4,COMPLETED,2026-01-05T10:00:00Z,2026-01-05T12:00:00Z\n"
        "b,Infinity,COMPLETED,2026-01-05T10:00:00Z,2026-01-05T12:00:00Z\n"
    )
    res = CliRunner().invoke(app, ["profile", str(log), "-w", str(ws)])
    assert res.exit_code == 2
    _one_line_error(res, f"{log}:3", "field 'gpu_count'", "not an integer")
    assert _evidence(ws) == []


def test_managed_job_with_absurd_counts(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    job = {
        "TrainingJobName": "ft-1",
        "TrainingJobStatus": "Completed",
        "CreationTime": "2026-01-05T09:00:00Z",
        "TrainingEndTime": "2026-01-05T12:00:00Z",
        "ResourceConfig": {"InstanceType": "ml.p5.48xlarge", "InstanceCount": 10**15},
    }
    path = tmp_path / "sm.json"
    path.write_text(json.dumps(job))
    res = CliRunner().invoke(app, ["profile", str(path), "-w", str(ws)])
    assert res.exit_code == 2
    _one_line_error(res, str(path), "InstanceCount", "more than 100000 GPUs")
    job["ResourceConfig"] = [1, 2]  # wrong shape: a list where an object belongs
    path.write_text(json.dumps(job))
    res = CliRunner().invoke(app, ["profile", str(path), "-w", str(ws)])
    assert res.exit_code == 2
    _one_line_error(res, str(path), "field '$'", "wrong type")
    assert _evidence(ws) == []


def test_kubernetes_pod_asking_for_billions_of_gpus(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    pod = {
        "kind": "Pod",
        "metadata": {"name": "p", "creationTimestamp": "2026-01-05T09:00:00Z"},
        "spec": {"containers": [{"resources": {"limits": {"nvidia.com/gpu": "3000000000"}}}]},
        "status": {"phase": "Succeeded"},
    }
    path = tmp_path / "pods.json"
    path.write_text(json.dumps({"kind": "PodList", "items": [pod]}))
    res = CliRunner().invoke(app, ["profile", str(path), "-w", str(ws)])
    assert res.exit_code == 2
    _one_line_error(res, str(path), "items[0]", "not a whole number of GPUs")
    assert _evidence(ws) == []


# ---- class 3: depth, size, aliases ---------------------------------------------------------

ALIAS_BOMB = (
    'a: &a ["x","x","x","x","x","x","x","x","x"]\n'
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
)


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        (ALIAS_BOMB, 1, "anchors"),
        ("team: x\nreport: " + "[" * 5000 + "]" * 5000 + "\n", 2, "nested deeper than 64"),
        ("team: &t x\ndecision: *t\n", 1, "anchors"),
        ("report:\n  <<: {language: en}\n", 2, "merge keys"),
        ("timezone: Asia/Almaty\nteam: x\ntimezone: UTC\n", 3, "given twice"),
        ("profile:\n  weeks: .inf\n", 2, "finite"),
        ("team: x\nprofile:\n  weeks: true\n", 3, "expected a number, not True"),
        ("team: x\nprofile:\n  weeks: -.Inf\n", 3, "finite"),
        ("profile:\n  weeks: " + "9" * 400 + "\n", 2, "19 digits"),
    ],
)
def test_workspace_config_attacks(tmp_path: Path, text: str, line: int, reason: str) -> None:
    ws = _ws(tmp_path)
    (ws / "gpudecide.yaml").write_text(text)
    res = CliRunner().invoke(app, ["evidence", "-w", str(ws)])
    assert res.exit_code == 2
    _one_line_error(res, f"{ws / 'gpudecide.yaml'}:{line}:", reason)


def test_the_boolean_check_builds_no_json_schema(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The boolean-for-a-number check walks the model's core schema, built with the class,
    along the data: no JSON schema is generated (issue 25: tens of ms a model)."""
    from gpudecide import inputs
    from gpudecide.workspace import WorkspaceConfig as Config

    def refused(*_a: object, **_k: object) -> None:
        raise AssertionError("a JSON schema was built")

    monkeypatch.setattr(Config, "model_json_schema", refused)
    path = tmp_path / "gpudecide.yaml"
    clean = {"team": "x", "profile": {"weeks": 4}, "options": []}
    assert inputs.validate_model(clean, None, path, Config).profile.weeks == 4
    with pytest.raises(InputError, match="expected a number, not True"):
        inputs.validate_model({**clean, "profile": {"weeks": True}}, None, path, Config)


class _Inner(BaseModel):
    share: float = 0.0
    on: bool = False


class _Shapes(BaseModel):
    model_config = ConfigDict(extra="forbid")

    count: int = 0
    maybe: int | None = None
    either: int | str = 0
    flag_or_n: bool | int = 0
    shares: list[float] = []
    by_name: dict[str, float] = {}
    pair: tuple[float, str] = (0.0, "")
    many: tuple[int, ...] = ()
    level: Literal[1, 2] = 1
    positive: Annotated[float, Field(gt=0)] = 1.0
    aliased: float = Field(0.0, alias="Aliased")
    inner: _Inner = _Inner()
    inners: list[_Inner] = []
    when: str = ""


@pytest.mark.parametrize(
    ("data", "where", "reason"),
    [
        ({"count": True}, "count", "not True"),
        ({"maybe": False}, "maybe", "not False"),
        ({"either": True}, "either", "not True"),
        ({"shares": [0.5, True]}, "shares.1", "not True"),
        ({"shares": [float("nan")]}, "shares.0", "finite"),
        ({"by_name": {"a": float("inf")}}, "by_name.a", "finite"),
        ({"pair": [True, "x"]}, "pair.0", "not True"),
        ({"many": [1, 2, False]}, "many.2", "not False"),
        ({"level": True}, "level", "not True"),
        ({"positive": float("-inf")}, "positive", "finite"),
        ({"Aliased": True}, "Aliased", "not True"),
        ({"inner": {"share": True}}, "inner.share", "not True"),
        ({"inners": [{}, {"share": float("nan")}]}, "inners.1.share", "finite"),
    ],
)
def test_a_boolean_or_nan_for_a_number_is_refused_in_every_shape(
    tmp_path: Path, data: dict[str, object], where: str, reason: str
) -> None:
    from gpudecide import inputs

    with pytest.raises(InputError) as raised:
        inputs.validate_model(data, None, tmp_path / "f.yaml", _Shapes)
    assert raised.value.field == where
    assert reason in str(raised.value)


@pytest.mark.parametrize(
    "data",
    [
        {"flag_or_n": True},
        {"inner": {"on": True}},
        {"inners": [{"on": False}]},
        {"pair": [1.5, "true"]},
        {"when": "nan"},
    ],
)
def test_a_boolean_where_one_belongs_is_taken(tmp_path: Path, data: dict[str, object]) -> None:
    from gpudecide import inputs

    inputs.validate_model(data, None, tmp_path / "f.yaml", _Shapes)


def test_huge_yaml_is_refused_before_parsing(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    with open(ws / "gpudecide.yaml", "w") as handle:
        handle.write("team: x\n" + "# padding\n" * (1 << 20))
    res = CliRunner().invoke(app, ["evidence", "-w", str(ws)])
    assert res.exit_code == 2
    _one_line_error(res, "gpudecide.yaml", "larger than the 8 MiB")


def test_alias_bomb_through_manifest_create_from(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "weights.bin").write_bytes(b"\0" * 64)
    info = tmp_path / "run.yaml"
    info.write_text("training:\n  hyperparameters:\n" + "    " + ALIAS_BOMB.replace("\n", "\n    "))
    out = tmp_path / "manifest.json"
    res = CliRunner().invoke(
        app, ["manifest", "create", str(run), "--from", str(info), "--out", str(out)]
    )
    assert res.exit_code == 2, res.output
    _one_line_error(res, f"{info}:", "anchors")
    assert not out.exists()


# ---- class 4: numbers beyond sane bounds ---------------------------------------------------


def _costs_line(ws: Path, old: str, new: str) -> int:
    path = ws / "costs.yaml"
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))
    return text[: text.index(old)].count("\n") + 1


@pytest.mark.parametrize("value", ["1e308", "9" * 400, ".inf", ".nan", "-1"])
def test_cost_amounts_beyond_bounds(tmp_path: Path, value: str) -> None:
    from gpudecide.cost import schema

    ws = _ws(tmp_path)
    text = (ws / "costs.yaml").read_text()
    first = next(ln for ln in text.splitlines() if ln.strip().startswith("amount:"))
    line = _costs_line(ws, first, first.split("amount:")[0] + "amount: " + value)
    from gpudecide.errors import InputError

    with pytest.raises(InputError) as info:
        schema.load(ws / "costs.yaml")
    err = info.value
    assert err.line == line and err.path == str(ws / "costs.yaml")
    assert err.field is None or err.field.endswith("amount")


def test_emit_json_never_prints_infinity(tmp_path: Path) -> None:
    import typer

    from gpudecide.console import emit_json, guard

    sub = typer.Typer()

    @sub.command()
    def show(as_json: bool = typer.Option(False, "--json")) -> None:
        with guard(as_json):
            emit_json({"p95": float("inf")})

    res = CliRunner().invoke(sub, ["--json"])
    assert res.exit_code == 2
    assert "Infinity" not in res.stdout
    _one_line_error(res, "not a finite number", "p95")


def test_evidence_write_refuses_nan(tmp_path: Path) -> None:
    from gpudecide import evidence as ev
    from gpudecide.errors import InputError

    rec = ev.Evidence(
        kind="queue",
        title="t",
        spec_ids=["Q1"],
        verdict="info",
        summary="s",
        figures={"slo": {"threshold_minutes": float("inf")}},
    )
    with pytest.raises(InputError, match=r"figures\.slo\.threshold_minutes"):
        ev.write(rec, tmp_path / "evidence")
    assert not (tmp_path / "evidence").exists() or not list((tmp_path / "evidence").iterdir())


# ---- class 10: duplicate keys --------------------------------------------------------------


def test_duplicate_csv_header(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    log = tmp_path / "jobs.csv"
    log.write_text(
        "job_id,gpu_count,state,GPU_COUNT\na,4,COMPLETED,8\n",
    )
    res = CliRunner().invoke(app, ["profile", str(log), "-w", str(ws)])
    assert res.exit_code == 2
    _one_line_error(res, f"{log}:1", "gpu_count", "named twice")


def test_duplicate_jsonl_key(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    dup = '{"job_id": "b", "gpu_count": 4, "gpu_count": 400, "state": "completed"}'
    log = _jsonl(tmp_path / "jobs.jsonl", GOOD, dup)
    res = CliRunner().invoke(app, ["profile", str(log), "-w", str(ws)])
    assert res.exit_code == 2
    _one_line_error(res, f"{log}:2", "'gpu_count' is given twice")


def test_duplicate_json_key_names_its_line(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    path = tmp_path / "pods.json"
    path.write_text('{\n  "kind": "PodList",\n  "items": [],\n  "kind": "EventList"\n}\n')
    res = CliRunner().invoke(app, ["profile", str(path), "-w", str(ws)])
    assert res.exit_code == 2
    _one_line_error(res, f"{path}:4", "'kind' is given twice")


@pytest.mark.parametrize(
    ("job", "field"),
    [
        ({"id": {"a": 1}}, "[0].id"),
        ({"id": "j", "user_provided_suffix": 5}, "[0]: name"),
        ({"id": "../../etc/passwd", "finished_at": "2026-01-05T08:00:00Z"}, None),
    ],
)
def test_openai_job_fields_of_the_wrong_type(
    tmp_path: Path, job: dict[str, object], field: str | None
) -> None:
    from gpudecide.errors import InputError
    from gpudecide.jobs import managed

    doc = {"object": "fine_tuning.job", "status": "succeeded", "created_at": 1767600000, **job}
    path = tmp_path / "ft.json"
    path.write_text(json.dumps(doc))
    if field is None:  # a path as an id: no file beside the log is looked for under it
        result = managed.read_openai(path, {})
        assert result.table.num_rows == 1
        return
    with pytest.raises(InputError) as info:
        managed.read_openai(path, {})
    assert info.value.field == field and info.value.path == str(path)
