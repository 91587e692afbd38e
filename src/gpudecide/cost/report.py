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
from gpudecide.cost.fmt import money, num
from gpudecide.report.fmt import pct
from gpudecide.report.i18n import Language, t
from gpudecide.report.model import Chart, Section, Table

TOP_INPUTS = 12

_STRINGS: dict[str, dict[str, str]] = {
    "title": {
        "en": "Cost: normal, peak and empty month",
        "ru": "Стоимость: обычный, пиковый и пустой месяц",
        "kk": "Құны: қалыпты, шыңдық және бос ай",
    },
    "chart_components": {
        "en": "Monthly cost by component",
        "ru": "Месячная стоимость по статьям",
        "kk": "Баптар бойынша айлық құн",
    },
    "chart_curves": {
        "en": "Cost per useful GPU-hour against utilisation",
        "ru": "Стоимость полезного GPU-часа от загрузки",
        "kk": "Пайдалы GPU-сағат құны мен жүктеме",
    },
    "chart_tornado": {
        "en": "Inputs moved -20 % / +20 %: what moves the decision",
        "ru": "Входы -20 % / +20 %: что сдвигает решение",
        "kk": "Кірістер -20 % / +20 %: шешімді не өзгертеді",
    },
    "findings": {"en": "Findings (C8)", "ru": "Выводы (C8)", "kk": "Тұжырымдар (C8)"},
    "by_component": {
        "en": "Every component (C1-C3)",
        "ru": "Все статьи (C1-C3)",
        "kk": "Барлық баптар (C1-C3)",
    },
    "months": {
        "en": "How each month was chosen (C8)",
        "ru": "Как выбран каждый месяц (C8)",
        "kk": "Әр ай қалай таңдалды (C8)",
    },
    "break_even": {
        "en": "Break-even utilisation, dedicated against managed (C8)",
        "ru": "Загрузка безубыточности: выделенный против управляемого (C8)",
        "kk": "Шығынсыздық жүктемесі: бөлінген мен басқарылатын (C8)",
    },
    "peak": {
        "en": "Peak month: can the dedicated pool take the parallel jobs? (C8)",
        "ru": "Пиковый месяц: выдержит ли выделенный пул параллельные задания (C8)",
        "kk": "Шыңдық ай: бөлінген пул параллель тапсырмаларды көтере ме (C8)",
    },
    "waiting": {
        "en": "Waiting: consequences, not invented money (C7)",
        "ru": "Ожидание: последствия, а не выдуманные суммы (C7)",
        "kk": "Күту: ойдан шығарылған сома емес, салдар (C7)",
    },
    "reversibility": {
        "en": "Reversibility of dedicated options (C10, V2)",
        "ru": "Обратимость выделенных вариантов (C10, V2)",
        "kk": "Бөлінген нұсқалардың қайтымдылығы (C10, V2)",
    },
    "sensitivity": {
        "en": "Inputs that move the decision most (normal month)",
        "ru": "Входы, сильнее всего влияющие на решение (обычный месяц)",
        "kk": "Шешімге ең көп әсер ететін кірістер (қалыпты ай)",
    },
    "lines": {
        "en": "Cost lines of the normal month, with sources (C5, C9)",
        "ru": "Строки затрат обычного месяца с источниками (C5, C9)",
        "kk": "Қалыпты айдың шығын жолдары, дереккөздерімен (C5, C9)",
    },
    "prices": {
        "en": "Every price and its source (C5)",
        "ru": "Все цены и их источники (C5)",
        "kk": "Барлық бағалар және олардың дереккөзі (C5)",
    },
}


def _t(key: str, lang: Language) -> str:
    return t(key, lang, _STRINGS)


def cost_section(section: Section, lang: Language) -> None:
    """Fill the report section of a "cost" evidence record: charts first, then the tables."""
    f = section.record.figures
    section.title = _t("title", lang)
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
    section.charts.append(
        Chart(
            _t("chart_components", lang),
            charts.stacked_components(data, comps, regimes, cur, _t("chart_components", lang)),
        )
    )
    if f["curves"]:
        section.charts.append(
            Chart(
                _t("chart_curves", lang),
                charts.utilisation_curves(
                    f["curves"], f["break_even"], cur, _t("chart_curves", lang)
                ),
            )
        )
    sens = f.get("sensitivity")
    if sens and sens["inputs"]:
        key = "gap" if sens["measure"] == "gap" else "leader_total"
        base = sens["baseline_gap"] if sens["measure"] == "gap" else sens["baseline_total"]
        bars = [
            {
                "input": r["input"],
                "low": float(r["low"][key]) if r["low"] else None,
                "high": float(r["high"][key]) if r["high"] else None,
            }
            for r in sens["inputs"][:TOP_INPUTS]
        ]
        section.charts.append(
            Chart(
                _t("chart_tornado", lang),
                charts.tornado(
                    bars, float(base), sens["measure"], sens["step"], cur, _t("chart_tornado", lang)
                ),
            )
        )


def _findings_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    """The findings of the cost analysis, numbered."""
    if f["findings"]:
        section.tables.append(
            Table(
                _t("findings", lang),
                ["#", "finding"],
                [[str(i), text] for i, text in enumerate(f["findings"], 1)],
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
                    r,
                    *[money(m["components"][c]) for c in comps],
                    money(m["total"]),
                    num(Decimal(str(m["useful_gpu_hours"])), 1),
                    pct(m["useful_utilisation"]),
                    money(m["cost_per_useful_gpu_hour"], 2),
                ]
            )
    section.tables.append(
        Table(
            f"{_t('by_component', lang)}, {cur}",
            [
                "option",
                "month",
                *[c.replace("_", " ") for c in comps],
                "total",
                "useful GPU-h",
                "useful utilisation (C2)",
                "per useful GPU-h (C3)",
            ],
            rows,
        )
    )


