"""The marks writer a training script calls: the job's identity found from the environment,
one whole JSON line per mark, rank 0 only by default, several processes appending to one
file without interleaving, and nothing heavy imported."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from gpudecide.marks import writer
from gpudecide.marks.writer import LINE_LIMIT, MarkWriter, file_name, identity, rank_of


def _lines(folder: Path) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for path in sorted(folder.glob("*.jsonl")):
        out.extend(json.loads(line) for line in path.read_text().splitlines())
    return out


def test_slurm_array_task_and_restart(tmp_path: Path) -> None:
    env = {
        "SLURM_JOB_ID": "5012",
        "SLURM_ARRAY_JOB_ID": "5000",
        "SLURM_ARRAY_TASK_ID": "12",
        "SLURM_RESTART_COUNT": "2",
        "SLURM_CLUSTER_NAME": "almaty",
        "SLURMD_NODENAME": "gpu03",
        "SLURM_PROCID": "0",
    }
    w = MarkWriter(tmp_path, env=env)
    assert w.prep_start() and w.first_step(0) and w.checkpoint(100, "/ckpt/step-100") and w.end()
    assert w.path == tmp_path / "5000_12.gpu03.jsonl"
    lines = _lines(tmp_path)
    assert [ln["kind"] for ln in lines] == ["prep_start", "first_step", "checkpoint", "end"]
    first = lines[0]
    assert first["slurm_job_id"] == "5012" and first["slurm_array_task_id"] == "12"
    assert first["slurm_restart_count"] == 2 and first["cluster"] == "almaty"
    assert first["node"] == "gpu03" and first["rank"] == 0
    assert [ln["seq"] for ln in lines] == [1, 2, 3, 4]
    assert len({ln["run"] for ln in lines}) == 1
    assert str(first["at"]).endswith("Z")
    assert lines[2]["step"] == 100 and lines[2]["path"] == "/ckpt/step-100"


def test_first_step_is_written_once(tmp_path: Path) -> None:
    w = MarkWriter(tmp_path, env={})
    assert w.step(0) is True
    assert w.step(1) is False and w.first_step(2) is False
    assert [ln["kind"] for ln in _lines(tmp_path)] == ["first_step"]


def test_kubernetes_pod_and_namespace(tmp_path: Path) -> None:
    ns = tmp_path / "namespace"
    ns.write_text("team-nlp\n")
    env = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "HOSTNAME": "train-7f9c-x2z", "NODE_NAME": "n4"}
    ident = identity(env, namespace_file=ns)
    assert ident["pod"] == "train-7f9c-x2z" and ident["namespace"] == "team-nlp"
    assert ident["node"] == "n4"
    # the downward API's variables win over the hostname and the file
    ident = identity({**env, "POD_NAME": "p1", "POD_NAMESPACE": "ns1"}, namespace_file=ns)
    assert ident["pod"] == "p1" and ident["namespace"] == "ns1"
    # outside Kubernetes a hostname is no pod
    assert identity({"HOSTNAME": "laptop"})["pod"] is None


def test_sagemaker_job_name() -> None:
    env = {"SM_TRAINING_ENV": json.dumps({"job_name": "ft-0412", "current_host": "algo-2"})}
    ident = identity(env)
    assert ident["sagemaker_job"] == "ft-0412" and ident["node"] == "algo-2"
    assert (
        identity({"TRAINING_JOB_NAME": "ft-9", "SM_TRAINING_ENV": "{not json"})["sagemaker_job"]
        == "ft-9"
    )
    assert file_name(identity(env, host="ip-10")) == "ft-0412.algo-2.jsonl"


def test_job_id_set_by_the_team_wins(tmp_path: Path) -> None:
    w = MarkWriter(tmp_path, env={"SLURM_JOB_ID": "1", "GPUDECIDE_JOB_ID": "nightly/42"})
    assert w.identity["job_id"] == "nightly/42"
    assert w.path is not None and w.path.name.startswith("nightly_42.")
    w = MarkWriter(tmp_path, env={}, job_id="abc")
    assert w.identity["job_id"] == "abc"


@pytest.mark.parametrize(
    ("env", "rank"),
    [
        ({}, None),
        ({"RANK": "3", "LOCAL_RANK": "0"}, 3),
        ({"SLURM_PROCID": "1"}, 1),
        ({"OMPI_COMM_WORLD_RANK": "2"}, 2),
        ({"LOCAL_RANK": "0"}, 0),
        ({"RANK": "x", "PMI_RANK": "5"}, 5),
    ],
)
def test_rank_from_the_launcher(env: dict[str, str], rank: int | None) -> None:
    assert rank_of(env) == rank


def test_only_rank_zero_writes_by_default(tmp_path: Path) -> None:
    assert not MarkWriter(tmp_path, env={"RANK": "1"}).first_step(0)
    assert not list(tmp_path.glob("*.jsonl"))
    every = MarkWriter(tmp_path, env={"RANK": "1"}, all_ranks=True)
    assert every.first_step(0)
    assert _lines(tmp_path)[0]["rank"] == 1


def test_no_folder_writes_nothing_and_says_so_once(tmp_path: Path) -> None:
    w = MarkWriter(env={})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert w.prep_start() is False
        assert w.end() is False
    assert len(caught) == 1 and "GPUDECIDE_MARKS_DIR" in str(caught[0].message)
    assert MarkWriter(env={"GPUDECIDE_MARKS_DIR": str(tmp_path)}).prep_start()


def test_an_unwritable_folder_never_stops_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    w = MarkWriter(blocker / "marks", env={})
    assert w.prep_start() is False and w.end() is False
    assert capsys.readouterr().err.count("cannot write") == 1
    with pytest.raises(OSError):
        MarkWriter(blocker / "marks", env={}, strict=True).prep_start()


def test_long_values_are_shortened_to_one_line_under_pipe_buf(tmp_path: Path) -> None:
    w = MarkWriter(tmp_path, env={"SLURM_JOB_ID": "7" * 600, "NODE_NAME": "ж" * 300}, fsync=True)
    assert w.checkpoint(1, "/very/" + "long-ю" * 2000)  # kept to 2048 characters
    assert w.checkpoint(2, "/very/" + "\U0001f600" * 3000)  # 4 bytes each: halved to fit
    data = next(tmp_path.glob("*.jsonl")).read_bytes()
    assert data.endswith(b"\n") and data.count(b"\n") == 2
    first, second = (json.loads(line) for line in data.splitlines())
    assert all(len(line) <= LINE_LIMIT for line in data.splitlines(keepends=True))
    assert len(first["path"]) == 2048 and "shortened" not in first
    assert first["slurm_job_id"] == "7" * 256 and first["node"] == "ж" * 256
    assert second["shortened"] == ["path"] and second["path"].startswith("/very/\U0001f600")


def test_training_context_marks_start_and_end(tmp_path: Path) -> None:
    with writer.training(tmp_path, env={}) as m:
        for step in range(3):
            m.step(step)
        m.checkpoint(2, tmp_path / "ckpt")
    with pytest.raises(RuntimeError), writer.training(tmp_path, env={}):
        raise RuntimeError("oom")
    kinds = [(ln["kind"], ln.get("status")) for ln in _lines(tmp_path)]
    assert kinds == [
        ("prep_start", None),
        ("first_step", None),
        ("checkpoint", None),
        ("end", "completed"),
        ("prep_start", None),
        ("end", "failed"),
    ]


def test_module_functions_use_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUDECIDE_MARKS_DIR", str(tmp_path))
    monkeypatch.setenv("SLURM_JOB_ID", "88")
    monkeypatch.setattr(writer, "_default", None)
    from gpudecide import marks

    assert marks.prep_start() and marks.first_step(0) and marks.checkpoint(5, "c") and marks.end()
    assert {ln["slurm_job_id"] for ln in _lines(tmp_path)} == {"88"}
    configured = marks.configure(tmp_path / "other", env={})
    assert writer.default_writer() is configured
    monkeypatch.setattr(writer, "_default", None)


# Each process waits for the same moment, then appends its lines as fast as it can, so the
# writes of all of them overlap.
_APPENDER = """
import sys, time
from gpudecide.marks.writer import MarkWriter
folder, worker, count, start = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
w = MarkWriter(folder, env={"GPUDECIDE_JOB_ID": "shared"}, all_ranks=True, rank=worker)
while time.time() < start:
    time.sleep(0.001)
