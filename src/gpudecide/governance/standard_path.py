"""Does the option's standard path fit the team's path, and is there control, not SSH (R4, R5)?

The `standard_path` section of raci.yaml lists what the work needs (custom kernels, a modified
driver, direct device access, a special interconnect, network routes, data formats, the
export format) and, per option, what the option supports and which R5 controls it gives.
A need the option does not meet is a finding; for a managed option it points to dedicated
(R4). "SSH access" is recorded but never counted as control: control is a reproducible
image, an access policy, an observable queue, restore from backup and automatic deletion of
temporary data (R5).

What an option supports and which controls it gives are answers: a key left out, or left as
the template's `null`, is "not checked" (listed in the row, never a gap or a missing control
by being empty); an option with nothing stated is not checked as a whole.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from gpudecide.governance.findings import Figure, Finding, RecordMessages, finding
from gpudecide.options import OPTION_ID_PATTERN, OptionDecl, OptionKind

__all__ = [
    "CAPABILITIES",
    "CONTROLS",
    "LISTS",
    "Control",
    "Needs",
    "Offer",
    "OptionPath",
    "StandardPathFigures",
    "StandardPathRow",
    "StandardPathSpec",
    "check",
]

CAPABILITIES = ("custom_kernels", "modified_driver", "direct_device_access", "special_interconnect")
LISTS = ("network_routes", "data_formats", "export_formats")
CONTROLS = (
    "reproducible_image",
    "access_policy",
    "observable_queue",
    "restore_from_backup",
    "auto_delete_temporary_data",
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Needs(_Strict):
    """What the team's work needs (R4)."""

    custom_kernels: bool = Field(default=False, description="Own CUDA/Triton kernels.")
    modified_driver: bool = Field(default=False, description="A driver other than the stock one.")
    direct_device_access: bool = Field(default=False, description="Raw device access.")
    special_interconnect: bool = Field(default=False, description="InfiniBand, NVLink domains.")
    network_routes: list[str] = Field(default_factory=list, description="Routes jobs must reach.")
    data_formats: list[str] = Field(default_factory=list, description="Formats of the data.")
    export_formats: list[str] = Field(default_factory=list, description="Formats to export.")


class Offer(_Strict):
    """What an option supports, against the team's needs (R4); null: not stated."""

    custom_kernels: bool | None = Field(default=None, description="Own CUDA/Triton kernels.")
    modified_driver: bool | None = Field(default=None, description="Another driver.")
    direct_device_access: bool | None = Field(default=None, description="Raw device access.")
    special_interconnect: bool | None = Field(default=None, description="InfiniBand, NVLink.")
    network_routes: list[str] | None = Field(default=None, description="Routes jobs reach.")
    data_formats: list[str] | None = Field(default=None, description="Formats it reads.")
    export_formats: list[str] | None = Field(default=None, description="Formats it exports.")


class Control(_Strict):
    """What the option gives the team to control its runs (R5); null: not stated."""

    ssh_access: bool | None = Field(default=None, description="Interactive shell (not control).")
    reproducible_image: bool | None = Field(default=None, description="Image pinned by digest.")
    access_policy: bool | None = Field(default=None, description="Who may do what, enforced.")
    observable_queue: bool | None = Field(default=None, description="Job states with times.")
    restore_from_backup: bool | None = Field(default=None, description="Tested restore.")
    auto_delete_temporary_data: bool | None = Field(
        default=None, description="Temporary copies expire."
    )


class OptionPath(_Strict):
    """One option's support and control."""

    option: str = Field(pattern=OPTION_ID_PATTERN, description="Option id (gpudecide.yaml).")
    supports: Offer = Field(default_factory=Offer, description="What the option supports.")
    control: Control = Field(default_factory=Control, description="R5 controls it gives.")


