"""The cost analysis: every option in a normal, a peak and an empty month (SPEC C1-C10, V2).

Reads costs.yaml, the profile evidence (the team's measured workload) and, when there is one,
the pool replay evidence (how long jobs wait on a pool of N GPUs). Writes one evidence record
of kind "cost". Money in the figures is a decimal string in the file's currency (exact, and
JSON has no decimal type); GPU-hours and shares are numbers. Every text a person reads (a
cost line, how a month was chosen, a peak check, the findings, the summary and the notes) is
stored as a message next to its English, so it is said in the reader's language where it is
shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gpudecide import evidence as ev
from gpudecide.cost import sensitivity, utilisation, words
from gpudecide.cost.figures import CostFigures
from gpudecide.cost.regimes import REGIMES, Regimes, Workload, from_profile
from gpudecide.cost.schema import (
    CostsConfig,
    HybridOption,
    Loc,
    ManagedOption,
    Option,
    OwnedOption,
    RentedOption,
    dotted,
    iter_prices,
)
from gpudecide.cost.tco import (
    COMPONENTS,
    MonthCost,
    cents,
    month_cost,
    pool_gpus,
    shrinking,
)
from gpudecide.cost.words import figure
from gpudecide.message import Message, english, message, nmessage, record_texts

__all__ = [
    "CURVE_POINTS",
    "NEAR_FULL",
    "PLACEHOLDER",
    "CostResult",
    "analyse",
    "break_even",
    "option_type",
    "peak_check",
    "summary_line",
    "summary_message",
    "to_evidence",
    "utilisation_findings",
]

# C8: a dedicated option that beats managed only at or above this useful utilisation "only
# wins at ~100 %": research work with failed hypotheses and pauses does not get there.
NEAR_FULL = Decimal("0.9")
# A price whose source still says this comes from the template, not from a contract (C5).
PLACEHOLDER = "placeholder"
# Where the cost-per-useful-GPU-hour curves are sampled, as shares of the useful utilisation a
# pool can reach at most (failed attempts occupy it too).
CURVE_POINTS = (0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


@dataclass
class CostResult:
    """The figures the evidence record keeps (`figures`, JSON; `model`, the same as
    `CostFigures`) and its notes (in English; their messages are `model.messages.notes`)."""

    model: CostFigures
    figures: dict[str, Any]
    notes: list[str]
    verdict: ev.Verdict


def _h(value: Decimal) -> float:
    return round(float(value), 3)


def _share(value: Decimal | None) -> float | None:
    return None if value is None else round(float(value), 4)


def _money(value: Decimal | None) -> str | None:
    return None if value is None else str(cents(value))


def option_type(option: Option) -> str:
    """owned | rented | managed | hybrid."""
    return {
        OwnedOption: "owned",
        RentedOption: "rented",
        ManagedOption: "managed",
        HybridOption: "hybrid",
    }[type(option)]


def _month_json(mc: MonthCost) -> dict[str, Any]:
    return {
        "components": {c: str(cents(v)) for c, v in mc.components.items()},
        "total": str(cents(mc.total)),
        "useful_gpu_hours": _h(mc.useful_gpu_hours),
        "available_gpu_hours": _h(mc.available_gpu_hours),
        "demand_gpu_hours": _h(mc.demand_gpu_hours),
        "useful_utilisation": _share(mc.useful_utilisation),
        "cost_per_useful_gpu_hour": _money(mc.cost_per_useful_gpu_hour),
        "lines": [
            {
                "component": ln.component,
                "label": ln.label,
                "label_message": ln.text,
                "amount": str(ln.amount),
                "source": ln.source,
            }
            for ln in mc.lines
        ],
        "notes": mc.notes,
    }


def _replay_pool(
    replays: list[ev.Evidence], gpus: int
) -> tuple[ev.Evidence, dict[str, Any]] | None:
    """The replay of a pool of `gpus` GPUs: a peak-window replay first, then the newest."""
    found: list[tuple[int, int, ev.Evidence, dict[str, Any]]] = []
    for age, record in enumerate(reversed(replays)):
        window = (record.figures.get("window") or {}).get("kind")
        for pool in record.figures.get("pools") or []:
            if isinstance(pool, dict) and pool.get("gpus") == gpus:
                found.append((0 if window == "peak" else 1, age, record, pool))
    if not found:
        return None
    _, _, record, pool = min(found, key=lambda x: (x[0], x[1]))
    return record, pool


def peak_check(
    cfg: CostsConfig, option: Option, peak: Workload, replays: list[ev.Evidence]
) -> dict[str, Any] | None:
    """C8 peak month: can the dedicated pool take the parallel jobs? `outcome` is what the
    check found (absorbed, not_absorbed, never_fits, unsettled, not_measured), `absorbs` the
    same as a yes / no / cannot say, `meaning` the sentence (`meaning_message`: as a message),
    chosen from the figures it states."""
    gpus = pool_gpus(cfg, option)
    if gpus is None:
        return None
    capacity = Decimal(gpus) * cfg.hours_per_month
    out: dict[str, Any] = {
        "pool_gpus": gpus,
        "peak_month_gpu_hours": _h(peak.gpu_hours),
        "pool_gpu_hours": _h(capacity),
        "peak_concurrent_gpus": peak.peak_concurrent_gpus,
    }
    if isinstance(option, HybridOption):
        over = option.overflow_rule
        out["source"] = "profile"
        if over.rule == "over_capacity":
            meaning = message(
                "cost",
                "demand above {gpus} goes to {option}",
                gpus=words.gpus(gpus),
                option=option.overflow,
            )
            return _meaning(out, "absorbed", meaning)
        meaning = message(
            "cost",
            "kinds {kinds} go to {option}; the concurrency of the jobs left on the base "
            "pool is not in the profile evidence",
            kinds=list(over.kinds),
            option=option.overflow,
        )
        return _meaning(out, "not_measured", meaning)
    found = _replay_pool(replays, gpus)
    if found is not None:
        return _replay_check(out, *found, peak, gpus)
    out["source"] = "profile"
    pool, seen = words.gpus(gpus), words.gpus(peak.peak_concurrent_gpus)
    if peak.peak_concurrent_gpus > gpus:
        meaning = message(
            "cost",
            "no replay of a pool of {gpus} in the evidence: the profile's peak of {peak} in use "
            "at once is compared with the pool (jobs queue); run `gpudecide replay` for the "
            "waits",
            gpus=pool,
            peak=seen,
        )
        return _meaning(out, "not_absorbed", meaning)
    if peak.gpu_hours > capacity:
        meaning = message(
            "cost",
            "no replay of a pool of {gpus} in the evidence: the peak month asks for {asked}, "
            "more than the pool's {has}: work waits into the next month; run `gpudecide "
            "replay` for the waits",
            gpus=pool,
            asked=words.gpu_hours(peak.gpu_hours),
            has=words.gpu_hours(capacity),
        )
        return _meaning(out, "not_absorbed", meaning)
    meaning = message(
        "cost",
        "no replay of a pool of {gpus} in the evidence: the profile's peak of {peak} in use "
        "at once is compared with the pool (fits); run `gpudecide replay` for the waits",
        gpus=pool,
        peak=seen,
    )
    return _meaning(out, "absorbed", meaning)


# What the peak check's outcome says as a yes / no / cannot say (the record's `absorbs`).
_ABSORBS: dict[str, bool | None] = {
    "absorbed": True,
    "not_absorbed": False,
    "never_fits": False,
    "unsettled": None,
    "not_measured": None,
}


def _meaning(out: dict[str, Any], outcome: str, meaning: Message) -> dict[str, Any]:
    """The peak check with its outcome and what it found, in English and as a message."""
    out["absorbs"] = _ABSORBS[outcome]
    out["outcome"] = outcome
    out["meaning"] = english(meaning)
    out["meaning_message"] = meaning
    return out


def _waited(pool: dict[str, Any]) -> bool | None:
    """Whether any replayed job waited (None when the replay did not say)."""
    worst = pool.get("wait_max_s")
    if worst is None:
        worst = pool.get("wait_p95_s")
        if worst is not None and float(worst) == 0:
            return None  # the 95th percentile did not wait; the rest is not known
    return None if worst is None else float(worst) > 0


def _replay_outcome(
    unplaceable: int, within_slo: bool | None, exceeds: bool, waited: bool | None
) -> str:
    """What the replay of this pool, with the log's own peak, says about the peak month.

    The same replay scores the queue (`gpudecide.queue.rules`): a pool whose SLO holds is
    never called not absorbed here, one whose SLO fails never absorbed, and jobs that never
    fit fail both. A log with more GPUs in use at once than the pool holds other pools' jobs
    or names the wrong pool size (issue 9): the peak stays unsettled until that is known.
    """
    if unplaceable:
        return "never_fits"
    if within_slo is False:
        return "not_absorbed"
    if exceeds:
        return "unsettled"
    if within_slo is True or waited is False:
        return "absorbed"
    return "unsettled"  # waits without an SLO to judge them by


def _replay_check(
    out: dict[str, Any], record: ev.Evidence, pool: dict[str, Any], peak: Workload, gpus: int
) -> dict[str, Any]:
    """The peak check from the replay of a pool this size: waits, SLO, jobs that never fit,
    and the log's own peak, in one sentence that follows from its figures."""
    slo = record.figures.get("slo") or None
    unplaceable = int(pool.get("jobs_unplaceable") or 0)
    violation = pool.get("slo_violation_share")
    allowed = slo.get("allowed_violation_share") if slo else None
    within_slo = (
        None if violation is None or allowed is None else float(violation) <= float(allowed)
    )
    exceeds = peak.peak_concurrent_gpus > gpus
    waited = _waited(pool)
    outcome = _replay_outcome(unplaceable, within_slo, exceeds, waited)
    out.update(
        {
            "source": "replay",
            "replay_id": record.id,
            "window": (record.figures.get("window") or {}).get("kind"),
            "policy": record.figures.get("policy"),
            "wait_p50_s": pool.get("wait_p50_s"),
            "wait_p95_s": pool.get("wait_p95_s"),
            "wait_max_s": pool.get("wait_max_s"),
            "longest_queue": pool.get("longest_queue"),
            "jobs_unplaceable": unplaceable,
            "slo": slo,
            "slo_violation_share": violation,
            "recommended_gpus": record.figures.get("recommended_gpus"),
        }
    )
    parts: list[Message] = []
    # Jobs that never fit lead the line: a short wait of the rest must not hide them.
    if unplaceable:
        parts.append(
            nmessage(
                "cost",
                "{n} job larger than the pool ({gpus}) can never run here",
                "{n} jobs larger than the pool ({gpus}) can never run here",
                n=unplaceable,
                gpus=words.gpus(gpus),
            )
        )
    parts.append(_replay_waits(gpus, out, pool))
    if slo and violation is not None:
        parts.append(_slo_clause(str(slo.get("name")), float(violation), allowed, within_slo))
    if exceeds:
        parts.append(
            message(
                "cost",
                "the log shows {peak} in use at once, more than the pool: it holds jobs of other "
                "pools too, or the pool size is wrong",
                peak=words.gpus(peak.peak_concurrent_gpus),
            )
        )
    conclusion = _conclusion(outcome, exceeds, waited)
    if conclusion is not None:
        parts.append(conclusion)
    return _meaning(out, outcome, message("cost", "{parts}", parts=parts))


