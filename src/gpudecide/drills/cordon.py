"""Hardware telemetry drives exclusion: per GPU ok / watch / cordon / drain-and-reset / replace.

SPEC G2: a GPU with rising correctable memory errors must stop getting jobs. `decide` reads
the samples and Xid events of `telemetry`, applies `cordon_rules`, and gives each GPU its
action with the reasons and the log lines behind them; each node gets the exact scheduler
command (`scontrol -- update NodeName=... State=DRAIN Reason=...`, or `kubectl cordon --
NODE` / `kubectl taint nodes --overwrite -- NODE ...`), the node's name after `--` so that
no name is ever read as an option.

The circuit breaker limits routine cordons: within its window (nodes the audit trail shows
taken out by earlier runs count, `audit.remember`) at most its share of the fleet. It never
holds back a GPU that must leave service for uncorrectable errors (double-bit ECC, Xid
48/64/79/95/140, a row-remap failure): that node is let through (`bypassed`) and the
decision says which and why. `apply` runs the commands of the nodes it allows.
"""

from __future__ import annotations

import itertools
import math
import re
import shlex
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from gpudecide.drills.audit import Memory
from gpudecide.drills.cordon_figures import (
    Breaker,
    CommandRun,
    GpuFigures,
    GpuId,
    NodeFigures,
    ReasonFigures,
)
from gpudecide.drills.cordon_rules import BUILT_IN_WHYS, Action, CordonRules, severity
from gpudecide.drills.telemetry import Line, Sample, Telemetry, XidEvent
from gpudecide.i18n import N_
from gpudecide.message import Message, english, message, nmessage

__all__ = [
    "CordonResult",
    "GpuDecision",
    "NodePlan",
    "Rate",
    "Reason",
    "apply",
    "apply_failed",
    "corrected_rate",
    "counts",
    "decide",
    "decide_gpus",
    "node_commands",
    "plan_nodes",
    "scheduler_reason",
    "uncorrectable",
]


@dataclass
class Reason:
    """One reason for an action, as people read it, with the telemetry lines that show it."""

    action: Action
    said: Message
    lines: list[Line]
    code: str = ""  # xid | dbe_volatile | retired_pending | remap_pending | ... | ecc_rate
    value: float | None = None  # the Xid number, the count or the rate per hour

    @property
    def text(self) -> str:
        """The reason in English (the JSON's, and the scheduler's `Reason=`)."""
        return english(self.said)

    def figure(self) -> ReasonFigures:
        """As the record holds it."""
        return ReasonFigures.model_validate(
            {
                "action": self.action,
                "reason": self.text,
                "code": self.code,
                "value": self.value,
                "evidence": [x.cite() for x in self.lines],
                "message": self.said,
            }
        )


@dataclass
class GpuDecision:
    """The action for one GPU."""

    node: str
    index: int | None
    bus: str | None
    reasons: list[Reason] = field(default_factory=list)
    corrected_per_hour: float | None = None

    @property
    def action(self) -> Action:
        """The most severe action any reason calls for (ok without reasons)."""
        worst: Action = "ok"
        for r in self.reasons:
            if severity(r.action) > severity(worst):
                worst = r.action
        return worst

    def figure(self) -> GpuFigures:
        """As the record holds it (the `cordon --json` per-GPU object)."""
        return GpuFigures(
            node=self.node,
            gpu=GpuId(index=self.index, pci_bus_id=self.bus),
            action=self.action,
            reasons=[r.figure() for r in self.reasons],
            corrected_errors_per_hour=self.corrected_per_hour,
        )


