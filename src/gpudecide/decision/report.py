"""The decision's report section, the first of the report (SPEC D3-D5, V1-V2).

Order: the decision and its status, what it rests on (every option's must-prove items:
verified, rehearsed, claimed, not checked or failed), the next actions that would settle a
provisional decision, stop factors (before any total), the matrix (each score with its
source, rule and evidence; assumptions and rehearsals marked), the bounds of the unsettled
scores, robustness with its chart, the D1/D2 conditions, each option's sites and
reversibility.

Every text the decision record holds is a stored message said in the reader's language;
ids (options, stop factors, evidence, commands) sit in verbatim columns.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import matplotlib.pyplot as plt

from gpudecide import fmt
from gpudecide.decision.actions import ITEM_NAMES, SOURCE_NAMES, STATE_NAMES
from gpudecide.decision.robustness import CRITERION_NAMES
from gpudecide.i18n import N_, translator
from gpudecide.message import is_message, render
from gpudecide.report.charts import figure_svg
from gpudecide.report.model import Chart, Overview, Section, Table

__all__ = [
    "CONDITION_STATES",
    "CONTOUR_FACTS",
    "KINDS",
    "ROLES",
    "STATUSES",
    "criterion",
    "decision_overview",
    "decision_section",
    "hybrid_section",
    "mark",
    "move_out_text",
    "robustness_chart",
    "rule_text",
    "shrink_text",
    "sites_text",
]

_ = translator("decision")

KINDS = {
    "owned": N_("owned"),
    "rented": N_("rented"),
    "managed": N_("managed"),
    "hybrid": N_("hybrid"),
}
ROLES = {"storage": N_("storage"), "processing": N_("processing"), "backup": N_("backup")}
STATUSES = {
    "decided": N_("decided"),
    "provisional": N_("provisional"),
    "tie": N_("tie"),
    "no_option_passes": N_("no option passes"),
}
CONDITION_STATES = {"true": N_("true"), "false": N_("false"), "unknown": N_("unknown")}


def _word(words: Mapping[str, str], value: str) -> str:
    """A word of the schema in the reader's language; anything else as written."""
    return _(words[value]) if value in words else value


def mark(source: str) -> str:
    """What follows a score in the matrix: nothing for evidence, " *" for an assumption,
    " ~" for a rehearsal, the source in brackets for an override or a document."""
    return {"evidence": "", "assumption": " *", "rehearsal": " ~"}.get(
        source, f" ({_word(SOURCE_NAMES, source)})"
    )


def criterion(cid: str) -> str:
    """A built-in criterion in the reader's language; a team's own criterion as written."""
    return _word(CRITERION_NAMES, cid)


def _said(holder: Mapping[str, Any], key: str) -> str:
    """`holder[key]` in the reader's language: its stored message (`key_message`), else the
    English as written."""
    msg = holder.get(f"{key}_message")
    return render(msg) if is_message(msg) else str(holder.get(key) or "")


def rule_text(cell: Mapping[str, Any]) -> str:
    """A score's justification (the team's words), else its rules in the reader's language."""
    if cell.get("justification"):
        return str(cell["justification"])
    parts = cell.get("rule_parts") or []
    if parts:
        return "; ".join(
            render(p["message"]) if is_message(p.get("message")) else str(p["text"]) for p in parts
        )
    return str(cell.get("rule") or "")


def decision_section(section: Section) -> None:
    """Fill the report section of a "decision" evidence record."""
    f = section.record.figures
    section.title = _("Decision")
    _status_table(section, f)
    _coverage_table(section, f)
    _actions_table(section, f)
    _contradictions_table(section, f)
    _stop_table(section, f)
    _matrix_tables(section, f)
    _bounds_table(section, f)
    _robustness(section, f)
    _conditions_table(section, f)
    _sites_and_reversibility(section, f)


def _status_table(section: Section, f: dict[str, Any]) -> None:
    d = f["decision"]
    leading = d.get("leading") or d.get("recommended")
    rows = [
        [_("status"), _word(STATUSES, d["status"])],
        [_("recommended option"), d["recommended"] or "-"],
        [_("leading option"), leading or "-"],
        [_("scores that are assumptions"), str(f["assumptions"])],
        [_("scores resting on rehearsals"), str(f.get("rehearsals", 0))],
        [
            _("unsettled scores can change the winner"),
            _("yes") if f["assumptions_decide"] else _("no"),
        ],
        [_("robustness"), _said(f["robustness"], "verdict")],
    ]
    section.tables.append(Table(_("The decision"), [_("item"), _("value")], rows))


