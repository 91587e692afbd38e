"""How far the scores nobody has settled can move the winner (SPEC D4).

An assumed score (no evidence) and a score from a rehearsal (evidence from another contour)
are each anywhere in 1..5 until settled. The winner stands on its evidence only if its
total with every such cell at 1 still beats every other option's total with every such
cell at 5. Otherwise the cells that can flip it are named, each with what would settle it:
the decision is provisional until they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpudecide.decision.matrix import TIE, Cell, weighted_totals

__all__ = ["UNSETTLED", "Bounds", "bounds"]

# Sources of a score that evidence on the option's own contour has not settled.
UNSETTLED = ("assumption", "rehearsal")


@dataclass
class Bounds:
    """The totals of the passing options with their unsettled cells at the extremes."""

    winner: str | None
    winner_worst: float | None
    best: dict[str, float]
    worst: dict[str, float]
    # Options whose best total reaches the winner's worst.
    contenders: list[str]
    # Unsettled cells that alone flip the winner: option, criterion, source, the extreme.
    flips: list[dict[str, Any]]
    # Per contender, the fewest unsettled cells (largest weight first) that together let it
    # reach the winner: the cells to settle first when none flips it alone.
    together: dict[str, list[dict[str, Any]]]

    @property
    def settled(self) -> bool:
        """Whether no unsettled cell can change the winner."""
        return self.winner is not None and not self.contenders

    def as_dict(self) -> dict[str, Any]:
        """Machine form."""
        return {
            "winner": self.winner,
            "winner_worst": self.winner_worst,
            "best": self.best,
            "worst": self.worst,
            "contenders": self.contenders,
            "flips": self.flips,
            "together": self.together,
            "settled": self.settled,
        }


def _at(cells: dict[str, Cell], score: int) -> dict[str, Cell]:
    """The row with every unsettled cell at `score`."""
    return {
        c: Cell(score, cell.source) if cell.source in UNSETTLED else cell
        for c, cell in cells.items()
    }


def bounds(
    cells: dict[str, dict[str, Cell]], weights: dict[str, int], winner: str | None
) -> Bounds:
    """Bounds of the passing options' totals (`cells`: theirs only) around `winner`."""
    best = weighted_totals({o: _at(row, 5) for o, row in cells.items()}, weights)
    worst = weighted_totals({o: _at(row, 1) for o, row in cells.items()}, weights)
    if winner is None:
        return Bounds(None, None, best, worst, [], [], {})
    floor = worst[winner]
    contenders = sorted(o for o in cells if o != winner and best[o] >= floor - TIE)
    flips: list[dict[str, Any]] = []
    for option, row in cells.items():
        for criterion, cell in row.items():
            if cell.source not in UNSETTLED:
                continue
            extreme = 1 if option == winner else 5
            trial = {o: dict(r) for o, r in cells.items()}
            trial[option][criterion] = Cell(extreme, cell.source)
            totals = weighted_totals(trial, weights)
            rival = max((t for o, t in totals.items() if o != winner), default=float("-inf"))
            if rival >= totals[winner] - TIE:
                flips.append(
                    {
                        "option": option,
                        "criterion": criterion,
                        "source": cell.source,
                        "score": cell.score,
                        "extreme": extreme,
                        "total_then": round(totals[option], 6),
                        "winner_then": round(totals[winner], 6),
                    }
                )
    together = {o: _together(cells, weights, winner, o) for o in contenders}
    return Bounds(winner, floor, best, worst, contenders, flips, together)


def _together(
    cells: dict[str, dict[str, Cell]], weights: dict[str, int], winner: str, rival: str
) -> list[dict[str, Any]]:
    """The unsettled cells of the winner (at 1) and the rival (at 5), largest swing first,
    until the rival reaches the winner."""
    swings = []
    for option, extreme in ((winner, 1), (rival, 5)):
        for criterion, cell in cells[option].items():
            if cell.source in UNSETTLED:
                swing = weights[criterion] * abs(extreme - cell.score)
                swings.append((swing, option, criterion, extreme))
    trial = {o: dict(r) for o, r in cells.items()}
    out: list[dict[str, Any]] = []
    for _swing, option, criterion, extreme in sorted(swings, key=lambda s: (-s[0], s[1], s[2])):
        cell = cells[option][criterion]
        trial[option][criterion] = Cell(extreme, cell.source)
        out.append(
            {
                "option": option,
                "criterion": criterion,
                "source": cell.source,
                "score": cell.score,
                "extreme": extreme,
            }
        )
        totals = weighted_totals(trial, weights)
        if totals[rival] >= totals[winner] - TIE:
            break
    return out