@dataclass
class NodePlan:
    """What happens to one node: its worst GPU action and the commands that do it."""

    node: str
    action: Action
    commands: list[list[str]]
    why: str
    breaker: Breaker = "allowed"
    results: list[CommandRun] = field(default_factory=list)
    follow_up_messages: list[Message] = field(default_factory=list)
    # The uncorrectable errors that take the node out whatever the breaker's share.
    uncorrectable: list[Reason] = field(default_factory=list)

    @property
    def follow_up(self) -> list[str]:
        """What the operator does next, in English."""
        return [english(m) for m in self.follow_up_messages]

    def figure(self) -> NodeFigures:
        """As the record holds it."""
        return NodeFigures.model_validate(
            {
                "node": self.node,
                "action": self.action,
                "why": self.why,
                "commands": [shlex.join(c) for c in self.commands],
                "breaker": self.breaker,
                "results": self.results,
                "follow_up": self.follow_up,
                "follow_up_messages": self.follow_up_messages,
            }
        )


@dataclass
class CordonResult:
    """The decision over a whole telemetry set."""

    gpus: list[GpuDecision]
    nodes: list[NodePlan]
    fleet_nodes: int
    allowed_nodes: int
    note_messages: list[Message] = field(default_factory=list)

    @property
    def notes(self) -> list[str]:
        """The notes in English."""
        return [english(m) for m in self.note_messages]


def _gpu_key(node: str, bus: str | None, index: int | None) -> tuple[str, str]:
    return (node, bus if bus is not None else f"index:{index}")


def _bus_of(telemetry: Telemetry) -> dict[tuple[str, int], str]:
    """node, index -> bus id, learnt from samples that carry both."""
    return {
        (s.node, s.index): s.bus
        for s in telemetry.samples
        if s.index is not None and s.bus is not None
    }


def _decision(
    table: dict[tuple[str, str], GpuDecision], node: str, bus: str | None, index: int | None
) -> GpuDecision:
    key = _gpu_key(node, bus, index)
    if key not in table:
        table[key] = GpuDecision(node=node, index=index, bus=bus)
    d = table[key]
    d.index = d.index if d.index is not None else index
    return d


def _xid_reasons(events: list[XidEvent], rules: CordonRules) -> list[Reason]:
    by_xid: dict[int, list[XidEvent]] = {}
    for e in events:
        by_xid.setdefault(e.xid, []).append(e)
    reasons = []
    for xid, group in sorted(by_xid.items()):
        rule = rules.xid_rule(xid)
        action: Action = rule.action
        why: Message | str = message("drills", rule.why) if rule.why in BUILT_IN_WHYS else rule.why
        # "x3": how many times, as the kernel log counts them (a sign, not a noun).
        said = message("drills", "Xid {xid} x{n}: {why}", xid=xid, n=len(group), why=why)
        if rule.replace_after is not None and len(group) >= rule.replace_after:
            action = "replace"
            said = nmessage(
                "drills",
                "{reason} (seen {n} time; replace from {limit})",
                "{reason} (seen {n} times; replace from {limit})",
                reason=said,
                n=len(group),
                limit=rule.replace_after,
            )
        sources = [e.source for e in group[:5]]
        reasons.append(Reason(action, said, sources, "xid", float(xid)))
    return reasons


def _latest(samples: list[Sample], metric: str) -> Sample | None:
    having = [s for s in samples if metric in s.metrics]
    timed = [s for s in having if s.time is not None]
    if timed:
        return max(timed, key=lambda s: s.time or datetime.min.replace(tzinfo=UTC))
    return having[-1] if having else None


