"""Threat model and isolation boundaries per option, from isolation.yaml (SPEC I1-I6).

The team names its assets and, for each, the adversaries it must be protected from and the
boundaries that must hold against them (I2). Per option it answers each boundary (I3) with
its mechanism and its proof: a document excerpt (the document is hashed), a test result, or
nothing, when the answer is only a claim. What happens after the job (I4) is answered item
by item; "encrypted" does not close any of them, because training decrypts the data. The
regulated-evidence list (I6) is present or missing per option.

A boundary a closed asset requires that is missing, unknown or too weak (GPU sharing without
memory isolation) stops the option (D5); a required boundary resting on a claim, an open
residue item, one mechanism claimed for boundaries of different control families (I5) and a
missing I6 document are findings on the isolation criterion.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from gpudecide import evidence as ev
from gpudecide.errors import InputError
from gpudecide.governance import controls
from gpudecide.governance.controls import Boundary
from gpudecide.governance.findings import Figure, Finding, RecordMessages, finding
from gpudecide.governance.loading import Loaded, load
from gpudecide.inputs import read_input_text
from gpudecide.options import OPTION_ID_PATTERN, OptionDecl

__all__ = [
    "ANSWERED_BOUNDARIES",
    "BOUNDARIES",
    "CLOSING_HANDLING",
    "DOCUMENT_LIMIT",
    "ISOLATION_NAME",
    "REGULATED_ITEMS",
    "RESIDUE_ITEMS",
    "SHARING_FACTS",
    "Adversary",
    "Asset",
    "BoundaryAnswer",
    "BoundaryFigures",
    "BoundaryStatus",
    "Coverage",
    "Handling",
    "IsolationFigures",
    "IsolationFile",
    "IsolationOptionFigures",
    "IsolationResult",
    "OptionIsolation",
    "Placement",
    "Proof",
    "ProofFigures",
    "ProofKind",
    "RegulatedEvidence",
    "RegulatedItem",
    "ResidueAnswer",
    "ResidueFigures",
    "ResidueItem",
    "SharingFact",
    "SharingMode",
    "Threat",
    "boundary_status",
    "check",
    "coverage",
    "load_isolation",
    "placements",
    "proof_kind",
    "residue_status",
]

ISOLATION_NAME = "isolation.yaml"
Adversary = Literal[
    "another_team",
    "vendor_neighbour",
    "platform_admin",
    "contractor",
    "compromised_account",
    "external_attacker",
]
SharingMode = Literal["exclusive", "mig", "mps", "time_slicing"]
ResidueItem = Literal[
    "gpu_memory",
    "local_nvme",
    "image_cache",
    "volume_deletion",
    "diagnostic_bundle",
    "support_memory_snapshot",
]
RegulatedItem = Literal[
    "data_flow_diagram",
    "support_roles",
    "audit_events",
    "deletion_procedure",
    "key_management",
    "restore_results",
    "incident_response",
]
Handling = Literal["cleared", "deleted", "not_kept", "encrypted_only", "kept", "unknown"]
# What a boundary rests on, and its state as the check derives it (I3, I6).
ProofKind = Literal["document", "test", "claim"]
BoundaryStatus = Literal["evidenced", "claimed", "weak", "missing", "unknown"]
RESIDUE_ITEMS: tuple[str, ...] = ResidueItem.__args__  # type: ignore[attr-defined]
REGULATED_ITEMS: tuple[str, ...] = RegulatedItem.__args__  # type: ignore[attr-defined]
ANSWERED_BOUNDARIES: tuple[Boundary, ...] = tuple(
    b for b in controls.BOUNDARY_CONTROLS if b != "residue"
)
# Every boundary of a row: the answered ones, then residue (derived from the I4 items).
BOUNDARIES: tuple[Boundary, ...] = (*ANSWERED_BOUNDARIES, "residue")


class SharingFact(Figure):
    """What one GPU sharing mode isolates: memory, faults, and whether tenants are apart."""

    memory: str
    fault: str
    isolated: bool


# What each GPU sharing mode isolates (NVIDIA MIG and MPS user guides, Kubernetes device
# plugin time-slicing notes). Only exclusive and MIG keep another tenant out of the memory
# and the faults of a job.
SHARING_FACTS: dict[str, SharingFact] = {
    "exclusive": SharingFact(
        memory="whole GPU for one job",
        fault="a fault affects only this job",
        isolated=True,
    ),
    "mig": SharingFact(
        memory="hardware partition: own memory slices, cache and SMs",
        fault="an error stays inside its GPU instance",
        isolated=True,
    ),
    "mps": SharingFact(
        memory="separate address spaces, no hardware partition of memory bandwidth",
        fault="a fatal fault of one client ends every client of the MPS server",
        isolated=False,
    ),
    "time_slicing": SharingFact(
        memory="no memory limits or partition between the sharing processes",
        fault="no fault isolation between the sharing processes",
        isolated=False,
    ),
}
CLOSING_HANDLING = ("cleared", "deleted", "not_kept")

# A cited document is read to find its excerpt: contracts and policies, not data sets.
DOCUMENT_LIMIT = 64 << 20


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Proof(_Strict):
    """What an answer rests on; without it the answer is a claim (I6)."""

    document: str | None = Field(default=None, description="File, relative to the workspace.")
    excerpt: str | None = Field(default=None, description="The sentence the answer rests on.")
    test: str | None = Field(default=None, description="A test and its result.")

    @model_validator(mode="after")
    def _excerpt_with_document(self) -> Proof:
        if self.document and not (self.excerpt or "").strip():
            raise ValueError("a document needs the excerpt the answer rests on")
        return self


class Threat(_Strict):
    """One adversary of an asset and the boundaries that must hold against it (I2)."""

    adversary: Adversary = Field(description="Who the asset is protected from.")
    requires: list[Boundary] = Field(min_length=1, description="Boundaries that must hold.")


class Asset(_Strict):
    """Something worth protecting (I2)."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$", description="Short id.")
    name: str = Field(default="", description="Name shown in the report.")
    closed: bool = Field(default=True, description="Confidential: a missing protection stops.")
    threats: list[Threat] = Field(default_factory=list, description="Adversaries.")


