"""Cost model against figures computed by hand (SPEC C1-C10, V2); inputs in test_cost_fixtures."""

from __future__ import annotations

import json
from dataclasses import replace
from decimal import Decimal

import pytest

from gpudecide import evidence as ev
from gpudecide.cost import analysis, words
from gpudecide.cost.figures import figures_of
from gpudecide.cost.regimes import from_profile
from gpudecide.cost.tco import month_cost, reversibility
from gpudecide.errors import InputError
from gpudecide.message import english

from .test_cost_fixtures import (
    MANAGED,
    P,
    cfg,
    config,
    labour,
    profile_figures,
    profile_record,
    replay_record,
)

D = Decimal
REG = from_profile(profile_figures(), D(672))


def test_regimes_median_peak_empty() -> None:
    n, p, e = REG.normal, REG.peak, REG.empty
    assert (n.gpu_hours, n.useful_gpu_hours, n.attempts, n.trainings) == (100, 75, 2, 1)
    assert (p.gpu_hours, p.useful_gpu_hours, p.attempts, p.trainings) == (200, 150, 4, 2)
    assert (e.gpu_hours, e.attempts, e.trainings) == (0, 0, 0)
    assert e.prior is n  # the empty month follows normal months (their artifacts stay)
    assert "median of 2 rolling 4-week windows" in n.basis and "weeks 2-5" in n.basis
    assert "busiest" in p.basis and "weeks 1-4" in p.basis
    # Concurrency buckets of one day: week 4 (day 22) had 6 GPUs in use.
    assert n.peak_concurrent_gpus == 6 and n.bucket_hours == 24
    assert n.gpu_hours_above(4) == 48  # (6 - 4) GPUs x 24 h
    assert [w["gpu_hours"] for w in REG.windows] == ["200.000", "100.000"]


def test_regimes_scale_to_the_billing_month() -> None:
    reg = from_profile(profile_figures(), D(730))
    assert reg.normal.gpu_hours == D(100) * D(730) / D(672)
    assert "scaled x730/672 to a 730-hour month" in reg.normal.basis


def test_regimes_with_fewer_than_four_weeks() -> None:
    f = profile_figures()
    f["weeks"] = f["weeks"][:2]  # 100 GPU-hours in 2 weeks
    reg = from_profile(f, D(672))
    assert reg.normal.gpu_hours == reg.peak.gpu_hours == 200  # x 672 / 336
    assert any("fewer than 4 measured weeks" in n for n in reg.notes)


def test_regimes_leave_out_weeks_before_the_log() -> None:
    f = profile_figures()
    f["window"]["weeks_covered_by_log"] = 4.5  # week 1 only partly covered: kept
    assert len(from_profile(f, D(672)).windows) == 2
    f["window"]["weeks_covered_by_log"] = 3.5  # week 1 not covered at all
    reg = from_profile(f, D(672))
    assert len(reg.windows) == 1 and reg.normal.window["weeks"] == [2, 5]  # type: ignore[index]
    assert any("left out" in n for n in reg.notes)


