"""Isolation findings (SPEC I2-I6), the NIST SP 800-53 mapping (I5) and the OSCAL export
(I6), which compliance-trestle's own models must load."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from trestle.oscal.assessment_results import AssessmentResults

from gpudecide.governance import controls, isolation, oscal
from gpudecide.options import OptionDecl

OPTIONS = [OptionDecl(id="own", kind="owned"), OptionDecl(id="man", kind="managed")]


def _answers() -> dict[str, Any]:
    bounds = [
        {
            "boundary": b,
            "status": "in_place",
            "mechanism": f"mechanism for {b}",
            "proof": {"test": f"test of {b}: passed"},
        }
        for b in isolation.ANSWERED_BOUNDARIES
    ]
    bounds[0]["sharing_mode"] = "exclusive"
    return {
        "boundaries": bounds,
        "residue": [
            {"item": i, "handling": "cleared", "proof": {"test": f"{i}: checked"}}
            for i in isolation.RESIDUE_ITEMS
        ],
        "regulated": [
            {"item": i, "proof": {"test": f"{i}: shown"}} for i in isolation.REGULATED_ITEMS
        ],
    }


CLEAN: dict[str, Any] = {
    "assets": [
        {
            "id": "train",
            "closed": True,
            "threats": [
                {"adversary": "vendor_neighbour", "requires": ["gpu_sharing", "residue"]},
                {"adversary": "platform_admin", "requires": ["support_access"]},
            ],
        },
        {
            "id": "metrics",
            "closed": False,
            "threats": [
                {"adversary": "external_attacker", "requires": ["network"]},
            ],
        },
    ],
    "options": [{"option": "own", **_answers()}, {"option": "man", **_answers()}],
}


def _run(data: dict[str, Any], root: Path) -> isolation.IsolationResult:
    return isolation.check(isolation.IsolationFile.model_validate(data), OPTIONS, root)


def _ids(data: dict[str, Any], root: Path) -> list[tuple[str, str, bool]]:
    return [(f.id, f.option, f.stop) for f in _run(data, root).findings]


def _bound(data: dict[str, Any], option: int, boundary: str) -> dict[str, Any]:
    entry = data["options"][option]
    return next(b for b in entry["boundaries"] if b["boundary"] == boundary)


def test_clean_has_no_findings(tmp_path: Path) -> None:
    assert _ids(CLEAN, tmp_path) == []


@pytest.mark.parametrize("status", ["missing", "unknown"])
def test_required_boundary_missing_stops_closed_asset(tmp_path: Path, status: str) -> None:
    data = copy.deepcopy(CLEAN)
    _bound(data, 1, "support_access")["status"] = status
    assert _ids(data, tmp_path) == [("protection_missing", "man", True)]


def test_required_boundary_missing_for_open_asset_is_not_a_stop(tmp_path: Path) -> None:
    data = copy.deepcopy(CLEAN)
    _bound(data, 0, "network")["status"] = "missing"
    assert _ids(data, tmp_path) == [("protection_missing", "own", False)]


def test_unrequired_boundary_missing_is_no_finding(tmp_path: Path) -> None:
    data = copy.deepcopy(CLEAN)
    _bound(data, 0, "location")["status"] = "missing"
    assert _ids(data, tmp_path) == []


def test_claim_is_not_evidence(tmp_path: Path) -> None:
    data = copy.deepcopy(CLEAN)
    del _bound(data, 0, "support_access")["proof"]
    assert _ids(data, tmp_path) == [("protection_claimed", "own", False)]


@pytest.mark.parametrize(
    ("mode", "weak"), [("mps", True), ("time_slicing", True), ("mig", False), ("exclusive", False)]
)
def test_gpu_sharing_mode(tmp_path: Path, mode: str, weak: bool) -> None:
    data = copy.deepcopy(CLEAN)
    _bound(data, 0, "gpu_sharing")["sharing_mode"] = mode
    found = _ids(data, tmp_path)
    if weak:
        assert found == [("protection_missing", "own", True), ("weak_gpu_sharing", "own", False)]
    else:
        assert found == []


def test_encrypted_does_not_close_residue(tmp_path: Path) -> None:
    data = copy.deepcopy(CLEAN)
    data["options"][0]["residue"][1]["handling"] = "encrypted_only"  # local_nvme
    found = _ids(data, tmp_path)
    # residue is required against the neighbour of a closed asset: a stop, and the I4 finding.
    assert ("residue_encrypted_only", "own", False) in found
    assert ("protection_missing", "own", True) in found


@pytest.mark.parametrize("handling", ["cleared", "deleted", "not_kept"])
def test_closing_residue_handlings(tmp_path: Path, handling: str) -> None:
    data = copy.deepcopy(CLEAN)
    data["options"][0]["residue"][0]["handling"] = handling
    assert _ids(data, tmp_path) == []


def test_unanswered_residue_item(tmp_path: Path) -> None:
    data = copy.deepcopy(CLEAN)
    data["options"][0]["residue"] = data["options"][0]["residue"][1:]
    found = _ids(data, tmp_path)
    assert ("residue_open", "own", False) in found
    assert ("protection_missing", "own", True) in found


def test_one_mechanism_for_several_families(tmp_path: Path) -> None:
    data = copy.deepcopy(CLEAN)
    for b in ("gpu_sharing", "support_access", "logs"):
        _bound(data, 1, b)["mechanism"] = "Dedicated  node"
    found = _run(data, tmp_path).findings
    assert [(f.id, f.option) for f in found] == [("one_mechanism_many_families", "man")]
    assert found[0].params["families"] == "AC, AU, PS, SC, SI"


def test_one_mechanism_within_one_family_set_is_fine(tmp_path: Path) -> None:
    data = copy.deepcopy(CLEAN)
    # storage and keys are both SC only: one mechanism may hold both.
    _bound(data, 0, "storage")["mechanism"] = "customer key"
    _bound(data, 0, "keys")["mechanism"] = "customer key"
    assert _ids(data, tmp_path) == []


def test_regulated_evidence_missing(tmp_path: Path) -> None:
    data = copy.deepcopy(CLEAN)
    data["options"][1]["regulated"] = data["options"][1]["regulated"][:-1]
    assert _ids(data, tmp_path) == [("regulated_missing", "man", False)]
    data["regulated"] = False
    assert _ids(data, tmp_path) == []


def test_unanswered_option_is_stopped_by_required_boundaries(tmp_path: Path) -> None:
    data = copy.deepcopy(CLEAN)
    data["options"] = data["options"][:1]
    found = _ids(data, tmp_path)
    assert {f for f in found if f[2]} == {("protection_missing", "man", True)}


def test_controls_map_and_ids() -> None:
    assert controls.BOUNDARY_CONTROLS["gpu_sharing"] == ("SC-4", "SC-39")
    assert controls.oscal_id("SA-9(5)") == "sa-9.5"
    assert controls.family("SA-9(5)") == "SA"
    assert controls.all_controls()[:3] == ["AC-3", "AC-4", "AC-6"]
    assert "MP-6" in controls.BOUNDARY_CONTROLS["residue"]


def test_coverage_per_family(tmp_path: Path) -> None:
    data = copy.deepcopy(CLEAN)
    del _bound(data, 0, "logs")["proof"]
    row = _run(data, tmp_path).figures.options[0]
    assert row.coverage["AU"].model_dump() == {"evidenced": 0, "claimed": 3, "open": 0}
    assert row.coverage["SI"].model_dump() == {"evidenced": 0, "claimed": 1, "open": 0}
    assert row.coverage["SC"].evidenced == 5  # SC-4, SC-39, SC-7, SC-28, SC-12


def _oscal(tmp_path: Path, data: dict[str, Any]) -> AssessmentResults:
    result = _run(data, tmp_path)
    path = oscal.write(
        result.figures, "2026-06-01T10:00:00+00:00", "isolation.yaml", tmp_path / "ar.json"
    )
    return AssessmentResults.oscal_read(path)


def test_oscal_loads_with_trestle_and_says_what_holds(tmp_path: Path) -> None:
    data = copy.deepcopy(CLEAN)
    del _bound(data, 1, "logs")["proof"]  # a claim never satisfies a control
    ar = _oscal(tmp_path, data)
    assert ar is not None
    result = ar.results[0]
    controls_reviewed = result.reviewed_controls.control_selections[0].include_controls
    assert {c.control_id for c in controls_reviewed} >= {"sc-4", "sc-39", "sa-9.5", "mp-6"}
    states = {f.title: f.target.status.state.value for f in result.findings}
    assert states["own: AU-9"] == "satisfied"
    assert states["man: AU-9"] == "not-satisfied"
    methods = {o.title: o.methods for o in result.observations}
    assert methods["man: logs"] == ["INTERVIEW"] and methods["own: logs"] == ["TEST"]


def test_oscal_document_evidence_carries_hash(tmp_path: Path) -> None:
    doc = tmp_path / "offer.md"
    doc.write_text("S.1 Each job runs on a dedicated node.\n")
    data = copy.deepcopy(CLEAN)
    _bound(data, 0, "gpu_sharing")["proof"] = {
        "document": "offer.md",
        "excerpt": "each job runs on a dedicated node.",
    }
    ar = _oscal(tmp_path, data)
    obs = next(o for o in ar.results[0].observations if o.title == "own: gpu_sharing")
    assert obs.methods == ["EXAMINE"]
    ev = obs.relevant_evidence[0]
    assert ev.href == "offer.md"
    assert ev.props[0].value == hashlib.sha256(doc.read_bytes()).hexdigest()


def test_oscal_is_deterministic(tmp_path: Path) -> None:
    result = _run(CLEAN, tmp_path)
    a = oscal.build(result.figures, "2026-06-01T10:00:00+00:00", "isolation.yaml")
    b = oscal.build(result.figures, "2026-06-01T10:00:00+00:00", "isolation.yaml")
    assert json.dumps(a) == json.dumps(b)