def _slo_clause(name: str, violation: float, allowed: object, within_slo: bool | None) -> Message:
    """The replay's SLO share, against the allowed share when the SLO gives one."""
    if within_slo is None:
        return message(
            "cost", "SLO {slo} violated by {share:pct} of jobs", slo=name, share=violation
        )
    args = {"slo": name, "share": violation, "allowed": float(str(allowed))}
    if within_slo:
        return message(
            "cost",
            "SLO {slo} violated by {share:pct} of jobs, within the {allowed:pct} allowed",
            **args,
        )
    return message(
        "cost",
        "SLO {slo} violated by {share:pct} of jobs, more than the {allowed:pct} allowed",
        **args,
    )


def _conclusion(outcome: str, exceeds: bool, waited: bool | None) -> Message | None:
    """What the peak check concludes, in words that follow from the clauses before it."""
    if outcome == "absorbed":
        if waited is False:
            return message("cost", "no job waited: the pool takes the peak")
        return message("cost", "the pool takes the peak within the SLO")
    if outcome == "not_absorbed":
        return message(
            "cost", "jobs wait longer than the SLO allows: the pool does not take the peak"
        )
    if outcome == "unsettled":
        if exceeds:
            return message(
                "cost",
                "the peak is not called absorbed until it is settled whether the log is this "
                "pool's alone",
            )
        return message(
            "cost",
            "no SLO says whether these waits are acceptable: name one in gpudecide.yaml",
        )
    return None  # never_fits: the first clause says it


