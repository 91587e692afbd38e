"""The three months of the cost model (SPEC C8) field by field, with their boundaries: the
lower-median and busiest windows and their ties, the weeks the log did not cover, fewer than
four weeks, concurrency buckets inside a window, and the workload arithmetic. Every expected
value is worked out by hand in the comments."""

from __future__ import annotations

import copy
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest

from gpudecide.cost.regimes import ZERO, Workload, dec, from_profile
from gpudecide.cost.tco import month_cost, pool_gpus, reversibility, split
from gpudecide.errors import InputError
from gpudecide.fmt import num
from gpudecide.jobs.schema import KINDS
from gpudecide.message import english, message

from .test_cost_fixtures import START, P, cfg, config, iso, labour, profile_figures

D = Decimal
TRAIN_EVAL = dict.fromkeys(KINDS, D(0))


def _shares(**kinds: str) -> dict[str, Decimal]:
    return {k: D(kinds.get(k, "0")) for k in KINDS}


def test_fixture_profile_every_field_of_the_three_months() -> None:
    # The fixture (tests/test_cost_fixtures.py): 200 GPU-hours over 5 weeks (100, 0, 50, 50,
    # 0), 150 useful, train 2 jobs / 120 h, eval 2 jobs / 80 h, 4 attempts of 25 h mean,
    # daily concurrency 4 on day 1 and 6 on day 22, else 0. With a 672-hour month a 4-week
    # window is scaled by exactly 1.
    figures = profile_figures()
    figures["series"]["concurrency"]["gpus"][21] = 3  # day 22 (week 4): 3 GPUs
    figures["series"]["concurrency"]["gpus"][30] = 5  # day 31 (week 5): 5 GPUs
    r = from_profile(figures, D(672))
    n, p, e = r.normal, r.peak, r.empty
    # Windows: weeks 1-4 = 200 h (train 2, eval 2), weeks 2-5 = 100 h (train 1, eval 1).
    assert r.windows == [
        {"weeks": [1, 4], "start": iso(START), "end": figures["weeks"][3]["end"],
         "gpu_hours": "200.000", "jobs": 4},
        {"weeks": [2, 5], "start": figures["weeks"][1]["start"],
         "end": figures["weeks"][4]["end"], "gpu_hours": "100.000", "jobs": 2},
    ]  # fmt: skip
    tail = "scaled x672/672 to a 672-hour month"
    assert n.regime == "normal" and n.basis == (
        f"median of 2 rolling 4-week windows by GPU-hours (weeks 2-5), {tail}"
    )
    assert p.regime == "peak"
    assert p.basis == f"busiest of 2 rolling 4-week windows (weeks 1-4), {tail}"
    assert (n.gpu_hours, n.useful_gpu_hours, n.attempts) == (100, 75, 2)
    assert (p.gpu_hours, p.useful_gpu_hours, p.attempts) == (200, 150, 4)
    assert n.jobs_by_kind == TRAIN_EVAL | {"train": D(1), "eval": D(1)}
    assert p.jobs_by_kind == TRAIN_EVAL | {"train": D(2), "eval": D(2)}
    # Per-window kind shares from that window's jobs: train 60 h/job, eval 40 h/job.
    assert n.kind_gpu_share == p.kind_gpu_share == _shares(train="0.6", eval="0.4")
    # 200 GPU-hours over 4 attempts x 25 h: 2 GPUs per attempt.
    assert n.mean_gpus_per_attempt == p.mean_gpus_per_attempt == 2
    # Concurrency inside each window: weeks 2-5 hold days 8-35 (3 and 5 GPUs), weeks 1-4
    # hold days 1-28 (4 and 3).
    assert (n.peak_concurrent_gpus, p.peak_concurrent_gpus) == (5, 4)
    assert len(n.levels) == len(p.levels) == 28 and sorted(n.levels)[-2:] == [3, 5]
    assert n.bucket_hours == p.bucket_hours == 24
    assert n.window == {"weeks": [2, 5], "start": r.windows[1]["start"], "end": r.windows[1]["end"]}
    assert n.prior is None and p.prior is None
    # The empty month: nothing runs, the profile's overall mix, the normal month before it.
    assert e.regime == "empty" and e.basis == (
        "no jobs for a whole month after normal months: idle capacity, storage, commitments"
    )
    assert (e.gpu_hours, e.useful_gpu_hours, e.attempts, e.peak_concurrent_gpus) == (0, 0, 0, 0)
    assert e.jobs_by_kind == TRAIN_EVAL and e.prior is n
    assert e.kind_gpu_share == _shares(train="0.6", eval="0.4") and e.mean_gpus_per_attempt == 2
    assert r.get("normal") is n and r.get("peak") is p and r.get("empty") is e
    assert r.notes == [
        "per-attempt overheads (managed start-up, data loading, billing increment) are "
        "charged on 2.00 GPUs: GPU-hours over attempt-hours, so long, wide jobs weigh more "
        "(the profile evidence has no per-job GPU count)",
        "useful GPU-hours are 75.0% of occupied GPU-hours over the profile (completed "
        "attempts); each month uses that share",
    ]


