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
import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from gpudecide.errors import TemplateError
from gpudecide.inputs import load_yaml_model
from gpudecide.jobs.classify import Kind
from gpudecide.jobs.load import IanaZone
from gpudecide.jobs.schema import KINDS
from gpudecide.message import Message, english, message, nmessage
from gpudecide.queue.figures import Measure, SloFigures
from gpudecide.queue.lifecycle import reason_category
from gpudecide.queue.words import VERDICTS, word_message

__all__ = [
    "CAUSES",
    "CDF_POINTS",
    "SETTLE_MAX_JOBS",
    "SLO",
    "THRESHOLD_MAX_MINUTES",
    "Range",
    "SLOFile",
    "Selector",
    "TimeOfDay",
    "Weekday",
    "evaluate",
    "jobs_to_settle",
    "load",
    "selector_findings",
    "selector_text",
    "why_message",
    "wilson",
]

Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
_WEEKDAYS: tuple[Weekday, ...] = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
CDF_POINTS = 500
# Ten years: a longer wait is no queue wait (and a larger figure overflows in seconds).
THRESHOLD_MAX_MINUTES = 5_256_000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Range(_Strict):
    """Inclusive numeric range; a missing end is open."""

    min: float | None = Field(
        default=None, allow_inf_nan=False, description="Smallest value included."
    )
    max: float | None = Field(
        default=None, allow_inf_nan=False, description="Largest value included."
    )

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
            raise TemplateError("{value} is not HH:MM", value=repr(value)) from None
        return value

    @model_validator(mode="after")
    def _not_empty(self) -> TimeOfDay:
        # start == end reads as "all day" to some and "never" to others: neither is guessed.
        if time.fromisoformat(self.start) == time.fromisoformat(self.end):
            raise ValueError(
                "start equals end, so the window is empty: leave time_of_day out to select "
                "every time of day"
            )
        return self

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
    threshold_minutes: float = Field(
        gt=0,
        le=THRESHOLD_MAX_MINUTES,
        allow_inf_nan=False,
        description="A wait above this is a violation.",
    )
    allowed_violation_share: float = Field(
        ge=0,
        le=1,
        allow_inf_nan=False,
        description="Share of selected jobs allowed to violate (0.05 = 5 %).",
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
            raise TemplateError(
                "missing SLO(s) {join} (SPEC Q3 asks for both)", join=", ".join(missing)
            )
        return value


def load(path: Path) -> SLOFile:
    """Read and validate slo.yaml (errors name file, line and field)."""
    return load_yaml_model(path, SLOFile)


def wilson(k: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % Wilson score interval of a proportion k/n (sensible for small n and 0 or n).

    k may be fractional: `jobs_to_settle` asks about a sample at exactly today's share."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


# Wait-reason categories grouped by who can act on them (Q2, issue: urgent SLO violations
# caused by the team's own limits are not capacity waits).
CAUSES: dict[str, str] = {
    "capacity": "capacity",
    "quota": "own_limits",
    "array_limit": "own_limits",
    "dependency": "team_choice",
    "hold": "team_choice",
    "begin_time": "team_choice",
}
# Beyond this many jobs a sample settles nothing a team could wait for.
SETTLE_MAX_JOBS = 10_000_000


def _conclusive(k: float, n: int, allowed: float) -> bool:
    """The whole interval on one side of the allowed share (Q3): at or under it, or above."""
    lo, hi = wilson(k, n)
    return hi <= allowed or lo > allowed


def jobs_to_settle(k: int, n: int, allowed: float) -> int | None:
    """How many more jobs, violating at today's share, would make the interval exclude the
    allowed share (None: never, e.g. when the share equals the allowed one).

    The sample of `total` jobs keeps today's share exactly (a fractional count): rounding the
    count would move the share with every total and make the answer jump back and forth. At
    a fixed share the interval closes in on it as the sample grows, so once a size settles
    it every larger one does, and a bisection finds the smallest."""
    if n == 0 or _conclusive(k, n, allowed):
        return 0 if n else None
    share = k / n

    def settles(total: int) -> bool:
        return _conclusive(share * total, total, allowed)

    hi = 2 * n
    while not settles(hi):
        hi *= 2
        if hi > SETTLE_MAX_JOBS:
            return None
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if settles(mid) else (mid, hi)
    return hi - n


def _causes(violated: np.ndarray, weights: np.ndarray, reasons: list[Any]) -> dict[str, int]:
    out = {"capacity": 0, "own_limits": 0, "team_choice": 0, "other": 0}
    for i in np.flatnonzero(violated):
        category = reason_category(reasons[i])
        out[CAUSES.get(category or "", "other")] += int(weights[i])
    return out


def _verdict(out: dict[str, Any], k: int, n: int, allowed: float) -> None:
    """pass/fail only when the 95 % interval is on one side of the allowed share (Q3)."""
    point = "pass" if k / n <= allowed else "fail"
    conclusive = _conclusive(k, n, allowed)
    out["point_estimate"] = point
    out["conclusive"] = conclusive
    out["verdict"] = point if conclusive else "inconclusive"
    out["more_jobs_to_settle"] = None if conclusive else jobs_to_settle(k, n, allowed)


def why_message(s: SloFigures) -> Message:
    """Why an evaluated SLO has its verdict, in one sentence: the share of violations with
    its interval against the allowed share, what the sample cannot tell, and the violations
    that waited on the team's own limits (Q2, Q3)."""
    n_selected, n, k = s.selected, s.measured, s.violations
    if n == 0:
        if not n_selected:
            return message("queue", "no job in the log matches the selector")
        return nmessage(
            "queue",
            "none of the {n} selected job(s) has the {measure} timestamps",
            "none of the {n} selected job(s) has the {measure} timestamps",
            n=n_selected,
            measure=s.measure,
        )
    lo, hi = wilson(k, n)
    values: dict[str, Any] = {
        "k": k,
        "n": n,
        "minutes": s.threshold_minutes,
        "share": k / n,
        "lo": lo,
        "hi": hi,
        "allowed": s.allowed_violation_share,
    }
    parts: list[Message] = []
    if s.conclusive:
        parts.append(
            nmessage(
                "queue",
                "{k} of {n} jobs waited longer than {minutes:g} min ({share:.1%}, 95 % interval "
                "{lo:.1%}-{hi:.1%}) against {allowed:.0%} allowed",
                "{k} of {n} jobs waited longer than {minutes:g} min ({share:.1%}, 95 % interval "
                "{lo:.1%}-{hi:.1%}) against {allowed:.0%} allowed",
                **values,
            )
        )
    else:
        parts.append(
            nmessage(
                "queue",
                "{k} of {n} jobs waited longer than {minutes:g} min ({share:.1%}, 95 % interval "
                "{lo:.1%}-{hi:.1%}) against {allowed:.0%} allowed: the interval holds the "
                "allowed share, so the sample cannot tell",
                "{k} of {n} jobs waited longer than {minutes:g} min ({share:.1%}, 95 % interval "
                "{lo:.1%}-{hi:.1%}) against {allowed:.0%} allowed: the interval holds the "
                "allowed share, so the sample cannot tell",
                **values,
            )
        )
        point = word_message(VERDICTS, str(s.point_estimate))
        more = s.more_jobs_to_settle
        if more:
            parts.append(
                nmessage(
                    "queue",
                    "the point estimate leans to {point}, about {more} more jobs at this share "
                    "would settle it",
                    "the point estimate leans to {point}, about {more} more jobs at this share "
                    "would settle it",
                    count="more",
                    point=point,
                    more=more,
                )
            )
        else:
            parts.append(message("queue", "the point estimate leans to {point}", point=point))
            parts.append(message("queue", "no sample size settles it at this share"))
    causes = s.violations_by_cause
    if causes.own_limits:
        parts.append(
            nmessage(
                "queue",
                "{own} of the violations waited on the team's own limits (array task limits, "
                "quotas), {capacity} on capacity",
                "{own} of the violations waited on the team's own limits (array task limits, "
                "quotas), {capacity} on capacity",
                count="own",
                own=causes.own_limits,
                capacity=causes.capacity,
            )
        )
    return parts[0] if len(parts) == 1 else message("queue", "{clauses}", clauses=parts)


def evaluate(name: str, slo: SLO, lc: pa.Table, as_of: datetime) -> dict[str, Any]:
    """Count, violations, share with CI, verdict; jobs still waiting count once over.

    Jobs are counted in tasks (a pending array range is each of its tasks). The verdict is
    `inconclusive` while the 95 % Wilson interval holds the allowed share; the point
    estimate and the jobs that would settle it stand beside it.
    """
    selected = slo.selector.mask(lc)
    values = _floats(lc.column(f"{slo.measure}_s").to_pylist())
    still = np.array(lc.column("still_waiting").to_pylist(), dtype=bool)
    weights = np.array(lc.column("tasks").to_pylist(), dtype=np.int64)
    since = lc.column(slo.measure.split("_to_")[0]).to_pylist()
    waited_so_far = np.array(
        [np.nan if s is None else (as_of - s).total_seconds() for s in since], dtype=float
    )
    threshold = slo.threshold_minutes * 60
    # A job still waiting has no start yet; once it has waited past the threshold it is a
    # violation whatever happens next; until then it cannot be judged.
    measured = selected & (~np.isnan(values) | (still & (waited_so_far > threshold)))
    violated = measured & (np.where(np.isnan(values), waited_so_far, values) > threshold)
    n, k = int(weights[measured].sum()), int(weights[violated].sum())
    observed = np.sort(np.where(np.isnan(values), waited_so_far, values)[measured])
    if observed.size > CDF_POINTS:  # the report draws a CDF: quantiles keep its shape
        observed = np.quantile(observed, np.linspace(0, 1, CDF_POINTS))
    reasons = lc.column("wait_reason").to_pylist()
    causes = _causes(violated, weights, reasons)
    quota = sum(
        int(weights[i]) for i in np.flatnonzero(violated) if reason_category(reasons[i]) == "quota"
    )
    n_selected = int(weights[selected].sum())
    kinds = lc.column("kind").to_pylist()
    by_kind: dict[str, int] = {}
    for i in np.flatnonzero(selected):
        kind = str(kinds[i] or "other")
        by_kind[kind] = by_kind.get(kind, 0) + int(weights[i])
    order = {k: i for i, k in enumerate(KINDS)}
    out: dict[str, Any] = {
        "name": name,
        "description": slo.description,
        "measure": slo.measure,
        "threshold_minutes": slo.threshold_minutes,
        "allowed_violation_share": slo.allowed_violation_share,
        "selected": n_selected,
        "measured": n,
        "unmeasured": n_selected - n,
        "violations": k,
        "violations_waiting_for_quota": quota,
        "violations_by_cause": causes,
        "violation_share": round(k / n, 4) if n else None,
        "ci95": [round(x, 4) for x in wilson(k, n)] if n else None,
        "waits_s": [round(float(x), 1) for x in observed],
    }
    if n == 0:
        out["verdict"] = "not measurable"
        out["conclusive"] = False
        out["point_estimate"] = None
        out["more_jobs_to_settle"] = None
    else:
        _verdict(out, k, n, slo.allowed_violation_share)
    # The why is said from the figures it explains (a record's reader can say it again).
    out["why"] = english(why_message(SloFigures.model_validate({**out, "why": ""})))
    out["selector"] = _as_written(slo.selector.model_dump(mode="json", exclude_none=True))
    out["selected_by_kind"] = dict(
        sorted(by_kind.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0]))
    )
    return out


