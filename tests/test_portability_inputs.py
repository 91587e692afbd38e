"""`gpudecide export-test` under hostile input, by class (issue 28): every storage URL form,
every number of the plan, every output path, every file of a given export the test reads,
the scheduler it is told to use and the credentials a Kubernetes Job needs. Each refusal is
one line naming the field, exit 2, before any job starts, with nothing written; each rule
has a twin that must pass. No credential appears in any message, record or manifest."""

from __future__ import annotations

import json
import math
import os
import socket
from pathlib import Path
from typing import Any, get_args

import pytest
import typer
import yaml
from annotated_types import Ge, Gt, Le, Lt
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from typer.testing import CliRunner

from gpudecide import workspace
from gpudecide.errors import InputError
from gpudecide.portability.cli import register
from gpudecide.portability.config import MAX_LOGITS
from gpudecide.portability.executors import is_secret_option, split_storage_options
from gpudecide.portability.from_export import check_export_folder, read_metrics
from gpudecide.portability.plan import ExportTestPlan, load_plan
from gpudecide.portability.storage import open_storage, shown_url

from .conftest import examples
from .test_artifacts_s3 import s3  # noqa: F401 (the moto_server fixture, reused)

runner = CliRunner()
KEY_ID = "AKIAIOSFODNN7EXAMPLE"
SECRET = "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY"
IMAGE = "registry.example/train@sha256:" + "ab" * 32


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


def _refused(res: Any, field: str, ws: Path, *hidden: str) -> str:
    """Exit 2, one line naming `field`, nothing started or written, no secret said."""
    assert res.exit_code == 2, res.output
    err = res.stderr.strip()
    assert len(err.splitlines()) <= 2, err  # the error line and its hint
    assert f"field '{field}'" in err, err
    assert "Traceback" not in res.output
    assert not list(ws.glob(".export-test-work/*")), "a job started"
    assert not list((ws / "evidence").glob("export_test-*")), "a record was written"
    for text in hidden:
        assert text not in res.output, f"{text!r} was said"
    return err


# ---- storage URLs, by form ------------------------------------------------------------


@pytest.mark.parametrize(
    "where",
    ["file", "file-parent", "/proc", "/proc/self", "/sys/kernel", "/dev/null", "/dev/shm-x"],
)
def test_local_storage_that_is_no_folder_on_a_disk(ws: Path, where: str) -> None:
    (ws / "a-file").write_text("x\n")
    target = {"file": str(ws / "a-file"), "file-parent": str(ws / "a-file" / "sub")}.get(
        where, where
    )
    res = runner.invoke(_app(), ["export-test", "--storage", target])
    _refused(res, "--storage", ws)


def test_local_storage_twins_pass_the_check(tmp_path: Path) -> None:
    """A folder that does not exist yet (it is made), and an existing empty one."""
    for target in (tmp_path / "new" / "deeper", tmp_path):
        store = open_storage(str(target))
        store.check()
        assert not [p for p in target.iterdir() if p.name.startswith(".gpudecide-check")]


@pytest.mark.parametrize(
    "url",
    [
        f"s3://{KEY_ID}:{SECRET}@bucket/exports",
        f"s3://{KEY_ID}@bucket/exports",
        f"gs://user:{SECRET}@bucket/x",
        f"s3://bucket/x?X-Amz-Credential={KEY_ID}&X-Amz-Signature={SECRET}@x",
    ],
)
def test_credentials_in_the_url_are_refused_and_never_said(ws: Path, url: str) -> None:
    for extra in ([], ["--executor", "k8s", "--dry-run", "--image", IMAGE]):
        res = runner.invoke(_app(), ["export-test", "--storage", url, *extra])
        if "?" in url and "@" not in url.split("?")[0]:
            continue  # a signed query is not user information: it is masked, tested below
        _refused(res, "--storage", ws, KEY_ID, SECRET)
    assert KEY_ID not in shown_url(url) and SECRET not in shown_url(url)


def test_unknown_scheme_is_the_storage_field(ws: Path) -> None:
    res = runner.invoke(_app(), ["export-test", "--storage", "nosuchproto://bucket/x"])
    err = _refused(res, "--storage", ws)
    assert "--source" not in err


