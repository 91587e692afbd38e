"""The SLO rules at their edges (SPEC Q2, Q3): how many jobs settle an inconclusive verdict,
the words of a verdict, the CDF the report draws, jobs without the clock's start, selectors
that combine, and an empty lifecycle table.

Oracles are independent of the code: the score interval as the roots of its quadratic
(`score_roots`), a linear search over sample sizes, waits worked out by hand.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from gpudecide.errors import InputError
from gpudecide.jobs.classify import jobs_table
from gpudecide.jobs.load import load_logs
from gpudecide.queue import lifecycle
from gpudecide.queue import slo as slo_mod
from gpudecide.queue.slo import (
    SETTLE_MAX_JOBS,
    SLO,
    Selector,
    TimeOfDay,
    evaluate,
    jobs_to_settle,
    wilson,
)

from .logs import job, write_csv
from .test_rules_queue import (
    AS_OF,
    at_minute,
    evaluated_slo,
    lifecycle_rows,
    pending_48h,
    score_roots,
    waits_log,
)


def _conclusive_by_roots(share: float, total: np.ndarray, allowed: float) -> np.ndarray:
    """For each sample size, whether the score interval at `share` lies on one side of
    `allowed`: the quadratic's roots, clipped to [0, 1], vectorised over sizes."""
    z2 = 1.96 * 1.96
    k = share * total
    a, b, c = total + z2, -(2 * k + z2), k * k / total
    d = np.sqrt(b * b - 4 * a * c)
    lo = np.maximum(0.0, (-b - d) / (2 * a))
    hi = np.minimum(1.0, (-b + d) / (2 * a))
    result: np.ndarray = (hi <= allowed) | (lo > allowed)
    return result


def _settle_by_search(k: int, n: int, allowed: float, limit: int = 60_000) -> int | None:
    """The smallest number of further jobs at today's share that settles it, by trying every
    sample size up to `limit`."""
    totals = np.arange(n, limit + 1, dtype=float)
    ok = _conclusive_by_roots(k / n, totals, allowed)
    if not ok.any():
        return None
    return int(totals[int(np.argmax(ok))]) - n


