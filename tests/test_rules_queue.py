"""Queue rules (SPEC Q1-Q3) against independent oracles: published Wilson intervals, hand-built
logs whose every wait is written out, and both sides of each boundary (threshold, allowed
share, conclusive), including eligible times over several attempts of a requeued job."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from gpudecide.errors import InputError
from gpudecide.jobs.load import load_logs
from gpudecide.queue import lifecycle
from gpudecide.queue import slo as slo_mod
from gpudecide.queue.analysis import QueueOptions, analyse_queue
from gpudecide.queue.slo import SLO, Selector, SLOFile, wilson

from .logs import job, write_csv

T0 = datetime(2026, 6, 1, 8, tzinfo=UTC)
AS_OF = T0 + timedelta(days=3)


def at_minute(minutes: float) -> str:
    return (T0 + timedelta(minutes=minutes)).isoformat()


# Newcombe, "Two-sided confidence intervals for the single proportion: comparison of seven
# methods", Statistics in Medicine 17 (1998) 857-872, Table I, method 3 (score, no continuity
# correction): published to four places.
NEWCOMBE = [
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0000, 0.1611),
    (1, 29, 0.0061, 0.1718),
]


@pytest.mark.parametrize(("k", "n", "lo", "hi"), NEWCOMBE)
def test_wilson_matches_published_values(k: int, n: int, lo: float, hi: float) -> None:
    got = wilson(k, n)
    assert (round(got[0], 4), round(got[1], 4)) == (lo, hi)


def score_roots(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The score interval as the two roots of (n + z^2) p^2 - (2k + z^2) p + k^2 / n = 0,
    i.e. the p for which |k/n - p| = z sqrt(p (1 - p) / n): another route to the same bounds."""
    a, b, c = n + z * z, -(2 * k + z * z), k * k / n
    d = math.sqrt(b * b - 4 * a * c)
    return (-b - d) / (2 * a), (-b + d) / (2 * a)


@pytest.mark.parametrize(("k", "n"), [(0, 1), (1, 1), (2, 5), (5, 10), (3, 1000), (999, 1000)])
def test_wilson_is_the_score_interval(k: int, n: int) -> None:
    lo, hi = wilson(k, n)
    want_lo, want_hi = score_roots(k, n)
    assert lo == pytest.approx(max(0.0, want_lo), abs=1e-12)
    assert hi == pytest.approx(min(1.0, want_hi), abs=1e-12)
    assert lo <= k / n <= hi
    # A wider z widens the interval on both sides (unless pinned at 0 or 1).
    lo99, hi99 = wilson(k, n, z=2.576)
    assert lo99 <= lo and hi99 >= hi and (lo99 < lo or hi99 > hi)


def test_wilson_of_nothing_is_everything() -> None:
    assert wilson(0, 0) == (0.0, 1.0)


def waits_log(path: Path, waits_min: list[float], **extra: Any) -> Path:
    """One 1-GPU training per wait: eligible at its submit, started `wait` minutes later."""
    rows = []
    for i, w in enumerate(waits_min):
        submit = 60 * i
        rows.append(
            job(
                str(100 + i),
                f"ft-{i}-train",
                1,
                at_minute(submit + w),
                at_minute(submit + w + 30),
                submit=at_minute(submit),
                eligible=at_minute(submit),
                **extra,
            )
        )
    return write_csv(path, rows)


def evaluated_slo(path: Path, normal: SLO, urgent: SLO | None = None) -> dict[str, Any]:
    slos = SLOFile(
        slos={
            "normal": normal,
            "urgent": urgent or SLO(threshold_minutes=1, allowed_violation_share=1),
        }
    )
    result: dict[str, Any] = analyse_queue(load_logs([path]), QueueOptions(slos=slos, as_of=AS_OF))[
        "slo"
    ][0]
    return result


def test_a_wait_equal_to_the_threshold_is_no_violation(tmp_path: Path) -> None:
    log = waits_log(tmp_path / "q.csv", [30, 30.5, 29, 0])
    r = evaluated_slo(log, SLO(threshold_minutes=30, allowed_violation_share=0.25))
    assert (r["measured"], r["violations"]) == (4, 1)  # only the 30.5-minute wait
    # A share exactly at the allowed one passes (<=) on the point estimate; four jobs
    # cannot settle it, so the verdict itself is inconclusive.
    assert r["violation_share"] == 0.25 and r["point_estimate"] == "pass"
    assert r["verdict"] == "inconclusive" and r["conclusive"] is False
    tighter = evaluated_slo(log, SLO(threshold_minutes=30, allowed_violation_share=0.24))
    assert tighter["point_estimate"] == "fail"