class BoundaryAnswer(_Strict):
    """How an option holds one boundary (I3)."""

    boundary: Boundary = Field(description="Boundary id (see the template).")
    status: Literal["in_place", "missing", "unknown"] = Field(description="What the option has.")
    mechanism: str = Field(default="", description="What implements it.")
    sharing_mode: SharingMode | None = Field(default=None, description="For gpu_sharing.")
    proof: Proof | None = Field(default=None, description="Document excerpt or test result.")


class ResidueAnswer(_Strict):
    """What happens to one kind of residue after the job (I4)."""

    item: ResidueItem = Field(description="Residue item.")
    handling: Handling = Field(description="What happens to it.")
    detail: str = Field(default="", description="When and how.")
    proof: Proof | None = Field(default=None, description="Document excerpt or test result.")


class RegulatedEvidence(_Strict):
    """One I6 document the option can show."""

    item: RegulatedItem = Field(description="Which of the I6 documents.")
    proof: Proof = Field(description="Where it is.")


class OptionIsolation(_Strict):
    """The isolation answers of one option."""

    option: str = Field(pattern=OPTION_ID_PATTERN, description="Option id (gpudecide.yaml).")
    boundaries: list[BoundaryAnswer] = Field(default_factory=list, description="I3 answers.")
    residue: list[ResidueAnswer] = Field(default_factory=list, description="I4 answers.")
    regulated: list[RegulatedEvidence] = Field(default_factory=list, description="I6 list.")


class Placement(_Strict):
    """Which contours of a hybrid an asset of a residency requirement enters (I7, H2)."""

    option: str = Field(pattern=OPTION_ID_PATTERN, description="Hybrid option id.")
    asset: str = Field(min_length=1, description="Asset named by a residency requirement.")
    contours: list[str] = Field(min_length=1, description="Contours the asset enters.")


class IsolationFile(_Strict):
    """Schema of isolation.yaml."""

    version: Literal[1] = Field(default=1, description="Schema version.")
    regulated: bool = Field(default=True, description="Regulated workload: I6 list required.")
    assets: list[Asset] = Field(default_factory=list, description="Threat model (I2).")
    options: list[OptionIsolation] = Field(default_factory=list, description="Per option.")
    placement: list[Placement] = Field(default_factory=list, description="Hybrid data placement.")


class ProofFigures(Figure):
    """What an answer rests on, as the record keeps it: a document (its path in the
    workspace, SHA-256 and the excerpt), a test, or neither (a claim)."""

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset({"document", "sha256", "excerpt", "test"})

    kind: ProofKind
    document: str | None = None
    sha256: str | None = None
    excerpt: str | None = None
    test: str | None = None


class BoundaryFigures(Figure):
    """One boundary of one option (I3): its status, mechanism, proof and SP 800-53 controls."""

    boundary: Boundary
    status: BoundaryStatus
    mechanism: str
    sharing_mode: SharingMode | None
    proof: ProofFigures
    controls: list[str]


