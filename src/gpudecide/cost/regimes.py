"""The three months every option is costed in (SPEC C8), taken from the profile evidence.

- normal: the median 4-week window of the profiled weeks (rolling windows, ranked by GPU-hours);
- peak: the busiest 4-week window;
- empty: no jobs at all: what idle capacity, storage and commitments cost.

A 4-week window is 672 hours; its volumes are scaled to the billing month of costs.yaml
(`hours_per_month`, 730 by default) so that they meet prices quoted per month. With fewer
than four measured weeks the whole measured window is scaled instead, and normal = peak; the
basis of every regime is written next to its figures (a message, and its English).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any, Literal

from gpudecide.errors import InputError
from gpudecide.jobs.columns import KINDS
from gpudecide.message import Message, english, message, nmessage

__all__ = [
    "HOURS_PER_WEEK",
    "REGIMES",
    "WINDOW_WEEKS",
    "ZERO",
    "Regime",
    "Regimes",
    "Workload",
    "dec",
    "from_profile",
]

Regime = Literal["normal", "peak", "empty"]
REGIMES: tuple[Regime, ...] = ("normal", "peak", "empty")
WINDOW_WEEKS = 4
HOURS_PER_WEEK = Decimal(168)
ZERO = Decimal(0)


def dec(value: Any) -> Decimal:
    """A JSON number as an exact Decimal (through its shortest text form)."""
    return Decimal(str(value)) if value is not None else ZERO


@dataclass(frozen=True)
class Workload:
    """One month of the team's GPU work, as the cost model needs it."""

    regime: Regime
    basis_message: Message  # how the month was chosen
    gpu_hours: Decimal  # occupied: every attempt, lost ones included (a managed bill counts them)
    useful_gpu_hours: Decimal  # completed attempts only (C2)
    attempts: Decimal  # job starts: each pays a managed start-up and data load
    jobs_by_kind: dict[str, Decimal]
    kind_gpu_share: dict[str, Decimal]  # estimated share of the month's GPU-hours per kind
    mean_gpus_per_attempt: Decimal
    peak_concurrent_gpus: int
    window: dict[str, Any] | None = None
    # GPUs in use per bucket of the window (the profile keeps each bucket's maximum) and the
    # hours one bucket stands for in this month: enough to say how much work exceeds N GPUs.
    levels: tuple[int, ...] = ()
    bucket_hours: Decimal = ZERO
    # The month before an empty one: its artifacts are still stored while retention lasts.
    prior: Workload | None = None

    @property
    def basis(self) -> str:
        """How the month was chosen, in English."""
        return english(self.basis_message)

    @property
    def trainings(self) -> Decimal:
        """Training jobs in the month (each may leave an endpoint and an export)."""
        return self.jobs_by_kind.get("train", ZERO)

    @property
    def useful_share(self) -> Decimal:
        """Useful over occupied GPU-hours (1 when there is no work)."""
        return self.useful_gpu_hours / self.gpu_hours if self.gpu_hours > 0 else Decimal(1)

    def gpu_hours_of(self, kinds: list[str]) -> Decimal:
        """GPU-hours of these job kinds (an estimate: see `from_profile`)."""
        return self.gpu_hours * sum((self.kind_gpu_share.get(k, ZERO) for k in kinds), ZERO)

    def gpu_hours_above(self, gpus: int) -> Decimal:
        """GPU-hours of demand above `gpus` GPUs in use (an upper bound: bucket maxima)."""
        over = sum((max(0, level - gpus) for level in self.levels), 0)
        return min(self.gpu_hours, Decimal(over) * self.bucket_hours)

    def scaled(self, gpu_factor: Decimal, jobs_factor: Decimal | None = None) -> Workload:
        """The same mix with GPU-hours times `gpu_factor` and jobs times `jobs_factor`.

        Jobs follow GPU-hours unless told otherwise (more jobs of the same length); with a
        separate jobs factor the jobs get shorter or longer instead.
        """
        jf = gpu_factor if jobs_factor is None else jobs_factor
        return replace(
            self,
            gpu_hours=self.gpu_hours * gpu_factor,
            useful_gpu_hours=self.useful_gpu_hours * gpu_factor,
            attempts=self.attempts * jf,
            jobs_by_kind={k: v * jf for k, v in self.jobs_by_kind.items()},
            bucket_hours=self.bucket_hours * gpu_factor,
            prior=self.prior.scaled(gpu_factor, jobs_factor) if self.prior else None,
        )


