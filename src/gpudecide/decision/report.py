"""The decision's report section, the first of the report (SPEC D3-D5, V1-V2).

Order: the decision and its status, stop factors (before any total), the matrix (each score
with its source, rule and evidence; assumptions marked), robustness with its chart, the
D1/D2 conditions, each option's sites and reversibility.
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt

from gpudecide.i18n import translator
from gpudecide.report.charts import _svg
from gpudecide.report.i18n import Language, render_message
from gpudecide.report.model import Chart, Section, Table

_ = translator("decision")

MARK = {"evidence": "", "override": " (override)", "document": " (document)", "assumption": " *"}


def decision_section(section: Section, lang: Language) -> None:
    """Fill the report section of a "decision" evidence record."""
    f = section.record.figures
    section.title = _("Decision", lang)
    _status_table(section, f, lang)
    _stop_table(section, f, lang)
    _matrix_tables(section, f, lang)
    _robustness(section, f, lang)
    _conditions_table(section, f, lang)
    _sites_and_reversibility(section, f, lang)


def _status_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    d = f["decision"]
    status = {
        "decided": _("decided", lang),
        "tie": _("tie", lang),
        "no_option_passes": _("no option passes", lang),
    }[d["status"]]
    rows = [
        [_("status", lang), status],
        [_("recommended option", lang), d["recommended"] or "-"],
        [_("scores that are assumptions", lang), str(f["assumptions"])],
        [
            _("assumptions decide the winner", lang),
            _("yes", lang) if f["assumptions_decide"] else _("no", lang),
        ],
        [_("robustness", lang), f["robustness"]["verdict"]],
    ]
    section.tables.append(Table(_("The decision", lang), [_("item", lang), _("value", lang)], rows))


def _stop_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    rows = [
        [o["id"], s["id"], s["rule"], ", ".join(s["evidence"]), s["clear"]]
        for o in f["options"]
        for s in o["stop_factors"]
    ]
    section.tables.append(
        Table(
            _("Stop factors (D5): an option with one is excluded whatever its total", lang),
            [
                _("option", lang),
                _("stop factor", lang),
                _("rule", lang),
                _("evidence", lang),
                _("what would clear it", lang),
            ],
            rows or [["-", _("none", lang), "", "", ""]],
        )
    )


def _matrix_tables(section: Section, f: dict[str, Any], lang: Language) -> None:
    criteria = list(f["weights"])
    compared = [o for o in f["options"] if o["standalone"]]
    head = [_("option", lang)] + [f"{c} (x{f['weights'][c]})" for c in criteria]
    rows = []
    for o in sorted(compared, key=lambda o: (o["rank"] is None, o["rank"] or 0, o["id"])):
        cells = [f"{o['scores'][c]['score']}{MARK[o['scores'][c]['source']]}" for c in criteria]
        total = "-" if o["total"] is None else f"{o['total']:.0f}"
        rank = _("stopped", lang) if o["stop_factors"] else str(o["rank"])
        rows.append([o["id"], *cells, total, rank])
    section.tables.append(
        Table(
            _("Matrix (D3, D4): scores 1-5; * an assumption, no evidence", lang),
            [*head, _("total /100", lang), _("rank", lang)],
            rows,
        )
    )
    detail = [
        [
            o["id"],
            c,
            str(cell["score"]),
            cell["source"],
            ", ".join(cell["evidence"]) or "-",
            cell["justification"] or cell["rule"],
        ]
        for o in compared
        for c, cell in o["scores"].items()
    ]
    section.tables.append(
        Table(
            _("Where each score comes from", lang),
            [
                _("option", lang),
                _("criterion", lang),
                _("score", lang),
                _("source", lang),
                _("evidence", lang),
                _("rule or justification", lang),
            ],
            detail,
        )
    )


def _robustness(section: Section, f: dict[str, Any], lang: Language) -> None:
    r = f["robustness"]
    shares = [
        (_("+-1 around the team's weights", lang), r["winner_share_pm1"]),
        (_("whole 1..5 grid", lang), r["winner_share_grid"]),
        (_("Dirichlet around the weights", lang), r["winner_share_dirichlet"]),
    ]
    if r["winner"] is not None and all(v is not None for _k, v in shares):
        title = _("Share of weight vectors in which the winner stays the winner", lang)
        section.charts.append(Chart(title, robustness_chart(shares, title)))
    flip = r["flip"]
    rows = [[label, "-" if v is None else f"{v:.1%}"] for label, v in shares] + [
        [
            _("smallest change that flips the winner", lang),
            "-"
            if flip is None
            else f"{flip['criterion']} {flip['from_weight']} -> {flip['new_weight']}: "
            f"{flip['new_winner'] or _('tie', lang)}",
        ],
        [
            _("rank reversals among the rest (+-1)", lang),
            "; ".join(
                f"{x['below']} > {x['above']} ({x['share_reversed']:.0%})"
                for x in r["rank_reversals"]
            )
            or "-",
        ],
    ]
    section.tables.append(
        Table(_("Robustness of the winner", lang), [_("test", lang), _("result", lang)], rows)
    )


def robustness_chart(shares: list[tuple[str, float | None]], title: str) -> str:
    """Horizontal bars: the winner's share of each family of weight vectors."""
    fig, ax = plt.subplots(figsize=(6.5, 1.9))
    labels = [label for label, _v in shares]
    values = [100 * (v or 0.0) for _l, v in shares]
    ax.barh(range(len(values)), values, color="#4c78a8", height=0.55)
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.set_xlim(0, 100)
    ax.invert_yaxis()
    for i, v in enumerate(values):
        ax.text(min(v + 1, 92), i, f"{v:.0f} %", va="center", fontsize=8)
    ax.set_title(title, loc="left")
    return _svg(fig, title)


