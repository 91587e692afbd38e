"""The cost section of the report (builder for `render.SECTION_BUILDERS["cost"]`).

Charts first (components, cost per useful GPU-hour against utilisation, tornado), then the
tables a reader checks the charts against: every C1 component of every option in every
month, every cost line with the source of its price, break-evens, the peak check, waiting,
reversibility and the inputs that flip the cheapest option. Every sentence the analysis
wrote is a stored message, said here in the reader's language.
"""

from __future__ import annotations

from decimal import Decimal

from gpudecide.cost import charts, words
from gpudecide.cost.figures import CostFigures, InputMove, figures_of
from gpudecide.cost.rules import peak_outcome
from gpudecide.cost.words import share_of
from gpudecide.fmt import money, not_available, num, pct, pct0
from gpudecide.i18n import translator
from gpudecide.message import render
from gpudecide.report.model import Chart, Section, Table

__all__ = ["TOP_INPUTS", "cost_section", "share_of", "side_text"]

TOP_INPUTS = 12

_ = translator("cost")


def cost_section(section: Section) -> None:
    """Fill the report section of a "cost" evidence record: charts first, then the tables."""
    f = figures_of(section.record)
    section.title = _("Cost: normal, peak and empty month")
    _charts(section, f)
    for step in (
        _findings_table,
        _components_table,
        _utilisation_table,
        _months_table,
        _break_even_table,
        _peak_table,
        _waiting_table,
        _reversibility_table,
        _sensitivity_table,
        _lines_tables,
    ):
        step(section, f)


def _month(regime: str) -> str:
    """The name of a month ("normal month") in the reader's language."""
    return words.word(words.REGIME_MONTHS, regime)


def _charts(section: Section, f: CostFigures) -> None:
    """Components by month, cost per useful GPU-hour, and the tornado."""
    cur = f.currency
    regimes = list(f.regimes)
    comps = list(f.components)
    data = {
        o.id: {r: {c: float(o.regimes[r].components[c]) for c in comps} for r in regimes}
        for o in f.options
    }
    title = _("Monthly cost by component")
    section.charts.append(Chart(title, charts.stacked_components(data, comps, regimes, cur, title)))
    if f.curves:
        title = _("Cost per useful GPU-hour against utilisation")
        section.charts.append(
            Chart(title, charts.utilisation_curves(f.curves, f.break_even, cur, title))
        )
    sens = f.sensitivity
    if sens and sens.inputs:
        by_gap = sens.measure == "gap"
        base = sens.baseline_gap if by_gap else sens.baseline_total
        bars = [
            {
                "input": render(r.input_message),
                "low": _moved(r.low, by_gap),
                "high": _moved(r.high, by_gap),
            }
            for r in sens.inputs[:TOP_INPUTS]
        ]
        title = _("Inputs moved -20 % / +20 %: what moves the decision")
        section.charts.append(
            Chart(
                title,
                charts.tornado(bars, float(base or 0), sens.measure, sens.step, cur, title),
            )
        )


def _moved(side: InputMove | None, by_gap: bool) -> float | None:
    """Where a moved input puts the bar: the cheapest option's lead, or its total."""
    if side is None:
        return None
    value = side.gap if by_gap else side.leader_total
    return float(value) if value is not None else None


def _findings_table(section: Section, f: CostFigures) -> None:
    """The findings of the cost analysis, numbered."""
    if not f.findings:
        return
    texts = [render(m) for m in f.finding_messages]
    section.tables.append(
        Table(
            _("Findings (C8)"),
            ["#", _("finding")],
            [[str(i), text] for i, text in enumerate(texts, 1)],
        )
    )


def _components_table(section: Section, f: CostFigures) -> None:
    """Every C1 component of every option in every month."""
    cur = f.currency
    regimes = list(f.regimes)
    comps = list(f.components)
    rows = []
    for o in f.options:
        for r in regimes:
            m = o.regimes[r]
            rows.append(
                [
                    o.id,
                    _month(r),
                    *[money(m.components[c], 0) for c in comps],
                    money(m.total, 0),
                    num(Decimal(str(m.useful_gpu_hours)), 1),
                    share_of(o, m.useful_utilisation),
                    money(m.cost_per_useful_gpu_hour, 2),
                ]
            )
    section.tables.append(
        Table(
            _("Every component (C1-C3), {currency}").format(currency=cur),
            [
                _("option"),
                _("month"),
                *[words.component_name(c) for c in comps],
                _("total"),
                _("useful GPU-h"),
                _("useful share (C2)"),
                _("per useful GPU-h (C3)"),
            ],
            rows,
        )
    )


