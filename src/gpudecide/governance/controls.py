"""NIST SP 800-53 Rev. 5 controls behind each isolation boundary (SPEC I5).

SP 800-53 keeps access control (AC), system and communications protection (SC) and audit
and accountability (AU) apart, with personnel security (PS), contingency planning (CP),
media protection (MP), system and information integrity (SI), incident response (IR) and
system and services acquisition (SA) beside them: one mechanism does not satisfy them all.
Each boundary of isolation.yaml maps to the controls that govern it; the check reports
coverage per family and flags one mechanism claimed for boundaries of different families.
Control ids are written as in the catalogue (SA-9(5) is control enhancement 5 of SA-9);
`oscal_id` gives the OSCAL catalogue form (sa-9.5).
"""

from __future__ import annotations

from typing import Literal

from gpudecide.i18n import N_, translator

__all__ = [
    "BOUNDARY_CONTROLS",
    "FAMILY_NAMES",
    "Boundary",
    "all_controls",
    "families",
    "family",
    "family_name",
    "oscal_id",
]

_ = translator("governance")

Boundary = Literal[
    "gpu_sharing",
    "tenancy",
    "support_access",
    "network",
    "storage",
    "keys",
    "backups",
    "logs",
    "residue",
    "location",
    "incident_response",
]

BOUNDARY_CONTROLS: dict[Boundary, tuple[str, ...]] = {
    # Physical node and GPU sharing mode (I3): information in shared resources, process isolation.
    "gpu_sharing": ("SC-4", "SC-39"),
    # Project, namespace, service accounts (I3).
    "tenancy": ("AC-3", "AC-6"),
    # Support rights: access enforcement, least privilege, external personnel (I3).
    "support_access": ("AC-3", "AC-6", "PS-7"),
    # Ingress/egress, DNS, registries: boundary protection, information flow enforcement.
    "network": ("SC-7", "AC-4"),
    # Working volumes and object storage: protection of information at rest.
    "storage": ("SC-28",),
    # Keys: cryptographic key establishment and management.
    "keys": ("SC-12",),
    # Backups: system backup.
    "backups": ("CP-9",),
    # Logs of commands, parameters, paths, errors: event logging, audit record generation,
    # protection of audit information, system monitoring.
    "logs": ("AU-2", "AU-12", "AU-9", "SI-4"),
    # What stays after the job (I4): media sanitization.
    "residue": ("MP-6",),
    # Where processing and storage happen (I7): location of processing, storage and service.
    "location": ("SA-9(5)",),
    # Incident handling (I6).
    "incident_response": ("IR-4",),
}


FAMILY_NAMES: dict[str, str] = {
    "AC": N_("Access Control"),
    "AU": N_("Audit and Accountability"),
    "CP": N_("Contingency Planning"),
    "IR": N_("Incident Response"),
    "MP": N_("Media Protection"),
    "PS": N_("Personnel Security"),
    "SA": N_("System and Services Acquisition"),
    "SC": N_("System and Communications Protection"),
    "SI": N_("System and Information Integrity"),
}


def family_name(fam: str) -> str:
    """A family's name in the reader's language ("" for an id SP 800-53 does not have)."""
    name = FAMILY_NAMES.get(fam, "")
    return _(name) if name else ""


def family(control: str) -> str:
    """The family of a control id: SA-9(5) -> SA."""
    return control.split("-", 1)[0]


def families(boundary: Boundary) -> frozenset[str]:
    """Control families a boundary belongs to."""
    return frozenset(family(c) for c in BOUNDARY_CONTROLS[boundary])


def oscal_id(control: str) -> str:
    """The OSCAL catalogue id of a control: AC-6 -> ac-6, SA-9(5) -> sa-9.5."""
    base, _, enhancement = control.partition("(")
    cid = base.lower()
    return f"{cid}.{enhancement.rstrip(')')}" if enhancement else cid


def all_controls() -> list[str]:
    """Every control the boundaries map to, in catalogue order."""
    found = {c for controls in BOUNDARY_CONTROLS.values() for c in controls}
    return sorted(found, key=_catalogue_order)


def _catalogue_order(control: str) -> tuple[str, int, int]:
    fam, _, rest = control.partition("-")
    number, _, enhancement = rest.partition("(")
    return fam, int(number), int(enhancement.rstrip(")") or 0)
