"""The weighted matrix (SPEC D3, D4): every score with its source, totals, ranks.

A cell's source is, in order of precedence:
- `override`: the team's score with a written justification (the suggestion stays beside it);
- `document`: an external document (file, SHA-256, excerpt) the score rests on;
- `evidence`: the lowest score the evidence rules suggest (the most cautious reading), with
  every rule and evidence id that contributed;
- `rehearsal`: the evidence behind it ran on another contour than the option's own
  (`decision.contour`): the score is shown, but it is no more settled than an assumption;
- `assumption`: nothing above. Scored 3 (the middle), shown as an assumption everywhere.

Assumed and rehearsed scores are each anywhere in 1..5 until settled (`decision.bounds`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from gpudecide.errors import InputError
from gpudecide.findings import Suggestion
from gpudecide.fsutil import sha256_path
from gpudecide.matrix_config import MatrixConfig
from gpudecide.message import message

__all__ = [
    "ASSUMED_SCORE",
    "NO_EVIDENCE",
    "TIE",
    "Cell",
    "Source",
    "build_cells",
    "evidence_cell",
    "ranking",
    "weighted_totals",
]


Source = Literal["evidence", "rehearsal", "override", "document", "assumption"]
ASSUMED_SCORE = 3
NO_EVIDENCE = "no evidence yet"
_NO_EVIDENCE: list[dict[str, object]] = [
    {"text": NO_EVIDENCE, "message": message("decision", "no evidence yet")}
]
# Totals closer than this are a tie: scores are integers and weights small integers, so two
# different weighted means differ by far more.
TIE = 1e-9


@dataclass
class Cell:
    """One option's score on one criterion, and where it comes from."""

    score: int
    source: Source
    evidence: list[str] = field(default_factory=list)
    rule: str = ""
    justification: str = ""
    suggested: int | None = None
    document: dict[str, str] | None = None
    # Each rule behind the score: its English text and its message (None: English only),
    # so that the report says `rule` in the reader's language part by part.
    rule_parts: list[dict[str, object]] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        """Machine form (assess --json, the decision record)."""
        return {
            "score": self.score,
            "source": self.source,
            "evidence": self.evidence,
            "rule": self.rule,
            "justification": self.justification,
            "suggested": self.suggested,
            "document": self.document,
            "rule_parts": self.rule_parts,
        }


def evidence_cell(suggestions: list[Suggestion], rehearsals: frozenset[str] = frozenset()) -> Cell:
    """The cell the evidence suggests: the lowest score, with every rule behind it; a
    rehearsal when a rule behind it rests on a rehearsal (`rehearsals`: record ids)."""
    score = min(s.score for s in suggestions)
    ids = sorted({i for s in suggestions for i in s.evidence})
    source: Source = "rehearsal" if rehearsals & set(ids) else "evidence"
    parts: dict[str, object] = {}
    for s in sorted(suggestions, key=lambda s: s.score):
        parts.setdefault(s.rule, s.rule_message)
    rule_parts: list[dict[str, object]] = [{"text": t, "message": m} for t, m in parts.items()]
    return Cell(score, source, ids, "; ".join(parts), suggested=score, rule_parts=rule_parts)


def build_cells(
    options: list[str],
    config: MatrixConfig,
    suggestions: list[Suggestion],
    root: Path,
    rehearsals: dict[str, frozenset[str]] | None = None,
) -> dict[str, dict[str, Cell]]:
    """option -> criterion -> cell, for every compared option and every criterion
    (`rehearsals`: per option, the ids of records that were rehearsals for it)."""
    rehearsals = rehearsals or {}
    criteria = [c.id for c in config.criteria]
    by_cell: dict[tuple[str, str], list[Suggestion]] = {}
    for s in suggestions:
        by_cell.setdefault((s.option, s.criterion), []).append(s)
    cells: dict[str, dict[str, Cell]] = {}
    for option in options:
        row: dict[str, Cell] = {}
        for criterion in criteria:
            found = by_cell.get((option, criterion))
            row[criterion] = (
                evidence_cell(found, rehearsals.get(option, frozenset()))
                if found
                else Cell(ASSUMED_SCORE, "assumption", rule=NO_EVIDENCE, rule_parts=_NO_EVIDENCE)
            )
        cells[option] = row
    for i, entry in enumerate(config.scores):
        if entry.option not in cells or entry.criterion not in criteria:
            continue
        before = cells[entry.option][entry.criterion]
        cell = Cell(
            entry.score,
            entry.source,
            list(before.evidence),
            before.rule,
            entry.justification,
            suggested=before.suggested,
            rule_parts=before.rule_parts,
        )
        if entry.source == "document":
            cell.document = _document(root, entry.document, entry.excerpt, i)
        cells[entry.option][entry.criterion] = cell
    return cells


def _document(root: Path, rel: str | None, excerpt: str | None, index: int) -> dict[str, str]:
    field_name = f"matrix.scores.{index}.document"
    if not rel:
        raise InputError(
            "a score from a document names the document",
            path=root / "gpudecide.yaml",
            field=field_name,
            hint="give the file, relative to the workspace",
        )
    path = root / rel
    if not path.is_file():
        raise InputError("no such document", path=path, field=field_name)
    digest, _size = sha256_path(path)
    return {"path": rel, "sha256": digest, "excerpt": excerpt or ""}


def weighted_totals(cells: dict[str, dict[str, Cell]], weights: dict[str, int]) -> dict[str, float]:
    """Weighted mean score per option, normalised to 0..100 (1 -> 0, 5 -> 100)."""
    total_weight = sum(weights.values())
    out: dict[str, float] = {}
    for option, row in cells.items():
        mean = sum(weights[c] * row[c].score for c in weights) / total_weight
        out[option] = round((mean - 1) / 4 * 100, 6)
    return out


def ranking(totals: dict[str, float]) -> list[list[str]]:
    """Options from best to worst, ties grouped (each group in id order)."""
    groups: list[list[str]] = []
    for option in sorted(totals, key=lambda o: (-totals[o], o)):
        if groups and abs(totals[groups[-1][0]] - totals[option]) <= TIE:
            groups[-1].append(option)
        else:
            groups.append([option])
    return groups