def test_owned_hand_computed() -> None:
    c = cfg()
    own = c.owned[0]
    normal = month_cost(c, own, REG.normal)
    comps = normal.components
    # Amortisation: server 48000/24 = 2000, spares 1200/12 = 100 (own write-off period);
    # power: (1 kW idle + 1 kW x 100/2688 load) x 672 h x PUE 1.5 = 1045.5 kWh x 0.1.
    assert comps["compute"] == D("2204.55")
    assert comps["storage"] == D("100.00")  # 2 x 1200 / 24
    # switch 2400/24 = 100, rack 300, support 50, replacements 2 x 600 / 12 = 100.
    assert comps["platform_ops"] == D("550.00")
    assert comps["engineer_labour"] == D("800.00")  # 20 h x 40
    assert comps["waiting_cost"] == D("250.00")  # the team's assumption, in a month with jobs
    assert comps["data_transfer"] == 0
    assert normal.total == D("3904.55")
    assert normal.available_gpu_hours == 2688  # C4: 4 GPUs around the clock
    assert normal.useful_gpu_hours == 75
    assert normal.useful_utilisation == D(75) / D(2688)
    assert normal.cost_per_useful_gpu_hour == D("3904.55") / 75
    power = next(ln for ln in normal.lines if ln.label.startswith("power"))
    assert power.source == "test §1" and "1,046 kWh" in power.label
    empty = month_cost(c, own, REG.empty)
    assert empty.components["compute"] == D("2200.80")  # idle power only: 1008 kWh x 0.1
    assert empty.components["waiting_cost"] == 0  # nobody waits in a month without jobs
    assert empty.total == D("3650.80")
    assert empty.cost_per_useful_gpu_hour is None
    assert month_cost(c, own, REG.peak).components["compute"] == D("2208.30")  # 1083 kWh


def test_rented_hand_computed() -> None:
    c = cfg()
    rent = c.rented[0]
    normal = month_cost(c, rent, REG.normal)
    assert normal.components["compute"] == D("2000.00")  # 4 GPUs x 500 a month (C4)
    assert normal.components["storage"] == D("50.00")  # 1000 GB x 0.05
    assert normal.components["data_transfer"] == D("2.00")  # 1 training x 20 GB x 0.1
    assert normal.components["engineer_labour"] == D("400.00")
    assert normal.total == D("2452.00")
    assert month_cost(c, rent, REG.empty).total == D("2450.00")  # idle pool costs the same
    per_hour = cfg(
        rented=[{**config()["rented"][0], "price_per_gpu_month": None, "price_per_gpu_hour": P(1)}]
    ).rented[0]
    assert month_cost(c, per_hour, REG.normal).components["compute"] == D("2688.00")


def test_managed_hand_computed() -> None:
    c = cfg()
    man = c.managed[0]
    normal = month_cost(c, man, REG.normal)
    labels = {ln.label.split(":")[0]: ln.amount for ln in normal.lines}
    assert labels["job time"] == D("1000.00")  # 100 GPU-hours x 10
    # Per attempt on 2 GPUs: half the 6-min increment, 3 min start-up, 10 GB x 0.5 min load.
    assert labels["billing increment"] == D("2.00")  # 2 x 3/60 h x 2 x 10
    assert labels["environment start-up"] == D("2.00")
    assert labels["data loading"] == D("3.33")  # 2 x 5/60 h x 2 x 10
    assert labels["endpoint until deletion"] == D("10.00")  # 1 training x 5 h x 2
    comps = normal.components
    assert comps["compute"] == D("1017.33")
    assert comps["storage"] == D("22.00")  # (1000 + 2 x 50 GB kept 28 days = 1 month) x 0.02
    assert comps["data_transfer"] == D("3.00")  # in 2 x 10 GB x 0.1, out 20 GB x 0.05
    assert comps["platform_ops"] == D("100.00")
    assert comps["engineer_labour"] == D("500.00")
    assert normal.total == D("1642.33")
    billed = D(100) + D("0.2") + D("0.2") + D(2) * 5 / 60 * 2
    assert normal.available_gpu_hours == billed
    assert normal.useful_utilisation == D(75) / billed
    # Empty month: nothing runs; storage keeps 1000 GB and, averaged over the month, half a
    # month of the normal month's artifacts (2 x 50 GB with 1 month of retention).
    empty = month_cost(c, man, REG.empty)
    assert empty.components["compute"] == 0 and empty.components["data_transfer"] == 0
    assert empty.components["storage"] == D("21.00")  # 1050 GB x 0.02
    assert empty.total == D("621.00")  # storage + fee + labour
    assert empty.useful_utilisation is None


