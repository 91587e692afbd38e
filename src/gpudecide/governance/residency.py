"""Where each option actually stores, processes and backs up data, against the requirement (I7).

The requirement is the team's (`matrix.residency` in gpudecide.yaml): an asset, the
countries it may be in, which uses of a site it covers, the law or policy and the edition
date relied on. The facts are the options' declared sites; a hybrid's asset goes to the
contours isolation.yaml's `placement` names (H2), else to every site of the hybrid. A site of
a covered use outside the allowed countries is a violation and stops that option (D5). The
check states facts and mismatches; what the law requires is the lawyer's call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from gpudecide.governance.findings import Figure, Finding, RecordMessages, finding
from gpudecide.matrix_config import Residency
from gpudecide.message import Message, english, message
from gpudecide.options import OptionDecl, OptionKind, Site, SiteRole

__all__ = [
    "AssetFigures",
    "ResidencyFigures",
    "ResidencyOptionFigures",
    "ResidencyResult",
    "SiteFigures",
    "check",
    "sites_for",
]


class SiteFigures(Figure):
    """A site an asset reaches under an option, and which option or contour it comes from."""

    roles: list[SiteRole]
    country: str
    region: str
    provider: str
    via: str

    def where(self) -> str:
        """Country, region and provider as one place ("DE Frankfurt (GlobalCloud)")."""
        text = " ".join(p for p in (self.country, self.region) if p)
        return f"{text} ({self.provider})" if self.provider else text


class AssetFigures(Figure):
    """One requirement against one option: the sites the asset reaches, those that break it."""

    asset: str
    allowed: list[str]
    roles: list[SiteRole]
    sites: list[SiteFigures]
    violations: list[SiteFigures]
    ok: bool
    placement: list[str] | None


class ResidencyOptionFigures(Figure):
    """One option's row of the `residency` figures."""

    option: str
    kind: OptionKind
    stopped: bool
    assets: list[AssetFigures]
    findings: list[Finding]


class ResidencyFigures(Figure):
    """The figures of a `residency` record (SPEC I7, H2)."""

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset({"messages"})

    requirements: list[Residency]
    options: list[ResidencyOptionFigures]
    findings: list[Finding]
    messages: RecordMessages | None = None


@dataclass
class ResidencyResult:
    """Findings, figures and the notes of one check (messages, one per note)."""

    findings: list[Finding]
    figures: ResidencyFigures
    note_messages: list[Message]

    @property
    def notes(self) -> list[str]:
        """The notes in English, as the record keeps them."""
        return [english(m) for m in self.note_messages]


def _site(site: Site, via: str) -> SiteFigures:
    return SiteFigures(
        roles=list(site.roles),
        country=site.country,
        region=site.region,
        provider=site.provider,
        via=via,
    )


def sites_for(
    option: OptionDecl,
    asset: str,
    options: list[OptionDecl],
    placement: dict[tuple[str, str], list[str]],
) -> list[SiteFigures]:
    """The sites an asset reaches under an option (a hybrid: its placement or all its sites)."""
    by_id = {o.id: o for o in options}
    contours = placement.get((option.id, asset.strip().lower()))
    if contours is not None:
        return [_site(s, c) for c in contours for s in by_id[c].sites]
    own = [_site(s, option.id) for s in option.sites]
    if own or not option.contours:
        return own
    return [_site(s, c) for c in option.contours if c in by_id for s in by_id[c].sites]


def _assess(
    option: OptionDecl,
    req: Residency,
    sites: list[SiteFigures],
    placement: list[str] | None,
) -> tuple[list[Finding], AssetFigures]:
    covered = [s for s in sites if set(s.roles) & set(req.roles)]
    bad = [s for s in covered if s.country not in req.countries]
    found: list[Finding] = []
    if not sites:
        found.append(finding("sites_unknown", option.id, False, "I7", asset=req.asset))
    if bad:
        roles = sorted({r for s in bad for r in s.roles if r in req.roles})
        found.append(
            finding(
                "residency_violated",
                option.id,
                True,
                "I7",
                asset=req.asset,
                roles=", ".join(roles),
                found="; ".join(s.where() for s in bad),
                allowed=", ".join(req.countries),
                basis=req.basis or "-",
            )
        )
    row = AssetFigures(
        asset=req.asset,
        allowed=list(req.countries),
        roles=list(req.roles),
        sites=sites,
        violations=bad,
        ok=bool(sites) and not bad,
        placement=placement,
    )
    return found, row


def check(
    requirements: list[Residency],
    options: list[OptionDecl],
    placement: dict[tuple[str, str], list[str]] | None = None,
) -> ResidencyResult:
    """Compare every option's sites with every residency requirement."""
    place = placement or {}
    findings: list[Finding] = []
    rows: list[ResidencyOptionFigures] = []
    for option in options:
        found: list[Finding] = []
        assets: list[AssetFigures] = []
        for req in requirements:
            sites = sites_for(option, req.asset, options, place)
            f, row = _assess(option, req, sites, place.get((option.id, req.asset.strip().lower())))
            found += f
            assets.append(row)
        findings += found
        rows.append(
            ResidencyOptionFigures(
                option=option.id,
                kind=option.kind,
                stopped=any(f.stop for f in found),
                assets=assets,
                findings=found,
            )
        )
    said: list[Message] = [
        message(
            "governance", "facts and mismatches against the stated requirement; not legal advice"
        )
    ]
    for req in requirements:
        if not req.edition.strip():
            said.append(
                message(
                    "governance",
                    "{asset}: record the edition date of the text relied on ({basis})",
                    asset=req.asset,
                    basis=req.basis,
                )
            )
    if not requirements:
        said.append(
            message("governance", "no residency requirement in gpudecide.yaml (matrix.residency)")
        )
    figures = ResidencyFigures(requirements=list(requirements), options=rows, findings=findings)
    return ResidencyResult(findings, figures, said)
