"""The export acceptance test in Russian and Kazakh (issue 10).

What `gpudecide export-test` prints, the report's export_test section and the decision
rules' texts speak the reader's language: every sentence the test writes is stored as a
message beside its English, numbers are formatted per locale, identifiers (option ids,
paths, metric names) stay as they are. English stays as it was.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from gpudecide import evidence as ev
from gpudecide.findings import StopFactor, Suggestion
from gpudecide.i18n import Language, speaking
from gpudecide.message import render
from gpudecide.portability import rules as prules
from gpudecide.portability.report import export_test_section
from gpudecide.portability.texts import figure, say_stored, tolerance
from gpudecide.portability.trainer import CheckpointError, verify_checkpoint
from gpudecide.report.i18n import notes_of, summary_of
from gpudecide.report.model import Section, Table
from tests.conftest import run_cli
from tests.english import english_lines, english_runs, team_words

NBSP = "\u00a0"


def _records(root: Path) -> dict[str, ev.Evidence]:
    """The demo's export test records by option (kz-local passes, managed-ft fails)."""
    found = [r for r in ev.load_all(root / "evidence") if r.kind == "export_test"]
    found.sort(key=lambda r: r.created_at_utc)  # the newest of an option last, so it wins
    return {str(r.figures["option"]): r for r in found}


def said(msg: Mapping[str, Any] | None, lang: Language) -> str:
    """A stored message said in `lang`."""
    assert msg is not None
    with speaking(lang):
        return render(msg)


def _section(record: ev.Evidence, lang: Language) -> Section:
    """The export_test section of `record`, built in `lang` (as the report builds it)."""
    section = Section("export_test", "", record, "fresh", "fresh", [])
    with speaking(lang):
        export_test_section(section)
    return section


def _visible(section: Section) -> list[str]:
    """Every text of a built section a reader sees, verbatim columns left out."""
    texts = [section.title]
    for table in section.tables:
        texts += [table.caption, *table.headers]
        for row in table.rows:
            texts += [c for i, c in enumerate(row) if i not in table.verbatim]
    return [t for t in texts if t]


# --- the command ---


@pytest.mark.parametrize(
    ("lang", "phrase", "verdict"),
    [
        ("ru", "восстановлено в пустую папку, хеши проверены", "С ЗАМЕЧАНИЯМИ"),
        ("kk", "бос қалтаға қалпына келтірілді, хештер тексерілді", "ЕСКЕРТПЕЛЕРМЕН"),
    ],
)
def test_export_test_speaks_the_language(
    demo_copy: Path, lang: str, phrase: str, verdict: str
) -> None:
    """`--lang ru|kk export-test` on one option: no English line, the steps in the language,
    numbers with the locale's signs, paths and ids as they are."""
    res = run_cli(
        "--lang", lang, "export-test", "--plan", "export-test-managed-ft.yaml", cwd=demo_copy
    )
    assert res.returncode == 0, res.stderr  # manual actions recorded: passes with warnings
    out = res.stdout
    assert english_lines(out, demo_copy) == []
    assert phrase in " ".join(out.split())  # a long detail may wrap in the terminal table
    assert f"{verdict}: " in out  # the verdict word, then the summary in the language
    assert "managed-ft" in out and "evidence/export_test-" in out  # ids and paths kept
    # The model's parameters, grouped as the locale does (a no-break space; a wrapped table
    # cell may break the line there, so the terminal's text is compared without breaks).
    assert re.search(rf"134[{NBSP}\s]+912", out)
    written = _records(demo_copy)["managed-ft"]
    train = next(x for x in written.figures["steps"] if x["name"] == "train")
    assert f"134{NBSP}912" in said(train["detail_message"], lang)  # type: ignore[arg-type]
    assert written.verdict == "warn"
    assert written.figures["messages"]["summary"]["msgid"].startswith("option {option}")