def test_managed_unbilled_overheads_and_long_retention() -> None:
    c = cfg(
        managed=[
            {**MANAGED, "startup_billed": False, "loading_billed": False, "retention_days": 84}
        ]
    )
    man = c.managed[0]
    normal = month_cost(c, man, REG.normal)
    assert normal.components["compute"] == D("1012.00")  # job time, increment, endpoint
    assert normal.components["storage"] == D("26.00")  # (1000 + 2 x 50 x 3 months) x 0.02
    empty = month_cost(c, man, REG.empty)
    assert empty.components["storage"] == D("25.00")  # 1000 + 2 x 50 x 2.5 months kept


def test_local_provider_is_a_managed_option_with_its_own_terms() -> None:
    """SPEC H4: a provider hosting in Kazakhstan, hourly billing and a monthly minimum."""
    local = {
        **MANAGED,
        "id": "kz",
        "site": "Almaty, Kazakhstan",
        "billing_increment_minutes": "60",
        "endpoint_price_per_hour": None,
        "endpoint_hours_per_training": "0",
        "ingest_price_per_gb": None,
        "egress_price_per_gb": P(0),
        "fees": [{"name": "minimum", "price_per_month": P(400)}],
    }
    c = cfg(managed=[local])
    normal = month_cost(c, c.managed[0], REG.normal)
    labels = {ln.label.split(":")[0]: ln.amount for ln in normal.lines}
    assert labels["billing increment"] == D("20.00")  # 2 attempts x 30 min x 2 GPUs x 10
    assert "endpoint until deletion" not in labels
    assert normal.components["platform_ops"] == D("400.00")
    assert normal.total == D("1000") + D("20") + D("2") + D("3.33") + D("22") + D("0") + D(
        "400"
    ) + D("500")


def test_hybrid_by_kinds_hand_computed() -> None:
    base = {
        **config()["rented"][0],
        "id": "small",
        "standalone": False,
        "labour": [],
        "waiting": None,
    }
    hyb = {
        "id": "hyb",
        "name": "small pool + managed trainings",
        "base": "small",
        "overflow": "man",
        "overflow_rule": {"rule": "kinds", "kinds": ["train"]},
        "labour": labour(15, 40),
        "waiting": {"consequence": "trainings wait for the vendor"},
    }
    c = cfg(rented=[base], hybrid=[hyb])
    normal = month_cost(c, c.hybrid[0], REG.normal)
    # Trainings hold 120 of 200 GPU-hours: 60 of the normal month's 100 go out, with the
    # month's one training (1 attempt); 40 GPU-hours and the eval stay on the 4-GPU base.
    comps = normal.components
    assert comps["compute"] == D("2000.00") + D("600") + D("1") + D("1") + D("1.67") + D("10")
    assert comps["storage"] == D("50.00") + D("21.00")  # base disks; (1000 + 50) x 0.02
    assert comps["data_transfer"] == D("0.00") + D("1.00") + D("1.00")  # base egress: no training
    assert comps["platform_ops"] == D("100.00")
    assert comps["engineer_labour"] == D("600.00")  # the hybrid's own, not its parts'
    assert normal.total == D("3386.67")
    assert normal.useful_gpu_hours == 75
    assert any(ln.label.startswith("overflow man: job time") for ln in normal.lines)


def test_hybrid_over_capacity_sends_demand_above_the_base() -> None:
    hyb = {
        "id": "hyb",
        "name": "pool + bursts",
        "base": "rent",
        "overflow": "man",
        "overflow_rule": {"rule": "over_capacity"},
        "labour": labour(1, 1),
        "waiting": {"consequence": "x"},
    }
    c = cfg(hybrid=[hyb])
    normal = month_cost(c, c.hybrid[0], REG.normal)
    # Day 22 had 6 GPUs in use against a 4-GPU base: 2 GPUs x 24 h = 48 GPU-hours go out.
    job_time = next(ln for ln in normal.lines if "job time" in ln.label)
    assert job_time.amount == D("480.00")
    assert any("upper bound" in n for n in normal.notes)


