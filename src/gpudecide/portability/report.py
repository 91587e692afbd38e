"""Report section of the export acceptance test (`export_test` evidence, SPEC E1-E4).

Registered by the report as SECTION_BUILDERS["export_test"]: the verdict per E3 step with
its UTC times, the metric comparison against the plan's tolerance, the loss curves of the
reference and the resumed run, bytes and throughput, and what was done by hand. Every word
is in the reader's language (the renderer speaks it while the section is built).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt

from gpudecide import fmt
from gpudecide.i18n import translator
from gpudecide.message import render
from gpudecide.portability.texts import render_detail, status_word, step_label
from gpudecide.report.charts import _svg
from gpudecide.report.model import Chart, Section, Table

__all__ = ["export_test_section", "loss_chart", "reasons_in"]

_ = translator("portability")


def _number(value: Any, digits: int = 4) -> str:
    if value is None:
        return "-"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return fmt.decimal_text(value, digits)
    return str(value)


def _tolerance(value: float | None) -> str:
    """A tolerance figure, up to six decimals; n/a when the plan gives none."""
    return fmt.not_available() if value is None else fmt.decimal_text(value, 6)


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
    ax.set_xlabel(_("step"))
    ax.set_ylabel(_("loss"))
    ax.set_title(title, loc="left")
    ax.legend([_("reference"), _("resumed")][: 1 + bool(resumed)], frameon=False)
    return _svg(fig, title)


def _steps_table(f: dict[str, Any]) -> Table:
    rows = [
        [
            step_label(s["name"]),
            status_word(s["status"]),
            s["started_at"],
            s["finished_at"],
            render_detail(s),
        ]
        for s in f["steps"]
    ]
    return Table(
        _("Steps of the test (E3), UTC"),
        [_("step"), _("status"), _("started"), _("finished"), _("detail")],
        rows,
    )


def _metrics_table(f: dict[str, Any]) -> Table:
    rows = [
        [
            r["metric"],
            _number(r.get("reference")),
            _number(r.get("resumed")),
            _number(r.get("rel_diff"), 6),
            _("yes") if r.get("within") else _("no"),
        ]
        for r in f.get("metric_comparison") or []
    ]
    tol = f.get("tolerance") or {}
    caption = _("Final metrics against the reference (tolerance {rel} relative, {abs} absolute)")
    return Table(
        caption.format(rel=_tolerance(tol.get("relative")), abs=_tolerance(tol.get("absolute"))),
        [
            _("metric"),
            _("reference"),
            _("resumed"),
            _("relative difference"),
            _("within tolerance"),
        ],
        rows or [["-", _("not compared"), "", "", ""]],
        verbatim=frozenset({0}),  # metric names (loss, eval_loss) are the plan's identifiers
    )


def _transfer_table(f: dict[str, Any]) -> Table:
    rows = []
    for name in ("export", "restore"):
        t = (f.get("throughput") or {}).get(name)
        if not t:
            continue
        rows.append(
            [
                status_word(name),
                _number(t["sample_bytes"], 0),
                _number(t["gbps"], 6),
                _number(t.get("migration_window_hours"), 3),
                render_detail(t, "note"),
            ]
        )
    return Table(
        _("Bytes moved and measured throughput"),
        [_("transfer"), _("bytes"), "GB/s", _("migration window (h)"), _("note")],
        rows,
    )


def _manual_table(f: dict[str, Any]) -> Table:
    rows = [[_("manual action"), a] for a in f.get("manual_actions", [])]
    rows += [[_("closed format"), c] for c in f.get("closed_formats", [])]
    rows += [[_("restored by hand"), r] for r in f.get("restored_by_hand", [])]
    return Table(
        _("Done by hand (E3.5)"),
        [_("kind"), _("item")],
        rows or [[_("none recorded"), ""]],
    )


def export_test_section(section: Section) -> None:
    """Tables and the loss chart of one `export_test` record."""
    f = section.record.figures
    section.title = _("Export acceptance test of option {option}: {verdict}").format(
        option=f.get("option"), verdict=status_word(str(f.get("verdict")))
    )
    section.tables.append(_steps_table(f))
    section.tables.append(_metrics_table(f))
    section.tables.append(_transfer_table(f))
    section.tables.append(_manual_table(f))
    reasons = f.get("reasons") or []
    if reasons:
        section.tables.append(
            Table(_("Why it failed"), [_("reason")], [[r] for r in reasons_in(f)])
        )
    reference = f.get("reference_curve") or []
    if reference:
        title = _("Training loss: reference and resumed run")
        resumed = f.get("resumed_curve") or []
        svg = loss_chart(reference, resumed, int(f["checkpoint_step"]), title)
        section.charts.append(Chart(title, svg))


def reasons_in(f: dict[str, Any]) -> list[str]:
    """The reasons of a failure in the reader's language (stored messages when present, else
    the English as written)."""
    reasons = [str(r) for r in f.get("reasons") or []]
    stored = f.get("reason_messages") or []
    if len(stored) != len(reasons):
        return reasons
    return [render(m) for m in stored]
