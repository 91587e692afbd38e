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
from gpudecide.portability.figures import CurvePoint, ExportTestFigures, figures_of
from gpudecide.portability.texts import say_stored, status_word, step_label
from gpudecide.report.charts import figure_svg
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


def _losses(curve: Sequence[CurvePoint]) -> tuple[list[int], list[float]]:
    """Steps and losses of the points that have a loss."""
    points = [(m.step, m.loss) for m in curve if m.loss is not None]
    return [step for step, _l in points], [loss for _s, loss in points]


def loss_chart(
    reference: Sequence[CurvePoint], resumed: Sequence[CurvePoint], k: int, title: str
) -> str:
    """Lines: training loss per step, reference and resumed; a mark at the checkpoint."""
    fig, ax = plt.subplots(figsize=(7.5, 2.6))
    ax.plot(*_losses(reference), color="#1f77b4")
    if resumed:
        ax.plot(
            *_losses(resumed),
            color="#d62728",
            linestyle="--",
        )
    ax.axvline(k, color="#7f7f7f", linewidth=0.8)
    ax.set_xlabel(_("step"))
    ax.set_ylabel(_("loss"))
    ax.set_title(title, loc="left")
    ax.legend([_("reference"), _("resumed")][: 1 + bool(resumed)], frameon=False)
    return figure_svg(fig, title)


def _steps_table(f: ExportTestFigures) -> Table:
    rows = [
        [
            step_label(s.name),
            status_word(s.status),
            s.started_at,
            s.finished_at,
            say_stored(s.detail, s.detail_message),
        ]
        for s in f.steps
    ]
    return Table(
        _("Steps of the test (E3), UTC"),
        [_("step"), _("status"), _("started"), _("finished"), _("detail")],
        rows,
    )


def _metrics_table(f: ExportTestFigures) -> Table:
    rows = [
        [
            r.metric,
            _number(r.reference),
            _number(r.resumed),
            _number(r.rel_diff, 6),
            _("yes") if r.within else _("no"),
        ]
        for r in f.metric_comparison
    ]
    caption = _("Final metrics against the reference (tolerance {rel} relative, {abs} absolute)")
    return Table(
        caption.format(rel=_tolerance(f.tolerance.relative), abs=_tolerance(f.tolerance.absolute)),
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


def _transfer_table(f: ExportTestFigures) -> Table:
    rows = [
        [
            status_word(name),
            _number(t.sample_bytes, 0),
            _number(t.gbps, 6),
            _number(t.migration_window_hours, 3),
            say_stored(t.note, t.note_message),
        ]
        for name, t in (("export", f.throughput.export), ("restore", f.throughput.restore))
        if t is not None
    ]
    return Table(
        _("Bytes moved and measured throughput"),
        [_("transfer"), _("bytes"), "GB/s", _("migration window (h)"), _("note")],
        rows,
    )


def _manual_table(f: ExportTestFigures) -> Table:
    rows = [[_("manual action"), a] for a in f.manual_actions]
    rows += [[_("closed format"), c] for c in f.closed_formats]
    rows += [[_("restored by hand"), r] for r in f.restored_by_hand]
    return Table(
        _("Done by hand (E3.5)"),
        [_("kind"), _("item")],
        rows or [[_("none recorded"), ""]],
    )


def export_test_section(section: Section) -> None:
    """Tables and the loss chart of one `export_test` record."""
    f = figures_of(section.record)
    section.title = _("Export acceptance test of option {option}: {verdict}").format(
        option=f.option, verdict=status_word(f.verdict)
    )
    section.tables.append(_steps_table(f))
    section.tables.append(_metrics_table(f))
    section.tables.append(_transfer_table(f))
    section.tables.append(_manual_table(f))
    if f.reasons:
        section.tables.append(
            Table(_("Why it failed"), [_("reason")], [[r] for r in reasons_in(f)])
        )
    if f.reference_curve:
        title = _("Training loss: reference and resumed run")
        svg = loss_chart(f.reference_curve, f.resumed_curve, int(f.checkpoint_step or 0), title)
        section.charts.append(Chart(title, svg))


def reasons_in(f: ExportTestFigures) -> list[str]:
    """The reasons of a failure in the reader's language (stored messages when present, else
    the English as written)."""
    stored = f.stored_reasons()
    if stored is None:
        return list(f.reasons)
    return [render(m) for m in stored]