def _coverage_table(section: Section, f: dict[str, Any]) -> None:
    """The must-prove items of every option: what is verified and what is not (D4)."""
    rows = []
    for o in f["options"]:
        for item in o.get("coverage", []):
            rows.append(
                [
                    o["id"] if not item.get("contour") else f"{o['id']} ({item['contour']})",
                    _word(ITEM_NAMES, item["id"]),
                    ", ".join(item["spec"]),
                    _word(STATE_NAMES, item["state"]),
                    render(item["why"]),
                    ", ".join(item["evidence"]) or "-",
                    item["command"] or "-",
                ]
            )
    if not rows:
        return
    section.tables.append(
        Table(
            _("What each option has proven (must-prove items)"),
            [
                _("option"),
                _("item"),
                _("SPEC"),
                _("state"),
                _("why"),
                _("evidence"),
                _("what would verify it"),
            ],
            rows,
            verbatim=frozenset({0, 5, 6}),
        )
    )


def _actions_table(section: Section, f: dict[str, Any]) -> None:
    actions = f["decision"].get("next_actions") or []
    if not actions:
        return
    section.tables.append(
        Table(
            _("Next actions: what would settle the decision"),
            [_("command"), _("option"), _("what it settles")],
            [[a["command"], a["option"] or "-", render(a["settles"])] for a in actions],
            verbatim=frozenset({0, 1}),
        )
    )


def _contradictions_table(section: Section, f: dict[str, Any]) -> None:
    found = f["decision"].get("contradictions") or []
    if not found:
        return
    section.tables.append(
        Table(
            _("Contradictions: inputs that cannot both be true"),
            [_("option"), _("contradiction"), _("why"), _("evidence")],
            [[c["option"], c["id"], render(c["why"]), ", ".join(c["evidence"])] for c in found],
            verbatim=frozenset({0, 1, 3}),
        )
    )


def _stop_table(section: Section, f: dict[str, Any]) -> None:
    rows = [
        [o["id"], s["id"], _said(s, "rule"), ", ".join(s["evidence"]), _said(s, "clear")]
        for o in f["options"]
        for s in o["stop_factors"]
    ]
    section.tables.append(
        Table(
            _("Stop factors (D5): an option with one is excluded whatever its total"),
            [_("option"), _("stop factor"), _("rule"), _("evidence"), _("what would clear it")],
            rows or [["-", _("none"), "", "", ""]],
            verbatim=frozenset({0, 1, 3}) if rows else frozenset(),
        )
    )


def _ranked(f: dict[str, Any]) -> list[dict[str, Any]]:
    compared = [o for o in f["options"] if o["standalone"]]
    return sorted(compared, key=lambda o: (o["rank"] is None, o["rank"] or 0, o["id"]))


def _matrix_tables(section: Section, f: dict[str, Any]) -> None:
    criteria = list(f["weights"])
    head = [_("option")] + [f"{criterion(c)} (x{f['weights'][c]})" for c in criteria]
    rows = []
    for o in _ranked(f):
        cells = [f"{o['scores'][c]['score']}{mark(o['scores'][c]['source'])}" for c in criteria]
        total = "-" if o["total"] is None else f"{o['total']:.0f}"
        rank = _("stopped") if o["stop_factors"] else str(o["rank"])
        rows.append([o["id"], *cells, total, rank])
    section.tables.append(
        Table(
            _("Matrix (D3, D4): scores 1-5; * an assumption, ~ a rehearsal"),
            [*head, _("total /100"), _("rank")],
            rows,
            verbatim=frozenset({0}),
        )
    )
    detail = [
        [
            o["id"],
            criterion(c),
            str(cell["score"]),
            _word(SOURCE_NAMES, cell["source"]),
            ", ".join(cell["evidence"]) or "-",
            rule_text(cell),
        ]
        for o in _ranked(f)
        for c, cell in o["scores"].items()
    ]
    section.tables.append(
        Table(
            _("Where each score comes from"),
            [
                _("option"),
                _("criterion"),
                _("score"),
                _("source"),
                _("evidence"),
                _("rule or justification"),
            ],
            detail,
            verbatim=frozenset({0, 4}),
        )
    )