SHARES = [0.001, 0.03, 0.1, 0.25, 0.5, 0.8, 0.97]
CASES = [
    (k, n, allowed)
    for n in (1, 2, 3, 7, 10, 19, 20, 33, 50)
    for k in sorted({0, 1, n // 3, n // 2, n - 1, n})
    for allowed in SHARES
    if k <= n and abs(k / n - allowed) > 0.02
]


@pytest.mark.parametrize(("k", "n", "allowed"), CASES)
def test_jobs_to_settle_is_the_smallest_sample_that_settles(k: int, n: int, allowed: float) -> None:
    want = _settle_by_search(k, n, allowed)
    assert want is not None, "every case is chosen to settle under the search limit"
    assert jobs_to_settle(k, n, allowed) == want


def test_jobs_to_settle_cases_cover_both_sides_and_the_doubling() -> None:
    # The cases reach settled samples (0), samples that settle under 2n (the first guess)
    # and samples that need the doubling, on the pass side and on the fail side.
    answers = [(jobs_to_settle(k, n, a), k / n < a) for k, n, a in CASES]
    assert any(m == 0 for m, _ in answers)
    assert any(
        m is not None and 0 < m <= n for (m, _), (_, n, _) in zip(answers, CASES, strict=True)
    )
    assert any(
        m is not None and m > 4 * n for (m, _), (_, n, _) in zip(answers, CASES, strict=True)
    )
    assert {below for m, below in answers if m} == {True, False}


def test_jobs_to_settle_of_nothing_settled_and_a_single_job() -> None:
    assert jobs_to_settle(0, 0, 0.1) is None  # nothing measured: no share to keep
    assert jobs_to_settle(0, 35, 0.1) == 0  # 0/35: upper bound 9.9 %, settled already
    assert jobs_to_settle(0, 1, 0.1) == 34  # 0 of 35 is the first settled sample
    assert jobs_to_settle(1, 10, 0.1) is None  # the share is the allowed one: never


def test_jobs_to_settle_at_the_interval_bounds() -> None:
    # Allowed exactly at the top of 0/35: "<=" settles there, so 15 more from 20.
    assert jobs_to_settle(0, 20, wilson(0, 35)[1]) == 15
    # Allowed exactly at the bottom of 35/35: a fail needs the bottom strictly above, so
    # 35 jobs do not settle it and 36 do.
    assert jobs_to_settle(20, 20, wilson(35, 35)[0]) == 16


def test_jobs_to_settle_when_the_first_doubling_overshoots_by_half() -> None:
    # From one job the guesses are 2, 4, 8, 16, 32: settled first at 32, so the answer is
    # sought between 16 and 32. The sample settles from 25 jobs on (an allowed share between
    # the tops of 0/24 and 0/25), inside that range.
    allowed = (wilson(0, 24)[1] + wilson(0, 25)[1]) / 2
    assert jobs_to_settle(0, 1, allowed) == 24


@pytest.mark.parametrize(("total", "want"), [(8_000_000, 7_921_875), (SETTLE_MAX_JOBS, 9_921_875)])
def test_jobs_to_settle_counts_samples_up_to_the_cap(total: int, want: int) -> None:
    # 78,125 jobs double to exactly 10,000,000 after six steps (156,250 * 64): a sample that
    # settles at the cap itself is still counted, one that needs more is not.
    k, n = 7_812, 78_125
    allowed = wilson(k / n * total, total)[1]
    assert total - n == want
    assert jobs_to_settle(k, n, allowed) == want


def test_jobs_to_settle_past_the_cap_is_never() -> None:
    k, n = 7_812, 78_125
    assert (
        jobs_to_settle(k, n, wilson(k / n * (SETTLE_MAX_JOBS + 1), SETTLE_MAX_JOBS + 1)[1]) is None
    )


def test_wilson_stays_inside_zero_and_one() -> None:
    # At 5/5 and 0/5 the formula lands a rounding error past 1 and below 0.
    z = 1.96
    n = 5
    assert (1 + z * z / (2 * n) + z * math.sqrt(z * z / (4 * n * n))) / (1 + z * z / n) > 1.0
    assert wilson(5, 5)[1] == 1.0 and wilson(0, 5)[0] == 0.0
    assert wilson(5, 5)[0] == pytest.approx(score_roots(5, 5)[0], abs=1e-12)


def _pct(x: float) -> str:
    return f"{x:.1%}"


def test_inconclusive_why_names_the_jobs_that_would_settle_it(tmp_path: Path) -> None:
    r = evaluated_slo(
        waits_log(tmp_path / "q.csv", [5] * 20),
        SLO(threshold_minutes=60, allowed_violation_share=0.1),
    )
    lo, hi = score_roots(0, 20)
    assert r["why"] == (
        f"0 of 20 jobs waited longer than 60 min (0.0%, 95 % interval {_pct(max(0, lo))}-"
        f"{_pct(hi)}) against 10% allowed: the interval holds the allowed share, so the sample "
        "cannot tell; the point estimate leans to pass, about 15 more jobs at this share would "
        "settle it"
    )


def test_inconclusive_why_when_no_sample_settles_it(tmp_path: Path) -> None:
    log = waits_log(tmp_path / "q.csv", [90] * 2 + [5] * 18)
    r = evaluated_slo(log, SLO(threshold_minutes=60, allowed_violation_share=0.1))
    lo, hi = score_roots(2, 20)
    assert r["more_jobs_to_settle"] is None
    assert r["why"] == (
        f"2 of 20 jobs waited longer than 60 min (10.0%, 95 % interval {_pct(lo)}-{_pct(hi)}) "
        "against 10% allowed: the interval holds the allowed share, so the sample cannot tell; "
        "the point estimate leans to pass; no sample size settles it at this share"
    )


def test_why_adds_the_violations_that_waited_on_own_limits(tmp_path: Path) -> None:
    # 3 of 4 waited 90 min: two for the QOS's GPU limit (quota), one for capacity. Against
    # 50 % allowed that is inconclusive; the own-limits clause follows the inconclusive one.
    rows = [
        job(
            str(i),
            f"ft-{i}-train",
            1,
            at_minute(60 * i + wait),
            at_minute(60 * i + wait + 30),
            submit=at_minute(60 * i),
            eligible=at_minute(60 * i),
            wait_reason=reason,
        )
        for i, (wait, reason) in enumerate(
            [(90, "QOSMaxGRESPerUser"), (90, "QOSMaxGRESPerUser"), (90, "Resources"), (5, "")]
        )
    ]
    r = evaluated_slo(
        write_csv(tmp_path / "q.csv", rows), SLO(threshold_minutes=60, allowed_violation_share=0.5)
    )
    assert (r["violations"], r["violations_waiting_for_quota"]) == (3, 2)
    assert r["violations_by_cause"] == {
        "capacity": 1,
        "own_limits": 2,
        "team_choice": 0,
        "other": 0,
    }
    lo, hi = score_roots(3, 4)
    assert r["why"] == (
        f"3 of 4 jobs waited longer than 60 min (75.0%, 95 % interval {_pct(lo)}-{_pct(hi)}) "
        "against 50% allowed: the interval holds the allowed share, so the sample cannot tell; "
        "the point estimate leans to fail, about 12 more jobs at this share would settle it; "
        "2 of the violations waited on the team's own limits (array task limits, quotas), "
        "1 on capacity"
    )
    assert _settle_by_search(3, 4, 0.5) == 12  # 12 of 16 is the first sample settled


def test_cdf_of_more_than_500_waits_is_500_quantiles(tmp_path: Path) -> None:
    # 1,001 waits of 0, 1, ..., 1,000 min: the quantile at i/499 sits at position
    # 1,000 i / 499, so its value is 60,000 i / 499 s (the waits are evenly spaced), to 0.1 s.
    log = waits_log(tmp_path / "q.csv", list(range(1001)))
    r = evaluated_slo(log, SLO(threshold_minutes=10_000, allowed_violation_share=0.1))
    assert r["measured"] == 1001 and r["violations"] == 0
    assert r["waits_s"] == [round(60_000 * i / 499, 1) for i in range(500)]
    assert r["waits_s"][:3] == [0.0, 120.2, 240.5] and r["waits_s"][-1] == 60_000.0


def test_cdf_of_500_waits_or_fewer_is_every_wait(tmp_path: Path) -> None:
    waits = [(7 * i) % 500 for i in range(500)]  # 0..499 min in a scrambled order
    r = evaluated_slo(
        waits_log(tmp_path / "q.csv", waits),
        SLO(threshold_minutes=1_000, allowed_violation_share=0.1),
    )
    assert r["waits_s"] == [60.0 * w for w in range(500)]


def test_a_job_still_waiting_enters_the_cdf_with_its_wait_so_far(tmp_path: Path) -> None:
    rows = [
        job(
            "1",
            "ft-a-train",
            1,
            at_minute(10),
            at_minute(40),
            submit=at_minute(0),
            eligible=at_minute(0),
        ),
        pending_48h(),
    ]
    r = evaluated_slo(
        write_csv(tmp_path / "q.csv", rows), SLO(threshold_minutes=60, allowed_violation_share=0.5)
    )
    assert r["waits_s"] == [600.0, 48 * 3600.0]
    assert (r["measured"], r["violations"]) == (2, 1)


def test_jobs_without_the_clocks_start_are_unmeasured(tmp_path: Path) -> None:
    # Job 2 has no submit and no eligible time, job 3 no eligible time: neither starts the
    # eligible clock, and job 2 not the submit clock either. Both still count as selected.
    rows = [
        job(
            "1",
            "ft-a-train",
            1,
            at_minute(90),
            at_minute(120),
            submit=at_minute(0),
            eligible=at_minute(0),
        ),
        job("2", "ft-b-train", 1, at_minute(90), at_minute(120), submit="", eligible=""),
        job("3", "ft-c-train", 1, at_minute(20), at_minute(120), submit=at_minute(0)),
    ]
    log = write_csv(tmp_path / "q.csv", rows)
    eligible = evaluated_slo(log, SLO(threshold_minutes=60, allowed_violation_share=0.5))
    assert (eligible["selected"], eligible["measured"], eligible["unmeasured"]) == (3, 1, 2)
    assert (eligible["violations"], eligible["waits_s"]) == (1, [5400.0])
    submit = evaluated_slo(
        log,
        SLO(threshold_minutes=60, allowed_violation_share=0.5, measure="submit_to_start"),
    )
    assert (submit["selected"], submit["measured"], submit["unmeasured"]) == (3, 2, 1)
    assert (submit["violations"], submit["waits_s"]) == (1, [1200.0, 5400.0])


def test_no_job_matching_the_selector_says_so(tmp_path: Path) -> None:
    log = waits_log(tmp_path / "q.csv", [5, 10])
    r = evaluated_slo(
        log,
        SLO(threshold_minutes=60, allowed_violation_share=0.1, selector=Selector(kinds=["eval"])),
    )
    assert (r["verdict"], r["selected"], r["measured"]) == ("not measurable", 0, 0)
    assert r["why"] == "no job in the log matches the selector"


def test_an_empty_lifecycle_table_matches_nothing(tmp_path: Path) -> None:
    # A period with no job: the lifecycle table of a real log cut to zero rows.
    log = load_logs([waits_log(tmp_path / "q.csv", [5])])
    whole = lifecycle.job_lifecycles(log.attempts, jobs_table(log.attempts), AS_OF)
    assert whole.num_rows == 1
    lc = whole.slice(0, 0)
    slo = SLO(threshold_minutes=60, allowed_violation_share=0.1, selector=Selector(kinds=["train"]))
    r = evaluate("normal", slo, lc, AS_OF)
    assert (r["verdict"], r["selected"], r["measured"], r["waits_s"]) == (
        "not measurable",
        0,
        0,
        [],
    )
    assert r["why"] == "no job in the log matches the selector"
    assert Selector(sites=["kz-ala"]).mask(lc).dtype == np.bool_


def test_every_condition_of_a_selector_narrows_the_others() -> None:
    t = lifecycle_rows(
        gpus=[1, 8, 8, 8],
        priority=[10, 1, 10, 10],
        kind=["train", "train", "train", "eval"],
        submit=[
            datetime(2026, 6, 1, 10, tzinfo=UTC),
            datetime(2026, 6, 1, 10, tzinfo=UTC),
            datetime(2026, 6, 1, 10, tzinfo=UTC),
            datetime(2026, 6, 1, 23, tzinfo=UTC),
        ],
    )
    big = {"min": 8}
    assert Selector(gpus=big, priority={"min": 5}).mask(t).tolist() == [False, False, True, True]
    day = {"start": "09:00", "end": "18:00", "timezone": "UTC"}
    assert Selector(kinds=["train"], time_of_day=day).mask(t).tolist() == [True, True, True, False]
    assert Selector(gpus=big, time_of_day=day).mask(t).tolist() == [False, True, True, False]


def test_a_time_of_day_window_skips_jobs_without_a_submit_time() -> None:
    window = TimeOfDay(start="09:00", end="18:00", timezone="UTC")
    stamps = [None, datetime(2026, 6, 1, 10, tzinfo=UTC), None, datetime(2026, 6, 1, 8, tzinfo=UTC)]
    assert window.contains(stamps).tolist() == [False, True, False, False]


def test_a_window_that_starts_where_it_ends_is_refused() -> None:
    with pytest.raises(ValueError, match="start equals end, so the window is empty"):
        TimeOfDay(start="09:00", end="09:00", timezone="UTC")
    with pytest.raises(ValueError, match="start equals end"):
        TimeOfDay(start="00:00", end="00:00:00", timezone="UTC")


def test_slo_file_with_an_empty_window_names_its_field(tmp_path: Path) -> None:
    path = tmp_path / "slo.yaml"
    path.write_text(
        "slos:\n  normal:\n    threshold_minutes: 30\n    allowed_violation_share: 0.1\n"
        "    selector:\n      time_of_day: {start: '09:00', end: '09:00', timezone: UTC}\n"
        "  urgent:\n    threshold_minutes: 5\n    allowed_violation_share: 0.0\n"
    )
    with pytest.raises(InputError) as exc:
        slo_mod.load(path)
    assert exc.value.path == str(path) and exc.value.line == 6
    assert "start equals end" in str(exc.value) and "time_of_day" in str(exc.value)