@dataclass(frozen=True)
class Regimes:
    """The three months and how they were chosen."""

    normal: Workload
    peak: Workload
    empty: Workload
    windows: list[dict[str, Any]]
    note_messages: list[Message]

    @property
    def notes(self) -> list[str]:
        """What the months could not measure or had to assume, in English."""
        return [english(m) for m in self.note_messages]

    def get(self, regime: Regime) -> Workload:
        """The workload of one regime."""
        return {"normal": self.normal, "peak": self.peak, "empty": self.empty}[regime]


def _parse(ts: str) -> datetime:
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


def _bucket_levels(series: dict[str, Any], start: str, end: str) -> tuple[tuple[int, ...], Decimal]:
    """Concurrency buckets inside [start, end) and the hours each stands for."""
    conc = (series or {}).get("concurrency") or {}
    times, gpus = conc.get("t") or [], conc.get("gpus") or []
    if len(times) < 2:
        return (), ZERO
    step_h = dec((_parse(times[1]) - _parse(times[0])).total_seconds()) / Decimal(3600)
    lo, hi = _parse(start), _parse(end)
    levels = tuple(int(g) for t, g in zip(times, gpus, strict=True) if lo <= _parse(t) < hi)
    return levels, step_h


@dataclass
class _Totals:
    """What the regimes read from a profile record, over the whole profile."""

    weeks: list[dict[str, Any]]
    gpu_hours: Decimal
    useful_share: Decimal
    attempts_per_job: Decimal
    mean_gpus: Decimal
    measured_gpus: bool
    peak_all: int
    kind_share: dict[str, Decimal]
    hours_per_job: dict[str, Decimal]

    def window_share(self, jobs: dict[str, int]) -> dict[str, Decimal]:
        """GPU-hour share by kind of a window, estimated from its own jobs of each kind
        (per-window hours by kind are not in the record)."""
        estimate = {k: n * self.hours_per_job.get(k, ZERO) for k, n in jobs.items()}
        total = sum(estimate.values(), ZERO)
        if total <= 0:
            return self.kind_share
        return {k: estimate.get(k, ZERO) / total for k in KINDS}


def _totals(figures: dict[str, Any]) -> _Totals:
    try:
        weeks = list(figures["weeks"])
        total_hours = dec(figures["gpu_hours_total"])
        useful_total = dec(figures["useful_gpu_hours"])
        jobs_total = int(figures["jobs_total"])
        attempts_total = int(figures["attempts_total"])
        by_kind_hours = {k: dec(v) for k, v in figures["gpu_hours_by_kind"].items()}
        by_kind_jobs = {k: int(v) for k, v in figures["jobs_by_kind"].items()}
        peak_all = int(figures["peak_concurrent_gpus"])
        mean_h = (figures.get("duration_hours") or {}).get("mean")
    except KeyError as exc:
        raise InputError(
            "profile evidence lacks the figure {figure!r}",
            field=f"figures.{exc.args[0]}",
            hint="re-run `gpudecide profile` with this version",
            figure=exc.args[0],
        ) from None
    mean_gpus = Decimal(1)
    measured_gpus = figures.get("gpus_per_attempt_mean")
    if measured_gpus:
        # the profile's own mean over attempts: what per-attempt overheads are charged on
        mean_gpus = dec(measured_gpus)
    elif mean_h and attempts_total and total_hours > 0:
        mean_gpus = total_hours / (dec(mean_h) * attempts_total)
    return _Totals(
        weeks=weeks,
        gpu_hours=total_hours,
        useful_share=useful_total / total_hours if total_hours > 0 else Decimal(1),
        attempts_per_job=Decimal(attempts_total) / jobs_total if jobs_total else Decimal(1),
        mean_gpus=mean_gpus,
        measured_gpus=bool(measured_gpus),
        peak_all=peak_all,
        kind_share={
            k: (by_kind_hours.get(k, ZERO) / total_hours if total_hours > 0 else ZERO)
            for k in KINDS
        },
        hours_per_job={
            k: by_kind_hours.get(k, ZERO) / by_kind_jobs[k] for k in KINDS if by_kind_jobs.get(k)
        },
    )


