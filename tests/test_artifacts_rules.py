"""The export audit's decision rule (gpudecide.artifacts.rules, SPEC E5, A2, D5): every branch
with its twin that must not trigger, on records as the audit writes them and as an older or
hand-written record may hold them; registered for "audit" records in the decision."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.artifacts import audit
from gpudecide.artifacts.rules import audit_rules, hazard_message
from gpudecide.decision.context import RuleContext
from gpudecide.decision.rules import rules_for
from gpudecide.findings import StopFactor, Suggestion
from gpudecide.i18n import speaking
from gpudecide.message import render


def _record(figures: dict[str, Any]) -> ev.Evidence:
    return ev.seal(
        ev.Evidence(
            kind="audit", title="audit", spec_ids=[], verdict="info", summary="s", figures=figures
        )
    )


@pytest.fixture(scope="module")
def ctx(tmp_path_factory: pytest.TempPathFactory) -> RuleContext:
    root = tmp_path_factory.mktemp("ws") / "ws"
    workspace.init(root)
    ws = workspace.load(root)
    return RuleContext(ws.config.options, ws.config.matrix)


def test_the_decision_reads_audits_with_this_rule() -> None:
    assert audit_rules in rules_for("audit")


def test_each_hazard_stops_the_named_option_and_says_what_clears_it(ctx: RuleContext) -> None:
    hazards = [
        {"id": "unknown_format", "path": "vendor_state.vpk"},
        {"id": "dangerous_pickle", "path": "optimizer.pt"},
    ]
    record = _record({"option": "managed-ft", "hazards": hazards, "resumable": True})
    found = audit_rules(record, ctx)
    assert [type(f) for f in found] == [StopFactor, StopFactor]
    assert {f.option for f in found} == {"managed-ft"}
    assert all(f.id == "export_hazard" and f.evidence == (record.id,) for f in found)
    assert found[0].rule == (
        "unknown_format (a file in a format no open tool reads): vendor_state.vpk"
    )
    assert found[0].clear == "an export without this hazard, audited again"
    with speaking("ru"):
        said = render(found[0].clear_message) if found[0].clear_message else ""
    assert said == "экспорт без этого риска, проверенный аудитом повторно"


@pytest.mark.parametrize(
    ("resumable", "score", "words"),
    [(True, 4, "resumable (4; 5 needs a passed export test)"), (False, 3, "weights only (3)")],
)
def test_a_clean_audit_scores_artifacts_and_stops_nothing(
    ctx: RuleContext, resumable: bool, score: int, words: str
) -> None:
    found = audit_rules(_record({"option": "own", "hazards": [], "resumable": resumable}), ctx)
    assert len(found) == 1 and isinstance(found[0], Suggestion)
    assert (found[0].criterion, found[0].score) == ("artifacts", score)
    assert found[0].rule.endswith(words)


@pytest.mark.parametrize(
    "figures",
    [
        {"hazards": [{"id": "unknown_format", "path": "x"}]},  # no option: the team's own folder
        {"option": None, "hazards": [{"id": "unknown_format"}]},
        {"option": "", "resumable": True},
        {"option": 7, "hazards": []},  # hand-written nonsense is no finding
        {},
    ],
)
def test_an_audit_naming_no_option_scores_nothing(
    ctx: RuleContext, figures: dict[str, Any]
) -> None:
    assert audit_rules(_record(figures), ctx) == []


def test_a_hand_written_record_is_read_without_a_crash(ctx: RuleContext) -> None:
    odd = {"option": "own", "hazards": ["not a hazard", {"path": None}], "resumable": "yes"}
    found = audit_rules(_record(odd), ctx)
    assert [f.id for f in found if isinstance(f, StopFactor)] == ["export_hazard"]
    assert found[0].rule == "?: "


def test_hazard_message_in_every_language() -> None:
    known = hazard_message({"id": "corrupt_file", "path": "model.safetensors"})
    other = hazard_message({"id": "a_new_kind", "path": "x.bin"})
    assert render(other) == "a_new_kind: x.bin"
    english = render(known)
    assert english.startswith("corrupt_file (") and english.endswith("): model.safetensors")
    for lang in ("ru", "kk"):
        with speaking(lang):
            said = render(known)
        assert said.startswith("corrupt_file (") and said != english


def test_the_rule_on_a_real_audit_record(ctx: RuleContext, tmp_path: Path) -> None:
    """The rule reads the record the audit writes (the demo's vendor export)."""
    from gpudecide.artifacts.demo import DATA

    export = tmp_path / "export"
    shutil.copytree(DATA / "vendor-run-7", export)
    record = audit.run(export, option="managed-ft").record
    found = audit_rules(record, ctx)
    assert {f.rule.split(" ")[0] for f in found} == {
        "adapter_base_revision_missing",
        "weights_without_optimizer_state",
        "unknown_format",
    }
    clean = audit_rules(_record({**record.figures, "hazards": []}), ctx)
    assert [(f.criterion, f.score) for f in clean if isinstance(f, Suggestion)] == [
        ("artifacts", 3)
    ]
