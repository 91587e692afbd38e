"""Monthly cost of one option in one month of work (SPEC C1-C7, C9, C10).

    monthly_cost = compute + storage + data_transfer + platform_ops + engineer_labour
                   + waiting_cost                                              (C1)
    useful_utilisation = useful GPU-hours / available GPU-hours                (C2)
    cost_per_useful_GPU_hour = monthly_cost / useful GPU-hours                 (C3)

Every component is a list of lines, each with the arithmetic in its label (a message, said in
the reader's language where it is shown) and the `source` of its price, so the report never
shows one opaque "GPU" line (C9). Lines are rounded to cents (the currency's hundredths) when
made, so a component is exactly the sum of its lines.

Where the C1 components sit, for every option type alike:
- compute: GPU time. Owned: amortisation of servers, spares and redundancy plus their power;
  rented: the pool's price, billed around the clock (C4); managed: billed job time with the
  billing increment, start-up and data loading when billed, and endpoint time until deletion.
- storage: disks (owned), provisioned storage (rented), GB-months kept (managed).
- data_transfer: data loaded in and artifacts moved out, where the contract charges for it.
- platform_ops: network hardware, rack, support, replacements and fixed fees.
- engineer_labour: the option's roles, never zero (C6, checked on input).
- waiting_cost: only a money figure the team gave, shown as its assumption (C7).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Literal

from gpudecide.cost import words
from gpudecide.cost.regimes import ZERO, Workload
from gpudecide.cost.schema import (
    CostsConfig,
    HybridOption,
    LabourRole,
    ManagedOption,
    Option,
    OwnedOption,
    Price,
    RentedOption,
    Waiting,
)
from gpudecide.cost.words import figure, share
from gpudecide.message import Message, english, message

__all__ = [
    "CAPEX_COMPONENT",
    "CENT",
    "COMPONENTS",
    "Component",
    "Line",
    "MonthCost",
    "cents",
    "month_cost",
    "pool_gpus",
    "retention_months",
    "reversibility",
    "shrinking",
    "split",
]

Component = Literal[
    "compute", "storage", "data_transfer", "platform_ops", "engineer_labour", "waiting_cost"
]
COMPONENTS: tuple[Component, ...] = (
    "compute",
    "storage",
    "data_transfer",
    "platform_ops",
    "engineer_labour",
    "waiting_cost",
)
CENT = Decimal("0.01")
CAPEX_COMPONENT: dict[str, Component] = {
    "server": "compute",
    "spares": "compute",
    "redundancy": "compute",
    "disks": "storage",
    "network": "platform_ops",
    "other": "platform_ops",
}


def cents(value: Decimal) -> Decimal:
    """Round money to hundredths, half up (how invoices round)."""
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class Line:
    """One amount inside a C1 component, with how it was computed (`text`) and where its
    price is from."""

    component: Component
    text: Message
    amount: Decimal
    source: str = ""

    @property
    def label(self) -> str:
        """How the amount was computed, in English (the record's own text)."""
        return english(self.text)


@dataclass
class MonthCost:
    """One option in one month."""

    option_id: str
    lines: list[Line]
    useful_gpu_hours: Decimal
    available_gpu_hours: Decimal  # dedicated: pool x month; managed: billed GPU-hours
    demand_gpu_hours: Decimal
    note_messages: list[Message] = field(default_factory=list)

    @property
    def notes(self) -> list[str]:
        """What the month could not cost as asked, in English."""
        return [english(m) for m in self.note_messages]

    @property
    def components(self) -> dict[Component, Decimal]:
        """The six C1 components (zero where the option has none)."""
        out: dict[Component, Decimal] = dict.fromkeys(COMPONENTS, ZERO)
        for line in self.lines:
            out[line.component] += line.amount
        return out

    @property
    def total(self) -> Decimal:
        """monthly_cost (C1)."""
        return sum((line.amount for line in self.lines), ZERO)

    @property
    def useful_utilisation(self) -> Decimal | None:
        """C2; None when nothing was available."""
        if self.available_gpu_hours <= 0:
            return None
        return self.useful_gpu_hours / self.available_gpu_hours

    @property
    def cost_per_useful_gpu_hour(self) -> Decimal | None:
        """C3; None in a month without useful GPU-hours."""
        if self.useful_gpu_hours <= 0:
            return None
        return self.total / self.useful_gpu_hours


def _line(component: Component, text: Message, amount: Decimal, *prices: Price | None) -> Line:
    source = "; ".join(dict.fromkeys(p.source for p in prices if p is not None))
    return Line(component, text, cents(amount), source)


def _labour(roles: list[LabourRole]) -> list[Line]:
    return [
        _line(
            "engineer_labour",
            message(
                "cost",
                "{role}: {hours:num} h x {rate:num}",
                role=r.role,
                hours=figure(r.hours_per_month),
                rate=figure(r.rate_per_hour.amount),
            ),
            r.hours_per_month * r.rate_per_hour.amount,
            r.rate_per_hour,
        )
        for r in roles
    ]


def _waiting(waiting: Waiting | None, w: Workload) -> list[Line]:
    # C7: money only when the team gave a figure, and only in a month that has jobs to wait.
    cost = waiting.assumed_monthly_cost if waiting is not None else None
    if cost is None or w.gpu_hours <= 0:
        return []
    assumption = message("cost", "team's assumption (not measured)")
    return [_line("waiting_cost", assumption, cost.amount, cost)]


def _fees(option: OwnedOption | RentedOption | ManagedOption) -> list[Line]:
    return [
        _line(
            f.component,
            message("cost", "{name} (per month)", name=f.name),
            f.price_per_month.amount,
            f.price_per_month,
        )
        for f in option.fees
    ]


def _owned(cfg: CostsConfig, o: OwnedOption, w: Workload) -> MonthCost:
    hours = cfg.hours_per_month
    capacity = Decimal(o.pool_gpus) * hours
    occupied = min(w.gpu_hours, capacity)
    lines: list[Line] = []
    for item in o.capex:
        months = item.write_off_months or o.write_off_months
        lines.append(
            _line(
                CAPEX_COMPONENT[item.kind],
                message(
                    "cost",
                    "{item}: {quantity} x {price:num} / {months}",
                    item=item.item,
                    quantity=item.quantity,
                    price=figure(item.unit_price.amount),
                    months=words.months(months),
                ),
                item.quantity * item.unit_price.amount / months,
                item.unit_price,
            )
        )
    p = o.power
    load = occupied / capacity
    kw = p.kw_per_server_idle + (p.kw_per_server_busy - p.kw_per_server_idle) * load
    kwh = o.servers * kw * hours * p.pue
    lines.append(
        _line(
            "compute",
            message(
                "cost",
                "power: {servers} x {kw:num} kW at {load:pct} occupied utilisation of the "
                "{gpus}-GPU pool x {hours:num} h x PUE {pue:num} = {kwh:num} kWh x {price:num}",
                servers=words.servers(o.servers),
                kw=figure(kw, 3),
                load=share(load),
                gpus=o.pool_gpus,
                hours=figure(hours),
                pue=figure(p.pue),
                kwh=figure(kwh, 0),
                price=figure(p.price_per_kwh.amount),
            ),
            kwh * p.price_per_kwh.amount,
            p.price_per_kwh,
        )
    )
    if o.colocation is not None:
        c = o.colocation.price_per_month
        rack = message("cost", "rack / colocation (per month)")
        lines.append(_line("platform_ops", rack, c.amount, c))
    if o.support_per_month is not None:
        s = o.support_per_month
        support = message("cost", "support contract (per month)")
        lines.append(_line("platform_ops", support, s.amount, s))
    if o.replacements is not None:
        r = o.replacements
        lines.append(
            _line(
                "platform_ops",
                message(
                    "cost",
                    "replacements: {n:num} a year x {cost:num} / 12",
                    n=figure(r.per_year),
                    cost=figure(r.unit_cost.amount),
                ),
                r.per_year * r.unit_cost.amount / 12,
                r.unit_cost,
            )
        )
    lines += _fees(o) + _labour(o.labour) + _waiting(o.waiting, w)
    return _dedicated_month(o, w, lines, capacity)


def _rented(cfg: CostsConfig, o: RentedOption, w: Workload) -> MonthCost:
    hours = cfg.hours_per_month
    capacity = Decimal(o.gpus) * hours
    lines = [_rented_pool_line(cfg, o)]
    if o.storage_gb > 0 and o.storage_price_per_gb_month is not None:
        s = o.storage_price_per_gb_month
        lines.append(
            _line(
                "storage",
                message(
                    "cost",
                    "provisioned storage: {gb:num} GB x {price:num}",
                    gb=figure(o.storage_gb),
                    price=figure(s.amount),
                ),
                o.storage_gb * s.amount,
                s,
            )
        )
    if o.egress_price_per_gb is not None:
        lines.append(_egress(cfg, w, o.egress_price_per_gb))
    lines += _fees(o) + _labour(o.labour) + _waiting(o.waiting, w)
    return _dedicated_month(o, w, lines, capacity)


def _rented_pool_line(cfg: CostsConfig, o: RentedOption) -> Line:
    if o.price_per_gpu_hour is not None:
        p = o.price_per_gpu_hour
        return _line(
            "compute",
            message(
                "cost",
                "pool: {gpus} x {hours:num} h x {price:num}, billed whether used or not (C4)",
                gpus=words.gpus(o.gpus),
                hours=figure(cfg.hours_per_month),
                price=figure(p.amount),
            ),
            o.gpus * cfg.hours_per_month * p.amount,
            p,
        )
    assert o.price_per_gpu_month is not None  # schema check: exactly one of the two
    p = o.price_per_gpu_month
    return _line(
        "compute",
        message(
            "cost",
            "pool: {gpus} x {price:num} per month, billed whether used or not (C4)",
            gpus=words.gpus(o.gpus),
            price=figure(p.amount),
        ),
        o.gpus * p.amount,
        p,
    )


def _egress(cfg: CostsConfig, w: Workload, price: Price) -> Line:
    gb = w.trainings * cfg.data.egress_gb_per_training
    return _line(
        "data_transfer",
        message(
            "cost",
            "egress: {trainings} x {gb:num} GB x {price:num}",
            trainings=words.trainings(w.trainings),
            gb=figure(cfg.data.egress_gb_per_training),
            price=figure(price.amount),
        ),
        gb * price.amount,
        price,
    )


def _dedicated_month(
    o: OwnedOption | RentedOption, w: Workload, lines: list[Line], capacity: Decimal
) -> MonthCost:
    notes: list[Message] = []
    served = min(w.gpu_hours, capacity)
    if w.gpu_hours > capacity:
        notes.append(
            message(
                "cost",
                "{option}: the month asks for {asked}, the pool has {has:num}: the rest waits "
                "into the next month",
                option=o.id,
                asked=words.gpu_hours(w.gpu_hours),
                has=figure(capacity),
            )
        )
    return MonthCost(
        option_id=o.id,
        lines=lines,
        useful_gpu_hours=served * w.useful_share,
        available_gpu_hours=capacity,
        demand_gpu_hours=w.gpu_hours,
        note_messages=notes,
    )


def retention_months(cfg: CostsConfig, days: int) -> Decimal:
    """Retention in billing months."""
    return Decimal(days) * 24 / cfg.hours_per_month


def _carried_over(retention: Decimal) -> Decimal:
    """Months of earlier artifacts still stored, averaged over a month with no new jobs.

    Artifacts written at a steady rate are kept `retention` months; with no new ones, the stock
    at t months into the empty month is rate x max(0, retention - t); its mean over t in [0, 1].
    """
    if retention >= 1:
        return retention - Decimal("0.5")
    return retention * retention / 2


def _managed(cfg: CostsConfig, o: ManagedOption, w: Workload) -> MonthCost:
    lines, billed = _managed_compute(cfg, o, w)
    lines += _managed_storage(cfg, o, w) + _managed_transfer(cfg, o, w)
    lines += _minimum_spend(o, lines)
    lines += _fees(o) + _labour(o.labour) + _waiting(o.waiting, w)
    return MonthCost(
        option_id=o.id,
        lines=lines,
        useful_gpu_hours=w.useful_gpu_hours,
        available_gpu_hours=billed,
        demand_gpu_hours=w.gpu_hours,
    )


def _managed_compute(cfg: CostsConfig, o: ManagedOption, w: Workload) -> tuple[list[Line], Decimal]:
    """Billed job time, the overheads billed per attempt, the endpoint; and billed GPU-hours."""
    d = cfg.data
    price = o.price_per_gpu_hour
    gpus = w.mean_gpus_per_attempt
    lines = [
        _line(
            "compute",
            message(
                "cost",
                "job time: {hours} x {price:num} per GPU-hour",
                hours=words.gpu_hours(w.gpu_hours),
                price=figure(price.amount),
            ),
            w.gpu_hours * price.amount,
            price,
        )
    ]
    billed = w.gpu_hours
    # Per-job durations are not in the profile evidence: rounding up to the billing increment
    # is taken as half an increment per attempt, on the mean GPUs an attempt holds.
    extra: list[tuple[Decimal, bool, Callable[..., Message]]] = [
        (
            o.billing_increment_minutes / 2,
            True,
            lambda **done: message(
                "cost",
                "billing increment: {attempts} x {minutes:num} min per attempt (on average half "
                "of the {increment:num}-min increment) x {gpus} = {gpu_hours} x {price:num} per "
                "GPU-hour",
                increment=figure(o.billing_increment_minutes),
                **done,
            ),
        ),
        (
            o.startup_minutes_per_job,
            o.startup_billed,
            lambda **done: message(
                "cost",
                "environment start-up: {attempts} x {minutes:num} min per attempt x {gpus} = "
                "{gpu_hours} x {price:num} per GPU-hour",
                **done,
            ),
        ),
        (
            d.loaded_gb_per_job * o.loading_minutes_per_gb,
            o.loading_billed,
            lambda **done: message(
                "cost",
                "data loading: {attempts} x {minutes:num} min per attempt ({gb:num} GB x "
                "{rate:num} min/GB) x {gpus} = {gpu_hours} x {price:num} per GPU-hour",
                gb=figure(d.loaded_gb_per_job),
                rate=figure(o.loading_minutes_per_gb),
                **done,
            ),
        ),
    ]
    for minutes, is_billed, say in extra:
        if not is_billed or minutes <= 0:
            continue
        gpu_h = w.attempts * minutes / 60 * gpus
        billed += gpu_h
        text = say(
            attempts=words.attempts(w.attempts),
            minutes=figure(minutes),
            gpus=words.gpus(gpus),
            gpu_hours=words.gpu_hours(gpu_h),
            price=figure(price.amount),
        )
        lines.append(_line("compute", text, gpu_h * price.amount, price))
    if o.endpoint_price_per_hour is not None and o.endpoint_hours_per_training > 0:
        e = o.endpoint_price_per_hour
        lines.append(
            _line(
                "compute",
                message(
                    "cost",
                    "endpoint until deletion: {trainings} x {hours:num} h x {price:num} per hour",
                    trainings=words.trainings(w.trainings),
                    hours=figure(o.endpoint_hours_per_training),
                    price=figure(e.amount),
                ),
                w.trainings * o.endpoint_hours_per_training * e.amount,
                e,
            )
        )
    return lines, billed


def _managed_storage(cfg: CostsConfig, o: ManagedOption, w: Workload) -> list[Line]:
    """Data kept plus job artifacts inside the retention period."""
    d = cfg.data
    s = o.storage_price_per_gb_month
    keep = retention_months(cfg, o.retention_days)
    if w.attempts > 0:
        kept = w.attempts * d.artifacts_gb_per_job * keep
        how = message(
            "cost",
            "{attempts} x {gb:num} GB kept {days}",
            attempts=words.attempts(w.attempts),
            gb=figure(d.artifacts_gb_per_job),
            days=words.days(o.retention_days),
        )
    else:
        before = w.prior.attempts if w.prior is not None else ZERO
        kept = before * d.artifacts_gb_per_job * _carried_over(keep)
        how = message(
            "cost",
            "earlier artifacts still inside {days} of retention",
            days=words.days(o.retention_days),
        )
    return [
        _line(
            "storage",
            message(
                "cost",
                "storage: ({gb:num} GB kept + {kept:num} GB: {how}) x {price:num} per GB-month",
                gb=figure(d.stored_gb),
                kept=figure(kept),
                how=how,
                price=figure(s.amount),
            ),
            (d.stored_gb + kept) * s.amount,
            s,
        )
    ]


def _managed_transfer(cfg: CostsConfig, o: ManagedOption, w: Workload) -> list[Line]:
    """Ingest per attempt and egress per training."""
    d = cfg.data
    lines: list[Line] = []
    if o.ingest_price_per_gb is not None and w.attempts > 0:
        i = o.ingest_price_per_gb
        lines.append(
            _line(
                "data_transfer",
                message(
                    "cost",
                    "data in: {attempts} x {gb:num} GB x {price:num} per GB",
                    attempts=words.attempts(w.attempts),
                    gb=figure(d.loaded_gb_per_job),
                    price=figure(i.amount),
                ),
                w.attempts * d.loaded_gb_per_job * i.amount,
                i,
            )
        )
    if o.egress_price_per_gb is not None and w.trainings > 0:
        lines.append(_egress(cfg, w, o.egress_price_per_gb))
    return lines


def _minimum_spend(o: ManagedOption, usage: list[Line]) -> list[Line]:
    """A minimum monthly commitment is a floor, not a fee: usage below it is topped up (C5)."""
    floor = o.minimum_monthly_spend
    if floor is None:
        return []
    used = sum((ln.amount for ln in usage), ZERO)
    if used >= floor.amount:
        return []
    return [
        _line(
            "compute",
            message(
                "cost",
                "minimum monthly commitment: usage of {used:num} is below the floor of "
                "{floor:num}, topped up by the difference",
                used=figure(used),
                floor=figure(floor.amount),
            ),
            floor.amount - used,
            floor,
        )
    ]


def split(w: Workload, h: HybridOption, base_gpus: int) -> tuple[Workload, Workload, Message]:
    """The part of a month a hybrid keeps on its base pool, the part it sends out, and how
    the work was split (H1)."""
    jobs = sum(w.jobs_by_kind.values(), ZERO)
    attempts_per_job = w.attempts / jobs if jobs > 0 else ZERO
    rule = h.overflow_rule
    if rule.rule == "kinds":
        over_hours = w.gpu_hours_of(list(rule.kinds))
        over_jobs = {k: (v if k in rule.kinds else ZERO) for k, v in w.jobs_by_kind.items()}
        how = message(
            "cost", "job kinds {kinds} go to {option}", kinds=list(rule.kinds), option=h.overflow
        )
    else:
        over_hours = w.gpu_hours_above(base_gpus)
        part_out = over_hours / w.gpu_hours if w.gpu_hours > 0 else ZERO
        over_jobs = {k: v * part_out for k, v in w.jobs_by_kind.items()}
        how = message(
            "cost",
            "demand above the base pool's {gpus} goes to {option} (upper bound: the profile "
            "keeps the busiest moment of each time bucket; jobs split in proportion)",
            gpus=words.gpus(base_gpus),
            option=h.overflow,
        )
    base_jobs = {k: v - over_jobs[k] for k, v in w.jobs_by_kind.items()}
    over_attempts = sum(over_jobs.values(), ZERO) * attempts_per_job

    def part(hours: Decimal, by_kind: dict[str, Decimal], attempts: Decimal) -> Workload:
        return replace(
            w,
            gpu_hours=hours,
            useful_gpu_hours=hours * w.useful_share,
            attempts=attempts,
            jobs_by_kind=by_kind,
            prior=None,
        )

    over = part(over_hours, over_jobs, over_attempts)
    base = part(w.gpu_hours - over_hours, base_jobs, w.attempts - over_attempts)
    if w.prior is not None:
        # An empty month: what earlier months stored stays on the side that stored it.
        prior_base, prior_over, _ = split(w.prior, h, base_gpus)
        base, over = replace(base, prior=prior_base), replace(over, prior=prior_over)
    return base, over, how


def _hybrid(cfg: CostsConfig, h: HybridOption, w: Workload) -> MonthCost:
    base_opt = cfg.option(h.base)
    over_opt = cfg.option(h.overflow)
    assert isinstance(base_opt, OwnedOption | RentedOption)  # schema check
    assert isinstance(over_opt, ManagedOption)
    base_w, over_w, how = split(w, h, base_opt.pool_gpus)
    base = month_cost(cfg, base_opt, base_w)
    over = month_cost(cfg, over_opt, over_w)
    # The hybrid's own labour and waiting replace those of its parts: running two contours
    # is its own staffing, and a wait is felt once.
    own = ("engineer_labour", "waiting_cost")
    lines = [
        replace(
            ln,
            text=message("cost", "base {option}: {label}", option=base_opt.id, label=ln.text),
        )
        for ln in base.lines
        if ln.component not in own
    ] + [
        replace(
            ln,
            text=message("cost", "overflow {option}: {label}", option=over_opt.id, label=ln.text),
        )
        for ln in over.lines
        if ln.component not in own
    ]
    lines += _labour(h.labour) + _waiting(h.waiting, w)
    return MonthCost(
        option_id=h.id,
        lines=lines,
        useful_gpu_hours=base.useful_gpu_hours + over.useful_gpu_hours,
        available_gpu_hours=base.available_gpu_hours + over.available_gpu_hours,
        demand_gpu_hours=w.gpu_hours,
        note_messages=[
            message("cost", "{option}: {how}", option=h.id, how=how),
            *base.note_messages,
        ],
    )


def month_cost(cfg: CostsConfig, option: Option, w: Workload) -> MonthCost:
    """Every C1 component of `option` in the month `w` (SPEC C1-C7, C9, C10)."""
    if isinstance(option, OwnedOption):
        return _owned(cfg, option, w)
    if isinstance(option, RentedOption):
        return _rented(cfg, option, w)
    if isinstance(option, ManagedOption):
        return _managed(cfg, option, w)
    return _hybrid(cfg, option, w)


def pool_gpus(cfg: CostsConfig, option: Option) -> int | None:
    """GPUs of a dedicated pool (a hybrid's base), None for a managed option."""
    if isinstance(option, OwnedOption | RentedOption):
        return option.pool_gpus
    if isinstance(option, HybridOption):
        return pool_gpus(cfg, cfg.option(option.base))
    return None


def reversibility(cfg: CostsConfig, option: Option) -> dict[str, Any] | None:
    """V2: what shrinking an option costs and takes if load drops after a while; `how` in
    English."""
    found = shrinking(cfg, option)
    if found is None:
        return None
    figures, how = found
    return {**figures, "how": english(how)}


def shrinking(cfg: CostsConfig, option: Option) -> tuple[dict[str, Any], Message] | None:
    """V2 figures of leaving or shrinking an option if load drops after `exit_after_months`,
    and how it goes (a message).

    Every kind pays what its contracts still bind it to: owned, the loss on selling the
    servers and the rack's commitment; rented, the pool, its provisioned storage and fixed
    fees for the commitment left and the notice; managed, its minimum monthly spend (or the
    data still kept), fixed fees for the commitment left and the notice, and the egress of
    the data kept at the vendor; a hybrid, both of its contracts.
    """
    if isinstance(option, HybridOption):
        return _hybrid_shrinking(cfg, option)
    if isinstance(option, OwnedOption):
        return _owned_shrinking(cfg, option)
    if isinstance(option, RentedOption):
        return _rented_shrinking(cfg, option)
    return _managed_shrinking(cfg, option)


def _days_per_month(cfg: CostsConfig) -> Decimal:
    return cfg.hours_per_month / 24


def _rented_committed(cfg: CostsConfig, option: RentedOption) -> Decimal:
    """What a rented pool bills every month whether used or not: the pool, its provisioned
    storage and fixed fees (C4)."""
    monthly = _rented_pool_line(cfg, option).amount
    if option.storage_gb > 0 and option.storage_price_per_gb_month is not None:
        monthly += cents(option.storage_gb * option.storage_price_per_gb_month.amount)
    return monthly + sum((f.price_per_month.amount for f in option.fees), ZERO)


def _rented_shrinking(cfg: CostsConfig, option: RentedOption) -> tuple[dict[str, Any], Message]:
    """V2 for a rented pool: its committed charges for the commitment left and the notice."""
    after = cfg.exit_after_months
    dpm = _days_per_month(cfg)
    monthly = _rented_committed(cfg, option)
    left = max(0, option.min_commitment_months - after)
    notice = option.scale_down_notice_days
    cost = monthly * left + monthly * notice / dpm
    step = option.scale_down_step_gpus
    release = (
        message(
            "cost",
            "release {gpus} at a time with {days} of notice after the commitment",
            gpus=words.gpus(step),
            days=words.days(notice),
        )
        if step
        else message(
            "cost",
            "capacity cannot be reduced: only the whole contract ends, after the commitment",
        )
    )
    owed = _owed(
        monthly, message("cost", "the pool, its provisioned storage and fixed fees"), left, notice
    )
    figures = {
        "kind": "rented",
        "exit_after_months": after,
        "commitment_months_left": left,
        "scale_down_step_gpus": step,
        "notice_days": notice,
        "committed_monthly": str(cents(monthly)),
        "committed_payments_left": str(cents(monthly * left)),
        "cost_to_shrink": str(cents(cost)),
        "days_to_shrink": round(float(left * dpm + notice), 1),
    }
    return figures, message("cost", "{parts}", parts=[release, owed])


def _owned_shrinking(cfg: CostsConfig, option: OwnedOption) -> tuple[dict[str, Any], Message]:
    """V2 for owned servers: the loss on selling them and the rack still owed."""
    after = cfg.exit_after_months
    bought = sum((i.quantity * i.unit_price.amount for i in option.capex), ZERO)
    book = sum(
        (
            i.quantity
            * i.unit_price.amount
            * max(0, (i.write_off_months or option.write_off_months) - after)
            / (i.write_off_months or option.write_off_months)
            for i in option.capex
        ),
        ZERO,
    )
    resale = bought * option.exit.resale_share
    colo = option.colocation
    colo_left = max(0, colo.commitment_months - after) if colo else 0
    colo_cost = colo_left * colo.price_per_month.amount if colo else ZERO
    loss = book - resale
    figures = {
        "kind": "owned",
        "exit_after_months": after,
        "months_left_to_write_off": max(0, option.write_off_months - after),
        "commitment_months_left": colo_left,
        "book_value": str(cents(book)),
        "resale_value": str(cents(resale)),
        "loss_on_sale": str(cents(loss)),
        "committed_payments_left": str(cents(colo_cost)),
        "cost_to_shrink": str(cents(loss + colo_cost)),
        "days_to_shrink": float(option.exit.weeks_to_shrink * 7),
    }
    how = message(
        "cost",
        "sell the servers ({share:pct0} of the purchase price assumed), pay the rack for "
        "{months} more, move jobs within {weeks}",
        share=share(option.exit.resale_share, 0),
        months=words.months(colo_left),
        weeks=words.weeks(option.exit.weeks_to_shrink),
    )
    return figures, how


def _managed_committed(cfg: CostsConfig, option: ManagedOption) -> Decimal:
    """What a managed contract bills every month with no jobs: the larger of its minimum
    spend and the storage of the data kept, and its fixed fees."""
    kept = cfg.data.stored_gb * option.storage_price_per_gb_month.amount
    floor = option.minimum_monthly_spend.amount if option.minimum_monthly_spend else ZERO
    return cents(max(floor, kept)) + sum((f.price_per_month.amount for f in option.fees), ZERO)


def _managed_shrinking(cfg: CostsConfig, option: ManagedOption) -> tuple[dict[str, Any], Message]:
    """V1/V2 for a managed option: no pool to shrink, but its contract runs to the end of
    the commitment and the notice, and leaving moves the kept data out.

    The time to move a run out is measured by the export audit and the export test; the
    decision's reversibility joins it with these figures.
    """
    after = cfg.exit_after_months
    dpm = _days_per_month(cfg)
    gb = cfg.data.stored_gb
    price = option.egress_price_per_gb
    egress = gb * price.amount if price is not None else None
    monthly = _managed_committed(cfg, option)
    left = max(0, (option.min_commitment_months or 0) - after)
    notice = option.notice_days or 0
    committed = monthly * left
    figures = {
        "kind": "managed",
        "exit_after_months": after,
        "commitment_months_left": left,
        "notice_days": option.notice_days,
        "committed_monthly": str(cents(monthly)),
        "committed_payments_left": str(cents(committed)),
        "gb_to_move_out": float(gb),
        "egress_cost": None if egress is None else str(cents(egress)),
        "cost_to_shrink": str(cents(committed + monthly * notice / dpm + (egress or ZERO))),
        "days_to_shrink": round(float(left * dpm + notice), 1),
    }
    return figures, message("cost", "{parts}", parts=_managed_terms(cfg, option, monthly, left))


def _owed(monthly: Decimal, what: Message, left: int, notice: int) -> Message:
    """What a contract still bills when load drops, and for how long."""
    return message(
        "cost",
        "{monthly:num} a month ({what}) for {months} of commitment left and {notice} of notice",
        monthly=figure(monthly),
        what=what,
        months=words.months(left),
        notice=words.days(notice),
    )


def _managed_owed(cfg: CostsConfig, option: ManagedOption) -> Message:
    """What a managed contract bills each month with no jobs, in words."""
    kept = cfg.data.stored_gb * option.storage_price_per_gb_month.amount
    floor = option.minimum_monthly_spend
    fees = bool(option.fees)
    if floor is not None and floor.amount >= kept:
        if fees:
            return message("cost", "the minimum spend and fixed fees")
        return message("cost", "the minimum spend")
    if kept > 0:
        if fees:
            return message("cost", "storage of the data kept and fixed fees")
        return message("cost", "storage of the data kept")
    return message("cost", "fixed fees")


def _managed_terms(
    cfg: CostsConfig, option: ManagedOption, monthly: Decimal, left: int
) -> list[Message]:
    """How leaving a managed option goes: what the contract still bills and for how long,
    what costs.yaml does not say about it, and the data to move out."""
    gb = cfg.data.stored_gb
    parts: list[Message] = []
    if monthly > 0:
        parts.append(_owed(monthly, _managed_owed(cfg, option), left, option.notice_days or 0))
    else:
        parts.append(message("cost", "billed per use: nothing is owed once the jobs stop"))
    if option.min_commitment_months is None and option.minimum_monthly_spend is not None:
        parts.append(
            message(
                "cost",
                "the minimum term is not in costs.yaml (min_commitment_months): the commitment "
                "left is taken as none",
            )
        )
    if option.notice_days is None:
        parts.append(
            message(
                "cost",
                "the notice period is not in costs.yaml (notice_days): taken as none, so the "
                "cost and days to leave are a lower bound",
            )
        )
    price = option.egress_price_per_gb
    parts.append(
        message(
            "cost",
            "leaving moves {gb:num} GB kept at the vendor out at {price:num} per GB",
            gb=figure(gb),
            price=figure(price.amount),
        )
        if price is not None
        else message(
            "cost",
            "leaving moves {gb:num} GB kept at the vendor out (egress price not in the "
            "contract: ask)",
            gb=figure(gb),
        )
    )
    parts.append(message("cost", "the time and manual steps come from the export test"))
    return parts


def _hybrid_shrinking(cfg: CostsConfig, option: HybridOption) -> tuple[dict[str, Any], Message]:
    """V2 for a hybrid: its base pool's figures (`of_base`), its overflow's (`overflow`), and
    the cost and days of leaving both (the two run side by side)."""
    base = cfg.option(option.base)
    over = cfg.option(option.overflow)
    assert isinstance(base, OwnedOption | RentedOption)  # schema check
    assert isinstance(over, ManagedOption)
    if isinstance(base, OwnedOption):
        base_figures, base_how = _owned_shrinking(cfg, base)
    else:
        base_figures, base_how = _rented_shrinking(cfg, base)
    over_figures, over_how = _managed_shrinking(cfg, over)
    cost = Decimal(base_figures["cost_to_shrink"]) + Decimal(over_figures["cost_to_shrink"])
    figures = {
        **base_figures,
        "of_base": option.base,
        "overflow": {**over_figures, "how": english(over_how), "how_message": over_how},
        "cost_to_shrink": str(cents(cost)),
        "days_to_shrink": max(base_figures["days_to_shrink"], over_figures["days_to_shrink"]),
    }
    how = message(
        "cost",
        "base {base}: {base_how}; overflow {overflow}: {overflow_how}",
        base=option.base,
        base_how=base_how,
        overflow=option.overflow,
        overflow_how=over_how,
    )
    return figures, how