def _conditions_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    state = {"true": _("true", lang), "false": _("false", lang), "unknown": _("unknown", lang)}
    section.tables.append(
        Table(
            _("Conditions for dedicated (D1) and managed (D2)", lang),
            [
                _("group", lang),
                _("condition", lang),
                _("option", lang),
                _("state", lang),
                _("evidence", lang),
                _("why", lang),
            ],
            [
                [
                    c["group"],
                    c["text"],
                    c["option"] or "-",
                    state[c["state"]],
                    ", ".join(c["evidence"]) or "-",
                    c["why"],
                ]
                for c in f["conditions"]
            ],
        )
    )


def _sites_and_reversibility(section: Section, f: dict[str, Any], lang: Language) -> None:
    section.tables.append(
        Table(
            _("Where each option keeps and processes data", lang),
            [_("option", lang), _("kind", lang), _("sites", lang)],
            [
                [
                    o["id"],
                    o["kind"],
                    "; ".join(
                        f"{'/'.join(s['roles'])}: {s['country']} {s['region']} ({s['provider']})"
                        for s in o["sites"]
                    )
                    or "-",
                ]
                for o in f["options"]
            ],
        )
    )
    rows = []
    for r in f["reversibility"]:
        move = r["move_out"]
        shrink = r.get("shrink") or {}
        rows.append(
            [
                r["option"],
                "-" if move["hours"] is None else f"{move['hours']:g} h at {move['gbps']:g} GB/s",
                move["basis"],
                "; ".join(r.get("manual_actions") or []) or "-",
                "-"
                if not shrink
                else f"{shrink['cost']} {shrink['currency']}, {shrink['days']:g} d",
                shrink.get("how", "-"),
            ]
        )
    section.tables.append(
        Table(
            _("Reversibility (V1, V2)", lang),
            [
                _("option", lang),
                _("move one run out", lang),
                _("basis", lang),
                _("manual steps", lang),
                _("cost and days to shrink", lang),
                _("how", lang),
            ],
            rows,
        )
    )


def hybrid_section(section: Section, lang: Language) -> None:
    """Fill the report section of a "hybrid" evidence record (SPEC H1-H3)."""
    section.title = _("Hybrid: one system across two contours", lang)
    for h in section.record.figures.get("hybrids", []):
        b = h["boundary"]
        section.tables.append(
            Table(
                f"{h['option']}: {' + '.join(h['contours'])}",
                [_("finding", lang), _("detail", lang)],
                [
                    [f["id"], render_message(f["message"], lang) if "message" in f else f["detail"]]
                    for f in h["findings"]
                ]
                or [[_("none", lang), _("the contours agree", lang)]],
            )
        )
        section.tables.append(
            Table(
                _("Boundary (H1)", lang),
                [_("what crosses", lang), _("approved by", lang)],
                [[", ".join(b["crosses"]) or "-", b["approved_by"] or "-"]],
            )
        )
