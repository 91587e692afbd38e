"""costs.yaml: the options a team compares and the contract terms behind every price (SPEC C1-C10).

Every amount is a `Price` that names its `source` (contract clause, quote id, rate card): the
report shows it next to the figure, because tariff rules come from the contract, not from an
advertising calculator (C5). All amounts are in the one currency the file declares; a price
marked with another currency is an input error, since gpudecide never guesses exchange rates.

Checks that span several fields (one currency, labour never zero, references between options,
a rack commitment that outlives the servers) run after the schema, with the same one-line
`file:line: field` errors as the schema's own.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from gpudecide.errors import InputError
from gpudecide.inputs import load_yaml_model, node_line, yaml_root
from gpudecide.jobs.columns import KINDS

__all__ = [
    "COSTS_NAME",
    "Amount",
    "BusyKilowatts",
    "CapexItem",
    "Colocation",
    "Component",
    "CostsConfig",
    "Count",
    "DataVolumes",
    "Days",
    "Fee",
    "Gigabytes",
    "HybridOption",
    "JobKind",
    "Kilowatts",
    "LabourRole",
    "Loc",
    "ManagedOption",
    "Minutes",
    "MonthHours",
    "Months",
    "NonNegative",
    "Option",
    "OverflowRule",
    "OwnedExit",
    "OwnedOption",
    "Power",
    "Price",
    "Problem",
    "RentedOption",
    "Replacements",
    "RoleHours",
    "Waiting",
    "dotted",
    "is_consistent",
    "iter_prices",
    "load",
    "validate",
]

COSTS_NAME = "costs.yaml"

Component = Literal["compute", "storage", "data_transfer", "platform_ops"]
JobKind = Literal["train", "smoke", "restart", "eval", "merge", "quantize", "export", "other"]
assert set(get_args(JobKind)) == set(KINDS)  # the profile's kinds, spelt out for the schema

NonNegative = Annotated[Decimal, Field(ge=0, allow_inf_nan=False)]
# Ranges that mean something (issue 14 item 4): beyond them a figure is a typo, and amounts
# like 1e308 overflowed the decimal arithmetic. Products of these bounds stay below 10^25,
# inside the 28 significant digits of the decimal context, so totals round to the cent.
Amount = Annotated[Decimal, Field(ge=0, le=Decimal(10) ** 12, allow_inf_nan=False)]
Gigabytes = Annotated[Decimal, Field(ge=0, le=Decimal(10) ** 8, allow_inf_nan=False)]
# Minutes of one job-related step: at most a month (31 days).
Minutes = Annotated[Decimal, Field(ge=0, le=44_640, allow_inf_nan=False)]
# Hours of one month: at most 744.
MonthHours = Annotated[Decimal, Field(ge=0, le=744, allow_inf_nan=False)]
# Hours a role works on an option in a month: a role may be several people (up to about 130
# full-time), so more than one month's hours.
RoleHours = Annotated[Decimal, Field(ge=0, le=100_000, allow_inf_nan=False)]
Kilowatts = Annotated[Decimal, Field(ge=0, le=1000, allow_inf_nan=False)]
# A working GPU server draws power: zero is a typo, not a figure.
BusyKilowatts = Annotated[Decimal, Field(gt=0, le=1000, allow_inf_nan=False)]
# Counts of servers, GPUs or parts in one option: the largest clusters hold about 10^5 GPUs.
Count = Annotated[int, Field(ge=1, le=100_000)]
Months = Annotated[int, Field(ge=0, le=240)]
Days = Annotated[int, Field(ge=0, le=36_600)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Price(_Strict):
    """An amount of money with the clause or quote it comes from (C5)."""

    amount: Amount = Field(description="Amount in the file's currency.")
    currency: str | None = Field(
        default=None,
        pattern=r"^[A-Z]{3}$",
        description="Only to mark where a figure came from; must equal the file's currency.",
    )
    source: str = Field(min_length=1, description="Contract clause, quote id or rate card.")


class Fee(_Strict):
    """A fixed monthly fee (support plan, platform subscription, uplink, minimum charge)."""

    name: str = Field(min_length=1, description="What the fee is for.")
    price_per_month: Price = Field(description="Amount per month.")
    component: Component = Field(default="platform_ops", description="C1 component it counts in.")


class LabourRole(_Strict):
    """Engineer time an option needs every month (C6: never zero)."""

    role: str = Field(min_length=1, description="Who does the work.")
    hours_per_month: RoleHours = Field(
        description="Hours per month this option takes (all people in the role together)."
    )
    rate_per_hour: Price = Field(description="Cost of one hour of this role.")


class Waiting(_Strict):
    """What a delay costs, as a consequence one can check (C7)."""

    consequence: str = Field(
        min_length=1, description="Checkable consequence of waiting (missed release window, ...)."
    )
    assumed_monthly_cost: Price | None = Field(
        default=None, description="The team's own money figure, shown as its assumption."
    )


class _Option(_Strict):
    """Fields every option has."""

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", description="Short unique id.")
    name: str = Field(min_length=1, description="Name shown in the report.")
    provider: str = Field(default="", description="Vendor or owner.")
    site: str = Field(default="", description="Where the GPUs and data are (I7, H4).")
    standalone: bool = Field(
        default=True, description="False: only a building block of a hybrid, not compared alone."
    )
    fees: list[Fee] = Field(default_factory=list, description="Fixed monthly fees.")
    labour: list[LabourRole] = Field(
        default_factory=list, description="Engineer time per month (C6)."
    )
    waiting: Waiting | None = Field(
        default=None, description="Consequence of waiting on this option (C7)."
    )


class CapexItem(_Strict):
    """One purchase, written off in equal monthly parts (C9)."""

    item: str = Field(min_length=1, description="What is bought.")
    kind: Literal["server", "network", "disks", "spares", "redundancy", "other"] = Field(
        description="server | network | disks | spares | redundancy | other."
    )
    quantity: Count = Field(default=1, description="How many.")
    unit_price: Price = Field(description="Price of one.")
    write_off_months: int | None = Field(
        default=None, ge=1, le=240, description="Override of the option's write-off period."
    )


class Power(_Strict):
    """Electricity of the GPU servers (C9)."""

    kw_per_server_busy: BusyKilowatts = Field(description="Draw of one busy server, kW.")
    kw_per_server_idle: Kilowatts = Field(
        description="Draw of one idle server, kW (at most the busy draw)."
    )
    pue: Decimal = Field(ge=1, le=5, allow_inf_nan=False, description="Power usage effectiveness.")
    price_per_kwh: Price = Field(description="Price of one kWh.")


class Colocation(_Strict):
    """Rack space in a data centre (C9)."""

    price_per_month: Price = Field(description="Rack, cooling, hands per month.")
    commitment_months: Months = Field(default=0, description="Minimum term of the contract.")


class Replacements(_Strict):
    """Parts replaced during the warranty's life (C9)."""

    per_year: Annotated[Decimal, Field(ge=0, le=100_000, allow_inf_nan=False)] = Field(
        description="Expected replacements per year."
    )
    unit_cost: Price = Field(description="Cost of one replacement not covered by warranty.")


