"""Game days and GPU health in Russian and Kazakh (issue 10; SPEC G1-G4).

`gpudecide cordon` and `gpudecide drill` print in the reader's language (`--lang`), the
decision rules of drill evidence carry their texts as messages, and the English output
stays as it was. The commands `cordon` prints (`scontrol update ... Reason=...`) are run as
they are, so they stay byte-identical in every language, English `Reason=` text included.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpudecide import evidence as ev
from gpudecide.drills import cordon_rules, cordon_run, rules, telemetry
from gpudecide.drills.cordon import decide
from gpudecide.findings import StopFactor, Suggestion
from gpudecide.i18n import Language, speaking
from gpudecide.message import render

# These tests read the lines a terminal of 200 columns shows (tables, commands on the node's
# line): each command runs as a process of its own, whose console takes its width from
# COLUMNS, as a user's does.
from tests.conftest import run_script as run_cli
from tests.english import english_lines, english_runs

FIX = Path(__file__).parents[1] / "fixtures" / "telemetry"


def render_message(msg: Any, lang: Language) -> str:
    """A stored message as a reader of `lang` reads it."""
    with speaking(lang):
        return render(msg)


def _commands_apart(output: str) -> tuple[str, list[str]]:
    """The output without the scheduler commands, and those commands.

    In ru/kk a command to run stands on a line of its own, indented, starting with the
    program: it is copied and run as it is, so its English `Reason=` text is not prose."""
    prose, commands = [], []
    for line in output.splitlines():
        if line.startswith(("  scontrol ", "  kubectl ")):
            commands.append(line.strip())
        else:
            prose.append(line)
    return "\n".join(prose), commands


# --- cordon on the demo telemetry ---


@pytest.mark.parametrize(
    ("lang", "phrases"),
    [
        (
            "ru",
            [
                "10 GPU на 5 узлах: 5 в норме, 2 под наблюдением",
                "XID 79 ×1: GPU отключился от шины",
                "растёт: 13,2 в час во второй половине окна",
                "gpu-node-01: команда (выполняется только с --apply):",
                "gpu-node-05: пропущено: неисправимые ошибки; команда (выполняется только с "
                "--apply):",
                "примечание: предохранитель: пропущены gpu-node-02 (XID 79); gpu-node-05",
                "выполните nvidia-smi --gpu-reset -i 1",
            ],
        ),
        (
            "kk",
            [
                "5 түйіндегі 10 GPU: 5 қалыпты, 2 бақылауда",
                "XID 79 ×1: GPU шинадан ажырап қалды",
                "терезенің соңғы жартысында сағатына 13,2",
                "gpu-node-01: команда (тек --apply арқылы орындалады):",
                "gpu-node-05: өткізілді: түзетілмейтін қателер; команда (тек --apply арқылы "
                "орындалады):",
                "ескертпе: сақтандырғыш: gpu-node-02 (XID 79); gpu-node-05",
            ],
        ),
    ],
)
def test_cordon_speaks_the_readers_language(demo_copy: Path, lang: str, phrases: list[str]) -> None:
    """`--lang ru|kk cordon` on the demo telemetry: no English prose, the commands intact.

    The article's ECC case is handled: gpu-node-01's rising corrected errors take the
    breaker's one place, the Xid 79 and double-bit ECC nodes are let through beyond it."""
    english = run_cli("cordon", cwd=demo_copy)
    result = run_cli("--lang", lang, "cordon", cwd=demo_copy)
    assert result.returncode == 0, result.stderr  # nothing held back
    prose, commands = _commands_apart(result.stdout)
    assert english_lines(prose, demo_copy) == []
    for phrase in phrases:
        assert phrase in prose, phrase
    # The same three commands as in English, byte for byte (they are run as they are).
    shown = [line[line.index("scontrol ") :] for line in english.stdout.splitlines()
             if "scontrol " in line]  # fmt: skip
    assert len(commands) == 3 and commands == shown
    reason = "Reason=gpudecide drain-and-reset: GPU 1 0000:3b:00 Xid 79 x1: GPU has fallen off"
    assert commands[1].startswith("scontrol -- update NodeName=gpu-node-02 State=DRAIN")
    assert commands[1].endswith(f"{reason} the bus'")


