"""`gpudecide cordon` as a library call: telemetry in, decision, evidence and audit out (G2, G3)."""

from __future__ import annotations

import json
import shlex
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.drills import audit, cordon, cordon_rules, telemetry
from gpudecide.drills.contour import Contour, ask_kubernetes, ask_slurm, this_host
from gpudecide.drills.cordon_figures import CordonFigures
from gpudecide.drills.cordon_rules import severity
from gpudecide.drills.figures import RecordMessages
from gpudecide.errors import InputError
from gpudecide.inputs import node_line, yaml_root
from gpudecide.message import Message, message, nmessage, record_texts
from gpudecide.options import require_known

__all__ = [
    "AUDIT_PATH",
    "TELEMETRY_DIR",
    "CordonRun",
    "run_cordon",
    "summary_message",
    "verdict_of",
]

TELEMETRY_DIR = "telemetry"
AUDIT_PATH = Path("audit") / "cordon.jsonl"


@dataclass
class CordonRun:
    """What `run_cordon` did: the decision, its record (written when telemetry was read)
    and the audit trail it appended to."""

    result: cordon.CordonResult
    figures: CordonFigures
    record: ev.Evidence
    written: Path | None
    audit_path: Path

    @property
    def verdict(self) -> ev.Verdict:
        """The record's verdict."""
        return self.record.verdict

    def exit_code(self) -> int:
        """1 when the breaker held a node back or a command run by `--apply` failed, else 0."""
        held = any(n.breaker == "held" for n in self.result.nodes)
        return 1 if held or cordon.apply_failed(self.result) else 0

    def as_json(self) -> dict[str, Any]:
        """The `cordon --json` object: the figures, the English summary and notes, where the
        record and the audit trail went."""
        payload: dict[str, Any] = {
            **self.record.figures,
            "summary": self.record.summary,
            "verdict": self.verdict,
            "notes": self.record.notes,
            "audit": str(self.audit_path),
            "evidence": str(self.written) if self.written else None,
        }
        return dict(json.loads(json.dumps(payload, default=str)))


def verdict_of(result: cordon.CordonResult) -> ev.Verdict:
    """fail: a GPU must leave service; warn: one is watched; pass: all ok; info: no GPUs."""
    if not result.gpus:
        return "info"
    worst = max(severity(g.action) for g in result.gpus)
    if worst >= severity("cordon"):
        return "fail"
    return "warn" if worst == severity("watch") else "pass"


def summary_message(counts: dict[str, int], nodes: int) -> Message:
    """ "10 GPUs on 5 nodes: 5 ok, 2 watch, ...": GPUs per action over the nodes read."""
    return message(
        "drills",
        "{gpus} {on_nodes}: {ok} ok, {watch} watch, {cordon} cordon, "
        "{drain} drain-and-reset, {replace} replace",
        gpus=nmessage("drills", "{n} GPU", "{n} GPUs", n=sum(counts.values())),
        on_nodes=nmessage("drills", "on {n} node", "on {n} nodes", n=nodes),
        ok=counts["ok"],
        watch=counts["watch"],
        cordon=counts["cordon"],
        drain=counts["drain-and-reset"],
        replace=counts["replace"],
    )


def _paths(given: list[Path], ws: workspace.Workspace | None) -> list[Path]:
    if given:
        for p in given:
            if not p.exists():
                raise InputError("no such file or directory", path=p)
        return given
    if ws is not None and (ws.root / TELEMETRY_DIR).is_dir():
        return [ws.root / TELEMETRY_DIR]
    return []


