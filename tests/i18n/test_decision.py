"""The decision in Russian and Kazakh (issue 10): every rule, stop factor, condition, basis,
verdict and summary the decision writes is said in the reader's language; `assess` and
`check hybrid` print no English prose in ru/kk; English output keeps its form."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.artifacts import rules as artifact_rules
from gpudecide.cost import rules as cost_rules
from gpudecide.decision import builtin_rules as b
from gpudecide.decision import conditions, reversibility, robustness
from gpudecide.decision.assess import assess
from gpudecide.decision.context import RuleContext
from gpudecide.decision.report import decision_section, move_out_text, shrink_text
from gpudecide.findings import StopFactor
from gpudecide.i18n import speaking
from gpudecide.jobs.rules import profile_rules
from gpudecide.message import render
from gpudecide.queue.rules import queue_rules, replay_rules
from gpudecide.report.i18n import summary_of
from gpudecide.report.model import Section
from tests.conftest import run_cli
from tests.english import english_lines, english_runs, team_words
from tests.test_decision import audit_record, make_ws, record

LANGS = ("ru", "kk")
# What the synthetic records name: option ids, SLO names, hazard ids and paths (identifiers).
IDS = ["own", "man", "loc", "hyb", "urgent", "normal", "unknown_format", "v.bin", "KZT"]


def render_message(msg: Any, lang: str) -> str:
    """A stored message as a reader of `lang` reads it."""
    with speaking(lang):  # type: ignore[arg-type]
        return render(msg)


def _english(text: str) -> list[str]:
    return english_runs(text, IDS)


def _spaced(text: str) -> str:
    """Babel's group signs (no-break spaces) as plain spaces."""
    return text.replace("\xa0", " ").replace("\u202f", " ")


# --- every rule's text, every branch, in ru and kk ---------------------------------------


def _profile(shape: str, pred: str, busy: float | None) -> ev.Evidence:
    return record(
        "profile",
        {
            "burstiness": {"shape": shape},
            "predictability": {"verdict": pred},
            "busy_share": busy,
            "pool_gpus": 8,
        },
    )


def _cost(absorbs: bool | None, never: int = 0) -> ev.Evidence:
    def opt(oid: str, total: str) -> dict[str, Any]:
        return {
            "id": oid,
            "regimes": {"normal": {"total": total, "useful_utilisation": 0.033}},
            "peak_check": {"pool_gpus": 8, "absorbs": absorbs, "jobs_unplaceable": never},
        }

    return record(
        "cost", {"currency": "KZT", "options": [opt("own", "6928546"), opt("man", "1290966")]}
    )


def _replay(share: float | None, allowed: float | None, never: int = 0) -> ev.Evidence:
    pool = {"gpus": 8, "jobs": 40, "jobs_unplaceable": never, "slo_violation_share": share}
    slo = {"name": "urgent", "allowed_violation_share": allowed} if allowed is not None else {}
    return record("replay", {"pools": [pool], "slo": slo, "window": {"kind": "peak"}})


def _queue(verdict: str) -> ev.Evidence:
    slo = {
        "name": "urgent",
        "verdict": verdict,
        "conclusive": True,
        "violation_share": 0.4,
        "ci95": [0.3, 0.5],
        "allowed_violation_share": 0.05,
    }
    return record("queue", {"option": "loc", "slo": [slo]})


