"""The governance checks speak Russian and Kazakh (issue 10): the commands' output, the
findings, the decision rules' texts and the report's words; English output unchanged.

The commands run as a user runs them (`run_cli`, a separate process) on a private copy of the
demo workspace; `english_lines` finds English prose outside identifiers and the team's words.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from gpudecide import evidence as ev
from gpudecide.findings import StopFactor, Suggestion
from gpudecide.governance import controls, isolation, messages, rules
from gpudecide.i18n import Language, speaking, translator
from gpudecide.message import message, render
from tests.conftest import run_cli
from tests.english import english_lines, english_runs
from tests.test_governance_secrets import AWS_KEY

# A phrase each command prints in Russian and in Kazakh on the demo workspace.
PHRASES: dict[str, dict[str, str]] = {
    "raci": {"ru": "Ответственность по вариантам (RACI)", "kk": "Нұсқалар бойынша жауапкершілік"},
    "standard-path": {
        "ru": "Соответствие стандартному пути и контроль (R4, R5)",
        "kk": "R5 бақылау элементі жетіспейді",
    },
    "isolation": {"ru": "Границы изоляции и модель угроз", "kk": "Оқшаулау шекаралары"},
    "residency": {
        "ru": "резервное копирование, обработка, хранение",
        "kk": "сақтық көшірме, өңдеу, сақтау",
    },
    "secrets": {"ru": "ключ доступа AWS", "kk": "AWS қолжетімділік кілті"},
}
LANGS: tuple[Language, ...] = ("ru", "kk")
_ = translator("governance")


def render_message(msg: Mapping[str, Any], lang: Language) -> str:
    """A stored message as a reader of `lang` reads it."""
    with speaking(lang):
        return render(msg)


def _render(fid: str, lang: Language, params: dict[str, Any]) -> str:
    """A finding's sentence as a reader of `lang` reads it."""
    with speaking(lang):
        return messages.render(fid, params)


def _args(command: str, root: Path) -> list[str]:
    if command != "secrets":
        return ["check", command]
    leak = root / "logs" / "job-77.log"
    leak.write_text(f"step=0 env AWS_ACCESS_KEY_ID={AWS_KEY}\nstep=1 loss=2.0\n", "utf-8")
    return ["check", "secrets", "logs", "raci.yaml"]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("command", list(PHRASES))
def test_check_command_speaks_the_language(demo_copy: Path, command: str, lang: str) -> None:
    """`gpudecide --lang ru|kk check ...`: no English prose, the language's own words."""
    result = run_cli("--lang", lang, *_args(command, demo_copy), cwd=demo_copy)
    assert result.returncode in (0, 1), result.stderr
    out = result.stdout
    assert english_lines(out, demo_copy) == [], out
    assert PHRASES[command][lang] in out, out
    # Identifiers stay as they are: the evidence path (and SPEC ids on the findings).
    assert "/evidence/" in out
    assert command == "secrets" or "[I" in out or "[R" in out


def test_check_command_phrases_are_the_right_language() -> None:
    """Boundary: the phrases tested above are Cyrillic text, not English left over."""
    for by_lang in PHRASES.values():
        for text in by_lang.values():
            assert english_runs(text, []) == []


def test_english_output_is_unchanged(demo_copy: Path) -> None:
    """Without --lang the command prints the record's English as before."""
    result = run_cli("check", "residency", cwd=demo_copy)
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "Data residency per option: options checked: 6; findings: 1; stop factors: 1"
    assert lines[1].startswith("  STOP managed-ft: customers' personal data in training sets: ")
    assert "backup, processing, storage in DE Frankfurt" in lines[1]
    assert lines[2] == "note: facts and mismatches against the stated requirement; not legal advice"
    assert lines[3].startswith("evidence: ")


def test_json_output_does_not_depend_on_the_language(demo_copy: Path) -> None:
    """--json is the same object in every language (the messages included, untranslated)."""
    import json

    en = json.loads(run_cli("check", "raci", "--json", cwd=demo_copy).stdout)
    ru = json.loads(run_cli("--lang", "ru", "check", "raci", "--json", cwd=demo_copy).stdout)
    for body in (en, ru):
        body.pop("evidence")
    assert en == ru
    assert en["summary"] == "options checked: 6; findings: 6; stop factors: 0"
    assert en["messages"]["summary"]["msgid"] == (
        "options checked: {o}; findings: {n}; stop factors: {s}"
    )


# --- findings and the decision rules' texts ---