def test_conclusive_pass(tmp_path: Path) -> None:
    # 0 violations of 20: the interval's top (0.1611, published above) is under 25 %.
    log = waits_log(tmp_path / "q.csv", [5] * 20)
    r = evaluated_slo(log, SLO(threshold_minutes=30, allowed_violation_share=0.25))
    assert r["verdict"] == r["point_estimate"] == "pass" and r["conclusive"] is True
    assert r["ci95"] == [0.0, 0.1611]
    # Just under the interval's top the same data cannot rule a violation share above it out.
    assert (
        evaluated_slo(log, SLO(threshold_minutes=30, allowed_violation_share=0.16))["conclusive"]
        is False
    )
    assert evaluated_slo(log, SLO(threshold_minutes=30, allowed_violation_share=0.1612))[
        "conclusive"
    ]


def test_conclusive_fail(tmp_path: Path) -> None:
    # 20 violations of 20: the interval's bottom, 0.8389, is above the allowed share.
    log = waits_log(tmp_path / "q.csv", [90] * 20)
    r = evaluated_slo(log, SLO(threshold_minutes=30, allowed_violation_share=0.25))
    assert r["verdict"] == r["point_estimate"] == "fail" and r["conclusive"] is True
    assert r["ci95"] == [0.8389, 1.0]
    # Allowed share above the bottom (0.83887...): the fail is no longer certain.
    assert (
        evaluated_slo(log, SLO(threshold_minutes=30, allowed_violation_share=0.839))["conclusive"]
        is False
    )
    assert evaluated_slo(log, SLO(threshold_minutes=30, allowed_violation_share=0.8388))[
        "conclusive"
    ]


def test_inconclusive_small_sample(tmp_path: Path) -> None:
    # 2 violations of 5: share 0.4, interval 0.1176-0.7693 (score roots) holds 0.25.
    log = waits_log(tmp_path / "q.csv", [90, 90, 5, 5, 5])
    r = evaluated_slo(log, SLO(threshold_minutes=30, allowed_violation_share=0.25))
    assert r["violation_share"] == 0.4 and r["point_estimate"] == "fail"
    assert r["ci95"] == [0.1176, 0.7693] and r["conclusive"] is False
    assert r["verdict"] == "inconclusive"


def test_selector_and_measure_choose_the_clock(tmp_path: Path) -> None:
    # Two jobs: a training that waited 2 h after an hour's dependency, and an eval.
    rows = [
        job(
            "1",
            "ft-a-train",
            1,
            at_minute(180),
            at_minute(200),
            submit=at_minute(0),
            eligible=at_minute(60),
        ),
        job(
            "2",
            "eval-a",
            1,
            at_minute(70),
            at_minute(80),
            submit=at_minute(60),
            eligible=at_minute(60),
        ),
    ]
    log = write_csv(tmp_path / "q.csv", rows)
    trains = Selector(kinds=["train"])
    by_eligible = evaluated_slo(
        log, SLO(threshold_minutes=119, allowed_violation_share=0, selector=trains)
    )
    assert (by_eligible["selected"], by_eligible["violations"]) == (1, 1)  # 120 min > 119
    assert by_eligible["waits_s"] == [7200.0]
    by_submit = evaluated_slo(
        log,
        SLO(
            threshold_minutes=180,
            allowed_violation_share=0,
            measure="submit_to_start",
            selector=trains,
        ),
    )
    assert by_submit["waits_s"] == [10800.0] and by_submit["violations"] == 0  # = threshold
    nobody = evaluated_slo(
        log, SLO(threshold_minutes=1, allowed_violation_share=0, selector=Selector(kinds=["merge"]))
    )
    assert nobody["verdict"] == "not measurable" and nobody["selected"] == 0
    assert "no job in the log matches" in nobody["why"]


def _requeued(path: Path, reverse: bool) -> Path:
    """Job 4: attempt 1 eligible 08:00, started 09:00, preempted 11:00; attempt 2 eligible
    11:00, started 12:00, done 14:00. Optionally written attempt 2 first."""
    rows = [
        job(
            "4",
            "ft-y-train",
            4,
            at_minute(60),
            at_minute(180),
            "preempted",
            attempt=1,
            submit=at_minute(0),
            eligible=at_minute(0),
            wait_reason="Resources",
        ),
        job(
            "4",
            "ft-y-train",
            4,
            at_minute(240),
            at_minute(360),
            "completed",
            attempt=2,
            submit=at_minute(180),
            eligible=at_minute(180),
            wait_reason="Priority",
        ),
    ]
    return write_csv(path, rows[::-1] if reverse else rows)


