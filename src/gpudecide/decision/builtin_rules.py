"""Rules that turn the figures of the workload, queue, replay, cost and audit evidence into
score suggestions and stop factors (SPEC D3-D5). Each rule says how it got its score.

Thresholds are bands, not tuning knobs: each band is named in the rule text, so a reader can
check the score against the figure in the evidence it cites.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from gpudecide import evidence as ev
from gpudecide.decision.context import RuleContext
from gpudecide.decision.model import StopFactor, Suggestion

Finding = Suggestion | StopFactor
DEDICATED = ("owned", "rented")

# Useful busy share of a dedicated pool -> frequency score (SPEC C2, D1: "a steady queue
# keeps GPUs busy"). Below 10 % a pool mostly waits for work.
BUSY_BANDS = ((0.6, 5), (0.4, 4), (0.2, 3), (0.1, 2), (0.0, 1))
# Monthly cost relative to the cheapest option -> cost score.
COST_BANDS = (
    (Decimal("1.10"), 5),
    (Decimal("1.50"), 4),
    (Decimal("2.00"), 3),
    (Decimal("3.00"), 2),
)


def _band(value: float, bands: tuple[tuple[float, int], ...]) -> int:
    return next(score for floor, score in bands if value >= floor)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _cost_options(ctx: RuleContext) -> dict[str, dict[str, Any]]:
    cost = ctx.newest.get("cost")
    return {o["id"]: o for o in cost.figures.get("options", [])} if cost else {}


def profile_rules(record: ev.Evidence, ctx: RuleContext) -> list[Finding]:
    """Frequency: dedicated options by the useful busy share of their pool (from the cost
    evidence when it priced the pool, else the profile's pool), managed options by how rare,
    bursty and unpredictable the work is (D1, D2)."""
    f = record.figures
    shape = (f.get("burstiness") or {}).get("shape")
    pred = (f.get("predictability") or {}).get("verdict")
    irregular = shape == "bursty" or pred == "unpredictable"
    out: list[Finding] = []
    priced = _cost_options(ctx)
    cost = ctx.newest.get("cost")
    for opt in ctx.options:
        if opt.kind in DEDICATED:
            normal = (priced.get(opt.id) or {}).get("regimes", {}).get("normal", {})
            share = normal.get("useful_utilisation")
            cited: tuple[str, ...] = (record.id,)
            basis = "useful utilisation in the normal month"
            if share is not None and cost is not None:
                cited = (record.id, cost.id)
            else:
                share, basis = f.get("busy_share"), f"busy share of a {f.get('pool_gpus')}-GPU pool"
            if share is None:
                continue
            score = _band(float(share), BUSY_BANDS)
            if irregular and score > 1:
                score -= 1
            out.append(
                Suggestion(
                    opt.id,
                    "frequency",
                    score,
                    f"{basis} {_pct(float(share))}: bands >=60 % 5, >=40 % 4, >=20 % 3, "
                    f">=10 % 2, else 1; minus 1 as the work is {shape}, {pred}",
                    cited,
                )
            )
        elif opt.kind == "managed":
            busy = f.get("busy_share")
            rare = busy is not None and float(busy) < 0.2
            score = 5 if irregular and rare else 4 if irregular or rare else 2
            out.append(
                Suggestion(
                    opt.id,
                    "frequency",
                    score,
                    f"work is {shape}, {pred}, busy share {_pct(busy)}: rare or bursty runs "
                    "suit a managed endpoint (D2): both 5, one 4, neither 2",
                    (record.id,),
                )
            )
    return out


def replay_rules(record: ev.Evidence, ctx: RuleContext) -> list[Finding]:
    """Queue and scale of each dedicated option from the replay of a pool its size (C8, D3)."""
    f = record.figures
    pools = {int(p["gpus"]): p for p in f.get("pools", [])}
    slo = f.get("slo") or {}
    allowed = slo.get("allowed_violation_share")
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
        window = (f.get("window") or {}).get("kind")
        if never:
            score, why = 1, f"{never} job(s) larger than the pool never run"
        elif share is None or allowed is None:
            score, why = 3, "no SLO to compare the waits with"
        elif share <= allowed / 2:
            score, why = 5, f"SLO {slo.get('name')} violated by {_pct(share)} <= half the allowed"
        elif share <= allowed:
            score, why = 4, f"SLO {slo.get('name')} violated by {_pct(share)} <= allowed"
        else:
            score, why = 2, f"SLO {slo.get('name')} violated by {_pct(share)} > allowed"
        out.append(
            Suggestion(
                opt.id,
                "queue",
                score,
                f"replay of {gpus} GPUs ({window} window): {why} {_pct(allowed)}",
                cited,
            )
        )
        if slo.get("name") in ctx.matrix.slo.hard and share is not None and allowed is not None:
            jobs = int(pool.get("jobs") or 0)
            if jobs >= 30 and share > allowed:
                out.append(
                    StopFactor(
                        opt.id,
                        "hard_slo_violated",
                        f"hard SLO {slo.get('name')}: {_pct(share)} of {jobs} replayed jobs "
                        f"wait too long on {gpus} GPUs, allowed {_pct(allowed)}",
                        cited,
                        clear="a larger pool or a replay that meets the SLO",
                    )
                )
    return out


def queue_rules(record: ev.Evidence, ctx: RuleContext) -> list[Finding]:
    """A hard SLO violated with a conclusive interval stops the option the log was from (D5).

    A queue record describes the platform its log came from: it names that option in
    `figures["option"]` (the log of a vendor's jobs, a current pool); without one it only
    feeds the D1/D2 conditions.
    """
    option = record.figures.get("option")
    if not option:
        return []
    out: list[Finding] = []
    for s in record.figures.get("slo", []):
        verdict, conclusive = s.get("verdict"), s.get("conclusive")
        if verdict == "pass" and conclusive:
            out.append(
                Suggestion(option, "queue", 5, f"SLO {s['name']} met, conclusive", (record.id,))
            )
        elif verdict == "fail" and conclusive:
            out.append(
                Suggestion(
                    option, "queue", 2, f"SLO {s['name']} violated, conclusive", (record.id,)
                )
            )
            if s["name"] in ctx.matrix.slo.hard:
                out.append(
                    StopFactor(
                        option,
                        "hard_slo_violated",
                        f"hard SLO {s['name']} violated by {_pct(s.get('violation_share'))} "
                        f"(95 % CI {s.get('ci95')}), "
                        f"allowed {_pct(s.get('allowed_violation_share'))}",
                        (record.id,),
                        clear="a conclusive pass of the SLO on this option",
                    )
                )
    return out


def cost_rules(record: ev.Evidence, ctx: RuleContext) -> list[Finding]:
    """Cost by the normal month's total against the cheapest option; scale by the peak check."""
    f = record.figures
    options = {o["id"]: o for o in f.get("options", [])}
    declared = {o.id for o in ctx.options}
    totals = {
        oid: Decimal(o["regimes"]["normal"]["total"])
        for oid, o in options.items()
        if oid in declared
    }
    if not totals:
        return []
    cheapest = min(totals.values())
    out: list[Finding] = []
    for oid, total in totals.items():
        ratio = total / cheapest if cheapest > 0 else Decimal(1)
        score = next((s for ceiling, s in COST_BANDS if ratio <= ceiling), 1)
        out.append(
            Suggestion(
                oid,
                "cost",
                score,
                f"normal month {total:,.0f} {f.get('currency')} = {ratio:.2f} x the cheapest: "
                "<=1.1 5, <=1.5 4, <=2 3, <=3 2, else 1",
                (record.id,),
            )
        )
        check = options[oid].get("peak_check")
        if check is not None and check.get("absorbs") is not None:
            never = int(check.get("jobs_unplaceable") or 0)
            score = 1 if never else 4 if check["absorbs"] else 2
            out.append(
                Suggestion(
                    oid,
                    "scale",
                    score,
                    f"peak month on {check.get('pool_gpus')} GPUs: "
                    + ("absorbed" if check["absorbs"] else "not absorbed")
                    + (f", {never} job(s) never fit" if never else "")
                    + ": absorbed 4, not 2, jobs that never fit 1",
                    (record.id,),
                )
            )
    return out


def audit_rules(record: ev.Evidence, ctx: RuleContext) -> list[Finding]:
    """An export audit with a lock-in hazard stops its option (E5); a clean one scores 4."""
    option = record.figures.get("option")
    if not option:
        return []
    hazards = record.figures.get("hazards") or []
    if hazards:
        return [
            StopFactor(
                option,
                "export_hazard",
                f"{h['id']}: {h.get('path', '')}",
                (record.id,),
                clear="an export without this hazard, audited again",
            )
            for h in hazards
        ]
    resumable = record.figures.get("resumable")
    score = 4 if resumable else 3
    return [
        Suggestion(
            option,
            "artifacts",
            score,
            "export audit without hazards; "
            + ("resumable (4; 5 needs a passed export test)" if resumable else "weights only (3)"),
            (record.id,),
        )
    ]
