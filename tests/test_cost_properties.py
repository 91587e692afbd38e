"""Properties of the cost model that must hold for any prices and any workload (hypothesis)."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import Any

from hypothesis import assume, event, given, settings, target
from hypothesis import strategies as st

from gpudecide.cost import analysis
from gpudecide.cost.regimes import ZERO, Workload, from_profile
from gpudecide.cost.schema import CostsConfig
from gpudecide.cost.tco import COMPONENTS, month_cost

from .test_cost_fixtures import MANAGED, OWNED, config, profile_figures

D = Decimal
BASE = from_profile(profile_figures(), D(672))

money = st.decimals(min_value=0, max_value=100_000, places=2)
small = st.decimals(min_value=0, max_value=200, places=2)
volume = st.decimals(min_value=0, max_value=5_000, places=1)


def _price(amount: Decimal) -> dict[str, Any]:
    return {"amount": amount, "source": "generated"}


@st.composite
def managed_configs(draw: st.DrawFn, min_gpu_hour: int = 0) -> CostsConfig:
    """A config whose managed option has arbitrary terms and platform_ops fees only."""
    option = {
        **MANAGED,
        "price_per_gpu_hour": _price(
            draw(st.decimals(min_value=min_gpu_hour, max_value=100_000, places=2))
        ),
        "billing_increment_minutes": draw(small),
        "startup_minutes_per_job": draw(small),
        "startup_billed": draw(st.booleans()),
        "loading_minutes_per_gb": draw(st.decimals(min_value=0, max_value=5, places=2)),
        "loading_billed": draw(st.booleans()),
        "ingest_price_per_gb": draw(st.none() | money.map(_price)),
        "storage_price_per_gb_month": _price(draw(money)),
        "retention_days": draw(st.integers(min_value=0, max_value=400)),
        "endpoint_price_per_hour": draw(st.none() | money.map(_price)),
        "endpoint_hours_per_training": draw(small),
        "egress_price_per_gb": draw(st.none() | money.map(_price)),
        "fees": [
            {"name": f"fee {i}", "price_per_month": _price(a)}
            for i, a in enumerate(draw(st.lists(money, max_size=3)))
        ],
    }
    if option["endpoint_price_per_hour"] is None:
        option["endpoint_hours_per_training"] = D(0)
    data = {
        "stored_gb": draw(volume),
        "loaded_gb_per_job": draw(volume),
        "artifacts_gb_per_job": draw(volume),
        "egress_gb_per_training": draw(volume),
        "source": "generated",
    }
    return CostsConfig.model_validate(config(managed=[option], data=data))


@st.composite
def workloads(draw: st.DrawFn) -> Workload:
    """A month of work of the fixture's mix with arbitrary volumes."""
    hours = draw(st.decimals(min_value=0, max_value=50_000, places=3))
    attempts = draw(st.decimals(min_value=0, max_value=2_000, places=2))
    trainings = draw(st.decimals(min_value=0, max_value=200, places=2))
    by_kind = dict.fromkeys(BASE.normal.jobs_by_kind, ZERO) | {"train": trainings}
    return replace(
        BASE.normal,
        gpu_hours=hours,
        useful_gpu_hours=hours * D("0.75"),
        attempts=attempts,
        jobs_by_kind=by_kind,
    )


growth = st.decimals(min_value=0, max_value=1_000, places=2)


def test_more_jobs_never_lower_the_managed_compute_line() -> None:
    grew: list[bool] = []

    @settings(max_examples=150, deadline=None)
    @given(managed_configs(), workloads(), growth, growth, growth)
    def more_work(
        cfg: CostsConfig,
        w: Workload,
        more_hours: Decimal,
        more_attempts: Decimal,
        more_trains: Decimal,
    ) -> None:
        bigger = replace(
            w,
            gpu_hours=w.gpu_hours + more_hours,
            useful_gpu_hours=(w.gpu_hours + more_hours) * D("0.75"),
            attempts=w.attempts + more_attempts,
            jobs_by_kind=w.jobs_by_kind | {"train": w.trainings + more_trains},
        )
        option = cfg.managed[0]
        before = month_cost(cfg, option, w).components["compute"]
        after = month_cost(cfg, option, bigger).components["compute"]
        assert after >= before
        event(f"compute line grew: {after > before}")
        target(float(after - before), label="compute growth")
        grew.append(after > before)

    more_work()
    # The property is only worth something where the line really moves: most examples do.
    assert sum(grew) >= 0.6 * len(grew), f"{sum(grew)} of {len(grew)} examples moved the line"


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["server", "network", "disks", "spares", "redundancy", "other"]),
            st.integers(min_value=1, max_value=8),
            st.decimals(min_value=0, max_value=10_000_000, places=2),
            st.none() | st.integers(min_value=1, max_value=120),
        ),
        min_size=1,
        max_size=6,
    ),
    st.integers(min_value=1, max_value=120),
    st.integers(min_value=0, max_value=120),
    workloads(),
)
def test_a_longer_write_off_never_raises_monthly_amortisation(
    items: list[tuple[str, int, Decimal, int | None]], months: int, longer_by: int, w: Workload
) -> None:
    capex = [
        {
            "item": f"item {i}",
            "kind": kind,
            "quantity": q,
            "unit_price": _price(price),
            "write_off_months": own,
        }
        for i, (kind, q, price, own) in enumerate(items)
    ]

    def cost(write_off: int) -> dict[str, Decimal]:
        owned = {**OWNED, "capex": capex, "write_off_months": write_off, "colocation": None}
        cfg = CostsConfig.model_validate(config(owned=[owned]))
        return dict(month_cost(cfg, cfg.owned[0], w).components)

    short, long = cost(months), cost(months + longer_by)
    for component in COMPONENTS:
        assert long[component] <= short[component], component
    event(f"compute (amortisation) fell: {long['compute'] < short['compute']}")


