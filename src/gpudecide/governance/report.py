"""Report sections of the governance evidence (raci, standard_path, isolation, residency,
secrets): register `governance_section` as the builder of each of those kinds.

Every section ends with its findings, worded in the reader's language from their ids, each
marked with the option it concerns and whether it is a stop factor there (D5).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpudecide.governance import charts, controls, messages
from gpudecide.i18n import translator
from gpudecide.report.i18n import Language, render_message
from gpudecide.report.model import Chart, Section, Table

_ = translator("governance")
KINDS = ("raci", "standard_path", "isolation", "residency", "secrets")


def _yes(flag: bool, lang: Language) -> str:
    return _("yes", lang) if flag else _("no", lang)


def _findings_table(f: dict[str, Any], lang: Language) -> Table:
    rows = [
        [
            x["option"] or "-",
            _("STOP", lang) if x["stop"] else "",
            messages.render(x["id"], lang, x["params"]),
            x["spec"],
        ]
        for x in f["findings"]
    ]
    return Table(
        _("Findings: the option each concerns and whether it stops it", lang),
        [_("option", lang), _("stop factor", lang), _("finding", lang), "SPEC"],
        rows or [[_("none", lang), "", "", ""]],
    )


def _letters(asg: dict[str, Any]) -> str:
    parts = []
    for key, letter in (
        ("responsible", "R"),
        ("accountable", "A"),
        ("consulted", "C"),
        ("informed", "I"),
    ):
        if asg[key]:
            parts.append(f"{letter}: {', '.join(asg[key])}")
    return "; ".join(parts)


def _raci(section: Section, f: dict[str, Any], lang: Language) -> None:
    section.title = _("Ownership per option (RACI)", lang)
    options = [o["option"] for o in f["options"]]
    section.tables.append(
        Table(
            _("Per option: who carries the activities (R2, R3)", lang),
            [
                _("option", lang),
                _("activities", lang),
                _("team Responsible", lang),
                _("vendor Responsible", lang),
                _("roles needed", lang),
                _("on-call load", lang),
                _("stopped", lang),
            ],
            [
                [
                    o["option"],
                    str(o["activities"]),
                    str(o["team_responsible"]),
                    str(o["vendor_responsible"]),
                    ", ".join(f"{k} {v}" for k, v in o["roles_needed"].items()),
                    ", ".join(f"{k} {v}" for k, v in o["on_call_load"].items()),
                    _yes(o["stopped"], lang),
                ]
                for o in f["options"]
            ],
        )
    )
    rows = []
    for act in f["activities"]:
        cells = []
        for oid in options:
            asg = next((a for a in act["assignments"] if oid in a["options"]), None)
            cells.append(_letters(asg) if asg else "-")
        rows.append([f"{act['title']} ({act['spec']})", *cells])
    section.tables.append(Table(_("RACI table", lang), [_("activity", lang), *options], rows))


def _standard_path(section: Section, f: dict[str, Any], lang: Language) -> None:
    section.title = _("Standard path fit and control (R4, R5)", lang)
    section.tables.append(
        Table(
            _("What the work needs against what each option supports", lang),
            [
                _("option", lang),
                _("kind", lang),
                _("gaps", lang),
                _("R5 controls", lang),
                _("SSH access (not counted)", lang),
            ],
            [
                [
                    o["option"],
                    o["kind"],
                    "; ".join(o["gaps"]) or "-",
                    f"{len(o['controls'])}/{o['controls_total']}",
                    _yes(o["ssh_access"], lang),
                ]
                for o in f["options"]
            ],
        )
    )


def _word(value: str, lang: Language) -> str:
    """A schema word (boundary status, site role) in the reader's language."""
    msg = messages.word(value)
    return render_message(msg, lang) if isinstance(msg, dict) else msg


def _words(values: list[str], lang: Language) -> str:
    return ", ".join(_word(v, lang) for v in values)


def _proof_text(proof: dict[str, Any], lang: Language) -> str:
    if proof["kind"] == "document":
        return f'{proof["document"]} (sha256 {proof["sha256"][:12]}): "{proof["excerpt"]}"'
    if proof["kind"] == "test":
        return str(proof["test"])
    return _word("claim", lang)


def _isolation_chart(f: dict[str, Any], lang: Language) -> Chart:
    title = _("Boundaries per option: evidenced, claimed, open", lang)
    options = [o["option"] for o in f["options"]]
    counts: dict[str, list[int]] = {"evidenced": [], "claimed": [], "open": []}
    for o in f["options"]:
        states = [b["status"] for b in o["boundaries"]]
        counts["evidenced"].append(states.count("evidenced"))
        counts["claimed"].append(states.count("claimed"))
        counts["open"].append(len(states) - states.count("evidenced") - states.count("claimed"))
    labels = {
        "evidenced": _word("evidenced", lang),
        "claimed": _word("claimed", lang),
        "open": _word("open", lang),
        "axis": _("boundaries", lang),
    }
    return Chart(title, charts.boundary_status(options, counts, labels, title))


