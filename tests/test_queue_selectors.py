"""What each SLO selects, shown (issue 22: the "urgent" SLO selected 27 ordinary eval,
restart and smoke jobs; GPU class and site were empty and the reader could not see it), and
the Wilson interval explained where the queue section first uses it.

Counts by hand on a small canonical log; each statement with a twin that must not appear.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from gpudecide import evidence as ev
from gpudecide.i18n import speaking
from gpudecide.jobs.load import load_logs
from gpudecide.message import english
from gpudecide.queue.analysis import QueueOptions, analyse_queue, queue_evidence
from gpudecide.queue.figures import queue_figures
from gpudecide.queue.report import queue_section
from gpudecide.queue.slo import SLOFile, selector_findings, selector_text
from gpudecide.report.model import Section

from .english import english_runs
from .logs import job, write_csv

T0 = datetime(2026, 7, 27, 4, tzinfo=UTC)  # 09:00 in Almaty, a Monday

# The template's urgent SLO: small evals, restarts and smokes in Almaty's working hours.
URGENT = {
    "threshold_minutes": 30,
    "allowed_violation_share": 0.05,
    "selector": {
        "gpus": {"min": 1, "max": 2},
        "kinds": ["eval", "restart", "smoke"],
        "time_of_day": {
            "start": "09:00",
            "end": "19:00",
            "timezone": "Asia/Almaty",
            "weekdays": ["mon", "tue", "wed", "thu", "fri"],
        },
    },
}
NORMAL = {"threshold_minutes": 240, "allowed_violation_share": 0.1}


def _log(path: Path) -> Path:
    """Ordinary jobs on a Monday morning: 4 evals, 2 smokes, 1 restart of 1 GPU, 2 trainings
    of 8 GPUs (outside the urgent SLO by size and kind)."""
    kinds = ["eval"] * 4 + ["smoke"] * 2 + ["restart"] + ["train"] * 2
    rows = []
    for i, kind in enumerate(kinds):
        submit = T0 + timedelta(minutes=20 * i)
        rows.append(
            job(
                str(10 + i),
                f"{kind}-{i}",
                8 if kind == "train" else 1,
                (submit + timedelta(minutes=5)).isoformat(),
                (submit + timedelta(minutes=50)).isoformat(),
                submit=submit.isoformat(),
                eligible=submit.isoformat(),
                kind=kind,
            )
        )
    return write_csv(path, rows)


def _record(tmp_path: Path, slos: dict[str, Any]) -> ev.Evidence:
    tmp_path.mkdir(parents=True, exist_ok=True)
    options = QueueOptions(slos=SLOFile.model_validate({"slos": slos}), as_of=T0 + timedelta(1))
    figures = analyse_queue(load_logs([_log(tmp_path / "log.csv")]), options)
    return ev.load(ev.write(queue_evidence(figures, []), tmp_path / "evidence"))


def _said(record: ev.Evidence, name: str) -> list[str]:
    f = queue_figures(record)
    slo = next(s for s in f.slo if s.name == name)
    return [english(m) for m in selector_findings(slo, list(f.phases_by_kind))]


def test_the_urgent_slo_shows_what_it_selects_and_what_it_cannot_tell(tmp_path: Path) -> None:
    record = _record(tmp_path, {"normal": NORMAL, "urgent": URGENT})
    f = queue_figures(record)
    assert f.model_dump(mode="json") == record.figures
    urgent = next(s for s in f.slo if s.name == "urgent")
    assert urgent.selector == URGENT["selector"]  # as written: whole numbers stay whole
    assert urgent.selected == 7
    assert urgent.selected_by_kind == {"smoke": 2, "restart": 1, "eval": 4}
    assert selector_text(urgent.selector) == (
        "{gpus: {min: 1, max: 2}, kinds: [eval, restart, smoke], time_of_day: {start: '09:00', "
        "end: '19:00', timezone: Asia/Almaty, weekdays: [mon, tue, wed, thu, fri]}}"
    )
    assert _said(record, "urgent") == [
        "no GPU class condition: jobs on any GPU class count",
        "no site condition: jobs at any site count",
        "no priority or priority class condition: an ordinary job of the kinds it selects "
        "counts as urgent",
    ]


def test_a_selector_that_names_every_condition_says_nothing_of_them(tmp_path: Path) -> None:
    """The twin: GPU class, sites and a priority class given; nothing to say. The log's
    jobs have no GPU class or site, so it selects none: that is said."""
    strict = {
        **URGENT,
        "selector": {
            **URGENT["selector"],
            "gpu_class": ["h100"],
            "sites": ["almaty"],
            "priority_class": ["urgent"],
        },
    }
    record = _record(tmp_path, {"normal": NORMAL, "urgent": strict})
    assert _said(record, "urgent") == ["it selects no job of the log"]


def test_every_kind_is_said_plainly(tmp_path: Path) -> None:
    # no kind condition at all
    record = _record(tmp_path, {"normal": NORMAL, "urgent": URGENT})
    normal = _said(record, "normal")
    assert "no kind condition: it selects jobs of every kind" in normal
    assert next(s for s in queue_figures(record).slo if s.name == "normal").selector == {}
    # kinds named, and they are every kind the log has
    every = {**NORMAL, "selector": {"kinds": ["train", "eval", "smoke", "restart", "merge"]}}
    record = _record(tmp_path / "every", {"normal": every, "urgent": URGENT})
    assert "it selects jobs of every kind the log has (eval, restart, smoke, train)" in _said(
        record, "normal"
    )
    # the twin: kinds named, a part of the log's
    some = {**NORMAL, "selector": {"kinds": ["train"]}}
    record = _record(tmp_path / "some", {"normal": some, "urgent": URGENT})
    assert not any("every kind" in s for s in _said(record, "normal"))
    # "urgent" is a name the statement about priorities keeps to
    assert not any("urgent" in s for s in _said(record, "normal"))


def _section(record: ev.Evidence) -> Section:
    section = Section("queue", "", record, "fresh", "fresh", [])
    queue_section(section)
    return section


def test_the_report_explains_the_wilson_interval_before_the_slo_table(tmp_path: Path) -> None:
    section = _section(_record(tmp_path, {"normal": NORMAL, "urgent": URGENT}))
    captions = [t.caption for t in section.tables]
    terms, slo, selects = (
        captions.index("Terms used below"),
        captions.index("SLO (Q3)"),
        captions.index("What each SLO selects (Q3)"),
    )
    assert terms + 1 == slo and slo + 1 == selects
    [row] = section.tables[terms].rows
    assert row[0] == "95% CI (Wilson interval)" and "95 % confidence" in row[1]
    table = section.tables[selects]
    assert table.verbatim == frozenset({1})
    rows = {r[0]: r for r in table.rows}
    assert rows["urgent"][2:4] == ["7", "smoke 2, restart 1, eval 4"]
    assert rows["urgent"][1].startswith("{gpus: {min: 1, max: 2}, kinds: [eval, restart, smoke]")
    assert "no GPU class condition" in rows["urgent"][4]


@pytest.mark.parametrize("lang", ["ru", "kk"])
def test_the_terms_and_selectors_speak_the_language(tmp_path: Path, lang: str) -> None:
    record = _record(tmp_path, {"normal": NORMAL, "urgent": URGENT})
    with speaking(lang):  # type: ignore[arg-type]
        section = _section(record)
    wilson = {"ru": "Уилсона", "kk": "Уилсон"}[lang]
    terms = next(t for t in section.tables if wilson in t.rows[0][0])
    selects = next(t for t in section.tables if "Q3" in t.caption and len(t.headers) == 5)
    for text in [terms.caption, *terms.rows[0], selects.caption, *selects.headers[1:]]:
        assert english_runs(text, ["SLO", "Q3", "CI"]) == [], text
    for row in selects.rows:
        assert english_runs(row[4], []) == [], row[4]


def test_a_record_from_before_the_selector_was_kept_shows_no_selector_row(tmp_path: Path) -> None:
    record = _record(tmp_path, {"normal": NORMAL, "urgent": URGENT})
    for s in record.figures["slo"]:
        del s["selector"], s["selected_by_kind"]
    section = _section(record)
    assert "What each SLO selects (Q3)" not in [t.caption for t in section.tables]
    f = queue_figures(record)
    assert all(selector_findings(s, []) == [] for s in f.slo)
    assert f.model_dump(mode="json") == record.figures
