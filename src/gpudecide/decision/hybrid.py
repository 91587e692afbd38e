"""`gpudecide check hybrid`: do the two contours of a hybrid really form one system? (SPEC
H1-H3)

A hybrid works only when a run can move between its contours unchanged: the same container
digest, checkpoint format and manifest schema (read from each contour's run manifest, H2),
a stated boundary (what crosses it and who approves a crossing, H1), and one evaluation
contract (same test-set hash, prompt versions, thresholds and publishing rule, H3). Each
difference is a finding on the hybrid option.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from gpudecide import evidence as ev
from gpudecide.errors import InputError
from gpudecide.findings import StopFactor, Suggestion
from gpudecide.i18n import N_
from gpudecide.inputs import load_yaml_model, node_line, yaml_root
from gpudecide.message import english, message, nmessage
from gpudecide.options import OptionDecl, require_known

__all__ = [
    "HYBRID_NAME",
    "MESSAGES",
    "Boundary",
    "Contour",
    "Evaluation",
    "HybridFile",
    "HybridSpec",
    "check",
    "check_spec",
    "load",
    "rules",
]


HYBRID_NAME = "hybrid.yaml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Evaluation(_Strict):
    """The evaluation contract a contour applies before a model is published (H3)."""

    test_set_sha256: str = Field(
        pattern=r"^[0-9a-f]{64}$", description="SHA-256 of the evaluation test set."
    )
    prompt_versions: list[str] = Field(description="Versions of the evaluation prompts.")
    thresholds: dict[str, float] = Field(description="Metric -> minimum to publish.")
    publishing_rule: str = Field(min_length=1, description="Who publishes, on what result.")


class Contour(_Strict):
    """One side of the hybrid."""

    option: str = Field(description="Id of the contour's option (declared in gpudecide.yaml).")
    manifest: str = Field(description="Run manifest of a run on this contour (path).")
    evaluation: Evaluation = Field(description="Its evaluation contract.")


class Boundary(_Strict):
    """What crosses between the contours, and who approves it (H1)."""

    crosses: list[str] = Field(description="What crosses: adapters, metrics, datasets, ...")
    approved_by: str = Field(default="", description="Who approves a crossing.")
    evaluated_on: list[str] = Field(
        default_factory=list,
        description="The contours where the evaluation contract runs before publishing (H2).",
    )


class HybridSpec(_Strict):
    """One hybrid option and its two contours."""

    option: str = Field(description="Id of the hybrid option.")
    contours: list[Contour] = Field(min_length=2, max_length=2, description="Its two contours.")
    boundary: Boundary = Field(description="The boundary between them.")


class HybridFile(_Strict):
    """Schema of hybrid.yaml."""

    version: int = Field(default=1, ge=1, le=1, description="Schema version.")
    hybrids: list[HybridSpec] = Field(default_factory=list, description="The hybrids.")


# Each finding's text, an English msgid translated where it is shown (`decision` catalogue).
MESSAGES = {
    "container_digest_differs": N_("container digests differ or are missing ({shown})"),
    "checkpoint_format_differs": N_("checkpoint formats differ or are missing ({shown})"),
    "manifest_schema_differs": N_("manifest schemas differ or are missing ({shown})"),
    "evaluation_test_set_sha256_differs": N_("evaluation test sets differ ({shown})"),
    "evaluation_prompt_versions_differs": N_("evaluation prompt versions differ ({shown})"),
    "evaluation_thresholds_differs": N_("evaluation thresholds differ ({shown})"),
    "evaluation_publishing_rule_differs": N_("publishing rules differ ({shown})"),
    "boundary_unstated": N_("nothing is said to cross the boundary"),
    "boundary_unapproved": N_("nobody approves a crossing"),
    "evaluation_place_unstated": N_("where the evaluation runs is not stated"),
}


def _finding(fid: str, **args: Any) -> dict[str, Any]:
    msg = message("decision", MESSAGES[fid], **args)
    return {"id": fid, "detail": english(msg), "message": msg}


def _same(values: dict[str, Any], fid: str) -> list[dict[str, Any]]:
    if len({repr(v) for v in values.values()}) == 1 and None not in values.values():
        return []
    return [_finding(fid, shown=", ".join(f"{k}: {v}" for k, v in values.items()))]


def check_spec(spec: HybridSpec, root: Path) -> dict[str, Any]:
    """Findings of one hybrid; the contours' manifests are read, never executed."""
    # The manifest reader (and the artifact formats behind it) loads with the first hybrid
    # checked: `assess` reads this module's rules on every run, most with no hybrid.
    from gpudecide.artifacts.manifest import load_manifest

    manifests = {c.option: load_manifest(root / c.manifest) for c in spec.contours}
    findings: list[dict[str, Any]] = []
    findings += _same(
        {o: m.container_digest for o, m in manifests.items()}, "container_digest_differs"
    )
    findings += _same(
        {o: m.checkpoint_format for o, m in manifests.items()}, "checkpoint_format_differs"
    )
    findings += _same({o: m.schema_ for o, m in manifests.items()}, "manifest_schema_differs")
    evals = {c.option: c.evaluation for c in spec.contours}
    for key in ("test_set_sha256", "prompt_versions", "thresholds", "publishing_rule"):
        findings += _same(
            {o: getattr(e, key) for o, e in evals.items()}, f"evaluation_{key}_differs"
        )
    if not spec.boundary.crosses:
        findings.append(_finding("boundary_unstated"))
    if not spec.boundary.approved_by.strip():
        findings.append(_finding("boundary_unapproved"))
    if not spec.boundary.evaluated_on:
        findings.append(_finding("evaluation_place_unstated"))
    facts = [
        {
            "option": c.option,
            "container_digest": manifests[c.option].container_digest,
            "checkpoint_format": manifests[c.option].checkpoint_format,
            "manifest_schema": manifests[c.option].schema_,
            "test_set_sha256": c.evaluation.test_set_sha256,
            "prompt_versions": list(c.evaluation.prompt_versions),
            "thresholds": dict(c.evaluation.thresholds),
            "publishing_rule": c.evaluation.publishing_rule,
        }
        for c in spec.contours
    ]
    return {
        "option": spec.option,
        "contours": [c.option for c in spec.contours],
        "boundary": spec.boundary.model_dump(),
        "facts": facts,
        "findings": findings,
    }