def _replay_waits(gpus: int, out: dict[str, Any], pool: dict[str, Any]) -> Message:
    """The waits the replay of this pool measured."""
    p95, worst = pool.get("wait_p95_s"), pool.get("wait_max_s")
    window = words.window_word(out["window"])
    if worst is None:
        return message(
            "cost",
            "replay of {gpus} ({window}, {policy}): wait p95 {p95}",
            gpus=words.gpus(gpus),
            window=window,
            policy=out["policy"],
            p95=_wait(p95),
        )
    return message(
        "cost",
        "replay of {gpus} ({window}, {policy}): wait p95 {p95}, max {max}",
        gpus=words.gpus(gpus),
        window=window,
        policy=out["policy"],
        p95=_wait(p95),
        max=_wait(worst),
    )


def _wait(seconds: float | None) -> Message:
    if seconds is None:
        return message("cost", "n/a")
    if seconds < 3600:
        return message("cost", "{n:.0f} min", n=seconds / 60)
    return message("cost", "{n:.1f} h", n=seconds / 3600)


def _measured_waits(
    cfg: CostsConfig, option: Option, check: dict[str, Any] | None
) -> list[Message]:
    """C7: what was measured about waiting next to the consequence the team wrote."""
    out: list[Message] = []
    if check is not None:
        out.append(check["meaning_message"])
    managed = option if isinstance(option, ManagedOption) else None
    if isinstance(option, HybridOption):
        over = cfg.option(option.overflow)
        managed = over if isinstance(over, ManagedOption) else None
    if managed is not None:
        load = cfg.data.loaded_gb_per_job * managed.loading_minutes_per_gb
        out.append(
            message(
                "cost",
                "{option}: environment start-up {startup:num} min and data loading {loading:num} "
                "min per job, from the contract (not measured; the queue evidence measures "
                "submit-to-start)",
                option=managed.id,
                startup=figure(managed.startup_minutes_per_job),
                loading=figure(load),
            )
        )
    return out