def _bounds_table(section: Section, f: dict[str, Any]) -> None:
    """Totals with the unsettled scores at 1 and at 5: what they can do to the winner."""
    b = (f.get("robustness") or {}).get("bounds")
    if not b or not b.get("best"):
        return
    rows = [
        [
            o,
            fmt.num(b["worst"][o], 0),
            fmt.num(b["best"][o], 0),
            _("leads")
            if o == b.get("winner")
            else _("can reach the leader")
            if o in b.get("contenders", [])
            else "-",
        ]
        for o in sorted(b["best"], key=lambda o: -b["best"][o])
    ]
    section.tables.append(
        Table(
            _("Unsettled scores at their bounds: every assumption and rehearsal at 1 and at 5"),
            [_("option"), _("total, all at 1"), _("total, all at 5"), _("against the leader")],
            rows,
            verbatim=frozenset({0}),
        )
    )
    flips = b.get("flips") or []
    if flips:
        section.tables.append(
            Table(
                _("Unsettled scores that alone change the winner"),
                [_("option"), _("criterion"), _("source"), _("score"), _("at")],
                [
                    [
                        x["option"],
                        criterion(x["criterion"]),
                        _word(SOURCE_NAMES, x["source"]),
                        str(x["score"]),
                        str(x["extreme"]),
                    ]
                    for x in flips
                ],
                verbatim=frozenset({0}),
            )
        )


def _flip_text(flip: Mapping[str, Any] | None) -> str:
    if flip is None:
        return "-"
    return _("{criterion} {old} -> {new}: {winner}").format(
        criterion=criterion(str(flip["criterion"])),
        old=flip["from_weight"],
        new=flip["new_weight"],
        winner=flip["new_winner"] or _("tie"),
    )