def _weeks_profile(hours: list[float], covered: float | None = None) -> dict[str, Any]:
    """The fixture with its weeks replaced: one train job per week that has hours."""
    figures = profile_figures()
    weeks = []
    for i, h in enumerate(hours):
        base = copy.deepcopy(figures["weeks"][0])
        base.update(
            start=iso(START + timedelta(weeks=i)),
            end=iso(START + timedelta(weeks=i + 1)),
            week=i + 1,
            gpu_hours=h,
            jobs_by_kind=dict.fromkeys(KINDS, 0) | ({"train": 1} if h else {}),
        )
        weeks.append(base)
    figures["weeks"] = weeks
    figures["window"]["weeks_covered_by_log"] = covered
    return figures


def test_ties_go_to_the_earlier_window() -> None:
    # Six equal weeks: three windows of 40 h. Normal = the lower median of three (the
    # second), peak = the first of the equally busy ones.
    r = from_profile(_weeks_profile([10] * 6), D(672))
    assert r.normal.window is not None and r.peak.window is not None
    assert (r.normal.window["weeks"], r.peak.window["weeks"]) == ([2, 5], [1, 4])
    # Four windows (7 weeks): the lower median is the second of the sorted four.
    r = from_profile(_weeks_profile([10, 0, 0, 0, 0, 30, 0]), D(672))
    # windows: 1-4 = 10, 2-5 = 0, 3-6 = 30, 4-7 = 30 -> sorted 0, 10, 30, 30
    assert r.normal.window is not None and r.normal.window["weeks"] == [1, 4]
    assert r.peak.window is not None and r.peak.window["weeks"] == [3, 6]


def test_weeks_before_the_log_began_are_left_out() -> None:
    # The log covers 4 of 5 weeks: exactly one week is dropped (the boundary of int()).
    r = from_profile(_weeks_profile([0, 100, 50, 50, 0], covered=4.0), D(672))
    assert [w["weeks"] for w in r.windows] == [[2, 5]]
    assert r.notes[0] == (
        "the log covers 4.0 weeks: the first 1 week(s) of the profile are left out of the "
        "monthly windows (not measured)"
    )
    # 3.5 weeks covered: 1.5 weeks short -> one whole week dropped, 4 left.
    assert len(from_profile(_weeks_profile([1] * 5, covered=3.5), D(672)).windows) == 1
    # Nothing covered still keeps the last week: one measured week, scaled up.
    r = from_profile(_weeks_profile([1, 2, 3, 4, 7], covered=0.0), D(672))
    assert [w["weeks"] for w in r.windows] == [[5, 5]]
    assert r.normal.gpu_hours == 7 * 4  # 672 / 168 = x4
    # Fully covered: nothing dropped, no note.
    r = from_profile(_weeks_profile([1] * 5, covered=5.0), D(672))
    assert len(r.windows) == 2 and not any("covers" in note for note in r.notes)


def test_fewer_than_four_weeks_scale_the_whole_window() -> None:
    r = from_profile(_weeks_profile([10, 20, 30]), D(730))
    how = (
        "fewer than 4 measured weeks: the whole 3-week window scaled x730/504 to a 730-hour "
        "month; normal and peak month are the same"
    )
    assert r.normal.basis == r.peak.basis == how and how in r.notes
    scale = D(730) / D(504)
    assert r.normal.gpu_hours == r.peak.gpu_hours == D(60) * scale
    assert r.normal.jobs_by_kind["train"] == D(3) * scale
    # Exactly four weeks is a normal rolling window (the boundary).
    four = from_profile(_weeks_profile([10, 20, 30, 40]), D(672))
    assert four.normal.basis.startswith("median of 1 rolling 4-week windows")


def test_concurrency_buckets_inside_the_window_only() -> None:
    figures = _weeks_profile([10, 10, 10, 10])
    conc = figures["series"]["concurrency"]
    conc["gpus"] = [0] * 35
    conc["gpus"][0] = 2  # first day of the window: inside (start is included)
    conc["gpus"][28] = 9  # first day after the window: outside (end is excluded)
    r = from_profile(figures, D(672))
    assert r.normal.peak_concurrent_gpus == 2 and len(r.normal.levels) == 28
    # No series in the record: the profile's overall peak stands in, no buckets.
    del figures["series"]
    r = from_profile(figures, D(672))
    assert r.normal.peak_concurrent_gpus == 6 and r.normal.levels == ()
    assert r.normal.bucket_hours == 0
    # One bucket only: no step can be measured.
    figures["series"] = {"concurrency": {"t": [iso(START)], "gpus": [3]}}
    assert from_profile(figures, D(672)).normal.levels == ()


def test_measured_gpus_per_attempt_and_empty_profiles() -> None:
    figures = profile_figures()
    figures["gpus_per_attempt_mean"] = 3.5
    r = from_profile(figures, D(672))
    assert r.normal.mean_gpus_per_attempt == D("3.5")
    assert not any("per-attempt overheads" in n for n in r.notes)
    # No work at all: every job useful by definition, shares zero, one attempt per job.
    none = _weeks_profile([0, 0, 0, 0])
    none.update(gpu_hours_total=0, useful_gpu_hours=0, jobs_total=0, attempts_total=0)
    none["gpu_hours_by_kind"] = dict.fromkeys(KINDS, 0)
    none["jobs_by_kind"] = dict.fromkeys(KINDS, 0)
    r = from_profile(none, D(672))
    assert r.normal.gpu_hours == 0 and r.normal.useful_share == 1 and r.notes == []
    assert r.empty.kind_gpu_share == dict.fromkeys(KINDS, ZERO)
    assert r.normal.mean_gpus_per_attempt == 1