def _every_branch(tmp_path: Path) -> list[b.Finding]:
    """Findings of every built-in rule branch (score bands, stop factors, clears)."""
    ws = make_ws(tmp_path, slo={"hard": ["urgent"]})
    found: list[b.Finding] = []
    for cost in (_cost(True), _cost(False), _cost(True, 2), _cost(False, 1)):
        ctx = RuleContext(ws.config.options, ws.config.matrix, {("cost", None, None): cost})
        found += cost_rules.cost_rules(cost, ctx)
        for shape, pred, busy in (
            ("bursty", "unpredictable", 0.05),
            ("steady", "predictable", 0.7),
            ("no load", "not measurable", None),
            ("steady", "partly predictable", 0.3),
        ):
            found += profile_rules(_profile(shape, pred, busy), ctx)
        for replay in (
            _replay(0.0, 0.1),
            _replay(0.08, 0.1),
            _replay(0.5, 0.1),
            _replay(None, None),
            _replay(0.2, 0.1, never=3),
        ):
            found += replay_rules(replay, ctx)
    ctx = RuleContext(ws.config.options, ws.config.matrix)
    found += profile_rules(_profile("bursty", "unpredictable", 0.05), ctx)  # no cost record
    for verdict in ("pass", "fail"):
        found += queue_rules(_queue(verdict), ctx)
    found += artifact_rules.audit_rules(
        audit_record("man", [{"id": "unknown_format", "path": "v.bin"}]), ctx
    )
    found += artifact_rules.audit_rules(audit_record("man", []), ctx)
    found += artifact_rules.audit_rules(
        record("audit", {"option": "man", "hazards": [], "resumable": False}), ctx
    )
    return found


def test_every_rule_keeps_its_english_and_carries_a_message(tmp_path: Path) -> None:
    """The English `rule` / `clear` is the message's English, byte for byte; each branch ran."""
    found = _every_branch(tmp_path)
    stops = [f for f in found if isinstance(f, StopFactor)]
    assert {s.id for s in stops} == {"hard_slo_violated", "export_hazard"}
    assert len({f.rule for f in found}) >= 20
    for f in found:
        assert f.rule_message is not None, f.rule
        assert render_message(f.rule_message, "en") == f.rule
    for s in stops:
        assert s.clear_message is not None and render_message(s.clear_message, "en") == s.clear
    rules = {f.rule for f in found}
    # The historic English forms (what --json and the English report have always said).
    assert (
        "normal month 6,928,546 KZT = 5.37 x the cheapest: <=1.1 5, <=1.5 4, <=2 3, <=3 2, else 1"
        in rules
    )
    assert (
        "replay of 8 GPUs (peak window): SLO urgent violated by 0.0% <= half the allowed 10.0%"
        in rules
    )
    assert "hard SLO urgent violated by 40.0% (95 % CI 30.0%-50.0%), allowed 5.0%" in rules


@pytest.mark.parametrize("lang", LANGS)
def test_every_rule_reads_in_the_language(tmp_path: Path, lang: str) -> None:
    """No English word in any rule or clear text in ru/kk, ids aside; numbers per locale."""
    found = _every_branch(tmp_path)
    said = [render_message(f.rule_message, lang) for f in found if f.rule_message]
    said += [
        render_message(f.clear_message, lang)
        for f in found
        if isinstance(f, StopFactor) and f.clear_message
    ]
    leaks = [(t, r) for t in said if (r := _english(t))]
    assert not leaks, leaks[:5]
    joined = "\n".join(said)
    assert "6 928 546" in _spaced(joined)  # Babel's group sign
    expected = {"ru": "обычный месяц", "kk": "қалыпты ай"}[lang]
    assert expected in joined


def test_an_unknown_word_of_the_figures_is_shown_as_written(tmp_path: Path) -> None:
    """Boundary: a shape the rules do not know stays as the record wrote it (no crash)."""
    ws = make_ws(tmp_path)
    ctx = RuleContext(ws.config.options, ws.config.matrix)
    found = profile_rules(_profile("lumpy", "predictable", 0.05), ctx)
    assert found and all("lumpy" in render_message(f.rule_message or {}, "ru") for f in found)


# --- the assessment: stop factors from the workspace, summary, notes, verdicts ---------------


def _hybrid_ws(tmp_path: Path) -> workspace.Workspace:
    make_ws(tmp_path)
    config = yaml.safe_load((tmp_path / workspace.CONFIG_NAME).read_text())
    config["options"].append({"id": "hyb", "kind": "hybrid", "contours": ["own", "man"]})
    config["options"][0]["derived_weights"] = "unclear"
    (tmp_path / workspace.CONFIG_NAME).write_text(yaml.safe_dump(config))
    return workspace.load(tmp_path)