@settings(max_examples=150, deadline=None)
@given(managed_configs(), workloads())
def test_the_empty_month_costs_a_managed_option_only_storage_and_fixed_fees(
    cfg: CostsConfig, before: Workload
) -> None:
    option = cfg.managed[0]
    empty = replace(BASE.empty, prior=before)
    month = month_cost(cfg, option, empty)
    fees = sum((f.price_per_month.amount for f in option.fees), ZERO)
    labour = sum((r.hours_per_month * r.rate_per_hour.amount for r in option.labour), ZERO)
    comps = month.components
    assert comps["compute"] == comps["data_transfer"] == comps["waiting_cost"] == 0
    assert comps["platform_ops"] == fees
    assert month.total == comps["storage"] + fees + labour
    # Storage never falls below what is kept all the time.
    assert comps["storage"] >= (
        cfg.data.stored_gb * option.storage_price_per_gb_month.amount
    ).quantize(D("0.01")) - D("0.01")


@settings(max_examples=60, deadline=None)
@given(managed_configs(min_gpu_hour=1), st.decimals(min_value=D("0.05"), max_value=D("0.95")))
def test_break_even_is_where_the_two_bills_meet(cfg: CostsConfig, x: Decimal) -> None:
    """The pool price is solved so that the two bills cross at a chosen utilisation x * s
    (the rented bill is linear in its price): every example has a crossing to find, and
    break_even must find it there."""
    s = BASE.normal.useful_share
    want = x * s

    def with_price(price: Decimal) -> CostsConfig:
        rented = {**config()["rented"][0], "price_per_gpu_month": _price(price)}
        return cfg.model_copy(
            update={"rented": CostsConfig.model_validate(config(rented=[rented])).rented}
        )

    def gap(c: CostsConfig, at: Decimal) -> Decimal:
        w = BASE.normal.scaled(at * 2688 / BASE.normal.useful_gpu_hours)
        return month_cost(c, c.rented[0], w).total - month_cost(c, c.managed[0], w).total

    free_pool = with_price(D(0))
    gpus = analysis.pool_gpus(free_pool, free_pool.rented[0])
    assert gpus == 4  # 2688 GPU-hours of capacity = 4 GPUs x 672 h
    # The bills must not run parallel: when the pool's own variable costs (egress per
    # training) grow as fast as the managed bill, no pool price makes them cross, and a
    # near-parallel pair turns a cent of rounding into a large move of the crossing. Rounding
    # the price moves the gap by at most 4 GPUs x half a cent; 100 per unit of utilisation
    # keeps that under 0.001 of utilisation.
    slope = (gap(free_pool, want + D("0.01")) - gap(free_pool, want)) / D("0.01")
    assume(abs(slope) >= 100)
    price = (-gap(free_pool, want) / gpus).quantize(D("0.01"))
    # A pool cheaper than nothing cannot be priced: the managed option is then always dearer.
    assume(price >= 1)
    priced = with_price(price)
    pair = analysis.break_even(priced, priced.rented[0], priced.managed[0], BASE.normal)
    u = Decimal(str(pair["break_even_useful_utilisation"]))
    event(f"side: {pair['dedicated_cheaper']}")
    assert pair["dedicated_cheaper"] == "above"  # a flat-priced pool gains as it fills
    assert pair["achievable_max"] == float(round(s, 4))
    # Rounding the price to cents moves the crossing by at most a cent's worth of GPU-hours.
    assert abs(u - want) <= D("0.001"), (u, want)
    assert gap(priced, u + D("0.01")) <= 0 <= gap(priced, max(u - D("0.01"), D("0.0001")))
