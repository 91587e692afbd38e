"""The article's conditions for dedicated GPUs (D1) and for a managed endpoint (D2), each
true, false or unknown, with the evidence that settles it (SPEC D1, D2).

A condition no evidence settles is `unknown`: the report shows what would settle it. Its
text and why are kept in English and as messages (`text_message`, `why_message`), which the
report says in the reader's language.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from gpudecide import evidence as ev
from gpudecide.decision.builtin_rules import word
from gpudecide.decision.context import RuleContext, typed
from gpudecide.message import Message, english, message, nmessage

__all__ = [
    "LOW_LEVEL_NEEDS",
    "OUTSIDE_CONTAINER",
    "YEARS_OF_CONTROL_DAYS",
    "Condition",
    "State",
    "dedicated",
    "managed",
]


State = Literal["true", "false", "unknown"]
YEARS_OF_CONTROL_DAYS = 730  # artifacts kept two years or more: "years of artifact control"


@dataclass
class Condition:
    """One condition of D1 or D2."""

    id: str
    group: Literal["D1", "D2"]
    text: str
    state: State
    evidence: list[str] = field(default_factory=list)
    why: str = ""
    option: str | None = None
    text_message: Message | None = None
    why_message: Message | None = None

    def as_dict(self) -> dict[str, Any]:
        """Machine form."""
        return dict(self.__dict__)


def _state(value: bool | None) -> State:
    return "unknown" if value is None else "true" if value else "false"


def _cond(
    cid: str,
    group: Literal["D1", "D2"],
    text: Message,
    value: bool | None,
    record: ev.Evidence | None,
    why: Message,
    option: str | None = None,
    why_english: str | None = None,
) -> Condition:
    """A condition; its English is its messages' (or `why_english` where the record's own
    figure reads differently from the message's localized one)."""
    ids = [record.id] if record is not None and value is not None else []
    said = why_english if why_english is not None else english(why)
    return Condition(
        cid,
        group,
        english(text),
        _state(value),
        ids,
        said,
        option,
        text_message=text,
        why_message=why,
    )


def _run_profile() -> Message:
    return message("decision", "run `gpudecide profile`")


def dedicated(ctx: RuleContext) -> list[Condition]:
    """D1: when dedicated GPUs are the better fit."""
    profile, queue = ctx.workload("profile"), ctx.workload("queue")
    audit, standard = ctx.newest.get("audit"), ctx.newest.get("standard_path")
    isolation = ctx.newest.get("isolation")
    steady: bool | None = None
    why, why_en = _run_profile(), None
    if profile is not None:
        f = profile.figures
        shape = (f.get("burstiness") or {}).get("shape")
        busy = f.get("busy_share")
        steady = shape == "steady" and busy is not None and float(busy) >= 0.4
        why = message(
            "decision",
            "shape {shape}, busy share {busy:pct} (steady and >= 40 % needed)",
            shape=word(shape),
            busy=None if busy is None else float(busy),
        )
        why_en = f"shape {shape}, busy share {busy} (steady and >= 40 % needed)"
    urgent: bool | None = None
    uwhy = message("decision", "no conclusive urgent SLO verdict")
    if queue is not None:
        for s in queue.figures.get("slo", []):
            if s.get("name") == "urgent" and s.get("conclusive"):
                urgent = s.get("verdict") == "fail"
                uwhy = message(
                    "decision", "urgent SLO {verdict} (conclusive)", verdict=word(s.get("verdict"))
                )
    tuning = _needs_any(standard, LOW_LEVEL_NEEDS)
    years: bool | None = None
    ywhy = message("decision", "no retention classes in the export audit")
    if audit is not None:
        classes = ((audit.figures.get("retention") or {}).get("classes")) or {}
        days = [int(c.get("lifetime_days") or 0) for c in classes.values()]
        if days:
            years = max(days) >= YEARS_OF_CONTROL_DAYS
            ywhy = message(
                "decision",
                "longest retention {days} days (>= {needed} needed)",
                days=max(days),
                needed=YEARS_OF_CONTROL_DAYS,
            )
    control = _managed_stopped(ctx, isolation)
    return [
        _cond(
            "steady_queue",
            "D1",
            message("decision", "a steady queue keeps GPUs busy"),
            steady,
            profile,
            why,
            why_english=why_en,
        ),
        _cond(
            "launch_delay_hurts",
            "D1",
            message("decision", "launch delay hurts releases"),
            urgent,
            queue,
            uwhy,
        ),
        _cond(
            "low_level_tuning",
            "D1",
            message("decision", "low-level tuning is needed (kernels, driver, interconnect)"),
            tuning,
            standard,
            message("decision", "from `gpudecide check standard-path`"),
        ),
        _cond(
            "years_of_control",
            "D1",
            message("decision", "artifacts must be controlled for years"),
            years,
            audit,
            ywhy,
        ),
        _cond(
            "control_plane",
            "D1",
            message("decision", "the threat model needs the control plane"),
            control,
            isolation,
            message("decision", "from `gpudecide check isolation`"),
        ),
    ]