class OwnedExit(_Strict):
    """Leaving owned hardware when load drops (V2)."""

    resale_share: Decimal = Field(
        ge=0, le=1, allow_inf_nan=False, description="Share of the purchase price a buyer pays."
    )
    weeks_to_shrink: Annotated[Decimal, Field(ge=0, le=520, allow_inf_nan=False)] = Field(
        description="Weeks to sell, decommission, move jobs."
    )


class OwnedOption(_Option):
    """Servers the organisation buys (C4, C9)."""

    servers: Count = Field(description="GPU servers in the pool.")
    gpus_per_server: int = Field(ge=1, le=64, description="GPUs per server.")
    write_off_months: int = Field(ge=1, le=240, description="Months until written off.")
    capex: list[CapexItem] = Field(min_length=1, description="Everything bought.")
    power: Power = Field(description="Electricity.")
    colocation: Colocation | None = Field(default=None, description="Rack contract.")
    support_per_month: Price | None = Field(default=None, description="Support contract.")
    replacements: Replacements | None = Field(default=None, description="Warranty replacements.")
    exit: OwnedExit = Field(description="Cost and time to shrink (V2).")

    @property
    def pool_gpus(self) -> int:
        """GPUs jobs can use (spares and redundancy excluded)."""
        return self.servers * self.gpus_per_server


class RentedOption(_Option):
    """A dedicated pool rented by the month, billed whether used or not (C4, C10)."""

    gpus: Count = Field(description="GPUs in the pool.")
    price_per_gpu_hour: Price | None = Field(default=None, description="Per GPU per hour.")
    price_per_gpu_month: Price | None = Field(default=None, description="Per GPU per month.")
    min_commitment_months: Months = Field(description="Minimum term.")
    scale_down_step_gpus: int = Field(
        ge=0, le=100_000, description="GPUs releasable at a time (0: none)."
    )
    scale_down_notice_days: Days = Field(description="Notice before a release.")
    storage_gb: Gigabytes = Field(default=Decimal(0), description="Provisioned storage, GB.")
    storage_price_per_gb_month: Price | None = Field(default=None, description="Per GB-month.")
    egress_price_per_gb: Price | None = Field(default=None, description="Per GB out.")

    @property
    def pool_gpus(self) -> int:
        """GPUs jobs can use."""
        return self.gpus


