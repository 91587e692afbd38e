"""A drill's journal, shaped like a Chaos Toolkit journal (SPEC G4).

One JSON file per drill run: the experiment (title, steady-state hypothesis, method,
rollbacks), the steady state probed before and after, each activity as it ran (the injected
fault among them), the observations, the rollbacks (which always run), the verdict and a
timeline with UTC timestamps. The file is written atomically once the drill ends, whatever
way it ends.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpudecide import __version__
from gpudecide.drills.job import now_iso
from gpudecide.fsutil import atomic_write_text

__all__ = [
    "STOP_SIGNALS",
    "Journal",
    "Probe",
    "always",
    "rollbacks",
    "stopped_by_signals",
]

# What stops a drill from outside: Ctrl-C, `kill`, a closed terminal.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@dataclass
class Probe:
    """One steady-state check: its name, whether it held, what it measured."""

    name: str
    ok: bool
    detail: Any = None

    def as_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"name": self.name, "tolerance_met": self.ok, "output": self.detail}


@dataclass
class Journal:
    """Collects everything a drill did, in order; `write` saves it."""

    drill: str
    title: str
    description: str
    hypothesis: str
    started: str = field(default_factory=now_iso)
    timeline: list[dict[str, Any]] = field(default_factory=list)
    run: list[dict[str, Any]] = field(default_factory=list)
    rollbacks: list[dict[str, Any]] = field(default_factory=list)
    observations: list[dict[str, Any]] = field(default_factory=list)
    before: list[Probe] = field(default_factory=list)
    after: list[Probe] = field(default_factory=list)
    fault: dict[str, Any] = field(default_factory=dict)
    _t0: float = field(default_factory=time.monotonic)

    def event(self, what: str, **detail: Any) -> None:
        """A timeline entry, stamped now (UTC)."""
        self.timeline.append({"at": now_iso(), "event": what, **detail})

    def observe(self, what: str, value: Any) -> None:
        """Something the drill saw (a status, a step, an error message)."""
        self.observations.append({"at": now_iso(), "name": what, "value": value})

    @contextmanager
    def activity(self, kind: str, name: str, *, rollback: bool = False) -> Iterator[dict[str, Any]]:
        """Time one action or probe; its record lands in run or rollbacks, failed or not."""
        record: dict[str, Any] = {
            "activity": {"type": kind, "name": name},
            "start": now_iso(),
            "status": "succeeded",
        }
        t = time.monotonic()
        self.event(f"{'rollback' if rollback else kind} started", name=name)
        try:
            yield record
        except BaseException as exc:
            record["status"] = "failed"
            record["exception"] = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            record["end"] = now_iso()
            record["duration"] = round(time.monotonic() - t, 3)
            (self.rollbacks if rollback else self.run).append(record)
            self.event(
                f"{'rollback' if rollback else kind} ended", name=name, status=record["status"]
            )

    def steady(self, when: str, probes: list[Probe]) -> bool:
        """Record the steady-state probes before or after the fault; whether all held."""
        (self.before if when == "before" else self.after).extend(probes)
        ok = all(p.ok for p in probes)
        self.event(f"steady state {when}", met=ok)
        return ok

    def as_dict(self, verdict: dict[str, Any]) -> dict[str, Any]:
        """The journal as JSON (Chaos Toolkit field names where they exist)."""
        before_ok = all(p.ok for p in self.before)
        after_ok = all(p.ok for p in self.after)
        return {
            "chaoslib-version": None,
            "generator": f"gpudecide {__version__}",
            "experiment": {
                "title": self.title,
                "description": self.description,
                "steady-state-hypothesis": {
                    "title": self.hypothesis,
                    "probes": [p.name for p in self.before],
                },
                "method": [r["activity"] for r in self.run],
                "rollbacks": [r["activity"] for r in self.rollbacks],
            },
            "drill": self.drill,
            "start": self.started,
            "end": now_iso(),
            "duration": round(time.monotonic() - self._t0, 3),
            "status": "completed" if verdict.get("verdict") == "pass" else "failed",
            "deviated": not after_ok,
            "steady_states": {
                "before": {
                    "steady_state_met": before_ok,
                    "probes": [p.as_dict() for p in self.before],
                },
                "after": {
                    "steady_state_met": after_ok,
                    "probes": [p.as_dict() for p in self.after],
                },
            },
            "fault": self.fault,
            "run": self.run,
            "rollbacks": self.rollbacks,
            "observations": self.observations,
            "verdict": verdict,
            "timeline": self.timeline,
        }

    def write(self, path: Path, verdict: dict[str, Any]) -> Path:
        """Save the journal atomically."""
        atomic_write_text(path, json.dumps(self.as_dict(verdict), indent=2, default=str) + "\n")
        return path


def always(journal: Journal, name: str, action: Callable[[], Any]) -> None:
    """Run a rollback; its failure is recorded, never raised (the next rollback still runs)."""
    try:
        with journal.activity("action", name, rollback=True) as rec:
            rec["output"] = action()
    except Exception:
        return


class _Stopped(KeyboardInterrupt):
    """A drill stopped by a signal: unwinds like Ctrl-C, so that every rollback runs."""


@contextmanager
def stopped_by_signals() -> Iterator[None]:
    """While a game day runs, SIGTERM and SIGHUP unwind it as SIGINT does (a
    KeyboardInterrupt): the drills' rollbacks (unmount, give access back, stop the jobs) run
    before the process ends, instead of the default of dying on the spot. A signal the
    process was started ignoring stays ignored: under `nohup` a closed terminal must not
    end the game day. Only the main thread can handle signals; elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: object) -> None:
        raise _Stopped(signal.Signals(signum).name)

    saved = {
        sig: signal.signal(sig, stop)
        for sig in STOP_SIGNALS[1:]
        if signal.getsignal(sig) is not signal.SIG_IGN
    }
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


@contextmanager
def rollbacks() -> Iterator[None]:
    """Rollbacks run to their end: a stop signal that arrives meanwhile waits until the last
    one is done (the signals are blocked, then delivered)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