class ResidueFigures(Figure):
    """One residue item of one option after the job (I4)."""

    item: ResidueItem
    handling: Handling
    detail: str
    proof: ProofFigures


class Coverage(Figure):
    """How many controls of one family are evidenced, claimed or open (I5)."""

    evidenced: int = 0
    claimed: int = 0
    open: int = 0


class IsolationOptionFigures(Figure):
    """One option's row of the `isolation` figures."""

    option: str
    answered: bool
    stopped: bool
    boundaries: list[BoundaryFigures]
    residue: list[ResidueFigures]
    regulated: dict[str, ProofFigures | None]
    coverage: dict[str, Coverage]
    findings: list[Finding]


class IsolationFigures(Figure):
    """The figures of an `isolation` record (SPEC I1-I6)."""

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset({"messages"})

    regulated: bool
    assets: list[Asset]
    options: list[IsolationOptionFigures]
    controls: dict[str, tuple[str, ...]]
    sharing_facts: dict[str, SharingFact]
    findings: list[Finding]
    messages: RecordMessages | None = None


@dataclass
class IsolationResult:
    """Findings, figures and the documents the answers rest on."""

    findings: list[Finding]
    figures: IsolationFigures
    documents: list[Path] = field(default_factory=list)


def load_isolation(
    path: Path, options: list[OptionDecl], root: Path
) -> tuple[IsolationFile, Loaded]:
    """Validate isolation.yaml: schema, declared options, unique entries, documents exist."""
    iso, loaded = load(path, IsolationFile)
    seen_assets: set[str] = set()
    for i, asset in enumerate(iso.assets):
        if asset.id in seen_assets:
            raise InputError(
                "{item!r} is declared twice", **loaded.at(("assets", i, "id")), item=asset.id
            )
        seen_assets.add(asset.id)
    seen: set[str] = set()
    for i, entry in enumerate(iso.options):
        loaded.require_option(entry.option, options, ("options", i, "option"))
        if entry.option in seen:
            raise InputError(
                "option {option!r} is answered twice",
                **loaded.at(("options", i, "option")),
                option=entry.option,
            )
        seen.add(entry.option)
        _check_entry(entry, loaded, i, root)
    by_id = {o.id: o for o in options}
    for i, place in enumerate(iso.placement):
        loaded.require_option(place.option, options, ("placement", i, "option"))
        for j, contour in enumerate(place.contours):
            loaded.require_in(
                contour, by_id[place.option].contours, "contour", ("placement", i, "contours", j)
            )
    return iso, loaded


def _check_entry(entry: OptionIsolation, loaded: Loaded, i: int, root: Path) -> None:
    keys: set[str] = set()
    for j, b in enumerate(entry.boundaries):
        loc: tuple[int | str, ...] = ("options", i, "boundaries", j)
        if b.boundary == "residue":
            raise InputError(
                "answer residue item by item under `residue`", **loaded.at((*loc, "boundary"))
            )
        if b.boundary in keys:
            raise InputError(
                "{boundary!r} is answered twice",
                **loaded.at((*loc, "boundary")),
                boundary=b.boundary,
            )
        keys.add(b.boundary)
        if b.sharing_mode is not None and b.boundary != "gpu_sharing":
            raise InputError(
                "sharing_mode belongs to gpu_sharing only", **loaded.at((*loc, "sharing_mode"))
            )
        _check_proof(b.proof, loaded, (*loc, "proof"), root)
    for j, r in enumerate(entry.residue):
        _check_proof(r.proof, loaded, ("options", i, "residue", j, "proof"), root)
    for j, g in enumerate(entry.regulated):
        _check_proof(g.proof, loaded, ("options", i, "regulated", j, "proof"), root)


def _check_proof(
    proof: Proof | None, loaded: Loaded, loc: tuple[int | str, ...], root: Path
) -> None:
    """A cited document exists and, when it is text, contains the excerpt quoted from it."""
    if proof is None or not proof.document:
        return
    doc = root / proof.document
    if not doc.is_file():
        raise InputError(
            "document {document!r} not found",
            **loaded.at((*loc, "document")),
            hint="paths are relative to the workspace folder",
            document=proof.document,
        )
    try:
        text = read_input_text(doc, DOCUMENT_LIMIT)  # a regular file only, bounded
    except InputError as exc:
        if exc.template == "not UTF-8 text":
            return  # a PDF or scan: the hash still pins it, the excerpt cannot be matched
        raise
    if _squash(proof.excerpt or "") not in _squash(text):
        raise InputError(
            "the excerpt is not in {document}",
            **loaded.at((*loc, "excerpt")),
            hint="quote the document word for word",
            document=proof.document,
        )


