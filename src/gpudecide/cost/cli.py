"""`gpudecide cost`: the command, and the library call it wraps (`run_cost`).

    gpudecide cost [WORKSPACE]                        costs.yaml + the workspace's evidence
    gpudecide cost costs.yaml --profile EVIDENCE      any costs file, any profile record

The main CLI adds the command with `register(app)`; one-line errors, exit 2 and JSON output
come from `gpudecide.console`, shared by every command.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, cast

import typer
from rich.table import Table

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.console import emit_json, guard, language, out, print_written
from gpudecide.cost import analysis, schema, words
from gpudecide.errors import InputError
from gpudecide.fmt import money, pct
from gpudecide.i18n import translator
from gpudecide.inputs import node_line, yaml_root
from gpudecide.message import render
from gpudecide.options import OptionDecl, require_known
from gpudecide.report.i18n import notes_of, summary_of

_ = translator("cost")


@dataclass
class CostRun:
    """What `run_cost` did: the result and where its record went."""

    result: analysis.CostResult
    written: Path | None
    costs_path: Path
    profile_path: Path


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


def _table(figures: dict[str, Any]) -> Table:
    """One row per option: the three months, cost per useful GPU-hour, useful utilisation."""
    cur = figures["currency"]
    table = Table(
        _("option"),
        _("type"),
        _("normal ({cur})").format(cur=cur),
        _("peak ({cur})").format(cur=cur),
        _("empty ({cur})").format(cur=cur),
        _("per useful GPU-h ({cur})").format(cur=cur),
        _("useful util."),
        box=None,
    )
    for o in figures["options"]:
        r = o["regimes"]
        table.add_row(
            o["id"],
            words.word(words.OPTION_TYPES, o["type"]),
            money(r["normal"]["total"], 0),
            money(r["peak"]["total"], 0),
            money(r["empty"]["total"], 0),
            money(r["normal"]["cost_per_useful_gpu_hour"], 2),
            pct(r["normal"]["useful_utilisation"]),
        )
    return table


def _month_lines(figures: dict[str, Any]) -> list[str]:
    """Each month's workload and how it was chosen, then the break-evens (C8)."""
    lines = []
    for regime, w in figures["regimes"].items():
        lines.append(
            _("{month}: {gpu_hours}, {attempts}; {basis}").format(
                month=render(words.month_word(regime)),
                gpu_hours=render(words.gpu_hours(w["gpu_hours"])),
                attempts=render(words.attempts(w["attempts"])),
                basis=render(w["basis_message"]),
            )
        )
    for p in figures["break_even"]:
        u = p["break_even_useful_utilisation"]
        lines.append(
            _(
                "break-even {dedicated} vs {managed}: {u} useful utilisation (dedicated cheaper: "
                "{cheaper}; observed {observed})"
            ).format(
                dedicated=p["dedicated"],
                managed=p["managed"],
                u=pct(u) if u is not None else _("none"),
                cheaper=words.word(words.CHEAPER, str(p["dedicated_cheaper"])),
                observed=pct(p["observed_normal"]),
            )
        )
    return lines


def print_summary(figures: dict[str, Any], console: Any) -> None:
    """The human form: one row per option, then break-evens, findings and notes."""
    record = ev.Evidence(
        kind="cost",
        title="",
        spec_ids=[],
        verdict="info",
        summary=analysis.summary_line(figures),
        figures=figures,
    )
    console.print(summary_of(record), markup=False)
    console.print(_table(figures))
    for line in _month_lines(figures):
        console.print(line, markup=False)
    finding = _("finding: {text}")
    for msg in figures["finding_messages"]:
        console.print(finding.format(text=render(msg)), markup=False)


def _workspace_of(run: CostRun) -> workspace.Workspace | None:
    """The workspace the costs file is in (its report.language), if any."""
    root = workspace.find_root(run.costs_path.parent)
    return workspace.load(root) if root is not None else None


def register(app: typer.Typer) -> None:
    """Add the `cost` command to the main CLI app."""

    @app.command("cost")
    def cost(
        target: Annotated[
            Path | None,
            typer.Argument(
                metavar="[WORKSPACE | COSTS.YAML]",
                help="Workspace folder, or a costs.yaml (then --profile is needed); "
                "default: the workspace found from here up.",
            ),
        ] = None,
        profile: Annotated[
            Path | None,
            typer.Option(
                metavar="EVIDENCE",
                help="Profile evidence record (default: the workspace's newest).",
            ),
        ] = None,
        replay: Annotated[
            list[Path] | None,
            typer.Option(
                metavar="EVIDENCE",
                help="Replay evidence record; repeat for several (default: the workspace's "
                "newest of each window).",
            ),
        ] = None,
        evidence_dir: Annotated[
            Path | None, typer.Option(help="Where to write the evidence record.")
        ] = None,
        workspace_dir: Annotated[
            Path | None,
            typer.Option("--workspace", "-w", help="Workspace folder (same as WORKSPACE)."),
        ] = None,
        as_json: Annotated[
            bool, typer.Option("--json", help="Print one JSON object for machines.")
        ] = False,
    ) -> None:
        """Cost every option in a normal, a peak and an empty month (SPEC C1-C10, V2)."""
        with guard(as_json):
            if target is not None and workspace_dir is not None:
                raise InputError(
                    "give the workspace once: as WORKSPACE or as --workspace", field="--workspace"
                )
            run = run_cost(
                target or workspace_dir, profile=profile, replays=replay, evidence_dir=evidence_dir
            )
            if not as_json:
                # The costs file's workspace names the language people read (--json: English).
                language(_workspace_of(run))
        figures = run.result.figures
        if as_json:
            emit_json(
                {
                    **figures,
                    "summary": analysis.summary_line(figures),
                    "verdict": run.result.verdict,
                    "notes": run.result.notes,
                    "evidence": str(run.written) if run.written else None,
                }
            )
            return
        print_summary(figures, out)
        record = analysis.to_evidence(run.result, [])
        for note in notes_of(record):
            out.print(_("note: {text}").format(text=note), markup=False)
        if run.written:
            print_written(run.written)
