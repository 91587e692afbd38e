"""How much the winner depends on the weights (SPEC D3): +-1 around the team's weights, the
whole 1..5 grid, Dirichlet samples around them, the smallest single change that flips the
winner, and rank reversals among the rest.

Scores are fixed; only weights move. Totals for many weight vectors at once are one matrix
product (vectors x criteria) @ (criteria x options).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from gpudecide.i18n import N_
from gpudecide.message import Message, english, message

__all__ = [
    "CRITERION_NAMES",
    "DIRICHLET_CONCENTRATION",
    "DIRICHLET_SAMPLES",
    "GRID_LIMIT",
    "SEED",
    "Array",
    "Robustness",
    "analyse",
    "criterion_name",
    "dirichlet_vectors",
    "grid_vectors",
    "pm1_vectors",
    "rank_reversals",
    "smallest_flip",
    "winners",
]


GRID_LIMIT = 20_000  # more vectors than this in the 1..5 grid: sample this many instead
DIRICHLET_SAMPLES = 4_000
DIRICHLET_CONCENTRATION = 10.0  # alpha = weights x this: samples stay near the team's weights
SEED = 20261201  # fixed: the same inputs give the same report

Array = npt.NDArray[np.float64]


@dataclass
class Robustness:
    """The robustness figures of one decision."""

    winner: str | None
    winner_share_pm1: float | None
    winner_share_grid: float | None
    winner_share_dirichlet: float | None
    vectors_pm1: int
    vectors_grid: int
    grid_sampled: bool
    flip: dict[str, Any] | None
    rank_reversals: list[dict[str, Any]]
    verdict: str
    verdict_message: Message

    def as_dict(self) -> dict[str, Any]:
        """Machine form."""
        return dict(self.__dict__)


def winners(scores: Array, weights: Array) -> npt.NDArray[np.int64]:
    """Index of the strict winner per weight vector, -1 where the best total is tied."""
    totals = weights @ scores.T / weights.sum(axis=1, keepdims=True)
    best = totals.max(axis=1, keepdims=True)
    tied = (np.abs(totals - best) <= 1e-9).sum(axis=1) > 1
    out: npt.NDArray[np.int64] = totals.argmax(axis=1).astype(np.int64)
    out[tied] = -1
    return out


def pm1_vectors(weights: list[int]) -> Array:
    """Every vector within +-1 of each weight, kept in 1..5."""
    axes = [[v for v in (w - 1, w, w + 1) if 1 <= v <= 5] for w in weights]
    return np.array(list(itertools.product(*axes)), dtype=np.float64)


def grid_vectors(n: int, rng: np.random.Generator) -> tuple[Array, bool]:
    """The whole 1..5 grid, or a uniform sample of it when it is larger than GRID_LIMIT."""
    if 5**n <= GRID_LIMIT:
        return np.array(list(itertools.product(range(1, 6), repeat=n)), dtype=np.float64), False
    return rng.integers(1, 6, size=(GRID_LIMIT, n)).astype(np.float64), True


def dirichlet_vectors(weights: list[int], rng: np.random.Generator) -> Array:
    """Weight vectors drawn around the team's (their shares as the Dirichlet mean)."""
    alpha = np.array(weights, dtype=np.float64) * DIRICHLET_CONCENTRATION
    return rng.dirichlet(alpha, size=DIRICHLET_SAMPLES)


def smallest_flip(
    scores: Array, weights: list[int], names: list[str], criteria: list[str], winner: int
) -> dict[str, Any] | None:
    """The smallest single-weight change (in 1..5) after which another option wins."""
    best: tuple[int, int, int, int] | None = None  # (|change|, criterion, new weight, winner)
    for i, w in enumerate(weights):
        for v in range(1, 6):
            if v == w:
                continue
            trial = np.array([weights], dtype=np.float64)
            trial[0, i] = v
            now = int(winners(scores, trial)[0])
            if now != winner:
                candidate = (abs(v - w), i, v, now)
                if best is None or candidate < best:
                    best = candidate
    if best is None:
        return None
    change, i, v, now = best
    return {
        "criterion": criteria[i],
        "from_weight": weights[i],
        "new_weight": v,
        "change": change,
        "new_winner": names[now] if now >= 0 else None,
        "tie": now < 0,
    }


