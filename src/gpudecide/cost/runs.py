"""One run of the cost analysis as `gpudecide cost` asks for it (SPEC C1-C10, V2).

    run = run_cost(WORKSPACE)                               costs.yaml + the newest evidence
    run = run_cost(COSTS_YAML, profile=EVIDENCE, replays=[EVIDENCE, ...])
    run.result.figures, run.written                         the costs and where the record went

`run_cost` finds the inputs (in a workspace: its costs.yaml and the newest profile and replay
records unless given; outside one, a costs file and a named profile record), checks that
every costed option is declared in gpudecide.yaml with its kind (SPEC D3), costs every
option and writes the evidence record. Bad input is an `InputError` (exit 2).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.cost import analysis, schema
from gpudecide.errors import InputError
from gpudecide.inputs import node_line, yaml_root
from gpudecide.options import OptionDecl, require_known

__all__ = ["CostRun", "check_declared", "run_cost"]


@dataclass
class CostRun:
    """What `run_cost` did: the result and where its record went."""

    result: analysis.CostResult
    written: Path | None
    costs_path: Path
    profile_path: Path

    def costs_workspace(self) -> workspace.Workspace | None:
        """The workspace the costs file is in (its report.language names the language people
        read the run in), if any."""
        root = workspace.find_root(self.costs_path.parent)
        return workspace.load(root) if root is not None else None

    def as_json(self) -> dict[str, Any]:
        """The `cost --json` object: the figures, the English summary and notes, the verdict
        and where the record went."""
        figures = self.result.figures
        return {
            **figures,
            "summary": analysis.summary_line(figures),
            "verdict": self.result.verdict,
            "notes": self.result.notes,
            "evidence": str(self.written) if self.written else None,
        }


def _record(path: Path, kind: str) -> ev.Evidence:
    if not path.exists():
        raise InputError("no such evidence record", path=path)
    record = ev.load(path, verify=True)
    if record.kind != kind:
        raise InputError(
            "is a {kind!r} record, not {want!r}",
            path=path,
            field="kind",
            hint="pass the evidence/{want}-*.json that `gpudecide {want}` wrote",
            kind=record.kind,
            want=kind,
        )
    return record


def _newest_replays(records: list[ev.Evidence]) -> list[ev.Evidence]:
    """The newest replay record of each window kind (full, peak), oldest first."""
    newest: dict[str, ev.Evidence] = {}
    for record in records:
        if record.kind == "replay":
            newest[str((record.figures.get("window") or {}).get("kind"))] = record
    return sorted(newest.values(), key=lambda r: (r.created_at_utc, r.id))


@dataclass
class _Inputs:
    """Where the costs, the evidence read and the record written are."""

    costs_path: Path
    root: Path
    profile: Path
    replay_records: list[ev.Evidence]
    replay_paths: list[Path]
    out_dir: Path


def _target(target: Path | None, here: Path) -> Path:
    if target is None:
        found = workspace.find_root(here)
        if found is None:
            raise InputError(
                "not inside a gpudecide workspace",
                hint="pass WORKSPACE, or costs.yaml with --profile EVIDENCE",
            )
        target = found
    if not target.exists():
        raise InputError("no such file or directory", path=target)
    return target


def _workspace_inputs(
    ws: workspace.Workspace,
    profile: Path | None,
    replays: list[Path] | None,
    evidence_dir: Path | None,
) -> _Inputs:
    """In a workspace the newest profile and replay records are used unless given."""
    costs_path = ws.root / schema.COSTS_NAME
    if not costs_path.is_file():
        raise InputError(
            "no {name} in the workspace",
            path=costs_path,
            hint="`gpudecide init` writes a commented template of it",
            name=schema.COSTS_NAME,
        )
    records = ev.load_all(ws.evidence_dir)
    if profile is None:
        latest = ev.latest(records, "profile")
        if latest is None:
            raise InputError(
                "no profile evidence in the workspace",
                path=ws.evidence_dir,
                hint="run `gpudecide profile` first",
            )
        profile = ws.evidence_dir / f"{latest.id}.json"
    replay_records = (
        [_record(p, "replay") for p in replays] if replays else _newest_replays(records)
    )
    replay_paths = list(replays or [ws.evidence_dir / f"{r.id}.json" for r in replay_records])
    out_dir = evidence_dir or ws.evidence_dir
    return _Inputs(costs_path, ws.root, profile, replay_records, replay_paths, out_dir)


def _file_inputs(
    target: Path,
    here: Path,
    profile: Path | None,
    replays: list[Path] | None,
    evidence_dir: Path | None,
) -> _Inputs:
    if profile is None:
        raise InputError(
            "a costs file outside a workspace needs --profile EVIDENCE",
            path=target,
            hint="pass the evidence/profile-*.json that `gpudecide profile` wrote",
        )
    replay_records = [_record(p, "replay") for p in replays or []]
    out_dir = evidence_dir or here / "evidence"
    return _Inputs(target, here, profile, replay_records, list(replays or []), out_dir)


def _analyse(cfg: schema.CostsConfig, inputs: _Inputs) -> analysis.CostResult:
    profile_record = _record(inputs.profile, "profile")
    state, _problems = ev.freshness(profile_record, inputs.root)
    try:
        return analysis.analyse(
            cfg, profile_record, inputs.replay_records, profile_fresh=state is ev.Freshness.FRESH
        )
    except InputError as exc:
        if exc.path is not None:
            raise
        # The record is the bad input: name its file.
        raise InputError(
            exc.template,
            path=inputs.profile,
            field=exc.field,
            hint=exc.hint_template,
            **cast(dict[str, Any], exc.values),
        ) from None


def run_cost(
    target: Path | None,
    *,
    profile: Path | None = None,
    replays: list[Path] | None = None,
    evidence_dir: Path | None = None,
    cwd: Path | None = None,
) -> CostRun:
    """Cost every option of a costs.yaml against profile (and replay) evidence; write the record.

    `target` is a workspace folder, a costs.yaml, or None for the workspace found from `cwd` up.
    In a workspace the newest profile and replay records are used unless given.
    """
    here = cwd or Path.cwd()
    target = _target(target, here)
    ws = workspace.load(target) if target.is_dir() else None
    if ws is not None:
        inputs = _workspace_inputs(ws, profile, replays, evidence_dir)
    else:
        inputs = _file_inputs(target, here, profile, replays, evidence_dir)
    cfg = schema.load(inputs.costs_path)
    if ws is not None:
        check_declared(cfg, ws.config.options, inputs.costs_path)
    result = _analyse(cfg, inputs)
    root = inputs.root
    # Records are cited by identity: re-running an unchanged analysis keeps this one fresh.
    refs = [ev.input_ref(inputs.costs_path, root)] + [
        ev.record_ref(p, root) for p in (inputs.profile, *inputs.replay_paths)
    ]
    written = ev.write(analysis.to_evidence(result, refs), inputs.out_dir)
    return CostRun(result, written, inputs.costs_path, inputs.profile)


def check_declared(cfg: schema.CostsConfig, options: list[OptionDecl], path: Path) -> None:
    """Every costed option is declared in gpudecide.yaml, with the same kind (SPEC D3)."""
    root = yaml_root(path)
    kinds = {o.id: o.kind for o in options}
    for section in ("owned", "rented", "managed", "hybrid"):
        for i, option in enumerate(getattr(cfg, section)):
            loc: tuple[int | str, ...] = (section, i, "id")
            line = node_line(root, loc)
            require_known(option.id, options, path=path, field=f"{section}.{i}.id", line=line)
            if kinds[option.id] != section:
                raise InputError(
                    "{option!r} is declared as {kind} in gpudecide.yaml",
                    path=path,
                    line=line,
                    field=f"{section}.{i}.id",
                    hint="cost it under `{kind}`, or fix its kind in gpudecide.yaml",
                    option=option.id,
                    kind=kinds[option.id],
                )