def _utilisation_table(section: Section, f: CostFigures) -> None:
    """Every share of GPU-hours the cost stands on, side by side, each with its name: the
    cost's months, the profile's whole log and each replay's window of the same pool."""
    if not f.utilisation:
        return
    this = _("this record")
    section.tables.append(
        Table(
            _("Utilisation: every share of GPU-hours, named (C2)"),
            [_("option"), _("share"), _("value"), _("evidence")],
            [
                [
                    ", ".join(s.options),
                    render(s.name_message),
                    pct(s.share),
                    s.evidence or this,
                ]
                for s in f.utilisation
            ],
            verbatim=frozenset({0}),
        )
    )


def _months_table(section: Section, f: CostFigures) -> None:
    """The three months and the workload each was built from."""
    section.tables.append(
        Table(
            _("How each month was chosen (C8)"),
            [
                _("month"),
                _("GPU-hours"),
                _("useful GPU-hours"),
                _("attempts"),
                _("trainings"),
                _("peak GPUs at once"),
                _("basis"),
            ],
            [
                [
                    _month(r),
                    num(Decimal(str(w.gpu_hours)), 1),
                    num(Decimal(str(w.useful_gpu_hours)), 1),
                    num(Decimal(str(w.attempts)), 1),
                    num(Decimal(str(w.trainings)), 1),
                    str(w.peak_concurrent_gpus),
                    render(w.basis_message),
                ]
                for r, w in f.regimes.items()
            ],
        )
    )


def _break_even_table(section: Section, f: CostFigures) -> None:
    """Break-even useful utilisation of each dedicated option against each managed one."""
    pools = {o.id: o for o in f.options}
    if f.break_even:
        section.tables.append(
            Table(
                _("Break-even utilisation, dedicated against managed (C8)"),
                [
                    _("dedicated"),
                    _("managed"),
                    _("break-even useful utilisation"),
                    _("dedicated cheaper"),
                    _("reachable at most"),
                    _("observed, normal month"),
                    _("observed, peak month"),
                ],
                [
                    [
                        p.dedicated,
                        p.managed,
                        share_of(pools[p.dedicated], p.break_even_useful_utilisation),
                        words.word(words.CHEAPER, p.dedicated_cheaper),
                        share_of(pools[p.dedicated], p.achievable_max),
                        share_of(pools[p.dedicated], p.observed_normal),
                        share_of(pools[p.dedicated], p.observed_peak),
                    ]
                    for p in f.break_even
                ],
            )
        )


def _peak_table(section: Section, f: CostFigures) -> None:
    """Whether each dedicated pool absorbs the peak month (C8)."""
    cur = f.currency
    na = not_available()
    peak_rows = []
    for o in f.options:
        pc = o.peak_check
        if pc is None:
            how = _("burst: {amount} {currency} over the normal month").format(
                amount=money(o.burst_extra, 0), currency=cur
            )
            peak_rows.append([o.id, _("managed"), na, na, how])
            continue
        peak_rows.append(
            [
                o.id,
                render(words.gpus(pc.pool_gpus)),
                str(pc.peak_concurrent_gpus),
                words.word(words.PEAK_OUTCOMES, peak_outcome(pc.model_dump(mode="json"))),
                render(pc.meaning_message),
            ]
        )
    section.tables.append(
        Table(
            _("Peak month: can the dedicated pool take the parallel jobs? (C8)"),
            [_("option"), _("pool"), _("peak GPUs at once"), _("outcome"), _("how")],
            peak_rows,
        )
    )


def _waiting_table(section: Section, f: CostFigures) -> None:
    """What waiting costs on each option (C7); the consequence is the team's own text."""
    cur = f.currency
    na = not_available()
    rows = []
    for o in f.options:
        w = o.waiting
        if w.assumed_monthly_cost is not None:
            money_cell = _("{amount} per month ({source})").format(
                amount=money(w.assumed_monthly_cost, 0), source=w.assumption_source
            )
        else:
            money_cell = _("none given")
        measured = "; ".join(render(m) for m in w.measured_messages) or na
        rows.append([o.id, w.consequence or na, money_cell, measured])
    section.tables.append(
        Table(
            _("Waiting: consequences, not invented money (C7)"),
            [
                _("option"),
                _("consequence (team)"),
                _("money ({currency}, team's assumption)").format(currency=cur),
                _("measured"),
            ],
            rows,
        )
    )


