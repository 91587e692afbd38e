"""Report section of the export acceptance test (`export_test` evidence, SPEC E1-E4).

Registered by the report as SECTION_BUILDERS["export_test"]: where the test ran (its
contour: executor, cluster, host, storage, and whose artifacts were tested), the verdict per
E3 step with its UTC times, the metric comparison against the plan's tolerance, the loss
curves of the reference and the resumed run, bytes and throughput (the storage's measured on
a sample above the floor, or "not measured" with the command that would measure it, and the
migration window of one full run), the run manifest (A5) with every lint finding (warnings
too), and what was done by hand. Every word is in the reader's language (the renderer
speaks it while the section is built).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt

from gpudecide import fmt
from gpudecide.i18n import N_, translator
from gpudecide.message import render
from gpudecide.portability.figures import (
    ContourFigures,
    CurvePoint,
    ExportTestFigures,
    ManifestFigures,
    SampleFigures,
    figures_of,
)
from gpudecide.portability.texts import (
    artifacts_word,
    executor_word,
    say_stored,
    status_word,
    step_label,
)
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


def _contour_table(c: ContourFigures) -> Table:
    """Where the test ran: the decision grades this against the option's declared contour."""
    rows = [
        [_("executor"), c.executor],
        [_("Slurm cluster"), c.cluster or "-"],
        [_("Kubernetes context"), c.context or "-"],
        [_("host"), c.host or "-"],
        [_("storage"), c.storage or "-"],
        [_("artifacts"), c.artifacts],
    ]
    caption = _("Where the test ran (its contour): {executor}; artifacts: {whose}").format(
        executor=executor_word(c.executor), whose=artifacts_word(c.artifacts)
    )
    return Table(caption, [_("item"), _("value")], rows, verbatim=frozenset({1}))


def _sample_tables(f: ExportTestFigures, t: SampleFigures) -> list[Table]:
    """The storage's throughput on a sample above the floor, and the window of one run; or
    why it was not measured and the command that would measure it."""
    caption = _("Storage throughput, measured on a sample above the floor (V1)")
    if not t.measured:
        rows = [
            [_("measured"), _("no")],
            [_("why"), say_stored(t.note, t.note_message)],
            [_("one full run (GB)"), _number(f.run_size_gb, 3)],
        ]
        command = Table(
            _("To measure the throughput"), [_("command")], [[t.command]], verbatim=frozenset({0})
        )
        return [Table(caption, [_("item"), _("value")], rows), command]
    rows = [
        [_("measured"), _("yes")],
        [_("sample (bytes, written and read back)"), _number(t.sample_bytes, 0)],
        [_("floor (bytes)"), _number(t.floor_bytes, 0)],
        [_("written (GB/s)"), _number(t.write_gbps, 6)],
        [_("read (GB/s)"), _number(t.read_gbps, 6)],
        [_("one full run (GB)"), _number(f.run_size_gb, 3)],
        [_("migration window of one run (h)"), _number(f.migration_window_hours, 3)],
        [_("note"), say_stored(t.note, t.note_message)],
    ]
    return [Table(caption, [_("item"), _("value")], rows)]


_A5 = (
    ("run_id", N_("run id")),
    ("base_model", N_("base model")),
    ("dataset_snapshot", N_("data set snapshot")),
    ("code_commit", N_("code commit")),
    ("container_digest", N_("container digest")),
    ("precision", N_("precision")),
    ("method", N_("method")),
    ("checkpoint_format", N_("checkpoint format")),
    ("optimizer_state_exported", N_("optimizer state exported")),
    ("created_at_utc", N_("created (UTC)")),
    ("retention_class", N_("retention class")),
)


def _manifest_table(m: ManifestFigures) -> Table:
    """The run manifest's A5 identifiers as written (not given: said so)."""
    rows = [[_("manifest"), m.path], [_("files listed"), str(m.files)]]
    for key, label in _A5:
        value = getattr(m, key)
        shown = "-" if value is None else (str(value).lower() if isinstance(value, bool) else value)
        rows.append([_(label), str(shown)])
    return Table(
        _("Run manifest of the tested export (A5; -: not given)"),
        [_("field"), _("value")],
        rows,
        verbatim=frozenset({1}),
    )


_SEVERITY = {"error": N_("error"), "warning": N_("warning")}


def _lint_table(f: ExportTestFigures) -> Table:
    """Every lint finding of the run manifest, warnings as well as errors."""
    rows = [
        [
            _(_SEVERITY.get(str(x.get("severity")), str(x.get("severity")))),
            str(x.get("field")),
            str(x.get("rule")),
            render(x["why"]) if isinstance(x.get("why"), dict) else str(x.get("message")),
        ]
        for x in f.manifest_lint
    ]
    return Table(
        _("Run manifest lint (A6): every finding, warnings too"),
        [_("severity"), _("field"), _("rule"), _("finding")],
        rows or [[_("no findings"), "", "", ""]],
        verbatim=frozenset({1, 2}),
    )


def _lifecycle_table(f: ExportTestFigures) -> Table:
    """Each job's lifecycle as its marks say (UTC), and the spans they measure."""
    rows = []
    for j in f.lifecycle:
        checkpoints = ", ".join(
            _("step {step} at {at}").format(step=c.step, at=c.at or "-") for c in j.checkpoints
        )
        rows.append(
            [
                step_label(j.job),
                j.prep_start or "-",
                j.first_step or "-",
                checkpoints or "-",
                j.end or "-",
                _number(j.startup_seconds, 3),
                _number(j.since_checkpoint_seconds, 3),
            ]
        )
    return Table(
        _("Lifecycle of the test's jobs, from the marks they wrote (UTC)"),
        [
            _("job"),
            _("preparation start"),
            _("first step"),
            _("checkpoints"),
            _("end"),
            _("startup (s)"),
            _("after the last checkpoint (s)"),
        ],
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
    error = f.status == "error"
    section.title = _("Export acceptance test of option {option}: {verdict}").format(
        option=f.option, verdict=status_word("error" if error else f.verdict)
    )
    if f.contour is not None:
        section.tables.append(_contour_table(f.contour))
    section.tables.append(_steps_table(f))
    if f.lifecycle:
        section.tables.append(_lifecycle_table(f))
    section.tables.append(_metrics_table(f))
    section.tables.append(_transfer_table(f))
    if f.throughput.sample is not None:
        section.tables += _sample_tables(f, f.throughput.sample)
    if f.manifest is not None:
        section.tables.append(_manifest_table(f.manifest))
    if f.manifest is not None or f.manifest_lint:
        section.tables.append(_lint_table(f))
    section.tables.append(_manual_table(f))
    if f.reasons:
        caption = (
            _("Why it could not run (no verdict on the option)") if error else _("Why it failed")
        )
        section.tables.append(Table(caption, [_("reason")], [[r] for r in reasons_in(f)]))
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
