"""The options being decided between, declared once in gpudecide.yaml (SPEC D3, H4, I7).

Every other input (costs, exports, export tests, drills, RACI, isolation, residency) and
every evidence record names an option by its id; an id that is not declared here is an input
error that names the file, line and field. An option carries its sites: where it stores,
processes and backs up data (country, region, provider), which the residency check (I7)
compares with the team's requirement and the report shows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from gpudecide.errors import InputError, TemplateError, excerpt
from gpudecide.inputs import in_workspace

__all__ = [
    "ISO_COUNTRIES",
    "OPTION_ID_PATTERN",
    "ContourDecl",
    "CountryCode",
    "Executor",
    "OptionDecl",
    "OptionKind",
    "Site",
    "SiteRole",
    "check_unique",
    "require_known",
]


OptionKind = Literal["owned", "rented", "managed", "hybrid"]


# ISO 3166-1 alpha-2 codes as CLDR lists them (Babel's `Locale("en").territories`, without
# its "unknown region" ZZ), written out: loading Babel's English locale to read them took
# about 40 ms of every command that opens a workspace (issue 25). tests/test_startup.py
# holds this list equal to Babel's.
# fmt: off
ISO_COUNTRIES = frozenset([
    "AC", "AD", "AE", "AF", "AG", "AI", "AL", "AM", "AO", "AQ", "AR", "AS", "AT", "AU", "AW", "AX",
    "AZ", "BA", "BB", "BD", "BE", "BF", "BG", "BH", "BI", "BJ", "BL", "BM", "BN", "BO", "BQ", "BR",
    "BS", "BT", "BV", "BW", "BY", "BZ", "CA", "CC", "CD", "CF", "CG", "CH", "CI", "CK", "CL", "CM",
    "CN", "CO", "CP", "CQ", "CR", "CU", "CV", "CW", "CX", "CY", "CZ", "DE", "DG", "DJ", "DK", "DM",
    "DO", "DZ", "EA", "EC", "EE", "EG", "EH", "ER", "ES", "ET", "EU", "EZ", "FI", "FJ", "FK", "FM",
    "FO", "FR", "GA", "GB", "GD", "GE", "GF", "GG", "GH", "GI", "GL", "GM", "GN", "GP", "GQ", "GR",
    "GS", "GT", "GU", "GW", "GY", "HK", "HM", "HN", "HR", "HT", "HU", "IC", "ID", "IE", "IL", "IM",
    "IN", "IO", "IQ", "IR", "IS", "IT", "JE", "JM", "JO", "JP", "KE", "KG", "KH", "KI", "KM", "KN",
    "KP", "KR", "KW", "KY", "KZ", "LA", "LB", "LC", "LI", "LK", "LR", "LS", "LT", "LU", "LV", "LY",
    "MA", "MC", "MD", "ME", "MF", "MG", "MH", "MK", "ML", "MM", "MN", "MO", "MP", "MQ", "MR", "MS",
    "MT", "MU", "MV", "MW", "MX", "MY", "MZ", "NA", "NC", "NE", "NF", "NG", "NI", "NL", "NO", "NP",
    "NR", "NU", "NZ", "OM", "PA", "PE", "PF", "PG", "PH", "PK", "PL", "PM", "PN", "PR", "PS", "PT",
    "PW", "PY", "QA", "QO", "RE", "RO", "RS", "RU", "RW", "SA", "SB", "SC", "SD", "SE", "SG", "SH",
    "SI", "SJ", "SK", "SL", "SM", "SN", "SO", "SR", "SS", "ST", "SV", "SX", "SY", "SZ", "TA", "TC",
    "TD", "TF", "TG", "TH", "TJ", "TK", "TL", "TM", "TN", "TO", "TR", "TT", "TV", "TW", "TZ", "UA",
    "UG", "UM", "UN", "US", "UY", "UZ", "VA", "VC", "VE", "VG", "VI", "VN", "VU", "WF", "WS", "XA",
    "XB", "XK", "YE", "YT", "ZA", "ZM", "ZW",
])
# fmt: on


def _country(value: str) -> str:
    if value not in ISO_COUNTRIES:
        raise TemplateError(
            "{value} is not an ISO 3166-1 alpha-2 country code (KZ, DE, US, ...)",
            value=repr(value),
        )
    return value


CountryCode = Annotated[str, AfterValidator(_country)]
SiteRole = Literal["storage", "processing", "backup"]
OPTION_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Site(_Strict):
    """One place an option keeps or touches data."""

    roles: list[SiteRole] = Field(
        min_length=1, description="storage | processing | backup: what happens at this site."
    )
    country: CountryCode = Field(
        description="ISO 3166-1 alpha-2 country code, upper case (KZ, DE, US, ...)."
    )
    region: str = Field(default="", description="City, region or cloud region.")
    provider: str = Field(default="", description="Who runs the site (data centre, cloud).")


Executor = Literal["slurm", "k8s", "local", "vendor"]


class ContourDecl(_Strict):
    """Where an option's jobs really run, as gpudecide reaches it (SPEC E1, G1, Q1).

    Evidence is about the contour it exercised: an export test, a drill or a queue analysis
    run elsewhere (on a laptop, on another cluster, on the team's own re-run of a vendor's
    plan) is a rehearsal for this option, never its proof.
    """

    executor: Executor | None = Field(
        default=None,
        description="slurm | k8s | local | vendor (a managed endpoint: evidence comes from "
        "the vendor's own export and job log); null: not declared yet.",
    )
    cluster: str = Field(default="", description="Slurm cluster name (sacct's Cluster).")
    context: str = Field(default="", description="Kubernetes context of the option's cluster.")
    host: str = Field(default="", description="For `local`: the host the jobs run on.")
    storage: str = Field(
        default="",
        description="URL prefix of the external storage its checkpoints go to (s3://...).",
    )

    def declared(self, kind: str) -> Executor | None:
        """The executor in force: a managed option's is the vendor's unless declared."""
        if self.executor is None and kind == "managed":
            return "vendor"
        return self.executor


class OptionDecl(_Strict):
    """One way of fine-tuning the team compares."""

    id: str = Field(pattern=OPTION_ID_PATTERN, description="Short unique id every input uses.")
    kind: OptionKind = Field(description="owned | rented | managed | hybrid.")
    name: str = Field(default="", description="Name shown in the report (default: the id).")
    local_provider: bool = Field(
        default=False, description="A provider in the team's own country (SPEC H4)."
    )
    standalone: bool = Field(
        default=True,
        description="false: only a contour of a hybrid, not compared on its own in the matrix.",
    )
    derived_weights: Literal["ours", "unclear", "unknown"] = Field(
        default="unknown",
        description="Rights to weights derived on this option (SPEC E6): ours | unclear | unknown.",
    )
    derived_weights_source: str = Field(
        default="", description="Contract clause the rights to derived weights rest on."
    )
    contours: list[str] = Field(
        default_factory=list,
        description="For a hybrid: the ids of its two contours (base pool, managed overflow).",
    )
    sites: list[Site] = Field(
        default_factory=list, description="Where data is stored, processed and backed up."
    )
    contour: ContourDecl = Field(
        default_factory=ContourDecl,
        description="Where its jobs run: evidence from elsewhere is a rehearsal for it.",
    )
    derived_weights_document: str = Field(
        default="",
        description="The contract or licence the rights to derived weights rest on (a file "
        "in the workspace); without it the rights are the team's claim.",
    )

    @property
    def label(self) -> str:
        """Name for people: the name, else the id."""
        return self.name or self.id

    def countries(self, role: SiteRole | None = None) -> list[str]:
        """Countries of the option's sites (with `role`: only sites with that role)."""
        return sorted({s.country for s in self.sites if role is None or role in s.roles})