@pytest.mark.parametrize("lang", LANGS)
def test_assessment_texts_read_in_the_language(tmp_path: Path, lang: str) -> None:
    """Summary, notes, stop factors (workspace and contour ones), conditions, bases and the
    robustness verdict: each stored as a message and said without English."""
    ws = _hybrid_ws(tmp_path)
    hazard = audit_record("man", [{"id": "unknown_format", "path": "v.bin"}])
    result = assess(ws, [hazard, _cost(True), _profile("bursty", "unpredictable", 0.05)])
    figures = result.figures()
    assert result.summary_message is not None
    assert render_message(result.summary_message, "en") == result.summary
    texts = [render_message(result.summary_message, lang)]
    texts += [render_message(m, lang) for m in figures["messages"]["notes"]]
    for o in result.options:
        for s in o["stop_factors"]:
            assert s["rule_message"] is not None and s["clear_message"] is not None, s
            texts += [
                render_message(s["rule_message"], lang),
                render_message(s["clear_message"], lang),
            ]
    for c in result.conditions:
        texts += [render_message(c["text_message"], lang), render_message(c["why_message"], lang)]
    for r in result.reversibility:
        texts.append(render_message(r["move_out"]["basis_message"], lang))
    texts.append(render_message(result.robustness["verdict_message"], lang))
    leaks = [(t, r) for t in texts if (r := _english(t))]
    assert not leaks, leaks[:5]
    hyb = next(o for o in result.options if o["id"] == "hyb")
    contour = {"ru": "через свой контур man", "kk": "өз контуры man арқылы"}[lang]
    assert any(contour in render_message(s["rule_message"], lang) for s in hyb["stop_factors"])
    assert {"ru": "Остановлены", "kk": "Тоқтатылғандар"}[lang] in texts[0]


def test_a_contour_stop_without_a_message_keeps_its_words(tmp_path: Path) -> None:
    """Boundary: a contour's stop factor whose text has no message (an analysis that stores
    English only): on the hybrid the frame is said in the language, the contour's own text
    stays as written."""
    from gpudecide.decision.assess import _through

    bare = StopFactor("man", "export_hazard", "unknown_format: v.bin", ("a",), "again")
    raised = _through("hyb", "man", bare)
    assert raised.rule == "through its contour man: unknown_format: v.bin"
    assert raised.rule_message is not None
    ru = render_message(raised.rule_message, "ru")
    assert ru == "через свой контур man: unknown_format: v.bin"


def test_robustness_verdict_names_the_criterion_in_the_language() -> None:
    """A winner that hinges on one weight: the criterion and the new winner in ru/kk."""
    scores = {"a": {"frequency": 5, "cost": 1}, "b": {"frequency": 1, "cost": 4}}
    result = robustness.analyse(scores, {"frequency": 3, "cost": 2}, ["a", "b"])
    assert result.verdict.startswith("hinges on the weight of ")
    assert render_message(result.verdict_message, "en") == result.verdict
    ru = render_message(result.verdict_message, "ru")
    assert "«" in ru and ("частота" in ru or "стоимость" in ru) and not _english(ru)
    kk = render_message(result.verdict_message, "kk")
    assert "критерийінің" in kk and not _english(kk)


# --- reversibility and shrink: readable units per locale ----------------------------------


@pytest.mark.parametrize(
    ("hours", "en", "ru"),
    [
        (7.9e-06, "0.028 s at 0.02 GB/s", "0,028 с при 0,02 ГБ/с"),
        (1e-08, "under 0.001 s at 0.02 GB/s", "менее 0,001 с при 0,02 ГБ/с"),
        (59 / 3600, "59 s at 0.02 GB/s", "59 с при 0,02 ГБ/с"),  # just under a minute
        (0.5, "30 min at 0.02 GB/s", "30 мин при 0,02 ГБ/с"),
        (2.26, "2.3 h at 0.02 GB/s", "2,3 ч при 0,02 ГБ/с"),
    ],
)
def test_move_out_time_reads_in_a_unit_that_fits(hours: float, en: str, ru: str) -> None:
    move = {"hours": hours, "gbps": 0.02}
    assert move_out_text(move) == en
    with speaking("ru"):
        assert move_out_text(move) == ru


