"""What every decision rule may read besides its record: the options, the team's settings,
and the records the decision stands on.

A record stands for its **check**: its kind, the option it names, and what it checked (a
drill's scenario, a replay's window). A newer record of another check never replaces it:
after a node-loss drill that restarted from zero, a checkpoint-corrupt drill says nothing
about node loss, and the stop factor stays. Of the records of one check, the newest on the
option's own contour stands (`decision.contour`); only when there is none does the newest
rehearsal stand, shown as one. So a failure on the option's own contour is cleared only by
the same check passing there, never by a re-run elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from gpudecide import evidence as ev
from gpudecide.decision.contour import Grade, grade
from gpudecide.matrix_config import MatrixConfig
from gpudecide.message import Message
from gpudecide.options import OptionDecl

__all__ = ["Check", "RuleContext", "check_of", "standing", "typed"]

_T = TypeVar("_T")

# kind, option (None: not about one option), what it checked (None: the kind is one check)
Check = tuple[str, str | None, str | None]


def typed(record: ev.Evidence | None, read: Callable[[ev.Evidence], _T]) -> _T | None:
    """The record's figures as the model of its kind (`read`: the producing package's
    `figures_of`); None without a record, or for figures that model cannot read (a
    hand-written record, or one of an older shape), which the decision then reads as a
    record without those figures, as it reads one that lacks a key."""
    if record is None:
        return None
    try:
        return read(record)
    except (LookupError, ValueError):  # pydantic's ValidationError is a ValueError
        return None


def check_of(record: ev.Evidence) -> Check:
    """The check a record stands for."""
    kind, option = ev.subject(record)
    f = record.figures
    what: object = None
    if kind == "drill":
        what = f.get("drill")
    elif kind == "replay":
        window = f.get("window")
        what = window.get("kind") if isinstance(window, dict) else None
    return kind, option, what if isinstance(what, str) and what else None


def standing(records: Iterable[ev.Evidence], options: list[OptionDecl]) -> dict[Check, ev.Evidence]:
    """Per check, the record the decision stands on (records given oldest first; the
    decision's own records left out)."""
    by_id = {o.id: o for o in options}
    groups: dict[Check, list[ev.Evidence]] = {}
    for record in records:
        if record.kind != "decision":
            groups.setdefault(check_of(record), []).append(record)
    out: dict[Check, ev.Evidence] = {}
    for key, found in groups.items():
        decl = by_id.get(key[1] or "")
        own = [r for r in found if decl is not None and grade(r, decl)[0] == "own"]
        out[key] = own[-1] if own else found[-1]
    return out


@dataclass
class RuleContext:
    """The declared options, the matrix settings, and the standing records: by check, and
    the newest of every kind (for analyses of the whole workload: profile, cost)."""

    options: list[OptionDecl]
    matrix: MatrixConfig = field(default_factory=MatrixConfig)
    checks: dict[Check, ev.Evidence] = field(default_factory=dict)

    @property
    def newest(self) -> dict[str, ev.Evidence]:
        """The standing record of every kind, newest last (whole-workload analyses)."""
        out: dict[str, ev.Evidence] = {}
        for record in sorted(self.checks.values(), key=lambda r: (r.created_at_utc, r.id)):
            out[record.kind] = record
        return out

    def of(self, kind: str, option: str, what: str | None = None) -> ev.Evidence | None:
        """The standing record of `kind` about `option` (and of one check: a drill's
        scenario); without `what`, the newest of the option's checks of that kind."""
        if what is not None:
            return self.checks.get((kind, option, what))
        found = [r for (k, o, _w), r in self.checks.items() if k == kind and o == option]
        return max(found, key=lambda r: (r.created_at_utc, r.id)) if found else None

    def workload(self, kind: str) -> ev.Evidence | None:
        """The standing record of `kind` about the team's whole workload (no option named),
        else the newest of that kind."""
        return self.checks.get((kind, None, None)) or self.newest.get(kind)

    def all_of(self, kind: str, option: str) -> list[ev.Evidence]:
        """Every standing record of `kind` about `option` (one per check)."""
        return [r for (k, o, _w), r in self.checks.items() if k == kind and o == option]

    def grade(self, record: ev.Evidence) -> tuple[Grade, Message | None]:
        """Whether the record exercised the contour of the option it names."""
        decl = self.option(ev.subject(record)[1] or "")
        return ("own", None) if decl is None else grade(record, decl)

    def ids(self, *kinds: str) -> list[str]:
        """Ids of the declared options of these kinds (all when none given)."""
        return [o.id for o in self.options if not kinds or o.kind in kinds]

    def option(self, option_id: str) -> OptionDecl | None:
        """The declared option with this id."""
        return next((o for o in self.options if o.id == option_id), None)

    def pool_gpus(self, option_id: str) -> int | None:
        """GPUs of a dedicated option's pool, as the cost evidence priced it."""
        cost = self.newest.get("cost")
        if cost is None:
            return None
        for o in cost.figures.get("options", []):
            if o.get("id") == option_id and o.get("peak_check"):
                gpus = o["peak_check"].get("pool_gpus")
                return int(gpus) if gpus is not None else None
        return None