def managed(ctx: RuleContext) -> list[Condition]:
    """D2: when a managed endpoint is the better fit; export and isolation per option."""
    profile, standard = ctx.workload("profile"), ctx.newest.get("standard_path")
    rare: bool | None = None
    why, why_en = _run_profile(), None
    if profile is not None:
        f = profile.figures
        shape = (f.get("burstiness") or {}).get("shape")
        busy = f.get("busy_share")
        rare = shape == "bursty" or (busy is not None and float(busy) < 0.2)
        why = message(
            "decision",
            "shape {shape}, busy share {busy:pct} (bursty or < 20 % needed)",
            shape=word(shape),
            busy=None if busy is None else float(busy),
        )
        why_en = f"shape {shape}, busy share {busy} (bursty or < 20 % needed)"
    out = [
        _cond(
            "rare_or_bursty",
            "D2",
            message("decision", "runs are rare or bursty"),
            rare,
            profile,
            why,
            why_english=why_en,
        ),
        _cond(
            "standard_container",
            "D2",
            message("decision", "the work fits a standard container"),
            None if standard is None else not _needs_any(standard, OUTSIDE_CONTAINER),
            standard,
            message("decision", "from `gpudecide check standard-path`"),
        ),
    ]
    for opt in ctx.options:
        if opt.kind != "managed":
            continue
        out.append(_export_verified(ctx, opt.id))
        out.append(_start_measurable(ctx, opt.id))
    return out


def _export_verified(ctx: RuleContext, option: str) -> Condition:
    from gpudecide.portability.figures import figures_of

    text = message("decision", "export verified")
    test = ctx.of("export_test", option)
    if test is not None:
        tested = typed(test, figures_of)
        ok = tested is not None and tested.verdict == "pass"
        why = message("decision", "export test {verdict}", verdict=word(test.verdict))
        return _cond("export_verified", "D2", text, ok, test, why, option)
    audit = ctx.of("audit", option)
    if audit is not None:
        hazards = audit.figures.get("hazards") or []
        if hazards:
            why = nmessage(
                "decision",
                "export audit found {n} hazard",
                "export audit found {n} hazards",
                n=len(hazards),
            )
            return _cond("export_verified", "D2", text, False, audit, why, option)
    why = message("decision", "run `gpudecide export-test` for this option")
    return _cond("export_verified", "D2", text, None, None, why, option)


def _start_measurable(ctx: RuleContext, option: str) -> Condition:
    text = message("decision", "start time is measurable")
    queue = ctx.of("queue", option)
    if queue is not None:
        why = message("decision", "the queue analysis read this option's job log")
        return _cond("start_measurable", "D2", text, True, queue, why, option)
    why = message("decision", "no job log of this option analysed")
    return _cond("start_measurable", "D2", text, None, None, why, option)


# What the work needs beyond a standard container (R4): any of these is low-level tuning.
LOW_LEVEL_NEEDS = (
    "custom_kernels",
    "modified_driver",
    "direct_device_access",
    "special_interconnect",
)
# What no managed container offers: kernels can ship inside an image, these cannot.
OUTSIDE_CONTAINER = ("modified_driver", "direct_device_access", "special_interconnect")


def _needs_any(record: ev.Evidence | None, keys: tuple[str, ...]) -> bool | None:
    """From the standard-path evidence: does the work need any of these? None without it."""
    # The model's own module: `governance.figures` would load every governance check
    # (isolation, RACI, residency, secrets), ~70 ms of `assess`, for this one figure.
    from gpudecide.governance.standard_path import StandardPathFigures

    if record is None:
        return None
    f = typed(record, lambda r: StandardPathFigures.model_validate(r.figures))
    if f is None:
        return False  # figures its model cannot read: a record that states no needs
    return any(getattr(f.needs, k) for k in keys)


def _managed_stopped(ctx: RuleContext, record: ev.Evidence | None) -> bool | None:
    """From the isolation evidence: does a required protection stop every managed option
    (only the team's own control plane gives it)? None without the evidence."""
    if record is None:
        return None
    managed = set(ctx.ids("managed"))
    rows = [o for o in record.figures.get("options", []) if o.get("option") in managed]
    return bool(rows) and all(o.get("stopped") for o in rows)