@pytest.mark.parametrize("reverse", [False, True], ids=["in-order", "attempt-2-first"])
def test_eligible_time_of_a_requeued_job_is_its_first(tmp_path: Path, reverse: bool) -> None:
    log = _requeued(tmp_path / "q.csv", reverse)
    f = analyse_queue(load_logs([log]), QueueOptions(as_of=AS_OF))
    (j,) = f["jobs"]
    assert j["attempts"] == 2 and j["state"] == "completed"
    assert j["submit"].startswith("2026-06-01T08:00") and j["eligible"].startswith(
        "2026-06-01T08:00"
    )
    assert j["start"].startswith("2026-06-01T09:00") and j["end"].startswith("2026-06-01T14:00")
    # The clock runs from the first eligible time to the first start: 1 h, never negative.
    assert j["eligible_to_start_s"] == 3600 and j["submit_to_start_s"] == 3600
    # Queue wait is summed over the attempts: 1 h before each.
    assert j["queue_wait_s"] == 7200
    # The run after the last start: 2 h.
    assert j["run_s"] == 7200
    slo = evaluated_slo(log, SLO(threshold_minutes=59, allowed_violation_share=0))
    assert slo["waits_s"] == [3600.0] and slo["violations"] == 1


def pending_48h(job_id: str = "9") -> dict[str, Any]:
    """A training still pending at the end of the log, submitted and eligible 48 h before."""
    submitted = (AS_OF - timedelta(hours=48)).isoformat()
    return job(job_id, "ft-p-train", "", "", "", "pending", submit=submitted, eligible=submitted)


def test_still_waiting_job_is_judged_only_past_the_threshold(tmp_path: Path) -> None:
    rows = [pending_48h()]
    log = write_csv(tmp_path / "p.csv", rows)
    over = evaluated_slo(log, SLO(threshold_minutes=48 * 60 - 1, allowed_violation_share=0))
    assert (over["measured"], over["violations"], over["verdict"]) == (1, 1, "fail")
    # Waited exactly the threshold so far: it may still start in time, so it is not judged.
    at = evaluated_slo(log, SLO(threshold_minutes=48 * 60, allowed_violation_share=0))
    assert at["measured"] == 0 and at["verdict"] == "not measurable"
    assert "none of the 1 selected job(s)" in at["why"]


def test_quota_violations_counted_apart_and_verdicts_summarised(tmp_path: Path) -> None:
    # Two violations of three: one waited for a quota (QOS limit), one for capacity; a smoke
    # test cancelled while pending has no start, so an SLO on it is not measurable.
    rows = [
        job(
            "1",
            "ft-a-train",
            1,
            at_minute(120),
            at_minute(150),
            submit=at_minute(0),
            eligible=at_minute(0),
            wait_reason="QOSMaxGRESPerUser",
        ),
        job(
            "2",
            "ft-b-train",
            1,
            at_minute(200),
            at_minute(230),
            submit=at_minute(60),
            eligible=at_minute(60),
            wait_reason="Resources",
        ),
        job(
            "3",
            "ft-c-train",
            1,
            at_minute(65),
            at_minute(90),
            submit=at_minute(60),
            eligible=at_minute(60),
        ),
        job(
            "4",
            "smoke-d",
            1,
            "",
            at_minute(100),
            "cancelled",
            submit=at_minute(0),
            eligible=at_minute(0),
        ),
    ]
    log = write_csv(tmp_path / "q.csv", rows)
    slos = SLOFile(
        slos={
            "normal": SLO(
                threshold_minutes=60,
                allowed_violation_share=0.5,
                measure="submit_to_start",
                selector=Selector(kinds=["train"]),
            ),
            "urgent": SLO(
                threshold_minutes=30,
                allowed_violation_share=0.0,
                measure="submit_to_start",
                selector=Selector(kinds=["smoke"]),
            ),
        }
    )
    f = analyse_queue(load_logs([log]), QueueOptions(slos=slos, as_of=AS_OF))
    normal, urgent = f["slo"]
    assert (normal["selected"], normal["measured"], normal["violations"]) == (3, 3, 2)
    assert normal["violations_waiting_for_quota"] == 1
    assert normal["violation_share"] == round(2 / 3, 4) and normal["point_estimate"] == "fail"
    assert normal["verdict"] == "inconclusive"  # 2 of 3 cannot rule out 50 %
    assert urgent["verdict"] == "not measurable" and urgent["selected"] == 1
    assert f["summary"]["slo_verdicts"] == {
        "normal": "inconclusive",
        "urgent": "not measurable",
    }