def test_break_even_owned_against_managed() -> None:
    """Owned: 3900.8 + 134.4 u a month; managed: 620 + 1022.33 per 75 useful GPU-hours."""
    c = cfg()
    pair = analysis.break_even(c, c.owned[0], c.managed[0], REG.normal)
    # Managed per month at useful utilisation u: 620 + 1022 1/3 x (2688 u / 75).
    managed_slope = (D(1022) + D(1) / 3) * D(2688) / 75
    expected = (D("3900.8") - 620) / (managed_slope - D("134.4"))
    assert pair["dedicated_cheaper"] == "above"
    assert pair["break_even_useful_utilisation"] == pytest.approx(float(expected), abs=2e-4)
    assert pair["achievable_max"] == 0.75
    u = D(str(pair["break_even_useful_utilisation"]))
    w = REG.normal.scaled(u * 2688 / 75)
    gap = month_cost(c, c.owned[0], w).total - month_cost(c, c.managed[0], w).total
    assert abs(gap) < 5  # the two bills meet there (within rounding of u to 4 places)


def test_break_even_never_and_always() -> None:
    cheap_managed = {**MANAGED, "price_per_gpu_hour": P("0.5")}
    c = cfg(managed=[cheap_managed])
    assert (
        analysis.break_even(c, c.owned[0], c.managed[0], REG.normal)["dedicated_cheaper"] == "never"
    )
    dear_managed = {**MANAGED, "fees": [{"name": "minimum", "price_per_month": P(9000)}]}
    c = cfg(managed=[dear_managed])
    assert (
        analysis.break_even(c, c.owned[0], c.managed[0], REG.normal)["dedicated_cheaper"]
        == "always"
    )


def test_analysis_findings_and_cheapest() -> None:
    result = analysis.analyse(cfg(), profile_record())
    f = result.figures
    # Peak: managed 2664.67 (200 GPU-hours) against the rented pool's flat 2454.00.
    assert f["cheapest"] == {"normal": "man", "peak": "rent", "empty": "man"}
    totals = {o["id"]: o["regimes"]["normal"]["total"] for o in f["options"]}
    assert totals == {"own": "3904.55", "rent": "2452.00", "man": "1642.33"}
    own = next(o for o in f["options"] if o["id"] == "own")
    assert own["regimes"]["normal"]["components"]["compute"] == "2204.55"
    assert own["regimes"]["normal"]["useful_utilisation"] == round(75 / 2688, 4)
    # C8: both dedicated options win only above the utilisation observed (2.8 %).
    assert len([x for x in f["findings"] if "only above" in x]) == 2
    assert result.verdict == "warn"
    assert own["waiting"]["assumed_monthly_cost"] == "250"
    assert own["waiting"]["assumption_source"] == "team estimate"
    assert {p["source"] for p in f["prices"]} == {"test §1", "team estimate"}
    assert len(f["curves"]) == 2 and len(f["break_even"]) == 2
    assert analysis.summary_line(f).startswith("cheapest normal month: man 1,642 KZT")