def test_move_out_and_shrink_when_not_measured() -> None:
    with speaking("ru"):
        assert move_out_text({"hours": None, "gbps": None}) == "-"
    with speaking("kk"):
        assert shrink_text({}) == "-"
    shrink = {"cost": "45088333.33", "currency": "KZT", "days": 70.0}
    assert shrink_text(shrink) == "45,088,333 KZT, 70 d"
    with speaking("ru"):
        assert _spaced(shrink_text(shrink)) == "45 088 333 KZT, 70 дн."


# --- the report section ---------------------------------------------------------------------


def _section(path: Path, lang: str) -> Section:
    section = Section("decision", "", ev.load(path), "fresh", "fresh", [])
    with speaking(lang):  # type: ignore[arg-type]
        decision_section(section)
    return section


def _decision_path(root: Path) -> Path:
    found = sorted((root / "evidence").glob("decision-*.json"))
    assert found, "the demo writes a decision record"
    return found[-1]


@pytest.mark.parametrize("lang", LANGS)
def test_decision_section_speaks_the_language(demo_workspace: Path, lang: str) -> None:
    """Every cell of the demo's decision section outside verbatim columns: no English."""
    section = _section(_decision_path(demo_workspace), lang)
    quoted = team_words(demo_workspace)
    leaks = []
    cells = [section.title]
    for table in section.tables:
        cells += [table.caption, *table.headers]
        for row in table.rows:
            cells += [c for i, c in enumerate(row) if i not in table.verbatim]
    for cell in cells:
        if runs := english_runs(cell, quoted):
            leaks.append((cell[:100], runs[:4]))
    assert not leaks, leaks[:6]
    text = "\n".join(cells)
    words = {
        "ru": ("доказательств пока нет", "устойчиво", "экспорт без этого риска"),
        "kk": ("әзірге дәлел жоқ", "орнықты", "аудитпен қайта тексерілген экспорт"),
    }[lang]
    for w in words:
        assert w in text, w
    with speaking(lang):  # type: ignore[arg-type]
        summary = summary_of(section.record)
    assert summary.startswith(
        {"ru": "предварительно: впереди kz-local", "kk": "алдын ала: kz-local алда"}[lang]
    )


def test_decision_section_in_english_keeps_its_form(demo_workspace: Path) -> None:
    section = _section(_decision_path(demo_workspace), "en")
    rows = [c for t in section.tables for r in t.rows for c in r]
    assert "no evidence yet" in rows and "an export without this hazard, audited again" in rows
    matrix = next(t for t in section.tables if t.caption.startswith("Matrix"))
    assert matrix.headers[1].startswith("frequency (x") and any("3 *" in r for r in matrix.rows)
    record = section.record
    with speaking("en"):
        assert summary_of(record) == record.summary
    # The demo's leader is provisional: its export was only rehearsed, its audit, drills and
    # start time are not checked (issue 21).
    assert record.summary.startswith("provisional: kz-local leads (")


# --- the commands -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        (
            "ru",
            (
                "решение: предварительно: впереди kz-local",
                "устойчивость: по весам критериев: устойчиво; неустановленные оценки могут "
                "сменить победителя",
                "стоп-фактор managed-ft",
            ),
        ),
        (
            "kk",
            (
                "шешім: алдын ала: kz-local алда",
                "орнықтылық: критерийлер салмақтары бойынша: орнықты; анықталмаған бағалар "
                "жеңімпазды ауыстыруы мүмкін",
                "тоқтату факторы managed-ft",
            ),
        ),
    ],
)
def test_assess_prints_in_the_language(demo_copy: Path, lang: str, said: tuple[str, ...]) -> None:
    """`--lang ru|kk assess`: no English prose, the language's own words; --json unchanged."""
    run = run_cli("--lang", lang, "assess", cwd=demo_copy)
    assert run.returncode == 1, run.stderr  # provisional: no pass
    assert english_lines(run.stdout, demo_copy) == []
    for phrase in said:
        assert phrase in run.stdout, (phrase, run.stdout)
    as_json = json.loads(run_cli("--lang", lang, "assess", "--json", cwd=demo_copy).stdout)
    plain = json.loads(run_cli("assess", "--json", cwd=demo_copy).stdout)
    assert as_json["decision"] == plain["decision"] and as_json["options"] == plain["options"]
    assert plain["decision"]["summary"].startswith("provisional: kz-local leads (")


