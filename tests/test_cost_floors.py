"""Cost figures a reader can trust (issue 9, items 15-19): floors, readable lines, labels.

Every expected figure is computed by hand from the fixtures in test_cost_fixtures.
"""

from __future__ import annotations

import itertools
from decimal import Decimal

from gpudecide.cost.figures import InputMove
from gpudecide.cost.regimes import from_profile
from gpudecide.cost.report import side_text
from gpudecide.cost.tco import month_cost

from .test_cost_fixtures import MANAGED, P, cfg, profile_figures

D = Decimal
REG = from_profile(profile_figures(), D(672))


def _managed(**changes: object) -> dict[str, object]:
    return {**MANAGED, **changes}


def test_minimum_commitment_is_a_floor_not_an_addition() -> None:
    # Normal month usage (compute 1017.33 + storage 22.00 + transfer 3.00) = 1042.33.
    c = cfg(managed=[_managed(minimum_monthly_spend=P(1500))])
    normal = month_cost(c, c.managed[0], REG.normal)
    top_up = [ln for ln in normal.lines if ln.label.startswith("minimum monthly commitment")]
    assert [ln.amount for ln in top_up] == [D("457.67")]  # 1500 - 1042.33
    usage = sum((normal.components[k] for k in ("compute", "storage", "data_transfer")), D(0))
    assert usage == D(1500)  # the larger of usage and the floor, not both
    assert normal.total == D("1642.33") + D("457.67")


def test_usage_above_the_floor_pays_usage_only() -> None:
    c = cfg(managed=[_managed(minimum_monthly_spend=P(1042))])  # boundary: just below usage
    normal = month_cost(c, c.managed[0], REG.normal)
    assert not any(ln.label.startswith("minimum monthly") for ln in normal.lines)
    assert normal.total == D("1642.33")
    exact = cfg(managed=[_managed(minimum_monthly_spend=P("1042.33"))])
    assert month_cost(exact, exact.managed[0], REG.normal).total == D("1642.33")


def test_empty_month_pays_the_floor() -> None:
    c = cfg(managed=[_managed(minimum_monthly_spend=P(1000))])
    empty = month_cost(c, c.managed[0], REG.empty)
    # Usage: storage 21.00 only; topped up by 979.00 to the floor.
    assert empty.components["compute"] == D("979.00")
    assert empty.total == D("621.00") + D("979.00")


def test_every_managed_line_reads_with_its_units() -> None:
    c = cfg()
    normal = month_cost(c, c.managed[0], REG.normal)
    by_head = {ln.label.split(":")[0]: ln.label for ln in normal.lines}
    # Half of the 6-minute increment per attempt: "3 min per attempt (on average half ...)".
    assert by_head["billing increment"].startswith(
        "billing increment: 2 attempts x 3 min per attempt (on average half of the 6-min "
        "increment) x 2 GPUs"
    )
    assert "per GPU-hour" in by_head["job time"]
    assert by_head["storage"].endswith("per GB-month")
    for label in by_head.values():
        assert "  " not in label
        # No two bare numbers in a row ("30 60 min"): every number is followed by a unit or
        # an operator.
        words = label.replace("(", " ").replace(")", " ").split()
        pairs = itertools.pairwise(words)
        assert not any(_is_number(a) and _is_number(b) for a, b in pairs), label


def _is_number(word: str) -> bool:
    try:
        float(word.replace(",", ""))
    except ValueError:
        return False
    return True


def test_sensitivity_cells_say_who_leads_and_who_takes_over() -> None:
    stays = {"cheapest": "kz-local", "gap": "6490.00", "leader_total": "1.00"}
    assert side_text(InputMove(**stays), "kz-local") == "kz-local stays cheapest, ahead by 6,490"
    over = InputMove(cheapest="managed-ft", gap="-6490.00", leader_total="1.00")
    assert side_text(over, "kz-local") == "managed-ft takes over; kz-local behind by 6,490"
    assert side_text(None, "kz-local") == "n/a"
