"""Reading marks back: the JSONL the writer appends (every kind of bad line counted and named
file:line, never a traceback; fuzzed), real TensorBoard event files, real MLflow file and
SQLite stores written by MLflow itself, Hugging Face checkpoint folders, and a folder that
holds them all."""

from __future__ import annotations

import json
import os
import warnings
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpudecide.errors import InputError
from gpudecide.marks.jsonl import MAX_LINE, read_marks_file
from gpudecide.marks.model import MAX_LISTED, MarkSet, Problem
from gpudecide.marks.read import read_marks
from gpudecide.marks.writer import MarkWriter
from gpudecide.message import english

from .conftest import examples

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _line(kind: str, minutes: float, seq: int, **extra: Any) -> str:
    at = (T0 + timedelta(minutes=minutes)).isoformat().replace("+00:00", "Z")
    record = {
        "v": 1,
        "kind": kind,
        "at": at,
        "slurm_job_id": "77",
        "host": "gpu01",
        "run": "r1",
        "seq": seq,
        **extra,
    }
    return json.dumps(record)


def _kinds(found: MarkSet) -> dict[int | None, str]:
    return {p.where.line: p.kind for p in found.problems}


def _read(tmp_path: Path, data: bytes) -> MarkSet:
    path = tmp_path / "m.jsonl"
    path.write_bytes(data)
    return read_marks_file(path, "m.jsonl")


def test_what_the_writer_wrote_reads_back(tmp_path: Path) -> None:
    w = MarkWriter(
        tmp_path, env={"SLURM_JOB_ID": "9", "SLURM_RESTART_COUNT": "1", "SLURMD_NODENAME": "gpu02"}
    )
    w.prep_start()
    w.first_step(0)
    w.checkpoint(10, "/c/10")
    w.end("completed")
    found = read_marks([tmp_path])
    assert found.problems == [] and found.files == 1 and found.lines == 4
    (run,) = found.runs
    assert run.source == "marks" and run.identity.slurm_job_id == "9"
    assert run.identity.slurm_restart_count == 1 and run.identity.node == "gpu02"
    assert [m.kind for m in run.marks] == ["prep_start", "first_step", "checkpoint", "end"]
    assert run.marks[2].step == 10 and run.marks[2].path == "/c/10"
    assert run.marks[3].status == "completed"
    assert str(run.marks[1].where) == f"{tmp_path}/{w.path.name if w.path else ''}:2"


def test_every_bad_line_is_counted_and_named(tmp_path: Path) -> None:
    lines = [
        _line("prep_start", 0, 1).encode(),  # 1 fine
        b"\xff\xfe not utf-8",  # 2
        b"{not json",  # 3
        b"[1, 2]",  # 4 JSON, not an object
        b"",  # 5 blank: ignored
        json.dumps({"at": "2026-03-02T09:00:00Z"}).encode(),  # 6 no kind
        _line("warmup", 1, 2).encode(),  # 7 unknown kind
        _line("first_step", 2, 3, step="ten").encode(),  # 8 step not a number
        _line("first_step", 2, 4, at="2026-03-02T09:02:00").encode(),  # 9 no offset
        _line("first_step", 2, 5, at="yesterday").encode(),  # 10 not a time
        _line("first_step", 2, 6).encode(),  # 11 fine
        _line("first_step", 2, 6).encode(),  # 12 duplicate of 11
        _line("checkpoint", 1, 7).encode(),  # 13 time goes backwards
        _line("checkpoint", 30, 8, path="/c").encode(),  # 14 fine
        b"x" * (MAX_LINE * 3),  # 15 huge
        _line("end", 40, 9).encode(),  # 16 fine
        b'{"kind": "end", "at": "2026-03-0',  # 17 cut short at the end
    ]
    found = _read(tmp_path, b"\n".join(lines))
    assert _kinds(found) == {
        2: "not_utf8",
        3: "not_json",
        4: "not_json",
        6: "not_a_mark",
        7: "bad_value",
        8: "bad_value",
        9: "no_offset",
        10: "bad_value",
        12: "duplicate",
        13: "backwards",
        15: "too_long",
        17: "truncated",
    }
    (run,) = found.runs
    assert [m.where.line for m in run.marks] == [1, 11, 14, 16]
    assert found.lines == 17 and found.problems_total == 12
    texts = [p.text for p in found.problems]
    assert "m.jsonl:12: the same mark as line 11: this copy is not used" in texts
    assert any(t.startswith("m.jsonl:13: time goes backwards") and "line 11" in t for t in texts)
    assert "m.jsonl:15: longer than 65536 bytes: skipped" in texts
    assert any(t.startswith("m.jsonl:17: the last line is cut short") for t in texts)
    assert any("'ten'" in t for t in texts)  # the value, quoted and masked


