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

from gpudecide.errors import InputError
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
    _bound(data, 1, "gpu_sharing")["sharing_mode"] = mode
    found = _ids(data, tmp_path)
    if weak:
        assert found == [("protection_missing", "man", True), ("weak_gpu_sharing", "man", False)]
    else:
        assert found == []


def test_encrypted_does_not_close_residue(tmp_path: Path) -> None:
    data = copy.deepcopy(CLEAN)
    data["options"][1]["residue"][1]["handling"] = "encrypted_only"  # local_nvme
    found = _ids(data, tmp_path)
    # residue is required against the neighbour of a closed asset: a stop, and the I4 finding.
    assert ("residue_encrypted_only", "man", False) in found
    assert ("protection_missing", "man", True) in found


@pytest.mark.parametrize("handling", ["cleared", "deleted", "not_kept"])
def test_closing_residue_handlings(tmp_path: Path, handling: str) -> None:
    data = copy.deepcopy(CLEAN)
    data["options"][0]["residue"][0]["handling"] = handling
    assert _ids(data, tmp_path) == []


@pytest.mark.parametrize("item", isolation.RESIDUE_ITEMS)
def test_unanswered_residue_item_is_not_checked(tmp_path: Path, item: str) -> None:
    """A residue item left out, or left as the template's placeholder, is not checked: no
    finding and no stop although residue is required; answered `unknown`, it stops."""
    for placeholder in (None, {"item": item, "handling": "unknown", "detail": ""}):
        data = copy.deepcopy(CLEAN)
        entry = data["options"][1]
        entry["residue"] = [r for r in entry["residue"] if r["item"] != item]
        if placeholder is not None:
            entry["residue"].append(placeholder)
        result = _run(data, tmp_path)
        assert result.findings == []
        row = result.figures.options[1]
        assert row.not_checked == [item] and row.answered and not row.stopped
        residue = next(b for b in row.boundaries if b.boundary == "residue")
        assert residue.answered is False and residue.status == "unknown"
    # The twin: the team asked and does not know. That is an answer, and it stops.
    data = copy.deepcopy(CLEAN)
    answer = next(r for r in data["options"][1]["residue"] if r["item"] == item)
    answer.update(handling="unknown", detail="the vendor does not say", proof=None)
    found = _ids(data, tmp_path)
    assert ("protection_missing", "man", True) in found
    assert ("residue_open", "man", False) in found


def test_honest_kept_image_cache_stops_only_where_an_adversary_reaches(tmp_path: Path) -> None:
    """`image_cache: kept` on an owned single-tenant node: the only adversary that needs
    residue (a vendor's other customers) cannot exist there, so no stop, only the I4 finding;
    the same answer on a managed option, where they exist, stops it."""
    data = copy.deepcopy(CLEAN)
    for entry in data["options"]:
        cache = next(r for r in entry["residue"] if r["item"] == "image_cache")
        cache.update(handling="kept", detail="images stay in the node cache", proof=None)
    found = _ids(data, tmp_path)
    assert ("residue_open", "own", False) in found
    assert not any(f[1] == "own" and f[2] for f in found)
    assert ("protection_missing", "man", True) in found
    row = _run(data, tmp_path).figures.options[0]
    assert "residue" not in row.required and "gpu_sharing" not in row.required
    assert [(n.adversary, n.source) for n in row.not_applied] == [("vendor_neighbour", "kind")]
    assert "no vendor" in row.not_applied[0].reason
    # Another team of the organisation can reach an owned cluster: then residue holds there.
    data["assets"][0]["threats"].append({"adversary": "another_team", "requires": ["residue"]})
    assert ("protection_missing", "own", True) in _ids(data, tmp_path)


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


def test_unanswered_option_is_not_checked(tmp_path: Path) -> None:
    """An option isolation.yaml does not answer is not checked: no finding, no stop, every
    boundary and residue item listed as not checked (the decision sees `answered` false)."""
    data = copy.deepcopy(CLEAN)
    data["options"] = data["options"][:1]
    result = _run(data, tmp_path)
    assert result.findings == []
    row = result.figures.options[1]
    assert row.option == "man" and not row.answered and not row.stopped
    assert row.not_checked == [*isolation.ANSWERED_BOUNDARIES, *isolation.RESIDUE_ITEMS]
    assert all(not b.answered for b in row.boundaries)


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