def _reference(regimes: Regimes) -> Workload | None:
    """The month whose job mix the utilisation sweep scales (normal, else peak)."""
    for w in (regimes.normal, regimes.peak):
        if w.useful_gpu_hours > 0:
            return w
    return None


def _at(ref: Workload, useful_hours: Decimal) -> Workload:
    return ref.scaled(useful_hours / ref.useful_gpu_hours)


def break_even(
    cfg: CostsConfig, dedicated: Option, managed: ManagedOption, ref: Workload
) -> dict[str, Any]:
    """Useful utilisation of the dedicated pool at which both cost the same in a month.

    Both costs are linear in the work while the pool is not full, so two points settle the
    line: f(u) = dedicated - managed at u = s/4 and u = s/2, where s is the useful share (a
    pool cannot be more useful than that: failed attempts occupy it too).
    """
    gpus = pool_gpus(cfg, dedicated)
    assert gpus is not None
    capacity = Decimal(gpus) * cfg.hours_per_month
    s = ref.useful_share

    def f(u: Decimal) -> Decimal:
        w = _at(ref, u * capacity)
        return month_cost(cfg, dedicated, w).total - month_cost(cfg, managed, w).total

    u1, u2 = s / 4, s / 2
    f1, f2 = f(u1), f(u2)
    slope = (f2 - f1) / (u2 - u1)
    if slope == 0:
        u_star = None
        side = "always" if f1 < 0 else "never"
    else:
        u_star = u1 - f1 / slope
        if slope < 0:  # dedicated gains as the pool fills
            side = "always" if u_star <= 0 else ("never" if u_star >= s else "above")
        else:
            side = "never" if u_star <= 0 else ("always" if u_star >= s else "below")
    return {
        "dedicated": dedicated.id,
        "managed": managed.id,
        "break_even_useful_utilisation": _share(u_star),
        "dedicated_cheaper": side,
        "achievable_max": _share(s),
    }


def _curves(
    cfg: CostsConfig, dedicated: Option, managed: list[ManagedOption], ref: Workload
) -> dict[str, Any]:
    """Cost per useful GPU-hour against the dedicated pool's useful utilisation (chart data)."""
    gpus = pool_gpus(cfg, dedicated)
    assert gpus is not None
    capacity = Decimal(gpus) * cfg.hours_per_month
    s = ref.useful_share
    points = [Decimal(str(p)) * s for p in CURVE_POINTS]
    series: dict[str, list[str]] = {dedicated.id: []}
    for m in managed:
        series[m.id] = []
    for u in points:
        w = _at(ref, u * capacity)
        for option in (dedicated, *managed):
            per_hour = month_cost(cfg, option, w).total / w.useful_gpu_hours
            series[option.id].append(str(cents(per_hour)))
    return {
        "dedicated": dedicated.id,
        "pool_gpus": gpus,
        "useful_utilisation": [_share(u) for u in points],
        "cost_per_useful_gpu_hour": series,
    }


