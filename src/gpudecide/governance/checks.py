"""The library entry of every governance check: workspace inputs in, evidence record out.

    run_raci(ws)            raci.yaml                       -> evidence kind "raci"
    run_standard_path(ws)   raci.yaml `standard_path`       -> evidence kind "standard_path"
    run_isolation(ws)       isolation.yaml (+ OSCAL export) -> evidence kind "isolation"
    run_residency(ws)       gpudecide.yaml matrix.residency -> evidence kind "residency"
    run_secrets(paths, ws)  logs and configs                -> evidence kind "secrets"

Each returns a `CheckRun`: the record (sealed and written when a workspace is given), its
findings and where it went. The CLI and the demo call these; nothing here prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from gpudecide import evidence as ev
from gpudecide.errors import InputError
from gpudecide.governance import raci, standard_path
from gpudecide.governance.findings import Figure, Finding, verdict_of
from gpudecide.i18n import N_
from gpudecide.message import Message, message, nmessage, record_texts
from gpudecide.options import require_known
from gpudecide.redact import redact, redact_all
from gpudecide.workspace import CONFIG_NAME, Workspace

if TYPE_CHECKING:
    # Each check loads its own module when it runs: `check raci` declares none of the
    # isolation, residency or secrets models (about 50 ms of its start here).
    from gpudecide.governance import isolation

__all__ = [
    "TITLES",
    "CheckRun",
    "isolation_notes",
    "oscal_path",
    "raci_notes",
    "run_isolation",
    "run_raci",
    "run_residency",
    "run_secrets",
    "run_standard_path",
    "standard_path_notes",
]

# Each evidence kind's title: the record keeps the English, the commands say it translated.
TITLES: dict[str, str] = {
    "raci": N_("Ownership per option (RACI)"),
    "standard_path": N_("Standard path fit and control (R4, R5)"),
    "isolation": N_("Isolation boundaries and threat model"),
    "residency": N_("Data residency per option"),
    "secrets": N_("Credentials in logs and configs"),
}


@dataclass
class CheckRun:
    """One check's record, findings and written files."""

    record: ev.Evidence
    findings: list[Finding]
    written: Path | None = None
    extra: dict[str, Path] = field(default_factory=dict)

    @property
    def stopped(self) -> bool:
        """Whether a finding stops an option."""
        return any(f.stop for f in self.findings)


def _summary(findings: list[Finding], options: int, unchecked: int = 0) -> Message:
    """The record's summary as a message (its English is the record's `summary`); options
    with nothing answered are counted apart: they are not checked."""
    stops = sum(1 for f in findings if f.stop)
    if unchecked:
        return message(
            "governance",
            "options checked: {c} of {o} ({u} not checked); findings: {n}; stop factors: {s}",
            c=options - unchecked,
            o=options,
            u=unchecked,
            n=len(findings),
            s=stops,
        )
    return message(
        "governance",
        "options checked: {o}; findings: {n}; stop factors: {s}",
        n=len(findings),
        o=options,
        s=stops,
    )


def _record(
    kind: str,
    spec_ids: list[str],
    findings: list[Finding],
    figures: Figure,
    inputs: list[ev.InputRef],
    options: int,
    notes: list[Message] | None = None,
    unchecked: int = 0,
) -> ev.Evidence:
    """The record of one check: its figures as JSON, the summary and notes beside them."""
    said = record_texts(_summary(findings, options, unchecked), notes or [])
    return ev.Evidence(
        kind=kind,
        title=TITLES[kind],
        spec_ids=spec_ids,
        verdict=verdict_of(findings),
        summary=said.summary,
        figures={**figures.model_dump(mode="json"), "messages": said.messages},
        notes=said.notes,
        inputs=inputs,
    )


def raci_notes(figures: raci.RaciFigures) -> list[Message]:
    """What is not checked in a RACI table, option by option (issue: unanswered rows are
    "not checked", never a stop factor)."""
    out: list[Message] = []
    for row in figures.options:
        if not row.answered:
            out.append(
                message(
                    "governance",
                    "{option}: not checked: no activity of raci.yaml is answered for it",
                    option=row.option,
                )
            )
        elif row.not_checked:
            out.append(
                nmessage(
                    "governance",
                    "{option}: {n} activity not checked ({activities})",
                    "{option}: {n} activities not checked ({activities})",
                    option=row.option,
                    n=len(row.not_checked),
                    activities=", ".join(row.not_checked),
                )
            )
    return out


