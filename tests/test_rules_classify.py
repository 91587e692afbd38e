"""Job kinds (SPEC F1): the restart rule with its negative and boundary cases, the order of
precedence, name rules and requeued attempts; every expected kind is written out by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from gpudecide.errors import InputError
from gpudecide.jobs.classify import ClassifyConfig, KindRule, jobs_table, validate_rules
from gpudecide.jobs.load import load_logs
from gpudecide.jobs.schema import RESTART_AFTER_STATES

from .logs import job, write_csv

T0 = datetime(2026, 5, 4, 8, tzinfo=UTC)


def _at(hours: float) -> str:
    return (T0 + timedelta(hours=hours)).isoformat()


def _run(
    job_id: str, name: str, start_h: float, end_h: float, state: str = "completed", **extra: Any
) -> dict[str, Any]:
    """One attempt with 1 GPU that starts when submitted (unless `submit` is given)."""
    extra.setdefault("submit", _at(start_h))
    return job(job_id, name, 1, _at(start_h), _at(end_h), state, **extra)


def _kinds(
    tmp_path: Path, rows: list[dict[str, Any]], cfg: ClassifyConfig | None = None
) -> dict[str, dict[str, Any]]:
    table = jobs_table(load_logs([write_csv(tmp_path / "log.csv", rows)]).attempts, cfg)
    return {r["job_id"]: r for r in table.to_pylist()}


def _kind(tmp_path: Path, rows: list[dict[str, Any]], cfg: ClassifyConfig | None = None) -> str:
    """Kind of job "2", the re-submission candidate."""
    return str(_kinds(tmp_path, rows, cfg)["2"]["kind"])


@pytest.mark.parametrize("state", RESTART_AFTER_STATES)
def test_resubmission_after_a_failure_is_a_restart(tmp_path: Path, state: str) -> None:
    jobs = _kinds(tmp_path, [_run("1", "ft-a-train", 0, 2, state), _run("2", "ft-a-train", 3, 5)])
    assert jobs["2"]["kind"] == "restart" and jobs["2"]["kind_source"] == "resubmission"
    # What it is apart from being a restart: the training its name says.
    assert jobs["2"]["base_kind"] == "train" and jobs["2"]["is_resubmission"] is True
    # The first run is not a restart of anything.
    assert jobs["1"]["kind"] == "train" and jobs["1"]["is_resubmission"] is False


@pytest.mark.parametrize("state", ["completed", "cancelled"])
def test_resubmission_after_success_or_cancel_is_not_a_restart(tmp_path: Path, state: str) -> None:
    rows = [_run("1", "ft-a-train", 0, 2, state), _run("2", "ft-a-train", 3, 5)]
    assert _kind(tmp_path, rows) == "train"


def test_other_user_other_name_or_other_chain_is_not_a_restart(tmp_path: Path) -> None:
    failed = _run("1", "ft-a-train", 0, 2, "failed", chain_id="c1")
    assert _kind(tmp_path, [failed, _run("2", "ft-a-train", 3, 5, user="u2", chain_id="c1")]) == (
        "train"
    )
    assert _kind(tmp_path, [failed, _run("2", "ft-b-train", 3, 5, chain_id="c1")]) == "train"
    assert _kind(tmp_path, [failed, _run("2", "ft-a-train", 3, 5, chain_id="c2")]) == "train"
    # Same user, name and chain: a restart (the positive twin of the three above).
    assert _kind(tmp_path, [failed, _run("2", "ft-a-train", 3, 5, chain_id="c1")]) == "restart"


def test_restart_window_boundary(tmp_path: Path) -> None:
    failed = _run("1", "ft-a-train", 0, 2, "failed")
    # Exactly 72 h after the failed run ended: inside the window (<=).
    assert _kind(tmp_path, [failed, _run("2", "ft-a-train", 74, 75)]) == "restart"
    # One second later: outside.
    late = _run("2", "ft-a-train", 74 + 1 / 3600, 75)
    assert _kind(tmp_path, [failed, late]) == "train"
    # A team window of 100 h takes the late one in.
    assert _kind(tmp_path, [failed, late], ClassifyConfig(restart_window_hours=100)) == "restart"


def test_submitted_before_the_failure_ended_is_not_a_restart(tmp_path: Path) -> None:
    # Submitted at 1 h while the first run (ending at 2 h) was still going: a parallel run.
    rows = [_run("1", "ft-a-train", 0, 2, "failed"), _run("2", "ft-a-train", 3, 5, submit=_at(1))]
    assert _kind(tmp_path, rows) == "train"
    # Submitted the very second the failure ended: a restart (>=).
    rows = [_run("1", "ft-a-train", 0, 2, "failed"), _run("2", "ft-a-train", 3, 5, submit=_at(2))]
    assert _kind(tmp_path, rows) == "restart"


def test_only_the_direct_predecessor_counts(tmp_path: Path) -> None:
    # failed -> completed -> third run: the third follows a success, not a restart.
    rows = [
        _run("1", "ft-a-train", 0, 1, "failed"),
        _run("2", "ft-a-train", 2, 3),
        _run("3", "ft-a-train", 4, 5),
    ]
    jobs = _kinds(tmp_path, rows)
    assert [jobs[i]["kind"] for i in ("1", "2", "3")] == ["train", "restart", "train"]


def test_restart_wins_over_a_label_and_keeps_it_as_base_kind(tmp_path: Path) -> None:
    rows = [
        _run("1", "nightly", 0, 2, "timeout", kind="eval"),
        _run("2", "nightly", 3, 5, kind="eval"),
    ]
    jobs = _kinds(tmp_path, rows)
    assert jobs["1"]["kind"] == "eval" and jobs["1"]["kind_source"] == "label"
    assert (jobs["2"]["kind"], jobs["2"]["base_kind"]) == ("restart", "eval")


def test_label_beats_name_rules_and_rules_are_case_insensitive(tmp_path: Path) -> None:
    jobs = _kinds(
        tmp_path,
        [
            _run("1", "FT-X-TRAIN", 0, 1),
            _run("2", "ft-x-train", 0, 1, kind="merge"),
            _run("3", "my-job", 0, 1),
            _run("4", "smoke-train", 0, 1),  # smoke comes before train in the defaults
        ],
    )
    assert [jobs[i]["kind"] for i in "1234"] == ["train", "merge", "other", "smoke"]
    assert [jobs[i]["kind_source"] for i in "1234"] == [
        "name rule",
        "label",
        "no rule matched",
        "name rule",
    ]


def test_team_rules_first_and_replacing_rules(tmp_path: Path) -> None:
    rows = [_run("1", "smoke-train", 0, 1), _run("2", "nightly", 0, 1)]
    extra = ClassifyConfig(extra_rules=[KindRule(kind="export", pattern="^smoke")])
    assert [_kinds(tmp_path, rows, extra)[i]["kind"] for i in "12"] == ["export", "other"]
    replaced = ClassifyConfig(rules=[KindRule(kind="eval", pattern="night")])
    # The built-in rules are gone: smoke-train matches nothing now.
    assert [_kinds(tmp_path, rows, replaced)[i]["kind"] for i in "12"] == ["other", "eval"]
    nothing = ClassifyConfig(rules=[])
    assert [_kinds(tmp_path, rows, nothing)[i]["kind"] for i in "12"] == ["other", "other"]


def test_requeued_attempts_are_one_job(tmp_path: Path) -> None:
    rows = [
        job(
            "7",
            "ft-q-train",
            2,
            _at(0),
            _at(1),
            "preempted",
            attempt=1,
            submit=_at(0),
            eligible=_at(0),
            wait_reason="Resources",
        ),
        job(
            "7",
            "ft-q-train",
            4,
            _at(2),
            _at(5),
            "completed",
            attempt=2,
            submit=_at(1),
            eligible=_at(1.5),
            wait_reason="Priority",
        ),
        _run("8", "eval-q", 0, 1),
    ]
    jobs = _kinds(tmp_path, rows)
    j = jobs["7"]
    assert (j["attempts"], j["ran_attempts"], j["final_state"]) == (2, 2, "completed")
    assert j["first_wait_reason"] == "Resources" and j["gpus"] == 4
    assert j["first_submit"] == T0 and j["first_start"] == T0
    assert j["first_eligible"] == T0 and j["last_end"] == T0 + timedelta(hours=5)
    # 2 GPUs x 1 h + 4 GPUs x 3 h; the second attempt's 12 GPU-hours are requeue work.
    assert (j["gpu_hours"], j["requeue_gpu_hours"], j["completed_gpu_hours"]) == (14, 12, 12)
    assert j["kind"] == "train"  # the job keeps its kind; its extra attempts are the restarts
    single = jobs["8"]
    assert (single["attempts"], single["requeue_gpu_hours"], single["gpu_hours"]) == (1, 0, 1)
    assert single["completed_gpu_hours"] == 1 and single["ran"] is True


def test_a_job_that_never_ran_has_no_ran_attempts(tmp_path: Path) -> None:
    rows = [job("9", "ft-p-train", 1, "", "", "pending", submit=_at(0))]
    j = _kinds(tmp_path, rows)["9"]
    assert (j["ran"], j["ran_attempts"], j["gpu_hours"], j["completed_gpu_hours"]) == (
        False,
        0,
        0,
        0,
    )


def test_invalid_pattern_names_its_field() -> None:
    rules = [KindRule(kind="eval", pattern="ok"), KindRule(kind="train", pattern="(?=x)")]
    with pytest.raises(InputError) as exc:
        validate_rules(rules, "gpudecide.yaml")
    assert exc.value.field == "classify.rules[1].pattern" and exc.value.path == "gpudecide.yaml"
    assert exc.value.hint == "RE2 syntax: no look-ahead or back-references"
    head = "pattern '(?=x)' is not a valid regular expression: "
    assert exc.value.message.startswith(head), exc.value.message
    # The engine's own reason follows (its first line), not a placeholder.
    reason = exc.value.message.removeprefix(head)
    assert reason and reason != "None" and "\n" not in reason
    validate_rules(rules[:1], "gpudecide.yaml")  # a valid one passes


def test_empty_log_gives_empty_table() -> None:
    from gpudecide.jobs.schema import ATTEMPTS_SCHEMA

    table = jobs_table(pa.Table.from_pylist([], schema=ATTEMPTS_SCHEMA))
    assert table.num_rows == 0 and "kind" in table.column_names
