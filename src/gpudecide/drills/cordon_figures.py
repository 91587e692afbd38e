"""The figures of a `cordon` record as a typed model (SPEC G2, G3), for readers in any package.

    figures_of(record) -> CordonFigures

`cordon_run.run_cordon` writes them (also the body of `cordon --json`): each GPU's action
with its reasons and the telemetry lines behind them, each node's plan (the exact scheduler
commands, the circuit breaker's say, what ran with `--apply`, the operator's next steps),
the counts per action, the breaker's limits, what was read, the option whose nodes these
are, and whether the cordon was applied to a scheduler (`orchestrator`).
"""

from __future__ import annotations

from typing import Any, Literal

from gpudecide import evidence as ev
from gpudecide.drills.contour import Contour
from gpudecide.drills.cordon_rules import Action
from gpudecide.drills.figures import Figure, RecordMessages

__all__ = [
    "Breaker",
    "CommandRun",
    "CordonFigures",
    "GpuFigures",
    "GpuId",
    "NodeFigures",
    "ReasonFigures",
    "figures_of",
]

# allowed: the breaker lets the commands run; held: it holds the node back; bypassed: it lets
# them run beyond its share (uncorrectable errors); none: no command.
Breaker = Literal["allowed", "held", "bypassed", "none"]


class ReasonFigures(Figure):
    """One reason for a GPU's action: its English text and message, what it measured."""

    action: Action
    reason: str
    code: str
    value: float | None
    evidence: list[str]
    message: dict[str, Any]


class GpuId(Figure):
    """How the telemetry names a GPU: its index on the node and its PCI bus id."""

    index: int | None
    pci_bus_id: str | None


class GpuFigures(Figure):
    """One GPU's action (the most severe of its reasons)."""

    node: str
    gpu: GpuId
    action: Action
    reasons: list[ReasonFigures]
    corrected_errors_per_hour: float | None


class CommandRun(Figure):
    """A command `--apply` ran: its exit code and output; `message` is gpudecide's own
    words where the program said nothing (it was not found, it timed out)."""

    command: str
    rc: int
    output: str
    message: dict[str, Any] | None


class NodeFigures(Figure):
    """One node's plan."""

    node: str
    action: Action
    why: str
    commands: list[str]
    breaker: Breaker
    results: list[CommandRun]
    follow_up: list[str]
    follow_up_messages: list[dict[str, Any]]


class CordonFigures(Figure):
    """A `cordon` record's figures."""

    gpus: list[GpuFigures]
    nodes: list[NodeFigures]
    counts: dict[Action, int]
    fleet_nodes: int
    allowed_nodes: int
    # The scheduler the cordon was applied to: `--apply` ran against it and it took every
    # command; None: the commands were only printed (or it refused them), so nothing wires
    # this telemetry to the scheduler (SPEC G2). Records written before --apply was told
    # apart always name the configured scheduler.
    orchestrator: Literal["slurm", "kubernetes"] | None
    applied: bool
    rules: str
    files: list[str]
    messages: RecordMessages | None = None
    # The option whose nodes the telemetry is from (--option or cordon.yaml `option`).
    option: str | None = None
    # The scheduler the commands are for, its cluster or context when --apply asked it.
    contour: Contour | None = None


def figures_of(record: ev.Evidence) -> CordonFigures:
    """The record's figures as `CordonFigures`.

    A record of another kind is a LookupError; figures of another shape (an edited record)
    are pydantic's ValidationError (a ValueError), naming the field.
    """
    if record.kind != "cordon":
        raise LookupError(f"{record.kind!r} is not a cordon record")
    return CordonFigures.model_validate(record.figures)