def utilisation_findings(
    pairs: list[dict[str, Any]], seen: Mapping[str, list[Message]], pools: Mapping[str, int]
) -> list[Message]:
    """C8: decisions that win only above the utilisation actually seen.

    `seen` names what was observed on each dedicated option (its named figures), `pools` its
    pool size. Each finding is a message (id and arguments, rendered in the reader's
    language) and its English text, stored on the pair as `finding`.
    """
    out: list[Message] = []
    for p in pairs:
        d = p["dedicated"]
        seen_msg = message("cost", "observed: {seen}", seen=list(seen.get(d) or []))
        u = p["break_even_useful_utilisation"]
        normal = p.get("observed_normal")
        msg: Message | None = None
        args = {"dedicated": d, "managed": p["managed"], "gpus": pools.get(d), "seen": seen_msg}
        if p["dedicated_cheaper"] == "above" and u is not None and (normal or 0) < u:
            msg = (
                message(
                    "cost",
                    "{dedicated} is cheaper than {managed} only above {u:pct} useful "
                    "utilisation of its {gpus}-GPU pool (only at ~100 % utilisation); {seen}",
                    u=u,
                    **args,
                )
                if u >= float(NEAR_FULL)
                else message(
                    "cost",
                    "{dedicated} is cheaper than {managed} only above {u:pct} useful "
                    "utilisation of its {gpus}-GPU pool; {seen}",
                    u=u,
                    **args,
                )
            )
        elif p["dedicated_cheaper"] == "never":
            msg = message(
                "cost",
                "{dedicated} is never cheaper than {managed} at a utilisation this workload "
                "can reach (at most {max:pct} useful utilisation of its {gpus}-GPU pool: "
                "failed attempts occupy the pool too); {seen}",
                max=p["achievable_max"],
                **args,
            )
        p["finding"] = english(msg) if msg else None
        if msg:
            out.append(msg)
    return out


def analyse(
    cfg: CostsConfig,
    profile: ev.Evidence,
    replays: list[ev.Evidence] | None = None,
    *,
    profile_fresh: bool = True,
) -> CostResult:
    """Cost every option in three months, with break-evens, findings and sensitivity."""
    replays = replays or []
    regimes = from_profile(profile.figures, cfg.hours_per_month)
    notes = list(regimes.note_messages)
    if not profile_fresh:
        notes.append(
            message(
                "cost",
                "profile evidence {id} is not fresh: its log changed or is gone",
                id=profile.id,
            )
        )
    # A building block of a hybrid (standalone: false) is costed inside the hybrid only: on
    # its own it would be charged with the whole workload it never carries.
    standalone = cfg.compared()
    months: dict[str, dict[str, MonthCost]] = {
        o.id: {r: month_cost(cfg, o, regimes.get(r)) for r in REGIMES} for o in standalone
    }
    options_json = [_option_json(cfg, o, months[o.id], regimes, replays, notes) for o in standalone]
    cheapest: dict[str, str | None] = {
        r: min(standalone, key=lambda o: months[o.id][r].total).id if standalone else None
        for r in REGIMES
    }
    pairs, curves = _break_evens(cfg, standalone, months, regimes, notes)
    gpus_of = {o.id: pool_gpus(cfg, o) for o in standalone}
    shares = utilisation.named_shares(standalone, gpus_of, months, regimes, profile, replays)
    finding_msgs = utilisation_findings(
        pairs,
        {o.id: utilisation.observed(shares, o.id) for o in standalone},
        {oid: g for oid, g in gpus_of.items() if g is not None},
    )
    placeholders = _placeholder_note(cfg, notes)
    sens = sensitivity.tornado(cfg, regimes.normal) if standalone else None
    if sens and sens["flips"]:
        finding_msgs.append(_flip_finding(sens))
    findings = [english(m) for m in finding_msgs]
    figures: dict[str, Any] = {
        "currency": cfg.currency,
        "hours_per_month": float(cfg.hours_per_month),
        "exit_after_months": cfg.exit_after_months,
        "components": list(COMPONENTS),
        "profile_evidence": profile.id,
        "replay_evidence": [r.id for r in replays],
        "regimes": {r: _regime_json(regimes.get(r)) for r in REGIMES},
        "windows": regimes.windows,
        "options": options_json,
        "cheapest": cheapest,
        "break_even": pairs,
        # Every share of GPU-hours the analysis stands on, each named (C2, C8).
        "utilisation": shares,
        "near_full_utilisation": float(NEAR_FULL),
        "curves": curves,
        "findings": findings,
        # The findings as message ids and arguments, rendered in the reader's language.
        "finding_messages": finding_msgs,
        "sensitivity": sens,
        "prices": _prices(cfg),
        "data": {k: str(v) for k, v in cfg.data.model_dump().items()},
    }
    texts = record_texts(summary_message(figures), notes)
    figures["messages"] = texts.messages
    # The figures have the shape CostFigures declares (a ValidationError here is a bug).
    model = CostFigures.model_validate(figures)
    verdict: ev.Verdict = "warn" if findings or placeholders or not profile_fresh else "info"
    return CostResult(model=model, figures=figures, notes=texts.notes, verdict=verdict)


