"""The decision's report section, the first of the report (SPEC D3-D5, V1-V2).

Order: the decision and its status, stop factors (before any total), the matrix (each score
with its source, rule and evidence; assumptions marked), robustness with its chart, the
D1/D2 conditions, each option's sites and reversibility.

Every text the decision record holds is said in the report's language: rules, stop factors,
conditions, bases and verdicts through the messages stored beside their English (`say`); a
text of an older record or another analysis without one through the catalogue patterns.
Ids (options, stop factors, evidence) sit in verbatim columns.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import matplotlib.pyplot as plt

from gpudecide.cost.fmt import money
from gpudecide.decision.robustness import CRITERION_NAMES
from gpudecide.i18n import translator
from gpudecide.report.charts import _svg
from gpudecide.report.fmt import fmt, pct, pct0
from gpudecide.report.i18n import N_, P_, Language, render_message, say
from gpudecide.report.model import Chart, Section, Table

_ = translator("decision")

# A score's source, as the matrix marks it and the detail table names it.
SOURCES = {
    "evidence": N_("evidence"),
    "override": N_("override"),
    "document": N_("document"),
    "assumption": N_("assumption"),
}
KINDS = {
    "owned": N_("owned"),
    "rented": N_("rented"),
    "managed": N_("managed"),
    "hybrid": N_("hybrid"),
}
ROLES = {"storage": N_("storage"), "processing": N_("processing"), "backup": N_("backup")}
# A contour's stop factor on its hybrid, for records whose contour text has no message.
PATTERNS = (P_("through its contour {contour}: {rule}"),)


def mark(source: str, lang: Language) -> str:
    """What follows a score in the matrix: nothing for evidence, " *" for an assumption, the
    source in brackets for an override or a document."""
    if source == "evidence":
        return ""
    if source == "assumption":
        return " *"
    return f" ({_(SOURCES.get(source, source), lang)})"


def _word(words: Mapping[str, str], value: str, lang: Language) -> str:
    return _(words[value], lang) if value in words else value


def criterion(cid: str, lang: Language) -> str:
    """A built-in criterion in the reader's language; a team's own criterion as written."""
    return _word(CRITERION_NAMES, cid, lang)


def _say(holder: Mapping[str, Any], key: str, lang: Language) -> str:
    """`holder[key]` (English) in `lang` via `holder[key + "_message"]` when stored."""
    text = holder.get(key) or ""
    return say(str(text), holder.get(f"{key}_message"), lang) if text else ""


def rule_text(cell: Mapping[str, Any], lang: Language) -> str:
    """A score's justification (the team's words), else its rules in the reader's language."""
    if cell.get("justification"):
        return str(cell["justification"])
    parts = cell.get("rule_parts") or []
    if parts:
        return "; ".join(say(str(p["text"]), p.get("message"), lang) for p in parts)
    return say(str(cell.get("rule") or ""), None, lang)


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
        [_("robustness", lang), _say(f["robustness"], "verdict", lang)],
    ]
    section.tables.append(Table(_("The decision", lang), [_("item", lang), _("value", lang)], rows))


def _stop_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    rows = [
        [
            o["id"],
            s["id"],
            _say(s, "rule", lang),
            ", ".join(s["evidence"]),
            _say(s, "clear", lang),
        ]
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
            verbatim=frozenset({0, 1, 3}) if rows else frozenset(),
        )
    )


def _matrix_tables(section: Section, f: dict[str, Any], lang: Language) -> None:
    criteria = list(f["weights"])
    compared = [o for o in f["options"] if o["standalone"]]
    head = [_("option", lang)] + [f"{criterion(c, lang)} (x{f['weights'][c]})" for c in criteria]
    rows = []
    for o in sorted(compared, key=lambda o: (o["rank"] is None, o["rank"] or 0, o["id"])):
        cells = [
            f"{o['scores'][c]['score']}{mark(o['scores'][c]['source'], lang)}" for c in criteria
        ]
        total = "-" if o["total"] is None else f"{o['total']:.0f}"
        rank = _("stopped", lang) if o["stop_factors"] else str(o["rank"])
        rows.append([o["id"], *cells, total, rank])
    section.tables.append(
        Table(
            _("Matrix (D3, D4): scores 1-5; * an assumption, no evidence", lang),
            [*head, _("total /100", lang), _("rank", lang)],
            rows,
            verbatim=frozenset({0}),
        )
    )
    detail = [
        [
            o["id"],
            criterion(c, lang),
            str(cell["score"]),
            _word(SOURCES, cell["source"], lang),
            ", ".join(cell["evidence"]) or "-",
            rule_text(cell, lang),
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
            verbatim=frozenset({0, 4}),
        )
    )


