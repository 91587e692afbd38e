"""The cost section of the report (builder for `render.SECTION_BUILDERS["cost"]`).

Charts first (components, cost per useful GPU-hour against utilisation, tornado), then the
tables a reader checks the charts against: every C1 component of every option in every
month, every cost line with the source of its price, break-evens, the peak check, waiting,
reversibility and the inputs that flip the cheapest option.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from gpudecide.cost import charts
from gpudecide.cost.analysis import REGIME_MONTHS
from gpudecide.cost.fmt import money, num
from gpudecide.i18n import translator
from gpudecide.report.fmt import not_available, pct, pct0
from gpudecide.report.i18n import N_, P_, Language, localize, render_message
from gpudecide.report.model import Chart, Section, Table

TOP_INPUTS = 12

_ = translator("cost")


def _loc(text: str, lang: Language) -> str:
    """Text the cost analysis wrote in English (labels, bases, meanings) in `lang`."""
    return localize(text, lang, ("cost", "report"))


# English phrases the cost analysis writes into its figures without a message id; the
# catalogue translates them by pattern (`gpudecide.report.i18n.localize`), numbers
# re-formatted. Listed here so that extraction finds them and the catalogues must hold them.
GENERATED = (
    # cost lines (tco)
    P_("{role}: {hours} h x {rate}"),
    P_("{name} (per month)"),
    P_("{item}: {quantity} x {price} / {months} months"),
    P_(
        "power: {servers} server(s) x {kw} kW at {load} load x {hours} h x PUE {pue} = "
        "{kwh} kWh x {price}"
    ),
    P_("support contract (per month)"),
    P_("rack / colocation (per month)"),
    P_("replacements: {n} a year x {cost} / 12"),
    P_("provisioned storage: {gb} GB x {price}"),
    P_("pool: {gpus} GPUs x {hours} h x {price}, billed whether used or not (C4)"),
    P_("pool: {gpus} GPUs x {price} per month, billed whether used or not (C4)"),
    P_("egress: {n} trainings x {gb} GB x {price}"),
    P_("job time: {hours} GPU-hours x {price} per GPU-hour"),
    P_(
        "{what}: {n} attempts x {minutes} min per attempt (on average half of the "
        "{increment}-min increment) x {gpus} GPUs = {gpu_hours} GPU-hours x {price} per GPU-hour"
    ),
    P_(
        "{what}: {n} attempts x {minutes} min per attempt ({gb} GB x {rate} min/GB) x {gpus} "
        "GPUs = {gpu_hours} GPU-hours x {price} per GPU-hour"
    ),
    P_(
        "{what}: {n} attempts x {minutes} min per attempt x {gpus} GPUs = {gpu_hours} "
        "GPU-hours x {price} per GPU-hour"
    ),
    P_("billing increment"),
    P_("environment start-up"),
    P_("data loading"),
    P_("endpoint until deletion: {n} trainings x {hours} h x {price} per hour"),
    P_("storage: ({gb} GB kept + {kept} GB: {how}) x {price} per GB-month"),
    P_("{n} attempts x {gb} GB kept {days} days"),
    P_("earlier artifacts still inside {days} days of retention"),
    P_("data in: {n} attempts x {gb} GB x {price} per GB"),
    P_(
        "minimum monthly commitment: usage of {used} is below the floor of {floor}, topped up "
        "by the difference"
    ),
    P_("base {option}: {label}"),
    P_("overflow {option}: {label}"),
    P_("team's assumption (not measured)"),
    # how each month was chosen (regimes)
    P_(
        "median of {n} rolling {span}-week windows by GPU-hours (weeks {first}-{last}), "
        "scaled x{hours}/{window_hours} to a {hours}-hour month"
    ),
    P_(
        "busiest of {n} rolling {span}-week windows (weeks {first}-{last}), scaled "
        "x{hours}/{window_hours} to a {hours}-hour month"
    ),
    P_(
        "fewer than {weeks} measured weeks: the whole {span}-week window scaled "
        "x{hours}/{window_hours} to a {hours}-hour month; normal and peak month are the same"
    ),
    P_("no jobs for a whole month after normal months: idle capacity, storage, commitments"),
    P_(
        "useful GPU-hours are {share} of occupied GPU-hours over the profile (completed "
        "attempts); each month uses that share"
    ),
    P_(
        "the log covers {covered} weeks: the first {drop} week(s) of the profile are left out "
        "of the monthly windows (not measured)"
    ),
    P_(
        "per-attempt overheads (managed start-up, data loading, billing increment) are charged "
        "on {gpus} GPUs: GPU-hours over attempt-hours, so long, wide jobs weigh more (the "
        "profile evidence has no per-job GPU count)"
    ),
    # the peak check and the waits (analysis)
    P_("replay of {gpus} GPUs (peak window, {policy}): wait p95 {p95}, max {max}"),
    P_("replay of {gpus} GPUs (normal window, {policy}): wait p95 {p95}, max {max}"),
    P_("replay of {gpus} GPUs ({window} window, {policy}): wait p95 {p95}, max {max}"),
    P_("replay of {gpus} GPUs (peak window, {policy}): wait p95 {p95}"),
    P_("SLO {slo} violated by {share} of jobs"),
    P_("{n} job(s) larger than the pool ({gpus} GPUs) can never run here"),
    P_("{n} min"),
    P_("{n} h"),
    P_("demand above {gpus} GPUs goes to {option}"),
    P_("kinds {kinds} go to {option}"),
    P_("job kinds {kinds} go to {option}"),
    P_("the concurrency of the jobs left on the base pool is not in the profile evidence"),
    P_(
        "demand above the base pool's {gpus} GPUs goes to {option} (upper bound: {rest}"
    ),
    P_(
        "no replay of a pool of {gpus} GPUs in the evidence: the profile's peak of {peak} GPUs "
        "in use at once is compared with the pool (fits); run `gpudecide replay` for the waits"
    ),
    P_(
        "no replay of a pool of {gpus} GPUs in the evidence: the profile's peak of {peak} GPUs "
        "in use at once is compared with the pool (jobs queue); run `gpudecide replay` for the "
        "waits"
    ),
    P_(
        "{option}: environment start-up {startup} min and data loading {loading} min per job, "
        "from the contract (not measured; the queue evidence measures submit-to-start)"
    ),
    P_("{option}: job kinds {kinds} go to {target}"),
    P_("{option}: demand above the base pool's {gpus} GPUs goes to {target} (upper bound: {rest}"),
    P_(
        "the log has {peak} GPUs in use at once, more than the pool: jobs queue at the peak"
    ),
    # findings and summaries of records written before they carried message ids
    P_("observed {normal:pct} in the normal month, {peak:pct} in the peak month"),
    P_("{dedicated} is cheaper than {managed} only above {u:pct} useful utilisation; {seen}"),
    P_(
        "{dedicated} is cheaper than {managed} only above {u:pct} useful utilisation (only at "
        "~100 % utilisation); {seen}"
    ),
    P_(
        "{dedicated} is never cheaper than {managed} at a utilisation this workload can reach "
        "(at most {max:pct} useful: failed attempts occupy the pool too); {seen}"
    ),
    P_("cheapest {parts}"),
    P_("{month}: {option} {total:money} {currency}"),
    P_("{month}: {option} {total:money} {currency} ({per:money} {currency} per useful GPU-hour)"),
    P_("profile evidence {id} is not fresh: its log changed or is gone"),
    P_("no GPU-hours in the profile: no break-even utilisation to compute"),
    P_(
        "{n} price(s) still have a placeholder source (C5: take tariffs from the contract): "
        "{fields}"
    ),
    P_("{option}: the month asks for {asked} GPU-hours, the pool has {has}: the rest waits "
       "into the next month"),
    # reversibility (tco)
    P_(
        "sell the servers ({share} of the purchase price assumed), pay the rack for {months} "
        "more month(s), move jobs within {weeks} weeks"
    ),
    P_("release {gpus} GPU(s) at a time with {days} days' notice after the commitment"),
    P_("capacity cannot be reduced: only the whole contract ends, after the commitment"),
    P_("billed per use, nothing to shrink"),
    P_("leaving moves {gb} GB kept at the vendor out at {price} per GB"),
    P_("leaving moves {gb} GB kept at the vendor out (egress price not in the contract: ask)"),
    P_("the time and manual steps come from the export test"),
    # sensitivity inputs
    P_("workload: GPU-hours per month"),
    P_("profile"),
    P_("{n} finding(s)"),
    P_("workload: jobs per month at the same GPU-hours"),
)


def cost_section(section: Section, lang: Language) -> None:
    """Fill the report section of a "cost" evidence record: charts first, then the tables."""
    f = section.record.figures
    section.title = _("Cost: normal, peak and empty month", lang)
    _charts(section, f, lang)
    for step in (
        _findings_table,
        _components_table,
        _months_table,
        _break_even_table,
        _peak_table,
        _waiting_table,
        _reversibility_table,
        _sensitivity_table,
        _lines_tables,
    ):
        step(section, f, lang)


def _month(regime: str, lang: Language) -> str:
    """"normal month", "peak month", "empty month" in `lang`."""
    return _(REGIME_MONTHS.get(regime, regime), lang)


def _charts(section: Section, f: dict[str, Any], lang: Language) -> None:
    """Components by month, cost per useful GPU-hour, and the tornado."""
    cur = f["currency"]
    regimes = list(f["regimes"])
    comps = list(f["components"])
    options = f["options"]
    data = {
        o["id"]: {r: {c: float(o["regimes"][r]["components"][c]) for c in comps} for r in regimes}
        for o in options
    }
    title = _("Monthly cost by component", lang)
    section.charts.append(
        Chart(title, charts.stacked_components(data, comps, regimes, cur, title, lang))
    )
    if f["curves"]:
        title = _("Cost per useful GPU-hour against utilisation", lang)
        section.charts.append(
            Chart(
                title,
                charts.utilisation_curves(f["curves"], f["break_even"], cur, title, lang),
            )
        )
    sens = f.get("sensitivity")
    if sens and sens["inputs"]:
        key = "gap" if sens["measure"] == "gap" else "leader_total"
        base = sens["baseline_gap"] if sens["measure"] == "gap" else sens["baseline_total"]
        bars = [
            {
                "input": _loc(r["input"], lang),
                "low": float(r["low"][key]) if r["low"] else None,
                "high": float(r["high"][key]) if r["high"] else None,
            }
            for r in sens["inputs"][:TOP_INPUTS]
        ]
        title = _("Inputs moved -20 % / +20 %: what moves the decision", lang)
        section.charts.append(
            Chart(
                title,
                charts.tornado(
                    bars, float(base), sens["measure"], sens["step"], cur, title, lang
                ),
            )
        )


def _findings_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    """The findings of the cost analysis, numbered (stored messages rendered in `lang`)."""
    if not f["findings"]:
        return
    msgs = f.get("finding_messages")
    if isinstance(msgs, list) and len(msgs) == len(f["findings"]):
        texts = [render_message(m, lang) for m in msgs]
    else:
        texts = [_loc(text, lang) for text in f["findings"]]
    section.tables.append(
        Table(
            _("Findings (C8)", lang),
            ["#", _("finding", lang)],
            [[str(i), text] for i, text in enumerate(texts, 1)],
        )
    )


def _components_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    """Every C1 component of every option in every month."""
    cur = f["currency"]
    regimes = list(f["regimes"])
    comps = list(f["components"])
    options = f["options"]
    rows = []
    for o in options:
        for r in regimes:
            m = o["regimes"][r]
            rows.append(
                [
                    o["id"],
                    _month(r, lang) if lang != "en" else r,
                    *[money(m["components"][c], 0, lang) for c in comps],
                    money(m["total"], 0, lang),
                    num(Decimal(str(m["useful_gpu_hours"])), 1, lang),
                    pct(m["useful_utilisation"], lang),
                    money(m["cost_per_useful_gpu_hour"], 2, lang),
                ]
            )
    section.tables.append(
        Table(
            _("Every component (C1-C3), {currency}", lang).format(currency=cur),
            [
                _("option", lang),
                _("month", lang),
                *[charts.component_name(c, lang) for c in comps],
                _("total", lang),
                _("useful GPU-h", lang),
                _("useful utilisation (C2)", lang),
                _("per useful GPU-h (C3)", lang),
            ],
            rows,
        )
    )


def _months_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    """The three months and the workload each was built from."""
    section.tables.append(
        Table(
            _("How each month was chosen (C8)", lang),
            [
                _("month", lang),
                _("GPU-hours", lang),
                _("useful GPU-hours", lang),
                _("attempts", lang),
                _("trainings", lang),
                _("peak GPUs at once", lang),
                _("basis", lang),
            ],
            [
                [
                    _month(r, lang) if lang != "en" else r,
                    num(Decimal(str(w["gpu_hours"])), 1, lang),
                    num(Decimal(str(w["useful_gpu_hours"])), 1, lang),
                    num(Decimal(str(w["attempts"])), 1, lang),
                    num(Decimal(str(w["trainings"])), 1, lang),
                    str(w["peak_concurrent_gpus"]),
                    _loc(w["basis"], lang),
                ]
                for r, w in f["regimes"].items()
            ],
        )
    )


# How a dedicated option compares with a managed one as utilisation grows.
_CHEAPER = {
    "above": N_("above"),
    "below": N_("below"),
    "never": N_("never"),
    "always": N_("always"),
}


def _break_even_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    """Break-even useful utilisation of each dedicated option against each managed one."""
    if f["break_even"]:
        section.tables.append(
            Table(
                _("Break-even utilisation, dedicated against managed (C8)", lang),
                [
                    _("dedicated", lang),
                    _("managed", lang),
                    _("break-even useful utilisation", lang),
                    _("dedicated cheaper", lang),
                    _("reachable at most", lang),
                    _("observed normal", lang),
                    _("observed peak", lang),
                ],
                [
                    [
                        p["dedicated"],
                        p["managed"],
                        pct(p["break_even_useful_utilisation"], lang),
                        _(_CHEAPER.get(p["dedicated_cheaper"], p["dedicated_cheaper"]), lang),
                        pct(p["achievable_max"], lang),
                        pct(p["observed_normal"], lang),
                        pct(p["observed_peak"], lang),
                    ]
                    for p in f["break_even"]
                ],
            )
        )


def _peak_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    """Whether each dedicated pool absorbs the peak month (C8)."""
    cur = f["currency"]
    options = f["options"]
    na = not_available(lang)
    peak_rows = []
    for o in options:
        pc = o.get("peak_check")
        if pc is None:
            how = _("burst: {amount} {currency} over the normal month", lang).format(
                amount=money(o["burst_extra"], 0, lang), currency=cur
            )
            peak_rows.append([o["id"], _("managed", lang), na, na, how])
            continue
        absorbs = {True: _("yes", lang), False: _("no", lang), None: _("not measured", lang)}
        peak_rows.append(
            [
                o["id"],
                _("{n} GPUs", lang).format(n=pc["pool_gpus"]),
                str(pc["peak_concurrent_gpus"]),
                absorbs[pc["absorbs"]],
                _loc(pc["meaning"], lang),
            ]
        )
    section.tables.append(
        Table(
            _("Peak month: can the dedicated pool take the parallel jobs? (C8)", lang),
            [
                _("option", lang),
                _("pool", lang),
                _("peak GPUs at once", lang),
                _("absorbs", lang),
                _("how", lang),
            ],
            peak_rows,
        )
    )


def _waiting_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    """What waiting costs on each option (C7); the consequence is the team's own text."""
    cur = f["currency"]
    options = f["options"]
    na = not_available(lang)
    rows = []
    for o in options:
        w = o["waiting"]
        if w["assumed_monthly_cost"] is not None:
            money_cell = _("{amount} per month ({source})", lang).format(
                amount=money(w["assumed_monthly_cost"], 0, lang), source=w["assumption_source"]
            )
        else:
            money_cell = _("none given", lang)
        measured = "; ".join(_loc(m, lang) for m in w["measured"]) or na
        rows.append([o["id"], w["consequence"] or na, money_cell, measured])
    section.tables.append(
        Table(
            _("Waiting: consequences, not invented money (C7)", lang),
            [
                _("option", lang),
                _("consequence (team)", lang),
                _("money ({currency}, team's assumption)", lang).format(currency=cur),
                _("measured", lang),
            ],
            rows,
        )
    )