def _as_written(value: Any) -> Any:
    """A selector's values as a person writes them: a whole-number bound without `.0`."""
    if isinstance(value, dict):
        return {k: _as_written(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_written(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def selector_text(selector: dict[str, Any] | None) -> str:
    """A selector as slo.yaml writes it, on one line (`{kinds: [eval], gpus: {max: 2}}`);
    `{}` selects every job."""
    if not selector:
        return "{}"
    text = yaml.safe_dump(selector, default_flow_style=True, sort_keys=False, width=10_000)
    return text.strip()


def selector_findings(s: SloFigures, log_kinds: list[str]) -> list[Message]:
    """What a reader must know about the jobs an SLO selects, said plainly (Q3, issue 22):
    no job at all; jobs of every kind (no kind condition, or its kinds are every kind the
    log has); any GPU class or any site (those conditions empty); and for the urgent SLO,
    nothing that tells an urgent job from an ordinary one of the same kinds."""
    if s.selector is None:  # a record from before the selector was kept
        return []
    given = s.selector
    out: list[Message] = []
    if not s.selected:
        out.append(message("queue", "it selects no job of the log"))
    kinds = sorted(k for k, n in (s.selected_by_kind or {}).items() if n)
    present = sorted(set(log_kinds))
    if "kinds" not in given:
        out.append(message("queue", "no kind condition: it selects jobs of every kind"))
    elif len(present) > 1 and kinds == present:
        out.append(
            message(
                "queue",
                "it selects jobs of every kind the log has ({kinds})",
                kinds=", ".join(present),
            )
        )
    if "gpu_class" not in given:
        out.append(message("queue", "no GPU class condition: jobs on any GPU class count"))
    if "sites" not in given:
        out.append(message("queue", "no site condition: jobs at any site count"))
    if s.name == "urgent" and "priority" not in given and "priority_class" not in given:
        out.append(
            message(
                "queue",
                "no priority or priority class condition: an ordinary job of the kinds it "
                "selects counts as urgent",
            )
        )
    return out
