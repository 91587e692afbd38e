"""Every share of GPU-hours the cost evidence stands on, each with its name (SPEC C2, C8).

The same pool has several utilisations, each true of something else: the cost analysis's
normal and peak month (useful or occupied GPU-hours over the pool's GPU-hours around the
clock), the profile's whole log, a replay's window. A managed option has no pool: its share
is of the GPU-hours it billed, not a utilisation. `named_shares` lists them side by side for
the record (`figures["utilisation"]`), each named by `gpudecide.cost.words.utilisation` with
what was counted, of which hours, over which window and pool, so that no figure is read
for another.
"""

from __future__ import annotations

from typing import Any

from gpudecide import evidence as ev
from gpudecide.cost import words
from gpudecide.cost.regimes import Regime, Regimes
from gpudecide.cost.schema import HybridOption, ManagedOption, Option
from gpudecide.cost.tco import MonthCost
from gpudecide.message import Message, english

__all__ = ["MONTHS", "named_shares", "observed"]

# The months whose shares are named (the empty month has no work: its shares are 0 or none).
MONTHS: tuple[Regime, ...] = ("normal", "peak")


def _share(value: Any) -> float | None:
    return None if value is None else round(float(value), 4)


def _entry(
    options: list[str],
    gpus: int | None,
    source: str,
    evidence: str | None,
    measure: str,
    of: str,
    window: str,
    share: float | None,
    name: Message,
) -> dict[str, Any]:
    return {
        "options": options,
        "pool_gpus": gpus,
        "source": source,
        "evidence": evidence,
        "measure": measure,
        "of": of,
        "window": window,
        "share": share,
        "name": english(name),
        "name_message": name,
    }


def _kind(option: Option) -> str:
    if isinstance(option, ManagedOption):
        return "billed"
    if isinstance(option, HybridOption):
        return "paid"
    return "pool"


def _cost_entries(
    option: Option,
    ids: list[str],
    gpus: int | None,
    months: dict[str, MonthCost],
    regimes: Regimes,
) -> list[dict[str, Any]]:
    """The normal and peak month's shares of one option (of a dedicated pool: useful and
    occupied)."""
    of = _kind(option)
    overflow = option.overflow if isinstance(option, HybridOption) else ""
    out = []
    for r in MONTHS:
        m = months[r]
        work = regimes.get(r)
        window = words.month_window(r, (work.window or {}).get("weeks"))
        useful = words.utilisation("useful", of, window, gpus=gpus, overflow=overflow)
        out.append(
            _entry(ids, gpus, "cost", None, "useful", of, r, _share(m.useful_utilisation), useful)
        )
        if of == "pool" and m.available_gpu_hours > 0:
            occupied = min(m.demand_gpu_hours, m.available_gpu_hours) / m.available_gpu_hours
            name = words.utilisation("occupied", of, window, gpus=gpus)
            out.append(_entry(ids, gpus, "cost", None, "occupied", of, r, _share(occupied), name))
    return out


def _profile_entries(profile: ev.Evidence, gpus: int, ids: list[str]) -> list[dict[str, Any]]:
    """The profile's own shares of a pool of `gpus` GPUs, when it was given one that size
    (C2 over the whole log)."""
    f = profile.figures
    if f.get("pool_gpus") != gpus:
        return []
    window = words.log_window((f.get("window") or {}).get("weeks") or 0)
    out = []
    for measure, key in (("useful", "busy_share"), ("occupied", "occupied_share")):
        if f.get(key) is not None:
            name = words.utilisation(measure, "pool", window, gpus=gpus)
            out.append(
                _entry(
                    ids, gpus, "profile", profile.id, measure, "pool", "log", _share(f[key]), name
                )
            )
    return out


def _replay_entries(replays: list[ev.Evidence], gpus: int, ids: list[str]) -> list[dict[str, Any]]:
    """Each replay's occupied share of a pool of `gpus` GPUs, over the replay's window."""
    out = []
    for record in replays:
        win = record.figures.get("window") or {}
        kind = win.get("kind")
        window = words.replay_window(kind, win.get("start"), win.get("end"))
        for pool in record.figures.get("pools") or []:
            if not isinstance(pool, dict) or pool.get("gpus") != gpus:
                continue
            if pool.get("utilisation") is None:
                continue
            name = words.utilisation("occupied", "pool", window, gpus=gpus)
            out.append(
                _entry(
                    ids,
                    gpus,
                    "replay",
                    record.id,
                    "occupied",
                    "pool",
                    str(kind),
                    _share(pool["utilisation"]),
                    name,
                )
            )
    return out


def named_shares(
    options: list[Option],
    gpus_of: dict[str, int | None],
    months: dict[str, dict[str, MonthCost]],
    regimes: Regimes,
    profile: ev.Evidence,
    replays: list[ev.Evidence],
) -> list[dict[str, Any]]:
    """Every share of GPU-hours of the compared options, named: per dedicated pool size the
    cost's months, the profile's whole log and each replay's window (dedicated options of one
    size share one pool's figures); per managed or hybrid option its own month shares (a
    hybrid's base pool takes only part of the work, so the log's shares are not its own)."""
    pools: dict[int, list[str]] = {}
    for o in options:
        gpus = gpus_of[o.id]
        if _kind(o) == "pool" and gpus is not None:
            pools.setdefault(gpus, []).append(o.id)
    out: list[dict[str, Any]] = []
    shown: set[int] = set()
    for o in options:
        gpus = gpus_of[o.id]
        if _kind(o) != "pool" or gpus is None:
            out += _cost_entries(o, [o.id], gpus, months[o.id], regimes)
            continue
        if gpus in shown:
            continue
        shown.add(gpus)
        ids = pools[gpus]
        out += _cost_entries(o, ids, gpus, months[o.id], regimes)
        out += _profile_entries(profile, gpus, ids)
        out += _replay_entries(replays, gpus, ids)
    return out


def observed(shares: list[dict[str, Any]], option: str) -> list[Message]:
    """The useful utilisation the cost measured for a dedicated option in the normal and
    peak month, each as its named figure."""
    return [
        words.utilisation_figure(s["name_message"], s["share"])
        for s in shares
        if s["source"] == "cost" and s["measure"] == "useful" and option in s["options"]
    ]
