"""sacct output recorded from a real Slurm 22.05 (scripts/record-sacct-fixtures)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest

from gpudecide.errors import InputError
from gpudecide.jobs.sacct import read_sacct

from .conftest import SACCT

Rows = dict[tuple[str, int], dict[str, Any]]


def _by_id(path: str, **kw: Any) -> dict[tuple[str, int], dict[str, Any]]:
    table = read_sacct(SACCT / path, **kw).table
    return {(r["job_id"], r["attempt"]): r for r in table.to_pylist()}


@pytest.fixture(scope="module")
def rows() -> dict[tuple[str, int], dict[str, Any]]:
    return _by_id("scenario.utc.txt")


@pytest.fixture(scope="module")
def ids(scenario: dict[str, Any]) -> dict[str, str]:
    """Role -> Slurm job id of this recording (ids change whenever it is re-recorded)."""
    return {role: str(v["job_id"]) for role, v in scenario["roles"].items()}


def test_steps_fold_into_their_job(rows: Rows, ids: dict[str, str]) -> None:
    train = rows[(ids["train_ok"], 1)]
    assert train["steps"] == 3  # .batch, .extern, .0
    assert not any("." in job_id for job_id, _ in rows)
    assert train["state"] == "completed"
    assert train["elapsed_s"] == 5.0


def test_typed_gres_counts_gpus_and_type(rows: Rows, ids: dict[str, str]) -> None:
    assert rows[(ids["train_ok"], 1)]["gpu_count"] == 2
    assert rows[(ids["train_ok"], 1)]["gpu_type"] == "h100"
    # export job asked for no GPU: allocated, zero GPUs, not unknown
    assert rows[(ids["export_begin"], 1)]["gpu_count"] == 0


def test_cancelled_by_uid_keeps_detail(rows: Rows, ids: dict[str, str]) -> None:
    job = rows[(ids["cancel_running"], 1)]
    assert job["state"] == "cancelled"
    assert job["state_detail"] == "CANCELLED by 0"
    assert job["gpu_count"] == 1


def test_held_job_cancelled_before_running_never_started(rows: Rows, ids: dict[str, str]) -> None:
    job = rows[(ids["held_cancel"], 1)]
    assert job["start"] is None  # sacct printed Start=None
    assert job["eligible"] is None  # Eligible=Unknown
    assert job["gpu_count"] is None
    assert job["req_gpus"] == 1
    assert job["wait_reason"] == "JobHeldUser"


def test_requeue_attempts_are_kept_and_linked(rows: Rows, ids: dict[str, str]) -> None:
    first, second = rows[(ids["requeued"], 1)], rows[(ids["requeued"], 2)]
    assert first["state"] == "requeued"
    assert second["state"] == "completed"
    assert first["end"] <= second["submit"]  # sacct resets Submit of the new attempt
    assert second["wait_reason"] == "BeginTime"
    assert (ids["requeued"], 3) not in rows


def test_array_tasks_are_jobs_of_one_array(rows: Rows, ids: dict[str, str]) -> None:
    array = ids["array_sweep"]
    tasks = sorted(k[0] for k in rows if k[0].startswith(f"{array}_"))
    assert tasks == [f"{array}_{i}" for i in range(1, 5)]
    assert {rows[(t, 1)]["array_job_id"] for t in tasks} == {array}
    assert rows[(f"{array}_2", 1)]["wait_reason"] == "JobArrayTaskLimit"


def test_dependency_and_begin_time(rows: Rows, ids: dict[str, str]) -> None:
    ev = rows[(ids["eval_dep"], 1)]
    assert ev["wait_reason"] == "Dependency"
    assert ev["eligible"] == rows[(ids["train_ok"], 1)]["end"]
    export = rows[(ids["export_begin"], 1)]
    assert export["wait_reason"] == "BeginTime"
    assert (export["eligible"] - export["submit"]).total_seconds() == 20


def test_timeout_and_time_limit(rows: Rows, ids: dict[str, str]) -> None:
    job = rows[(ids["timeout"], 1)]
    assert job["state"] == "timeout"
    assert job["time_limit_s"] == 60  # Timelimit 00:01:00
    assert job["elapsed_s"] > 60  # a timed-out job runs past its limit before it is killed


def test_comment_labels(rows: Rows, ids: dict[str, str]) -> None:
    assert rows[(ids["eval_dep"], 1)]["kind_label"] == "eval"
    assert rows[(ids["eval_dep"], 1)]["chain_id"] == "ft-llama-7b-r1"
    assert rows[(ids["cancel_running"], 1)]["kind_label"] is None


def test_local_time_zone_converts_to_the_same_utc(rows: Rows, ids: dict[str, str]) -> None:
    almaty = _by_id("scenario.almaty.txt", tz="Asia/Almaty")
    assert almaty.keys() == rows.keys()
    for key, row in rows.items():
        for col in ("submit", "eligible", "start", "end"):
            assert almaty[key][col] == row[col], (key, col)
    # read as UTC, the Almaty file is five hours off: --tz matters
    naive = _by_id("scenario.almaty.txt", tz="UTC")
    assert (
        naive[(ids["train_ok"], 1)]["start"] - rows[(ids["train_ok"], 1)]["start"]
    ).total_seconds() == 5 * 3600


def test_times_are_utc(rows: Rows, ids: dict[str, str]) -> None:
    start = rows[(ids["train_ok"], 1)]["start"]
    assert start.utcoffset().total_seconds() == 0
    printed = next(
        ln.split("|")[13]
        for ln in (SACCT / "scenario.utc.txt").read_text().splitlines()
        if ln.startswith(f"{ids['train_ok']}|")
    )
    assert start == datetime.fromisoformat(printed).replace(tzinfo=UTC)


def test_headerless_needs_the_format_list(scenario: dict[str, Any]) -> None:
    with pytest.raises(InputError) as exc:
        read_sacct(SACCT / "scenario.noheader.txt")
    assert exc.value.line == 1 and "--sacct-format" in exc.value.one_line()
    fmt = ",".join(scenario["sacct_fields"])
    headerless = read_sacct(SACCT / "scenario.noheader.txt", sacct_format=fmt).table
    with_header = read_sacct(SACCT / "scenario.utc.txt").table
    key = [("job_id", "ascending"), ("attempt", "ascending")]
    assert (
        headerless.drop_columns(["source"])
        .sort_by(key)
        .equals(with_header.drop_columns(["source"]).sort_by(key))
    )


def test_pending_array_range_counts_tasks(ids: dict[str, str]) -> None:
    rows = _by_id("scenario.pending-array.txt")
    pending = [r for (job_id, _), r in rows.items() if job_id.startswith(f"{ids['array_sweep']}_[")]
    assert len(pending) == 1
    assert pending[0]["state"] == "pending"
    assert pending[0]["start"] is None and pending[0]["gpu_count"] is None
    # e.g. 119_[2-4%1]: tasks 2, 3 and 4 still waiting (the %1 is the throttle, not a task)
    match = re.search(r"_\[(\d+)-(\d+)", pending[0]["job_id"])
    assert match is not None
    first, last = (int(x) for x in match.groups())
    assert pending[0]["pending_tasks"] == last - first + 1 >= 2
