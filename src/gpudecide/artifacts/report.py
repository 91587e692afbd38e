"""Report section of the export audit (registered as SECTION_BUILDERS["audit"]).

Every word a reader sees goes through the "artifacts" catalogue; the audit's own English
details (hazards, summary, notes) are translated by the catalogue's patterns at render.
"""

from __future__ import annotations

from typing import Any

from gpudecide.i18n import translator
from gpudecide.report.fmt import fmt, not_available
from gpudecide.report.i18n import N_, P_, Language, localize
from gpudecide.report.model import Section, Table

_ = translator("artifacts")

# The four layers of an export (E2) and their items, as a person reads them.
LAYERS = {
    "data": N_("data"),
    "training": N_("training"),
    "execution": N_("execution"),
    "provenance": N_("provenance"),
}
ITEMS = {
    "final_weights": N_("final weights"),
    "intermediate_checkpoints": N_("intermediate checkpoints"),
    "optimizer_state": N_("optimizer state"),
    "scheduler": N_("scheduler"),
    "random_seeds": N_("random seeds"),
    "exact_config": N_("exact config"),
    "step_epoch": N_("step and epoch"),
    "grad_scaler": N_("gradient scaler"),
    "container_digest": N_("container digest"),
    "driver_version": N_("driver version"),
    "library_versions": N_("library versions"),
    "base_model_id": N_("base model id"),
    "base_model_revision": N_("base model revision"),
    "dataset_snapshot": N_("dataset snapshot"),
    "code_commit": N_("code commit"),
    "evaluation_metrics": N_("evaluation metrics"),
}
STATUSES = {
    "found": N_("found"),
    "missing": N_("missing"),
    "not_applicable": N_("not applicable"),
    "open": N_("open"),
    "answered": N_("answered"),
}
# What each hazard means (E5): shown next to the audit's detail.
HAZARDS = {
    "adapter_base_revision_missing": N_("the adapter does not pin its base model revision"),
    "weights_without_optimizer_state": N_("weights without the state to continue training"),
    "unknown_format": N_("a file in a format no open tool reads"),
    "dangerous_pickle": N_("a pickle that runs code when loaded"),
    "untrusted_pickle_import": N_("a pickle that imports code outside the allow list"),
    "pickle_frame_mismatch": N_("a pickle whose frames do not add up"),
    "pickle_not_scanned_too_large": N_("a pickle too large to scan"),
    "archive_not_scanned": N_("an archive that could not be scanned"),
    "corrupt_file": N_("a damaged file"),
    "egress_throttled": N_("egress too slow for the migration window"),
    "declared_artifact_missing": N_("a declared artifact is missing"),
}

# English the audit writes without a message id (summary, notes, details), translated by
# pattern (`gpudecide.report.i18n.localize`); listed so that the catalogues must hold them.
GENERATED = (
    P_("weights only: not resumable"),
    P_("no model weights found"),
    P_("resumable from {path} (step {step})"),
    P_("{n} hazard(s)"),
    P_("{n} E2 item(s) missing"),
    P_("{n} A8 question(s) open"),
    P_("an adapter is usable only with the exact base model it was trained on (E5)"),
    P_(
        "A4: hashes prove integrity, not that the artifacts load: restore them and continue "
        "training elsewhere (E1)"
    ),
    P_("{path}: not audited ({reason})"),
    P_("no retention.yaml: every A8 question is open (gpudecide init writes a template)"),
    P_(
        "no open format explains it (starts with {magic}): a package only its vendor's SDK "
        "may read"
    ),
    P_("adapter has no base model revision (revision: null)"),
    P_(
        "weights without optimizer state and step in one checkpoint: inference only, training "
        "cannot continue (A2)"
    ),
    P_("no file matches {pattern}"),
    P_("the plan does not require resumption"),
    P_("precision bf16: no fp16 loss scaling"),
    P_("After the job or endpoint is deleted, are checkpoints kept separately, and where?"),
    P_("Who sets retention?"),
    P_("Is a legal hold possible, and who places it?"),
    P_("How are copies (replicas, backups, caches) deleted, and how is it confirmed?"),
    P_("Who sees the encryption keys?"),
)


def _loc(text: str, lang: Language) -> str:
    return localize(text, lang, ("artifacts", "report"))


def _word(table: dict[str, str], key: str, lang: Language) -> str:
    """A known id's name in `lang` (English keeps the id itself, as before)."""
    if lang == "en" or key not in table:
        return key
    return _(table[key], lang)