def check_unique(options: list[OptionDecl], path: Path, field: str = "options") -> None:
    """Ids are unique; a hybrid names exactly two declared, non-hybrid contours and only a
    hybrid names contours; a contract document stays inside the workspace."""
    seen: set[str] = set()
    for i, opt in enumerate(options):
        if opt.id in seen:
            raise InputError(
                "option id {id!r} is declared twice", path=path, field=f"{field}.{i}.id", id=opt.id
            )
        seen.add(opt.id)
    by_id = {o.id: o for o in options}
    for i, opt in enumerate(options):
        if opt.kind == "hybrid" and (len(opt.contours) != 2 or len(set(opt.contours)) != 2):
            raise InputError(
                "a hybrid has two different contours, not {n}",
                path=path,
                field=f"{field}.{i}.contours",
                hint="name its base pool and its overflow option",
                n=len(set(opt.contours)),
            )
        if opt.kind != "hybrid" and opt.contours:
            raise InputError(
                "only a hybrid has contours; this option is {kind}",
                path=path,
                field=f"{field}.{i}.contours",
                hint="remove contours, or make the option kind: hybrid",
                kind=opt.kind,
            )
        for j, ref in enumerate(opt.contours):
            target = by_id.get(ref)
            if target is None or target.kind == "hybrid":
                raise InputError(
                    "{ref!r} is not a declared owned, rented or managed option",
                    path=path,
                    field=f"{field}.{i}.contours.{j}",
                    hint="declare it under options, or use one of: {known}",
                    ref=ref,
                    known=", ".join(sorted(by_id)),
                )
        if opt.derived_weights_document:
            in_workspace(
                path.parent,
                opt.derived_weights_document,
                path=path,
                field=f"{field}.{i}.derived_weights_document",
            )


def require_known(
    option_id: str,
    known: list[OptionDecl] | set[str],
    *,
    path: str | Path,
    field: str,
    line: int | None = None,
) -> None:
    """Raise the input error every reader gives for an option id that is not declared."""
    ids = {o.id for o in known} if isinstance(known, list) else set(known)
    if option_id not in ids:
        listed = ", ".join(sorted(ids)) or "none declared"
        raise InputError(
            "unknown option id {option}",
            path=path,
            line=line,
            field=field,
            hint="declare it under `options` in gpudecide.yaml (declared: {listed})",
            option=excerpt(option_id),
            listed=listed,
        )