def load(path: Path, options: list[OptionDecl]) -> HybridFile:
    """Read hybrid.yaml; options must be declared hybrids and their declared contours."""
    spec = load_yaml_model(path, HybridFile)
    root = yaml_root(path)
    by_id = {o.id: o for o in options}
    seen: set[str] = set()
    for i, h in enumerate(spec.hybrids):
        line = node_line(root, ("hybrids", i, "option"))
        require_known(h.option, options, path=path, field=f"hybrids.{i}.option", line=line)
        if by_id[h.option].kind != "hybrid":
            raise InputError(
                "{option!r} is not a hybrid",
                path=path,
                line=line,
                field=f"hybrids.{i}.option",
                option=h.option,
            )
        if h.option in seen:
            raise InputError(
                "{option} is described twice",
                path=path,
                line=line,
                field=f"hybrids.{i}.option",
                hint="keep one entry per hybrid",
                option=h.option,
            )
        seen.add(h.option)
        if len({c.option for c in h.contours}) != len(h.contours):
            raise InputError(
                "a hybrid's two contours are different options",
                path=path,
                line=node_line(root, ("hybrids", i, "contours")),
                field=f"hybrids.{i}.contours",
            )
        declared = set(by_id[h.option].contours)
        for j, place in enumerate(h.boundary.evaluated_on):
            if place not in declared:
                raise InputError(
                    "{place!r} is not a contour of {hybrid}",
                    path=path,
                    line=node_line(root, ("hybrids", i, "boundary", "evaluated_on", j)),
                    field=f"hybrids.{i}.boundary.evaluated_on.{j}",
                    hint="its contours: {known}",
                    place=place,
                    hybrid=h.option,
                    known=", ".join(sorted(declared)),
                )
        for j, c in enumerate(h.contours):
            loc = ("hybrids", i, "contours", j, "option")
            if c.option not in declared:
                raise InputError(
                    "{place!r} is not a contour of {hybrid}",
                    path=path,
                    line=node_line(root, loc),
                    field=f"hybrids.{i}.contours.{j}.option",
                    hint="its contours: {known}",
                    place=c.option,
                    hybrid=h.option,
                    known=", ".join(sorted(declared)) or "none declared",
                )
    return spec


def check(path: Path, options: list[OptionDecl], root: Path) -> ev.Evidence:
    """The evidence record of every hybrid in hybrid.yaml (kind "hybrid")."""
    spec = load(path, options)
    results = [check_spec(h, root) for h in spec.hybrids]
    count = sum(len(r["findings"]) for r in results)
    summary = message(
        "decision",
        "{hybrids}, {findings}",
        hybrids=nmessage("decision", "{n} hybrid", "{n} hybrids", n=len(results)),
        findings=nmessage("decision", "{n} finding", "{n} findings", n=count),
    )
    inputs = [ev.input_ref(path, root)] + [
        ev.input_ref(root / c.manifest, root) for h in spec.hybrids for c in h.contours
    ]
    return ev.Evidence(
        kind="hybrid",
        title="Hybrid: one system across two contours",
        spec_ids=["H1", "H2", "H3"],
        verdict="pass" if count == 0 else "warn",
        summary=english(summary),
        figures={"hybrids": results, "messages": {"summary": summary, "notes": []}},
        inputs=inputs,
    )


def rules(record: ev.Evidence) -> list[Suggestion | StopFactor]:
    """Operations of each hybrid: 5 without findings, 3 with one or two, 1 with more."""
    out: list[Suggestion | StopFactor] = []
    for h in record.figures.get("hybrids", []):
        n = len(h["findings"])
        score = 5 if n == 0 else 3 if n <= 2 else 1
        ids = ", ".join(f["id"] for f in h["findings"]) or message("decision", "none")
        msg = nmessage(
            "decision",
            "{n} hybrid finding ({ids}): none 5, one or two 3, more 1",
            "{n} hybrid findings ({ids}): none 5, one or two 3, more 1",
            n=n,
            ids=ids,
        )
        out.append(
            Suggestion(
                h["option"],
                "operations",
                score,
                english(msg),
                (record.id,),
                rule_message=msg,
            )
        )
    return out