def test_attempts_per_job_multiply_the_starts() -> None:
    figures = profile_figures()
    figures["attempts_total"] = 6  # 4 jobs, 6 attempts: 1.5 starts per job
    r = from_profile(figures, D(672))
    assert r.normal.attempts == 3 and r.peak.attempts == 6


def test_a_missing_figure_names_it() -> None:
    figures = profile_figures()
    del figures["jobs_total"]
    with pytest.raises(InputError) as exc:
        from_profile(figures, D(672))
    assert exc.value.field == "figures.jobs_total"
    assert exc.value.message == "profile evidence lacks the figure 'jobs_total'"
    assert exc.value.hint == "re-run `gpudecide profile` with this version"


def _work(**kw: Any) -> Workload:
    base: dict[str, Any] = {
        "regime": "normal",
        "basis_message": message("cost", "b"),
        "gpu_hours": D(100),
        "useful_gpu_hours": D(80),
        "attempts": D(10),
        "jobs_by_kind": TRAIN_EVAL | {"train": D(4), "eval": D(6)},
        "kind_gpu_share": _shares(train="0.7", eval="0.3"),
        "mean_gpus_per_attempt": D(2),
        "peak_concurrent_gpus": 6,
        "levels": (4, 6, 0),
        "bucket_hours": D(24),
    }
    return Workload(**(base | kw))


def test_workload_arithmetic() -> None:
    w = _work()
    assert w.trainings == 4 and w.useful_share == D("0.8")
    assert w.gpu_hours_of(["train"]) == 70 and w.gpu_hours_of(["train", "eval"]) == 100
    assert w.gpu_hours_of(["merge"]) == 0
    # Above 5 GPUs: one GPU over in one 24-hour bucket; at 6 (the maximum) nothing.
    assert w.gpu_hours_above(5) == 24 and w.gpu_hours_above(6) == 0
    assert w.gpu_hours_above(0) == 100  # 240 GPU-hours of buckets, capped at the month's 100
    assert _work(levels=()).gpu_hours_above(0) == 0
    doubled = w.scaled(D(2))
    assert (doubled.gpu_hours, doubled.useful_gpu_hours, doubled.attempts) == (200, 160, 20)
    assert doubled.jobs_by_kind["train"] == 8 and doubled.bucket_hours == 48
    longer = w.scaled(D(2), D("0.5"))  # twice the hours in half the jobs
    assert (longer.gpu_hours, longer.attempts, longer.jobs_by_kind["eval"]) == (200, 5, 3)
    with_prior = _work(prior=_work()).scaled(D(3), D(2))
    assert with_prior.prior is not None
    assert (with_prior.prior.gpu_hours, with_prior.prior.attempts) == (300, 20)
    assert _work(gpu_hours=ZERO, useful_gpu_hours=ZERO).useful_share == 1


def test_dec_is_exact() -> None:
    assert dec(0.1) == D("0.1") and dec(None) == 0 and dec(3) == 3
    assert dec(0) == 0 and isinstance(dec(None), Decimal)


def test_small_and_partial_profiles() -> None:
    """Figures under one GPU-hour, kinds missing from the record, uneven jobs per kind."""
    figures = _weeks_profile([0.5, 0, 0, 0])
    figures.update(gpu_hours_total=0.5, useful_gpu_hours=0.25, jobs_total=1, attempts_total=1)
    # Half an hour of training by 1 job; kinds other than train absent from the record.
    figures["gpu_hours_by_kind"] = {"train": 0.5}
    figures["jobs_by_kind"] = {"train": 1}
    figures["weeks"][0]["jobs_by_kind"] = {"train": 1}
    figures["duration_hours"] = {"mean": 0.25}
    r = from_profile(figures, D(672))
    # 0.5 GPU-hours over 1 attempt of 0.25 h: 2 GPUs; useful share 50 %.
    assert r.normal.mean_gpus_per_attempt == 2 and r.normal.useful_gpu_hours == D("0.25")
    assert r.normal.jobs_by_kind == dict.fromkeys(KINDS, D(0)) | {"train": D(1)}
    assert r.normal.kind_gpu_share == _shares(train="1")
    assert r.empty.kind_gpu_share == _shares(train="1")
    assert any(note.startswith("per-attempt overheads") for note in r.notes)
    assert r.normal.gpu_hours_of(["not-a-kind"]) == 0
    # No duration in the record and no measured mean: one GPU per attempt is assumed.
    del figures["duration_hours"]
    assert from_profile(figures, D(672)).normal.mean_gpus_per_attempt == 1
    # No GPU-hours at all but attempts and a duration: still one GPU, not zero.
    figures.update(gpu_hours_total=0, useful_gpu_hours=0, duration_hours={"mean": 2})
    figures["gpu_hours_by_kind"] = {"train": 0}
    assert from_profile(figures, D(672)).normal.mean_gpus_per_attempt == 1