def _reversibility_table(section: Section, f: CostFigures) -> None:
    """What leaving or shrinking each option costs and takes (V2): the commitment left, the
    notice, what the contract bills each month meanwhile."""
    cur = f.currency
    na = not_available()
    rev_rows = []
    for o in f.options:
        rv = o.reversibility
        if rv is None:
            continue
        parts = [rv] if rv.overflow is None else [rv, rv.overflow]  # a hybrid: base / overflow
        notices = [getattr(p, "notice_days", None) for p in parts]
        owed = [getattr(p, "committed_monthly", None) for p in parts]
        rev_rows.append(
            [
                o.id,
                " / ".join(str(p.commitment_months_left) for p in parts),
                " / ".join(na if n is None else str(n) for n in notices),
                " / ".join(na if m is None else money(m, 0) for m in owed),
                f"{money(rv.cost_to_shrink, 0)} {cur}",
                num(Decimal(str(rv.days_to_shrink)), 1),
                render(rv.how_message),
            ]
        )
    if rev_rows:
        section.tables.append(
            Table(
                _("Reversibility of every option (C10, V2): load drops after {n} months").format(
                    n=f.exit_after_months
                ),
                [
                    _("option"),
                    _("commitment months left"),
                    _("notice days"),
                    _("owed a month ({currency})").format(currency=cur),
                    _("cost to leave or shrink"),
                    _("days to leave or shrink"),
                    _("how"),
                ],
                rev_rows,
            )
        )


def _sensitivity_table(section: Section, f: CostFigures) -> None:
    """Inputs that move the cheapest option's lead (the tornado as a table)."""
    cur = f.currency
    sens = f.sensitivity
    if not (sens and sens.inputs):
        return
    caption = (
        _(
            "Inputs that move the decision most (normal month): lead over the next option, "
            "{currency}; cheapest {option}"
        )
        if sens.measure == "gap"
        else _(
            "Inputs that move the decision most (normal month): monthly cost, {currency}; "
            "cheapest {option}"
        )
    ).format(currency=cur, option=sens.baseline_cheapest)
    step = pct0(sens.step)
    section.tables.append(
        Table(
            caption,
            [
                _("input"),
                _("field"),
                _("-{step}: lead of the cheapest").format(step=step),
                _("+{step}: lead of the cheapest").format(step=step),
                _("swing"),
            ],
            [
                [
                    render(r.input_message),
                    _("profile") if r.field == "profile" else r.field,
                    side_text(r.low, sens.baseline_cheapest),
                    side_text(r.high, sens.baseline_cheapest),
                    money(r.swing, 0),
                ]
                for r in sens.inputs[:TOP_INPUTS]
            ],
        )
    )


def _lines_tables(section: Section, f: CostFigures) -> None:
    """Every cost line with its price source, and every price (C5)."""
    cur = f.currency
    section.tables.append(
        Table(
            _("Cost lines of the normal month, with sources (C5, C9), {currency}").format(
                currency=cur
            ),
            [_("option"), _("component"), _("line"), _("amount"), _("source")],
            [
                [
                    o.id,
                    words.component_name(ln.component),
                    render(ln.label_message),
                    money(ln.amount, 2),
                    ln.source,
                ]
                for o in f.options
                for ln in o.regimes["normal"].lines
            ],
        )
    )
    section.tables.append(
        Table(
            _("Every price and its source (C5), {currency}").format(currency=cur),
            [_("option"), _("field"), _("amount"), _("source")],
            [[p.option, p.field, money(p.amount, 2), p.source] for p in f.prices],
        )
    )


def side_text(side: InputMove | None, leader: str) -> str:
    """What a moved input does: the baseline cheapest keeps its lead, or who takes over."""
    if side is None:
        return not_available()
    if side.gap is None:
        return _("{leader} costs {amount}").format(
            leader=leader, amount=money(side.leader_total, 0)
        )
    gap = Decimal(side.gap)
    if side.cheapest == leader:
        return _("{leader} stays cheapest, ahead by {amount}").format(
            leader=leader, amount=money(str(gap), 0)
        )
    return _("{other} takes over; {leader} behind by {amount}").format(
        other=side.cheapest, leader=leader, amount=money(str(-gap), 0)
    )