def _reversibility_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    """What shrinking each option costs and takes (V2)."""
    cur = f["currency"]
    options = f["options"]
    rev_rows = [
        [
            o["id"],
            str(rv["commitment_months_left"]),
            f"{money(rv['cost_to_shrink'], 0, lang)} {cur}",
            f"{rv['days_to_shrink']:g}" if lang == "en" else num(
                Decimal(str(rv["days_to_shrink"])), 1, lang
            ),
            _loc(rv["how"], lang),
        ]
        for o in options
        if (rv := o.get("reversibility"))
    ]
    if rev_rows:
        section.tables.append(
            Table(
                _("Reversibility of dedicated options (C10, V2): load drops after {n} months", lang)
                .format(n=f["exit_after_months"]),
                [
                    _("option", lang),
                    _("commitment months left", lang),
                    _("cost to shrink", lang),
                    _("days to shrink", lang),
                    _("how", lang),
                ],
                rev_rows,
            )
        )


def _sensitivity_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    """Inputs that move the cheapest option's lead (the tornado as a table)."""
    cur = f["currency"]
    sens = f.get("sensitivity")
    if not (sens and sens["inputs"]):
        return
    caption = (
        _(
            "Inputs that move the decision most (normal month): lead over the next option, "
            "{currency}; cheapest {option}",
            lang,
        )
        if sens["measure"] == "gap"
        else _(
            "Inputs that move the decision most (normal month): monthly cost, {currency}; "
            "cheapest {option}",
            lang,
        )
    ).format(currency=cur, option=sens["baseline_cheapest"])
    step = pct0(sens["step"], lang)
    section.tables.append(
        Table(
            caption,
            [
                _("input", lang),
                _("field", lang),
                _("-{step}: lead of the cheapest", lang).format(step=step),
                _("+{step}: lead of the cheapest", lang).format(step=step),
                _("swing", lang),
            ],
            [
                [
                    _loc(r["input"], lang),
                    _(r["field"], lang) if r["field"] == "profile" else r["field"],
                    _side(r["low"], sens["baseline_cheapest"], lang),
                    _side(r["high"], sens["baseline_cheapest"], lang),
                    money(r["swing"], 0, lang),
                ]
                for r in sens["inputs"][:TOP_INPUTS]
            ],
        )
    )