def test_kind_shares_weigh_jobs_by_their_own_hours() -> None:
    # 3 trainings of 40 h and 1 eval of 80 h over the profile; a window with one of each:
    # estimated 40 h train + 80 h eval -> shares 1/3 and 2/3.
    figures = _weeks_profile([120, 0, 0, 0])
    figures["gpu_hours_by_kind"] = dict.fromkeys(KINDS, 0) | {"train": 120, "eval": 80}
    figures["jobs_by_kind"] = dict.fromkeys(KINDS, 0) | {"train": 3, "eval": 1}
    figures["weeks"][0]["jobs_by_kind"] = dict.fromkeys(KINDS, 0) | {"train": 1, "eval": 1}
    r = from_profile(figures, D(672))
    assert r.normal.kind_gpu_share["train"] == D(40) / D(120)
    assert r.normal.kind_gpu_share["eval"] == D(80) / D(120)


def test_two_buckets_are_enough_and_buckets_scale_with_the_month() -> None:
    figures = _weeks_profile([10, 20, 30])
    figures["series"] = {
        "concurrency": {"t": [iso(START), iso(START + timedelta(days=1))], "gpus": [2, 5]}
    }
    r = from_profile(figures, D(730))
    assert r.normal.levels == (2, 5) and r.normal.peak_concurrent_gpus == 5
    assert r.normal.bucket_hours == D(24) * (D(730) / D(504))


# --- reversibility (SPEC V2) and the hybrid split (H1), by hand on the fixture config ---


def test_reversibility_of_an_owned_server() -> None:
    c = cfg()
    r = reversibility(c, c.owned[0])
    # After 6 months: bought 48000 + 2400 + 2 x 1200 + 1200 = 54000. Book value: 18/24 of
    # 48000, 2400 and 2400 (36000 + 1800 + 1800) plus 6/12 of the 1200 spares (600) = 40200.
    # Resale 25 % of 54000 = 13500; loss 26700; the rack's 6 months left x 300 = 1800.
    assert r == {
        "kind": "owned",
        "exit_after_months": 6,
        "months_left_to_write_off": 18,
        "commitment_months_left": 6,
        "book_value": "40200.00",
        "resale_value": "13500.00",
        "loss_on_sale": "26700.00",
        "committed_payments_left": "1800.00",
        "cost_to_shrink": "28500.00",
        "days_to_shrink": 28.0,
        "how": "sell the servers (25% of the purchase price assumed), pay the rack for 6 months "
        "more, move jobs within 4 weeks",
    }
    # Past every write-off and commitment (30 months): nothing on the books, nothing owed.
    late = cfg(exit_after_months=30)
    r = reversibility(late, late.owned[0])
    assert r is not None
    assert (r["book_value"], r["loss_on_sale"], r["commitment_months_left"]) == (
        "0.00",
        "-13500.00",
        0,
    )
    assert r["months_left_to_write_off"] == 0 and r["cost_to_shrink"] == "-13500.00"


def test_reversibility_of_a_rented_pool() -> None:
    c = cfg()
    r = reversibility(c, c.rented[0])
    # The pool 4 GPUs x 500 and its 1000 GB x 0.05 of storage: 2050 a month, billed used or
    # not; 9 - 6 = 3 months left (6150) plus 14 days' notice of a 28-day month (1025).
    assert r == {
        "kind": "rented",
        "exit_after_months": 6,
        "commitment_months_left": 3,
        "scale_down_step_gpus": 2,
        "notice_days": 14,
        "committed_monthly": "2050.00",
        "committed_payments_left": "6150.00",
        "cost_to_shrink": "7175.00",
        "days_to_shrink": 98.0,
        "how": "release 2 GPUs at a time with 14 days of notice after the commitment; 2,050 a "
        "month (the pool, its provisioned storage and fixed fees) for 3 months of commitment "
        "left and 14 days of notice",
    }
    whole = cfg(rented=[{**config()["rented"][0], "scale_down_step_gpus": 0}])
    r = reversibility(whole, whole.rented[0])
    assert r is not None and r["how"].startswith(
        "capacity cannot be reduced: only the whole contract ends, after the commitment; "
    )
    # Fixed fees are billed with the pool too.
    fee = {"name": "uplink", "price_per_month": P(100)}
    fees = cfg(rented=[{**config()["rented"][0], "fees": [fee]}])
    r = reversibility(fees, fees.rented[0])
    assert r is not None and r["committed_monthly"] == "2150.00"


