"""Report sections of drill and cordon evidence (registered as "drill" and "cordon")."""

from __future__ import annotations

from typing import Any

from gpudecide.i18n import translator
from gpudecide.report.fmt import number
from gpudecide.report.i18n import Language
from gpudecide.report.model import Section, Table

_ = translator("drills")


def _yes(flag: Any, lang: Language) -> str:
    return _("yes", lang) if flag else _("no", lang)


def word(word: str, lang: Language) -> str:
    """An action, breaker state or verdict in the reader's language (also the commands')."""
    return _word(word, lang)


def _word(word: str, lang: Language) -> str:
    """An action, breaker state or restart verdict in the reader's language."""
    words = {
        "ok": _("ok", lang),
        "watch": _("watch", lang),
        "cordon": _("cordon", lang),
        "drain-and-reset": _("drain-and-reset", lang),
        "replace": _("replace", lang),
        "allowed": _("allowed", lang),
        "held": _("held by the circuit breaker", lang),
        "none": _("nothing to do", lang),
        "restarted_from_zero": _("restarted from zero", lang),
        "resumed": _("resumed", lang),
        "unclear": _("unclear", lang),
        "pass": _("pass", lang),
        "fail": _("fail", lang),
    }
    return words.get(word, word)


def _reason(r: dict[str, Any], lang: Language) -> str:
    """One cordon reason in the reader's language, from its code and value."""
    v = r.get("value")
    shown = _num(v, lang, 1)
    texts = {
        "xid": _("Xid {n}", lang).format(n=_num(v, lang, 0)),
        "ecc_rate": _("corrected ECC errors {rate} per hour", lang).format(rate=shown),
        "dbe_volatile": _("uncorrected ECC errors: {n}", lang).format(n=shown),
        "retired_pending": _("page retirement waits for a GPU reset", lang),
        "remap_pending": _("row remapping waits for a GPU reset", lang),
        "remap_failure": _("row remapping failed", lang),
        "retired_pages": _("retired pages: {n}", lang).format(n=shown),
    }
    return texts.get(str(r.get("code")), str(r.get("reason", "")))


def _num(value: Any, lang: Language, digits: int = 1) -> str:
    return "-" if value is None else number(value, lang, digits)


def drills_section(section: Section, lang: Language) -> None:
    """The game day (every drill of the run) and the restarts from zero in the job logs."""
    f = section.record.figures
    section.title = _("Game days: was the failure noticed, data kept, the status explained?", lang)
    rows = f.get("game_day") or [f]
    option = f.get("option") or _("none named", lang)
    section.tables.append(
        Table(
            _("Drills on option {option} (G1, G4)", lang).format(option=option),
            [
                _("drill", lang),
                _("verdict", lang),
                _("noticed", lang),
                _("data kept", lang),
                _("explained", lang),
                _("resumed from step", lang),
                _("lost steps", lang),
                _("lost seconds", lang),
            ],
            [
                [
                    str(r["drill"]),
                    _word(str(r["verdict"]), lang),
                    _yes(r["noticed"], lang),
                    _yes(r["data_kept"], lang),
                    _yes(r["explained"], lang),
                    _num(r.get("resumed_from_step"), lang, 0),
                    _num(r.get("lost_steps"), lang, 0),
                    _num(r.get("lost_seconds"), lang, 1),
                ]
                for r in rows
            ],
        )
    )
    _restarts_table(section, f.get("log_restarts"), lang)


def _hours(seconds: float | None) -> float | None:
    return None if seconds is None else seconds / 3600


def _restarts_table(section: Section, found: dict[str, Any] | None, lang: Language) -> None:
    if not found:
        return
    section.tables.append(
        Table(
            _("Restarts after a lost node, preemption or timeout in the job logs (G1, Q4)", lang),
            [
                _("job", lang),
                _("name", lang),
                _("ended as", lang),
                _("lost attempt (h)", lang),
                _("re-run (h)", lang),
                _("verdict", lang),
                _("GPU-hours lost", lang),
                _("checkpoint time known", lang),
                _("reference full run (h)", lang),
            ],
            [
                [
                    str(e["job_id"]),
                    str(e["name"]),
                    str(e["state"]),
                    _num(_hours(e["lost_attempt_s"]), lang),
                    _num(_hours(e["rerun_s"]), lang),
                    _word(str(e["verdict"]), lang),
                    _num(e["gpu_hours_lost"], lang),
                    _yes(e["checkpoint_known"], lang),
                    _num(_hours(e["reference_full_run_s"]), lang),
                ]
                for e in found["restarts"]
            ]
            or [[_("none found", lang), "", "", "", "", "", "", "", ""]],
            # Job names and Slurm's state words as the log has them (REQUEUED, TIMEOUT...).
            verbatim=frozenset({1, 2}),
        )
    )


def cordon_section(section: Section, lang: Language) -> None:
    """Per-GPU actions with reasons, and the command per node (G2, G3)."""
    f = section.record.figures
    section.title = _("GPU health: which GPUs leave service", lang)
    section.tables.append(
        Table(
            _("Action per GPU", lang),
            [
                _("node", lang),
                _("GPU", lang),
                _("PCI bus", lang),
                _("action", lang),
                _("reasons", lang),
            ],
            [
                [
                    str(g["node"]),
                    "" if g["gpu"]["index"] is None else str(g["gpu"]["index"]),
                    str(g["gpu"]["pci_bus_id"] or ""),
                    _word(str(g["action"]), lang),
                    "; ".join(
                        f"{_reason(r, lang)} ({_word(r['action'], lang)})" for r in g["reasons"]
                    )
                    or "-",
                ]
                for g in f["gpus"]
            ]
            or [[_("no telemetry", lang), "", "", "", ""]],
        )
    )
    section.tables.append(
        Table(
            _("Commands per node (circuit breaker: at most {n} of {m} nodes)", lang).format(
                n=f["allowed_nodes"], m=f["fleet_nodes"]
            ),
            [_("node", lang), _("action", lang), _("command", lang), _("breaker", lang)],
            [
                [str(n["node"]), _word(str(n["action"]), lang), cmd, _word(str(n["breaker"]), lang)]
                for n in f["nodes"]
                for cmd in n["commands"]
            ]
            or [[_("none", lang), "", "", ""]],
            # Commands to run, byte for byte (Reason= text included): never translated.
            verbatim=frozenset({2}),
        )
    )