def _counter_reasons(samples: list[Sample], rules: CordonRules) -> list[Reason]:
    mem = rules.memory
    reasons = []
    checks: list[tuple[str, Action, str]] = [
        ("dbe_volatile", mem.uncorrected_action, N_("uncorrected (double-bit) ECC errors: {v:g}")),
        ("retired_pending", mem.pending_action, N_("page retirement waits for a GPU reset")),
        ("remap_pending", mem.pending_action, N_("row remapping waits for a GPU reset")),
        ("remap_failure", mem.remap_failure_action, N_("row remapping failed: no spare rows left")),
    ]
    for metric, action, text in checks:
        s = _latest(samples, metric)
        if s is not None and s.metrics[metric] > 0:
            value = s.metrics[metric]
            said = message("drills", text, v=value)
            reasons.append(Reason(action, said, [s.source], metric, value))
    sbe, dbe = _latest(samples, "retired_sbe"), _latest(samples, "retired_dbe")
    retired = (sbe.metrics["retired_sbe"] if sbe else 0) + (
        dbe.metrics["retired_dbe"] if dbe else 0
    )
    if retired >= mem.replace_retired_pages:
        lines = [s.source for s in (sbe, dbe) if s is not None]
        said = nmessage(
            "drills",
            "{n:g} retired page (replace from {limit})",
            "{n:g} retired pages (replace from {limit})",
            n=retired,
            limit=mem.replace_retired_pages,
        )
        reasons.append(Reason("replace", said, lines, "retired_pages", retired))
    return reasons


@dataclass
class Rate:
    """Corrected errors per hour over the window and over its recent half."""

    per_hour: float
    recent_per_hour: float
    rising: bool
    window: list[Sample]


def corrected_rate(samples: list[Sample], rules: CordonRules) -> Rate | None:
    """Corrected (single-bit) errors per hour in the window; None when it cannot be measured.

    A counter that goes down was reset (driver reload): the increment is its new value.
    "Rising" means the second half of the window saw more errors than the first.
    """
    cfg = rules.corrected_errors
    timed = sorted(
        (s for s in samples if s.time is not None and "sbe_volatile" in s.metrics),
        key=lambda s: s.time or datetime.min.replace(tzinfo=UTC),
    )
    if not timed or timed[-1].time is None:
        return None
    start = timed[-1].time - timedelta(hours=cfg.window_hours)
    window = [s for s in timed if s.time is not None and s.time >= start]
    if len(window) < cfg.min_samples:
        return None
    times = [s.time for s in window if s.time is not None]
    increments = []
    for a, b in itertools.pairwise(window):
        va, vb = a.metrics["sbe_volatile"], b.metrics["sbe_volatile"]
        increments.append(vb - va if vb >= va else vb)
    hours = (times[-1] - times[0]).total_seconds() / 3600.0
    if hours <= 0:
        return None
    half = len(increments) // 2
    recent_hours = (times[-1] - times[half]).total_seconds() / 3600.0
    recent = sum(increments[half:]) / recent_hours if recent_hours > 0 else 0.0
    rising = half > 0 and sum(increments[half:]) > sum(increments[:half])
    return Rate(sum(increments) / hours, recent, rising, window)


def _rate_reason(samples: list[Sample], rules: CordonRules) -> tuple[Reason | None, float | None]:
    cfg = rules.corrected_errors
    rate = corrected_rate(samples, rules)
    if rate is None:
        return None, None
    # A rising rate is judged by its recent half: the G2 GPU looks tame on a 24 h average.
    judged = max(rate.per_hour, rate.recent_per_hour) if rate.rising else rate.per_hour
    action: Action = "ok"
    if judged >= cfg.cordon_per_hour:
        action = "cordon"
    elif judged >= cfg.watch_per_hour:
        action = "watch"
    if action == "ok":
        return None, rate.per_hour
    lines = [rate.window[0].source, rate.window[-1].source]
    trend = message(
        "drills", ", rising: {rate:.1f}/h in the recent half", rate=rate.recent_per_hour
    )
    said = nmessage(
        "drills",
        "corrected ECC errors {rate:.1f}/h over {n} sample{trend} (watch from {watch:g}/h, "
        "cordon from {cordon:g}/h)",
        "corrected ECC errors {rate:.1f}/h over {n} samples{trend} (watch from {watch:g}/h, "
        "cordon from {cordon:g}/h)",
        rate=rate.per_hour,
        n=len(rate.window),
        trend=trend if rate.rising else "",
        watch=cfg.watch_per_hour,
        cordon=cfg.cordon_per_hour,
    )
    reason = Reason(action, said, lines, "ecc_rate", round(judged, 2))
    return reason, rate.per_hour