def _measured_weeks(
    figures: dict[str, Any], weeks: list[dict[str, Any]], notes: list[Message]
) -> list[dict[str, Any]]:
    """Weeks wholly before the log began are zeros that were never measured, not idle weeks."""
    covered = (figures.get("window") or {}).get("weeks_covered_by_log")
    if covered is None:
        return weeks
    drop = max(0, min(len(weeks) - 1, int(len(weeks) - float(covered) + 1e-9)))
    if drop:
        notes.append(
            message(
                "cost",
                "the log covers {covered} weeks: the first {drop} week(s) of the profile are "
                "left out of the monthly windows (not measured)",
                covered=covered,
                drop=drop,
            )
        )
    return weeks[drop:]


def _rolling_windows(weeks: list[dict[str, Any]], span: int) -> list[dict[str, Any]]:
    windows: list[dict[str, Any]] = []
    for i in range(len(weeks) - span + 1):
        part = weeks[i : i + span]
        windows.append(
            {
                "weeks": [part[0]["week"], part[-1]["week"]],
                "start": part[0]["start"],
                "end": part[-1]["end"],
                "gpu_hours": sum((dec(w["gpu_hours"]) for w in part), ZERO),
                "jobs_by_kind": {
                    k: sum(int(w["jobs_by_kind"].get(k, 0)) for w in part) for k in KINDS
                },
            }
        )
    return windows