def _robustness(section: Section, f: dict[str, Any]) -> None:
    r = f["robustness"]
    shares = [
        (_("+-1 around the team's weights"), r["winner_share_pm1"]),
        (_("whole 1..5 grid"), r["winner_share_grid"]),
        (_("Dirichlet around the weights"), r["winner_share_dirichlet"]),
    ]
    if r["winner"] is not None and all(v is not None for _k, v in shares):
        title = _("Share of weight vectors in which the winner stays the winner")
        section.charts.append(Chart(title, robustness_chart(shares, title)))
    reversals = "; ".join(
        f"{x['below']} > {x['above']} ({fmt.pct0(x['share_reversed'])})"
        for x in r["rank_reversals"]
    )
    rows = [[label, "-" if v is None else fmt.pct(v)] for label, v in shares] + [
        [_("smallest change that flips the winner"), _flip_text(r["flip"])],
        [_("rank reversals among the rest (+-1)"), reversals or "-"],
        [
            _("what the Dirichlet samples are"),
            _(
                "weight vectors drawn at random around the team's weights (on average they "
                "are the team's weights); the share says how often the winner stays the winner"
            ),
        ],
    ]
    section.tables.append(
        Table(_("Robustness of the winner to the weights"), [_("test"), _("result")], rows)
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
    return figure_svg(fig, title)


def _conditions_table(section: Section, f: dict[str, Any]) -> None:
    section.tables.append(
        Table(
            _("Conditions for dedicated (D1) and managed (D2)"),
            [_("group"), _("condition"), _("option"), _("state"), _("evidence"), _("why")],
            [
                [
                    c["group"],
                    _said(c, "text"),
                    c["option"] or "-",
                    _word(CONDITION_STATES, c["state"]),
                    ", ".join(c["evidence"]) or "-",
                    _said(c, "why"),
                ]
                for c in f["conditions"]
            ],
            verbatim=frozenset({2, 4}),
        )
    )


def sites_text(sites: list[Mapping[str, Any]]) -> str:
    """An option's sites: "storage/processing: KZ Almaty (provider); ..."."""
    return "; ".join(
        "{roles}: {country} {region} ({provider})".format(
            roles="/".join(_word(ROLES, r) for r in s["roles"]),
            country=s["country"],
            region=s["region"],
            provider=s["provider"],
        )
        for s in sites
    )


def move_out_text(move: Mapping[str, Any]) -> str:
    """Time to move one run out at the measured throughput, in a unit that reads (seconds,
    minutes or hours), or "-" when not measured."""
    if move.get("hours") is None or not move.get("gbps"):
        return "-"
    seconds = float(move["hours"]) * 3600
    if seconds < 0.001:
        took = _("under {n} s").format(n=fmt.fmt(0.001))
    elif seconds < 60:
        took = _("{n} s").format(n=fmt.fmt(round(seconds, 3)))
    elif seconds < 3600:
        took = _("{n} min").format(n=fmt.fmt(round(seconds / 60, 1)))
    else:
        took = _("{n} h").format(n=fmt.fmt(round(seconds / 3600, 1)))
    return _("{time} at {gbps} GB/s").format(time=took, gbps=fmt.fmt(float(move["gbps"])))


def shrink_text(shrink: Mapping[str, Any]) -> str:
    """Cost and days to shrink a pool, or "-" for an option with nothing priced."""
    if not shrink:
        return "-"
    return _("{cost} {currency}, {days} d").format(
        cost=fmt.money(None if shrink.get("cost") is None else str(shrink["cost"])),
        currency=shrink.get("currency") or "",
        days=fmt.fmt(float(shrink.get("days") or 0)),
    )


def _sites_and_reversibility(section: Section, f: dict[str, Any]) -> None:
    section.tables.append(
        Table(
            _("Where each option keeps and processes data"),
            [_("option"), _("kind"), _("sites")],
            [
                [o["id"], _word(KINDS, o["kind"]), sites_text(o["sites"]) or "-"]
                for o in f["options"]
            ],
            verbatim=frozenset({0}),
        )
    )
    rows = []
    for r in f["reversibility"]:
        move = r["move_out"]
        shrink = r.get("shrink") or {}
        rows.append(
            [
                r["option"],
                move_out_text(move),
                _said(move, "basis"),
                "; ".join(r.get("manual_actions") or []) or "-",
                shrink_text(shrink),
                _said(shrink, "how") or "-",
            ]
        )
    section.tables.append(
        Table(
            _("Reversibility (V1, V2)"),
            [
                _("option"),
                _("move one run out"),
                _("basis"),
                _("manual steps"),
                _("cost and days to shrink"),
                _("how"),
            ],
            rows,
            verbatim=frozenset({0}),
        )
    )


# What a run must keep unchanged to move between a hybrid's contours (H1, H3), as the
# side-by-side table names it.
CONTOUR_FACTS = {
    "container_digest": N_("container digest"),
    "checkpoint_format": N_("checkpoint format"),
    "manifest_schema": N_("manifest schema"),
    "test_set_sha256": N_("evaluation test set (SHA-256)"),
    "prompt_versions": N_("evaluation prompt versions"),
    "thresholds": N_("quality thresholds"),
    "publishing_rule": N_("publishing rule"),
}


def _fact(value: object) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k} {fmt.fmt(v)}" for k, v in value.items()) or "-"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "-"
    return "-" if value is None else str(value)


def _contour_table(facts: list[dict[str, Any]]) -> Table:
    """The contours side by side: each fact a run needs unchanged, and whether they agree."""
    rows = []
    for key, label in CONTOUR_FACTS.items():
        values = [_fact(f.get(key)) for f in facts]
        same = len(set(values)) == 1 and values[0] != "-"
        rows.append([_(label), *values, _("same") if same else _("DIFFERS")])
    return Table(
        _("The contours side by side (H1, H3)"),
        [_("what"), *[str(f["option"]) for f in facts], _("agree")],
        rows,
        verbatim=frozenset(range(1, len(facts) + 1)),
    )