def _squash(text: str) -> str:
    return " ".join(text.split()).casefold()


def proof_kind(proof: Proof | None) -> ProofKind:
    """document, test or claim: what an answer rests on."""
    if proof is None:
        return "claim"
    if proof.document:
        return "document"
    return "test" if (proof.test or "").strip() else "claim"


def _proof_figures(proof: Proof | None, root: Path) -> ProofFigures:
    out = ProofFigures(kind=proof_kind(proof))
    if proof is None:
        return out
    if out.kind == "document" and proof.document:
        ref = ev.input_ref(root / proof.document, root)
        out = out.model_copy(
            update={"document": ref.path, "sha256": ref.sha256, "excerpt": proof.excerpt}
        )
    if proof.test:
        out = out.model_copy(update={"test": proof.test})
    return out


def boundary_status(answer: BoundaryAnswer | None) -> BoundaryStatus:
    """evidenced | claimed | weak | missing | unknown."""
    if answer is None or answer.status == "unknown":
        return "unknown"
    if answer.status == "missing":
        return "missing"
    mode = answer.sharing_mode if answer.boundary == "gpu_sharing" else None
    if mode is not None and not SHARING_FACTS[mode].isolated:
        return "weak"
    return "claimed" if proof_kind(answer.proof) == "claim" else "evidenced"


def residue_status(entry: OptionIsolation) -> BoundaryStatus:
    """The derived status of the residue boundary: every I4 item closed, with proof."""
    by_item: dict[str, ResidueAnswer] = {r.item: r for r in entry.residue}
    if any(by_item.get(i) is None or by_item[i].handling == "unknown" for i in RESIDUE_ITEMS):
        return "unknown"
    if any(by_item[i].handling not in CLOSING_HANDLING for i in RESIDUE_ITEMS):
        return "missing"
    claims = any(proof_kind(by_item[i].proof) == "claim" for i in RESIDUE_ITEMS)
    return "claimed" if claims else "evidenced"


def _statuses(entry: OptionIsolation | None) -> dict[str, BoundaryStatus]:
    answers: dict[str, BoundaryAnswer] = {b.boundary: b for b in entry.boundaries} if entry else {}
    out: dict[str, BoundaryStatus] = {
        b: boundary_status(answers.get(b)) for b in ANSWERED_BOUNDARIES
    }
    out["residue"] = residue_status(entry) if entry else "unknown"
    return out


def check(iso: IsolationFile, options: list[OptionDecl], root: Path) -> IsolationResult:
    """Every isolation finding for every declared option."""
    by_id = {e.option: e for e in iso.options}
    findings: list[Finding] = []
    rows: list[IsolationOptionFigures] = []
    documents: set[Path] = set()
    for option in options:
        entry = by_id.get(option.id)
        statuses = _statuses(entry)
        found = _required(iso, option.id, statuses)
        if entry is not None:
            found += _answer_findings(entry, statuses)
            documents |= _documents(entry, root)
        found += _regulated_missing(iso, option.id, entry)
        findings += found
        rows.append(_option_row(option.id, entry, statuses, found, root))
    figures = IsolationFigures(
        regulated=iso.regulated,
        assets=list(iso.assets),
        options=rows,
        controls=controls.BOUNDARY_CONTROLS,
        sharing_facts=SHARING_FACTS,
        findings=findings,
    )
    return IsolationResult(findings, figures, sorted(documents))


def _required(iso: IsolationFile, oid: str, statuses: dict[str, BoundaryStatus]) -> list[Finding]:
    """Boundaries the threat model requires: missing stops (closed asset), a claim is a finding."""
    needs: dict[str, list[str]] = defaultdict(list)  # boundary -> asset/adversary
    closed: dict[str, bool] = defaultdict(bool)
    for asset in iso.assets:
        for threat in asset.threats:
            for req in threat.requires:
                needs[req].append(f"{asset.id}/{threat.adversary}")
                closed[req] = closed[req] or asset.closed
    out: list[Finding] = []
    for b in sorted(needs):
        state = statuses[b]
        against = ", ".join(sorted(set(needs[b])))
        if state in ("missing", "unknown", "weak"):
            out.append(
                finding(
                    "protection_missing",
                    oid,
                    closed[b],
                    "I2",
                    boundary=b,
                    status=state,
                    against=against,
                )
            )
        elif state == "claimed":
            out.append(finding("protection_claimed", oid, False, "I6", boundary=b, against=against))
    return out