def test_a_complete_last_line_without_newline_is_read(tmp_path: Path) -> None:
    found = _read(tmp_path, (_line("prep_start", 0, 1) + "\n" + _line("end", 5, 2)).encode())
    assert found.problems == [] and [m.kind for m in found.runs[0].marks] == ["prep_start", "end"]


def test_a_last_line_cut_inside_a_character_is_truncated_not_foreign(tmp_path: Path) -> None:
    data = (_line("prep_start", 0, 1) + "\n").encode() + b'{"kind": "end", "path": "\xd0'
    assert _kinds(_read(tmp_path, data)) == {2: "truncated"}


def test_hand_written_lines_without_run_ids(tmp_path: Path) -> None:
    """Lines a team wrote itself: grouped by the job they name; an identical line again is
    a duplicate."""
    one = json.dumps({"kind": "first_step", "at": "2026-03-02T09:00:00+05:00", "job_id": 4711})
    two = json.dumps({"kind": "checkpoint", "at": "2026-03-02T10:00:00+05:00", "job_id": "9"})
    found = _read(tmp_path, f"{one}\n{two}\n{one}\n".encode())
    assert _kinds(found) == {3: "duplicate"}
    assert sorted(r.identity.job_id or "" for r in found.runs) == ["4711", "9"]
    assert found.runs[0].marks[0].at == datetime(2026, 3, 2, 4, 0, tzinfo=UTC)


def test_problems_are_listed_up_to_a_bound_and_counted_exactly(tmp_path: Path) -> None:
    found = _read(tmp_path, b"{bad\n" * (MAX_LISTED + 50))
    assert found.problem_counts == {"not_json": MAX_LISTED + 50}
    assert len(found.problems) == MAX_LISTED


def test_a_file_that_cannot_be_read_is_a_problem(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    found = read_marks([tmp_path])
    assert [p.kind for p in found.problems] == ["unreadable"]
    assert english(found.problems[0].message) == "not a regular file: skipped"


def test_a_missing_folder_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        read_marks([tmp_path / "nowhere"])
    assert caught.value.template == "no such file or directory"
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    assert [p.kind for p in read_marks([other]).problems] == ["unreadable"]


# --- fuzz ---

_GOOD_RUN = "fuzzrun-7f3a9c"
_junk = st.one_of(
    st.binary(max_size=80).map(lambda b: b.replace(b"\n", b" ")),
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False)
        | st.text(max_size=12),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(
                st.sampled_from(["kind", "at", "step", "run", "seq", "job_id", "x"]),
                inner,
                max_size=4,
            )
        ),
        max_leaves=8,
    ).map(lambda v: json.dumps(v).encode()),
    st.sampled_from([b'{"kind": "end", "at": "2026-03-0', b"\xc3\x28", b"{}", b"[]", b"null"]),
)
_items = st.lists(st.one_of(st.just(None), _junk), max_size=30)
SETTINGS = settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


@SETTINGS
@given(items=_items, newline_at_end=st.booleans())
def test_fuzz_the_reader_never_raises_and_keeps_the_good_lines(
    tmp_path: Path, items: list[bytes | None], newline_at_end: bool
) -> None:
    """Good marks (None) mixed with junk: the reader never raises, every good line is a mark
    of its run, every problem names one of the junk lines."""
    lines: list[bytes] = []
    good: set[int] = set()
    for n, item in enumerate(items, start=1):
        if item is None:
            lines.append(_line("checkpoint", n, n, run=_GOOD_RUN).encode())
            good.add(n)
        else:
            lines.append(item)
    data = b"\n".join(lines) + (b"\n" if newline_at_end and lines else b"")
    found = _read(tmp_path, data)
    runs = [r for r in found.runs if r.name == _GOOD_RUN]
    kept = {m.where.line for r in runs for m in r.marks}
    assert kept == good
    assert all(isinstance(p, Problem) and p.where.line not in good for p in found.problems)
    assert all(1 <= (p.where.line or 0) <= len(lines) for p in found.problems)
    for problem in found.problems:
        assert problem.text.startswith("m.jsonl:")