def hybrid_section(section: Section) -> None:
    """Fill the report section of a "hybrid" evidence record (SPEC H1-H3)."""
    section.title = _("Hybrid: one system across two contours")
    for h in section.record.figures.get("hybrids", []):
        b = h["boundary"]
        section.tables.append(
            Table(
                f"{h['option']}: {' + '.join(h['contours'])}",
                [_("finding"), _("detail")],
                [
                    [f["id"], render(f["message"]) if is_message(f.get("message")) else f["detail"]]
                    for f in h["findings"]
                ]
                or [[_("none"), _("the contours agree")]],
            )
        )
        section.tables.append(
            Table(
                _("Boundary (H1, H2)"),
                [_("what crosses"), _("approved by"), _("where the evaluation runs")],
                [
                    [
                        ", ".join(b["crosses"]) or "-",
                        b["approved_by"] or "-",
                        ", ".join(b.get("evaluated_on") or []) or "-",
                    ]
                ],
            )
        )
        facts = h.get("facts") or []
        if facts:
            section.tables.append(_contour_table(facts))


def _leader_row(f: dict[str, Any]) -> dict[str, Any] | None:
    leader = f["decision"].get("leading") or f["decision"].get("recommended")
    return next((o for o in f["options"] if o["id"] == leader), None)


def _why(f: dict[str, Any], row: dict[str, Any]) -> list[str]:
    """Why the leader leads, in a few sentences drawn from its scores and the ranking."""
    ranked = [o for o in _ranked(f) if not o["stop_factors"] and o["id"] != row["id"]]
    out = []
    if row.get("total") is not None:
        if ranked and ranked[0].get("total") is not None:
            out.append(
                _(
                    "{option} has {total}/100; the next option that passes, {other}, "
                    "{other_total}/100."
                ).format(
                    option=row["id"],
                    total=fmt.num(row["total"], 0),
                    other=ranked[0]["id"],
                    other_total=fmt.num(ranked[0]["total"], 0),
                )
            )
        else:
            out.append(
                _("{option} has {total}/100 and is the only option that passes.").format(
                    option=row["id"], total=fmt.num(row["total"], 0)
                )
            )
    strong = [
        criterion(c)
        for c, cell in row["scores"].items()
        if cell["score"] >= 4 and cell["source"] in ("evidence", "document", "override")
    ]
    if strong:
        out.append(
            _("Evidence scores it 4 or 5 on: {criteria}.").format(criteria=", ".join(strong))
        )
    unsettled = [
        f"{criterion(c)} ({_word(SOURCE_NAMES, cell['source'])})"
        for c, cell in row["scores"].items()
        if cell["source"] in ("assumption", "rehearsal")
    ]
    if unsettled:
        out.append(
            _("Not settled by its own evidence: {criteria}.").format(criteria=", ".join(unsettled))
        )
    return out


def decision_overview(record: Any) -> Overview:
    """The report's first screen from a decision record: the status, the answer, why, the
    stop factors of the others, the conditions still unknown, what the leader has not
    proven, and the next actions (SPEC D1-D5)."""
    f = record.figures
    d = f["decision"]
    row = _leader_row(f)
    said = f.get("messages", {})
    head = said.get("headline") or said.get("summary")
    headline = render(head) if is_message(head) else record.summary
    stopped = [
        _("{option}: {stops}").format(
            option=o["id"], stops=", ".join(sorted({s["id"] for s in o["stop_factors"]}))
        )
        for o in f["options"]
        if o["stop_factors"]
    ]
    unknown = [
        f"{c['group']}: {_said(c, 'text')}" + (f" ({c['option']})" if c.get("option") else "")
        for c in f["conditions"]
        if c["state"] == "unknown"
    ]
    unverified = [
        _("{item}: {state}").format(
            item=_word(ITEM_NAMES, i["id"]), state=_word(STATE_NAMES, i["state"])
        )
        for i in (row or {}).get("coverage", [])
        if i["state"] != "verified"
    ]
    leader_first = sorted(
        f["options"], key=lambda o: (o["id"] != (row or {}).get("id"), o["rank"] or 99)
    )
    return Overview(
        status=d["status"],
        status_label=_word(STATUSES, d["status"]),
        verdict=record.verdict,
        headline=headline,
        option=(row or {}).get("id"),
        why=_why(f, row) if row else [],
        stopped=stopped,
        unknown=unknown,
        unverified=unverified,
        actions=[(a["command"], render(a["settles"])) for a in d.get("next_actions") or []],
        options=[(o["id"], o.get("name") or o["id"]) for o in leader_first],
    )
