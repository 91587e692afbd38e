"""Small cost inputs whose every figure is computed by hand in the cost tests.

The profile: 5 weeks, hours_per_month 672 (= 4 weeks, so a 4-week window is a month as is).
    week 1: 1 train + 1 eval, 100 GPU-hours      week 4: 1 train, 50 GPU-hours
    week 2: nothing                              week 5: nothing
    week 3: 1 eval, 50 GPU-hours
Rolling 4-week windows: weeks 1-4 (200 GPU-hours, 4 jobs) and weeks 2-5 (100 GPU-hours,
1 train + 1 eval). Normal = the lower median = weeks 2-5, peak = weeks 1-4.
Over the profile: 200 GPU-hours, 150 useful (75 %), train 120 / eval 80 GPU-hours, 4 jobs in
4 attempts of 25 h on average, so 200 / (25 x 4) = 2 GPUs per attempt.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from gpudecide import evidence as ev
from gpudecide.cost.regimes import from_profile
from gpudecide.cost.schema import CostsConfig

KINDS = ("train", "smoke", "restart", "eval", "merge", "quantize", "export", "other")
START = datetime(2026, 1, 5, tzinfo=UTC)


def iso(t: datetime) -> str:
    """A time as the evidence writes it (UTC, seconds)."""
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _week(n: int, hours: float, **jobs: int) -> dict[str, Any]:
    by_kind = dict.fromkeys(KINDS, 0) | jobs
    return {
        "week": n,
        "start": iso(START + timedelta(weeks=n - 1)),
        "end": iso(START + timedelta(weeks=n)),
        "jobs": sum(by_kind.values()),
        "jobs_by_kind": by_kind,
        "gpu_hours": hours,
    }


def profile_figures() -> dict[str, Any]:
    """The hand-computed profile described in the module docstring."""
    levels = [0] * 35
    levels[0] = 4  # day 1 (week 1)
    levels[21] = 6  # day 22 (week 4)
    return {
        "window": {
            "start": iso(START),
            "end": iso(START + timedelta(weeks=5)),
            "weeks": 5,
            "weeks_covered_by_log": None,
        },
        "jobs_total": 4,
        "attempts_total": 4,
        "jobs_by_kind": dict.fromkeys(KINDS, 0) | {"train": 2, "eval": 2},
        "gpu_hours_total": 200.0,
        "gpu_hours_by_kind": dict.fromkeys(KINDS, 0.0) | {"train": 120.0, "eval": 80.0},
        "useful_gpu_hours": 150.0,
        "peak_concurrent_gpus": 6,
        "duration_hours": {"mean": 25.0},
        "weeks": [
            _week(1, 100.0, train=1, eval=1),
            _week(2, 0.0),
            _week(3, 50.0, eval=1),
            _week(4, 50.0, train=1),
            _week(5, 0.0),
        ],
        "series": {
            "concurrency": {
                "t": [iso(START + timedelta(days=d)) for d in range(35)],
                "gpus": levels,
            }
        },
    }


def profile_record(figures: dict[str, Any] | None = None) -> ev.Evidence:
    """A sealed profile evidence record of those figures."""
    return ev.seal(
        ev.Evidence(
            kind="profile",
            title="Workload profile",
            spec_ids=["F1"],
            verdict="info",
            summary="test",
            figures=figures or profile_figures(),
        )
    )


def replay_record(pools: list[dict[str, Any]], slo: dict[str, Any] | None = None) -> ev.Evidence:
    """A replay evidence record as `gpudecide replay` writes it (peak window, FIFO)."""
    return ev.seal(
        ev.Evidence(
            kind="replay",
            title="Pool replay",
            spec_ids=["Q3", "C8"],
            verdict="info",
            summary="test",
            figures={
                "window": {"kind": "peak", "start": iso(START), "end": iso(START)},
                "policy": "fifo",
                "slo": slo,
                "pools": pools,
                "recommended_gpus": None,
            },
        )
    )


def P(amount: float | str, source: str = "test §1") -> dict[str, Any]:
    """A price."""
    return {"amount": str(amount), "source": source}


def labour(hours: float, rate: float, role: str = "engineer") -> list[dict[str, Any]]:
    """One role's labour."""
    return [{"role": role, "hours_per_month": str(hours), "rate_per_hour": P(rate)}]


