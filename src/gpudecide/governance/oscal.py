"""The isolation check as an OSCAL 1.1 assessment-results document (SPEC I5, I6).

An auditor's tooling reads OSCAL, not our evidence JSON. The document has one result: the
reviewed controls are the SP 800-53 controls the boundaries map to; each option is a
component; each boundary of each option is an observation whose method says what it rests on
(EXAMINE a document, with its SHA-256; TEST; INTERVIEW for a bare claim; a boundary left
unanswered is "not-checked"), the keys boundary with who can use the keys; each control of
each option is a finding, satisfied only when every boundary mapped to it is in place with
evidence (not satisfied for the reason "other" when none of them was answered). A claim
never satisfies a control (I6: evidence, not declarations). UUIDs are derived from the
content (uuid5), so the same check of the same inputs gives the same document.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path
from typing import Any

from gpudecide import tool_version
from gpudecide.fsutil import atomic_write_text
from gpudecide.governance import controls
from gpudecide.governance.isolation import BoundaryFigures, IsolationFigures
from gpudecide.redact import redact_all

__all__ = [
    "OSCAL_NAME",
    "OSCAL_VERSION",
    "build",
    "write",
]

OSCAL_VERSION = "1.1.2"
OSCAL_NAME = "isolation-assessment-results.json"
_NS = uuid.uuid5(uuid.NAMESPACE_URL, "https://gpudecide.invalid/oscal")
_METHODS = {"document": "EXAMINE", "test": "TEST", "claim": "INTERVIEW"}
_PROPS_NS = "https://gpudecide.invalid/ns"


def _uuid(*parts: str) -> str:
    return str(uuid.uuid5(_NS, "/".join(parts)))


def _observation(seed: str, oid: str, comp: str, b: BoundaryFigures, at: str) -> dict[str, Any]:
    proof = b.proof
    status = b.status if b.answered else "not-checked"
    props = [{"name": "boundary-status", "ns": _PROPS_NS, "value": status}]
    if b.custody is not None:
        props.append({"name": "key-custody", "ns": _PROPS_NS, "value": b.custody})
    obs: dict[str, Any] = {
        "uuid": _uuid(seed, "obs", oid, b.boundary),
        "title": f"{oid}: {b.boundary}",
        "description": (
            f"Boundary {b.boundary} of option {oid}: "
            + (b.status if b.answered else "not checked (no answer given)")
            + (f"; mechanism: {b.mechanism}" if b.mechanism else "")
            + (f"; GPU sharing mode: {b.sharing_mode}" if b.sharing_mode else "")
            + (f"; keys usable by: {b.custody}" if b.custody else "")
        ),
        "props": props,
        "methods": [_METHODS[proof.kind]],
        "subjects": [{"subject-uuid": comp, "type": "component", "title": oid}],
        "collected": at,
    }
    if proof.kind == "document":
        obs["relevant-evidence"] = [
            {
                "href": proof.document,
                "description": proof.excerpt or proof.document,
                "props": [
                    {
                        "name": "sha256",
                        "ns": "https://gpudecide.invalid/ns",
                        "value": proof.sha256,
                    }
                ],
            }
        ]
    elif proof.kind == "test":
        obs["relevant-evidence"] = [{"description": proof.test}]
    return obs


def _control_finding(
    seed: str, oid: str, control: str, bounds: list[BoundaryFigures], obs: dict[str, str]
) -> dict[str, Any]:
    ok = all(b.status == "evidenced" for b in bounds)
    states = ", ".join(f"{b.boundary}: {b.status if b.answered else 'not checked'}" for b in bounds)
    target: dict[str, Any] = {
        "type": "objective-id",
        "target-id": f"{controls.oscal_id(control)}_obj",
        "status": {"state": "satisfied" if ok else "not-satisfied"},
    }
    if not ok:
        # A control none of whose boundaries was answered is not assessed ("other"), not failed.
        assessed = any(b.answered for b in bounds)
        target["status"]["reason"] = "fail" if assessed else "other"
    return {
        "uuid": _uuid(seed, "finding", oid, control),
        "title": f"{oid}: {control}",
        "description": f"{control} for option {oid} ({states})",
        "props": [{"name": "option", "ns": "https://gpudecide.invalid/ns", "value": oid}],
        "target": target,
        "related-observations": [{"observation-uuid": obs[b.boundary]} for b in bounds],
    }


def _component(seed: str, oid: str) -> dict[str, Any]:
    return {
        "uuid": _uuid(seed, "component", oid),
        "type": "service",
        "title": oid,
        "description": f"Fine-tuning option {oid} as declared in gpudecide.yaml.",
        "status": {"state": "other"},
    }


def build(figures: IsolationFigures, at: str, plan_href: str) -> dict[str, Any]:
    """The assessment-results document of an isolation record's figures, at time `at` (UTC)."""
    # The UUIDs derive from the figures as the record holds them (its JSON, without messages).
    data = figures.model_dump(mode="json", exclude={"messages"})
    seed = hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()
    components: list[dict[str, Any]] = []
    observations: list[dict[str, Any]] = []
    findings: list[dict[str, Any]] = []
    for row in figures.options:
        oid = row.option
        component = _component(seed, oid)
        components.append(component)
        obs_ids: dict[str, str] = {}
        by_control: dict[str, list[BoundaryFigures]] = {}
        for b in row.boundaries:
            o = _observation(seed, oid, component["uuid"], b, at)
            observations.append(o)
            obs_ids[b.boundary] = o["uuid"]
            for c in b.controls:
                by_control.setdefault(c, []).append(b)
        for control in controls.all_controls():
            if control in by_control:
                findings.append(_control_finding(seed, oid, control, by_control[control], obs_ids))
    result = {
        "uuid": _uuid(seed, "result"),
        "title": "Isolation boundaries per option (gpudecide check isolation)",
        "description": "Threat-model boundaries of each option mapped to NIST SP 800-53 Rev. 5.",
        "start": at,
        "end": at,
        "local-definitions": {"components": components},
        "reviewed-controls": {
            "control-selections": [
                {
                    "include-controls": [
                        {"control-id": controls.oscal_id(c)} for c in controls.all_controls()
                    ]
                }
            ]
        },
        "observations": observations,
        "findings": findings,
    }
    return {
        "assessment-results": {
            "uuid": _uuid(seed, "document"),
            "metadata": {
                "title": "gpudecide isolation assessment results",
                "last-modified": at,
                "version": tool_version(),
                "oscal-version": OSCAL_VERSION,
            },
            "import-ap": {
                "href": plan_href,
                "remarks": "The team's isolation.yaml serves as the assessment plan.",
            },
            "results": [result],
        }
    }


def write(figures: IsolationFigures, at: str, plan_href: str, path: Path) -> Path:
    """Write the document atomically, every credential-shaped text in it masked."""
    # The team's free text (mechanisms, tests, excerpts) reaches the document: no credential
    # a person pasted there is archived with it (issue 28).
    document = redact_all(build(figures, at, plan_href))
    atomic_write_text(path, json.dumps(document, indent=2) + "\n")
    return path