def standard_path_notes(figures: standard_path.StandardPathFigures) -> list[Message]:
    """The needs and controls an option's answer leaves unstated (not checked)."""
    return [
        nmessage(
            "governance",
            "{option}: {n} answer not checked ({items})",
            "{option}: {n} answers not checked ({items})",
            option=row.option,
            n=len(row.not_checked),
            items=", ".join(row.not_checked),
        )
        for row in figures.options
        if row.answered and row.not_checked
    ]


def isolation_notes(figures: isolation.IsolationFigures) -> list[Message]:
    """What is not checked in isolation.yaml and which adversaries are not applied to which
    option, with the reason (the team's words, or the option's kind)."""
    out: list[Message] = []
    for row in figures.options:
        if not row.answered:
            out.append(
                message(
                    "governance",
                    "{option}: not checked: nothing is answered for it in isolation.yaml",
                    option=row.option,
                )
            )
        elif row.not_checked:
            out.append(
                nmessage(
                    "governance",
                    "{option}: {n} answer not checked ({items})",
                    "{option}: {n} answers not checked ({items})",
                    option=row.option,
                    n=len(row.not_checked),
                    items=", ".join(row.not_checked),
                )
            )
        for absent in row.not_applied:
            reason: Message | str = (
                message("governance", absent.reason) if absent.source == "kind" else absent.reason
            )
            out.append(
                message(
                    "governance",
                    "{option}: adversary {adversary} not applied: {reason}",
                    option=row.option,
                    adversary=absent.adversary,
                    reason=reason,
                )
            )
    return out


def _shown(findings: list[Finding]) -> list[Finding]:
    """The findings as a person may see them: no credential the team pasted into an input
    reaches the command's output (the record is masked by the evidence writer)."""
    return [type(f).model_validate(redact_all(f.model_dump())) for f in findings]


def _as_written(record: ev.Evidence, path: Path | None) -> ev.Evidence:
    """The record as it was written (masked and sealed), or masked the same way when it is
    not written (a scan outside a workspace)."""
    if path is not None:
        return ev.load(path)
    return record.model_copy(
        update={
            "summary": redact(record.summary),
            "notes": [redact(n) for n in record.notes],
            "figures": redact_all(record.figures),
        }
    )


def _write(ws: Workspace, record: ev.Evidence, findings: list[Finding]) -> CheckRun:
    written = ev.write(record, ws.evidence_dir)
    return CheckRun(_as_written(record, written), _shown(findings), written)


def _input(ws: Workspace, name: str, given: Path | None) -> Path:
    """The input file of a check: `--file`, else the workspace's own. A folder, a FIFO or a
    device is refused before anything reads it (it would hang or never end)."""
    path = given or ws.root / name
    if path.is_file():
        return path
    field = "--file" if given is not None else None
    if path.exists():
        raise InputError(
            "not a regular file",
            path=path,
            field=field,
            hint="give the {name} file itself",
            name=name,
        )
    if given is not None:
        raise InputError(
            "no such file",
            path=path,
            field=field,
            hint="check the --file path, or leave --file out to read the workspace's {name}",
            name=name,
        )
    raise InputError(
        "no {name} in the workspace",
        path=path,
        hint="`gpudecide init` writes a commented template of it",
        name=name,
    )


def oscal_path(evidence_dir: Path, record_id: str) -> Path:
    """Where the OSCAL export of an isolation record goes: a subfolder, so that the
    evidence folder's own *.json stay records only."""
    return evidence_dir / "oscal" / f"{record_id}.json"


def run_raci(ws: Workspace, path: Path | None = None) -> CheckRun:
    """Check ownership per option (R1-R3, G3, D5) and write the `raci` record."""
    src = _input(ws, raci.RACI_NAME, path)
    table, _loaded = raci.load_raci(src, ws.config.options)
    result = raci.check(table, ws.config.options)
    record = _record(
        "raci",
        ["R1", "R2", "R3", "G3", "D5", "A8"],
        result.findings,
        result.figures,
        [ev.input_ref(src, ws.root)],
        len(ws.config.options),
        raci_notes(result.figures),
        sum(1 for row in result.figures.options if not row.answered),
    )
    return _write(ws, record, result.findings)