def _option_json(
    cfg: CostsConfig,
    o: Option,
    m: dict[str, MonthCost],
    regimes: Regimes,
    replays: list[ev.Evidence],
    notes: list[Message],
) -> dict[str, Any]:
    """One option's three months, peak check, waiting and reversibility; its notes added."""
    check = peak_check(cfg, o, regimes.peak, replays)
    if check is not None and check["source"] == "profile" and not isinstance(o, HybridOption):
        notes.append(
            message("cost", "{option}: {text}", option=o.id, text=check["meaning_message"])
        )
    waiting = o.waiting
    assumed = waiting.assumed_monthly_cost if waiting else None
    for r in REGIMES:
        for note in m[r].note_messages:
            if note not in notes:
                notes.append(note)
    measured = _measured_waits(cfg, o, check)
    return {
        "id": o.id,
        "name": o.name,
        "type": option_type(o),
        "provider": getattr(o, "provider", ""),
        "site": getattr(o, "site", ""),
        "pool_gpus": pool_gpus(cfg, o),
        "regimes": {r: _month_json(m[r]) for r in REGIMES},
        "peak_check": check,
        "burst_extra": str(m["peak"].total - m["normal"].total),
        "waiting": {
            "consequence": waiting.consequence if waiting else None,
            "assumed_monthly_cost": str(assumed.amount) if assumed else None,
            "assumption_source": assumed.source if assumed else None,
            "measured": [english(m) for m in measured],
            "measured_messages": measured,
        },
        "reversibility": _reversibility(cfg, o),
    }


def _reversibility(cfg: CostsConfig, option: Option) -> dict[str, Any] | None:
    """V2 figures of an option, how shrinking goes in English and as a message."""
    found = shrinking(cfg, option)
    if found is None:
        return None
    figures, how = found
    return {**figures, "how": english(how), "how_message": how}