def run_cordon(
    paths: list[Path],
    *,
    ws: workspace.Workspace | None,
    rules_path: Path | None = None,
    node: str | None = None,
    do_apply: bool = False,
    evidence_dir: Path | None = None,
    audit_path: Path | None = None,
    option: str | None = None,
) -> CordonRun:
    """Read telemetry, decide per GPU, write a `cordon` record; with `do_apply` run commands.

    Without paths a workspace's `telemetry/` folder is read; without `rules_path` its
    `cordon.yaml`, else the built-in rules (NVIDIA's Xid catalogue). `option` (else the
    rules' `option`) names the option whose nodes these are. With `do_apply` the scheduler
    is asked for its cluster or context before anything runs: one that does not answer is
    bad input, and nothing is applied.
    """
    root = ws.root if ws is not None else Path.cwd()
    if rules_path is None and ws is not None:
        found = ws.root / cordon_rules.RULES_NAME
        if found.exists() or found.is_symlink():
            rules_path = found
    rules = cordon_rules.load(rules_path)
    orchestrator = rules.commands.orchestrator
    chosen = _option(option, rules, rules_path, ws)
    files = _paths(paths, ws)
    data = telemetry.read_all(files, node, orchestrator)
    audit_to = audit_path or root / AUDIT_PATH
    memory = audit.remember(audit_to, datetime.now(UTC), rules.breaker.window_hours, orchestrator)
    result = cordon.decide(data, rules, memory)
    if not data.files:
        result.note_messages.append(
            message(
                "drills",
                "no telemetry given and no files in {dir}/: nothing to decide",
                dir=TELEMETRY_DIR,
            )
        )
    out_dir = evidence_dir or (ws.evidence_dir if ws is not None else root / "evidence")
    run_id = uuid.uuid4().hex[:16]
    contour = _contour(rules, do_apply)
    if do_apply:
        # The trail first, the scheduler after: a trail or an evidence folder that cannot be
        # written stops the run before any command, and before anything is made.
        audit.require_writable(audit_to)
        if data.files:
            _require_folder(out_dir)
        acting = [p for p in result.nodes if p.breaker in ("allowed", "bypassed")]
        audit.append(audit_to, [_line("intent", run_id, p, applied=True) for p in acting])
        cordon.apply(result)
    counts = cordon.counts(result)
    texts = record_texts(summary_message(counts, len(result.nodes)), result.note_messages)
    # Applied to a scheduler: --apply ran and the scheduler took every command (SPEC G2).
    taken = do_apply and not cordon.apply_failed(result)
    figures = CordonFigures(
        gpus=[g.figure() for g in result.gpus],
        nodes=[p.figure() for p in result.nodes],
        counts=counts,
        fleet_nodes=result.fleet_nodes,
        allowed_nodes=result.allowed_nodes,
        orchestrator=orchestrator if taken else None,
        applied=do_apply,
        rules=str(rules_path) if rules_path else "built-in",
        files=[str(p) for p in data.files],
        messages=RecordMessages.model_validate(texts.messages),
        option=chosen,
        contour=contour,
    )
    inputs = [ev.input_ref(p, root) for p in [*data.files, *([rules_path] if rules_path else [])]]
    record = ev.Evidence(
        kind="cordon",
        title="GPU health: which GPUs leave service (auto-cordon)",
        spec_ids=["G2", "G3"],
        verdict=verdict_of(result),
        summary=texts.summary,
        figures=figures.model_dump(mode="json"),
        notes=texts.notes,
        inputs=inputs,
    )
    written = ev.write(record, out_dir) if data.files else None
    evidence_id = written.stem if written else None
    audit.append(
        audit_to,
        [
            _line("result", run_id, p, applied=do_apply, evidence=evidence_id)
            for p in result.nodes
            if p.commands
        ],
    )
    return CordonRun(result, figures, record, written, audit_to)


def _line(
    phase: audit.Phase,
    run: str,
    plan: cordon.NodePlan,
    *,
    applied: bool,
    evidence: str | None = None,
) -> audit.Entry:
    ran = applied and plan.breaker in ("allowed", "bypassed")
    return audit.entry(
        phase,
        run,
        node=plan.node,
        action=plan.action,
        why=plan.why,
        commands=[shlex.join(c) for c in plan.commands],
        breaker=plan.breaker,
        applied=ran,
        results=[r.model_dump(mode="json") for r in plan.results],
        evidence=evidence,
    )


def _require_folder(folder: Path) -> None:
    """The evidence folder can be written (it, or the parent it will be made in)."""
    if folder.exists() and not folder.is_dir():
        raise InputError(
            "is not a folder", path=folder, hint="give --evidence-dir a folder to write records to"
        )
    if not audit.writable_folder(folder):
        raise InputError(
            "the evidence folder cannot be written",
            path=folder,
            hint="nothing runs before its record can be kept: give --evidence-dir a writable "
            "folder",
        )


def _option(
    given: str | None,
    rules: cordon_rules.CordonRules,
    rules_path: Path | None,
    ws: workspace.Workspace | None,
) -> str | None:
    """The option whose nodes these are: --option, else cordon.yaml's; declared in the
    workspace's gpudecide.yaml (without a workspace there is nothing to check it against)."""
    chosen = given or rules.option
    if chosen is None or ws is None:
        return chosen
    if given is None and rules_path is not None:
        line = node_line(yaml_root(rules_path), ("option",))
        require_known(chosen, ws.config.options, path=rules_path, field="option", line=line)
    else:
        require_known(
            chosen, ws.config.options, path=ws.root / workspace.CONFIG_NAME, field="--option"
        )
    return chosen


def _contour(rules: cordon_rules.CordonRules, do_apply: bool) -> Contour:
    """The scheduler the commands are for; with --apply its cluster (Slurm) or context
    (Kubernetes) as it answers, and a scheduler that does not answer is bad input."""
    c = rules.commands
    slurm = c.orchestrator == "slurm"
    cluster = context = ""
    if do_apply:
        answer = ask_slurm(c.scontrol) if slurm else ask_kubernetes(c.kubectl)
        if answer.name is None:
            raise answer.error(field="--apply")
        cluster, context = (answer.name, "") if slurm else ("", answer.name)
    return Contour(
        executor="slurm" if slurm else "k8s",
        cluster=cluster,
        context=context,
        host=this_host(),
        storage="",
    )