class ManagedOption(_Option):
    """A managed fine-tuning service billed close to job time (C5)."""

    price_per_gpu_hour: Price = Field(description="Per GPU-hour of job time.")
    billing_increment_minutes: Minutes = Field(description="Job time is rounded up to this.")
    startup_minutes_per_job: Minutes = Field(description="Environment start-up per job.")
    startup_billed: bool = Field(description="Whether start-up time is billed.")
    loading_minutes_per_gb: Minutes = Field(description="Data loading time per GB.")
    loading_billed: bool = Field(description="Whether loading time is billed.")
    ingest_price_per_gb: Price | None = Field(default=None, description="Per GB loaded in.")
    storage_price_per_gb_month: Price = Field(description="Per GB-month stored.")
    retention_days: Days = Field(description="Days job artifacts are kept.")
    endpoint_price_per_hour: Price | None = Field(default=None, description="Endpoint per hour.")
    endpoint_hours_per_training: MonthHours = Field(
        default=Decimal(0), description="Hours an endpoint runs until deleted."
    )
    egress_price_per_gb: Price | None = Field(default=None, description="Per GB out.")
    minimum_monthly_spend: Price | None = Field(
        default=None,
        description="A floor on the month's usage charges (compute, storage, transfer): "
        "the larger of usage and this is paid.",
    )
    min_commitment_months: Months | None = Field(
        default=None,
        description="Minimum term of the contract in months (the minimum spend and fixed fees "
        "are owed until it ends); null: not stated in the contract.",
    )
    notice_days: Days | None = Field(
        default=None,
        description="Days of notice to end the contract (its minimum spend, fixed fees and "
        "the data kept are paid until then); null: not stated in the contract.",
    )


class OverflowRule(_Strict):
    """Which work of a hybrid goes to the managed side (H1)."""

    rule: Literal["kinds", "over_capacity"] = Field(description="kinds | over_capacity.")
    kinds: list[JobKind] = Field(default_factory=list, description="Job kinds sent to managed.")


class HybridOption(_Strict):
    """A base pool (owned or rented) plus managed overflow (H1)."""

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", description="Short unique id.")
    name: str = Field(min_length=1, description="Name shown in the report.")
    base: str = Field(description="Id of an owned or rented option.")
    overflow: str = Field(description="Id of a managed option.")
    overflow_rule: OverflowRule = Field(description="What goes to managed.")
    labour: list[LabourRole] = Field(
        default_factory=list, description="Engineer time for both contours (C6)."
    )
    waiting: Waiting | None = Field(default=None, description="Consequence of waiting (C7).")


class DataVolumes(_Strict):
    """The team's data: what is stored, loaded and moved out."""

    stored_gb: Gigabytes = Field(description="Kept all the time (datasets, base weights).")
    loaded_gb_per_job: Gigabytes = Field(description="Loaded by each job.")
    artifacts_gb_per_job: Gigabytes = Field(description="Written by each job.")
    egress_gb_per_training: Gigabytes = Field(description="Moved out after each training.")
    source: str = Field(min_length=1, description="Where these volumes come from.")


class CostsConfig(_Strict):
    """Schema of costs.yaml."""

    version: Literal[1] = Field(default=1, description="Schema version of this file.")
    currency: str = Field(pattern=r"^[A-Z]{3}$", description="ISO 4217 code of every amount.")
    hours_per_month: Decimal = Field(
        default=Decimal(730), ge=672, le=744, description="Hours in a billing month."
    )
    exit_after_months: int = Field(
        default=12, ge=0, le=240, description="When load drops, for V2 figures."
    )
    data: DataVolumes = Field(description="Data volumes.")
    owned: list[OwnedOption] = Field(default_factory=list, description="Owned pools.")
    rented: list[RentedOption] = Field(default_factory=list, description="Rented pools.")
    managed: list[ManagedOption] = Field(default_factory=list, description="Managed services.")
    hybrid: list[HybridOption] = Field(default_factory=list, description="Hybrids.")

    def options(self) -> list[OwnedOption | RentedOption | ManagedOption | HybridOption]:
        """Every option in file order of its type: owned, rented, managed, hybrid."""
        return [*self.owned, *self.rented, *self.managed, *self.hybrid]

    def compared(self) -> list[OwnedOption | RentedOption | ManagedOption | HybridOption]:
        """The options compared on their own (building blocks of hybrids left out)."""
        return [o for o in self.options() if getattr(o, "standalone", True)]

    def option(self, option_id: str) -> OwnedOption | RentedOption | ManagedOption | HybridOption:
        """The option with this id."""
        return next(o for o in self.options() if o.id == option_id)