def test_reversibility_of_managed_and_hybrid() -> None:
    c = cfg()
    r = reversibility(c, c.managed[0])
    # No minimum spend, no term and no notice in the file: the data kept (1000 GB x 0.02) and
    # the support fee (100) are what the contract bills a month, for no time; leaving moves
    # the 1000 GB out at 0.05 = 50.
    assert r == {
        "kind": "managed",
        "exit_after_months": 6,
        "commitment_months_left": 0,
        "notice_days": None,
        "committed_monthly": "120.00",
        "committed_payments_left": "0.00",
        "gb_to_move_out": 1000.0,
        "egress_cost": "50.00",
        "cost_to_shrink": "50.00",
        "days_to_shrink": 0.0,
        "how": "120 a month (storage of the data kept and fixed fees) for 0 months of "
        "commitment left and 0 days of notice; the notice period is not in costs.yaml "
        "(notice_days): taken as none, so the cost and days to leave are a lower bound; "
        "leaving moves 1,000 GB kept at the vendor out at 0.05 per GB; the time and manual "
        "steps come from the export test",
    }
    no_price = cfg(
        managed=[
            {
                **config()["managed"][0],
                "egress_price_per_gb": None,
                "fees": [],
                "storage_price_per_gb_month": P(0),
                "notice_days": 0,
            }
        ]
    )
    r = reversibility(no_price, no_price.managed[0])
    assert r is not None and r["egress_cost"] is None and r["cost_to_shrink"] == "0.00"
    assert r["how"] == (
        "billed per use: nothing is owed once the jobs stop; leaving moves 1,000 GB kept at "
        "the vendor out (egress price not in the contract: ask); the time and manual steps "
        "come from the export test"
    )
    hyb = {
        "id": "hyb",
        "name": "pool + bursts",
        "base": "rent",
        "overflow": "man",
        "overflow_rule": {"rule": "over_capacity"},
        "labour": labour(1, 1),
    }
    h = cfg(hybrid=[hyb])
    r = reversibility(h, h.hybrid[0])
    # Both contracts: the base pool's 7175 and the overflow's 50, side by side (98 days).
    assert r is not None and r["of_base"] == "rent" and r["cost_to_shrink"] == "7225.00"
    assert r["days_to_shrink"] == 98.0 and r["overflow"]["cost_to_shrink"] == "50.00"
    assert r["how"].startswith("base rent: release 2 GPUs") and "; overflow man: 120 a" in r["how"]
    assert pool_gpus(h, h.hybrid[0]) == 4 and pool_gpus(h, h.managed[0]) is None


@pytest.mark.parametrize(
    ("terms", "monthly", "left", "cost", "days"),
    [
        # The floor (500) above the data kept (20), plus the fee: 600 a month; 8 - 6 = 2
        # months left (1200) and 14 days of a 28-day month (300), plus egress 50.
        ({"min_commitment_months": 8, "notice_days": 14}, "600.00", 2, "1550.00", 70.0),
        # The term is over: the notice only.
        ({"min_commitment_months": 6, "notice_days": 28}, "600.00", 0, "650.00", 28.0),
        # No notice, no term: the egress alone, and the how says the figure is a lower bound.
        ({}, "600.00", 0, "50.00", 0.0),
    ],
)
def test_a_managed_exit_pays_its_minimum_spend_term_and_notice(
    terms: dict[str, int], monthly: str, left: int, cost: str, days: float
) -> None:
    """Issue 22 (V2): a minimum monthly spend is owed until the contract ends; kz-local's
    exit no longer reads "0 KZT, 0 d"."""
    floor = {**config()["managed"][0], "minimum_monthly_spend": P(500), **terms}
    c = cfg(managed=[floor])
    r = reversibility(c, c.managed[0])
    assert r is not None
    assert (r["committed_monthly"], r["commitment_months_left"]) == (monthly, left)
    assert (r["cost_to_shrink"], r["days_to_shrink"]) == (cost, days)
    assert r["how"].startswith("600 a month (the minimum spend and fixed fees) for ")
    assert ("lower bound" in r["how"]) is ("notice_days" not in terms)
    assert ("min_commitment_months" in r["how"]) is ("min_commitment_months" not in terms)


def _hybrid_cfg(rule: dict[str, Any]) -> Any:
    return cfg(
        hybrid=[
            {
                "id": "hyb",
                "name": "h",
                "base": "rent",
                "overflow": "man",
                "overflow_rule": rule,
                "labour": labour(1, 1),
            }
        ]
    )


def test_split_by_kinds() -> None:
    c = _hybrid_cfg({"rule": "kinds", "kinds": ["train"]})
    w = _work(attempts=D(20))  # 10 jobs, 2 attempts each; train 70 % of 100 GPU-hours
    base, over, how = split(w, c.hybrid[0], 4)
    assert english(how) == "job kinds train go to man"
    assert (over.gpu_hours, base.gpu_hours) == (70, 30)
    assert (over.useful_gpu_hours, base.useful_gpu_hours) == (56, 24)  # 80 % useful
    assert over.jobs_by_kind == dict.fromkeys(KINDS, D(0)) | {"train": D(4)}
    assert base.jobs_by_kind == dict.fromkeys(KINDS, D(0)) | {"eval": D(6)}
    assert (over.attempts, base.attempts) == (8, 12)
    assert over.prior is None and base.prior is None


def test_split_over_capacity_and_an_empty_month() -> None:
    c = _hybrid_cfg({"rule": "over_capacity"})
    w = _work()  # levels (4, 6, 0) x 24 h: above 5 GPUs, 24 GPU-hours of 100
    base, over, how = split(w, c.hybrid[0], 5)
    assert english(how) == (
        "demand above the base pool's 5 GPUs goes to man (upper bound: the profile keeps the "
        "busiest moment of each time bucket; jobs split in proportion)"
    )
    assert (over.gpu_hours, base.gpu_hours) == (24, 76)
    share = D(24) / D(100)
    assert over.jobs_by_kind["train"] == 4 * share and base.jobs_by_kind["eval"] == 6 - 6 * share
    assert over.attempts == 10 * share and base.attempts == 10 - 10 * share
    # No work: nothing goes out, and a month with no jobs has no attempts per job.
    idle = _work(
        gpu_hours=ZERO,
        useful_gpu_hours=ZERO,
        attempts=ZERO,
        levels=(),
        jobs_by_kind=dict.fromkeys(KINDS, ZERO),
    )
    base, over, _ = split(idle, c.hybrid[0], 5)
    assert over.gpu_hours == 0 and over.attempts == 0 and base.attempts == 0
    # An empty month keeps the prior month's split on each side (its stored artifacts).
    empty = _work(
        gpu_hours=ZERO,
        useful_gpu_hours=ZERO,
        attempts=ZERO,
        jobs_by_kind=dict.fromkeys(KINDS, ZERO),
        prior=w,
    )
    base, over, _ = split(empty, c.hybrid[0], 5)
    assert over.prior is not None and base.prior is not None
    assert (over.prior.gpu_hours, base.prior.gpu_hours) == (24, 76)


