"""Residency (SPEC I7): option sites against the workspace requirement; a violation stops."""

from __future__ import annotations

from gpudecide.governance import residency
from gpudecide.matrix_config import Residency
from gpudecide.options import OptionDecl, Site

REQ = Residency(
    asset="personal data",
    countries=["KZ"],
    basis="Law No. 94-V, Art. 12(2)",
    edition="2026-05-15",
)


def _opt(oid: str, *sites: tuple[list[str], str], kind: str = "managed") -> OptionDecl:
    return OptionDecl(
        id=oid,
        kind=kind,  # type: ignore[arg-type]
        sites=[Site(roles=r, country=c, region="r", provider="p") for r, c in sites],  # type: ignore[arg-type]
    )


def _found(
    options: list[OptionDecl], req: Residency = REQ, **kw: object
) -> list[tuple[str, str, bool]]:
    result = residency.check([req], options, **kw)  # type: ignore[arg-type]
    return [(f.id, f.option, f.stop) for f in result.findings]


def test_site_abroad_stops_the_option() -> None:
    options = [
        _opt("kz", (["storage", "processing", "backup"], "KZ")),
        _opt("de", (["storage", "processing"], "DE")),
    ]
    assert _found(options) == [("residency_violated", "de", True)]
    result = residency.check([REQ], options)
    row = result.figures.options[1].assets[0]
    assert row.violations[0].country == "DE" and row.ok is False
    assert result.figures.options[0].assets[0].ok is True


def test_backup_abroad_only_counts_when_backups_are_covered() -> None:
    options = [_opt("x", (["storage", "processing"], "KZ"), (["backup"], "DE"))]
    assert _found(options) == [("residency_violated", "x", True)]
    narrower = REQ.model_copy(update={"roles": ["storage", "processing"]})
    assert _found(options, narrower) == []


def test_no_sites_is_unknown_not_cleared() -> None:
    assert _found([_opt("x")]) == [("sites_unknown", "x", False)]


def test_hybrid_placement_keeps_asset_in_its_contour() -> None:
    own = _opt("own", (["storage", "processing", "backup"], "KZ"), kind="owned")
    cloud = _opt("cloud", (["storage", "processing"], "DE"))
    hyb = OptionDecl(id="hyb", kind="hybrid", contours=["own", "cloud"])
    options = [own, cloud, hyb]
    # Without a placement the asset may reach every contour: violation.
    assert ("residency_violated", "hyb", True) in _found(options)
    # Placed on the owned contour only: cleared.
    found = _found(options, placement={("hyb", "personal data"): ["own"]})
    assert ("residency_violated", "hyb", True) not in found
    assert ("residency_violated", "cloud", True) in found


def test_notes_ask_for_the_edition_and_say_not_legal_advice() -> None:
    result = residency.check([REQ.model_copy(update={"edition": ""})], [])
    assert any("edition" in n for n in result.notes)
    assert any("not legal advice" in n for n in result.notes)
    assert not any("edition" in n for n in residency.check([REQ], []).notes)