def _answer_findings(entry: OptionIsolation, statuses: dict[str, BoundaryStatus]) -> list[Finding]:
    oid = entry.option
    out: list[Finding] = []
    for b in entry.boundaries:
        if b.boundary == "gpu_sharing" and statuses["gpu_sharing"] == "weak" and b.sharing_mode:
            out.append(finding("weak_gpu_sharing", oid, False, "I3", mode=b.sharing_mode))
    for r in entry.residue:
        if r.handling == "encrypted_only":
            out.append(finding("residue_encrypted_only", oid, False, "I4", item=r.item))
        elif r.handling not in CLOSING_HANDLING:
            out.append(finding("residue_open", oid, False, "I4", item=r.item, handling=r.handling))
    answered = {r.item for r in entry.residue}
    for item in RESIDUE_ITEMS:
        if item not in answered:
            out.append(finding("residue_open", oid, False, "I4", item=item, handling="unanswered"))
    by_mechanism: dict[str, list[Boundary]] = defaultdict(list)
    for b in entry.boundaries:
        key = " ".join(b.mechanism.lower().split())
        if key and b.status == "in_place":
            by_mechanism[key].append(b.boundary)
    for mech, bounds in sorted(by_mechanism.items()):
        fams = sorted(set().union(*(controls.families(b) for b in bounds)))
        if len(bounds) > 1 and len({controls.families(b) for b in bounds}) > 1:
            out.append(
                finding(
                    "one_mechanism_many_families",
                    oid,
                    False,
                    "I5",
                    mechanism=mech,
                    boundaries=", ".join(bounds),
                    families=", ".join(fams),
                )
            )
    return out


def _regulated_missing(
    iso: IsolationFile, oid: str, entry: OptionIsolation | None
) -> list[Finding]:
    if not iso.regulated:
        return []
    present = {g.item for g in entry.regulated} if entry else set()
    return [
        finding("regulated_missing", oid, False, "I6", item=item)
        for item in REGULATED_ITEMS
        if item not in present
    ]


def _documents(entry: OptionIsolation, root: Path) -> set[Path]:
    proofs = [b.proof for b in entry.boundaries] + [r.proof for r in entry.residue]
    proofs += [g.proof for g in entry.regulated]
    return {root / p.document for p in proofs if p is not None and p.document}


def coverage(statuses: dict[str, BoundaryStatus]) -> dict[str, Coverage]:
    """Per control family: how many of its mapped controls are evidenced, claimed, open (I5)."""
    per: dict[str, Coverage] = {}
    for boundary, ctrl in controls.BOUNDARY_CONTROLS.items():
        state = statuses[boundary]
        for c in ctrl:
            fam = per.setdefault(controls.family(c), Coverage())
            if state == "evidenced":
                fam.evidenced += 1
            elif state == "claimed":
                fam.claimed += 1
            else:
                fam.open += 1
    return dict(sorted(per.items()))


def _option_row(
    oid: str,
    entry: OptionIsolation | None,
    statuses: dict[str, BoundaryStatus],
    found: list[Finding],
    root: Path,
) -> IsolationOptionFigures:
    answers: dict[str, BoundaryAnswer] = {b.boundary: b for b in entry.boundaries} if entry else {}
    boundaries = []
    for b in BOUNDARIES:
        a = answers.get(b)
        boundaries.append(
            BoundaryFigures(
                boundary=b,
                status=statuses[b],
                mechanism=a.mechanism if a else "",
                sharing_mode=a.sharing_mode if a else None,
                proof=_proof_figures(a.proof if a else None, root),
                controls=list(controls.BOUNDARY_CONTROLS[b]),
            )
        )
    regulated: dict[str, Proof] = {}
    for g in entry.regulated if entry else []:
        regulated.setdefault(g.item, g.proof)  # the first answer of an item counts
    return IsolationOptionFigures(
        option=oid,
        answered=entry is not None,
        stopped=any(f.stop for f in found),
        boundaries=boundaries,
        residue=[
            ResidueFigures(
                item=r.item,
                handling=r.handling,
                detail=r.detail,
                proof=_proof_figures(r.proof, root),
            )
            for r in (entry.residue if entry else [])
        ],
        regulated={
            item: _proof_figures(regulated[item], root) if item in regulated else None
            for item in REGULATED_ITEMS
        },
        coverage=coverage(statuses),
        findings=found,
    )


def placements(iso: IsolationFile | None) -> dict[tuple[str, str], list[str]]:
    """(hybrid option, asset) -> the contours the asset enters."""
    if iso is None:
        return {}
    return {(p.option, p.asset.strip().lower()): list(p.contours) for p in iso.placement}