def _pick(
    windows: list[dict[str, Any]], span: int, hours_per_month: Decimal, notes: list[Message]
) -> tuple[int, Message, int, Message]:
    """The normal (lower median) and peak (busiest) window, each with how it was chosen."""
    # Ties go to the earlier window, so the choice is stable across runs.
    ranked = sorted(range(len(windows)), key=lambda i: (windows[i]["gpu_hours"], i))
    normal_i = ranked[(len(ranked) - 1) // 2]  # the lower median: always a real window
    peak_i = max(range(len(windows)), key=lambda i: (windows[i]["gpu_hours"], -i))
    hours, window_hours = _plain(hours_per_month), _plain(HOURS_PER_WEEK * span)
    if span < WINDOW_WEEKS:
        how = message(
            "cost",
            "fewer than {weeks} measured weeks: the whole {span}-week window scaled "
            "x{hours:num}/{window_hours:num} to a {hours:num}-hour month; normal and peak month "
            "are the same",
            weeks=WINDOW_WEEKS,
            span=span,
            hours=hours,
            window_hours=window_hours,
        )
        notes.append(how)
        return normal_i, how, peak_i, how
    # English reads "windows" for one window too, as the basis always has.
    normal_how = nmessage(
        "cost",
        "median of {n} rolling {span}-week windows by GPU-hours (weeks {first}-{last}), scaled "
        "x{hours:num}/{window_hours:num} to a {hours:num}-hour month",
        "median of {n} rolling {span}-week windows by GPU-hours (weeks {first}-{last}), scaled "
        "x{hours:num}/{window_hours:num} to a {hours:num}-hour month",
        n=len(windows),
        span=span,
        first=windows[normal_i]["weeks"][0],
        last=windows[normal_i]["weeks"][1],
        hours=hours,
        window_hours=window_hours,
    )
    peak_how = nmessage(
        "cost",
        "busiest of {n} rolling {span}-week windows (weeks {first}-{last}), scaled "
        "x{hours:num}/{window_hours:num} to a {hours:num}-hour month",
        "busiest of {n} rolling {span}-week windows (weeks {first}-{last}), scaled "
        "x{hours:num}/{window_hours:num} to a {hours:num}-hour month",
        n=len(windows),
        span=span,
        first=windows[peak_i]["weeks"][0],
        last=windows[peak_i]["weeks"][1],
        hours=hours,
        window_hours=window_hours,
    )
    return normal_i, normal_how, peak_i, peak_how


def _plain(value: Decimal) -> int | float:
    """A whole or decimal number of hours, JSON-ready, as its Decimal reads ("730")."""
    return int(value) if value == value.to_integral_value() else float(value)


def _month(
    regime: Regime,
    win: dict[str, Any],
    how: Message,
    t: _Totals,
    series: dict[str, Any],
    scale: Decimal,
) -> Workload:
    levels, step_h = _bucket_levels(series, win["start"], win["end"])
    jobs = {k: Decimal(n) * scale for k, n in win["jobs_by_kind"].items()}
    hours = win["gpu_hours"] * scale
    return Workload(
        regime=regime,
        basis_message=how,
        gpu_hours=hours,
        useful_gpu_hours=hours * t.useful_share,
        attempts=sum(jobs.values(), ZERO) * t.attempts_per_job,
        jobs_by_kind=jobs,
        kind_gpu_share=t.window_share(win["jobs_by_kind"]),
        mean_gpus_per_attempt=t.mean_gpus,
        peak_concurrent_gpus=max(levels) if levels else t.peak_all,
        window={"weeks": win["weeks"], "start": win["start"], "end": win["end"]},
        levels=levels,
        bucket_hours=step_h * scale,
    )


def _empty(t: _Totals, normal: Workload) -> Workload:
    return Workload(
        regime="empty",
        basis_message=message(
            "cost",
            "no jobs for a whole month after normal months: idle capacity, storage, commitments",
        ),
        gpu_hours=ZERO,
        useful_gpu_hours=ZERO,
        attempts=ZERO,
        jobs_by_kind=dict.fromkeys(KINDS, ZERO),
        kind_gpu_share=t.kind_share,
        mean_gpus_per_attempt=t.mean_gpus,
        peak_concurrent_gpus=0,
        prior=normal,
    )


def from_profile(figures: dict[str, Any], hours_per_month: Decimal) -> Regimes:
    """Normal, peak and empty month of the profiled log (SPEC C8)."""
    t = _totals(figures)
    notes: list[Message] = []
    weeks = _measured_weeks(figures, t.weeks, notes)
    span = min(WINDOW_WEEKS, len(weeks))
    windows = _rolling_windows(weeks, span)
    scale = hours_per_month / (HOURS_PER_WEEK * span)
    normal_i, normal_how, peak_i, peak_how = _pick(windows, span, hours_per_month, notes)
    series = figures.get("series") or {}
    normal = _month("normal", windows[normal_i], normal_how, t, series, scale)
    peak = _month("peak", windows[peak_i], peak_how, t, series, scale)
    if t.gpu_hours > 0 and not t.measured_gpus:
        notes.append(
            message(
                "cost",
                "per-attempt overheads (managed start-up, data loading, billing increment) are "
                "charged on {gpus:.2f} GPUs: GPU-hours over attempt-hours, so long, wide jobs "
                "weigh more (the profile evidence has no per-job GPU count)",
                gpus=float(t.mean_gpus.quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN)),
            )
        )
    if t.useful_share < 1:
        notes.append(
            message(
                "cost",
                "useful GPU-hours are {share:pct} of occupied GPU-hours over the profile "
                "(completed attempts); each month uses that share",
                share=float(t.useful_share.quantize(Decimal("0.001"), rounding=ROUND_HALF_EVEN)),
            )
        )
    public = [
        {**w, "gpu_hours": str(round(w["gpu_hours"], 3)), "jobs": sum(w["jobs_by_kind"].values())}
        for w in windows
    ]
    for w in public:
        del w["jobs_by_kind"]
    return Regimes(
        normal=normal, peak=peak, empty=_empty(t, normal), windows=public, note_messages=notes
    )