def rank_reversals(
    scores: Array, vectors: Array, names: list[str], base: list[str]
) -> list[dict[str, Any]]:
    """Pairs of options whose order reverses in some vectors, with the share of vectors."""
    totals = vectors @ scores.T / vectors.sum(axis=1, keepdims=True)
    out: list[dict[str, Any]] = []
    index = {n: i for i, n in enumerate(names)}
    for hi, lo in itertools.combinations(base, 2):
        reversed_share = float(np.mean(totals[:, index[lo]] > totals[:, index[hi]] + 1e-9))
        if reversed_share > 0:
            out.append({"above": hi, "below": lo, "share_reversed": round(reversed_share, 4)})
    return out


def analyse(
    scores: dict[str, dict[str, int]], weights: dict[str, int], ranking: list[str]
) -> Robustness:
    """Robustness of the winner among `scores` (the options that pass the stop factors)."""
    names = list(scores)
    criteria = list(weights)
    if len(names) < 2:
        only = names[0] if names else None
        alone = message("decision", "one option passes")
        return Robustness(only, None, None, None, 0, 0, False, None, [], english(alone), alone)
    s = np.array([[scores[o][c] for c in criteria] for o in names], dtype=np.float64)
    w = [weights[c] for c in criteria]
    base = int(winners(s, np.array([w], dtype=np.float64))[0])
    rng = np.random.default_rng(SEED)
    pm1 = pm1_vectors(w)
    grid, sampled = grid_vectors(len(w), rng)
    dirichlet = dirichlet_vectors(w, rng)
    if base < 0:
        flip = None
        shares: list[float | None] = [None, None, None]
    else:
        shares = [float(np.mean(winners(s, v) == base)) for v in (pm1, grid, dirichlet)]
        flip = smallest_flip(s, w, names, criteria, base)
    reversals = rank_reversals(s, pm1, names, ranking)
    verdict = _verdict(names[base] if base >= 0 else None, shares[0], flip)
    return Robustness(
        names[base] if base >= 0 else None,
        None if shares[0] is None else round(shares[0], 4),
        None if shares[1] is None else round(shares[1], 4),
        None if shares[2] is None else round(shares[2], 4),
        len(pm1),
        len(grid),
        sampled,
        flip,
        reversals,
        english(verdict),
        verdict,
    )


# Criteria names, said in the reader's language where a text names one (teams may add
# criteria of their own: those are shown as written).
CRITERION_NAMES = {
    "frequency": N_("frequency"),
    "artifacts": N_("artifacts"),
    "queue": N_("queue"),
    "isolation": N_("isolation"),
    "operations": N_("operations"),
    "scale": N_("scale"),
    "cost": N_("cost"),
}


def criterion_name(criterion: str) -> Message | str:
    """A criterion as a message when it is one of the built-in criteria, else its id."""
    known = CRITERION_NAMES.get(criterion)
    return message("decision", known) if known is not None else criterion


def _verdict(winner: str | None, pm1: float | None, flip: dict[str, Any] | None) -> Message:
    if winner is None:
        return message("decision", "tie at the team's weights")
    if flip is None or (pm1 is not None and pm1 == 1.0 and flip["change"] > 1):
        return message("decision", "robust")
    other = flip["new_winner"] or message("decision", "a tie")
    return message(
        "decision",
        "hinges on the weight of {criterion}: {old} -> {new} makes {other} the winner",
        criterion=criterion_name(flip["criterion"]),
        old=flip["from_weight"],
        new=flip["new_weight"],
        other=other,
    )
