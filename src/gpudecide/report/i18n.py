"""Headings of the report in English, Russian and Kazakh (the languages its readers use).

Figures, file names and evidence summaries stay as computed; only the frame is translated.
"""

from __future__ import annotations

from typing import Literal

Language = Literal["en", "ru", "kk"]

_STRINGS: dict[str, dict[str, str]] = {
    "report_title": {
        "en": "GPU decision report",
        "ru": "Отчёт о выборе GPU-контура",
        "kk": "GPU контурын таңдау есебі",
    },
    "generated": {"en": "Generated", "ru": "Сформирован", "kk": "Жасалған уақыты"},
    "evidence_index": {
        "en": "Evidence on record",
        "ru": "Собранные доказательства",
        "kk": "Жиналған дәлелдер",
    },
    "kind": {"en": "Analysis", "ru": "Анализ", "kk": "Талдау"},
    "verdict": {"en": "Verdict", "ru": "Вывод", "kk": "Қорытынды"},
    "status": {"en": "Status", "ru": "Состояние", "kk": "Күйі"},
    "inputs": {"en": "Inputs", "ru": "Входные данные", "kk": "Кіріс деректер"},
    "notes": {
        "en": "Not measured / notes",
        "ru": "Не измерено / примечания",
        "kk": "Өлшенбеген / ескертпелер",
    },
    "fresh": {"en": "fresh", "ru": "актуально", "kk": "өзекті"},
    "stale": {
        "en": "STALE: an input changed",
        "ru": "УСТАРЕЛО: вход изменился",
        "kk": "ЕСКІРГЕН: кіріс өзгерді",
    },
    "missing_input": {
        "en": "STALE: an input is gone",
        "ru": "УСТАРЕЛО: входа больше нет",
        "kk": "ЕСКІРГЕН: кіріс жоқ",
    },
    "tampered": {
        "en": "TAMPERED: the record was edited",
        "ru": "ИЗМЕНЕНО: запись правили",
        "kk": "ӨЗГЕРТІЛГЕН: жазба түзетілген",
    },
    "no_evidence": {
        "en": "No evidence yet: run an analysis (for example `gpudecide profile`).",
        "ru": "Доказательств пока нет: запустите анализ (например, `gpudecide profile`).",
        "kk": "Әзірге дәлел жоқ: талдауды іске қосыңыз (мысалы, `gpudecide profile`).",
    },
    "profile": {"en": "Workload profile", "ru": "Профиль нагрузки", "kk": "Жүктеме профилі"},
    "jobs_by_kind": {
        "en": "Jobs by kind",
        "ru": "Задания по видам",
        "kk": "Тапсырмалар түрі бойынша",
    },
    "key_figures": {"en": "Key figures", "ru": "Ключевые показатели", "kk": "Негізгі көрсеткіштер"},
    "per_week": {"en": "Per week", "ru": "По неделям", "kk": "Апта бойынша"},
    "chart_jobs_week": {
        "en": "Jobs per week, by kind",
        "ru": "Задания в неделю, по видам",
        "kk": "Аптасына тапсырмалар, түрі бойынша",
    },
    "chart_gpu_day": {"en": "GPU-hours per day", "ru": "GPU-часы в день", "kk": "Күніне GPU-сағат"},
    "chart_concurrency": {
        "en": "GPUs in use over time",
        "ru": "Занятые GPU во времени",
        "kk": "Уақыт бойынша пайдаланылған GPU",
    },
    "figure": {"en": "Figure", "ru": "Показатель", "kk": "Көрсеткіш"},
    "value": {"en": "Value", "ru": "Значение", "kk": "Мәні"},
    "jobs": {"en": "Jobs", "ru": "Задания", "kk": "Тапсырмалар"},
    "gpu_hours": {"en": "GPU-hours", "ru": "GPU-часы", "kk": "GPU-сағат"},
    "week": {"en": "Week", "ru": "Неделя", "kk": "Апта"},
    "queue": {
        "en": "Queue: waits, SLOs, preemption, chains",
        "ru": "Очередь: ожидание, SLO, вытеснение, цепочки",
        "kk": "Кезек: күту, SLO, ығыстыру, тізбектер",
    },
    "replay": {
        "en": "Dedicated pool replay",
        "ru": "Прогон журнала через выделенный пул",
        "kk": "Журналды бөлінген пул арқылы өткізу",
    },
    "chart_wait_cdf": {
        "en": "Queue waits against the SLO thresholds",
        "ru": "Ожидание в очереди против порогов SLO",
        "kk": "Кезекте күту және SLO шектері",
    },
    "chart_phases": {
        "en": "Median phase durations by job kind",
        "ru": "Медианная длительность фаз по видам заданий",
        "kk": "Тапсырма түрлері бойынша фазалардың медианалық ұзақтығы",
    },
    "chart_chains": {
        "en": "Chains: waiting (light) and running (dark)",
        "ru": "Цепочки: ожидание (светлое) и работа (тёмное)",
        "kk": "Тізбектер: күту (ашық) және жұмыс (күңгірт)",
    },
    "chart_pool_curve": {
        "en": "p95 wait and utilisation against pool size",
        "ru": "p95 ожидания и загрузка в зависимости от размера пула",
        "kk": "Пул көлеміне қарай p95 күту және жүктеме",
    },
    "phases": {
        "en": "Lifecycle phases (Q1)",
        "ru": "Фазы жизненного цикла (Q1)",
        "kk": "Өмірлік цикл фазалары (Q1)",
    },
    "wait_reasons": {
        "en": "Wait reasons by total wait (Q2)",
        "ru": "Причины ожидания по суммарному времени (Q2)",
        "kk": "Жалпы уақыт бойынша күту себептері (Q2)",
    },
    "chains": {"en": "Chains (Q5)", "ru": "Цепочки (Q5)", "kk": "Тізбектер (Q5)"},
    "pools": {"en": "Pool sizes", "ru": "Размеры пула", "kk": "Пул көлемдері"},
}


Strings = dict[str, dict[str, str]]


def t(key: str, lang: Language, strings: Strings = _STRINGS) -> str:
    """A heading in the report's language (English when a translation is missing).

    A section keeping its own headings passes its table as `strings`.
    """
    entry = strings[key]
    return entry.get(lang) or entry["en"]
