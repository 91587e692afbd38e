"""Threat model and isolation boundaries per option, from isolation.yaml (SPEC I1-I6).

The team names its assets and, for each, the adversaries it must be protected from and the
boundaries that must hold against them (I2). An adversary that cannot exist for an option is
not applied to it: a vendor's other customers never reach an owned option (its kind says so),
and the team may name any other adversary that cannot reach an option, with the reason; the
report shows each reason. Per option it answers each boundary (I3) with its mechanism and its
proof: a document excerpt (the document is hashed), a test result, or nothing, when the answer
is only a claim; the keys boundary also says who can use the keys that decrypt the data
(`custody`). What happens after the job (I4) is answered item by item; "encrypted" does not
close any of them, because training decrypts the data. The regulated-evidence list (I6) is
present or missing per option.

A row left unanswered (a boundary or residue item not given, or left as the template's
placeholder: `unknown` with nothing said) is "not checked": it is listed as such and is never
a stop factor by being empty. Stop factors come from answers: a boundary a closed asset
requires that is answered missing, unknown or too weak (GPU sharing without memory isolation),
or keys the provider can use against the platform administrator, stops the option (D5); a
required boundary resting on a claim, an open residue item, one mechanism claimed for
boundaries of different control families (I5) and a missing I6 document are findings on the
isolation criterion.
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
from gpudecide.i18n import N_
from gpudecide.inputs import in_workspace, read_input_text
from gpudecide.options import OPTION_ID_PATTERN, OptionDecl

__all__ = [
    "ABSENT_BY_KIND",
    "ADVERSARIES",
    "ANSWERED_BOUNDARIES",
    "BOUNDARIES",
    "CLOSING_HANDLING",
    "CUSTODIES",
    "DOCUMENT_LIMIT",
    "ISOLATION_NAME",
    "PROVIDER_SIDE",
    "REGULATED_ITEMS",
    "RESIDUE_ITEMS",
    "SHARING_FACTS",
    "Adversary",
    "AdversaryExclusion",
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
    "KeyCustody",
    "NotApplied",
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
    "absent_adversaries",
    "boundary_answered",
    "boundary_status",
    "check",
    "coverage",
    "load_isolation",
    "placements",
    "proof_kind",
    "residue_answered",
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
ADVERSARIES: tuple[str, ...] = Adversary.__args__  # type: ignore[attr-defined]
SharingMode = Literal["exclusive", "mig", "mps", "time_slicing"]
# Who can use the keys that decrypt the data (the keys boundary, SC-12): only the team (its
# own HSM or KMS), the provider (keys it manages), both (the team's key in the provider's
# KMS), or not stated.
KeyCustody = Literal["team", "provider", "shared", "unknown"]
CUSTODIES: tuple[str, ...] = KeyCustody.__args__  # type: ignore[attr-defined]
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

# Adversaries that cannot exist for an option of these kinds, and why (I2). An owned option
# runs on the team's own servers: no vendor, so no vendor's other customers. Every other
# adversary can exist for every kind (another team shares an owned cluster, a platform
# administrator runs every platform); a hybrid is reached by what reaches any of its contours.
ABSENT_BY_KIND: dict[str, tuple[frozenset[str], str]] = {
    "vendor_neighbour": (
        frozenset({"owned"}),
        N_(
            "an owned option runs on the team's own servers: there is no vendor, so no "
            "vendor's other customers"
        ),
    ),
}
# Adversaries on the provider's side of the platform: keys the provider can use do not hold
# against them.
PROVIDER_SIDE: frozenset[str] = frozenset({"platform_admin"})


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
    custody: KeyCustody | None = Field(
        default=None,
        description="For keys: who can use the keys that decrypt the data "
        "(team | provider | shared | unknown; not given: unknown).",
    )
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


class AdversaryExclusion(_Strict):
    """An adversary of the threat model that cannot reach one option, and why (I2)."""

    adversary: Adversary = Field(description="The adversary (as in `threats`).")
    reason: str = Field(description="Why it cannot reach this option (shown in the report).")


class OptionIsolation(_Strict):
    """The isolation answers of one option."""

    option: str = Field(pattern=OPTION_ID_PATTERN, description="Option id (gpudecide.yaml).")
    not_applicable: list[AdversaryExclusion] = Field(
        default_factory=list, description="Adversaries that cannot reach this option."
    )
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
    """One boundary of one option (I3): its status, mechanism, proof and SP 800-53 controls;
    `answered` false when nothing was said about it (not checked); `custody` on keys only."""

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset({"custody"})

    boundary: Boundary
    status: BoundaryStatus
    mechanism: str
    sharing_mode: SharingMode | None
    proof: ProofFigures
    controls: list[str]
    answered: bool = True
    custody: KeyCustody | None = None


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


class NotApplied(Figure):
    """An adversary of the threat model not applied to one option: by its kind (the reason
    is the tool's, in English) or by the team (its own words)."""

    adversary: Adversary
    source: Literal["kind", "team"]
    reason: str


class IsolationOptionFigures(Figure):
    """One option's row of the `isolation` figures. `answered` is false when nothing was
    answered for it (the whole row is not checked); `not_checked` names the boundaries and
    residue items left unanswered; `required` the boundaries its threat model asks of it once
    the adversaries in `not_applied` are left out."""

    option: str
    answered: bool
    stopped: bool
    boundaries: list[BoundaryFigures]
    residue: list[ResidueFigures]
    regulated: dict[str, ProofFigures | None]
    coverage: dict[str, Coverage]
    findings: list[Finding]
    required: list[Boundary] = Field(default_factory=list)
    not_applied: list[NotApplied] = Field(default_factory=list)
    not_checked: list[str] = Field(default_factory=list)


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
    """Validate isolation.yaml: schema, declared options, unique entries, documents exist
    inside the workspace and hold their excerpts, a reason for every adversary left out."""
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
    left_out: set[str] = set()
    for j, ex in enumerate(entry.not_applicable):
        loc: tuple[int | str, ...] = ("options", i, "not_applicable", j)
        if ex.adversary in left_out:
            raise InputError(
                "{item!r} is declared twice", **loaded.at((*loc, "adversary")), item=ex.adversary
            )
        left_out.add(ex.adversary)
        if not ex.reason.strip():
            raise InputError(
                "no reason why {adversary} cannot reach this option",
                **loaded.at((*loc, "reason")),
                hint="say why in `reason` (the report shows it), or remove the entry",
                adversary=ex.adversary,
            )
    keys: set[str] = set()
    for j, b in enumerate(entry.boundaries):
        loc = ("options", i, "boundaries", j)
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
        if b.custody is not None and b.boundary != "keys":
            raise InputError("custody belongs to keys only", **loaded.at((*loc, "custody")))
        _check_proof(b.proof, loaded, (*loc, "proof"), root)
    items: set[str] = set()
    for j, r in enumerate(entry.residue):
        loc = ("options", i, "residue", j)
        if r.item in items:
            raise InputError("{item!r} is declared twice", **loaded.at((*loc, "item")), item=r.item)
        items.add(r.item)
        _check_proof(r.proof, loaded, (*loc, "proof"), root)
    for j, g in enumerate(entry.regulated):
        _check_proof(g.proof, loaded, ("options", i, "regulated", j, "proof"), root)


def _check_proof(
    proof: Proof | None, loaded: Loaded, loc: tuple[int | str, ...], root: Path
) -> None:
    """A cited document is inside the workspace (links followed), is a regular file and,
    when it is text, contains the excerpt quoted from it."""
    if proof is None or not proof.document:
        return
    where = loaded.at((*loc, "document"))
    doc = in_workspace(root, proof.document, **where)
    if not doc.exists():
        raise InputError(
            "document {document!r} not found",
            **where,
            hint="paths are relative to the workspace folder",
            document=proof.document,
        )
    if not doc.is_file():
        raise InputError(
            "document {document!r} is not a regular file",
            **where,
            hint="cite the file itself (a folder, a FIFO or a device cannot be hashed)",
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


def boundary_answered(answer: BoundaryAnswer | None) -> bool:
    """Whether anything was said about a boundary: not the template's placeholder (`unknown`
    with no mechanism, no proof, no sharing mode and no custody)."""
    if answer is None:
        return False
    return (
        answer.status != "unknown"
        or bool(answer.mechanism.strip())
        or proof_kind(answer.proof) != "claim"
        or answer.sharing_mode is not None
        or answer.custody not in (None, "unknown")
    )


def residue_answered(answer: ResidueAnswer | None) -> bool:
    """Whether a residue item was answered: not `unknown` with nothing said about it."""
    if answer is None:
        return False
    return (
        answer.handling != "unknown"
        or bool(answer.detail.strip())
        or proof_kind(answer.proof) != "claim"
    )


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


def _residue(entry: OptionIsolation | None) -> tuple[BoundaryStatus, bool]:
    """The derived status of the residue boundary and whether it was checked: an answered
    item that stays (kept, only encrypted) makes it missing, one answered unknown unknown;
    otherwise an item left unanswered leaves it not checked; every item closed, with proof
    or not, makes it evidenced or claimed."""
    by_item: dict[str, ResidueAnswer] = {r.item: r for r in entry.residue} if entry else {}
    answered = [by_item[i] for i in RESIDUE_ITEMS if residue_answered(by_item.get(i))]
    if any(r.handling not in (*CLOSING_HANDLING, "unknown") for r in answered):
        return "missing", True
    if any(r.handling == "unknown" for r in answered):
        return "unknown", True
    if len(answered) < len(RESIDUE_ITEMS):
        return "unknown", False
    claims = any(proof_kind(r.proof) == "claim" for r in answered)
    return ("claimed" if claims else "evidenced"), True


def residue_status(entry: OptionIsolation) -> BoundaryStatus:
    """The derived status of the residue boundary: every I4 item closed, with proof."""
    return _residue(entry)[0]


def absent_adversaries(
    option: OptionDecl, options: list[OptionDecl], entry: OptionIsolation | None
) -> list[NotApplied]:
    """The adversaries not applied to an option: by its kind (a hybrid: by every kind of its
    contours), then those the team says cannot reach it, with their reasons."""
    by_id = {o.id: o for o in options}
    if option.kind == "hybrid":
        kinds = {by_id[c].kind for c in option.contours if c in by_id} or {"hybrid"}
    else:
        kinds = {option.kind}
    team = {ex.adversary: ex.reason.strip() for ex in entry.not_applicable} if entry else {}
    out: list[NotApplied] = []
    for adversary in ADVERSARIES:
        if adversary in team:
            out.append(NotApplied(adversary=adversary, source="team", reason=team[adversary]))
            continue
        absent = ABSENT_BY_KIND.get(adversary)
        if absent is not None and kinds <= absent[0]:
            out.append(NotApplied(adversary=adversary, source="kind", reason=absent[1]))
    return out


@dataclass
class _Answers:
    """One option's answers as the rules read them: status, checked, custody per boundary."""

    entry: OptionIsolation | None
    statuses: dict[str, BoundaryStatus]
    checked: dict[str, bool]
    custody: KeyCustody

    @classmethod
    def of(cls, entry: OptionIsolation | None) -> _Answers:
        answers: dict[str, BoundaryAnswer] = (
            {b.boundary: b for b in entry.boundaries} if entry else {}
        )
        statuses: dict[str, BoundaryStatus] = {}
        checked: dict[str, bool] = {}
        for b in ANSWERED_BOUNDARIES:
            answer = answers.get(b)
            checked[b] = boundary_answered(answer)
            statuses[b] = boundary_status(answer)
        statuses["residue"], checked["residue"] = _residue(entry)
        keys = answers.get("keys")
        custody: KeyCustody = (keys.custody if keys else None) or "unknown"
        return cls(entry, statuses, checked, custody)

    @property
    def answered(self) -> bool:
        """Anything answered at all: a boundary, a residue item or an I6 document."""
        if self.entry is None:
            return False
        return (
            any(boundary_answered(b) for b in self.entry.boundaries)
            or any(residue_answered(r) for r in self.entry.residue)
            or bool(self.entry.regulated)
        )

    def not_checked(self) -> list[str]:
        """The boundaries and residue items left unanswered, in the template's order."""
        by_item: dict[str, ResidueAnswer] = (
            {r.item: r for r in self.entry.residue} if self.entry else {}
        )
        out: list[str] = [b for b in ANSWERED_BOUNDARIES if not self.checked[b]]
        return out + [i for i in RESIDUE_ITEMS if not residue_answered(by_item.get(i))]


def check(iso: IsolationFile, options: list[OptionDecl], root: Path) -> IsolationResult:
    """Every isolation finding for every declared option."""
    by_id = {e.option: e for e in iso.options}
    findings: list[Finding] = []
    rows: list[IsolationOptionFigures] = []
    documents: set[Path] = set()
    for option in options:
        entry = by_id.get(option.id)
        answers = _Answers.of(entry)
        absent = absent_adversaries(option, options, entry)
        threats = _threats(iso, {a.adversary for a in absent})
        found: list[Finding] = []
        if answers.answered and entry is not None:
            found = _required(option.id, threats, answers)
            found += _answer_findings(entry, answers)
            found += _regulated_missing(iso, option.id, entry)
        if entry is not None:
            documents |= _documents(entry, root)
        findings += found
        rows.append(_option_row(option.id, answers, found, root, sorted(threats), absent))
    figures = IsolationFigures(
        regulated=iso.regulated,
        assets=list(iso.assets),
        options=rows,
        controls=controls.BOUNDARY_CONTROLS,
        sharing_facts=SHARING_FACTS,
        findings=findings,
    )
    return IsolationResult(findings, figures, sorted(documents))


@dataclass(frozen=True)
class _Against:
    """One asset and adversary a boundary must hold against."""

    asset: str
    adversary: str
    closed: bool

    def __str__(self) -> str:
        return f"{self.asset}/{self.adversary}"


def _threats(iso: IsolationFile, absent: set[str]) -> dict[Boundary, list[_Against]]:
    """Boundary -> the assets and adversaries it must hold against, leaving out the
    adversaries that cannot reach the option."""
    needs: dict[Boundary, list[_Against]] = defaultdict(list)
    for asset in iso.assets:
        for threat in asset.threats:
            if threat.adversary in absent:
                continue
            for req in threat.requires:
                needs[req].append(_Against(asset.id, threat.adversary, asset.closed))
    return needs


def _against(threats: list[_Against]) -> str:
    return ", ".join(sorted({str(t) for t in threats}))


def _required(oid: str, needs: dict[Boundary, list[_Against]], answers: _Answers) -> list[Finding]:
    """Boundaries the threat model requires, as answered: missing, unknown or too weak stops
    (closed asset), keys the provider can use stop against the provider's side, a claim is a
    finding; a boundary left unanswered is not checked."""
    out: list[Finding] = []
    for b in sorted(needs):
        threats = needs[b]
        if not answers.checked[b]:
            continue
        state = answers.statuses[b]
        closed = any(t.closed for t in threats)
        if state in ("missing", "unknown", "weak"):
            out.append(
                finding(
                    "protection_missing",
                    oid,
                    closed,
                    "I2",
                    boundary=b,
                    status=state,
                    against=_against(threats),
                )
            )
            continue
        if b == "keys":
            out += _custody_findings(oid, threats, answers.custody)
        if state == "claimed":
            out.append(
                finding(
                    "protection_claimed", oid, False, "I6", boundary=b, against=_against(threats)
                )
            )
    return out


def _custody_findings(oid: str, threats: list[_Against], custody: KeyCustody) -> list[Finding]:
    """Who can use the keys, against whom they must hold (SC-12)."""
    provider_side = [t for t in threats if t.adversary in PROVIDER_SIDE]
    if custody == "unknown":
        return [finding("keys_custody_unknown", oid, False, "I3", against=_against(threats))]
    if custody == "provider" and provider_side:
        stop = any(t.closed for t in provider_side)
        return [finding("keys_provider_custody", oid, stop, "I2", against=_against(provider_side))]
    if custody == "shared" and provider_side:
        return [finding("keys_shared_custody", oid, False, "I3", against=_against(provider_side))]
    return []


def _answer_findings(entry: OptionIsolation, answers: _Answers) -> list[Finding]:
    oid = entry.option
    out: list[Finding] = []
    for b in entry.boundaries:
        weak = b.boundary == "gpu_sharing" and answers.statuses["gpu_sharing"] == "weak"
        if weak and b.sharing_mode:
            out.append(finding("weak_gpu_sharing", oid, False, "I3", mode=b.sharing_mode))
    for r in entry.residue:
        if not residue_answered(r):
            continue  # not checked: listed in the row, never a finding by being empty
        if r.handling == "encrypted_only":
            out.append(finding("residue_encrypted_only", oid, False, "I4", item=r.item))
        elif r.handling not in CLOSING_HANDLING:
            out.append(finding("residue_open", oid, False, "I4", item=r.item, handling=r.handling))
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


def _regulated_missing(iso: IsolationFile, oid: str, entry: OptionIsolation) -> list[Finding]:
    if not iso.regulated:
        return []
    present = {g.item for g in entry.regulated}
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
    answers: _Answers,
    found: list[Finding],
    root: Path,
    required: list[Boundary],
    absent: list[NotApplied],
) -> IsolationOptionFigures:
    entry = answers.entry
    given: dict[str, BoundaryAnswer] = {b.boundary: b for b in entry.boundaries} if entry else {}
    boundaries = []
    for b in BOUNDARIES:
        a = given.get(b)
        boundaries.append(
            BoundaryFigures(
                boundary=b,
                status=answers.statuses[b],
                mechanism=a.mechanism if a else "",
                sharing_mode=a.sharing_mode if a else None,
                proof=_proof_figures(a.proof if a else None, root),
                controls=list(controls.BOUNDARY_CONTROLS[b]),
                answered=answers.checked[b],
                custody=answers.custody if b == "keys" else None,
            )
        )
    regulated: dict[str, Proof] = {}
    for g in entry.regulated if entry else []:
        regulated.setdefault(g.item, g.proof)  # the first answer of an item counts
    return IsolationOptionFigures(
        option=oid,
        answered=answers.answered,
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
        coverage=coverage(answers.statuses),
        findings=found,
        required=required,
        not_applied=absent,
        not_checked=answers.not_checked(),
    )


def placements(iso: IsolationFile | None) -> dict[tuple[str, str], list[str]]:
    """(hybrid option, asset) -> the contours the asset enters."""
    if iso is None:
        return {}
    return {(p.option, p.asset.strip().lower()): list(p.contours) for p in iso.placement}
