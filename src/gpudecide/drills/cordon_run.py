"""`gpudecide cordon` as a library call: telemetry in, decision, evidence and audit out (G2, G3)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.drills import cordon, cordon_rules, telemetry
from gpudecide.drills.cordon_rules import severity
from gpudecide.errors import InputError
from gpudecide.report.i18n import message, render_message

TELEMETRY_DIR = "telemetry"
AUDIT_PATH = Path("audit") / "cordon.jsonl"


@dataclass
class CordonRun:
    """What `run_cordon` did."""

    result: cordon.CordonResult
    figures: dict[str, Any]
    verdict: ev.Verdict
    written: Path | None
    audit_path: Path


def verdict_of(result: cordon.CordonResult) -> ev.Verdict:
    """fail: a GPU must leave service; warn: one is watched; pass: all ok; info: no GPUs."""
    if not result.gpus:
        return "info"
    worst = max(severity(g.action) for g in result.gpus)
    if worst >= severity("cordon"):
        return "fail"
    return "warn" if worst == severity("watch") else "pass"


def summary_message(figures: dict[str, Any]) -> dict[str, Any]:
    """The summary as a message (gpudecide.report.i18n)."""
    c = figures["counts"]
    return message(
        "drills",
        "{gpus} GPUs on {nodes} nodes: {ok} ok, {watch} watch, {cordon} cordon, "
        "{drain} drain-and-reset, {replace} replace",
        gpus=sum(c.values()),
        nodes=len(figures["nodes"]),
        ok=c["ok"],
        watch=c["watch"],
        cordon=c["cordon"],
        drain=c["drain-and-reset"],
        replace=c["replace"],
    )


def summary_line(figures: dict[str, Any], lang: str = "en") -> str:
    """One line for people."""
    return render_message(summary_message(figures), lang)


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
) -> CordonRun:
    """Read telemetry, decide per GPU, write a `cordon` record; with `do_apply` run commands.

    Without paths a workspace's `telemetry/` folder is read; without `rules_path` its
    `cordon.yaml`, else the built-in rules (NVIDIA's Xid catalogue).
    """
    root = ws.root if ws is not None else Path.cwd()
    if rules_path is None and ws is not None and (ws.root / cordon_rules.RULES_NAME).is_file():
        rules_path = ws.root / cordon_rules.RULES_NAME
    rules = cordon_rules.load(rules_path)
    files = _paths(paths, ws)
    data = telemetry.read_all(files, node)
    result = cordon.decide(data, rules)
    if not data.files:
        said = message(
            "drills",
            "no telemetry given and no files in {dir}/: nothing to decide",
            dir=TELEMETRY_DIR,
        )
        result.notes.append(render_message(said, "en"))
        result.note_messages.append(said)
    if do_apply:
        cordon.apply(result)
    figures: dict[str, Any] = {
        "gpus": [g.as_dict() for g in result.gpus],
        "nodes": [p.as_dict() for p in result.nodes],
        "counts": cordon.counts(result),
        "fleet_nodes": result.fleet_nodes,
        "allowed_nodes": result.allowed_nodes,
        "orchestrator": rules.commands.orchestrator,
        "applied": do_apply,
        "rules": str(rules_path) if rules_path else "built-in",
        "files": [str(p) for p in data.files],
    }
    figures["messages"] = {"summary": summary_message(figures), "notes": result.note_messages}
    verdict = verdict_of(result)
    inputs = [ev.input_ref(p, root) for p in [*data.files, *([rules_path] if rules_path else [])]]
    record = ev.Evidence(
        kind="cordon",
        title="GPU health: which GPUs leave service (auto-cordon)",
        spec_ids=["G2", "G3"],
        verdict=verdict,
        summary=summary_line(figures),
        figures=figures,
        notes=result.notes,
        inputs=inputs,
    )
    written = None
    if data.files:
        out_dir = evidence_dir or (ws.evidence_dir if ws is not None else root / "evidence")
        written = ev.write(record, out_dir)
    audit_to = audit_path or root / AUDIT_PATH
    cordon.audit(result, audit_to, applied=do_apply, evidence_id=written.stem if written else None)
    return CordonRun(result, figures, verdict, written, audit_to)