for i in range(count):
    w.checkpoint(i, f"/ckpt/{worker}/" + "x" * (1000 + 150 * worker))
"""


def test_several_processes_append_to_one_file_without_interleaving(tmp_path: Path) -> None:
    workers, count = 6, 400
    start = time.time() + 3
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _APPENDER, str(tmp_path), str(w), str(count), str(start)]
        )
        for w in range(workers)
    ]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    files = list(tmp_path.glob("*.jsonl"))
    assert len(files) == 1  # one job on one host: one file
    raw = files[0].read_bytes().split(b"\n")
    assert raw[-1] == b""
    lines = [json.loads(line) for line in raw[:-1]]  # every line is whole JSON
    assert len(lines) == workers * count
    for w in range(workers):
        mine = [ln for ln in lines if ln["rank"] == w]
        assert [ln["step"] for ln in mine] == list(range(count))
        assert all(len(str(ln["path"])) == len(f"/ckpt/{w}/") + 1000 + 150 * w for ln in mine)
    # the writers really ran at the same time: their lines alternate in the file
    ranks = [ln["rank"] for ln in lines]
    assert sum(a != b for a, b in itertools.pairwise(ranks)) > workers


def test_the_writer_imports_only_the_standard_library() -> None:
    """A training image needs nothing but Python: importing the writer (and the package)
    brings in no heavy library and not gpudecide's command line."""
    code = (
        "import sys, gpudecide.marks, gpudecide.marks.writer\n"
        "heavy = ('torch', 'numpy', 'pyarrow', 'duckdb', 'pydantic', 'yaml', 'typer', "
        "'rich', 'babel', 'transformers', 'gpudecide.cli', 'gpudecide.i18n')\n"
        "print([m for m in sys.modules if m.split('.')[0] in heavy or m in heavy])\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.strip() == "[]"


def test_the_writer_works_copied_on_its_own(tmp_path: Path) -> None:
    """The file copied next to a training script runs without gpudecide installed."""
    copy = tmp_path / "gpudecide_marks.py"
    copy.write_text(Path(writer.__file__).read_text())
    script = (
        "import gpudecide_marks as m\n"
        f"w = m.MarkWriter({str(tmp_path / 'out')!r}, env={{}})\n"
        "assert w.first_step(0)\n"
        "assert 'gpudecide' not in sys.modules\n"
    )
    subprocess.run(
        [
            sys.executable,
            "-I",
            "-c",
            f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n" + script,
        ],
        check=True,
        cwd=tmp_path,
    )
    assert [ln["kind"] for ln in _lines(tmp_path / "out")] == ["first_step"]