def test_peak_check_without_and_with_replay() -> None:
    c = cfg()
    own = c.owned[0]
    check = analysis.peak_check(c, own, REG.peak, [])
    assert check is not None and check["source"] == "profile"
    assert check["absorbs"] is False and check["outcome"] == "not_absorbed"  # 6 on 4 GPUs
    assert "(jobs queue); run `gpudecide replay`" in check["meaning"]
    slo = {"name": "normal", "threshold_s": 3600, "allowed_violation_share": 0.1}
    pools = [
        {"gpus": 2, "wait_p95_s": 90000, "jobs_unplaceable": 2, "slo_violation_share": 0.9},
        {
            "gpus": 4,
            "wait_p50_s": 0,
            "wait_p95_s": 7200,
            "wait_p99_s": 9000,
            "wait_max_s": 10800,
            "slo_violation_share": 0.05,
            "utilisation": 0.1,
            "longest_queue": 2,
            "jobs_unplaceable": 0,
        },
    ]
    # The peak month has 6 GPUs in use at once on this 4-GPU pool: the log holds other pools'
    # jobs or names the wrong pool, so the peak is not called absorbed even with the replay's
    # waits inside the SLO (issue 9, 13); nor is it called refused: unsettled.
    check = analysis.peak_check(c, own, REG.peak, [replay_record(pools, slo)])
    assert check is not None and check["source"] == "replay" and check["absorbs"] is None
    assert check["outcome"] == "unsettled"
    assert check["meaning"] == (
        "replay of 4 GPUs (peak window, fifo): wait p95 2.0 h, max 3.0 h; SLO normal violated "
        "by 5.0% of jobs, within the 10.0% allowed; the log shows 6 GPUs in use at once, more "
        "than the pool: it holds jobs of other pools too, or the pool size is wrong; the peak "
        "is not called absorbed until it is settled whether the log is this pool's alone"
    )
    fits = replace(REG.peak, peak_concurrent_gpus=4)  # boundary: exactly the pool's size
    check = analysis.peak_check(c, own, fits, [replay_record(pools, slo)])
    assert check is not None and check["source"] == "replay" and check["absorbs"] is True
    assert check["outcome"] == "absorbed" and check["wait_p95_s"] == 7200
    assert check["meaning"] == (
        "replay of 4 GPUs (peak window, fifo): wait p95 2.0 h, max 3.0 h; SLO normal violated "
        "by 5.0% of jobs, within the 10.0% allowed; the pool takes the peak within the SLO"
    )
    pools[1]["slo_violation_share"] = 0.2
    check = analysis.peak_check(c, own, fits, [replay_record(pools, slo)])
    assert check is not None and check["absorbs"] is False
    assert check["outcome"] == "not_absorbed"
    assert check["meaning"].endswith(
        "SLO normal violated by 20.0% of jobs, more than the 10.0% allowed; jobs wait longer "
        "than the SLO allows: the pool does not take the peak"
    )
    assert analysis.peak_check(c, c.managed[0], REG.peak, []) is None


def _replay_of_4(**pool: object) -> ev.Evidence:
    return replay_record([{"gpus": 4, "jobs_unplaceable": 0, **pool}], None)


@pytest.mark.parametrize(
    ("pool", "concurrent", "outcome", "says", "never_says"),
    [
        # Nobody waited, no SLO needed to say the pool takes the peak.
        ({"wait_p95_s": 0, "wait_max_s": 0}, 4, "absorbed", "no job waited", "queue"),
        # The same waits of zero with the log above the pool: the sentence never says that
        # jobs queue, it says what is unsettled.
        ({"wait_p95_s": 0, "wait_max_s": 0}, 6, "unsettled", "not called absorbed", "queue"),
        # Waits and no SLO to judge them by.
        ({"wait_p95_s": 600, "wait_max_s": 900}, 4, "unsettled", "no SLO says", "takes"),
        # Only the 95th percentile known, and it is zero: nothing said about the rest.
        ({"wait_p95_s": 0}, 4, "unsettled", "no SLO says", "no job waited"),
        # Jobs larger than the pool lead the line, whatever the waits of the rest.
        (
            {"wait_p95_s": 0, "wait_max_s": 0, "jobs_unplaceable": 1},
            4,
            "never_fits",
            "1 job larger than the pool (4 GPUs) can never run here",
            "takes",
        ),
    ],
)
def test_the_peak_sentence_follows_from_its_figures(
    pool: dict[str, object], concurrent: int, outcome: str, says: str, never_says: str
) -> None:
    """Issue 22: a sentence chosen from the numbers it states. "wait p95 0 min, max 0 min"
    never stands beside "jobs queue at the peak"."""
    c = cfg()
    peak = replace(REG.peak, peak_concurrent_gpus=concurrent)
    check = analysis.peak_check(c, c.owned[0], peak, [_replay_of_4(**pool)])
    assert check is not None and check["outcome"] == outcome
    assert says in check["meaning"] and never_says not in check["meaning"]
    assert check["absorbs"] is {"absorbed": True, "unsettled": None}.get(outcome, False)