OWNED = {
    "id": "own",
    "name": "Owned 4-GPU server",
    "servers": 1,
    "gpus_per_server": 4,
    "write_off_months": 24,
    "capex": [
        {"item": "server", "kind": "server", "quantity": 1, "unit_price": P(48000)},
        {"item": "switch", "kind": "network", "quantity": 1, "unit_price": P(2400)},
        {"item": "disks", "kind": "disks", "quantity": 2, "unit_price": P(1200)},
        {
            "item": "spares",
            "kind": "spares",
            "quantity": 1,
            "unit_price": P(1200),
            "write_off_months": 12,
        },
    ],
    "power": {
        "kw_per_server_busy": "2",
        "kw_per_server_idle": "1",
        "pue": "1.5",
        "price_per_kwh": P("0.1"),
    },
    "colocation": {"price_per_month": P(300), "commitment_months": 12},
    "support_per_month": P(50),
    "replacements": {"per_year": "2", "unit_cost": P(600)},
    "exit": {"resale_share": "0.25", "weeks_to_shrink": "4"},
    "labour": labour(20, 40),
    "waiting": {
        "consequence": "release window missed",
        "assumed_monthly_cost": P(250, "team estimate"),
    },
}
RENTED = {
    "id": "rent",
    "name": "Rented 4-GPU pool",
    "gpus": 4,
    "price_per_gpu_month": P(500),
    "min_commitment_months": 9,
    "scale_down_step_gpus": 2,
    "scale_down_notice_days": 14,
    "storage_gb": "1000",
    "storage_price_per_gb_month": P("0.05"),
    "egress_price_per_gb": P("0.1"),
    "labour": labour(10, 40),
    "waiting": {"consequence": "evaluations wait behind trainings"},
}
MANAGED = {
    "id": "man",
    "name": "Managed endpoint",
    "price_per_gpu_hour": P(10),
    "billing_increment_minutes": "6",
    "startup_minutes_per_job": "3",
    "startup_billed": True,
    "loading_minutes_per_gb": "0.5",
    "loading_billed": True,
    "ingest_price_per_gb": P("0.1"),
    "storage_price_per_gb_month": P("0.02"),
    "retention_days": 28,
    "endpoint_price_per_hour": P(2),
    "endpoint_hours_per_training": "5",
    "egress_price_per_gb": P("0.05"),
    "fees": [{"name": "support", "price_per_month": P(100)}],
    "labour": labour(10, 50),
    "waiting": {"consequence": "start not in the contract"},
}


def config(**changes: Any) -> dict[str, Any]:
    """costs.yaml as a dict: one owned, one rented, one managed option; `changes` on top."""
    base: dict[str, Any] = {
        "version": 1,
        "currency": "KZT",
        "hours_per_month": "672",
        "exit_after_months": 6,
        "data": {
            "stored_gb": "1000",
            "loaded_gb_per_job": "10",
            "artifacts_gb_per_job": "50",
            "egress_gb_per_training": "20",
            "source": "inventory",
        },
        "owned": [copy.deepcopy(OWNED)],
        "rented": [copy.deepcopy(RENTED)],
        "managed": [copy.deepcopy(MANAGED)],
        "hybrid": [],
    }
    base.update(changes)
    return base


def cfg(**changes: Any) -> CostsConfig:
    """The validated config."""
    return CostsConfig.model_validate(config(**changes))


def test_fixture_regimes_are_the_ones_described() -> None:
    regimes = from_profile(profile_figures(), Decimal(672))
    assert regimes.normal.window is not None and regimes.normal.window["weeks"] == [2, 5]
    assert regimes.peak.window is not None and regimes.peak.window["weeks"] == [1, 4]
    assert regimes.normal.gpu_hours == 100 and regimes.peak.gpu_hours == 200
    assert regimes.normal.mean_gpus_per_attempt == 2
    assert regimes.normal.useful_share == Decimal("0.75")
