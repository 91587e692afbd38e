"""Whether the records a decision would stand on are still true (SPEC D4; DESIGN: evidence
record).

The decision never rests on a record that no longer describes its inputs: one whose input
changed or is gone (stale, missing input, bad input), one edited after it was written
(tampered), or one that cites a record a newer one of the same check replaced (the cost
computed from the peak-window replay after the replay was re-run). Each refused record is
named with the command that refreshes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpudecide import evidence as ev
from gpudecide.decision.context import Check, check_of
from gpudecide.i18n import N_
from gpudecide.message import Message, english, message

__all__ = [
    "REFRESH",
    "STATE_WORDS",
    "Unfit",
    "refresh_command",
    "unfit",
]

# The command that writes each kind of record again ({option}: the option it names).
REFRESH = {
    "profile": "gpudecide profile",
    "queue": "gpudecide queue",
    "replay": "gpudecide replay",
    "cost": "gpudecide cost",
    "audit": "gpudecide audit EXPORT_DIR --option {option}",
    "export_test": "gpudecide export-test --option {option}",
    "drill": "gpudecide drill {check} --option {option}",
    "cordon": "gpudecide cordon TELEMETRY --option {option}",
    "raci": "gpudecide check raci",
    "isolation": "gpudecide check isolation",
    "residency": "gpudecide check residency",
    "standard_path": "gpudecide check standard-path",
    "secrets": "gpudecide check secrets",
    "hybrid": "gpudecide check hybrid",
}


# The freshness states, as words inside a sentence.
STATE_WORDS = {
    "stale": N_("stale"),
    "missing_input": N_("an input is gone"),
    "bad_input": N_("an input cannot be read"),
    "tampered": N_("tampered"),
}


def refresh_command(check: Check) -> str:
    """The command that writes the record of `check` again."""
    kind, option, what = check
    return REFRESH.get(kind, f"gpudecide {kind}").format(option=option or "", check=what or "")


@dataclass
class Unfit:
    """A standing record the decision may not rest on, and why."""

    id: str
    kind: str
    option: str | None
    state: str
    problems: list[str]
    why: Message
    command: str

    def as_dict(self) -> dict[str, Any]:
        """Machine form (the error of `assess --json`, the provisional decision's record)."""
        return {
            "id": self.id,
            "kind": self.kind,
            "option": self.option,
            "state": self.state,
            "problems": self.problems,
            "why": self.why,
            "command": self.command,
        }


def _inconsistent(
    record: ev.Evidence,
    standing: dict[Check, ev.Evidence],
    now_standing: dict[str, str],
) -> list[Message]:
    """What `record` cites that is no longer the standing set: a cited record a newer one of
    the same check replaced, or a standing record of a cited kind it leaves out (the cost
    priced the peak-window replay; a full-window replay was run after it)."""
    out: list[Message] = []
    cited = {ref.record_id: ref.path for ref in record.inputs if ref.record_id is not None}
    standing_ids = {r.id for r in standing.values()}
    for rid, path in cited.items():
        if rid not in standing_ids:
            newer = now_standing.get(rid)
            out.append(
                message("decision", "{path}: superseded by {newer}", path=path, newer=newer)
                if newer
                else message("decision", "{path}: superseded", path=path)
            )
    kinds = {rid.rsplit("-", 1)[0] for rid in cited if rid}
    option = ev.subject(record)[1]
    for (kind, about, _what), other in sorted(standing.items(), key=lambda kv: kv[1].id):
        if kind in kinds and about in (None, option) and other.id not in cited:
            out.append(
                message(
                    "decision",
                    "{record}: a standing {kind} record it does not cite",
                    record=other.id,
                    kind=kind,
                )
            )
    return out


def unfit(
    standing: dict[Check, ev.Evidence],
    everything: list[ev.Evidence],
    root: Path,
    snapshot: ev.Snapshot | None = None,
) -> list[Unfit]:
    """The standing records that are not fresh, or that cite another set of records than
    the one standing now (their inputs read once, in `snapshot` when given)."""
    snapshot = snapshot or ev.Snapshot(root)
    by_check = {key: r.id for key, r in standing.items()}
    now_standing = {r.id: by_check.get(check_of(r), "") for r in everything}
    out: list[Unfit] = []
    for key, record in sorted(standing.items(), key=lambda kv: kv[1].id):
        state, problems = snapshot.freshness(record)
        replaced = (
            _inconsistent(record, standing, now_standing) if state is ev.Freshness.FRESH else []
        )
        if state is ev.Freshness.FRESH and not replaced:
            continue
        if replaced:
            why = message(
                "decision",
                "{record} was computed from other records than those standing now",
                record=record.id,
            )
            label = "inconsistent"
        else:
            why = message(
                "decision",
                "{record} is {state}: {problems}",
                record=record.id,
                state=message("decision", STATE_WORDS.get(state.value, state.value)),
                problems=problems,
            )
            label = state.value
        out.append(
            Unfit(
                record.id,
                record.kind,
                key[1],
                label,
                [english(p) for p in problems + replaced],
                why,
                refresh_command(key),
            )
        )
    return out