# --- TensorBoard ---


def test_tensorboard_first_scalar_is_the_first_step(tmp_path: Path) -> None:
    from torch.utils.tensorboard import SummaryWriter

    logdir = tmp_path / "tb" / "4711"
    w = SummaryWriter(str(logdir))
    w.add_text("config", "lr=0.1", 0)  # not a scalar: comes first, is passed over
    for step in (5, 10, 15):
        w.add_scalar("train/loss", 1.0 / step, step)
    w.close()
    (event_file,) = logdir.glob("events.out.tfevents.*")
    found = read_marks([tmp_path / "tb"])
    assert found.problems == []
    (run,) = found.runs
    assert run.source == "tensorboard" and run.folders == ["tb", "4711"]
    import socket

    assert run.identity.host == socket.gethostname()
    seen, first = run.marks
    assert seen.kind == "seen" and first.kind == "first_step" and first.step == 5
    assert seen.at <= first.at
    mtime = datetime.fromtimestamp(event_file.stat().st_mtime, UTC)
    assert first.at <= mtime + timedelta(seconds=1)

    # a file cut off in the middle of a record (a job killed while writing) still gives
    # its first scalar
    data = event_file.read_bytes()
    event_file.write_bytes(data[:-7])
    assert read_marks([event_file]).runs[0].marks[1].step == 5


def test_tensorboard_without_scalars_and_foreign_files(tmp_path: Path) -> None:
    from torch.utils.tensorboard import SummaryWriter

    w = SummaryWriter(str(tmp_path / "text"))
    w.add_text("note", "hello", 0)
    w.close()
    (tmp_path / "events.out.tfevents.1700000000.gpu01").write_bytes(b"not a record at all")
    found = read_marks([tmp_path])
    assert sorted(found.problem_counts.items()) == [("no_scalar", 1), ("not_event_file", 1)]
    no_scalar = next(r for r in found.runs if r.source == "tensorboard")
    assert [m.kind for m in no_scalar.marks] == ["seen"]


# --- MLflow: both stores written by MLflow itself ---


