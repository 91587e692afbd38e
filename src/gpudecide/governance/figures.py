"""The figures of every governance record as their typed model, for readers in any package.

    figures_of(record)   raci -> RaciFigures, standard_path -> StandardPathFigures,
                         isolation -> IsolationFigures, residency -> ResidencyFigures,
                         secrets -> SecretsFigures

Each model lives beside the check that produces it; `model_dump(mode="json")` of the model is
the record's `figures`, field for field.
"""

from __future__ import annotations

from gpudecide import evidence as ev
from gpudecide.governance.isolation import IsolationFigures
from gpudecide.governance.raci import RaciFigures
from gpudecide.governance.residency import ResidencyFigures
from gpudecide.governance.secrets import SecretsFigures
from gpudecide.governance.standard_path import StandardPathFigures

__all__ = [
    "FIGURES",
    "GovernanceFigures",
    "IsolationFigures",
    "RaciFigures",
    "ResidencyFigures",
    "SecretsFigures",
    "StandardPathFigures",
    "figures_of",
]

GovernanceFigures = (
    RaciFigures | StandardPathFigures | IsolationFigures | ResidencyFigures | SecretsFigures
)

FIGURES: dict[str, type[GovernanceFigures]] = {
    "raci": RaciFigures,
    "standard_path": StandardPathFigures,
    "isolation": IsolationFigures,
    "residency": ResidencyFigures,
    "secrets": SecretsFigures,
}


def figures_of(record: ev.Evidence) -> GovernanceFigures:
    """The record's figures as the model of its kind.

    A record of another kind is a LookupError; figures of another shape (an edited or older
    record) are pydantic's ValidationError (a ValueError), naming the field.
    """
    model = FIGURES.get(record.kind)
    if model is None:
        raise LookupError(f"{record.kind!r} is not a governance record ({', '.join(FIGURES)})")
    return model.model_validate(record.figures)