def lifecycle_rows(**cols: list[Any]) -> pa.Table:
    n = len(next(iter(cols.values())))
    base: dict[str, list[Any]] = {
        "gpus": [None] * n,
        "priority": [None] * n,
        "gpu_type": [None] * n,
        "kind": [None] * n,
        "priority_class": [None] * n,
        "site": [None] * n,
        "submit": [None] * n,
    }
    return pa.table(base | cols)


def test_selector_ranges_are_inclusive_and_missing_values_are_outside() -> None:
    t = lifecycle_rows(gpus=[1, 2, 8, 9, None], priority=[0, 5, 10, 11, 5])
    sel = Selector(gpus={"min": 2, "max": 8})
    assert sel.mask(t).tolist() == [False, True, True, False, False]
    assert Selector(gpus={"min": 8}).mask(t).tolist() == [False, False, True, True, False]
    assert Selector(gpus={"max": 1}).mask(t).tolist() == [True, False, False, False, False]
    pri = Selector(priority={"min": 5, "max": 10})
    assert pri.mask(t).tolist() == [False, True, True, False, True]
    assert Selector().mask(t).tolist() == [True] * 5
    with pytest.raises(ValueError, match="min is above max"):
        Selector(gpus={"min": 3, "max": 2})


def test_selector_lists_match_case_insensitively_and_all_conditions_hold() -> None:
    t = lifecycle_rows(
        gpu_type=["H100", "a100", None, "h100"],
        kind=["train", "train", "train", "eval"],
        priority_class=["High", "high", "low", None],
        site=["kz-ala", "KZ-ALA", "eu", "kz-ala"],
    )
    assert Selector(gpu_class=["h100"]).mask(t).tolist() == [True, False, False, True]
    assert Selector(kinds=["train"]).mask(t).tolist() == [True, True, True, False]
    assert Selector(priority_class=["HIGH"]).mask(t).tolist() == [True, True, False, False]
    assert Selector(sites=["kz-ala"]).mask(t).tolist() == [True, True, False, True]
    both = Selector(gpu_class=["h100"], kinds=["train"], sites=["kz-ala"])
    assert both.mask(t).tolist() == [True, False, False, False]


def test_time_of_day_window_in_its_zone_with_weekdays_and_midnight() -> None:
    # Almaty is UTC+5. Monday 2026-06-01.
    utc = [
        datetime(2026, 6, 1, 4, 0, tzinfo=UTC),  # 09:00 Mon: the start, inside
        datetime(2026, 6, 1, 12, 59, tzinfo=UTC),  # 17:59 Mon: inside
        datetime(2026, 6, 1, 13, 0, tzinfo=UTC),  # 18:00 Mon: the end, outside
        datetime(2026, 6, 6, 5, 0, tzinfo=UTC),  # 10:00 Sat: inside the hours, not the days
        None,
    ]
    t = lifecycle_rows(submit=utc)
    work = {"start": "09:00", "end": "18:00", "timezone": "Asia/Almaty"}
    weekdays = Selector(time_of_day={**work, "weekdays": ["mon", "tue", "wed", "thu", "fri"]})
    assert weekdays.mask(t).tolist() == [True, True, False, False, False]
    every_day = Selector(time_of_day=work)
    assert every_day.mask(t).tolist() == [True, True, False, True, False]
    # A night window wraps midnight: 22:00-06:00 holds 23:30 and 05:59, not 06:00 or 21:59.
    night = Selector(time_of_day={"start": "22:00", "end": "06:00", "timezone": "UTC"})
    stamps = [
        datetime(2026, 6, 1, 23, 30, tzinfo=UTC),
        datetime(2026, 6, 2, 5, 59, tzinfo=UTC),
        datetime(2026, 6, 2, 6, 0, tzinfo=UTC),
        datetime(2026, 6, 1, 21, 59, tzinfo=UTC),
        datetime(2026, 6, 1, 22, 0, tzinfo=UTC),
    ]
    assert night.mask(lifecycle_rows(submit=stamps)).tolist() == [True, True, False, False, True]
    with pytest.raises(ValueError, match="is not HH:MM"):
        Selector(time_of_day={"start": "9am", "end": "18:00", "timezone": "UTC"})


def test_slo_file_needs_both_slos_and_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "slo.yaml"
    path.write_text(
        "slos:\n  normal:\n    threshold_minutes: 30\n    allowed_violation_share: 0.1\n"
        "  urgent:\n    threshold_minutes: 5\n    allowed_violation_share: 0.0\n"
    )
    loaded = slo_mod.load(path)
    assert loaded.slos["normal"].threshold_minutes == 30
    assert loaded.slos["urgent"].measure == "eligible_to_start"
    path.write_text("slos:\n  normal:\n    threshold_minutes: 30\n    allowed_violation_share: 2\n")
    with pytest.raises(InputError) as exc:
        slo_mod.load(path)
    assert exc.value.path == str(path) and exc.value.line == 4