def decide_gpus(telemetry: Telemetry, rules: CordonRules) -> list[GpuDecision]:
    """Every GPU seen in the telemetry with its action and reasons."""
    bus_of = _bus_of(telemetry)
    table: dict[tuple[str, str], GpuDecision] = {}
    samples: dict[tuple[str, str], list[Sample]] = {}
    for s in telemetry.samples:
        bus = s.bus or (bus_of.get((s.node, s.index)) if s.index is not None else None)
        _decision(table, s.node, bus, s.index)
        samples.setdefault(_gpu_key(s.node, bus, s.index), []).append(s)
    index_of = {(n, b): i for (n, i), b in bus_of.items()}
    events: dict[tuple[str, str], list[XidEvent]] = {}
    for e in telemetry.xids:
        index = e.index if e.index is not None else index_of.get((e.node, e.bus or ""))
        bus = e.bus or (bus_of.get((e.node, index)) if index is not None else None)
        _decision(table, e.node, bus, index)
        events.setdefault(_gpu_key(e.node, bus, index), []).append(e)
    for key, d in table.items():
        d.reasons.extend(_xid_reasons(events.get(key, []), rules))
        d.reasons.extend(_counter_reasons(samples.get(key, []), rules))
        reason, rate = _rate_reason(samples.get(key, []), rules)
        d.corrected_per_hour = None if rate is None else round(rate, 3)
        if reason is not None:
            d.reasons.append(reason)
    return sorted(
        table.values(), key=lambda d: (d.node, d.index if d.index is not None else -1, d.bus or "")
    )


_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


def scheduler_reason(action: Action, why: str) -> str:
    """Slurm's `Reason=` text: one line of printable characters, at most 200 (a rule's own
    `why` from cordon.yaml may hold anything)."""
    text = " ".join(_CONTROL.sub(" ", f"gpudecide {action}: {why}").split())
    return text[:200]


def node_commands(node: str, action: Action, why: str, rules: CordonRules) -> list[list[str]]:
    """The exact commands that take a node out for `action` (none for ok / watch).

    `node` is one node of the scheduler (`nodenames.check`, at read time); it still goes
    after `--`, so that neither kubectl nor scontrol could read it as an option."""
    if severity(action) < severity("cordon"):
        return []
    c = rules.commands
    if c.orchestrator == "slurm":
        # DRAIN lets running jobs finish and starts no new ones: Slurm's cordon.
        reason = scheduler_reason(action, why)
        return [[c.scontrol, "--", "update", f"NodeName={node}", "State=DRAIN", f"Reason={reason}"]]
    if action == "cordon":
        return [[c.kubectl, "cordon", "--", node]]
    # NoExecute evicts the pods already there: the GPU must be reset or replaced.
    taint = f"{c.taint_key}={action}:NoExecute"
    return [
        [c.kubectl, "cordon", "--", node],
        [c.kubectl, "taint", "nodes", "--overwrite", "--", node, taint],
    ]


def uncorrectable(decisions: list[GpuDecision], rules: CordonRules) -> list[Reason]:
    """The reasons of a node's GPUs that leave no choice: uncorrectable errors (double-bit
    ECC counts, a row-remap failure, the Xids of `breaker.uncorrectable_xids`) whose rule
    takes the GPU out (cordon or more)."""
    xids = set(rules.breaker.uncorrectable_xids)
    found = []
    for d in decisions:
        for r in d.reasons:
            if severity(r.action) < severity("cordon"):
                continue
            hard = r.code in ("dbe_volatile", "remap_failure")
            if hard or (r.code == "xid" and r.value is not None and int(r.value) in xids):
                found.append(r)
    return found


