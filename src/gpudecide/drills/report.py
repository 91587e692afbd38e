"""Report sections of drill and cordon evidence (registered as "drill" and "cordon").

The report shows one record per check: a drill record per scenario, so each drill of a
game day is a section of its own (its answers, details and contour), and the game day's
summary and the restarts in the job logs appear once, in the record that closes the run."""

from __future__ import annotations

from typing import Any, cast

from gpudecide.drills import cordon_figures, drill_figures
from gpudecide.drills.cordon_figures import ReasonFigures
from gpudecide.drills.names import DRILLS
from gpudecide.drills.words import END_STATUS, word
from gpudecide.fmt import decimal_text
from gpudecide.i18n import translator
from gpudecide.message import Message, is_message, render
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
    """One drill record: its own drill (the G4 answers, its details, where it ran); the
    record that closes a game day also shows the game day as a summary and the restarts
    found in the team's job logs, once for the whole run.

    The report shows one record per check (a drill record per scenario), so each drill of a
    game day has a section of its own; the game day's table is not repeated in each."""
    f = drill_figures.figures_of(section.record)
    section.title = _(
        "Drill {drill}: was the failure noticed, data kept, the status explained?"
    ).format(drill=f.drill)
    option = f.option or _("none named")
    section.tables.append(
        Table(
            _("Drill {drill} on option {option} (G1, G4)").format(drill=f.drill, option=option),
            [_("question"), _("answer")],
            _own_rows(f),
        )
    )
    if f.contour is not None:
        c = f.contour
        section.tables.append(
            Table(
                _("Where it ran: the contour this drill exercised"),
                [_("executor"), _("cluster"), _("host"), _("storage")],
                [[c.executor, c.cluster or "-", c.host or "-", c.storage or _("node's own disk")]],
                # Ids, names and URLs as the decision, the scheduler and the storage have them.
                verbatim=frozenset({0, 1, 2, 3}),
            )
        )
    if f.lifecycle:
        section.tables.append(
            Table(
                _("The drill's jobs, as their own lifecycle marks tell it (Q1, Q4)"),
                [
                    _("job"),
                    _("startup (s)"),
                    _("first step"),
                    _("checkpoints marked"),
                    _("ended as"),
                    _("after the last checkpoint (s)"),
                ],
                [
                    [
                        j.job,
                        _num(j.startup_seconds, 2),
                        _num(j.first_step_number, 0),
                        ", ".join(f"checkpoint-{c.step}" for c in j.checkpoints) or _("none"),
                        word(j.end_status, END_STATUS) if j.end_status else _("no end: killed"),
                        _num(j.since_checkpoint_seconds, 2),
                    ]
                    for j in f.lifecycle
                ],
                # The job's name as the drill gave it (its marks carry it as their job id).
                verbatim=frozenset({0}),
            )
        )
    if _closes_game_day(f):
        section.tables.append(
            Table(
                _n(
                    "The game day: {n} drill of this run (G1, G4)",
                    "The game day: {n} drills of this run (G1, G4)",
                    len(f.game_day),
                ).format(n=len(f.game_day)),
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
                    for r in f.game_day
                ],
            )
        )
    if _closes_game_day(f) or _alone(f):
        _restarts_table(section, f.log_restarts)


def _closes_game_day(f: drill_figures.DrillFigures) -> bool:
    """Whether the record is the last of a game day of several drills (its game day holds
    every drill the run set out to do; a record written before that list was kept: every
    drill there is)."""
    planned = f.game_day_drills or list(DRILLS)
    done = [r.drill for r in f.game_day]
    return len(done) > 1 and done == planned and done[-1] == f.drill


def _status(f: drill_figures.DrillFigures) -> str:
    row = f.own_row()
    if is_message(row.status_message):
        return render(cast(Message, row.status_message))
    return row.status


def _own_rows(f: drill_figures.DrillFigures) -> list[list[str]]:
    """The drill's G4 answers, its status, and the details it alone has."""
    rows = [
        [_("verdict"), word(f.verdict)],
        [_("noticed"), _yes(f.noticed)],
        [_("data kept"), _yes(f.data_kept)],
        [_("explained"), _yes(f.explained)],
        [_("resumed from step"), _num(f.resumed_from_step, 0)],
        [_("lost steps"), _num(f.lost_steps, 0)],
        [_("lost seconds"), _num(f.lost_seconds, 1)],
        [_("status"), _status(f)],
    ]
    if f.restarted_from_zero is not None:
        rows.append([_("restarted from zero"), _yes(f.restarted_from_zero)])
    if f.local_checkpoints_lost:
        rows.append([_("checkpoints lost with the node"), ", ".join(f.local_checkpoints_lost)])
    if f.disk is not None:
        d = f.disk
        rows.append([_("checkpoints published on the full disk"), _steps(d.published)])
        rows.append([_("of them verified"), _steps(d.verified)])
        broken = [f"checkpoint-{b.step}" for b in d.looks_whole_but_broken]
        rows.append([_("look whole but fail their sums"), ", ".join(broken) or _("none")])
    if f.retried_with_backoff is not None:
        rows.append([_("retried with back-off"), _yes(f.retried_with_backoff)])
    if f.attempts is not None:
        rows.append([_("upload attempts"), _num(f.attempts, 0)])
    if f.queue_wait_s is not None or f.wait_reason is not None:
        rows.append([_("queue wait (s)"), _num(f.queue_wait_s, 1)])
    if f.rejected:
        rows.append(
            [_("rejected checkpoints"), ", ".join(f"checkpoint-{r.step}" for r in f.rejected)]
        )
    for stale in f.stale_mounts:
        said = _("unmounted") if stale.removed else _("still mounted")
        rows.append([_("left mounted by an earlier run"), f"{stale.path} ({said})"])
    return rows


def _alone(f: drill_figures.DrillFigures) -> bool:
    """Whether the record is the only one of its run (a single drill; a record written
    before game days were kept)."""
    if f.game_day_drills:
        return f.game_day_drills == [f.drill]
    return len(f.game_day) <= 1


def _steps(steps: list[int]) -> str:
    return ", ".join(f"checkpoint-{s}" for s in steps) or _("none")


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
