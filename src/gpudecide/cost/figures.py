"""The figures of a "cost" evidence record as a typed model (`CostFigures`), for readers in
any package (SPEC C1-C10, V2).

    figures_of(record)              CostFigures
    figures_of(record).options[0].regimes["normal"].total

`gpudecide.cost.analysis` builds the figures and validates them against these models, and
the record keeps `CostFigures.model_dump(mode="json")`, key for key: money is a decimal
string in the file's currency, GPU-hours and shares are numbers, and every text a person
reads is there in English and as a message (`*_message`, `finding_messages`,
`messages`), said in the reader's language with `gpudecide.message.render`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from gpudecide import evidence as ev
from gpudecide.figure_model import StoredMessage

__all__ = [
    "BreakEven",
    "CostFigures",
    "Curve",
    "Flip",
    "InputMove",
    "Line",
    "ManagedShrink",
    "Month",
    "MonthWork",
    "MovedInput",
    "NamedShare",
    "OptionFigures",
    "OwnedShrink",
    "PeakCheck",
    "PeakOutcome",
    "PriceRow",
    "ProfilePeakCheck",
    "RecordMessages",
    "RentedShrink",
    "ReplayPeakCheck",
    "Sensitivity",
    "Shrink",
    "Waiting",
    "Window",
    "WorkWindow",
    "figures_of",
]


def _absent(value: object) -> bool:
    return value is None


class _Figures(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Line(_Figures):
    """One amount inside a C1 component, with its arithmetic and the source of its price."""

    component: str
    label: str
    label_message: StoredMessage
    amount: str
    source: str


class Month(_Figures):
    """One option in one month: the C1 components and the lines they are made of."""

    components: dict[str, str]
    total: str
    useful_gpu_hours: float
    available_gpu_hours: float
    demand_gpu_hours: float
    useful_utilisation: float | None
    cost_per_useful_gpu_hour: str | None
    lines: list[Line]
    notes: list[str]


class Window(_Figures):
    """The weeks of the profile a month was taken from."""

    weeks: list[int]
    start: str
    end: str


class MonthWork(_Figures):
    """The workload of one month and how it was chosen (C8)."""

    basis: str
    basis_message: StoredMessage
    window: Window | None
    gpu_hours: float
    useful_gpu_hours: float
    attempts: float
    trainings: float
    peak_concurrent_gpus: int


class WorkWindow(_Figures):
    """One rolling window of the profile the months were chosen from."""

    weeks: list[int]
    start: str
    end: str
    gpu_hours: str
    jobs: int


# What the peak check found: the pool takes the peak month, does not (its SLO fails),
# cannot (jobs larger than the pool), the evidence disagrees or cannot judge, or nothing
# measured it.
PeakOutcome = Literal["absorbed", "not_absorbed", "never_fits", "unsettled", "not_measured"]


class _PeakCheck(_Figures):
    pool_gpus: int
    peak_month_gpu_hours: float
    pool_gpu_hours: float
    peak_concurrent_gpus: int
    absorbs: bool | None
    # None only in a record written before the outcome was stored (read its `absorbs`).
    outcome: PeakOutcome | None = Field(default=None, exclude_if=_absent)
    meaning: str
    meaning_message: StoredMessage


class ProfilePeakCheck(_PeakCheck):
    """The peak month against the pool from the profile alone (no replay of this pool)."""

    source: Literal["profile"]


class ReplayPeakCheck(_PeakCheck):
    """The peak month against the pool from a replay of a pool this size."""

    source: Literal["replay"]
    replay_id: str
    window: str | None
    policy: str | None
    wait_p50_s: int | float | None
    wait_p95_s: int | float | None
    wait_max_s: int | float | None
    longest_queue: int | None
    jobs_unplaceable: int
    slo: dict[str, Any] | None
    slo_violation_share: int | float | None
    recommended_gpus: int | None


PeakCheck = Annotated[ProfilePeakCheck | ReplayPeakCheck, Field(discriminator="source")]


class Waiting(_Figures):
    """What waiting costs on an option (C7): the team's consequence, its money figure if any,
    and what was measured."""

    consequence: str | None
    assumed_monthly_cost: str | None
    assumption_source: str | None
    measured: list[str]
    measured_messages: list[StoredMessage]


class _Shrink(_Figures):
    exit_after_months: int
    commitment_months_left: int
    cost_to_shrink: str
    days_to_shrink: float
    how: str
    how_message: StoredMessage
    # A hybrid shrinks its base pool and leaves its overflow side by side: the id of that
    # pool, the overflow's own figures, and `cost_to_shrink` / `days_to_shrink` of both.
    of_base: str | None = Field(default=None, exclude_if=_absent)
    overflow: ManagedShrink | None = Field(default=None, exclude_if=_absent)


class OwnedShrink(_Shrink):
    """V2 for owned servers: the loss on selling them and the rack still owed."""

    kind: Literal["owned"]
    months_left_to_write_off: int
    book_value: str
    resale_value: str
    loss_on_sale: str
    committed_payments_left: str


class RentedShrink(_Shrink):
    """V2 for a rented pool: what it bills every month whether used or not (pool,
    provisioned storage, fixed fees) for the commitment left and the notice."""

    kind: Literal["rented"]
    scale_down_step_gpus: int
    notice_days: int
    # Absent only in a record written before the committed charges were stored.
    committed_monthly: str | None = None
    committed_payments_left: str


class ManagedShrink(_Shrink):
    """V1/V2 for a managed option: no pool to shrink, but the contract's minimum spend (or
    the data kept) and fixed fees for the commitment left and the notice, and the kept data
    to move out. `notice_days` None: the contract's notice is not in costs.yaml."""

    kind: Literal["managed"]
    # Absent only in a record written before the contract's terms were priced.
    notice_days: int | None = None
    committed_monthly: str | None = None
    committed_payments_left: str | None = None
    gb_to_move_out: float
    egress_cost: str | None