@pytest.mark.parametrize(
    ("lang", "valid", "local"),
    [("ru", "корректен", "локальная папка"), ("kk", "жарамды", "жергілікті қалта")],
)
def test_k8s_dry_run_speaks_the_language(
    demo_copy: Path, lang: str, valid: str, local: str
) -> None:
    """The Kubernetes dry run's lines (manifests written, each Job valid, the local-storage
    note) in the language; Job names and paths as they are."""
    res = run_cli(
        "--lang",
        lang,
        "export-test",
        "--plan",
        "export-test-kz-local.yaml",
        "--executor",
        "k8s",
        "--dry-run",
        "--out",
        str(demo_copy.parent / "jobs.yaml"),  # outside the workspace: its YAML is the team's
        cwd=demo_copy,
    )
    assert res.returncode == 0, res.stderr
    assert english_lines(res.stdout, demo_copy) == []
    assert f"gpudecide-kz-local-export-test-train: {valid}" in res.stdout
    assert local in res.stdout and ": 2 -> " in res.stdout  # two Job manifests written


def test_export_test_english_output_is_unchanged(demo_copy: Path) -> None:
    """Without --lang (the demo's report.language is en) the lines read as before."""
    res = run_cli("export-test", "--plan", "export-test-kz-local.yaml", cwd=demo_copy)
    assert res.returncode == 0, res.stderr
    out = " ".join(res.stdout.split())  # a long detail may wrap in the terminal table
    assert "PASS: option kz-local: trained, exported, deleted, restored and resumed at step 4;" in (
        out
    )
    assert "restored into an empty folder, hashes verified, resumed at step 4 on cpu" in out
    assert "evidence: " in out and "причина" not in out
    assert "134,912 parameters" in out


# --- the report section ---


@pytest.mark.parametrize("lang", ["ru", "kk"])
@pytest.mark.parametrize("option", ["kz-local", "managed-ft"])
def test_section_has_no_english(demo_workspace: Path, lang: Language, option: str) -> None:
    """The demo's passing and failing records: every cell, caption and title, the summary
    and the notes read in the language (the team's own words and identifiers aside)."""
    record = _records(demo_workspace)[option]
    section = _section(record, lang)
    with speaking(lang):
        texts = [*_visible(section), summary_of(record), *notes_of(record)]
    quoted = team_words(demo_workspace)
    english = [(t, runs) for t in texts if (runs := english_runs(t, quoted))]
    assert english == []
    metrics = next(t for t in section.tables if 0 in t.verbatim)
    assert [r[0] for r in metrics.rows][:1] in (["loss"], ["-"])  # metric ids verbatim


def _table(section: Section, caption: str) -> Table:
    return next(t for t in section.tables if t.caption.startswith(caption))


def test_failed_section_says_why_in_russian(demo_workspace: Path) -> None:
    """The failing option, tested on its vendor's own export: the audit's hazards and the
    resume that cannot continue, in Russian, reason ids and file names kept; where it ran
    and what would measure the vendor's egress."""
    record = _records(demo_workspace)["managed-ft"]
    section = _section(record, "ru")
    why = _table(section, "Почему тест не пройден")
    reasons = [r[0] for r in why.rows]
    assert reasons[0].startswith("аудит: unknown_format: ")
    assert any(r.startswith("аудит: weights_without_optimizer_state: ") for r in reasons)
    resume = next(r for r in reasons if r.startswith("продолжение обучения: "))
    assert "продолжить обучение нельзя: optimizer_state_missing: " in resume
    assert "нет optimizer.pt" in resume
    steps = _table(section, "Шаги теста")
    assert [r[0] for r in steps.rows] == [
        "план",
        "обучение",
        "экспорт",
        "удаление",
        "продолжение обучения",
        "запись итогов",
    ]
    assert steps.rows[1][4] == "выполнено тем, кто сделал экспорт"  # the vendor trained it
    assert steps.rows[5][4].startswith(
        "ручных действий: 1, закрытых форматов: 1, полей, восстановленных вручную: 1; "
        "пропускная способность хранилища не измерена"
    )
    contour = _table(section, "Где выполнялся тест (его контур)")
    assert "собственный экспорт поставщика" in contour.caption
    assert dict(contour.rows)["артефакты"] == "vendor_export"
    command = _table(section, "Как измерить пропускную способность")
    assert command.rows == [
        ["gpudecide audit --source URL_OF_THE_VENDOR_EXPORT --option managed-ft"]
    ]


