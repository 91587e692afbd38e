"""Which contour a piece of evidence exercised, and whether that is the option's own
(SPEC E1, E3, G1, Q1; DESIGN: evidence is bound to the option it tested).

An export test run on a laptop, a drill on a local folder, a team's own re-run of a vendor's
plan: each shows the pipeline works somewhere, which is worth knowing, but it is a
**rehearsal** for the option, never its proof. "Если поставщик не позволяет провести такой
тест, вы еще не знаете цену выхода": only the option's own contour, as the option declares
it in gpudecide.yaml (`options[].contour`), verifies it.

A record states what it exercised in `figures["contour"]` (executor, cluster, context, host,
storage, and for an export test whether its artifacts were the vendor's own export); records
written before that field existed are read from the fields they always had (`executor`,
`storage`, `from_export`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from gpudecide import evidence as ev
from gpudecide.message import Message, message
from gpudecide.options import OptionDecl

__all__ = [
    "RUN_KINDS",
    "Exercised",
    "Grade",
    "exercised",
    "grade",
]

Grade = Literal["own", "rehearsal"]
# Evidence kinds whose contour matters (a run, or a log read from a scheduler); the others
# describe the option's documents (governance, cost) and are its own by naming it.
RUN_KINDS = ("export_test", "drill", "queue")


@dataclass(frozen=True)
class Exercised:
    """What a record says it ran on."""

    executor: str | None
    cluster: str = ""
    context: str = ""
    host: str = ""
    storage: str = ""
    # export tests: "vendor_export" (the vendor's own export, `--from-export`) or
    # "produced_here" (trained and exported by gpudecide itself).
    artifacts: str | None = None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def exercised(record: ev.Evidence) -> Exercised:
    """The contour a record exercised, from its own statement or its older fields."""
    f = record.figures
    stated = f.get("contour")
    if isinstance(stated, dict):
        return Exercised(
            executor=_text(stated.get("executor")) or None,
            cluster=_text(stated.get("cluster")),
            context=_text(stated.get("context")),
            host=_text(stated.get("host")),
            storage=_text(stated.get("storage")),
            artifacts=_text(stated.get("artifacts")) or None,
        )
    artifacts = None
    if record.kind == "export_test":
        artifacts = "vendor_export" if f.get("from_export") else "produced_here"
    return Exercised(
        executor=_text(f.get("executor")) or None,
        storage=_text(f.get("storage")),
        artifacts=artifacts,
    )


def _differs(field: str, declared: str, found: str) -> Message | None:
    if declared and found != declared:
        return message(
            "decision",
            "ran with {field} {found}, the option's is {declared}",
            field=field,
            found=found or "-",
            declared=declared,
        )
    return None


def grade(record: ev.Evidence, option: OptionDecl) -> tuple[Grade, Message | None]:
    """`own` when the record exercised the option's declared contour, else `rehearsal` and
    why. Records of the option's documents and logs are its own when they name it."""
    if record.kind not in RUN_KINDS:
        return "own", None
    ran = exercised(record)
    declared = option.contour.declared(option.kind)
    if declared is None:
        return "rehearsal", message(
            "decision",
            "the option declares no contour (options[].contour in gpudecide.yaml): "
            "nothing run can be its own",
        )
    if declared == "vendor":
        if record.kind == "export_test" and ran.artifacts == "vendor_export":
            return "own", None
        if ran.executor == "vendor":
            return "own", None
        return "rehearsal", message(
            "decision",
            "ran on {executor}, not on the vendor's endpoint: the vendor's own export "
            "(--from-export) or a job of the vendor is needed",
            executor=ran.executor or "-",
        )
    if ran.executor != declared:
        return "rehearsal", message(
            "decision",
            "ran on {executor}, the option runs on {declared}",
            executor=ran.executor or "-",
            declared=declared,
        )
    c = option.contour
    why = (
        _differs("cluster", c.cluster, ran.cluster)
        or _differs("context", c.context, ran.context)
        or _differs("host", c.host, ran.host)
    )
    if why is None and c.storage and not ran.storage.startswith(c.storage):
        why = message(
            "decision",
            "its checkpoints went to {found}, not the option's storage {declared}",
            found=ran.storage or "-",
            declared=c.storage,
        )
    return ("rehearsal", why) if why is not None else ("own", None)