def _isolation(section: Section, f: dict[str, Any], lang: Language) -> None:
    section.title = _("Isolation boundaries and threat model", lang)
    if f["options"]:
        section.charts.append(_isolation_chart(f, lang))
    section.tables.append(
        Table(
            _("Threat model: assets, adversaries, required boundaries (I2)", lang),
            [_("asset", lang), _("closed", lang), _("adversary", lang), _("requires", lang)],
            [
                [
                    a["name"] or a["id"],
                    _yes(a["closed"], lang),
                    t["adversary"],
                    ", ".join(t["requires"]),
                ]
                for a in f["assets"]
                for t in a["threats"]
            ],
        )
    )
    for o in f["options"]:
        section.tables.append(
            Table(
                _("{option}: boundaries, proof and NIST SP 800-53 controls (I3-I5)", lang).format(
                    option=o["option"]
                ),
                [
                    _("boundary", lang),
                    _("status", lang),
                    _("mechanism", lang),
                    _("proof", lang),
                    _("controls", lang),
                ],
                [
                    [
                        b["boundary"],
                        _word(b["status"], lang),
                        b["mechanism"] or "-",
                        _proof_text(b["proof"], lang),
                        ", ".join(b["controls"]),
                    ]
                    for b in o["boundaries"]
                ],
                verbatim=frozenset({0, 4}),
            )
        )
    families = sorted({fam for o in f["options"] for fam in o["coverage"]})
    section.tables.append(
        Table(
            _("Coverage per control family: evidenced / claimed / open (I5)", lang),
            [_("family", lang), *[o["option"] for o in f["options"]]],
            [
                [
                    f"{fam} {_family(fam, lang)}",
                    *[_cov(o["coverage"].get(fam)) for o in f["options"]],
                ]
                for fam in families
            ],
        )
    )
    items = list(f["options"][0]["regulated"]) if f["options"] else []
    section.tables.append(
        Table(
            _("Regulated evidence (I6): present or missing", lang),
            [_("document", lang), *[o["option"] for o in f["options"]]],
            [
                [
                    item,
                    *[
                        _("present", lang) if o["regulated"][item] else _("missing", lang)
                        for o in f["options"]
                    ],
                ]
                for item in items
            ],
        )
    )


def _family(fam: str, lang: Language) -> str:
    """A NIST SP 800-53 family's name in the reader's language (its id stays as it is)."""
    name = controls.FAMILY_NAMES.get(fam, "")
    return _(name, lang) if name else ""


def _cov(c: dict[str, int] | None) -> str:
    return f"{c['evidenced']} / {c['claimed']} / {c['open']}" if c else "-"


def _residency(section: Section, f: dict[str, Any], lang: Language) -> None:
    section.title = _("Data residency per option (I7)", lang)
    section.tables.append(
        Table(
            _("Requirements (the team's; not legal advice)", lang),
            [
                _("asset", lang),
                _("allowed countries", lang),
                _("uses", lang),
                _("basis", lang),
                _("edition relied on", lang),
            ],
            [
                [
                    r["asset"],
                    ", ".join(r["countries"]),
                    _words(r["roles"], lang),
                    r["basis"],
                    r["edition"] or _("not recorded", lang),
                ]
                for r in f["requirements"]
            ],
        )
    )
    rows = []
    for o in f["options"]:
        for a in o["assets"]:
            for s in a["sites"] or [None]:
                where = (
                    "-"
                    if s is None
                    else " ".join(
                        p
                        for p in (s["country"], s["region"], s["provider"] and f"({s['provider']})")
                        if p
                    )
                )
                bad = s is not None and s in a["violations"]
                rows.append(
                    [
                        o["option"],
                        a["asset"],
                        where,
                        _words(s["roles"], lang) if s else "-",
                        s["via"] if s else "-",
                        _("VIOLATION", lang) if bad else "",
                    ]
                )
    section.tables.append(
        Table(
            _("Where each asset is stored, processed and backed up", lang),
            [
                _("option", lang),
                _("asset", lang),
                _("site", lang),
                _("uses", lang),
                _("via", lang),
                "",
            ],
            rows,
        )
    )


def _secrets(section: Section, f: dict[str, Any], lang: Language) -> None:
    section.title = _("Credentials in logs and configs (I3)", lang)
    section.tables.append(
        Table(
            _("Scanned", lang),
            [_("files", lang), _("credentials", lang)],
            [[str(f["files_scanned"]), str(f["secrets"])]],
        )
    )


_BUILDERS: dict[str, Callable[[Section, dict[str, Any], Language], None]] = {
    "raci": _raci,
    "standard_path": _standard_path,
    "isolation": _isolation,
    "residency": _residency,
    "secrets": _secrets,
}


def governance_section(section: Section, lang: Language) -> None:
    """Tables of a raci, standard_path, isolation, residency or secrets record."""
    f = section.record.figures
    builder = _BUILDERS.get(section.record.kind)
    if builder is None:
        return
    builder(section, f, lang)
    section.tables.append(_findings_table(f, lang))
