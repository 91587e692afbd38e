"""One finding of a governance check: which option, whether it stops it, what was found; and
the typed parts every governance record's figures share.

A finding is kept in the evidence record as plain data: its stable `id`, the option id,
`stop` (a stop factor for that option, SPEC D5), the SPEC id it rests on, the parameters of
its message and the English text. The report re-words it in the reader's language from `id`
and `params` (`messages.render`).

Each check's figures are a pydantic model beside its producer (`raci.RaciFigures`, ...),
built on `Figure`: `model_dump(mode="json")` is the JSON the record holds, field for field.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from gpudecide.evidence import Verdict
from gpudecide.figure_model import FigureModel
from gpudecide.governance import messages

__all__ = ["Figure", "Finding", "Params", "RecordMessages", "finding", "verdict_of"]

Params = dict[str, Any]


class Figure(FigureModel):
    """A part of a governance record's figures. A field named in `OMIT_NONE` is left out of
    the JSON while it is None (the record never held it then: a proof without a document, a
    scan without an option)."""


class Finding(Figure):
    """Something a check found about one option."""

    model_config = ConfigDict(frozen=True)

    id: str
    option: str
    stop: bool
    spec: str
    text: str
    params: Params = Field(default_factory=dict)


class RecordMessages(Figure):
    """`figures["messages"]`: the record's summary and notes as messages (`gpudecide.message`),
    one per note, so that a reader hears them in their own language."""

    summary: dict[str, Any]
    notes: list[dict[str, Any]] = Field(default_factory=list)


def finding(fid: str, option: str, stop: bool, spec: str, **params: Any) -> Finding:
    """A finding with its English text (`messages`), as every check makes one."""
    return Finding(
        id=fid,
        option=option,
        stop=stop,
        spec=spec,
        text=messages.english_text(fid, params),
        params=params,
    )


def verdict_of(findings: list[Finding]) -> Verdict:
    """fail when any finding stops an option, warn when any other is left, else pass."""
    if any(f.stop for f in findings):
        return "fail"
    return "warn" if findings else "pass"