# --- every line of a month, with how it was computed and where its price is from (C1) ---

REG = from_profile(profile_figures(), D(672))


def _lines(option: Any, c: Any, w: Workload) -> list[tuple[str, str, str, str]]:
    m = month_cost(c, option, w)
    return [(ln.component, ln.label, str(ln.amount), ln.source) for ln in m.lines]


def test_managed_month_line_by_line() -> None:
    # Normal month: 100 GPU-hours, 2 attempts of 2 GPUs, 1 training (the fixture).
    c = cfg()
    assert _lines(c.managed[0], c, REG.normal) == [
        ("compute", "job time: 100 GPU-hours x 10 per GPU-hour", "1000.00", "test §1"),
        # 2 attempts x 3 min x 2 GPUs = 12 GPU-minutes = 0.2 GPU-hours
        ("compute", "billing increment: 2 attempts x 3 min per attempt (on average half of "
         "the 6-min increment) x 2 GPUs = 0.2 GPU-hours x 10 per GPU-hour", "2.00", "test §1"),
        ("compute", "environment start-up: 2 attempts x 3 min per attempt x 2 GPUs = 0.2 "
         "GPU-hours x 10 per GPU-hour", "2.00", "test §1"),
        # 10 GB x 0.5 min/GB = 5 min; x 2 attempts x 2 GPUs = 20 GPU-minutes = 0.33 h
        ("compute", "data loading: 2 attempts x 5 min per attempt (10 GB x 0.5 min/GB) x 2 "
         "GPUs = 0.33 GPU-hours x 10 per GPU-hour", "3.33", "test §1"),
        ("compute", "endpoint until deletion: 1 trainings x 5 h x 2 per hour", "10.00",
         "test §1"),
        # (1000 GB + 2 x 50 GB kept the whole 28-day month) x 0.02
        ("storage", "storage: (1,000 GB kept + 100 GB: 2 attempts x 50 GB kept 28 days) x "
         "0.02 per GB-month", "22.00", "test §1"),
        ("data_transfer", "data in: 2 attempts x 10 GB x 0.1 per GB", "2.00", "test §1"),
        ("data_transfer", "egress: 1 trainings x 20 GB x 0.05", "1.00", "test §1"),
        ("platform_ops", "support (per month)", "100.00", "test §1"),
        ("engineer_labour", "engineer: 10 h x 50", "500.00", "test §1"),
    ]  # fmt: skip
    m = month_cost(c, c.managed[0], REG.normal)
    assert m.option_id == "man" and m.demand_gpu_hours == 100 and m.useful_gpu_hours == 75
    assert m.available_gpu_hours == D(100) + D("0.2") + D("0.2") + D(20) / D(60)
    # The waiting consequence has no amount: no waiting line (C7).
    assert m.components["waiting_cost"] == 0


def test_owned_and_rented_months_line_by_line() -> None:
    c = cfg()
    # Load 100 / (4 x 672) = 3.72 %: 1 + (2 - 1) x 0.0372 = 1.037 kW x 672 h x 1.5 = 1,046 kWh.
    assert _lines(c.owned[0], c, REG.normal) == [
        ("compute", "server: 1 x 48,000 / 24 months", "2000.00", "test §1"),
        ("platform_ops", "switch: 1 x 2,400 / 24 months", "100.00", "test §1"),
        ("storage", "disks: 2 x 1,200 / 24 months", "100.00", "test §1"),
        ("compute", "spares: 1 x 1,200 / 12 months", "100.00", "test §1"),
        ("compute", "power: 1 server(s) x 1.037 kW at 3.7% occupied utilisation of the 4-GPU "
         "pool x 672 h x PUE 1.5 = 1,046 kWh x 0.1", "104.55", "test §1"),
        ("platform_ops", "rack / colocation (per month)", "300.00", "test §1"),
        ("platform_ops", "support contract (per month)", "50.00", "test §1"),
        ("platform_ops", "replacements: 2 a year x 600 / 12", "100.00", "test §1"),
        ("engineer_labour", "engineer: 20 h x 40", "800.00", "test §1"),
        ("waiting_cost", "team's assumption (not measured)", "250.00", "team estimate"),
    ]  # fmt: skip
    assert _lines(c.rented[0], c, REG.normal) == [
        ("compute", "pool: 4 GPUs x 500 per month, billed whether used or not (C4)", "2000.00",
         "test §1"),
        ("storage", "provisioned storage: 1,000 GB x 0.05", "50.00", "test §1"),
        ("data_transfer", "egress: 1 trainings x 20 GB x 0.1", "2.00", "test §1"),
        ("engineer_labour", "engineer: 10 h x 40", "400.00", "test §1"),
    ]  # fmt: skip
    for option in (c.owned[0], c.rented[0]):
        m = month_cost(c, option, REG.normal)
        assert (m.available_gpu_hours, m.demand_gpu_hours) == (2688, 100)
        assert m.option_id == option.id
    # In the empty month nobody waits: no waiting line, even with an amount (C7).
    assert month_cost(c, c.owned[0], REG.empty).components["waiting_cost"] == 0
    # ... but any work at all can wait, even under one GPU-hour.
    tiny = REG.normal.scaled(D("0.005"))
    assert month_cost(c, c.owned[0], tiny).components["waiting_cost"] == 250
    # Without a price for provisioned storage, no storage line (and none for 0 GB).
    no_disk = cfg(rented=[{**config()["rented"][0], "storage_gb": "0"}])
    assert [ln for ln in _lines(no_disk.rented[0], no_disk, REG.normal) if ln[0] == "storage"] == []
    unpriced = cfg(rented=[{**config()["rented"][0], "storage_price_per_gb_month": None}])
    assert [
        ln for ln in _lines(unpriced.rented[0], unpriced, REG.normal) if ln[0] == "storage"
    ] == []
    small = cfg(rented=[{**config()["rented"][0], "storage_gb": "0.5"}])
    assert month_cost(small, small.rented[0], REG.normal).components["storage"] == D("0.03")


