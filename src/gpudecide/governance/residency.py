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
from typing import Any

from gpudecide.decision.schema import Residency
from gpudecide.governance.findings import Finding, finding
from gpudecide.message import Message, english, message
from gpudecide.options import OptionDecl, Site


@dataclass
class ResidencyResult:
    """Findings, figures and the notes of one check (messages, one per note)."""

    findings: list[Finding]
    figures: dict[str, Any]
    note_messages: list[Message]

    @property
    def notes(self) -> list[str]:
        """The notes in English, as the record keeps them."""
        return [english(m) for m in self.note_messages]


def _site_dict(site: Site, via: str) -> dict[str, Any]:
    return {
        "roles": list(site.roles),
        "country": site.country,
        "region": site.region,
        "provider": site.provider,
        "via": via,
    }


def sites_for(
    option: OptionDecl,
    asset: str,
    options: list[OptionDecl],
    placement: dict[tuple[str, str], list[str]],
) -> list[dict[str, Any]]:
    """The sites an asset reaches under an option (a hybrid: its placement or all its sites)."""
    by_id = {o.id: o for o in options}
    contours = placement.get((option.id, asset.strip().lower()))
    if contours is not None:
        return [_site_dict(s, c) for c in contours for s in by_id[c].sites]
    own = [_site_dict(s, option.id) for s in option.sites]
    if own or not option.contours:
        return own
    return [_site_dict(s, c) for c in option.contours if c in by_id for s in by_id[c].sites]


def _where(site: dict[str, Any]) -> str:
    parts = [site["country"], site["region"]]
    text = " ".join(p for p in parts if p)
    return f"{text} ({site['provider']})" if site["provider"] else text


def _assess(
    option: OptionDecl, req: Residency, sites: list[dict[str, Any]]
) -> tuple[list[Finding], dict[str, Any]]:
    covered = [s for s in sites if set(s["roles"]) & set(req.roles)]
    bad = [s for s in covered if s["country"] not in req.countries]
    found: list[Finding] = []
    if not sites:
        found.append(finding("sites_unknown", option.id, False, "I7", asset=req.asset))
    if bad:
        roles = sorted({r for s in bad for r in s["roles"] if r in req.roles})
        found.append(
            finding(
                "residency_violated",
                option.id,
                True,
                "I7",
                asset=req.asset,
                roles=", ".join(roles),
                found="; ".join(_where(s) for s in bad),
                allowed=", ".join(req.countries),
                basis=req.basis or "-",
            )
        )
    row = {
        "asset": req.asset,
        "allowed": list(req.countries),
        "roles": list(req.roles),
        "sites": sites,
        "violations": bad,
        "ok": bool(sites) and not bad,
    }
    return found, row


def check(
    requirements: list[Residency],
    options: list[OptionDecl],
    placement: dict[tuple[str, str], list[str]] | None = None,
) -> ResidencyResult:
    """Compare every option's sites with every residency requirement."""
    place = placement or {}
    findings: list[Finding] = []
    rows: list[dict[str, Any]] = []
    for option in options:
        found: list[Finding] = []
        assets: list[dict[str, Any]] = []
        for req in requirements:
            f, row = _assess(option, req, sites_for(option, req.asset, options, place))
            found += f
            row["placement"] = place.get((option.id, req.asset.strip().lower()))
            assets.append(row)
        findings += found
        rows.append(
            {
                "option": option.id,
                "kind": option.kind,
                "stopped": any(f.stop for f in found),
                "assets": assets,
                "findings": [f.as_dict() for f in found],
            }
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
    figures: dict[str, Any] = {
        "requirements": [r.model_dump() for r in requirements],
        "options": rows,
        "findings": [f.as_dict() for f in findings],
    }
    return ResidencyResult(findings, figures, said)