def test_passed_section_shows_manifest_lint_and_lifecycle(demo_workspace: Path) -> None:
    """The provider's own export: its run manifest (A5) and every lint finding, warnings
    included; the resume's lifecycle from the marks its job wrote; the comparison with the
    provider's curve."""
    record = _records(demo_workspace)["kz-local"]
    section = _section(record, "kk")
    manifest = dict(_table(section, "Тексерілген экспорттың іске қосу манифесі").rows)
    assert manifest["іске қосу идентификаторы"] == "kz-local-run-12"
    assert manifest["оптимизатор күйі экспортталды"] == "true"
    lint = _table(section, "Іске қосу манифесін тексеру (A6)")
    assert lint.rows and {r[0] for r in lint.rows} <= {"қате", "ескерту"}
    life = _table(section, "Тест тапсырмаларының өмірлік циклі")
    (resume,) = life.rows
    assert resume[0] == "оқытуды жалғастыру" and resume[1] <= resume[2] <= resume[4]
    metrics = _table(section, "Соңғы метрикалар эталонмен")
    assert [r[0] for r in metrics.rows] == ["loss", "eval_loss"]
    assert {r[4] for r in metrics.rows} == {"иә"}


def test_section_of_an_older_record_keeps_its_english(demo_workspace: Path) -> None:
    """Boundary: a record written before the messages (no `*_message` fields) still renders;
    English is the record's own text, word for word."""
    record = _records(demo_workspace)["kz-local"]
    figures = dict(record.figures)
    figures["steps"] = [
        {k: v for k, v in s.items() if k != "detail_message"} for s in figures["steps"]
    ]
    figures.pop("messages")
    older = ev.Evidence(
        kind=record.kind,
        title=record.title,
        spec_ids=record.spec_ids,
        verdict=record.verdict,
        summary=record.summary,
        figures=figures,
        notes=record.notes,
        inputs=record.inputs,
    )
    en = _section(older, "en")
    steps = _table(en, "Steps of the test")
    assert [r[4] for r in steps.rows] == [s["detail"] for s in figures["steps"]]
    ru = _section(older, "ru")
    assert _table(ru, "Шаги теста").rows[0][0] == "план"


# --- the decision rules ---


def _with(record: ev.Evidence, verdict: ev.Verdict) -> ev.Evidence:
    return ev.Evidence(
        kind=record.kind,
        title=record.title,
        spec_ids=record.spec_ids,
        verdict=verdict,
        summary=record.summary,
        figures=record.figures,
        notes=record.notes,
        inputs=record.inputs,
    )


def test_stop_factor_speaks_every_language(demo_workspace: Path) -> None:
    """A failed test's stop factor: its rule and what clears it in ru and kk; the English
    message reads as the English rule does (before the 300-character cut)."""
    record = _records(demo_workspace)["managed-ft"]
    (stop,) = prules.rules(record)
    assert isinstance(stop, StopFactor) and stop.rule_message and stop.clear_message
    assert said(stop.rule_message, "en")[:300] == stop.rule
    assert said(stop.clear_message, "en") == stop.clear
    ru = said(stop.rule_message, "ru")
    assert ru.startswith("тест экспорта не пройден: аудит: unknown_format: ")
    kk = said(stop.clear_message, "kk")
    assert "экспорт тесті" in kk
    quoted = team_words(demo_workspace)
    for lang in ("ru", "kk"):
        for msg in (stop.rule_message, stop.clear_message):
            assert english_runs(said(msg, lang), quoted) == []