def test_cordon_english_output_is_unchanged(demo_copy: Path) -> None:
    """English keeps its lines: the command on the node's line, the English reasons."""
    out = run_cli("cordon", cwd=demo_copy).stdout
    lines = out.splitlines()
    assert lines[0] == "10 GPUs on 5 nodes: 5 ok, 2 watch, 1 cordon, 2 drain-and-reset, 0 replace"
    assert (
        "gpu-node-02: let through: uncorrectable errors; would run: scontrol -- update "
        "NodeName=gpu-node-02 State=DRAIN "
        "'Reason=gpudecide drain-and-reset: GPU 1 0000:3b:00 Xid 79 x1: GPU has fallen off the bus'"
    ) in lines
    assert any(
        line.startswith("gpu-node-01: would run: scontrol -- update NodeName=gpu-node-01")
        for line in lines
    )
    assert (
        "gpu-node-02: then: GPU 1: once no job runs on it, nvidia-smi --gpu-reset -i 1 "
        "(or reboot the node if the reset fails)"
    ) in lines
    assert (
        "note: circuit breaker: let through gpu-node-02 (Xid 79); gpu-node-05 (uncorrected ECC "
        "errors: 1): uncorrectable errors take a GPU out of service whatever the limit"
    ) in lines
    assert not any("held" in line for line in lines)
    assert "Xid 79 x1: GPU has fallen off the bus; row remapping waits for a GPU reset" in out
    # Negative case of the ru/kk checks: the detector sees this English as English.
    assert len(english_lines(_commands_apart(out)[0], demo_copy)) >= 10


def test_cordon_json_is_the_same_in_every_language(demo_copy: Path) -> None:
    """--json never changes with the language (the messages travel in it, unrendered)."""
    en = json.loads(run_cli("cordon", "--json", cwd=demo_copy).stdout)
    ru = json.loads(run_cli("--lang", "ru", "cordon", "--json", cwd=demo_copy).stdout)
    for d in (en, ru):
        d.pop("evidence")
    assert en == ru
    assert en["summary"].startswith("10 GPUs on 5 nodes")


# --- one drill ---


@pytest.mark.parametrize(
    ("lang", "phrase"),
    [
        ("ru", "checkpoint-12 не прошёл проверку SHA-256 и отклонён; обучение продолжено с "
               "checkpoint-8; потеряно шагов: 4"),
        ("kk", "checkpoint-12 SHA-256 тексерісінен өтпей, қабылданбады; оқыту checkpoint-8 "
               "нүктесінен жалғасты; жоғалған қадамдар: 4"),
    ],
)  # fmt: skip
def test_drill_speaks_the_readers_language(demo_copy: Path, lang: str, phrase: str) -> None:
    """`--lang ru|kk drill checkpoint-corrupt`: table, status, journal and evidence lines
    in the language, no English prose; the evidence record keeps its English summary."""
    result = run_cli("--lang", lang, "drill", "checkpoint-corrupt", cwd=demo_copy)
    assert result.returncode == 0, result.stdout + result.stderr
    assert english_lines(result.stdout, demo_copy) == []
    assert f"checkpoint-corrupt: {phrase}" in result.stdout
    header = result.stdout.splitlines()[0]
    assert ("учение" in header and "итог" in header) if lang == "ru" else "жаттығу" in header
    written = Path(result.stdout.splitlines()[-1].split(": ", 1)[1])
    record = ev.load(written)
    assert record.summary == (
        "checkpoint-corrupt: pass: checkpoint-12 failed its SHA-256 check and was rejected; "
        "resumed from checkpoint-8; lost 4 steps"
    )
    said = render_message(record.figures["messages"]["summary"], lang)
    assert said.startswith("checkpoint-corrupt: ") and phrase in said