# --- rows left unanswered, key custody, adversaries per option ------------------------------

EVERY: dict[str, Any] = {
    # One closed asset that needs every boundary against an adversary that reaches every kind.
    "assets": [
        {
            "id": "train",
            "closed": True,
            "threats": [
                {"adversary": "external_attacker", "requires": list(isolation.BOUNDARIES)},
            ],
        }
    ],
    "options": [{"option": "own", **_answers()}, {"option": "man", **_answers()}],
}
for _entry in EVERY["options"]:
    next(b for b in _entry["boundaries"] if b["boundary"] == "keys")["custody"] = "team"
PLACEHOLDER: dict[str, Any] = {
    "status": "unknown",
    "mechanism": "",
    "sharing_mode": None,
    "proof": {"document": None, "excerpt": None, "test": None},
}


@pytest.mark.parametrize("boundary", isolation.ANSWERED_BOUNDARIES)
def test_every_boundary_left_as_the_placeholder_is_not_checked(
    tmp_path: Path, boundary: str
) -> None:
    """Each boundary, left out or left as the template wrote it, is not checked: no finding
    and no stop although a closed asset requires it; `unknown` with a word of why stops."""
    for answer in (None, {"boundary": boundary, **PLACEHOLDER}):
        data = copy.deepcopy(EVERY)
        entry = data["options"][1]
        entry["boundaries"] = [b for b in entry["boundaries"] if b["boundary"] != boundary]
        if answer is not None:
            entry["boundaries"].append(answer)
        result = _run(data, tmp_path)
        assert result.findings == [], boundary
        row = result.figures.options[1]
        assert row.not_checked == [boundary] and not row.stopped
        figure = next(b for b in row.boundaries if b.boundary == boundary)
        assert figure.answered is False and figure.status == "unknown"
    data = copy.deepcopy(EVERY)
    _bound(data, 1, boundary).update(status="unknown", mechanism="the vendor would not say")
    _bound(data, 1, boundary).pop("proof")
    _bound(data, 1, boundary).pop("sharing_mode", None)
    assert ("protection_missing", "man", True) in _ids(data, tmp_path)


def _keys(data: dict[str, Any], custody: str | None) -> dict[str, Any]:
    keys = _bound(data, 1, "keys")
    if custody is None:
        keys.pop("custody", None)
    else:
        keys["custody"] = custody
    return data


KEYS_THREAT: dict[str, Any] = {
    "assets": [
        {
            "id": "train",
            "closed": True,
            "threats": [{"adversary": "platform_admin", "requires": ["keys"]}],
        }
    ],
    "options": [{"option": "own", **_answers()}, {"option": "man", **_answers()}],
}


@pytest.mark.parametrize(
    ("custody", "expected"),
    [
        ("provider", ("keys_provider_custody", "man", True)),
        ("shared", ("keys_shared_custody", "man", False)),
        ("unknown", ("keys_custody_unknown", "man", False)),
        (None, ("keys_custody_unknown", "man", False)),
        ("team", None),
    ],
)
def test_key_custody_against_the_platform_administrator(
    tmp_path: Path, custody: str | None, expected: tuple[str, str, bool] | None
) -> None:
    """Keys the provider can use do not hold against the platform administrator: a stop for
    a closed asset; the team's key in the provider's KMS is a finding; custody not stated is
    a finding; keys only the team can use are none."""
    data = copy.deepcopy(KEYS_THREAT)
    for entry in data["options"]:
        next(b for b in entry["boundaries"] if b["boundary"] == "keys")["custody"] = "team"
    found = _ids(_keys(data, custody), tmp_path)
    assert found == ([expected] if expected else [])
    row = _run(data, tmp_path).figures.options[1]
    keys = next(b for b in row.boundaries if b.boundary == "keys")
    assert keys.custody == (custody or "unknown")
    # custody is said on the keys row only, and the record keeps it there only.
    dumped = row.model_dump(mode="json")["boundaries"]
    assert [b["boundary"] for b in dumped if "custody" in b] == ["keys"]