def _row(option: str, findings: list[dict[str, Any]], boundaries: int = 0) -> dict[str, Any]:
    bounds = [{"status": "evidenced"}] * boundaries
    return {"option": option, "findings": findings, "boundaries": bounds}


def _finding(fid: str, stop: bool, spec: str, **params: Any) -> dict[str, Any]:
    return {
        "id": fid,
        "option": "o",
        "stop": stop,
        "spec": spec,
        "text": messages.english_text(fid, params),
        "params": params,
    }


def _record(kind: str, rows: list[dict[str, Any]]) -> ev.Evidence:
    return ev.Evidence(
        kind=kind, title="t", spec_ids=[], verdict="fail", summary="s", figures={"options": rows}
    )


CASES = [
    ("raci", _finding("no_accountable", True, "R3", activity="node-replacement")),
    ("raci", _finding("no_on_call", True, "D5", activity="incident-triage")),
    ("raci", _finding("no_node_replacement", True, "D5", activity="replace-node")),
    ("raci", _finding("no_on_call_duty", True, "D5")),
    (
        "isolation",
        _finding("keys_provider_custody", True, "I2", against="training-set/platform_admin"),
    ),
    (
        "isolation",
        _finding(
            "protection_missing",
            True,
            "I2",
            boundary="keys",
            status="weak",
            against="weights/platform_admin",
        ),
    ),
    (
        "residency",
        _finding(
            "residency_violated",
            True,
            "I7",
            asset="dataset",
            roles="backup, storage",
            found="DE (eu-central)",
            allowed="KZ",
            basis="Law 94-V",
        ),
    ),
]


@pytest.mark.parametrize(("kind", "finding"), CASES, ids=[f["id"] for _k, f in CASES])
def test_stop_factor_texts_in_every_language(kind: str, finding: dict[str, Any]) -> None:
    """Each stop factor carries its rule and what clears it as messages: English identical to
    `rule`/`clear`, Russian and Kazakh without English (the team's words aside)."""
    out = rules.rules(_record(kind, [_row("o", [finding], boundaries=11)]))
    stops = [o for o in out if isinstance(o, StopFactor)]
    assert len(stops) == 1
    stop = stops[0]
    assert stop.rule_message is not None and stop.clear_message is not None
    assert render_message(stop.rule_message, "en") == stop.rule
    assert render_message(stop.clear_message, "en") == stop.clear
    team = [str(v) for v in finding["params"].values()]
    for lang in LANGS:
        for msg in (stop.rule_message, stop.clear_message):
            text = render_message(msg, lang)
            assert english_runs(text, team) == [], text
            assert text != render_message(msg, "en")


def test_stop_rule_with_more_findings_than_shown() -> None:
    """Boundary: four findings show three and "and 1 more", in every language."""
    found = [_finding("no_accountable", True, "R3", activity=f"act-{i}") for i in range(4)]
    stop = next(
        o for o in rules.rules(_record("raci", [_row("o", found)])) if isinstance(o, StopFactor)
    )
    assert stop.rule.endswith("; and 1 more")
    assert stop.rule_message is not None
    assert render_message(stop.rule_message, "en") == stop.rule
    assert render_message(stop.rule_message, "ru").endswith("; и ещё 1")
    assert render_message(stop.rule_message, "kk").endswith("; және тағы 1")
    assert "act-3" not in render_message(stop.rule_message, "ru")


@pytest.mark.parametrize(
    ("kind", "rows", "ru"),
    [
        ("raci", [_row("o", [])], "RACI (R1-R3, G3): выводов: 0 -> 5"),
        (
            "standard_path",
            [_row("o", [_finding("control_missing", False, "R5", control="observable_queue")])],
            "стандартный путь и контроль (R4, R5): выводов: 1 -> 4",
        ),
        (
            "isolation",
            [_row("o", [_finding("regulated_missing", False, "I6", item="audit_events")], 11)],
            "изоляция (I2-I6): доказано границ 11 из 11, выводов: 1 -> 4",
        ),
        (
            "raci",
            [_row("o", [_finding("no_accountable", True, "R3", activity="a")])],
            "RACI (R1-R3, G3): стоп-фактор -> 1",
        ),
        (
            "raci",
            [{**_row("o", []), "not_checked": ["a", "b", "c", "d", "e"]}],
            "RACI (R1-R3, G3): выводов: 0, не проверено 5 строк -> 2",
        ),
        (
            "isolation",
            [
                {
                    **_row("o", [], 10),
                    "boundaries": [{"status": "evidenced"}] * 10
                    + [{"status": "unknown", "answered": False}],
                }
            ],
            "изоляция (I2-I6): доказано границ 10 из 11, не проверено: 1, выводов: 0 -> 4",
        ),
    ],
)
def test_score_rule_texts(kind: str, rows: list[dict[str, Any]], ru: str) -> None:
    """Every suggestion's rule is a message: English as `rule`, the Russian as written here;
    rows not checked are counted in the rule and lower the score."""
    sug = next(o for o in rules.rules(_record(kind, rows)) if isinstance(o, Suggestion))
    assert sug.rule_message is not None
    assert render_message(sug.rule_message, "en") == sug.rule
    assert render_message(sug.rule_message, "ru") == ru
    assert english_runs(render_message(sug.rule_message, "kk"), []) == []


