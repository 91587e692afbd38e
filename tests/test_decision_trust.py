"""What the decision rests on (issue 21; SPEC D1-D5, E1, G1, Q3): evidence bound to the
option's own contour, unchecked shown as unchecked, unsettled scores bounded, stale records
refused. Each rule has a twin that must not trigger."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.cli import app
from gpudecide.decision.assess import StaleEvidence, assess
from gpudecide.decision.context import standing

CONTOUR = {"executor": "slurm", "cluster": "ala-a", "storage": "s3://dala-ckpt/"}
OPTIONS = [
    {
        "id": "own",
        "kind": "owned",
        "derived_weights": "ours",
        "derived_weights_document": "docs/licence.txt",
        "contour": CONTOUR,
        "sites": [{"roles": ["storage", "processing", "backup"], "country": "KZ"}],
    },
    {
        "id": "man",
        "kind": "managed",
        "derived_weights": "ours",
        "sites": [{"roles": ["storage", "processing", "backup"], "country": "KZ"}],
    },
]
CRITERIA = [{"id": "artifacts", "weight": 4}, {"id": "cost", "weight": 3}]


def make_ws(root: Path, options: list[dict[str, Any]] | None = None) -> workspace.Workspace:
    workspace.init(root)
    (root / "docs").mkdir(exist_ok=True)
    (root / "docs" / "licence.txt").write_text("Results belong to the customer (§9).\n")
    config = yaml.safe_load((root / workspace.CONFIG_NAME).read_text())
    config["options"] = options or OPTIONS
    config["matrix"] = {"criteria": CRITERIA}
    (root / workspace.CONFIG_NAME).write_text(yaml.safe_dump(config, sort_keys=False))
    return workspace.load(root)


_CLOCK = [0]


def record(kind: str, figures: dict[str, Any], verdict: str = "info") -> ev.Evidence:
    """A sealed record, each one a microsecond after the one before (records are ordered)."""
    from datetime import UTC, datetime, timedelta

    _CLOCK[0] += 1
    now = datetime(2026, 6, 1, tzinfo=UTC) + timedelta(seconds=_CLOCK[0])
    return ev.seal(
        ev.Evidence(
            kind=kind,
            title=kind,
            spec_ids=[],
            verdict=verdict,  # type: ignore[arg-type]
            summary=kind,
            figures=figures,
        ),
        now=now,
    )


def export_test(option: str, verdict: str, **contour: Any) -> ev.Evidence:
    stated = {"artifacts": "produced_here", **contour}
    return record(
        "export_test",
        {"option": option, "verdict": verdict, "contour": stated, "bytes_exported": 10},
        verdict,
    )


def drill(option: str, scenario: str, verdict: str, **contour: Any) -> ev.Evidence:
    return record(
        "drill",
        {
            "option": option,
            "drill": scenario,
            "verdict": verdict,
            "noticed": True,
            "data_kept": verdict == "pass",
            "explained": True,
            "executor": contour.get("executor", "local"),
            "storage": contour.get("storage", ""),
            "contour": contour,
            "external_storage": contour.get("storage") or "/scratch/ckpt",
            "restarted_from_zero": verdict == "fail",
        },
        verdict,
    )


def own_evidence() -> list[ev.Evidence]:
    """Every must-prove item of `own` verified on its own contour, `man` priced only."""
    return [
        record(
            "cost",
            {
                "currency": "KZT",
                "options": [
                    {"id": "own", "regimes": {"normal": {"total": "100"}}},
                    {"id": "man", "regimes": {"normal": {"total": "400"}}},
                ],
            },
        ),
        export_test("own", "pass", **CONTOUR),
        record("audit", {"option": "own", "hazards": [], "resumable": True}),
        drill("own", "node-loss", "pass", **CONTOUR),
        record("queue", {"option": "own", "slo": [], "contour": CONTOUR}),
        record("cordon", {"option": "own", "orchestrator": "slurm", "gpus": []}),
        record(
            "isolation",
            {
                "options": [
                    {
                        "option": o,
                        "answered": True,
                        "stopped": False,
                        "boundaries": [{"boundary": "keys", "status": "evidenced"}],
                        "findings": [],
                    }
                    for o in ("own", "man")
                ]
            },
        ),
        record(
            "residency",
            {"options": [{"option": o, "stopped": False, "findings": []} for o in ("own", "man")]},
        ),
        record(
            "raci",
            {
                "options": [
                    {"option": o, "on_call_load": {"timur": 2}, "findings": []}
                    for o in ("own", "man")
                ]
            },
        ),
    ]


def _row(result: Any, option: str) -> dict[str, Any]:
    return next(o for o in result.options if o["id"] == option)


def _states(result: Any, option: str) -> dict[str, str]:
    return {i["id"]: i["state"] for i in _row(result, option)["coverage"]}


def test_everything_verified_on_its_own_contour_is_decided(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    result = assess(ws, own_evidence())
    assert set(_states(result, "own").values()) == {"verified"}
    assert result.status == "decided" and result.recommended == "own"
    assert result.verdict == "pass" and result.next_actions == []


def test_a_rehearsal_never_verifies(tmp_path: Path) -> None:
    """The same export test run locally instead of on the option's Slurm cluster: the item is
    rehearsed, the artifacts score a rehearsal, and the decision provisional."""
    ws = make_ws(tmp_path)
    records = [r for r in own_evidence() if r.kind != "export_test"]
    records.append(export_test("own", "pass", executor="local", storage="exports/"))
    result = assess(ws, records)
    assert _states(result, "own")["export_proven"] == "rehearsed"
    assert result.status == "provisional" and result.recommended is None
    assert result.leading == "own" and result.verdict == "warn"
    # Its twin on the declared cluster but the wrong storage: a rehearsal too.
    wrong = [r for r in own_evidence() if r.kind != "export_test"]
    wrong.append(export_test("own", "pass", executor="slurm", cluster="ala-a", storage="/tmp/x"))
    assert _states(assess(ws, wrong), "own")["export_proven"] == "rehearsed"
    action = next(a for a in result.next_actions if a.option == "own")
    assert action.command.startswith("gpudecide export-test --option own")


def test_an_option_without_a_declared_contour_has_only_rehearsals(tmp_path: Path) -> None:
    options = [dict(OPTIONS[0]), OPTIONS[1]]
    del options[0]["contour"]
    ws = make_ws(tmp_path, options)
    result = assess(ws, own_evidence())
    assert _states(result, "own")["export_proven"] == "rehearsed"
    assert _states(result, "own")["node_loss_drilled"] == "rehearsed"
    assert result.status == "provisional"


def test_unchecked_reads_as_not_checked(tmp_path: Path) -> None:
    """An option nobody audited, drilled or measured: every item says so, with a command."""
    ws = make_ws(tmp_path)
    man = _states(assess(ws, own_evidence()), "man")
    for item in ("export_proven", "export_audited", "node_loss_drilled", "start_measured"):
        assert man[item] == "not_checked", item
    row = _row(assess(ws, own_evidence()), "man")
    assert all(i["command"] for i in row["coverage"] if i["state"] != "verified")


def test_a_managed_export_is_verified_by_the_vendors_own_export(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    local = record("export_test", {"option": "man", "verdict": "pass", "executor": "local"}, "pass")
    received = record(
        "export_test",
        {"option": "man", "verdict": "pass", "executor": "local", "from_export": "exports/v7"},
        "pass",
    )
    assert _states(assess(ws, [local]), "man")["export_proven"] == "rehearsed"
    assert _states(assess(ws, [received]), "man")["export_proven"] == "verified"


def test_a_local_rerun_never_clears_a_failure_on_the_own_contour(tmp_path: Path) -> None:
    """A vendor's export failed; the team re-ran the plan locally and it passed: the failure
    stands (the newest record of the option's own contour decides)."""
    ws = make_ws(tmp_path)
    failed = record(
        "export_test",
        {"option": "man", "verdict": "fail", "from_export": "exports/v7", "reasons": ["x"]},
        "fail",
    )
    rerun = export_test("man", "pass", executor="local")
    result = assess(ws, [failed, rerun])
    assert _states(result, "man")["export_proven"] == "failed"
    checks = standing([failed, rerun], ws.config.options)
    assert checks[("export_test", "man", None)].id == failed.id
    # The twin: the vendor's next export passes: that clears it.
    fixed = record(
        "export_test", {"option": "man", "verdict": "pass", "from_export": "exports/v8"}, "pass"
    )
    assert _states(assess(ws, [failed, rerun, fixed]), "man")["export_proven"] == "verified"


def test_another_drill_does_not_supersede_a_failed_node_loss(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    lost = drill("own", "node-loss", "fail", **CONTOUR)
    corrupt = drill("own", "checkpoint-corrupt", "pass", **CONTOUR)
    checks = standing([lost, corrupt], ws.config.options)
    assert checks[("drill", "own", "node-loss")].id == lost.id
    assert checks[("drill", "own", "checkpoint-corrupt")].id == corrupt.id
    result = assess(ws, [lost, corrupt])
    assert _states(result, "own")["node_loss_drilled"] == "failed"
    # The same check passing on the same contour supersedes it.
    again = drill("own", "node-loss", "pass", **CONTOUR)
    assert _states(assess(ws, [lost, corrupt, again]), "own")["node_loss_drilled"] == "verified"


def test_assumptions_that_can_flip_the_winner_make_it_provisional(tmp_path: Path) -> None:
    """own leads on cost alone; man's artifacts score is an assumption (3): at 5 it reaches
    own, so the decision is provisional and names that cell."""
    ws = make_ws(tmp_path)
    records = [
        r for r in own_evidence() if r.kind not in ("export_test", "audit")
    ]  # own's artifacts unscored too
    result = assess(ws, records)
    bounds = result.robustness["bounds"]
    assert bounds["contenders"] == ["man"] and result.status == "provisional"
    named = {(c["option"], c["criterion"]) for g in bounds["together"].values() for c in g}
    assert ("man", "artifacts") in named or ("own", "artifacts") in named
    # The twin: the same totals with every cell settled by evidence are decided.
    assert assess(ws, own_evidence()).status == "decided"


def test_a_stale_record_is_refused_and_named(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    costs = tmp_path / "costs.yaml"
    cost = record("cost", {"currency": "KZT", "options": []})
    cost.inputs = [ev.input_ref(costs, tmp_path)]
    cost = ev.seal(cost)
    ev.write(cost, ws.evidence_dir)
    assert assess(ws).status in ("provisional", "tie")  # fresh: no refusal
    costs.write_text(costs.read_text() + "\n# labour set to 0 after the analysis\n")
    with pytest.raises(StaleEvidence) as refused:
        assess(ws)
    (unfit,) = refused.value.records
    assert unfit.id == cost.id and unfit.state == "stale" and unfit.command == "gpudecide cost"
    run = CliRunner().invoke(app, ["assess", str(tmp_path)])
    assert run.exit_code == 1 and "gpudecide cost" in run.output
    assert not list(ws.evidence_dir.glob("decision-*.json"))  # nothing written
    body = json.loads(CliRunner().invoke(app, ["assess", str(tmp_path), "--json"]).stdout)
    assert body["error"] == "stale evidence" and body["records"][0]["id"] == cost.id
    # --allow-stale decides, at most provisional, and lists the record.
    allowed = assess(ws, allow_stale=True)
    assert allowed.status != "decided" and allowed.stale[0].id == cost.id


def test_a_tampered_record_is_refused(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    path = ev.write(record("audit", {"option": "man", "hazards": []}), ws.evidence_dir)
    doc = json.loads(path.read_text())
    doc["figures"]["hazards"] = []
    doc["summary"] = "edited"
    path.write_text(json.dumps(doc))
    with pytest.raises(StaleEvidence) as refused:
        assess(ws)
    assert refused.value.records[0].state == "tampered"


def test_a_record_citing_a_replaced_replay_is_inconsistent(tmp_path: Path) -> None:
    """The cost priced the peak-window replay; the replay was re-run over the full log: the
    cost no longer describes the standing replays and is refused until re-run."""
    ws = make_ws(tmp_path)
    peak = ev.write(record("replay", {"window": {"kind": "peak"}, "pools": []}), ws.evidence_dir)
    cost = record("cost", {"currency": "KZT", "options": []})
    cost.inputs = [ev.record_ref(peak, tmp_path)]
    ev.write(ev.seal(cost), ws.evidence_dir)
    assess(ws)  # consistent: no refusal
    ev.write(record("replay", {"window": {"kind": "full"}, "pools": []}), ws.evidence_dir)
    with pytest.raises(StaleEvidence) as refused:
        assess(ws)
    (unfit,) = refused.value.records
    assert unfit.kind == "cost" and unfit.state == "inconsistent"
    assert any("replay-" in p for p in unfit.problems)


@pytest.mark.parametrize(
    "edit",
    [
        # A vendor's pass claimed in figures without its export: still a rehearsal.
        lambda r: r.figures.update(contour={"executor": "local", "artifacts": "produced_here"}),
        # A verdict of pass on a record whose figures say fail.
        lambda r: r.figures.update(verdict="fail"),
    ],
)
def test_a_hostile_record_cannot_make_an_unverified_option_decided(
    tmp_path: Path, edit: Any
) -> None:
    ws = make_ws(tmp_path, [OPTIONS[1], {**OPTIONS[0], "id": "other"}])
    forged = record("export_test", {"option": "man", "verdict": "pass"}, "pass")
    edit(forged)
    forged = ev.seal(forged)
    result = assess(ws, [forged])
    assert result.status != "decided"
    assert _states(result, "man")["export_proven"] != "verified"


# --- contradictions: a class each, with its twin ------------------------------------------


def _isolation(rows: dict[str, dict[str, str]], requires: list[str]) -> ev.Evidence:
    """An isolation record: per option, boundary -> status (and `keys_custody`)."""
    return record(
        "isolation",
        {
            "assets": [{"id": "pd", "closed": True, "threats": [{"requires": requires}]}],
            "options": [
                {
                    "option": o,
                    "answered": True,
                    "stopped": False,
                    "findings": [],
                    "boundaries": [
                        {"boundary": b, "status": st, "custody": bs.get("keys_custody")}
                        for b, st in bs.items()
                        if b != "keys_custody"
                    ],
                }
                for o, bs in rows.items()
            ],
        },
    )


def _ids(result: Any) -> set[tuple[str, str]]:
    return {(c.option, c.id) for c in result.contradictions}


def test_keys_the_vendor_holds_contradict_a_team_only_policy(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    policy = record("audit", {"option": "man", "hazards": [], "retention": {"key_custody": "team"}})
    iso = _isolation(
        {
            "own": {"keys": "evidenced", "keys_custody": "team"},
            "man": {"keys": "evidenced", "keys_custody": "provider"},
        },
        ["keys"],
    )
    assert _ids(assess(ws, [policy, iso])) == {("man", "key_custody")}
    # The twin: a policy that lets the provider hold keys contradicts nothing.
    shared = record(
        "audit", {"option": "man", "hazards": [], "retention": {"key_custody": "provider"}}
    )
    assert _ids(assess(ws, [shared, iso])) == set()


def test_an_isolation_score_on_claims_is_a_contradiction(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    ws.config.matrix.criteria.append(
        ws.config.matrix.criteria[0].model_copy(update={"id": "isolation"})
    )
    scores = [
        {
            "option": "own",
            "criterion": "isolation",
            "score": 5,
            "source": "override",
            "justification": "we trust it",
        },
    ]
    from gpudecide.matrix_config import ScoreEntry

    ws.config.matrix.scores = [ScoreEntry.model_validate(s) for s in scores]
    claimed = _isolation({"own": {"keys": "claimed", "logs": "evidenced"}}, ["keys"])
    assert ("own", "isolation_scored_on_claims") in _ids(assess(ws, [claimed]))
    # Twins: the same claim on a boundary the threat model does not require, or evidenced.
    unrequired = _isolation({"own": {"keys": "claimed", "logs": "evidenced"}}, ["logs"])
    assert ("own", "isolation_scored_on_claims") not in _ids(assess(ws, [unrequired]))
    evidenced = _isolation({"own": {"keys": "evidenced"}}, ["keys"])
    assert ("own", "isolation_scored_on_claims") not in _ids(assess(ws, [evidenced]))


def test_a_hybrid_is_no_better_isolated_than_the_contour_its_data_runs_on(
    tmp_path: Path,
) -> None:
    options = [*OPTIONS, {"id": "hyb", "kind": "hybrid", "contours": ["own", "man"]}]
    ws = make_ws(tmp_path, options)
    reused = _isolation(
        {"own": {"keys": "evidenced"}, "man": {"keys": "claimed"}, "hyb": {"keys": "evidenced"}},
        ["keys"],
    )
    assert ("hyb", "hybrid_stronger_than_contour") in _ids(assess(ws, [reused]))
    # Placed only on its own pool (residency placement): its answers may be the pool's.
    placed = record(
        "residency",
        {
            "options": [
                {
                    "option": "hyb",
                    "stopped": False,
                    "findings": [],
                    "assets": [{"asset": "pd", "placement": ["own"]}],
                }
            ]
        },
    )
    assert ("hyb", "hybrid_stronger_than_contour") not in _ids(assess(ws, [reused, placed]))
    honest = _isolation(
        {"own": {"keys": "evidenced"}, "man": {"keys": "claimed"}, "hyb": {"keys": "claimed"}},
        ["keys"],
    )
    assert ("hyb", "hybrid_stronger_than_contour") not in _ids(assess(ws, [honest]))


def test_a_contradiction_on_the_leader_keeps_it_provisional(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    records = own_evidence()
    policy = record(
        "audit",
        {"option": "own", "hazards": [], "resumable": True, "retention": {"key_custody": "team"}},
    )
    iso = _isolation(
        {"own": {"keys": "evidenced", "keys_custody": "provider"}, "man": {"keys": "evidenced"}},
        ["keys"],
    )
    result = assess(
        ws, [*[r for r in records if r.kind not in ("audit", "isolation")], policy, iso]
    )
    assert ("own", "key_custody") in _ids(result)
    assert result.status == "provisional"
    assert any("key_custody" in a.command for a in result.next_actions)


def test_a_queue_log_from_another_cluster_is_a_rehearsal(tmp_path: Path) -> None:
    """Start time is measured from the option's own jobs: a log from another cluster shows
    how a queue behaves, not how this option's does."""
    ws = make_ws(tmp_path)
    elsewhere = {**CONTOUR, "cluster": "lab"}
    records = [r for r in own_evidence() if r.kind != "queue"]
    records.append(record("queue", {"option": "own", "slo": [], "contour": elsewhere}))
    assert _states(assess(ws, records), "own")["start_measured"] == "rehearsed"
    vendor = record("queue", {"option": "man", "slo": [], "contour": {"executor": "vendor"}})
    assert _states(assess(ws, [vendor]), "man")["start_measured"] == "verified"