Option = OwnedOption | RentedOption | ManagedOption | HybridOption


Loc = tuple[int | str, ...]


def iter_prices(node: Any, loc: Loc = ()) -> Iterator[tuple[Loc, Price]]:
    """Every Price in a model, with its location as pydantic would name it."""
    if isinstance(node, Price):
        yield loc, node
    elif isinstance(node, BaseModel):
        for name in type(node).model_fields:
            yield from iter_prices(getattr(node, name), (*loc, name))
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from iter_prices(item, (*loc, i))


def dotted(loc: Loc) -> str:
    """A location as the dotted field name errors use (`owned.0.power.pue`)."""
    return ".".join(str(p) for p in loc)


_LABOUR_WHY = (
    "engineer labour is never zero (SPEC C6): dedicated needs drivers, CUDA compatibility, node "
    "repair, scheduler, disks, incidents; managed needs the image, access rights, dataset, job "
    "parameters and clean-up rules"
)


def _ids(options: list[Any]) -> dict[str, object]:
    """The ids a reference may name, for the hint "ids: {ids}"."""
    return {"ids": ", ".join(o.id for o in options)}


# Where, the message and the hint (msgids of the errors catalogue), and the values that fill
# their fields.
Problem = tuple[Loc, str, str | None, dict[str, object]]


def _currency_problems(cfg: CostsConfig) -> Iterator[Problem]:
    for where, price in iter_prices(cfg):
        if price.currency is not None and price.currency != cfg.currency:
            yield (
                (*where, "currency"),
                "amount in {currency} but the file's currency is {file_currency}",
                "convert it to {file_currency} at a rate you can cite and name the rate in "
                "`source`; gpudecide does not guess exchange rates",
                {"currency": price.currency, "file_currency": cfg.currency},
            )


def _staffing_problems(opt: Any, loc: Loc) -> Iterator[Problem]:
    # Engineer time is never free (C6): a role that works on the option has a rate.
    for i, role in enumerate(opt.labour):
        if role.hours_per_month > 0 and role.rate_per_hour.amount <= 0:
            yield (
                (*loc, "labour", i, "rate_per_hour", "amount"),
                "{role!r} works {hours} hours a month at a rate of 0",
                "engineer time is never free (SPEC C6): give the role's cost of an hour from "
                "the rate card",
                {"role": role.role, "hours": role.hours_per_month},
            )
    # A building block of a hybrid is staffed and waited on through the hybrid.
    if not getattr(opt, "standalone", True):
        return
    hours = sum((r.hours_per_month for r in opt.labour), Decimal(0))
    if hours <= 0:
        yield (*loc, "labour"), "no engineer hours", _LABOUR_WHY, {}
    if opt.waiting is None:
        yield (
            (*loc, "waiting"),
            "no waiting consequence",
            "SPEC C7: write what a delay on this option causes (missed release "
            "window, team-days without result, fix not in production)",
            {},
        )


def _power_problems(opt: Any, loc: Loc) -> Iterator[Problem]:
    power = opt.power if isinstance(opt, OwnedOption) else None
    if power is not None and power.kw_per_server_idle > power.kw_per_server_busy:
        yield (
            (*loc, "power", "kw_per_server_idle"),
            "an idle server draws {idle} kW, more than a busy one ({busy} kW)",
            "swap the two figures, or take both from the server's power specification",
            {"idle": power.kw_per_server_idle, "busy": power.kw_per_server_busy},
        )


def _colocation_problems(opt: Any, loc: Loc) -> Iterator[Problem]:
    colo = opt.colocation if isinstance(opt, OwnedOption) else None
    if colo is not None and colo.commitment_months > opt.write_off_months:
        yield (
            (*loc, "colocation", "commitment_months"),
            "rack commitment of {months} months is longer than the write-off period of "
            "{write_off} months",
            "the rack would be paid for after the servers are written off: shorten "
            "the commitment or lengthen write_off_months",
            {"months": colo.commitment_months, "write_off": opt.write_off_months},
        )