def test_a_hybrid_peak_check_says_where_the_peak_goes() -> None:
    hyb = {
        "id": "hyb",
        "name": "h",
        "base": "rent",
        "overflow": "man",
        "labour": labour(1, 1),
    }
    over = cfg(hybrid=[{**hyb, "overflow_rule": {"rule": "over_capacity"}}])
    check = analysis.peak_check(over, over.hybrid[0], REG.peak, [])
    assert check is not None and check["outcome"] == "absorbed"
    assert check["meaning"] == "demand above 4 GPUs goes to man"
    kinds = cfg(hybrid=[{**hyb, "overflow_rule": {"rule": "kinds", "kinds": ["train"]}}])
    check = analysis.peak_check(kinds, kinds.hybrid[0], REG.peak, [])
    assert check is not None and check["outcome"] == "not_measured" and check["absorbs"] is None


def test_reversibility_hand_computed() -> None:
    """V2 after 6 months."""
    c = cfg()
    own = reversibility(c, c.owned[0])
    assert own is not None
    # Book value: server 48000 x 18/24, switch 2400 x 18/24, disks 2400 x 18/24, spares
    # 1200 x 6/12 = 40200; resale 25 % of 54000 = 13500; rack: 6 more months x 300.
    assert own["book_value"] == "40200.00" and own["resale_value"] == "13500.00"
    assert own["committed_payments_left"] == "1800.00"
    assert own["cost_to_shrink"] == "28500.00" and own["days_to_shrink"] == 28.0
    rent = reversibility(c, c.rented[0])
    assert rent is not None
    # The pool 4 x 500 and its 1000 GB x 0.05 of storage: 2050 a month for 3 committed
    # months, then 14 days' notice of a 28-day month (1025).
    assert rent["commitment_months_left"] == 3 and rent["committed_monthly"] == "2050.00"
    assert rent["cost_to_shrink"] == "7175.00" and rent["days_to_shrink"] == 98.0
    assert "release 2 GPUs at a time" in rent["how"]
    # Managed (issue 9 item 17): no term and no notice in its costs.yaml; leaving moves the
    # 1000 GB kept out at 0.05.
    man = reversibility(c, c.managed[0])
    assert man is not None and man["kind"] == "managed"
    assert man["gb_to_move_out"] == 1000.0 and man["egress_cost"] == "50.00"
    assert man["cost_to_shrink"] == "50.00" and man["days_to_shrink"] == 0.0
    assert "a lower bound" in man["how"]


def test_sensitivity_rows_and_flips() -> None:
    rented = {**config()["rented"][0], "price_per_gpu_month": P(350)}  # rent 1852 vs man 1642
    c = cfg(rented=[rented])
    sens = analysis.analyse(c, profile_record()).figures["sensitivity"]
    assert sens["baseline_cheapest"] == "man" and sens["baseline_gap"] == "209.67"
    rows = {r["input"]: r for r in sens["inputs"]}
    price = rows["man: price_per_gpu_hour"]
    # +20 % on the managed GPU-hour: job time and billed overheads x 1.2 -> man 1843.80.
    assert price["high"]["leader_total"] == "1843.80"
    assert price["high"]["cheapest"] == "man" and price["high"]["gap"] == "8.20"
    flips = {(f["input"], f["move"]) for f in sens["flips"]}
    assert ("rent: price_per_gpu_month", "-20%") in flips  # 4 x 280 + 452 = 1572 < 1642.33
    assert len(flips) == 1
    # 20 % more work: managed 1220.80 + 22.40 + 3.60 + 600 = 1846.80, rent 1852 + 0.40 egress.
    more = rows["workload: GPU-hours per month"]["high"]
    assert more == {"cheapest": "man", "gap": "5.60", "leader_total": "1846.80"}
    swings = [D(r["swing"]) for r in sens["inputs"]]
    assert swings == sorted(swings, reverse=True) and all(s > 0 for s in swings)