def run_standard_path(ws: Workspace, path: Path | None = None) -> CheckRun:
    """Check the standard-path fit and R5 control per option; write `standard_path`."""
    src = _input(ws, raci.RACI_NAME, path)
    table, loaded = raci.load_raci(src, ws.config.options)
    if table.standard_path is None:
        raise InputError(
            "no `standard_path` section",
            path=src,
            field="standard_path",
            hint="see the template's commented standard_path section",
        )
    for i, entry in enumerate(table.standard_path.options):
        loaded.require_option(
            entry.option, ws.config.options, ("standard_path", "options", i, "option")
        )
    findings, figures = standard_path.check(table.standard_path, ws.config.options)
    record = _record(
        "standard_path",
        ["R4", "R5", "D2"],
        findings,
        figures,
        [ev.input_ref(src, ws.root)],
        len(ws.config.options),
        standard_path_notes(figures),
        sum(1 for row in figures.options if not row.answered),
    )
    return _write(ws, record, findings)


def run_isolation(ws: Workspace, path: Path | None = None, now: datetime | None = None) -> CheckRun:
    """Check the threat model and boundaries (I1-I6); write `isolation` and its OSCAL export."""
    from gpudecide.governance import isolation, oscal

    src = _input(ws, isolation.ISOLATION_NAME, path)
    iso, _loaded = isolation.load_isolation(src, ws.config.options, ws.root)
    result = isolation.check(iso, ws.config.options, ws.root)
    inputs = [ev.input_ref(p, ws.root) for p in (src, *result.documents)]
    record = _record(
        "isolation",
        ["I1", "I2", "I3", "I4", "I5", "I6"],
        result.findings,
        result.figures,
        inputs,
        len(ws.config.options),
        isolation_notes(result.figures),
        sum(1 for row in result.figures.options if not row.answered),
    )
    sealed = ev.seal(record, now)
    written = ev.write(sealed, ws.evidence_dir)
    stored = _as_written(sealed, written)
    at = datetime.strptime(stored.created_at_utc, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    doc = oscal_path(ws.evidence_dir, stored.id)
    oscal.write(result.figures, at.isoformat(), ev.input_ref(src, ws.root).path, doc)
    return CheckRun(stored, _shown(result.findings), written, {"oscal": doc})


def run_residency(ws: Workspace, isolation_path: Path | None = None) -> CheckRun:
    """Compare every option's sites with matrix.residency (I7); write `residency`."""
    from gpudecide.governance import isolation, residency

    config = ws.root / CONFIG_NAME
    inputs = [ev.input_ref(config, ws.root)]
    placement: dict[tuple[str, str], list[str]] = {}
    iso_src = isolation_path or ws.root / isolation.ISOLATION_NAME
    if iso_src.is_file():
        iso, _loaded = isolation.load_isolation(iso_src, ws.config.options, ws.root)
        placement = isolation.placements(iso)
        if placement:
            inputs.append(ev.input_ref(iso_src, ws.root))
    result = residency.check(ws.config.matrix.residency, ws.config.options, placement)
    record = _record(
        "residency",
        ["I7", "D5", "H2"],
        result.findings,
        result.figures,
        inputs,
        len(ws.config.options),
        result.note_messages,
    )
    if not ws.config.matrix.residency:
        record.verdict = "info"
    return _write(ws, record, result.findings)


def run_secrets(
    paths: list[Path],
    ws: Workspace | None = None,
    option: str = "",
    evidence_dir: Path | None = None,
) -> CheckRun:
    """Scan logs and configs for credentials (I3); write `secrets` when there is somewhere to."""
    from gpudecide.governance import secrets

    if option and ws is not None:
        require_known(option, ws.config.options, path=ws.root / CONFIG_NAME, field="--option")
    root = ws.root if ws is not None else None
    result = secrets.scan(paths, root=root, option=option)
    inputs = [ev.input_ref(p, root) for p in result.files]
    said = record_texts(
        message(
            "governance",
            "files scanned: {f}; credentials found: {n} (values masked)",
            n=len(result.findings),
            f=len(result.files),
        )
    )
    record = ev.Evidence(
        kind="secrets",
        title=TITLES["secrets"],
        spec_ids=["I3"],
        verdict="fail" if result.findings else "pass",
        summary=said.summary,
        figures={**result.figures.model_dump(mode="json"), "messages": said.messages},
        notes=said.notes,
        inputs=inputs,
    )
    out_dir = evidence_dir or (ws.evidence_dir if ws is not None else None)
    written = ev.write(record, out_dir) if out_dir is not None else None
    return CheckRun(_as_written(record, written), _shown(result.findings), written)