def _no_aws(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed once the socket is


def test_s3_on_a_closed_port(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _no_aws(monkeypatch)
    endpoint = f"endpoint_url=http://127.0.0.1:{_closed_port()}"
    args = ["export-test", "--storage", "s3://bucket/x", "--storage-option", endpoint]
    args += ["--storage-option", f"key={KEY_ID}", "--storage-option", f"secret={SECRET}"]
    err = _refused(runner.invoke(_app(), args), "--storage", ws, KEY_ID, SECRET)
    assert "does not answer" in err


def test_s3_without_credentials_and_without_a_bucket(
    ws: Path,
    s3: str,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _no_aws(monkeypatch)
    args = ["export-test", "--storage", "s3://bucket/x", "--storage-option", f"endpoint_url={s3}"]
    err = _refused(runner.invoke(_app(), args), "--storage", ws)
    assert "no credentials" in err
    args += ["--storage-option", "key=testing", "--storage-option", "secret=testing"]
    err = _refused(runner.invoke(_app(), args), "--storage", ws)
    assert "does not exist" in err
    # Twin: the bucket exists; the check writes, reads back and removes its object.
    store = open_storage("s3://made/x", {"endpoint_url": s3, "key": "testing", "secret": "testing"})
    store.fs.mkdir("made")
    store.check()
    assert store.listing() == []


# ---- every number of the plan, by its bounds --------------------------------------------


def _numbers(model: type[BaseModel], prefix: str = "") -> list[tuple[str, Any, list[Any]]]:
    """(dotted field, its type, its constraints) of every number of the plan."""
    out: list[tuple[str, Any, list[Any]]] = []
    for name, info in model.model_fields.items():
        kinds = [t for t in (get_args(info.annotation) or (info.annotation,)) if t is not None]
        nested = [t for t in kinds if isinstance(t, type) and issubclass(t, BaseModel)]
        if nested:
            out += _numbers(nested[0], f"{prefix}{name}.")
        elif any(t in (int, float) for t in kinds):
            kind = int if int in kinds else float
            out.append((f"{prefix}{name}", kind, list(info.metadata)))
    return out


NUMBERS = _numbers(ExportTestPlan)


def _plan_with(dotted: str, value: Any) -> dict[str, Any]:
    plan: dict[str, Any] = {"option": "owned-pool", "model": {"steps": 24, "checkpoint_step": 12}}
    *parents, last = dotted.split(".")
    node = plan
    for p in parents:
        node = node.setdefault(p, {})
    node[last] = value
    if dotted == "model.steps":
        plan["model"]["checkpoint_step"] = 1
    if dotted == "model.checkpoint_step":
        plan["model"]["steps"] = min(value + 1, 10**7)
    if dotted == "model.n_sequences":
        plan["model"]["size"] = "tiny"
    return plan


def test_every_number_of_the_plan_is_bounded() -> None:
    unbounded = [d for d, _k, meta in NUMBERS if not any(isinstance(m, Le | Lt) for m in meta)]
    assert unbounded == [], f"numbers of the plan without an upper bound: {unbounded}"
    assert {d for d, _k, _m in NUMBERS} >= {
        "model.batch_size", "model.n_sequences", "model.threads", "model.lr", "model.seed",
        "model.steps", "tolerance.relative", "throughput_floor_mb", "run_size_gb",
    }  # fmt: skip


@pytest.mark.parametrize(("dotted", "kind", "meta"), NUMBERS, ids=[n[0] for n in NUMBERS])
def test_a_number_past_its_bound_is_refused_at_the_plan(
    tmp_path: Path, dotted: str, kind: type, meta: list[Any]
) -> None:
    high = next(m for m in meta if isinstance(m, Le | Lt))
    top = high.le if isinstance(high, Le) else high.lt
    over = kind(top * 10 + 1) if top else kind(1)
    path = tmp_path / "export-test.yaml"
    path.write_text(yaml.safe_dump(_plan_with(dotted, over)))
    with pytest.raises(InputError) as caught:
        load_plan(path)
    assert caught.value.field == dotted and caught.value.line is not None
    # Twin: the bound itself (or just under a strict one), and the lowest allowed value.
    ok = kind(top) if isinstance(high, Le) else (kind(top) - 1 if kind is int else top * 0.99)
    low = next((m for m in meta if isinstance(m, Ge | Gt)), None)
    floor = low.ge if isinstance(low, Ge) else (low.gt * 2 or 1e-6 if low else None)
    for value in (v for v in (ok, floor) if v is not None):
        plan = _plan_with(dotted, value)
        if dotted.startswith("model.") and dotted not in ("model.steps", "model.checkpoint_step"):
            plan["model"]["n_sequences"] = min(plan["model"].get("n_sequences", 16), 1000)
        if dotted in ("model.batch_size",):
            plan["model"]["size"] = "tiny"
        path.write_text(yaml.safe_dump(plan))
        load_plan(path)


def test_a_step_too_big_for_one_host_is_refused_by_its_product(tmp_path: Path) -> None:
    """batch x sequence x vocabulary: each within its bound, their product over one host's."""
    path = tmp_path / "export-test.yaml"
    per_row = 256 * 32000  # the 1b preset's sequence and vocabulary
    over = MAX_LOGITS // per_row + 1
    path.write_text(yaml.safe_dump(_plan_with("model.batch_size", over) | {}))
    plan = _plan_with("model.batch_size", over)
    plan["model"]["size"] = "1b"
    path.write_text(yaml.safe_dump(plan))
    with pytest.raises(InputError, match="logits a step"):
        load_plan(path)
    plan["model"]["batch_size"] = over - 1  # twin: just within
    path.write_text(yaml.safe_dump(plan))
    assert load_plan(path).model.batch_size == over - 1


def test_a_huge_plan_number_is_exit_2_before_any_job(ws: Path) -> None:
    for field, value in (("batch_size", 10**12), ("n_sequences", 10**12), ("threads", 10**6),
                         ("lr", 1e30), ("seed", 2**40)):  # fmt: skip
        (ws / "export-test.yaml").write_text(yaml.safe_dump(_plan_with(f"model.{field}", value)))
        _refused(runner.invoke(_app(), ["export-test"]), f"model.{field}", ws)


# ---- the scheduler -----------------------------------------------------------------------


def test_slurm_that_does_not_answer_is_exit_2(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLURM_CONF", str(ws / "no-such-slurm.conf"))
    res = runner.invoke(_app(), ["export-test", "--executor", "slurm"])
    assert "no Slurm controller answers" in _refused(res, "--executor", ws)
    monkeypatch.setenv("PATH", str(ws))  # no sbatch at all
    _refused(runner.invoke(_app(), ["export-test", "--executor", "slurm"]), "--executor", ws)


# ---- --option ----------------------------------------------------------------------------


def test_option_must_be_declared(ws: Path, tmp_path: Path) -> None:
    export = tmp_path / "export"
    export.mkdir()
    res = runner.invoke(_app(), ["export-test", "--from-export", str(export), "--option", "nope"])
    assert "unknown option id 'nope'" in _refused(res, "--option", ws)
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    res = runner.invoke(_app(), ["export-test", "--from-export", str(export), "--option", token])
    _refused(res, "--option", ws, token, token[:12])


# ---- Kubernetes manifests hold no credential --------------------------------------------

SECRET_OPTIONS = {
    "key": KEY_ID,
    "secret": SECRET,
    "password": "hunter2-hunter2",
    "aws_secret_access_key": SECRET[::-1],
    "token": "t0k3n-value-123456",
    "client_secret": "cl13nt-s3cr3t-value",
    "session": "neutral-key-holds-this",
    "profile_blob": "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA",  # a neutral key, a token-like value
}
PUBLIC_OPTIONS = {"endpoint_url": "http://minio.internal:9000", "region_name": "eu-central-1"}


def test_k8s_manifest_references_a_secret_and_holds_none(ws: Path) -> None:
    args = ["export-test", "--executor", "k8s", "--dry-run", "--image", IMAGE, "--json"]
    args += ["--storage", "s3://ml-exports/tests", "--secret", "team-s3"]
    for k, v in {**SECRET_OPTIONS, **PUBLIC_OPTIONS}.items():
        args += ["--storage-option", f"{k}={v}"]
    res = runner.invoke(_app(), args)
    assert res.exit_code == 0, res.output
    text = Path(json.loads(res.stdout)["manifests"]).read_text()
    for value in SECRET_OPTIONS.values():
        assert value not in text and value not in res.output, value
    assert "kubectl create secret generic team-s3" in text
    for doc in yaml.safe_load_all(text):
        container = doc["spec"]["template"]["spec"]["containers"][0]
        spec = json.loads(container["env"][0]["value"])
        public = spec.get("storage_options") or spec["export"]["storage_options"]
        assert public == PUBLIC_OPTIONS
        refs = {e["valueFrom"]["secretKeyRef"]["key"] for e in container["env"][1:]}
        assert refs == set(SECRET_OPTIONS)
        assert {e["valueFrom"]["secretKeyRef"]["name"] for e in container["env"][1:]} == {"team-s3"}
        assert container["envFrom"] == [{"secretRef": {"name": "team-s3", "optional": False}}]
    assert json.loads(res.stdout)["valid"] is True


def test_secret_options_by_class() -> None:
    for k, v in SECRET_OPTIONS.items():
        assert is_secret_option(k, v), k
    for k, v in PUBLIC_OPTIONS.items():  # twins
        assert not is_secret_option(k, v), k
    assert not is_secret_option("checksum", "ab" * 32)  # a digest is no credential
    assert is_secret_option("endpoint_url", f"http://{KEY_ID}:{SECRET}@minio:9000")
    public, from_env = split_storage_options({**SECRET_OPTIONS, **PUBLIC_OPTIONS})
    assert public == PUBLIC_OPTIONS and set(from_env) == set(SECRET_OPTIONS)


def test_a_bad_secret_name_is_refused(ws: Path) -> None:
    args = ["export-test", "--executor", "k8s", "--dry-run", "--image", IMAGE]
    _refused(runner.invoke(_app(), [*args, "--secret", "Not_A_Name"]), "--secret", ws)


# ---- --out is never a device, a FIFO, a folder or a link ---------------------------------


@pytest.mark.parametrize("kind", ["device", "fifo", "folder", "link", "no-folder", "proc"])
def test_out_never_replaces_what_is_not_a_regular_file(ws: Path, kind: str) -> None:
    target = {
        "device": Path("/dev/null"),
        "fifo": ws / "pipe",
        "folder": ws / "dir",
        "link": ws / "link.yaml",
        "no-folder": ws / "missing" / "out.yaml",
        "proc": Path("/proc/self/comm"),
    }[kind]
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "folder":
        target.mkdir()
    elif kind == "link":
        target.symlink_to("/dev/null")
    before = os.lstat(target).st_mode if os.path.lexists(target) else None
    args = ["export-test", "--executor", "k8s", "--dry-run", "--image", IMAGE, "--out"]
    _refused(runner.invoke(_app(), [*args, str(target)]), "--out", ws)
    after = os.lstat(target).st_mode if os.path.lexists(target) else None
    assert before == after


def test_out_replaces_a_regular_file(ws: Path) -> None:
    target = ws / "jobs.yaml"
    target.write_text("old\n")
    args = ["export-test", "--executor", "k8s", "--dry-run", "--image", IMAGE, "--out"]
    assert runner.invoke(_app(), [*args, str(target)]).exit_code == 0
    assert "kind: Job" in target.read_text()


def test_evidence_dir_that_is_a_file_is_refused_before_any_job(ws: Path) -> None:
    (ws / "a-file").write_text("x\n")
    res = runner.invoke(_app(), ["export-test", "--evidence-dir", str(ws / "a-file" / "x")])
    _refused(res, "--evidence-dir", ws)


# ---- a given export: every file the test reads -------------------------------------------

GOOD_METRICS = '{"step": 1, "loss": 5.5}\n{"step": 2, "loss": 5.4, "eval_loss": 5.6}\n'


@pytest.mark.parametrize(
    ("content", "field"),
    [
        ('{"step": 1, "eval_loss": 5.0}\n', "loss"),  # no loss
        ("\x00\x01garbage\n", "--from-export"),
        ("[1, 2, 3]\n", "--from-export"),
        ('{"step": 1, "loss": NaN}\n', "loss"),
        ('{"step": 1, "loss": "5.0"}\n', "loss"),
        ('{"step": true, "loss": 5.0}\n', "step"),
        ('{"step": -1, "loss": 5.0}\n', "step"),
        ('{"step": 2, "loss": 5.0}\n{"step": 1, "loss": 4.0}\n', "step"),
        ('{"step": 1e400, "loss": 5.0}\n', "step"),
        (b"\xff\xfe not utf-8\n", "--from-export"),
    ],
)
def test_metrics_the_test_cannot_use_are_refused(
    ws: Path, tmp_path: Path, content: str | bytes, field: str
) -> None:
    export = tmp_path / "export"
    export.mkdir()
    data = content.encode() if isinstance(content, str) else content
    (export / "metrics.jsonl").write_bytes(data)
    res = runner.invoke(_app(), ["export-test", "--from-export", str(export)])
    err = _refused(res, field, ws)
    assert "metrics.jsonl" in err


@pytest.mark.parametrize("kind", ["metrics-link", "deep-link", "fifo", "file", "proc"])
def test_an_export_of_links_and_devices_is_refused(ws: Path, tmp_path: Path, kind: str) -> None:
    export = tmp_path / "export"
    (export / "checkpoint-4").mkdir(parents=True)
    (export / "metrics.jsonl").write_text(GOOD_METRICS)
    given = export
    if kind == "metrics-link":
        (export / "metrics.jsonl").unlink()
        (export / "metrics.jsonl").symlink_to("/etc/passwd")
    elif kind == "deep-link":
        (export / "checkpoint-4" / "optimizer.pt").symlink_to("/etc/shadow")
    elif kind == "fifo":
        os.mkfifo(export / "checkpoint-4" / "model.safetensors")
    elif kind == "file":
        given = export / "metrics.jsonl"
    else:
        given = Path("/proc/self")
    res = runner.invoke(_app(), ["export-test", "--from-export", str(given)])
    err = _refused(res, "--from-export", ws, "root:x:0:0")
    assert "Traceback" not in err


def test_a_sound_export_passes_the_checks(tmp_path: Path) -> None:
    """Twin: folders, regular files, a metrics log of increasing steps with finite losses."""
    export = tmp_path / "export"
    (export / "checkpoint-2").mkdir(parents=True)
    (export / "checkpoint-2" / "model.safetensors").write_bytes(b"x")
    (export / "metrics.jsonl").write_text(GOOD_METRICS + "\n")
    check_export_folder(export)
    assert read_metrics(export / "metrics.jsonl") == [
        {"step": 1.0, "loss": 5.5},
        {"step": 2.0, "loss": 5.4, "eval_loss": 5.6},
    ]
    assert read_metrics(export / "absent.jsonl") == []


_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.lists(st.integers(), max_size=2),
)
_ROWS = st.dictionaries(st.sampled_from(["step", "loss", "eval_loss", "lr"]), _VALUES, max_size=4)
_LINES = st.one_of(
    _ROWS.map(lambda r: json.dumps(r, allow_nan=True)), st.text(max_size=30), st.just("")
)


@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(lines=st.lists(_LINES, max_size=8))
@example(lines=["\r0"])  # found exploring: str.splitlines cut at the "\r" and named line 2
@example(lines=["\n0"])  # a generated line that holds a newline is two lines of the file
def test_metrics_reader_fuzz(tmp_path: Path, lines: list[str]) -> None:
    """Any metrics log: its rows (each a step that increases and a finite loss), or one
    InputError naming the file and its line; never another exception."""
    path = tmp_path / "metrics.jsonl"
    text = "\n".join(lines)  # a generated line may hold a "\n": the bound is the file's lines
    path.write_text(text, encoding="utf-8")
    try:
        rows = read_metrics(path)
    except InputError as exc:
        assert exc.path == str(path)
        assert exc.line is None or 1 <= exc.line <= text.count("\n") + 1
        return
    steps = [r["step"] for r in rows]
    assert steps == sorted(set(steps))
    assert all(math.isfinite(r["loss"]) for r in rows)
