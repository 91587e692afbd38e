"""Two queue SLOs, normal and urgent (SPEC Q3), and their evaluation on measured waits (Q2).

An SLO selects jobs (GPU count, GPU class, kind, priority, site, time of day in a time zone),
sets a threshold on submit-to-start or submit-to-first-step, and an allowed share of
violations. Evaluation gives count, violations, their share with a 95 % Wilson interval and
a verdict; "not measurable" when the timestamps it needs are missing.
"""

from __future__ import annotations

import math
from datetime import datetime, time
from pathlib import Path
from typing import Any, Literal
from zoneinfo import ZoneInfo

import numpy as np
import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from gpudecide.inputs import load_yaml_model
from gpudecide.jobs.classify import Kind
from gpudecide.jobs.load import IanaZone
from gpudecide.queue.lifecycle import reason_category

Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
Measure = Literal[
    "eligible_to_start", "submit_to_start", "eligible_to_first_step", "submit_to_first_step"
]
_WEEKDAYS: tuple[Weekday, ...] = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
CDF_POINTS = 500


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Range(_Strict):
    """Inclusive numeric range; a missing end is open."""

    min: float | None = Field(default=None, description="Smallest value included.")
    max: float | None = Field(default=None, description="Largest value included.")

    @model_validator(mode="after")
    def _ordered(self) -> Range:
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError("min is above max")
        return self

    def contains(self, values: np.ndarray) -> np.ndarray:
        """Mask of values inside the range (NaN is outside)."""
        ok: np.ndarray = ~np.isnan(values)
        if self.min is not None:
            ok &= values >= self.min
        if self.max is not None:
            ok &= values <= self.max
        return ok


class TimeOfDay(_Strict):
    """Submission time window in a time zone (e.g. working hours in Almaty)."""

    start: str = Field(description="Window start, HH:MM (inclusive).")
    end: str = Field(description="Window end, HH:MM (exclusive); before start wraps midnight.")
    timezone: IanaZone = Field(description="IANA time zone of the window, e.g. Asia/Almaty.")
    weekdays: list[Weekday] | None = Field(
        default=None, description="Days it applies to (mon..sun); null for every day."
    )

    @field_validator("start", "end")
    @classmethod
    def _hhmm(cls, value: str) -> str:
        try:
            time.fromisoformat(value)
        except ValueError:
            raise ValueError(f"{value!r} is not HH:MM") from None
        return value

    def contains(self, stamps: list[datetime | None]) -> np.ndarray:
        """Mask of times inside the window (None is outside)."""
        zone = ZoneInfo(self.timezone)
        lo, hi = time.fromisoformat(self.start), time.fromisoformat(self.end)
        days = set(self.weekdays or _WEEKDAYS)
        out = np.zeros(len(stamps), dtype=bool)
        for i, ts in enumerate(stamps):
            if ts is None:
                continue
            local = ts.astimezone(zone)
            t = local.time()
            inside = lo <= t < hi if lo <= hi else (t >= lo or t < hi)
            out[i] = inside and _WEEKDAYS[local.weekday()] in days
        return out


class Selector(_Strict):
    """Which jobs an SLO is about; every given condition must hold."""

    gpus: Range | None = Field(default=None, description="GPU count range of the job.")
    gpu_class: list[str] | None = Field(default=None, description="GPU types, e.g. [h100].")
    kinds: list[Kind] | None = Field(default=None, description="Job kinds, e.g. [train, eval].")
    priority: Range | None = Field(default=None, description="Numeric priority range.")
    priority_class: list[str] | None = Field(
        default=None, description="Named priority levels (Slurm QOS, priorityClassName)."
    )
    sites: list[str] | None = Field(default=None, description="Sites, regions or clusters.")
    time_of_day: TimeOfDay | None = Field(default=None, description="Submission time window.")

    def mask(self, jobs: pa.Table) -> np.ndarray:
        """Jobs (rows of a lifecycle table) this selector picks."""
        n = jobs.num_rows
        ok = np.ones(n, dtype=bool)

        def col(name: str) -> list[Any]:
            values: list[Any] = jobs.column(name).to_pylist()
            return values

        if self.gpus is not None:
            ok &= self.gpus.contains(_floats(col("gpus")))
        if self.priority is not None:
            ok &= self.priority.contains(_floats(col("priority")))
        for wanted, name in (
            (self.gpu_class, "gpu_type"),
            (self.kinds, "kind"),
            (self.priority_class, "priority_class"),
            (self.sites, "site"),
        ):
            if wanted is not None:
                allowed = {str(w).lower() for w in wanted}
                ok &= np.array(
                    [v is not None and str(v).lower() in allowed for v in col(name)], dtype=bool
                )
        if self.time_of_day is not None:
            ok &= self.time_of_day.contains(col("submit"))
        return ok