def test_empty_profile_has_no_break_even() -> None:
    f = profile_figures()
    for w in f["weeks"]:
        w["gpu_hours"] = 0.0
        w["jobs"] = 0
        w["jobs_by_kind"] = dict.fromkeys(w["jobs_by_kind"], 0)
    f.update(gpu_hours_total=0.0, useful_gpu_hours=0.0, jobs_total=0, attempts_total=0)
    result = analysis.analyse(cfg(), profile_record(f))
    assert result.figures["break_even"] == []
    assert any("no break-even" in n for n in result.notes)


def test_gpu_hours_by_kind_follow_the_window_jobs() -> None:
    # Per job over the profile: train 120 / 2 = 60 GPU-hours, eval 80 / 2 = 40.
    assert REG.normal.gpu_hours_of(["train"]) == 60  # 1 train + 1 eval: 60 / 100 of the month
    assert REG.peak.gpu_hours_of(["train"]) == 120  # 2 + 2: 120 / 200
    f = profile_figures()
    f["weeks"][3]["jobs_by_kind"] |= {"train": 0, "eval": 1}  # week 4: an eval, not a train
    reg = from_profile(f, D(672))
    assert reg.normal.gpu_hours_of(["train"]) == 0  # no training in weeks 2-5: none sent out


def test_profile_record_without_a_figure_is_an_input_error() -> None:
    f = profile_figures()
    del f["weeks"]
    with pytest.raises(InputError, match="lacks the figure 'weeks'") as exc:
        from_profile(f, D(672))
    assert exc.value.field == "figures.weeks"


def test_a_win_only_near_full_utilisation_is_flagged() -> None:
    """C8: break-even at 93 % of useful utilisation, 30 % observed; the observed figures are
    named (issue 22: which pool, which month)."""
    pair = {
        "dedicated": "own",
        "managed": "man",
        "break_even_useful_utilisation": 0.93,
        "dedicated_cheaper": "above",
        "achievable_max": 0.98,
        "observed_normal": 0.3,
        "observed_peak": 0.5,
    }
    seen = {
        "own": [
            words.utilisation_figure(
                words.utilisation("useful", "pool", words.month_window(r, w), gpus=4), v
            )
            for r, w, v in (("normal", [2, 5], 0.3), ("peak", [1, 4], 0.5))
        ]
    }
    found = analysis.utilisation_findings([pair], seen, {"own": 4})
    # Findings are stored as messages, rendered in the reader's language; here in English.
    assert [english(m) for m in found] == [
        "own is cheaper than man only above 93.0% useful utilisation of its 4-GPU pool (only "
        "at ~100 % utilisation); observed: useful utilisation of the 4-GPU pool, normal month "
        "(weeks 2-5): 30.0%; useful utilisation of the 4-GPU pool, peak month (weeks 1-4): 50.0%"
    ]
    pair["break_even_useful_utilisation"] = 0.2  # observed is above: no finding
    assert analysis.utilisation_findings([pair], seen, {"own": 4}) == []