@pytest.fixture(scope="module")
def mlflow_stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A file store and a SQLite store, each with a run tagged with its Slurm job, metrics
    (and an MLflow system metric, which is left out), a checkpoint artifact, and a deleted
    run."""
    with pytest.MonkeyPatch.context() as env, warnings.catch_warnings():
        # MLflow keeps its file store behind this switch now; SQLAlchemy warns about MLflow
        env.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
        warnings.simplefilter("ignore", DeprecationWarning)
        return _write_mlflow_stores(tmp_path_factory.mktemp("mlflow"))


def _write_mlflow_stores(root: Path) -> dict[str, Any]:
    import mlflow
    from mlflow.tracking import MlflowClient

    ckpt = root / "src" / "checkpoint-20"
    ckpt.mkdir(parents=True)
    (ckpt / "model.safetensors").write_bytes(b"weights")
    lightning_ckpt = root / "src" / "epoch=0-step=30.ckpt"
    lightning_ckpt.write_bytes(b"ckpt")
    out: dict[str, Any] = {"root": root}
    for store, uri in (
        ("file", f"file://{root / 'mlruns'}"),
        ("sqlite", f"sqlite:///{root / 'mlflow.db'}"),
    ):
        mlflow.set_tracking_uri(uri)
        if store == "sqlite":
            exp = mlflow.create_experiment("ft", artifact_location=str(root / "artifacts"))
            mlflow.set_experiment(experiment_id=exp)
        client = MlflowClient(uri)
        with mlflow.start_run(tags={"slurm_job_id": "4711", "host": "gpu05"}) as run:
            mlflow.log_param("SLURM_ARRAY_TASK_ID", "3")
            client.log_metric(
                run.info.run_id, "system/gpu_utilization", 3.0, timestamp=1_700_000_000_000, step=0
            )
            mlflow.log_metric("loss", 2.0, step=1)
            mlflow.log_metric("loss", 1.0, step=2)
            mlflow.log_artifacts(str(ckpt), artifact_path="checkpoint-20")
            mlflow.log_artifact(str(lightning_ckpt), artifact_path="checkpoints")
        with mlflow.start_run() as gone:
            mlflow.log_metric("loss", 1.0)
        client.delete_run(gone.info.run_id)
        info = client.get_run(run.info.run_id).info
        history = client.get_metric_history(run.info.run_id, "loss")
        out[store] = {
            "run_id": run.info.run_id,
            "start": info.start_time,
            "end": info.end_time,
            "first_metric": min(m.timestamp for m in history),
        }
    mlflow.set_tracking_uri("")
    return out


@pytest.mark.parametrize("store", ["file", "sqlite"])
def test_mlflow_runs(mlflow_stores: dict[str, Any], store: str) -> None:
    root = mlflow_stores["root"]
    path = root / "mlruns" if store == "file" else root / "mlflow.db"
    found = read_marks([path])
    assert found.problems == []
    (run,) = found.runs  # the deleted run is left out
    want = mlflow_stores[store]
    assert run.source == "mlflow" and run.name == want["run_id"]
    assert run.identity.slurm_job_id == "4711" and run.identity.host == "gpu05"
    assert run.identity.slurm_array_task_id == "3"

    def ms(kind: str) -> list[int]:
        return [round(m.at.timestamp() * 1000) for m in run.marks if m.kind == kind]

    assert ms("seen") == [want["start"]] and ms("end") == [want["end"]]
    # the first training metric, not MLflow's own system metric logged before it
    assert ms("first_step") == [want["first_metric"]]
    assert run.first("first_step").step == 1  # type: ignore[union-attr]
    ckpts = sorted((m.step, Path(m.path or "").name) for m in run.marks if m.kind == "checkpoint")
    assert ckpts == [(20, "checkpoint-20"), (30, "epoch=0-step=30.ckpt")]
    assert run.last("end").status == "completed"  # type: ignore[union-attr]


def test_not_an_mlflow_store(tmp_path: Path) -> None:
    import sqlite3

    con = sqlite3.connect(tmp_path / "other.db")
    con.execute("CREATE TABLE t (x)")
    con.close()
    run_dir = tmp_path / "mlruns" / "0" / "abc"
    (run_dir / "metrics").mkdir(parents=True)
    (run_dir / "meta.yaml").write_text("just: [a, list\n")
    found = read_marks([tmp_path])
    assert sorted(p.where.path for p in found.problems) == [
        f"{tmp_path}/mlruns/0/abc/meta.yaml",
        f"{tmp_path}/other.db",
    ]
    assert set(found.problem_counts) == {"not_mlflow"}


# --- Hugging Face checkpoint folders ---


def test_checkpoint_folders(tmp_path: Path) -> None:
    out = tmp_path / "runs" / "job-4711"
    for step in (500, 1000):
        folder = out / f"checkpoint-{step}"
        folder.mkdir(parents=True)
        (folder / "trainer_state.json").write_text(json.dumps({"global_step": step}))
        (folder / "model.safetensors").write_bytes(b"w")
        stamp = (T0 + timedelta(minutes=step / 100)).timestamp()
        for f in (folder, *folder.iterdir()):
            os.utime(f, (stamp, stamp))
    bad = out / "checkpoint-1500"
    bad.mkdir()
    (bad / "trainer_state.json").write_text("{broken")
    (out / "checkpoint-x").mkdir()  # not the Trainer's
    found = read_marks([tmp_path / "runs"])
    (run,) = found.runs
    assert run.source == "hf-checkpoints" and run.folders == ["runs", "job-4711"]
    assert [(m.step, m.at) for m in run.marks[:2]] == [
        (500, T0 + timedelta(minutes=5)),
        (1000, T0 + timedelta(minutes=10)),
    ]
    assert run.marks[2].step == 1500  # from the folder's name
    assert [p.where.path for p in found.problems] == [
        f"{tmp_path}/runs/job-4711/checkpoint-1500/trainer_state.json"
    ]


def test_without_tensorboard_an_event_file_is_named_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "tensorboard.backend.event_processing.event_file_loader", None)
    (tmp_path / "events.out.tfevents.1700000000.gpu01.1.0").write_bytes(b"")
    found = read_marks([tmp_path])
    assert found.problem_counts == {"reader_missing": 1} and found.runs == []
    assert "pip install 'gpudecide[marks]'" in found.problems[0].text
