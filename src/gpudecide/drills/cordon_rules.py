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
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from gpudecide.errors import InputError
from gpudecide.i18n import N_
from gpudecide.inputs import load_yaml, node_line, validate_model

__all__ = [
    "ACTIONS",
    "BUILT_IN_WHYS",
    "DEFAULT_XIDS",
    "MAX_COUNT",
    "MAX_HOURS",
    "MAX_NODES",
    "MAX_RATE",
    "MAX_XID",
    "RULES_NAME",
    "TAINT_KEY",
    "UNCORRECTABLE_XIDS",
    "UNKNOWN_XID_WHY",
    "Action",
    "Breaker",
    "Commands",
    "CordonRules",
    "CorrectedErrors",
    "MemoryRules",
    "XidNumber",
    "XidRule",
    "load",
    "severity",
]

Action = Literal["ok", "watch", "cordon", "drain-and-reset", "replace"]
ACTIONS: tuple[Action, ...] = ("ok", "watch", "cordon", "drain-and-reset", "replace")
RULES_NAME = "cordon.yaml"
# Bounds of the numbers of cordon.yaml: what a rule can mean (issue 28: a window of 1e20
# hours overflowed the clock; a limit beyond these is a typo, never a setting).
MAX_XID = 9999
MAX_HOURS = 8784.0  # a leap year
MAX_RATE = 1e9
MAX_COUNT = 1_000_000_000
MAX_NODES = 1_000_000
XidNumber = Annotated[int, Field(ge=1, le=MAX_XID)]
# Errors that leave the GPU unusable: double-bit ECC (48), the row remapper's failure (64),
# fallen off the bus (79), uncontained ECC (95), unrecovered ECC (140). The breaker never
# holds such a GPU back.
UNCORRECTABLE_XIDS = (48, 64, 79, 95, 140)
# A Kubernetes label key: an optional DNS-subdomain prefix and `/`, then a name of 1-63
# characters (alphanumerics, `-`, `_`, `.`, starting and ending alphanumeric).
TAINT_KEY = (
    r"^(?:[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)


def severity(action: Action) -> int:
    """Order of actions: ok < watch < cordon < drain-and-reset < replace."""
    return ACTIONS.index(action)


class _Strict(BaseModel):
    # strict: a number is a number (YAML's '7' is text, never read as 7).
    model_config = ConfigDict(extra="forbid", strict=True)


class XidRule(_Strict):
    """What one Xid means and what to do about it."""

    xid: int = Field(ge=1, le=MAX_XID, description="Xid number from the kernel log.")
    action: Action = Field(description="ok | watch | cordon | drain-and-reset | replace.")
    why: str = Field(
        min_length=1, max_length=200, description="What the Xid means (NVIDIA's Xid catalogue)."
    )
    replace_after: int | None = Field(
        default=None,
        ge=1,
        le=MAX_COUNT,
        description="This many of it on one GPU in the window: replace.",
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
        default=24.0,
        gt=0,
        le=MAX_HOURS,
        description="Rate measured over the last this many hours of samples.",
    )
    watch_per_hour: float = Field(
        default=1.0,
        gt=0,
        le=MAX_RATE,
        description="Corrected errors per hour from which a GPU is watched.",
    )
    cordon_per_hour: float = Field(
        default=10.0,
        gt=0,
        le=MAX_RATE,
        description="Corrected errors per hour from which it is cordoned (at least the watch "
        "threshold).",
    )
    min_samples: int = Field(
        default=2,
        ge=2,
        le=MAX_COUNT,
        description="Timed samples needed in the window to compute a rate.",
    )


class MemoryRules(_Strict):
    """Retired pages and remapped rows."""

    replace_retired_pages: int = Field(
        default=60,
        ge=1,
        le=MAX_COUNT,
        description="Retired pages (single + double bit) from which: replace.",
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
    """Circuit breaker: routine cordons never take more than a share of the fleet out within
    a window; a GPU with uncorrectable errors leaves service whatever the share (SPEC G2)."""

    max_share: float = Field(
        default=0.25,
        gt=0,
        le=1,
        description="Largest share of nodes routine cordons take out within the window.",
    )
    fleet_nodes: int | None = Field(
        default=None,
        ge=1,
        le=MAX_NODES,
        description="Nodes in the fleet; null: the nodes in the telemetry and the audit trail.",
    )
    window_hours: float = Field(
        default=24.0,
        gt=0,
        le=MAX_HOURS,
        description="Nodes the audit trail shows taken out this many hours back still count.",
    )
    uncorrectable_xids: list[XidNumber] = Field(
        default_factory=lambda: list(UNCORRECTABLE_XIDS),
        description="Xids after which a GPU leaves service whatever the breaker's share.",
    )


class Commands(_Strict):
    """How the scheduler is told."""

    orchestrator: Literal["slurm", "kubernetes"] = Field(
        default="slurm", description="slurm (scontrol) or kubernetes (kubectl)."
    )
    scontrol: str = Field(default="scontrol", min_length=1, description="The scontrol program.")
    kubectl: str = Field(default="kubectl", min_length=1, description="The kubectl program.")
    taint_key: str = Field(
        default="gpudecide.io/gpu-health",
        pattern=TAINT_KEY,
        max_length=316,
        description="Kubernetes taint key used (a label key: [prefix/]name).",
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
    """Rules from a file, or the defaults. Beyond each field's own bounds, what only makes
    sense together: a watch threshold at most the cordon one, one rule per Xid."""
    if path is None:
        return CordonRules()
    data, root = load_yaml(path)
    rules = validate_model(data, root, path, CordonRules)
    rate = rules.corrected_errors
    if rate.watch_per_hour > rate.cordon_per_hour:
        raise InputError(
            "the watch threshold {watch} per hour is above the cordon threshold {cordon}",
            path=path,
            line=node_line(root, ("corrected_errors", "watch_per_hour")),
            field="corrected_errors.watch_per_hour",
            hint="a GPU is watched before it is cordoned: watch_per_hour <= cordon_per_hour",
            watch=f"{rate.watch_per_hour:g}",
            cordon=f"{rate.cordon_per_hour:g}",
        )
    seen: set[int] = set()
    for i, rule in enumerate(rules.xid):
        if rule.xid in seen:
            raise InputError(
                "Xid {xid} has two rules",
                path=path,
                line=node_line(root, ("xid", i)),
                field=f"xid.{i}.xid",
                hint="keep one entry per Xid",
                xid=rule.xid,
            )
        seen.add(rule.xid)
    return rules