@pytest.mark.parametrize("adversary", ["external_attacker", "another_team", "contractor"])
def test_provider_custody_is_no_finding_against_others(tmp_path: Path, adversary: str) -> None:
    """The twin: against an adversary outside the provider, provider-held keys still hold."""
    data = copy.deepcopy(KEYS_THREAT)
    data["assets"][0]["threats"][0]["adversary"] = adversary
    next(b for b in data["options"][0]["boundaries"] if b["boundary"] == "keys")["custody"] = "team"
    assert _ids(_keys(data, "provider"), tmp_path) == []


def test_provider_custody_for_an_open_asset_is_not_a_stop(tmp_path: Path) -> None:
    data = copy.deepcopy(KEYS_THREAT)
    data["assets"][0]["closed"] = False
    next(b for b in data["options"][0]["boundaries"] if b["boundary"] == "keys")["custody"] = "team"
    assert _ids(_keys(data, "provider"), tmp_path) == [("keys_provider_custody", "man", False)]


def test_old_files_without_custody_load_as_unknown(tmp_path: Path) -> None:
    """isolation.yaml written before `custody` existed still loads; its keys read unknown."""
    result = _run(copy.deepcopy(CLEAN), tmp_path)
    for row in result.figures.options:
        keys = next(b for b in row.boundaries if b.boundary == "keys")
        assert keys.custody == "unknown"


def test_the_team_says_an_adversary_cannot_reach_an_option(tmp_path: Path) -> None:
    """`not_applicable` with a reason leaves the adversary out for that option only; the
    reason is kept as written for the report."""
    data = copy.deepcopy(CLEAN)
    _bound(data, 1, "support_access")["status"] = "missing"
    assert ("protection_missing", "man", True) in _ids(data, tmp_path)
    reason = "support staff never reach the tenant: access is by the bank's ticket only"
    data["options"][1]["not_applicable"] = [{"adversary": "platform_admin", "reason": reason}]
    assert _ids(data, tmp_path) == []
    row = _run(data, tmp_path).figures.options[1]
    assert [(n.adversary, n.source, n.reason) for n in row.not_applied] == [
        ("platform_admin", "team", reason)
    ]
    assert "support_access" not in row.required
    # The other option keeps the adversary.
    assert "support_access" in _run(data, tmp_path).figures.options[0].required


@pytest.mark.parametrize(
    ("contours", "absent"),
    [(("owned", "owned"), True), (("owned", "managed"), False), (("owned", "rented"), False)],
)
def test_a_hybrid_is_reached_by_what_reaches_any_contour(
    tmp_path: Path, contours: tuple[str, str], absent: bool
) -> None:
    options = [
        OptionDecl(id="a", kind=contours[0]),  # type: ignore[arg-type]
        OptionDecl(id="b", kind=contours[1]),  # type: ignore[arg-type]
        OptionDecl(id="hyb", kind="hybrid", contours=["a", "b"]),
    ]
    data = copy.deepcopy(CLEAN)
    data["options"] = [{"option": "hyb", **_answers()}]
    iso = isolation.IsolationFile.model_validate(data)
    row = isolation.check(iso, options, tmp_path).figures.options[2]
    assert ("vendor_neighbour" in {n.adversary for n in row.not_applied}) is absent
    assert ("residue" in row.required) is not absent


def _write_iso(root: Path, data: dict[str, Any]) -> Path:
    path = root / "isolation.yaml"
    path.write_text(json.dumps(data))  # JSON is YAML
    return path


def _load(root: Path, data: dict[str, Any]) -> isolation.IsolationFile:
    return isolation.load_isolation(_write_iso(root, data), OPTIONS, root)[0]


@pytest.mark.parametrize("reason", ["", "   ", "\n"])
def test_not_applicable_needs_a_reason(tmp_path: Path, reason: str) -> None:
    data = copy.deepcopy(CLEAN)
    data["options"][0]["not_applicable"] = [{"adversary": "contractor", "reason": reason}]
    with pytest.raises(InputError) as err:
        _load(tmp_path, data)
    assert err.value.field == "options.0.not_applicable.0.reason"
    assert "no reason why contractor cannot reach this option" in str(err.value)


def test_not_applicable_twice_and_unknown_adversary(tmp_path: Path) -> None:
    data = copy.deepcopy(CLEAN)
    twice = [{"adversary": "contractor", "reason": "none hired"}] * 2
    data["options"][0]["not_applicable"] = twice
    with pytest.raises(InputError, match="declared twice"):
        _load(tmp_path, data)
    data["options"][0]["not_applicable"] = [{"adversary": "alien", "reason": "none"}]
    with pytest.raises(InputError) as err:
        _load(tmp_path, data)
    assert err.value.field == "options.0.not_applicable.0.adversary"