class StandardPathSpec(_Strict):
    """The `standard_path` section of raci.yaml."""

    needs: Needs = Field(default_factory=Needs, description="What the work needs.")
    options: list[OptionPath] = Field(default_factory=list, description="Per option.")


class StandardPathRow(Figure):
    """One option's row of the `standard_path` figures. R4 and R5 findings never stop an
    option (`stopped` is always false): they lower its operations score. `not_checked`
    names the needs and controls the option's answer does not state."""

    option: str
    kind: OptionKind
    answered: bool
    gaps: list[str]
    controls: list[str]
    controls_total: int
    ssh_access: bool
    stopped: bool
    findings: list[Finding]
    not_checked: list[str] = Field(default_factory=list)


class StandardPathFigures(Figure):
    """The figures of a `standard_path` record (SPEC R4, R5)."""

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset({"messages"})

    needs: Needs
    options: list[StandardPathRow]
    findings: list[Finding]
    messages: RecordMessages | None = None


def _gaps(needs: Needs, offer: Offer) -> tuple[list[str], list[str]]:
    """The needs the offer does not meet, and the needs it does not state (not checked)."""
    gaps: list[str] = []
    unstated: list[str] = []
    for c in CAPABILITIES:
        if not getattr(needs, c):
            continue
        said = getattr(offer, c)
        if said is None:
            unstated.append(c)
        elif not said:
            gaps.append(c)
    for key in LISTS:
        wanted = getattr(needs, key)
        said = getattr(offer, key)
        if not wanted:
            continue
        if said is None:
            unstated.append(key)
            continue
        have = {v.strip().lower() for v in said}
        gaps += [f"{key}: {v}" for v in wanted if v.strip().lower() not in have]
    return gaps, unstated


def _stated(entry: OptionPath) -> bool:
    """Whether the option's entry states anything (support or control)."""
    values = [*entry.supports.model_dump().values(), *entry.control.model_dump().values()]
    return any(v is not None for v in values)


def check(
    spec: StandardPathSpec, options: list[OptionDecl]
) -> tuple[list[Finding], StandardPathFigures]:
    """Findings and figures of the fit and control of every declared option."""
    by_id = {p.option: p for p in spec.options}
    rows = [_option_row(option, by_id.get(option.id), spec.needs) for option in options]
    findings = [f for row in rows for f in row.findings]
    return findings, StandardPathFigures(needs=spec.needs, options=rows, findings=findings)


def _option_row(option: OptionDecl, entry: OptionPath | None, needs: Needs) -> StandardPathRow:
    """One option's fit (R4) and control (R5); an option without an entry, or with nothing
    stated in it, is unanswered (not checked)."""
    if entry is None or not _stated(entry):
        return StandardPathRow(
            option=option.id,
            kind=option.kind,
            answered=False,
            gaps=[],
            controls=[],
            controls_total=len(CONTROLS),
            ssh_access=False,
            stopped=False,
            findings=[finding("path_unanswered", option.id, False, "R4")],
        )
    gaps, unstated = _gaps(needs, entry.supports)
    fid = "path_mismatch_managed" if option.kind == "managed" else "path_mismatch"
    found = [finding(fid, option.id, False, "R4", need=gap) for gap in gaps]
    controls = [c for c in CONTROLS if getattr(entry.control, c)]
    missing = [c for c in CONTROLS if getattr(entry.control, c) is False]
    unstated += [c for c in CONTROLS if getattr(entry.control, c) is None]
    found += [finding("control_missing", option.id, False, "R5", control=c) for c in missing]
    ssh = bool(entry.control.ssh_access)
    if ssh and missing:
        found.append(finding("ssh_not_control", option.id, False, "R5", missing=len(missing)))
    return StandardPathRow(
        option=option.id,
        kind=option.kind,
        answered=True,
        gaps=gaps,
        controls=controls,
        controls_total=len(CONTROLS),
        ssh_access=ssh,
        stopped=False,
        findings=found,
        not_checked=unstated,
    )