def test_score_rules_speak_every_language(demo_workspace: Path) -> None:
    """The pass (5) and pass-with-warnings (4) suggestions carry their message; the step
    names of a warning are named in the language."""
    record = _records(demo_workspace)["kz-local"]
    (five,) = prules.rules(record)
    assert isinstance(five, Suggestion) and five.score == 5 and five.rule_message
    assert said(five.rule_message, "en") == five.rule
    assert said(five.rule_message, "ru") == (
        "тест экспорта пройден: восстановлено в другом месте, обучение продолжено с шага 4, "
        "итоговые метрики в пределах допуска плана (5)"
    )
    warned = _with(_records(demo_workspace)["managed-ft"], "warn")
    (four,) = prules.rules(warned)
    assert isinstance(four, Suggestion) and four.score == 4 and four.rule_message
    assert four.rule == "export test passed with warnings in record (4)"
    assert said(four.rule_message, "kk") == (
        "экспорт тесті ескертпелермен өтті (қадамдар: нәтижелерді жазу) (4)"
    )


def test_rules_of_an_older_record_fall_back_to_its_english(demo_workspace: Path) -> None:
    """Negative case: without reason messages the stop factor still has a message, the
    English reason as written inside the translated frame."""
    record = _records(demo_workspace)["managed-ft"]
    figures = {k: v for k, v in record.figures.items() if k != "reason_messages"}
    older = ev.Evidence(
        kind=record.kind,
        title=record.title,
        spec_ids=record.spec_ids,
        verdict="fail",
        summary=record.summary,
        figures=figures,
        notes=record.notes,
        inputs=record.inputs,
    )
    (stop,) = prules.rules(older)
    assert isinstance(stop, StopFactor) and stop.rule_message
    ru = said(stop.rule_message, "ru")
    assert ru.startswith("тест экспорта не пройден: audit: unknown_format: ")


# --- the pieces ---


def test_a_refused_checkpoint_says_why_in_the_language(tmp_path: Path) -> None:
    """A real refusal (no SHA256SUMS): the error's English is as before, its message reads in
    Russian and Kazakh with the path kept."""
    folder = tmp_path / "checkpoint-4"
    folder.mkdir()
    with pytest.raises(CheckpointError) as info:
        verify_checkpoint(folder)
    exc = info.value
    assert exc.reason == "missing_sums"
    assert str(exc) == f"{folder}: no SHA256SUMS: integrity cannot be checked"
    msg = exc.as_message()
    assert said(msg, "en") == str(exc)
    assert said(msg, "ru") == f"{folder}: нет SHA256SUMS: целостность проверить нельзя"
    assert said(msg, "kk") == f"{folder}: SHA256SUMS жоқ: тұтастықты тексеру мүмкін емес"


def test_tolerance_and_figures_per_locale() -> None:
    """Locale signs for the plan's tolerance; a value finer than three decimals is never
    shown as 0 (boundary), and English keeps its historic form."""
    assert said(tolerance(0.02, None), "en") == "0.02 relative"
    assert said(tolerance(0.02, None), "ru") == "0,02 относительный"
    both = tolerance(0.02, 0.5)
    assert said(both, "kk") == "0,02 салыстырмалы немесе 0,5 абсолютті"
    assert said(tolerance(1e-5, None), "ru") == "1e-05 относительный"
    assert figure(0.0001234, 3) == "0.000123" and figure(0.125, 3) == 0.125
    assert figure(0.0, 3) == 0.0


def test_text_without_a_message_is_shown_as_written() -> None:
    """Negative case: an English detail with no message (a child process's own words) is
    not half-translated by catalogue patterns."""
    text = "job wrote no result (exit -9): Killed"
    with speaking("ru"):
        assert say_stored(text, None) == text
    with speaking("kk"):
        assert say_stored("d", None) == "d"
