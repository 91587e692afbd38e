"""Report section of the export acceptance test (`export_test` evidence, SPEC E1-E4).

Registered by the report as SECTION_BUILDERS["export_test"]: the verdict per E3 step with
its UTC times, the metric comparison against the plan's tolerance, the loss curves of the
reference and the resumed run, bytes and throughput, and what was done by hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt

from gpudecide.i18n import Language, number, translator
from gpudecide.report.charts import _svg
from gpudecide.report.model import Chart, Section, Table

_ = translator("portability")


def _word(word: str, lang: Language) -> str:
    """Statuses, verdicts and transfer names, each a literal msgid for the catalogues."""
    words = {
        "pass": _("pass", lang),
        "fail": _("fail", lang),
        "warn": _("warn", lang),
        "skip": _("skip", lang),
        "export": _("export", lang),
        "restore": _("restore", lang),
    }
    return words.get(word, word)


def _fmt(value: Any, lang: Language, digits: int = 4) -> str:
    if value is None:
        return "-"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return number(value, lang, digits)
    return str(value)


def loss_chart(
    reference: Sequence[dict[str, Any]], resumed: Sequence[dict[str, Any]], k: int, title: str
) -> str:
    """Lines: training loss per step, reference and resumed; a mark at the checkpoint."""
    fig, ax = plt.subplots(figsize=(7.5, 2.6))
    ax.plot([m["step"] for m in reference], [m["loss"] for m in reference], color="#1f77b4")
    if resumed:
        ax.plot(
            [m["step"] for m in resumed],
            [m["loss"] for m in resumed],
            color="#d62728",
            linestyle="--",
        )
    ax.axvline(k, color="#7f7f7f", linewidth=0.8)
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.set_title(title, loc="left")
    ax.legend(["reference", "resumed"][: 1 + bool(resumed)], frameon=False)
    return _svg(fig, title)


def _steps_table(f: dict[str, Any], lang: Language) -> Table:
    rows = [
        [s["name"], _word(s["status"], lang), s["started_at"], s["finished_at"], s["detail"]]
        for s in f["steps"]
    ]
    return Table(
        _("Steps of the test (E3), UTC", lang),
        [
            _("step", lang),
            _("status", lang),
            _("started", lang),
            _("finished", lang),
            _("detail", lang),
        ],
        rows,
    )


def _metrics_table(f: dict[str, Any], lang: Language) -> Table:
    rows = [
        [
            r["metric"],
            _fmt(r.get("reference"), lang),
            _fmt(r.get("resumed"), lang),
            _fmt(r.get("rel_diff"), lang, 6),
            _("yes", lang) if r.get("within") else _("no", lang),
        ]
        for r in f.get("metric_comparison") or []
    ]
    tol = f.get("tolerance") or {}
    caption = _(
        "Final metrics against the reference (tolerance {rel} relative, {abs} absolute)", lang
    )
    return Table(
        caption.format(rel=tol.get("relative"), abs=tol.get("absolute")),
        [
            _("metric", lang),
            _("reference", lang),
            _("resumed", lang),
            _("relative difference", lang),
            _("within tolerance", lang),
        ],
        rows or [[_("not compared", lang), "", "", "", ""]],
    )


def _transfer_table(f: dict[str, Any], lang: Language) -> Table:
    rows = []
    for name in ("export", "restore"):
        t = (f.get("throughput") or {}).get(name)
        if not t:
            continue
        rows.append(
            [
                _word(name, lang),
                _fmt(t["sample_bytes"], lang, 0),
                _fmt(t["gbps"], lang, 6),
                _fmt(t.get("migration_window_hours"), lang, 3),
                t.get("note") or "",
            ]
        )
    return Table(
        _("Bytes moved and measured throughput", lang),
        [
            _("transfer", lang),
            _("bytes", lang),
            "GB/s",
            _("migration window (h)", lang),
            _("note", lang),
        ],
        rows,
    )


def _manual_table(f: dict[str, Any], lang: Language) -> Table:
    rows = [[_("manual action", lang), a] for a in f.get("manual_actions", [])]
    rows += [[_("closed format", lang), c] for c in f.get("closed_formats", [])]
    rows += [[_("restored by hand", lang), r] for r in f.get("restored_by_hand", [])]
    return Table(
        _("Done by hand (E3.5)", lang),
        [_("kind", lang), _("item", lang)],
        rows or [[_("none recorded", lang), ""]],
    )


def export_test_section(section: Section, lang: Language) -> None:
    """Tables and the loss chart of one `export_test` record."""
    f = section.record.figures
    section.title = _("Export acceptance test of option {option}: {verdict}", lang).format(
        option=f.get("option"), verdict=_word(str(f.get("verdict")), lang)
    )
    section.tables.append(_steps_table(f, lang))
    section.tables.append(_metrics_table(f, lang))
    section.tables.append(_transfer_table(f, lang))
    section.tables.append(_manual_table(f, lang))
    reasons = f.get("reasons") or []
    if reasons:
        section.tables.append(
            Table(_("Why it failed", lang), [_("reason", lang)], [[r] for r in reasons])
        )
    reference = f.get("reference_curve") or []
    if reference:
        title = _("Training loss: reference and resumed run", lang)
        svg = loss_chart(reference, f.get("resumed_curve") or [], int(f["checkpoint_step"]), title)
        section.charts.append(Chart(title, svg))