def test_every_utilisation_is_named_with_its_window_and_pool() -> None:
    """Issue 22: the cost's months, the profile's whole log and a replay's window of the same
    pool side by side, each named; a managed option's share is of billed GPU-hours, not a
    utilisation; options with the same pool share its figures."""
    figures = profile_figures() | {"pool_gpus": 4, "busy_share": 0.04, "occupied_share": 0.06}
    pools = [
        {"gpus": 4, "utilisation": 0.132, "jobs_unplaceable": 0},
        {"gpus": 8, "utilisation": 0.5},
    ]
    replay = replay_record(pools)
    c = cfg(rented=[{**config()["rented"][0]}])
    f = analysis.analyse(c, profile_record(figures), [replay]).figures
    named = {
        (s["source"], s["measure"], s["window"]): s for s in f["utilisation"] if s["of"] == "pool"
    }
    assert next(s["options"] for s in f["utilisation"] if s["of"] == "pool") == ["own", "rent"]
    normal = named[("cost", "useful", "normal")]
    # 75 useful of 4 GPUs x 672 h in the normal month (weeks 2-5).
    assert normal["share"] == round(75 / 2688, 4) and normal["pool_gpus"] == 4
    assert normal["name"] == "useful utilisation of the 4-GPU pool, normal month (weeks 2-5)"
    assert named[("cost", "occupied", "peak")]["share"] == round(200 / 2688, 4)
    assert named[("profile", "useful", "log")]["name"] == (
        "useful utilisation of the 4-GPU pool, whole log, 5 weeks"
    )
    assert named[("profile", "occupied", "log")]["share"] == 0.06
    rep = named[("replay", "occupied", "peak")]
    assert rep["evidence"] == replay.id and rep["share"] == 0.132
    assert rep["name"].startswith("occupied utilisation of the 4-GPU pool, replay of the peak")
    assert not any(s["pool_gpus"] == 8 for s in f["utilisation"])  # no option of 8 GPUs
    billed = [s for s in f["utilisation"] if s["options"] == ["man"]]
    assert [s["name"] for s in billed] == [
        "useful share of billed GPU-hours, normal month (weeks 2-5)",
        "useful share of billed GPU-hours, peak month (weeks 1-4)",
    ]
    assert all("utilisation" not in s["name"] for s in billed)
    # A profile of another pool size names nothing of this one.
    other = profile_figures() | {"pool_gpus": 8, "busy_share": 0.04, "occupied_share": 0.06}
    f = analysis.analyse(c, profile_record(other), []).figures
    assert not any(s["source"] == "profile" for s in f["utilisation"])


def test_the_figures_model_is_the_record_key_for_key() -> None:
    """CostFigures gives back exactly the figures the analysis wrote: a hybrid (its base's
    reversibility with `of_base`), a peak check from a replay and one from the profile, a
    managed option without an egress price, a single standalone option (no sensitivity gap)."""
    hyb = {
        "id": "hyb",
        "name": "pool + bursts",
        "base": "rent",
        "overflow": "man",
        "overflow_rule": {"rule": "over_capacity"},
        "labour": labour(1, 1),
        "waiting": {"consequence": "x"},
    }
    slo = {"name": "normal", "threshold_s": 3600, "allowed_violation_share": 0.1}
    pools = [{"gpus": 4, "wait_p95_s": 7200, "wait_max_s": None, "jobs_unplaceable": 1}]
    no_egress = {**MANAGED, "egress_price_per_gb": None}
    configs = [
        cfg(hybrid=[hyb]),
        cfg(managed=[no_egress]),
        cfg(owned=[], rented=[], managed=[MANAGED]),
    ]
    for c in configs:
        for replays in ([], [replay_record(pools, slo)]):
            result = analysis.analyse(c, profile_record(), replays)
            dumped = result.model.model_dump(mode="json")
            assert dumped == result.figures
            assert json.dumps(dumped, sort_keys=True) == json.dumps(result.figures, sort_keys=True)
    hybrid = analysis.analyse(configs[0], profile_record()).model.options[-1]
    assert hybrid.reversibility is not None and hybrid.reversibility.of_base == "rent"
    record = analysis.to_evidence(analysis.analyse(configs[0], profile_record()), [])
    assert figures_of(record).model_dump(mode="json") == record.figures
    with pytest.raises(LookupError):
        figures_of(profile_record())
    broken = record.model_copy(update={"figures": {**record.figures, "currency": None}})
    with pytest.raises(ValueError, match="currency"):
        figures_of(broken)