def test_assess_in_english_keeps_its_lines(demo_copy: Path) -> None:
    run = run_cli("--lang", "en", "assess", cwd=demo_copy)
    assert run.returncode == 1, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("decision: provisional: kz-local leads (")
    assert any(line.startswith("  stop managed-ft: export_hazard: ") for line in lines)
    assert "robustness: to the weights: robust; unsettled scores can change the winner" in lines
    first_audit = "next: gpudecide audit EXPORT_DIR --option kz-local"
    assert any(line.startswith(first_audit) for line in lines)


@pytest.mark.parametrize(
    ("lang", "summary"),
    [("ru", "1 гибрид, 1 вывод"), ("kk", "1 гибрид, 1 тұжырым")],
)
def test_check_hybrid_prints_in_the_language(demo_copy: Path, lang: str, summary: str) -> None:
    """`--lang ru|kk check hybrid`: the summary, each finding and the evidence line."""
    run = run_cli("--lang", lang, "check", "hybrid", cwd=demo_copy)
    assert run.returncode == 1, run.stderr  # the demo's hybrid has one finding
    assert english_lines(run.stdout, demo_copy) == []
    lines = run.stdout.splitlines()
    assert lines[0] == summary
    assert "evaluation_prompt_versions_differs" in lines[1]
    assert lines[-1].startswith({"ru": "доказательство: ", "kk": "дәлел: "}[lang])
    english = run_cli("--lang", "en", "check", "hybrid", cwd=demo_copy)
    assert english.stdout.splitlines()[0] == "1 hybrid, 1 finding"
    assert english.stdout.splitlines()[-1].startswith("evidence: ")


def test_conditions_keep_the_records_figures_in_english(tmp_path: Path) -> None:
    """The English why of the busy-share conditions shows the record's figure as written;
    the message shows it as a percentage per locale."""
    ws = make_ws(tmp_path)
    ctx = RuleContext(
        ws.config.options,
        ws.config.matrix,
        {("profile", None, None): _profile("bursty", "unpredictable", 0.0521)},
    )
    steady = next(c for c in conditions.dedicated(ctx) if c.id == "steady_queue")
    assert steady.why == "shape bursty, busy share 0.0521 (steady and >= 40 % needed)"
    assert steady.why_message is not None
    assert render_message(steady.why_message, "ru") == (
        "характер нагрузки: со всплесками, доля занятости 5,2% (нужны равномерность и >= 40 %)"
    )
    assert reversibility.for_option(ctx, "own")["move_out"]["basis"].startswith("not measured")


def test_an_export_hazard_says_what_it_means() -> None:
    """An export hazard's stop factor names its id, what it means (the audit section's
    words, in the reader's language) and its file; an id the audit section does not know is
    shown as it is."""
    known = artifact_rules.hazard_message({"id": "unknown_format", "path": "vendor_state.vpk"})
    assert render_message(known, "en") == (
        "unknown_format (a file in a format no open tool reads): vendor_state.vpk"
    )
    ru = render_message(known, "ru")
    assert ru.startswith("unknown_format (файл") and ru.endswith("): vendor_state.vpk")
    assert "открытый инструмент" in ru
    assert "ашық құрал" in render_message(known, "kk")
    other = artifact_rules.hazard_message({"id": "new_hazard_kind", "path": "x.bin"})
    assert render_message(other, "ru") == "new_hazard_kind: x.bin"