def test_an_option_not_checked_gets_no_score() -> None:
    """Nothing answered for an option: no suggestion (its criterion stays an assumption)."""
    for kind in ("raci", "standard_path", "isolation"):
        row = {**_row("o", [], 11), "answered": False}
        assert [o for o in rules.rules(_record(kind, [row])) if isinstance(o, Suggestion)] == []


def test_not_checked_and_reasons_in_the_report_words() -> None:
    """The report's new words: not checked, the adversaries in the article's words, who can
    use the keys."""
    with speaking("ru"):
        assert messages.term("not checked") == "не проверено"
    with speaking("kk"):
        assert messages.term("not checked") == "тексерілмеген"
    assert set(messages.ADVERSARY_NAMES) == set(isolation.ADVERSARIES)
    assert set(messages.CUSTODY_NAMES) == set(isolation.CUSTODIES)
    for lang in LANGS:
        with speaking(lang):
            for text in [*messages.ADVERSARY_NAMES.values(), *messages.CUSTODY_NAMES.values()]:
                said = _(text)
                assert said != text and english_runs(said, ["HSM", "KMS"]) == [], said


def test_secrets_rule_text() -> None:
    record = ev.Evidence(
        kind="secrets",
        title="t",
        spec_ids=[],
        verdict="fail",
        summary="s",
        figures={"option": "kz-local", "secrets": 3},
    )
    (sug,) = rules.rules(record)
    assert sug.rule_message is not None
    assert render_message(sug.rule_message, "en") == sug.rule
    assert render_message(sug.rule_message, "ru") == (
        "секреты в журналах (I3): найдено учётных данных: 3 -> 2"
    )


def test_finding_words_are_translated_and_team_words_kept() -> None:
    """Schema words inside a finding (status, handling, roles, detector) are translated; the
    team's words (item, asset, basis) stay as written."""
    ru = _render("residue_open", "ru", {"item": "image_cache", "handling": "kept"})
    assert ru == "image_cache после задания: сохраняется"
    kk = _render("secret_found", "kk", {"path": "a.log", "line": 2, "type": "Private Key"})
    assert kk == "a.log:2: жабық кілт (мәні жасырылған)"
    en = _render(
        "residency_violated",
        "en",
        {
            "asset": "data",
            "roles": "backup, storage",
            "found": "DE",
            "allowed": "KZ",
            "basis": "x",
        },
    )
    assert en == "data: backup, storage in DE, but the requirement allows only KZ (x)"


def test_unknown_finding_and_broken_translation_fall_back() -> None:
    """Negative: an id without a text is shown as the id; an unknown word stays as written."""
    assert _render("no_such_finding", "ru", {}) == "no_such_finding"
    assert messages.word("exotic_mode") == "exotic_mode"
    assert messages.words([]) == ""
    assert render_message(message("governance", "no such msgid"), "ru") == "no such msgid"


def test_report_words() -> None:
    """Boundary states and NIST SP 800-53 family names in the report; the ids stay."""

    def _word(value: str, lang: Language) -> str:
        with speaking(lang):
            return messages.term(value)

    def _family(fam: str, lang: Language) -> str:
        with speaking(lang):
            return controls.family_name(fam)

    assert _word("evidenced", "ru") == "доказано"
    assert _word("claim", "kk") == "мәлімдеме"
    assert _word("in_place", "ru") == "in_place"  # not a schema state: as written
    assert _family("AC", "ru") == "Управление доступом"
    assert _family("SC", "kk") == "Жүйелер мен байланысты қорғау"
    assert _family("AC", "en") == "Access Control"
    assert _family("ZZ", "ru") == ""