def _lines_tables(section: Section, f: dict[str, Any], lang: Language) -> None:
    """Every cost line with its price source, and every price (C5)."""
    cur = f["currency"]
    options = f["options"]
    section.tables.append(
        Table(
            _("Cost lines of the normal month, with sources (C5, C9), {currency}", lang).format(
                currency=cur
            ),
            [
                _("option", lang),
                _("component", lang),
                _("line", lang),
                _("amount", lang),
                _("source", lang),
            ],
            [
                [
                    o["id"],
                    charts.component_name(ln["component"], lang)
                    if lang != "en"
                    else ln["component"],
                    _loc(ln["label"], lang),
                    money(ln["amount"], 2, lang),
                    ln["source"],
                ]
                for o in options
                for ln in o["regimes"]["normal"]["lines"]
            ],
        )
    )
    section.tables.append(
        Table(
            _("Every price and its source (C5), {currency}", lang).format(currency=cur),
            [_("option", lang), _("field", lang), _("amount", lang), _("source", lang)],
            [
                [p["option"], p["field"], money(p["amount"], 2, lang), p["source"]]
                for p in f["prices"]
            ],
        )
    )


def _side(side: dict[str, Any] | None, leader: str, lang: Language) -> str:
    """What a moved input does: the baseline cheapest keeps its lead, or who takes over."""
    if side is None:
        return not_available(lang)
    if side["gap"] is None:
        return _("{leader} costs {amount}", lang).format(
            leader=leader, amount=money(side["leader_total"], 0, lang)
        )
    gap = Decimal(str(side["gap"]))
    if side["cheapest"] == leader:
        return _("{leader} stays cheapest, ahead by {amount}", lang).format(
            leader=leader, amount=money(str(gap), 0, lang)
        )
    return _("{other} takes over; {leader} behind by {amount}", lang).format(
        other=side["cheapest"], leader=leader, amount=money(str(-gap), 0, lang)
    )
