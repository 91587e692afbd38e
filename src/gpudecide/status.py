"""Where a workspace stands (issue 27): which inputs are filled, which are still the template
or missing, the evidence on record and whether it is still true, and what the decision
lacks most, each with the file or command that settles it.

Nothing is written: the decision is assessed as `assess --allow-stale` would, and only its
status, its leader and its next actions (ranked as the decision ranks them: stop factors and
must-prove items of the leader first, then the assumptions that can change the winner) are
reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from gpudecide import evidence as ev
from gpudecide import ledger
from gpudecide import workspace as wsmod
from gpudecide.errors import InputError
from gpudecide.fsutil import open_regular
from gpudecide.message import english
from gpudecide.textlines import split_lines

__all__ = [
    "WORKFLOW",
    "InputState",
    "Status",
    "workspace_status",
]

InputState = Literal["filled", "to_fill", "template", "missing"]
# The analyses in the order a team runs them, each with its command: a kind with no record
# on file is the first thing to do, before any score can rest on evidence.
WORKFLOW = (
    ("profile", "gpudecide profile"),
    ("queue", "gpudecide queue"),
    ("replay", "gpudecide replay"),
    ("cost", "gpudecide cost"),
    ("raci", "gpudecide check raci"),
    ("isolation", "gpudecide check isolation"),
    ("residency", "gpudecide check residency"),
    ("audit", "gpudecide audit EXPORT_DIR --option ID"),
    ("export_test", "gpudecide export-test"),
    ("drill", "gpudecide drill all"),
)
# A line of a template the team has still to replace names a "placeholder".
_PLACEHOLDER = "placeholder"
_MAX_INPUT = 4 << 20


@dataclass
class Status:
    """What `gpudecide status` shows."""

    inputs: list[dict[str, Any]] = field(default_factory=list)
    logs: list[dict[str, Any]] = field(default_factory=list)
    evidence: dict[str, int] = field(default_factory=dict)
    decision: str | None = None
    leading: str | None = None
    next_actions: list[dict[str, Any]] = field(default_factory=list)
    # Analyses with no record yet, as (kind, command), in the order they are run.
    not_run: list[tuple[str, str]] = field(default_factory=list)
    # Why the decision could not be assessed (an input error), when it could not.
    blocked: InputError | None = None

    def as_dict(self) -> dict[str, Any]:
        """Machine form (`status --json`): messages in English."""
        return {
            "inputs": self.inputs,
            "logs": self.logs,
            "evidence": self.evidence,
            "not_run": [{"kind": k, "command": c} for k, c in self.not_run],
            "decision": self.decision,
            "leading": self.leading,
            "next_actions": [{**a, "settles": english(a["settles"])} for a in self.next_actions],
            "blocked": self.blocked.message if self.blocked else None,
        }


def _text(path: Any) -> str | None:
    try:
        with open_regular(path) as handle:
            return handle.read(_MAX_INPUT).decode("utf-8", errors="replace")
    except (InputError, OSError):
        return None


def _inputs(ws: wsmod.Workspace) -> list[dict[str, Any]]:
    rows = []
    for rel, template in sorted(wsmod.template_files().items()):
        if not rel.endswith(".yaml"):
            continue
        text = _text(ws.root / rel)
        state: InputState
        left = 0
        if text is not None:
            left = sum(
                1
                for line in split_lines(text)
                if _PLACEHOLDER in line and not line.lstrip().startswith("#")
            )
        if text is None:
            state = "missing"
        elif text == template:
            state = "template"
        else:
            state = "to_fill" if left else "filled"
        rows.append({"file": rel, "state": state, "placeholders": left})
    return rows


def _logs(ws: wsmod.Workspace) -> list[dict[str, Any]]:
    return [
        {
            "setting": f"logs.{i}.path",
            "path": src.path,
            "present": (ws.root / src.path).exists(),
            "option": src.option,
        }
        for i, src in enumerate(ws.config.logs)
    ]


def workspace_status(ws: wsmod.Workspace, *, actions: int = 8) -> Status:
    """The workspace's inputs, evidence and the decision's first `actions` next steps."""
    status = Status(inputs=_inputs(ws), logs=_logs(ws))
    snapshot = ev.Snapshot(ws.root)  # the listing and the decision read each input once
    records, damaged = snapshot.scan(ws.evidence_dir)
    rows = ledger.ledger_rows(records, damaged, ws.root, ws.config.options, snapshot)
    for row in rows:
        status.evidence[row["freshness"]] = status.evidence.get(row["freshness"], 0) + 1
    kinds = {r.kind for r in records}
    status.not_run = [(kind, command) for kind, command in WORKFLOW if kind not in kinds]
    from gpudecide.decision.assess import assess  # the decision only when it is asked for

    try:
        result = assess(ws, records, allow_stale=True, snapshot=snapshot)
    except InputError as exc:
        status.blocked = exc
        return status
    status.decision = result.status
    status.leading = result.recommended or result.leading
    status.next_actions = [
        {"command": a.command, "option": a.option, "settles": a.settles}
        for a in result.next_actions[:actions]
    ]
    return status