def _months_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    """The three months and the workload each was built from."""
    section.tables.append(
        Table(
            _t("months", lang),
            [
                "month",
                "GPU-hours",
                "useful GPU-hours",
                "attempts",
                "trainings",
                "peak GPUs at once",
                "basis",
            ],
            [
                [
                    r,
                    num(Decimal(str(w["gpu_hours"])), 1),
                    num(Decimal(str(w["useful_gpu_hours"])), 1),
                    num(Decimal(str(w["attempts"])), 1),
                    num(Decimal(str(w["trainings"])), 1),
                    str(w["peak_concurrent_gpus"]),
                    w["basis"],
                ]
                for r, w in f["regimes"].items()
            ],
        )
    )


def _break_even_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    """Break-even useful utilisation of each dedicated option against each managed one."""
    if f["break_even"]:
        section.tables.append(
            Table(
                _t("break_even", lang),
                [
                    "dedicated",
                    "managed",
                    "break-even useful utilisation",
                    "dedicated cheaper",
                    "reachable at most",
                    "observed normal",
                    "observed peak",
                ],
                [
                    [
                        p["dedicated"],
                        p["managed"],
                        pct(p["break_even_useful_utilisation"]),
                        p["dedicated_cheaper"],
                        pct(p["achievable_max"]),
                        pct(p["observed_normal"]),
                        pct(p["observed_peak"]),
                    ]
                    for p in f["break_even"]
                ],
            )
        )


def _peak_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    """Whether each dedicated pool absorbs the peak month (C8)."""
    cur = f["currency"]
    options = f["options"]
    peak_rows = []
    for o in options:
        pc = o.get("peak_check")
        if pc is None:
            burst = o["burst_extra"]
            how = f"burst: {money(burst)} {cur} over the normal month"
            peak_rows.append([o["id"], "managed", "n/a", "n/a", how])
            continue
        absorbs = {True: "yes", False: "no", None: "not measured"}[pc["absorbs"]]
        peak_rows.append(
            [
                o["id"],
                f"{pc['pool_gpus']} GPUs",
                str(pc["peak_concurrent_gpus"]),
                absorbs,
                pc["meaning"],
            ]
        )
    section.tables.append(
        Table(
            _t("peak", lang),
            ["option", "pool", "peak GPUs at once", "absorbs", "how"],
            peak_rows,
        )
    )


def _waiting_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    """What waiting costs on each option (C7)."""
    cur = f["currency"]
    options = f["options"]
    section.tables.append(
        Table(
            _t("waiting", lang),
            ["option", "consequence (team)", f"money ({cur}, team's assumption)", "measured"],
            [
                [
                    o["id"],
                    o["waiting"]["consequence"] or "n/a",
                    (
                        f"{money(o['waiting']['assumed_monthly_cost'])} per month "
                        f"({o['waiting']['assumption_source']})"
                        if o["waiting"]["assumed_monthly_cost"] is not None
                        else "none given"
                    ),
                    "; ".join(o["waiting"]["measured"]) or "n/a",
                ]
                for o in options
            ],
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
            f"{money(rv['cost_to_shrink'])} {cur}",
            f"{rv['days_to_shrink']:g}",
            rv["how"],
        ]
        for o in options
        if (rv := o.get("reversibility"))
    ]
    if rev_rows:
        section.tables.append(
            Table(
                f"{_t('reversibility', lang)}: load drops after {f['exit_after_months']} months",
                ["option", "commitment months left", "cost to shrink", "days to shrink", "how"],
                rev_rows,
            )
        )


def _sensitivity_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    """Inputs that move the cheapest option's lead (the tornado as a table)."""
    cur = f["currency"]
    sens = f.get("sensitivity")
    if sens and sens["inputs"]:
        what = "lead over the next option" if sens["measure"] == "gap" else "monthly cost"
        section.tables.append(
            Table(
                f"{_t('sensitivity', lang)}: {what}, {cur}; cheapest {sens['baseline_cheapest']}",
                [
                    "input",
                    "field",
                    f"-{sens['step']:.0%}: lead of the cheapest",
                    f"+{sens['step']:.0%}: lead of the cheapest",
                    "swing",
                ],
                [
                    [
                        r["input"],
                        r["field"],
                        _side(r["low"], sens["baseline_cheapest"]),
                        _side(r["high"], sens["baseline_cheapest"]),
                        money(r["swing"]),
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
            f"{_t('lines', lang)}, {cur}",
            ["option", "component", "line", "amount", "source"],
            [
                [o["id"], ln["component"], ln["label"], money(ln["amount"], 2), ln["source"]]
                for o in options
                for ln in o["regimes"]["normal"]["lines"]
            ],
        )
    )
    section.tables.append(
        Table(
            f"{_t('prices', lang)}, {cur}",
            ["option", "field", "amount", "source"],
            [[p["option"], p["field"], money(p["amount"], 2), p["source"]] for p in f["prices"]],
        )
    )


def _side(side: dict[str, Any] | None, leader: str) -> str:
    """What a moved input does: the baseline cheapest keeps its lead, or who takes over."""
    if side is None:
        return "n/a"
    if side["gap"] is None:
        return f"{leader} costs {money(side['leader_total'])}"
    gap = Decimal(str(side["gap"]))
    if side["cheapest"] == leader:
        return f"{leader} stays cheapest, ahead by {money(gap)}"
    return f"{side['cheapest']} takes over; {leader} behind by {money(-gap)}"