def _break_evens(
    cfg: CostsConfig,
    standalone: list[Option],
    months: dict[str, dict[str, MonthCost]],
    regimes: Regimes,
    notes: list[Message],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Break-even of every dedicated option against every managed one (with the useful
    utilisation each dedicated option reaches in the normal and peak month), and their
    curves."""
    ref = _reference(regimes)
    dedicated = [o for o in standalone if isinstance(o, OwnedOption | RentedOption)]
    managed = [o for o in standalone if isinstance(o, ManagedOption)]
    pairs: list[dict[str, Any]] = []
    curves: list[dict[str, Any]] = []
    observed = {
        o.id: {r: _share(months[o.id][r].useful_utilisation) for r in ("normal", "peak")}
        for o in dedicated
    }
    if ref is None:
        notes.append(
            message("cost", "no GPU-hours in the profile: no break-even utilisation to compute")
        )
        return pairs, curves
    for d in dedicated:
        for mo in managed:
            pair = break_even(cfg, d, mo, ref)
            pair["observed_normal"] = observed[d.id]["normal"]
            pair["observed_peak"] = observed[d.id]["peak"]
            pairs.append(pair)
        if managed:
            curve = _curves(cfg, d, managed, ref)
            curve["observed_normal"] = observed[d.id]["normal"]
            curves.append(curve)
    return pairs, curves


def _placeholder_note(cfg: CostsConfig, notes: list[Message]) -> list[str]:
    """Prices whose source is still a placeholder (C5), noted; their fields returned."""
    placeholders = [
        dotted(loc) for loc, price in iter_prices(cfg) if PLACEHOLDER in price.source.lower()
    ]
    if placeholders:
        notes.append(
            message(
                "cost",
                "{n} price(s) still have a placeholder source (C5: take tariffs from the "
                "contract): {fields}",
                n=len(placeholders),
                fields=", ".join(placeholders[:8]) + (" ..." if len(placeholders) > 8 else ""),
            )
        )
    return placeholders


def _flip_finding(sens: dict[str, Any]) -> Message:
    """C8: the inputs whose move by one step makes another option the cheapest."""
    named = {r["input"]: r["input_message"] for r in sens["inputs"]}
    moved = sorted({f["input"] for f in sens["flips"]})
    shown = [named[name] for name in moved[:6]]
    if len(moved) > 6:
        rest = len(moved) - 6
        shown.append(nmessage("cost", "and {n} more", "and {n} more", n=rest))
    return message(
        "cost",
        "the cheapest option in the normal month ({cheapest}) changes when one of "
        "these moves by {step:pct0}: {inputs}",
        cheapest=sens["baseline_cheapest"],
        step=sens["step"],
        inputs=shown,
    )


def _prices(cfg: CostsConfig) -> list[dict[str, str]]:
    return [
        {
            "option": _owner(cfg, loc),
            "field": dotted(loc),
            "amount": str(price.amount),
            "source": price.source,
        }
        for loc, price in iter_prices(cfg)
    ]


def _owner(cfg: CostsConfig, loc: Loc) -> str:
    if loc and loc[0] in ("owned", "rented", "managed", "hybrid"):
        return str(getattr(cfg, str(loc[0]))[int(loc[1])].id)
    return str(loc[0]) if loc else ""


def _regime_json(w: Workload) -> dict[str, Any]:
    return {
        "basis": w.basis,
        "basis_message": w.basis_message,
        "window": w.window,
        "gpu_hours": _h(w.gpu_hours),
        "useful_gpu_hours": _h(w.useful_gpu_hours),
        "attempts": _h(w.attempts),
        "trainings": _h(w.trainings),
        "peak_concurrent_gpus": w.peak_concurrent_gpus,
    }


def summary_message(figures: dict[str, Any]) -> Message:
    """Cheapest option per month, with its cost per useful GPU-hour, as a message."""
    by_id = {o["id"]: o for o in figures["options"]}
    cur = figures["currency"]
    parts = []
    for r in REGIMES:
        oid = figures["cheapest"][r]
        if oid is None:
            continue
        m = by_id[oid]["regimes"][r]
        per = m["cost_per_useful_gpu_hour"]
        regime = words.month_word(r)
        if per:
            parts.append(
                message(
                    "cost",
                    "{month}: {option} {total:money} {currency} ({per:money} {currency} per "
                    "useful GPU-hour)",
                    month=regime,
                    option=oid,
                    total=m["total"],
                    per=per,
                    currency=cur,
                )
            )
        else:
            parts.append(
                message(
                    "cost",
                    "{month}: {option} {total:money} {currency}",
                    month=regime,
                    option=oid,
                    total=m["total"],
                    currency=cur,
                )
            )
    n = len(figures["findings"])
    if parts:
        if n:
            return message("cost", "cheapest {parts}; {n} finding(s)", parts=parts, n=n)
        return message("cost", "cheapest {parts}", parts=parts)
    if n:
        return message("cost", "no standalone option; {n} finding(s)", n=n)
    return message("cost", "no standalone option")


def summary_line(figures: dict[str, Any]) -> str:
    """Cheapest option per month, with its cost per useful GPU-hour (English)."""
    return english(summary_message(figures))


def to_evidence(result: CostResult, inputs: list[ev.InputRef]) -> ev.Evidence:
    """The cost analysis as an evidence record (SPEC C1-C10, V2)."""
    return ev.Evidence(
        kind="cost",
        title="Cost: normal, peak and empty month",
        spec_ids=["C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8", "C9", "C10", "V2"],
        verdict=result.verdict,
        summary=summary_line(result.figures),
        figures=result.figures,
        notes=result.notes,
        inputs=inputs,
    )
