"""Queue analysis (SPEC Q1-Q5, G1) against hand-computed values on small canonical logs."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from gpudecide import evidence as ev
from gpudecide.jobs.load import load_logs
from gpudecide.jobs.schema import attempts_table
from gpudecide.queue import restarts
from gpudecide.queue.analysis import QueueOptions, analyse_queue, queue_evidence
from gpudecide.queue.figures import QueueFigures, figures_of
from gpudecide.queue.slo import SLO, Selector, SLOFile, wilson
from gpudecide.queue.slo import load as slo_load

from .logs import job, write_csv

AS_OF = datetime(2026, 7, 31, tzinfo=UTC)
DEMO_LOG = Path(__file__).parents[1] / "src" / "gpudecide" / "jobs" / "demo_data" / "sacct-8w.txt"


@pytest.fixture
def log(tmp_path: Path) -> Path:
    t = "2026-07-27T"
    return write_csv(
        tmp_path / "q.csv",
        [
            # train: submitted 08:00, eligible 08:00, node 10:00 (2 h wait, Resources), prep until
            # 10:20, first step 10:30, checkpoint 15:00, end 16:00
            job(
                "1",
                "ft-x-train",
                8,
                f"{t}10:00:00Z",
                f"{t}16:00:00Z",
                submit=f"{t}08:00:00Z",
                eligible=f"{t}08:00:00Z",
                prep_start=f"{t}10:20:00Z",
                first_step=f"{t}10:30:00Z",
                last_checkpoint=f"{t}15:00:00Z",
                wait_reason="Resources",
                chain_id="x",
                priority_class="normal",
                priority=10,
            ),
            # eval waits on the training (dependency), then 30 min in the queue for a quota
            job(
                "2",
                "eval-x",
                1,
                f"{t}16:30:00Z",
                f"{t}17:00:00Z",
                submit=f"{t}08:05:00Z",
                eligible=f"{t}16:00:00Z",
                wait_reason="QOSMaxGRESPerUser",
                chain_id="x",
                priority_class="normal",
                priority=10,
            ),
            # merge after the eval: 10 min wait, 20 min run
            job(
                "3",
                "merge-x",
                1,
                f"{t}17:10:00Z",
                f"{t}17:30:00Z",
                submit=f"{t}17:00:00Z",
                eligible=f"{t}17:00:00Z",
                chain_id="x",
                priority_class="normal",
                priority=10,
            ),
            # a preempted attempt (checkpoint 5 min before the stop) and its requeue
            job(
                "4",
                "ft-y-train",
                4,
                f"{t}09:00:00Z",
                f"{t}11:00:00Z",
                "preempted",
                submit=f"{t}08:00:00Z",
                eligible=f"{t}08:00:00Z",
                attempt=1,
                last_checkpoint=f"{t}10:55:00Z",
                priority_class="normal",
                priority=10,
            ),
            job(
                "4",
                "ft-y-train",
                4,
                f"{t}12:00:00Z",
                f"{t}14:00:00Z",
                submit=f"{t}11:00:00Z",
                eligible=f"{t}11:00:00Z",
                attempt=2,
                priority_class="normal",
                priority=10,
            ),
            # cancelled while pending after 3 h
            job(
                "5",
                "smoke-z",
                1,
                "",
                f"{t}12:00:00Z",
                "cancelled",
                submit=f"{t}09:00:00Z",
                eligible=f"{t}09:00:00Z",
                wait_reason="Priority",
                priority_class="low",
                priority=1,
            ),
            # a failure with no first-step time: phases cannot be told apart
            job(
                "6",
                "ft-w-train",
                2,
                f"{t}09:00:00Z",
                f"{t}09:10:00Z",
                "failed",
                submit=f"{t}09:00:00Z",
                priority_class="normal",
                priority=10,
            ),
        ],
    )


def _analyse(path: Path, **kw: Any) -> dict[str, Any]:
    return analyse_queue(load_logs([path]), QueueOptions(as_of=AS_OF, **kw))


def test_per_job_phases(log: Path) -> None:
    jobs = {j["job_id"]: j for j in _analyse(log)["jobs"]}
    assert jobs["1"]["queue_wait_s"] == 7200 and jobs["1"]["submit_to_start_s"] == 7200
    assert jobs["1"]["prep_s"] == 1200 and jobs["1"]["startup_s"] == 1800
    assert jobs["1"]["dependency_wait_s"] == 0 and jobs["1"]["run_s"] == 6 * 3600
    assert jobs["2"]["dependency_wait_s"] == (16 * 60 - 8 * 60 - 5) * 60
    assert jobs["2"]["queue_wait_s"] == 1800
    assert jobs["2"]["wait_category"] == "quota"
    # requeued job: waits of both attempts (1 h + 1 h), attempts linked
    assert jobs["4"]["attempts"] == 2 and jobs["4"]["queue_wait_s"] == 7200
    assert jobs["4"]["state"] == "completed"
    # cancelled while pending: it waited until it was cancelled
    assert jobs["5"]["queue_wait_s"] == 3 * 3600 and jobs["5"]["start"] is None
    # no eligible time: the queue wait is unmeasured, not guessed
    assert jobs["6"]["queue_wait_s"] is None and jobs["6"]["startup_s"] is None


def test_summary_phases_and_ambiguity(log: Path) -> None:
    f = _analyse(log)
    s = f["summary"]
    assert (s["jobs"], s["started"], s["never_started"], s["still_waiting"]) == (6, 5, 1, 0)
    q = f["phases"]["queue_wait"]
    assert q["n"] == 5 and q["unmeasured"] == 1
    assert q["max"] == 3 * 3600
    assert s["ambiguity"]["without_first_step_time"] == 4  # jobs 2, 3, 4, 6
    assert s["ambiguity"]["failures_before_or_after_first_step_unknown"] == 1  # job 6
    reasons = f["wait_reasons"]
    assert reasons[0]["reason"] == "Priority" and reasons[0]["total_wait_s"] == 10800
    assert s["wait_by_category_s"]["quota"] == 1800
    assert s["wait_by_category_s"]["capacity"] == 7200 + 10800


def test_preemption(log: Path) -> None:
    p = _analyse(log)["preemption"]
    assert p["stops"] == 1 and p["preempted"] == 1
    assert p["gpu_minutes_lost_since_checkpoint"] == 4 * 5
    assert p["checkpoint_before_stop"] == {"yes": 1, "no": 0, "unknown": 0}
    # the only low-priority job never ran: every job that did ran at one level
    assert p["priority_levels"] == [{"level": "normal", "jobs": 5}]
    assert p["top_priority_share"] == 1.0
    assert any("one priority level" in f for f in p["findings"])


def test_chain_end_to_end(log: Path) -> None:
    (chain,) = _analyse(log)["chains"]
    assert chain["chain"] == "x" and chain["jobs"] == 3 and chain["finished"]
    # first submit 08:00 -> merge done 17:30
    assert chain["end_to_end_s"] == 9.5 * 3600
    stages = {s["stage"]: s for s in chain["stages"]}
    assert stages["train"]["waiting_s"] == 7200 and stages["train"]["running_s"] == 6 * 3600
    # eval: not eligible until the training ended (7 h 55 min) + 30 min queued
    assert stages["evaluate"]["waiting_s"] == (7 * 60 + 55 + 30) * 60
    assert chain["longest_waiting_stage"] == "evaluate"
    assert chain["handoff_idle_s"] == 0.0  # the eval was submitted early: always a job around


def test_chain_name_pattern(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "c.csv",
        [
            job(
                "1",
                "ft-alpha-train",
                1,
                "2026-07-27T01:00:00Z",
                "2026-07-27T02:00:00Z",
                submit="2026-07-27T00:00:00Z",
                eligible="2026-07-27T00:00:00Z",
            ),
            job(
                "2",
                "eval-alpha",
                1,
                "2026-07-27T05:00:00Z",
                "2026-07-27T06:00:00Z",
                submit="2026-07-27T04:00:00Z",
                eligible="2026-07-27T04:00:00Z",
            ),
        ],
    )
    (chain,) = _analyse(path, chain_pattern=r"^(?:ft|eval)-(?P<chain>[a-z]+)")["chains"]
    assert chain["chain"] == "alpha" and chain["end_to_end_s"] == 6 * 3600
    assert chain["handoff_idle_s"] == 2 * 3600  # nobody submitted anything 02:00-04:00


def test_still_waiting_job_counts_once_past_threshold(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "p.csv",
        [
            job(
                "1",
                "ft-a-train",
                "",
                "",
                "",
                "pending",
                submit="2026-07-30T00:00:00Z",
                eligible="2026-07-30T00:00:00Z",
            ),
        ],
    )
    slos = SLOFile(
        slos={
            "normal": SLO(threshold_minutes=60, allowed_violation_share=0.0),
            "urgent": SLO(
                threshold_minutes=60 * 48, allowed_violation_share=0.0, measure="submit_to_start"
            ),
        }
    )
    f = _analyse(path, slos=slos)
    assert f["summary"]["still_waiting"] == 1
    assert f["jobs"][0]["queue_wait_s"] == 24 * 3600  # until the end of the log (AS_OF)
    normal, urgent = f["slo"]
    assert normal["violations"] == 1 and normal["verdict"] == "fail"
    assert urgent["verdict"] == "not measurable"  # 24 h so far, threshold 48 h: undecided


def test_wilson_interval() -> None:
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and 0.27 < hi < 0.28
    lo, hi = wilson(5, 10)
    assert round(lo, 3) == 0.237 and round(hi, 3) == 0.763


# --- restarts from zero in the team's logs ---


def test_demo_log_flags_the_node_fail_restart_from_zero() -> None:
    log = load_logs([DEMO_LOG], tz="Asia/Almaty")
    found = restarts.restarts_from_zero(log.attempts)
    zero = [e for e in found["restarts"] if e["verdict"] == "restarted_from_zero"]
    assert [e["job_id"] for e in zero] == ["41874"]
    e = zero[0]
    assert e["state"] == "node_fail" and e["rerun_job_id"] == "41875"
    assert e["lost_attempt_s"] == 22 * 3600 + 10 * 60 and e["rerun_s"] == 27 * 3600 + 40 * 60
    assert e["gpu_hours_lost"] == pytest.approx(8 * (22 + 10 / 60), abs=0.01)
    assert e["checkpoint_known"] is False
    by_job = {x["job_id"]: x["verdict"] for x in found["restarts"]}
    assert by_job["41909"] == "resumed"  # the timeout whose re-run took 9 h 50 min
    assert by_job["41892"] == "unclear"  # preempted after 6 h of a 24 h run
    assert found["from_zero"] == 1 and "177.3 GPU-hours lost" in found["findings"][0]


def _attempt(job: str, attempt: int, state: str, start_h: float, hours: float,
             **extra: Any) -> dict[str, Any]:  # fmt: skip
    t0 = datetime(2026, 6, 1, tzinfo=UTC)
    start = t0 + timedelta(hours=start_h)
    row = {
        "job_id": job,
        "attempt": attempt,
        "name": "ft-x",
        "user": "u",
        "gpu_count": 8,
        "state": state,
        "submit": start,
        "start": start,
        "end": start + timedelta(hours=hours),
    }
    row.update(extra)
    return row


def test_reference_run_decides_and_its_boundary() -> None:
    """A clean 20 h run is the reference: a 17 h re-run (85 %) is from zero, 16.9 h is not."""
    for rerun, verdict in ((17.0, "restarted_from_zero"), (16.9, "resumed")):
        rows = [
            _attempt("1", 1, "completed", 0, 20),
            _attempt("2", 1, "node_fail", 30, 10),
            _attempt("3", 1, "completed", 41, rerun),
        ]
        found = restarts.restarts_from_zero(attempts_table(rows, "t"))
        assert [e["verdict"] for e in found["restarts"]] == [verdict]
        assert found["restarts"][0]["reference_full_run_s"] == 20 * 3600


def test_known_checkpoint_gives_the_loss_since_it() -> None:
    ckpt = datetime(2026, 6, 1, tzinfo=UTC) + timedelta(hours=8)
    rows = [
        _attempt("2", 1, "preempted", 0, 10, last_checkpoint=ckpt),
        _attempt("2", 2, "completed", 11, 4),
    ]
    e = restarts.restarts_from_zero(attempts_table(rows, "t"))["restarts"][0]
    assert e["verdict"] == "resumed" and e["checkpoint_known"] is True
    assert e["gpu_hours_lost"] == 16.0 and e["checkpoint_age_at_loss_s"] == 7200


def test_a_rerun_outside_the_window_or_another_name_is_not_a_restart() -> None:
    rows = [
        _attempt("2", 1, "timeout", 0, 10),
        _attempt("3", 1, "completed", 200, 12),
        _attempt("4", 1, "completed", 11, 12, name="eval-x"),
    ]
    assert restarts.restarts_from_zero(attempts_table(rows, "t"))["restarts"] == []


# --- typed figures: the models hold a record's figures key for key ---


def _canonical(figures: dict[str, Any]) -> str:
    # the evidence's own canonical form: an int written as a float would change the hash
    return json.dumps(figures, sort_keys=True, separators=(",", ":"))


def test_queue_figures_model_is_the_record_key_for_key(log: Path, tmp_path: Path) -> None:
    """Every part a record writes, read back by QueueFigures and dumped, is the record's
    figures: an inconclusive, a passing and an unmeasurable SLO, a skipped row's message, a
    chain, a preemption; the sealed id does not move."""
    slos = SLOFile(
        slos={
            "normal": SLO(threshold_minutes=60, allowed_violation_share=0.5),
            "urgent": SLO(
                threshold_minutes=600,
                allowed_violation_share=0.1,
                measure="eligible_to_first_step",
                selector=Selector(kinds=["eval"]),
            ),
            "never": SLO(
                threshold_minutes=5, allowed_violation_share=0.1, selector=Selector(sites=["x"])
            ),
        }
    )
    figures = _analyse(log, slos=slos)
    assert {s["verdict"] for s in figures["slo"]} >= {"inconclusive", "not measurable"}
    written = ev.write(queue_evidence(figures, []), tmp_path / "evidence")
    record = ev.load(written)
    model = figures_of(record)
    assert isinstance(model, QueueFigures)
    assert _canonical(model.model_dump(mode="json")) == _canonical(record.figures)
    assert ev.seal(record.model_copy(update={"figures": model.model_dump(mode="json")})).id == (
        record.id
    )


def test_demo_log_figures_round_trip_with_restarts_and_skipped_rows(tmp_path: Path) -> None:
    """The demo log (a restart from zero, chains, an array limit) and a malformed row."""
    bad = tmp_path / "sacct.txt"
    bad.write_text(DEMO_LOG.read_text() + "garbage|row|x\n")
    template = Path(__file__).parents[1] / "src" / "gpudecide" / "templates" / "workspace"
    slos = slo_load(template / "slo.yaml")
    figures = analyse_queue(
        load_logs([bad], tz="Asia/Almaty", skip_bad_rows=True), QueueOptions(slos=slos)
    )
    assert figures["skipped_rows"] and figures["restarts_from_zero"]["from_zero"] == 1
    record = ev.load(ev.write(queue_evidence(figures, []), tmp_path / "evidence"))
    dumped = QueueFigures.model_validate(record.figures).model_dump(mode="json")
    assert _canonical(dumped) == _canonical(record.figures)


def test_figures_of_refuses_another_kind_and_another_shape(log: Path) -> None:
    record = queue_evidence(_analyse(log), [])
    with pytest.raises(LookupError, match="not a queue record"):
        figures_of(record.model_copy(update={"kind": "cost"}))
    broken = dict(record.figures, summary={**record.figures["summary"], "jobs": "many"})
    with pytest.raises(ValueError, match=r"summary\.jobs"):
        figures_of(record.model_copy(update={"figures": broken}))
