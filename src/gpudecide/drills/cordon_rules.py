"""The rules of `gpudecide cordon`: per-Xid actions, error-rate thresholds, breaker (SPEC G2, G3).

Defaults follow NVIDIA's Xid catalogue (docs.nvidia.com/deploy/xid-errors): errors that leave
the GPU unusable until it is reset (48 double-bit ECC, 64 remapper recording failure, 79 fell
off the bus, 95 uncontained ECC, 119/120 GSP errors) drain the node; errors NVIDIA treats as
contained or informational (63 page retirement / row remap recorded, 94 contained ECC) are
watched, not acted on; application faults (13, 31, 43, 45) say nothing about the hardware.
A workspace overrides any of it in `cordon.yaml` (template written by `gpudecide init`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gpudecide.i18n import N_
from gpudecide.inputs import load_yaml_model

__all__ = [
    "ACTIONS",
    "BUILT_IN_WHYS",
    "DEFAULT_XIDS",
    "RULES_NAME",
    "UNKNOWN_XID_WHY",
    "Action",
    "Breaker",
    "Commands",
    "CordonRules",
    "CorrectedErrors",
    "MemoryRules",
    "XidRule",
    "load",
    "severity",
]

Action = Literal["ok", "watch", "cordon", "drain-and-reset", "replace"]
ACTIONS: tuple[Action, ...] = ("ok", "watch", "cordon", "drain-and-reset", "replace")
RULES_NAME = "cordon.yaml"


def severity(action: Action) -> int:
    """Order of actions: ok < watch < cordon < drain-and-reset < replace."""
    return ACTIONS.index(action)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class XidRule(_Strict):
    """What one Xid means and what to do about it."""

    xid: int = Field(ge=1, description="Xid number from the kernel log.")
    action: Action = Field(description="ok | watch | cordon | drain-and-reset | replace.")
    why: str = Field(description="What the Xid means (NVIDIA's Xid catalogue).")
    replace_after: int | None = Field(
        default=None, ge=1, description="This many of it on one GPU in the window: replace."
    )


DEFAULT_XIDS: tuple[XidRule, ...] = (
    XidRule(xid=13, action="ok", why=N_("graphics engine exception: usually the application")),
    XidRule(xid=31, action="ok", why=N_("GPU memory page fault: usually the application")),
    XidRule(xid=43, action="ok", why=N_("GPU stopped processing: the application was stopped")),
    XidRule(xid=45, action="ok", why=N_("preemptive cleanup after an application was stopped")),
    XidRule(
        xid=48,
        action="drain-and-reset",
        why=N_("double-bit ECC error: uncorrectable memory error"),
        replace_after=2,
    ),
    XidRule(xid=61, action="drain-and-reset", why=N_("internal micro-controller breakpoint")),
    XidRule(xid=62, action="drain-and-reset", why=N_("internal micro-controller halt")),
    XidRule(
        xid=63, action="watch", why=N_("ECC page retirement or row remapping recorded (contained)")
    ),
    XidRule(
        xid=64,
        action="drain-and-reset",
        why=N_("ECC page retirement or row remapper recording failure"),
        replace_after=2,
    ),
    XidRule(xid=74, action="drain-and-reset", why=N_("NVLink error")),
    XidRule(
        xid=79,
        action="drain-and-reset",
        why=N_("GPU has fallen off the bus"),
        replace_after=2,
    ),
    XidRule(xid=92, action="watch", why=N_("high single-bit ECC error rate")),
    XidRule(
        xid=94, action="watch", why=N_("contained ECC error: the affected application stopped")
    ),
    XidRule(
        xid=95,
        action="drain-and-reset",
        why=N_("uncontained ECC error: every application affected"),
    ),
    XidRule(xid=119, action="drain-and-reset", why=N_("GSP RPC timeout")),
    XidRule(xid=120, action="drain-and-reset", why=N_("GSP error")),
    XidRule(xid=140, action="drain-and-reset", why=N_("unrecovered ECC error")),
    XidRule(
        xid=154, action="drain-and-reset", why=N_("GPU recovery action: reset or reboot required")
    ),
)


class CorrectedErrors(_Strict):
    """Thresholds on the rate of corrected (single-bit) errors: the G2 case."""

    window_hours: float = Field(
        default=24.0, gt=0, description="Rate measured over the last this many hours of samples."
    )
    watch_per_hour: float = Field(
        default=1.0, gt=0, description="Corrected errors per hour from which a GPU is watched."
    )
    cordon_per_hour: float = Field(
        default=10.0, gt=0, description="Corrected errors per hour from which it is cordoned."
    )
    min_samples: int = Field(
        default=2, ge=2, description="Timed samples needed in the window to compute a rate."
    )


class MemoryRules(_Strict):
    """Retired pages and remapped rows."""

    replace_retired_pages: int = Field(
        default=60, ge=1, description="Retired pages (single + double bit) from which: replace."
    )
    uncorrected_action: Action = Field(
        default="drain-and-reset", description="Action on any uncorrected volatile ECC error."
    )
    pending_action: Action = Field(
        default="drain-and-reset",
        description="Action when a page retirement or row remap waits for a GPU reset.",
    )
    remap_failure_action: Action = Field(
        default="replace", description="Action when row remapping failed (no spare rows)."
    )


class Breaker(_Strict):
    """Circuit breaker: never take more than a share of the fleet out at once."""

    max_share: float = Field(
        default=0.25, gt=0, le=1, description="Largest share of nodes acted on in one run."
    )
    fleet_nodes: int | None = Field(
        default=None, ge=1, description="Nodes in the fleet; null: the nodes in the telemetry."
    )


class Commands(_Strict):
    """How the scheduler is told."""

    orchestrator: Literal["slurm", "kubernetes"] = Field(
        default="slurm", description="slurm (scontrol) or kubernetes (kubectl)."
    )
    scontrol: str = Field(default="scontrol", description="The scontrol program.")
    kubectl: str = Field(default="kubectl", description="The kubectl program.")
    taint_key: str = Field(
        default="gpudecide.io/gpu-health", description="Kubernetes taint key used."
    )


class CordonRules(_Strict):
    """Schema of cordon.yaml."""

    version: Literal[1] = Field(default=1, description="Schema version of this file.")
    option: str | None = Field(
        default=None,
        description="Id of the option (contour) whose nodes the telemetry is from, as declared "
        "in gpudecide.yaml; --option overrides it.",
    )
    xid: list[XidRule] = Field(
        default_factory=lambda: list(DEFAULT_XIDS),
        description="Per-Xid actions; an Xid not listed gets `unknown_xid_action`.",
    )
    unknown_xid_action: Action = Field(
        default="watch", description="Action on an Xid the list does not name."
    )
    corrected_errors: CorrectedErrors = Field(default_factory=CorrectedErrors)
    memory: MemoryRules = Field(default_factory=MemoryRules)
    breaker: Breaker = Field(default_factory=Breaker)
    commands: Commands = Field(default_factory=Commands)

    def xid_rule(self, xid: int) -> XidRule:
        """The rule for one Xid (an unlisted one: the unknown-Xid action)."""
        for rule in self.xid:
            if rule.xid == xid:
                return rule
        return XidRule(xid=xid, action=self.unknown_xid_action, why=UNKNOWN_XID_WHY)


UNKNOWN_XID_WHY = N_("not in the Xid rules")
# The built-in meanings (translated for ru/kk readers); a team's own `why` is shown as written.
BUILT_IN_WHYS = frozenset({*(r.why for r in DEFAULT_XIDS), UNKNOWN_XID_WHY})


def load(path: Path | None) -> CordonRules:
    """Rules from a file, or the defaults."""
    return CordonRules() if path is None else load_yaml_model(path, CordonRules)