def _rented_problems(opt: RentedOption, loc: Loc) -> Iterator[Problem]:
    given = [p for p in (opt.price_per_gpu_hour, opt.price_per_gpu_month) if p]
    if len(given) != 1:
        yield (
            (*loc, "price_per_gpu_hour"),
            "give exactly one of price_per_gpu_hour or price_per_gpu_month",
            None,
            {},
        )
    if opt.scale_down_step_gpus > opt.gpus:
        yield (
            (*loc, "scale_down_step_gpus"),
            "step of {step} GPUs is larger than the pool ({gpus})",
            None,
            {"step": opt.scale_down_step_gpus, "gpus": opt.gpus},
        )
    if opt.storage_gb > 0 and opt.storage_price_per_gb_month is None:
        yield (
            (*loc, "storage_price_per_gb_month"),
            "storage_gb is set but has no price",
            "add the price per GB-month from the contract (amount 0 if included)",
            {},
        )


def _managed_problems(opt: ManagedOption, loc: Loc) -> Iterator[Problem]:
    if opt.endpoint_hours_per_training > 0 and opt.endpoint_price_per_hour is None:
        yield (
            (*loc, "endpoint_price_per_hour"),
            "endpoint_hours_per_training is set but the endpoint has no price",
            None,
            {},
        )


def _option_problems(cfg: CostsConfig) -> Iterator[Problem]:
    seen: set[str] = set()
    for kind in ("owned", "rented", "managed", "hybrid"):
        options: list[Any] = getattr(cfg, kind)
        for i, opt in enumerate(options):
            loc: Loc = (kind, i)
            if opt.id in seen:
                yield (
                    (*loc, "id"),
                    "id {id!r} is used twice",
                    "give every option its own id",
                    {"id": opt.id},
                )
            seen.add(opt.id)
            yield from _staffing_problems(opt, loc)
            yield from _power_problems(opt, loc)
            yield from _colocation_problems(opt, loc)
            if isinstance(opt, RentedOption):
                yield from _rented_problems(opt, loc)
            if isinstance(opt, ManagedOption):
                yield from _managed_problems(opt, loc)


def _hybrid_problems(cfg: CostsConfig) -> Iterator[Problem]:
    by_id = {o.id: o for o in cfg.options()}
    for i, hyb in enumerate(cfg.hybrid):
        base = by_id.get(hyb.base)
        if not isinstance(base, OwnedOption | RentedOption):
            known = [*cfg.owned, *cfg.rented]
            yield (
                ("hybrid", i, "base"),
                "{base!r} is not the id of an owned or rented option",
                "ids: {ids}" if known else None,
                {"base": hyb.base, **_ids(known)},
            )
        over = by_id.get(hyb.overflow)
        if not isinstance(over, ManagedOption):
            yield (
                ("hybrid", i, "overflow"),
                "{overflow!r} is not the id of a managed option",
                "ids: {ids}" if cfg.managed else None,
                {"overflow": hyb.overflow, **_ids(cfg.managed)},
            )
        rule = hyb.overflow_rule
        if rule.rule == "kinds" and not rule.kinds:
            yield (
                ("hybrid", i, "overflow_rule", "kinds"),
                "rule `kinds` needs the job kinds sent to the managed side",
                "e.g. kinds: [train, restart]",
                {},
            )
        if rule.rule == "over_capacity" and rule.kinds:
            yield (
                ("hybrid", i, "overflow_rule", "kinds"),
                "kinds are only read by rule `kinds`",
                "remove them, or use rule: kinds",
                {},
            )


def _problems(cfg: CostsConfig) -> Iterator[Problem]:
    """Cross-field problems as (location, message, hint, values), in file order."""
    yield from _currency_problems(cfg)
    yield from _option_problems(cfg)
    yield from _hybrid_problems(cfg)


def is_consistent(cfg: CostsConfig) -> bool:
    """Whether the config passes every cross-field check (used on perturbed copies)."""
    return next(_problems(cfg), None) is None


def validate(cfg: CostsConfig, path: Path) -> CostsConfig:
    """Raise the first cross-field problem as an InputError with file, line and field."""
    first = next(_problems(cfg), None)
    if first is None:
        return cfg
    loc, template, hint, values = first
    root = yaml_root(path)
    raise InputError(
        template, path=path, line=node_line(root, loc), field=dotted(loc), hint=hint, **values
    )


def load(path: Path) -> CostsConfig:
    """Read and check costs.yaml."""
    return validate(load_yaml_model(path, CostsConfig), path)