def test_drill_english_output_is_unchanged(demo_copy: Path) -> None:
    """English: the historic header, yes/NO and the English status line."""
    out = run_cli("drill", "checkpoint-corrupt", cwd=demo_copy).stdout
    lines = out.splitlines()
    assert lines[0].split() == ["drill", "verdict", "noticed", "data", "kept", "explained",
                                "resumed", "from", "lost", "steps", "lost", "s"]  # fmt: skip
    assert lines[1].split()[:7] == ["checkpoint-corrupt", "pass", "yes", "yes", "yes", "8", "4"]
    assert (
        "checkpoint-corrupt: checkpoint-12 failed its SHA-256 check and was rejected; resumed "
        "from checkpoint-8; lost 4 steps"
    ) in lines
    assert lines[3].startswith("  journal: ") and lines[4].startswith("evidence: ")


# --- rule texts and stored messages, without a process ---


def _record(**figures: Any) -> ev.Evidence:
    base: dict[str, Any] = {"drill": "disk-full", "verdict": "pass", "noticed": True,
                            "data_kept": True, "explained": True, "resumed_from_step": 4,
                            "status": "ok", "option": "owned-pool"}  # fmt: skip
    base.update(figures)
    return ev.seal(ev.Evidence(kind="drill", title="t", spec_ids=["G4"], verdict="pass",
                               summary="s", figures=base))  # fmt: skip


def _without_command(text: str) -> str:
    """A text without its backticked command (`gpudecide drill node-loss` is run as it is)."""
    return text.replace("`gpudecide drill node-loss`", "")


@pytest.mark.parametrize("lang", ["ru", "kk"])
def test_rule_texts_render_in_the_language(lang: str) -> None:
    """Every suggestion and stop factor of drill evidence has its message: a pass, a failed
    drill (its missing G4 answers and status) and the node-loss stop factor with its clear."""
    status = {"domain": "drills", "msgid": "killed (SIGKILL) at step {step}; restarted from "
              "zero: {why}", "args": {"step": 6, "why": {"domain": "drills",
              "msgid": "no resume point", "args": {}}}}  # fmt: skip
    out = [
        *rules.rules(_record()),
        *rules.rules(
            _record(drill="node-loss", verdict="fail", data_kept=False, resumed_from_step=0,
                    restarted_from_zero=True, status="x", status_message=status)
        ),
    ]  # fmt: skip
    texts = []
    for item in out:
        assert item.rule_message is not None
        texts.append(render_message(item.rule_message, lang))
        assert render_message(item.rule_message, "en")  # renders in English too
        if isinstance(item, StopFactor):
            assert item.clear_message is not None
            assert item.rule == (
                "node-loss drill: the job restarted from zero (x)"
            )  # the English field unchanged
            texts.append(_without_command(render_message(item.clear_message, lang)))
    assert [type(i) for i in out] == [Suggestion, Suggestion, StopFactor]
    for text in texts:
        assert english_runs(text, []) == [], text
    failed = texts[1]
    if lang == "ru":
        assert texts[0] == (
            "учение disk-full пройдено: сбой замечен, данные сохранены, итог объяснён"
        )
        assert "данные сохранены" in failed and "перезапуск с нуля" in failed
    else:
        assert "disk-full жаттығуы өтті" in texts[0]
        assert "деректер сақталды" in failed and "нөлден қайта басталды" in failed


def test_an_older_record_without_a_status_message_keeps_its_english() -> None:
    """Negative case: a record written before the messages shows its English status as is."""
    out = rules.rules(_record(verdict="fail", data_kept=False, status="disk full at step 9"))
    assert isinstance(out[0], Suggestion) and out[0].rule_message is not None
    ru = render_message(out[0].rule_message, "ru")
    assert ru.startswith("учение disk-full не пройдено") and ru.endswith(": disk full at step 9")


