"""The decision matrix section of gpudecide.yaml: criteria, weights, the team's scores, hard
SLOs and residency requirements (SPEC D3, D4, I7). The workspace validates it; the decision
and the residency check read it."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from gpudecide.errors import InputError
from gpudecide.findings import CRITERIA
from gpudecide.inputs import in_workspace, node_line, yaml_root
from gpudecide.options import CountryCode, SiteRole, require_known

__all__ = [
    "Criterion",
    "MatrixConfig",
    "Residency",
    "ScoreEntry",
    "SloHardness",
    "document_path",
    "validate",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Criterion(_Strict):
    """One criterion of the matrix and its weight."""

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$", description="Criterion id.")
    weight: int = Field(strict=True, ge=1, le=5, description="Weight 1 (minor) .. 5 (decisive).")
    description: str = Field(default="", description="What a high score means.")


class ScoreEntry(_Strict):
    """The team's own score for one option and criterion: an override or a document."""

    option: str = Field(description="Option id (declared under `options`).")
    criterion: str = Field(description="Criterion id.")
    score: int = Field(strict=True, ge=1, le=5, description="Score 1 (bad) .. 5 (good).")
    source: Literal["override", "document"] = Field(
        description="override: the team's judgement; document: an external document."
    )
    justification: str = Field(min_length=1, description="Why this score (required).")
    document: str | None = Field(
        default=None, description="For `document`: file path relative to the workspace."
    )
    excerpt: str | None = Field(
        default=None, description="For `document`: the sentence the score rests on."
    )


class SloHardness(_Strict):
    """Which SLOs are hard: violated with a conclusive interval, they stop an option (D5)."""

    hard: list[str] = Field(default_factory=list, description="Names of hard SLOs.")


class Residency(_Strict):
    """A data-residency requirement (SPEC I7): where an asset must stay."""

    asset: str = Field(description="What must stay (e.g. personal data, training set).")
    countries: list[CountryCode] = Field(
        min_length=1, description="ISO 3166-1 alpha-2 codes where it may be stored/processed."
    )
    roles: list[SiteRole] = Field(
        default_factory=lambda: list(get_args(SiteRole)),
        description="Which uses of a site the requirement covers.",
    )
    basis: str = Field(default="", description="Law or policy, with article.")
    edition: str = Field(default="", description="Edition date of the text relied on.")


class MatrixConfig(_Strict):
    """The `matrix` section of gpudecide.yaml."""

    criteria: list[Criterion] = Field(
        default_factory=lambda: [Criterion(id=c, weight=3) for c in CRITERIA],
        min_length=1,
        description="Criteria and weights 1-5 (at least one).",
    )
    scores: list[ScoreEntry] = Field(
        default_factory=list, description="The team's overrides and document-based scores."
    )
    slo: SloHardness = Field(default_factory=SloHardness, description="Hard SLOs.")
    residency: list[Residency] = Field(
        default_factory=list, description="Data-residency requirements (I7)."
    )


def document_path(root: Path, entry: ScoreEntry) -> Path | None:
    """The document a score rests on, resolved against the workspace."""
    return root / entry.document if entry.document else None


def validate(matrix: MatrixConfig, option_ids: list[str], path: Path) -> None:
    """Criteria are unique and every score names a declared option and a criterion (D3)."""
    root = yaml_root(path)
    seen: set[str] = set()
    for i, c in enumerate(matrix.criteria):
        if c.id in seen:
            loc: tuple[int | str, ...] = ("matrix", "criteria", i, "id")
            raise InputError(
                "criterion {id!r} is listed twice",
                path=path,
                line=node_line(root, loc),
                field=f"matrix.criteria.{i}.id",
                id=c.id,
            )
        seen.add(c.id)
    scored: set[tuple[str, str]] = set()
    for i, entry in enumerate(matrix.scores):
        loc = ("matrix", "scores", i, "option")
        require_known(
            entry.option,
            set(option_ids),
            path=path,
            field=f"matrix.scores.{i}.option",
            line=node_line(root, loc),
        )
        if entry.criterion not in seen:
            loc = ("matrix", "scores", i, "criterion")
            raise InputError(
                "unknown criterion {criterion!r}",
                path=path,
                line=node_line(root, loc),
                field=f"matrix.scores.{i}.criterion",
                hint="one of: {known}",
                criterion=entry.criterion,
                known=", ".join(sorted(seen)),
            )
        if entry.source == "document" and not entry.document:
            raise InputError(
                "a score from a document names the document",
                path=path,
                line=node_line(root, ("matrix", "scores", i)),
                field=f"matrix.scores.{i}.document",
            )
        if entry.document:
            in_workspace(
                path.parent,
                entry.document,
                path=path,
                field=f"matrix.scores.{i}.document",
                line=node_line(root, ("matrix", "scores", i, "document")),
            )
        cell = (entry.option, entry.criterion)
        if cell in scored:
            raise InputError(
                "{option} is scored on {criterion} twice",
                path=path,
                line=node_line(root, ("matrix", "scores", i)),
                field=f"matrix.scores.{i}",
                hint="keep one score per option and criterion",
                option=entry.option,
                criterion=entry.criterion,
            )
        scored.add(cell)