def _follow_up(decisions: list[GpuDecision]) -> list[Message]:
    """What the operator does once the node is drained (printed, never run by gpudecide)."""
    steps: list[Message] = []
    for d in decisions:
        gpu = (
            message("drills", "GPU {index}", index=d.index)
            if d.index is not None
            else message("drills", "GPU at {bus}", bus=d.bus)
        )
        if d.action == "drain-and-reset":
            target = str(d.index) if d.index is not None else f"<index of {d.bus}>"
            command = f"nvidia-smi --gpu-reset -i {target}"
            steps.append(
                message(
                    "drills",
                    "{gpu}: once no job runs on it, {command} (or reboot the node if the reset "
                    "fails)",
                    gpu=gpu,
                    command=command,
                )
            )
        elif d.action == "replace":
            steps.append(
                message(
                    "drills", "{gpu}: take out of service and request a replacement (RMA)", gpu=gpu
                )
            )
    return steps


def _short(reason: Reason) -> Message:
    """A reason named in a few words (the breaker's note lists them)."""
    if reason.code == "xid":
        return message("drills", "Xid {n}", n=int(reason.value or 0))
    if reason.code == "dbe_volatile":
        return message("drills", "uncorrected ECC errors: {n}", n=f"{reason.value or 0:g}")
    return message("drills", "row remapping failed")


def plan_nodes(
    gpus: list[GpuDecision], rules: CordonRules, memory: Memory | None = None
) -> tuple[list[NodePlan], int, int]:
    """One plan per node, the breaker applied; also the fleet size and the nodes routine
    cordons may take out within the window.

    Nodes the audit trail shows still out (`memory`) fill the share first; a node with
    uncorrectable errors is let through (`bypassed`) and takes none of it."""
    memory = memory or Memory()
    by_node: dict[str, list[GpuDecision]] = {}
    for g in gpus:
        by_node.setdefault(g.node, []).append(g)
    known = set(by_node) | set(memory.routine) | set(memory.uncorrectable)
    fleet = rules.breaker.fleet_nodes or len(known)
    # At least one node: a small fleet must still be able to lose its one bad node.
    allowed = max(1, math.floor(rules.breaker.max_share * fleet))
    plans = []
    for node, decisions in by_node.items():
        worst = max(decisions, key=lambda d: severity(d.action))
        top = [r for r in worst.reasons if r.action == worst.action]
        gpu = f"GPU {worst.index}" if worst.index is not None else "GPU"
        why = f"{gpu} {worst.bus or ''} {top[0].text if top else ''}".replace("  ", " ").strip()
        cmds = node_commands(node, worst.action, why, rules)
        plan = NodePlan(node, worst.action, cmds, why, "allowed" if cmds else "none")
        plan.follow_up_messages = _follow_up(decisions)
        if cmds:
            plan.uncorrectable = uncorrectable(decisions, rules)
            if plan.uncorrectable:
                plan.breaker = "bypassed"
        plans.append(plan)
    # An entry naming no single node may have taken out anything: no room is left.
    out = set(by_node) if memory.unknown else set(memory.routine)
    taken = set(out) if not memory.unknown else set()
    room = 0 if memory.unknown else allowed
    routine = [p for p in plans if p.breaker == "allowed"]
    for p in sorted(routine, key=lambda p: (-severity(p.action), p.node)):
        if p.node in memory.routine and not memory.unknown:
            continue  # already out: telling the scheduler again takes nothing more
        if len(taken) < room:
            taken.add(p.node)
        else:
            p.breaker = "held"
    return sorted(plans, key=lambda p: p.node), fleet, allowed