@pytest.mark.parametrize("lang", ["ru", "kk"])
def test_every_cordon_reason_and_note_has_its_message(tmp_path: Path, lang: str) -> None:
    """The reasons of the documented telemetry formats and the notes render with no
    English; one message per note (the report uses them only when the counts agree)."""
    run = cordon_run.run_cordon(
        [FIX], ws=None, evidence_dir=tmp_path / "ev", audit_path=tmp_path / "a.jsonl"
    )
    reasons = [r for g in run.record.figures["gpus"] for r in g["reasons"]]
    assert reasons and all(r["message"] for r in reasons)
    msgs = run.record.figures["messages"]
    assert len(msgs["notes"]) == len(run.result.notes)
    shown = [render_message(r["message"], lang) for r in reasons]
    shown += [render_message(m, lang) for m in msgs["notes"]]
    shown.append(render_message(msgs["summary"], lang))
    for text in shown:
        assert english_runs(text, []) == [], text
    # English from the messages equals the English fields the JSON readers have (rates
    # aside: a message drops a trailing ".0", "4/h" where the field says "4.0/h").
    exact = [r for r in reasons if r["code"] != "ecc_rate"]
    assert [render_message(r["message"], "en") for r in exact] == [r["reason"] for r in exact]
    rates = [render_message(r["message"], lang) for r in reasons if r["code"] == "ecc_rate"]
    assert any("13,2" in t and "7,1" in t for t in rates)  # gpu-node-01's G2 case
    assert [render_message(m, "en") for m in msgs["notes"]] == run.result.notes


def test_a_teams_own_xid_meaning_is_shown_as_written(tmp_path: Path) -> None:
    """Boundary: a `why` the team wrote in cordon.yaml is quoted, not looked up."""
    path = tmp_path / "cordon.yaml"
    why = "Xid 79 on our racks: call the vendor"
    rules_yaml = f'version: 1\nxid:\n  - {{xid: 79, action: replace, why: "{why}"}}\n'
    path.write_text(rules_yaml, encoding="utf-8")
    data = telemetry.read_all([FIX / "gpu-node-02.kern.log"])
    result = decide(data, cordon_rules.load(path))
    xid79 = [r for g in result.gpus for r in g.reasons if r.code == "xid" and r.value == 79]
    assert xid79 and xid79[0].said is not None
    ru = render_message(xid79[0].said, "ru")
    assert ru == "XID 79 ×1: Xid 79 on our racks: call the vendor"


def test_a_storage_denial_is_named_by_the_storages_own_code() -> None:
    """The storage-revoked status names the denial by its code (EACCES, AccessDenied), so
    ru/kk readers get no English system text; the journal keeps the whole error."""
    from gpudecide.drills.job import denial_code
    from gpudecide.errors import InputError

    def raised(cause: BaseException) -> InputError:
        try:
            try:
                raise cause
            except BaseException:
                raise InputError("access denied") from None
        except InputError as exc:
            return exc

    class ClientError(Exception):
        response = {"Error": {"Code": "AccessDenied"}}  # noqa: RUF012 (botocore's shape)

    assert denial_code(raised(PermissionError(13, "Permission denied"))) == "EACCES"
    assert denial_code(raised(ClientError("403"))) == "AccessDenied"
    assert denial_code(raised(RuntimeError("?"))) == "RuntimeError"
    assert denial_code(InputError("no cause")) is None
    said = {"domain": "drills", "msgid": "access denied at {target} ({code})",
            "args": {"target": "s3://b/run/checkpoint-8", "code": "AccessDenied"}}  # fmt: skip
    ru = render_message(said, "ru")
    assert ru == "доступ запрещён: s3://b/run/checkpoint-8 (AccessDenied)"
    assert english_runs(ru, []) == []