def _raw(value: Any, lang: Language) -> str:
    """A figure as the audit wrote it (English), or in the reader's number format."""
    return str(value) if lang == "en" else fmt(value, lang)


def audit_section(section: Section, lang: Language) -> None:
    """Tables of an `audit` evidence record: layers, units, hazards, egress, A8."""
    f = section.record.figures
    section.title = _("Export audit: can the run leave and resume?", lang)
    _layers_table(section, f, lang)
    _units_table(section, f, lang)
    _hazards_table(section, f, lang)
    _egress_table(section, f, lang)
    _retention_table(section, f, lang)


def _layers_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    """Every E2 item of the four layers, found or missing, with its proof."""
    rows = []
    for layer, items in f["layers"].items():
        for item in items:
            proof = item.get("path") or _loc(item.get("detail") or "", lang)
            rows.append(
                [
                    _word(LAYERS, layer, lang),
                    _word(ITEMS, item["name"], lang),
                    _word(STATUSES, item["status"], lang),
                    str(proof),
                ]
            )
    section.tables.append(
        Table(
            _("Four layers of the export (E2)", lang),
            [_("layer", lang), _("item", lang), _("status", lang), _("proof", lang)],
            rows,
        )
    )


def _units_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    """Each checkpoint: can training continue from it, or are these weights only (A2)."""
    section.tables.append(
        Table(
            _("Checkpoints: resumable or weights-only (A2)", lang),
            [
                _("path", lang),
                _("kind", lang),
                _("resumable", lang),
                _("step", lang),
                _("weights", lang),
                _("optimizer state", lang),
            ],
            [
                [
                    u["path"],
                    u["kind"],
                    _("yes", lang) if u["resumable"] else _("no", lang),
                    not_available(lang) if u["step"] is None else str(u["step"]),
                    u["weights"] or "-",
                    u["optimizer_state"] or "-",
                ]
                for u in f["units"]
            ],
        )
    )


def _hazard_text(h: dict[str, Any], lang: Language) -> str:
    """What the hazard means, then the audit's own detail, in `lang`."""
    meaning = _(HAZARDS[h["id"]], lang)
    return f"{meaning}: {_loc(h['detail'], lang)}"


def _hazards_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    """Each lock-in hazard (E5), a stop factor, with what it means and the audit's detail."""
    hazards = f["hazards"]
    headers = [_("id", lang), _("path", lang), _("detail", lang), _("SPEC", lang)]
    rows = [
        [
            h["id"],
            str(h["path"]),
            _loc(h["detail"], lang)
            if lang == "en" or h["id"] not in HAZARDS
            else _hazard_text(h, lang),
            h.get("spec", ""),
        ]
        for h in hazards
    ]
    section.tables.append(
        Table(
            _("Lock-in hazards (E5): each is a stop factor", lang),
            headers,
            rows or [[_("none found", lang), "", "", ""]],
        )
    )


def _egress_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    """Measured egress and the window a migration of one run needs (E5, V1)."""
    eg = f.get("egress")
    if not eg:
        return
    section.tables.append(
        Table(
            _("Egress and migration window (E5, V1)", lang),
            [_("figure", lang), _("value", lang)],
            [
                [_("source", lang), str(eg["source"])],
                [_("measured throughput (MB/s)", lang), _raw(eg["throughput_mb_s"], lang)],
                [_("bytes measured", lang), fmt(eg["bytes"], lang)],
                [_("parallel streams", lang), str(eg["streams"])],
                [
                    _("bytes to move", lang),
                    f"{fmt(eg['run_bytes'], lang)} ({_loc(str(eg['extrapolated_from']), lang)})",
                ],
                [_("migration window (h)", lang), _raw(eg["migration_window_hours"], lang)],
                [_("longest acceptable (h)", lang), _raw(eg.get("max_migration_hours"), lang)],
            ],
        )
    )


def _retention_table(section: Section, f: dict[str, Any], lang: Language) -> None:
    """The A8 questions, answered from retention.yaml or open."""
    questions = f["retention"]["questions"]
    section.tables.append(
        Table(
            _("Retention questions (A8)", lang),
            [_("question", lang), _("status", lang), _("answer", lang), _("source", lang)],
            [
                [
                    _loc(q["question"], lang),
                    _word(STATUSES, q["status"], lang),
                    q.get("answer") or "",
                    q.get("source") or "",
                ]
                for q in questions
            ],
        )
    )
