"""Decision rules of queue and replay evidence (SPEC Q3, C8, D3, D5).

- `queue_rules`: a queue record names the option whose platform its log came from
  (`figures["option"]`); each of its SLOs suggests that option's queue score (a conclusive
  pass 5, a pass the interval cannot settle yet 4, a fail it cannot settle 3, a conclusive
  fail 2), and a hard SLO failed with a conclusive interval is a stop factor (D5). A record
  of the team's workload (no option) scores no option: it feeds the D1/D2 conditions.
- `replay_rules`: the replay of a dedicated pool of an option's size (as the cost evidence
  priced it) suggests its queue score; a pool that cannot hold a job scores 1; a hard SLO
  its pool fails is a stop factor.

Both read the figures with `.get`: the decision reads any record it is given, including one
written by an older gpudecide or by hand, and a missing figure is no finding, never a crash.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpudecide import evidence as ev
from gpudecide.findings import StopFactor, Suggestion
from gpudecide.message import Message, english, message, nmessage
from gpudecide.queue.words import WINDOWS, word_message

if TYPE_CHECKING:  # the decision passes its context; the queue never imports the decision
    from gpudecide.decision.context import RuleContext

__all__ = ["DEDICATED", "HARD_STOP_MIN_JOBS", "Finding", "queue_rules", "replay_rules"]

Finding = Suggestion | StopFactor
DEDICATED = ("owned", "rented")
# A replay's share over fewer jobs than this says too little to stop an option.
HARD_STOP_MIN_JOBS = 30


def _suggest(
    option: str, criterion: str, score: int, msg: Message, cited: tuple[str, ...]
) -> Suggestion:
    return Suggestion(option, criterion, score, english(msg), cited, rule_message=msg)


def _stop(
    option: str, sid: str, msg: Message, cited: tuple[str, ...], clear: Message
) -> StopFactor:
    return StopFactor(
        option,
        sid,
        english(msg),
        cited,
        clear=english(clear),
        rule_message=msg,
        clear_message=clear,
    )


def _largest(pool: dict[str, Any]) -> int | None:
    """GPUs of the largest job the pool cannot hold (None: the record does not say)."""
    sizes = [u.get("gpus") for u in pool.get("unplaceable") or [] if isinstance(u, dict)]
    found = [int(g) for g in sizes if isinstance(g, int | float)]
    return max(found) if found else None


def _replay_why(
    never: int, share: float | None, allowed: float | None, slo: str | None, largest: int | None
) -> tuple[int, Message]:
    """The queue score of one replayed pool and why."""
    if never and largest is not None:
        return 1, nmessage(
            "queue",
            "{n} job larger than the pool never runs (the largest needs {largest} GPUs)",
            "{n} jobs larger than the pool never run (the largest needs {largest} GPUs)",
            n=never,
            largest=largest,
        )
    if never:
        return 1, nmessage(
            "queue",
            "{n} job larger than the pool never runs",
            "{n} jobs larger than the pool never run",
            n=never,
        )
    if share is None or allowed is None:
        return 3, message("queue", "no SLO to compare the waits with")
    args = {"slo": slo, "share": share, "allowed": allowed}
    if share <= allowed / 2:
        return 5, message(
            "queue", "SLO {slo} violated by {share:pct} <= half the allowed {allowed:pct}", **args
        )
    if share <= allowed:
        return 4, message(
            "queue", "SLO {slo} violated by {share:pct} <= allowed {allowed:pct}", **args
        )
    return 2, message("queue", "SLO {slo} violated by {share:pct} > allowed {allowed:pct}", **args)


def _window(f: dict[str, Any]) -> Message | str:
    window = f.get("window")
    kind = window.get("kind") if isinstance(window, dict) else None
    return word_message(WINDOWS, str(kind))


def replay_rules(record: ev.Evidence, ctx: RuleContext) -> list[Finding]:
    """Queue of each dedicated option from the replay of a pool its size (C8, D3)."""
    f = record.figures
    pools = {int(p["gpus"]): p for p in f.get("pools", [])}
    slo = f.get("slo") or {}
    allowed = slo.get("allowed_violation_share")
    hard = slo.get("name") in ctx.matrix.slo.hard
    out: list[Finding] = []
    for opt in ctx.options:
        if opt.kind not in DEDICATED:
            continue
        gpus = ctx.pool_gpus(opt.id)
        pool = pools.get(gpus) if gpus is not None else None
        if pool is None:
            continue
        cited = (record.id,)
        never = int(pool.get("jobs_unplaceable") or 0)
        share = pool.get("slo_violation_share")
        score, why = _replay_why(never, share, allowed, slo.get("name"), _largest(pool))
        msg = message(
            "queue",
            "replay of {gpus} GPUs ({window} window): {why}",
            gpus=gpus,
            window=_window(f),
            why=why,
        )
        out.append(_suggest(opt.id, "queue", score, msg, cited))
        if not hard or share is None or allowed is None:
            continue
        # The share is of the jobs the SLO selects; an older record does not say how many,
        # and then every replayed job stands in for them.
        selected = pool.get("slo_jobs")
        jobs = int(selected) if isinstance(selected, int) else int(pool.get("jobs") or 0) + never
        if jobs >= HARD_STOP_MIN_JOBS and share > allowed:
            stop = nmessage(
                "queue",
                "hard SLO {slo}: {share:pct} of the {jobs} job it selects wait too long on "
                "{gpus} GPUs (a job the pool cannot hold waits for ever), allowed {allowed:pct}",
                "hard SLO {slo}: {share:pct} of the {jobs} jobs it selects wait too long on "
                "{gpus} GPUs (a job the pool cannot hold waits for ever), allowed {allowed:pct}",
                count="jobs",
                slo=slo.get("name"),
                share=share,
                jobs=jobs,
                gpus=gpus,
                allowed=allowed,
            )
            clear = message("queue", "a larger pool or a replay that meets the SLO")
            out.append(_stop(opt.id, "hard_slo_violated", stop, cited, clear))
    return out


def _slo_score(s: dict[str, Any]) -> tuple[int, Message] | None:
    """The queue score one evaluated SLO gives the option its log is from, and why (none for
    an SLO the log cannot measure)."""
    verdict, conclusive, name = s.get("verdict"), s.get("conclusive"), s.get("name")
    if verdict == "pass" and conclusive:
        return 5, message("queue", "SLO {slo} met, conclusive", slo=name)
    if verdict == "fail" and conclusive:
        return 2, message("queue", "SLO {slo} violated, conclusive", slo=name)
    if verdict != "inconclusive" or s.get("point_estimate") not in ("pass", "fail"):
        return None
    share, allowed = s.get("violation_share"), s.get("allowed_violation_share")
    args = {"slo": name, "share": share, "allowed": allowed}
    if s["point_estimate"] == "pass":
        return 4, message(
            "queue",
            "SLO {slo} met on the point estimate ({share:pct} against {allowed:pct} allowed); "
            "the 95 % interval holds the allowed share, so more jobs are needed to be sure",
            **args,
        )
    return 3, message(
        "queue",
        "SLO {slo} violated on the point estimate ({share:pct} against {allowed:pct} allowed); "
        "the 95 % interval holds the allowed share, so more jobs are needed to be sure",
        **args,
    )


def queue_rules(record: ev.Evidence, ctx: RuleContext) -> list[Finding]:
    """The queue score of the option the log was from, by each SLO; a hard SLO violated with
    a conclusive interval stops it (Q3, D5)."""
    option = record.figures.get("option")
    if not isinstance(option, str) or not option:
        return []
    out: list[Finding] = []
    for s in record.figures.get("slo", []):
        scored = _slo_score(s)
        if scored is not None:
            out.append(_suggest(option, "queue", scored[0], scored[1], (record.id,)))
        if s.get("verdict") == "fail" and s.get("conclusive") and s["name"] in ctx.matrix.slo.hard:
            ci = s.get("ci95") or [None, None]
            stop = message(
                "queue",
                "hard SLO {slo} violated by {share:pct} (95 % CI {low:pct}-{high:pct}), "
                "allowed {allowed:pct}",
                slo=s["name"],
                share=s.get("violation_share"),
                low=ci[0],
                high=ci[1],
                allowed=s.get("allowed_violation_share"),
            )
            clear = message("queue", "a conclusive pass of the SLO on this option")
            out.append(_stop(option, "hard_slo_violated", stop, (record.id,), clear))
    return out