@pytest.mark.parametrize(
    ("floor", "top_up"),
    [("2000", "957.67"), ("1042.33", None), ("1042.32", None), ("1042.34", "0.01")],
)
def test_minimum_monthly_spend_is_a_floor(floor: str, top_up: str | None) -> None:
    # The managed normal month's usage is 1042.33 (the lines above less the support fee and
    # labour, which are not usage); a floor tops it up, one at or below it adds nothing.
    managed = {**config()["managed"][0], "minimum_monthly_spend": P(floor, "contract §4")}
    c = cfg(managed=[managed])
    lines = [ln for ln in month_cost(c, c.managed[0], REG.normal).lines if "minimum" in ln.label]
    if top_up is None:
        assert lines == []
        return
    (line,) = lines
    assert (line.component, str(line.amount), line.source) == ("compute", top_up, "contract §4")
    used = D(floor) - D(top_up)
    assert line.label == (
        f"minimum monthly commitment: usage of {num(used)} is below the floor of "
        f"{num(D(floor))}, topped up by the difference"
    )


def test_managed_overheads_that_cost_nothing_have_no_line() -> None:
    # Start-up of 0 minutes: no start-up line, but the overheads after it are still charged;
    # an endpoint kept half an hour per training is charged (1 x 0.5 h x 2).
    managed = {
        **config()["managed"][0],
        "startup_minutes_per_job": "0",
        "endpoint_hours_per_training": "0.5",
    }
    c = cfg(managed=[managed])
    labels = [label for _, label, _, _ in _lines(c.managed[0], c, REG.normal)]
    assert not any(label.startswith("environment start-up") for label in labels)
    assert any(label.startswith("data loading: 2 attempts") for label in labels)
    assert "endpoint until deletion: 1 trainings x 0.5 h x 2 per hour" in labels
    no_endpoint = cfg(managed=[{**managed, "endpoint_hours_per_training": "0"}])
    assert not any(
        label.startswith("endpoint")
        for _, label, _, _ in _lines(no_endpoint.managed[0], no_endpoint, REG.normal)
    )


def test_managed_empty_month_keeps_storage_and_fixed_costs() -> None:
    # No attempts: every usage line is zero and no data moves; storage keeps the 1000 GB plus
    # half of the normal month's 100 GB of artifacts (kept 28 days of a 28-day month, made
    # evenly through it: on average half is still inside retention).
    c = cfg()
    lines = _lines(c.managed[0], c, REG.empty)
    assert [ln for ln in lines if ln[1].startswith(("data in", "egress"))] == []
    assert (
        "storage",
        "storage: (1,000 GB kept + 50 GB: earlier artifacts still inside 28 "
        "days of retention) x 0.02 per GB-month",
        "21.00",
        "test §1",
    ) in lines
    assert sum(D(amount) for comp, _, amount, _ in lines if comp == "compute") == 0
    assert month_cost(c, c.managed[0], REG.empty).total == D("621.00")


def test_rented_per_gpu_hour_and_waiting_lines_of_every_option() -> None:
    hourly = {**config()["rented"][0], "price_per_gpu_month": None, "price_per_gpu_hour": P(2)}
    hourly["waiting"] = {"consequence": "x", "assumed_monthly_cost": P(70, "team")}
    managed = {**config()["managed"][0]}
    managed["waiting"] = {"consequence": "y", "assumed_monthly_cost": P(30, "team")}
    c = cfg(rented=[hourly], managed=[managed])
    pool = _lines(c.rented[0], c, REG.normal)[0]
    # 4 GPUs x 672 h x 2, whatever the use.
    assert pool == (
        "compute",
        "pool: 4 GPUs x 672 h x 2, billed whether used or not (C4)",
        "5376.00",
        "test §1",
    )
    assert ("waiting_cost", "team's assumption (not measured)", "70.00", "team") in _lines(
        c.rented[0], c, REG.normal
    )
    assert ("waiting_cost", "team's assumption (not measured)", "30.00", "team") in _lines(
        c.managed[0], c, REG.normal
    )
    r = reversibility(c, c.rented[0])
    # 3 months x (5376 for the pool + 50 for its 1000 GB of storage).
    assert r is not None and r["committed_payments_left"] == "16278.00"


