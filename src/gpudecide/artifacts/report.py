"""Report section of the export audit (registered as SECTION_BUILDERS["audit"])."""

from __future__ import annotations

from gpudecide.report.i18n import Language, t
from gpudecide.report.model import Section, Table

_T: dict[str, dict[str, str]] = {
    "title": {
        "en": "Export audit: can the run leave and resume?",
        "ru": "Аудит экспорта: можно ли уйти и продолжить обучение?",
        "kk": "Экспорт аудиті: кетуге және оқытуды жалғастыруға бола ма?",
    },
    "layers": {
        "en": "Four layers of the export (E2)",
        "ru": "Четыре слоя экспорта (E2)",
        "kk": "Экспорттың төрт қабаты (E2)",
    },
    "hazards": {
        "en": "Lock-in hazards (E5): each is a stop factor",
        "ru": "Риски привязки (E5): каждый — стоп-фактор",
        "kk": "Байланып қалу қаупі (E5): әрқайсысы тоқтату факторы",
    },
    "units": {
        "en": "Checkpoints: resumable or weights-only (A2)",
        "ru": "Чекпойнты: можно продолжить или только веса (A2)",
        "kk": "Чекпойнттар: жалғастыруға бола ма, әлде тек салмақтар (A2)",
    },
    "retention": {
        "en": "Retention questions (A8)",
        "ru": "Вопросы хранения (A8)",
        "kk": "Сақтау сұрақтары (A8)",
    },
    "egress": {
        "en": "Egress and migration window (E5, V1)",
        "ru": "Выгрузка и окно миграции (E5, V1)",
        "kk": "Шығару және көшу терезесі (E5, V1)",
    },
    "none": {"en": "none found", "ru": "не найдено", "kk": "табылмады"},
}


def _t(key: str, lang: Language) -> str:
    return t(key, lang, _T)


def audit_section(section: Section, lang: Language) -> None:
    """Tables of an `audit` evidence record: layers, units, hazards, egress, A8."""
    f = section.record.figures
    section.title = _t("title", lang)
    rows = []
    for layer, items in f["layers"].items():
        for item in items:
            proof = item.get("path") or item.get("detail") or ""
            rows.append([layer, item["name"], item["status"], str(proof)])
    section.tables.append(Table(_t("layers", lang), ["layer", "item", "status", "proof"], rows))
    section.tables.append(
        Table(
            _t("units", lang),
            ["path", "kind", "resumable", "step", "weights", "optimizer state"],
            [
                [
                    u["path"],
                    u["kind"],
                    "yes" if u["resumable"] else "no",
                    "n/a" if u["step"] is None else str(u["step"]),
                    u["weights"] or "-",
                    u["optimizer_state"] or "-",
                ]
                for u in f["units"]
            ],
        )
    )
    hazards = f["hazards"]
    section.tables.append(
        Table(
            _t("hazards", lang),
            ["id", "path", "detail", "SPEC"],
            [[h["id"], str(h["path"]), h["detail"], h.get("spec", "")] for h in hazards]
            or [[_t("none", lang), "", "", ""]],
        )
    )
    eg = f.get("egress")
    if eg:
        section.tables.append(
            Table(
                _t("egress", lang),
                ["figure", "value"],
                [
                    ["source", str(eg["source"])],
                    ["measured throughput (MB/s)", str(eg["throughput_mb_s"])],
                    ["bytes measured", f"{eg['bytes']:,}"],
                    ["parallel streams", str(eg["streams"])],
                    ["bytes to move", f"{eg['run_bytes']:,} ({eg['extrapolated_from']})"],
                    ["migration window (h)", str(eg["migration_window_hours"])],
                    ["longest acceptable (h)", str(eg.get("max_migration_hours"))],
                ],
            )
        )
    questions = f["retention"]["questions"]
    section.tables.append(
        Table(
            _t("retention", lang),
            ["question", "status", "answer", "source"],
            [
                [q["question"], q["status"], q.get("answer") or "", q.get("source") or ""]
                for q in questions
            ],
        )
    )
