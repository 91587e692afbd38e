"""Report section of the export acceptance test (`export_test` evidence, SPEC E1-E4).

Registered by the report as SECTION_BUILDERS["export_test"]: the verdict per E3 step with
its UTC times, the metric comparison against the plan's tolerance, the loss curves of the
reference and the resumed run, bytes and throughput, and what was done by hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt

from gpudecide.i18n import Language, translator
from gpudecide.portability.texts import render_detail, step_name
from gpudecide.report.charts import _svg
from gpudecide.report.fmt import not_available, number
from gpudecide.report.i18n import render_message, say
from gpudecide.report.model import Chart, Section, Table

_ = translator("portability")


def status_word(word: str, lang: Language) -> str:
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


def step_label(name: str, lang: Language) -> str:
    """A step's name in the reader's language (the record keeps the English name)."""
    return render_message(step_name(name), lang)


def _tolerance(value: Any, lang: Language) -> str:
    """A tolerance figure; English keeps its historic form ("0.02", "None")."""
    if lang == "en":
        return str(value)
    if value is None:
        return not_available(lang)
    return number(value, lang, 6)


def loss_chart(
    reference: Sequence[dict[str, Any]],
    resumed: Sequence[dict[str, Any]],
    k: int,
    title: str,
    lang: Language = "en",
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
    ax.set_xlabel(_("step", lang))
    ax.set_ylabel(_("loss", lang))
    ax.set_title(title, loc="left")
    ax.legend([_("reference", lang), _("resumed", lang)][: 1 + bool(resumed)], frameon=False)
    return _svg(fig, title)


def _steps_table(f: dict[str, Any], lang: Language) -> Table:
    rows = [
        [
            step_label(s["name"], lang),
            status_word(s["status"], lang),
            s["started_at"],
            s["finished_at"],
            render_detail(s, lang),
        ]
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
        caption.format(
            rel=_tolerance(tol.get("relative"), lang), abs=_tolerance(tol.get("absolute"), lang)
        ),
        [
            _("metric", lang),
            _("reference", lang),
            _("resumed", lang),
            _("relative difference", lang),
            _("within tolerance", lang),
        ],
        rows or [["-", _("not compared", lang), "", "", ""]],
        verbatim=frozenset({0}),  # metric names (loss, eval_loss) are the plan's identifiers
    )


def _transfer_table(f: dict[str, Any], lang: Language) -> Table:
    rows = []
    for name in ("export", "restore"):
        t = (f.get("throughput") or {}).get(name)
        if not t:
            continue
        rows.append(
            [
                status_word(name, lang),
                _fmt(t["sample_bytes"], lang, 0),
                _fmt(t["gbps"], lang, 6),
                _fmt(t.get("migration_window_hours"), lang, 3),
                render_detail(t, lang, "note"),
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
        option=f.get("option"), verdict=status_word(str(f.get("verdict")), lang)
    )
    section.tables.append(_steps_table(f, lang))
    section.tables.append(_metrics_table(f, lang))
    section.tables.append(_transfer_table(f, lang))
    section.tables.append(_manual_table(f, lang))
    reasons = f.get("reasons") or []
    if reasons:
        section.tables.append(
            Table(_("Why it failed", lang), [_("reason", lang)], [[r] for r in reasons_in(f, lang)])
        )
    reference = f.get("reference_curve") or []
    if reference:
        title = _("Training loss: reference and resumed run", lang)
        resumed = f.get("resumed_curve") or []
        svg = loss_chart(reference, resumed, int(f["checkpoint_step"]), title, lang)
        section.charts.append(Chart(title, svg))


def reasons_in(f: dict[str, Any], lang: Language) -> list[str]:
    """The reasons of a failure in the reader's language (stored messages when present)."""
    reasons = [str(r) for r in f.get("reasons") or []]
    stored = f.get("reason_messages") or []
    if len(stored) != len(reasons):
        stored = [None] * len(reasons)
    return [say(r, m, lang, ("portability",)) for r, m in zip(reasons, stored, strict=True)]