def _flip_text(flip: Mapping[str, Any] | None, lang: Language) -> str:
    if flip is None:
        return "-"
    return _("{criterion} {old} -> {new}: {winner}", lang).format(
        criterion=criterion(str(flip["criterion"]), lang),
        old=flip["from_weight"],
        new=flip["new_weight"],
        winner=flip["new_winner"] or _("tie", lang),
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
    reversals = "; ".join(
        f"{x['below']} > {x['above']} ({pct0(x['share_reversed'], lang)})"
        for x in r["rank_reversals"]
    )
    rows = [[label, "-" if v is None else pct(v, lang)] for label, v in shares] + [
        [_("smallest change that flips the winner", lang), _flip_text(r["flip"], lang)],
        [_("rank reversals among the rest (+-1)", lang), reversals or "-"],
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
                    _say(c, "text", lang),
                    c["option"] or "-",
                    state[c["state"]],
                    ", ".join(c["evidence"]) or "-",
                    _say(c, "why", lang),
                ]
                for c in f["conditions"]
            ],
            verbatim=frozenset({2, 4}),
        )
    )


def sites_text(sites: list[Mapping[str, Any]], lang: Language) -> str:
    """An option's sites: "storage/processing: KZ Almaty (provider); ..." in `lang`."""
    return "; ".join(
        "{roles}: {country} {region} ({provider})".format(
            roles="/".join(_word(ROLES, r, lang) for r in s["roles"]),
            country=s["country"],
            region=s["region"],
            provider=s["provider"],
        )
        for s in sites
    )


def move_out_text(move: Mapping[str, Any], lang: Language) -> str:
    """Time to move one run out at the measured throughput, in a unit that reads (seconds,
    minutes or hours), or "-" when not measured."""
    if move.get("hours") is None or not move.get("gbps"):
        return "-"
    seconds = float(move["hours"]) * 3600
    if seconds < 0.001:
        took = _("under {n} s", lang).format(n=fmt(0.001, lang))
    elif seconds < 60:
        took = _("{n} s", lang).format(n=fmt(round(seconds, 3), lang))
    elif seconds < 3600:
        took = _("{n} min", lang).format(n=fmt(round(seconds / 60, 1), lang))
    else:
        took = _("{n} h", lang).format(n=fmt(round(seconds / 3600, 1), lang))
    return _("{time} at {gbps} GB/s", lang).format(time=took, gbps=fmt(float(move["gbps"]), lang))


def shrink_text(shrink: Mapping[str, Any], lang: Language) -> str:
    """Cost and days to shrink a pool, or "-" for an option with nothing priced."""
    if not shrink:
        return "-"
    return _("{cost} {currency}, {days} d", lang).format(
        cost=money(None if shrink.get("cost") is None else str(shrink["cost"]), 0, lang),
        currency=shrink.get("currency") or "",
        days=fmt(float(shrink.get("days") or 0), lang),
    )


def _sites_and_reversibility(section: Section, f: dict[str, Any], lang: Language) -> None:
    section.tables.append(
        Table(
            _("Where each option keeps and processes data", lang),
            [_("option", lang), _("kind", lang), _("sites", lang)],
            [
                [o["id"], _word(KINDS, o["kind"], lang), sites_text(o["sites"], lang) or "-"]
                for o in f["options"]
            ],
            verbatim=frozenset({0}),
        )
    )
    rows = []
    for r in f["reversibility"]:
        move = r["move_out"]
        shrink = r.get("shrink") or {}
        how = say(str(shrink.get("how") or ""), shrink.get("how_message"), lang, ("cost",))
        rows.append(
            [
                r["option"],
                move_out_text(move, lang),
                _say(move, "basis", lang),
                "; ".join(r.get("manual_actions") or []) or "-",
                shrink_text(shrink, lang),
                how if shrink.get("how") else "-",
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
            verbatim=frozenset({0}),
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