@pytest.mark.parametrize("boundary", [b for b in isolation.ANSWERED_BOUNDARIES if b != "keys"])
def test_custody_belongs_to_keys_only(tmp_path: Path, boundary: str) -> None:
    data = copy.deepcopy(CLEAN)
    _bound(data, 0, boundary)["custody"] = "team"
    with pytest.raises(InputError) as err:
        _load(tmp_path, data)
    assert "custody belongs to keys only" in str(err.value)
    assert err.value.field.endswith(".custody")
    data = copy.deepcopy(CLEAN)
    _bound(data, 0, "keys")["custody"] = "team"
    assert _load(tmp_path, data).options[0].boundaries  # the twin loads


@pytest.mark.parametrize("custody", ["Team", "vendor", "", 1, True])
def test_custody_of_another_value_is_refused(tmp_path: Path, custody: object) -> None:
    data = copy.deepcopy(CLEAN)
    _bound(data, 0, "keys")["custody"] = custody
    with pytest.raises(InputError) as err:
        _load(tmp_path, data)
    assert err.value.field == "options.0.boundaries.5.custody"


def _proof_places(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Every place of isolation.yaml a document proof can stand: a boundary, a residue item,
    a regulated document."""
    entry = data["options"][0]
    return [entry["boundaries"][0], entry["residue"][0], entry["regulated"][0]]


@pytest.mark.parametrize("where", [0, 1, 2])
@pytest.mark.parametrize("kind", ["absolute", "dotdot", "link", "nested-dotdot"])
def test_a_document_outside_the_workspace_is_refused(tmp_path: Path, where: int, kind: str) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    outside = tmp_path / "secret.md"
    outside.write_text("S.1 Each job runs on a dedicated node.\n")
    (root / "docs").mkdir()
    (root / "docs" / "out.md").symlink_to(outside)
    rel = {
        "absolute": str(outside),
        "dotdot": "../secret.md",
        "link": "docs/out.md",
        "nested-dotdot": "docs/../../secret.md",
    }[kind]
    data = copy.deepcopy(CLEAN)
    _proof_places(data)[where]["proof"] = {
        "document": rel,
        "excerpt": "each job runs on a dedicated node.",
    }
    with pytest.raises(InputError) as err:
        _load(root, data)
    assert "is outside the workspace" in str(err.value)
    assert err.value.field.endswith(".proof.document")
    # The twin: the same document kept in the workspace is read and hashed.
    (root / "docs" / "in.md").write_text(outside.read_text())
    _proof_places(data)[where]["proof"]["document"] = "docs/in.md"
    assert _load(root, data).options


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_a_document_that_is_no_regular_file_is_refused(tmp_path: Path, kind: str) -> None:
    import os

    target = tmp_path / "doc"
    if kind == "folder":
        target.mkdir()
    else:
        os.mkfifo(target)
    data = copy.deepcopy(CLEAN)
    _proof_places(data)[0]["proof"] = {"document": "doc", "excerpt": "anything"}
    with pytest.raises(InputError, match="not a regular file"):
        _load(tmp_path, data)


def test_oscal_says_not_checked_and_custody(tmp_path: Path) -> None:
    data = copy.deepcopy(CLEAN)
    entry = data["options"][1]
    entry["boundaries"] = [b for b in entry["boundaries"] if b["boundary"] != "incident_response"]
    _bound(data, 0, "keys")["custody"] = "shared"
    ar = _oscal(tmp_path, data)
    observations = {o.title: o for o in ar.results[0].observations}
    props = {p.name: p.value for p in observations["man: incident_response"].props}
    assert props["boundary-status"] == "not-checked"
    keys = {p.name: p.value for p in observations["own: keys"].props}
    assert keys["key-custody"] == "shared"
    states = {f.title: f.target.status for f in ar.results[0].findings}
    assert states["man: IR-4"].state.value == "not-satisfied"
    assert states["man: IR-4"].reason == "other"
    assert states["own: IR-4"].state.value == "satisfied"