def test_conclusive_exactly_at_the_interval_bounds(tmp_path: Path) -> None:
    # The allowed share set exactly at the interval's top: "the whole interval is within
    # the allowance" (<=) holds, so the pass is conclusive; exactly at the bottom of a failing
    # interval the fail is not (it needs the bottom strictly above).
    ok_log = waits_log(tmp_path / "ok.csv", [5] * 20)
    top = score_roots(0, 20)[1]
    r = evaluated_slo(ok_log, SLO(threshold_minutes=30, allowed_violation_share=wilson(0, 20)[1]))
    assert r["conclusive"] is True and r["verdict"] == "pass"
    assert wilson(0, 20)[1] == pytest.approx(top, abs=1e-12)
    bad_log = waits_log(tmp_path / "bad.csv", [90] * 20)
    r = evaluated_slo(bad_log, SLO(threshold_minutes=30, allowed_violation_share=wilson(20, 20)[0]))
    assert r["conclusive"] is False and r["verdict"] == "inconclusive"
    assert r["point_estimate"] == "fail"


def test_not_measurable_says_nothing_else(tmp_path: Path) -> None:
    rows = [
        job(
            "1",
            "ft-a-train",
            1,
            "",
            at_minute(30),
            "cancelled",
            submit=at_minute(0),
            eligible=at_minute(0),
        )
    ]
    log = write_csv(tmp_path / "q.csv", rows)
    r = evaluated_slo(
        log,
        SLO(
            description="trainings start within the hour",
            threshold_minutes=60,
            allowed_violation_share=0.1,
            measure="submit_to_start",
        ),
    )
    assert r["verdict"] == "not measurable"
    assert (r["selected"], r["measured"], r["unmeasured"]) == (1, 0, 1)
    assert r["conclusive"] is False and r["point_estimate"] is None
    assert r["more_jobs_to_settle"] is None and r["ci95"] is None
    assert r["violation_share"] is None
    assert r["why"] == "none of the 1 selected job(s) has the submit_to_start timestamps"
    assert (r["description"], r["measure"], r["allowed_violation_share"]) == (
        "trainings start within the hour",
        "submit_to_start",
        0.1,
    )


def test_phase_quantiles_by_hand() -> None:
    # Ten jobs queued 0..9 minutes (numpy's linear percentiles): p50 4.5 min, p90 8.1 min,
    # p99 8.91 min, max 9 min; no job has a prep start, so that phase is all unmeasured.
    waits = np.arange(10) * 60.0
    lc = pa.table(
        {
            "dependency_wait_s": [0.0] * 10,
            "queue_wait_s": waits.tolist(),
            "prep_s": [None] * 10,
            "startup_s": [None] * 10,
            "run_s": [1800.0] * 10,
            "since_checkpoint_s": [None] * 10,
            "end_to_end_s": (waits + 1800).tolist(),
        },
        schema=pa.schema(
            [(name, pa.float64()) for name in (
                "dependency_wait_s", "queue_wait_s", "prep_s", "startup_s", "run_s",
                "since_checkpoint_s", "end_to_end_s",
            )]
        ),
    )  # fmt: skip
    phases = lifecycle.phase_summary(lc)
    q = phases["queue_wait"]
    assert (q["n"], q["p50"], q["p90"], q["p99"], q["max"], q["unmeasured"]) == (
        10,
        270.0,
        486.0,
        534.6,
        540.0,
        0,
    )
    assert phases["prep"] == {
        "meaning": dict(lifecycle.PHASES)["prep"],
        "n": 0,
        "p50": None,
        "p90": None,
        "p99": None,
        "max": None,
        "unmeasured": 10,
    }


@pytest.mark.parametrize(
    ("reason", "category"),
    [
        (None, None),
        ("  ", None),
        ("QOSMaxGRESPerUser", "quota"),
        ("AssocGrpGRES", "quota"),
        ("Dependency", "dependency"),
        ("JobHeldUser", "hold"),
        ("BeginTime", "begin_time"),
        ("Resources", "capacity"),
        ("Priority", "capacity"),
        ("ReqNodeNotAvail, reserved for maintenance", "constraints"),
        ("SomethingNew", "other"),
    ],
)
def test_reason_categories(reason: str | None, category: str | None) -> None:
    assert lifecycle.reason_category(reason) == category