def _floats(values: list[Any]) -> np.ndarray:
    return np.array([np.nan if v is None else float(v) for v in values], dtype=float)


class SLO(_Strict):
    """One service level objective on queue waits."""

    description: str = Field(default="", description="What the SLO protects, in words.")
    measure: Measure = Field(
        default="eligible_to_start",
        description=(
            "Clock start (eligible: holds, dependencies and begin times are over; or submit) "
            "to clock stop (start: a node is assigned; or first_step: training runs)."
        ),
    )
    threshold_minutes: float = Field(gt=0, description="A wait above this is a violation.")
    allowed_violation_share: float = Field(
        ge=0, le=1, description="Share of selected jobs allowed to violate (0.05 = 5 %)."
    )
    selector: Selector = Field(default_factory=Selector, description="Which jobs it covers.")


class SLOFile(_Strict):
    """Schema of slo.yaml: a normal and an urgent SLO (Q3), more if the team wants."""

    slos: dict[str, SLO] = Field(description="SLOs by name; `normal` and `urgent` are required.")

    @field_validator("slos")
    @classmethod
    def _both(cls, value: dict[str, SLO]) -> dict[str, SLO]:
        missing = [k for k in ("normal", "urgent") if k not in value]
        if missing:
            raise ValueError(f"missing SLO(s) {', '.join(missing)} (SPEC Q3 asks for both)")
        return value


def load(path: Path) -> SLOFile:
    """Read and validate slo.yaml (errors name file, line and field)."""
    return load_yaml_model(path, SLOFile)


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % Wilson score interval of a proportion k/n (sensible for small n and 0 or n)."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def evaluate(name: str, slo: SLO, lc: pa.Table, as_of: datetime) -> dict[str, Any]:
    """Count, violations, share with CI, verdict; jobs still waiting count once over."""
    selected = slo.selector.mask(lc)
    values = _floats(lc.column(f"{slo.measure}_s").to_pylist())
    still = np.array(lc.column("still_waiting").to_pylist(), dtype=bool)
    since = lc.column(slo.measure.split("_to_")[0]).to_pylist()
    waited_so_far = np.array(
        [np.nan if s is None else (as_of - s).total_seconds() for s in since], dtype=float
    )
    threshold = slo.threshold_minutes * 60
    # A job still waiting has no start yet; once it has waited past the threshold it is a
    # violation whatever happens next; until then it cannot be judged.
    measured = selected & (~np.isnan(values) | (still & (waited_so_far > threshold)))
    violated = measured & (np.where(np.isnan(values), waited_so_far, values) > threshold)
    n, k = int(measured.sum()), int(violated.sum())
    observed = np.sort(np.where(np.isnan(values), waited_so_far, values)[measured])
    if observed.size > CDF_POINTS:  # the report draws a CDF: quantiles keep its shape
        observed = np.quantile(observed, np.linspace(0, 1, CDF_POINTS))
    reasons = lc.column("wait_reason").to_pylist()
    quota = sum(1 for i in np.flatnonzero(violated) if reason_category(reasons[i]) == "quota")
    out: dict[str, Any] = {
        "name": name,
        "description": slo.description,
        "measure": slo.measure,
        "threshold_minutes": slo.threshold_minutes,
        "allowed_violation_share": slo.allowed_violation_share,
        "selected": int(selected.sum()),
        "measured": n,
        "unmeasured": int(selected.sum()) - n,
        "violations": k,
        "violations_waiting_for_quota": quota,
        "violation_share": round(k / n, 4) if n else None,
        "ci95": [round(x, 4) for x in wilson(k, n)] if n else None,
        "waits_s": [round(float(x), 1) for x in observed],
    }
    if n == 0:
        out["verdict"] = "not measurable"
        out["why"] = (
            f"none of the {int(selected.sum())} selected job(s) has the {slo.measure} timestamps"
            if selected.any()
            else "no job in the log matches the selector"
        )
        return out
    lo, hi = wilson(k, n)
    share = k / n
    out["verdict"] = "pass" if share <= slo.allowed_violation_share else "fail"
    out["conclusive"] = bool(hi <= slo.allowed_violation_share or lo > slo.allowed_violation_share)
    return out
