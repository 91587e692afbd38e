"""RACI findings (SPEC R1-R3, G3, D5) and standard-path findings (R4, R5): each one triggered
by a minimal change to a clean table, and cleared by undoing it or by its boundary case."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from gpudecide.governance import raci, standard_path
from gpudecide.options import OptionDecl

OPTIONS = [
    OptionDecl(id="own", kind="owned"),
    OptionDecl(id="man", kind="managed"),
]


def _asg(options: list[str], r: list[str], a: list[str], **more: list[str]) -> dict[str, Any]:
    return {"options": options, "responsible": r, "accountable": a, **more}


CLEAN: dict[str, Any] = {
    "people": [
        {"id": "pat", "roles": ["platform_engineer"], "on_call": True},
        {"id": "mia", "roles": ["ml_engineer"], "on_call": True},
        {"id": "sam", "roles": ["platform_engineer"], "on_call": True},
    ],
    "vendors": [{"id": "acme"}],
    "activities": [
        {
            "id": "update-image",
            "title": "Update image",
            "spec": "R3",
            "role": "platform_engineer",
            "assignments": [_asg(["own", "man"], ["pat"], ["pat"])],
        },
        {
            "id": "hung-nccl",
            "title": "Hung NCCL",
            "spec": "R3",
            "role": "platform_engineer",
            "on_call": True,
            "assignments": [_asg(["own"], ["pat"], ["pat"]), _asg(["man"], ["acme"], ["pat"])],
        },
        {
            "id": "restore",
            "title": "Restore",
            "spec": "R3",
            "role": "ml_engineer",
            "on_call": True,
            "assignments": [_asg(["own", "man"], ["mia"], ["mia"])],
        },
        {
            "id": "leakage",
            "title": "Leakage",
            "spec": "R1",
            "role": "ml_engineer",
            "assignments": [_asg(["own", "man"], ["mia"], ["mia"])],
        },
        {
            "id": "replace-node",
            "title": "Replace node",
            "spec": "G3",
            "applies_to": ["owned", "rented"],
            "role": "platform_engineer",
            "on_call": True,
            "node_replacement": True,
            "assignments": [_asg(["own"], ["sam"], ["sam"])],
        },
        {
            "id": "escalate",
            "title": "Escalate",
            "spec": "G3",
            "applies_to": ["managed"],
            "role": "platform_engineer",
            "on_call": True,
            "assignments": [_asg(["man"], ["sam"], ["sam"])],
        },
    ],
}


def _check(
    data: dict[str, Any], options: list[OptionDecl] = OPTIONS
) -> list[tuple[str, str, bool]]:
    result = raci.check(raci.RaciFile.model_validate(data), options)
    return [(f.id, f.option, f.stop) for f in result.findings]


def _act(data: dict[str, Any], aid: str) -> dict[str, Any]:
    return next(a for a in data["activities"] if a["id"] == aid)


def test_clean_table_has_no_findings() -> None:
    assert _check(CLEAN) == []


def test_no_accountable_stops_and_clears() -> None:
    data = copy.deepcopy(CLEAN)
    _act(data, "update-image")["assignments"][0]["accountable"] = []
    assert ("no_accountable", "own", True) in _check(data)
    assert ("no_accountable", "man", True) in _check(data)


def test_unassigned_option_is_not_checked() -> None:
    """An activity no assignment answers for an option is not checked for it: listed, no
    stop; the same row answered with nobody Accountable stops (the twin)."""
    data = copy.deepcopy(CLEAN)
    _act(data, "leakage")["assignments"][0]["options"] = ["own"]
    assert _check(data) == []
    result = raci.check(raci.RaciFile.model_validate(data), OPTIONS)
    man = result.figures.options[1]
    assert man.not_checked == ["leakage"] and man.answered and not man.stopped
    assert result.figures.options[0].not_checked == []
    _act(data, "leakage")["assignments"].append(_asg(["man"], ["mia"], []))
    assert _check(data) == [("no_accountable", "man", True)]


def test_multiple_accountable() -> None:
    data = copy.deepcopy(CLEAN)
    _act(data, "update-image")["assignments"][0]["accountable"] = ["pat", "mia"]
    found = _check(data)
    assert ("multiple_accountable", "own", False) in found
    # One Accountable is the boundary: no finding.
    assert not any(f[0] == "multiple_accountable" for f in _check(CLEAN))


def test_vendor_accountable_and_vendor_only_row() -> None:
    data = copy.deepcopy(CLEAN)
    _act(data, "update-image")["assignments"] = [
        _asg(["own"], ["pat"], ["pat"]),
        _asg(["man"], ["acme"], ["acme"]),
    ]
    found = _check(data)
    assert ("accountable_not_team", "man", False) in found
    assert ("vendor_only", "man", False) in found
    # A vendor Responsible with a person of the team Accountable is not vendor-only.
    assert not {"vendor_only", "accountable_not_team"} & {f[0] for f in _check(CLEAN)}


def test_r1_duty_given_to_vendor() -> None:
    data = copy.deepcopy(CLEAN)
    _act(data, "leakage")["assignments"] = [
        _asg(["own"], ["mia"], ["mia"]),
        _asg(["man"], ["acme", "mia"], ["mia"]),
    ]
    assert _check(data) == [("r1_vendor", "man", False)]
    # The same vendor on an R3 row is no R1 finding (hung-nccl in CLEAN).
    assert _check(CLEAN) == []


def test_on_call_duty_with_nobody_on_call_stops() -> None:
    data = copy.deepcopy(CLEAN)
    data["people"][1]["on_call"] = False  # mia owns `restore`
    found = _check(data)
    assert ("no_on_call", "own", True) in found and ("no_on_call", "man", True) in found
    # A non-on-call duty owned by someone off the rota is fine.
    _act(data, "restore")["on_call"] = False
    assert not any(f[0] == "no_on_call" for f in _check(data))


def test_role_uncovered() -> None:
    data = copy.deepcopy(CLEAN)
    _act(data, "restore")["assignments"][0]["responsible"] = ["pat"]
    assert ("role_uncovered", "own", False) in _check(data)


def test_bus_factor_above_share_and_boundary() -> None:
    data = copy.deepcopy(CLEAN)
    # `own` has 3 on-call duties: hung-nccl (pat), restore (mia), replace-node (sam).
    _act(data, "replace-node")["assignments"][0]["responsible"] = ["pat"]
    found = _check(data)
    assert ("bus_factor", "own", False) in found  # 2 of 3 > 0.5
    data["bus_factor_max_share"] = 2 / 3  # exactly the share: the boundary is allowed
    assert not any(f[0] == "bus_factor" for f in _check(data))


def test_node_replacement_stops_dedicated_only() -> None:
    data = copy.deepcopy(CLEAN)
    _act(data, "replace-node")["assignments"][0]["responsible"] = []
    found = _check(data)
    assert ("no_node_replacement", "own", True) in found
    assert not any(f[0] == "no_node_replacement" and f[1] == "man" for f in found)
    # No such activity at all: the dedicated option is stopped too.
    data["activities"] = [a for a in data["activities"] if a["id"] != "replace-node"]
    assert ("no_node_replacement", "own", True) in _check(data)


def test_hybrid_counts_as_its_contours() -> None:
    options = [*OPTIONS, OptionDecl(id="hyb", kind="hybrid", contours=["own", "man"])]
    data = copy.deepcopy(CLEAN)
    for act in data["activities"]:
        act["assignments"][0]["options"].append("hyb")
    found = _check(data, options)
    # Both the dedicated and the managed activities apply to the hybrid.
    assert raci.is_dedicated(options[2], options)
    assert found == []


# Standard path (R4, R5)

CONTROL = {c: True for c in standard_path.CONTROLS}


def _path(needs: dict[str, Any], supports: dict[str, Any], control: dict[str, bool]) -> list[str]:
    spec = standard_path.StandardPathSpec.model_validate(
        {
            "needs": needs,
            "options": [
                {"option": "own", "supports": supports, "control": control},
                {"option": "man", "supports": supports, "control": control},
            ],
        }
    )
    findings, _ = standard_path.check(spec, OPTIONS)
    return sorted({f"{f.id}:{f.option}" for f in findings})


def test_standard_path_fits() -> None:
    needs = {"custom_kernels": True, "data_formats": ["JSONL"]}
    assert _path(needs, {"custom_kernels": True, "data_formats": ["jsonl"]}, CONTROL) == []


def test_standard_path_mismatch_managed_points_to_dedicated() -> None:
    found = _path({"custom_kernels": True}, {"custom_kernels": False}, CONTROL)
    assert found == ["path_mismatch:own", "path_mismatch_managed:man"]
    found = _path({"export_formats": ["safetensors"]}, {"export_formats": ["gguf"]}, CONTROL)
    assert found == ["path_mismatch:own", "path_mismatch_managed:man"]


def test_ssh_is_not_control() -> None:
    control = {**CONTROL, "restore_from_backup": False, "ssh_access": True}
    found = _path({}, {}, control)
    assert "ssh_not_control:own" in found and "control_missing:own" in found
    # SSH beside all five controls is no finding: nothing is missing.
    assert _path({}, {}, {**CONTROL, "ssh_access": True}) == []


def test_unanswered_option() -> None:
    spec = standard_path.StandardPathSpec.model_validate({"options": []})
    findings, figures = standard_path.check(spec, OPTIONS)
    assert [f.id for f in findings] == ["path_unanswered", "path_unanswered"]
    assert figures.options[0].answered is False


@pytest.mark.parametrize("share", [0, 1.5])
def test_bus_factor_share_bounds(share: float) -> None:
    with pytest.raises(ValueError):
        raci.RaciFile.model_validate({**CLEAN, "bus_factor_max_share": share})


# --- rows left unanswered, placeholders, on-call duty ---------------------------------------


def _figures(data: dict[str, Any], options: list[OptionDecl] = OPTIONS) -> raci.RaciFigures:
    return raci.check(raci.RaciFile.model_validate(data), options).figures


@pytest.mark.parametrize("aid", [a["id"] for a in CLEAN["activities"]])
def test_every_activity_left_empty_is_not_checked(aid: str) -> None:
    """Each activity with `assignments: []` is not checked for the options it applies to:
    never a stop by being empty (the node replacement and on-call rows included)."""
    data = copy.deepcopy(CLEAN)
    _act(data, aid)["assignments"] = []
    assert [f for f in _check(data) if f[2]] == []
    rows = {o.option: o for o in _figures(data).options}
    applies = _act(data, aid).get("applies_to", ["owned", "rented", "managed"])
    kinds = {"own": "owned", "man": "managed"}
    for oid, row in rows.items():
        assert (aid in row.not_checked) is (kinds[oid] in applies)
        assert row.answered and not row.stopped


def test_a_fresh_table_stops_nothing() -> None:
    """Every row empty: both options not checked as a whole, no finding at all."""
    data = copy.deepcopy(CLEAN)
    for act in data["activities"]:
        act["assignments"] = []
    assert _check(data) == []
    rows = _figures(data).options
    assert [r.answered for r in rows] == [False, False]
    assert rows[0].not_checked == [
        "update-image",
        "hung-nccl",
        "restore",
        "leakage",
        "replace-node",
    ]


def test_rows_naming_only_placeholders_are_not_checked() -> None:
    """The template's people and vendors are named "placeholder: ..."; a row naming only them
    is not an answer. One real name in it makes it one, with a finding for the placeholder."""
    data = copy.deepcopy(CLEAN)
    data["people"].append(
        {"id": "tbd", "name": "placeholder: ML engineer", "roles": ["ml_engineer"]}
    )
    data["vendors"].append({"id": "ven", "name": "Placeholder: managed vendor"})
    _act(data, "leakage")["assignments"] = [
        _asg(["own"], ["tbd"], ["tbd"], informed=["ven"]),
        _asg(["man"], ["tbd"], ["mia"]),
    ]
    assert _check(data) == [("placeholder_party", "man", False)]
    rows = {o.option: o for o in _figures(data).options}
    assert rows["own"].not_checked == ["leakage"] and rows["man"].not_checked == []
    # A name that only contains the word is a real name.
    data["people"][-1]["name"] = "Aigerim (placeholder for the rota)"
    assert ("placeholder_party", "man", False) not in _check(data)


def test_an_option_with_no_on_call_duty_is_stopped() -> None:
    """D5: a RACI with no on-call activity for an option stops it (nobody answers when it
    breaks); one on-call duty owned by an on-call person of the team lifts it."""
    data = copy.deepcopy(CLEAN)
    for act in data["activities"]:
        act["on_call"] = False
    found = _check(data)
    assert ("no_on_call_duty", "own", True) in found and ("no_on_call_duty", "man", True) in found
    _act(data, "restore")["on_call"] = True  # mia, on call, owns it for both options
    assert not any(f[0] == "no_on_call_duty" for f in _check(data))
    # On-call duties that apply to the other kinds only do not count for this option.
    _act(data, "restore")["applies_to"] = ["owned"]
    found = _check(data)
    assert ("no_on_call_duty", "man", True) in found
    assert ("no_on_call_duty", "own", True) not in found


def test_on_call_duties_owned_by_vendors_only_stop() -> None:
    data = copy.deepcopy(CLEAN)
    for act in data["activities"]:
        if act.get("on_call"):
            for asg in act["assignments"]:
                asg["options"] = [o for o in asg["options"] if o != "man"]
            act["assignments"] = [a for a in act["assignments"] if a["options"]]
            act["assignments"].append(_asg(["man"], ["acme"], ["acme"]))
    stops = {(f[0], f[1]) for f in _check(data) if f[2]}
    assert ("no_on_call", "man") in stops
    assert not {s for s in stops if s[1] == "own"}


def test_unanswered_node_replacement_is_not_checked() -> None:
    data = copy.deepcopy(CLEAN)
    _act(data, "replace-node")["assignments"] = []
    assert not any(f[0] == "no_node_replacement" for f in _check(data))
    assert "replace-node" in _figures(data).options[0].not_checked


def test_rules_give_no_score_to_an_unchecked_option_and_count_unchecked_rows() -> None:
    from gpudecide import evidence as ev
    from gpudecide.findings import Suggestion
    from gpudecide.governance import rules

    def scores(data: dict[str, Any]) -> dict[str, int]:
        figures = _figures(data)
        record = ev.Evidence(
            kind="raci",
            title="t",
            spec_ids=[],
            verdict="pass",
            summary="s",
            figures=figures.model_dump(mode="json"),
        )
        return {o.option: o.score for o in rules.rules(record) if isinstance(o, Suggestion)}

    assert scores(CLEAN) == {"own": 5, "man": 5}
    data = copy.deepcopy(CLEAN)
    _act(data, "leakage")["assignments"][0]["options"] = ["own"]
    _act(data, "update-image")["assignments"][0]["options"] = ["own"]
    _act(data, "restore")["assignments"][0]["options"] = ["own"]
    assert scores(data) == {"own": 5, "man": 3}  # three rows not checked read like findings
    for act in data["activities"]:
        act["assignments"] = [a for a in act["assignments"] if "own" in a["options"]]
        for a in act["assignments"]:
            a["options"] = ["own"]
    assert scores(data) == {"own": 5}  # nothing answered for man: no score, an assumption


def test_a_control_or_support_left_null_is_not_checked() -> None:
    """A control or a supported need left out or null is not checked: no missing control and
    no gap by being empty; stated false, it is one (the twin)."""
    needs = {"custom_kernels": True, "data_formats": ["jsonl"]}
    spec = standard_path.StandardPathSpec.model_validate(
        {
            "needs": needs,
            "options": [
                {"option": "own", "supports": {"custom_kernels": None}, "control": CONTROL},
                {"option": "man", "supports": {"data_formats": ["jsonl"]}, "control": {}},
            ],
        }
    )
    findings, figures = standard_path.check(spec, OPTIONS)
    assert findings == []
    own, man = figures.options
    assert own.answered and own.not_checked == ["custom_kernels", "data_formats"]
    assert man.answered and man.not_checked == ["custom_kernels", *standard_path.CONTROLS]
    spec.options[0].supports.custom_kernels = False
    spec.options[1].control.observable_queue = False
    found = {f"{f.id}:{f.option}" for f in standard_path.check(spec, OPTIONS)[0]}
    assert found == {"path_mismatch:own", "control_missing:man"}


def test_an_entry_stating_nothing_is_unanswered() -> None:
    spec = standard_path.StandardPathSpec.model_validate(
        {"options": [{"option": "own", "supports": {}, "control": {"ssh_access": None}}]}
    )
    _, figures = standard_path.check(spec, OPTIONS)
    assert [r.answered for r in figures.options] == [False, False]