def _breaker_notes(
    nodes: list[NodePlan], memory: Memory, fleet: int, allowed: int, window_hours: float
) -> list[Message]:
    """What the breaker let through, what it held back and why."""
    said: list[Message] = []
    bypassed = [p for p in nodes if p.breaker == "bypassed"]
    if bypassed:
        listed = [
            message("drills", "{node} ({reasons})", node=p.node,
                    reasons=[_short(r) for r in p.uncorrectable])
            for p in bypassed
        ]  # fmt: skip
        said.append(
            message(
                "drills",
                "circuit breaker: let through {nodes}: uncorrectable errors take a GPU out of "
                "service whatever the limit",
                nodes=listed,
            )
        )
    for line, text in memory.unknown:
        said.append(
            message(
                "drills",
                "circuit breaker: audit line {line} names {text}, which is no single node: it "
                "counts as the whole fleet for {hours} h",
                line=line,
                text=text[:64],
                hours=f"{window_hours:g}",
            )
        )
    earlier = sorted(memory.routine)
    if earlier and any(p.breaker in ("allowed", "held") for p in nodes):
        said.append(
            nmessage(
                "drills",
                "circuit breaker: {n} node already out from earlier runs within {hours} h: {nodes}",
                "circuit breaker: {n} nodes already out from earlier runs within {hours} h: "
                "{nodes}",
                n=len(earlier),
                hours=f"{window_hours:g}",
                nodes=earlier,
            )
        )
    held = [p.node for p in nodes if p.breaker == "held"]
    if held:
        said.append(
            nmessage(
                "drills",
                "circuit breaker: at most {n} of {m} node at once; held: {nodes}",
                "circuit breaker: at most {n} of {m} nodes at once; held: {nodes}",
                count="m",
                n=allowed,
                m=fleet,
                nodes=held,
            )
        )
    return said


def decide(telemetry: Telemetry, rules: CordonRules, memory: Memory | None = None) -> CordonResult:
    """Decisions per GPU and plans per node for one telemetry set (`memory`: what the audit
    trail shows already out)."""
    memory = memory or Memory()
    gpus = decide_gpus(telemetry, rules)
    nodes, fleet, allowed = plan_nodes(gpus, rules, memory)
    said = list(telemetry.note_messages)
    said.extend(_breaker_notes(nodes, memory, fleet, allowed, rules.breaker.window_hours))
    for g in gpus:
        if g.corrected_per_hour is None and any(
            "sbe_volatile" in s.metrics for s in telemetry.samples if s.node == g.node
        ):
            gpu = g.index if g.index is not None else g.bus
            said.append(
                message(
                    "drills",
                    "{node} GPU {gpu}: corrected-error rate not measured (needs timed samples: "
                    "nvidia-smi with a timestamp column, or dcgm-exporter samples with times)",
                    node=g.node,
                    gpu=gpu,
                )
            )
    return CordonResult(gpus, nodes, fleet, allowed, said)


def apply(result: CordonResult, timeout_s: float = 60.0) -> None:
    """Run the commands of every node the breaker allows or lets through; results go into
    the plans."""
    for plan in result.nodes:
        if plan.breaker not in ("allowed", "bypassed"):
            continue
        for argv in plan.commands:
            said: Message | None = None  # gpudecide's own words where the program gave none
            try:
                done = subprocess.run(
                    argv, capture_output=True, text=True, timeout=timeout_s, check=False
                )
                rc, output = done.returncode, (done.stdout + done.stderr).strip()
            except FileNotFoundError:
                said = message("drills", "{program}: program not found", program=argv[0])
                rc, output = 127, english(said)
            except subprocess.TimeoutExpired:
                said = message("drills", "timed out after {limit:g} s", limit=timeout_s)
                rc, output = 124, english(said)
            ran = {"command": shlex.join(argv), "rc": rc, "output": output[-2000:], "message": said}
            plan.results.append(CommandRun.model_validate(ran))
            if rc != 0:
                break


def apply_failed(result: CordonResult) -> bool:
    """Whether any command that ran failed."""
    return any(r.rc != 0 for p in result.nodes for r in p.results)


def counts(result: CordonResult) -> dict[str, int]:
    """GPUs per action."""
    out = {a: 0 for a in ("ok", "watch", "cordon", "drain-and-reset", "replace")}
    for g in result.gpus:
        out[g.action] += 1
    return out