Shrink = Annotated[OwnedShrink | RentedShrink | ManagedShrink, Field(discriminator="kind")]
_Shrink.model_rebuild()
OwnedShrink.model_rebuild()
RentedShrink.model_rebuild()


class OptionFigures(_Figures):
    """One option: its three months, peak check, waiting and reversibility."""

    id: str
    name: str
    type: Literal["owned", "rented", "managed", "hybrid"]
    provider: str
    site: str
    pool_gpus: int | None
    regimes: dict[str, Month]
    peak_check: PeakCheck | None
    burst_extra: str
    waiting: Waiting
    reversibility: Shrink | None


class BreakEven(_Figures):
    """Break-even useful utilisation of a dedicated option against a managed one (C8)."""

    dedicated: str
    managed: str
    break_even_useful_utilisation: float | None
    dedicated_cheaper: Literal["above", "below", "never", "always"]
    achievable_max: float | None
    observed_normal: float | None
    observed_peak: float | None
    finding: str | None


class NamedShare(_Figures):
    """One share of GPU-hours the cost stands on, with its name (C2): what was counted
    (`measure`), of which hours (`of`: a pool's around the clock, the GPU-hours a managed
    service billed, or a hybrid's paid ones), over which window, from which evidence
    (`evidence`: None for this record's own months)."""

    options: list[str]
    pool_gpus: int | None
    source: Literal["cost", "profile", "replay"]
    evidence: str | None
    measure: Literal["useful", "occupied"]
    of: Literal["pool", "billed", "paid"]
    window: str
    share: float | None
    name: str
    name_message: StoredMessage


class Curve(_Figures):
    """Cost per useful GPU-hour against a dedicated pool's useful utilisation (chart data)."""

    dedicated: str
    pool_gpus: int
    useful_utilisation: list[float | None]
    cost_per_useful_gpu_hour: dict[str, list[str]]
    observed_normal: float | None


class InputMove(_Figures):
    """The standalone options after one input moved by one step."""

    cheapest: str
    gap: str | None
    leader_total: str


class MovedInput(_Figures):
    """One input of the tornado: both moves and how far they swing the decision."""

    input: str
    input_message: StoredMessage
    field: str
    base: str
    low: InputMove | None
    high: InputMove | None
    swing: str


class Flip(_Figures):
    """A move that makes another option the cheapest."""

    input: str
    field: str
    move: str
    cheapest: str


class Sensitivity(_Figures):
    """Each input moved -step / +step in the normal month (the tornado)."""

    step: float
    regime: str
    measure: Literal["gap", "total"]
    baseline_cheapest: str
    baseline_gap: str | None
    baseline_total: str
    inputs: list[MovedInput]
    flips: list[Flip]
    skipped: list[str]


class PriceRow(_Figures):
    """One price of costs.yaml and its source (C5)."""

    option: str
    field: str
    amount: str
    source: str


class RecordMessages(_Figures):
    """`figures["messages"]`: the record's summary and its notes (one per note) as messages."""

    summary: StoredMessage
    notes: list[StoredMessage]


class CostFigures(_Figures):
    """The figures of a "cost" evidence record."""

    currency: str
    hours_per_month: float
    exit_after_months: int
    components: list[str]
    profile_evidence: str
    replay_evidence: list[str]
    regimes: dict[str, MonthWork]
    windows: list[WorkWindow]
    options: list[OptionFigures]
    cheapest: dict[str, str | None]
    break_even: list[BreakEven]
    # Absent only in a record written before the shares were named.
    utilisation: list[NamedShare] = Field(default_factory=list)
    near_full_utilisation: float
    curves: list[Curve]
    findings: list[str]
    finding_messages: list[StoredMessage]
    sensitivity: Sensitivity | None
    prices: list[PriceRow]
    data: dict[str, str]
    messages: RecordMessages


def figures_of(record: ev.Evidence) -> CostFigures:
    """A "cost" record's figures as their model.

    A record of another kind is a LookupError; figures of another shape (an edited or older
    record) are pydantic's ValidationError (a ValueError), naming the field.
    """
    if record.kind != "cost":
        raise LookupError(f"{record.kind!r} is not a cost record")
    return CostFigures.model_validate(record.figures)