def test_a_month_that_fills_the_pool_exactly_waits_for_nothing() -> None:
    c = cfg()
    full = REG.normal.scaled(D("26.88"))  # 2688 GPU-hours: exactly 4 GPUs x 672 h
    assert full.gpu_hours == 2688
    assert month_cost(c, c.rented[0], full).notes == []
    over = month_cost(c, c.rented[0], REG.normal.scaled(D(27)))
    assert over.notes == [
        "rent: the month asks for 2,700 GPU-hours, the pool has 2,688: the rest waits into "
        "the next month"
    ]
    assert over.useful_gpu_hours == D(2688) * D("0.75")


@pytest.mark.parametrize(("days", "kept_gb"), [(56, 150), (28, 50), (14, 12.5)])
def test_artifacts_carried_into_an_empty_month(days: int, kept_gb: float) -> None:
    # 100 GB of artifacts a month kept `days`: retention r months leaves on average
    # r - 0.5 months' worth (r >= 1) or r^2 / 2 (r < 1) in a month with no new ones.
    c = cfg(managed=[{**config()["managed"][0], "retention_days": days}])
    (storage,) = [ln for ln in _lines(c.managed[0], c, REG.empty) if ln[0] == "storage"]
    assert f"+ {num(D(str(kept_gb)))} GB: earlier artifacts" in storage[1]


def test_reversibility_edges() -> None:
    # No rack contract, and every commitment over: nothing committed is left.
    owned = {**config()["owned"][0], "colocation": None}
    c = cfg(owned=[owned], exit_after_months=12)
    r = reversibility(c, c.owned[0])
    assert r is not None and r["commitment_months_left"] == 0
    assert r["committed_payments_left"] == "0.00"
    rented = reversibility(c, c.rented[0])
    assert rented is not None and rented["commitment_months_left"] == 0
    # The 14 days' notice only: 14/28 of the pool's 2000 and its storage's 50.
    assert rented["cost_to_shrink"] == "1025.00"
    # A 730-hour month: 3 months of 30.4166... days + 14 = 105.25 days, kept to one place.
    c730 = cfg(hours_per_month="730")
    r = reversibility(c730, c730.rented[0])
    assert r is not None and r["days_to_shrink"] == round(3 * 730 / 24 + 14, 1)


def test_hybrid_month_keeps_its_own_labour_and_waiting() -> None:
    base = {**config()["rented"][0]}
    base["waiting"] = {"consequence": "b", "assumed_monthly_cost": P(999, "base")}
    hyb = {
        "id": "hyb",
        "name": "h",
        "base": "rent",
        "overflow": "man",
        "overflow_rule": {"rule": "kinds", "kinds": ["train", "eval"]},
        "labour": labour(2, 10),
        "waiting": {"consequence": "h", "assumed_monthly_cost": P(40, "hybrid")},
    }
    c = cfg(rented=[base], hybrid=[hyb])
    m = month_cost(c, c.hybrid[0], REG.normal)
    waiting = [ln for ln in m.lines if ln.component == "waiting_cost"]
    assert [(str(ln.amount), ln.source) for ln in waiting] == [("40.00", "hybrid")]
    assert [str(ln.amount) for ln in m.lines if ln.component == "engineer_labour"] == ["20.00"]
    assert m.option_id == "hyb" and m.demand_gpu_hours == 100
    parts = [month_cost(c, c.rented[0], REG.normal), month_cost(c, c.managed[0], REG.normal)]
    # Everything goes to the managed side (train and eval), so its billed hours add to the pool.
    assert m.available_gpu_hours == 2688 + parts[1].available_gpu_hours
    assert m.notes[0] == "hyb: job kinds train, eval go to man"
    assert any(ln.label.startswith("base rent: pool: 4 GPUs") for ln in m.lines)
    assert any(ln.label.startswith("overflow man: job time") for ln in m.lines)


def test_split_of_a_fraction_of_a_job() -> None:
    c = _hybrid_cfg({"rule": "over_capacity"})
    tiny = _work(
        gpu_hours=D("0.5"),
        useful_gpu_hours=D("0.25"),
        attempts=D("0.5"),
        jobs_by_kind=dict.fromkeys(KINDS, ZERO) | {"train": D("0.5")},
        levels=(6,),
        bucket_hours=D("0.25"),
    )
    base, over, _ = split(tiny, c.hybrid[0], 5)
    # 1 GPU over for a quarter hour: 0.25 of 0.5 GPU-hours, half of the half job and attempt.
    assert over.gpu_hours == D("0.25") and over.jobs_by_kind["train"] == D("0.25")
    assert over.attempts == D("0.25") and base.attempts == D("0.25")


def test_an_overhead_under_a_minute_is_still_charged() -> None:
    # A 1-minute billing increment loses half a minute per attempt on average: 2 attempts x
    # 0.5 min x 2 GPUs = 2 GPU-minutes.
    c = cfg(managed=[{**config()["managed"][0], "billing_increment_minutes": "1"}])
    (line,) = [ln for ln in _lines(c.managed[0], c, REG.normal) if "increment" in ln[1]]
    assert line[2] == "0.33"  # 2/60 GPU-hours x 10
