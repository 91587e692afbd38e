"""Report sections of drill and cordon evidence (registered as "drill" and "cordon")."""

from __future__ import annotations

from typing import Any

from gpudecide.drills import cordon_figures, drill_figures
from gpudecide.drills.cordon_figures import ReasonFigures
from gpudecide.drills.words import word
from gpudecide.fmt import decimal_text
from gpudecide.i18n import translator
from gpudecide.queue.restarts import RestartsFigures
from gpudecide.queue.words import RESTART_VERDICTS
from gpudecide.queue.words import word as queue_word
from gpudecide.report.model import Section, Table

__all__ = [
    "cordon_section",
    "drills_section",
]

_ = translator("drills")
_n = _.n


def _yes(flag: bool) -> str:
    return _("yes") if flag else _("no")


def _num(value: Any, digits: int = 1) -> str:
    return "-" if value is None else decimal_text(value, digits)


def _reason(r: ReasonFigures) -> str:
    """One cordon reason, short, from its code and value (the command prints the whole
    sentence; a table cell names the reason)."""
    code, v = r.code, r.value
    if code == "xid":
        return _("Xid {n}").format(n=_num(v, 0))
    if code == "ecc_rate":
        return _("corrected ECC errors {rate} per hour").format(rate=_num(v))
    if code == "dbe_volatile":
        return _("uncorrected ECC errors: {n}").format(n=_num(v))
    if code == "retired_pages":
        return _("retired pages: {n}").format(n=_num(v))
    fixed = {
        "retired_pending": _("page retirement waits for a GPU reset"),
        "remap_pending": _("row remapping waits for a GPU reset"),
        "remap_failure": _("row remapping failed"),
    }
    return fixed.get(code, r.reason)


def drills_section(section: Section) -> None:
    """The game day (every drill of the run) and the restarts from zero in the job logs."""
    f = drill_figures.figures_of(section.record)
    section.title = _("Game days: was the failure noticed, data kept, the status explained?")
    option = f.option or _("none named")
    section.tables.append(
        Table(
            _("Drills on option {option} (G1, G4)").format(option=option),
            [
                _("drill"),
                _("verdict"),
                _("noticed"),
                _("data kept"),
                _("explained"),
                _("resumed from step"),
                _("lost steps"),
                _("lost seconds"),
            ],
            [
                [
                    r.drill,
                    word(r.verdict),
                    _yes(r.noticed),
                    _yes(r.data_kept),
                    _yes(r.explained),
                    _num(r.resumed_from_step, 0),
                    _num(r.lost_steps, 0),
                    _num(r.lost_seconds, 1),
                ]
                for r in f.rows()
            ],
        )
    )
    _restarts_table(section, f.log_restarts)


def _hours(seconds: float | None) -> float | None:
    return None if seconds is None else seconds / 3600


def _restarts_table(section: Section, found: RestartsFigures | None) -> None:
    if not found:
        return
    section.tables.append(
        Table(
            _("Restarts after a lost node, preemption or timeout in the job logs (G1, Q4)"),
            [
                _("job"),
                _("name"),
                _("ended as"),
                _("lost attempt (h)"),
                _("re-run (h)"),
                _("verdict"),
                _("GPU-hours lost"),
                _("checkpoint time known"),
                _("reference full run (h)"),
            ],
            [
                [
                    e.job_id,
                    str(e.name),
                    e.state,
                    _num(_hours(e.lost_attempt_s)),
                    _num(_hours(e.rerun_s)),
                    queue_word(RESTART_VERDICTS, e.verdict),
                    _num(e.gpu_hours_lost),
                    _yes(e.checkpoint_known),
                    _num(_hours(e.reference_full_run_s)),
                ]
                for e in found.restarts
            ]
            or [[_("none found"), "", "", "", "", "", "", "", ""]],
            # Job names and Slurm's state words as the log has them (REQUEUED, TIMEOUT...).
            verbatim=frozenset({1, 2}),
        )
    )


def cordon_section(section: Section) -> None:
    """Per-GPU actions with reasons, and the command per node (G2, G3)."""
    f = cordon_figures.figures_of(section.record)
    section.title = _("GPU health: which GPUs leave service")
    section.tables.append(
        Table(
            _("Action per GPU"),
            [_("node"), _("GPU"), _("PCI bus"), _("action"), _("reasons")],
            [
                [
                    g.node,
                    "" if g.gpu.index is None else str(g.gpu.index),
                    g.gpu.pci_bus_id or "",
                    word(g.action),
                    "; ".join(f"{_reason(r)} ({word(r.action)})" for r in g.reasons) or "-",
                ]
                for g in f.gpus
            ]
            or [[_("no telemetry"), "", "", "", ""]],
        )
    )
    n, m = f.allowed_nodes, f.fleet_nodes
    section.tables.append(
        Table(
            _n(
                "Commands per node (circuit breaker: at most {n} of {m} node)",
                "Commands per node (circuit breaker: at most {n} of {m} nodes)",
                m,
            ).format(n=n, m=m),
            [_("node"), _("action"), _("command"), _("breaker")],
            [[p.node, word(p.action), cmd, word(p.breaker)] for p in f.nodes for cmd in p.commands]
            or [[_("none"), "", "", ""]],
            # Commands to run, byte for byte (Reason= text included): never translated.
            verbatim=frozenset({2}),
        )
    )
